//! POS, partial-order sampling (Yuan, Yang, Gu, *Partial Order Aware Concurrency Sampling*,
//! CAV 2018; spec `pos`).
//!
//! Every pending operation has a random priority, and the enabled thread whose pending operation
//! has the highest priority runs. When it has run, the thread gets a fresh random priority for
//! its next operation, and so does every other thread whose pending operation races with the
//! one that ran: the same object and not both reads, where every synchronisation operation
//! (lock, unlock, channel, condition variable, barrier, once) counts as a write of its object,
//! and spawning, parking, unparking and sleeping share one pseudo-object (the dependence
//! relation of `hb.rs`, minus the mutex a woken `Condvar` waiter takes back, which a pending
//! operation does not show). Blocked threads' pending operations are compared too: the unlock
//! that lets a blocked `lock` go races with it.
//!
//! Why the reassignment: with priorities fixed per operation (the paper's BasicPOS), an
//! operation that has lost against many others carries a low priority, so the order of two
//! racing operations depends on how many unrelated steps came before them. Redrawing the
//! priorities of the operations that race with the one just run makes each race's outcome a
//! fresh draw, so the probability of a partial order depends on its races and not on the
//! independent steps around them, which is the paper's point against random walk (whose
//! probability of a given order of two racing operations shrinks with every independent step
//! that can be scheduled between them).
//!
//! Spin loops: a yielding thread draws a fresh priority like any other, and the yield rule of
//! the systematic searches (`YieldRule` in `dfs.rs`) holds it back until every other thread that
//! could run when it yielded has taken a step, so a thread that can run is never starved by
//! spinners, whatever the priorities. The priority strategies' rule, a demotion below every
//! other thread, gives no such bound here: the next race a spinner takes part in redraws its
//! priority and undoes the demotion. Without any rule, spinners that outrank the thread they
//! wait for spin until a draw goes its way, a wait of unbounded expectation. Measured on a spin
//! lock (a compare-and-swap loop with `yield_now`, then a counter update) of two threads, with
//! 100,000 executions and a step bound of 10,000: 27 false step-bound reports without a rule (70
//! with three threads, 162 with four), none under the yield rule, which also halves the steps
//! per execution (17 instead of 33 with two threads).
//!
//! `interleave::rand` draws come from the execution's seeded generator, so a seed decides the
//! whole execution, and the schedules do not depend on the number of workers.
//!
//! Guarantee: every schedule the yield rule allows has positive probability in each execution.
//! The constraints a schedule puts on the priority draws are acyclic: the draw that runs at a
//! step outranks only draws that are redrawn at that step or run later. There is no bound on the
//! executions to a bug: the paper's bounds are per partial order and depend on its races, and
//! each execution is an independent sample.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::dfs::YieldGate;
use super::hb::primary_conflict;
use super::priority::{Priorities, DEFAULT_YIELD_LIMIT};
use super::{Access, OpKind, Schedule, Strategy, View, ROUND_WITHOUT_LEARNING};

/// Partial-order sampling (spec `pos`).
#[derive(Clone, Debug, Default)]
pub struct Pos;

impl Pos {
    /// The strategy; it has no parameters.
    pub fn new() -> Pos {
        Pos
    }
}

impl Strategy for Pos {
    fn spec(&self) -> String {
        "pos".to_string()
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(Box::new(PosSchedule::new(seed)))
    }

    fn learns_from(&self, _execution: u64) -> bool {
        // Each execution's priorities come from its own seed only.
        false
    }

    fn round_size(&self) -> usize {
        ROUND_WITHOUT_LEARNING
    }
}

/// One execution of POS; also the sampler that RFF (`rff.rs`) steers, by narrowing the threads
/// it may choose from at a step ([`PosSchedule::next_among`]).
pub(super) struct PosSchedule {
    rng: Pcg64Mcg,
    /// The priority of each thread's pending operation.
    priorities: Priorities,
    gate: YieldGate,
    /// Scratch buffer for the narrowed choice, kept to save an allocation per step.
    narrowed: Vec<usize>,
}

/// A fresh priority: 63 random bits, so two draws tie with negligible probability (a tie goes
/// to the lower-numbered thread).
fn draw(rng: &mut Pcg64Mcg) -> i64 {
    (rng.next_u64() >> 1) as i64
}

/// What a pending operation of kind `kind` on `object` conflicts on: `Some(Some(object))` for
/// its object, `Some(None)` for the thread-management pseudo-object, `None` for nothing, as
/// hb.rs's `primary_conflict` says. `object` may be the object's identity or its index in the
/// execution: an execution gives each object one index and each index one object, so the two
/// conflict alike.
fn conflict_of<O>(kind: OpKind, object: Option<O>) -> Option<Option<O>> {
    match object {
        Some(object) => Some(Some(object)),
        None => primary_conflict(kind, None).map(|_| None),
    }
}

/// What a step conflicts on and whether it only reads it, worked out once per step for the
/// test of its races with every other thread's pending operation ([`Conflict::races`]).
struct Conflict<O> {
    on: Option<O>,
    reads: bool,
}

impl<O: PartialEq> Conflict<O> {
    /// The conflict of an operation of kind `kind` on `object`; `None` when it conflicts on
    /// nothing.
    fn of(kind: OpKind, object: Option<O>) -> Option<Conflict<O>> {
        Some(Conflict {
            on: conflict_of(kind, object)?,
            reads: kind.access() == Access::Read,
        })
    }

    /// Whether another thread's pending operation, of kind `kind` on `object`, races with
    /// this one: they conflict on one object (or on the thread-management pseudo-object) and
    /// are not both reads.
    #[inline]
    fn races(&self, kind: OpKind, object: Option<O>) -> bool {
        conflict_of(kind, object).as_ref() == Some(&self.on)
            && !(self.reads && kind.access() == Access::Read)
    }
}

impl PosSchedule {
    /// The schedule of the execution seeded `seed`.
    pub(super) fn new(seed: u64) -> PosSchedule {
        PosSchedule {
            rng: Pcg64Mcg::seed_from_u64(seed),
            // The yield limit is unused: POS never demotes, the yield rule holds yielders back.
            priorities: Priorities::new(DEFAULT_YIELD_LIMIT),
            gate: YieldGate::default(),
            narrowed: Vec::new(),
        }
    }

    /// The execution's random generator, for the other choices of a schedule built on POS.
    pub(super) fn rng(&mut self) -> &mut Pcg64Mcg {
        &mut self.rng
    }

    /// POS's step, choosing among the threads `narrow` keeps of those the yield rule allows
    /// (all of them when it keeps none): `narrow` gets the allowed threads and fills the buffer.
    pub(super) fn next_among(
        &mut self,
        view: &View<'_>,
        narrow: impl FnOnce(&[usize], &mut Vec<usize>),
    ) -> usize {
        let rng = &mut self.rng;
        self.priorities.admit(view, |_| draw(rng));
        let allowed = self.gate.allowed(view);
        self.narrowed.clear();
        narrow(allowed, &mut self.narrowed);
        let among = if self.narrowed.is_empty() {
            allowed
        } else {
            &self.narrowed
        };
        let chosen = self.priorities.highest_of(among);
        self.gate.ran(view, chosen);
        // The other threads' pending operations stay what they are until this step has run,
        // so the races it will take part in are known now. Objects are compared by their
        // index in the execution, which needs no look-up of their identities, and what the
        // step conflicts on is worked out once, not once per other thread (2 to 3% of an
        // execution of the peers bench's workloads).
        let step = view
            .pending_kind(chosen)
            .and_then(|kind| Conflict::of(kind, view.pending_object_index(chosen)));
        if let Some(step) = step {
            for thread in 0..view.thread_count() {
                let Some(kind) = view.pending_kind(thread) else {
                    continue;
                };
                if thread != chosen && step.races(kind, view.pending_object_index(thread)) {
                    self.priorities.set(thread, draw(&mut self.rng));
                }
            }
        }
        self.priorities.set(chosen, draw(&mut self.rng));
        chosen
    }
}

impl Schedule for PosSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.next_among(view, |_, _| {})
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    fn chooses_enabled(&self) -> bool {
        // The best of the threads the yield rule allows, which are enabled.
        true
    }

    // `tracks` keeps its default (every object): a step may hand the processor to any thread,
    // and every access must redraw the priorities of the accesses it races with.
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;
    use crate::strategy::{ObjectId, ObjectKind};

    fn op(kind: OpKind, object: Option<ObjectId>) -> (OpKind, Option<ObjectId>) {
        (kind, object)
    }

    fn races(a: (OpKind, Option<ObjectId>), b: (OpKind, Option<ObjectId>)) -> bool {
        Conflict::of(a.0, a.1).is_some_and(|conflict| conflict.races(b.0, b.1))
    }

    #[test]
    fn operations_race_on_one_object_unless_both_read() {
        let object = |kind, instance| {
            Some(ObjectId {
                kind,
                site: Location::caller(),
                instance,
            })
        };
        let (x, y) = (object(ObjectKind::Atomic, 0), object(ObjectKind::Atomic, 1));
        let lock = object(ObjectKind::Mutex, 0);
        assert!(!races(op(OpKind::AtomicLoad, x), op(OpKind::AtomicLoad, x)));
        assert!(races(op(OpKind::AtomicLoad, x), op(OpKind::AtomicStore, x)));
        assert!(races(op(OpKind::AtomicRmw, x), op(OpKind::AtomicLoad, x)));
        assert!(!races(
            op(OpKind::AtomicStore, x),
            op(OpKind::AtomicStore, y)
        ));
        assert!(races(op(OpKind::Unlock, lock), op(OpKind::Lock, lock)));
        assert!(races(op(OpKind::Park, None), op(OpKind::Unpark, None)));
        assert!(!races(op(OpKind::Yield, None), op(OpKind::Yield, None)));
    }
}
