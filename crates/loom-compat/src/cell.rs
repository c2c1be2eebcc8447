//! `loom::cell`: `UnsafeCell` whose accesses are scheduling points and are checked for data
//! races, as loom's are, with loom 0.7's pointer guards [`ConstPtr`] and [`MutPtr`], and
//! loom's checked [`Cell`].
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
use std::marker::PhantomData;

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
    pub fn new(value: T) -> UnsafeCell<T> {
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

/// loom's `Cell`: `std::cell::Cell`'s methods, each access checked for data races as an
/// [`UnsafeCell`] access is. Like std's it is not `Sync`; a type that shares one between threads
/// (behind its own `unsafe impl Sync`) has its unsynchronised uses reported.
pub struct Cell<T> {
    value: interleave::cell::Var<T>,
    not_sync: PhantomData<std::cell::Cell<()>>,
}

impl<T> Cell<T> {
    /// A new cell holding `value`.
    #[track_caller]
    pub fn new(value: T) -> Cell<T> {
        Cell {
            value: interleave::cell::Var::new(value),
            not_sync: PhantomData,
        }
    }

    /// Writes `value`.
    #[track_caller]
    pub fn set(&self, value: T) {
        self.value.set(value);
    }

    /// Writes `value` and returns the previous value.
    #[track_caller]
    pub fn replace(&self, value: T) -> T {
        self.value.replace(value)
    }

    /// Exchanges the values of two cells.
    #[track_caller]
    pub fn swap(&self, other: &Cell<T>) {
        if std::ptr::eq(self, other) {
            return;
        }
        // Two accesses, each a race-checked write; the exchange itself follows the second
        // with no scheduling point in between.
        let mine = self.value.with_mut(|mine| mine as *mut T);
        let theirs = other.value.with_mut(|theirs| theirs as *mut T);
        // SAFETY: both pointers come from live cells of this thread (`Cell` is not `Sync`, and
        // a type that shares it anyway has the other thread's access reported as a race), and
        // they differ (tested above).
        unsafe { std::ptr::swap(mine, theirs) };
    }

    /// Takes the value, leaving `T::default()`.
    #[track_caller]
    pub fn take(&self) -> T
    where
        T: Default,
    {
        self.replace(T::default())
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: Copy> Cell<T> {
    /// A copy of the value.
    #[track_caller]
    pub fn get(&self) -> T {
        self.value.get()
    }
}

impl<T: Default> Default for Cell<T> {
    #[track_caller]
    fn default() -> Cell<T> {
        Cell::new(T::default())
    }
}

impl<T> From<T> for Cell<T> {
    #[track_caller]
    fn from(value: T) -> Cell<T> {
        Cell::new(value)
    }
}

impl<T: Copy + fmt::Debug> fmt::Debug for Cell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Formatting reads the value without a scheduling point or a race check, as the
        // debug output of loom's own cells does not take part in the model.
        f.debug_struct("Cell").finish_non_exhaustive()
    }
}
