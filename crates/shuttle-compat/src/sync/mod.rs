//! `shuttle::sync`: interleave's primitives under shuttle's names.

pub mod atomic;

pub mod mpsc {
    //! `shuttle::sync::mpsc`: interleave's channels.
    pub use interleave::sync::mpsc::*;
}

pub use interleave::sync::{
    Arc, Barrier, BarrierWaitResult, Condvar, LockResult, Mutex, MutexGuard, Once, OnceLock,
    OnceState, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError, TryLockResult,
    WaitTimeoutResult, Weak,
};
