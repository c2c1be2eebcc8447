//! `loom::sync`: interleave's primitives under loom's names. `Mutex` and `Condvar` wrap
//! interleave's so that a guard may be dropped at once (`m.lock().unwrap();`) without a
//! `must_use` warning, as with loom; `Arc` counts its allocations so that one leaked at the
//! end of an execution fails it, as loom's does.

mod arc;
mod mutex;

pub mod atomic {
    //! `loom::sync::atomic`: interleave's atomics, under its weak memory model, with loom's
    //! `unsync_load` and `with_mut`. `compare_exchange_weak` never fails spuriously, as under
    //! loom, unless `INTERLEAVE_SPURIOUS_CAS_FAILURES=on` asks for it.
    pub use interleave::sync::atomic::*;
}

pub mod mpsc {
    //! `loom::sync::mpsc`: interleave's channels.
    pub use interleave::sync::mpsc::*;
}

pub use arc::Arc;
pub use interleave::sync::{
    Barrier, BarrierWaitResult, LockResult, Notify, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockResult, WaitTimeoutResult,
};
pub use mutex::{Condvar, Mutex, MutexGuard};
