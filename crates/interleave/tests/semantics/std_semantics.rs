//! std's guarantees, no more: a panic a `join` observes is the program's business; poisoning of
//! `Mutex`, `RwLock` and `Once` after a panic; `notify_one` may wake any current waiter; an
//! `RwLock` may prefer readers or a waiting writer. Each
//! test shows the behaviour std allows is reached and, where it matters, that exhaustive search
//! reaches every outcome.

use crate::helpers;

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave::sync::{Arc, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock, TryLockError};
use interleave::{thread, FailureKind, Report};

fn explore(spec: &str, executions: u64, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .explore(f)
        .expect("the exploration runs")
}

#[test]
fn a_panic_observed_by_join_is_not_a_failure() {
    helpers::all_schedules(200, || {
        let worker = thread::spawn(|| panic!("the worker gives up"));
        let payload = worker.join().expect_err("join returns the panic");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the worker gives up"));
    });
}

#[test]
fn a_panic_no_join_observes_is_a_failure_with_its_message() {
    let report = explore("random", 50, || {
        let _detached = thread::Builder::new()
            .name("detached".into())
            .spawn(|| panic!("nobody will know"))
            .unwrap();
    });
    let failure = report.first_failure().expect("an unobserved panic fails");
    assert_eq!(failure.kind, FailureKind::Panic);
    let text = failure.to_string();
    assert!(text.contains("nobody will know"), "{text}");
    assert!(text.contains("detached"), "{text}");
}

/// The Rust Book's pattern gone wrong: a worker panics and the main thread waits for a result
/// it will never get. The panic, not the deadlock it causes, is the failure; the deadlock is a
/// note.
#[test]
fn an_unobserved_panic_is_reported_before_the_deadlock_it_causes() {
    let report = explore("random", 20, || {
        let (tx, rx) = interleave::sync::mpsc::channel::<u32>();
        let _worker = thread::spawn(move || {
            let _tx = tx;
            panic!("the worker failed before sending");
        });
        let _ = rx.recv();
        thread::park();
    });
    let failure = report.first_failure().expect("found");
    assert_eq!(failure.kind, FailureKind::Panic);
    assert!(
        failure.message.contains("the worker failed before sending")
            && failure.message.contains("deadlock"),
        "{}",
        failure.message
    );
}

#[test]
fn a_scope_re_raises_the_panic_of_a_thread_nobody_joined() {
    let report = explore("random", 20, || {
        thread::scope(|s| {
            s.spawn(|| panic!("inner trouble"));
        });
    });
    let failure = report.first_failure().expect("the scope panics");
    assert!(
        failure.message.contains("a scoped thread panicked")
            && failure.message.contains("inner trouble"),
        "{}",
        failure.message
    );
    // Joined inside the scope, the panic is observed and the scope returns normally.
    helpers::all_schedules(100, || {
        thread::scope(|s| {
            let h = s.spawn(|| panic!("handled"));
            assert!(h.join().is_err());
        });
    });
}

/// As std's: a panic of the scope's body is resumed once every scoped thread has finished, so a
/// scoped thread never outlives the data it borrows from the frames the panic unwinds (before,
/// the scope returned at once and a thread borrowing a local `Vec` read it freed).
#[test]
fn a_scope_whose_body_panics_waits_for_its_threads_first() {
    helpers::all_schedules(200, || {
        let finished = interleave::sync::atomic::AtomicUsize::new(0);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let borrowed: Vec<i32> = (1..=3).collect();
            thread::scope(|s| {
                s.spawn(|| {
                    thread::yield_now();
                    let sum: i32 = borrowed.iter().sum();
                    assert_eq!(sum, 6);
                    finished.fetch_add(1, interleave::sync::atomic::Ordering::SeqCst);
                });
                panic!("the body gives up");
            })
        }));
        let payload = unwound.expect_err("the body's panic comes out of the scope");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the body gives up"));
        assert_eq!(
            finished.load(interleave::sync::atomic::Ordering::SeqCst),
            1,
            "the scope returned before its thread finished"
        );
    });
}

#[test]
fn a_mutex_held_by_a_panicking_thread_is_poisoned() {
    helpers::all_schedules(200, || {
        let data = Arc::new(Mutex::new(0u32));
        let d2 = data.clone();
        let worker = thread::spawn(move || {
            let mut guard = d2.lock().unwrap();
            *guard += 1;
            panic!("halfway");
        });
        assert!(worker.join().is_err());
        assert!(data.is_poisoned());
        let guard = data.lock().expect_err("poisoned").into_inner();
        assert_eq!(*guard, 1, "the data is still there");
        drop(guard);
        match data.try_lock() {
            Err(TryLockError::Poisoned(poisoned)) => drop(poisoned.into_inner()),
            _ => panic!("try_lock reports the poison"),
        }
        data.clear_poison();
        assert!(data.lock().is_ok());
    });
}

#[test]
fn poison_depends_on_whether_the_panic_came_while_the_lock_was_held() {
    let outcomes = helpers::outcomes(|| {
        let data = Arc::new(Mutex::new(()));
        let d2 = data.clone();
        let worker = thread::spawn(move || {
            let guard = d2.lock().unwrap();
            drop(guard);
            panic!("after the critical section");
        });
        let _ = worker.join();
        data.is_poisoned()
    });
    assert_eq!(
        outcomes,
        BTreeSet::from([false]),
        "unlocked before the panic"
    );
}

#[test]
fn only_a_writer_poisons_an_rwlock() {
    helpers::all_schedules(100, || {
        let lock = Arc::new(RwLock::new(5));
        let reader = {
            let lock = lock.clone();
            thread::spawn(move || {
                let _r = lock.read().unwrap();
                panic!("reader panics");
            })
        };
        assert!(reader.join().is_err());
        assert!(!lock.is_poisoned(), "a reader does not poison");
        let writer = {
            let lock = lock.clone();
            thread::spawn(move || {
                let mut w = lock.write().unwrap();
                *w = 6;
                panic!("writer panics");
            })
        };
        assert!(writer.join().is_err());
        assert!(lock.is_poisoned());
        assert_eq!(*lock.read().expect_err("poisoned").into_inner(), 6);
    });
}

/// The main thread reads an `RwLock` while a writer may be waiting for it. With `recursive`,
/// it reads again while it holds its first read: std leaves open whether that second read
/// joins the readers or waits behind the waiting writer (Linux's lock prefers writers), and
/// in the second case the writer waits for the first read and the second read for the writer.
/// The fixed twin reads once.
fn read_around_a_writer(recursive: bool) {
    let lock = Arc::new(RwLock::new(0));
    let writer = {
        let lock = lock.clone();
        thread::spawn(move || *lock.write().unwrap() += 1)
    };
    let first = lock.read().unwrap();
    let seen = if recursive {
        *lock.read().unwrap()
    } else {
        *first
    };
    assert!(seen <= 1);
    drop(first);
    writer.join().unwrap();
}

#[test]
fn a_recursive_read_deadlocks_when_the_lock_prefers_the_waiting_writer() {
    for spec in ["dfs", "dpor", "random", "pct:d=2"] {
        let report = explore(spec, 2_000, || read_around_a_writer(true));
        let failure = report
            .first_failure()
            .unwrap_or_else(|| panic!("{spec} reaches the writer-preferring outcome"));
        assert_eq!(failure.kind, FailureKind::Deadlock, "{spec}: {failure}");
        let text = failure.to_string();
        assert!(
            text.contains(
                "(a recursive read: the thread already holds it); waits behind thread 1, which \
                 waits to write it"
            ),
            "{spec}: {text}"
        );
        // The choice is part of the replay token.
        let replayed = helpers::builder("random")
            .replay(&failure.token, || read_around_a_writer(true))
            .expect("the token replays");
        assert_eq!(
            replayed.first_failure().map(|f| f.kind),
            Some(FailureKind::Deadlock),
            "{spec}"
        );
    }
    // Only that outcome deadlocks: `icb` takes the first answer of every value choice (the
    // second read joins the readers) and finds nothing in all its schedules.
    let report = explore("icb:c=3,v=all", 10_000, || read_around_a_writer(true));
    assert!(report.is_ok(), "{report}");
    assert!(report.executions < 10_000, "icb finished its search");
}

#[test]
fn a_single_read_around_a_writer_never_deadlocks() {
    for spec in ["dfs", "dpor"] {
        let report = explore(spec, 10_000, || read_around_a_writer(false));
        assert!(report.is_ok(), "{spec}: {report}");
        assert!(report.executions < 10_000, "{spec} finished its search");
    }
    helpers::all_schedules(300, || read_around_a_writer(false));
}

#[test]
fn a_once_whose_initialiser_panicked_is_poisoned() {
    helpers::all_schedules(100, || {
        let once = Arc::new(Once::new());
        let o2 = once.clone();
        let first = thread::spawn(move || o2.call_once(|| panic!("initialiser fails")));
        assert!(first.join().is_err());
        let o3 = once.clone();
        let second = thread::spawn(move || o3.call_once(|| {}));
        let payload = second
            .join()
            .expect_err("call_once on a poisoned Once panics");
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert!(message.contains("poisoned"), "{message}");
        let mut saw_poison = false;
        once.call_once_force(|state| saw_poison = state.is_poisoned());
        assert!(saw_poison);
        assert!(once.is_completed());
    });
}

#[test]
fn a_once_lock_stays_empty_after_its_initialiser_panicked() {
    helpers::all_schedules(100, || {
        let cell = Arc::new(OnceLock::new());
        let c2 = cell.clone();
        let first = thread::spawn(move || {
            c2.get_or_init(|| -> u32 { panic!("no value") });
        });
        assert!(first.join().is_err());
        assert_eq!(cell.get(), None);
        assert_eq!(*cell.get_or_init(|| 7), 7);
    });
}

/// Every thread of an execution runs on one OS thread, so while one is switched out in the
/// middle of an unwind, `std::thread::panicking` is true for all of them: a lock another
/// thread released then was poisoned, and `assert!(!b.is_poisoned())` failed under dfs.
#[test]
fn only_the_thread_that_unwinds_poisons_the_locks_it_releases() {
    let report = explore("dfs", 100_000, || {
        let a = Arc::new(Mutex::new(0));
        let b = Arc::new(Mutex::new(0));
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let unwinding = thread::spawn(move || {
            let _guard = a2.lock().unwrap();
            assert!(!thread::panicking());
            panic!("gives up holding a");
        });
        let bystander = thread::spawn(move || {
            let guard = b2.lock().unwrap();
            thread::yield_now();
            let panicking = thread::panicking();
            drop(guard);
            panicking
        });
        assert!(unwinding.join().is_err());
        assert!(!bystander.join().unwrap(), "the bystander thinks it panics");
        assert!(a.is_poisoned());
        assert!(
            !b.is_poisoned(),
            "b poisoned though no thread panicked holding it"
        );
    });
    assert!(report.is_ok(), "{report}");
    assert!(report.executions > 10, "{report}");
}

#[test]
fn once_wait_returns_after_the_initialiser_and_sees_what_it_wrote() {
    let report = explore("dfs", 10_000, || {
        let once = Arc::new(Once::new());
        let cell = Arc::new(OnceLock::new());
        let data = Arc::new(interleave::cell::Var::new(0));
        let (once2, cell2, data2) = (Arc::clone(&once), Arc::clone(&cell), Arc::clone(&data));
        let initialiser = thread::spawn(move || {
            // Written before the `Once` completes, read after it did.
            once2.call_once(|| data2.set(7));
            cell2.set(5).unwrap();
        });
        once.wait();
        // Without the completion's happens-before, this read would be a data race.
        assert_eq!(data.get(), 7);
        assert_eq!(*cell.wait(), 5);
        initialiser.join().unwrap();
    });
    assert!(report.is_ok(), "{report}");
    assert!(report.executions > 2, "{report}");
}

#[test]
fn once_wait_panics_after_a_panicked_initialiser_and_wait_force_waits_on() {
    helpers::all_schedules(100, || {
        let once = Arc::new(Once::new());
        let other = Arc::clone(&once);
        let failing = thread::spawn(move || other.call_once(|| panic!("initialiser fails")));
        assert!(failing.join().is_err());
        let waited = std::panic::catch_unwind(|| once.wait()).unwrap_err();
        assert_eq!(
            waited.downcast_ref::<&str>(),
            Some(&"Once instance has previously been poisoned")
        );
        let other = Arc::clone(&once);
        let forced = thread::spawn(move || other.call_once_force(|_| {}));
        once.wait_force();
        assert!(once.is_completed());
        forced.join().unwrap();
    });
}

#[test]
fn a_once_wait_that_nothing_completes_is_a_deadlock() {
    let report = explore("dfs", 100, || Once::new().wait());
    let failure = report.first_failure().expect("the wait never ends");
    assert_eq!(failure.kind, FailureKind::Deadlock, "{failure}");
    assert!(failure.to_string().contains("once wait"), "{failure}");
}

/// A downgrade lets no writer in between: the value the writer left is the one it reads.
#[test]
fn a_downgraded_write_guard_reads_what_it_wrote() {
    use interleave::sync::RwLockWriteGuard;
    let seen = StdMutex::new(BTreeSet::new());
    let report = explore("dfs", 10_000, || {
        let lock = Arc::new(RwLock::new(0));
        let (writer, reader) = (Arc::clone(&lock), Arc::clone(&lock));
        let other_writer = thread::spawn(move || *writer.write().unwrap() = 2);
        let other_reader = thread::spawn(move || *reader.read().unwrap());
        let mut guard = lock.write().unwrap();
        *guard = 1;
        let guard = RwLockWriteGuard::downgrade(guard);
        assert_eq!(*guard, 1, "a writer took the lock during the downgrade");
        drop(guard);
        other_writer.join().unwrap();
        seen.lock().unwrap().insert(other_reader.join().unwrap());
    });
    assert!(report.is_ok(), "{report}");
    // The reader may come before, between (sharing the downgraded lock) or after the writers.
    assert_eq!(seen.into_inner().unwrap(), BTreeSet::from([0, 1, 2]));
}

#[test]
fn a_lazy_lock_runs_its_initialiser_once_and_every_thread_sees_the_value() {
    let report = explore("dfs", 10_000, || {
        let runs = Arc::new(Mutex::new(0));
        let counted = Arc::clone(&runs);
        let lazy = Arc::new(LazyLock::new(move || {
            *counted.lock().unwrap() += 1;
            vec![1, 2, 3]
        }));
        let other = Arc::clone(&lazy);
        let reader = thread::spawn(move || other.iter().sum::<i32>());
        assert_eq!(LazyLock::force(&lazy).len(), 3);
        assert_eq!(reader.join().unwrap(), 6);
        assert_eq!(*runs.lock().unwrap(), 1);
    });
    assert!(report.is_ok(), "{report}");
    assert!(report.executions > 1, "{report}");
    let defaulted: LazyLock<Vec<u8>> = LazyLock::default();
    let report = explore("random", 10, || assert!(defaulted.is_empty()));
    assert!(report.is_ok(), "{report}");
}

#[test]
fn a_lazy_lock_whose_initialiser_panicked_panics_at_every_later_use() {
    helpers::all_schedules(100, || {
        let lazy = Arc::new(LazyLock::new(|| -> u32 { panic!("no value") }));
        let other = Arc::clone(&lazy);
        let first = thread::spawn(move || *LazyLock::force(&other));
        let second = std::panic::catch_unwind(|| *LazyLock::force(&lazy));
        let first = first.join();
        let messages: Vec<String> = [first.unwrap_err(), second.unwrap_err()]
            .iter()
            .map(|payload| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            })
            .collect();
        // One of the two ran the initialiser; the other found it poisoned.
        assert!(messages.iter().any(|m| m == "no value"), "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("previously been poisoned")),
            "{messages:?}"
        );
    });
}

/// A `static` `LazyLock` keeps the value its first execution made, as a std static does.
#[test]
fn a_static_lazy_lock_keeps_its_value_across_executions() {
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static SHARED: LazyLock<Mutex<u32>> = LazyLock::new(|| {
        MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Mutex::new(0)
    });
    let report = helpers::builder("random")
        .workers(1)
        .executions(20)
        .explore(|| *SHARED.lock().unwrap() += 1)
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(MADE.load(std::sync::atomic::Ordering::Relaxed), 1);
    let report = helpers::builder("random")
        .workers(1)
        .executions(1)
        // Each execution added one, the determinism check's repetitions too.
        .explore(|| assert!(*SHARED.lock().unwrap() >= 20))
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

/// Two threads wait on one condition variable, thread 1 first; one `notify_one` wakes one of
/// them. std leaves open which (a FIFO rule would always wake thread 1): exhaustive search
/// reaches both.
#[test]
fn notify_one_may_wake_either_waiter_and_dfs_reaches_both() {
    for spec in ["dfs", "dpor", "random"] {
        let woken = StdMutex::new(BTreeSet::new());
        let report = explore(spec, 5_000, || {
            // (waiters that arrived, the waiter the notification woke: Some(0) while pending)
            let state = Arc::new((
                Mutex::new((0u32, None::<u32>)),
                Condvar::new(),
                Condvar::new(),
            ));
            let spawn_waiter = |id: u32| {
                let state = state.clone();
                thread::spawn(move || {
                    let (lock, arrived, turn) = &*state;
                    let mut guard = lock.lock().unwrap();
                    guard.0 += 1;
                    arrived.notify_one();
                    while guard.1.is_none() {
                        guard = turn.wait(guard).unwrap();
                    }
                    if guard.1 == Some(0) {
                        guard.1 = Some(id);
                        arrived.notify_one();
                    }
                })
            };
            let (lock, arrived, turn) = &*state;
            let mut waiters = Vec::new();
            for id in 1..=2 {
                waiters.push(spawn_waiter(id));
                let mut guard = lock.lock().unwrap();
                while guard.0 < id {
                    guard = arrived.wait(guard).unwrap();
                }
            }
            let mut guard = lock.lock().unwrap();
            guard.1 = Some(0);
            turn.notify_one();
            while guard.1 == Some(0) {
                guard = arrived.wait(guard).unwrap();
            }
            woken.lock().unwrap().insert(guard.1.unwrap());
            turn.notify_all();
            drop(guard);
            for w in waiters {
                w.join().unwrap();
            }
        });
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(
            woken.into_inner().unwrap(),
            BTreeSet::from([1, 2]),
            "{spec} reaches both waiters"
        );
    }
}

/// A thread left blocked for ever when the main thread returns has lost its wake-up: reported
/// as a deadlock naming it (shuttle's and loom's rule), not silently dropped.
#[test]
fn a_thread_blocked_when_the_main_thread_returns_is_a_deadlock() {
    let report = explore("random", 20, || {
        let (_tx, rx) = interleave::sync::mpsc::channel::<u32>();
        let tx_keeper = Arc::new(Mutex::new(_tx));
        let _waiter = thread::Builder::new()
            .name("forgotten".into())
            .spawn(move || {
                let _keep = tx_keeper;
                let _ = rx.recv();
            })
            .unwrap();
    });
    let failure = report.first_failure().expect("a deadlock");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(failure.message.contains("forgotten"), "{}", failure.message);
    // Threads that can still run after the main thread returned run to their end.
    helpers::all_schedules(100, || {
        let flag = Arc::new(interleave::sync::atomic::AtomicBool::new(false));
        let f2 = flag.clone();
        let _late = thread::spawn(move || {
            while !f2.load(interleave::sync::atomic::Ordering::SeqCst) {
                thread::yield_now();
            }
        });
        flag.store(true, interleave::sync::atomic::Ordering::SeqCst);
    });
}

/// A detached task (its handle dropped) is cancelled when the main thread returns and nothing
/// else is left, as under shuttle: a background loop does not run into the step bound.
#[test]
fn a_detached_task_is_cancelled_when_the_main_thread_returns() {
    for spec in ["random", "pct:d=3", "dfs"] {
        let report = explore(spec, 200, || {
            drop(interleave::future::spawn(async {
                loop {
                    interleave::future::yield_now().await;
                }
            }));
        });
        assert!(report.is_ok(), "{spec}: {report}");
    }
}

/// `yield_now` returns `Pending` once, as tokio's: in a `select` with a ready future, the
/// ready one always wins.
#[test]
fn future_yield_now_is_pending_once() {
    let winners = helpers::outcomes(|| {
        interleave::future::block_on(async {
            interleave::future::select(interleave::future::yield_now(), async { 1 })
                .await
                .is_right()
        })
    });
    assert_eq!(winners, BTreeSet::from([true]));
}

/// `abort` races with the task finishing: exhaustive search reaches both outcomes.
#[test]
fn abort_races_with_the_task_finishing() {
    for spec in ["dfs", "dpor"] {
        let seen = StdMutex::new(BTreeSet::new());
        let report = explore(spec, 1_000, || {
            let handle = interleave::future::spawn(async { 5 });
            handle.abort();
            let result = interleave::future::block_on(handle);
            seen.lock().unwrap().insert(result.is_ok());
        });
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(
            seen.into_inner().unwrap(),
            BTreeSet::from([false, true]),
            "{spec}"
        );
    }
}

/// Like std's, the locks are unwind-safe whatever they hold (poisoning reports a panic that may
/// have left the data half-updated), so `catch_unwind` accepts closures that use them.
#[test]
fn locks_are_unwind_safe_like_std() {
    use std::cell::RefCell;
    use std::panic::{RefUnwindSafe, UnwindSafe};
    fn unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}
    // `RefCell` is neither, and std's locks are both around it.
    unwind_safe::<std::sync::Mutex<RefCell<i32>>>();
    unwind_safe::<Mutex<RefCell<i32>>>();
    unwind_safe::<RwLock<RefCell<i32>>>();
    unwind_safe::<Arc<Mutex<RefCell<i32>>>>();
    unwind_safe::<Condvar>();
    unwind_safe::<Once>();
    unwind_safe::<OnceLock<i32>>();
    unwind_safe::<LazyLock<i32>>();
    unwind_safe::<interleave::sync::Barrier>();
    unwind_safe::<interleave::sync::atomic::AtomicUsize>();
    let report = helpers::builder("dfs")
        .explore(|| {
            let lock = Mutex::new(RefCell::new(0));
            let caught = std::panic::catch_unwind(|| {
                let guard = lock.lock().unwrap();
                *guard.borrow_mut() += 1;
                panic!("inside, holding the lock");
            });
            assert!(caught.is_err());
            assert!(lock.is_poisoned());
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

/// `thread::context_switches` counts the scheduling points passed so far: it grows with every
/// visible operation of any thread and repeats under the same schedule.
#[test]
fn context_switches_count_the_scheduling_points() {
    use interleave::sync::atomic::{AtomicUsize, Ordering};
    let report = helpers::builder("dfs")
        .explore(|| {
            let start = thread::context_switches();
            let counter = Arc::new(AtomicUsize::new(0));
            let child = {
                let counter = counter.clone();
                thread::spawn(move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                })
            };
            let before = thread::context_switches();
            counter.fetch_add(1, Ordering::SeqCst);
            let after = thread::context_switches();
            assert!(before > start, "the spawn is a scheduling point");
            assert!(after > before, "the fetch_add is a scheduling point");
            child.join().unwrap();
            assert!(thread::context_switches() > after);
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(report.executions > 1, "dfs explored the interleavings");
}
