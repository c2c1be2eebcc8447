//! The acyclicity theory batsat consults (DPLL(T)): every assigned precedence atom adds its
//! edge to an incrementally ordered graph, and an edge that would close a cycle is a conflict
//! whose clause negates the atoms on that cycle.

use batsat::{Theory, TheoryArg};

use super::topological::IncrementalOrder;

/// The acyclicity theory: each assigned atom adds its edge to the graph; an edge that would
/// close a cycle is a conflict.
pub(super) struct OrderTheory {
    pub(super) graph: IncrementalOrder,
    /// The edge each solver variable stands for when true (reversed when false); `None` for
    /// free booleans.
    pub(super) edge_if_true: Vec<Option<(u32, u32)>>,
    /// How much of the solver's trail has become edges.
    pub(super) processed: usize,
    /// For each open decision level, the edge count and `processed` when it was opened.
    pub(super) levels: Vec<(usize, usize)>,
    pub(super) conflict: Vec<batsat::Lit>,
}

impl OrderTheory {
    pub(super) fn new(preferred_position: &[u32]) -> OrderTheory {
        OrderTheory {
            graph: IncrementalOrder::new(preferred_position),
            edge_if_true: Vec::new(),
            processed: 0,
            levels: Vec::new(),
            conflict: Vec::new(),
        }
    }

    /// Turns the unprocessed part of the trail into edges; raises a conflict at the first edge
    /// that closes a cycle.
    pub(super) fn process_trail(&mut self, acts: &mut TheoryArg) {
        while self.processed < acts.model().len() {
            let lit = acts.model()[self.processed];
            self.processed += 1;
            let Some(Some((from, to))) = self.edge_if_true.get(lit.var().idx() as usize).copied()
            else {
                continue;
            };
            let (from, to) = if lit.sign() { (from, to) } else { (to, from) };
            if !self.graph.insert(from, to, Some(lit)) {
                // The atoms on the cycle cannot all hold: the clause is their negations.
                self.conflict.clear();
                self.conflict
                    .extend(self.graph.cycle_reasons.iter().map(|&reason| !reason));
                acts.raise_conflict(&self.conflict, false);
                return;
            }
        }
    }
}

impl Theory for OrderTheory {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.process_trail(acts);
    }

    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.process_trail(acts);
    }

    fn create_level(&mut self) {
        self.levels.push((self.graph.edges.len(), self.processed));
    }

    fn pop_levels(&mut self, n: usize) {
        let target = self.levels.len() - n;
        let (edges, processed) = self.levels[target];
        self.levels.truncate(target);
        self.graph.truncate(edges);
        self.processed = processed;
    }

    fn n_levels(&self) -> usize {
        self.levels.len()
    }

    fn explain_propagation(&mut self, _: batsat::Lit) -> &[batsat::Lit] {
        unreachable!("the order theory never propagates, so batsat never asks it to explain")
    }
}
