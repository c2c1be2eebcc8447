//! DeadlockFuzzer (Joshi, Park, Sen, Naik, PLDI 2009), the directed confirmation of predicted
//! deadlocks that seed 001's issue pairs with RPro (spec `deadlock-fuzzer`).
//!
//! The first execution is a random one whose trace the lock-order predictor
//! (`detect::lock_order`) analyses. Then every predicted cycle gets up to `tries` directed
//! executions: whenever a thread is about to make one of the cycle's acquisitions (a lock of the
//! same class, at the same site, while holding locks of the classes the cycle says), it is
//! paused there until every other acquisition of the cycle has a paused thread too. If the
//! paused threads then really form a cycle (each wants a lock another paused thread holds), all
//! are let go and each blocks on the lock the next one holds; otherwise those whose lock is free
//! are let go to try again later. If every runnable thread is paused while part of the cycle is
//! still unmatched (thrashing: the missing thread waits for a paused one), the thread paused
//! longest is released. A released thread is not paused again before its next step. Other
//! choices are random.
//!
//! Precision: nothing is reported from a prediction alone. A deadlock is reported only when a
//! directed execution really deadlocks (the runtime's own detection, with the usual report and
//! replay token); cycles that no directed execution realises are listed as warnings.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, Outcome, Random, Schedule, Strategy, View};
use crate::analysis::predict::lock_order::{predict, same_class, CycleEdge, PredictedCycle};
use crate::strategy::{ObjectId, OpKind};

/// Directed executions per predicted cycle when the spec does not say.
pub const DEFAULT_TRIES: u64 = 20;

/// The DeadlockFuzzer strategy (spec `deadlock-fuzzer`, or `deadlock-fuzzer:tries=20`).
#[derive(Clone, Debug)]
pub struct DeadlockFuzzer {
    tries: u64,
    cycles: Vec<PredictedCycle>,
    confirmed: Vec<bool>,
    /// The cycle being directed, and how many executions it has had.
    current: usize,
    tried: u64,
    profiled: bool,
}

impl DeadlockFuzzer {
    /// Predicts from one random execution, then gives each predicted cycle up to `tries`
    /// directed executions (at least 1).
    pub fn new(tries: u64) -> DeadlockFuzzer {
        DeadlockFuzzer {
            tries: tries.max(1),
            cycles: Vec::new(),
            confirmed: Vec::new(),
            current: 0,
            tried: 0,
            profiled: false,
        }
    }
}

impl Strategy for DeadlockFuzzer {
    fn spec(&self) -> String {
        if self.tries == DEFAULT_TRIES {
            "deadlock-fuzzer".to_string()
        } else {
            format!("deadlock-fuzzer:tries={}", self.tries)
        }
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        if !self.profiled {
            return Random.plan(execution, seed);
        }
        let cycle = self.cycles.get(self.current)?;
        Some(Box::new(Directed::new(cycle.edges.clone(), seed)))
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        !self.profiled
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        if !self.profiled {
            self.profiled = true;
            self.cycles = outcome.trace.map(predict).unwrap_or_default();
            self.confirmed = vec![false; self.cycles.len()];
            return;
        }
        if self.current >= self.cycles.len() {
            return;
        }
        self.tried += 1;
        if outcome.failed {
            self.confirmed[self.current] = true;
        }
        if outcome.failed || self.tried >= self.tries {
            self.current += 1;
            self.tried = 0;
        }
    }

    fn round_size(&self) -> usize {
        1
    }

    fn stats(&self) -> Vec<(String, String)> {
        vec![
            (
                "predicted lock-order cycles".to_string(),
                self.cycles.len().to_string(),
            ),
            (
                "confirmed by a directed execution".to_string(),
                self.confirmed.iter().filter(|&&c| c).count().to_string(),
            ),
            (
                "directed executions per cycle (at most)".to_string(),
                self.tries.to_string(),
            ),
        ]
    }

    fn warnings(&self) -> Vec<String> {
        self.cycles
            .iter()
            .zip(&self.confirmed)
            .filter(|(_, &confirmed)| !confirmed)
            .map(|(cycle, _)| {
                format!(
                    "{cycle} not realised in {} directed executions (unconfirmed)",
                    self.tries
                )
            })
            .collect()
    }
}

/// One directed execution towards a cycle.
struct Directed {
    rng: Pcg64Mcg,
    edges: Vec<CycleEdge>,
    /// Locks each thread holds, kept from the steps this schedule chose.
    held: Vec<Vec<ObjectId>>,
    /// `(thread, edge, wanted lock)` of each paused thread, in the order they were paused.
    paused: Vec<(usize, usize, ObjectId)>,
    /// Threads released without being part of a realised cycle, not to be paused again before
    /// their next step.
    spared: Vec<usize>,
    /// Every edge had a paused thread and all were let go.
    released: bool,
    /// The step chosen last: its thread, kind and object.
    last: Option<(usize, OpKind, Option<ObjectId>)>,
}

impl Directed {
    fn new(edges: Vec<CycleEdge>, seed: u64) -> Directed {
        Directed {
            rng: Pcg64Mcg::seed_from_u64(seed),
            edges,
            held: Vec::new(),
            paused: Vec::new(),
            spared: Vec::new(),
            released: false,
            last: None,
        }
    }

    /// Applies the effect of the step chosen last on the held locks.
    fn account_last_step(&mut self) {
        let Some((thread, kind, object)) = self.last.take() else {
            return;
        };
        self.spared.retain(|&t| t != thread);
        let Some(object) = object else {
            return;
        };
        if self.held.len() <= thread {
            self.held.resize(thread + 1, Vec::new());
        }
        match kind {
            OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock => self.held[thread].push(object),
            OpKind::Unlock | OpKind::RwUnlock => {
                if let Some(i) = self.held[thread].iter().rposition(|&h| h == object) {
                    self.held[thread].remove(i);
                }
            }
            _ => {}
        }
    }

    fn held(&self, t: usize) -> &[ObjectId] {
        self.held.get(t).map_or(&[][..], Vec::as_slice)
    }

    /// The unmatched edge thread `t`'s pending step realises, with the lock it wants, if any.
    fn matching_edge(&self, view: &View<'_>, t: usize) -> Option<(usize, ObjectId)> {
        let op = view.pending(t)?;
        if !matches!(op.kind, OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock) {
            return None;
        }
        let wanted = op.object?;
        let held = self.held(t);
        let edge = (0..self.edges.len()).find(|&e| {
            let edge = &self.edges[e];
            !self.paused.iter().any(|&(_, pe, _)| pe == e)
                && same_class(wanted, edge.wants)
                && op.site == edge.site
                && edge
                    .holds
                    .iter()
                    .all(|(lock, _)| held.iter().any(|&h| same_class(h, *lock)))
        })?;
        Some((edge, wanted))
    }

    /// Whether paused thread `i` wants a lock that another paused thread holds.
    fn blocked_by_paused(&self, i: usize) -> bool {
        let (thread, _, wanted) = self.paused[i];
        self.paused
            .iter()
            .any(|&(other, _, _)| other != thread && self.held(other).contains(&wanted))
    }
}

impl Schedule for Directed {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.account_last_step();
        if !self.released {
            for &t in view.enabled() {
                if self.spared.contains(&t) || self.paused.iter().any(|&(p, _, _)| p == t) {
                    continue;
                }
                if let Some((edge, wanted)) = self.matching_edge(view, t) {
                    self.paused.push((t, edge, wanted));
                }
            }
            if self.paused.len() == self.edges.len() {
                let free: Vec<usize> = (0..self.paused.len())
                    .filter(|&i| !self.blocked_by_paused(i))
                    .collect();
                if free.is_empty() {
                    // The paused threads wait for each other: let them all go into the cycle.
                    self.released = true;
                    self.paused.clear();
                } else {
                    // Same classes, other locks: those whose lock is free go on and may come
                    // back with the right one.
                    for &i in free.iter().rev() {
                        let (thread, _, _) = self.paused.remove(i);
                        self.spared.push(thread);
                    }
                }
            }
        }
        let candidates: Vec<usize> = view
            .enabled()
            .iter()
            .copied()
            .filter(|t| !self.paused.iter().any(|&(p, _, _)| p == *t))
            .collect();
        let chosen = if candidates.is_empty() {
            // Thrashing: everyone runnable is paused, the rest of the cycle is not reachable
            // without one of them. Release the runnable thread paused longest.
            let position = self
                .paused
                .iter()
                .position(|&(p, _, _)| view.enabled().contains(&p))
                .expect("every enabled thread is paused");
            let (thread, _, _) = self.paused.remove(position);
            self.spared.push(thread);
            thread
        } else {
            candidates[below(self.rng.next_u64(), candidates.len())]
        };
        self.last = view.pending(chosen).map(|op| (chosen, op.kind, op.object));
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }
}
