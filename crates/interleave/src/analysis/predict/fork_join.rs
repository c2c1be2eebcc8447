//! Must-happen-before along a trace: program order, spawn and join only, the order every
//! schedule of the program respects. The trace-based analyses (the lock-order predictor and
//! the concurrent access pairs) call two steps concurrent when it does not order them.
//!
//! The race predictor and AssetFuzzer's phase I also count the edge from a condition-variable
//! notification to the wake-up of each waiter it woke ([`ForkJoin::with_notifications`]), the
//! relaxed happens-before of hybrid analyses: like spawn and join, a wake-up cannot be moved
//! before the notification that caused it, whereas lock release and acquire edges only record
//! which of two critical sections happened to come first.

use std::collections::HashMap;

use crate::runtime::clock::VectorClock;
use crate::runtime::condvar_queue::CondvarQueue;
use crate::runtime::op::{ObjectId, OpKind};
use crate::runtime::{TraceEvent, TraceTarget};

/// Vector clocks of program order, spawn and join, advanced one step at a time.
#[derive(Default)]
pub(crate) struct ForkJoin {
    clocks: Vec<VectorClock>,
    /// The waits and notifications seen so far, when notification edges are counted.
    notifications: Option<Notifications>,
}

/// Which thread each notification woke, replayed from the trace with the runtime's rules
/// (`runtime::condvar_queue`): `notify_one` leaves a notification that the first eligible
/// waiter to wake takes, `notify_all` wakes every waiter, and a waiter that wakes with neither
/// timed out.
#[derive(Default)]
struct Notifications {
    /// The waiters and pending notifications (with the notifier's clock) of each condition
    /// variable.
    waiting: HashMap<ObjectId, CondvarQueue<VectorClock>>,
    /// The clock of the notification that woke each notified thread that has not yet taken
    /// its wake-up step.
    woken_by: HashMap<usize, VectorClock>,
}

impl ForkJoin {
    /// Also orders each notification before the wake-up step of every waiter it woke.
    pub(crate) fn with_notifications() -> ForkJoin {
        ForkJoin {
            clocks: Vec::new(),
            notifications: Some(Notifications::default()),
        }
    }

    /// Advances over `event` and returns the clock of its thread just after it; steps `a`
    /// and `b` are ordered exactly when `a`'s clock is [`leq`](VectorClock::leq) `b`'s.
    pub(crate) fn step(&mut self, event: &TraceEvent) -> &VectorClock {
        let t = event.thread;
        let grow = match event.target {
            Some(TraceTarget::Thread(other)) => t.max(other),
            _ => t,
        };
        if self.clocks.len() <= grow {
            self.clocks.resize(grow + 1, VectorClock::default());
        }
        if let (OpKind::Join, Some(TraceTarget::Thread(joined))) = (event.kind, event.target) {
            let finished = self.clocks[joined].clone();
            self.clocks[t].join(&finished);
        }
        if let (Some(notifications), OpKind::Wake, Some(condvar)) =
            (&mut self.notifications, event.kind, event.object)
        {
            let queue = notifications.waiting.entry(condvar).or_default();
            let notifier = notifications.woken_by.remove(&t).or_else(|| queue.take(t));
            match notifier {
                Some(notifier) => self.clocks[t].join(&notifier),
                None => queue.leave(t),
            }
        }
        self.clocks[t].tick(t);
        if let (OpKind::Spawn, Some(TraceTarget::Thread(child))) = (event.kind, event.target) {
            let parent = self.clocks[t].clone();
            self.clocks[child].copy_from(&parent);
        }
        if let (Some(notifications), Some(condvar)) = (&mut self.notifications, event.object) {
            match event.kind {
                OpKind::Wait => {
                    notifications.waiting.entry(condvar).or_default().wait(t);
                }
                OpKind::NotifyOne => notifications
                    .waiting
                    .entry(condvar)
                    .or_default()
                    .notify_one(self.clocks[t].clone()),
                OpKind::NotifyAll => {
                    let queue = notifications.waiting.entry(condvar).or_default();
                    for waiter in queue.notify_all() {
                        notifications
                            .woken_by
                            .insert(waiter, self.clocks[t].clone());
                    }
                }
                _ => {}
            }
        }
        &self.clocks[t]
    }
}
