//! The primitives added for loom's and shuttle's tests (`AtomicWaker`, `AbortHandle`,
//! `spawn_local`, `compare_and_swap`, `unsync_load`, `LocalKey::try_with`, `TimeBudget`)
//! behave as documented under interleave's own search, and the bugs their misuse causes are
//! found.

use crate::helpers;

use std::cell::Cell;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use interleave::future::{self, AtomicWaker};
use interleave::strategy::{Random, TimeBudget};
use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::Arc;
use interleave::{thread, Builder, FailureKind};

/// A task waits for a flag another thread sets and then wakes it through an `AtomicWaker`.
/// Registering before checking the flag is the documented protocol; checking first loses the
/// wake-up when the setter runs in between.
fn flag_and_waker(register_first: bool) {
    future::block_on(async move {
        let waker = Arc::new(AtomicWaker::new());
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let (waker, flag) = (waker.clone(), flag.clone());
            thread::spawn(move || {
                flag.store(true, Ordering::SeqCst);
                waker.wake();
            })
        };
        poll_fn(|cx| {
            if register_first {
                waker.register_by_ref(cx.waker());
            }
            if flag.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            if !register_first {
                waker.register_by_ref(cx.waker());
            }
            Poll::Pending
        })
        .await;
        setter.join().unwrap();
    });
}

#[test]
fn atomic_waker_loses_no_wake_up_and_its_misuse_is_a_found_deadlock() {
    for spec in ["dfs", "dpor"] {
        let fixed = helpers::builder(spec)
            .explore(|| flag_and_waker(true))
            .unwrap();
        assert!(fixed.is_ok(), "{spec}: {fixed}");
        assert!(fixed.executions > 1, "{spec} explored the interleavings");
        let buggy = helpers::builder(spec)
            .explore(|| flag_and_waker(false))
            .unwrap();
        let failure = buggy.first_failure().expect("the lost wake-up is found");
        assert_eq!(failure.kind, FailureKind::Deadlock, "{spec}: {failure}");
    }
}

#[test]
fn an_abort_handle_cancels_a_task_it_cannot_await() {
    let report = helpers::builder("dfs")
        .explore(|| {
            future::block_on(async {
                let task = future::spawn(poll_fn(|_| Poll::<u32>::Pending));
                let handle = task.abort_handle();
                let other = handle.clone();
                other.abort();
                let result = task.await;
                assert!(matches!(result, Err(future::JoinError::Cancelled)));
                assert!(handle.is_finished());
            })
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

#[test]
fn spawn_local_runs_a_future_that_is_not_send() {
    let report = helpers::builder("dfs")
        .explore(|| {
            future::block_on(async {
                let shared = Rc::new(Cell::new(1));
                let task = future::spawn_local({
                    let shared = shared.clone();
                    async move {
                        shared.set(shared.get() + 1);
                        shared.get()
                    }
                });
                assert_eq!(task.await.unwrap(), 2);
                assert_eq!(shared.get(), 2);
            })
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

#[test]
#[allow(deprecated)]
fn compare_and_swap_returns_the_previous_value_and_swaps_only_on_a_match() {
    let report = helpers::builder("dfs")
        .explore(|| {
            let value = Arc::new(AtomicUsize::new(0));
            let other = {
                let value = value.clone();
                thread::spawn(move || value.compare_and_swap(0, 1, Ordering::SeqCst))
            };
            let mine = value.compare_and_swap(0, 2, Ordering::SeqCst);
            let theirs = other.join().unwrap();
            // Exactly one of the two found 0 and swapped.
            let final_value = value.load(Ordering::SeqCst);
            match (mine, theirs) {
                (0, 2) => assert_eq!(final_value, 2),
                (1, 0) => assert_eq!(final_value, 1),
                outcome => panic!("impossible outcome {outcome:?}"),
            }
            // After joining, nothing races: the unsynchronised load sees the final value.
            assert_eq!(unsafe { value.unsync_load() }, final_value);
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(report.executions >= 2, "both orders explored");
}

interleave::thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

#[test]
fn local_key_try_with_reaches_the_thread_s_own_value() {
    let report = helpers::builder("dfs")
        .explore(|| {
            let child = thread::spawn(|| {
                DEPTH.try_with(|depth| depth.set(depth.get() + 5)).unwrap();
                DEPTH.try_with(Cell::get).unwrap()
            });
            DEPTH.with(|depth| depth.set(1));
            assert_eq!(child.join().unwrap(), 5);
            assert_eq!(DEPTH.try_with(Cell::get), Ok(1));
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

#[test]
fn a_time_budget_ends_the_exploration_when_it_has_passed() {
    let spin = || {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            thread::spawn(move || flag.store(true, Ordering::SeqCst))
        };
        flag.load(Ordering::SeqCst);
        setter.join().unwrap();
    };
    let none = Builder::new()
        .ignore_environment()
        .executions(1_000)
        .custom_strategy(TimeBudget::new(Box::new(Random), Duration::ZERO))
        .explore(spin)
        .unwrap();
    assert_eq!(none.executions, 0, "a spent budget plans nothing");
    let all = Builder::new()
        .ignore_environment()
        .executions(50)
        .custom_strategy(TimeBudget::new(Box::new(Random), Duration::from_secs(3600)))
        .explore(spin)
        .unwrap();
    assert_eq!(
        all.executions, 50,
        "a long budget leaves the execution bound in charge"
    );
}
