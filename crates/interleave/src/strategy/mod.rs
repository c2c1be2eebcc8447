//! Strategies decide which thread runs at each step.
//!
//! A [`Strategy`] plans executions: for each execution index it hands out a [`Schedule`], the
//! per-execution decision maker the runtime consults at every visible operation with a
//! read-only [`View`] of every thread (its state and pending operation). After executions run,
//! the strategy [`observes`](Strategy::observe) their outcomes in index order. Executions of
//! one planning round are independent, so they can run on several worker threads, and the
//! results do not depend on how many workers there are.
//!
//! Built-in strategies are named by a spec string (`"random"`, `"pct:d=3"`, `"pos"`, `"surw"`, `"rff"`), parsed into a
//! [`StrategySpec`]; the CLI and the `INTERLEAVE_STRATEGY` variable take the same strings.

mod asset_fuzzer;
mod atom_fuzzer;
mod auto;
mod deadlock_fuzzer;
mod delay;
mod dfs;
mod dpor;
mod dpor_clocks;
pub(crate) mod hb;
mod icb;
mod levels;
mod pct;
mod pctvb;
mod pos;
mod priority;
mod race_fuzzer;
pub(crate) mod random;
pub(crate) mod replay;
mod rff;
mod round_robin;
mod rpro;
mod spec;
mod subtree;
mod surw;
mod thread_bound;
mod time_budget;
mod value_schedule;

pub use asset_fuzzer::{AssetFuzzer, RuntimeMonitor};
pub use atom_fuzzer::AtomFuzzer;
pub use auto::Auto;
pub use deadlock_fuzzer::DeadlockFuzzer;
pub use delay::DelayBound;
pub use dfs::Dfs;
pub use dpor::Dpor;
pub use icb::Icb;
pub use pct::Pct;
pub use pctvb::PctVb;
pub use pos::Pos;
pub use priority::Events;
pub use race_fuzzer::RaceFuzzer;
pub use random::Random;
pub use rff::Rff;
pub use round_robin::RoundRobin;
pub use rpro::RPro;
pub use spec::{SpecError, StrategySpec, STRATEGY_NAMES};
pub(crate) use subtree::Observed;
pub use subtree::{SplitTally, SubtreeSearch};
pub use surw::Surw;
pub use thread_bound::ThreadBound;
pub use time_budget::TimeBudget;
pub use value_schedule::ValueSchedule;

use std::any::Any;

pub use crate::runtime::op::{Access, ObjectId, ObjectKind, OpKind, Site};
pub use crate::runtime::{PendingOp, ThreadState, UnitView, View};

pub use crate::runtime::schedule::{Schedule, ABANDON};

pub use crate::runtime::{ChannelStep, TraceEvent, TraceTarget};

/// What a strategy learns from one finished execution.
#[derive(Clone, Copy, Debug)]
pub struct Outcome<'a> {
    /// Steps (scheduling decisions) the execution ran.
    pub steps: u64,
    /// Threads it created, the main thread included.
    pub threads: usize,
    /// Whether it failed.
    pub failed: bool,
    /// Whether its schedule abandoned it ([`ABANDON`]) before it finished.
    pub abandoned: bool,
    /// Lock acquisitions it executed (see [`OpKind::is_lock_acquisition`]).
    pub lock_acquisitions: u64,
    /// Every step, if the strategy asked for it ([`Strategy::wants_trace`]).
    pub trace: Option<&'a [TraceEvent]>,
    /// What the execution's schedule reported ([`Schedule::feedback`]).
    pub feedback: Option<&'a (dyn Any + Send)>,
    /// The units of work and atomic sets the program declared, with the trace, when it
    /// declared any (`crate::atomic_set`).
    pub declarations: Option<&'a crate::atomic_set::Declarations>,
    /// How many atomic-set serializability violations the execution produced, when executions
    /// are monitored ([`Strategy::monitors_atomic_sets`]).
    pub violations: usize,
    /// A failure other than a deadlock (a panic, a data race, the step bound) stopped the
    /// execution while some thread had not finished: the trace ends before the steps that
    /// thread had left, so a search that reasons from the trace never saw them.
    pub cut_short: bool,
}

/// A way of exploring schedules.
pub trait Strategy: Send {
    /// The spec string that names this strategy and its parameters.
    fn spec(&self) -> String;

    /// The schedule for execution `execution`, or `None` when the strategy has nothing more
    /// to try. `seed` is the execution's own seed, derived from the exploration seed and the
    /// index, for strategies that randomise.
    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>>;

    /// Learns from a finished execution; called in execution order.
    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let _ = (execution, outcome);
    }

    /// Whether the plans of later executions may depend on the outcome of execution
    /// `execution`. A sharded exploration ([`crate::Config::shard`]) runs each execution on the
    /// one shard that owns it, and every execution some plan learns from on every shard, so
    /// that all shards plan alike and together run exactly the schedules of one unsharded run.
    /// The default, `true`, is always sound; a strategy that learns from every execution is
    /// then not split at all (each shard runs all of them).
    fn learns_from(&self, execution: u64) -> bool {
        let _ = execution;
        true
    }

    /// Whether a sharded exploration splits this strategy's search tree by prefixes instead of
    /// dealing executions by index: for a systematic search that plans each execution from the
    /// one before, and whose subtrees do not depend on each other, so that abandoning an
    /// execution where it enters another shard's subtree makes the search skip that subtree
    /// (`explore/prefix_split.rs`). Default: false.
    fn splits_by_prefix(&self) -> bool {
        false
    }

    /// For a depth-first search that has not started: the search of its whole tree, which
    /// several workers then split into subtrees (`explore/tree_split.rs`), each explored in
    /// the order of the whole search, so that the report is the one a single worker gives.
    /// Only a search whose subtrees do not depend on each other may return one. The strategy
    /// then neither plans nor observes those executions: the exploration tells it what the
    /// split search ran with [`Strategy::searched_elsewhere`]. Default: `None`, and executions
    /// run in rounds ([`Strategy::round_size`]).
    fn subtree_search(&self) -> Option<SubtreeSearch> {
        None
    }

    /// After a split of the search of [`Strategy::subtree_search`]: what it ran, in the order
    /// of the whole search, so that the strategy's statistics and warnings are those of having
    /// run it itself. Default: nothing to learn.
    fn searched_elsewhere(&mut self, tally: SplitTally) {
        let _ = tally;
    }

    /// Whether [`observe`](Strategy::observe) needs the whole trace of execution `execution`
    /// (recording it costs time, so strategies ask only for the executions they analyse).
    fn wants_trace(&self, execution: u64) -> bool {
        let _ = execution;
        false
    }

    /// Findings that are not failures (say, predictions that could not be confirmed), added to
    /// the report's warnings when the exploration ends.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// How many executions may be planned before the outcomes of earlier ones are observed
    /// (1 for strategies whose next schedule depends on the last execution, 1,024 for those
    /// that learn nothing). Default: 64, how often the learning samplers learn.
    fn round_size(&self) -> usize {
        LEARNING_ROUND
    }

    /// Parameters, estimates and guarantees, for the report.
    fn stats(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// For a portfolio, the spec of the member that planned execution `execution`, which a
    /// failure in it names.
    fn member(&self, execution: u64) -> Option<String> {
        let _ = execution;
        None
    }

    /// Whether every execution is checked for atomic-set serializability violations
    /// ([`crate::Builder::monitor_atomic_sets`]).
    fn monitors_atomic_sets(&self) -> bool {
        false
    }

    /// Whether the strategy enumerates a search space to its end (`dfs`, `dpor`, `icb`), where
    /// every recorded choice multiplies the schedules to run: `compare_exchange_weak` then
    /// fails spuriously only when asked ([`crate::Config::spurious_cas_failures`]). Default:
    /// false, a sampler.
    fn searches_exhaustively(&self) -> bool {
        false
    }
}

/// The round size of a strategy that learns from what it observed but not from the last
/// execution alone: how often the samplers update their estimates.
pub(crate) const LEARNING_ROUND: usize = 64;

/// The round size of a strategy that plans every execution from its seed alone
/// ([`Strategy::learns_from`] false for all): no observation can change a plan, so rounds only
/// cost the workers a wait at each boundary. With two workers on the peers bench's workloads,
/// waiting took 1.0-3.7% of their time in rounds of 64 and 0.3-1.9% in rounds of 1,024
/// (`docs/bench/workers-scaling.txt`).
pub(crate) const ROUND_WITHOUT_LEARNING: usize = 1024;

/// A value per object of one execution, by the object's index in it, worked out from the
/// object's identity the first time a decision asks: comparing identities compares their
/// sites' file names, which at every decision cost a sampler more than the rest of its choice.
/// An execution gives each object one index and each index one object, so the value holds for
/// the rest of the execution.
pub(super) struct PerObject<T> {
    values: Vec<Option<T>>,
}

impl<T> Default for PerObject<T> {
    fn default() -> Self {
        PerObject { values: Vec::new() }
    }
}

impl<T: Copy> PerObject<T> {
    /// The value for the object of thread `thread`'s pending operation, from `compute` the
    /// first time; `None` when the thread has finished or its operation has no object. The
    /// lookup is inlined (a sampler asks at every pick), the first computation is not.
    #[inline(always)]
    pub(super) fn of_pending(
        &mut self,
        view: &View<'_>,
        thread: usize,
        compute: impl FnOnce(ObjectId) -> T,
    ) -> Option<T> {
        let index = view.pending_object_index(thread)? as usize;
        if let Some(&Some(known)) = self.values.get(index) {
            return Some(known);
        }
        self.compute(view, thread, index, compute)
    }

    /// Works out and keeps the value for object `index`, thread `thread`'s pending one.
    #[inline(never)]
    fn compute(
        &mut self,
        view: &View<'_>,
        thread: usize,
        index: usize,
        compute: impl FnOnce(ObjectId) -> T,
    ) -> Option<T> {
        if index >= self.values.len() {
            self.values.resize_with(index + 1, || None);
        }
        let value = compute(view.pending(thread)?.object?);
        self.values[index] = Some(value);
        Some(value)
    }
}

/// Uniform index below `n` from 64 random bits (Lemire's multiply-shift).
#[inline]
pub(crate) fn below(bits: u64, n: usize) -> usize {
    ((u128::from(bits) * n as u128) >> 64) as usize
}

/// The seed of execution `index` of an exploration seeded with `seed`.
pub(crate) fn execution_seed(seed: u64, index: u64) -> u64 {
    splitmix64(seed ^ splitmix64(index.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// splitmix64's finaliser: spreads the bits of `z` over the whole word, so that a hash reduced
/// modulo a small number depends on all of them.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
