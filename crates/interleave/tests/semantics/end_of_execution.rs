//! The end of a passing execution: the detached tasks still unfinished when the main thread has
//! returned are dropped as themselves, with every primitive working, so their destructors run
//! (nothing leaks) and a destructor that can never finish fails the test with a report that
//! says so (`runtime/ending.rs`).

use crate::helpers;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};
use std::task::{Context, Poll};

use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::{mpsc, Arc, Mutex};
use interleave::{thread, FailureKind, Report};

/// Explores `f` without the determinism check's re-runs, so that a test can count what ran once
/// per execution.
fn explore(spec: &str, executions: u64, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .check_determinism(false)
        .explore(f)
        .expect("the exploration runs")
}

/// Runs its closure when dropped.
struct OnDrop<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// A future that never completes and never arranges a wake-up.
struct Never;

impl Future for Never {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// Spawns and detaches a task that owns `on_drop` and then stays pending for ever, parked
/// between polls; returns once the task has started.
fn park_until_the_end(on_drop: impl FnOnce() + 'static) {
    let (started_tx, started_rx) = mpsc::channel();
    drop(future::spawn_local(async move {
        let _on_drop = OnDrop(Some(on_drop));
        started_tx.send(()).unwrap();
        Never.await;
    }));
    started_rx.recv().unwrap();
}

/// A detached task parked when the execution ends drops its future as itself, and its
/// destructor may lock a `Mutex` that the main thread used, in every execution.
#[test]
fn a_parked_detached_task_drops_its_future_as_itself_and_may_lock() {
    static DROPPED: StdAtomicUsize = StdAtomicUsize::new(0);
    for spec in ["random", "pct:d=3", "dpor"] {
        DROPPED.store(0, StdOrdering::SeqCst);
        let report = explore(spec, 50, || {
            let lock = Arc::new(Mutex::new(0));
            let in_task = lock.clone();
            let (started_tx, started_rx) = mpsc::channel();
            drop(future::spawn_local(async move {
                let me = thread::current().id();
                let _on_drop = OnDrop(Some(move || {
                    assert_eq!(thread::current().id(), me, "dropped as its task");
                    *in_task.lock().unwrap() += 1;
                    DROPPED.fetch_add(1, StdOrdering::SeqCst);
                }));
                started_tx.send(()).unwrap();
                Never.await;
            }));
            started_rx.recv().unwrap();
            *lock.lock().unwrap() += 1;
        });
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(
            DROPPED.load(StdOrdering::SeqCst) as u64,
            report.executions,
            "{spec}: one drop per execution"
        );
    }
}

/// A destructor that waits for a message nobody can send any more fails the execution as a
/// deadlock that names the end of the execution; the twin that only tries to receive passes.
#[test]
fn a_destructor_that_blocks_for_ever_at_the_end_is_a_deadlock() {
    let blocks = explore("random", 20, || {
        let (tx, rx) = mpsc::channel::<()>();
        park_until_the_end(move || {
            let _tx = tx;
            let _ = rx.recv();
        });
    });
    let failure = blocks
        .first_failure()
        .expect("the blocked destructor fails");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(
        failure.message.contains(
            "deadlock while dropping the tasks that were unfinished at the end of the execution"
        ),
        "{failure}"
    );

    let tries = explore("random", 20, || {
        let (tx, rx) = mpsc::channel::<()>();
        park_until_the_end(move || {
            let _tx = tx;
            assert!(rx.try_recv().is_err());
        });
    });
    assert!(tries.is_ok(), "{tries}");
}

/// A destructor that spins on a flag nothing sets exceeds the step bound, with words that say
/// where; the twin whose flag is set passes.
#[test]
fn a_destructor_that_spins_at_the_end_exceeds_the_step_bound() {
    let run = |set: bool| {
        helpers::builder("random")
            .executions(5)
            .max_steps(500)
            .explore(move || {
                let flag = Arc::new(AtomicBool::new(false));
                let in_task = flag.clone();
                park_until_the_end(move || {
                    while !in_task.load(Ordering::SeqCst) {
                        thread::yield_now();
                    }
                });
                flag.store(set, Ordering::SeqCst);
            })
            .expect("the exploration runs")
    };
    let spins = run(false);
    let failure = spins
        .first_failure()
        .expect("the spinning destructor fails");
    assert_eq!(failure.kind, FailureKind::StepBound);
    assert!(
        failure
            .message
            .contains("while it was dropping the tasks that were unfinished at the end"),
        "{failure}"
    );
    let set = run(true);
    assert!(set.is_ok(), "{set}");
}

/// A task blocked in the middle of a poll on a lock that a parked task holds is unwound once
/// the parked task has dropped its guard, and its own destructor then takes the lock.
#[test]
fn a_task_blocked_in_a_poll_is_unwound_after_the_parked_tasks_are_dropped() {
    static DROPPED: StdAtomicUsize = StdAtomicUsize::new(0);
    DROPPED.store(0, StdOrdering::SeqCst);
    let report = explore("random", 30, || {
        let lock = Arc::new(Mutex::new(0));
        let (held_tx, held_rx) = mpsc::channel();
        let holder = lock.clone();
        drop(future::spawn_local(async move {
            let _guard = holder.lock().unwrap();
            held_tx.send(()).unwrap();
            Never.await;
        }));
        held_rx.recv().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let waiter = lock.clone();
        drop(future::spawn_local(async move {
            let in_destructor = waiter.clone();
            let _on_drop = OnDrop(Some(move || {
                *in_destructor.lock().unwrap() += 1;
                DROPPED.fetch_add(1, StdOrdering::SeqCst);
            }));
            started_tx.send(()).unwrap();
            // Blocks inside the poll: the parked task holds the lock.
            let _guard = waiter.lock();
        }));
        started_rx.recv().unwrap();
    });
    assert!(report.is_ok(), "{report}");
    assert_eq!(DROPPED.load(StdOrdering::SeqCst) as u64, report.executions);
}

/// Thread-locals of a detached task are dropped with it at the end, as it.
#[test]
fn the_thread_locals_of_a_detached_task_are_dropped_at_the_end() {
    static DROPPED: StdAtomicUsize = StdAtomicUsize::new(0);
    struct Local(thread::ThreadId);
    impl Drop for Local {
        fn drop(&mut self) {
            assert_eq!(thread::current().id(), self.0);
            drop(Mutex::new(()).lock().unwrap());
            DROPPED.fetch_add(1, StdOrdering::SeqCst);
        }
    }
    interleave::thread_local! {
        static LOCAL: std::cell::RefCell<Option<Local>> = const { std::cell::RefCell::new(None) };
    }
    DROPPED.store(0, StdOrdering::SeqCst);
    let report = explore("random", 20, || {
        let (started_tx, started_rx) = mpsc::channel();
        drop(future::spawn_local(async move {
            LOCAL.with(|local| *local.borrow_mut() = Some(Local(thread::current().id())));
            started_tx.send(()).unwrap();
            Never.await;
        }));
        started_rx.recv().unwrap();
    });
    assert!(report.is_ok(), "{report}");
    assert_eq!(DROPPED.load(StdOrdering::SeqCst) as u64, report.executions);
}

/// What a destructor spawns at the end never runs: a task's handle reports `Cancelled`, a
/// thread's `join` returns `Err`, and the task's future is dropped as that task.
#[test]
fn what_a_destructor_spawns_at_the_end_is_cancelled() {
    static CHECKED: StdAtomicUsize = StdAtomicUsize::new(0);
    CHECKED.store(0, StdOrdering::SeqCst);
    let report = explore("random", 20, || {
        park_until_the_end(|| {
            let parent = thread::current().id();
            let owned = OnDrop(Some(move || assert_ne!(thread::current().id(), parent)));
            let task = future::spawn(async move {
                let _owned = owned;
                unreachable!("a task spawned at the end is never polled");
            });
            assert_eq!(future::block_on(task), Err(JoinError::Cancelled));
            assert!(thread::spawn(|| unreachable!("never runs")).join().is_err());
            CHECKED.fetch_add(1, StdOrdering::SeqCst);
        });
    });
    assert!(report.is_ok(), "{report}");
    assert_eq!(CHECKED.load(StdOrdering::SeqCst) as u64, report.executions);
}

/// A destructor at the end waits for a flag that only the schedules where the main thread
/// reads before the worker writes set: the others deadlock at the end.
fn deadlocks_at_the_end_in_some_schedules() {
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<()>();
    let in_task = flag.clone();
    park_until_the_end(move || {
        let _tx = tx;
        if !in_task.load(Ordering::SeqCst) {
            let _ = rx.recv();
        }
    });
    let worker_first = Arc::new(AtomicBool::new(false));
    let in_worker = worker_first.clone();
    let worker = thread::spawn(move || in_worker.store(true, Ordering::SeqCst));
    if !worker_first.load(Ordering::SeqCst) {
        flag.store(true, Ordering::SeqCst);
    }
    worker.join().unwrap();
}

/// The end takes the same course under the same seed whatever the worker count: the failures
/// found (a deadlock at the end in the schedules where the worker ran first) and their tokens
/// are the same, and a token replays its failure.
#[test]
fn the_end_is_deterministic_across_worker_counts() {
    let run = |workers: usize| {
        helpers::first_exploration(|| {
            helpers::builder("random")
                .executions(40)
                .seed(7)
                .workers(workers)
                .stop_on_first_failure(false)
                .explore(deadlocks_at_the_end_in_some_schedules)
                .expect("the exploration runs")
        })
    };
    let tokens = |report: &Report| {
        report
            .failures
            .iter()
            .map(|failure| (failure.execution, failure.token.clone()))
            .collect::<Vec<_>>()
    };
    let one = run(1);
    assert!(
        !one.failures.is_empty(),
        "some schedules deadlock at the end"
    );
    assert_eq!(tokens(&one), tokens(&run(2)));
    // A failure at the end replays from its token: the end adds nothing to the schedule.
    let failure = &one.failures[0];
    let replayed = helpers::builder("random")
        .replay(&failure.token, deadlocks_at_the_end_in_some_schedules)
        .expect("the token replays");
    let again = replayed.first_failure().expect("the replay fails again");
    assert_eq!(again.kind, FailureKind::Deadlock);
    assert_eq!(again.message, failure.message);
}

/// Keeps a value until the end of the execution for the running thread.
fn keep_until_the_end<T: 'static>(value: T) {
    let me = thread::current().id();
    assert!(
        thread::keep_until_end(me, value).is_ok(),
        "the thread exists"
    );
}

/// Values threads keep until the end outlive their threads, and are dropped at the end of the
/// execution as their threads, in thread order (the main thread first), inside the execution:
/// each destructor locks a `Mutex`, sees its own thread as current, and checks that the threads
/// before it dropped theirs first. The twin drops the same values as each thread returns.
#[test]
fn kept_values_are_dropped_at_the_end_as_their_threads_in_thread_order() {
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    std::thread_local! {
        /// The threads whose values were dropped in this OS thread's execution, in order.
        static ORDER: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    struct Logs(Arc<Mutex<usize>>, bool);
    impl Drop for Logs {
        fn drop(&mut self) {
            *self.0.lock().unwrap() += 1;
            let me = thread::current().id().as_usize();
            ORDER.with(|order| {
                let mut order = order.borrow_mut();
                if self.1 {
                    assert_eq!(*order, (0..me).collect::<Vec<_>>(), "in thread order");
                }
                order.push(me);
            });
            DROPS.fetch_add(1, StdOrdering::SeqCst);
        }
    }
    for keep in [true, false] {
        for spec in ["random", "pct:d=3", "dpor"] {
            DROPS.store(0, StdOrdering::SeqCst);
            let report = explore(spec, 30, move || {
                ORDER.with(|order| order.borrow_mut().clear());
                let drops = Arc::new(Mutex::new(0));
                let children: Vec<_> = (0..3)
                    .map(|_| {
                        let drops = drops.clone();
                        thread::spawn(move || {
                            if keep {
                                keep_until_the_end(Logs(drops, true));
                            } else {
                                drop(Logs(drops, false));
                            }
                        })
                    })
                    .collect();
                if keep {
                    keep_until_the_end(Logs(drops.clone(), true));
                }
                for child in children {
                    child.join().unwrap();
                }
                let expected = if keep { 0 } else { 3 };
                assert_eq!(
                    *drops.lock().unwrap(),
                    expected,
                    "kept until the end: {keep}"
                );
            });
            assert!(report.is_ok(), "{spec}: {report}");
            let per_execution = if keep { 4 } else { 3 };
            assert_eq!(
                DROPS.load(StdOrdering::SeqCst) as u64,
                per_execution * report.executions,
                "{spec}"
            );
        }
    }
}

/// The destructor of a kept value may spawn a task, which the end drops in turn, as a thread
/// of its own.
#[test]
fn a_task_spawned_by_the_destructor_of_a_kept_value_is_dropped_too() {
    static DROPPED: StdAtomicUsize = StdAtomicUsize::new(0);
    struct Spawns;
    impl Drop for Spawns {
        fn drop(&mut self) {
            let parent = thread::current().id();
            let on_drop = OnDrop(Some(move || {
                assert_ne!(thread::current().id(), parent, "dropped as the new task");
                DROPPED.fetch_add(1, StdOrdering::SeqCst);
            }));
            drop(future::spawn_local(async move {
                let _on_drop = on_drop;
                Never.await;
            }));
        }
    }
    let report = explore("random", 20, || keep_until_the_end(Spawns));
    assert!(report.is_ok(), "{report}");
    assert_eq!(DROPPED.load(StdOrdering::SeqCst), 20);
}

/// A kept value whose destructor panics at the end fails the execution with its thread's
/// panic (no abort, no panic inside interleave); the twin whose destructor does not panic
/// passes.
#[test]
fn a_kept_value_whose_destructor_panics_fails_the_execution() {
    struct PanicsOnDrop(bool);
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            if self.0 {
                panic!("the kept value's destructor failed");
            }
        }
    }
    for panics in [true, false] {
        let report = explore("random", 10, move || {
            thread::spawn(move || keep_until_the_end(PanicsOnDrop(panics)))
                .join()
                .unwrap();
        });
        if panics {
            let failure = report
                .first_failure()
                .expect("the destructor's panic fails");
            assert_eq!(failure.kind, FailureKind::Panic);
            assert!(
                failure
                    .message
                    .contains("the kept value's destructor failed"),
                "{failure}"
            );
        } else {
            assert!(report.is_ok(), "{report}");
        }
    }
}

/// A failed execution drops the values its threads kept after teardown, each as its thread,
/// and its failure stays the report's: a destructor that looks up its thread and panics there
/// only adds a warning.
#[test]
fn a_failed_execution_drops_its_kept_values_as_their_threads() {
    static DROPPED_AS_MAIN: StdAtomicUsize = StdAtomicUsize::new(0);
    struct ChecksThread(bool);
    impl Drop for ChecksThread {
        fn drop(&mut self) {
            if thread::current().id().as_usize() == 0 {
                DROPPED_AS_MAIN.fetch_add(1, StdOrdering::SeqCst);
            }
            if self.0 {
                panic!("a kept value's destructor failed after the deadlock");
            }
        }
    }
    for panics in [false, true] {
        DROPPED_AS_MAIN.store(0, StdOrdering::SeqCst);
        let report = explore("random", 1, move || {
            keep_until_the_end(ChecksThread(panics));
            let (_tx, rx) = mpsc::channel::<()>();
            let _ = rx.recv();
        });
        let failure = report.first_failure().expect("the execution deadlocks");
        assert_eq!(failure.kind, FailureKind::Deadlock, "{failure}");
        assert_eq!(DROPPED_AS_MAIN.load(StdOrdering::SeqCst), 1);
        let warned = report
            .warnings
            .iter()
            .any(|warning| warning.contains("a kept value's destructor failed after the deadlock"));
        assert_eq!(warned, panics, "{report}");
    }
}

/// Panics with a payload whose own destructor panics too.
struct PanicsWithAPanickingPayload;

impl Drop for PanicsWithAPanickingPayload {
    fn drop(&mut self) {
        struct PanicsOnDrop;
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("the second task's payload panicked when dropped");
            }
        }
        std::panic::panic_any(PanicsOnDrop);
    }
}

/// Two detached tasks panic while the end drops them: the earlier panic is the report's
/// failure, even though the later one's payload panics again when the task's root drops it
/// (which used to become the failure, since it went another way). The twin without the first
/// panic reports the second task's.
#[test]
fn the_earliest_panic_of_the_end_is_the_one_reported() {
    for first_panics in [true, false] {
        let report = explore("random", 5, move || {
            park_until_the_end(move || {
                if first_panics {
                    panic!("the first task's destructor panicked");
                }
            });
            park_until_the_end(|| drop(PanicsWithAPanickingPayload));
        });
        let failure = report.first_failure().expect("a task panicked");
        assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
        let expected = if first_panics {
            "the first task's destructor panicked"
        } else {
            "a panic with a non-string payload"
        };
        assert!(failure.message.starts_with(expected), "{failure}");
    }
}

/// A task in the middle of a poll when the execution ends is unwound; this one catches the
/// unwind and panics, and its payload, which nobody joins, is dropped at its root as the task:
/// the payload's destructor yields and goes on, rather than being cut short by another unwind.
#[test]
fn the_payload_of_a_task_unwound_at_the_end_is_dropped_as_the_task() {
    static DROPPED: StdAtomicUsize = StdAtomicUsize::new(0);
    struct YieldsOnDrop(thread::ThreadId);
    impl Drop for YieldsOnDrop {
        fn drop(&mut self) {
            thread::yield_now();
            assert_eq!(thread::current().id(), self.0, "dropped as its task");
            DROPPED.fetch_add(1, StdOrdering::SeqCst);
        }
    }
    let report = explore("random", 5, || {
        let (started_tx, started_rx) = mpsc::channel();
        drop(future::spawn_local(async move {
            let me = thread::current().id();
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                started_tx.send(()).unwrap();
                let spins = interleave::sync::atomic::AtomicUsize::new(0);
                loop {
                    spins.fetch_add(1, Ordering::SeqCst);
                }
            }));
            std::panic::panic_any(YieldsOnDrop(me));
        }));
        started_rx.recv().unwrap();
    });
    let failure = report.first_failure().expect("the task panicked");
    assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
    assert_eq!(DROPPED.load(StdOrdering::SeqCst) as u64, report.executions);
}

/// A detached worker waits for a shutdown flag under a `Condvar`; the main thread returns with
/// or without setting it and notifying. Left waiting, the worker can never finish: std would let
/// the test return and leave it blocked, the execution reports it as a deadlock that says the
/// main thread had returned. Told to stop, the worker finishes and nothing is reported.
#[test]
fn a_thread_left_waiting_when_the_main_thread_returns_is_a_deadlock_that_says_so() {
    let detached_waiter = |stop_it: bool| {
        move || {
            let shared = Arc::new((Mutex::new(false), interleave::sync::Condvar::new()));
            let worker_shared = shared.clone();
            drop(thread::spawn(move || {
                let (stop, wake) = &*worker_shared;
                drop(
                    wake.wait_while(stop.lock().unwrap(), |stop| !*stop)
                        .unwrap(),
                );
            }));
            if stop_it {
                *shared.0.lock().unwrap() = true;
                shared.1.notify_all();
            }
        }
    };
    let left = explore("random", 200, detached_waiter(false));
    let failure = left.first_failure().expect("the worker is left waiting");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let text = failure.to_string();
    assert!(
        text.contains("deadlock: the main thread has returned, and no thread left can run"),
        "{text}"
    );
    assert!(explore("random", 200, detached_waiter(true)).is_ok());
}
