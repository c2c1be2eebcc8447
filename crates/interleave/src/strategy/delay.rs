//! Delay bounding (Emmi, Qadeer, Rakamaric, *Delay-Bounded Scheduling*, POPL 2011; spec
//! `delay:d=2`), run as iterative delay bounding, as in the SCTBench study of schedule bounding
//! (Thomson, Donaldson, Betts, PPoPP 2014 and TOPC 2016), where it exposed more of the
//! benchmarks' bugs than iterative preemption bounding.
//!
//! A deterministic scheduler decides every step: non-preemptive round robin over the threads
//! in creation order. The thread that ran last goes on while it can; when it blocks, finishes
//! or yields, the next thread after it in creation order (cyclically) that can run takes over.
//! A *delay* passes over the thread that scheduler would run and takes the next one in the same
//! cyclic order; `k` delays at one step pass over `k` threads. Only threads that could run are
//! passed over: blocked and finished threads are skipped without costing a delay. After a delay
//! the scheduler goes on from the thread it chose, so the thread passed over runs again only
//! once the round comes back to it, unlike a preemption, which always costs one and picks any
//! thread.
//!
//! Yields: a thread that yields (`yield_now`, `spin_loop`, a sleep, a wait that ends by its
//! timeout) waits until every other thread that could run when it yielded has taken a step
//! (`YieldRule` in `dfs.rs`); a thread held back so is passed over like a blocked one. So a
//! correct spin-wait ends under every schedule, with or without delays.
//!
//! The search is systematic and stateless, breadth first by delay count as in SCTBench: first
//! the one schedule without delays, then every schedule with one, then two, up to `d`. A
//! schedule is the list of steps at which it delays (a step listed twice delays twice there);
//! each execution reports the steps from its last delay on at which one more delay would choose
//! another thread, and each becomes a schedule of the next bound, so each schedule is generated
//! once, by the schedule without its last delay, whose execution it repeats up to that delay.
//! Every step is a scheduling point (`tracks` keeps its default), since a delay can fall on any.
//! `interleave::rand` draws are not enumerated: they are always 0.
//!
//! Guarantee: when it finishes, every schedule of the round-robin scheduler with at most `d`
//! delays under the yield rule has run, exactly once each, with every draw 0; the report gives
//! the delay count at which it found the bug, or what it covered.

use std::any::Any;

use super::dfs::YieldGate;
use super::levels::Levels;
use super::{Outcome, Schedule, Strategy, View};

/// The delay bound `d` of `delay` without parameters.
pub(super) const DEFAULT_DELAYS: usize = 2;

/// The steps at which a schedule delays, in increasing order; a step may repeat.
type Delays = Vec<u64>;

/// Iterative delay bounding (spec `delay:d=2`).
#[derive(Clone, Debug)]
pub struct DelayBound {
    max_delays: usize,
    /// The schedules by delay count.
    levels: Levels<Delays>,
    finished: bool,
    executions: u64,
    /// The delay count and execution of the first failure.
    found: Option<(usize, u64)>,
}

impl DelayBound {
    /// Every schedule with at most `delays` delays, in increasing order of delays.
    pub fn new(delays: usize) -> DelayBound {
        DelayBound {
            max_delays: delays,
            levels: Levels::new(vec![Delays::new()]),
            finished: false,
            executions: 0,
            found: None,
        }
    }

    /// Queues the schedules one delay beyond `delays` found in its execution.
    fn expand(&mut self, delays: &Delays, outcome: &Outcome) {
        let Some(Candidates(steps)) = outcome.feedback.and_then(|f| f.downcast_ref()) else {
            return;
        };
        for &step in steps {
            let mut child = delays.clone();
            child.push(step);
            if !self.levels.push_next(child) {
                return;
            }
        }
    }

    fn coverage(&self) -> String {
        let scope = format!(
            "schedules with at most {} delays (under the yield rule, every draw 0)",
            self.max_delays
        );
        let stopped = format!("{} delays", self.levels.bound());
        self.levels.coverage(self.finished, &scope, &stopped)
    }
}

impl Strategy for DelayBound {
    fn spec(&self) -> String {
        format!("delay:d={}", self.max_delays)
    }

    fn plan(&mut self, execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let record = self.levels.bound() < self.max_delays;
        let delays = self.levels.plan(execution)?;
        Some(Box::new(DelaySchedule {
            record_from: delays.last().copied().unwrap_or(0),
            record,
            delays: delays.clone(),
            applied: 0,
            gate: YieldGate::default(),
            candidates: Vec::new(),
        }))
    }

    fn splits_by_prefix(&self) -> bool {
        // A schedule's delays below a node depend only on the path to it, so shards can search
        // disjoint subtrees (`explore/prefix_split.rs`; checked on the suite by
        // crates/programs/tests/sharding.rs).
        true
    }

    fn round_size(&self) -> usize {
        self.levels.round_size()
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let Some(delays) = self.levels.observed(execution) else {
            return;
        };
        self.executions += 1;
        if outcome.failed && self.found.is_none() {
            self.found = Some((delays.len(), execution));
        }
        if delays.len() < self.max_delays {
            self.expand(&delays, outcome);
        }
        while self.levels.drained() && !self.finished {
            // The next delay bound, or the end of the search.
            self.finished = !self.levels.next_bound(self.max_delays, |_| {});
        }
    }

    fn stats(&self) -> Vec<(String, String)> {
        let mut stats = vec![
            ("delays d".to_string(), self.max_delays.to_string()),
            ("schedules run".to_string(), self.executions.to_string()),
        ];
        match self.found {
            Some((delays, execution)) => {
                stats.push(("bug found with delays".to_string(), delays.to_string()));
                stats.push((
                    "schedules explored until the bug".to_string(),
                    (execution + 1).to_string(),
                ));
            }
            None => stats.push(("covered".to_string(), self.coverage())),
        }
        stats
    }
}

/// What an execution reports back: the steps at which one more delay would choose another
/// thread, from its last delay on.
struct Candidates(Vec<u64>);

/// One execution of the search: round robin with delays at given steps.
struct DelaySchedule {
    delays: Delays,
    /// How many of `delays` have been applied.
    applied: usize,
    /// Candidates are recorded from this step on (the last delay's step).
    record_from: u64,
    /// Whether to record candidates at all (not for schedules at the delay bound).
    record: bool,
    gate: YieldGate,
    candidates: Vec<u64>,
}

impl Schedule for DelaySchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let allowed = self.gate.allowed(view);
        // The round-robin scheduler's choice: the thread that ran last while it may go on,
        // otherwise the first allowed thread after it in creation order, cyclically.
        let first = view.last_thread().map_or(0, |last| {
            allowed
                .iter()
                .position(|&t| t == last)
                .or_else(|| allowed.iter().position(|&t| t > last))
                .unwrap_or(0)
        });
        let step = view.step();
        let mut skips = 0;
        while self.delays.get(self.applied).is_some_and(|&at| at <= step) {
            skips += 1;
            self.applied += 1;
        }
        let options = allowed.len();
        if self.record && step >= self.record_from && skips + 1 < options {
            self.candidates.push(step);
        }
        // A schedule that no longer fits the program (it diverged) passes over as many threads
        // as it can; the runtime's nondeterminism check reports the divergence.
        let chosen = allowed[(first + skips.min(options - 1)) % options];
        self.gate.ran(view, chosen);
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        // The search enumerates delays, not values: every `interleave::rand` choice is 0.
        0
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(Candidates(std::mem::take(&mut self.candidates))))
    }
}
