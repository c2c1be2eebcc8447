//! A blocking one-permit notification, shaped like loom's `sync::Notify`: `notify` leaves a
//! permit (notifying twice leaves one), `wait` takes it or blocks until there is one.
//!
//! It keeps its permit and waiting threads behind an internal state lock, as the async
//! primitives do, so reports show one `Notify` object with its own operations (`notify`,
//! `wait`, `wait (waits)`) rather than the lock and condition variable it would otherwise be
//! made of. Taking the state lock gives waiting and notifying the happens-before edge of a
//! lock; a waiting thread parks until a notifier unparks it, so a wait that is never notified
//! is reported as a deadlock.

use std::fmt;
use std::panic::Location;

use super::Mutex;
use crate::runtime::{self, Awaited};
use crate::thread::{self, Thread};

/// A one-permit notification between threads of an execution.
///
/// ```
/// use interleave::sync::{Arc, Notify};
///
/// interleave::check(|| {
///     let ready = Arc::new(Notify::new());
///     let waiter = {
///         let ready = ready.clone();
///         interleave::thread::spawn(move || ready.wait())
///     };
///     ready.notify();
///     waiter.join().unwrap();
/// });
/// ```
pub struct Notify {
    state: Mutex<NotifyState>,
}

struct NotifyState {
    permit: bool,
    /// The threads parked in `wait`, in the order they started waiting.
    waiters: Vec<Thread>,
}

impl Notify {
    /// A notification without a permit.
    #[track_caller]
    pub const fn new() -> Notify {
        Notify {
            state: Mutex::state_of(
                "Notify",
                NotifyState {
                    permit: false,
                    waiters: Vec::new(),
                },
            ),
        }
    }

    /// Leaves the permit and wakes a waiting thread.
    #[track_caller]
    pub fn notify(&self) {
        let site = Location::caller();
        let woken = {
            let mut state = self.state.lock_as(site, "notify");
            state.permit = true;
            (!state.waiters.is_empty()).then(|| state.waiters.remove(0))
        };
        if let Some(waiter) = woken {
            waiter.unpark_at(site);
        }
    }

    /// Takes the permit, blocking until there is one.
    #[track_caller]
    pub fn wait(&self) {
        let site = Location::caller();
        loop {
            {
                let mut state = self.state.lock_as(site, "wait");
                if state.permit {
                    state.permit = false;
                    return;
                }
                let me = thread::current();
                if !state.waiters.iter().any(|waiter| waiter.id() == me.id()) {
                    state.waiters.push(me);
                }
                let object = state.index();
                runtime::with(|ex| {
                    ex.show_last_step_waits();
                    // What a deadlock report says this thread waits for.
                    let me = ex.me();
                    ex.threads[me]
                        .awaiting
                        .push(Awaited::Notification { object, site });
                });
            }
            // Woken by a notifier, or spuriously (`Config::spurious_wakeups`): either way the
            // permit is checked again, and another thread may have taken it first.
            thread::park_at(site);
            runtime::with(|ex| {
                let me = ex.me();
                ex.threads[me]
                    .awaiting
                    .retain(|awaited| !matches!(awaited, Awaited::Notification { .. }));
            });
        }
    }
}

impl Default for Notify {
    #[track_caller]
    fn default() -> Notify {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").finish_non_exhaustive()
    }
}
