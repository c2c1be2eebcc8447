//! The trace: an execution's steps as everything above the engine reads them (strategies'
//! feedback, the predictive analyses, the atomic-set monitor, the state count), built once
//! from the engine's record when the execution has finished.

use crate::runtime::op::{ObjectId, OpKind, Site};
use crate::runtime::Execution;

/// One step of an execution, as strategies that analyse whole executions see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// The thread that took the step (0 is the main thread; spawned threads are numbered in
    /// the order they were spawned).
    pub thread: usize,
    /// What the step did.
    pub kind: OpKind,
    /// The object it acted on, if any.
    pub object: Option<ObjectId>,
    /// For `Spawn`, the spawned thread; for `Join`, the joined thread; for `Wake`, the mutex
    /// the woken waiter takes back.
    pub target: Option<TraceTarget>,
    /// Where in the program the step was taken.
    pub site: Site,
}

/// What a step's argument refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceTarget {
    /// A thread (the spawned thread of a `Spawn`, the joined thread of a `Join`).
    Thread(usize),
    /// An object (the mutex of a `Wake`).
    Object(ObjectId),
}

/// The execution's steps as strategies see them.
pub(crate) fn of(ex: &Execution) -> Vec<TraceEvent> {
    let object = |idx: u32| ex.objects.get(idx as usize).map(|o| o.id);
    // Threads are numbered in spawn order: the `k`-th spawn creates thread `k`.
    let mut spawned = 0;
    ex.events
        .iter()
        .map(|e| TraceEvent {
            thread: e.thread as usize,
            kind: e.kind,
            object: object(e.object),
            target: match e.kind {
                OpKind::Spawn => {
                    spawned += 1;
                    Some(TraceTarget::Thread(spawned))
                }
                OpKind::Join => Some(TraceTarget::Thread(e.arg as usize)),
                OpKind::Wake => object(e.arg).map(TraceTarget::Object),
                _ => None,
            },
            site: e.site,
        })
        .collect()
}
