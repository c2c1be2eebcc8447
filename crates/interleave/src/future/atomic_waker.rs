//! A slot for one task's waker, shaped like loom's (and `futures`') `AtomicWaker`: the task
//! registers its waker before it checks for the event, the producer signals the event and
//! then wakes. Registering and waking are scheduling points on one lock of this crate, so the
//! schedules where a wake falls between a check and a registration are explored.

use std::fmt;
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
            waker: Mutex::new(None),
        }
    }

    /// Stores `waker`, replacing the one registered before.
    #[track_caller]
    pub fn register(&self, waker: Waker) {
        *self.slot() = Some(waker);
    }

    /// Stores a clone of `waker` unless the registered waker would wake the same task.
    #[track_caller]
    pub fn register_by_ref(&self, waker: &Waker) {
        let mut slot = self.slot();
        match &*slot {
            Some(registered) if registered.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    /// Wakes the registered task, if any, and empties the slot.
    #[track_caller]
    pub fn wake(&self) {
        if let Some(waker) = self.take_waker() {
            waker.wake();
        }
    }

    /// Takes the registered waker out of the slot.
    #[track_caller]
    pub fn take_waker(&self) -> Option<Waker> {
        self.slot().take()
    }

    /// The slot holds a waker or nothing, which a panicking thread cannot leave half-written,
    /// so a poisoned lock still holds a meaningful value.
    #[track_caller]
    fn slot(&self) -> crate::sync::MutexGuard<'_, Option<Waker>> {
        self.waker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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
