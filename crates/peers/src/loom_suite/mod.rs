//! The benchmark programs of `interleave-programs`, compiled against loom.
//!
//! The program files are the very files the interleave build uses (included with `#[path]`);
//! only the runtime module [`rt`] differs. Every access to an [`rt::cell::Var`] first does a
//! relaxed swap on a private loom atomic (see `var_shim!` for why that operation), since loom
//! only switches threads at its own synchronisation operations. When [`RACE_CHECKS`] is on, the access is
//! also made through a `loom::cell::UnsafeCell` shadow, so loom's causality checking reports
//! unsynchronised accesses as data races. It is turned off for buggy programs whose declared bug
//! is not the race itself, matching interleave's bench, which only warns about races there: loom
//! stops at the first race it sees, and would otherwise never reach the assertion the program
//! declares.

use std::cell::Cell;

use interleave_programs::{BugKind, Finding, Program, Variant};

thread_local! {
    /// Whether `Var` accesses are checked for data races (loom runs on the calling OS thread).
    pub static RACE_CHECKS: Cell<bool> = const { Cell::new(true) };
}

#[path = "../../../programs/src/suite/mod.rs"]
pub mod suite;

/// Loom's std-shaped API in the shape `suite` expects.
pub mod rt {
    pub use loom::{sync, thread};

    /// Units of work and atomic sets: only the closures run (see `atomic_set_shim`).
    pub use crate::atomic_set_shim as atomic_set;

    /// Branch annotations: only the condition is returned (see `branch_shim`).
    pub use crate::branch_shim::branch;

    /// The shared-variable type.
    pub mod cell {
        use loom::sync::atomic::{AtomicBool, Ordering};

        /// A value with a loom cell beside it that stands for it in loom's race checks.
        pub struct Shadowed<T> {
            value: std::cell::UnsafeCell<T>,
            shadow: loom::cell::UnsafeCell<()>,
        }

        impl<T> Shadowed<T> {
            fn new(value: T) -> Self {
                Shadowed {
                    value: std::cell::UnsafeCell::new(value),
                    shadow: loom::cell::UnsafeCell::new(()),
                }
            }

            fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
                if super::super::RACE_CHECKS.with(std::cell::Cell::get) {
                    self.shadow.with(|_| ());
                }
                // SAFETY: loom runs one thread at a time and `f` cannot re-enter the variable.
                f(unsafe { &*self.value.get() })
            }

            fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
                if super::super::RACE_CHECKS.with(std::cell::Cell::get) {
                    self.shadow.with_mut(|_| ());
                }
                // SAFETY: as in `read`.
                f(unsafe { &mut *self.value.get() })
            }
        }

        crate::var_shim! {
            atomic: AtomicBool,
            ordering: Ordering,
            cell: Shadowed,
            read: |cell, f| cell.read(f),
            write: |cell, f| cell.write(f),
        }
    }
}
