//! Executions with more threads than the enabledness pass visits one by one: from five threads
//! on it answers from sets of waiting threads (`runtime/waiters.rs`), and past 64 threads it
//! visits every thread again. Debug builds check at every decision that the sets mirror the
//! threads and that every answer is the full test's, so these tests run each primitive the
//! sets answer (locks, reads that choose whether to defer to a writer, joins, `Condvar`
//! wake-ups, a relock) with enough threads for the sets, and a lost update with and without
//! its fix on both sides of the 64-thread limit.

use crate::helpers;

use interleave::sync::{Arc, Condvar, Mutex, RwLock};
use interleave::{thread, FailureKind};

/// Two writers and three readers of an `RwLock`, a `Condvar` waiter and the main thread
/// notifying it: seven threads, every gate the sets answer.
fn readers_writers_and_a_waiter() {
    let lock = Arc::new(RwLock::new(0u64));
    let ready = Arc::new((Mutex::new(false), Condvar::new()));
    let waiter = {
        let ready = ready.clone();
        thread::spawn(move || {
            let (flag, cv) = &*ready;
            let guard = cv
                .wait_while(flag.lock().unwrap(), |ready| !*ready)
                .unwrap();
            assert!(*guard);
        })
    };
    let workers: Vec<_> = (0..5)
        .map(|i| {
            let lock = lock.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    if i < 2 {
                        *lock.write().unwrap() += 1;
                    } else {
                        assert!(*lock.read().unwrap() <= 4);
                    }
                }
            })
        })
        .collect();
    *ready.0.lock().unwrap() = true;
    ready.1.notify_one();
    for worker in workers {
        worker.join().unwrap();
    }
    waiter.join().unwrap();
    assert_eq!(*lock.read().unwrap(), 4);
}

#[test]
fn seven_threads_on_an_rwlock_and_a_condvar_report_nothing() {
    helpers::all_schedules(300, readers_writers_and_a_waiter);
    for spec in ["pos", "surw", "pctvb"] {
        let report = helpers::builder(spec)
            .executions(300)
            .explore(readers_writers_and_a_waiter)
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
    }
}

/// `threads` threads add 1 to a counter behind a `Mutex`; `split` reads the counter under one
/// lock and writes it back under another, which loses updates.
fn count_to(threads: u64, split: bool) {
    let counter = Arc::new(Mutex::new(0u64));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || {
                if split {
                    let seen = *counter.lock().unwrap();
                    *counter.lock().unwrap() = seen + 1;
                } else {
                    *counter.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), threads);
}

#[test]
fn a_lost_update_is_found_among_six_threads_and_among_seventy() {
    for threads in [6, 70] {
        let report = helpers::builder("random")
            .executions(200)
            .explore(|| count_to(threads, true))
            .unwrap();
        let failure = report
            .first_failure()
            .unwrap_or_else(|| panic!("{threads} threads: the lost update is found"));
        assert_eq!(
            failure.kind,
            FailureKind::Panic,
            "{threads} threads: {failure}"
        );
        let report = helpers::builder("random")
            .executions(50)
            .explore(|| count_to(threads, false))
            .unwrap();
        assert!(report.is_ok(), "{threads} threads, fixed: {report}");
    }
}

#[test]
fn a_relock_among_six_threads_is_reported_as_one() {
    let report = helpers::builder("random")
        .executions(100)
        .explore(|| {
            let lock = Arc::new(Mutex::new(()));
            let handles: Vec<_> = (0..5)
                .map(|i| {
                    let lock = lock.clone();
                    thread::spawn(move || {
                        let _first = lock.lock().unwrap();
                        if i == 4 {
                            let _second = lock.lock().unwrap();
                        }
                    })
                })
                .collect();
            for handle in handles {
                handle.join().unwrap();
            }
        })
        .unwrap();
    let failure = report.first_failure().expect("the relock is found");
    assert_eq!(failure.kind, FailureKind::Relock, "{failure}");
}
