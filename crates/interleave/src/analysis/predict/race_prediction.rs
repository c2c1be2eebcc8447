//! Potential races from recorded executions: the hybrid race detection of RaceFuzzer's first
//! phase (Sen, *Race Directed Random Testing of Concurrent Programs*, PLDI 2008).
//!
//! Two data accesses (reads or writes of a `cell::Var` or an atomic) of different threads form
//! a potential race when they touch the same object, at least one writes, the threads hold no
//! common lock at the accesses (lockset; two read locks of one `RwLock` do not exclude each
//! other), and they are not ordered by the relaxed happens-before of program order, spawn,
//! join and notification to wake-up (`fork_join.rs`). Lock release and acquire edges are not
//! counted: two critical sections on one lock can run in either order, so ordering the
//! accesses by the order they happened to take it would hide exactly the races that a missing
//! lock lets through. A race is named by its pair of source sites (statements), as RaceFuzzer's
//! second phase directs executions by statements.
//!
//! Precision: a prediction is only a *potential* race. The hybrid analysis over-approximates
//! (data or control flow may make the two accesses impossible to bring together), so the
//! RaceFuzzer strategy reports a race only once a directed execution has realised it. It is
//! also as complete as the executions it saw: accesses no profiling execution reached are not
//! predicted, and neither are races between instances of an object the profile did not share.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::access_pairs::{access_of, AccessClass};
use super::fork_join::ForkJoin;
use super::lockset::{Held, HeldLocks};
use crate::runtime::clock::VectorClock;
use crate::runtime::op::ShortSite;
use crate::runtime::op::{ObjectId, Site};
use crate::runtime::TraceEvent;

/// One access of a race: its thread, where it is in the source, and whether it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RaceAccess {
    /// The thread (0 is the main thread, spawned threads in spawn order).
    pub thread: usize,
    /// The statement.
    pub site: Site,
    /// Whether it writes (a write or a read-modify-write) rather than only reads.
    pub write: bool,
}

impl fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "thread {} {} at {}",
            self.thread,
            if self.write { "writes" } else { "reads" },
            ShortSite(self.site)
        )
    }
}

/// A pair of statements of different threads that may access one object concurrently, one of
/// them writing, with no common lock, as seen in a profiling execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PotentialRace {
    /// The object both accessed in the profiling execution.
    pub object: ObjectId,
    /// The access that came first in that execution.
    pub first: RaceAccess,
    /// The access that came second.
    pub second: RaceAccess,
}

impl PotentialRace {
    /// The race's statements, smaller first: what identifies it across executions.
    pub fn sites(&self) -> (Site, Site) {
        let (a, b) = (self.first.site, self.second.site);
        if a <= b {
            (a, b)
        } else {
            (b, a)
        }
    }
}

/// The latest step of one access statement of one thread under one lockset: when it is
/// ordered before a later access, so are the statement's earlier steps (program order), so
/// only the latest needs comparing.
struct Latest {
    access: RaceAccess,
    locks: Vec<(ObjectId, bool)>,
    clock: VectorClock,
}

/// Whether two threads holding `a` and `b` exclude each other: a lock both hold, at least one
/// of them exclusively.
fn common_lock(a: &[(ObjectId, bool)], b: &[(ObjectId, bool)]) -> bool {
    a.iter().any(|&(lock, exclusive)| {
        b.iter()
            .any(|&(other, other_exclusive)| lock == other && (exclusive || other_exclusive))
    })
}

fn lockset(held: &[Held]) -> Vec<(ObjectId, bool)> {
    held.iter().map(|h| (h.lock, h.exclusive)).collect()
}

/// The potential races of the execution `trace`, one per pair of statements, in the order
/// they were found.
pub fn predict(trace: &[TraceEvent]) -> Vec<PotentialRace> {
    let mut order = ForkJoin::with_notifications();
    let mut locks = HeldLocks::default();
    let mut latest: HashMap<ObjectId, Vec<Latest>> = HashMap::new();
    let mut seen = HashSet::new();
    let mut races = Vec::new();
    for event in trace {
        let clock = order.step(event);
        let access = access_of(event).and_then(|(access, object)| match access.class {
            AccessClass::Read | AccessClass::Write => Some((
                RaceAccess {
                    thread: access.thread,
                    site: access.site,
                    write: access.class == AccessClass::Write,
                },
                object,
            )),
            _ => None,
        });
        if let Some((access, object)) = access {
            let held = lockset(locks.of(event.thread));
            let earlier = latest.entry(object).or_default();
            for other in earlier.iter() {
                if other.access.thread != access.thread
                    && (other.access.write || access.write)
                    && !other.clock.leq(clock)
                    && !common_lock(&other.locks, &held)
                {
                    let race = PotentialRace {
                        object,
                        first: other.access,
                        second: access,
                    };
                    if seen.insert(race.sites()) {
                        races.push(race);
                    }
                }
            }
            match earlier
                .iter_mut()
                .find(|l| l.access == access && l.locks == held)
            {
                Some(same) => same.clock.clone_from(clock),
                None => earlier.push(Latest {
                    access,
                    locks: held,
                    clock: clock.clone(),
                }),
            }
        }
        locks.step(event);
    }
    races
}
