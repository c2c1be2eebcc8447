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

/// What identifies a resource across the executions of a test: where it was created, by which
/// task, and how many that task had created there before (a resource made in a `const`
/// context has only its site).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceSignature {
    site: &'static std::panic::Location<'static>,
    task: Option<crate::current::TaskId>,
    index: usize,
}

impl ResourceSignature {
    pub(crate) const fn new(
        site: &'static std::panic::Location<'static>,
        task: Option<crate::current::TaskId>,
        index: usize,
    ) -> ResourceSignature {
        ResourceSignature { site, task, index }
    }
}
