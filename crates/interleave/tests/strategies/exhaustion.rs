//! How many executions `dpor` needs to exhaust small programs whose number of Mazurkiewicz
//! traces (schedules up to the order of independent steps) is known: with sleep sets and
//! source sets it runs one execution per trace on all of them, where barriers, channels with
//! several senders and self-waking tasks used to blow the search up; and it still finds the
//! order-dependent bugs of their buggy twins.

use crate::helpers;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::mpsc;
use interleave::sync::{Arc, Barrier, Mutex};
use interleave::{future, thread, MemoryModel, Report};

/// Explores `body` with `spec` under sequential consistency (so loads read the latest store
/// and every execution is a schedule), with a budget far above what exhausting takes.
fn exhaust(spec: &str, seed: u64, body: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .memory(MemoryModel::SequentiallyConsistent)
        .seed(seed)
        .executions(1_000_000)
        .explore(body)
        .unwrap()
}

/// The number of executions that exhausted the search space (and that it was exhausted).
fn executions_to_exhaust(spec: &str, body: impl Fn() + Sync) -> u64 {
    let report = exhaust(spec, 0, body);
    assert!(report.is_ok(), "{spec}: {report}");
    assert_eq!(
        report.stat("covered"),
        Some("the whole search space"),
        "{spec}: {report}"
    );
    report.executions
}

/// `threads` threads (the main thread among them) pass a barrier `rounds` times; with
/// `check_leader`, the main thread asserts it is never the leader of the first round.
fn barrier(threads: usize, rounds: usize, check_leader: bool) {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (1..threads)
        .map(|_| {
            let barrier = barrier.clone();
            thread::spawn(move || {
                for _ in 0..rounds {
                    barrier.wait();
                }
            })
        })
        .collect();
    for round in 0..rounds {
        let leader = barrier.wait().is_leader();
        assert!(
            !(check_leader && round == 0 && leader),
            "the main thread led the first round"
        );
    }
    for handle in handles {
        handle.join().unwrap();
    }
}

/// `senders` threads send their number to the main thread, which receives until the channel
/// disconnects; with `expect_order`, it asserts the messages came in spawn order.
fn senders(senders: usize, expect_order: bool) {
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..senders)
        .map(|i| {
            let tx = tx.clone();
            thread::spawn(move || tx.send(i).unwrap())
        })
        .collect();
    drop(tx);
    let mut received: Vec<usize> = rx.iter().collect();
    if !expect_order {
        received.sort_unstable();
    }
    assert_eq!(
        received,
        (0..senders).collect::<Vec<_>>(),
        "messages out of order"
    );
    for handle in handles {
        handle.join().unwrap();
    }
}

/// A future that wakes its own task and returns `Pending` `wakes` times before it is ready.
struct WakeSelf(usize);

impl Future for WakeSelf {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        context.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `tasks` tasks that each wake themselves `wakes` times, awaited by the main task.
fn self_waking(tasks: usize, wakes: usize) {
    future::block_on(async move {
        let handles: Vec<_> = (0..tasks).map(|_| future::spawn(WakeSelf(wakes))).collect();
        for handle in handles {
            handle.await.unwrap();
        }
    });
}

/// Each of `writers` threads stores its number to `x`: the stores are pairwise dependent, so
/// there are `writers!` traces.
fn writers(writers: u64) {
    let x = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (1..=writers)
        .map(|id| {
            let x = x.clone();
            thread::spawn(move || x.store(id, Ordering::SeqCst))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Two threads each write `x` once, then read `y`, which nobody writes: the two writes are
/// dependent and the reads independent of everything, so there are 2 traces.
fn write_x_then_read_y() {
    let x = Arc::new(AtomicU64::new(0));
    let y = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (1..=2)
        .map(|id| {
            let (x, y) = (x.clone(), y.clone());
            thread::spawn(move || {
                x.store(id, Ordering::SeqCst);
                y.load(Ordering::SeqCst)
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Store buffering: one thread writes `x` then reads `y`, the other writes `y` then reads
/// `x`. Each read is before or after the other thread's write, 4 combinations, of which
/// "both reads first" is impossible (it would order each write before itself): 3 traces.
fn store_buffering() {
    let x = Arc::new(AtomicU64::new(0));
    let y = Arc::new(AtomicU64::new(0));
    let first = {
        let (x, y) = (x.clone(), y.clone());
        thread::spawn(move || {
            x.store(1, Ordering::SeqCst);
            y.load(Ordering::SeqCst)
        })
    };
    y.store(1, Ordering::SeqCst);
    let seen_x = x.load(Ordering::SeqCst);
    let seen_y = first.join().unwrap();
    assert!(seen_x == 1 || seen_y == 1, "both reads missed both writes");
}

/// `threads` threads each add to a counter under one mutex: one trace per order of the
/// critical sections, `threads!`.
fn locked_increments(threads: usize) {
    let counter = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || *counter.lock().unwrap() += 1)
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), threads);
}

/// `dpor` runs exactly one execution per Mazurkiewicz trace of programs whose trace count is
/// known by hand (see each program), and `dfs` runs more.
#[test]
fn dpor_runs_one_execution_per_trace_of_small_programs() {
    let programs: [(&str, u64, fn()); 6] = [
        ("two writers of x", 2, || writers(2)),
        ("three writers of x", 6, || writers(3)),
        ("write x then read y, twice", 2, write_x_then_read_y),
        ("store buffering", 3, store_buffering),
        ("two locked increments", 2, || locked_increments(2)),
        ("three locked increments", 6, || locked_increments(3)),
    ];
    for (name, traces, body) in programs {
        let dpor = executions_to_exhaust("dpor", body);
        let dfs = executions_to_exhaust("dfs", body);
        println!("{name}: {traces} traces, dpor {dpor} executions, dfs {dfs}");
        assert_eq!(dpor, traces, "{name}");
        assert!(dfs > dpor, "{name}: dfs {dfs}");
    }
}

/// Barriers, channels with several senders and self-waking tasks used to blow the search up
/// (a barrier of 4 threads took 2,958 executions, 4 senders did not finish within 200,000,
/// 2 tasks waking themselves twice took 91); now only the arrival that fills a barrier
/// generation (which decides the leader) is ordered against the others, and every order of
/// sends (which decides the order of messages) runs once, `n!`, and nothing else is ordered.
/// Without wakeup trees the search is not optimal: a barrier of `n` has `n` traces per
/// generation and takes at most `n!/2` executions for `n >= 3`. The tasks' wakes of
/// themselves commute; their completions each wake the main task, in `3!` orders.
#[test]
fn dpor_exhausts_barriers_channels_and_self_waking_tasks_in_one_execution_per_trace() {
    let programs: [(&str, u64, fn()); 9] = [
        ("barrier of 3", 6, || barrier(3, 1, false)),
        ("barrier of 4", 12, || barrier(4, 1, false)),
        // shuttle's `barrier_test_many_ok` has this shape; its DFS runs 55,530 executions.
        ("barrier of 4, 4 rounds", 2_000, || barrier(4, 4, false)),
        ("barrier of 2, 3 rounds", 8, || barrier(2, 3, false)),
        ("barrier of 3, 2 rounds", 24, || barrier(3, 2, false)),
        ("3 senders", 6, || senders(3, false)),
        ("4 senders", 24, || senders(4, false)),
        ("5 senders", 120, || senders(5, false)),
        ("3 tasks waking themselves twice", 6, || self_waking(3, 2)),
    ];
    for (name, bound, body) in programs {
        let dpor = executions_to_exhaust("dpor", body);
        println!("{name}: dpor {dpor} executions (bound {bound})");
        assert!(dpor <= bound, "{name}: {dpor} executions");
    }
    // For scale: plain depth-first search on the barrier of 4.
    let dfs = executions_to_exhaust("dfs", || barrier(4, 1, false));
    println!("barrier of 4: dfs {dfs} executions");
    assert!(dfs > 10_000);
}

/// The reductions keep the bugs that depend on the orders they keep: a receiver that expects
/// messages in spawn order and a thread that must not lead a barrier are found on every one of
/// 10 seeds within the executions that exhaust the fixed twins, which are clean.
#[test]
fn dpor_finds_the_order_dependent_bugs_and_exhausts_the_fixed_twins() {
    // (program, the failure's message, the executions that exhaust the fixed twin, body)
    type Buggy = (&'static str, &'static str, u64, fn());
    let buggy: [Buggy; 2] = [
        ("3 senders", "messages out of order", 6, || senders(3, true)),
        (
            "barrier of 3",
            "the main thread led the first round",
            6,
            || barrier(3, 1, true),
        ),
    ];
    for (name, message, budget, body) in buggy {
        for seed in 0..10 {
            let report = exhaust("dpor", seed, body);
            let failure = report.first_failure().expect("the bug is found");
            assert!(failure.message.contains(message), "{name}: {failure}");
            assert!(failure.execution < budget, "{name}, seed {seed}");
        }
    }
    assert_eq!(executions_to_exhaust("dpor", || senders(3, false)), 6);
    assert_eq!(executions_to_exhaust("dpor", || barrier(3, 1, false)), 6);
}

/// A program and its body, which returns what it observed.
type Observing = (&'static str, fn() -> String);

/// The outcomes `spec` reaches on `body`, which returns what it observed, when it exhausts it.
fn outcomes(spec: &str, body: fn() -> String) -> std::collections::BTreeSet<String> {
    let (seen, report) = sampled_outcomes(spec, 1_000_000, body);
    assert_eq!(
        report.stat("covered"),
        Some("the whole search space"),
        "{spec}"
    );
    seen
}

/// The outcomes `spec` reaches on `body` within `executions`, and the report.
fn sampled_outcomes(
    spec: &str,
    executions: u64,
    body: fn() -> String,
) -> (std::collections::BTreeSet<String>, Report) {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let report = helpers::builder(spec)
        .memory(MemoryModel::SequentiallyConsistent)
        .executions(executions)
        .explore(|| {
            let outcome = body();
            seen.lock().unwrap().insert(outcome);
        })
        .unwrap();
    assert!(report.is_ok(), "{spec}: {report}");
    (seen.into_inner().unwrap(), report)
}

/// Two senders on a channel of capacity 1; the receiver polls with `try_recv` once, then
/// receives what is left: the outcome is the poll's result and the order of messages.
fn bounded_channel_with_a_poll() -> String {
    let (tx, rx) = mpsc::sync_channel(1);
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let tx = tx.clone();
            thread::spawn(move || tx.send(i).unwrap())
        })
        .collect();
    drop(tx);
    let polled = format!("{:?}", rx.try_recv());
    let rest: Vec<i32> = rx.iter().collect();
    for handle in handles {
        handle.join().unwrap();
    }
    format!("{polled} then {rest:?}")
}

/// A sender that sends once and drops its end, and a receiver that polls twice: empty,
/// the message, or disconnected, in every combination the schedule allows.
fn polls_around_a_sender() -> String {
    let (tx, rx) = mpsc::channel();
    let sender = thread::spawn(move || tx.send(7).unwrap());
    let first = format!("{:?}", rx.try_recv());
    let second = format!("{:?}", rx.try_recv());
    sender.join().unwrap();
    format!("{first}, {second}")
}

/// Three threads at a barrier of 3, one of them a spawned thread that also polls whether
/// the main thread has arrived: the outcome is who led and what the poll saw.
fn barrier_leader_and_a_flag() -> String {
    let barrier = Arc::new(Barrier::new(3));
    let arrived = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (1..3)
        .map(|id| {
            let (barrier, arrived) = (barrier.clone(), arrived.clone());
            thread::spawn(move || {
                let saw = arrived.load(Ordering::SeqCst);
                (barrier.wait().is_leader().then_some(id), saw)
            })
        })
        .collect();
    arrived.store(1, Ordering::SeqCst);
    let mut leader = barrier.wait().is_leader().then_some(0);
    let mut seen = Vec::new();
    for handle in handles {
        let (led, saw) = handle.join().unwrap();
        leader = leader.or(led);
        seen.push(saw);
    }
    format!("leader {leader:?}, saw {seen:?}")
}

/// A thread parks until a flag is set; the main thread sets it and unparks the thread,
/// while a third thread unparks it too: the outcome is how many times it parked.
fn park_until_flag() -> String {
    let flag = Arc::new(AtomicU64::new(0));
    let parker = {
        let flag = flag.clone();
        thread::spawn(move || {
            let mut parks = 0;
            while flag.load(Ordering::SeqCst) == 0 {
                thread::park();
                parks += 1;
            }
            parks
        })
    };
    let other = {
        let parker = parker.thread().clone();
        thread::spawn(move || parker.unpark())
    };
    flag.store(1, Ordering::SeqCst);
    parker.thread().unpark();
    other.join().unwrap();
    format!("parked {} times", parker.join().unwrap())
}

/// Two threads race to initialise a `Once` and then read a lock-protected log the winner
/// wrote to: the outcome is who initialised and what each saw.
fn once_and_a_lock() -> String {
    let once = Arc::new(interleave::sync::Once::new());
    let log = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..2)
        .map(|id| {
            let (once, log) = (once.clone(), log.clone());
            thread::spawn(move || {
                once.call_once(|| log.lock().unwrap().push(id));
                log.lock().unwrap().len()
            })
        })
        .collect();
    let seen: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winner = log.lock().unwrap().clone();
    format!("{winner:?} {seen:?}")
}

/// A thread waits for a `Once` whose initialiser may panic the first time, while two others
/// try to run it: whether the wait panicked, who ran the initialiser, and what the waiter saw.
fn once_wait_and_a_panic() -> String {
    let once = Arc::new(interleave::sync::Once::new());
    let log = Arc::new(Mutex::new(Vec::new()));
    let runners: Vec<_> = (0..2)
        .map(|id| {
            let (once, log) = (once.clone(), log.clone());
            thread::spawn(move || {
                let _ = std::panic::catch_unwind(|| {
                    once.call_once_force(|state| {
                        log.lock().unwrap().push(id);
                        if id == 0 && !state.is_poisoned() {
                            panic!("first try fails");
                        }
                    })
                });
            })
        })
        .collect();
    let waited = std::panic::catch_unwind(|| once.wait()).is_ok();
    let seen = log.lock().unwrap().clone();
    for runner in runners {
        runner.join().unwrap();
    }
    format!("{waited} {seen:?} {:?}", log.lock().unwrap())
}

/// A writer downgrades to a reader while another writer and a reader wait: what the reader
/// read and the order of the writes.
fn downgrade_and_a_writer() -> String {
    let lock = Arc::new(interleave::sync::RwLock::new(Vec::new()));
    let (writer, reader) = (lock.clone(), lock.clone());
    let other = thread::spawn(move || writer.write().unwrap().push(2));
    let read = thread::spawn(move || reader.read().unwrap().clone());
    let mut guard = lock.write().unwrap();
    guard.push(1);
    let guard = interleave::sync::RwLockWriteGuard::downgrade(guard);
    let mine = guard.clone();
    drop(guard);
    other.join().unwrap();
    format!("{mine:?} {:?}", read.join().unwrap())
}

/// A rendezvous channel with two senders, and a receiver that waits for a message with a
/// timeout before receiving the rest: whether it timed out and the order of messages.
fn rendezvous_and_a_timeout() -> String {
    let (tx, rx) = mpsc::sync_channel(0);
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let tx = tx.clone();
            thread::spawn(move || tx.send(i).unwrap())
        })
        .collect();
    drop(tx);
    let first = format!(
        "{:?}",
        rx.recv_timeout(std::time::Duration::from_millis(10))
    );
    let rest: Vec<i32> = rx.iter().collect();
    for handle in handles {
        handle.join().unwrap();
    }
    format!("{first} then {rest:?}")
}

/// A receiver, and a sender that first offers a message with `try_send` on a rendezvous
/// channel and sends another if the offer was refused: the offer is taken exactly when the
/// receiver already waits in `recv`, which depends on whether the receiver reached it, not on a
/// step of the channel. `from_main`: the main thread is the sender (it offers before the
/// receiver starts in the first schedule), otherwise a second spawned thread is (it offers
/// after the receiver waits).
fn rendezvous_offer(from_main: bool) -> String {
    let (tx, rx) = mpsc::sync_channel(0);
    let receiver = thread::spawn(move || rx.recv().unwrap());
    let offer = move || {
        let taken = tx.try_send(1).is_ok();
        if !taken {
            tx.send(2).unwrap();
        }
        taken
    };
    let taken = if from_main {
        offer()
    } else {
        thread::spawn(offer).join().unwrap()
    };
    let received = receiver.join().unwrap();
    format!("{taken} {received}")
}

/// Two readers and a writer of an `RwLock`, one reader also reading an atomic the writer
/// sets after writing: what each reader saw.
fn readers_and_a_writer() -> String {
    let lock = Arc::new(interleave::sync::RwLock::new(0));
    let flag = Arc::new(AtomicU64::new(0));
    let writer = {
        let (lock, flag) = (lock.clone(), flag.clone());
        thread::spawn(move || {
            *lock.write().unwrap() = 1;
            flag.store(1, Ordering::SeqCst);
        })
    };
    let reader = {
        let lock = lock.clone();
        thread::spawn(move || *lock.read().unwrap())
    };
    let flag_seen = flag.load(Ordering::SeqCst);
    let mine = *lock.read().unwrap();
    let theirs = reader.join().unwrap();
    writer.join().unwrap();
    format!("{flag_seen} {mine} {theirs}")
}

/// A worker stores to an atomic; the main thread asks whether it has finished, then reads
/// the atomic.
fn is_finished_and_a_store() -> String {
    let x = Arc::new(AtomicU64::new(0));
    let worker = {
        let x = x.clone();
        thread::spawn(move || x.store(1, Ordering::SeqCst))
    };
    let finished = worker.is_finished();
    let seen = x.load(Ordering::SeqCst);
    worker.join().unwrap();
    format!("{finished} {seen}")
}

/// A task sends on a oneshot channel, another notifies a `Notify`, and the main task races
/// the two with `select`: which won.
fn async_select() -> String {
    future::block_on(async {
        let notify = Arc::new(future::sync::Notify::new());
        let (tx, rx) = future::sync::oneshot::channel();
        let sender = future::spawn(async move { tx.send(7).is_ok() });
        let notifier = {
            let notify = notify.clone();
            future::spawn(async move { notify.notify_one() })
        };
        let winner = match future::select(rx, notify.notified()).await {
            future::Either::Left(value) => format!("rx {value:?}"),
            future::Either::Right(()) => "notify".to_string(),
        };
        let sent = sender.await.unwrap();
        notifier.await.unwrap();
        format!("{winner} {sent}")
    })
}

/// Two tasks append to a log under an async mutex: the log's order.
fn async_mutex() -> String {
    future::block_on(async {
        let log = Arc::new(future::sync::Mutex::new(Vec::new()));
        let writers: Vec<_> = (0..2)
            .map(|id| {
                let log = log.clone();
                future::spawn(async move { log.lock().await.push(id) })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        let log = log.lock().await.clone();
        format!("{log:?}")
    })
}

/// `dpor`'s finer relation on channels, barriers, parking, `Once` and locks loses nothing:
/// it reaches every outcome `dfs` reaches on programs whose outcome depends on the orders
/// the relation keeps.
#[test]
fn dpor_reaches_every_outcome_of_dfs_on_channels_barriers_parking_and_once() {
    let programs: [Observing; 12] = [
        ("rendezvous offer from the main thread", || {
            rendezvous_offer(true)
        }),
        ("rendezvous offer from a spawned thread", || {
            rendezvous_offer(false)
        }),
        ("is_finished and a store", is_finished_and_a_store),
        ("bounded channel with a poll", bounded_channel_with_a_poll),
        ("rendezvous and a timeout", rendezvous_and_a_timeout),
        ("readers and a writer", readers_and_a_writer),
        ("polls around a sender", polls_around_a_sender),
        ("barrier leader and a flag", barrier_leader_and_a_flag),
        ("park until a flag", park_until_flag),
        ("once and a lock", once_and_a_lock),
        ("once wait and a panic", once_wait_and_a_panic),
        ("downgrade and a writer", downgrade_and_a_writer),
    ];
    for (name, body) in programs {
        let dfs = outcomes("dfs", body);
        let dpor = outcomes("dpor", body);
        println!("{name}: {} outcomes: {dfs:?}", dfs.len());
        assert_eq!(dpor, dfs, "{name}");
        assert!(dfs.len() > 1, "{name}");
    }
}

/// On async programs, too large for `dfs` to exhaust, `dpor` exhausts the search and reaches
/// every outcome 20,000 random executions reach.
#[test]
fn dpor_reaches_every_outcome_random_walks_reach_on_async_programs() {
    let programs: [Observing; 2] = [("async select", async_select), ("async mutex", async_mutex)];
    for (name, body) in programs {
        let dpor = outcomes("dpor", body);
        let (random, _) = sampled_outcomes("random", 20_000, body);
        println!("{name}: dpor {dpor:?}, random {random:?}");
        assert!(dpor.is_superset(&random), "{name}");
        assert!(random.len() > 1, "{name}");
    }
}

/// The threads of an execution that stopped (here at a deadlock) are unwound, and their
/// destructors' loads read the latest store without asking the schedule. When such a load drew
/// its store from the schedule, the draw became a node of the search tree after the execution's
/// last decision: the search ran the same deadlock again for each value, and dpor's later
/// schedules that replayed such draws took them for thread decisions and diverged (st3 0.4.1's
/// loom models stopped with a "replay divergence").
#[test]
fn searches_record_no_draw_made_while_a_stopped_execution_unwinds() {
    use interleave::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    /// Loads the atomic when dropped, if `load`.
    struct Peek(Arc<AtomicUsize>, bool);
    impl Drop for Peek {
        fn drop(&mut self) {
            if self.1 {
                let _ = self.0.load(Relaxed);
            }
        }
    }
    /// Two threads take two locks in opposite orders, storing to a shared atomic between.
    fn deadlock(load: bool) {
        let x = Arc::new(AtomicUsize::new(0));
        let (a, b) = (Arc::new(Mutex::new(())), Arc::new(Mutex::new(())));
        let other = {
            let (x, a, b) = (x.clone(), a.clone(), b.clone());
            thread::spawn(move || {
                let _peek = Peek(x.clone(), load);
                x.store(1, Relaxed);
                let _a = a.lock().unwrap();
                x.store(2, Relaxed);
                let _b = b.lock().unwrap();
            })
        };
        let _peek = Peek(x.clone(), load);
        x.store(3, Relaxed);
        let held = b.lock().unwrap();
        x.store(4, Relaxed);
        drop((a.lock().unwrap(), held));
        other.join().unwrap();
    }
    for spec in ["dfs", "dpor"] {
        let failures = |load: bool| {
            let report = helpers::builder(spec)
                .executions(100_000)
                .stop_on_first_failure(false)
                .explore(move || deadlock(load))
                .unwrap();
            assert_eq!(report.stat("covered"), Some("the whole search space"));
            report.failures.len()
        };
        let without_loads = failures(false);
        assert!(without_loads > 0, "{spec}");
        assert_eq!(failures(true), without_loads, "{spec}");
    }
}
