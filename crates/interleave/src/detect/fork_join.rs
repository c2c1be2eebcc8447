//! Must-happen-before along a trace: program order, spawn and join only, the order every
//! schedule of the program respects. The trace-based analyses (the lock-order predictor and
//! the concurrent access pairs) call two steps concurrent when it does not order them.
//! AssetFuzzer's relaxed happens-before adds wait/notify edges ([`ForkJoin::with_notify`]).

use std::collections::HashMap;

use crate::runtime::clock::VectorClock;
use crate::strategy::{ObjectId, OpKind, TraceEvent, TraceTarget};

/// Vector clocks of program order, spawn and join, advanced one step at a time.
#[derive(Default)]
pub(crate) struct ForkJoin {
    clocks: Vec<VectorClock>,
    /// With wait/notify edges: each condition variable's clock at its latest notification.
    notified: Option<HashMap<ObjectId, VectorClock>>,
}

impl ForkJoin {
    /// Also orders a notification before the wake-up it can cause: the latest notification
    /// of the condition variable before a woken waiter re-enters (seed 003's relaxed
    /// happens-before: spawn, join, wait and notify).
    pub(crate) fn with_notify() -> ForkJoin {
        ForkJoin {
            clocks: Vec::new(),
            notified: Some(HashMap::new()),
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
        if let (Some(notified), OpKind::Wake, Some(condvar)) =
            (&self.notified, event.kind, event.object)
        {
            if let Some(clock) = notified.get(&condvar) {
                self.clocks[t].join(clock);
            }
        }
        self.clocks[t].tick(t);
        if let (Some(notified), OpKind::NotifyOne | OpKind::NotifyAll, Some(condvar)) =
            (&mut self.notified, event.kind, event.object)
        {
            notified.insert(condvar, self.clocks[t].clone());
        }
        if let (OpKind::Spawn, Some(TraceTarget::Thread(child))) = (event.kind, event.target) {
            let parent = self.clocks[t].clone();
            self.clocks[child].copy_from(&parent);
        }
        &self.clocks[t]
    }
}
