//! The search of one subtree of a depth-first search's tree: the unit of work into which
//! several workers split one search (`explore/tree_split.rs`), and the tally that tells the
//! strategy afterwards what the split search ran in its place.
//!
//! A subtree is named by its root, the choices that lead to it. Its search runs exactly the
//! executions of the whole search that begin with those choices, in the same order and with
//! the same schedules, because the tree below a node of a plain depth-first search (with or
//! without a preemption bound) depends only on the path to it. While it runs, it can give away
//! the options still to try at its shallowest node that has some: each becomes a subtree of
//! its own, searched after everything this search still runs, in the order this search would
//! have tried them. The executions of a subtree's own part, followed by those of the subtrees
//! it gave away (the ones given away last first), are therefore the executions of its whole
//! subtree in the order of the whole search.
//!
//! What the whole search's statistics need follows from that order: how many executions ran,
//! how many wide draws their new nodes met (a subtree's search counts only the nodes below its
//! root, which the search that gave it away had counted), and where the whole search stood
//! after the last one. That is where the subtree's own search stood after it, if it went on;
//! otherwise the whole search backtracks to the node at which the next subtree in the order
//! was given away, so it stands at the depth of that subtree's root; with no next subtree it
//! is over.

use super::dfs::Tree;
use super::{Outcome, Schedule};

/// The search of one subtree of a systematic search (see the module documentation); opaque
/// outside the crate, returned by [`super::Strategy::subtree_search`].
pub struct SubtreeSearch {
    tree: Tree,
    /// The executions the subtree was estimated to hold when it was given away (the whole
    /// tree's: unknown, so the most).
    estimated_size: u64,
}

/// What observing one execution told a subtree's search.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Observed {
    /// Draws wider than the enumerated range among the execution's new nodes.
    pub(crate) wide_draws: u32,
    /// A yield made a thread wait in the execution.
    pub(crate) yield_waited: bool,
    /// The depth at which the subtree's search goes on, or `None` when its own part is over.
    pub(crate) next_depth: Option<u32>,
}

impl SubtreeSearch {
    /// The search of the whole of `tree`, which has not started.
    pub(super) fn whole(tree: &Tree) -> SubtreeSearch {
        SubtreeSearch {
            tree: tree.below(Vec::new()),
            estimated_size: u64::MAX,
        }
    }

    /// The schedule of the subtree's next execution, or `None` when its search is over.
    pub(crate) fn plan(&mut self) -> Option<Box<dyn Schedule + Send>> {
        self.tree.plan()
    }

    /// Appends to `prefix` the choices the execution planned last follows; with them,
    /// [`SubtreeSearch::following`] runs it again.
    pub(crate) fn planned_prefix(&self, prefix: &mut Vec<usize>) {
        self.tree.planned_prefix(prefix);
    }

    /// The schedule of the execution of this search's tree that follows `prefix`.
    pub(crate) fn following(&self, prefix: Vec<usize>) -> Box<dyn Schedule + Send> {
        self.tree.following(prefix)
    }

    /// Learns from the execution planned last and moves to the next one.
    pub(crate) fn observe(&mut self, outcome: &Outcome) -> Observed {
        let (wide_draws, yield_waits) = (self.tree.wide_draws(), self.tree.yield_waits());
        self.tree.grow(outcome, true);
        let goes_on = self.tree.backtrack();
        Observed {
            wide_draws: (self.tree.wide_draws() - wide_draws) as u32,
            yield_waited: self.tree.yield_waits() > yield_waits,
            next_depth: goes_on.then(|| self.tree.depth() as u32),
        }
    }

    /// The number of choices of this subtree's root.
    pub(crate) fn root_depth(&self) -> usize {
        self.tree.root_depth()
    }

    /// The searches of the subtrees this search gives away (see the module documentation), in
    /// the order the whole search reaches them; empty when it has nothing to give.
    pub(crate) fn give_away(&mut self) -> Vec<SubtreeSearch> {
        let (roots, estimated_size) = self.tree.give_away();
        roots
            .into_iter()
            .map(|root| SubtreeSearch {
                tree: self.tree.below(root),
                estimated_size,
            })
            .collect()
    }

    /// The executions the subtree was estimated to hold when it was given away, from the
    /// sizes of its siblings that had run.
    pub(crate) fn estimated_size(&self) -> u64 {
        self.estimated_size
    }

    /// The estimated executions this search still runs, after the one observed last: a guess
    /// from the sizes of the subtrees it searched (siblings tend to be alike), used only to
    /// decide whether speculating past it is worth it, never for what is reported.
    pub(crate) fn remaining_estimate(&self) -> u64 {
        self.tree.remaining_estimate()
    }
}

/// What a search split among workers ran, in the order of the whole search (see the module
/// documentation); the exploration hands it to the strategy with
/// [`super::Strategy::searched_elsewhere`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SplitTally {
    executions: u64,
    wide_draws: u64,
    yield_waits: u64,
    /// Where the whole search stood after the last execution: `None` before the first.
    depth_after: Option<Option<u32>>,
}

impl SplitTally {
    /// Counts the next execution of the whole search, which `observed` describes.
    pub(crate) fn count(&mut self, observed: Observed) {
        self.executions += 1;
        self.wide_draws += u64::from(observed.wide_draws);
        self.yield_waits += u64::from(observed.yield_waited);
        self.depth_after = Some(observed.next_depth);
    }

    /// Whether the last execution counted ended its subtree's own part (so where the whole
    /// search stands depends on the next subtree, see [`SplitTally::next_subtree`]).
    pub(crate) fn ended_a_subtree(&self) -> bool {
        self.depth_after == Some(None)
    }

    /// After the last execution ended its subtree's own part: the next subtree in the order of
    /// the whole search has a root of `root_depth` choices, or there is none (`None`).
    pub(crate) fn next_subtree(&mut self, root_depth: Option<usize>) {
        if self.ended_a_subtree() {
            self.depth_after = Some(root_depth.map(|depth| depth as u32));
        }
    }

    /// Makes `tree`, the strategy's own, stand where the split search ended.
    pub(super) fn apply(self, tree: &mut Tree) {
        if let Some(depth) = self.depth_after {
            tree.ran_elsewhere(
                self.executions,
                self.wide_draws,
                self.yield_waits,
                depth.map(|depth| depth as usize),
            );
        }
    }
}
