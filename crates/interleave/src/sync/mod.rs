//! Synchronisation primitives under the controlled scheduler, shaped like `std::sync`.
//!
//! Every blocking or state-changing operation is a scheduling point, and the runtime knows
//! which threads each primitive blocks, so deadlocks are detected and explained. `Arc` and
//! `Weak` are std's own: reference counting needs no scheduling under sequential consistency,
//! and std's `Arc` keeps its unsized coercions (`Arc<dyn Trait>`), which no other type can on
//! stable Rust.
//!
//! Known false positive: the race checks do not see the ordering std's `Arc` gives between
//! dropping a reference and using the value through the last one (its destructor, `get_mut`,
//! `try_unwrap`). A destructor that reads a [`crate::cell`] value another thread wrote before
//! dropping its reference, with nothing else ordering the two (a join, a lock, a channel), is
//! reported as a data race that std rules out. Join the thread first, or hand the history over
//! with [`Causality`] (the dropping thread releases, the last holder acquires). The `Arc` of
//! the `loom` compatibility crate, a wrapper without unsized coercions as loom's own is, does
//! model this ordering.

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
