//! The benchmark programs of `interleave-programs`, compiled against shuttle.
//!
//! The program files are the very files the interleave build uses (included with `#[path]`);
//! only the runtime module [`rt`] differs. Shuttle has no shared-variable type of its own, so
//! [`rt::cell::Var`] is a plain cell behind a scheduling point: every access first does a relaxed
//! swap on a private shuttle atomic, which lets shuttle switch threads there exactly where
//! interleave and loom can. Shuttle does not detect data races; racy programs can only fail
//! through their consequences.

use interleave_programs::{BugKind, Finding, Program, Variant};

#[path = "../../../programs/src/suite/mod.rs"]
pub mod suite;

/// Shuttle's std-shaped API in the shape `suite` expects.
pub mod rt {
    pub use shuttle::{sync, thread};

    /// Units of work and atomic sets: only the closures run (see `atomic_set_shim`).
    pub use crate::atomic_set_shim as atomic_set;

    /// Branch annotations: only the condition is returned (see `branch_shim`).
    pub use crate::branch_shim::branch;

    /// The shared-variable type.
    pub mod cell {
        use shuttle::sync::atomic::{AtomicBool, Ordering};
        use std::cell::UnsafeCell;

        crate::var_shim! {
            atomic: AtomicBool,
            ordering: Ordering,
            cell: UnsafeCell,
            // SAFETY (both): see the `Sync` impl in `var_shim!`.
            read: |cell, f| f(unsafe { &*cell.get() }),
            write: |cell, f| f(unsafe { &mut *cell.get() }),
        }
    }
}
