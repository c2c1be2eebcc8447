//! `shuttle::sync::atomic`: interleave's atomics, plus the 128-bit atomics shuttle offers on
//! stable Rust, where `std` has none.
//!
//! interleave's memory model keeps an atomic's values as 64-bit words, so `AtomicU128` and
//! `AtomicI128` are built here instead: the value sits in a `std` mutex (never contended, since
//! all tasks of an execution run on one OS thread), and every operation first takes one
//! sequentially consistent step of the same kind on an interleave atomic that belongs to the
//! value: a load for a load, a store for a store, a read-modify-write for the others (a failed
//! compare-exchange too). That step is the operation's scheduling point, orders it
//! against every other operation on the same atomic in every search, and gives it the
//! happens-before edges of a `SeqCst` access of its kind. So 128-bit atomics are always
//! sequentially consistent whatever ordering is passed, as every shuttle atomic is: a bug that
//! needs a weaker ordering on them is not found.

pub use interleave::sync::atomic::*;

use std::sync::Mutex as StdMutex;

macro_rules! wide_atomic {
    ($(#[$doc:meta])* $name:ident, $int:ty) => {
        $(#[$doc])*
        pub struct $name {
            /// The scheduling point of every operation on this atomic.
            step: AtomicBool,
            value: StdMutex<$int>,
        }

        impl $name {
            /// A new atomic holding `value`.
            #[track_caller]
            pub const fn new(value: $int) -> Self {
                Self {
                    step: AtomicBool::new(false),
                    value: StdMutex::new(value),
                }
            }

            fn value(&self) -> std::sync::MutexGuard<'_, $int> {
                self.value
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            }

            /// A load: its step is a load of the step atomic, which acquires from the
            /// operation that wrote the value read.
            #[track_caller]
            fn read(&self) -> $int {
                self.step.load(Ordering::SeqCst);
                *self.value()
            }

            /// A store: its step is a store to the step atomic, which releases to later
            /// readers and acquires nothing.
            #[track_caller]
            fn write(&self, new: $int) {
                self.step.store(false, Ordering::SeqCst);
                *self.value() = new;
            }

            /// A read-modify-write in one step: a swap of the step atomic, after which `op`
            /// runs before the next scheduling point, so no other operation on this atomic
            /// comes between its read and its write. A compare-exchange that fails takes the
            /// same step, so it synchronises like a successful one (stronger than std, never
            /// weaker).
            #[track_caller]
            fn read_modify_write<R>(&self, op: impl FnOnce(&mut $int) -> R) -> R {
                self.step.swap(false, Ordering::SeqCst);
                op(&mut self.value())
            }

            /// A mutable reference to the value; no scheduling is needed.
            pub fn get_mut(&mut self) -> &mut $int {
                self.value
                    .get_mut()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            }

            /// Consumes the atomic and returns the value.
            pub fn into_inner(self) -> $int {
                self.value
                    .into_inner()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            }

            /// Loads the value (sequentially consistent whatever `_order` says).
            #[track_caller]
            pub fn load(&self, _order: Ordering) -> $int {
                self.read()
            }

            /// Stores `new` (sequentially consistent whatever `_order` says).
            #[track_caller]
            pub fn store(&self, new: $int, _order: Ordering) {
                self.write(new)
            }

            /// Stores `new` and returns the previous value.
            #[track_caller]
            pub fn swap(&self, new: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, new))
            }

            /// Stores `new` if the value is `current`; returns the previous value, `Ok` if it
            /// matched.
            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                _success: Ordering,
                _failure: Ordering,
            ) -> Result<$int, $int> {
                self.read_modify_write(|value| {
                    if *value == current {
                        *value = new;
                        Ok(current)
                    } else {
                        Err(*value)
                    }
                })
            }

            /// Like `compare_exchange`; never fails spuriously.
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.compare_exchange(current, new, success, failure)
            }

            /// Stores `new` if the value is `current`; returns the previous value.
            #[track_caller]
            pub fn compare_and_swap(&self, current: $int, new: $int, order: Ordering) -> $int {
                match self.compare_exchange(current, new, order, order) {
                    Ok(previous) | Err(previous) => previous,
                }
            }

            /// Stores `f` of the value while it returns `Some`, as std's: a load, then
            /// compare-exchanges that retry with the value they found, so `f` runs again when
            /// another thread wrote the atomic in between. Returns the value `f` was last
            /// given, `Ok` if it was replaced.
            #[track_caller]
            pub fn fetch_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: F,
            ) -> Result<$int, $int>
            where
                F: FnMut($int) -> Option<$int>,
            {
                let mut previous = self.load(fetch_order);
                while let Some(next) = f(previous) {
                    match self.compare_exchange(previous, next, set_order, fetch_order) {
                        Ok(replaced) => return Ok(replaced),
                        Err(found) => previous = found,
                    }
                }
                Err(previous)
            }

            /// [`fetch_update`](Self::fetch_update) under its newer std name.
            #[track_caller]
            pub fn try_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: F,
            ) -> Result<$int, $int>
            where
                F: FnMut($int) -> Option<$int>,
            {
                self.fetch_update(set_order, fetch_order, f)
            }

            /// Stores `f` of the value, retrying as [`fetch_update`](Self::fetch_update) does;
            /// returns the value `f` replaced.
            #[track_caller]
            pub fn update<F>(&self, set_order: Ordering, fetch_order: Ordering, mut f: F) -> $int
            where
                F: FnMut($int) -> $int,
            {
                match self.fetch_update(set_order, fetch_order, |value| Some(f(value))) {
                    Ok(previous) | Err(previous) => previous,
                }
            }

            /// Adds (wrapping) and returns the previous value.
            #[track_caller]
            pub fn fetch_add(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, value.wrapping_add(operand)))
            }

            /// Subtracts (wrapping) and returns the previous value.
            #[track_caller]
            pub fn fetch_sub(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, value.wrapping_sub(operand)))
            }

            /// Bitwise and; returns the previous value.
            #[track_caller]
            pub fn fetch_and(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, *value & operand))
            }

            /// Bitwise nand; returns the previous value.
            #[track_caller]
            pub fn fetch_nand(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, !(*value & operand)))
            }

            /// Bitwise or; returns the previous value.
            #[track_caller]
            pub fn fetch_or(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, *value | operand))
            }

            /// Bitwise xor; returns the previous value.
            #[track_caller]
            pub fn fetch_xor(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, *value ^ operand))
            }

            /// Maximum; returns the previous value.
            #[track_caller]
            pub fn fetch_max(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, (*value).max(operand)))
            }

            /// Minimum; returns the previous value.
            #[track_caller]
            pub fn fetch_min(&self, operand: $int, _order: Ordering) -> $int {
                self.read_modify_write(|value| std::mem::replace(value, (*value).min(operand)))
            }

            /// Reads the value without a scheduling point, as shuttle's `raw_load`: for debug
            /// output, where the interleavings of the read do not matter.
            ///
            /// # Safety
            /// Always safe to call here; `unsafe` only as in shuttle, whose caller promises that
            /// the unexplored interleavings of the read do not matter.
            pub unsafe fn raw_load(&self) -> $int {
                *self
                    .value
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            }
        }

        impl Default for $name {
            #[track_caller]
            fn default() -> Self {
                Self::new(0)
            }
        }

        impl From<$int> for $name {
            #[track_caller]
            fn from(value: $int) -> Self {
                Self::new(value)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // SAFETY: a read for debug output, which needs no scheduling.
                std::fmt::Debug::fmt(&unsafe { self.raw_load() }, f)
            }
        }
    };
}

wide_atomic!(
    /// A 128-bit unsigned atomic, as shuttle's `AtomicU128` (always sequentially consistent;
    /// see the module's documentation).
    AtomicU128,
    u128
);

wide_atomic!(
    /// A 128-bit signed atomic, as shuttle's `AtomicI128` (always sequentially consistent; see
    /// the module's documentation).
    AtomicI128,
    i128
);
