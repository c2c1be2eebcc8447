//! loom's `Arc`: std's reference counting, plus a registration of the allocation so that a
//! leaked `Arc` (a cycle, a `mem::forget`) fails the execution, and which carries the
//! happens-before std's `Arc` gives from every dropped reference to the last holder's use of the
//! value (see `leak.rs`).

use std::fmt;
use std::ops::Deref;
use std::panic::Location;
use std::pin::Pin;

use crate::leak;

/// A thread-safe reference-counted pointer whose allocation must be freed by the end of each
/// execution.
pub struct Arc<T: ?Sized> {
    inner: std::sync::Arc<T>,
}

impl<T> Arc<T> {
    /// Allocates `value`.
    #[track_caller]
    pub fn new(value: T) -> Arc<T> {
        Arc::from_std(std::sync::Arc::new(value))
    }

    /// Allocates `value`, pinned.
    #[track_caller]
    pub fn pin(value: T) -> Pin<Arc<T>> {
        // SAFETY: the value is never moved out of its allocation; `Arc` gives no `&mut T`
        // while it is shared.
        unsafe { Pin::new_unchecked(Arc::new(value)) }
    }

    /// The value, if this is the only reference.
    pub fn try_unwrap(this: Arc<T>) -> Result<T, Arc<T>> {
        let address = this.address();
        let inner = this.into_std();
        match std::sync::Arc::try_unwrap(inner) {
            Ok(value) => {
                leak::acquired(address);
                leak::freed(address);
                Ok(value)
            }
            Err(inner) => Err(Arc { inner }),
        }
    }
}

impl<T: ?Sized> Arc<T> {
    /// Tracks an allocation made with std's `Arc` (its only reference, or the first tracked
    /// one).
    #[track_caller]
    pub fn from_std(inner: std::sync::Arc<T>) -> Arc<T> {
        if std::sync::Arc::strong_count(&inner) == 1 {
            leak::allocated(address_of(&inner), "Arc", Location::caller());
        }
        Arc { inner }
    }

    fn address(&self) -> usize {
        address_of(&self.inner)
    }

    /// Gives up tracking without freeing: the std `Arc` inside.
    fn into_std(self) -> std::sync::Arc<T> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the pointer is moved out once.
        unsafe { std::ptr::read(&this.inner) }
    }

    /// The number of strong references.
    pub fn strong_count(this: &Arc<T>) -> usize {
        std::sync::Arc::strong_count(&this.inner)
    }

    /// Whether two `Arc`s point to the same allocation.
    pub fn ptr_eq(this: &Arc<T>, other: &Arc<T>) -> bool {
        std::sync::Arc::ptr_eq(&this.inner, &other.inner)
    }

    /// A mutable reference to the value, if this is the only reference.
    pub fn get_mut(this: &mut Arc<T>) -> Option<&mut T> {
        let address = this.address();
        let value = std::sync::Arc::get_mut(&mut this.inner);
        if value.is_some() {
            leak::acquired(address);
        }
        value
    }

    /// The pointer to the value; the reference stays counted (see [`Arc::from_raw`]).
    pub fn into_raw(this: Arc<T>) -> *const T {
        std::sync::Arc::into_raw(this.into_std())
    }

    /// The pointer to the value, without consuming the `Arc`.
    pub fn as_ptr(this: &Arc<T>) -> *const T {
        std::sync::Arc::as_ptr(&this.inner)
    }

    /// Rebuilds an `Arc` from [`Arc::into_raw`].
    ///
    /// # Safety
    /// As for `std::sync::Arc::from_raw`.
    pub unsafe fn from_raw(ptr: *const T) -> Arc<T> {
        Arc {
            // SAFETY: forwarded to the caller.
            inner: unsafe { std::sync::Arc::from_raw(ptr) },
        }
    }

    /// Adds a strong reference through a raw pointer.
    ///
    /// # Safety
    /// As for `std::sync::Arc::increment_strong_count`.
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: forwarded to the caller.
        unsafe { std::sync::Arc::increment_strong_count(ptr) }
    }

    /// Drops a strong reference through a raw pointer.
    ///
    /// # Safety
    /// As for `std::sync::Arc::decrement_strong_count`.
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: forwarded to the caller; the rebuilt `Arc` frees the allocation and
        // unregisters it if this was the last reference.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

impl<T: Clone> Arc<T> {
    /// A mutable reference to the value, cloning it into a new allocation if it is shared.
    #[track_caller]
    pub fn make_mut(this: &mut Arc<T>) -> &mut T {
        if std::sync::Arc::strong_count(&this.inner) > 1 {
            *this = Arc::new((*this.inner).clone());
        } else {
            leak::acquired(this.address());
        }
        std::sync::Arc::make_mut(&mut this.inner)
    }
}

/// The allocation's address, which identifies it while it lives.
fn address_of<T: ?Sized>(arc: &std::sync::Arc<T>) -> usize {
    std::sync::Arc::as_ptr(arc) as *const () as usize
}

impl<T: ?Sized> Clone for Arc<T> {
    fn clone(&self) -> Arc<T> {
        Arc {
            inner: self.inner.clone(),
        }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        let address = self.address();
        if std::sync::Arc::strong_count(&self.inner) == 1 {
            // Before the value's own destructor, which runs after this.
            leak::acquired(address);
            leak::freed(address);
        } else {
            leak::released(address);
        }
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> std::borrow::Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        &self.inner
    }
}

impl<T: Default> Default for Arc<T> {
    #[track_caller]
    fn default() -> Arc<T> {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    #[track_caller]
    fn from(value: T) -> Arc<T> {
        Arc::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.inner, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.inner, f)
    }
}

impl<T: ?Sized> fmt::Pointer for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.inner, f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for Arc<T> {
    fn eq(&self, other: &Arc<T>) -> bool {
        *self.inner == *other.inner
    }
}

impl<T: ?Sized + Eq> Eq for Arc<T> {}

impl<T: ?Sized + std::hash::Hash> std::hash::Hash for Arc<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (*self.inner).hash(state);
    }
}
