//! Sharding: splitting one exploration across machines (`INTERLEAVE_SHARD=i/n`,
//! [`crate::Builder::shard`]) so that the `n` shards together run exactly the executions of
//! one unsharded run and the earliest failure over the shards is the one an unsharded run
//! reports first.
//!
//! By default execution `k` belongs to shard `k mod n + 1`. Every shard plans every execution,
//! in the same rounds as an unsharded run, so the plans agree as long as the strategy learned
//! the same things; a shard therefore also runs, and observes, every execution some later plan
//! learns from ([`Strategy::learns_from`]), without reporting it: its owner does. Strategies
//! whose executions depend on their seeds alone (random, POS, SURW after its one profiling
//! execution) split evenly; one that learns from every execution (PCT, RFF) is not split at
//! all, because every shard must run all of it to plan alike. Both are exact: the same
//! indices, the same schedules.
//!
//! A systematic search that plans each execution from the one before cannot be split by index,
//! so one that allows it ([`Strategy::splits_by_prefix`]: DFS, delay bounding) is split by the
//! prefixes of its tree instead (`prefix_split.rs`): every shard walks the tree down to a
//! shallow depth, and each subtree belongs to one shard. The shards then run exactly the unsharded run's
//! schedules, under indices of their own, and order their failures by the subtree's position
//! in the search ([`crate::ShardFailure::order`]).
//!
//! A shard stops at its own first failure, or, with `stop_on_first_failure`, when an execution
//! it ran to learn from failed: every earlier execution of the unsharded order is owned by some
//! shard that does not stop before it, so the first failure over the shards is the unsharded
//! run's first failure.

use super::prefix_split::PrefixSplit;
use super::*;
use crate::config::Shard;
use crate::report::{ShardFailure, ShardPartition, ShardSummary};

/// How this process shares an exploration with the other shards.
pub(super) struct Sharding {
    shard: Option<Shard>,
    /// The tree split, for a strategy split by prefixes.
    prefixes: Option<PrefixSplit>,
    learning_executions: u64,
    stopped_by: Option<u64>,
}

impl Sharding {
    /// The sharding of an exploration by `strategy` as `shard` (none: every execution).
    pub(super) fn new(shard: Option<Shard>, strategy: &dyn Strategy) -> Sharding {
        Sharding {
            shard,
            prefixes: shard
                .filter(|_| strategy.splits_by_prefix())
                .map(PrefixSplit::new),
            learning_executions: 0,
            stopped_by: None,
        }
    }

    /// The schedule to run for execution `index`, which `strategy` planned, or `None` when
    /// another shard runs it and no plan learns from it.
    pub(super) fn admit(
        &self,
        strategy: &dyn Strategy,
        index: u64,
        schedule: Box<dyn Schedule + Send>,
    ) -> Option<Box<dyn Schedule + Send>> {
        if let Some(prefixes) = &self.prefixes {
            return Some(prefixes.wrap(index, schedule));
        }
        (owns_index(self.shard, index) || strategy.learns_from(index)).then_some(schedule)
    }

    /// Whether this shard reports execution `index`, which ran and failed or not; called once
    /// per execution that ran, in index order. An execution it does not report was run only to
    /// learn from (or stopped where its subtree left this shard's share); when it failed and
    /// the exploration stops at the first failure, the shard stops too, leaving the failure to
    /// its owner.
    pub(super) fn reports(&mut self, index: u64, failed: bool, stop_on_failure: bool) -> Reported {
        let owned = match &mut self.prefixes {
            Some(prefixes) => prefixes.owns(index),
            None => owns_index(self.shard, index),
        };
        if owned {
            return Reported::Yes;
        }
        self.learning_executions += 1;
        if failed && stop_on_failure {
            self.stopped_by = Some(index);
            return Reported::NoAndStop;
        }
        Reported::No
    }

    /// The summary of the exploration `report` ran, in the test `test`; `None` unsharded.
    pub(super) fn summary(
        &self,
        config: &Config,
        report: &Report,
        test: Option<String>,
    ) -> Option<ShardSummary> {
        let shard = self.shard?;
        Some(ShardSummary {
            shard,
            test,
            strategy: report.strategy.clone(),
            seed: config.seed,
            budget: config.executions,
            partition: if self.prefixes.is_some() {
                ShardPartition::Prefixes
            } else {
                ShardPartition::Executions
            },
            executions: report.executions,
            learning_executions: self.learning_executions,
            failure: report.first_failure().map(|failure| ShardFailure {
                execution: failure.execution,
                order: self
                    .prefixes
                    .as_ref()
                    .and_then(|prefixes| prefixes.order(failure.execution)),
                kind: failure.kind.to_string(),
                token: failure.token.clone(),
            }),
            stopped_by: self.stopped_by,
        })
    }
}

/// Whether a shard reports an execution that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reported {
    Yes,
    No,
    /// Not reported, and the shard stops: it failed, and its owner reports it.
    NoAndStop,
}

/// Whether `shard` owns execution `index` when executions are dealt by index (every execution
/// when there is no sharding).
fn owns_index(shard: Option<Shard>, index: u64) -> bool {
    shard.is_none_or(|shard| shard.owns(index))
}
