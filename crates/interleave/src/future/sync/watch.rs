//! A single-producer, multi-consumer channel that keeps only the latest value, as tokio's
//! `watch`.
//!
//! Every send makes a new version of the value. Each receiver remembers the version it has
//! seen: [`Receiver::changed`] waits for a newer one and marks it seen, and
//! [`Receiver::borrow_and_update`] marks the version it reads as seen, while
//! [`Receiver::borrow`] reads without marking.
//!
//! The value lives behind one of the crate's (blocking) reader-writer locks, because a
//! [`Ref`] is a read guard on it, as in tokio: a sender waits while a `Ref` is held, so keep
//! borrows short and never hold one across an `.await`. The version, the receiver count and
//! the waiting receivers live behind the state mutex, as in the other primitives; whoever
//! needs both takes the value lock first.

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::{state, wake_all, Standing, StateLock, Ticket, WaitQueue};
use crate::runtime::op::Site;
use crate::sync::{RwLock as ValueLock, RwLockReadGuard, RwLockWriteGuard};

/// The errors of the channel, as in `tokio::sync::watch::error`.
pub mod error {
    use std::fmt;

    /// Every receiver is gone; the value was not stored and comes back (the same type as
    /// the channels' send error).
    pub use crate::future::sync::mpsc::error::SendError;

    /// The sender is gone.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}
}

use error::{RecvError, SendError};

struct Shared<T> {
    value: ValueLock<T>,
    state: StateLock<WatchState>,
}

struct WatchState {
    /// Incremented by every change of the value.
    version: u64,
    sender_gone: bool,
    receivers: usize,
    /// Receivers waiting in [`Receiver::changed`]; every change lets them all go.
    waiters: WaitQueue,
}

/// A channel holding `initial`, which every receiver made now has seen.
#[track_caller]
pub fn channel<T>(initial: T) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        value: ValueLock::named("WatchValue", initial),
        state: StateLock::state_of(
            "Watch",
            WatchState {
                version: 0,
                sender_gone: false,
                receivers: 1,
                waiters: WaitQueue::new(),
            },
        ),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared, seen: 0 },
    )
}

#[track_caller]
fn read<T>(lock: &ValueLock<T>) -> RwLockReadGuard<'_, T> {
    // A panic in a modifying closure leaves the value as the closure left it, as tokio's does.
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[track_caller]
fn write<T>(lock: &ValueLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A borrow of the value: a read guard, so keep it short.
pub struct Ref<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<T> Ref<'_, T> {
    /// Whether the value was unseen by the receiver when it was borrowed (always false for a
    /// borrow through the sender).
    #[track_caller]
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Sends new values.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Replaces the value and wakes every receiver waiting for a change; gives `value` back
    /// (and changes nothing) if every receiver is gone.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let mut slot = write(&self.shared.value);
        let woken = {
            let mut state = state(&self.shared.state, "send");
            if state.receivers == 0 {
                return Err(SendError(value));
            }
            state.version += 1;
            state.waiters.release_all()
        };
        let old = std::mem::replace(&mut *slot, value);
        drop(slot);
        // The old value is dropped outside both locks: its destructor may use the runtime's
        // primitives too.
        drop(old);
        wake_all(woken);
        Ok(())
    }

    /// Replaces the value whether or not a receiver is left, and returns the old one.
    #[track_caller]
    pub fn send_replace(&self, value: T) -> T {
        let mut slot = write(&self.shared.value);
        let old = std::mem::replace(&mut *slot, value);
        let woken = self.new_version();
        drop(slot);
        wake_all(woken);
        old
    }

    /// Modifies the value in place, whether or not a receiver is left, and notifies.
    #[track_caller]
    pub fn send_modify(&self, modify: impl FnOnce(&mut T)) {
        self.send_if_modified(|value| {
            modify(value);
            true
        });
    }

    /// Modifies the value in place and notifies if `modify` says it changed it; returns what
    /// `modify` said.
    #[track_caller]
    pub fn send_if_modified(&self, modify: impl FnOnce(&mut T) -> bool) -> bool {
        let mut slot = write(&self.shared.value);
        if !modify(&mut slot) {
            return false;
        }
        let woken = self.new_version();
        drop(slot);
        wake_all(woken);
        true
    }

    /// Counts a change of the value, which the caller holds for writing, and lets every
    /// waiting receiver go; returns their wakers.
    #[track_caller]
    fn new_version(&self) -> Vec<Waker> {
        let mut state = state(&self.shared.state, "send");
        state.version += 1;
        state.waiters.release_all()
    }

    /// Borrows the current value.
    #[track_caller]
    pub fn borrow(&self) -> Ref<'_, T> {
        Ref {
            guard: read(&self.shared.value),
            has_changed: false,
        }
    }

    /// A new receiver that has seen the current value.
    #[track_caller]
    pub fn subscribe(&self) -> Receiver<T> {
        let seen = {
            let mut state = state(&self.shared.state, "subscribe");
            state.receivers += 1;
            state.version
        };
        Receiver {
            shared: self.shared.clone(),
            seen,
        }
    }

    /// How many receivers there are.
    #[track_caller]
    pub fn receiver_count(&self) -> usize {
        state(&self.shared.state, "receiver_count").receivers
    }

    /// Whether every receiver is gone.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let woken = {
            let mut state = state(&self.shared.state, "drop sender");
            state.sender_gone = true;
            state.waiters.release_all()
        };
        wake_all(woken);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// Watches the value; clone it for another receiver with the same seen version.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver has seen.
    seen: u64,
}

impl<T> Receiver<T> {
    /// Borrows the current value without marking it seen: a later [`changed`](Self::changed)
    /// still reports it if it was unseen.
    #[track_caller]
    pub fn borrow(&self) -> Ref<'_, T> {
        let guard = read(&self.shared.value);
        let version = state(&self.shared.state, "borrow").version;
        Ref {
            guard,
            has_changed: version != self.seen,
        }
    }

    /// Borrows the current value and marks it seen.
    #[track_caller]
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let guard = read(&self.shared.value);
        // The version is read under the value's read lock, which every change holds for
        // writing while it bumps the version: it is the version of exactly this value.
        let version = state(&self.shared.state, "borrow_and_update").version;
        let has_changed = version != self.seen;
        self.seen = version;
        Ref { guard, has_changed }
    }

    /// Waits until there is a version this receiver has not seen and marks it seen; returns
    /// at once if there already is one. Fails once the sender is gone and every version has
    /// been seen.
    #[track_caller]
    pub fn changed(&mut self) -> impl Future<Output = Result<(), RecvError>> + '_ {
        Changed {
            receiver: self,
            ticket: None,
            site: Location::caller(),
        }
    }

    /// Whether there is a version this receiver has not seen; fails if the sender is gone.
    #[track_caller]
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        let state = state(&self.shared.state, "has_changed");
        if state.sender_gone {
            return Err(RecvError(()));
        }
        Ok(state.version != self.seen)
    }

    /// Whether `other` watches the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Receiver<T> {
    #[track_caller]
    fn clone(&self) -> Receiver<T> {
        state(&self.shared.state, "clone receiver").receivers += 1;
        Receiver {
            shared: self.shared.clone(),
            seen: self.seen,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        state(&self.shared.state, "drop receiver").receivers -= 1;
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

/// The future of [`Receiver::changed`].
struct Changed<'a, T> {
    receiver: &'a mut Receiver<T>,
    ticket: Option<Ticket>,
    /// Where `changed` was called: every poll and a cancellation are recorded there.
    site: Site,
}

impl<T> Future for Changed<'_, T> {
    type Output = Result<(), RecvError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let receiver = &mut *this.receiver;
        let mut state = receiver.shared.state.lock_as(this.site, "changed");
        if let Some(ticket) = this.ticket.take() {
            // Still queued means nothing changed since the last poll; any other standing
            // means a change or the sender's drop let it go, which the checks below see.
            if state.waiters.check(ticket, context.waker()) == Standing::Waiting {
                this.ticket = Some(ticket);
                crate::future::awaiting("a watch change", Some(this.site));
                return Poll::Pending;
            }
        }
        if state.version != receiver.seen {
            receiver.seen = state.version;
            return Poll::Ready(Ok(()));
        }
        if state.sender_gone {
            return Poll::Ready(Err(RecvError(())));
        }
        this.ticket = Some(state.waiters.enqueue((), context.waker()));
        crate::future::awaiting("a watch change", Some(this.site));
        Poll::Pending
    }
}

impl<T> Drop for Changed<'_, T> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.receiver
                .shared
                .state
                .lock_as(self.site, "cancel changed")
                .waiters
                .withdraw(ticket);
        }
    }
}
