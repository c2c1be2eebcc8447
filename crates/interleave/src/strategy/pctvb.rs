//! PCTVB, PCT with variable bounding (Bindal, Bansal, Lal: *Variable and Thread Bounding for
//! Systematic Testing of Multithreaded Programs*, seed 000, section 3; spec `pctvb:d=3,v=1`).
//!
//! Most bugs involve few variables. PCTVB picks `v` variables per execution and draws PCT's
//! `d - 1` change points only among the accesses of those variables: the set
//! `S = {(q, j) : q chosen, 1 <= j <= k_q}` of size `Σ k_q`, where `k_q` bounds the accesses of
//! `q` in one execution. Everything else is PCT (same priorities, same schedule).
//!
//! Variables are the runtime's tracked objects (atomics, `Var`s and cells, locks, condition
//! variables, channels), identified across executions by creation site and instance number,
//! the instance number playing the part of seed 000's loop-iteration number. The first
//! `profile` executions (random walks) estimate each `k_q` as the most accesses seen in one of
//! them, and find the *known-shared* variables, accessed by two or more threads. Variables are
//! drawn uniformly among the known-shared ones, and only when there are fewer than `v` of those
//! among all.
//!
//! Guarantee (Theorem 3.1): a bug of depth `d` that needs preemptions only at accesses of the
//! variables `q_1 .. q_v` is found with probability at least `1 / (n · (Σ k_q)^(d-1))` in an
//! execution that chose those variables, which happens with probability `1 / C(Q, v)` among
//! `Q` candidates; the report states both for the estimates.

use std::collections::BTreeMap;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::priority::{
    draw_distinct, object_event, ChangePriorities, Counting, PrioritySchedule, DEFAULT_YIELD_LIMIT,
};
use super::{below, ObjectId, Outcome, Random, Schedule, Site, Strategy, TraceEvent};

/// Profiling executions when the spec does not say.
pub const DEFAULT_PROFILE: u64 = 8;

/// What profiling learned about one variable.
#[derive(Clone, Debug, Default)]
struct VariableProfile {
    /// The most accesses in one profiling execution.
    max_accesses: u64,
    /// Threads seen accessing it, as a bit set (threads beyond 63 share the last bit).
    threads: u64,
}

impl VariableProfile {
    /// Known-shared: used by two or more threads.
    fn shared(&self) -> bool {
        self.threads.count_ones() >= 2
    }
}

/// What executions show about each variable (each tracked object, by creation site and
/// instance, which also orders them): its access bound `k_q` and whether it is known-shared.
/// PCTVB and `icb` profile variables alike.
#[derive(Clone, Debug, Default)]
pub(super) struct VariableProfiles {
    by_variable: BTreeMap<(Site, u32), (ObjectId, VariableProfile)>,
}

impl VariableProfiles {
    /// Learns from one execution's trace.
    pub(super) fn observe(&mut self, trace: &[TraceEvent]) {
        let mut counts: BTreeMap<(Site, u32), u64> = BTreeMap::new();
        for event in trace {
            let Some(id) = event.object else { continue };
            let key = (id.site, id.instance);
            *counts.entry(key).or_default() += 1;
            let (_, profile) = self
                .by_variable
                .entry(key)
                .or_insert_with(|| (id, VariableProfile::default()));
            profile.threads |= 1 << event.thread.min(63);
        }
        for (key, count) in counts {
            let (_, profile) = self.by_variable.get_mut(&key).expect("inserted above");
            profile.max_accesses = profile.max_accesses.max(count);
        }
    }

    /// Whether `variable` has been seen used by two or more threads.
    pub(super) fn is_shared(&self, variable: ObjectId) -> bool {
        self.by_variable
            .get(&(variable.site, variable.instance))
            .is_some_and(|(_, p)| p.shared())
    }

    /// Every variable seen, with its `k_q` (at least 1) and whether it is known-shared.
    fn iter(&self) -> impl Iterator<Item = (ObjectId, u64, bool)> + Clone + '_ {
        self.by_variable
            .values()
            .map(|(id, p)| (*id, p.max_accesses.max(1), p.shared()))
    }

    /// "seen (known-shared)" counts for a report.
    pub(super) fn summary(&self) -> String {
        let shared = self.iter().filter(|v| v.2).count();
        format!("{} ({shared})", self.by_variable.len())
    }
}

/// The PCTVB strategy (spec `pctvb:d=3,v=1`).
#[derive(Clone, Debug)]
pub struct PctVb {
    depth: usize,
    variables: usize,
    profile: u64,
    yield_limit: u32,
    profiles: VariableProfiles,
    profiled: u64,
    max_threads: usize,
}

impl PctVb {
    /// PCTVB for bugs of depth `depth` (at least 1) on `variables` variables (at least 1),
    /// after `DEFAULT_PROFILE` (8) profiling executions.
    pub fn new(depth: usize, variables: usize) -> PctVb {
        PctVb {
            depth: depth.max(1),
            variables: variables.max(1),
            profile: DEFAULT_PROFILE,
            yield_limit: DEFAULT_YIELD_LIMIT,
            profiles: VariableProfiles::default(),
            profiled: 0,
            max_threads: 0,
        }
    }

    /// Runs `executions` (at least 1) profiling executions first.
    pub fn with_profile(mut self, executions: u64) -> PctVb {
        self.profile = executions.max(1);
        self
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> PctVb {
        self.yield_limit = yields.max(1);
        self
    }

    /// The variables PCTVB draws from, with their `k_q`: the known-shared ones if there are at
    /// least `v` of them, otherwise every variable seen.
    fn candidates(&self) -> Vec<(ObjectId, u64)> {
        let all = self.profiles.iter();
        let shared: Vec<(ObjectId, u64)> = all
            .clone()
            .filter(|v| v.2)
            .map(|(id, k, _)| (id, k))
            .collect();
        if shared.len() >= self.variables {
            shared
        } else {
            all.map(|(id, k, _)| (id, k)).collect()
        }
    }

    /// The variables and change points of the execution seeded `seed`.
    fn choose(&self, rng: &mut Pcg64Mcg) -> (Vec<ObjectId>, Vec<u64>) {
        let mut candidates = self.candidates();
        let mut chosen = Vec::new();
        while chosen.len() < self.variables && !candidates.is_empty() {
            chosen.push(candidates.swap_remove(below(rng.next_u64(), candidates.len())));
        }
        let total: u64 = chosen.iter().map(|(_, k)| k).sum();
        let mut flat = Vec::new();
        if total > 0 {
            draw_distinct(rng, &mut flat, self.depth - 1, 1, total);
        }
        // Point p of 1..=Σk is access j of variable r, counting the variables in order.
        let points = flat
            .into_iter()
            .map(|mut p| {
                let mut r = 0;
                while p > chosen[r].1 {
                    p -= chosen[r].1;
                    r += 1;
                }
                object_event(r, p)
            })
            .collect();
        (chosen.into_iter().map(|(id, _)| id).collect(), points)
    }

    /// `C(q, v)`.
    fn choose_count(q: usize, v: usize) -> f64 {
        (0..v.min(q))
            .map(|i| (q - i) as f64 / (i + 1) as f64)
            .product()
    }
}

impl Strategy for PctVb {
    fn spec(&self) -> String {
        let mut spec = format!("pctvb:d={},v={}", self.depth, self.variables);
        if self.profile != DEFAULT_PROFILE {
            spec.push_str(&format!(",profile={}", self.profile));
        }
        if self.yield_limit != DEFAULT_YIELD_LIMIT {
            spec.push_str(&format!(",yields={}", self.yield_limit));
        }
        spec
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        if self.profiled < self.profile {
            return Random.plan(execution, seed);
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let (variables, points) = self.choose(&mut rng);
        Some(Box::new(PrioritySchedule::new(
            rng,
            points,
            ChangePriorities::Ordinal,
            self.yield_limit,
            Counting::PerObject(variables),
        )))
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        self.profiled < self.profile
    }

    fn round_size(&self) -> usize {
        // Profiling must finish before the first PCTVB execution is planned.
        if self.profiled < self.profile {
            1
        } else {
            64
        }
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.max_threads = self.max_threads.max(outcome.threads);
        let Some(trace) = outcome.trace else { return };
        self.profiled += 1;
        self.profiles.observe(trace);
    }

    fn stats(&self) -> Vec<(String, String)> {
        let candidates = self.candidates();
        let mut ks: Vec<u64> = candidates.iter().map(|(_, k)| *k).collect();
        ks.sort_unstable_by(|a, b| b.cmp(a));
        let worst_sum: u64 = ks.iter().take(self.variables).sum::<u64>().max(1);
        let n = self.max_threads.max(1) as f64;
        let per_set = 1.0 / (n * (worst_sum as f64).powi(self.depth as i32 - 1));
        let sets = Self::choose_count(candidates.len(), self.variables).max(1.0);
        vec![
            ("depth d".to_string(), self.depth.to_string()),
            ("variables v".to_string(), self.variables.to_string()),
            (
                "variables seen (known-shared)".to_string(),
                self.profiles.summary(),
            ),
            ("candidates Q".to_string(), candidates.len().to_string()),
            (
                "threads n (max observed)".to_string(),
                self.max_threads.to_string(),
            ),
            (
                "Theorem 3.1 per chosen set, worst set: 1/(n*(sum k_q)^(d-1))".to_string(),
                format!("{per_set:.3e} (sum k_q = {worst_sum})"),
            ),
            (
                "with the set drawn: times 1/C(Q,v)".to_string(),
                format!("{:.3e}", per_set / sets),
            ),
        ]
    }
}
