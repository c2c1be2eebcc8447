//! The search: batsat with the order theory attached, kept in step with an [`super::OrderProblem`]
//! as it grows, a conflict budget, and the order read off a model.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use batsat::{lbool, Callbacks, ClauseKind, SolverInterface};

use super::theory::OrderTheory;
use super::{Formula, Lit, Variable};

/// A topological order of the hard edges and of the edges `model` gives the atoms, preferring
/// at each step the ready event that comes first in the preferred order; `None` if the graph has
/// a cycle.
pub(super) fn model_order(formula: &Formula, model: &[bool]) -> Option<Vec<usize>> {
    let events = formula.events;
    let mut edges: Vec<(u32, u32)> = formula.hard_edges.clone();
    for (variable, kind) in formula.variables.iter().enumerate() {
        if let Variable::Precedence { first, second } = *kind {
            edges.push(if model[variable] {
                (first, second)
            } else {
                (second, first)
            });
        }
    }
    let mut successor_start = vec![0usize; events + 1];
    let mut predecessors = vec![0u32; events];
    for &(from, to) in &edges {
        successor_start[from as usize + 1] += 1;
        predecessors[to as usize] += 1;
    }
    for event in 0..events {
        successor_start[event + 1] += successor_start[event];
    }
    let mut fill = successor_start.clone();
    let mut successors = vec![0u32; edges.len()];
    for &(from, to) in &edges {
        successors[fill[from as usize]] = to;
        fill[from as usize] += 1;
    }
    let position = &formula.preferred_position;
    let mut ready: BinaryHeap<Reverse<(u32, u32)>> = (0..events)
        .filter(|&event| predecessors[event] == 0)
        .map(|event| Reverse((position[event], event as u32)))
        .collect();
    let mut order = Vec::with_capacity(events);
    while let Some(Reverse((_, event))) = ready.pop() {
        order.push(event as usize);
        let event = event as usize;
        for &next in &successors[successor_start[event]..successor_start[event + 1]] {
            predecessors[next as usize] -= 1;
            if predecessors[next as usize] == 0 {
                ready.push(Reverse((position[next as usize], next)));
            }
        }
    }
    (order.len() == events).then_some(order)
}

/// The batsat solver with the order theory, and the part of the formula already given to them.
pub(super) struct Engine {
    pub(super) sat: batsat::Solver<ConflictBudget>,
    pub(super) theory: OrderTheory,
    /// The solver literal of each problem variable's positive literal.
    pub(super) positive_literal: Vec<batsat::Lit>,
    pub(super) synchronised_variables: usize,
    pub(super) synchronised_hard_edges: usize,
    pub(super) synchronised_clauses: usize,
    /// The hard edges (with atoms fixed before any decision) form a cycle.
    pub(super) hard_cycle: bool,
}

impl Engine {
    pub(super) fn new(formula: &Formula) -> Engine {
        Engine {
            sat: batsat::Solver::new(batsat::SolverOpts::default(), ConflictBudget::default()),
            theory: OrderTheory::new(&formula.preferred_position),
            positive_literal: Vec::new(),
            synchronised_variables: 0,
            synchronised_hard_edges: 0,
            synchronised_clauses: 0,
            hard_cycle: false,
        }
    }

    pub(super) fn sat_literal(&self, lit: Lit) -> batsat::Lit {
        let positive = self.positive_literal[lit.variable()];
        if lit.is_negated() {
            !positive
        } else {
            positive
        }
    }

    /// After a `Sat` answer: each variable's value and the order, if every variable has a
    /// value, the graph is acyclic, and every clause and assumption holds.
    pub(super) fn checked_model(
        &self,
        formula: &Formula,
        assumptions: &[batsat::Lit],
    ) -> Option<(Vec<bool>, Vec<usize>)> {
        let mut model = Vec::with_capacity(formula.variables.len());
        for variable in 0..formula.variables.len() {
            match self
                .sat
                .value_lit(self.sat_literal(Lit::new(variable, false)))
            {
                value if value == lbool::TRUE => model.push(true),
                value if value == lbool::FALSE => model.push(false),
                _ => return None,
            }
        }
        let order = model_order(formula, &model)?;
        let value = |lit: Lit| model[lit.variable()] != lit.is_negated();
        let clauses_hold = formula
            .clauses()
            .all(|clause| clause.iter().any(|&lit| value(lit)));
        let assumptions_hold = assumptions
            .iter()
            .all(|&lit| self.sat.value_lit(lit) == lbool::TRUE);
        (clauses_hold && assumptions_hold).then_some((model, order))
    }

    /// Gives the solver and the theory what the formula gained since the last solve. The solver
    /// is at decision level 0 here, so hard edges enter the theory below every level and are
    /// never backtracked.
    pub(super) fn synchronise(&mut self, formula: &Formula) {
        for variable in self.synchronised_variables..formula.variables.len() {
            let solver_variable = self.sat.new_var_default();
            debug_assert_eq!(
                solver_variable.idx() as usize,
                self.theory.edge_if_true.len()
            );
            let preferred = match formula.preferred_value.get(variable).copied().flatten() {
                Some(value) => value,
                None => match formula.variables[variable] {
                    Variable::Precedence { first, second } => {
                        let position = &formula.preferred_position;
                        position[first as usize] < position[second as usize]
                    }
                    Variable::Fresh => false,
                },
            };
            // batsat decides a variable false unless phase saving remembers otherwise, so the
            // preferred value of each problem variable is mapped to the solver variable's false.
            let positive = batsat::Lit::new(solver_variable, !preferred);
            self.positive_literal.push(positive);
            let edge = match formula.variables[variable] {
                Variable::Precedence { first, second } if positive.sign() => Some((first, second)),
                Variable::Precedence { first, second } => Some((second, first)),
                Variable::Fresh => None,
            };
            self.theory.edge_if_true.push(edge);
        }
        self.synchronised_variables = formula.variables.len();

        for &(from, to) in &formula.hard_edges[self.synchronised_hard_edges..] {
            if !self.theory.graph.insert(from, to, None) {
                self.hard_cycle = true;
            }
        }
        self.synchronised_hard_edges = formula.hard_edges.len();

        let mut literals = Vec::new();
        for clause in formula.clauses().skip(self.synchronised_clauses) {
            literals.clear();
            literals.extend(clause.iter().map(|&lit| self.sat_literal(lit)));
            // A false return means the clauses are unsatisfiable already; the next solve says so.
            self.sat.add_clause_reuse(&mut literals);
        }
        self.synchronised_clauses = formula.clause_ends.len();
    }
}

/// batsat callbacks that stop the search once a solve has spent more than `limit` conflicts.
#[derive(Default)]
pub(super) struct ConflictBudget {
    pub(super) limit: u64,
    pub(super) spent: u64,
}

impl Callbacks for ConflictBudget {
    fn on_start(&mut self) {
        self.spent = 0;
    }

    fn on_new_clause(&mut self, _: &[batsat::Lit], kind: ClauseKind) {
        // Every conflict the search recovers from ends in one learnt clause; axioms are input.
        if matches!(kind, ClauseKind::Learnt | ClauseKind::Theory) {
            self.spent += 1;
        }
    }

    fn stop(&self) -> bool {
        self.spent > self.limit
    }
}
