//! Splitting a systematic search's tree across shards by prefixes, for strategies whose every
//! plan depends on the execution before ([`Strategy::splits_by_prefix`]: DFS, delay bounding).
//!
//! A prefix is the sequence of threads an execution chose at its first [`SPLIT_DEPTH`] steps
//! where two or more threads could run. Each prefix belongs to one shard, by a hash of it. A
//! schedule wrapped here follows the strategy's own schedule; when the execution reaches a
//! further step with a choice after a prefix that belongs to another shard, it abandons the
//! execution there ([`ABANDON`]). The search observes the abandoned execution like any other:
//! its tree then holds the prefix's nodes but nothing below them, so it backtracks to the next
//! prefix without entering the subtree, which the owning shard searches whole. Every shard
//! thus walks the same prefixes in the same order, the subtrees below them are searched by
//! exactly one shard each, and together the shards run exactly the schedules of one unsharded
//! search. The indices differ (a shard's indices count its abandoned executions), so a failure
//! is ordered by the position of its prefix among the prefixes in the order the search first
//! reached them, which is the same on every shard, and then by its index within the shard.
//!
//! This is exact for a search whose subtrees do not depend on each other (DFS and delay
//! bounding, whose tree below a node depends only on the path to it); DPOR adds backtracking
//! points to earlier nodes from races it sees deep in a subtree, and ICB's pruning draws on
//! other subtrees too, so they do not split this way (measured on the suite: splitting them
//! loses or changes schedules).
//!
//! With an execution budget, each shard spends its own budget on its own subtrees (and one
//! abandoned execution per other prefix), so the shards together get at least as far through
//! every subtree as the unsharded search does: they find its first failure, and may find one
//! it would only have reached with a larger budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::config::Shard;
use crate::strategy::{Schedule, View, ABANDON};

/// Steps with a choice that make up a prefix: with two threads, up to 2^6 = 64 subtrees.
pub(super) const SPLIT_DEPTH: u32 = 6;

/// The tree split of one shard.
pub(super) struct PrefixSplit {
    shard: Shard,
    /// The prefix of every execution that ran, by index, as the schedules found it.
    prefixes: Arc<Mutex<HashMap<u64, Prefix>>>,
    /// Each prefix's position in the order the search first reached it, by prefix hash.
    positions: HashMap<u64, u64>,
    /// The position of the prefix of each execution observed, by index.
    orders: HashMap<u64, u64>,
}

/// An execution's prefix and whether it belongs to this shard.
#[derive(Clone, Copy, Debug)]
struct Prefix {
    hash: u64,
    owned: bool,
}

impl PrefixSplit {
    pub(super) fn new(shard: Shard) -> PrefixSplit {
        PrefixSplit {
            shard,
            prefixes: Arc::default(),
            positions: HashMap::new(),
            orders: HashMap::new(),
        }
    }

    /// `schedule`, execution `index`'s, abandoning the execution where it leaves this shard's
    /// subtrees.
    pub(super) fn wrap(
        &self,
        index: u64,
        schedule: Box<dyn Schedule + Send>,
    ) -> Box<dyn Schedule + Send> {
        Box::new(SplitSchedule {
            inner: schedule,
            index,
            shard: self.shard,
            choices: 0,
            hash: FNV_OFFSET,
            decided: false,
            prefixes: Arc::clone(&self.prefixes),
        })
    }

    /// Whether execution `index`, which ran, belongs to this shard; called in index order, so
    /// the prefixes get their positions in the order the search reached them.
    pub(super) fn owns(&mut self, index: u64) -> bool {
        let prefix = self
            .prefixes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&index);
        // A schedule that never finished (its execution could not start) owns nothing.
        let Some(prefix) = prefix else { return false };
        let next = self.positions.len() as u64;
        let position = *self.positions.entry(prefix.hash).or_insert(next);
        self.orders.insert(index, position);
        prefix.owned
    }

    /// The position of the prefix of execution `index` among the prefixes.
    pub(super) fn order(&self, index: u64) -> Option<u64> {
        self.orders.get(&index).copied()
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// One execution's schedule under the split.
struct SplitSchedule {
    inner: Box<dyn Schedule + Send>,
    index: u64,
    shard: Shard,
    /// Steps with a choice taken so far, up to [`SPLIT_DEPTH`].
    choices: u32,
    /// The FNV-1a hash of the threads chosen at them.
    hash: u64,
    /// Whether the prefix is complete and its owner known.
    decided: bool,
    prefixes: Arc<Mutex<HashMap<u64, Prefix>>>,
}

impl SplitSchedule {
    /// Completes the prefix (at its last choice, or at the end of a shorter execution) and
    /// says whether this shard owns it.
    fn decide(&mut self) -> bool {
        self.decided = true;
        let owned = self.shard.owns(crate::strategy::mix64(self.hash));
        self.prefixes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(
                self.index,
                Prefix {
                    hash: self.hash,
                    owned,
                },
            );
        owned
    }
}

impl Schedule for SplitSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        if self.decided || view.enabled().len() < 2 {
            return self.inner.next_thread(view);
        }
        if self.choices == SPLIT_DEPTH {
            return if self.decide() {
                self.inner.next_thread(view)
            } else {
                ABANDON
            };
        }
        let chosen = self.inner.next_thread(view);
        if chosen != ABANDON {
            self.choices += 1;
            self.hash = (self.hash ^ chosen as u64).wrapping_mul(FNV_PRIME);
        }
        chosen
    }

    fn next_value(&mut self, bound: u64) -> u64 {
        self.inner.next_value(bound)
    }

    fn tracks(&self, object: crate::strategy::ObjectId) -> bool {
        self.inner.tracks(object)
    }

    fn feedback(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        if !self.decided {
            // The execution ended (or the search abandoned it) within its prefix.
            self.decide();
        }
        self.inner.feedback()
    }
}
