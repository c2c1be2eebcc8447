//! Wakes from OS threads interleave does not control. Every thread and task of an execution
//! runs on one OS thread; a task's waker that is woken from another OS thread (a std thread, a
//! foreign runtime's reactor) cannot unpark the task, since the execution is not that thread's
//! to touch. Dropping such a wake silently made the task park for ever and the execution end
//! in a deadlock that is not in the program. Instead the waker records the wake here, and the
//! execution fails with an explanation when it would otherwise report that deadlock, or at its
//! end.
//!
//! Uses of interleave's primitives on OS threads that run no execution, which panic: a thread
//! a test started with `std::thread::spawn` or `std::thread::scope` instead of
//! `interleave::thread`'s. The test's own thread then sees only the `Err` its `join` returns,
//! and its `unwrap` says nothing of the cause; the last such use is kept here, process-wide,
//! so that a failure of an execution that ran meanwhile can name it (`outside_use_note`).

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

/// How many times a primitive was used on an unnamed OS thread that runs no execution, in the
/// whole process; an execution notes the count when it starts.
static OUTSIDE_USES: AtomicU64 = AtomicU64::new(0);

/// Where the last of those uses was made.
static LAST_OUTSIDE_USE: Mutex<Option<Site>> = Mutex::new(None);

/// Records a use of a primitive at `site` on the running OS thread, an unnamed one that runs
/// no execution (`runtime::outside_execution`).
pub(crate) fn outside_use(site: Site) {
    *LAST_OUTSIDE_USE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(site);
    OUTSIDE_USES.fetch_add(1, Ordering::AcqRel);
}

/// The number of uses [`outside_use`] has counted so far.
pub(crate) fn outside_uses() -> u64 {
    OUTSIDE_USES.load(Ordering::Acquire)
}

/// The note for a failure of an execution during which [`outside_use`] counted a use: where
/// the last one was made and what to do about it.
pub(crate) fn outside_use_note() -> Option<String> {
    let site = (*LAST_OUTSIDE_USE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner))?;
    Some(format!(
        "while this execution ran, a thread interleave did not start used an interleave \
         primitive at {} and panicked there. A thread started with std::thread::spawn or \
         std::thread::scope runs outside the execution, where interleave's primitives cannot \
         work, and its join returns that panic as `Err`: start it with interleave::thread::spawn \
         or interleave::thread::scope",
        super::op::ShortSite(site)
    ))
}
