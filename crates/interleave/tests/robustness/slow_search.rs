//! An exhaustive search that cannot end: a waiter that polls a flag under a spin lock can lose
//! the lock to the other thread again and again, so `dpor`'s tree is infinite and the search ran
//! silently until its budget (2^40 executions under interleave-loom), while loom fails the same
//! model at once. The slow-search notice says so on the standard error, past the test harness's
//! capture, while the search runs; a sampler's says how far it got.

use std::time::Duration;

use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::thread;

use crate::probe::Probe;

/// A spin lock with the usual test-and-test-and-set loop.
struct SpinLock {
    locked: AtomicBool,
}

impl SpinLock {
    fn lock(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                interleave::hint::spin_loop();
            }
        }
    }

    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

/// A correct program whose `dpor` tree is infinite: the waiter looks at the flag under the spin
/// lock until the main thread has raised it under the same lock.
fn flag_under_a_spin_lock() {
    let lock = Arc::new(SpinLock {
        locked: AtomicBool::new(false),
    });
    let flag = Arc::new(AtomicBool::new(false));
    let (waiter_lock, waiter_flag) = (lock.clone(), flag.clone());
    let waiter = thread::spawn(move || loop {
        waiter_lock.lock();
        let raised = waiter_flag.load(Ordering::Relaxed);
        waiter_lock.unlock();
        if raised {
            break;
        }
        interleave::hint::spin_loop();
    });
    lock.lock();
    flag.store(true, Ordering::Relaxed);
    lock.unlock();
    waiter.join().unwrap();
}

/// A correct program with a large but finite tree: three threads of ten increments.
fn increments() {
    let counter = Arc::new(interleave::sync::atomic::AtomicUsize::new(0));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || {
                for _ in 0..10 {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

/// Runs `program` under `strategy` for `executions`, with the notice due at once.
fn explore(strategy: &str, executions: u64, program: fn()) {
    let report = interleave::Builder::new()
        .ignore_environment()
        .strategy(strategy.parse().unwrap())
        .executions(executions)
        .workers(1)
        .slow_search_notice(Some(Duration::ZERO))
        .explore(program)
        .unwrap();
    assert!(report.failures.is_empty(), "{report}");
}

const NOTICE: &str = "interleave: the dpor search in `";

#[test]
fn an_exhaustive_search_that_cannot_end_says_why_while_it_runs() {
    let probe = |label| {
        Probe::new(
            module_path!(),
            "an_exhaustive_search_that_cannot_end_says_why_while_it_runs",
        )
        .label(label)
        .captured()
    };
    // Due at once, the notice comes at the first look at the clock, before the executions have
    // grown; its follow-up comes when they have.
    if let Some(outcome) = probe("spin").run(|| explore("dpor", 2_000, flag_under_a_spin_lock)) {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
        let stderr = &outcome.stderr;
        assert_eq!(
            stderr.matches(NOTICE).count(),
            2,
            "notice and follow-up: {stderr}"
        );
        assert!(
            stderr.contains("the dpor search in `slow_search::an_exhaustive_search_that_cannot_end_says_why_while_it_runs` has run for 0 s (64 executions of a budget of 2,000)"),
            "{stderr}"
        );
        assert!(stderr.contains("is still not finished after "), "{stderr}");
        assert!(
            stderr.contains("Its executions have grown from "),
            "{stderr}"
        );
        assert!(stderr.contains("a spin lock taken in a loop"), "{stderr}");
        assert!(stderr.contains("`dpor:c=2`"), "{stderr}");
    }
    if let Some(outcome) = probe("flat").run(|| explore("dpor", 200, increments)) {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
        let stderr = &outcome.stderr;
        assert_eq!(stderr.matches(NOTICE).count(), 1, "printed once: {stderr}");
        assert!(!stderr.contains("grown"), "even executions: {stderr}");
        assert!(stderr.contains("far larger than the budget"), "{stderr}");
    }
    // A sampler's run is bounded by its budget: it says how far it got, not that it may never
    // end.
    if let Some(outcome) = probe("sampler").run(|| explore("random", 3_000, flag_under_a_spin_lock))
    {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
        let stderr = &outcome.stderr;
        assert!(!stderr.contains(NOTICE), "{stderr}");
        assert_eq!(
            stderr
                .matches("interleave: the random exploration in `")
                .count(),
            1,
            "{stderr}"
        );
        assert!(
            stderr.contains("has run 64 of its 3,000 executions in 0 s"),
            "{stderr}"
        );
        assert!(!stderr.contains("grown"), "{stderr}");
    }
}
