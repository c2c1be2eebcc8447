//! AssetFuzzer (Lai, Cheung and Chan, ICSE 2010; seed 003; spec `assetfuzzer`): atomic-set
//! serializability violations inferred from passing executions, then forced by an active
//! random scheduler. Also the runtime-monitoring baseline RM (spec `rm`): the same monitor
//! over a plain random walk.
//!
//! Phase I (`analysis::predict::atomic_set_prediction`) runs on the first `profile` executions (random
//! walks): each yields potential violations, the four (or three) accesses that a feasible
//! reordering would arrange into one of the eleven patterns, with each unit's
//! vulnerable-window lockset. Phase II then gives the predictions `tries` executions each,
//! round robin, and goes on round robin while the budget lasts. In each, a random scheduler is
//! steered toward the prediction's order:
//!
//! - a thread about to perform an access of the prediction that is not due yet is postponed;
//! - once a unit has performed its access and the other unit must go next, its thread runs on
//!   until it has released its vulnerable-window locks (so the other unit can take them) and
//!   is then suspended until its next access is due; a unit that has no access left is never
//!   suspended;
//! - if every enabled thread is postponed or suspended (thrashing), one of them is released at
//!   random;
//! - once the last access has happened, the execution runs on randomly to catch the failure
//!   the violation causes.
//!
//! Accesses are matched by source site, read or write, and unit of work (name and entry
//! site), the analogue of the paper's statement label plus calling-context hash.
//!
//! Guarantee: only violations an execution really produced are reported (the monitor checks
//! every execution, `Report::violations`); predictions are listed apart as potential.

use std::collections::HashSet;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, OpKind, Outcome, Random, Schedule, Strategy, View};
use crate::analysis::online::serializability::{Role, PATTERNS};
use crate::analysis::predict::access_pairs::AccessClass;
use crate::analysis::predict::atomic_set_prediction::{predict, AccessKey, Prediction};
use crate::strategy::ObjectId;

/// Random-walk executions phase I analyses, when the spec does not say.
pub const DEFAULT_PROFILE: u64 = 10;
/// Directed executions per prediction in the first round, when the spec does not say.
pub const DEFAULT_TRIES: u64 = 10;

/// The runtime-monitoring baseline (spec `rm`): random walks, each checked against the eleven
/// patterns.
#[derive(Clone, Debug, Default)]
pub struct RuntimeMonitor {
    violating: u64,
    executions: u64,
}

impl Strategy for RuntimeMonitor {
    fn spec(&self) -> String {
        "rm".to_string()
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Random.plan(execution, seed)
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.executions += 1;
        self.violating += u64::from(outcome.violations > 0);
    }

    fn monitors_atomic_sets(&self) -> bool {
        true
    }

    fn stats(&self) -> Vec<(String, String)> {
        vec![(
            "executions with a violation".to_string(),
            format!("{} of {}", self.violating, self.executions),
        )]
    }
}

/// The strategy (spec `assetfuzzer`).
#[derive(Clone, Debug)]
pub struct AssetFuzzer {
    profile: u64,
    tries: u64,
    profiled: u64,
    predictions: Vec<Prediction>,
    seen: HashSet<(usize, Vec<(Role, AccessKey)>)>,
    /// Per prediction: directed executions, and those that produced a violation.
    directed: Vec<(u64, u64)>,
    /// The prediction each planned execution directs, by execution index.
    planned: Vec<(u64, Option<usize>)>,
    thrash_breaks: u64,
}

impl AssetFuzzer {
    /// Phase I over `profile` random executions, then `tries` directed executions per
    /// prediction in the first round.
    pub fn new(profile: u64, tries: u64) -> AssetFuzzer {
        AssetFuzzer {
            profile,
            tries: tries.max(1),
            profiled: 0,
            predictions: Vec::new(),
            seen: HashSet::new(),
            directed: Vec::new(),
            planned: Vec::new(),
            thrash_breaks: 0,
        }
    }

    /// The prediction directed execution `index` (counted after profiling) works on.
    fn target_of(&self, index: u64) -> Option<usize> {
        let count = self.predictions.len() as u64;
        if count == 0 {
            return None;
        }
        // `tries` in a row for each prediction, then round robin.
        let first_round = count * self.tries;
        Some(if index < first_round {
            (index / self.tries) as usize
        } else {
            ((index - first_round) % count) as usize
        })
    }
}

impl Default for AssetFuzzer {
    fn default() -> Self {
        AssetFuzzer::new(DEFAULT_PROFILE, DEFAULT_TRIES)
    }
}

impl Strategy for AssetFuzzer {
    fn spec(&self) -> String {
        if self.profile == DEFAULT_PROFILE && self.tries == DEFAULT_TRIES {
            "assetfuzzer".to_string()
        } else {
            format!("assetfuzzer:profile={},tries={}", self.profile, self.tries)
        }
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let rng = Pcg64Mcg::seed_from_u64(seed);
        let target = if execution < self.profile {
            None
        } else {
            self.target_of(execution - self.profile)
        };
        self.planned.push((execution, target));
        let steer = target.map(|p| Steering::new(&self.predictions[p]));
        Some(Box::new(AssetSchedule {
            rng,
            steer,
            thrash_breaks: 0,
        }))
    }

    fn wants_trace(&self, execution: u64) -> bool {
        execution < self.profile
    }

    fn round_size(&self) -> usize {
        // Phase II needs phase I's predictions before it plans.
        if self.profiled < self.profile {
            1
        } else {
            64
        }
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        if let Some(position) = self.planned.iter().position(|(e, _)| *e == execution) {
            let (_, target) = self.planned.swap_remove(position);
            if let Some(p) = target {
                self.directed[p].0 += 1;
                self.directed[p].1 += u64::from(outcome.violations > 0);
            }
        }
        if let Some(breaks) = outcome.feedback.and_then(|f| f.downcast_ref::<u64>()) {
            self.thrash_breaks += breaks;
        }
        if execution >= self.profile {
            return;
        }
        self.profiled += 1;
        let (Some(trace), Some(declarations)) = (outcome.trace, outcome.declarations) else {
            return;
        };
        for prediction in predict(trace, declarations) {
            if self.seen.insert(prediction.key()) {
                self.predictions.push(prediction);
                self.directed.push((0, 0));
            }
        }
    }

    fn monitors_atomic_sets(&self) -> bool {
        true
    }

    fn warnings(&self) -> Vec<String> {
        self.predictions
            .iter()
            .zip(&self.directed)
            .filter(|(_, (_, realised))| *realised == 0)
            .map(|(prediction, (runs, _))| {
                format!(
                    "potential atomic-set serializability violation (phase I, not produced in \
                     {runs} directed executions): pattern {} `{}` with {}",
                    PATTERNS[prediction.pattern].number,
                    PATTERNS[prediction.pattern].text,
                    describe(prediction)
                )
            })
            .collect()
    }

    fn stats(&self) -> Vec<(String, String)> {
        let realised = self.directed.iter().filter(|(_, v)| *v > 0).count();
        let runs: u64 = self.directed.iter().map(|(r, _)| r).sum();
        let violating: u64 = self.directed.iter().map(|(_, v)| v).sum();
        vec![
            (
                "profiling executions".to_string(),
                self.profiled.to_string(),
            ),
            (
                "potential violations (phase I)".to_string(),
                self.predictions.len().to_string(),
            ),
            (
                "potential violations produced (phase II)".to_string(),
                realised.to_string(),
            ),
            (
                "directed executions with a violation".to_string(),
                format!("{violating} of {runs}"),
            ),
            (
                "thrashing broken".to_string(),
                self.thrash_breaks.to_string(),
            ),
        ]
    }
}

/// The accesses of a prediction, for a warning.
fn describe(prediction: &Prediction) -> String {
    let accesses: Vec<String> = prediction
        .order
        .iter()
        .map(|t| {
            let unit = t
                .key
                .unit
                .map_or("a step outside any unit".to_string(), |(n, _)| {
                    format!("`{n}`")
                });
            let role = match t.role {
                Role::Interrupted => "u",
                Role::Interleaver => "u'",
            };
            format!(
                "{role} = {unit} {} {} at {}",
                if t.key.write { "writes" } else { "reads" },
                t.object,
                crate::runtime::op::ShortSite(t.key.site)
            )
        })
        .collect();
    accesses.join(", then ")
}

/// Phase II's steering of one execution toward a prediction's order.
struct Steering {
    order: Vec<(Role, AccessKey)>,
    windows: [Vec<ObjectId>; 2],
    /// The next access of the order.
    next: usize,
    /// The thread playing each role, once it has performed an access of the order.
    threads: [Option<usize>; 2],
    /// A role's thread runs until it holds none of its window locks, then waits.
    draining: Option<Role>,
    suspended: Option<Role>,
    /// Locks each thread holds, as the schedule saw them taken.
    held: Vec<Vec<ObjectId>>,
}

fn side(role: Role) -> usize {
    match role {
        Role::Interrupted => 0,
        Role::Interleaver => 1,
    }
}

impl Steering {
    fn new(prediction: &Prediction) -> Steering {
        Steering {
            order: prediction.order.iter().map(|t| (t.role, t.key)).collect(),
            windows: prediction.windows.clone(),
            next: 0,
            threads: [None, None],
            draining: None,
            suspended: None,
            held: Vec::new(),
        }
    }

    fn done(&self) -> bool {
        self.next >= self.order.len()
    }

    /// Which access of the order (from the next one on) thread `thread`'s pending operation
    /// is, if any.
    fn matches(&self, view: &View<'_>, thread: usize) -> Option<usize> {
        let op = view.pending(thread)?;
        let write = match AccessClass::of(op.kind)? {
            AccessClass::Read => false,
            AccessClass::Write => true,
            _ => return None,
        };
        let unit = view.unit(thread).map(|u| (u.name, u.site));
        let key = AccessKey {
            site: op.site,
            write,
            unit,
        };
        (self.next..self.order.len()).find(|&i| {
            let (role, wanted) = self.order[i];
            let mine = self.threads[side(role)];
            let theirs = self.threads[1 - side(role)];
            wanted == key && mine.is_none_or(|t| t == thread) && theirs != Some(thread)
        })
    }

    /// Whether thread `thread` may run now.
    fn allows(&self, view: &View<'_>, thread: usize) -> bool {
        if let Some(role) = self.suspended {
            if self.threads[side(role)] == Some(thread) {
                return false;
            }
        }
        // An access of the order that is not due yet waits.
        self.matches(view, thread).is_none_or(|i| i == self.next)
    }

    /// Accounts for thread `thread` performing its pending operation.
    fn performed(&mut self, view: &View<'_>, thread: usize) {
        let due = self.matches(view, thread).filter(|&i| i == self.next);
        if let Some(op) = view.pending(thread) {
            if self.held.len() <= thread {
                self.held.resize(thread + 1, Vec::new());
            }
            match (op.kind, op.object) {
                (OpKind::Lock | OpKind::WriteLock | OpKind::ReadLock, Some(lock)) => {
                    self.held[thread].push(lock);
                }
                (OpKind::Unlock | OpKind::RwUnlock, Some(lock)) => {
                    if let Some(i) = self.held[thread].iter().rposition(|&l| l == lock) {
                        self.held[thread].remove(i);
                    }
                }
                _ => {}
            }
        }
        if let Some(i) = due {
            let role = self.order[i].0;
            self.threads[side(role)] = Some(thread);
            self.next = i + 1;
            if self.suspended.is_some_and(|r| r != role) {
                // The other unit's turn came: it may go on.
                self.suspended = None;
            }
            let again_later = self.order[self.next..].iter().any(|(r, _)| *r == role);
            let other_next = self.order.get(self.next).is_some_and(|(r, _)| *r != role);
            if again_later && other_next {
                self.draining = Some(role);
            }
        }
        if let Some(role) = self.draining {
            if let Some(t) = self.threads[side(role)] {
                let window = &self.windows[side(role)];
                let holds = self
                    .held
                    .get(t)
                    .is_some_and(|h| h.iter().any(|l| window.contains(l)));
                if !holds {
                    self.draining = None;
                    self.suspended = Some(role);
                }
            }
        }
        // A suspended unit whose access is due again resumes.
        if let (Some(role), Some((next_role, _))) = (self.suspended, self.order.get(self.next)) {
            if *next_role == role {
                self.suspended = None;
            }
        }
    }
}

/// One execution of AssetFuzzer: a random walk, steered in phase II.
struct AssetSchedule {
    rng: Pcg64Mcg,
    steer: Option<Steering>,
    thrash_breaks: u64,
}

impl Schedule for AssetSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let enabled = view.enabled();
        let chosen = match self.steer.as_mut() {
            Some(steer) if !steer.done() => {
                let allowed: Vec<usize> = enabled
                    .iter()
                    .copied()
                    .filter(|&t| steer.allows(view, t))
                    .collect();
                let chosen = if allowed.is_empty() {
                    // Thrashing: let one waiting thread go, and stop holding its unit.
                    self.thrash_breaks += 1;
                    let chosen = enabled[below(self.rng.next_u64(), enabled.len())];
                    if steer
                        .suspended
                        .is_some_and(|r| steer.threads[side(r)] == Some(chosen))
                    {
                        steer.suspended = None;
                    }
                    chosen
                } else {
                    allowed[below(self.rng.next_u64(), allowed.len())]
                };
                steer.performed(view, chosen);
                chosen
            }
            _ => enabled[below(self.rng.next_u64(), enabled.len())],
        };
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    fn feedback(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(self.thrash_breaks))
    }
}
