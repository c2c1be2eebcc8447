//! RaceFuzzer (Koushik Sen, *Race Directed Random Testing of Concurrent Programs*, PLDI 2008),
//! the race-directed active random testing that seed 003 (AssetFuzzer) compares against as a
//! baseline (spec `racefuzzer`).
//!
//! Phase 1, prediction: the first `profile` executions are random walks whose traces the hybrid
//! race predictor (`analysis::predict::race_prediction`) analyses. A potential race is a pair of
//! statements of different threads that accessed one `cell::Var` or atomic, at least one
//! writing, with no common lock and not ordered by spawn, join or notification.
//!
//! Phase 2, active random testing: every potential race `(s1, s2)` gets up to `tries` directed
//! executions (fewer if one fails). Each is a random walk, except that a thread about to
//! execute `s1` or `s2` is postponed (not scheduled) while the others run, until another
//! thread is about to execute the other statement of the pair on the same object, with at
//! least one of the two writing. Then the race is real: both threads are about to access the
//! object, so they are released and run one right after the other, in an order chosen at
//! random, and the walk goes on (still directing, as a statement in a loop may race again) so
//! that the consequence of either order (a panic, a failed assertion, a deadlock) is caught.
//! If every enabled thread is postponed (the other statement is out of reach for now, perhaps
//! behind a lock a postponed thread holds), or the only others are about to yield, a random
//! postponed thread is released. A thread about to yield is taken to be spinning until
//! another thread does something, as PCT's yield rule takes it; so, as for PCT, a busy-wait
//! must yield (`thread::yield_now`, `hint::spin_loop`), or postponing the thread it waits for
//! starves it into the step bound. This is Algorithm 1 of the paper, except that when the
//! arriving thread is to go first, the paper leaves the postponed threads it races with
//! postponed, whereas here they run right after it, so the two accesses are always adjacent;
//! when several postponed threads race with the arriving one, all of them run back to back
//! with it, the arriving one first or last.
//!
//! A failure of a directed execution is reported as usual, with its interleaving and replay
//! token. The runtime's own detector already fails any execution in which a data race on a
//! `cell::Var` happened unordered by happens-before (lock edges included), unless races only
//! warn (`RaceMode::Warn`). RaceFuzzer adds most where that detector cannot help: races that
//! a lock hid in the executions seen (one thread's unlocked access before its critical
//! section, the other's after its own), and conflicting accesses to atomics, such as a
//! check-then-act, which are not data races in that sense.
//!
//! Guarantee: every race it reports happened. Two threads were both about to access the same
//! object at the same time, one of them writing, so no lock they held excluded the other and
//! neither access was ordered before the other by spawn, join or anything else. Each realised
//! race is reported once, by its pair of statements, as a warning with both sites, the object,
//! the threads and which access writes; predicted races that no directed execution realises
//! are listed separately as potential, not realised. Races between statements that no
//! profiling execution reached are not predicted, so not directed at either.

use std::any::Any;
use std::collections::VecDeque;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, Access, ObjectId, Outcome, PendingOp, Random, Schedule, Site, Strategy, View};
use crate::analysis::predict::object_names::ObjectNames;
use crate::analysis::predict::race_prediction::{predict, PotentialRace, RaceAccess};

/// Directed executions per potential race when the spec does not say.
pub const DEFAULT_TRIES: u64 = 20;

/// Profiling executions when the spec does not say.
pub const DEFAULT_PROFILE: u64 = 1;

/// The RaceFuzzer strategy (spec `racefuzzer`, or `racefuzzer:tries=20,profile=1`).
#[derive(Clone, Debug)]
pub struct RaceFuzzer {
    tries: u64,
    profile: u64,
    /// The potential races of the profiling executions, in the order they were predicted.
    races: Vec<PotentialRace>,
    /// What the directed executions of each potential race found.
    directed: Vec<Directing>,
    /// The potential race being directed.
    current: usize,
    /// What reports call the objects of the profiling executions, for the warnings.
    names: ObjectNames,
}

/// The directed executions of one potential race.
#[derive(Clone, Copy, Debug, Default)]
struct Directing {
    executions: u64,
    /// The first realisation, with the number of the directed execution (from 1) it came in.
    realised: Option<(u64, Realisation)>,
}

/// A realised race: two threads about to access `object`, one of them writing.
#[derive(Clone, Copy, Debug)]
struct Realisation {
    object: ObjectId,
    /// The two accesses, in the order they were run.
    accesses: [RaceAccess; 2],
}

impl RaceFuzzer {
    /// Predicts from one random execution, then gives each potential race up to `tries`
    /// directed executions (at least 1).
    pub fn new(tries: u64) -> RaceFuzzer {
        RaceFuzzer {
            tries: tries.max(1),
            profile: DEFAULT_PROFILE,
            races: Vec::new(),
            directed: Vec::new(),
            current: 0,
            names: ObjectNames::default(),
        }
    }

    /// Predicts from `executions` (at least 1) random executions instead of one: races on
    /// paths that one execution does not take are predicted too.
    pub fn with_profile(mut self, executions: u64) -> RaceFuzzer {
        self.profile = executions.max(1);
        self
    }

    fn profiling(&self, execution: u64) -> bool {
        execution < self.profile
    }
}

impl Strategy for RaceFuzzer {
    fn spec(&self) -> String {
        let mut parameters = Vec::new();
        if self.tries != DEFAULT_TRIES {
            parameters.push(format!("tries={}", self.tries));
        }
        if self.profile != DEFAULT_PROFILE {
            parameters.push(format!("profile={}", self.profile));
        }
        if parameters.is_empty() {
            "racefuzzer".to_string()
        } else {
            format!("racefuzzer:{}", parameters.join(","))
        }
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        if self.profiling(execution) {
            return Random.plan(execution, seed);
        }
        let race = self.races.get(self.current)?;
        Some(Box::new(Directed::new(race.sites(), seed)))
    }

    fn wants_trace(&self, execution: u64) -> bool {
        self.profiling(execution)
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        if self.profiling(execution) {
            if let Some(trace) = outcome.trace {
                self.names.observe(trace);
            }
            for race in outcome.trace.map(predict).unwrap_or_default() {
                if !self.races.iter().any(|r| r.sites() == race.sites()) {
                    self.races.push(race);
                    self.directed.push(Directing::default());
                }
            }
            return;
        }
        let Some(directing) = self.directed.get_mut(self.current) else {
            return;
        };
        directing.executions += 1;
        if directing.realised.is_none() {
            let realisation = outcome
                .feedback
                .and_then(|feedback| feedback.downcast_ref::<Realisation>());
            if let Some(&realisation) = realisation {
                directing.realised = Some((directing.executions, realisation));
            }
        }
        if outcome.failed || directing.executions >= self.tries {
            self.current += 1;
        }
    }

    fn round_size(&self) -> usize {
        1
    }

    fn stats(&self) -> Vec<(String, String)> {
        let until_realised: Vec<String> = self
            .directed
            .iter()
            .map(|d| d.realised.map_or("-".to_string(), |(n, _)| n.to_string()))
            .collect();
        vec![
            ("profiling executions".to_string(), self.profile.to_string()),
            (
                "potential races predicted".to_string(),
                self.races.len().to_string(),
            ),
            (
                "realised by a directed execution".to_string(),
                self.directed
                    .iter()
                    .filter(|d| d.realised.is_some())
                    .count()
                    .to_string(),
            ),
            (
                "directed executions per potential race (at most)".to_string(),
                self.tries.to_string(),
            ),
            (
                "directed executions run per potential race".to_string(),
                self.directed
                    .iter()
                    .map(|d| d.executions.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "directed execution that first realised each race".to_string(),
                until_realised.join(", "),
            ),
        ]
    }

    fn warnings(&self) -> Vec<String> {
        let realised = self.directed.iter().filter_map(|d| d.realised);
        let mut warnings: Vec<String> = realised
            .map(|(execution, realisation)| {
                let [first, second] = realisation.accesses;
                format!(
                    "race realised on {}: {first} and {second} were both about to access it \
                     at the same time (no lock kept them apart); thread {} went first \
                     (directed execution {execution} of this pair)\n  {}",
                    self.names.name(realisation.object),
                    first.thread,
                    self.names.legend(realisation.object)
                )
            })
            .collect();
        warnings.extend(
            self.races
                .iter()
                .zip(&self.directed)
                .filter(|(_, d)| d.realised.is_none())
                .map(|(race, d)| {
                    let tried = match d.executions {
                        0 => "not tried before the exploration ended".to_string(),
                        n => format!("not realised in {n} directed executions"),
                    };
                    format!(
                        "potential race ({tried}) on {}: {} and {}\n  {}",
                        self.names.name(race.object),
                        race.first,
                        race.second,
                        self.names.legend(race.object)
                    )
                }),
        );
        warnings
    }
}

/// One directed execution towards the race between two statements.
struct Directed {
    rng: Pcg64Mcg,
    sites: (Site, Site),
    /// Threads about to execute one of the two statements, in the order they were postponed.
    postponed: Vec<usize>,
    /// Threads to run next, in this order, before any other choice: the rest of a race
    /// being realised.
    queued: VecDeque<usize>,
    /// The first race realised.
    realised: Option<Realisation>,
}

impl Directed {
    fn new(sites: (Site, Site), seed: u64) -> Directed {
        Directed {
            rng: Pcg64Mcg::seed_from_u64(seed),
            sites,
            postponed: Vec::new(),
            queued: VecDeque::new(),
            realised: None,
        }
    }

    /// Thread `t`'s pending operation, if it is a data access at one of the two statements.
    fn racing_statement(&self, view: &View<'_>, t: usize) -> Option<PendingOp> {
        let op = view.pending(t)?;
        let at_statement = op.site == self.sites.0 || op.site == self.sites.1;
        (op.kind.is_data_access() && op.object.is_some() && at_statement).then_some(op)
    }

    /// Whether `a` and `b` are the race: the two statements, the same object, one writing.
    fn race(&self, a: PendingOp, b: PendingOp) -> bool {
        let (s1, s2) = self.sites;
        let statements = (a.site == s1 && b.site == s2) || (a.site == s2 && b.site == s1);
        statements && a.object == b.object && (writes(a) || writes(b))
    }

    /// Releases `arriving` and the postponed `partners` it races with, runs them back to
    /// back (the arriving thread first or last, at random), and returns the first to run.
    fn realise(
        &mut self,
        view: &View<'_>,
        arriving: usize,
        op: PendingOp,
        partners: Vec<usize>,
    ) -> usize {
        self.postponed.retain(|t| !partners.contains(t));
        let arriving_first = self.rng.next_u64() & 1 == 0;
        if self.realised.is_none() {
            let partner = partners[0];
            if let (Some(object), Some(other)) = (op.object, view.pending(partner)) {
                let arriving_access = access(arriving, op);
                let partner_access = access(partner, other);
                self.realised = Some(Realisation {
                    object,
                    accesses: if arriving_first {
                        [arriving_access, partner_access]
                    } else {
                        [partner_access, arriving_access]
                    },
                });
            }
        }
        let mut order: VecDeque<usize> = partners.into();
        if arriving_first {
            order.push_front(arriving);
        } else {
            order.push_back(arriving);
        }
        let first = order.pop_front().unwrap_or(arriving);
        self.queued = order;
        first
    }
}

fn writes(op: PendingOp) -> bool {
    matches!(op.access(), Access::Write | Access::ReadWrite)
}

fn access(thread: usize, op: PendingOp) -> RaceAccess {
    RaceAccess {
        thread,
        site: op.site,
        write: writes(op),
    }
}

impl Schedule for Directed {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        while let Some(t) = self.queued.pop_front() {
            // A data access never blocks, so a queued thread is still enabled; the check only
            // keeps a broken assumption from choosing a thread that cannot run.
            if view.enabled().contains(&t) {
                return t;
            }
        }
        let mut candidates: Vec<usize> = view
            .enabled()
            .iter()
            .copied()
            .filter(|t| !self.postponed.contains(t))
            .collect();
        // A thread about to yield is spinning, waiting for another thread; if only spinning
        // threads are left to run, a postponed thread is what they wait for.
        let spinning = |&t: &usize| view.pending_yields(t);
        loop {
            let thrashing = !self.postponed.is_empty() && candidates.iter().all(spinning);
            if thrashing {
                break;
            }
            let t = candidates.remove(below(self.rng.next_u64(), candidates.len()));
            let Some(op) = self.racing_statement(view, t) else {
                return t;
            };
            let partners: Vec<usize> = self
                .postponed
                .iter()
                .copied()
                .filter(|&u| view.pending(u).is_some_and(|other| self.race(op, other)))
                .collect();
            if partners.is_empty() {
                self.postponed.push(t);
            } else {
                return self.realise(view, t, op, partners);
            }
        }
        // Every enabled thread is postponed or spinning: the other statement cannot be
        // reached without a postponed thread. Release one at random. (Postponed threads wait
        // at a data access, which never blocks, so they are enabled.)
        let stuck: Vec<usize> = self
            .postponed
            .iter()
            .copied()
            .filter(|t| view.enabled().contains(t))
            .collect();
        let pool = if stuck.is_empty() {
            view.enabled()
        } else {
            &stuck
        };
        let released = pool[below(self.rng.next_u64(), pool.len())];
        self.postponed.retain(|&t| t != released);
        released
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        self.realised
            .take()
            .map(|r| Box::new(r) as Box<dyn Any + Send>)
    }
}
