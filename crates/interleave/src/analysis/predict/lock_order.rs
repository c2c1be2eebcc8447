//! Deadlock prediction from one execution, in the style of iGoodlock (Joshi, Park, Sen, Naik:
//! *A Randomized Dynamic Program Analysis Technique for Detecting Real Deadlocks*, PLDI 2009),
//! as seed 001's issue asks for it.
//!
//! Every nested acquisition (a thread acquiring lock `l` while holding the locks `L`) becomes a
//! dependency `(thread, L, l, site)`. A potential deadlock is a chain of dependencies of distinct
//! threads in which each thread wants a lock of a class (kind and creation site, as
//! DeadlockFuzzer abstracts locks) that the next one holds, and the last wants one the first
//! holds, such that
//!
//! - the held sets share no lock (no common *guard* lock serialises the chain),
//! - if the cycle only closes over classes (not on the very same locks in this execution), the
//!   wanted locks are of distinct classes: a cycle within one class is the shape of code that
//!   orders the instances of a class, which the class abstraction cannot see,
//! - the wanted locks are distinct, and
//! - no two of the acquisitions are ordered by happens-before, where happens-before has only
//!   program order and the spawn and join edges (lock edges would order every pair of critical
//!   sections on the same lock and hide every cycle).
//!
//! Precision: a prediction is a *potential* deadlock. It can be infeasible (the program's data
//! or a condition variable may rule out the interleaving), which is why predictions are only
//! reported as deadlocks once `DeadlockFuzzer` has realised them. Lock-order deadlocks are the
//! only kind predicted; deadlocks made by waiting for a notification or a message are not.

use std::collections::HashSet;
use std::fmt;

use super::fork_join::ForkJoin;
use super::lockset::HeldLocks;
use crate::runtime::clock::VectorClock;
use crate::runtime::op::ShortSite;
use crate::runtime::op::{ObjectId, OpKind, Site};
use crate::trace::TraceEvent;

/// The longest chain considered (threads in one cycle).
const MAX_CYCLE: usize = 4;

/// One nested acquisition of a predicted cycle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CycleEdge {
    /// The thread, in the analysed execution.
    pub thread: usize,
    /// The lock it wants.
    pub wants: ObjectId,
    /// Where it acquires it.
    pub site: Site,
    /// The locks it holds meanwhile, each with where it acquired it.
    pub holds: Vec<(ObjectId, Site)>,
}

/// A potential deadlock: each edge's thread wants a lock the next edge's thread holds, and the
/// last wants one the first holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredictedCycle {
    /// The nested acquisitions, in cycle order.
    pub edges: Vec<CycleEdge>,
    /// Whether the cycle closed on the very same locks in the analysed execution; otherwise it
    /// closed only on locks of the same class (created at the same site), say a thread that
    /// held socket 1 and one that took socket 0, which another execution may turn into socket 1.
    pub exact: bool,
}

/// Whether `a` and `b` are of one lock class: the same kind created at the same site. Locks
/// created in a loop or by one constructor share a class, and which instance a thread takes can
/// depend on the schedule, so cycles are predicted over classes.
pub fn same_class(a: ObjectId, b: ObjectId) -> bool {
    a.kind == b.kind && a.site == b.site
}

impl PredictedCycle {
    /// The same cycle whatever thread it starts from, whatever threads it ran on, whichever
    /// instances of its lock classes it involved: the classes and sites of each acquisition.
    fn key(&self) -> Vec<(Site, Site, Vec<Site>)> {
        let mut key: Vec<_> = self
            .edges
            .iter()
            .map(|e| {
                let mut held: Vec<Site> = e.holds.iter().map(|h| h.0.site).collect();
                held.sort_unstable();
                (e.wants.site, e.site, held)
            })
            .collect();
        key.sort_unstable();
        key
    }
}

impl fmt::Display for PredictedCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "potential lock-order deadlock between {} threads{}:",
            self.edges.len(),
            if self.exact {
                ""
            } else {
                " (over lock classes)"
            }
        )?;
        for edge in &self.edges {
            let holds: Vec<String> = edge
                .holds
                .iter()
                .map(|(id, site)| format!("{id} (acquired at {})", ShortSite(site)))
                .collect();
            write!(
                f,
                " thread {} holds {} and wants {} at {};",
                edge.thread,
                holds.join(", "),
                edge.wants,
                ShortSite(edge.site)
            )?;
        }
        Ok(())
    }
}

/// A nested acquisition with its happens-before clock.
struct Dependency {
    edge: CycleEdge,
    clock: VectorClock,
}

fn concurrent(a: &Dependency, b: &Dependency) -> bool {
    !a.clock.leq(&b.clock) && !b.clock.leq(&a.clock)
}

/// The nested acquisitions of `trace`, deduplicated, with spawn/join-only clocks.
fn dependencies(trace: &[TraceEvent]) -> Vec<Dependency> {
    let mut order = ForkJoin::default();
    let mut locks = HeldLocks::default();
    let mut seen = HashSet::new();
    let mut dependencies = Vec::new();
    for event in trace {
        let clock = order.step(event);
        if let (OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock, Some(lock)) =
            (event.kind, event.object)
        {
            let held = locks.of(event.thread);
            if !held.is_empty() && !held.iter().any(|h| h.lock == lock) {
                let edge = CycleEdge {
                    thread: event.thread,
                    wants: lock,
                    site: event.site,
                    holds: held.iter().map(|h| (h.lock, h.site)).collect(),
                };
                if seen.insert(edge.clone()) {
                    dependencies.push(Dependency {
                        edge,
                        clock: clock.clone(),
                    });
                }
            }
        }
        locks.step(event);
    }
    dependencies
}

/// Potential lock-order deadlocks of the execution `trace`, one per distinct cycle of lock
/// classes; cycles that closed on the very same locks come first.
pub fn predict(trace: &[TraceEvent]) -> Vec<PredictedCycle> {
    let dependencies = dependencies(trace);
    let mut cycles = Vec::new();
    let mut chain = Vec::new();
    for start in 0..dependencies.len() {
        chain.push(start);
        extend(&dependencies, &mut chain, &mut cycles);
        chain.pop();
    }
    cycles.sort_by_key(|c| !c.exact);
    cycles
}

/// Whether `d` holds a lock of `lock`'s class.
fn holds(d: &Dependency, lock: ObjectId) -> bool {
    d.edge.holds.iter().any(|h| same_class(h.0, lock))
}

fn holds_exactly(d: &Dependency, lock: ObjectId) -> bool {
    d.edge.holds.iter().any(|h| h.0 == lock)
}

/// Depth-first extension of `chain` (indices into `deps`, the first being the smallest, so
/// each cycle is found from one starting point).
fn extend(deps: &[Dependency], chain: &mut Vec<usize>, cycles: &mut Vec<PredictedCycle>) {
    let first = &deps[chain[0]];
    let last = &deps[chain[chain.len() - 1]];
    if chain.len() >= 2 && holds(first, last.edge.wants) {
        let exact = chain
            .iter()
            .zip(chain.iter().cycle().skip(1))
            .all(|(&a, &b)| holds_exactly(&deps[b], deps[a].edge.wants));
        let cycle = PredictedCycle {
            edges: chain.iter().map(|&i| deps[i].edge.clone()).collect(),
            exact,
        };
        // Over classes, a cycle whose threads all want locks of one class is what programs
        // that order the instances of a class (lowest fork first, lowest account id first)
        // look like; only cycles through distinct classes are predicted from classes alone.
        let distinct_classes = cycle.edges.iter().enumerate().all(|(i, a)| {
            cycle.edges[i + 1..]
                .iter()
                .all(|b| !same_class(a.wants, b.wants))
        });
        if !exact && !distinct_classes {
            return extend_further(deps, chain, cycles);
        }
        let key = cycle.key();
        match cycles.iter().position(|c| c.key() == key) {
            // The same classes again, this time on the very same locks: keep this one.
            Some(i) if exact && !cycles[i].exact => cycles[i] = cycle,
            Some(_) => {}
            None => cycles.push(cycle),
        }
    }
    extend_further(deps, chain, cycles);
}

/// Tries every dependency that can follow the last of `chain`.
fn extend_further(deps: &[Dependency], chain: &mut Vec<usize>, cycles: &mut Vec<PredictedCycle>) {
    let last = &deps[chain[chain.len() - 1]];
    if chain.len() == MAX_CYCLE {
        return;
    }
    for next in chain[0] + 1..deps.len() {
        let candidate = &deps[next];
        let compatible = holds(candidate, last.edge.wants)
            && chain.iter().all(|&i| {
                let other = &deps[i];
                other.edge.thread != candidate.edge.thread
                    && other.edge.wants != candidate.edge.wants
                    && !other
                        .edge
                        .holds
                        .iter()
                        .any(|h| holds_exactly(candidate, h.0))
                    && concurrent(other, candidate)
            });
        if compatible {
            chain.push(next);
            extend(deps, chain, cycles);
            chain.pop();
        }
    }
}
