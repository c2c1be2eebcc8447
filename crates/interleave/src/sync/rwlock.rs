//! `RwLock`: many readers or one writer. Readers are admitted whenever no writer holds the lock
//! (no writer preference); a thread that takes the lock again while holding it is reported as
//! a relock failure.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use super::{LockResult, TryLockError, TryLockResult};
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::{ObjIdx, ObjectKind, OpKind, Site};
use crate::runtime::{self, Execution};

/// A reader-writer lock protecting a `T`.
pub struct RwLock<T: ?Sized> {
    handle: ObjectHandle,
    data: UnsafeCell<T>,
}

// SAFETY: access is serialised by the runtime's reader/writer state, as in std.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

/// Shared access to an [`RwLock`]; releases when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    site: Site,
    not_send: PhantomData<*const ()>,
}

/// Exclusive access to an [`RwLock`]; releases when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    site: Site,
    not_send: PhantomData<*const ()>,
}

// SAFETY: sharing a guard only shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

/// Whether the lock can be taken for reading or writing now.
fn can_take(ex: &Execution, idx: ObjIdx, write: bool) -> bool {
    match &ex.objects[idx as usize].state {
        ObjState::RwLock { writer, readers } => writer.is_none() && (!write || readers.is_empty()),
        _ => unreachable!("an RwLock handle points at another kind of object"),
    }
}

/// Releases the lock; the runtime records the release when it records the step.
fn give(lock: &ObjectHandle, site: Site) {
    runtime::switch_on(lock, ObjectKind::RwLock, OpKind::RwUnlock, site);
}

impl<T> RwLock<T> {
    /// A new unlocked lock.
    #[track_caller]
    pub const fn new(value: T) -> RwLock<T> {
        RwLock {
            handle: ObjectHandle::new(Location::caller()),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the lock and returns the value.
    pub fn into_inner(self) -> LockResult<T> {
        Ok(self.data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Blocks until no writer holds the lock, then takes shared access.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let site = Location::caller();
        // The runtime records the new reader when it records the step.
        runtime::switch_on(&self.handle, ObjectKind::RwLock, OpKind::ReadLock, site);
        Ok(self.read_guard(site))
    }

    /// Blocks until nobody holds the lock, then takes exclusive access.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let site = Location::caller();
        // The runtime records the new writer when it records the step.
        runtime::switch_on(&self.handle, ObjectKind::RwLock, OpKind::WriteLock, site);
        Ok(self.write_guard(site))
    }

    fn try_take(&self, write: bool, site: Site) -> bool {
        let idx = runtime::switch_on(&self.handle, ObjectKind::RwLock, OpKind::TryRwLock, site);
        runtime::with(|ex| {
            let free = can_take(ex, idx, write);
            if free {
                ex.take_rwlock(idx, write, site);
            }
            free
        })
    }

    /// Takes shared access if no writer holds the lock.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let site = Location::caller();
        if self.try_take(false, site) {
            Ok(self.read_guard(site))
        } else {
            Err(TryLockError::WouldBlock)
        }
    }

    /// Takes exclusive access if nobody holds the lock.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let site = Location::caller();
        if self.try_take(true, site) {
            Ok(self.write_guard(site))
        } else {
            Err(TryLockError::WouldBlock)
        }
    }

    fn read_guard(&self, site: Site) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard {
            lock: self,
            site,
            not_send: PhantomData,
        }
    }

    fn write_guard(&self, site: Site) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard {
            lock: self,
            site,
            not_send: PhantomData,
        }
    }

    /// Always false: a panic fails the execution, so poisoning is never observed.
    pub fn is_poisoned(&self) -> bool {
        false
    }

    /// Does nothing: see [`RwLock::is_poisoned`].
    pub fn clear_poison(&self) {}

    /// A mutable reference to the value; no locking is needed.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        Ok(self.data.get_mut())
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves shared access.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        give(&self.lock.handle, self.site);
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        give(&self.lock.handle, self.site);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock").finish_non_exhaustive()
    }
}

impl<T: Default> Default for RwLock<T> {
    #[track_caller]
    fn default() -> RwLock<T> {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    #[track_caller]
    fn from(value: T) -> RwLock<T> {
        RwLock::new(value)
    }
}
