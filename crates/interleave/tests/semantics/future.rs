//! Async tasks: cancellation, output, and spin loops on `yield_now`. The async bugs that PCT
//! finds (a lost wakeup, a check-then-act, a leaked permit, a deadline race) are suite programs
//! (`interleave_programs`, `async-*`), checked for every seed with their fixed twins.

use interleave::future::sync::Notify;
use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::Builder;

use crate::helpers;

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

/// As tokio's: a task whose future panics ends, and its handle reports `JoinError::Panicked`,
/// which hands the panic to the program (no failure); a panic whose handle is never awaited is
/// still a failure. Before, the handle never completed and the awaiting thread deadlocked.
#[test]
fn a_panicking_task_completes_its_handle_with_the_panic() {
    helpers::all_schedules(200, || {
        future::block_on(async {
            let task = future::spawn(async { panic!("the task gives up") });
            assert_eq!(task.await, Err(JoinError::Panicked));
        })
    });
    helpers::all_schedules(200, || {
        let task = future::spawn(async { panic!("the task gives up") });
        assert_eq!(task.join(), Err(JoinError::Panicked));
    });
    let report = Builder::new()
        .ignore_environment()
        .executions(50)
        .explore(|| {
            future::block_on(async {
                drop(future::spawn(async { panic!("nobody asks") }));
                // Long enough for the task to run in some schedules (a task left parked when
                // the main thread returns is cancelled).
                for _ in 0..3 {
                    future::yield_now().await;
                }
            })
        })
        .unwrap();
    let failure = report.first_failure().expect("an unobserved panic fails");
    assert!(failure.message.contains("nobody asks"), "{failure}");
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

/// A task's `yield_now().await` is one scheduling point, the park that polls it again, as an
/// executor's yield is one trip through its queue, and a report shows it as a `yield` at the
/// `.await`'s line. It was two, a yield step and then a park, which doubled the decisions of
/// async code that yields and the search trees of `dfs` and `dpor` on it.
#[test]
fn a_tasks_yield_now_is_one_scheduling_point() {
    let steps = |yields: usize| {
        let report = Builder::new()
            .ignore_environment()
            .executions(1)
            .explore(move || {
                future::block_on(async move {
                    for _ in 0..yields {
                        future::yield_now().await;
                    }
                })
            })
            .unwrap();
        assert!(report.is_ok(), "{report}");
        report.steps
    };
    assert_eq!(steps(5) - steps(0), 5);
    assert_eq!(steps(12) - steps(0), 12);
    let report = Builder::new()
        .ignore_environment()
        .executions(1)
        .explore(|| {
            future::block_on(async {
                future::yield_now().await;
                panic!("after the yield");
            })
        })
        .unwrap();
    let failure = report.first_failure().expect("the panic fails");
    // The start, then the yield at the `.await` above, and no park.
    let text = failure.to_string();
    assert!(
        text.contains("interleaving (2 steps)") && text.contains("yield @semantics/future.rs:"),
        "{text}"
    );
    assert!(!text.contains("park @"), "{text}");
}

/// A deadlock of tasks says what each parked task awaits, and where; an awaited task is named
/// by its thread, since several tasks may be spawned at one line.
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
        text.contains("it awaits the end of thread 1, the task spawned at semantics/future.rs:"),
        "{text}"
    );
}

/// A hand-written future that checks a flag and returns `Pending` without registering its
/// waker (a lost wake-up): the deadlock used to name only the `block_on` line, which says
/// nothing about where the future gave up; it now names the future's last step before the park,
/// the check.
#[test]
fn a_lost_wakeup_of_a_hand_written_future_names_its_last_check() {
    let report = Builder::new()
        .ignore_environment()
        .strategy("dfs".parse().unwrap())
        .executions(100)
        .explore(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let setter = {
                let flag = flag.clone();
                interleave::thread::spawn(move || flag.store(true, Ordering::Release))
            };
            future::block_on(std::future::poll_fn(|_context| {
                let raised = flag.load(Ordering::Acquire); // the check
                if raised {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            }));
            setter.join().unwrap();
        })
        .unwrap();
    let failure = report.first_failure().expect("the wake-up is lost");
    assert_eq!(failure.kind, interleave::FailureKind::Deadlock, "{failure}");
    let check = include_str!("future.rs")
        .lines()
        .position(|line| line.ends_with("// the check"))
        .expect("the marker")
        + 1;
    let expected = format!(
        "waits to be unparked; it parked after load Acquire AtomicBool1 at semantics/future.rs:{check}:"
    );
    assert!(
        failure.message.contains(&expected),
        "{expected:?} in {failure}"
    );
}

/// An abort takes effect at the task's next poll: a poll that was running when the abort came
/// and returns `Ready` has finished the task, so its output is kept (tokio's and shuttle's
/// rule). Here the task's only poll sends, which lets the main thread run and abort, and then
/// returns; no schedule of either exhaustive search may cancel it.
#[test]
fn a_poll_that_finishes_wins_over_an_abort_that_came_while_it_ran() {
    for spec in ["dfs", "dpor"] {
        let report = helpers::builder(spec)
            .executions(1_000)
            .explore(|| {
                let (sent, received) = future::sync::oneshot::channel();
                let task = future::spawn(async move {
                    sent.send(()).unwrap();
                    7
                });
                future::block_on(received).unwrap();
                task.abort();
                assert_eq!(future::block_on(task), Ok(7));
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        assert!(report.executions > 1, "{spec}: {report}");
    }
}

/// `abort` is one step: the aborted task cannot drop its future between the abort and the
/// aborting thread's next step. The drop is observed through a std atomic, which is no
/// scheduling point, right after `abort` returns.
#[test]
fn an_aborted_task_acts_on_the_abort_only_after_the_aborters_next_step() {
    struct DroppedFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);
    impl Drop for DroppedFlag {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    for spec in ["dfs", "dpor"] {
        let report = helpers::builder(spec)
            .executions(1_000)
            .explore(|| {
                let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let notify = Arc::new(Notify::new());
                let task = {
                    let flag = DroppedFlag(dropped.clone());
                    let notify = notify.clone();
                    future::spawn(async move {
                        let _flag = flag;
                        notify.notified().await;
                    })
                };
                task.abort();
                assert!(
                    !dropped.load(std::sync::atomic::Ordering::SeqCst),
                    "the task dropped its future inside the abort"
                );
                assert_eq!(future::block_on(task), Err(JoinError::Cancelled));
                assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
    }
}

/// A task that yields once and then finishes may finish before an abort that an `AbortHandle`
/// sends while another task awaits it, or be cancelled: every search reaches both outcomes,
/// `dpor` too (the abort and the task's later polls are ordered through the task's abort flag).
#[test]
fn an_abort_while_another_task_joins_may_come_before_or_after_the_task_finishes() {
    for spec in ["dfs", "dpor", "random"] {
        let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = helpers::builder(spec)
            .executions(10_000)
            .explore(|| {
                let task = future::spawn(async {
                    future::yield_now().await;
                    42u32
                });
                let abort = task.abort_handle();
                let joiner = future::spawn(task);
                abort.abort();
                let result = future::block_on(joiner).unwrap();
                seen.lock().unwrap().insert(result.map_err(|_| "cancelled"));
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        let seen = seen.into_inner().unwrap();
        assert_eq!(
            seen,
            std::collections::BTreeSet::from([Ok(42), Err("cancelled")]),
            "{spec}"
        );
    }
}

/// A task's writes happen before what follows the `await` of its handle (or the blocking
/// `join` of it), as a thread's do before its `join` returns: reading a cell the task wrote is
/// no race once its output is taken (a newcomer's correct program was reported as a data race
/// here). Reading the cell before awaiting the handle still races with the task's write.
#[test]
fn awaiting_a_task_orders_its_writes_before_what_follows() {
    use interleave::cell::UnsafeCell;

    fn run(await_first: bool, blocking: bool) -> interleave::Report {
        helpers::builder("random")
            .executions(500)
            .explore(move || {
                let cell = Arc::new(UnsafeCell::new(0));
                let written = cell.clone();
                let task = future::spawn(async move {
                    written.with_mut(|value| unsafe { *value = 1 });
                });
                let read = || cell.with(|value| unsafe { *value });
                if !await_first {
                    read();
                }
                if blocking {
                    task.join().unwrap();
                } else {
                    future::block_on(task).unwrap();
                }
                assert_eq!(read(), 1);
            })
            .unwrap()
    }
    for blocking in [false, true] {
        let ordered = run(true, blocking);
        assert!(ordered.is_ok(), "blocking {blocking}: {ordered}");
        let racing = run(false, blocking);
        assert_eq!(
            racing.first_failure().map(|failure| failure.kind),
            Some(interleave::FailureKind::DataRace),
            "blocking {blocking}: {racing}"
        );
    }
}
