//! [`Notify`]: a notification between tasks.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{wake_all, StateLock};
use crate::runtime::op::Site;

/// A notification between tasks, as tokio's `Notify`: `notify_one` wakes one waiter or, if
/// none waits, stores one permit for the next `notified().await`; `notify_waiters` wakes the
/// waiters registered at that moment and stores nothing.
pub struct Notify {
    state: StateLock<NotifyState>,
}

struct NotifyState {
    permit: bool,
    /// Incremented by every `notify_waiters`: a `Notified` made before it is woken by it.
    generation: u64,
    next_waiter: u64,
    waiters: VecDeque<(u64, Waker)>,
    /// Waiters `notify_one` picked, not yet polled since.
    notified: Vec<u64>,
}

impl Notify {
    /// A notify with no stored permit.
    #[track_caller]
    pub fn new() -> Notify {
        Notify {
            state: StateLock::state_of(
                "Notify",
                NotifyState {
                    permit: false,
                    generation: 0,
                    next_waiter: 0,
                    waiters: VecDeque::new(),
                    notified: Vec::new(),
                },
            ),
        }
    }

    /// Wakes one waiting task, or stores a permit if none waits.
    #[track_caller]
    pub fn notify_one(&self) {
        self.notify_one_at(Location::caller());
    }

    #[track_caller]
    fn notify_one_at(&self, site: Site) {
        let woken = {
            let mut state = self.state.lock_as(site, "notify_one");
            match state.waiters.pop_front() {
                Some((id, waker)) => {
                    state.notified.push(id);
                    Some(waker)
                }
                None => {
                    state.permit = true;
                    None
                }
            }
        };
        wake_all(woken);
    }

    /// Wakes every task waiting now, and every `Notified` made before this call; stores no
    /// permit, so a task that starts waiting afterwards waits for the next notification.
    #[track_caller]
    pub fn notify_waiters(&self) {
        let woken: Vec<Waker> = {
            let mut state = self.state.lock_as(Location::caller(), "notify_waiters");
            state.generation += 1;
            state.waiters.drain(..).map(|(_, waker)| waker).collect()
        };
        wake_all(woken);
    }

    /// A future that completes at the next notification. It counts as waiting for
    /// `notify_waiters` from the moment it is made. Its steps are recorded at the caller's
    /// line.
    #[track_caller]
    pub fn notified(&self) -> Notified<'_> {
        let site = Location::caller();
        let generation = self.state.lock_as(site, "notified").generation;
        Notified {
            notify: self,
            generation,
            waiter: None,
            site,
        }
    }
}

impl Default for Notify {
    #[track_caller]
    fn default() -> Notify {
        Notify::new()
    }
}

/// The future of [`Notify::notified`].
pub struct Notified<'a> {
    notify: &'a Notify,
    generation: u64,
    waiter: Option<u64>,
    site: Site,
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let mut state = self.notify.state.lock_as(self.site, "notified");
        if state.generation != self.generation {
            return Poll::Ready(());
        }
        if let Some(id) = self.waiter {
            if let Some(i) = state.notified.iter().position(|&n| n == id) {
                state.notified.swap_remove(i);
                return Poll::Ready(());
            }
            // Still waiting: refresh the waker.
            if let Some(entry) = state.waiters.iter_mut().find(|(w, _)| *w == id) {
                entry.1 = context.waker().clone();
            }
            crate::future::awaiting("a Notify notification", Some(self.site));
            return Poll::Pending;
        }
        if state.permit {
            state.permit = false;
            return Poll::Ready(());
        }
        let id = state.next_waiter;
        state.next_waiter += 1;
        state.waiters.push_back((id, context.waker().clone()));
        drop(state);
        self.waiter = Some(id);
        crate::future::awaiting("a Notify notification", Some(self.site));
        Poll::Pending
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let Some(id) = self.waiter else { return };
        let passed_on = {
            let mut state = self.notify.state.lock_as(self.site, "cancel notified");
            state.waiters.retain(|(w, _)| *w != id);
            // A `notify_one` that picked this waiter is not lost: it goes to the next one.
            match state.notified.iter().position(|&n| n == id) {
                Some(i) => {
                    state.notified.swap_remove(i);
                    true
                }
                None => false,
            }
        };
        if passed_on {
            self.notify.notify_one_at(self.site);
        }
    }
}
