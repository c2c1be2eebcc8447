//! Sharding: splitting one exploration across machines (`INTERLEAVE_SHARD=i/n`,
//! [`crate::Builder::shard`]) so that the `n` shards together run exactly the executions of
//! one unsharded run, with the same indices and schedules, and the earliest failure over the
//! shards is the one an unsharded run reports first.
//!
//! Execution `k` belongs to shard `k mod n + 1`. Every shard plans every execution, in the same
//! rounds as an unsharded run, so the plans agree as long as the strategy learned the same
//! things; a shard therefore also runs, and observes, every execution some later plan learns
//! from ([`Strategy::learns_from`]), without reporting it: its owner does. Strategies whose
//! executions depend on their seeds alone (random, POS, SURW after its one profiling
//! execution) split evenly; a strategy that learns from every execution (PCT, RFF, the
//! systematic ones) is not split at all, because every shard must run all of it to plan alike.
//! Both are exact, only the second saves nothing.
//!
//! A shard stops at its own first failure, or, with `stop_on_first_failure`, when an execution
//! it ran to learn from failed: every earlier execution of the unsharded order is owned by some
//! shard that does not stop before it, so the smallest failing index over the shards is the
//! unsharded run's first failure.

use super::*;
use crate::config::Shard;
use crate::report::{ShardFailure, ShardSummary};

/// What this process does with one planned execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// It runs and reports the execution (every execution without sharding).
    Own,
    /// It runs the execution only so that the strategy observes it, as it would unsharded.
    Learn,
    /// Another shard runs it.
    Skip,
}

/// Whether `shard` owns execution `index` (every execution when there is no sharding).
pub(super) fn owns(shard: Option<Shard>, index: u64) -> bool {
    shard.is_none_or(|shard| index % shard.count() == shard.number() - 1)
}

/// What this process does with execution `index`, which `strategy` planned.
pub(super) fn role(shard: Option<Shard>, strategy: &dyn Strategy, index: u64) -> Role {
    if owns(shard, index) {
        Role::Own
    } else if strategy.learns_from(index) {
        Role::Learn
    } else {
        Role::Skip
    }
}

/// What a shard counts while it explores, for its [`ShardSummary`].
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) learning_executions: u64,
    pub(super) stopped_by: Option<u64>,
}

/// The summary of the exploration `report` ran as `shard`, in the test `test`.
pub(super) fn summary(
    shard: Shard,
    config: &Config,
    report: &Report,
    tally: &Tally,
    test: Option<String>,
) -> ShardSummary {
    ShardSummary {
        shard,
        test,
        strategy: report.strategy.clone(),
        seed: config.seed,
        budget: config.executions,
        executions: report.executions,
        learning_executions: tally.learning_executions,
        failure: report.first_failure().map(|failure| ShardFailure {
            execution: failure.execution,
            kind: failure.kind.to_string(),
            token: failure.token.clone(),
        }),
        stopped_by: tally.stopped_by,
    }
}
