//! Must-happen-before along a trace: program order, spawn and join only, the order every
//! schedule of the program respects. The trace-based analyses (the lock-order predictor and
//! the concurrent access pairs) call two steps concurrent when it does not order them.

use crate::runtime::clock::VectorClock;
use crate::strategy::{OpKind, TraceEvent, TraceTarget};

/// Vector clocks of program order, spawn and join, advanced one step at a time.
#[derive(Default)]
pub(crate) struct ForkJoin {
    clocks: Vec<VectorClock>,
}

impl ForkJoin {
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
        self.clocks[t].tick(t);
        if let (OpKind::Spawn, Some(TraceTarget::Thread(child))) = (event.kind, event.target) {
            let parent = self.clocks[t].clone();
            self.clocks[child].copy_from(&parent);
        }
        &self.clocks[t]
    }
}
