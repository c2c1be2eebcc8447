//! Synchronisation primitives under the controlled scheduler, shaped like `std::sync`.
//!
//! Every blocking or state-changing operation is a scheduling point, and the runtime knows
//! which threads each primitive blocks, so deadlocks are detected and explained. `Arc` and
//! `Weak` are std's own: reference counting needs no scheduling under sequential consistency.

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
pub use once::{Once, OnceLock, OnceState};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
