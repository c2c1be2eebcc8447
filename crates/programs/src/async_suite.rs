//! Async ports of suite bugs (issue 9): the same kinds of bug, written against
//! `interleave::future` and `interleave::time` the way tokio code is written.
//!
//! These run under interleave only: shuttle and loom have no tokio-shaped primitives or virtual
//! time, so the peer columns of `interleave bench` mark them not runnable. Each program is
//! `block_on` of an async body; its tasks are `future::spawn`ed and every task is awaited.
//!
//! - [`lost_wakeup`]: seed 002's `losenotify` with `Notify::notify_waiters`;
//! - [`check_then_act`]: seed 003's check-then-act across two critical sections, on an async
//!   `Mutex` with an `.await` in between;
//! - [`deadline_race`]: a `select` between a deadline and a message due at the same virtual
//!   instant;
//! - [`permit_leak`]: a semaphore permit lost on an early-return path, the deadlock of a
//!   resource pool.

use std::sync::Arc;
use std::time::Duration;

use interleave::future::sync::{mpsc, Mutex, Notify, Semaphore};
use interleave::future::{self, Either};
use interleave::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use interleave::time;

use super::{BugKind, Finding, Program, Variant};

/// A lost wakeup: a consumer checks a `ready` flag and, if it is not set, starts waiting for
/// the producer's `notify_waiters`; the producer sets the flag and notifies. A notification
/// that falls between the consumer's check and the start of its wait wakes nobody and is not
/// stored, so the consumer waits for ever (bug kind `Deadlock`: every task parked).
///
/// Port of seed 002's `losenotify` (a `notify` before the matching `wait`). Fixed twin: the
/// consumer creates its `Notified` before it checks the flag, which registers it for every
/// later `notify_waiters` (tokio's documented pattern).
pub fn lost_wakeup(variant: Variant) {
    future::block_on(async {
        let ready = Arc::new(AtomicBool::new(false));
        let notify = Arc::new(Notify::new());
        let consumer = {
            let (ready, notify) = (ready.clone(), notify.clone());
            future::spawn(async move {
                match variant {
                    Variant::Buggy => {
                        if !ready.load(Ordering::SeqCst) {
                            notify.notified().await;
                        }
                    }
                    Variant::Fixed => {
                        let notified = notify.notified();
                        if !ready.load(Ordering::SeqCst) {
                            notified.await;
                        }
                    }
                }
            })
        };
        ready.store(true, Ordering::SeqCst);
        notify.notify_waiters();
        consumer.await.expect("the consumer task");
    })
}

/// Two async withdrawals of 10 from a balance of 100 behind an async `Mutex`: each reads the
/// balance under one guard and writes it under another, with an `.await` between them (as code
/// that looks something up between the two does). Both read 100 and the balance ends at 90
/// (bug kind `Assertion`).
///
/// Port of the check-then-act across two critical sections of seed 003 (and seed 000's
/// account). Fixed twin: one guard covers the read and the write.
pub fn check_then_act(variant: Variant) {
    future::block_on(async {
        let balance = Arc::new(Mutex::new(100));
        let withdraw = move |balance: Arc<Mutex<i32>>| async move {
            match variant {
                Variant::Buggy => {
                    let current = *balance.lock().await;
                    future::yield_now().await; // look up the withdrawal limit
                    *balance.lock().await = current - 10;
                }
                Variant::Fixed => {
                    let mut guard = balance.lock().await;
                    future::yield_now().await; // look up the withdrawal limit
                    *guard -= 10;
                }
            }
        };
        let other = future::spawn(withdraw(balance.clone()));
        withdraw(balance.clone()).await;
        other.await.expect("the withdrawal task");
        assert_eq!(
            *balance.lock().await,
            80,
            "async check-then-act: a withdrawal was lost"
        );
    })
}

/// A supervisor waits for a worker's "done" message with a 10 ms deadline, `select`ing between
/// the channel and a sleep; the worker needs exactly 10 ms. When the deadline wins, the buggy
/// supervisor records the job as timed out and drops the channel, though the worker may already
/// have sent its message: the job is counted both done (by the worker) and timed out (bug kind
/// `Assertion`). Whether the message is there when the select runs depends on which task runs
/// first at 10 ms and which branch the select polls first, both explored choices.
///
/// Fixed twin: after the deadline the supervisor closes the channel (no message can arrive
/// afterwards) and checks it once more.
pub fn deadline_race(variant: Variant) {
    future::block_on(async {
        let sent = Arc::new(AtomicBool::new(false));
        let (done_tx, mut done_rx) = mpsc::channel::<u32>(1);
        let worker = {
            let sent = sent.clone();
            future::spawn(async move {
                time::sleep(Duration::from_millis(10)).await;
                if done_tx.send(7).await.is_ok() {
                    sent.store(true, Ordering::SeqCst);
                }
            })
        };
        let deadline = time::sleep(Duration::from_millis(10));
        let received = match future::select(done_rx.recv(), deadline).await {
            Either::Left(message) => message.is_some(),
            Either::Right(()) => match variant {
                Variant::Buggy => false,
                Variant::Fixed => {
                    done_rx.close();
                    done_rx.try_recv().is_ok()
                }
            },
        };
        drop(done_rx);
        worker.await.expect("the worker task");
        assert_eq!(
            received,
            sent.load(Ordering::SeqCst),
            "deadline race: the worker finished the job but the supervisor recorded a timeout"
        );
    })
}

/// A pool of one permit: a worker takes it and, finding its job cancelled, returns early and
/// `forget`s the permit on that path (as code that stores the permit in a struct that is then
/// leaked would), so the main task's next `acquire` waits for ever (bug kind `Deadlock`). The
/// early path runs only if the main task cancels before the worker looks.
///
/// Fixed twin: the early path drops the permit.
pub fn permit_leak(variant: Variant) {
    future::block_on(async {
        let pool = Arc::new(Semaphore::new(1));
        let cancelled = Arc::new(AtomicBool::new(false));
        let jobs = Arc::new(AtomicU32::new(0));
        let worker = {
            let (pool, cancelled, jobs) = (pool.clone(), cancelled.clone(), jobs.clone());
            future::spawn(async move {
                let permit = pool.acquire().await.expect("the pool is open");
                if cancelled.load(Ordering::SeqCst) {
                    if variant == Variant::Buggy {
                        permit.forget();
                    }
                    return;
                }
                jobs.fetch_add(1, Ordering::SeqCst);
                drop(permit);
            })
        };
        cancelled.store(true, Ordering::SeqCst);
        drop(pool.acquire().await.expect("the pool is open"));
        worker.await.expect("the worker task");
        assert!(jobs.load(Ordering::SeqCst) <= 1);
    })
}

/// The async ports, in the order above.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "async-lost-wakeup",
        origin: "async port of seed 002 losenotify (Notify)",
        bug: BugKind::Deadlock,
        summary: "notify_waiters between the consumer's flag check and its wait is lost; the consumer waits for ever",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: lost_wakeup,
    },
    Program {
        name: "async-check-then-act",
        origin: "async port of seed 003 check-then-act (Mutex)",
        bug: BugKind::Assertion,
        summary: "two withdrawals read the balance under one guard and write it under another; one is lost",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: check_then_act,
    },
    Program {
        name: "async-deadline-race",
        origin: "async: a select between a deadline and a message",
        bug: BugKind::Assertion,
        summary: "the message and the deadline are due at the same virtual instant; when the deadline wins, a finished job is recorded as timed out",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: deadline_race,
    },
    Program {
        name: "async-permit-leak",
        origin: "async: a semaphore permit leaked on early return",
        bug: BugKind::Deadlock,
        summary: "a cancelled worker forgets its permit; the next acquire waits for ever",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: permit_leak,
    },
];
