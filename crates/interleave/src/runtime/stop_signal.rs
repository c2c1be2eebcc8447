//! Stopping from another OS thread: a [`StopHandle`] that any OS thread may trip, which the
//! execution reads at every scheduling point, and the end of an execution it stopped.
//!
//! How a stop takes effect: the choke point reads the handle's flag (one relaxed load) next to
//! the step bound, in `decide` and on the fast path of untracked data accesses, so a thread
//! that spins under control (on an interleave atomic, say) sees the stop at its next step. The
//! execution then ends there with `Recording::stopped` set, no failure added (a failure
//! recorded before the stop stays), and nothing asked of its schedule. Code that blocks or
//! spins outside interleave's control (a `std::sync::Barrier`, a loop on a std atomic) reaches
//! no scheduling point and is not stopped; the watchdog is what ends such a hang.
//!
//! The guarantee for the stopped execution, that of a process that exits: the threads that had
//! not finished are never resumed and never unwound, so no destructor of a value on their
//! stacks runs, and neither do those of their thread-locals, of the values they kept until the
//! end (`kept.rs`), of the execution's `lazy_static!` values and of its async timers: all of it
//! is leaked, stacks included, never freed or reused. Values shared with code outside the
//! execution (an `Arc` the test closure captured) keep the counts the stopped threads held.
//! The price: a thread that was unwinding a panic when the execution stopped leaves
//! `std::thread::panicking()` true on the OS thread for good, as under
//! `Limits::panic_stops_execution`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

/// Stops explorations from any OS thread: every clone trips the same flag, and an exploration
/// given one (`Builder::stop_handle`) ends at its next scheduling point once it is tripped.
///
/// ```
/// use interleave::StopHandle;
///
/// let stop = StopHandle::new();
/// let watcher = stop.clone();
/// assert!(!watcher.is_stopped());
/// assert!(stop.stop(), "the first call trips it");
/// assert!(!stop.stop(), "later calls find it tripped");
/// assert!(watcher.is_stopped());
/// ```
#[derive(Clone, Debug, Default)]
pub struct StopHandle {
    stopped: Arc<AtomicBool>,
}

impl StopHandle {
    /// A handle that has not been stopped.
    pub fn new() -> StopHandle {
        StopHandle::default()
    }

    /// Asks every exploration that holds this handle (or a clone) to stop; returns true for the
    /// call that tripped it, false when it had been stopped already. Stopping cannot be undone.
    pub fn stop(&self) -> bool {
        !self.stopped.swap(true, Ordering::AcqRel)
    }

    /// Whether the handle has been stopped.
    #[inline(always)]
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

impl Execution {
    /// Whether the execution was asked to stop (see the module documentation).
    #[inline(always)]
    pub(super) fn stop_requested(&self) -> bool {
        self.stop_handle
            .as_ref()
            .is_some_and(StopHandle::is_stopped)
    }

    /// Ends the execution at the scheduling point where it saw the stop.
    #[cold]
    #[inline(never)]
    pub(super) fn end_at_stop(&mut self) {
        self.recording.stopped = true;
    }
}

/// Ends a stopped execution as a process ends: every coroutine left is forgotten with its stack,
/// and every value the execution holds for its threads is leaked (see the module
/// documentation). Replaces teardown for a stopped execution.
pub(super) fn abandon_at_stop(coroutines: &mut [Option<ThreadCoroutine>]) {
    for coroutine in coroutines.iter_mut().filter_map(Option::take) {
        std::mem::forget(coroutine);
    }
    with(|ex| {
        for slot in &mut ex.threads {
            std::mem::forget(std::mem::take(&mut slot.locals));
            std::mem::forget(std::mem::take(&mut slot.kept));
        }
        ex.lazy_statics.leak();
        std::mem::forget(ex.take_timers());
        for (_, coroutine, _) in ex.spawned.drain(..) {
            std::mem::forget(coroutine);
        }
    });
}
