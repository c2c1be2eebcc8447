//! Correct std-shaped programs on which no strategy may report anything, and buggy ones whose
//! bugs need behaviours std allows (an early wake from a sleep, a non-FIFO notify, a spurious
//! wake-up, a poisoned lock the program ignores) and that the default strategy must find.
//!
//! The correct programs are the idioms a newcomer writes first: spin-waits, sleeps used as
//! delays, poisoning handled, a pool that joins its workers in `Drop`, deep recursion with a
//! raised stack size. A finding on any of them is a false report, the defect a tester must never
//! have. Every strategy runs `INTERLEAVE_STD_PROGRAMS_EXECUTIONS` executions of each (default
//! 1,000 to keep the suite quick in debug builds; the closing measurement runs 10,000 in a
//! release build).

use std::collections::VecDeque;
use std::time::Duration;

use crate::helpers;
use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::mpsc;
use interleave::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use interleave::{hint, thread, Builder, Report};

/// Every strategy, with its default parameters, and PCT at the depths people use.
fn strategies() -> Vec<String> {
    interleave::strategy::STRATEGY_NAMES
        .iter()
        .flat_map(|&name| match name {
            "pct" => vec!["pct:d=1", "pct:d=2", "pct:d=3"],
            name => vec![name],
        })
        .map(String::from)
        .collect()
}

fn budget() -> u64 {
    std::env::var("INTERLEAVE_STD_PROGRAMS_EXECUTIONS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1_000)
}

fn explore(spec: &str, executions: u64, program: fn()) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .explore(program)
        .expect("the exploration runs")
}

// ---------------------------------------------------------------------------------------------
// Correct programs.

/// One thread waits for a flag by spinning with `yield_now`.
fn spin_wait_two_threads() {
    let ready = Arc::new(AtomicBool::new(false));
    let setter = {
        let ready = ready.clone();
        thread::spawn(move || ready.store(true, Ordering::Release))
    };
    while !ready.load(Ordering::Acquire) {
        thread::yield_now();
    }
    setter.join().unwrap();
}

/// Two spinners wait for a third thread to release them.
fn spin_wait_three_threads() {
    let ready = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let ready = ready.clone();
            thread::spawn(move || {
                while !ready.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            })
        })
        .collect();
    ready.store(true, Ordering::Release);
    for spinner in spinners {
        spinner.join().unwrap();
    }
}

/// A spin-wait that uses `hint::spin_loop`, the way a lock-free crate writes it.
fn spin_wait_with_spin_loop_hint() {
    let ready = Arc::new(AtomicBool::new(false));
    let setter = {
        let ready = ready.clone();
        thread::spawn(move || ready.store(true, Ordering::Release))
    };
    while !ready.load(Ordering::Acquire) {
        hint::spin_loop();
    }
    setter.join().unwrap();
}

/// A test-and-set spin lock around a counter, with yields while it spins.
fn spin_lock_counter() {
    let locked = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (locked, count) = (locked.clone(), count.clone());
            thread::spawn(move || {
                while locked
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    thread::yield_now();
                }
                let seen = count.load(Ordering::Relaxed);
                count.store(seen + 1, Ordering::Relaxed);
                locked.store(false, Ordering::Release);
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

/// A sleep used as a delay: the result does not depend on how long the sleep lasts.
fn sleep_as_delay() {
    let done = Arc::new(AtomicBool::new(false));
    let sleeper = {
        let done = done.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            done.store(true, Ordering::SeqCst);
        })
    };
    sleeper.join().unwrap();
    assert!(done.load(Ordering::SeqCst));
}

/// Polls a flag with a sleep between polls.
fn sleep_polling_loop() {
    let ready = Arc::new(AtomicBool::new(false));
    let setter = {
        let ready = ready.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(5));
            ready.store(true, Ordering::SeqCst);
        })
    };
    while !ready.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(1));
    }
    setter.join().unwrap();
}

/// A thread panics holding a lock; the program recovers the data and carries on, as std lets it.
fn poisoning_handled() {
    let data = Arc::new(Mutex::new(vec![1, 2, 3]));
    let worker = {
        let data = data.clone();
        thread::spawn(move || {
            let guard = data.lock().unwrap();
            if guard.len() == 3 {
                panic!("the worker gives up");
            }
        })
    };
    assert!(worker.join().is_err(), "the worker panicked");
    let guard = data.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    assert_eq!(*guard, vec![1, 2, 3]);
}

/// A panicking thread whose panic the joiner inspects.
fn spawned_panic_observed_by_join() {
    let worker = thread::spawn(|| -> u32 { panic!("expected failure") });
    let payload = worker.join().expect_err("the worker panicked");
    let message = payload.downcast_ref::<&str>().copied().unwrap_or_default();
    assert_eq!(message, "expected failure");
}

/// A pool whose `Drop` tells its workers to stop and joins them (the Rust Book's `ThreadPool`).
struct Pool {
    sender: Option<mpsc::Sender<Box<dyn FnOnce() + Send>>>,
    workers: Vec<thread::JoinHandle<()>>,
}

impl Pool {
    fn new(size: usize) -> Pool {
        let (sender, receiver) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let receiver = Arc::new(Mutex::new(receiver));
        let workers = (0..size)
            .map(|_| {
                let receiver = receiver.clone();
                thread::spawn(move || loop {
                    let job = receiver.lock().unwrap().recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => break,
                    }
                })
            })
            .collect();
        Pool {
            sender: Some(sender),
            workers,
        }
    }

    fn execute(&self, job: impl FnOnce() + Send + 'static) {
        self.sender.as_ref().unwrap().send(Box::new(job)).unwrap();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        drop(self.sender.take());
        for worker in self.workers.drain(..) {
            worker.join().unwrap();
        }
    }
}

fn pool_joins_in_drop() {
    let count = Arc::new(AtomicUsize::new(0));
    {
        let pool = Pool::new(2);
        for _ in 0..3 {
            let count = count.clone();
            pool.execute(move || {
                count.fetch_add(1, Ordering::SeqCst);
            });
        }
    }
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

fn depth(n: u64) -> u64 {
    let padding = [n; 64];
    if n == 0 {
        0
    } else {
        1 + depth(std::hint::black_box(padding)[0] - 1)
    }
}

/// Recursion far deeper than the default coroutine stack holds, on a thread that asked for a
/// larger stack.
fn deep_recursion_with_raised_stack() {
    let worker = thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(|| depth(5_000))
        .unwrap();
    assert_eq!(worker.join().unwrap(), 5_000);
}

fn mutex_counter() {
    let count = Arc::new(Mutex::new(0));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let count = count.clone();
            thread::spawn(move || *count.lock().unwrap() += 1)
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(*count.lock().unwrap(), 3);
}

fn atomic_counter() {
    let count = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let count = count.clone();
            thread::spawn(move || count.fetch_add(1, Ordering::SeqCst))
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

fn rwlock_readers_and_writer() {
    let value = Arc::new(RwLock::new((0, 0)));
    let writer = {
        let value = value.clone();
        thread::spawn(move || {
            let mut guard = value.write().unwrap();
            guard.0 += 1;
            guard.1 += 1;
        })
    };
    let reader = {
        let value = value.clone();
        thread::spawn(move || {
            let guard = value.read().unwrap();
            assert_eq!(guard.0, guard.1, "a reader saw half a write");
        })
    };
    writer.join().unwrap();
    reader.join().unwrap();
}

/// A bounded queue with a condition variable and `while` loops around every wait.
fn condvar_producer_consumer() {
    let state = Arc::new((Mutex::new(VecDeque::new()), Condvar::new()));
    let producer = {
        let state = state.clone();
        thread::spawn(move || {
            for item in 0..3 {
                let (queue, ready) = &*state;
                let mut queue = queue.lock().unwrap();
                while queue.len() == 1 {
                    queue = ready.wait(queue).unwrap();
                }
                queue.push_back(item);
                ready.notify_all();
            }
        })
    };
    let (queue, ready) = &*state;
    for expected in 0..3 {
        let mut guard = queue.lock().unwrap();
        while guard.is_empty() {
            guard = ready.wait(guard).unwrap();
        }
        assert_eq!(guard.pop_front(), Some(expected));
        ready.notify_all();
    }
    producer.join().unwrap();
}

fn condvar_wait_while() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let setter = {
        let state = state.clone();
        thread::spawn(move || {
            *state.0.lock().unwrap() = true;
            state.1.notify_one();
        })
    };
    let guard = state.1.wait_while(state.0.lock().unwrap(), |ready| !*ready);
    assert!(*guard.unwrap());
    setter.join().unwrap();
}

/// Several waiters, one `notify_all`.
fn condvar_notify_all() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let state = state.clone();
            thread::spawn(move || {
                let mut ready = state.0.lock().unwrap();
                while !*ready {
                    ready = state.1.wait(ready).unwrap();
                }
            })
        })
        .collect();
    *state.0.lock().unwrap() = true;
    state.1.notify_all();
    for waiter in waiters {
        waiter.join().unwrap();
    }
}

/// A timed wait in a loop that re-checks its condition, as std's documentation recommends.
fn condvar_wait_timeout_loop() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let setter = {
        let state = state.clone();
        thread::spawn(move || {
            *state.0.lock().unwrap() = true;
            state.1.notify_one();
        })
    };
    let mut ready = state.0.lock().unwrap();
    while !*ready {
        ready = state
            .1
            .wait_timeout(ready, Duration::from_millis(10))
            .unwrap()
            .0;
    }
    drop(ready);
    setter.join().unwrap();
}

fn channel_producer_consumer() {
    let (sender, receiver) = mpsc::channel();
    let producers: Vec<_> = (0..2)
        .map(|id| {
            let sender = sender.clone();
            thread::spawn(move || sender.send(id).unwrap())
        })
        .collect();
    drop(sender);
    let mut received: Vec<_> = receiver.iter().collect();
    received.sort();
    assert_eq!(received, vec![0, 1]);
    for producer in producers {
        producer.join().unwrap();
    }
}

fn rendezvous_channel() {
    let (sender, receiver) = mpsc::sync_channel(0);
    let producer = thread::spawn(move || {
        sender.send(1).unwrap();
        sender.send(2).unwrap();
    });
    assert_eq!(receiver.recv().unwrap(), 1);
    assert_eq!(receiver.recv().unwrap(), 2);
    producer.join().unwrap();
}

/// A receive with a timeout in a loop that tolerates timing out.
fn recv_timeout_loop() {
    let (sender, receiver) = mpsc::channel();
    let producer = thread::spawn(move || sender.send(7).unwrap());
    let value = loop {
        match receiver.recv_timeout(Duration::from_millis(5)) {
            Ok(value) => break value,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the producer hung up first"),
        }
    };
    assert_eq!(value, 7);
    producer.join().unwrap();
}

fn barrier_phases() {
    let barrier = Arc::new(Barrier::new(3));
    let arrived = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (barrier, arrived) = (barrier.clone(), arrived.clone());
            thread::spawn(move || {
                arrived.fetch_add(1, Ordering::SeqCst);
                barrier.wait();
            })
        })
        .collect();
    arrived.fetch_add(1, Ordering::SeqCst);
    barrier.wait();
    assert_eq!(arrived.load(Ordering::SeqCst), 3);
    for worker in workers {
        worker.join().unwrap();
    }
}

fn once_initialises_once() {
    let once = Arc::new(Once::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (once, runs) = (once.clone(), runs.clone());
            thread::spawn(move || {
                once.call_once(|| {
                    runs.fetch_add(1, Ordering::SeqCst);
                });
                assert_eq!(runs.load(Ordering::SeqCst), 1);
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

fn once_lock_get_or_init() {
    let cell = Arc::new(OnceLock::new());
    let workers: Vec<_> = (0..2)
        .map(|id| {
            let cell = cell.clone();
            thread::spawn(move || *cell.get_or_init(|| id))
        })
        .collect();
    let values: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(values[0], values[1], "both threads see the one value");
}

/// `park` in a loop that re-checks its condition, so a spurious wake-up is harmless.
fn park_unpark_with_flag() {
    let ready = Arc::new(AtomicBool::new(false));
    let parker = {
        let ready = ready.clone();
        thread::spawn(move || {
            while !ready.load(Ordering::SeqCst) {
                thread::park();
            }
        })
    };
    ready.store(true, Ordering::SeqCst);
    parker.thread().unpark();
    parker.join().unwrap();
}

fn scoped_threads_borrow() {
    let mut values = [1, 2, 3];
    let total = AtomicUsize::new(0);
    thread::scope(|scope| {
        for value in &values {
            let total = &total;
            scope.spawn(move || total.fetch_add(*value, Ordering::SeqCst));
        }
    });
    values[0] = 0;
    assert_eq!(total.load(Ordering::SeqCst), 6);
    assert_eq!(values[0], 0);
}

fn join_returns_value() {
    let worker = thread::spawn(|| 40 + 2);
    assert_eq!(worker.join().unwrap(), 42);
}

fn try_lock_retry() {
    let data = Arc::new(Mutex::new(0));
    let other = {
        let data = data.clone();
        thread::spawn(move || *data.lock().unwrap() += 1)
    };
    loop {
        if let Ok(mut guard) = data.try_lock() {
            *guard += 1;
            break;
        }
        thread::yield_now();
    }
    other.join().unwrap();
    assert_eq!(*data.lock().unwrap(), 2);
}

fn mutex_into_inner_after_join() {
    let data = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..2)
        .map(|id| {
            let data = data.clone();
            thread::spawn(move || data.lock().unwrap().push(id))
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let data = Arc::try_unwrap(data).expect("the last reference");
    let mut values = data.into_inner().unwrap();
    values.sort();
    assert_eq!(values, vec![0, 1]);
}

fn arc_dropped_by_last_owner() {
    let shared = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let shared = shared.clone();
            thread::spawn(move || drop(shared))
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(Arc::strong_count(&shared), 1);
}

fn thread_names_and_current() {
    let worker = thread::Builder::new()
        .name("worker".to_string())
        .spawn(|| thread::current().name().map(str::to_string))
        .unwrap();
    assert_eq!(worker.join().unwrap().as_deref(), Some("worker"));
    assert_eq!(thread::current().name(), Some("main"));
}

interleave::thread_local! {
    static VISITS: std::cell::Cell<u32> = std::cell::Cell::new(0);
}

/// Thread-local values are per thread.
fn thread_local_per_thread() {
    let worker = thread::spawn(|| {
        VISITS.with(|v| v.set(v.get() + 1));
        VISITS.with(|v| v.get())
    });
    VISITS.with(|v| v.set(v.get() + 10));
    assert_eq!(worker.join().unwrap(), 1);
    assert_eq!(VISITS.with(|v| v.get()), 10);
}

/// Two locks always taken in the same order.
fn consistent_lock_order() {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let worker = {
        let (a, b) = (a.clone(), b.clone());
        thread::spawn(move || {
            let _a = a.lock().unwrap();
            *b.lock().unwrap() += 1;
        })
    };
    {
        let _a = a.lock().unwrap();
        *b.lock().unwrap() += 1;
    }
    worker.join().unwrap();
    assert_eq!(*b.lock().unwrap(), 2);
}

interleave::lazy_static! {
    /// Shared by every test of this file that runs `lazy_static_counter`, which cargo runs in
    /// parallel; each execution gets its own value.
    static ref SHARED_TOTAL: Mutex<u64> = Mutex::new(0);
    static ref SHARED_INIT: Once = Once::new();
}

/// Two threads add to a `lazy_static!` counter and initialise through a `lazy_static!` `Once`:
/// the statics a test suite shares between its tests, each starting fresh in every execution.
fn lazy_static_counter() {
    let worker = thread::spawn(|| {
        SHARED_INIT.call_once(|| {});
        *SHARED_TOTAL.lock().unwrap() += 1;
    });
    SHARED_INIT.call_once(|| {});
    *SHARED_TOTAL.lock().unwrap() += 1;
    worker.join().unwrap();
    assert_eq!(*SHARED_TOTAL.lock().unwrap(), 2);
}

const CORRECT: &[(&str, fn())] = &[
    ("lazy_static_counter", lazy_static_counter),
    ("spin_wait_two_threads", spin_wait_two_threads),
    ("spin_wait_three_threads", spin_wait_three_threads),
    (
        "spin_wait_with_spin_loop_hint",
        spin_wait_with_spin_loop_hint,
    ),
    ("spin_lock_counter", spin_lock_counter),
    ("sleep_as_delay", sleep_as_delay),
    ("sleep_polling_loop", sleep_polling_loop),
    ("poisoning_handled", poisoning_handled),
    (
        "spawned_panic_observed_by_join",
        spawned_panic_observed_by_join,
    ),
    ("pool_joins_in_drop", pool_joins_in_drop),
    (
        "deep_recursion_with_raised_stack",
        deep_recursion_with_raised_stack,
    ),
    ("mutex_counter", mutex_counter),
    ("atomic_counter", atomic_counter),
    ("rwlock_readers_and_writer", rwlock_readers_and_writer),
    ("condvar_producer_consumer", condvar_producer_consumer),
    ("condvar_wait_while", condvar_wait_while),
    ("condvar_notify_all", condvar_notify_all),
    ("condvar_wait_timeout_loop", condvar_wait_timeout_loop),
    ("channel_producer_consumer", channel_producer_consumer),
    ("rendezvous_channel", rendezvous_channel),
    ("recv_timeout_loop", recv_timeout_loop),
    ("barrier_phases", barrier_phases),
    ("once_initialises_once", once_initialises_once),
    ("once_lock_get_or_init", once_lock_get_or_init),
    ("park_unpark_with_flag", park_unpark_with_flag),
    ("scoped_threads_borrow", scoped_threads_borrow),
    ("join_returns_value", join_returns_value),
    ("try_lock_retry", try_lock_retry),
    ("mutex_into_inner_after_join", mutex_into_inner_after_join),
    ("arc_dropped_by_last_owner", arc_dropped_by_last_owner),
    ("thread_names_and_current", thread_names_and_current),
    ("thread_local_per_thread", thread_local_per_thread),
    ("consistent_lock_order", consistent_lock_order),
];

/// Every strategy runs every correct program and reports nothing.
#[test]
fn no_strategy_reports_anything_on_correct_programs() {
    let executions = budget();
    let mut false_reports = Vec::new();
    let only = std::env::var("INTERLEAVE_STD_PROGRAMS_SKIP").unwrap_or_default();
    for (name, program) in CORRECT
        .iter()
        .filter(|(name, _)| !only.split(',').any(|s| s == *name))
    {
        for spec in &strategies() {
            let report = explore(spec, executions, *program);
            if let Some(failure) = report.first_failure() {
                let text = failure.to_string();
                let first_line = text.lines().next().unwrap_or_default().trim().to_string();
                false_reports.push((format!("{name} under {spec}: {first_line}"), text));
            }
        }
    }
    if let Some((_, first)) = false_reports.first() {
        let summary: Vec<_> = false_reports
            .iter()
            .map(|(line, _)| line.as_str())
            .collect();
        panic!(
            "{} false reports:\n{}\n\nthe first in full:\n{first}",
            false_reports.len(),
            summary.join("\n")
        );
    }
}

/// The statics of a suite whose tests cargo runs in parallel: several OS threads explore the
/// program that uses `lazy_static!` values at once, under every strategy, and nothing is
/// reported.
#[test]
fn statics_shared_by_parallel_tests_report_nothing() {
    let executions = budget().min(300);
    std::thread::scope(|scope| {
        let explorers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(move || {
                    strategies()
                        .iter()
                        .filter_map(|spec| {
                            let report = explore(spec, executions, lazy_static_counter);
                            report.first_failure().map(|f| format!("{spec}: {f}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for explorer in explorers {
            let reports = explorer.join().expect("the explorer thread runs");
            assert!(reports.is_empty(), "{}", reports.join("\n"));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Buggy programs whose bugs need a behaviour std allows and interleave used to rule out.

/// Assumes a 10 ms sleep is long enough for the worker to finish: a sleep may end at any time.
fn early_wake_from_sleep() {
    let done = Arc::new(AtomicBool::new(false));
    let worker = {
        let done = done.clone();
        thread::spawn(move || done.store(true, Ordering::SeqCst))
    };
    thread::sleep(Duration::from_millis(10));
    assert!(
        done.load(Ordering::SeqCst),
        "the worker had not finished after the sleep"
    );
    worker.join().unwrap();
}

/// Assumes `notify_one` wakes the thread that waited longest. Thread 1 waits for turn 1, thread
/// 2 (which waits only once thread 1 is waiting) for turn 2; the main thread gives turn 1 and
/// notifies one waiter. If thread 2 is woken, it goes back to waiting and thread 1 never wakes.
fn notify_one_assumed_fifo() {
    let state = Arc::new((Mutex::new((0u32, 0u32)), Condvar::new()));
    let first = {
        let state = state.clone();
        thread::spawn(move || {
            let (lock, turn_changed) = &*state;
            let mut guard = lock.lock().unwrap();
            guard.0 += 1;
            while guard.1 != 1 {
                guard = turn_changed.wait(guard).unwrap();
            }
        })
    };
    let second = {
        let state = state.clone();
        thread::spawn(move || {
            let (lock, turn_changed) = &*state;
            loop {
                let mut guard = lock.lock().unwrap();
                if guard.0 == 1 {
                    guard.0 += 1;
                    while guard.1 != 2 {
                        guard = turn_changed.wait(guard).unwrap();
                    }
                    return;
                }
                drop(guard);
                thread::yield_now();
            }
        })
    };
    let (lock, turn_changed) = &*state;
    loop {
        let mut guard = lock.lock().unwrap();
        if guard.0 == 2 {
            guard.1 = 1;
            turn_changed.notify_one();
            break;
        }
        drop(guard);
        thread::yield_now();
    }
    first.join().unwrap();
    lock.lock().unwrap().1 = 2;
    turn_changed.notify_one();
    second.join().unwrap();
}

/// A transfer that a concurrent cancellation can interrupt halfway; the program ignores the
/// poisoned lock and reads a half-done transfer.
fn poisoning_ignored() {
    let accounts = Arc::new(Mutex::new((100i64, 0i64)));
    let cancelled = Arc::new(AtomicBool::new(false));
    let transfer = {
        let (accounts, cancelled) = (accounts.clone(), cancelled.clone());
        thread::spawn(move || {
            let mut guard = accounts.lock().unwrap();
            guard.0 -= 10;
            if cancelled.load(Ordering::SeqCst) {
                panic!("the transfer was cancelled halfway");
            }
            guard.1 += 10;
        })
    };
    cancelled.store(true, Ordering::SeqCst);
    let _ = transfer.join();
    let guard = accounts
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    assert_eq!(guard.0 + guard.1, 100, "money vanished");
}

/// Each buggy program with the message its failure must carry: the program's own assertion,
/// not a panic the program handled.
const BUGGY: &[(&str, fn(), &str)] = &[
    (
        "early_wake_from_sleep",
        early_wake_from_sleep,
        "the worker had not finished after the sleep",
    ),
    (
        "notify_one_assumed_fifo",
        notify_one_assumed_fifo,
        "deadlock",
    ),
    ("poisoning_ignored", poisoning_ignored, "money vanished"),
];

/// Waits for a flag with `if` instead of `while`: a spurious wake-up (which std allows) lets it
/// go on before the flag is set.
fn spurious_wakeup_with_if() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let setter = {
        let state = state.clone();
        thread::spawn(move || {
            *state.0.lock().unwrap() = true;
            state.1.notify_one();
        })
    };
    let mut ready = state.0.lock().unwrap();
    if !*ready {
        ready = state.1.wait(ready).unwrap();
    }
    assert!(*ready, "woke up before the flag was set");
    drop(ready);
    setter.join().unwrap();
}

/// The same wait with `while`: correct whatever wakes it.
fn spurious_wakeup_with_while() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let setter = {
        let state = state.clone();
        thread::spawn(move || {
            *state.0.lock().unwrap() = true;
            state.1.notify_one();
        })
    };
    let mut ready = state.0.lock().unwrap();
    while !*ready {
        ready = state.1.wait(ready).unwrap();
    }
    drop(ready);
    setter.join().unwrap();
}

/// With spurious wake-ups on (`Builder::spurious_wakeups`), the default strategy finds the
/// `if`-instead-of-`while` wait; every strategy reports nothing on the `while` twin and on the
/// correct programs that wait on a condition variable or park.
#[test]
fn spurious_wakeups_find_a_wait_without_a_loop_and_nothing_else() {
    let spurious = |spec: Option<&str>, executions: u64, program: fn()| {
        let mut builder = Builder::new()
            .ignore_environment()
            .spurious_wakeups(true)
            .executions(executions);
        if let Some(spec) = spec {
            builder = builder.strategy(spec.parse().expect("a valid spec"));
        }
        builder.explore(program).expect("the exploration runs")
    };
    let report = spurious(None, 1_000, spurious_wakeup_with_if);
    found_and_replayed(
        &report,
        "woke up before the flag was set",
        spurious_wakeup_with_if,
    );
    let without = Builder::new()
        .ignore_environment()
        .explore(spurious_wakeup_with_if)
        .expect("the exploration runs");
    assert!(without.is_ok(), "not without spurious wake-ups: {without}");
    let waiting: &[(&str, fn())] = &[
        ("spurious_wakeup_with_while", spurious_wakeup_with_while),
        ("condvar_producer_consumer", condvar_producer_consumer),
        ("condvar_wait_while", condvar_wait_while),
        ("condvar_notify_all", condvar_notify_all),
        ("park_unpark_with_flag", park_unpark_with_flag),
    ];
    let mut false_reports = Vec::new();
    for (name, program) in waiting {
        for spec in &strategies() {
            let report = spurious(Some(spec), budget().min(300), *program);
            if let Some(failure) = report.first_failure() {
                false_reports.push(format!("{name} under {spec}: {failure}"));
            }
        }
    }
    assert!(false_reports.is_empty(), "{}", false_reports.join("\n"));
}

/// The default strategy and budget find every bug that needs a newly allowed behaviour, and
/// report the program's own failure.
#[test]
fn the_default_strategy_finds_bugs_that_need_std_freedoms() {
    let mut missed = Vec::new();
    for (name, program, expected) in BUGGY {
        let report = Builder::new()
            .ignore_environment()
            .explore(*program)
            .expect("the exploration runs");
        match report.first_failure() {
            None => missed.push(format!("{name}: not found")),
            Some(failure) if !failure.to_string().contains(expected) => {
                missed.push(format!("{name}: reported without {expected:?}:\n{failure}"))
            }
            Some(_) => {}
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n\n"));
}

/// Parks once and trusts that it was unparked: std's `park` may return spuriously.
fn park_once_and_trust_it() {
    let ready = Arc::new(AtomicBool::new(false));
    let parker = {
        let ready = ready.clone();
        thread::spawn(move || {
            thread::park();
            ready.load(Ordering::SeqCst)
        })
    };
    ready.store(true, Ordering::SeqCst);
    parker.thread().unpark();
    let saw_ready = parker.join().unwrap();
    assert!(saw_ready, "returned from park before the unpark");
}

/// `Builder::spurious_park_wakeups` lets a thread's own park return without an unpark, so
/// `dfs:yields=2` finds the park trusted without a loop (and the token replays it), while a
/// condition variable's `if`-instead-of-`while` wait, which needs a spurious wake-up of the
/// wait, stays clean; the parks of async tasks between polls do not wake spuriously (the async
/// program is exhausted in as many executions as without the setting). Plain `dfs` does not
/// find the bug: a spurious wake-up counts as a timeout, after which its yield rule makes the
/// parker wait for the main thread's store.
#[test]
fn spurious_park_wakeups_wake_parks_only() {
    let report = explore_with_spurious_parks(true, park_once_and_trust_it);
    found_and_replayed(
        &report,
        "returned from park before the unpark",
        park_once_and_trust_it,
    );
    assert!(explore_with_spurious_parks(false, park_once_and_trust_it).is_ok());
    assert!(explore_with_spurious_parks(true, park_unpark_with_flag).is_ok());
    assert!(explore_with_spurious_parks(true, spurious_wakeup_with_if).is_ok());
    let task = || {
        interleave::future::block_on(async {
            let task = interleave::future::spawn(async { interleave::future::yield_now().await });
            task.await.unwrap();
        })
    };
    let with = explore_with_spurious_parks(true, task);
    let without = explore_with_spurious_parks(false, task);
    assert!(with.is_ok() && without.is_ok());
    assert_eq!(with.executions, without.executions);
    // Spurious wake-ups are never promised: threads that only a spurious wake-up could let go
    // on are deadlocked, with or without the setting.
    let both_park = || {
        let parker = thread::spawn(thread::park);
        thread::park();
        parker.join().unwrap();
    };
    for park in [true, false] {
        let report = explore_with_spurious_parks(park, both_park);
        let failure = report.first_failure().expect("the parks deadlock");
        let text = failure.to_string();
        assert!(text.contains("deadlock: no thread can run"), "{text}");
        assert_eq!(text.contains("std never promises one"), park, "{text}");
    }
}

/// Explores `program` with `dfs:yields=2`, spurious park wake-ups on or off.
fn explore_with_spurious_parks(park: bool, program: impl Fn() + Sync) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("dfs:yields=2".parse().expect("a valid spec"))
        .spurious_park_wakeups(park)
        .explore(program)
        .expect("the exploration runs")
}

/// Checks that `report` failed with `message` and that its token, which carries the settings,
/// reproduces the failure of `program` without being told them.
fn found_and_replayed(report: &Report, message: &str, program: fn()) {
    let failure = report.first_failure().expect("the failure is found");
    assert!(failure.to_string().contains(message), "{failure}");
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, program)
        .expect("the token is valid");
    assert!(!replayed.is_ok(), "the token reproduces the failure");
}
