//! Poisoning, as std defines it: a `Mutex` or `RwLock` whose guard is dropped while its thread
//! panics (a write guard, for `RwLock`), or a `Once` whose initialiser panicked, is poisoned.
//! Later acquisitions still succeed but return `Err(PoisonError)` holding the guard, so a
//! program can see that the data may be half-updated and decide. The flag belongs to the
//! object's entry in the execution, so a lock kept in a `static` starts every execution
//! unpoisoned.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{LockResult, PoisonError, TryLockError, TryLockResult};
use crate::runtime;
use crate::runtime::object::ObjectHandle;
use crate::runtime::op::ObjIdx;

/// Whether any lock was ever poisoned in this process. Until one is (most programs never panic
/// while holding a lock), an acquisition learns that its lock is not poisoned from one relaxed
/// load instead of a second visit to the runtime.
static EVER_POISONED: AtomicBool = AtomicBool::new(false);

/// Whether the object `idx` of the running execution is poisoned.
#[inline]
pub(crate) fn is_poisoned(idx: ObjIdx) -> bool {
    EVER_POISONED.load(Ordering::Relaxed) && runtime::with(|ex| ex.objects[idx as usize].poisoned)
}

/// Poisons the object `idx`, if the running thread is panicking now and was not when it took
/// the lock (`panicking_at_acquisition`): std's rule, so a guard taken inside a destructor that
/// runs during unwinding does not poison.
#[inline]
pub(crate) fn poison_if_panicking(idx: ObjIdx, panicking_at_acquisition: bool) {
    if !panicking_at_acquisition && runtime::thread_panicking() {
        runtime::with(|ex| {
            // The runtime's own unwind of a thread in teardown is no panic of the program.
            if ex.unwound_by_teardown() {
                return;
            }
            // Set first: the flag below is read on this OS thread only after it is.
            EVER_POISONED.store(true, Ordering::Relaxed);
            ex.objects[idx as usize].poisoned = true;
        });
    }
}

/// Whether `handle`'s object is poisoned in the running execution; false outside executions
/// and before its first use in this one.
pub(crate) fn handle_poisoned(handle: &ObjectHandle) -> bool {
    runtime::current_tag().is_some_and(|tag| {
        runtime::with(|ex| {
            handle
                .index_in(tag)
                .is_some_and(|idx| ex.objects[idx as usize].poisoned)
        })
    })
}

/// Clears the poison of `handle`'s object in the running execution.
pub(crate) fn clear(handle: &ObjectHandle) {
    if let Some(tag) = runtime::current_tag() {
        runtime::with(|ex| {
            if let Some(idx) = handle.index_in(tag) {
                ex.objects[idx as usize].poisoned = false;
            }
        });
    }
}

/// `value` as std returns it from an acquisition of a lock that may be poisoned.
pub(crate) fn result<G>(poisoned: bool, value: G) -> LockResult<G> {
    if poisoned {
        Err(PoisonError::new(value))
    } else {
        Ok(value)
    }
}

/// `value` as std returns it from a `try_` acquisition that succeeded.
pub(crate) fn try_result<G>(poisoned: bool, value: G) -> TryLockResult<G> {
    if poisoned {
        Err(TryLockError::Poisoned(PoisonError::new(value)))
    } else {
        Ok(value)
    }
}
