//! RFF, reads-from guided greybox fuzzing (Wolff, Shi, Duck, Mathur, Roychoudhury, *Greybox
//! Fuzzing for Concurrency Testing*, ASPLOS 2024; spec `rff`).
//!
//! Two schedules in which every read sees the same write behave alike, so RFF takes the
//! reads-from relation as its coverage: an execution's feedback is the set of pairs (write site,
//! read site) it produced, where a read of an object reads from the last write of that object
//! before it (the initial value when there is none; a site is the source location of the
//! access). Synchronisation operations count as both a read and a write of their object, so the
//! order in which threads take a lock, use a channel or a condition variable is covered too
//! (the lock acquisition "reads from" the release before it). Under the weak memory model
//! (`crate::memory`) a load may read an older store than the last one; the feedback then names
//! the last store, an approximation.
//!
//! The fuzzer keeps a corpus of *abstract schedules*, sets of constraints "the read at `r` of
//! object `o` reads from the write at `w`" and their negations, each of which produced a pair
//! no earlier execution had. Each execution takes a corpus entry (the power schedule favours the
//! entries picked least often, weight `2^(8 - min(picks, 8))`), applies one of the paper's
//! mutations (insert a fresh constraint, swap one for a fresh one, delete one, negate one),
//! fresh constraints pairing a read and a write of one object seen in earlier executions, and
//! runs the result. A new pair adds the mutated abstract schedule to the corpus. An empty corpus
//! gives the empty abstract schedule, which mutations grow.
//!
//! Scheduling follows the paper's greedy rule: each step, every constraint votes to boost or to
//! delay the threads whose pending operation it concerns, given the object's last write so far
//! (a positive constraint boosts its write until that write is the last one, then boosts its
//! read and delays other writes of the object, and delays its read while the last write is
//! another; a negative one delays its read while its write is the last one and boosts the other
//! writes that would overwrite it). The threads with the most votes are the candidates, and POS
//! (`pos.rs`, Yuan, Yang, Gu, CAV 2018) chooses among them, which also makes every choice the
//! constraints leave open, so a constraint-free step is a POS step with its priorities and
//! yield rule.
//!
//! Determinism: the corpus, the coverage and the pool of reads and writes change only when an
//! execution is observed, and rounds are at most [`ROUND`] executions, planned from what the
//! earlier rounds showed, in index order, so the schedules do not depend on the number of
//! workers.
//!
//! Guarantee: none in probability; greybox fuzzing is a heuristic search. Every schedule POS
//! can produce stays possible: deletions can empty an abstract schedule, and constraints only
//! narrow the choice at a step when the threads they concern can run.

use std::collections::HashMap;

use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;
use rustc_hash::{FxHashMap, FxHashSet};

use super::pos::PosSchedule;
use super::{below, Access, ObjectId, Outcome, PendingOp, Schedule, Site, Strategy, View};

/// Executions planned ahead of their observation: the corpus changes at most once per round.
pub const ROUND: usize = 32;

/// The most constraints an abstract schedule holds; an insertion beyond it swaps instead.
const MAX_CONSTRAINTS: usize = 8;

/// Picks after which an entry's power no longer halves.
const POWER_CUTOFF: u64 = 8;

/// A site by its address, for the sets and comparisons of every step: hashing and comparing
/// a `Location` by value goes through its file name. A call site's `Location` is one static,
/// so the address names the site (were the compiler to emit one twice, the site would count as
/// two, which only refines the coverage).
fn address(site: Site) -> usize {
    std::ptr::from_ref(site) as usize
}

/// An object by its creation site's address and its instance, as [`address`] for sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ObjectKey {
    site: usize,
    instance: u32,
}

impl ObjectKey {
    fn of(object: &ObjectId) -> ObjectKey {
        ObjectKey {
            site: address(object.site),
            instance: object.instance,
        }
    }
}

/// One reads-from constraint of an abstract schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Constraint {
    object: ObjectId,
    /// The write's site, `None` for the object's initial value.
    write: Option<Site>,
    read: Site,
    /// Whether the read must read from the write (`false`: must not).
    positive: bool,
}

/// A corpus entry: an abstract schedule that produced a new reads-from pair.
#[derive(Clone, Debug)]
struct Entry {
    constraints: Vec<Constraint>,
    picks: u64,
}

/// The writes and reads seen of one object, in the order first seen.
#[derive(Clone, Debug, Default)]
struct ObjectEvents {
    writes: Vec<Site>,
    reads: Vec<Site>,
}

/// What one execution reports: its reads-from pairs and the reads and writes it performed.
#[derive(Clone, Debug, Default)]
struct Feedback {
    /// (object, write site or the initial value, read site), in the order first produced.
    pairs: Vec<(ObjectId, Option<Site>, Site)>,
    /// (object, site, whether it writes), in the order first performed.
    events: Vec<(ObjectId, Site, bool)>,
}

/// The RFF strategy (spec `rff`).
#[derive(Clone, Debug, Default)]
pub struct Rff {
    corpus: Vec<Entry>,
    /// The reads-from pairs (write site, read site) seen so far.
    coverage: FxHashSet<(Option<Site>, Site)>,
    /// The reads and writes seen, by object, for fresh constraints.
    objects: Vec<(ObjectId, ObjectEvents)>,
    object_index: FxHashMap<ObjectId, usize>,
    known_events: FxHashSet<(ObjectId, Site, bool)>,
    /// The abstract schedule of each planned execution not yet observed.
    planned: HashMap<u64, Vec<Constraint>>,
}

impl Rff {
    /// The strategy, with an empty corpus.
    pub fn new() -> Rff {
        Rff::default()
    }

    /// A fresh constraint on a read and a write (or the initial value) of one object seen
    /// before, positive or negative with equal probability.
    fn fresh(&self, rng: &mut Pcg64Mcg) -> Option<Constraint> {
        let readable: Vec<&(ObjectId, ObjectEvents)> = self
            .objects
            .iter()
            .filter(|(_, events)| !events.reads.is_empty())
            .collect();
        if readable.is_empty() {
            return None;
        }
        let (object, events) = readable[below(rng.next_u64(), readable.len())];
        let read = events.reads[below(rng.next_u64(), events.reads.len())];
        // Index `writes.len()` stands for the initial value.
        let write = below(rng.next_u64(), events.writes.len() + 1);
        Some(Constraint {
            object: *object,
            write: events.writes.get(write).copied(),
            read,
            positive: rng.next_u64() & 1 == 0,
        })
    }

    /// The corpus entry to mutate, by the power schedule.
    fn pick_entry(&mut self, rng: &mut Pcg64Mcg) -> Option<usize> {
        let power = |entry: &Entry| 1u64 << (POWER_CUTOFF - entry.picks.min(POWER_CUTOFF));
        let total: u64 = self.corpus.iter().map(power).sum();
        if total == 0 {
            return None;
        }
        let mut point = below(rng.next_u64(), total as usize) as u64;
        for (index, entry) in self.corpus.iter().enumerate() {
            if point < power(entry) {
                return Some(index);
            }
            point -= power(entry);
        }
        None
    }

    /// One of the paper's mutations of `constraints`.
    fn mutate(&self, rng: &mut Pcg64Mcg, constraints: &mut Vec<Constraint>) {
        let fresh = self.fresh(rng);
        let operator = below(rng.next_u64(), 4);
        if constraints.is_empty() || (operator == 0 && constraints.len() < MAX_CONSTRAINTS) {
            constraints.extend(fresh);
            return;
        }
        let victim = below(rng.next_u64(), constraints.len());
        match (operator, fresh) {
            (0 | 1, Some(fresh)) => constraints[victim] = fresh,
            (2, _) => {
                constraints.swap_remove(victim);
            }
            _ => constraints[victim].positive = !constraints[victim].positive,
        }
    }

    fn learn(&mut self, feedback: &Feedback) -> bool {
        for &(object, site, writes) in &feedback.events {
            if !self.known_events.insert((object, site, writes)) {
                continue;
            }
            let index = *self.object_index.entry(object).or_insert_with(|| {
                self.objects.push((object, ObjectEvents::default()));
                self.objects.len() - 1
            });
            let events = &mut self.objects[index].1;
            if writes {
                events.writes.push(site);
            } else {
                events.reads.push(site);
            }
        }
        let mut new = false;
        for &(_, write, read) in &feedback.pairs {
            new |= self.coverage.insert((write, read));
        }
        new
    }
}

impl Strategy for Rff {
    fn spec(&self) -> String {
        "rff".to_string()
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let mut pos = PosSchedule::new(seed);
        let rng = pos.rng();
        let mut constraints = match self.pick_entry(rng) {
            Some(index) => {
                self.corpus[index].picks += 1;
                self.corpus[index].constraints.clone()
            }
            None => Vec::new(),
        };
        self.mutate(rng, &mut constraints);
        self.planned.insert(execution, constraints.clone());
        Some(Box::new(RffSchedule {
            pos,
            constraints: constraints
                .into_iter()
                .map(|constraint| Tracked::new(&constraint))
                .collect(),
            last_write: FxHashMap::default(),
            feedback: Feedback::default(),
            seen_pairs: FxHashSet::default(),
            seen_events: FxHashSet::default(),
            votes: Vec::new(),
        }))
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let constraints = self.planned.remove(&execution).unwrap_or_default();
        let Some(feedback) = outcome.feedback.and_then(|f| f.downcast_ref::<Feedback>()) else {
            return;
        };
        if self.learn(feedback) {
            self.corpus.push(Entry {
                constraints,
                picks: 0,
            });
        }
    }

    fn round_size(&self) -> usize {
        ROUND
    }

    fn stats(&self) -> Vec<(String, String)> {
        vec![
            (
                "corpus (abstract schedules)".to_string(),
                self.corpus.len().to_string(),
            ),
            (
                "reads-from pairs covered".to_string(),
                self.coverage.len().to_string(),
            ),
        ]
    }
}

/// How an operation takes part in the reads-from relation of its object, with its object and
/// site by address ([`address`]): worked out once per operation, not once per constraint.
#[derive(Clone, Copy, Debug)]
struct Touch {
    object: ObjectId,
    key: ObjectKey,
    site: usize,
    reads: bool,
    writes: bool,
}

impl Touch {
    fn of(op: &PendingOp) -> Option<Touch> {
        let object = op.object?;
        let (reads, writes) = match op.access() {
            Access::Read => (true, false),
            Access::Write => (false, true),
            Access::ReadWrite | Access::Sync => (true, true),
            Access::Thread => return None,
        };
        Some(Touch {
            object,
            key: ObjectKey::of(&object),
            site: address(op.site),
            reads,
            writes,
        })
    }
}

/// A constraint and what the execution has done about it so far, its object and sites by
/// address ([`address`]; 0 stands for the initial value).
#[derive(Clone, Copy, Debug)]
struct Tracked {
    positive: bool,
    object: ObjectKey,
    write: usize,
    read: usize,
    /// The address of the last write's site on the constraint's object, 0 before the first.
    last_write: usize,
    /// A positive constraint has been met: its read read from its write.
    satisfied: bool,
}

impl Tracked {
    /// The constraint's vote on running `op` now: +1 to boost it, -1 to delay it.
    fn new(constraint: &Constraint) -> Tracked {
        Tracked {
            positive: constraint.positive,
            object: ObjectKey::of(&constraint.object),
            write: constraint.write.map_or(0, address),
            read: address(constraint.read),
            last_write: 0,
            satisfied: false,
        }
    }

    fn vote(&self, touch: &Touch) -> i32 {
        if touch.key != self.object || (self.positive && self.satisfied) {
            return 0;
        }
        let write_is_last = self.last_write == self.write;
        if touch.reads && touch.site == self.read {
            return match (self.positive, write_is_last) {
                (true, true) => 1,
                (true, false) | (false, true) => -1,
                (false, false) => 0,
            };
        }
        if !touch.writes {
            return 0;
        }
        let is_the_write = touch.site == self.write;
        match (self.positive, write_is_last, is_the_write) {
            // Make the constraint's write the last one, then keep it so until the read.
            (true, false, true) => 1,
            (true, true, false) => -1,
            // Overwrite the forbidden write before the read sees it.
            (false, true, false) => 1,
            _ => 0,
        }
    }

    /// Notes that an operation that touches the relation as `touch` says ran.
    fn ran(&mut self, touch: &Touch) {
        if touch.key != self.object {
            return;
        }
        if touch.reads && touch.site == self.read && self.last_write == self.write {
            self.satisfied = true;
        }
        if touch.writes {
            self.last_write = touch.site;
        }
    }
}

/// One execution of RFF: POS steered by the abstract schedule's constraints.
struct RffSchedule {
    pos: PosSchedule,
    constraints: Vec<Tracked>,
    /// The site of the last write of each object written so far.
    last_write: FxHashMap<ObjectKey, Site>,
    feedback: Feedback,
    /// The pairs and events already in the feedback, by address: (object, write or 0, read)
    /// and (object, site, whether it writes).
    seen_pairs: FxHashSet<(ObjectKey, usize, usize)>,
    seen_events: FxHashSet<(ObjectKey, usize, bool)>,
    /// Scratch buffer: each allowed thread's votes.
    votes: Vec<(usize, i32)>,
}

impl RffSchedule {
    /// Records the reads-from pair and the events of `op`, which runs now.
    fn record(&mut self, op: &PendingOp) {
        let Some(touch) = Touch::of(op) else {
            return;
        };
        let Touch {
            object,
            key,
            site,
            reads,
            writes,
        } = touch;
        if reads {
            let write = self.last_write.get(&key).copied();
            if self
                .seen_pairs
                .insert((key, write.map_or(0, address), site))
            {
                self.feedback.pairs.push((object, write, op.site));
            }
            if self.seen_events.insert((key, site, false)) {
                self.feedback.events.push((object, op.site, false));
            }
        }
        if writes {
            self.last_write.insert(key, op.site);
            if self.seen_events.insert((key, site, true)) {
                self.feedback.events.push((object, op.site, true));
            }
        }
        for tracked in &mut self.constraints {
            tracked.ran(&touch);
        }
    }
}

impl Schedule for RffSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let constraints = &self.constraints;
        let votes = &mut self.votes;
        let chosen = self.pos.next_among(view, |allowed, narrowed| {
            if constraints.is_empty() {
                return;
            }
            votes.clear();
            for &thread in allowed {
                let vote = view
                    .pending(thread)
                    .and_then(|op| Touch::of(&op))
                    .map_or(0, |touch| {
                        constraints.iter().map(|tracked| tracked.vote(&touch)).sum()
                    });
                votes.push((thread, vote));
            }
            let best = votes.iter().map(|&(_, vote)| vote).max().unwrap_or(0);
            narrowed.extend(
                votes
                    .iter()
                    .filter(|&&(_, vote)| vote == best)
                    .map(|&(thread, _)| thread),
            );
        });
        if let Some(op) = view.pending(chosen) {
            self.record(&op);
        }
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.pos.rng().next_u64()
    }

    fn feedback(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(std::mem::take(&mut self.feedback)))
    }
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;
    use crate::strategy::{ObjectKind, OpKind};

    #[track_caller]
    fn site() -> Site {
        Location::caller()
    }

    #[test]
    fn a_positive_constraint_boosts_its_write_then_its_read_and_delays_other_writes() {
        let object = ObjectId {
            kind: ObjectKind::Atomic,
            site: site(),
            instance: 0,
        };
        let (write, other_write, read) = (site(), site(), site());
        let op = |kind, site| {
            Touch::of(&PendingOp {
                kind,
                object: Some(object),
                site,
            })
            .expect("an access of the object")
        };
        let mut tracked = Tracked::new(&Constraint {
            object,
            write: Some(write),
            read,
            positive: true,
        });
        assert_eq!(tracked.vote(&op(OpKind::AtomicStore, write)), 1);
        assert_eq!(tracked.vote(&op(OpKind::AtomicLoad, read)), -1);
        assert_eq!(tracked.vote(&op(OpKind::AtomicStore, other_write)), 0);
        tracked.ran(&op(OpKind::AtomicStore, write));
        assert_eq!(tracked.vote(&op(OpKind::AtomicLoad, read)), 1);
        assert_eq!(tracked.vote(&op(OpKind::AtomicStore, other_write)), -1);
        tracked.ran(&op(OpKind::AtomicLoad, read));
        assert!(tracked.satisfied);
        assert_eq!(tracked.vote(&op(OpKind::AtomicStore, other_write)), 0);

        let mut negated = tracked;
        negated.positive = false;
        negated.satisfied = false;
        assert_eq!(negated.vote(&op(OpKind::AtomicLoad, read)), -1);
        assert_eq!(negated.vote(&op(OpKind::AtomicStore, other_write)), 1);
        negated.ran(&op(OpKind::AtomicStore, other_write));
        assert_eq!(negated.vote(&op(OpKind::AtomicLoad, read)), 0);
    }
}
