//! Iterative context bounding with variable and thread bounding (Bindal, Bansal, Lal: *Variable
//! and Thread Bounding for Systematic Testing of Multithreaded Programs*, seed 000, Algorithm 1
//! and section 5; spec `icb:c=2,v=2`, and `icb:c=2,v=all` for plain preemption-bounded search
//! over every variable).
//!
//! The search is systematic and stateless. A schedule is a thread priority order plus the
//! steps after which the running thread is preempted; everything else is strict priority
//! scheduling (the enabled thread of highest priority runs). Under the two fixed orders a
//! preemption drops the thread below every other (Algorithm 1, line 37); under the random
//! orders the `i`-th preemption gives it the permutation's priority `P(n+i)` (section 4), a
//! random rank, so the orders of thread fragments are covered too. A preemption must switch to
//! another thread, and only such switches count (section 5's definition): a thread that blocks
//! or finishes, or a higher-priority thread that becomes enabled, switches for free.
//!
//! Preemptions may only happen right after an access of a variable, or before a thread's
//! first step (the paper's fake access at thread start). Variables are the runtime's objects
//! (atomics, `Var`s and cells, locks, condition variables, channels), identified by creation
//! site and instance number; the instance number, counted per site in first-use order (the
//! std-shaped constructors are `const fn`, so creation itself is invisible), plays the part of
//! the paper's loop-iteration number. The enumeration:
//!
//! - thread bounds `t` from 2 up to the parameter, each adding its priority orders: for
//!   `t = 2` the forward and the reverse order of thread creation, which give every two
//!   threads both orders (section 4); for `t >= 3`, random orders, as many as Lemma 4.1 needs
//!   for every order of every `t` threads to occur with probability 99%;
//! - within a thread bound, preemption bounds `c` from 0 up, breadth first (Algorithm 1's
//!   work queues): the schedules with `c` preemptions are the schedules with `c - 1` plus one
//!   preemption after their last one;
//! - within a preemption bound, by variable subset: the subset of a schedule is the set of
//!   variables its preemptions follow, and schedules whose subset would exceed `v` variables
//!   are not generated. Smaller subsets come first, then subsets in lexicographic order of
//!   their variables' ranks: known-shared variables (used by two threads in an earlier
//!   execution) first, then lower instance numbers, then fewer accesses.
//!
//! Each schedule runs once, as in the paper's per-subset loops, but in increasing order of
//! preemptions overall. An execution whose children can only preempt at its own variables
//! (or that has no children) tracks only those: the runtime takes its fast path for every
//! other data access and never asks the schedule (seed 000's selective instrumentation).
//!
//! Pruning (section 5): a schedule is dropped when an earlier schedule of the same subset
//! reached the same state: the same happens-before graph of the prefix up to the preemption
//! (see `hb.rs`), the same priority order of the live threads, and the same priorities for
//! threads not created yet. The two have identical futures, so pruning never drops a
//! happens-before graph the search would otherwise reach. Spin loops: a thread that yields drops
//! below every other thread (section 5's yield rule, with PCT's default limit of one yield), so
//! a spinner lets the thread it waits for run at its first yield. Nondeterministic choices
//! (`interleave::rand`) are not enumerated: they are always 0.
//!
//! Guarantee: when it finishes, every schedule of at most `c` preemptions at accesses of at
//! most `v` variables under the priority orders of `t` has run, up to pruning. For `t = 2`
//! that covers every order of every two threads exactly; for `t >= 3` with probability 99%.
//! The report names the `(c, v, t)` at which a bug was found, or states what was covered.

use std::any::Any;

use rustc_hash::FxHashSet;

use super::hb::{mix, HbFingerprint};
use super::levels::Levels;
use super::pctvb::VariableProfiles;
use super::priority::{Priorities, DEFAULT_YIELD_LIMIT};
use super::thread_bound::{lemma_4_1, EPSILON};
use super::{ObjectId, OpKind, Outcome, Schedule, Strategy, ThreadState, View};

/// Initial priorities sit above this; preempted and yielding threads go below zero.
const BASE_PRIORITY: i64 = 1 << 40;

/// Keys of a random order above this index are the priorities of preempted fragments.
const FRAGMENTS: u64 = 1 << 40;

/// A priority order of the threads, by creation index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// Earlier threads first.
    Forward,
    /// Later threads first.
    Reverse,
    /// A random order from this seed.
    Random(u64),
}

impl Order {
    fn priority(self, thread: usize) -> i64 {
        match self {
            Order::Forward => BASE_PRIORITY - thread as i64,
            Order::Reverse => BASE_PRIORITY + thread as i64,
            Order::Random(seed) => {
                BASE_PRIORITY + (mix(&[seed, thread as u64]) as u64 >> 24) as i64
            }
        }
    }

    /// The priority a thread takes at the `i`-th preemption (from 0): for random orders the
    /// permutation's key of fragment `n + i` (section 4), for the fixed orders none (the thread
    /// drops below every other).
    fn preempted_priority(self, i: usize) -> Option<i64> {
        match self {
            Order::Forward | Order::Reverse => None,
            Order::Random(seed) => {
                Some(BASE_PRIORITY + (mix(&[seed, FRAGMENTS | i as u64]) as u64 >> 24) as i64)
            }
        }
    }

    /// The thread bound whose orders include this one.
    fn threads(self) -> usize {
        match self {
            Order::Forward | Order::Reverse => 2,
            Order::Random(seed) => (seed >> 32) as usize,
        }
    }
}

/// One schedule to run: an order and the steps after which the running thread is preempted.
#[derive(Clone, Debug)]
struct Item {
    order: Order,
    preemptions: Vec<u64>,
    /// The distinct variables whose accesses the preemptions follow.
    variables: Vec<ObjectId>,
}

/// Which variables are tracked.
#[derive(Clone, Debug)]
enum Tracked {
    All,
    Some(Vec<ObjectId>),
}

impl Tracked {
    fn contains(&self, object: ObjectId) -> bool {
        match self {
            Tracked::All => true,
            Tracked::Some(objects) => objects.contains(&object),
        }
    }
}

/// A step after which the running thread could be preempted: the child schedule's seed.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    step: u64,
    /// The variable just accessed (`None`: the thread's first step).
    variable: Option<ObjectId>,
    /// A hash of the priority order after the preemption.
    priorities: u128,
}

/// What an execution reports back: where its schedule could have preempted.
struct Candidates(Vec<Candidate>);

/// Where the bug was found.
#[derive(Clone, Debug)]
struct Found {
    preemptions: usize,
    variables: Vec<ObjectId>,
    threads: usize,
    execution: u64,
}

/// The strategy (spec `icb:c=2,v=2`).
#[derive(Clone, Debug)]
pub struct Icb {
    max_preemptions: usize,
    /// `None`: every variable at once (plain preemption-bounded search).
    max_variables: Option<usize>,
    max_threads: usize,
    prune: bool,
    yield_limit: u32,

    // Where the enumeration is: `levels` by preemption bound within the thread bound.
    thread_bound: usize,
    levels: Levels<Item>,
    seen: FxHashSet<u128>,
    finished: bool,

    /// Which variables are known-shared (used by two threads in an earlier execution).
    profiles: VariableProfiles,
    threads_seen: usize,

    // Counts for the report.
    executions: u64,
    pruned: u64,
    found: Option<Found>,
}

impl Icb {
    /// Systematic search up to `preemptions` preemptions at accesses of up to `variables`
    /// variables (`None`: any number), under the two-thread priority orders.
    pub fn new(preemptions: usize, variables: Option<usize>) -> Icb {
        let mut icb = Icb {
            max_preemptions: preemptions,
            max_variables: variables,
            max_threads: 2,
            prune: true,
            yield_limit: DEFAULT_YIELD_LIMIT,
            thread_bound: 2,
            levels: Levels::new(Vec::new()),
            seen: FxHashSet::default(),
            finished: false,
            profiles: VariableProfiles::default(),
            threads_seen: 0,
            executions: 0,
            pruned: 0,
            found: None,
        };
        icb.queue_roots();
        icb
    }

    /// Also explores the priority orders of up to `threads` (at least 2) threads.
    pub fn with_threads(mut self, threads: usize) -> Icb {
        self.max_threads = threads.max(2);
        self
    }

    /// Turns happens-before pruning on or off.
    pub fn with_pruning(mut self, prune: bool) -> Icb {
        self.prune = prune;
        self
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> Icb {
        self.yield_limit = yields.max(1);
        self
    }

    /// Queues one schedule without preemptions per priority order of the current thread
    /// bound that smaller bounds do not already have: for `t = 2` the forward and reverse
    /// orders, for `t >= 3` Lemma 4.1's number of random orders minus those of `t - 1`.
    fn queue_roots(&mut self) {
        let t = self.thread_bound;
        let orders: Vec<Order> = if t == 2 {
            vec![Order::Forward, Order::Reverse]
        } else {
            let n = self.threads_seen.max(t);
            let count = random_orders(n, t) - random_orders(n, t - 1);
            (0..count.max(1))
                .map(|i| Order::Random((t as u64) << 32 | i))
                .collect()
        };
        self.levels.restart(
            orders
                .into_iter()
                .map(|order| Item {
                    order,
                    preemptions: Vec::new(),
                    variables: Vec::new(),
                })
                .collect(),
        );
    }

    /// The variables whose accesses are scheduling points in `item`'s execution: all of them
    /// while its children may still add a variable, otherwise only its own (the runtime's
    /// fast path takes the other accesses).
    fn tracked(&self, item: &Item) -> Tracked {
        let leaf = item.preemptions.len() >= self.max_preemptions;
        let full = self
            .max_variables
            .is_some_and(|v| item.variables.len() >= v);
        if leaf || full {
            Tracked::Some(item.variables.clone())
        } else {
            Tracked::All
        }
    }

    /// Moves to the next preemption bound or thread bound, or finishes.
    fn advance(&mut self) {
        let profiles = self.max_variables.is_some().then_some(&self.profiles);
        let next = self.levels.next_bound(self.max_preemptions, |level| {
            if let Some(profiles) = profiles {
                order_by_subset(profiles, level);
            }
        });
        if next {
            return;
        }
        if self.thread_bound < self.max_threads {
            self.thread_bound += 1;
            self.queue_roots();
        } else {
            self.finished = true;
        }
    }

    /// Queues the children of `item` found in its execution.
    fn expand(&mut self, item: &Item, outcome: &Outcome) {
        let Some(Candidates(candidates)) = outcome.feedback.and_then(|f| f.downcast_ref()) else {
            return;
        };
        let mut prefix = HbFingerprint::default();
        let mut added = 0;
        let future = match item.order {
            Order::Forward => 1,
            Order::Reverse => 2,
            Order::Random(seed) => seed ^ 3 << 62,
        };
        for candidate in candidates {
            let mut variables = item.variables.clone();
            if let Some(variable) = candidate.variable {
                if !variables.contains(&variable) {
                    variables.push(variable);
                }
            }
            if self.max_variables.is_some_and(|v| variables.len() > v) {
                continue;
            }
            if self.prune {
                let Some(trace) = outcome.trace else { return };
                while added <= candidate.step as usize {
                    prefix.add(&trace[added]);
                    added += 1;
                }
                // Pruning is per variable subset: a schedule that may still add variables
                // has a different future from one that may not.
                let mut words = vec![
                    candidate.priorities as u64,
                    (candidate.priorities >> 64) as u64,
                    future,
                ];
                let mut subset: Vec<u128> = variables.iter().map(object_hash).collect();
                subset.sort_unstable();
                words.extend(subset.iter().map(|&h| h as u64));
                if !self.seen.insert(prefix.value() ^ mix(&words)) {
                    self.pruned += 1;
                    continue;
                }
            }
            let mut preemptions = item.preemptions.clone();
            preemptions.push(candidate.step);
            let child = Item {
                order: item.order,
                preemptions,
                variables,
            };
            if !self.levels.push_next(child) {
                return;
            }
        }
    }

    fn coverage(&self) -> String {
        let variables = match self.max_variables {
            None => "any variables".to_string(),
            Some(v) => format!("v <= {v} variables"),
        };
        let orders = if self.max_threads == 2 {
            "2-thread orders covered exactly (forward and reverse priority orders)".to_string()
        } else {
            format!(
                "{}-thread orders covered with probability >= {:.0}% (Lemma 4.1)",
                self.max_threads,
                (1.0 - EPSILON) * 100.0
            )
        };
        let scope = format!(
            "schedules with c <= {} preemptions at accesses of {variables}",
            self.max_preemptions
        );
        let stopped = format!("c = {} (t = {})", self.levels.bound(), self.thread_bound);
        let coverage = self.levels.coverage(self.finished, &scope, &stopped);
        if self.finished && !self.levels.truncated() {
            format!("{coverage}, {orders}")
        } else {
            coverage
        }
    }
}

/// Orders one bound's schedules by variable subset (plain preemption bounding, `v=all`, keeps
/// the order of generation): smaller subsets first, then subsets with fewer variables not known
/// to be shared (by `profiles`), then subsets of lower instance (loop-iteration) numbers; the
/// order of generation (the order of the preemption points along the executions) among the
/// rest.
fn order_by_subset(profiles: &VariableProfiles, level: &mut [Item]) {
    level.sort_by_cached_key(|item| {
        let unshared = item
            .variables
            .iter()
            .filter(|&&v| !profiles.is_shared(v))
            .count();
        let instance = item.variables.iter().map(|v| v.instance).max();
        (item.variables.len(), unshared, instance)
    });
}

/// An identity hash of a variable, stable within the process.
fn object_hash(object: &ObjectId) -> u128 {
    mix(&[
        object.site as *const _ as usize as u64,
        object.kind as u64,
        u64::from(object.instance),
    ])
}

/// The random orders the thread bound `t` needs (Lemma 4.1 for `n` threads); none for
/// `t <= 2`, which the two fixed orders cover.
fn random_orders(n: usize, t: usize) -> u64 {
    if t <= 2 {
        0
    } else {
        lemma_4_1(n, t, EPSILON)
    }
}

impl Strategy for Icb {
    fn searches_exhaustively(&self) -> bool {
        true
    }

    fn spec(&self) -> String {
        let mut spec = format!("icb:c={},v=", self.max_preemptions);
        match self.max_variables {
            Some(v) => spec.push_str(&v.to_string()),
            None => spec.push_str("all"),
        }
        if self.max_threads != 2 {
            spec.push_str(&format!(",t={}", self.max_threads));
        }
        if !self.prune {
            spec.push_str(",prune=0");
        }
        if self.yield_limit != DEFAULT_YIELD_LIMIT {
            spec.push_str(&format!(",yields={}", self.yield_limit));
        }
        spec
    }

    fn plan(&mut self, execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let item = self.levels.plan(execution)?.clone();
        Some(Box::new(IcbSchedule {
            order: item.order,
            record_from: item.preemptions.last().map_or(0, |&s| s + 1),
            record: item.preemptions.len() < self.max_preemptions,
            preemptions: item.preemptions.clone(),
            tracked: self.tracked(&item),
            priorities: Priorities::new(self.yield_limit),
            preempted: 0,
            decided: None,
            candidates: Vec::new(),
        }))
    }

    fn wants_trace(&self, execution: u64) -> bool {
        // Schedules at the bound have no children: neither pruning nor profiling needs them.
        self.levels
            .in_flight(execution)
            .is_some_and(|item| item.preemptions.len() < self.max_preemptions)
    }

    fn round_size(&self) -> usize {
        self.levels.round_size()
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let Some(item) = self.levels.observed(execution) else {
            return;
        };
        self.executions += 1;
        self.threads_seen = self.threads_seen.max(outcome.threads);
        if let Some(trace) = outcome.trace {
            self.profiles.observe(trace);
        }
        if outcome.failed && self.found.is_none() {
            self.found = Some(Found {
                preemptions: item.preemptions.len(),
                variables: item.variables.clone(),
                threads: item.order.threads(),
                execution,
            });
        }
        if item.preemptions.len() < self.max_preemptions {
            self.expand(&item, outcome);
        }
        while self.levels.drained() && !self.finished {
            self.advance();
        }
    }

    fn stats(&self) -> Vec<(String, String)> {
        let mut stats = vec![
            (
                "preemptions c".to_string(),
                self.max_preemptions.to_string(),
            ),
            (
                "variables v".to_string(),
                self.max_variables
                    .map_or("all".to_string(), |v| v.to_string()),
            ),
            ("threads t".to_string(), self.max_threads.to_string()),
            (
                "variables seen (known-shared)".to_string(),
                self.profiles.summary(),
            ),
            ("schedules run".to_string(), self.executions.to_string()),
            (
                "schedules pruned by happens-before".to_string(),
                if self.prune {
                    self.pruned.to_string()
                } else {
                    "pruning off".to_string()
                },
            ),
        ];
        match &self.found {
            Some(found) => {
                stats.push((
                    "bug found at (c, v, t)".to_string(),
                    format!(
                        "({}, {}, {})",
                        found.preemptions,
                        found.variables.len(),
                        found.threads
                    ),
                ));
                let variables: Vec<String> =
                    found.variables.iter().map(ToString::to_string).collect();
                stats.push((
                    "preemptions after accesses of".to_string(),
                    if variables.is_empty() {
                        "no variable (only before threads' first steps)".to_string()
                    } else {
                        variables.join(", ")
                    },
                ));
                stats.push((
                    "schedules explored until the bug".to_string(),
                    (found.execution + 1).to_string(),
                ));
            }
            None => stats.push(("covered".to_string(), self.coverage())),
        }
        stats
    }
}

/// The last step this schedule decided: who ran it and what it was.
#[derive(Clone, Copy, Debug)]
struct Decided {
    step: u64,
    thread: usize,
    kind: OpKind,
    object: Option<ObjectId>,
}

/// One execution of the search: strict priority scheduling with preemptions at given steps.
struct IcbSchedule {
    order: Order,
    /// Steps (sorted) after which the thread that took them is preempted.
    preemptions: Vec<u64>,
    /// Candidates are recorded from this step on (after the last preemption).
    record_from: u64,
    /// Whether to record candidates at all (not for schedules at the preemption bound).
    record: bool,
    tracked: Tracked,
    priorities: Priorities,
    /// Preemptions applied so far.
    preempted: usize,
    decided: Option<Decided>,
    candidates: Vec<Candidate>,
}

impl IcbSchedule {
    /// Preempts `thread`: it takes its order's next fragment priority.
    fn preempt(&mut self, thread: usize) {
        match self.order.preempted_priority(self.preempted) {
            Some(priority) => self.priorities.set(thread, priority),
            None => self.priorities.demote(thread),
        }
        self.preempted += 1;
    }

    /// If preempting `running` now switches to another thread, a hash of the live threads'
    /// priority order after the preemption.
    fn preemption(&self, view: &View<'_>, running: usize) -> Option<u128> {
        let priority = self
            .order
            .preempted_priority(self.preempted)
            .unwrap_or(i64::MIN);
        let others = view.enabled().iter().filter(|&&t| t != running);
        if others.map(|&t| self.priorities.get(t)).max()? < priority {
            return None;
        }
        let mut live: Vec<(i64, usize)> = (0..view.thread_count())
            .filter(|&t| view.state(t) != ThreadState::Finished)
            .map(|t| {
                let p = if t == running {
                    priority
                } else {
                    self.priorities.get(t)
                };
                (p, t)
            })
            .collect();
        live.sort_unstable_by(|a, b| b.cmp(a));
        let mut words: Vec<u64> = live.iter().map(|&(_, t)| t as u64).collect();
        words.push(view.thread_count() as u64);
        words.push(self.preempted as u64 + 1);
        Some(mix(&words))
    }
}

impl Schedule for IcbSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let order = self.order;
        self.priorities.admit(view, |thread| order.priority(thread));
        let step = view.step();
        if let Some(last) = view.last_thread() {
            let previous = step - 1;
            if self.preemptions.binary_search(&previous).is_ok() {
                self.preempt(last);
            }
            self.priorities.yield_rule(view, last);
            // Only steps this schedule decided can be preemption points: the others were
            // untracked accesses that took the runtime's fast path.
            let point = self.decided.is_some_and(|d| {
                d.step == previous
                    && d.thread == last
                    && (d.kind == OpKind::Start
                        || d.object.is_some_and(|o| self.tracked.contains(o)))
            });
            if self.record
                && point
                && previous >= self.record_from
                && view.state(last) == ThreadState::Enabled
            {
                if let Some(priorities) = self.preemption(view, last) {
                    self.candidates.push(Candidate {
                        step: previous,
                        variable: self.decided.and_then(|d| d.object),
                        priorities,
                    });
                }
            }
        }
        let best = self.priorities.highest(view);
        let pending = view.pending(best);
        self.decided = Some(Decided {
            step,
            thread: best,
            kind: pending.map_or(OpKind::Start, |p| p.kind),
            object: pending.and_then(|p| p.object),
        });
        best
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        // The search enumerates schedules, not values: every `interleave::rand` choice is 0.
        0
    }

    fn tracks(&self, object: ObjectId) -> bool {
        self.tracked.contains(object)
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(Candidates(std::mem::take(&mut self.candidates))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lemma_4_1_needs_no_random_orders_for_two_threads() {
        assert_eq!(random_orders(10, 2), 0);
        // 4! * (ln 12 + ln 100) = 24 * 7.09 = 171.
        assert_eq!(random_orders(4, 3), 171);
    }
}
