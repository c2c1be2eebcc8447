//! The read-only view a strategy receives at each decision: every thread's state and pending
//! operation. Building it costs nothing: it borrows the runtime's tables.

use super::op::{Access, ObjectId, OpKind, Site, NO_OBJECT};
use super::{ObjectRecord, ThreadSlot};

/// What a thread is doing at a decision point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Its pending operation can take effect now.
    Enabled,
    /// Its pending operation waits for another thread (a lock, a message, a join, ...).
    Blocked,
    /// It has returned.
    Finished,
}

/// The operation a thread will perform when it is next scheduled.
#[derive(Clone, Copy, Debug)]
pub struct PendingOp {
    /// What the operation is.
    pub kind: OpKind,
    /// The object it acts on, if any.
    pub object: Option<ObjectId>,
    /// Where in the source it happens.
    pub site: Site,
}

impl PendingOp {
    /// How the operation touches its object.
    pub fn access(&self) -> Access {
        self.kind.access()
    }
}

/// A read-only view of the execution at a scheduling decision.
pub struct View<'a> {
    pub(super) threads: &'a [ThreadSlot],
    pub(super) objects: &'a [ObjectRecord],
    pub(super) states: &'a [super::object::ObjectEntry],
    pub(super) enabled: &'a [usize],
    pub(super) step: u64,
    pub(super) last: Option<usize>,
    pub(super) units: &'a [super::annotations::UnitInfo],
}

/// The outermost unit of work a thread is in (`crate::atomic_set`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitView {
    /// Its index among the execution's units, in the order they were entered (the index of
    /// `Declarations::units` once the execution is over).
    pub index: usize,
    /// Its name.
    pub name: &'static str,
    /// Where it was entered.
    pub site: Site,
}

impl View<'_> {
    /// The threads that can run now, in increasing index order; never empty at a decision.
    pub fn enabled(&self) -> &[usize] {
        self.enabled
    }

    /// The number of steps executed so far in this execution.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The thread that executed the previous step.
    pub fn last_thread(&self) -> Option<usize> {
        self.last
    }

    /// The number of threads created so far (finished ones included).
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// The state of thread `thread`.
    pub fn state(&self, thread: usize) -> ThreadState {
        if self.threads[thread].finished {
            ThreadState::Finished
        } else if self.enabled.contains(&thread) {
            ThreadState::Enabled
        } else {
            ThreadState::Blocked
        }
    }

    /// The pending operation of thread `thread`, unless it has finished.
    pub fn pending(&self, thread: usize) -> Option<PendingOp> {
        let slot = &self.threads[thread];
        if slot.finished {
            return None;
        }
        let op = slot.pending;
        Some(PendingOp {
            kind: op.kind,
            object: (op.object != NO_OBJECT).then(|| self.objects[op.object as usize].id),
            site: slot.pending_site,
        })
    }

    /// The kind of thread `thread`'s pending operation, unless it has finished: what
    /// [`View::pending`] says without looking up its object and site, for the strategies that
    /// ask at every decision.
    pub(crate) fn pending_kind(&self, thread: usize) -> Option<OpKind> {
        let slot = &self.threads[thread];
        (!slot.finished).then_some(slot.pending.kind)
    }

    /// The argument of the pending operation of thread `thread` (see `Op::arg`).
    pub(crate) fn pending_arg(&self, thread: usize) -> u32 {
        self.threads[thread].pending.arg
    }

    /// The outermost unit of work thread `thread` is in, if any.
    pub fn unit(&self, thread: usize) -> Option<UnitView> {
        let index = self.threads[thread].unit?;
        let unit = &self.units[index];
        Some(UnitView {
            index,
            name: unit.name,
            site: unit.site,
        })
    }

    /// For a thread about to arrive at a barrier: how many arrivals its generation still needs
    /// to fill, its own included (1: it fills it and leads); `None` for other operations and
    /// before the barrier's size is known (its first arrival tells it).
    pub(crate) fn barrier_arrivals_missing(&self, thread: usize) -> Option<usize> {
        let op = self.threads[thread].pending;
        if op.kind != OpKind::BarrierArrive || op.object == NO_OBJECT {
            return None;
        }
        match self.states[op.object as usize].state {
            super::object::ObjState::Barrier {
                parties, arrived, ..
            } if parties > 0 => Some(parties.saturating_sub(arrived)),
            _ => None,
        }
    }

    /// How many times thread `thread` has yielded in this execution (`yield_now`, `sleep`,
    /// `spin_loop`): strategies use it to stop starving the thread a spin loop waits for.
    pub fn yields(&self, thread: usize) -> u32 {
        self.threads[thread].yields
    }

    /// Whether `thread`, if chosen now, ends its wait (a timed wait, a sleep, a parked task's
    /// timer) by its timeout, because nothing else lets it run: a step that counts as a yield.
    pub fn times_out(&self, thread: usize) -> bool {
        let slot = &self.threads[thread];
        slot.pending.blocking() && slot.times_out
    }
}
