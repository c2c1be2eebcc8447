//! Async synchronisation primitives in tokio's shapes: [`Mutex`], [`Semaphore`], [`Notify`],
//! [`oneshot`].
//!
//! Each keeps its state behind one of the crate's own (blocking) mutexes, held only for the
//! few instructions of a poll, never across an `.await`: so every poll is a scheduling point
//! on an object the strategies and the race detector know, and a waiter that cannot proceed
//! stores its task's waker and returns `Pending`. Whoever releases wakes a waiter.

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::sync::Mutex as StateLock;

/// Wakes every waker in `wakers` (after the state lock is released, so a woken task that
/// runs at once finds the state free).
fn wake_all(wakers: impl IntoIterator<Item = Waker>) {
    for waker in wakers {
        waker.wake();
    }
}

fn state<T>(lock: &StateLock<T>) -> crate::sync::MutexGuard<'_, T> {
    // The state lock is never held across a scheduling point that could panic the holder
    // half-way, so poisoning cannot leave it inconsistent.
    lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Mutex
// ---------------------------------------------------------------------------------------------

/// An async mutex, as tokio's: `lock().await` waits without blocking the thread, and the
/// guard may be held across `.await`s.
pub struct Mutex<T: ?Sized> {
    state: StateLock<MutexState>,
    value: UnsafeCell<T>,
}

struct MutexState {
    locked: bool,
    waiters: VecDeque<Waker>,
}

// SAFETY: the value is reached only through a guard, and `locked` admits one guard at a time.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    /// A new, unlocked mutex.
    #[track_caller]
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            state: StateLock::new(MutexState {
                locked: false,
                waiters: VecDeque::new(),
            }),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits until the mutex is free and takes it.
    pub fn lock(&self) -> impl Future<Output = MutexGuard<'_, T>> {
        std::future::poll_fn(move |context| {
            let mut state = state(&self.state);
            if state.locked {
                state.waiters.push_back(context.waker().clone());
                return Poll::Pending;
            }
            state.locked = true;
            Poll::Ready(MutexGuard { mutex: self })
        })
    }

    /// Takes the mutex if it is free.
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        let mut state = state(&self.state);
        if state.locked {
            return Err(TryLockError(()));
        }
        state.locked = true;
        Ok(MutexGuard { mutex: self })
    }
}

/// The mutex was locked.
#[derive(Debug, PartialEq, Eq)]
pub struct TryLockError(());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the mutex is locked")
    }
}

impl std::error::Error for TryLockError {}

/// Access to a [`Mutex`]'s value; dropping it unlocks the mutex and wakes a waiter.
pub struct MutexGuard<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `Mutex`).
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (see `Mutex`).
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        let waiter = {
            let mut state = state(&self.mutex.state);
            state.locked = false;
            state.waiters.pop_front()
        };
        wake_all(waiter);
    }
}

// ---------------------------------------------------------------------------------------------
// Semaphore
// ---------------------------------------------------------------------------------------------

/// A counting semaphore, as tokio's: `acquire().await` waits for a permit, and dropping the
/// permit returns it (forgetting it leaks it).
pub struct Semaphore {
    state: StateLock<SemaphoreState>,
}

struct SemaphoreState {
    permits: usize,
    closed: bool,
    waiters: VecDeque<Waker>,
}

/// The semaphore was closed.
#[derive(Debug, PartialEq, Eq)]
pub struct AcquireError(());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the semaphore is closed")
    }
}

impl std::error::Error for AcquireError {}

impl Semaphore {
    /// A semaphore with `permits` permits.
    #[track_caller]
    pub fn new(permits: usize) -> Semaphore {
        Semaphore {
            state: StateLock::new(SemaphoreState {
                permits,
                closed: false,
                waiters: VecDeque::new(),
            }),
        }
    }

    /// Waits for a permit and takes it.
    pub fn acquire(&self) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> {
        std::future::poll_fn(move |context| {
            let mut state = state(&self.state);
            if state.closed {
                return Poll::Ready(Err(AcquireError(())));
            }
            if state.permits == 0 {
                state.waiters.push_back(context.waker().clone());
                return Poll::Pending;
            }
            state.permits -= 1;
            Poll::Ready(Ok(SemaphorePermit { semaphore: self }))
        })
    }

    /// The permits available now.
    pub fn available_permits(&self) -> usize {
        state(&self.state).permits
    }

    /// Adds `permits` permits, waking as many waiters.
    pub fn add_permits(&self, permits: usize) {
        let woken: Vec<Waker> = {
            let mut state = state(&self.state);
            state.permits += permits;
            let count = permits.min(state.waiters.len());
            state.waiters.drain(..count).collect()
        };
        wake_all(woken);
    }

    /// Closes the semaphore: every waiter, and every later `acquire`, gets an error.
    pub fn close(&self) {
        let woken: Vec<Waker> = {
            let mut state = state(&self.state);
            state.closed = true;
            state.waiters.drain(..).collect()
        };
        wake_all(woken);
    }
}

/// A permit of a [`Semaphore`]; dropping it returns the permit.
pub struct SemaphorePermit<'a> {
    semaphore: &'a Semaphore,
}

impl SemaphorePermit<'_> {
    /// Keeps the permit out of the semaphore for good.
    pub fn forget(self) {
        std::mem::forget(self);
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.semaphore.add_permits(1);
    }
}

// ---------------------------------------------------------------------------------------------
// Notify
// ---------------------------------------------------------------------------------------------

/// A notification between tasks, as tokio's `Notify`: `notify_one` wakes one waiter or, if
/// none waits, stores one permit for the next `notified().await`; `notify_waiters` wakes the
/// waiters registered at that moment and stores nothing.
pub struct Notify {
    state: StateLock<NotifyState>,
}

struct NotifyState {
    permit: bool,
    /// Incremented by every `notify_waiters`: a `Notified` made before it is woken by it.
    generation: u64,
    next_waiter: u64,
    waiters: VecDeque<(u64, Waker)>,
    /// Waiters `notify_one` picked, not yet polled since.
    notified: Vec<u64>,
}

impl Notify {
    /// A notify with no stored permit.
    #[track_caller]
    pub fn new() -> Notify {
        Notify {
            state: StateLock::new(NotifyState {
                permit: false,
                generation: 0,
                next_waiter: 0,
                waiters: VecDeque::new(),
                notified: Vec::new(),
            }),
        }
    }

    /// Wakes one waiting task, or stores a permit if none waits.
    pub fn notify_one(&self) {
        let woken = {
            let mut state = state(&self.state);
            match state.waiters.pop_front() {
                Some((id, waker)) => {
                    state.notified.push(id);
                    Some(waker)
                }
                None => {
                    state.permit = true;
                    None
                }
            }
        };
        wake_all(woken);
    }

    /// Wakes every task waiting now, and every `Notified` made before this call; stores no
    /// permit, so a task that starts waiting afterwards waits for the next notification.
    pub fn notify_waiters(&self) {
        let woken: Vec<Waker> = {
            let mut state = state(&self.state);
            state.generation += 1;
            state.waiters.drain(..).map(|(_, waker)| waker).collect()
        };
        wake_all(woken);
    }

    /// A future that completes at the next notification. It counts as waiting for
    /// `notify_waiters` from the moment it is made.
    pub fn notified(&self) -> Notified<'_> {
        let generation = state(&self.state).generation;
        Notified {
            notify: self,
            generation,
            waiter: None,
        }
    }
}

impl Default for Notify {
    #[track_caller]
    fn default() -> Notify {
        Notify::new()
    }
}

/// The future of [`Notify::notified`].
pub struct Notified<'a> {
    notify: &'a Notify,
    generation: u64,
    waiter: Option<u64>,
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let mut state = state(&self.notify.state);
        if state.generation != self.generation {
            return Poll::Ready(());
        }
        if let Some(id) = self.waiter {
            if let Some(i) = state.notified.iter().position(|&n| n == id) {
                state.notified.swap_remove(i);
                return Poll::Ready(());
            }
            // Still waiting: refresh the waker.
            if let Some(entry) = state.waiters.iter_mut().find(|(w, _)| *w == id) {
                entry.1 = context.waker().clone();
            }
            return Poll::Pending;
        }
        if state.permit {
            state.permit = false;
            return Poll::Ready(());
        }
        let id = state.next_waiter;
        state.next_waiter += 1;
        state.waiters.push_back((id, context.waker().clone()));
        drop(state);
        self.waiter = Some(id);
        Poll::Pending
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let Some(id) = self.waiter else { return };
        let passed_on = {
            let mut state = state(&self.notify.state);
            state.waiters.retain(|(w, _)| *w != id);
            // A `notify_one` that picked this waiter is not lost: it goes to the next one.
            match state.notified.iter().position(|&n| n == id) {
                Some(i) => {
                    state.notified.swap_remove(i);
                    true
                }
                None => false,
            }
        };
        if passed_on {
            self.notify.notify_one();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// oneshot
// ---------------------------------------------------------------------------------------------

/// A channel for one value, as tokio's `oneshot`.
pub mod oneshot {
    use super::*;

    struct Shared<T> {
        value: Option<T>,
        sender_gone: bool,
        receiver_gone: bool,
        receiver: Option<Waker>,
    }

    /// Sends the value.
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
        let shared = Arc::new(StateLock::new(Shared {
            value: None,
            sender_gone: false,
            receiver_gone: false,
            receiver: None,
        }));
        (
            Sender {
                shared: shared.clone(),
            },
            Receiver { shared },
        )
    }

    impl<T> Sender<T> {
        /// Sends `value`, or gives it back if the receiver is gone.
        pub fn send(self, value: T) -> Result<(), T> {
            let waker = {
                let mut shared = state(&self.shared);
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
        pub fn is_closed(&self) -> bool {
            state(&self.shared).receiver_gone
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            let waker = {
                let mut shared = state(&self.shared);
                shared.sender_gone = true;
                shared.receiver.take()
            };
            wake_all(waker);
        }
    }

    impl<T> Receiver<T> {
        /// Takes the value if it has been sent, without waiting.
        pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
            let mut shared = state(&self.shared);
            match shared.value.take() {
                Some(value) => Ok(value),
                None if shared.sender_gone || shared.receiver_gone => Err(TryRecvError::Closed),
                None => Err(TryRecvError::Empty),
            }
        }

        /// Stops the sender from sending, as tokio's: a value sent before can still be taken
        /// with [`try_recv`](Receiver::try_recv), and no value can arrive after it. The way to
        /// give up waiting without losing a value sent at the last moment.
        pub fn close(&mut self) {
            state(&self.shared).receiver_gone = true;
        }
    }

    impl<T> Future for Receiver<T> {
        type Output = Result<T, RecvError>;

        fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
            let mut shared = state(&self.shared);
            if let Some(value) = shared.value.take() {
                return Poll::Ready(Ok(value));
            }
            if shared.sender_gone || shared.receiver_gone {
                return Poll::Ready(Err(RecvError(())));
            }
            shared.receiver = Some(context.waker().clone());
            Poll::Pending
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            state(&self.shared).receiver_gone = true;
        }
    }
}
