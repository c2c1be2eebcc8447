//! The async [`Mutex`].

use std::cell::UnsafeCell;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{wake_all, Standing, StateLock, Ticket, TryLockError, WaitQueue};
use crate::runtime::op::Site;

/// An async mutex, as tokio's: `lock().await` waits without blocking the thread, waiters are
/// served first come first served, and the guard may be held across `.await`s.
pub struct Mutex<T: ?Sized> {
    state: StateLock<MutexState>,
    value: UnsafeCell<T>,
}

struct MutexState {
    /// Whether a guard exists, or the head waiter has been granted the mutex.
    locked: bool,
    waiters: WaitQueue,
}

impl MutexState {
    /// Hands a free mutex to the head waiter.
    fn dispatch(&mut self) -> Option<Waker> {
        if self.locked {
            return None;
        }
        let waker = self.waiters.grant_front()?;
        self.locked = true;
        Some(waker)
    }
}

// SAFETY: the value is reached only through a guard, and `locked` admits one guard at a time.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    /// A new, unlocked mutex.
    #[track_caller]
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            state: StateLock::state_of(
                "AsyncMutex",
                MutexState {
                    locked: false,
                    waiters: WaitQueue::new(),
                },
            ),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits until the mutex is free and takes it. The steps are recorded at the caller's
    /// line, and so is the unlock when the guard drops.
    #[track_caller]
    pub fn lock(&self) -> impl Future<Output = MutexGuard<'_, T>> {
        Lock {
            mutex: self,
            ticket: None,
            site: Location::caller(),
        }
    }

    /// Takes the mutex if it is free and nobody waits for it.
    #[track_caller]
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        let site = Location::caller();
        let mut state = self.state.lock_as(site, "try_lock");
        if state.locked || !state.waiters.is_empty() {
            return Err(TryLockError(()));
        }
        state.locked = true;
        Ok(MutexGuard { mutex: self, site })
    }

    /// The value, through the exclusive borrow that proves nobody else holds it.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

/// The future of [`Mutex::lock`].
struct Lock<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
    ticket: Option<Ticket>,
    site: Site,
}

impl<'a, T: ?Sized> Future for Lock<'a, T> {
    type Output = MutexGuard<'a, T>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<MutexGuard<'a, T>> {
        let (mutex, site) = (self.mutex, self.site);
        let mut state = mutex.state.lock_as(site, "lock");
        if let Some(ticket) = self.ticket {
            match state.waiters.check(ticket, context.waker()) {
                Standing::Granted => {
                    self.ticket = None;
                    return Poll::Ready(MutexGuard { mutex, site });
                }
                Standing::Waiting => {
                    crate::future::awaiting("an async Mutex", Some(site));
                    return Poll::Pending;
                }
                Standing::Released => self.ticket = None,
            }
        }
        if !state.locked && state.waiters.is_empty() {
            state.locked = true;
            return Poll::Ready(MutexGuard { mutex, site });
        }
        self.ticket = Some(state.waiters.enqueue((), context.waker()));
        crate::future::awaiting("an async Mutex", Some(site));
        Poll::Pending
    }
}

impl<T: ?Sized> Drop for Lock<'_, T> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else {
            return;
        };
        let woken = {
            let mut state = self.mutex.state.lock_as(self.site, "cancel lock");
            if state.waiters.withdraw(ticket) == Standing::Granted {
                state.locked = false;
            }
            state.dispatch()
        };
        wake_all(woken);
    }
}

/// Access to a [`Mutex`]'s value; dropping it unlocks the mutex and hands it to the next
/// waiter.
pub struct MutexGuard<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
    /// Where the lock was taken: the unlock is recorded there too.
    site: Site,
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
        let woken = {
            let mut state = self.mutex.state.lock_as(self.site, "unlock");
            state.locked = false;
            state.dispatch()
        };
        wake_all(woken);
    }
}
