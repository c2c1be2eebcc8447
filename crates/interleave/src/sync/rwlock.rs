//! `RwLock`: many readers or one writer. std leaves the priority of readers and writers open, so
//! a read request that finds readers holding the lock and a writer waiting either joins the
//! readers or waits behind the writer, as the strategy chooses (see
//! `Execution::read_lock_enabled`); a recursive read can thus deadlock, as it can under
//! std. A thread that asks for the lock while it holds it for writing, or asks to write while
//! it reads, is reported as a relock failure.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::{Location, RefUnwindSafe, UnwindSafe};

use super::{poison, LockResult, TryLockError, TryLockResult};
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::{self, ObjIdx, ObjectKind, Site};
use crate::runtime::op_on;
use crate::runtime::{self, Execution};

/// A reader-writer lock protecting a `T`.
pub struct RwLock<T: ?Sized> {
    handle: ObjectHandle,
    data: UnsafeCell<T>,
}

// SAFETY: access is serialised by the runtime's reader/writer state, as in std.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}
// As std's: poisoning tells a thread that a panic may have left the data half-updated.
impl<T: ?Sized> UnwindSafe for RwLock<T> {}
impl<T: ?Sized> RefUnwindSafe for RwLock<T> {}

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
    idx: ObjIdx,
    site: Site,
    /// The thread was already panicking when it took the lock (see `poison`).
    panicking: bool,
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
#[track_caller]
fn give(lock: &ObjectHandle, site: Site) {
    runtime::switch_on(lock, ObjectKind::RwLock, op_on!(RwUnlock), site);
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

    /// A new unlocked lock that reports call `name` (the value of a primitive built on it).
    #[track_caller]
    pub(crate) const fn named(name: &'static str, value: T) -> RwLock<T> {
        RwLock {
            handle: ObjectHandle::named(Location::caller(), name),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the lock and returns the value; `Err` if the lock is poisoned.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = poison::handle_poisoned(&self.handle);
        poison::result(poisoned, self.data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Blocks until no writer holds the lock, then takes shared access.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let site = Location::caller();
        // The runtime records the new reader when it records the step.
        let idx =
            runtime::switch_on(&self.handle, ObjectKind::RwLock, op_on!(ReadLock), site).index();
        poison::result(poison::is_poisoned(idx), self.read_guard(site))
    }

    /// Blocks until nobody holds the lock, then takes exclusive access.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let site = Location::caller();
        // The runtime records the new writer when it records the step.
        let idx =
            runtime::switch_on(&self.handle, ObjectKind::RwLock, op_on!(WriteLock), site).index();
        poison::result(poison::is_poisoned(idx), self.write_guard(idx, site))
    }

    /// Takes the lock if it is free: its index in the execution and whether it is poisoned.
    #[track_caller]
    fn try_take(&self, write: bool, site: Site) -> Option<(ObjIdx, bool)> {
        let idx =
            runtime::switch_on(&self.handle, ObjectKind::RwLock, op_on!(TryRwLock), site).index();
        runtime::with(|ex| {
            let free = can_take(ex, idx, write) && (write || !ex.try_read_defers(idx));
            if free {
                ex.take_rwlock(idx, write, site);
            }
            free.then(|| (idx, ex.objects[idx as usize].poisoned))
        })
    }

    /// Takes shared access if no writer holds the lock and, as the strategy chooses, unless a
    /// writer waits for the readers that hold it.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let site = Location::caller();
        match self.try_take(false, site) {
            Some((_, poisoned)) => poison::try_result(poisoned, self.read_guard(site)),
            None => Err(TryLockError::WouldBlock),
        }
    }

    /// Takes exclusive access if nobody holds the lock.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let site = Location::caller();
        match self.try_take(true, site) {
            Some((idx, poisoned)) => poison::try_result(poisoned, self.write_guard(idx, site)),
            None => Err(TryLockError::WouldBlock),
        }
    }

    fn read_guard(&self, site: Site) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard {
            lock: self,
            site,
            not_send: PhantomData,
        }
    }

    fn write_guard(&self, idx: ObjIdx, site: Site) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard {
            lock: self,
            idx,
            site,
            panicking: runtime::thread_panicking(),
            not_send: PhantomData,
        }
    }

    /// Whether a writer panicked while holding the lock (not a scheduling point).
    pub fn is_poisoned(&self) -> bool {
        poison::handle_poisoned(&self.handle)
    }

    /// Clears the poison: the program has restored the data's invariants.
    pub fn clear_poison(&self) {
        poison::clear(&self.handle);
    }

    /// A mutable reference to the value; no locking is needed. `Err` if poisoned.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = poison::handle_poisoned(&self.handle);
        poison::result(poisoned, self.data.get_mut())
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

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns exclusive access into shared access in one step, so no writer can take the lock
    /// in between, as std's `downgrade`. A thread that panicked while holding the lock for
    /// writing poisons it here, as at a release.
    #[track_caller]
    pub fn downgrade(guard: Self) -> RwLockReadGuard<'a, T> {
        let guard = std::mem::ManuallyDrop::new(guard);
        let (lock, idx) = (guard.lock, guard.idx);
        let site = Location::caller();
        poison::poison_if_panicking(idx, guard.panicking);
        // The step releases the write lock when it is recorded; the thread runs on from there
        // to here without a scheduling point, so taking the read lock completes the same step.
        runtime::switch_on(
            &lock.handle,
            ObjectKind::RwLock,
            op_on!(RwUnlock, op::RW_DOWNGRADE),
            site,
        );
        runtime::with(|ex| ex.take_rwlock(idx, false, site));
        lock.read_guard(site)
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        give(&self.lock.handle, self.site);
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        // Only writers poison, as under std: a reader cannot leave the data half-updated.
        poison::poison_if_panicking(self.idx, self.panicking);
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
