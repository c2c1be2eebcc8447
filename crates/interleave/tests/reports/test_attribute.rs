//! `#[interleave::test]`: the body runs under the scheduler with the attribute's settings,
//! failures fail the test (so `#[should_panic]` works, written before or after it), an invalid
//! strategy fails at run time with the library's message, and `Result`-returning tests work.
//!
//! The attribute honours the `INTERLEAVE_*` environment variables like `Builder::new()`, so
//! the settings are checked by comparing what the body observed under the attribute with what
//! it observed under a `Builder` given the same settings (and the same environment).

use std::cell::RefCell;

use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, StrategySpec};

std::thread_local! {
    /// For each run of `racing_threads`, the order in which its threads took the lock. Every
    /// execution runs on the OS thread that started the exploration (one worker), so a
    /// thread-local keeps concurrent tests of this file from mixing their records.
    static ORDERS: RefCell<Vec<Vec<usize>>> = const { RefCell::new(Vec::new()) };
}

/// Three threads append their number to a shared vector; the order depends on the schedule.
fn racing_threads() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (1..=3)
        .map(|number| {
            let order = order.clone();
            thread::spawn(move || order.lock().unwrap().push(number))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let observed = order.lock().unwrap().clone();
    ORDERS.with(|orders| orders.borrow_mut().push(observed));
}

/// The orders `run` made `racing_threads` observe, one per run of the body.
fn orders_of(run: impl FnOnce()) -> Vec<Vec<usize>> {
    ORDERS.with(|orders| orders.borrow_mut().clear());
    run();
    ORDERS.with(|orders| orders.take())
}

#[interleave::test]
#[ignore = "run by the_default_attribute_runs_like_builder_new"]
fn with_defaults() {
    racing_threads();
}

#[interleave::test(strategy = "pct:d=3", executions = 37, seed = 7)]
#[ignore = "run by the_settings_reach_the_builder"]
fn with_pct_37_executions_seed_7() {
    racing_threads();
}

#[test]
fn the_default_attribute_runs_like_builder_new() {
    let by_attribute = orders_of(with_defaults);
    let by_builder = orders_of(|| Builder::new().check(racing_threads));
    assert!(!by_attribute.is_empty());
    assert_eq!(by_attribute, by_builder);
}

#[test]
fn the_settings_reach_the_builder() {
    let pct = |seed| {
        Builder::new()
            .strategy(StrategySpec::pct(3))
            .executions(37)
            .seed(seed)
    };
    let by_attribute = orders_of(with_pct_37_executions_seed_7);
    assert_eq!(by_attribute, orders_of(|| pct(7).check(racing_threads)));
    // The comparison can tell settings apart: another seed or strategy observes other orders,
    // and a count of runs that is not the default's.
    let isolated =
        |builder: Builder| orders_of(|| builder.ignore_environment().check(racing_threads));
    let seed_7 = isolated(pct(7));
    assert_ne!(seed_7, isolated(pct(8)));
    assert_ne!(seed_7, isolated(pct(7).strategy(StrategySpec::default())));
    assert_ne!(seed_7.len(), isolated(Builder::new()).len());
}

/// A withdrawal that reads and writes the balance in two critical sections.
fn lost_withdrawal() {
    let balance = Arc::new(Mutex::new(100));
    let withdraw = |balance: &Mutex<i32>| {
        let current = *balance.lock().unwrap();
        *balance.lock().unwrap() = current - 10;
    };
    let other = balance.clone();
    let t = thread::spawn(move || withdraw(&other));
    withdraw(&balance);
    t.join().unwrap();
    assert_eq!(*balance.lock().unwrap(), 80, "a withdrawal was lost");
}

#[interleave::test(strategy = "pct:d=2", executions = 1000)]
#[should_panic(expected = "a withdrawal was lost")]
fn finds_the_lost_withdrawal() {
    lost_withdrawal();
}

#[should_panic(expected = "a withdrawal was lost")]
#[interleave::test(strategy = "random", seed = 3)]
fn should_panic_may_come_first() {
    lost_withdrawal();
}

#[interleave::test(strategy = "bfs")]
#[should_panic(expected = "unknown strategy \"bfs\"")]
fn an_unknown_strategy_fails_when_the_test_runs() {}

#[interleave::test(executions = 10)]
fn a_test_may_return_ok() -> Result<(), String> {
    let value: i32 = "42".parse().map_err(|_| "not a number".to_string())?;
    assert_eq!(value, 42);
    Ok(())
}

#[interleave::test(executions = 10)]
#[should_panic(expected = "the test returned an error: \"not a number\"")]
fn an_error_fails_the_test() -> Result<(), String> {
    "forty-two"
        .parse::<i32>()
        .map_err(|_| "not a number".to_string())?;
    Ok(())
}

/// With `use interleave::test`, a plain `#[test]` is interleave's, and the test it generates
/// still uses the built-in attribute rather than expanding itself again.
mod imported {
    use interleave::test;

    #[test(executions = 5)]
    fn runs_under_interleave() {
        super::racing_threads();
    }
}
