//! The benchmark programs of `interleave-programs`, compiled against loom.
//!
//! The program files are the very files the interleave build uses (included with `#[path]`);
//! only the runtime module [`rt`] differs. [`rt::cell::Var`] stores its value in a
//! `loom::cell::UnsafeCell`, so loom's causality checking reports unsynchronised accesses as data
//! races, and every access first does a relaxed load of a private loom atomic: loom only switches
//! threads at its own synchronisation operations, and a relaxed load is one that creates no
//! happens-before edge, so it makes each access a scheduling point without hiding any race.

use interleave_programs::{BugKind, Finding, Program, Variant};

#[path = "../../../programs/src/suite/mod.rs"]
pub mod suite;

/// Loom's std-shaped API in the shape `suite` expects.
pub mod rt {
    pub use loom::{sync, thread};

    /// The shared-variable type.
    pub mod cell {
        use loom::cell::UnsafeCell;
        use loom::sync::atomic::{AtomicBool, Ordering};

        crate::var_shim! {
            atomic: AtomicBool,
            ordering: Ordering,
            cell: UnsafeCell,
            // SAFETY (both): loom checks that the accesses do not race.
            read: |cell, f| cell.with(|ptr| f(unsafe { &*ptr })),
            write: |cell, f| cell.with_mut(|ptr| f(unsafe { &mut *ptr })),
        }
    }
}
