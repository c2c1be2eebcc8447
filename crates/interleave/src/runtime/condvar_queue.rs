//! The waiters of a condition variable and the notifications they have not taken yet: the one
//! definition of which waiter a notification may wake, used by the runtime and replayed over
//! traces by `analysis::predict::fork_join`.
//!
//! std guarantees only that `notify_one` wakes one of the threads waiting when it is called, if
//! there is one; which one is up to the platform. So `notify_one` does not pick a waiter: it
//! leaves a notification that any thread already waiting at that moment may take, and the
//! scheduler's choice of which waiter runs first decides which one wakes. A thread that starts
//! waiting later cannot take it (std's condition variables do not let a late waiter steal an
//! earlier notification). `notify_all` wakes every current waiter at once.
//!
//! Each waiter gets an arrival number; a notification records the latest arrival number when it
//! was made, and may go to any waiter that arrived no later. The waiters eligible for an older
//! notification are a subset of those eligible for a newer one, so a waiter that takes the
//! oldest notification it is eligible for never leaves another notification without a waiter
//! that could have taken it. A notification made when every waiter already has one is lost, as
//! under std; so is one whose waiters all left by timing out.

use std::collections::VecDeque;

/// Waiters and pending `notify_one` notifications; `N` is what a notification carries (nothing
/// for the runtime, the notifier's clock for trace analyses).
#[derive(Clone, Debug)]
pub(crate) struct CondvarQueue<N> {
    /// Waiting threads with their arrival numbers, in arrival order.
    waiters: VecDeque<(usize, u64)>,
    next_arrival: u64,
    /// Pending notifications: the latest arrival number eligible, oldest first.
    notifications: VecDeque<(u64, N)>,
}

impl<N> Default for CondvarQueue<N> {
    fn default() -> CondvarQueue<N> {
        CondvarQueue {
            waiters: VecDeque::new(),
            next_arrival: 0,
            notifications: VecDeque::new(),
        }
    }
}

impl<N> CondvarQueue<N> {
    /// Empties the queue for a new condition variable, keeping its memory.
    pub fn clear(&mut self) {
        self.waiters.clear();
        self.next_arrival = 0;
        self.notifications.clear();
    }

    /// `thread` starts waiting; returns its arrival number.
    pub fn wait(&mut self, thread: usize) -> u64 {
        let arrival = self.next_arrival;
        self.waiters.push_back((thread, arrival));
        self.next_arrival += 1;
        arrival
    }

    /// `notify_one`: leaves a notification for one of the current waiters, unless each of them
    /// already has one (then it is lost).
    pub fn notify_one(&mut self, payload: N) {
        if self.waiters.len() > self.notifications.len() {
            let latest = self.next_arrival.saturating_sub(1);
            self.notifications.push_back((latest, payload));
        }
    }

    /// `notify_all`: every current waiter is woken; returns them in arrival order.
    pub fn notify_all(&mut self) -> impl Iterator<Item = usize> + '_ {
        self.notifications.clear();
        self.waiters.drain(..).map(|(thread, _)| thread)
    }

    /// One more than the latest arrival number a pending notification may go to, 0 when none
    /// is pending: a waiter may take a notification exactly when its arrival number is
    /// below it (`can_take`), which the runtime tests without finding the waiter.
    pub fn eligible_below(&self) -> u64 {
        self.notifications
            .back()
            .map_or(0, |&(latest, _)| latest + 1)
    }

    /// Whether `thread`, waiting, may take a pending notification.
    pub fn can_take(&self, thread: usize) -> bool {
        self.position(thread)
            .is_some_and(|waiter| self.waiters[waiter].1 < self.eligible_below())
    }

    /// `thread` wakes by taking the oldest notification it is eligible for, and stops waiting;
    /// `None` (and it still waits) if there is none.
    pub fn take(&mut self, thread: usize) -> Option<N> {
        let waiter = self.position(thread)?;
        let arrival = self.waiters[waiter].1;
        let position = self
            .notifications
            .iter()
            .position(|&(latest, _)| arrival <= latest)?;
        // Mostly the oldest notification and the first waiter: `pop_front` and a removal by
        // position, where `remove` and `retain` over the whole queue cost a `Condvar`
        // workload about 100 instructions per wake-up.
        let (_, payload) = if position == 0 {
            self.notifications.pop_front()?
        } else {
            self.notifications.remove(position)?
        };
        if waiter == 0 {
            self.waiters.pop_front();
        } else {
            self.waiters.remove(waiter);
        }
        Some(payload)
    }

    /// `thread` stops waiting without a notification (it timed out). Notifications that can no
    /// longer all find a waiter lose the oldest of them, as a notification to a thread that is
    /// timing out is lost under std.
    pub fn leave(&mut self, thread: usize) {
        self.waiters.retain(|&(waiter, _)| waiter != thread);
        let mut kept = 0;
        let mut index = 0;
        while index < self.notifications.len() {
            let latest = self.notifications[index].0;
            let eligible = self
                .waiters
                .iter()
                .filter(|&&(_, arrival)| arrival <= latest)
                .count();
            if eligible > kept {
                kept += 1;
                index += 1;
            } else {
                self.notifications.remove(index);
            }
        }
    }

    /// Where `thread` is among the waiters, if it waits.
    fn position(&self, thread: usize) -> Option<usize> {
        self.waiters
            .iter()
            .position(|&(waiter, _)| waiter == thread)
    }
}

#[cfg(test)]
mod tests {
    use super::CondvarQueue;

    #[test]
    fn a_cleared_queue_is_a_new_one() {
        let mut queue = CondvarQueue::<()>::default();
        queue.wait(1);
        queue.wait(2);
        queue.notify_one(());
        queue.clear();
        assert!(!queue.can_take(1), "no waiter and no notification are left");
        assert_eq!(queue.eligible_below(), 0);
        assert_eq!(queue.wait(3), 0, "arrivals count from 0 again");
        queue.notify_one(());
        assert_eq!(queue.take(3), Some(()));
    }

    #[test]
    fn notify_one_goes_to_any_earlier_waiter_but_not_to_a_later_one() {
        let mut queue = CondvarQueue::<()>::default();
        queue.wait(1);
        queue.wait(2);
        queue.notify_one(());
        queue.wait(3);
        assert!(queue.can_take(1) && queue.can_take(2));
        assert!(
            !queue.can_take(3),
            "a later waiter cannot steal the notification"
        );
        assert_eq!(queue.take(2), Some(()));
        assert!(!queue.can_take(1), "one notification wakes one waiter");
    }

    #[test]
    fn a_notification_with_every_waiter_notified_is_lost() {
        let mut queue = CondvarQueue::<u8>::default();
        queue.wait(1);
        queue.notify_one(1);
        queue.notify_one(2);
        assert_eq!(queue.take(1), Some(1));
        queue.wait(1);
        assert!(!queue.can_take(1));
    }

    #[test]
    fn taking_the_oldest_eligible_notification_strands_none() {
        let mut queue = CondvarQueue::<u8>::default();
        queue.wait(1);
        queue.notify_one(10);
        queue.wait(2);
        queue.notify_one(20);
        assert_eq!(queue.take(1), Some(10));
        assert_eq!(queue.take(2), Some(20));
    }

    #[test]
    fn a_waiter_that_times_out_takes_its_only_notification_with_it() {
        let mut queue = CondvarQueue::<()>::default();
        queue.wait(1);
        queue.notify_one(());
        queue.wait(2);
        queue.leave(1);
        assert!(!queue.can_take(2), "the notification was for thread 1 only");
    }

    #[test]
    fn notify_all_wakes_every_waiter_and_clears_notifications() {
        let mut queue = CondvarQueue::<()>::default();
        queue.wait(1);
        queue.wait(2);
        queue.notify_one(());
        assert_eq!(queue.notify_all().collect::<Vec<_>>(), [1, 2]);
        queue.wait(3);
        assert!(!queue.can_take(3));
    }
}
