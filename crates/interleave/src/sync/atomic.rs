//! Atomics under the controlled scheduler, shaped like `std::sync::atomic`: every operation is
//! a scheduling point. The memory model is sequential consistency: whatever `Ordering` is
//! passed, operations behave as `SeqCst`; for happens-before, every store releases and every
//! load acquires. `compare_exchange_weak` never fails spuriously.

use std::panic::Location;
use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

use crate::runtime;
use crate::runtime::object::ObjectHandle;
use crate::runtime::op::{ObjectKind, OpKind, Site};
use crate::runtime::FailureKind;

/// The ordering used for the underlying operation: everything runs on one OS thread, so any
/// ordering is correct; `SeqCst` documents the model.
const SC: Ordering = Ordering::SeqCst;

/// Schedules an atomic operation of `kind` on `handle`, then performs `op`. The runtime applies
/// the happens-before effect when it records the step. When the execution logs values, the
/// value before and after `op` (read by `value`) is recorded with the step.
#[inline(always)]
fn atomic_op<R>(
    handle: &ObjectHandle,
    kind: OpKind,
    site: Site,
    value: impl Fn() -> u64,
    op: impl FnOnce() -> R,
) -> R {
    if !runtime::switch_on(handle, ObjectKind::Atomic, kind, site).logs_values() {
        return op();
    }
    let before = value();
    let result = op();
    let after = value();
    runtime::with(|ex| ex.record_value(before, after));
    result
}

/// Schedules a plain read of the atomic `handle` and fails the execution with a data race when
/// a store to it does not happen before the read (the atomic's released clock is not below the
/// reader's). The read is announced as a plain `Read`, so it acquires nothing.
#[track_caller]
fn unsync_read(handle: &ObjectHandle, site: Site) {
    let idx = runtime::switch_on(handle, ObjectKind::Atomic, OpKind::Read, site).index();
    let failed = runtime::with(|ex| {
        let me = ex.me();
        if ex.objects[idx as usize].clock.leq(&ex.threads[me].clock) {
            return false;
        }
        ex.fail(
            FailureKind::DataRace,
            format!(
                "unsync_load at {site} reads an atomic that another thread stored to \
                 without a happens-before edge to this thread (loom: causality violation)"
            ),
        );
        true
    });
    if failed {
        runtime::stop_if_failed();
    }
}

/// A memory fence: a scheduling point (fences add nothing under sequential consistency).
#[track_caller]
pub fn fence(order: Ordering) {
    let _ = order;
    runtime::switch(
        runtime::op::Op::new(OpKind::Fence, runtime::op::NO_OBJECT),
        Location::caller(),
    );
}

/// A compiler fence: not a scheduling point (it orders nothing between threads).
pub fn compiler_fence(order: Ordering) {
    std_atomic::compiler_fence(order);
}

/// How an atomic's value is logged for the schedule-sensitive-branch analysis, which only
/// compares logged values for equality.
trait Logged {
    fn logged(self) -> u64;
}

macro_rules! logged_as_cast {
    ($($t:ty)*) => {$(
        impl Logged for $t {
            fn logged(self) -> u64 {
                self as u64
            }
        }
    )*};
}

logged_as_cast!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize bool);

impl<T> Logged for *mut T {
    fn logged(self) -> u64 {
        self as usize as u64
    }
}

/// Methods shared by every atomic type.
macro_rules! atomic_common {
    ($atomic:ident, $t:ty) => {
        /// The current value as the value log records it.
        fn logged(&self) -> u64 {
            Logged::logged(self.inner.load(SC))
        }

        /// A new atomic holding `value`.
        #[track_caller]
        pub const fn new(value: $t) -> Self {
            Self {
                handle: ObjectHandle::new(Location::caller()),
                inner: std_atomic::$atomic::new(value),
            }
        }

        /// Loads the value.
        #[inline]
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $t {
            let _ = order;
            atomic_op(
                &self.handle,
                OpKind::AtomicLoad,
                Location::caller(),
                || self.logged(),
                || self.inner.load(SC),
            )
        }

        /// Stores `value`.
        #[inline]
        #[track_caller]
        pub fn store(&self, value: $t, order: Ordering) {
            let _ = order;
            atomic_op(
                &self.handle,
                OpKind::AtomicStore,
                Location::caller(),
                || self.logged(),
                || self.inner.store(value, SC),
            )
        }

        /// Stores `value` and returns the previous value.
        #[inline]
        #[track_caller]
        pub fn swap(&self, value: $t, order: Ordering) -> $t {
            let _ = order;
            atomic_op(
                &self.handle,
                OpKind::AtomicRmw,
                Location::caller(),
                || self.logged(),
                || self.inner.swap(value, SC),
            )
        }

        /// Stores `new` if the value is `current`; returns the previous value, `Ok` if it
        /// matched.
        #[inline]
        #[track_caller]
        pub fn compare_exchange(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            let _ = (success, failure);
            atomic_op(
                &self.handle,
                OpKind::AtomicRmw,
                Location::caller(),
                || self.logged(),
                || self.inner.compare_exchange(current, new, SC, SC),
            )
        }

        /// Like `compare_exchange`; never fails spuriously here.
        #[inline]
        #[track_caller]
        pub fn compare_exchange_weak(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            let _ = (success, failure);
            atomic_op(
                &self.handle,
                OpKind::AtomicRmw,
                Location::caller(),
                || self.logged(),
                || self.inner.compare_exchange(current, new, SC, SC),
            )
        }

        /// Applies `f` to the value as one atomic step; stores `Some` results.
        #[inline]
        #[track_caller]
        pub fn fetch_update<F>(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            mut f: F,
        ) -> Result<$t, $t>
        where
            F: FnMut($t) -> Option<$t>,
        {
            let _ = (set_order, fetch_order);
            atomic_op(
                &self.handle,
                OpKind::AtomicRmw,
                Location::caller(),
                || self.logged(),
                || {
                    let previous = self.inner.load(SC);
                    match f(previous) {
                        Some(next) => {
                            self.inner.store(next, SC);
                            Ok(previous)
                        }
                        None => Err(previous),
                    }
                },
            )
        }

        /// [`fetch_update`](Self::fetch_update) under its newer std name.
        #[inline]
        #[track_caller]
        pub fn try_update<F>(
            &self,
            set_order: Ordering,
            fetch_order: Ordering,
            f: F,
        ) -> Result<$t, $t>
        where
            F: FnMut($t) -> Option<$t>,
        {
            self.fetch_update(set_order, fetch_order, f)
        }

        /// Stores `f` of the value as one atomic step; returns the previous value.
        #[inline]
        #[track_caller]
        pub fn update<F>(&self, set_order: Ordering, fetch_order: Ordering, mut f: F) -> $t
        where
            F: FnMut($t) -> $t,
        {
            match self.fetch_update(set_order, fetch_order, |value| Some(f(value))) {
                Ok(previous) | Err(previous) => previous,
            }
        }

        /// Stores `new` if the value is `current`; returns the previous value. The deprecated
        /// std method, kept because loom's and older crates' tests still call it.
        #[inline]
        #[track_caller]
        pub fn compare_and_swap(&self, current: $t, new: $t, order: Ordering) -> $t {
            match self.compare_exchange(current, new, order, order) {
                Ok(previous) | Err(previous) => previous,
            }
        }

        /// Reads the value as plain memory, as loom's `unsync_load`: a scheduling point that
        /// synchronises with nothing, and fails the execution with a data race unless every
        /// store to this atomic happens before it.
        ///
        /// # Safety
        /// The caller promises that no store runs concurrently; the check reports a broken
        /// promise in the explored schedules instead of reading a torn value.
        #[track_caller]
        pub unsafe fn unsync_load(&self) -> $t {
            unsync_read(&self.handle, Location::caller());
            self.inner.load(SC)
        }

        /// Runs `f` with a mutable reference to the value, as loom's `with_mut`; the exclusive
        /// borrow rules out every concurrent access, so no scheduling is needed.
        pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $t) -> R) -> R {
            f(self.inner.get_mut())
        }

        /// A mutable reference to the value; no scheduling is needed.
        pub fn get_mut(&mut self) -> &mut $t {
            self.inner.get_mut()
        }

        /// Consumes the atomic and returns the value.
        pub fn into_inner(self) -> $t {
            self.inner.into_inner()
        }

        /// A raw pointer to the value. Accesses through it are not scheduling points.
        pub fn as_ptr(&self) -> *mut $t {
            self.inner.as_ptr()
        }
    };
}

/// A read-modify-write method that forwards to std.
macro_rules! atomic_rmw {
    ($(#[$doc:meta])* $name:ident, $t:ty, $arg:ty) => {
        $(#[$doc])*
        #[inline]
        #[track_caller]
        pub fn $name(&self, value: $arg, order: Ordering) -> $t {
            let _ = order;
            atomic_op(&self.handle, OpKind::AtomicRmw, Location::caller(), || self.logged(), || {
                self.inner.$name(value, SC)
            })
        }
    };
}

macro_rules! atomic_debug_default {
    ($atomic:ident, $t:ty) => {
        impl std::fmt::Debug for $atomic {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.inner, f)
            }
        }

        impl Default for $atomic {
            #[track_caller]
            fn default() -> Self {
                Self::new(Default::default())
            }
        }

        impl From<$t> for $atomic {
            #[track_caller]
            fn from(value: $t) -> Self {
                Self::new(value)
            }
        }
    };
}

macro_rules! atomic_int {
    ($($atomic:ident $t:ty;)*) => {$(
        #[doc = concat!("An integer atomic shaped like `std::sync::atomic::", stringify!($atomic), "`.")]
        pub struct $atomic {
            handle: ObjectHandle,
            inner: std_atomic::$atomic,
        }

        impl $atomic {
            atomic_common!($atomic, $t);
            atomic_rmw!(
                /// Adds (wrapping) and returns the previous value.
                fetch_add, $t, $t);
            atomic_rmw!(
                /// Subtracts (wrapping) and returns the previous value.
                fetch_sub, $t, $t);
            atomic_rmw!(
                /// Bitwise and; returns the previous value.
                fetch_and, $t, $t);
            atomic_rmw!(
                /// Bitwise nand; returns the previous value.
                fetch_nand, $t, $t);
            atomic_rmw!(
                /// Bitwise or; returns the previous value.
                fetch_or, $t, $t);
            atomic_rmw!(
                /// Bitwise xor; returns the previous value.
                fetch_xor, $t, $t);
            atomic_rmw!(
                /// Maximum; returns the previous value.
                fetch_max, $t, $t);
            atomic_rmw!(
                /// Minimum; returns the previous value.
                fetch_min, $t, $t);
        }

        atomic_debug_default!($atomic, $t);
    )*};
}

atomic_int! {
    AtomicI8 i8;
    AtomicI16 i16;
    AtomicI32 i32;
    AtomicI64 i64;
    AtomicIsize isize;
    AtomicU8 u8;
    AtomicU16 u16;
    AtomicU32 u32;
    AtomicU64 u64;
    AtomicUsize usize;
}

/// A boolean atomic shaped like `std::sync::atomic::AtomicBool`.
pub struct AtomicBool {
    handle: ObjectHandle,
    inner: std_atomic::AtomicBool,
}

impl AtomicBool {
    atomic_common!(AtomicBool, bool);
    atomic_rmw!(
        /// Logical and; returns the previous value.
        fetch_and, bool, bool);
    atomic_rmw!(
        /// Logical nand; returns the previous value.
        fetch_nand, bool, bool);
    atomic_rmw!(
        /// Logical or; returns the previous value.
        fetch_or, bool, bool);
    atomic_rmw!(
        /// Logical xor; returns the previous value.
        fetch_xor, bool, bool);

    /// Logical not; returns the previous value.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        let _ = order;
        atomic_op(
            &self.handle,
            OpKind::AtomicRmw,
            Location::caller(),
            || self.logged(),
            || self.inner.fetch_not(SC),
        )
    }
}

atomic_debug_default!(AtomicBool, bool);

/// A raw-pointer atomic shaped like `std::sync::atomic::AtomicPtr`.
pub struct AtomicPtr<T> {
    handle: ObjectHandle,
    inner: std_atomic::AtomicPtr<T>,
}

impl<T> AtomicPtr<T> {
    atomic_common!(AtomicPtr, *mut T);
    atomic_rmw!(
        /// Offsets the pointer by `value` elements (wrapping); returns the previous pointer.
        fetch_ptr_add, *mut T, usize);
    atomic_rmw!(
        /// Offsets the pointer back by `value` elements; returns the previous pointer.
        fetch_ptr_sub, *mut T, usize);
    atomic_rmw!(
        /// Offsets the pointer by `value` bytes; returns the previous pointer.
        fetch_byte_add, *mut T, usize);
    atomic_rmw!(
        /// Offsets the pointer back by `value` bytes; returns the previous pointer.
        fetch_byte_sub, *mut T, usize);
    atomic_rmw!(
        /// Bitwise or of the address; returns the previous pointer.
        fetch_or, *mut T, usize);
    atomic_rmw!(
        /// Bitwise and of the address; returns the previous pointer.
        fetch_and, *mut T, usize);
    atomic_rmw!(
        /// Bitwise xor of the address; returns the previous pointer.
        fetch_xor, *mut T, usize);
}

impl<T> std::fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.inner, f)
    }
}

impl<T> Default for AtomicPtr<T> {
    #[track_caller]
    fn default() -> Self {
        Self::new(std::ptr::null_mut())
    }
}

impl<T> From<*mut T> for AtomicPtr<T> {
    #[track_caller]
    fn from(value: *mut T) -> Self {
        Self::new(value)
    }
}
