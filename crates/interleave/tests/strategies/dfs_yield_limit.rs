//! `dfs:yields=2`, the depth-first search under the looser yield rule: it reaches the outcomes
//! in which a thread goes on past a yield before the others step, which std's `yield_now` and
//! every executor's re-poll allow and plain `dfs` leaves out, it finds a bug hidden there and
//! nothing in its fixed twin, and a spin-wait still has a finite tree.

use std::collections::BTreeSet;

use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::thread;

use crate::helpers::{self, exhaust, outcomes};

/// A spawned thread yields, then raises a flag; the main thread reads the flag once. Under std
/// the read may see the flag raised: the spawned thread's `yield_now` may return at once and
/// its store run before the main thread's load. The yield rule makes the main thread step
/// first, so plain `dfs` never sees it.
fn flag_raised_after_a_yield() -> bool {
    let flag = Arc::new(AtomicBool::new(false));
    let raiser = {
        let flag = flag.clone();
        thread::spawn(move || {
            thread::yield_now();
            flag.store(true, Ordering::SeqCst);
        })
    };
    let seen = flag.load(Ordering::SeqCst);
    raiser.join().unwrap();
    seen
}

#[test]
fn a_thread_may_go_on_past_its_yield_before_the_others_step() {
    let (with_rule, _) = outcomes("dfs", flag_raised_after_a_yield);
    assert_eq!(with_rule, BTreeSet::from([false]));
    let (looser, report) = outcomes("dfs:yields=2", flag_raised_after_a_yield);
    assert_eq!(looser, BTreeSet::from([false, true]));
    assert_eq!(report.strategy, "dfs:yields=2");
}

/// The bug: the main thread asserts that the flag it reads is still down, which holds under
/// the yield rule only. The fixed twin reads the flag before it spawns the thread.
fn flag_still_down(fixed: bool) {
    let flag = Arc::new(AtomicBool::new(false));
    let early = fixed.then(|| flag.load(Ordering::SeqCst));
    let raiser = {
        let flag = flag.clone();
        thread::spawn(move || {
            thread::yield_now();
            flag.store(true, Ordering::SeqCst);
        })
    };
    let seen = early.unwrap_or_else(|| flag.load(Ordering::SeqCst));
    assert!(!seen, "the flag was raised before the main thread read it");
    raiser.join().unwrap();
}

#[test]
fn finds_a_bug_behind_a_yield_and_nothing_in_its_fixed_twin() {
    let buggy = helpers::builder("dfs:yields=2")
        .explore(|| flag_still_down(false))
        .unwrap();
    let failure = buggy
        .first_failure()
        .expect("the bug behind the yield is found");
    assert!(failure.message.contains("the flag was raised"), "{buggy}");
    assert!(helpers::builder("dfs")
        .explore(|| flag_still_down(false))
        .unwrap()
        .is_ok());
    let fixed = exhaust("dfs:yields=2", || flag_still_down(true));
    assert!(fixed.is_ok(), "{fixed}");
}

/// A task that yields twice is aborted right after its spawn: it may be cancelled before its
/// first poll or between its polls, or be polled three times and finish before the abort, as
/// on a multi-threaded executor. The last outcome needs the task to go on past its second
/// yield before the main thread's next step. (A task's yield is the park that polls it again,
/// so going on past one yield only runs the task to its next.)
fn abort_of_a_task_that_yields() -> &'static str {
    let task = future::spawn(async {
        future::yield_now().await;
        future::yield_now().await;
    });
    task.abort();
    match future::block_on(task) {
        Ok(()) => "finished",
        Err(JoinError::Cancelled) => "cancelled",
        Err(JoinError::Panicked) => "panicked",
    }
}

#[test]
fn an_aborted_task_may_finish_past_its_yield_first() {
    let (with_rule, _) = outcomes("dfs", abort_of_a_task_that_yields);
    assert_eq!(with_rule, BTreeSet::from(["cancelled"]));
    let (looser, _) = outcomes("dfs:yields=2", abort_of_a_task_that_yields);
    assert_eq!(looser, BTreeSet::from(["cancelled", "finished"]));
}

/// The main thread spins, yielding, until a spawned thread raises a flag; it returns how many
/// times it read the flag down.
fn spins_until_raised() -> u32 {
    let flag = Arc::new(AtomicBool::new(false));
    let raiser = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(true, Ordering::SeqCst))
    };
    let mut spins = 0;
    while !flag.load(Ordering::SeqCst) {
        spins += 1;
        thread::yield_now();
    }
    raiser.join().unwrap();
    spins
}

#[test]
fn a_spin_wait_keeps_a_finite_tree_with_one_more_turn_per_wait() {
    // Under the rule the spinner reads the flag down at most once before the raiser's store;
    // with two yields in a row it may read it once more.
    let (strict, strict_report) = outcomes("dfs", spins_until_raised);
    assert_eq!(strict, BTreeSet::from([0, 1]));
    assert_eq!(strict_report.executions, 6);
    let (looser, looser_report) = outcomes("dfs:yields=2", spins_until_raised);
    assert_eq!(looser, BTreeSet::from([0, 1, 2]));
    assert_eq!(looser_report.executions, 15);
}

/// Two threads spin, yielding, until a third raises a flag. Counting free yields in a row that
/// any other thread's step ended let the spinners take turns for ever, each yield free after
/// the other's load, so the first schedule starved the raiser and failed at the step bound (as
/// shuttle's DFS does); a thread now waits at every second yield whatever the others do.
fn two_spinners_and_a_raiser() {
    let flag = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let flag = flag.clone();
            thread::spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
            })
        })
        .collect();
    let raiser = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(true, Ordering::SeqCst))
    };
    for spinner in spinners {
        spinner.join().unwrap();
    }
    raiser.join().unwrap();
}

#[test]
fn spinners_taking_turns_do_not_starve_the_thread_they_wait_for() {
    // The whole tree takes minutes in a debug build; its first schedules are the ones that
    // starved the raiser.
    let report = helpers::builder("dfs:yields=2")
        .executions(300)
        .explore(two_spinners_and_a_raiser)
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.executions, 300, "{report}");
}
