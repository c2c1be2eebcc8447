//! Multi-producer, single-consumer channels, as tokio's `mpsc`: [`channel`] is bounded (a
//! send waits for room), [`unbounded_channel`] is not (a send never waits).
//!
//! A bounded channel's capacity is a count of free slots that senders take first come first
//! served, as tokio's semaphore-based channel does: a receive frees a slot and hands it to
//! the sender waiting longest, which then puts its value in.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::{state, wake_all, Standing, StateLock, Ticket, WaitQueue};
use crate::runtime::op::Site;

/// The errors of the channels, as in `tokio::sync::mpsc::error`.
pub mod error {
    use std::fmt;

    /// The receiver was closed or dropped; the value was not sent and comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Why [`try_send`](super::Sender::try_send) gave the value back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub enum TrySendError<T> {
        /// The channel had no free slot.
        Full(T),
        /// The receiver was closed or dropped.
        Closed(T),
    }

    impl<T> TrySendError<T> {
        /// The value that was not sent.
        pub fn into_inner(self) -> T {
            match self {
                TrySendError::Full(value) | TrySendError::Closed(value) => value,
            }
        }
    }

    impl<T> fmt::Debug for TrySendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TrySendError::Full(_) => f.write_str("Full(..)"),
                TrySendError::Closed(_) => f.write_str("Closed(..)"),
            }
        }
    }

    impl<T> fmt::Display for TrySendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TrySendError::Full(_) => f.write_str("no available capacity"),
                TrySendError::Closed(_) => f.write_str("channel closed"),
            }
        }
    }

    impl<T> std::error::Error for TrySendError<T> {}

    impl<T> From<SendError<T>> for TrySendError<T> {
        fn from(error: SendError<T>) -> TrySendError<T> {
            TrySendError::Closed(error.0)
        }
    }

    /// Why [`try_recv`](super::Receiver::try_recv) returned no value.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub enum TryRecvError {
        /// The channel is empty, and a sender may still send.
        Empty,
        /// The channel is empty, and no value can come any more: every sender is gone or the
        /// receiver was closed.
        Disconnected,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("receiving on an empty channel"),
                TryRecvError::Disconnected => f.write_str("receiving on a closed channel"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{SendError, TryRecvError, TrySendError};

/// What the halves of one channel share.
struct Chan<T> {
    queue: VecDeque<T>,
    /// The capacity of a bounded channel; `None` for an unbounded one.
    capacity: Option<usize>,
    /// Slots of a bounded channel that hold no value and have not been granted to a waiting
    /// sender.
    free: usize,
    senders: usize,
    /// Whether the receiver was closed or dropped.
    closed: bool,
    /// Senders of a bounded channel waiting for a slot.
    send_waiters: WaitQueue,
    receiver: Option<Waker>,
}

type Shared<T> = Arc<StateLock<Chan<T>>>;

impl<T> Chan<T> {
    /// Hands free slots to the senders waiting longest.
    fn dispatch(&mut self) -> Vec<Waker> {
        let mut woken = Vec::new();
        while self.free > 0 {
            let Some(waker) = self.send_waiters.grant_front() else {
                break;
            };
            self.free -= 1;
            woken.push(waker);
        }
        woken
    }

    /// Queues `value` and returns the receiver's waker.
    fn push(&mut self, value: T) -> Option<Waker> {
        self.queue.push_back(value);
        self.receiver.take()
    }

    /// Takes the oldest value, freeing its slot; also returns the senders to wake.
    fn pop(&mut self) -> Option<(T, Vec<Waker>)> {
        let value = self.queue.pop_front()?;
        if self.capacity.is_some() {
            self.free += 1;
        }
        Some((value, self.dispatch()))
    }

    /// Whether no value can arrive any more.
    fn finished(&self) -> bool {
        self.closed || self.senders == 0
    }
}

#[track_caller]
fn shared<T>(capacity: Option<usize>) -> Shared<T> {
    Arc::new(StateLock::state_of(
        "AsyncChannel",
        Chan {
            queue: VecDeque::new(),
            capacity,
            free: capacity.unwrap_or(0),
            senders: 1,
            closed: false,
            send_waiters: WaitQueue::new(),
            receiver: None,
        },
    ))
}

/// A bounded channel with room for `capacity` values.
///
/// # Panics
///
/// If `capacity` is 0, as tokio's.
#[track_caller]
pub fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "mpsc bounded channel requires capacity > 0");
    let chan = shared(Some(capacity));
    (
        Sender { chan: chan.clone() },
        Receiver { inner: Rx { chan } },
    )
}

/// An unbounded channel.
#[track_caller]
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = shared(None);
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver { inner: Rx { chan } },
    )
}

/// Sends values into a bounded channel; clone it for more senders.
pub struct Sender<T> {
    chan: Shared<T>,
}

impl<T> Sender<T> {
    /// Waits for a free slot and puts `value` in it, or gives `value` back if the receiver
    /// is closed or dropped (also while waiting).
    #[track_caller]
    pub fn send(&self, value: T) -> impl Future<Output = Result<(), SendError<T>>> + '_ {
        Sending {
            chan: &self.chan,
            value: Some(value),
            ticket: None,
            site: Location::caller(),
        }
    }

    /// Puts `value` in a free slot if there is one and no sender waits ahead.
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        let receiver = {
            let mut chan = state(&self.chan, "try_send");
            if chan.closed {
                return Err(TrySendError::Closed(value));
            }
            if chan.free == 0 || !chan.send_waiters.is_empty() {
                return Err(TrySendError::Full(value));
            }
            chan.free -= 1;
            chan.push(value)
        };
        wake_all(receiver);
        Ok(())
    }

    /// [`send`](Self::send) for blocking code: blocks the current thread.
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        crate::future::block_on(self.send(value))
    }

    /// Whether the receiver was closed or dropped.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        state(&self.chan, "is_closed").closed
    }

    /// The free slots now.
    #[track_caller]
    pub fn capacity(&self) -> usize {
        state(&self.chan, "capacity").free
    }

    /// The capacity the channel was made with.
    #[track_caller]
    pub fn max_capacity(&self) -> usize {
        state(&self.chan, "max_capacity")
            .capacity
            .unwrap_or(usize::MAX)
    }

    /// Whether `other` sends into the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Sender<T> {
        state(&self.chan, "clone sender").senders += 1;
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        drop_sender(&self.chan);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// Counts a sender out; the last one wakes the receiver, which now sees the end.
fn drop_sender<T>(chan: &StateLock<Chan<T>>) {
    let receiver = {
        let mut chan = state(chan, "drop sender");
        chan.senders -= 1;
        if chan.senders == 0 {
            chan.receiver.take()
        } else {
            None
        }
    };
    wake_all(receiver);
}

/// The future of [`Sender::send`].
struct Sending<'a, T> {
    chan: &'a StateLock<Chan<T>>,
    /// The value, until it is sent or given back.
    value: Option<T>,
    ticket: Option<Ticket>,
    /// Where `send` was called: every poll and a cancellation are recorded there.
    site: Site,
}

// The value is only ever moved, never pinned.
impl<T> Unpin for Sending<'_, T> {}

impl<T> Future for Sending<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(value) = this.value.take() else {
            panic!("a send future polled after it completed");
        };
        let mut chan = this.chan.lock_as(this.site, "send");
        if chan.closed {
            if let Some(ticket) = this.ticket.take() {
                chan.send_waiters.withdraw(ticket);
            }
            return Poll::Ready(Err(SendError(value)));
        }
        let mut granted = false;
        if let Some(ticket) = this.ticket {
            match chan.send_waiters.check(ticket, context.waker()) {
                Standing::Granted => granted = true,
                Standing::Waiting => {
                    this.value = Some(value);
                    crate::future::awaiting("room in a bounded mpsc channel", Some(this.site));
                    return Poll::Pending;
                }
                Standing::Released => {}
            }
            this.ticket = None;
        }
        if !granted {
            if chan.free == 0 || !chan.send_waiters.is_empty() {
                this.ticket = Some(chan.send_waiters.enqueue((), context.waker()));
                this.value = Some(value);
                crate::future::awaiting("room in a bounded mpsc channel", Some(this.site));
                return Poll::Pending;
            }
            chan.free -= 1;
        }
        let receiver = chan.push(value);
        drop(chan);
        wake_all(receiver);
        Poll::Ready(Ok(()))
    }
}

impl<T> Drop for Sending<'_, T> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else {
            return;
        };
        let woken = {
            let mut chan = self.chan.lock_as(self.site, "cancel send");
            if chan.send_waiters.withdraw(ticket) == Standing::Granted {
                chan.free += 1;
            }
            chan.dispatch()
        };
        wake_all(woken);
    }
}

/// Sends values into an unbounded channel; clone it for more senders.
pub struct UnboundedSender<T> {
    chan: Shared<T>,
}

impl<T> UnboundedSender<T> {
    /// Puts `value` in the channel without waiting, or gives it back if the receiver is
    /// closed or dropped.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let receiver = {
            let mut chan = state(&self.chan, "send");
            if chan.closed {
                return Err(SendError(value));
            }
            chan.push(value)
        };
        wake_all(receiver);
        Ok(())
    }

    /// Whether the receiver was closed or dropped.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        state(&self.chan, "is_closed").closed
    }

    /// Whether `other` sends into the same channel.
    pub fn same_channel(&self, other: &UnboundedSender<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for UnboundedSender<T> {
    #[track_caller]
    fn clone(&self) -> UnboundedSender<T> {
        state(&self.chan, "clone sender").senders += 1;
        UnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        drop_sender(&self.chan);
    }
}

impl<T> fmt::Debug for UnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedSender").finish_non_exhaustive()
    }
}

/// The receiving half both kinds of channel share.
struct Rx<T> {
    chan: Shared<T>,
}

impl<T> Rx<T> {
    #[track_caller]
    fn recv(&mut self) -> impl Future<Output = Option<T>> + '_ {
        let site = Location::caller();
        std::future::poll_fn(move |context| {
            let mut chan = self.chan.lock_as(site, "recv");
            if let Some((value, senders)) = chan.pop() {
                drop(chan);
                wake_all(senders);
                return Poll::Ready(Some(value));
            }
            if chan.finished() {
                return Poll::Ready(None);
            }
            chan.receiver = Some(context.waker().clone());
            crate::future::awaiting("a message on an mpsc channel", Some(site));
            Poll::Pending
        })
    }

    #[track_caller]
    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut chan = state(&self.chan, "try_recv");
        if let Some((value, senders)) = chan.pop() {
            drop(chan);
            wake_all(senders);
            return Ok(value);
        }
        if chan.finished() {
            Err(TryRecvError::Disconnected)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    /// Closes the channel: senders waiting for a slot, and every later send, get their value
    /// back; the values already queued can still be received.
    #[track_caller]
    fn close(&mut self) {
        let senders = {
            let mut chan = state(&self.chan, "close");
            chan.closed = true;
            chan.send_waiters.release_all()
        };
        wake_all(senders);
    }

    #[track_caller]
    fn len(&self) -> usize {
        state(&self.chan, "len").queue.len()
    }
}

impl<T> Drop for Rx<T> {
    fn drop(&mut self) {
        let (values, senders) = {
            let mut chan = state(&self.chan, "drop receiver");
            chan.closed = true;
            (
                std::mem::take(&mut chan.queue),
                chan.send_waiters.release_all(),
            )
        };
        // The values are dropped outside the state lock: their destructors may use the
        // runtime's primitives too.
        drop(values);
        wake_all(senders);
    }
}

/// Receives the values of a bounded channel.
pub struct Receiver<T> {
    inner: Rx<T>,
}

impl<T> Receiver<T> {
    /// Waits for the next value; `None` once the channel is empty and every sender is gone
    /// (or the receiver was closed).
    #[track_caller]
    pub fn recv(&mut self) -> impl Future<Output = Option<T>> + '_ {
        self.inner.recv()
    }

    /// The next value if one is queued.
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
    }

    /// [`recv`](Self::recv) for blocking code: blocks the current thread.
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        crate::future::block_on(self.inner.recv())
    }

    /// Closes the channel without dropping the receiver: senders waiting for a slot, and
    /// every later send, get their value back; the values already queued can still be
    /// received.
    #[track_caller]
    pub fn close(&mut self) {
        self.inner.close();
    }

    /// The values queued now.
    #[track_caller]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no value is queued now.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// Receives the values of an unbounded channel.
pub struct UnboundedReceiver<T> {
    inner: Rx<T>,
}

impl<T> UnboundedReceiver<T> {
    /// Waits for the next value; `None` once the channel is empty and every sender is gone
    /// (or the receiver was closed).
    #[track_caller]
    pub fn recv(&mut self) -> impl Future<Output = Option<T>> + '_ {
        self.inner.recv()
    }

    /// The next value if one is queued.
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
    }

    /// [`recv`](Self::recv) for blocking code: blocks the current thread.
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Option<T> {
        crate::future::block_on(self.inner.recv())
    }

    /// Closes the channel without dropping the receiver: every later send gets its value
    /// back; the values already queued can still be received.
    #[track_caller]
    pub fn close(&mut self) {
        self.inner.close();
    }

    /// The values queued now.
    #[track_caller]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no value is queued now.
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> fmt::Debug for UnboundedReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedReceiver").finish_non_exhaustive()
    }
}
