//! The std-shaped primitives behave like std under every explored schedule, and the outcomes
//! that depend on the schedule really vary.

use crate::helpers;
use helpers::outcomes;

use std::collections::BTreeSet;
use std::time::Duration;

use interleave::sync::atomic::{
    self, AtomicBool, AtomicI64, AtomicPtr, AtomicU8, AtomicUsize, Ordering,
};
use interleave::sync::mpsc::{self, RecvTimeoutError, TryRecvError, TrySendError};
use interleave::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use interleave::thread;

/// Explores `f` with random and PCT schedules and fails the test on any failure.
fn all_schedules(f: impl Fn() + Sync) {
    helpers::all_schedules(300, f);
}

#[test]
fn threads_return_values_and_interleave_both_ways() {
    all_schedules(|| {
        let h = thread::spawn(|| 40 + 2);
        assert_eq!(h.join().unwrap(), 42);
        assert_eq!(thread::current().name(), None.or(thread::current().name()));
    });
    let orders = outcomes(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let l2 = log.clone();
        let t = thread::spawn(move || l2.lock().unwrap().push(1));
        log.lock().unwrap().push(0);
        t.join().unwrap();
        let order = log.lock().unwrap().clone();
        order
    });
    assert_eq!(orders.len(), 2, "{orders:?}");
}

#[test]
fn scoped_threads_borrow_and_are_joined() {
    all_schedules(|| {
        let mut numbers = vec![1, 2, 3];
        let total = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| total.fetch_add(numbers.iter().sum::<usize>(), Ordering::SeqCst));
            let h = s.spawn(|| total.fetch_add(10, Ordering::SeqCst));
            h.join().unwrap();
        });
        assert_eq!(total.load(Ordering::SeqCst), 16);
        numbers.push(4);
        assert_eq!(numbers.len(), 4);
    });
}

#[test]
fn current_thread_names_and_ids() {
    all_schedules(|| {
        assert_eq!(thread::current().name(), Some("main"));
        let h = thread::Builder::new()
            .name("worker".into())
            .spawn(|| {
                (
                    thread::current().name().map(String::from),
                    thread::current().id(),
                )
            })
            .unwrap();
        let worker_id = h.thread().id();
        let (name, id) = h.join().unwrap();
        assert_eq!(name.as_deref(), Some("worker"));
        assert_eq!(id, worker_id);
        assert_ne!(id, thread::current().id());
    });
}

#[test]
fn park_and_unpark_hand_over_a_token() {
    all_schedules(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let main = thread::current();
        let t = thread::spawn(move || {
            f2.store(true, Ordering::SeqCst);
            main.unpark();
        });
        while !flag.load(Ordering::SeqCst) {
            thread::park();
        }
        t.join().unwrap();
    });
}

#[test]
fn mutex_try_lock_and_into_inner() {
    let results = outcomes(|| {
        let m = Arc::new(Mutex::new(0));
        let m2 = m.clone();
        let t = thread::spawn(move || {
            let _g = m2.lock().unwrap();
        });
        let got = m.try_lock().is_ok();
        t.join().unwrap();
        got
    });
    assert_eq!(results, BTreeSet::from([false, true]));
    all_schedules(|| {
        let mut m = Mutex::new(vec![1]);
        m.get_mut().unwrap().push(2);
        assert_eq!(m.into_inner().unwrap(), vec![1, 2]);
    });
}

#[test]
fn rwlock_admits_readers_together_and_writers_alone() {
    all_schedules(|| {
        let lock = Arc::new(RwLock::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let lock = lock.clone();
                thread::spawn(move || {
                    let value = *lock.read().unwrap();
                    assert!(value == 0 || value == 5);
                })
            })
            .collect();
        *lock.write().unwrap() += 5;
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(*lock.read().unwrap(), 5);
        let _a = lock.read().unwrap();
        assert!(lock.try_read().is_ok());
        assert!(lock.try_write().is_err());
    });
}

#[test]
fn condvar_wait_while_and_notify_all() {
    all_schedules(|| {
        let state = Arc::new((Mutex::new(0u32), Condvar::new()));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let state = state.clone();
                thread::spawn(move || {
                    let (lock, cv) = &*state;
                    let guard = cv.wait_while(lock.lock().unwrap(), |n| *n == 0).unwrap();
                    assert_eq!(*guard, 1);
                })
            })
            .collect();
        *state.0.lock().unwrap() = 1;
        state.1.notify_all();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

/// A timeout is no free scheduling choice (it fires only when the virtual clock reaches it, see
/// `tests/time.rs`), but a notification due at the same virtual instant as the deadline races
/// with it, and both outcomes are explored.
#[test]
fn condvar_timeouts_race_with_notifications_due_at_the_deadline() {
    let timed_out = outcomes(|| {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let s2 = state.clone();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_secs(1));
            *s2.0.lock().unwrap() = true;
            s2.1.notify_one();
        });
        let (lock, cv) = &*state;
        let (guard, result) = cv
            .wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(1), |ready| {
                !*ready
            })
            .unwrap();
        assert_eq!(*guard, !result.timed_out());
        drop(guard);
        t.join().unwrap();
        result.timed_out()
    });
    assert_eq!(timed_out, BTreeSet::from([false, true]));
}

#[test]
fn barrier_releases_together_with_one_leader() {
    all_schedules(|| {
        let barrier = Arc::new(Barrier::new(3));
        let arrived = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (barrier, arrived) = (barrier.clone(), arrived.clone());
                thread::spawn(move || {
                    arrived.fetch_add(1, Ordering::SeqCst);
                    let leader = barrier.wait().is_leader();
                    assert_eq!(arrived.load(Ordering::SeqCst), 3);
                    leader
                })
            })
            .collect();
        arrived.fetch_add(1, Ordering::SeqCst);
        let mut leaders = usize::from(barrier.wait().is_leader());
        for h in handles {
            leaders += usize::from(h.join().unwrap());
        }
        assert_eq!(leaders, 1);
    });
}

#[test]
fn once_and_once_lock_initialise_exactly_once() {
    all_schedules(|| {
        let once = Arc::new(Once::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let cell = Arc::new(OnceLock::new());
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let (once, runs, cell) = (once.clone(), runs.clone(), cell.clone());
                thread::spawn(move || {
                    once.call_once(|| {
                        runs.fetch_add(1, Ordering::SeqCst);
                    });
                    assert!(once.is_completed());
                    *cell.get_or_init(|| i)
                })
            })
            .collect();
        let values: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(values[0], values[1]);
        assert_eq!(cell.set(9), Err(9));
        assert_eq!(cell.get(), Some(&values[0]));
    });
}

#[test]
fn channels_deliver_in_order_and_disconnect() {
    all_schedules(|| {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        let a = thread::spawn(move || {
            for i in 0..3 {
                tx.send(i).unwrap();
            }
        });
        let b = thread::spawn(move || tx2.send(100).unwrap());
        let received: Vec<i32> = rx.iter().collect();
        let from_a: Vec<i32> = received.iter().copied().filter(|&v| v < 100).collect();
        assert_eq!(from_a, vec![0, 1, 2]);
        assert_eq!(received.len(), 4);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// Dropping a sender that is not the last one is no scheduling point (nothing can observe it),
/// yet `dfs` still reaches every outcome: either sender's drop may turn out to be the last, and
/// the last one still races with the receiver's `try_recv`.
#[test]
fn only_the_last_senders_drop_is_a_scheduling_point() {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = helpers::builder("dfs")
        .executions(100_000)
        .explore(|| {
            let (tx, rx) = mpsc::channel();
            let senders: Vec<_> = [1, 2]
                .map(|value| {
                    let tx = tx.clone();
                    thread::spawn(move || tx.send(value).unwrap())
                })
                .into();
            drop(tx);
            let first = rx.recv().unwrap();
            let second = rx.recv().unwrap();
            let disconnected = rx.try_recv() == Err(TryRecvError::Disconnected);
            for sender in senders {
                sender.join().unwrap();
            }
            seen.lock().unwrap().insert((first, second, disconnected));
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    let seen = seen.into_inner().unwrap();
    let expected: BTreeSet<_> = [(1, 2), (2, 1)]
        .into_iter()
        .flat_map(|(a, b)| [(a, b, false), (a, b, true)])
        .collect();
    assert_eq!(seen, expected);
    // With a scheduling point at each of the three drops this search took 2,706 executions;
    // without them, 97.
    assert!(report.executions <= 200, "{} executions", report.executions);
}

#[test]
fn bounded_and_rendezvous_channels_block_senders() {
    all_schedules(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        let t = thread::spawn(move || {
            for i in 0..3 {
                tx.send(i).unwrap();
            }
        });
        assert_eq!(rx.into_iter().collect::<Vec<_>>(), vec![0, 1, 2]);
        t.join().unwrap();

        let (tx, rx) = mpsc::sync_channel(0);
        let t = thread::spawn(move || tx.send(7).unwrap());
        thread::yield_now();
        assert!(!t.is_finished(), "a rendezvous send waits for the receiver");
        assert_eq!(rx.recv().unwrap(), 7);
        t.join().unwrap();

        let (tx, rx) = mpsc::sync_channel(1);
        tx.try_send(1).unwrap();
        assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
        drop(rx);
        assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
    });
    // A message sent at the receiver's deadline races with the timeout.
    let results = outcomes(|| {
        let (tx, rx) = mpsc::channel::<u8>();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_millis(1));
            tx.send(1).unwrap()
        });
        let result = rx.recv_timeout(Duration::from_millis(1));
        t.join().unwrap();
        match result {
            Ok(_) => 0,
            Err(RecvTimeoutError::Timeout) => 1,
            Err(RecvTimeoutError::Disconnected) => 2,
        }
    });
    assert_eq!(results, BTreeSet::from([0, 1]));
}

#[test]
fn atomics_implement_every_operation() {
    all_schedules(|| {
        let a = AtomicI64::new(5);
        assert_eq!(a.fetch_add(3, Ordering::Relaxed), 5);
        assert_eq!(a.fetch_sub(1, Ordering::Relaxed), 8);
        assert_eq!(a.fetch_max(10, Ordering::Relaxed), 7);
        assert_eq!(a.fetch_min(-2, Ordering::Relaxed), 10);
        assert_eq!(a.swap(6, Ordering::Relaxed), -2);
        assert_eq!(
            a.compare_exchange(6, 1, Ordering::AcqRel, Ordering::Acquire),
            Ok(6)
        );
        assert_eq!(
            a.compare_exchange_weak(6, 2, Ordering::AcqRel, Ordering::Acquire),
            Err(1)
        );
        assert_eq!(
            a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v * 10)),
            Ok(1)
        );
        assert_eq!(a.load(Ordering::SeqCst), 10);
        assert_eq!(
            a.try_update(Ordering::SeqCst, Ordering::SeqCst, |v| (v > 10)
                .then_some(0)),
            Err(10)
        );
        assert_eq!(a.update(Ordering::SeqCst, Ordering::SeqCst, |v| v + 1), 10);
        assert_eq!(a.load(Ordering::SeqCst), 11);
        let b = AtomicU8::new(0b1100);
        assert_eq!(b.fetch_and(0b0100, Ordering::SeqCst), 0b1100);
        assert_eq!(b.fetch_or(0b0001, Ordering::SeqCst), 0b0100);
        assert_eq!(b.fetch_xor(0b0101, Ordering::SeqCst), 0b0101);
        assert_eq!(b.fetch_nand(0xff, Ordering::SeqCst), 0);
        assert_eq!(b.into_inner(), 0xff);
        let flag = AtomicBool::new(true);
        assert!(flag.fetch_not(Ordering::SeqCst));
        assert!(!flag.fetch_or(false, Ordering::SeqCst));
        let mut values = [1u32, 2, 3];
        let p = AtomicPtr::new(values.as_mut_ptr());
        let first = p.fetch_ptr_add(1, Ordering::SeqCst);
        assert_eq!(unsafe { *p.load(Ordering::SeqCst) }, 2);
        assert_eq!(first, values.as_mut_ptr());
        atomic::fence(Ordering::SeqCst);
    });
}

/// Every read-modify-write returns what std's returns and leaves the value std's leaves, at the
/// edges where wrapping, sign and pointer arithmetic differ: interleave computes each new value
/// itself (a plain load and store), so a wrong formula would show here.
#[test]
fn read_modify_writes_compute_what_std_computes() {
    use std::sync::atomic as std_atomic;
    macro_rules! same_as_std {
        ($ours:ty, $std:ty, $values:expr, [$($op:ident),*]) => {
            for start in $values {
                for operand in $values {
                    $(
                        let ours = <$ours>::new(start);
                        let theirs = <$std>::new(start);
                        assert_eq!(
                            ours.$op(operand, Ordering::SeqCst),
                            theirs.$op(operand, Ordering::SeqCst),
                            "{}({start:?}, {operand:?}) returned another value",
                            stringify!($op)
                        );
                        assert_eq!(
                            ours.load(Ordering::Relaxed),
                            theirs.load(Ordering::Relaxed),
                            "{}({start:?}, {operand:?}) left another value",
                            stringify!($op)
                        );
                    )*
                }
            }
        };
    }
    // One thread, so one execution covers the test.
    interleave::Builder::new().executions(1).check(|| {
        same_as_std!(
            AtomicI64,
            std_atomic::AtomicI64,
            [i64::MIN, -1, 0, 1, 6, i64::MAX],
            [
                fetch_add, fetch_sub, fetch_and, fetch_nand, fetch_or, fetch_xor, fetch_max,
                fetch_min, swap
            ]
        );
        same_as_std!(
            AtomicU8,
            std_atomic::AtomicU8,
            [0u8, 1, 0x5a, 0x80, 0xff],
            [
                fetch_add, fetch_sub, fetch_and, fetch_nand, fetch_or, fetch_xor, fetch_max,
                fetch_min, swap
            ]
        );
        same_as_std!(
            AtomicBool,
            std_atomic::AtomicBool,
            [false, true],
            [fetch_and, fetch_nand, fetch_or, fetch_xor, swap]
        );
        for start in [false, true] {
            assert_eq!(
                AtomicBool::new(start).fetch_not(Ordering::SeqCst),
                std_atomic::AtomicBool::new(start).fetch_not(Ordering::SeqCst)
            );
        }
        let mut values = [0u64; 4];
        let base = values.as_mut_ptr().wrapping_add(2);
        for operand in [0usize, 1, 2, 8, usize::MAX] {
            macro_rules! pointer_op {
                ($($op:ident),*) => {$(
                    let ours = AtomicPtr::new(base);
                    let theirs = std_atomic::AtomicPtr::new(base);
                    assert_eq!(
                        ours.$op(operand, Ordering::SeqCst),
                        theirs.$op(operand, Ordering::SeqCst)
                    );
                    assert_eq!(
                        ours.load(Ordering::Relaxed),
                        theirs.load(Ordering::Relaxed),
                        "{}({operand}) left another pointer",
                        stringify!($op)
                    );
                )*};
            }
            pointer_op!(
                fetch_ptr_add,
                fetch_ptr_sub,
                fetch_byte_add,
                fetch_byte_sub,
                fetch_or,
                fetch_and,
                fetch_xor
            );
        }
        for (current, new) in [(3, 4), (5, 6)] {
            let ours = AtomicI64::new(3);
            let theirs = std_atomic::AtomicI64::new(3);
            assert_eq!(
                ours.compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst),
                theirs.compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst)
            );
            assert_eq!(ours.load(Ordering::Relaxed), theirs.load(Ordering::Relaxed));
        }
    });
}

#[test]
fn thread_locals_are_per_thread() {
    use std::cell::Cell;
    interleave::thread_local! {
        static DEPTH: Cell<u32> = Cell::new(0);
        static NAME: std::cell::RefCell<String> = std::cell::RefCell::new(String::from("x"));
    }
    all_schedules(|| {
        DEPTH.with(|d| d.set(5));
        let t = thread::spawn(|| {
            NAME.with(|n| n.borrow_mut().push('y'));
            DEPTH.with(|d| d.get())
        });
        assert_eq!(t.join().unwrap(), 0);
        assert_eq!(DEPTH.with(|d| d.get()), 5);
        assert_eq!(NAME.with(|n| n.borrow().clone()), "x");
    });
}

/// std's shorthands on `Cell` and `RefCell` thread-locals; `set` does not run the initialiser.
#[test]
fn thread_locals_of_cells_have_std_shorthands() {
    use std::cell::{Cell, RefCell};
    interleave::thread_local! {
        static COUNT: Cell<u32> = Cell::new(1);
        static WORDS: RefCell<Vec<&'static str>> = RefCell::new(vec!["init"]);
        static NEVER_INITIALISED: RefCell<u32> = panic!("the initialiser ran");
    }
    all_schedules(|| {
        let t = thread::spawn(|| {
            COUNT.set(COUNT.get() + 10);
            WORDS.with_borrow_mut(|words| words.push("spawned"));
            NEVER_INITIALISED.set(3);
            (
                COUNT.take(),
                WORDS.replace(Vec::new()),
                NEVER_INITIALISED.take(),
            )
        });
        assert_eq!(t.join().unwrap(), (11, vec!["init", "spawned"], 3));
        assert_eq!(COUNT.replace(7), 1);
        assert_eq!(COUNT.get(), 7);
        WORDS.set(vec!["main"]);
        assert_eq!(WORDS.with_borrow(|words| words.clone()), ["main"]);
        assert_eq!(WORDS.take(), ["main"]);
        assert!(WORDS.with_borrow(Vec::is_empty));
    });
}

std::thread_local! {
    /// How often `COUNTED`'s initialiser ran on this OS thread (each execution runs on one).
    static INITIALISATIONS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

interleave::lazy_static! {
    static ref COUNTED: u32 = {
        INITIALISATIONS.with(|n| n.set(n.get() + 1));
        7
    };
}

interleave::lazy_static! {
    /// An atomic that its initialiser stores to after creating it.
    static ref STORED_BY_INIT: AtomicUsize = {
        let value = AtomicUsize::new(0);
        value.store(7, Ordering::Relaxed);
        value
    };
}

/// A thread that finds a `lazy_static!` value initialised by another acquires the completion,
/// as std's `LazyLock` does: without it, the weak memory model let the second thread read the
/// atomic's value from before the initialiser's store (crossbeam-epoch's collector).
#[test]
fn a_lazy_static_value_is_seen_as_its_initialiser_left_it() {
    let report = helpers::builder("dfs")
        .executions(100_000)
        .explore(|| {
            let other = thread::spawn(|| STORED_BY_INIT.load(Ordering::Relaxed));
            let mine = STORED_BY_INIT.load(Ordering::Relaxed);
            assert_eq!((mine, other.join().unwrap()), (7, 7));
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.stat("covered"), Some("the whole search space"));
}

#[test]
fn lazy_static_initialize_runs_the_initialiser_once_per_execution() {
    all_schedules(|| {
        let before = INITIALISATIONS.with(|n| n.get());
        interleave::lazy_static::initialize(&COUNTED);
        assert_eq!(INITIALISATIONS.with(|n| n.get()), before + 1);
        interleave::lazy_static::initialize(&COUNTED);
        assert_eq!(*COUNTED, 7);
        assert_eq!(INITIALISATIONS.with(|n| n.get()), before + 1);
    });
}

/// `fetch_update` is std's load and compare-exchange loop: when another thread writes the
/// atomic while `f` runs, the exchange fails and `f` runs again with the new value, so no
/// update is lost and both call counts are reached by the exhaustive searches.
#[test]
fn fetch_update_retries_when_the_value_changes_while_f_runs() {
    for spec in ["dfs", "dpor"] {
        let calls_seen = std::sync::Mutex::new(BTreeSet::new());
        let report = helpers::builder(spec)
            .executions(1_000)
            .explore(|| {
                let value = Arc::new(AtomicUsize::new(0));
                let other = {
                    let value = value.clone();
                    thread::spawn(move || value.fetch_add(1, Ordering::SeqCst))
                };
                let mut calls = 0;
                let previous = value
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
                        calls += 1;
                        Some(v + 10)
                    })
                    .unwrap();
                other.join().unwrap();
                assert_eq!(value.load(Ordering::SeqCst), 11, "an update was lost");
                if calls == 2 {
                    assert_eq!(previous, 1, "the retry saw the other thread's write");
                }
                calls_seen.lock().unwrap().insert(calls);
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(
            calls_seen.into_inner().unwrap(),
            BTreeSet::from([1, 2]),
            "{spec}"
        );
    }
}

/// A channel's happens-before is std's: a receipt learns of its own message's send only, not
/// of another sender's earlier send; the send that takes the slot of a full bounded channel
/// learns of the receipt that freed it.
#[test]
fn a_channel_orders_each_send_before_its_receipt_only() {
    for spec in ["dfs", "dpor"] {
        let report = helpers::builder(spec)
            .executions(1_000)
            .explore(|| {
                let (first_sender, receiver) = mpsc::channel();
                let second_sender = first_sender.clone();
                let one = thread::spawn(move || first_sender.send(1).unwrap());
                let two = thread::spawn(move || second_sender.send(2).unwrap());
                let (one_id, two_id) = (one.thread().id().as_usize(), two.thread().id().as_usize());
                let got = receiver.recv().unwrap();
                let clock = thread::vector_clock();
                let (sender, other) = if got == 1 {
                    (one_id, two_id)
                } else {
                    (two_id, one_id)
                };
                assert!(
                    clock[sender] > 0,
                    "the receipt learns of its send: {clock:?}"
                );
                assert_eq!(
                    clock[other], 0,
                    "the receipt learns of no other send: {clock:?}"
                );
                receiver.recv().unwrap();
                let clock = thread::vector_clock();
                assert!(clock[one_id] > 0 && clock[two_id] > 0, "{clock:?}");
                one.join().unwrap();
                two.join().unwrap();
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
    }
}

#[test]
fn the_send_into_a_freed_slot_learns_of_the_receipt_that_freed_it() {
    for spec in ["dfs", "dpor"] {
        let report = helpers::builder(spec)
            .executions(1_000)
            .explore(|| {
                let (sender, receiver) = mpsc::sync_channel(1);
                let main_id = thread::current().id().as_usize();
                let receiving = thread::spawn(move || {
                    receiver.recv().unwrap();
                    receiver.recv().unwrap();
                });
                let receiver_id = receiving.thread().id().as_usize();
                sender.send(()).unwrap();
                let before = thread::vector_clock();
                assert_eq!(
                    before[receiver_id], 0,
                    "nothing was received yet: {before:?}"
                );
                sender.send(()).unwrap();
                let after = thread::vector_clock();
                assert!(
                    after[receiver_id] > 0,
                    "the first receipt freed the slot: {after:?}"
                );
                assert!(after[main_id] > 0);
                receiving.join().unwrap();
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
    }
}

/// `Causality` carries happens-before by hand: a value handed over through state interleave
/// does not see (a `std` mutex) is ordered after its write when the taker acquires the
/// history the writer released, and is a data race when it does not.
#[test]
fn causality_orders_a_hand_over_that_interleave_does_not_see() {
    use interleave::cell::Var;
    use interleave::sync::Causality;

    fn hand_over(acquire: bool) -> interleave::Report {
        helpers::builder("dfs")
            .executions(1_000)
            .explore(move || {
                let value = Arc::new(Var::new(0));
                let slot = Arc::new(std::sync::Mutex::new(None::<Causality>));
                let taker = {
                    let (value, slot) = (value.clone(), slot.clone());
                    thread::spawn(move || loop {
                        let handed = slot.lock().unwrap().take();
                        if let Some(history) = handed {
                            if acquire {
                                history.acquire();
                            }
                            assert_eq!(value.get(), 1);
                            break;
                        }
                        thread::yield_now();
                    })
                };
                value.set(1);
                *slot.lock().unwrap() = Some(Causality::release());
                taker.join().unwrap();
            })
            .unwrap()
    }
    let acquired = hand_over(true);
    assert!(acquired.is_ok(), "{acquired}");
    let not_acquired = hand_over(false);
    assert_eq!(
        not_acquired.first_failure().map(|failure| failure.kind),
        Some(interleave::FailureKind::DataRace),
        "{not_acquired}"
    );
}

/// std's `Arc` runs its value's destructor in the last holder after every other holder has
/// dropped its reference (a release, then an acquire): a destructor that reads a cell another
/// thread wrote before dropping its reference is ordered after the write, not a race (it was
/// the checks' one false positive, met by a newcomer's ring buffer within the first hour). The
/// twin drops the value as a `Box` after a `Relaxed` flag said the other thread, which wrote
/// through a pointer, is done: nothing orders the two, and the race is found.
#[test]
fn a_destructor_run_by_the_last_arc_is_ordered_after_the_other_holders() {
    use interleave::cell::UnsafeCell;
    use interleave::sync::atomic::{AtomicBool, Ordering};

    struct Slot {
        value: UnsafeCell<u32>,
    }
    impl Drop for Slot {
        fn drop(&mut self) {
            self.value.with(|value| assert!(unsafe { *value } <= 1));
        }
    }
    let slot = || Slot {
        value: UnsafeCell::new(0),
    };

    // A random walk: which reference goes last is decided by std's counter, which the
    // systematic searches do not see as a dependency, so they may never run the other order.
    let shared_by_arc = helpers::builder("random")
        .executions(1_000)
        .explore(move || {
            let ours = Arc::new(slot());
            let theirs = ours.clone();
            let writer = thread::spawn(move || {
                theirs.value.with_mut(|value| unsafe { *value = 1 });
            });
            // In some schedules the writer has finished by now, and this is the last
            // reference; in others the writer's is.
            thread::yield_now();
            drop(ours);
            writer.join().unwrap();
        })
        .unwrap();
    assert!(shared_by_arc.is_ok(), "{shared_by_arc}");

    let handed_over_relaxed = helpers::builder("random")
        .executions(1_000)
        .explore(move || {
            let owned = Box::new(slot());
            let done = Arc::new(AtomicBool::new(false));
            let address = &*owned as *const Slot as usize;
            let flag = done.clone();
            let writer = thread::spawn(move || {
                // SAFETY: the main thread drops the slot only after the flag is raised, and the
                // writer does not touch it after raising the flag.
                let slot = unsafe { &*(address as *const Slot) };
                slot.value.with_mut(|value| unsafe { *value = 1 });
                flag.store(true, Ordering::Relaxed);
            });
            while !done.load(Ordering::Relaxed) {
                thread::yield_now();
            }
            drop(owned);
            writer.join().unwrap();
        })
        .unwrap();
    assert_eq!(
        handed_over_relaxed
            .first_failure()
            .map(|failure| failure.kind),
        Some(interleave::FailureKind::DataRace),
        "{handed_over_relaxed}"
    );
}

/// An access inside another cell's closure, as loom allows (sharded-slab's loom models write
/// a page's head inside the access to its slab), takes no scheduling point and is still
/// checked for races; the same cell accessed again inside its own closure is refused.
#[test]
fn a_cell_access_nested_in_another_is_race_checked_without_a_scheduling_point() {
    use interleave::cell::Var;

    fn nested(ordered: bool) -> interleave::Report {
        helpers::builder("dfs")
            .executions(1_000)
            .explore(move || {
                let slab = Arc::new(Var::new(vec![1, 2, 3]));
                let head = Arc::new(Var::new(0));
                let other = {
                    let head = head.clone();
                    thread::spawn(move || head.set(9))
                };
                let mut other = Some(other);
                if ordered {
                    other.take().unwrap().join().unwrap();
                }
                slab.with(|slab| head.with_mut(|head| *head = slab[1]));
                if let Some(other) = other {
                    other.join().unwrap();
                }
            })
            .unwrap()
    }
    let ordered = nested(true);
    assert!(ordered.is_ok(), "{ordered}");
    let racing = nested(false);
    let failure = racing.first_failure().expect("the nested write races");
    assert_eq!(failure.kind, interleave::FailureKind::DataRace, "{failure}");

    // An access's closure that reaches a scheduling point (an atomic) lets another thread
    // run, which is not inside that access: its own accesses to the cell take their scheduling
    // points and are checked as usual (two reads: no race).
    let shared_read = helpers::builder("dfs")
        .executions(1_000)
        .explore(|| {
            let cell = Arc::new(Var::new(1));
            let flag = Arc::new(AtomicUsize::new(0));
            let other = {
                let (cell, flag) = (cell.clone(), flag.clone());
                thread::spawn(move || {
                    flag.store(1, Ordering::Relaxed);
                    cell.get()
                })
            };
            let mine = cell.with(|value| *value + flag.load(Ordering::Relaxed));
            assert!(mine >= 1 && other.join().unwrap() == 1);
        })
        .unwrap();
    assert!(shared_read.is_ok(), "{shared_read}");

    let again = helpers::builder("random")
        .executions(1)
        .explore(|| {
            let cell = Var::new(0);
            cell.with_mut(|value| *value = cell.get() + 1);
        })
        .unwrap();
    let failure = again.first_failure().expect("the re-entry is refused");
    assert!(
        failure.message.contains("accessed the same cell again"),
        "{failure}"
    );
}
