//! `Mutex`: mutual exclusion; `lock` blocks while another thread holds it, and locking a mutex
//! the thread already holds is reported as a failure (std would deadlock or panic).

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::{Location, RefUnwindSafe, UnwindSafe};

use super::{poison, LockResult, TryLockError, TryLockResult};
use crate::runtime;
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::{ObjIdx, ObjectKind, Site};
use crate::runtime::op_on;

/// A mutual-exclusion lock protecting a `T`.
pub struct Mutex<T: ?Sized> {
    handle: ObjectHandle,
    data: UnsafeCell<T>,
}

// SAFETY: access to `data` is serialised by the runtime's ownership state, exactly as std's
// mutex serialises it.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// As std's: poisoning tells a thread that a panic may have left the data half-updated.
impl<T: ?Sized> UnwindSafe for Mutex<T> {}
impl<T: ?Sized> RefUnwindSafe for Mutex<T> {}

/// Proof of holding a [`Mutex`]; unlocks when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized + 'a> {
    mutex: &'a Mutex<T>,
    idx: ObjIdx,
    site: Site,
    /// The thread was already panicking when it took the lock (see `poison`).
    panicking: bool,
    not_send: PhantomData<*const ()>,
}

// SAFETY: sharing a guard only shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T> Mutex<T> {
    /// A new unlocked mutex.
    #[track_caller]
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            handle: ObjectHandle::new(Location::caller()),
            data: UnsafeCell::new(value),
        }
    }

    /// A new unlocked mutex that keeps the state of the primitive `name` built on it (the
    /// async primitives): reports show its steps as that primitive's operations.
    #[track_caller]
    pub(crate) const fn state_of(name: &'static str, value: T) -> Mutex<T> {
        Mutex {
            handle: ObjectHandle::internal(Location::caller(), name),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the mutex and returns the value; `Err` if the mutex is poisoned.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = poison::handle_poisoned(&self.handle);
        poison::result(poisoned, self.data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Blocks until the lock is free, then takes it.
    #[inline(always)]
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let site = Location::caller();
        // The runtime records the new holder when it records the step.
        let idx = runtime::switch_on(&self.handle, ObjectKind::Mutex, op_on!(Lock), site).index();
        poison::result(poison::is_poisoned(idx), self.guard(idx, site))
    }

    /// Where the mutex was created.
    pub(crate) fn site(&self) -> Site {
        self.handle.site()
    }

    /// [`lock`](Mutex::lock) recorded at `site`: for primitives built on this one, which
    /// report their caller's line.
    #[track_caller]
    pub(crate) fn lock_at(&self, site: Site) -> MutexGuard<'_, T> {
        let idx = runtime::switch_on(&self.handle, ObjectKind::Mutex, op_on!(Lock), site).index();
        self.guard(idx, site)
    }

    /// Locks a primitive's state kept in this mutex, the step recorded at `site` (the user's
    /// call of the primitive) and shown in reports as the user's `operation` (`lock`,
    /// `notify_one`): the lock is the primitive's implementation, the operation is what the
    /// user's code did.
    #[track_caller]
    pub(crate) fn lock_as(&self, site: Site, operation: &'static str) -> MutexGuard<'_, T> {
        let guard = self.lock_at(site);
        runtime::with(|ex| ex.show_last_step_as(operation));
        guard
    }

    /// Takes the lock if it is free.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let site = Location::caller();
        let idx =
            runtime::switch_on(&self.handle, ObjectKind::Mutex, op_on!(TryLock), site).index();
        let taken = runtime::with(|ex| {
            let free = matches!(
                ex.objects[idx as usize].state,
                ObjState::Mutex { holder: None }
            );
            if free {
                ex.take_mutex(idx, site);
            }
            free
        });
        if taken {
            poison::try_result(poison::is_poisoned(idx), self.guard(idx, site))
        } else {
            Err(TryLockError::WouldBlock)
        }
    }

    fn guard(&self, idx: ObjIdx, site: Site) -> MutexGuard<'_, T> {
        MutexGuard {
            mutex: self,
            idx,
            site,
            panicking: runtime::thread_panicking(),
            not_send: PhantomData,
        }
    }

    /// Whether a thread panicked while holding the lock (not a scheduling point, like std's
    /// racy read of the flag).
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

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The mutex's index in the running execution, for primitives built on it.
    pub(super) fn index(&self) -> ObjIdx {
        self.idx
    }

    /// Unlocks without scheduling; the caller takes responsibility (used by `Condvar::wait`).
    pub(super) fn into_parts(self) -> (&'a Mutex<T>, Site) {
        let parts = (self.mutex, self.site);
        std::mem::forget(self);
        parts
    }

    /// A guard of `mutex`, whose index in the execution is `idx`, that the running thread
    /// has just taken again (`Condvar::wait`); `Err` if the mutex is poisoned.
    pub(super) fn from_parts(
        mutex: &'a Mutex<T>,
        idx: ObjIdx,
        site: Site,
    ) -> LockResult<MutexGuard<'a, T>> {
        poison::result(poison::is_poisoned(idx), mutex.guard(idx, site))
    }
}

impl<T: ?Sized> Mutex<T> {
    pub(super) fn handle(&self) -> &ObjectHandle {
        &self.handle
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves this thread holds the lock.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        // `Drop` cannot be `#[track_caller]`: the unlock is reported at the lock's site. The
        // runtime releases the mutex when it records the step.
        // A thread that panics while it holds the lock poisons it; the flag is set before the
        // unlock step, while no other thread can take the lock.
        poison::poison_if_panicking(self.idx, self.panicking);
        runtime::switch_on(
            &self.mutex.handle,
            ObjectKind::Mutex,
            op_on!(Unlock),
            self.site,
        );
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex").finish_non_exhaustive()
    }
}

impl<T: Default> Default for Mutex<T> {
    #[track_caller]
    fn default() -> Mutex<T> {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    #[track_caller]
    fn from(value: T) -> Mutex<T> {
        Mutex::new(value)
    }
}
