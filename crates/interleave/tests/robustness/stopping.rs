//! Stopping an exploration from another OS thread (`Builder::stop_handle`): a thread that
//! spins under control is stopped at its next scheduling point, a stop between executions
//! plans no more, the report says stopped rather than failed, and a stopped execution ends as
//! a process does, without running the destructors of what its threads left behind.

use std::sync::atomic::{AtomicBool as StdAtomicBool, AtomicUsize as StdAtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use interleave::sync::atomic::AtomicUsize;
use interleave::{thread, Builder, Report, StopHandle};

/// How long a test waits for a stopped exploration to return before it fails as hung.
const HANG: Duration = Duration::from_secs(60);

/// Runs `explore` on an OS thread of its own and returns its report, or fails when it has not
/// returned within [`HANG`]: an exploration the stop did not reach spins for ever, so the
/// test must not wait on it (its thread is left behind).
fn on_another_thread(explore: impl FnOnce() -> Report + Send + 'static) -> Report {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(explore());
    });
    receiver
        .recv_timeout(HANG)
        .expect("the stopped exploration did not return")
}

/// An exploration that never ends by itself: no step bound, no watchdog; executions run once
/// each (no determinism re-runs), so the tests can count them.
fn endless(stop: &StopHandle) -> Builder {
    Builder::new()
        .ignore_environment()
        .check_determinism(false)
        .strategy("random".parse().expect("a valid strategy"))
        .executions(u64::MAX)
        .max_steps(u64::MAX)
        .watchdog(None)
        .stop_handle(stop.clone())
}

/// Waits until `flag` is set by the execution, then stops it.
fn stop_once_set(flag: &'static StdAtomicBool, stop: StopHandle) {
    while !flag.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    assert!(stop.stop(), "nobody else stops the exploration");
}

/// Spins on an interleave atomic for ever: every load is a scheduling point.
fn spin_for_ever(flag: &AtomicUsize) -> ! {
    loop {
        flag.load(Ordering::SeqCst);
    }
}

/// A thread spinning alone (every load takes the fast path of untracked objects) and two
/// threads spinning together (every load a decision of the schedule) are both stopped from
/// another OS thread; the report says stopped, with no failure and no execution counted.
#[test]
fn a_spinning_execution_is_stopped_from_another_os_thread() {
    static ALONE: StdAtomicBool = StdAtomicBool::new(false);
    static TOGETHER: StdAtomicBool = StdAtomicBool::new(false);
    for (spinning, spawns) in [(&ALONE, false), (&TOGETHER, true)] {
        let stop = StopHandle::new();
        let explorer = endless(&stop);
        let report = std::thread::scope(|scope| {
            scope.spawn(|| stop_once_set(spinning, stop.clone()));
            on_another_thread(move || {
                explorer
                    .explore(move || {
                        let flag = std::sync::Arc::new(AtomicUsize::new(0));
                        if spawns {
                            let other = flag.clone();
                            thread::spawn(move || spin_for_ever(&other));
                        }
                        spinning.store(true, Ordering::SeqCst);
                        spin_for_ever(&flag);
                    })
                    .expect("a valid configuration")
            })
        });
        assert!(report.stopped, "spawns {spawns}: the report says stopped");
        assert!(report.is_ok(), "spawns {spawns}: a stop is no failure");
        assert_eq!(report.executions, 0, "the stopped execution is not counted");
    }
}

/// Counts its drops, after an atomic load (a scheduling point) as shuttle's portfolio test
/// does.
struct CountsDrops(AtomicUsize, &'static StdAtomicUsize);

impl Drop for CountsDrops {
    fn drop(&mut self) {
        self.0.load(Ordering::SeqCst);
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

interleave::thread_local! {
    static LOCAL: std::cell::RefCell<Option<CountsDrops>> = std::cell::RefCell::new(None);
}

/// A stopped execution ends as a process does: the values on its threads' stacks, in their
/// thread-locals and kept until the end are never dropped, and what they shared with the
/// outside keeps the counts they held.
#[test]
fn values_of_a_stopped_execution_are_not_dropped() {
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    static READY: StdAtomicBool = StdAtomicBool::new(false);
    static CHILD_READY: StdAtomicBool = StdAtomicBool::new(false);
    let shared = std::sync::Arc::new(());
    let stop = StopHandle::new();
    let explorer = endless(&stop);
    let outside = shared.clone();
    let report = std::thread::scope(|scope| {
        scope.spawn(|| stop_once_set(&READY, stop.clone()));
        on_another_thread(move || {
            explorer
                .explore(move || {
                    let _on_main_stack = CountsDrops(AtomicUsize::new(0), &DROPS);
                    let _held = outside.clone();
                    let child = thread::spawn(move || {
                        let _on_child_stack = CountsDrops(AtomicUsize::new(0), &DROPS);
                        LOCAL.with(|local| {
                            *local.borrow_mut() = Some(CountsDrops(AtomicUsize::new(0), &DROPS))
                        });
                        let kept = CountsDrops(AtomicUsize::new(0), &DROPS);
                        assert!(thread::keep_until_end(thread::current().id(), kept).is_ok());
                        CHILD_READY.store(true, Ordering::SeqCst);
                        spin_for_ever(&AtomicUsize::new(0));
                    });
                    while !CHILD_READY.load(Ordering::SeqCst) {
                        thread::yield_now();
                    }
                    READY.store(true, Ordering::SeqCst);
                    // Blocks for ever: the child spins.
                    child.join().unwrap();
                })
                .expect("a valid configuration")
        })
    });
    assert!(report.stopped && report.is_ok());
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        0,
        "no destructor of the stopped execution ran"
    );
    assert_eq!(
        std::sync::Arc::strong_count(&shared),
        2,
        "the test's own clone and the one on the stopped main thread's stack, never dropped \
         (the closure's clone went with the closure)"
    );
}

/// A stop before the exploration starts plans nothing; a stop made by the program during its
/// fifth execution ends the exploration after that one: the four before it are reported.
#[test]
fn an_exploration_stopped_between_executions_plans_no_more() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    let stop = StopHandle::new();
    stop.stop();
    let report = endless(&stop)
        .explore(|| {
            RUNS.fetch_add(1, Ordering::SeqCst);
        })
        .expect("a valid configuration");
    assert!(report.stopped && report.is_ok());
    assert_eq!((report.executions, RUNS.load(Ordering::SeqCst)), (0, 0));

    static LATER_RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    let stop = StopHandle::new();
    let inside = stop.clone();
    let report = endless(&stop)
        .workers(1)
        .explore(move || {
            let child = thread::spawn(|| thread::yield_now());
            if LATER_RUNS.fetch_add(1, Ordering::SeqCst) == 4 {
                inside.stop();
            }
            child.join().unwrap();
        })
        .expect("a valid configuration");
    assert!(report.stopped && report.is_ok());
    assert_eq!(
        (report.executions, LATER_RUNS.load(Ordering::SeqCst)),
        (4, 5)
    );
}

/// A failure found before the stop is reported as found; the stop is said next to it.
#[test]
fn a_failure_found_before_the_stop_stays_in_the_report() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    let stop = StopHandle::new();
    let inside = stop.clone();
    let report = endless(&stop)
        .workers(1)
        .stop_on_first_failure(false)
        .explore(move || {
            let run = RUNS.fetch_add(1, Ordering::SeqCst);
            if run == 3 {
                inside.stop();
                thread::yield_now();
            }
            assert!(run != 1, "the second execution fails");
        })
        .expect("a valid configuration");
    assert!(report.stopped);
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(report.failures[0].execution, 1);
    assert_eq!(report.executions, 3);
}

/// A depth-first search split among two workers stops too: the driver ends at its next look
/// and the helper drops what it ran ahead. Its report says stopped, with no failure and fewer
/// executions than the tree holds.
#[test]
fn a_depth_first_search_split_among_workers_is_stopped() {
    static STARTED: StdAtomicBool = StdAtomicBool::new(false);
    let stop = StopHandle::new();
    let stopper = stop.clone();
    std::thread::spawn(move || stop_once_set(&STARTED, stopper));
    let report = on_another_thread(move || {
        Builder::new()
            .ignore_environment()
            .strategy("dfs".parse().expect("a valid strategy"))
            .executions(u64::MAX)
            .workers(2)
            .stop_handle(stop)
            .explore(|| {
                STARTED.store(true, Ordering::SeqCst);
                // Four threads of ten increments: a tree far larger than any test runs.
                let counter = interleave::sync::Arc::new(AtomicUsize::new(0));
                let threads: Vec<_> = (0..4)
                    .map(|_| {
                        let counter = counter.clone();
                        thread::spawn(move || {
                            for _ in 0..10 {
                                counter.fetch_add(1, Ordering::SeqCst);
                            }
                        })
                    })
                    .collect();
                for t in threads {
                    t.join().unwrap();
                }
            })
            .expect("a valid configuration")
    });
    assert!(report.stopped && report.is_ok(), "{report}");
    assert_ne!(report.stat("covered"), Some("the whole search space"));
}
