//! Synchronisation primitives under the controlled scheduler, shaped like `std::sync`.
//!
//! Every blocking or state-changing operation is a scheduling point, and the runtime knows
//! which threads each primitive blocks, so deadlocks are detected and explained. `Arc` and
//! `Weak` are std's own: reference counting needs no scheduling under sequential consistency,
//! and std's `Arc` keeps its unsized coercions (`Arc<dyn Trait>`), which no other type can on
//! stable Rust.
//!
//! The race checks do not see the ordering std's `Arc` gives between dropping a reference and
//! using the value through the last one, so they take a race whose later access runs inside
//! `Arc::drop_slow` (the value's destructor, run by the last holder) as ordered: a queue's
//! `Drop` that reads the slots other threads wrote is no race (`analysis/online/race.rs` says
//! how, and the one race this misses). The ordering of `Arc::get_mut`, `try_unwrap` and
//! `into_inner` is not seen: a cell read through them, that another thread wrote before
//! dropping its reference with nothing else ordering the two, is reported as a data race that
//! std rules out. Join the thread first, or hand the history over with [`Causality`] (the
//! dropping thread releases, the last holder acquires). The `Arc` of the `loom` compatibility
//! crate, a wrapper without unsized coercions as loom's own is, models all of this ordering.

pub mod atomic;
mod barrier;
mod causality;
mod condvar;
pub mod mpsc;
mod mutex;
mod notify;
mod once;
mod poison;
mod rwlock;

pub use std::sync::{Arc, LockResult, PoisonError, TryLockError, TryLockResult, Weak};

pub use barrier::{Barrier, BarrierWaitResult};
pub use causality::Causality;
pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use notify::Notify;
pub use once::{LazyLock, Once, OnceLock, OnceState};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
