//! loom-shaped `Mutex`, `MutexGuard` and `Condvar` over interleave's: the same scheduling and
//! poisoning, a guard without `must_use`.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
use std::time::Duration;

use interleave::sync::WaitTimeoutResult;

/// A mutual exclusion lock.
#[derive(Default)]
pub struct Mutex<T: ?Sized> {
    inner: interleave::sync::Mutex<T>,
}

/// Proof of holding a [`Mutex`]; unlocks it when dropped.
pub struct MutexGuard<'a, T: ?Sized> {
    inner: interleave::sync::MutexGuard<'a, T>,
}

/// Wraps interleave's guard, keeping a poisoned lock's guard inside the error.
fn wrap_lock<'a, T: ?Sized>(
    result: LockResult<interleave::sync::MutexGuard<'a, T>>,
) -> LockResult<MutexGuard<'a, T>> {
    match result {
        Ok(inner) => Ok(MutexGuard { inner }),
        Err(poisoned) => Err(PoisonError::new(MutexGuard {
            inner: poisoned.into_inner(),
        })),
    }
}

impl<T> Mutex<T> {
    /// A new unlocked mutex holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            inner: interleave::sync::Mutex::new(value),
        }
    }

    /// Consumes the mutex and returns the value.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Blocks until the lock is held.
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        wrap_lock(self.inner.lock())
    }

    /// Takes the lock if it is free.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(inner) => Ok(MutexGuard { inner }),
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
            Err(TryLockError::Poisoned(poisoned)) => {
                Err(TryLockError::Poisoned(PoisonError::new(MutexGuard {
                    inner: poisoned.into_inner(),
                })))
            }
        }
    }

    /// A mutable reference to the value; no locking is needed.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }
}

impl<T> From<T> for Mutex<T> {
    #[track_caller]
    fn from(value: T) -> Mutex<T> {
        Mutex::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
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

/// A condition variable for [`Mutex`].
#[derive(Debug, Default)]
pub struct Condvar {
    inner: interleave::sync::Condvar,
}

impl Condvar {
    /// A new condition variable.
    #[track_caller]
    pub fn new() -> Condvar {
        Condvar {
            inner: interleave::sync::Condvar::new(),
        }
    }

    /// Releases the lock, waits for a notification, and takes the lock again.
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        wrap_lock(self.inner.wait(guard.inner))
    }

    /// Like [`wait`](Condvar::wait), with a timeout on interleave's virtual clock.
    #[track_caller]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        match self.inner.wait_timeout(guard.inner, timeout) {
            Ok((inner, timed_out)) => Ok((MutexGuard { inner }, timed_out)),
            Err(poisoned) => {
                let (inner, timed_out) = poisoned.into_inner();
                Err(PoisonError::new((MutexGuard { inner }, timed_out)))
            }
        }
    }

    /// Wakes one waiting thread.
    #[track_caller]
    pub fn notify_one(&self) {
        self.inner.notify_one();
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        self.inner.notify_all();
    }
}
