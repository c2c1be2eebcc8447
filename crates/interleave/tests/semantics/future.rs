//! Async tasks: cancellation, output, and spin loops on `yield_now`. The async bugs that PCT
//! finds (a lost wakeup, a check-then-act, a leaked permit, a deadline race) are suite programs
//! (`interleave_programs`, `async-*`), checked for every seed with their fixed twins.

use interleave::future::sync::Notify;
use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::Builder;

#[test]
fn an_aborted_task_is_cancelled_and_a_finished_one_keeps_its_output() {
    let report = Builder::new()
        .ignore_environment()
        .executions(200)
        .explore(|| {
            future::block_on(async {
                let notify = Arc::new(Notify::new());
                let stuck = {
                    let notify = notify.clone();
                    future::spawn(async move { notify.notified().await })
                };
                stuck.abort();
                assert_eq!(stuck.await, Err(JoinError::Cancelled));
                let done = future::spawn(async { 7 });
                future::yield_now().await;
                let finished = done.is_finished();
                let value = done.await.unwrap();
                assert_eq!(value, 7);
                let _ = finished;
            })
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

/// `yield_now().await` in a spin loop is the thread's yield, so PCT lets the task it waits
/// for run instead of reporting a livelock.
#[test]
fn an_async_spin_loop_on_yield_now_is_not_a_livelock() {
    for seed in 0..5 {
        let report = Builder::new()
            .ignore_environment()
            .strategy("pct:d=3".parse().unwrap())
            .seed(seed)
            .executions(300)
            .explore(|| {
                future::block_on(async {
                    let flag = Arc::new(AtomicBool::new(false));
                    let setter = {
                        let flag = flag.clone();
                        future::spawn(async move { flag.store(true, Ordering::SeqCst) })
                    };
                    while !flag.load(Ordering::SeqCst) {
                        future::yield_now().await;
                    }
                    setter.await.unwrap();
                })
            })
            .unwrap();
        assert!(report.is_ok(), "seed {seed}: {report}");
    }
}

/// A deadlock of tasks says what each parked task awaits, and where.
#[test]
fn a_deadlock_of_tasks_names_what_each_task_awaits() {
    let report = Builder::new()
        .ignore_environment()
        .executions(1)
        .explore(|| {
            future::block_on(async {
                let notify = Arc::new(Notify::new());
                let waiter = {
                    let notify = notify.clone();
                    future::spawn(async move { notify.notified().await })
                };
                waiter.await.unwrap();
            })
        })
        .unwrap();
    let failure = report.first_failure().expect("nobody notifies");
    assert_eq!(failure.kind, interleave::FailureKind::Deadlock);
    let text = failure.message.clone();
    assert!(
        text.contains("it awaits a Notify notification (awaited at semantics/future.rs:"),
        "{text}"
    );
    assert!(
        text.contains("it awaits the end of the task spawned at semantics/future.rs:"),
        "{text}"
    );
}
