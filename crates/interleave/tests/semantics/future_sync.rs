//! The async `RwLock` and the `mpsc` and `watch` channels: their semantics in every explored
//! interleaving, a real async bug of each found by PCT in every seed with a clean fixed twin,
//! and waiters that are cancelled without taking a wakeup meant for another task.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::helpers;
use interleave::future::sync::mpsc::error::{TryRecvError, TrySendError};
use interleave::future::sync::{mpsc, watch, Mutex, RwLock, Semaphore};
use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::Arc;
use interleave::{Builder, FailureKind, Report};

/// Explores `test` with `strategy` and asserts that no execution fails.
fn passes(strategy: &str, executions: u64, test: impl Fn() + Sync) {
    let report = helpers::builder(strategy)
        .seed(7)
        .executions(executions)
        .explore(test)
        .unwrap();
    assert!(report.is_ok(), "{strategy}: {report}");
}

/// Explores `test` with random walks and with PCT.
fn passes_everywhere(test: impl Fn() + Sync) {
    passes("random", 300, &test);
    passes("pct:d=3", 300, &test);
}

/// Polls `future` once from inside a task: a waiter that is pending has taken its place in
/// the queue when this returns.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|context: &mut Context<'_>| {
        Poll::Ready(Pin::new(&mut *future).poll(context))
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Semantics
// ---------------------------------------------------------------------------------------------

#[test]
fn a_bounded_channel_delivers_in_order_and_ends_after_the_last_sender() {
    passes_everywhere(|| {
        future::block_on(async {
            let (sender, mut receiver) = mpsc::channel(2);
            let producer = future::spawn(async move {
                for value in 0..6 {
                    sender.send(value).await.unwrap();
                }
            });
            let mut received = Vec::new();
            while let Some(value) = receiver.recv().await {
                received.push(value);
            }
            assert_eq!(received, [0, 1, 2, 3, 4, 5]);
            producer.await.unwrap();
        })
    });
}

#[test]
fn send_waits_while_the_channel_is_full_and_resumes_when_the_receiver_takes_one() {
    passes_everywhere(|| {
        future::block_on(async {
            let (sender, mut receiver) = mpsc::channel(1);
            sender.send(1).await.unwrap();
            assert!(matches!(sender.try_send(9), Err(TrySendError::Full(9))));
            let sent = Arc::new(AtomicBool::new(false));
            let second = {
                let (sender, sent) = (sender.clone(), sent.clone());
                future::spawn(async move {
                    sender.send(2).await.unwrap();
                    sent.store(true, Ordering::SeqCst);
                })
            };
            for _ in 0..3 {
                future::yield_now().await;
                assert!(
                    !sent.load(Ordering::SeqCst),
                    "a send into a full channel went on"
                );
            }
            assert_eq!(receiver.recv().await, Some(1));
            second.await.unwrap();
            assert!(sent.load(Ordering::SeqCst));
            assert_eq!(receiver.recv().await, Some(2));
        })
    });
}

#[test]
fn a_freed_slot_goes_to_the_sender_that_waited_longest() {
    passes("random", 50, || {
        future::block_on(async {
            let (sender, mut receiver) = mpsc::channel(1);
            sender.send(1).await.unwrap();
            let mut waiting = Box::pin(sender.send(2));
            assert!(poll_once(&mut waiting).await.is_pending());
            assert_eq!(receiver.recv().await, Some(1));
            // The slot the receive freed is the waiting sender's, not a newcomer's.
            assert_eq!(sender.capacity(), 0);
            assert!(matches!(sender.try_send(3), Err(TrySendError::Full(3))));
            waiting.await.unwrap();
            assert_eq!(receiver.try_recv(), Ok(2));
            assert_eq!(receiver.try_recv(), Err(TryRecvError::Empty));
        })
    });
}

#[test]
fn recv_returns_none_once_every_sender_is_gone_and_send_fails_once_the_receiver_is() {
    passes_everywhere(|| {
        future::block_on(async {
            let (sender, mut receiver) = mpsc::channel(1);
            let producers: Vec<_> = (0..2)
                .map(|value| {
                    let sender = sender.clone();
                    future::spawn(async move { sender.send(value).await.unwrap() })
                })
                .collect();
            drop(sender);
            let mut received = Vec::new();
            while let Some(value) = receiver.recv().await {
                received.push(value);
            }
            received.sort();
            assert_eq!(received, [0, 1]);
            assert_eq!(receiver.try_recv(), Err(TryRecvError::Disconnected));
            for producer in producers {
                producer.await.unwrap();
            }

            let (sender, receiver) = mpsc::channel(1);
            let waiting = {
                let sender = sender.clone();
                future::spawn(async move {
                    // This one fails too if the receiver is dropped before it.
                    let _ = sender.send("first").await;
                    sender.send("second").await
                })
            };
            future::yield_now().await;
            drop(receiver);
            // The value comes back, whether the send was waiting or came after the drop.
            assert_eq!(waiting.await.unwrap().unwrap_err().0, "second");
            assert!(sender.is_closed());
            assert_eq!(sender.send("third").await.unwrap_err().0, "third");
        })
    });
}

#[test]
fn an_unbounded_send_never_waits_and_close_keeps_what_was_queued() {
    passes_everywhere(|| {
        future::block_on(async {
            let (sender, mut receiver) = mpsc::unbounded_channel();
            let producer = {
                let sender = sender.clone();
                future::spawn(async move {
                    for value in 0..20 {
                        sender.send(value).unwrap();
                    }
                })
            };
            producer.await.unwrap();
            assert_eq!(receiver.len(), 20);
            receiver.close();
            assert_eq!(sender.send(99).unwrap_err().0, 99);
            let mut received = Vec::new();
            while let Some(value) = receiver.recv().await {
                received.push(value);
            }
            assert_eq!(received, (0..20).collect::<Vec<_>>());
        })
    });
}

#[test]
fn watch_changed_sees_the_latest_value_and_fails_once_the_sender_is_gone() {
    passes_everywhere(|| {
        future::block_on(async {
            let (sender, mut receiver) = watch::channel(0);
            let producer = future::spawn(async move {
                for value in 1..=3 {
                    sender.send(value).unwrap();
                }
            });
            let mut last = 0;
            while receiver.changed().await.is_ok() {
                let value = *receiver.borrow_and_update();
                assert!(value > last, "saw {value} after {last}");
                last = value;
            }
            // Whatever was skipped, the last value is never missed.
            assert_eq!(last, 3);
            assert!(receiver.has_changed().is_err());
            producer.await.unwrap();
        })
    });
}

#[test]
fn watch_receivers_keep_their_own_seen_version() {
    passes("random", 20, || {
        future::block_on(async {
            let (sender, mut first) = watch::channel("initial");
            let mut second = first.clone();
            assert_eq!(first.has_changed(), Ok(false));
            sender.send("new").unwrap();
            assert!(first.borrow().has_changed());
            assert_eq!(*first.borrow_and_update(), "new");
            assert_eq!(first.has_changed(), Ok(false));
            assert_eq!(second.has_changed(), Ok(true));
            let third = sender.subscribe();
            assert_eq!(third.has_changed(), Ok(false));
            assert_eq!(sender.receiver_count(), 3);

            // An unseen value is reported before the sender's drop is.
            sender.send_modify(|value| *value = "last");
            drop(sender);
            assert_eq!(second.changed().await, Ok(()));
            assert_eq!(*second.borrow_and_update(), "last");
            assert!(second.changed().await.is_err());
            assert!(first.changed().await.is_ok());
            assert!(first.changed().await.is_err());

            let (sender, receiver) = watch::channel(1);
            drop(receiver);
            assert_eq!(sender.send(2), Err(watch::error::SendError(2)));
            assert_eq!(*sender.borrow(), 1, "a failed send stores nothing");
            sender.send_modify(|value| *value = 3);
            assert_eq!(
                *sender.borrow(),
                3,
                "send_modify stores even without receivers"
            );
            assert_eq!(sender.send_replace(4), 3);
            let watcher = sender.subscribe();
            assert!(!sender.send_if_modified(|_| false));
            assert_eq!(
                watcher.has_changed(),
                Ok(false),
                "an unmodified value is no change"
            );
            assert!(sender.send_if_modified(|value| {
                *value = 5;
                true
            }));
            assert_eq!(watcher.has_changed(), Ok(true));
        })
    });
}

#[test]
fn a_writer_waits_while_readers_hold_the_lock() {
    passes_everywhere(|| {
        future::block_on(async {
            let lock = Arc::new(RwLock::new(0));
            let first = lock.read().await;
            let second = lock.read().await;
            let written = Arc::new(AtomicBool::new(false));
            let writer = {
                let (lock, written) = (lock.clone(), written.clone());
                future::spawn(async move {
                    *lock.write().await = 1;
                    written.store(true, Ordering::SeqCst);
                })
            };
            for _ in 0..3 {
                future::yield_now().await;
                assert!(
                    !written.load(Ordering::SeqCst),
                    "a writer got in past readers"
                );
                assert!(lock.try_write().is_err());
            }
            assert_eq!((*first, *second), (0, 0));
            drop(first);
            future::yield_now().await;
            assert!(
                !written.load(Ordering::SeqCst),
                "a writer got in past a reader"
            );
            drop(second);
            writer.await.unwrap();
            assert_eq!(*lock.read().await, 1);
        })
    });
}

#[test]
fn a_waiting_writer_keeps_new_readers_out_until_it_has_had_its_turn() {
    passes("random", 50, || {
        future::block_on(async {
            let lock = RwLock::new(0);
            let reader = lock.read().await;
            let mut writer = Box::pin(lock.write());
            assert!(poll_once(&mut writer).await.is_pending());
            assert!(
                lock.try_read().is_err(),
                "a reader overtook a waiting writer"
            );
            let mut late_reader = Box::pin(lock.read());
            assert!(poll_once(&mut late_reader).await.is_pending());
            drop(reader);
            let mut guard = writer.await;
            *guard = 1;
            assert!(poll_once(&mut late_reader).await.is_pending());
            drop(guard);
            assert_eq!(*late_reader.await, 1);
        })
    });
}

#[test]
fn a_cancelled_writer_lets_the_readers_behind_it_in() {
    passes("random", 50, || {
        future::block_on(async {
            let lock = RwLock::new(0);
            let reader = lock.read().await;
            let mut writer = Box::pin(lock.write());
            assert!(poll_once(&mut writer).await.is_pending());
            let mut late_reader = Box::pin(lock.read());
            assert!(poll_once(&mut late_reader).await.is_pending());
            drop(writer);
            assert_eq!(*late_reader.await, 0);
            drop(reader);
            assert!(lock.try_write().is_ok());
        })
    });
}

/// A task aborted while it waits for the mutex must not take the unlock with it: the next
/// waiter gets the mutex. The same for a semaphore's permit.
#[test]
fn an_aborted_waiter_does_not_swallow_the_release() {
    passes_everywhere(|| {
        future::block_on(async {
            let mutex = Arc::new(Mutex::new(()));
            let permits = Arc::new(Semaphore::new(1));
            let held = mutex.lock().await;
            let permit = permits.acquire().await.unwrap();
            let spawn_waiter = || {
                let (mutex, permits) = (mutex.clone(), permits.clone());
                future::spawn(async move {
                    drop(mutex.lock().await);
                    drop(permits.acquire().await.unwrap());
                })
            };
            let cancelled = spawn_waiter();
            let patient = spawn_waiter();
            future::yield_now().await;
            cancelled.abort();
            future::yield_now().await;
            drop(held);
            drop(permit);
            patient.await.unwrap();
            assert!(matches!(
                cancelled.await,
                Ok(()) | Err(JoinError::Cancelled)
            ));
        })
    });
}

// ---------------------------------------------------------------------------------------------
// Bugs found by PCT
// ---------------------------------------------------------------------------------------------

/// Upgrade by release: a lazy initialisation checks under a read lock that the value is
/// missing, releases, and writes it under a write lock; two tasks both see it missing and
/// both initialise. Fixed: check again under the write lock.
fn double_initialisation(fixed: bool) {
    future::block_on(async {
        let cache = Arc::new(RwLock::new(None::<u64>));
        let initialisations = Arc::new(AtomicUsize::new(0));
        let get = move |cache: Arc<RwLock<Option<u64>>>, initialisations: Arc<AtomicUsize>| async move {
            if let Some(value) = *cache.read().await {
                return value;
            }
            let mut slot = cache.write().await;
            if fixed {
                if let Some(value) = *slot {
                    return value;
                }
            }
            initialisations.fetch_add(1, Ordering::SeqCst);
            *slot = Some(42);
            42
        };
        let other = future::spawn(get(cache.clone(), initialisations.clone()));
        assert_eq!(get(cache.clone(), initialisations.clone()).await, 42);
        assert_eq!(other.await.unwrap(), 42);
        assert_eq!(
            initialisations.load(Ordering::SeqCst),
            1,
            "the value was initialised twice"
        );
    })
}

/// Cross sends into full channels: two peers each greet the other through the other's inbox
/// (capacity 1) before reading their own, and the coordinator also posts a start message to
/// both inboxes. When both start messages land before the greetings, each peer waits for room
/// in an inbox that the other will only make after its own send: a deadlock. Fixed: a peer
/// greets from a task of its own, so reading its inbox never waits for its send.
fn crossed_greetings(fixed: bool) {
    future::block_on(async {
        let (to_first, first_inbox) = mpsc::channel::<&'static str>(1);
        let (to_second, second_inbox) = mpsc::channel::<&'static str>(1);
        let peer = move |to_other: mpsc::Sender<&'static str>,
                         mut inbox: mpsc::Receiver<&'static str>| async move {
            let greeting = if fixed {
                Some(future::spawn(async move { to_other.send("hello").await }))
            } else {
                to_other.send("hello").await.unwrap();
                None
            };
            let mut received = [inbox.recv().await, inbox.recv().await];
            received.sort();
            assert_eq!(received, [Some("hello"), Some("start")]);
            if let Some(greeting) = greeting {
                greeting.await.unwrap().unwrap();
            }
        };
        let first = future::spawn(peer(to_second.clone(), first_inbox));
        let second = future::spawn(peer(to_first.clone(), second_inbox));
        to_first.send("start").await.unwrap();
        to_second.send("start").await.unwrap();
        first.await.unwrap();
        second.await.unwrap();
    })
}

/// `borrow` after `changed`: `changed` marks the version it saw, but `borrow` reads whatever
/// is newest without marking it, so a value sent in between is processed now and again after
/// the next `changed`, which returns at once. Fixed: `borrow_and_update` marks what it reads.
fn processed_twice(fixed: bool) {
    future::block_on(async {
        let (sender, mut receiver) = watch::channel(0);
        let producer = future::spawn(async move {
            for value in 1..=2 {
                sender.send(value).unwrap();
            }
        });
        let mut processed = Vec::new();
        while receiver.changed().await.is_ok() {
            let value = if fixed {
                *receiver.borrow_and_update()
            } else {
                *receiver.borrow()
            };
            assert!(
                !processed.contains(&value),
                "value {value} processed twice: {processed:?}"
            );
            processed.push(value);
        }
        producer.await.unwrap();
    })
}

fn pct(seed: u64, program: fn(bool), fixed: bool) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("pct:d=3".parse().unwrap())
        .seed(seed)
        .executions(1000)
        .explore(move || program(fixed))
        .unwrap()
}

fn found_in_every_seed(program: fn(bool), kind: FailureKind) -> Vec<u64> {
    (0..10)
        .map(|seed| {
            let report = pct(seed, program, false);
            let failure = report
                .first_failure()
                .unwrap_or_else(|| panic!("seed {seed}: {report}"));
            assert_eq!(failure.kind, kind, "seed {seed}: {failure}");
            let fixed = pct(seed, program, true);
            assert!(fixed.is_ok(), "fixed twin, seed {seed}: {fixed}");
            failure.execution + 1
        })
        .collect()
}

#[test]
fn pct_finds_the_rwlock_double_initialisation() {
    let found = found_in_every_seed(double_initialisation, FailureKind::Panic);
    println!("rwlock double initialisation: executions to the bug per seed {found:?}");
}

#[test]
fn pct_finds_the_crossed_greetings_deadlock() {
    let found = found_in_every_seed(crossed_greetings, FailureKind::Deadlock);
    println!("mpsc crossed greetings: executions to the bug per seed {found:?}");
}

#[test]
fn pct_finds_the_watch_value_processed_twice() {
    let found = found_in_every_seed(processed_twice, FailureKind::Panic);
    println!("watch processed twice: executions to the bug per seed {found:?}");
}
