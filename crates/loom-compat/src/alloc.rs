//! `loom::alloc`: the global allocator's `alloc`, `alloc_zeroed` and `dealloc` with loom's leak
//! tracking, and `Track`, a value tracked as an allocation. Memory allocated here and not freed
//! by the end of an execution fails the execution, as in loom (see `leak.rs`).

use std::panic::Location;

use crate::leak;

#[doc(no_inline)]
pub use std::alloc::Layout;

/// [`std::alloc::alloc`], tracked: the block must be freed with [`dealloc`] before the
/// execution ends.
///
/// # Safety
/// As [`std::alloc::alloc`].
#[track_caller]
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller upholds `std::alloc::alloc`'s contract.
    tracked(unsafe { std::alloc::alloc(layout) }, Location::caller())
}

/// [`std::alloc::alloc_zeroed`], tracked as [`alloc`] is.
///
/// # Safety
/// As [`std::alloc::alloc_zeroed`].
#[track_caller]
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: the caller upholds `std::alloc::alloc_zeroed`'s contract.
    tracked(
        unsafe { std::alloc::alloc_zeroed(layout) },
        Location::caller(),
    )
}

/// Registers the block at `ptr`, allocated at `site`, unless the allocation failed.
fn tracked(ptr: *mut u8, site: &'static Location<'static>) -> *mut u8 {
    if !ptr.is_null() {
        leak::allocated(ptr as usize, "allocation", site);
    }
    ptr
}

/// [`std::alloc::dealloc`], ending the tracking that [`alloc`] started.
///
/// # Safety
/// As [`std::alloc::dealloc`].
#[track_caller]
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    leak::freed(ptr as usize);
    // SAFETY: the caller upholds `std::alloc::dealloc`'s contract.
    unsafe { std::alloc::dealloc(ptr, layout) }
}

/// A value tracked for leaks: a `Track` still alive at the end of an execution fails it.
#[derive(Debug)]
pub struct Track<T> {
    value: T,
    /// A heap cell whose address identifies this value in the leak register.
    id: Box<u8>,
}

impl<T> Track<T> {
    /// Tracks `value` for leaks.
    #[track_caller]
    pub fn new(value: T) -> Track<T> {
        let id = Box::new(0u8);
        leak::allocated(&*id as *const u8 as usize, "Track", Location::caller());
        Track { value, id }
    }

    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Stops tracking and returns the value.
    pub fn into_inner(self) -> T {
        let this = std::mem::ManuallyDrop::new(self);
        leak::freed(this.address());
        // SAFETY: `this` is never used or dropped again; each field is read out once.
        let (value, id) = unsafe { (std::ptr::read(&this.value), std::ptr::read(&this.id)) };
        drop(id);
        value
    }

    fn address(&self) -> usize {
        &*self.id as *const u8 as usize
    }
}

impl<T> Drop for Track<T> {
    fn drop(&mut self) {
        leak::freed(self.address());
    }
}
