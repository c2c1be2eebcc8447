//! Helpers shared by the programs: a gate for the fixed twins and filler work.
//!
//! Built only from `super::rt` items, like the programs themselves.

use super::rt::sync::atomic::{AtomicU64, Ordering};
use super::rt::sync::{Condvar, Mutex};

/// A one-shot gate: threads calling [`Gate::wait`] block until some thread calls [`Gate::open`].
///
/// Used by fixed twins to enforce an intended order between threads without spinning, so every
/// program still terminates under every schedule (the opener never waits for anything).
pub(crate) struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Self {
        Gate {
            open: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Opens the gate and wakes every waiter.
    pub(crate) fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    /// Blocks until the gate is open.
    pub(crate) fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
}

/// `steps` statements of work unrelated to the bug: each is one increment of a counter that
/// only the calling thread ever sees, so each is one scheduling point that cannot interact with
/// the bug, not even through a shared variable (a shared counter would be a benign race every
/// analysis that orders conflicting accesses, DPOR, value schedules and variable bounding
/// alike, would have to permute).
///
/// Programs put such work where the paper leaves the surrounding code open, in the thread
/// whose conflicting access must arrive *late* (after the other thread has entered its window).
/// That is what makes the bugs rare for a random walk (the other thread must sit in its window
/// while this one does all of its work: probability shrinking exponentially with `steps`),
/// while PCT still needs the same change points and only pays for the larger step count `k`.
pub(crate) fn unrelated_work(steps: u32) {
    let local = AtomicU64::new(0);
    for _ in 0..steps {
        local.fetch_add(1, Ordering::Relaxed);
    }
}
