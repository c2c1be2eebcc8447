//! A slot for one task's waker, shaped like loom's (and `futures`') `AtomicWaker`: the task
//! registers its waker before it checks for the event, the producer signals the event and
//! then wakes. Registering and waking are scheduling points on one lock of this crate, so the
//! schedules where a wake falls between a check and a registration are explored. Reports
//! show those steps as the waker's own operations (`register AtomicWaker1`, `wake
//! AtomicWaker1`), not as the lock's.

use std::fmt;
use std::panic::Location;
use std::task::Waker;

use crate::sync::Mutex;

/// Holds the waker of the task that waits for an event.
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// An empty slot.
    #[track_caller]
    pub const fn new() -> AtomicWaker {
        AtomicWaker {
            waker: Mutex::state_of("AtomicWaker", None),
        }
    }

    /// Stores `waker`, replacing the one registered before.
    #[track_caller]
    pub fn register(&self, waker: Waker) {
        *self.slot("register") = Some(waker);
    }

    /// Stores a clone of `waker` unless the registered waker would wake the same task.
    #[track_caller]
    pub fn register_by_ref(&self, waker: &Waker) {
        let mut slot = self.slot("register");
        match &*slot {
            Some(registered) if registered.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    /// Wakes the registered task, if any, and empties the slot.
    #[track_caller]
    pub fn wake(&self) {
        let waker = self.slot("wake").take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Takes the registered waker out of the slot.
    #[track_caller]
    pub fn take_waker(&self) -> Option<Waker> {
        self.slot("take_waker").take()
    }

    /// The slot, locked for the caller's `operation` at the caller's line. It holds a waker or
    /// nothing, which a panicking thread cannot leave half-written, so the lock's poisoning is
    /// of no interest.
    #[track_caller]
    fn slot(&self, operation: &'static str) -> crate::sync::MutexGuard<'_, Option<Waker>> {
        self.waker.lock_as(Location::caller(), operation)
    }
}

impl Default for AtomicWaker {
    #[track_caller]
    fn default() -> AtomicWaker {
        AtomicWaker::new()
    }
}

impl fmt::Debug for AtomicWaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicWaker").finish_non_exhaustive()
    }
}
