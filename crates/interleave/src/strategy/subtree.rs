//! The search of one subtree of a depth-first search's tree: the unit of work into which
//! several workers split one search (`explore/tree_split.rs`).
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

use super::dfs::Tree;
use super::{Outcome, Schedule};

/// The search of one subtree of a systematic search (see the module documentation); opaque
/// outside the crate, returned by [`super::Strategy::subtree_search`].
pub struct SubtreeSearch {
    tree: Tree,
}

impl SubtreeSearch {
    /// The search of the whole of `tree`, which has not started.
    pub(super) fn whole(tree: &Tree) -> SubtreeSearch {
        SubtreeSearch {
            tree: tree.below(Vec::new()),
        }
    }

    /// The schedule of the subtree's next execution, or `None` when its search is over.
    pub(crate) fn plan(&mut self) -> Option<Box<dyn Schedule + Send>> {
        self.tree.plan()
    }

    /// Learns from the execution planned last and moves to the next one.
    pub(crate) fn observe(&mut self, outcome: &Outcome) {
        self.tree.grow(outcome, true);
        self.tree.backtrack();
    }

    /// Leaves out of the execution's `feedback`, once observed, what any search that observes
    /// it later knows already (the choices it was told to follow), so that it costs less to
    /// keep until the search in index order reads it.
    pub(crate) fn shrink(&self, feedback: &mut Option<Box<dyn std::any::Any + Send>>) {
        self.tree.forget_known(feedback);
    }

    /// The searches of the subtrees this search gives away (see the module documentation), in
    /// the order the whole search reaches them; empty when it has nothing to give.
    pub(crate) fn give_away(&mut self) -> Vec<SubtreeSearch> {
        self.tree
            .give_away()
            .into_iter()
            .map(|root| SubtreeSearch {
                tree: self.tree.below(root),
            })
            .collect()
    }
}
