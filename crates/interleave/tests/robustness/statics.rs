//! Statics and cargo's parallel test threads: an interleave primitive in a `static` used by two
//! explorations at the same time is used by one execution at a time, the other waiting for its
//! turn (no false deadlock, no overlapping critical sections, no false nondeterminism verdict);
//! two executions that would wait for each other for ever, and the workers of one exploration,
//! fail at once with the object's site and the remedies; and `lazy_static!` gives each
//! execution its own value, on any OS thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier, Mutex as StdMutex};
use std::time::Duration;

use interleave::sync::{Mutex, Once};
use interleave::{Builder, FailureKind, Report};

/// Runs `first` on a new OS thread; once its first execution holds a static (it calls `hold`
/// there, which tells this thread, keeps the static for 100 ms of real time and then writes
/// "first lets go" into `log`), runs `second` on this OS thread, whose executions use the same
/// static. Returns both reports.
fn overlapping(
    log: &'static StdMutex<Vec<&'static str>>,
    first: impl Fn(&dyn Fn()) + Sync + Send + 'static,
    second: impl Fn() + Sync,
) -> (Report, Report) {
    let (holding_tx, holding_rx) = mpsc::channel::<()>();
    let holding_tx = StdMutex::new(holding_tx);
    let held = AtomicBool::new(false);
    let first_thread = std::thread::Builder::new()
        .name("first-exploration".to_string())
        .spawn(move || {
            builder(20).explore(|| {
                first(&|| {
                    if !held.swap(true, Ordering::Relaxed) {
                        holding_tx.lock().unwrap().send(()).unwrap();
                        std::thread::sleep(Duration::from_millis(100));
                        log.lock().unwrap().push("first lets go");
                    }
                })
            })
        })
        .unwrap();
    holding_rx.recv().unwrap();
    let second_report = builder(20).explore(second).unwrap();
    let first_report = first_thread.join().unwrap().unwrap();
    (first_report, second_report)
}

fn builder(executions: u64) -> Builder {
    Builder::new().executions(executions)
}

static SHARED_MUTEX: Mutex<u64> = Mutex::new(0);

/// The second exploration's first execution waits until the first one's execution that holds
/// the static has ended, then both explorations go on, taking turns, and neither fails.
#[test]
fn a_static_mutex_used_by_two_explorations_at_once_is_used_in_turns() {
    // Set while a critical section of either exploration runs: two at once would be two
    // threads inside one mutex.
    static INSIDE: AtomicBool = AtomicBool::new(false);
    static SECTIONS: AtomicUsize = AtomicUsize::new(0);
    static LOG: StdMutex<Vec<&'static str>> = StdMutex::new(Vec::new());
    let enter = || {
        assert!(
            !INSIDE.swap(true, Ordering::SeqCst),
            "two critical sections at once"
        );
        SECTIONS.fetch_add(1, Ordering::Relaxed);
    };
    let leave = || INSIDE.store(false, Ordering::SeqCst);
    let (first, second) = overlapping(
        &LOG,
        move |hold| {
            let mut guard = SHARED_MUTEX.lock().unwrap();
            enter();
            *guard += 1;
            hold();
            leave();
        },
        move || {
            let mut guard = SHARED_MUTEX.lock().unwrap();
            enter();
            let mut log = LOG.lock().unwrap();
            if log.len() == 1 {
                log.push("second takes it");
            }
            drop(log);
            *guard += 1;
            leave();
        },
    );
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    assert!(second.failures.is_empty(), "{:?}", second.failures);
    assert_eq!(
        *LOG.lock().unwrap(),
        ["first lets go", "second takes it"],
        "the second exploration used the static only after the first one's execution ended"
    );
    assert!(SECTIONS.load(Ordering::Relaxed) >= 40);
}

static SHARED_ONCE: Once = Once::new();

/// Three tests that share a `static Once` used to get a false report that the program behaved
/// differently when re-run; now they take turns at it. Its state is that of each execution (so
/// that every execution explores its first call), so each runs its closure once.
#[test]
fn a_static_once_shared_by_parallel_explorations_is_used_in_turns() {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static LOG: StdMutex<Vec<&'static str>> = StdMutex::new(Vec::new());
    let (first, second) = overlapping(
        &LOG,
        |hold| {
            SHARED_ONCE.call_once(|| {
                CALLS.fetch_add(1, Ordering::Relaxed);
            });
            hold();
        },
        || {
            SHARED_ONCE.call_once(|| {
                CALLS.fetch_add(1, Ordering::Relaxed);
            });
            assert!(SHARED_ONCE.is_completed());
        },
    );
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    assert!(second.failures.is_empty(), "{:?}", second.failures);
    assert!(CALLS.load(Ordering::Relaxed) >= 40);
    assert_eq!(*LOG.lock().unwrap(), ["first lets go"]);
}

static LEFT: Mutex<()> = Mutex::new(());
static RIGHT: Mutex<()> = Mutex::new(());

/// Two explorations whose first executions each hold one static and then ask for the other's
/// would wait for each other for ever: the one whose wait closes the cycle fails at once, with
/// the object's site, and the other goes on when it has ended.
#[test]
fn explorations_that_would_wait_for_each_other_for_ever_fail_one_of_them() {
    let both_hold = Barrier::new(2);
    let first_execution = [AtomicBool::new(true), AtomicBool::new(true)];
    let explore = |side: usize| {
        builder(10)
            .explore(|| {
                let (mine, theirs) = if side == 0 {
                    (&LEFT, &RIGHT)
                } else {
                    (&RIGHT, &LEFT)
                };
                let _mine = mine.lock().unwrap();
                if first_execution[side].swap(false, Ordering::Relaxed) {
                    both_hold.wait();
                }
                let _theirs = theirs.lock().unwrap();
            })
            .unwrap()
    };
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|side| scope.spawn(move || explore(side)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<&Report> = reports.iter().filter(|r| !r.failures.is_empty()).collect();
    assert_eq!(failed.len(), 1, "exactly one gives up: {reports:?}");
    let failure = &failed[0].failures[0];
    assert_eq!(failure.kind, FailureKind::Nondeterminism);
    assert!(
        failure
            .message
            .contains("would wait for each other for ever")
            && failure.message.contains("robustness/statics.rs:")
            && failure.message.contains("interleave::lazy_static!"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains("deadlock"), "{}", failure.message);
}

/// A static used by one exploration at a time is fine: each execution registers it again.
#[test]
fn a_static_used_by_explorations_one_after_another_is_fine() {
    static ONE_AT_A_TIME: Once = Once::new();
    for _ in 0..3 {
        let report = builder(50)
            .explore(|| {
                let t = interleave::thread::spawn(|| ONE_AT_A_TIME.call_once(|| {}));
                ONE_AT_A_TIME.call_once(|| {});
                t.join().unwrap();
            })
            .unwrap();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
    }
}

/// Two workers of one exploration share a static too.
#[test]
fn a_static_shared_by_the_workers_of_one_exploration_is_refused() {
    static BY_WORKERS: Mutex<u64> = Mutex::new(0);
    static SLOW: AtomicUsize = AtomicUsize::new(0);
    let report = builder(64)
        .workers(2)
        .stop_on_first_failure(false)
        .explore(|| {
            let guard = BY_WORKERS.lock().unwrap();
            // The first executions hold the static for a while of real time, so executions of
            // the two workers overlap whatever the machine's load.
            if SLOW.fetch_add(1, Ordering::Relaxed) < 16 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            drop(guard);
        })
        .unwrap();
    let refused = report
        .failures
        .iter()
        .any(|failure| failure.message.contains("Builder::workers(1)"));
    assert!(refused, "{:?}", report.failures);
}

interleave::lazy_static! {
    static ref TOTAL: Mutex<u64> = Mutex::new(0);
}

/// `lazy_static!` values are per execution: parallel explorations and consecutive executions
/// each start from a fresh value, and nothing is reported.
#[test]
fn lazy_statics_are_fresh_in_every_execution_on_every_os_thread() {
    let run = || {
        builder(300)
            .explore(|| {
                let t = interleave::thread::spawn(|| *TOTAL.lock().unwrap() += 1);
                *TOTAL.lock().unwrap() += 1;
                t.join().unwrap();
                assert_eq!(
                    *TOTAL.lock().unwrap(),
                    2,
                    "a fresh value in every execution"
                );
            })
            .unwrap()
    };
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3).map(|_| scope.spawn(run)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for report in reports {
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        assert_eq!(report.executions, 300);
    }
}

struct Noted(&'static str, &'static AtomicUsize);

impl Drop for Noted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
        ORDER.lock().unwrap().push(self.0);
    }
}

static DROPS: AtomicUsize = AtomicUsize::new(0);
static ORDER: StdMutex<Vec<&'static str>> = StdMutex::new(Vec::new());

interleave::lazy_static! {
    static ref INNER: Noted = Noted("inner", &DROPS);
    static ref OUTER: Noted = {
        let _ = &*INNER;
        Noted("outer", &DROPS)
    };
}

/// Values are dropped at the end of each execution, the latest initialised first; racing
/// first uses initialise once.
#[test]
fn lazy_statics_are_dropped_at_the_end_of_each_execution_in_reverse_order() {
    // One worker: the drop log is a process-wide std `Mutex`, and executions running at the same
    // time on two workers (before the exploration notices the static and goes on with one)
    // would interleave their entries in it (measured: 1 run in 40 failed the pairing below).
    let report = builder(10)
        .workers(1)
        .explore(|| {
            let t = interleave::thread::spawn(|| {
                let _ = &*OUTER;
            });
            let _ = &*OUTER;
            t.join().unwrap();
        })
        .unwrap();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let executions = report.executions as usize;
    assert!(executions >= 1);
    let order = ORDER.lock().unwrap();
    assert_eq!(
        DROPS.load(Ordering::Relaxed),
        order.len(),
        "every value dropped once"
    );
    assert_eq!(order.len() % 2, 0);
    for pair in order.chunks(2) {
        assert_eq!(pair, ["outer", "inner"], "latest initialised dropped first");
    }
}

/// A `static LazyLock` whose initialiser uses a primitive is made in the first execution only,
/// so the determinism check's re-run of that execution diverges: the report names the static
/// and the fix (a newcomer's message listed statics last among seven causes and named no fix).
#[test]
fn a_static_made_in_an_earlier_execution_is_named_with_the_fix() {
    static HITS: interleave::sync::atomic::AtomicUsize =
        interleave::sync::atomic::AtomicUsize::new(0);
    static CONFIG: interleave::sync::LazyLock<usize> = interleave::sync::LazyLock::new(|| {
        HITS.fetch_add(1, interleave::sync::atomic::Ordering::SeqCst);
        42
    });
    let report = Builder::new()
        .ignore_environment()
        .executions(10)
        .explore(|| assert_eq!(*CONFIG, 42))
        .unwrap();
    let failure = report.first_failure().expect("the re-run diverges");
    assert_eq!(failure.kind, FailureKind::Nondeterminism, "{failure}");
    assert!(
        failure.message.contains("The LazyLock created at ")
            && failure
                .message
                .contains("is used by more than one execution")
            && failure.message.contains("interleave::lazy_static!"),
        "{failure}"
    );
}

/// A lazy static used outside any execution says so instead of crashing.
#[test]
fn a_lazy_static_outside_an_execution_is_a_clear_panic() {
    let caught = std::panic::catch_unwind(|| *TOTAL.lock().unwrap());
    let payload = caught.expect_err("no execution runs");
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        message.contains("outside an interleave execution"),
        "{message}"
    );
}

/// What a report says that could depend on how executions were spread over workers.
fn outcome(report: &Report) -> String {
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|failure| format!("#{} {}\n{failure}", failure.execution, failure.token))
        .collect();
    format!(
        "executions {} steps {}\n{}",
        report.executions,
        report.steps,
        failures.join("\n")
    )
}

/// Explores `f` with the given worker count (0: automatic), ignoring the environment.
fn explore_on(workers: usize, seed: u64, executions: u64, f: impl Fn() + Sync) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("random".parse().unwrap())
        .seed(seed)
        .executions(executions)
        .workers(workers)
        .stop_on_first_failure(false)
        .explore(f)
        .unwrap()
}

/// Automatic workers run a test whose every execution uses a `static` primitive on one worker:
/// nothing is refused (with two workers the slow executions below would overlap), and the
/// report is the one-worker report.
#[test]
fn automatic_workers_keep_a_test_with_a_static_on_one_worker() {
    static EVERY_EXECUTION: Mutex<u64> = Mutex::new(0);
    static SLOW: AtomicUsize = AtomicUsize::new(0);
    let program = || {
        let mut guard = EVERY_EXECUTION.lock().unwrap();
        *guard += 1;
        if SLOW.fetch_add(1, Ordering::Relaxed).is_multiple_of(16) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(guard);
    };
    let automatic = explore_on(interleave::AUTOMATIC_WORKERS, 1, 200, program);
    assert!(automatic.failures.is_empty(), "{:?}", automatic.failures);
    let one = explore_on(1, 1, 200, program);
    assert_eq!(outcome(&automatic), outcome(&one));
}

/// A `static` primitive first used again after the automatic exploration went to several
/// workers makes it start again on one, so the report is still the one-worker report and
/// nothing is refused.
#[test]
fn a_static_first_used_on_several_workers_starts_the_exploration_again_on_one() {
    static RARELY: Mutex<u64> = Mutex::new(0);
    static DRAWS: StdMutex<Vec<u64>> = StdMutex::new(Vec::new());
    let rare = |draw: u64| draw < 40;
    let program = || {
        let draw = interleave::rand::random_range(0..1000);
        DRAWS.lock().unwrap().push(draw);
        if rare(draw) {
            let mut guard = RARELY.lock().unwrap();
            *guard += 1;
            // Long enough in real time for an execution on the other worker to meet it.
            std::thread::sleep(std::time::Duration::from_millis(5));
            drop(guard);
        }
    };
    let one = explore_on(1, 5, 300, program);
    let draws = std::mem::take(&mut *DRAWS.lock().unwrap());
    // Executions 0 and 1 (each followed by its determinism re-run) leave the static alone, so
    // the automatic exploration goes to several workers before it meets the static.
    assert!(
        !rare(draws[0]) && !rare(draws[2]),
        "choose another seed: {:?}",
        &draws[..4]
    );
    assert!(
        draws.iter().filter(|draw| rare(**draw)).count() >= 4,
        "the static is used"
    );
    let automatic = explore_on(interleave::AUTOMATIC_WORKERS, 5, 300, program);
    assert!(automatic.failures.is_empty(), "{:?}", automatic.failures);
    assert_eq!(outcome(&automatic), outcome(&one));
    // It did start again: the executions before the static's second use ran twice.
    let calls = DRAWS.lock().unwrap().len();
    if std::thread::available_parallelism().map_or(1, |cores| cores.get()) > 1 {
        assert!(
            calls > draws.len(),
            "{calls} calls, {} on one worker",
            draws.len()
        );
    }
}

/// Without statics, automatic workers run executions on as many OS threads as the machine has
/// cores.
#[test]
fn automatic_workers_use_every_core_when_the_test_has_no_statics() {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let os_threads = StdMutex::new(std::collections::HashSet::new());
    let report = explore_on(interleave::AUTOMATIC_WORKERS, 1, 300, || {
        os_threads
            .lock()
            .unwrap()
            .insert(std::thread::current().id());
        // Long enough in real time for every worker to claim executions of a round.
        std::thread::sleep(std::time::Duration::from_micros(200));
        let counter = interleave::sync::Arc::new(Mutex::new(0));
        let other = counter.clone();
        let handle = interleave::thread::spawn(move || *other.lock().unwrap() += 1);
        *counter.lock().unwrap() += 1;
        handle.join().unwrap();
    });
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(os_threads.lock().unwrap().len(), cores.min(300));
}
