//! `Condvar`: waiting for a condition under a mutex. `wait` releases the mutex and waits for a
//! notification. A timed wait may time out at any scheduling point after it started, and the
//! execution's virtual clock (see [`crate::time`]) then moves to its deadline; a notification
//! taken first wins. Spurious wake-ups happen only with `Config::spurious_wakeups`. Which
//! waiter `notify_one` wakes is the scheduler's choice among the threads waiting when it was
//! called (`runtime::condvar_queue`), as std leaves it open.

use std::panic::Location;
use std::time::Duration;

use super::{LockResult, MutexGuard, PoisonError};
use crate::runtime;
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::{Gate, ObjectKind, Op, OpKind, Site};
use crate::runtime::op_on;

/// A condition variable.
#[derive(Debug)]
pub struct Condvar {
    handle: ObjectHandle,
}

/// Whether a timed wait returned because of its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// True if the wait ended by timing out rather than by a notification.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

impl Condvar {
    /// A new condition variable.
    #[track_caller]
    pub const fn new() -> Condvar {
        Condvar {
            handle: ObjectHandle::new(Location::caller()),
        }
    }

    /// Waits for a notification, or until the virtual clock reaches `deadline` if there is one;
    /// returns whether it timed out.
    #[track_caller]
    fn wait_inner<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Duration>,
        site: Site,
    ) -> (LockResult<MutexGuard<'a, T>>, bool) {
        let (mutex, lock_site) = guard.into_parts();
        let cv = runtime::switch_on(&self.handle, ObjectKind::Condvar, op_on!(Wait), site).index();
        let (m, spurious_wakeups) = runtime::with(|ex| {
            let m = ex.object(mutex.handle(), ObjectKind::Mutex);
            ex.give_mutex(m);
            let me = ex.me();
            if let ObjState::Condvar { queue } = &mut ex.objects[cv as usize].state {
                ex.threads[me].condvar_arrival = queue.wait(me);
            }
            ex.threads[me].waiting = true;
            if let Some(deadline) = deadline {
                ex.set_deadline(deadline);
            }
            (m, ex.limits().spurious_wakeups)
        });
        let mut wake = Op::with(OpKind::Wake, cv, m, deadline.is_some());
        if spurious_wakeups {
            // The wait may end by itself: the full enabledness test flags it (`Gate::Wake`).
            wake.gate = Gate::Other;
        }
        runtime::switch(wake, site);
        let timed_out = runtime::with(|ex| {
            let me = ex.me();
            let mut timed_out = false;
            if ex.threads[me].waiting {
                ex.threads[me].waiting = false;
                if let ObjState::Condvar { queue } = &mut ex.objects[cv as usize].state {
                    // Woken by a `notify_one` left for it, or else by its timeout.
                    if queue.take(me).is_none() {
                        queue.leave(me);
                        timed_out = true;
                    }
                    ex.objects[cv as usize].condvar_eligible = queue.eligible_below();
                }
            }
            if !timed_out {
                ex.acquire(cv);
            } else if deadline.is_none() && ex.limits().spurious_wakeups {
                // No notification and no timeout: the wake-up std allows without a cause
                // (`Config::spurious_wakeups`), which the report names, since no `notify` in
                // the interleaving explains it.
                ex.label_step_just_taken("wake (spurious)");
            }
            ex.take_mutex(m, lock_site);
            timed_out
        });
        (MutexGuard::from_parts(mutex, m, lock_site), timed_out)
    }

    /// Releases the guard's mutex, waits for a notification, and re-acquires the mutex.
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_inner(guard, None, Location::caller()).0
    }

    /// Waits while `condition` holds.
    #[track_caller]
    pub fn wait_while<'a, T: ?Sized, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        let site = Location::caller();
        while condition(&mut *guard) {
            guard = self.wait_inner(guard, None, site).0?;
        }
        Ok(guard)
    }

    /// Like [`Condvar::wait`], but may also return, timed out, at any point after it started,
    /// the virtual clock then moving to `duration` after the call (see [`crate::time`]). A
    /// timeout the clock cannot reach (`Duration::MAX`) never ends the wait.
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        duration: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let deadline = runtime::with(|ex| ex.reachable_deadline_after(duration));
        let (guard, timed_out) = self.wait_inner(guard, deadline, Location::caller());
        let timed_out = WaitTimeoutResult(timed_out);
        guard
            .map(|guard| (guard, timed_out))
            .map_err(|poisoned| PoisonError::new((poisoned.into_inner(), timed_out)))
    }

    /// Waits while `condition` holds, for at most `duration` of virtual time in all; the result
    /// says whether the condition still held when the time was up. As for
    /// [`Condvar::wait_timeout`], the time may be up at any point, and never for a timeout the
    /// clock cannot reach (`Duration::MAX`).
    #[track_caller]
    pub fn wait_timeout_while<'a, T: ?Sized, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        duration: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let site = Location::caller();
        let deadline = runtime::with(|ex| ex.reachable_deadline_after(duration));
        while condition(&mut *guard) {
            let (next, timed_out) = self.wait_inner(guard, deadline, site);
            guard = next.map_err(|poisoned| {
                PoisonError::new((poisoned.into_inner(), WaitTimeoutResult(timed_out)))
            })?;
            if timed_out {
                let still = condition(&mut *guard);
                return Ok((guard, WaitTimeoutResult(still)));
            }
        }
        Ok((guard, WaitTimeoutResult(false)))
    }

    #[track_caller]
    fn notify(&self, all: bool, site: Site) {
        let cv = if all {
            runtime::switch_on(&self.handle, ObjectKind::Condvar, op_on!(NotifyAll), site)
        } else {
            runtime::switch_on(&self.handle, ObjectKind::Condvar, op_on!(NotifyOne), site)
        }
        .index();
        runtime::with(|ex| {
            let (threads, objects) = (&mut ex.threads, &mut ex.objects);
            if let ObjState::Condvar { queue } = &mut objects[cv as usize].state {
                if all {
                    for thread in queue.notify_all() {
                        threads[thread].waiting = false;
                    }
                } else {
                    queue.notify_one(());
                }
                objects[cv as usize].condvar_eligible = queue.eligible_below();
            }
            ex.release(cv);
        });
    }

    /// Wakes one of the threads waiting now, if any; which one is explored.
    #[track_caller]
    pub fn notify_one(&self) {
        self.notify(false, Location::caller());
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        self.notify(true, Location::caller());
    }
}

impl Default for Condvar {
    #[track_caller]
    fn default() -> Condvar {
        Condvar::new()
    }
}
