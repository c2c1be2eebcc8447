//! Which executions are running right now, and on which OS threads.
//!
//! An object's handle remembers the execution that registered it last (its tag). A handle
//! that lives outside any execution, in a `static`, is seen by every exploration of the
//! process: cargo runs tests on parallel OS threads and `Builder::workers` runs executions on
//! several, and two executions that use the same static primitive at the same time would share
//! its data behind each other's back (two threads in one critical section, one on each OS
//! thread). Before an execution takes over a handle that another execution registered, it asks
//! this registry whether that execution is still running; if it is, the object is shared and
//! the execution fails at once with the object's site and the remedies.
//!
//! Cost: each OS thread that runs executions publishes the tag of its current execution with
//! one relaxed store at the start and one at the end of an execution. The registry itself is
//! read only when a handle registered by another execution is used again, which happens only
//! to objects that outlive an execution (statics, leaked values).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The execution an OS thread runs, or 0 between executions.
struct OsThread {
    tag: AtomicU64,
    os_thread: String,
}

/// Every OS thread that ever ran an execution and still exists.
static REGISTRY: Mutex<Vec<Arc<OsThread>>> = Mutex::new(Vec::new());

fn lock_registry() -> MutexGuard<'static, Vec<Arc<OsThread>>> {
    // The registry is a list of handles; a panic elsewhere leaves it consistent.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This OS thread's entry, registered on first use and removed when the thread exits.
struct Registration(Arc<OsThread>);

impl Registration {
    fn new() -> Registration {
        let running = Arc::new(OsThread {
            tag: AtomicU64::new(0),
            os_thread: std::thread::current()
                .name()
                .unwrap_or("<unnamed>")
                .to_string(),
        });
        lock_registry().push(running.clone());
        Registration(running)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock_registry().retain(|running| !Arc::ptr_eq(running, &self.0));
    }
}

thread_local! {
    static REGISTRATION: Registration = Registration::new();
}

/// Publishes that the execution tagged `tag` runs on this OS thread until the returned guard
/// is dropped.
pub(crate) fn start(tag: u64) -> Live {
    // Release: whoever sees a handle this execution registered (an acquire load of its slot)
    // also sees that the execution runs. During the OS thread's exit the registration may be
    // gone; the execution then simply is not listed.
    let _ = REGISTRATION.try_with(|r| r.0.tag.store(tag, Ordering::Release));
    Live(())
}

/// The guard of [`start`]: the execution is over when it is dropped, also by unwinding.
pub(crate) struct Live(());

impl Drop for Live {
    fn drop(&mut self) {
        let _ = REGISTRATION.try_with(|r| r.0.tag.store(0, Ordering::Relaxed));
    }
}

/// The name of the OS thread on which the execution tagged `tag` is running, if it is.
pub(crate) fn running_on(tag: u64) -> Option<String> {
    lock_registry()
        .iter()
        .find(|running| running.tag.load(Ordering::Acquire) == tag)
        .map(|running| running.os_thread.clone())
}
