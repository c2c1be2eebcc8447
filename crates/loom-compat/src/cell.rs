//! `loom::cell`: `UnsafeCell` whose accesses are scheduling points and are checked for data
//! races, as loom's are, with loom 0.7's pointer guards [`ConstPtr`] and [`MutPtr`].
//!
//! ```
//! use loom::cell::UnsafeCell;
//!
//! loom::model(|| {
//!     let cell = UnsafeCell::new(1);
//!     {
//!         let writer = cell.get_mut();
//!         // SAFETY: no other access to the cell is alive.
//!         unsafe { *writer.deref() += 1 };
//!     }
//!     let reader = cell.get();
//!     assert_eq!(reader.with(|value| unsafe { *value }), 2);
//! });
//! ```

use std::fmt;

/// loom's `UnsafeCell`: the value is reached through raw pointers, and every access is a
/// scheduling point checked for data races; any race fails the execution.
pub struct UnsafeCell<T: ?Sized> {
    inner: interleave::cell::UnsafeCell<T>,
}

/// A read access to an [`UnsafeCell`], from [`UnsafeCell::get`]: the read is scheduled and
/// race-checked when the guard is made, and the pointer stays usable while the guard lives.
pub struct ConstPtr<T: ?Sized> {
    ptr: *const T,
}

/// A write access to an [`UnsafeCell`], from [`UnsafeCell::get_mut`]: the write is scheduled
/// and race-checked when the guard is made, and the pointer stays usable while the guard lives.
pub struct MutPtr<T: ?Sized> {
    ptr: *mut T,
}

impl<T> UnsafeCell<T> {
    /// A new cell holding `value`.
    #[track_caller]
    pub const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell {
            inner: interleave::cell::UnsafeCell::new(value),
        }
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a const pointer to the value (a read).
    #[inline]
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.inner.with(f)
    }

    /// Runs `f` with a mutable pointer to the value (a write).
    #[inline]
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.inner.with_mut(f)
    }

    /// Starts a read of the value: a scheduling point where the read is checked for races
    /// against earlier writes. interleave checks an access where it starts; a conflicting
    /// access by another thread later, while the guard lives, is checked against this one at
    /// its own start, which reports the same unsynchronised pairs loom does.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        ConstPtr {
            ptr: self.inner.with(|ptr| ptr),
        }
    }

    /// Starts a write of the value: a scheduling point where the write is checked for races
    /// against earlier reads and writes (see [`get`](Self::get) for when accesses are checked).
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        MutPtr {
            ptr: self.inner.with_mut(|ptr| ptr),
        }
    }
}

impl<T: Default> Default for UnsafeCell<T> {
    #[track_caller]
    fn default() -> UnsafeCell<T> {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    #[track_caller]
    fn from(value: T) -> UnsafeCell<T> {
        UnsafeCell::new(value)
    }
}

impl<T: ?Sized> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl<T: ?Sized> ConstPtr<T> {
    /// A shared reference to the value.
    ///
    /// # Safety
    /// As for dereferencing a `*const T`: no mutable reference to the value may be alive.
    pub unsafe fn deref(&self) -> &T {
        // SAFETY: the caller keeps the promise above; the pointer is the cell's own.
        unsafe { &*self.ptr }
    }

    /// Runs `f` with the const pointer.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.ptr)
    }
}

impl<T: ?Sized> MutPtr<T> {
    /// A mutable reference to the value.
    ///
    /// # Safety
    /// As for dereferencing a `*mut T`: no other reference to the value may be alive.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn deref(&self) -> &mut T {
        // SAFETY: the caller keeps the promise above; the pointer is the cell's own.
        unsafe { &mut *self.ptr }
    }

    /// Runs `f` with the mutable pointer.
    pub fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.ptr)
    }
}

impl<T: ?Sized> fmt::Debug for ConstPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConstPtr").field("ptr", &self.ptr).finish()
    }
}

impl<T: ?Sized> fmt::Debug for MutPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutPtr").field("ptr", &self.ptr).finish()
    }
}
