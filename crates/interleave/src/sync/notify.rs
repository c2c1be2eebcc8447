//! A blocking one-permit notification, shaped like loom's `sync::Notify`: `notify` leaves a
//! permit (notifying twice leaves one), `wait` takes it or blocks until there is one. Built on
//! this crate's `Mutex` and `Condvar`, so waiting and notifying are scheduling points with the
//! happens-before edge of the lock, and a wait that is never notified is reported as a deadlock.

use std::fmt;

use super::{Condvar, Mutex};

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
    permit: Mutex<bool>,
    changed: Condvar,
}

impl Notify {
    /// A notification without a permit.
    #[track_caller]
    pub const fn new() -> Notify {
        Notify {
            permit: Mutex::new(false),
            changed: Condvar::new(),
        }
    }

    /// Leaves the permit and wakes a waiting thread.
    #[track_caller]
    pub fn notify(&self) {
        *lock_ignoring_poison(&self.permit) = true;
        self.changed.notify_one();
    }

    /// Takes the permit, blocking until there is one.
    #[track_caller]
    pub fn wait(&self) {
        let mut permit = lock_ignoring_poison(&self.permit);
        while !*permit {
            permit = self
                .changed
                .wait(permit)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *permit = false;
    }
}

/// The permit is a plain flag that a panicking thread cannot leave half-written, so a poisoned
/// lock still holds a meaningful value.
#[track_caller]
fn lock_ignoring_poison(permit: &Mutex<bool>) -> super::MutexGuard<'_, bool> {
    permit
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
