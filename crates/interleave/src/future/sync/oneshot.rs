//! A channel for one value, as tokio's `oneshot`.

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::{wake_all, StateLock};

struct Shared<T> {
    value: Option<T>,
    sender_gone: bool,
    receiver_gone: bool,
    receiver: Option<Waker>,
}

/// Sends the value.
///
/// Its drop, which has no caller's location, is recorded where the channel was created (the
/// state lock's site); so are awaiting and dropping the [`Receiver`].
pub struct Sender<T> {
    shared: Arc<StateLock<Shared<T>>>,
}

/// Receives the value: await it.
pub struct Receiver<T> {
    shared: Arc<StateLock<Shared<T>>>,
}

/// The sender was dropped without sending.
#[derive(Debug, PartialEq, Eq)]
pub struct RecvError(());

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the sender was dropped without sending")
    }
}

impl std::error::Error for RecvError {}

/// Why [`Receiver::try_recv`] found no value.
#[derive(Debug, PartialEq, Eq)]
pub enum TryRecvError {
    /// No value yet, and the sender may still send one.
    Empty,
    /// No value, and none can come any more: the sender is gone or the receiver closed.
    Closed,
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("the channel is empty"),
            TryRecvError::Closed => f.write_str("the channel is closed"),
        }
    }
}

impl std::error::Error for TryRecvError {}

/// A new channel.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(StateLock::state_of(
        "Oneshot",
        Shared {
            value: None,
            sender_gone: false,
            receiver_gone: false,
            receiver: None,
        },
    ));
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

impl<T> Sender<T> {
    /// Sends `value`, or gives it back if the receiver is gone.
    #[track_caller]
    pub fn send(self, value: T) -> Result<(), T> {
        let waker = {
            let mut shared = self.shared.lock_as(Location::caller(), "send");
            if shared.receiver_gone {
                return Err(value);
            }
            shared.value = Some(value);
            shared.receiver.take()
        };
        wake_all(waker);
        Ok(())
    }

    /// Whether the receiver was dropped.
    #[track_caller]
    pub fn is_closed(&self) -> bool {
        self.shared
            .lock_as(Location::caller(), "is_closed")
            .receiver_gone
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut shared = self.shared.lock_as(self.shared.site(), "drop sender");
            shared.sender_gone = true;
            shared.receiver.take()
        };
        wake_all(waker);
    }
}

impl<T> Receiver<T> {
    /// Takes the value if it has been sent, without waiting.
    #[track_caller]
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut shared = self.shared.lock_as(Location::caller(), "try_recv");
        match shared.value.take() {
            Some(value) => Ok(value),
            None if shared.sender_gone || shared.receiver_gone => Err(TryRecvError::Closed),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Stops the sender from sending, as tokio's: a value sent before can still be taken
    /// with [`try_recv`](Receiver::try_recv), and no value can arrive after it. The way to
    /// give up waiting without losing a value sent at the last moment.
    #[track_caller]
    pub fn close(&mut self) {
        self.shared
            .lock_as(Location::caller(), "close")
            .receiver_gone = true;
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let mut shared = self.shared.lock_as(self.shared.site(), "recv");
        if let Some(value) = shared.value.take() {
            return Poll::Ready(Ok(value));
        }
        if shared.sender_gone || shared.receiver_gone {
            return Poll::Ready(Err(RecvError(())));
        }
        shared.receiver = Some(context.waker().clone());
        crate::future::awaiting("a oneshot value", Some(self.shared.site()));
        Poll::Pending
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.shared
            .lock_as(self.shared.site(), "drop receiver")
            .receiver_gone = true;
    }
}
