//! Wakes from OS threads interleave does not control. Every thread and task of an execution
//! runs on one OS thread; a task's waker that is woken from another OS thread (a std thread, a
//! foreign runtime's reactor) cannot unpark the task, since the execution is not that thread's
//! to touch. Dropping such a wake silently made the task park for ever and the execution end
//! in a deadlock that is not in the program. Instead the waker records the wake here, and the
//! execution fails with an explanation when it would otherwise report that deadlock, or at its
//! end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::op::Site;

/// Shared between an OS thread's executions and the wakers of their tasks, which may travel
/// to other OS threads.
#[derive(Default)]
pub(crate) struct ForeignWakes {
    /// The tag of the execution running on the owning OS thread; 0 when none runs.
    running: AtomicU64,
    /// A foreign wake of the running execution was recorded.
    woken: AtomicBool,
    wake: Mutex<Option<ForeignWake>>,
}

/// One wake from a foreign OS thread.
struct ForeignWake {
    /// The tag of the execution whose task was woken.
    execution: u64,
    /// The thread of the execution whose task's waker was woken.
    thread: usize,
    /// Where that task parks (its spawn or `block_on` site), when known.
    site: Option<Site>,
    /// The OS thread that woke it.
    os_thread: String,
}

impl ForeignWakes {
    /// The execution `tag` starts running on the owning OS thread.
    pub(crate) fn start(&self, tag: u64) {
        // A wake recorded for an earlier execution that ended with another failure.
        if self.woken.swap(false, Ordering::AcqRel) {
            self.lock().take();
        }
        self.running.store(tag, Ordering::Release);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ForeignWake>> {
        // The value is written whole; a panic elsewhere cannot leave it half-written.
        self.wake
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The execution running on the owning OS thread ends.
    pub(crate) fn stop(&self) {
        self.running.store(0, Ordering::Release);
    }

    /// Records that the waker of thread `thread` of execution `tag` was woken on an OS thread
    /// that does not run that execution. A waker kept past its execution has nothing left to
    /// wake, and its wake is ignored.
    pub(crate) fn woken_elsewhere(&self, tag: u64, thread: usize, site: Option<Site>) {
        if self.running.load(Ordering::Acquire) != tag {
            return;
        }
        let mut wake = self.lock();
        if wake.is_none() {
            let os_thread = std::thread::current();
            *wake = Some(ForeignWake {
                execution: tag,
                thread,
                site,
                os_thread: os_thread.name().unwrap_or("<unnamed>").to_string(),
            });
            self.woken.store(true, Ordering::Release);
        }
    }

    /// The explanation of the first foreign wake of execution `tag`, the running one, if there
    /// was one. Inlined for the common answer, one load: the call cost every execution about
    /// 20 instructions (callgrind, `fixed_costs`).
    #[inline]
    pub(crate) fn explanation(&self, tag: u64) -> Option<String> {
        if !self.woken.load(Ordering::Acquire) {
            return None;
        }
        self.explain(tag)
    }

    #[cold]
    fn explain(&self, tag: u64) -> Option<String> {
        // A wake that raced with the end of the previous execution is not this one's.
        let wake = self.lock().take().filter(|wake| wake.execution == tag)?;
        let parked = match wake.site {
            Some(site) => format!(" (parked at {})", super::op::ShortSite(site)),
            None => String::new(),
        };
        Some(format!(
            "the waker of the task on thread {}{parked} was woken from an OS thread interleave \
             does not control ('{}'), so interleave could not wake the task. Every thread and \
             task of a test runs on the OS thread of its execution; a future woken by a std \
             thread or another runtime's reactor depends on something the scheduler does not \
             see. Wake it from a thread of the test (interleave::thread, interleave::future) \
             or use interleave's own async primitives (interleave::future::sync, \
             interleave::time).",
            wake.thread, wake.os_thread
        ))
    }
}
