//! The read-only view a strategy receives at each decision: every thread's state and pending
//! operation. Building it costs one pointer: it borrows the execution and reads its tables
//! only when the strategy asks.

use super::op::{Access, ObjectId, OpKind, Site, NO_OBJECT};
use super::{Execution, RaceMode, ThreadSlot};

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
///
/// It holds the execution itself rather than its tables: a strategy such as a random walk reads
/// only the enabled threads, and copying every table's address into the view at each decision
/// cost more than the reads (the schedule is taken out of the execution while it decides, so
/// the borrow covers everything else).
pub struct View<'a> {
    pub(super) ex: &'a Execution,
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

impl<'a> View<'a> {
    /// The threads that can run now, in increasing index order; never empty at a decision.
    /// The list lives as long as the execution's borrow, not the view's, so a strategy may
    /// hand it on (the yield gate of the samplers does when no thread waits).
    #[inline]
    pub fn enabled(&self) -> &'a [usize] {
        &self.ex.enabled
    }

    /// The number of steps executed so far in this execution.
    #[inline]
    pub fn step(&self) -> u64 {
        self.ex.recording.events.len() as u64
    }

    /// The thread that executed the previous step.
    #[inline]
    pub fn last_thread(&self) -> Option<usize> {
        self.ex.recording.events.last().map(|e| e.thread as usize)
    }

    /// The number of threads created so far (finished ones included).
    #[inline]
    pub fn thread_count(&self) -> usize {
        self.ex.threads.len()
    }

    /// The slot of thread `thread`.
    #[inline]
    fn slot(&self, thread: usize) -> &ThreadSlot {
        &self.ex.threads[thread]
    }

    /// The state of thread `thread`.
    pub fn state(&self, thread: usize) -> ThreadState {
        if self.slot(thread).finished {
            ThreadState::Finished
        } else if self.enabled().contains(&thread) {
            ThreadState::Enabled
        } else {
            ThreadState::Blocked
        }
    }

    /// The pending operation of thread `thread`, unless it has finished.
    pub fn pending(&self, thread: usize) -> Option<PendingOp> {
        let slot = self.slot(thread);
        if slot.finished {
            return None;
        }
        let op = slot.pending;
        Some(PendingOp {
            kind: op.kind,
            object: (op.object != NO_OBJECT)
                .then(|| self.ex.recording.objects[op.object as usize].id),
            site: slot.pending_site,
        })
    }

    /// Whether thread `thread` is about to read or write a tracked variable (`cell::Var`,
    /// `cell::UnsafeCell`) in an execution that every data race fails (`Limits::races` is
    /// `RaceMode::Fail`, the default): then a switch away from it just before the access
    /// reaches nothing that a switch just after it does not, which the exhaustive searches use
    /// (`strategy/dfs.rs`).
    pub(crate) fn about_to_access_plain_data(&self, thread: usize) -> bool {
        self.ex.recording.limits.races == RaceMode::Fail
            && matches!(
                self.pending_kind(thread),
                Some(OpKind::Read | OpKind::Write | OpKind::Update)
            )
    }

    /// The kind of thread `thread`'s pending operation, unless it has finished: what
    /// [`View::pending`] says without looking up its object and site, for the strategies that
    /// ask at every decision.
    pub(crate) fn pending_kind(&self, thread: usize) -> Option<OpKind> {
        let slot = self.slot(thread);
        (!slot.finished).then_some(slot.pending.kind)
    }

    /// Whether thread `thread`'s pending operation is a yield (`Op::yields`: a `yield_now`, a
    /// sleep, or a task's park after `future::yield_now`), unless it has finished.
    pub(crate) fn pending_yields(&self, thread: usize) -> bool {
        let slot = self.slot(thread);
        !slot.finished && slot.pending.yields
    }

    /// The kind of the operation taken at step `step` (counted from 0, as [`View::step`]
    /// counts), if that step has been taken: the priority strategies' yield rule reads the kind
    /// of the step it chose only when the thread yielded or has not acted yet, instead of
    /// recording the pending kind at every decision.
    pub(crate) fn step_kind(&self, step: u64) -> Option<OpKind> {
        self.ex
            .recording
            .events
            .get(step as usize)
            .map(|event| event.kind)
    }

    /// The index in this execution of the object of thread `thread`'s pending operation,
    /// unless it has finished or the operation has no object: what [`View::pending`] says of
    /// the object without looking up its identity, for strategies that cache per object.
    pub(crate) fn pending_object_index(&self, thread: usize) -> Option<u32> {
        let slot = self.slot(thread);
        (!slot.finished && slot.pending.object != NO_OBJECT).then_some(slot.pending.object)
    }

    /// The argument of the pending operation of thread `thread` (see `Op::arg`).
    pub(crate) fn pending_arg(&self, thread: usize) -> u32 {
        self.slot(thread).pending.arg
    }

    /// The outermost unit of work thread `thread` is in, if any.
    pub fn unit(&self, thread: usize) -> Option<UnitView> {
        let index = self.slot(thread).unit?;
        let unit = &self.ex.recording.annotations.units[index];
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
        let op = self.slot(thread).pending;
        if op.kind != OpKind::BarrierArrive || op.object == NO_OBJECT {
            return None;
        }
        match self.ex.objects[op.object as usize].state {
            super::object::ObjState::Barrier {
                parties, arrived, ..
            } if parties > 0 => Some(parties.saturating_sub(arrived)),
            _ => None,
        }
    }

    /// How many times thread `thread` has yielded in this execution (`yield_now`, `sleep`,
    /// `spin_loop`): strategies use it to stop starving the thread a spin loop waits for.
    pub fn yields(&self, thread: usize) -> u32 {
        self.slot(thread).yields
    }

    /// Whether `thread` can run now only by waking spuriously (`Config::spurious_wakeups`,
    /// `Config::spurious_park_wakeups`): nothing has woken its wait or park.
    pub(crate) fn wakes_only_spuriously(&self, thread: usize) -> bool {
        self.ex.wakes_only_spuriously(thread)
    }

    /// Whether `thread`, if chosen now, ends its wait (a timed wait, a sleep, a parked task's
    /// timer) by its timeout, because nothing else lets it run: a step that counts as a yield.
    pub fn times_out(&self, thread: usize) -> bool {
        let slot = self.slot(thread);
        slot.pending.blocking() && slot.times_out
    }
}
