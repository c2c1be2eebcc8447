//! The locks each thread holds at each step of a recorded execution, for the analyses that
//! read locksets off a trace (lock-order prediction, value-schedule pruning).
//!
//! Locks are counted from acquisitions (`Mutex::lock`, `RwLock::read` and `write`) and their
//! releases. A condition-variable wait releases its mutex and takes it back before the thread
//! does anything else, so it leaves the thread's own lockset unchanged at every step of its
//! own. A `try_lock` whose result the trace does not show is not counted: the sets are never
//! larger than the truth, which is the safe direction for every analysis here.

use crate::runtime::op::{ObjectId, OpKind, Site};
use crate::trace::TraceEvent;

/// A held lock: the lock, where it was taken, and whether no other thread can hold it at the
/// same time (a mutex or a write lock, not a read lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub lock: ObjectId,
    pub site: Site,
    pub exclusive: bool,
    /// The trace index of the acquisition: two steps that see the same one are inside one
    /// critical section.
    pub acquired: usize,
}

/// Walks a trace step by step, keeping every thread's held locks.
#[derive(Clone, Debug, Default)]
pub struct HeldLocks {
    held: Vec<Vec<Held>>,
    steps: usize,
}

impl HeldLocks {
    /// The locks `thread` holds now, in acquisition order.
    pub fn of(&self, thread: usize) -> &[Held] {
        self.held.get(thread).map_or(&[], Vec::as_slice)
    }

    /// Accounts for `event`, after which its thread holds a lock more or less.
    pub fn step(&mut self, event: &TraceEvent) {
        let index = self.steps;
        self.steps += 1;
        let Some(lock) = event.object else { return };
        let t = event.thread;
        if self.held.len() <= t {
            self.held.resize(t + 1, Vec::new());
        }
        match event.kind {
            OpKind::Lock | OpKind::WriteLock | OpKind::ReadLock => self.held[t].push(Held {
                lock,
                site: event.site,
                exclusive: event.kind != OpKind::ReadLock,
                acquired: index,
            }),
            OpKind::Unlock | OpKind::RwUnlock => {
                if let Some(position) = self.held[t].iter().rposition(|h| h.lock == lock) {
                    self.held[t].remove(position);
                }
            }
            _ => {}
        }
    }
}
