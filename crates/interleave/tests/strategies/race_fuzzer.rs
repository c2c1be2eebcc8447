//! RaceFuzzer (spec `racefuzzer`): potential races are predicted from a profiling execution and
//! realised by directed executions; accesses ordered by spawn, join or a notification, or
//! protected by a common lock, are not predicted; predictions that cannot happen are listed as
//! potential only.

use crate::helpers;
use interleave::cell::Var;
use interleave::sync::atomic::{AtomicU32, Ordering};
use interleave::sync::{Arc, Condvar, Mutex, RwLock};
use interleave::{thread, Builder, FailureKind, Report};

/// Steps the worker takes before its critical section: thread-local work that makes a random
/// walk almost never reach the worker's check while the main thread is inside its own.
const FILLER: u32 = 30;

fn explore(spec: &str, executions: u64, seed: u64, body: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .seed(seed)
        .explore(body)
        .unwrap()
}

fn stat(report: &Report, key: &str) -> String {
    let value = report.stat(key);
    value
        .unwrap_or_else(|| panic!("no statistic {key}: {report}"))
        .to_string()
}

/// The line of this file that ends with `marker`.
fn line_of(marker: &str) -> u32 {
    let position = include_str!("race_fuzzer.rs")
        .lines()
        .position(|line| line.trim_end().ends_with(marker))
        .unwrap_or_else(|| panic!("no line ends with {marker:?}"));
    position as u32 + 1
}

/// Claims `owner` for `me` unless someone has: a check-then-act, atomic only if the caller
/// holds the lock that every other claimer holds too.
fn claim(owner: &AtomicU32, me: u32) -> bool {
    let unclaimed = owner.load(Ordering::SeqCst) == 0; // the check
    if unclaimed {
        owner.store(me, Ordering::SeqCst); // the act
    }
    unclaimed
}

/// A worker claims under the lock after some work of its own; the main thread claims at once,
/// under the lock only when `fixed`. Without it, both can see the resource unclaimed.
fn claim_once(fixed: bool) {
    let owner = Arc::new(AtomicU32::new(0));
    let lock = Arc::new(Mutex::new(()));
    let worker = {
        let (owner, lock) = (owner.clone(), lock.clone());
        thread::spawn(move || {
            let scratch = Var::new(0);
            for step in 0..FILLER {
                scratch.set(step);
            }
            let _guard = lock.lock().unwrap();
            claim(&owner, 1)
        })
    };
    let main_claimed = {
        let _guard = fixed.then(|| lock.lock().unwrap());
        claim(&owner, 2)
    };
    let worker_claimed = worker.join().unwrap();
    assert!(
        !(main_claimed && worker_claimed),
        "the resource was claimed twice"
    );
}

#[test]
fn the_check_then_act_race_is_realised_for_every_seed() {
    let mut to_bug = Vec::new();
    for seed in 0..10 {
        let report = explore("racefuzzer:tries=10", 11, seed, || claim_once(false));
        let failure = report
            .first_failure()
            .unwrap_or_else(|| panic!("seed {seed}: not found in {}", report.executions));
        assert_eq!(failure.kind, FailureKind::Panic, "seed {seed}: {failure}");
        assert!(
            failure.message.contains("claimed twice"),
            "seed {seed}: {failure}"
        );
        assert_eq!(
            stat(&report, "potential races predicted"),
            "1",
            "seed {seed}"
        );
        assert_eq!(stat(&report, "realised by"), "1", "seed {seed}");
        to_bug.push(report.executions);
    }
    // One profiling execution and at least one directed one; each directed execution realises
    // the race and lets the check go first half of the time.
    assert!(to_bug.iter().all(|&n| n >= 2), "{to_bug:?}");
    let mean = to_bug.iter().sum::<u64>() as f64 / to_bug.len() as f64;
    assert!(mean <= 4.0, "executions to the bug per seed: {to_bug:?}");
    eprintln!("racefuzzer executions to the bug, seeds 0..10: {to_bug:?}");
}

#[test]
fn a_random_walk_misses_it_in_100_executions() {
    // The contrast that makes the previous test mean something: the main thread's window is
    // one step wide, and the worker reaches its check only after its filler.
    let found = (0..10)
        .filter(|&seed| !explore("random", 100, seed, || claim_once(false)).is_ok())
        .count();
    assert_eq!(found, 0, "random found it for {found} of 10 seeds");
}

#[test]
fn the_fixed_twin_gives_no_prediction_and_no_failure() {
    for seed in 0..10 {
        let report = explore("racefuzzer:tries=10", 11, seed, || claim_once(true));
        assert!(report.is_ok(), "seed {seed}: {}", report.failures[0]);
        assert_eq!(
            stat(&report, "potential races predicted"),
            "0",
            "seed {seed}"
        );
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        assert_eq!(report.executions, 1, "nothing to direct after the profile");
    }
}

#[test]
fn the_realised_race_is_reported_with_both_sites() {
    let check = format!("race_fuzzer.rs:{}:", line_of("// the check"));
    let act = format!("race_fuzzer.rs:{}:", line_of("// the act"));
    let report = explore("racefuzzer:tries=10", 11, 7, || claim_once(false));
    assert!(!report.is_ok());
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(
        warning.starts_with("race realised on AtomicU321: "),
        "{warning}"
    );
    for expected in [&check, &act, "thread 0", "thread 1"] {
        assert!(warning.contains(expected), "{expected} in {warning}");
    }
    // The object has the name and legend line the failure's report gives it.
    let failure = report.failures[0].to_string();
    let legend = failure
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("AtomicU321 = "))
        .unwrap_or_else(|| panic!("the report's legend names AtomicU321:\n{failure}"));
    assert!(
        warning.lines().any(|line| line.trim() == legend),
        "{legend:?} in {warning}"
    );
    assert!(!warning.contains('#'), "no atomic#0 form: {warning}");
    assert!(
        warning.contains(&format!("writes at strategies/{act}"))
            && warning.contains(&format!("reads at strategies/{check}")),
        "the act writes and the check reads: {warning}"
    );
    // The failing directed execution replays like any other.
    let failure = report.first_failure().expect("found");
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, || claim_once(false))
        .unwrap();
    let again = replayed.first_failure().expect("the replay fails too");
    assert_eq!(again.message, failure.message);
}

#[test]
fn the_same_seed_gives_the_same_exploration() {
    let run = || {
        let report = helpers::first_exploration(|| {
            Builder::new()
                .ignore_environment()
                .strategy("racefuzzer:tries=10".parse().unwrap())
                .executions(11)
                .seed(3)
                .stop_on_first_failure(false)
                .explore(|| claim_once(false))
                .unwrap()
        });
        let failures: Vec<String> = report.failures.iter().map(|f| f.token.clone()).collect();
        (failures, report.warnings, report.strategy_stats)
    };
    assert_eq!(run(), run());
}

#[test]
fn spawn_and_join_order_the_accesses() {
    let report = explore("racefuzzer", 10, 0, || {
        let value = Arc::new(Var::new(1));
        value.set(2);
        let child = {
            let value = value.clone();
            thread::spawn(move || value.set(value.get() + 1))
        };
        child.join().unwrap();
        assert_eq!(value.get(), 3);
    });
    assert!(report.is_ok(), "{}", report.failures[0]);
    assert_eq!(stat(&report, "potential races predicted"), "0");
    assert_eq!(report.executions, 1);
}

#[test]
fn a_common_lock_rules_the_race_out() {
    let report = explore("racefuzzer", 10, 0, || {
        let counter = Arc::new(Mutex::new(()));
        let value = Arc::new(AtomicU32::new(0));
        let entries = Arc::new(RwLock::new(()));
        let size = Arc::new(AtomicU32::new(0));
        let child = {
            let (counter, value, entries, size) = (
                counter.clone(),
                value.clone(),
                entries.clone(),
                size.clone(),
            );
            thread::spawn(move || {
                {
                    let _guard = counter.lock().unwrap();
                    value.store(value.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
                }
                let _writer = entries.write().unwrap();
                size.store(1, Ordering::SeqCst);
            })
        };
        {
            let _guard = counter.lock().unwrap();
            value.store(value.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
        }
        {
            let _reader = entries.read().unwrap();
            size.load(Ordering::SeqCst);
        }
        child.join().unwrap();
    });
    assert!(report.is_ok(), "{}", report.failures[0]);
    assert_eq!(stat(&report, "potential races predicted"), "0");
}

#[test]
fn read_locks_do_not_exclude_each_other() {
    // The control for the previous test: two writers that only hold a read lock race.
    let report = explore("racefuzzer:tries=5", 10, 0, || {
        let entries = Arc::new(RwLock::new(()));
        let size = Arc::new(AtomicU32::new(0));
        let child = {
            let (entries, size) = (entries.clone(), size.clone());
            thread::spawn(move || {
                let _reader = entries.read().unwrap();
                size.store(1, Ordering::SeqCst);
            })
        };
        {
            let _reader = entries.read().unwrap();
            size.store(2, Ordering::SeqCst);
        }
        child.join().unwrap();
    });
    assert_eq!(stat(&report, "potential races predicted"), "1");
    assert_eq!(stat(&report, "realised by"), "1");
    // The race is harmless, so every directed execution runs and realises it again; it is
    // reported once.
    assert_eq!(
        report.executions, 6,
        "one profile and 5 directed executions"
    );
    assert_eq!(stat(&report, "directed execution that first realised"), "1");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].starts_with("race realised on AtomicU321: "),
        "{:?}",
        report.warnings
    );
}

#[test]
fn a_notification_orders_the_accesses() {
    let report = explore("racefuzzer", 10, 0, || {
        let data = Arc::new(Var::new(0));
        let ready = Arc::new((Mutex::new(false), Condvar::new()));
        // The main thread holds the mutex from before the spawn until it waits, so the
        // producer's notification always finds it waiting and wakes it.
        let mut guard = ready.0.lock().unwrap();
        let producer = {
            let (data, ready) = (data.clone(), ready.clone());
            thread::spawn(move || {
                data.set(42);
                *ready.0.lock().unwrap() = true;
                ready.1.notify_one();
            })
        };
        while !*guard {
            guard = ready.1.wait(guard).unwrap();
        }
        drop(guard);
        assert_eq!(data.get(), 42);
        producer.join().unwrap();
    });
    assert!(report.is_ok(), "{}", report.failures[0]);
    assert_eq!(stat(&report, "potential races predicted"), "0");
}

#[test]
fn an_unrealisable_prediction_is_only_listed_as_potential() {
    // The consumer reads the data only after it has seen the flag, which the producer sets
    // after writing the data: the lock orders them, and lock edges are not counted, so the
    // race is predicted, but no schedule has both threads about to access the data at once.
    let report = explore("racefuzzer:tries=10", 100, 0, || {
        let data = Arc::new(Var::new(0));
        let ready = Arc::new(Mutex::new(false));
        let producer = {
            let (data, ready) = (data.clone(), ready.clone());
            thread::spawn(move || {
                data.set(42);
                *ready.lock().unwrap() = true;
            })
        };
        while !*ready.lock().unwrap() {
            thread::yield_now();
        }
        assert_eq!(data.get(), 42);
        producer.join().unwrap();
    });
    assert!(report.is_ok(), "{}", report.failures[0]);
    assert_eq!(stat(&report, "potential races predicted"), "1");
    assert_eq!(stat(&report, "realised by"), "0");
    assert_eq!(
        report.executions, 11,
        "one profile and 10 directed executions"
    );
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(
        warning.starts_with("potential race (not realised in 10 directed executions)")
            && warning.contains(" on Var1: ")
            && warning.contains("\n  Var1 = Var created at strategies/race_fuzzer.rs:"),
        "{warning}"
    );
}

/// An increment whose load and store both carry the caller's site, so one statement both reads
/// and writes.
#[track_caller]
fn increment(counter: &AtomicU32) {
    let value = counter.load(Ordering::SeqCst);
    counter.store(value + 1, Ordering::SeqCst);
}

#[test]
fn two_reads_at_the_statements_are_not_a_race() {
    // Both statements read and then write. Threads about to read at both at once are not a
    // race; the race is realised when one of them is about to write.
    for seed in 0..10 {
        let report = Builder::new()
            .ignore_environment()
            .strategy("racefuzzer:tries=3".parse().unwrap())
            .executions(4)
            .seed(seed)
            .stop_on_first_failure(false)
            .explore(|| {
                let counter = Arc::new(AtomicU32::new(0));
                let child = {
                    let counter = counter.clone();
                    thread::spawn(move || increment(&counter))
                };
                increment(&counter);
                child.join().unwrap();
            })
            .unwrap();
        assert_eq!(stat(&report, "realised by"), "1", "seed {seed}");
        let warning = &report.warnings[0];
        assert!(warning.contains("writes at"), "seed {seed}: {warning}");
    }
}
