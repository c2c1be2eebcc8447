//! The async [`RwLock`].

use std::cell::UnsafeCell;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{wake_all, Standing, StateLock, Ticket, TryLockError, WaitQueue};
use crate::runtime::op::Site;

/// An async reader-writer lock, as tokio's: many readers or one writer, and fair: waiters are
/// served first come first served, so a writer that waits keeps every reader that comes after
/// it out until it has had its turn (readers cannot starve a writer).
pub struct RwLock<T: ?Sized> {
    state: StateLock<RwLockState>,
    value: UnsafeCell<T>,
}

/// What a waiter of an [`RwLock`] waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

struct RwLockState {
    /// Read guards that exist or have been granted.
    readers: usize,
    /// Whether a write guard exists or has been granted.
    writer: bool,
    waiters: WaitQueue<Access>,
}

impl RwLockState {
    /// Whether a newcomer asking for `access` may take the lock at once: it is compatible
    /// with the holders and nobody is queued ahead of it.
    fn admits(&self, access: Access) -> bool {
        self.waiters.is_empty() && self.compatible(access)
    }

    fn compatible(&self, access: Access) -> bool {
        match access {
            Access::Read => !self.writer,
            Access::Write => !self.writer && self.readers == 0,
        }
    }

    fn take(&mut self, access: Access) {
        match access {
            Access::Read => self.readers += 1,
            Access::Write => self.writer = true,
        }
    }

    fn give_back(&mut self, access: Access) {
        match access {
            Access::Read => self.readers -= 1,
            Access::Write => self.writer = false,
        }
    }

    /// Grants the lock to waiters at the head for as long as they are compatible with the
    /// holders: a writer alone, or a run of readers up to the next writer.
    fn dispatch(&mut self) -> Vec<Waker> {
        let mut woken = Vec::new();
        while let Some(&access) = self.waiters.front() {
            if !self.compatible(access) {
                break;
            }
            self.take(access);
            woken.extend(self.waiters.grant_front());
        }
        woken
    }
}

// SAFETY: the value is reached only through guards, and `readers`/`writer` admit either
// shared guards or one exclusive guard, as `std::sync::RwLock` does.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T> RwLock<T> {
    /// A new, unlocked lock.
    #[track_caller]
    pub fn new(value: T) -> RwLock<T> {
        RwLock {
            state: StateLock::state_of(
                "AsyncRwLock",
                RwLockState {
                    readers: 0,
                    writer: false,
                    waiters: WaitQueue::new(),
                },
            ),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, consuming the lock.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Waits until no writer holds the lock and no writer waits ahead of this call, then
    /// takes shared access. The steps are recorded at the caller's line, and so is the
    /// release when the guard drops.
    #[track_caller]
    pub fn read(&self) -> impl Future<Output = RwLockReadGuard<'_, T>> {
        let site = Location::caller();
        let acquire = Acquire {
            lock: self,
            access: Access::Read,
            ticket: None,
            site,
        };
        async move {
            acquire.await;
            RwLockReadGuard { lock: self, site }
        }
    }

    /// Waits until nobody holds the lock and every waiter ahead of this call has had its
    /// turn, then takes exclusive access. Steps are recorded at the caller's line.
    #[track_caller]
    pub fn write(&self) -> impl Future<Output = RwLockWriteGuard<'_, T>> {
        let site = Location::caller();
        let acquire = Acquire {
            lock: self,
            access: Access::Write,
            ticket: None,
            site,
        };
        async move {
            acquire.await;
            RwLockWriteGuard { lock: self, site }
        }
    }

    /// Takes shared access if no writer holds the lock or waits for it.
    #[track_caller]
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        let site = Location::caller();
        self.try_take(Access::Read, site)?;
        Ok(RwLockReadGuard { lock: self, site })
    }

    /// Takes exclusive access if nobody holds the lock or waits for it.
    #[track_caller]
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        let site = Location::caller();
        self.try_take(Access::Write, site)?;
        Ok(RwLockWriteGuard { lock: self, site })
    }

    #[track_caller]
    fn try_take(&self, access: Access, site: Site) -> Result<(), TryLockError> {
        let operation = match access {
            Access::Read => "try_read",
            Access::Write => "try_write",
        };
        let mut state = self.state.lock_as(site, operation);
        if !state.admits(access) {
            return Err(TryLockError(()));
        }
        state.take(access);
        Ok(())
    }

    #[track_caller]
    fn release(&self, access: Access, site: Site) {
        let woken = {
            let operation = match access {
                Access::Read => "read-unlock",
                Access::Write => "write-unlock",
            };
            let mut state = self.state.lock_as(site, operation);
            state.give_back(access);
            state.dispatch()
        };
        wake_all(woken);
    }

    /// The value, through the exclusive borrow that proves nobody else holds it.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

/// Waits for one kind of access to an [`RwLock`]; the guard is made by the caller.
struct Acquire<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    access: Access,
    ticket: Option<Ticket>,
    site: Site,
}

impl<T: ?Sized> Future for Acquire<'_, T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let lock = self.lock;
        let operation = match self.access {
            Access::Read => "read-lock",
            Access::Write => "write-lock",
        };
        let mut state = lock.state.lock_as(self.site, operation);
        if let Some(ticket) = self.ticket {
            match state.waiters.check(ticket, context.waker()) {
                Standing::Granted => {
                    self.ticket = None;
                    return Poll::Ready(());
                }
                Standing::Waiting => {
                    crate::future::awaiting("an async RwLock", Some(self.site));
                    return Poll::Pending;
                }
                Standing::Released => self.ticket = None,
            }
        }
        if state.admits(self.access) {
            state.take(self.access);
            return Poll::Ready(());
        }
        self.ticket = Some(state.waiters.enqueue(self.access, context.waker()));
        crate::future::awaiting("an async RwLock", Some(self.site));
        Poll::Pending
    }
}

impl<T: ?Sized> Drop for Acquire<'_, T> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else {
            return;
        };
        let woken = {
            let mut state = self.lock.state.lock_as(self.site, "cancel lock");
            if state.waiters.withdraw(ticket) == Standing::Granted {
                state.give_back(self.access);
            }
            // A writer that leaves the head of the queue may let the readers behind it in.
            state.dispatch()
        };
        wake_all(woken);
    }
}

/// Shared access to an [`RwLock`]'s value; dropping it releases the access.
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Where the access was taken: its release is recorded there too.
    site: Site,
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: while a read guard exists no write guard does (see `RwLock`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.release(Access::Read, self.site);
    }
}

/// Exclusive access to an [`RwLock`]'s value; dropping it releases the lock.
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Where the access was taken: its release is recorded there too.
    site: Site,
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `RwLock`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (see `RwLock`).
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.release(Access::Write, self.site);
    }
}
