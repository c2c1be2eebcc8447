//! SURW, selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury, *Selectively
//! Uniform Concurrency Testing*, ASPLOS 2025; spec `surw`, `surw:v=1,profile=4`).
//!
//! A random walk that picks the next thread uniformly does not sample interleavings uniformly:
//! a thread with few steps left is as likely to run as one with many, so the interleavings in
//! which the long thread's steps come late are rare. Choosing each thread with probability
//! proportional to the number of events it has left makes every interleaving of the threads'
//! events equally likely (the number of ways to finish from a state is the multinomial of the
//! remaining counts, and the weights are its ratios). SURW applies this only to a selection Γ of
//! *interesting* events, so that the interleavings of the events that matter are uniform
//! however many other steps the threads take.
//!
//! Here Γ is the accesses to `v` shared objects drawn per execution: the paper selects events
//! on shared resources, and most bugs involve few of them (seed 000's observation that PCTVB
//! builds on). Objects are the runtime's tracked objects (atomics, `Var`s and cells, locks,
//! condition variables, channels), identified across executions by creation site and instance.
//! The first `profile` executions are random walks whose traces give, per object and per
//! thread, the most accesses seen in one execution, and which objects are *known-shared*
//! (accessed by two or more threads); objects are drawn among the known-shared ones (all of
//! them when there are at most `v`), or among all those seen when none is shared. A thread's weight is the sum of its counts
//! over the drawn objects plus the weights of the threads it spawns, which it hands over when it
//! spawns each of them (the child then takes the intended place with probability its share of
//! the parent's weight, as the paper prescribes).
//!
//! Each step picks a thread uniformly among the enabled threads that are not held back. A
//! thread whose pending operation is not interesting runs at once, so events outside Γ never
//! wait. For an interesting one, the *intended* thread, drawn with probability proportional to
//! the remaining weights, decides: when the picked thread is the intended one it runs and its
//! weight drops by one, otherwise it is held back until the intended thread has taken its
//! interesting step (or cannot run, which releases every hold and redraws). The interesting
//! events thus come in the order of successive weighted draws, which is the uniform order when
//! the counts are exact, while the other steps interleave freely around them. When every thread
//! that may run is at an interesting event, the picks can only end at the intended thread, so
//! it is drawn and runs without them (each of those threads counting at least 1 in the draw,
//! as it has an interesting event left): the same distribution when the counts are exact, at a
//! quarter less cost per decision. The yield rule of the samplers (`YieldGate` in `dfs.rs`)
//! keeps spinners from starving the threads they wait for.
//!
//! Guarantee (the paper's Theorems 1 and 2): for a program without blocking synchronisation
//! whose threads perform exactly the profiled numbers of accesses to the drawn objects, every
//! interleaving of those accesses has the same probability, `1 / multinomial(k_1 + ... + k_n;
//! k_1, ..., k_n)` for per-thread counts `k_t`, and an execution draws a given set of `v` of `Q`
//! candidate objects with probability `1 / C(Q, v)`. Counts are estimates (the most seen in a
//! profiling execution), so real programs get close to uniform, not exactly. Whatever the
//! estimates, every schedule the yield rule allows keeps a positive probability (Γ-completeness):
//! a held thread is released whenever the intended one cannot run.
//!
//! Determinism: the profile is complete before the first SURW execution is planned (rounds of
//! one execution until then), and each execution draws from its own seed, so the schedules do
//! not depend on the number of workers.

use std::collections::BTreeMap;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::dfs::YieldGate;
use super::{
    below, ObjectId, OpKind, Outcome, PerObject, Random, Schedule, Site, Strategy, TraceEvent,
    TraceTarget, View,
};

/// Profiling executions when the spec does not say.
pub const DEFAULT_PROFILE: u64 = 1;

/// Objects whose accesses are interesting in one execution, when the spec does not say.
pub const DEFAULT_VARIABLES: usize = 2;

/// What profiling learned about one object.
#[derive(Clone, Debug)]
struct ObjectProfile {
    id: ObjectId,
    /// The most accesses each thread made to it in one profiling execution, by thread index.
    accesses: Vec<u64>,
}

impl ObjectProfile {
    /// Known-shared: accessed by two or more threads.
    fn shared(&self) -> bool {
        self.accesses.iter().filter(|&&count| count > 0).count() >= 2
    }
}

/// The per-object, per-thread access counts and the spawn tree seen while profiling.
#[derive(Clone, Debug, Default)]
struct Profile {
    /// Every object seen, by creation site and instance (which also orders them).
    objects: BTreeMap<(Site, u32), ObjectProfile>,
    /// The thread that spawned each thread (the first one seen), by thread index.
    parents: Vec<Option<usize>>,
    executions: u64,
}

impl Profile {
    fn observe(&mut self, trace: &[TraceEvent]) {
        self.executions += 1;
        let mut counts: BTreeMap<(Site, u32), Vec<u64>> = BTreeMap::new();
        for event in trace {
            if let (OpKind::Spawn, Some(TraceTarget::Thread(child))) = (event.kind, event.target) {
                if self.parents.len() <= child {
                    self.parents.resize(child + 1, None);
                }
                self.parents[child].get_or_insert(event.thread);
            }
            let Some(id) = event.object else { continue };
            let per_thread = counts.entry((id.site, id.instance)).or_default();
            if per_thread.len() <= event.thread {
                per_thread.resize(event.thread + 1, 0);
            }
            per_thread[event.thread] += 1;
            self.objects
                .entry((id.site, id.instance))
                .or_insert_with(|| ObjectProfile {
                    id,
                    accesses: Vec::new(),
                });
        }
        for (key, per_thread) in counts {
            let profile = self.objects.get_mut(&key).expect("inserted above");
            if profile.accesses.len() < per_thread.len() {
                profile.accesses.resize(per_thread.len(), 0);
            }
            for (most, count) in profile.accesses.iter_mut().zip(per_thread) {
                *most = (*most).max(count);
            }
        }
    }

    /// The objects SURW draws from: the known-shared ones, or every object seen when none is
    /// shared. An object only one thread accesses orders nothing between threads, so making
    /// its accesses interesting would only dilute the uniformity over the shared ones.
    fn candidates(&self) -> Vec<&ObjectProfile> {
        let shared: Vec<&ObjectProfile> = self.objects.values().filter(|p| p.shared()).collect();
        if shared.is_empty() {
            self.objects.values().collect()
        } else {
            shared
        }
    }

    /// Each thread's weight for the interesting objects `chosen`: its own accesses to them plus
    /// the weights of the threads it spawns.
    fn weights(&self, chosen: &[&ObjectProfile]) -> Vec<u64> {
        let threads = chosen
            .iter()
            .map(|p| p.accesses.len())
            .chain([self.parents.len()])
            .max()
            .unwrap_or(0);
        let mut weights: Vec<u64> = (0..threads)
            .map(|t| chosen.iter().filter_map(|p| p.accesses.get(t)).sum())
            .collect();
        // Children are numbered after their parents, so going down the indices adds every
        // thread's complete weight to its parent.
        for child in (0..threads).rev() {
            if let Some(Some(parent)) = self.parents.get(child) {
                if *parent < child {
                    weights[*parent] += weights[child];
                }
            }
        }
        weights
    }
}

/// The SURW strategy (spec `surw`).
#[derive(Clone, Debug)]
pub struct Surw {
    /// Interesting objects per execution, `None` for every candidate.
    variables: Option<usize>,
    profile_executions: u64,
    profile: Profile,
    /// The candidates, worked out once profiling is over (the profile no longer changes), so
    /// that planning an execution does not walk and collect the profile's objects again.
    candidates: Option<Vec<ObjectProfile>>,
}

impl Default for Surw {
    fn default() -> Self {
        Surw::new(Some(DEFAULT_VARIABLES))
    }
}

impl Surw {
    /// SURW with `variables` interesting objects per execution (`None`: every candidate; at
    /// least 1 otherwise), after `DEFAULT_PROFILE` (1) profiling execution.
    pub fn new(variables: Option<usize>) -> Surw {
        Surw {
            variables: variables.map(|v| v.max(1)),
            profile_executions: DEFAULT_PROFILE,
            profile: Profile::default(),
            candidates: None,
        }
    }

    /// Runs `executions` (at least 1) profiling executions first.
    pub fn with_profile(mut self, executions: u64) -> Surw {
        self.profile_executions = executions.max(1);
        self
    }

    fn profiling(&self) -> bool {
        self.profile.executions < self.profile_executions
    }

    /// Draws the interesting objects of one execution among `candidates`.
    fn choose<'p>(
        variables: Option<usize>,
        candidates: &'p [ObjectProfile],
        rng: &mut Pcg64Mcg,
    ) -> Vec<&'p ObjectProfile> {
        let mut left: Vec<&ObjectProfile> = candidates.iter().collect();
        let Some(wanted) = variables else {
            return left;
        };
        let mut chosen = Vec::with_capacity(wanted);
        while chosen.len() < wanted && !left.is_empty() {
            chosen.push(left.swap_remove(below(rng.next_u64(), left.len())));
        }
        chosen
    }
}

impl Strategy for Surw {
    fn spec(&self) -> String {
        let mut spec = "surw".to_string();
        let mut parameters = Vec::new();
        match self.variables {
            Some(DEFAULT_VARIABLES) => {}
            Some(v) => parameters.push(format!("v={v}")),
            None => parameters.push("v=all".to_string()),
        }
        if self.profile_executions != DEFAULT_PROFILE {
            parameters.push(format!("profile={}", self.profile_executions));
        }
        if !parameters.is_empty() {
            spec.push(':');
            spec.push_str(&parameters.join(","));
        }
        spec
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        if self.profiling() {
            return Random.plan(execution, seed);
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let profile = &self.profile;
        let candidates = self
            .candidates
            .get_or_insert_with(|| profile.candidates().into_iter().cloned().collect());
        let chosen = Surw::choose(self.variables, candidates, &mut rng);
        let weights = profile.weights(&chosen);
        // Room for every thread the profile saw, so that admitting them does not grow the
        // vectors step by step.
        let threads = weights.len();
        Some(Box::new(SurwSchedule {
            rng,
            interest: Interest {
                objects: chosen.iter().map(|p| p.id).collect(),
                by_index: PerObject::default(),
            },
            profiled: weights,
            remaining: Vec::with_capacity(threads),
            held: Holds::with_capacity(threads),
            intended: None,
            spawner: None,
            gate: YieldGate::default(),
            pool: Vec::new(),
        }))
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        self.profiling()
    }

    fn learns_from(&self, execution: u64) -> bool {
        // Only the profiling executions, the first ones (planned one at a time), shape the
        // profile; the plans after them depend on it and their own seeds only.
        execution < self.profile_executions
    }

    fn round_size(&self) -> usize {
        // Profiling must finish before the first SURW execution is planned.
        if self.profiling() {
            1
        } else {
            64
        }
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        if let Some(trace) = outcome.trace {
            self.profile.observe(trace);
        }
    }

    fn stats(&self) -> Vec<(String, String)> {
        let shared = self.profile.objects.values().filter(|p| p.shared()).count();
        let candidates = self.profile.candidates().len();
        vec![
            (
                "interesting objects v per execution".to_string(),
                self.variables
                    .map_or_else(|| "all".to_string(), |v| v.to_string()),
            ),
            (
                "objects seen (known-shared)".to_string(),
                format!("{} ({shared})", self.profile.objects.len()),
            ),
            ("candidates Q".to_string(), candidates.to_string()),
        ]
    }
}

/// One execution of SURW.
struct SurwSchedule {
    rng: Pcg64Mcg,
    interest: Interest,
    /// Each thread's profiled weight, by thread index, handed to it when it appears.
    profiled: Vec<u64>,
    /// Each thread's remaining weight: interesting events left, its unspawned children's
    /// included.
    remaining: Vec<u64>,
    /// Threads held back at an interesting event until the intended thread has taken one.
    held: Holds,
    /// The thread whose interesting event comes next.
    intended: Option<usize>,
    /// The thread that took the last `Spawn` step, the parent of the threads that appear next.
    spawner: Option<usize>,
    gate: YieldGate,
    /// Scratch buffer for the threads a step may pick from.
    pool: Vec<usize>,
}

/// The threads held back at an interesting event, by thread index, with their number, so
/// that releasing them costs nothing when none is (the intended thread was picked first).
struct Holds {
    held: Vec<bool>,
    count: usize,
}

impl Holds {
    /// No thread yet, with room for `threads` of them.
    fn with_capacity(threads: usize) -> Holds {
        Holds {
            held: Vec::with_capacity(threads),
            count: 0,
        }
    }

    /// Makes room for a new thread, not held.
    fn admit(&mut self) {
        self.held.push(false);
    }

    fn is_held(&self, thread: usize) -> bool {
        self.held[thread]
    }

    /// Holds `thread` back, which is not held yet (it was picked from the threads not held).
    fn hold(&mut self, thread: usize) {
        debug_assert!(!self.held[thread], "thread {thread} is held twice");
        self.held[thread] = true;
        self.count += 1;
    }

    fn release_all(&mut self) {
        if self.count > 0 {
            self.held.iter_mut().for_each(|h| *h = false);
            self.count = 0;
        }
    }
}

/// Which objects' accesses are interesting in one execution.
struct Interest {
    /// The objects drawn for this execution.
    objects: Vec<ObjectId>,
    /// Whether each object of the execution is one of them, once asked.
    by_index: PerObject<bool>,
}

impl Interest {
    /// Whether thread `thread`'s pending operation is an interesting event.
    fn of(&mut self, view: &View<'_>, thread: usize) -> bool {
        let objects = &self.objects;
        self.by_index
            .of_pending(view, thread, |object| objects.contains(&object))
            .unwrap_or(false)
    }
}

impl SurwSchedule {
    /// Gives the threads created since the last decision their weights, taken from their
    /// parent's, and lets a child take its parent's intended place with probability its share.
    fn admit(&mut self, view: &View<'_>) {
        for thread in self.remaining.len()..view.thread_count() {
            let weight = self.profiled.get(thread).copied().unwrap_or(0);
            self.remaining.push(weight);
            self.held.admit();
            let Some(parent) = self.spawner.filter(|&p| p < thread) else {
                continue;
            };
            let before = self.remaining[parent];
            if self.intended == Some(parent)
                && below(self.rng.next_u64(), before.max(1) as usize) < weight as usize
            {
                self.intended = Some(thread);
            }
            self.remaining[parent] = before.saturating_sub(weight);
        }
        self.spawner = None;
    }

    /// Picks the thread that takes the next step. The threads the yield rule allows are asked
    /// for once (its answer does not change within a decision), and picked from directly while
    /// no thread is held back, the common case; holding one back copies the others into the
    /// scratch pool, in increasing order, as filtering the allowed threads again would.
    fn choose(&mut self, view: &View<'_>) -> usize {
        let SurwSchedule {
            rng,
            interest,
            remaining,
            held,
            intended,
            gate,
            pool,
            ..
        } = self;
        let allowed = gate.allowed(view);
        // When every thread that may run is at an interesting event, the picks below hold each
        // thread they pick back until they pick the intended one, so the intended thread runs
        // whatever they are: it is taken without them. Each of these threads has an
        // interesting event left, so each weighs at least 1 in the draw. On the peers bench's
        // atomic workload, whose every step is interesting, a decision cost about 280
        // instructions with the picks, 255 without them while the interest, the weights and
        // the draw each took a pass over the threads, and 210 with the first two in one pass.
        if let Some(total) = interesting_weight(interest, view, allowed, remaining) {
            let chosen = match *intended {
                Some(thread) if allowed.contains(&thread) => thread,
                _ => draw_weighted(rng, allowed, |t| remaining[t].max(1), total),
            };
            remaining[chosen] = remaining[chosen].max(1) - 1;
            held.release_all();
            *intended = None;
            return chosen;
        }
        let mut filtered = held.count > 0;
        if filtered {
            pool.clear();
            pool.extend(allowed.iter().filter(|&&t| !held.is_held(t)));
        }
        loop {
            let candidates: &[usize] = if filtered { pool } else { allowed };
            if candidates.is_empty() {
                // The intended thread cannot run: release every hold and draw again.
                held.release_all();
                *intended = None;
                filtered = false;
                continue;
            }
            let picked = candidates[below(rng.next_u64(), candidates.len())];
            if !interest.of(view, picked) {
                return picked;
            }
            // The profile may have missed some of this thread's events.
            remaining[picked] = remaining[picked].max(1);
            let intended_thread =
                *intended.get_or_insert_with(|| draw_intended(rng, candidates, remaining));
            if picked == intended_thread {
                remaining[picked] -= 1;
                held.release_all();
                *intended = None;
                return picked;
            }
            held.hold(picked);
            // In place (`retain` moves the few entries itself, where `remove` called
            // `memmove`), or from the allowed threads the first time.
            if filtered {
                pool.retain(|&t| t != picked);
            } else {
                pool.clear();
                pool.extend(allowed.iter().copied().filter(|&t| t != picked));
                filtered = true;
            }
        }
    }
}

/// The total weight of `threads`, each counted as at least 1, when each of them is at an
/// interesting event; `None` as soon as one is not.
#[inline]
fn interesting_weight(
    interest: &mut Interest,
    view: &View<'_>,
    threads: &[usize],
    remaining: &[u64],
) -> Option<u64> {
    let mut total = 0;
    for &thread in threads {
        if !interest.of(view, thread) {
            return None;
        }
        total += remaining[thread].max(1);
    }
    Some(total)
}

/// Draws the intended thread among `pool` with probability proportional to the `remaining`
/// weights (the picked thread, which has weight, keeps the total positive).
fn draw_intended(rng: &mut Pcg64Mcg, pool: &[usize], remaining: &[u64]) -> usize {
    let total: u64 = pool.iter().map(|&t| remaining[t]).sum();
    draw_weighted(rng, pool, |t| remaining[t], total.max(1))
}

/// Draws among `threads`, not empty, with probability proportional to `weight`, whose sum over
/// them is `total` (the first thread when they all weigh nothing).
#[inline]
fn draw_weighted(
    rng: &mut Pcg64Mcg,
    threads: &[usize],
    weight: impl Fn(usize) -> u64,
    total: u64,
) -> usize {
    let mut point = below(rng.next_u64(), total as usize) as u64;
    for &thread in threads {
        if point < weight(thread) {
            return thread;
        }
        point -= weight(thread);
    }
    threads[0]
}

impl Schedule for SurwSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.admit(view);
        let chosen = self.choose(view);
        self.gate.ran(view, chosen);
        if view.pending_kind(chosen) == Some(OpKind::Spawn) {
            self.spawner = Some(chosen);
        }
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    fn chooses_enabled(&self) -> bool {
        // Every choice is one of the threads the yield rule allows, which are enabled.
        true
    }
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;
    use crate::strategy::ObjectKind;

    fn event(
        thread: usize,
        kind: OpKind,
        object: Option<ObjectId>,
        target: Option<TraceTarget>,
    ) -> TraceEvent {
        TraceEvent {
            thread,
            kind,
            object,
            object_name: "",
            target,
            site: Location::caller(),
            yields: crate::runtime::op::counts_as_yield(kind, 0),
            seq_cst: false,
        }
    }

    #[test]
    fn a_thread_weighs_its_own_accesses_and_those_of_the_threads_it_spawns() {
        let shared = ObjectId {
            kind: ObjectKind::Atomic,
            site: Location::caller(),
            instance: 0,
        };
        let load = |thread| event(thread, OpKind::AtomicLoad, Some(shared), None);
        let spawn = |parent, child| {
            event(
                parent,
                OpKind::Spawn,
                None,
                Some(TraceTarget::Thread(child)),
            )
        };
        // Main spawns 1, which spawns 2; main accesses once, 1 twice, 2 three times.
        let trace = [
            load(0),
            spawn(0, 1),
            load(1),
            spawn(1, 2),
            load(1),
            load(2),
            load(2),
            load(2),
        ];
        let mut profile = Profile::default();
        profile.observe(&trace);
        let candidates = profile.candidates();
        assert_eq!(candidates.len(), 1);
        assert!(candidates[0].shared());
        assert_eq!(profile.weights(&candidates), vec![6, 5, 3]);
    }
}
