//! Atomics under the controlled scheduler, shaped like `std::sync::atomic`: every operation is
//! a scheduling point.
//!
//! Under the weak memory model (`MemoryModel::Weak`, the default; see `runtime/memory.rs`) the
//! ordering counts: a load may read an older store that no happens-before edge hides, and only
//! release/acquire pairs, fences and `SeqCst` synchronise. The atomic itself always holds the
//! latest store's value, so read-modify-writes and `get_mut` see it; a load asks the model which
//! value it reads. Under `MemoryModel::SequentiallyConsistent` every operation behaves as
//! `SeqCst` and, for happens-before, every store releases and every load acquires.
//! `compare_exchange_weak` may fail spuriously (`Config::spurious_cas_failures`). Orderings std rejects (a release load, an
//! acquire store, a relaxed fence, a release failure ordering) panic as under std.

use std::panic::Location;
use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

use crate::runtime;
use crate::runtime::object::ObjectHandle;
use crate::runtime::op::{ordering_code, ObjectKind, Op, OpKind, Site, NO_OBJECT};
use crate::runtime::op_on;
use crate::runtime::{FailureKind, MemoryModel};

/// The ordering of every access to the underlying std atomic, and why a read-modify-write is a
/// plain load and store. An execution runs all its threads as coroutines on one OS thread, and
/// an object outliving executions (a `static`) belongs to one running execution at a time
/// (`ObjectHandle::claim` fails a second one before its first access), handed over through the
/// claim's release and acquire. So no two OS threads ever access the value at once, and the
/// hardware's atomic read-modify-write would buy nothing. It costs: on x86 it is a
/// `lock`-prefixed instruction, which waits for the store buffer a coroutine switch has just
/// filled to drain; the atomic workload of the peers bench ran 7-10% faster without it.
const UNSHARED: Ordering = Ordering::Relaxed;

/// Performs `op` after its step was announced under sequential consistency, where the runtime
/// applied the happens-before effect when it recorded the step. When the execution logs
/// values, the value before and after `op` (read by `value`) is recorded with the step.
#[inline(always)]
fn sequentially_consistent<R>(
    switched: runtime::Switched,
    value: impl Fn() -> u64,
    op: impl FnOnce() -> R,
) -> R {
    if !switched.logs_values() {
        return op();
    }
    let before = value();
    let result = op();
    let after = value();
    runtime::with_in_data_step(|ex| ex.record_value(before, after));
    result
}

/// Marks the step just taken, a compare-exchange, as failed with the `failure` ordering, for
/// the report (`Execution::describe_failed_exchange`).
#[cold]
#[inline(never)]
fn failed_exchange(failure: Ordering) {
    runtime::with_in_data_step(|ex| ex.describe_failed_exchange(failure));
}

/// A read-modify-write with `order` on `handle`: performs `op` on the atomic (which holds the
/// latest store, the one every read-modify-write reads); under the weak memory model then
/// tells the model what it read and, when `outcome` says it wrote, what it wrote, with the
/// ordering `outcome` gives (a failed `compare_exchange` is a load with its failure ordering).
#[inline(always)]
#[track_caller]
fn read_modify_write<R>(
    handle: &ObjectHandle,
    order: Ordering,
    site: Site,
    value: impl Fn() -> u64,
    op: impl FnOnce() -> R,
    outcome: impl FnOnce(&R) -> (bool, Ordering),
) -> R {
    let switched = runtime::switch_on(
        handle,
        ObjectKind::Atomic,
        op_on!(AtomicRmw, ordering_code(order)),
        site,
    );
    if !switched.weak_memory() {
        let result = sequentially_consistent(switched, value, op);
        if let (false, failure) = outcome(&result) {
            failed_exchange(failure);
        }
        return result;
    }
    let previous = value();
    let result = op();
    let after = value();
    let (wrote, order) = outcome(&result);
    // SAFETY: the access was announced above, and only the atomic's own operation ran since;
    // the model's bookkeeping and the value log reach no user code or strategy.
    unsafe {
        runtime::with_announced(|ex| {
            let index = switched.index();
            // The ordering is usually a constant here, where the facade is inlined: `AcqRel` and
            // `SeqCst` stores then call the model's path for that ordering, which tests nothing
            // at run time that the constant decides.
            match (wrote, order) {
                (true, Ordering::SeqCst) => {
                    ex.atomic_read_modify_write_seq_cst(index, previous, after)
                }
                (true, Ordering::AcqRel) => {
                    ex.atomic_read_modify_write_acq_rel(index, previous, after)
                }
                _ => ex.atomic_read_modify_write(index, order, previous, wrote.then_some(after)),
            }
            if switched.logs_values() {
                ex.record_value(previous, after);
            }
        })
    };
    // Out of the bookkeeping above, which stays small enough to inline: a read-modify-write
    // always writes, and that test is gone.
    if !wrote {
        failed_exchange(order);
    }
    result
}

/// The ordering a compare-exchange announces: `SeqCst` if either of its orderings is (its
/// step is then ordered against `SeqCst` fences), its success ordering otherwise.
fn announced(success: Ordering, failure: Ordering) -> Ordering {
    if failure == Ordering::SeqCst {
        Ordering::SeqCst
    } else {
        success
    }
}

/// Panics as std does for an ordering a load cannot have.
#[track_caller]
fn check_load(order: Ordering) {
    match order {
        Ordering::Release => panic!("there is no such thing as a release load"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release load"),
        _ => {}
    }
}

/// Panics as std does for an ordering a store cannot have.
#[track_caller]
fn check_store(order: Ordering) {
    match order {
        Ordering::Acquire => panic!("there is no such thing as an acquire store"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release store"),
        _ => {}
    }
}

/// Panics as std does for a compare-exchange failure ordering it rejects.
#[track_caller]
fn check_failure(order: Ordering) {
    match order {
        Ordering::Release => panic!("there is no such thing as a release failure ordering"),
        Ordering::AcqRel => {
            panic!("there is no such thing as an acquire-release failure ordering")
        }
        _ => {}
    }
}

/// Schedules a plain read of the atomic `handle` and fails the execution with a data race when
/// a store to it does not happen before the read (the epochs of its stores, which the memory
/// model keeps, or under sequential consistency the atomic's clock, are not below the
/// reader's). The read is announced as a plain `Read`, so it acquires nothing.
#[track_caller]
fn unsync_read(handle: &ObjectHandle, site: Site) {
    let idx = runtime::switch_on(handle, ObjectKind::Atomic, op_on!(Read), site).index();
    let failed = runtime::with(|ex| {
        if ex.atomic_stores_happen_before_me(idx) {
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

/// A memory fence: a scheduling point. Under the weak memory model an acquire fence makes the
/// thread acquire what its earlier relaxed loads read, a release fence makes its later relaxed
/// stores release, and a `SeqCst` fence takes its place in the single total order of `SeqCst`
/// operations, which limits the stores later loads may read (as C++20 says, it creates no
/// happens-before edge beyond its acquire and release parts); under sequential consistency a
/// fence adds nothing.
///
/// # Panics
/// On `Ordering::Relaxed`, as std does.
#[track_caller]
pub fn fence(order: Ordering) {
    if order == Ordering::Relaxed {
        panic!("there is no such thing as a relaxed fence");
    }
    runtime::switch(
        Op::with(OpKind::Fence, NO_OBJECT, ordering_code(order), false),
        Location::caller(),
    );
    runtime::with(|ex| {
        if ex.limits().memory == MemoryModel::Weak {
            ex.atomic_fence(order);
        }
    });
}

/// A compiler fence: not a scheduling point (it orders nothing between threads).
pub fn compiler_fence(order: Ordering) {
    std_atomic::compiler_fence(order);
}

/// How an atomic's value is kept by the memory model and logged for the
/// schedule-sensitive-branch analysis: as the bits of a `u64`, and back.
trait Bits: Sized {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! bits_as_cast {
    ($($t:ty)*) => {$(
        impl Bits for $t {
            fn to_bits(self) -> u64 {
                self as u64
            }

            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}

bits_as_cast!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl Bits for bool {
    fn to_bits(self) -> u64 {
        u64::from(self)
    }

    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
}

impl<T> Bits for *mut T {
    fn to_bits(self) -> u64 {
        self.expose_provenance() as u64
    }

    fn from_bits(bits: u64) -> Self {
        std::ptr::with_exposed_provenance_mut(bits as usize)
    }
}

/// Methods shared by every atomic type.
macro_rules! atomic_common {
    ($atomic:ident, $t:ty) => {
        /// The current value as the memory model and the value log keep it. Inlined: every
        /// read-modify-write reads it twice, and a call to it from the caller's crate went
        /// through the global offset table.
        #[inline]
        fn bits(&self) -> u64 {
            Bits::to_bits(self.inner.load(UNSHARED))
        }

        /// Replaces the value with `update` of it and returns the value it replaced, as a
        /// plain load and store (see [`UNSHARED`]).
        #[inline(always)]
        fn replace_with(&self, update: impl FnOnce($t) -> $t) -> $t {
            let previous = self.inner.load(UNSHARED);
            self.inner.store(update(previous), UNSHARED);
            previous
        }

        /// Stores `new` if the value is `current`, as a plain load and store (see
        /// [`UNSHARED`]): the previous value, `Ok` if it matched.
        #[inline(always)]
        fn exchange(&self, current: $t, new: $t) -> Result<$t, $t> {
            let previous = self.inner.load(UNSHARED);
            if previous == current {
                self.inner.store(new, UNSHARED);
                Ok(previous)
            } else {
                Err(previous)
            }
        }

        /// A new atomic holding `value`.
        #[track_caller]
        pub const fn new(value: $t) -> Self {
            Self::named_at(value, Location::caller(), stringify!($atomic))
        }

        /// A new atomic holding `value`, created at `site` and called `name` in reports: for
        /// the primitives built on atomics, which name the object after themselves and the
        /// user's line that created them.
        pub(crate) const fn named_at(value: $t, site: Site, name: &'static str) -> Self {
            Self {
                handle: ObjectHandle::named(site, name),
                inner: std_atomic::$atomic::new(value),
            }
        }

        /// Loads the value: under the weak memory model, the value of a store the ordering
        /// and the happens-before edges to it let this load read, chosen by the schedule.
        ///
        /// # Panics
        /// On `Release` and `AcqRel`, as std does.
        #[inline]
        #[track_caller]
        pub fn load(&self, order: Ordering) -> $t {
            self.load_at(order, Location::caller())
        }

        /// [`load`](Self::load) recorded at `site`: for primitives built on atomics, which
        /// report the user's line.
        #[inline]
        #[track_caller]
        pub(crate) fn load_at(&self, order: Ordering, site: Site) -> $t {
            check_load(order);
            let switched = runtime::switch_on(
                &self.handle,
                ObjectKind::Atomic,
                op_on!(AtomicLoad, ordering_code(order)),
                site,
            );
            if !switched.weak_memory() {
                return sequentially_consistent(
                    switched,
                    || self.bits(),
                    || self.inner.load(UNSHARED),
                );
            }
            let current = self.bits();
            let read = runtime::with_in_data_step(|ex| {
                let read = ex.atomic_load(switched.index(), order, current);
                if switched.logs_values() {
                    ex.record_value(read, read);
                }
                read
            });
            Bits::from_bits(read)
        }

        /// Stores `value`.
        ///
        /// # Panics
        /// On `Acquire` and `AcqRel`, as std does.
        #[inline]
        #[track_caller]
        pub fn store(&self, value: $t, order: Ordering) {
            check_store(order);
            let switched = runtime::switch_on(
                &self.handle,
                ObjectKind::Atomic,
                op_on!(AtomicStore, ordering_code(order)),
                Location::caller(),
            );
            if !switched.weak_memory() {
                return sequentially_consistent(
                    switched,
                    || self.bits(),
                    || self.inner.store(value, UNSHARED),
                );
            }
            let previous = Bits::to_bits(self.replace_with(|_| value));
            let stored = Bits::to_bits(value);
            // SAFETY: the access was announced above, and only the atomic's own operation ran
            // since; the model's bookkeeping and the value log reach no user code or strategy.
            unsafe {
                runtime::with_announced(|ex| {
                    ex.atomic_store(switched.index(), order, previous, stored);
                    if switched.logs_values() {
                        ex.record_value(previous, stored);
                    }
                })
            };
        }

        /// Stores `value` and returns the previous value.
        #[inline]
        #[track_caller]
        pub fn swap(&self, value: $t, order: Ordering) -> $t {
            read_modify_write(
                &self.handle,
                order,
                Location::caller(),
                || self.bits(),
                || self.replace_with(|_| value),
                |_| (true, order),
            )
        }

        /// Stores `new` if the value is `current`; returns the previous value, `Ok` if it
        /// matched. A failure is a load of the latest value with the `failure` ordering.
        ///
        /// # Panics
        /// On a `failure` ordering of `Release` or `AcqRel`, as std does.
        #[inline]
        #[track_caller]
        pub fn compare_exchange(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            check_failure(failure);
            read_modify_write(
                &self.handle,
                announced(success, failure),
                Location::caller(),
                || self.bits(),
                || self.exchange(current, new),
                |result| match result {
                    Ok(_) => (true, success),
                    Err(_) => (false, failure),
                },
            )
        }

        /// Like `compare_exchange`, but it may also fail when the atomic holds `current`, as
        /// std's may on processors with load-linked/store-conditional instructions: then it
        /// returns `Err(current)` and is a load with the `failure` ordering. A thread's weak
        /// exchange never fails spuriously twice in a row (see
        /// [`Config::spurious_cas_failures`](crate::Config::spurious_cas_failures), which
        /// turns such failures off).
        #[inline]
        #[track_caller]
        pub fn compare_exchange_weak(
            &self,
            current: $t,
            new: $t,
            success: Ordering,
            failure: Ordering,
        ) -> Result<$t, $t> {
            check_failure(failure);
            read_modify_write(
                &self.handle,
                announced(success, failure),
                Location::caller(),
                || self.bits(),
                || {
                    if self.inner.load(UNSHARED) == current
                        && runtime::weak_exchange_fails_spuriously()
                    {
                        Err(current)
                    } else {
                        self.exchange(current, new)
                    }
                },
                |result| match result {
                    Ok(_) => (true, success),
                    Err(_) => (false, failure),
                },
            )
        }

        /// Stores `f` of the value while it returns `Some`, as std's: a load with
        /// `fetch_order`, then compare-exchanges with `set_order` that retry with the value
        /// they found, so `f` runs again when another thread wrote the atomic (or the load read
        /// a stale value) between the load and the exchange. Returns the value `f` was last
        /// given, `Ok` if it was replaced.
        ///
        /// # Panics
        /// On a `fetch_order` of `Release` or `AcqRel`, as std does.
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
            let mut previous = self.load(fetch_order);
            while let Some(next) = f(previous) {
                // A strong exchange: a spurious failure would only run `f` once more with the
                // same value.
                match self.compare_exchange(previous, next, set_order, fetch_order) {
                    Ok(replaced) => return Ok(replaced),
                    Err(found) => previous = found,
                }
            }
            Err(previous)
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

        /// Stores `f` of the value, retrying as [`fetch_update`](Self::fetch_update) does;
        /// returns the value `f` replaced.
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
            self.inner.load(UNSHARED)
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

/// A read-modify-write method as std's: `$name($value, order)` replaces the value `$old` with
/// `$new` (an expression of `$old` and `$value`) and returns `$old`.
macro_rules! atomic_rmw {
    ($(#[$doc:meta])* $name:ident, $t:ty, $arg:ty, |$old:ident, $value:ident| $new:expr) => {
        $(#[$doc])*
        #[inline]
        #[track_caller]
        pub fn $name(&self, $value: $arg, order: Ordering) -> $t {
            read_modify_write(
                &self.handle,
                order,
                Location::caller(),
                || self.bits(),
                || self.replace_with(|$old| $new),
                |_| (true, order),
            )
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
                fetch_add, $t, $t, |previous, value| previous.wrapping_add(value));
            atomic_rmw!(
                /// Subtracts (wrapping) and returns the previous value.
                fetch_sub, $t, $t, |previous, value| previous.wrapping_sub(value));
            atomic_rmw!(
                /// Bitwise and; returns the previous value.
                fetch_and, $t, $t, |previous, value| previous & value);
            atomic_rmw!(
                /// Bitwise nand; returns the previous value.
                fetch_nand, $t, $t, |previous, value| !(previous & value));
            atomic_rmw!(
                /// Bitwise or; returns the previous value.
                fetch_or, $t, $t, |previous, value| previous | value);
            atomic_rmw!(
                /// Bitwise xor; returns the previous value.
                fetch_xor, $t, $t, |previous, value| previous ^ value);
            atomic_rmw!(
                /// Maximum; returns the previous value.
                fetch_max, $t, $t, |previous, value| previous.max(value));
            atomic_rmw!(
                /// Minimum; returns the previous value.
                fetch_min, $t, $t, |previous, value| previous.min(value));
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
        fetch_and, bool, bool, |previous, value| previous & value);
    atomic_rmw!(
        /// Logical nand; returns the previous value.
        fetch_nand, bool, bool, |previous, value| !(previous & value));
    atomic_rmw!(
        /// Logical or; returns the previous value.
        fetch_or, bool, bool, |previous, value| previous | value);
    atomic_rmw!(
        /// Logical xor; returns the previous value.
        fetch_xor, bool, bool, |previous, value| previous ^ value);

    /// Logical not; returns the previous value.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        read_modify_write(
            &self.handle,
            order,
            Location::caller(),
            || self.bits(),
            || self.replace_with(|previous| !previous),
            |_| (true, order),
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
        fetch_ptr_add, *mut T, usize, |previous, value| previous.wrapping_add(value));
    atomic_rmw!(
        /// Offsets the pointer back by `value` elements; returns the previous pointer.
        fetch_ptr_sub, *mut T, usize, |previous, value| previous.wrapping_sub(value));
    atomic_rmw!(
        /// Offsets the pointer by `value` bytes; returns the previous pointer.
        fetch_byte_add, *mut T, usize, |previous, value| previous.wrapping_byte_add(value));
    atomic_rmw!(
        /// Offsets the pointer back by `value` bytes; returns the previous pointer.
        fetch_byte_sub, *mut T, usize, |previous, value| previous.wrapping_byte_sub(value));
    atomic_rmw!(
        /// Bitwise or of the address; returns the previous pointer.
        fetch_or, *mut T, usize, |previous, value| previous.map_addr(|address| address | value));
    atomic_rmw!(
        /// Bitwise and of the address; returns the previous pointer.
        fetch_and, *mut T, usize, |previous, value| previous.map_addr(|address| address & value));
    atomic_rmw!(
        /// Bitwise xor of the address; returns the previous pointer.
        fetch_xor, *mut T, usize, |previous, value| previous.map_addr(|address| address ^ value));
}

impl<T> std::fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.inner, f)
    }
}

/// Formats the pointer as std's does (`{:p}`), without a scheduling point, like `Debug`.
impl<T> std::fmt::Pointer for AtomicPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Pointer::fmt(&self.inner, f)
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
