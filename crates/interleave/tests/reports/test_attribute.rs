//! `#[interleave::test]`: the body runs under the scheduler with the attribute's settings,
//! failures fail the test (so `#[should_panic]` works, written before or after it), an invalid
//! strategy fails at run time with the library's message, and `Result`-returning tests work.
//!
//! The attribute honours the `INTERLEAVE_*` environment variables like `Builder::new()`, so
//! the settings are checked by comparing what the body observed under the attribute with what
//! it observed under a `Builder` given the same settings (and the same environment).

use std::sync::Mutex as StdMutex;

use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, StrategySpec};

/// For each run of `racing_threads` in one test, the order in which its threads took the lock.
/// Executions run on several OS threads (one worker per core by default), so each test of this
/// file records into its own list, and the lists are compared sorted.
type Orders = StdMutex<Vec<Vec<usize>>>;

static DEFAULT_ORDERS: Orders = StdMutex::new(Vec::new());
static PCT_ORDERS: Orders = StdMutex::new(Vec::new());
static IMPORTED_ORDERS: Orders = StdMutex::new(Vec::new());

/// Three threads append their number to a shared vector; the order depends on the schedule.
fn racing_threads(orders: &Orders) {
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
    orders.lock().unwrap().push(observed);
}

/// The orders `run` made `racing_threads` record in `orders`, one per run of the body, sorted.
fn orders_of(orders: &Orders, run: impl FnOnce()) -> Vec<Vec<usize>> {
    orders.lock().unwrap().clear();
    run();
    let mut observed = std::mem::take(&mut *orders.lock().unwrap());
    observed.sort();
    observed
}

#[interleave::test]
#[ignore = "run by the_default_attribute_runs_like_builder_new"]
fn with_defaults() {
    racing_threads(&DEFAULT_ORDERS);
}

#[interleave::test(strategy = "pct:d=3", executions = 37, seed = 7)]
#[ignore = "run by the_settings_reach_the_builder"]
fn with_pct_37_executions_seed_7() {
    racing_threads(&PCT_ORDERS);
}

#[test]
fn the_default_attribute_runs_like_builder_new() {
    let by_attribute = orders_of(&DEFAULT_ORDERS, with_defaults);
    let by_builder = orders_of(&DEFAULT_ORDERS, || {
        Builder::new().check(|| racing_threads(&DEFAULT_ORDERS))
    });
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
    let by_attribute = orders_of(&PCT_ORDERS, with_pct_37_executions_seed_7);
    assert_eq!(
        by_attribute,
        orders_of(&PCT_ORDERS, || pct(7).check(|| racing_threads(&PCT_ORDERS)))
    );
    // The comparison can tell settings apart: another seed or strategy observes other orders,
    // and a count of runs that is not the default's.
    let isolated = |builder: Builder| {
        orders_of(&PCT_ORDERS, || {
            builder
                .ignore_environment()
                .check(|| racing_threads(&PCT_ORDERS))
        })
    };
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
        super::racing_threads(&super::IMPORTED_ORDERS);
    }
}
