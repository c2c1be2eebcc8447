//! Decides order problems for the predictive analyses: is there a total order of a trace's
//! events that respects fixed precedences (program order, spawn, join) and satisfies boolean
//! clauses over precedence atoms ("event a precedes event b") and free booleans ("read q reads
//! from write w")? These are the Φmhb ∧ Φlock ∧ Φrw constraints of TAME (seed 004).
//!
//! The boolean side is batsat, a CDCL SAT solver with a DPLL(T) theory hook. The theory keeps
//! the directed graph of the hard edges and of the edges the assigned atoms stand for, together
//! with a topological order of it that Pearce and Kelly's algorithm maintains incrementally:
//! adding an edge that agrees with the current order costs nothing, and one that disagrees
//! searches only the events between its two ends. An edge that closes a cycle is refused with a
//! conflict clause built from the atoms on that cycle. Removing edges on backtracking never
//! invalidates a topological order, so backtracking just forgets them.
//!
//! The search starts from the order observed in the trace when the caller gives it
//! ([`OrderProblem::prefer_order`]): every atom is first decided the way that order has it, so a
//! trace that is already consistent is confirmed without conflicts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Not;

use batsat::{lbool, Callbacks, ClauseKind, SolverInterface, Theory, TheoryArg};
use rustc_hash::FxHashMap;

/// A literal of an order problem: a precedence atom, its negation, or a free boolean.
///
/// Internally the variable's index shifted left by one, with the low bit set for a negation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lit(u32);

impl Lit {
    fn new(variable: usize, negated: bool) -> Lit {
        let variable =
            u32::try_from(variable).expect("an order problem has fewer than 2^31 variables");
        Lit(variable << 1 | u32::from(negated))
    }

    fn variable(self) -> usize {
        (self.0 >> 1) as usize
    }

    fn is_negated(self) -> bool {
        self.0 & 1 == 1
    }
}

impl Not for Lit {
    type Output = Lit;

    fn not(self) -> Lit {
        Lit(self.0 ^ 1)
    }
}

/// Size figures of a problem, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProblemSize {
    /// Distinct precedence atoms (one per unordered pair of events asked about).
    pub precedence_atoms: usize,
    /// Free booleans made by [`OrderProblem::fresh`].
    pub fresh_variables: usize,
    /// Clauses added, including empty ones.
    pub clauses: usize,
    /// Literals over all clauses.
    pub literals: usize,
    /// Hard edges added by [`OrderProblem::must_precede`].
    pub hard_edges: usize,
}

/// The answer of [`OrderProblem::solve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Solution {
    /// A total order of all events (a permutation of `0..events`) that respects every hard
    /// edge, orders every atom's pair as the satisfying assignment says, and satisfies every
    /// clause. Among such orders it is the one closest to the preferred order: at each step it
    /// places the ready event that comes first there.
    Sat(Vec<usize>),
    /// No order satisfies the problem (under the assumptions, if any were given).
    Unsat,
    /// The conflict budget ran out before the problem was decided.
    Unknown,
}

/// What a variable of the problem stands for.
#[derive(Clone, Copy, Debug)]
enum Variable {
    /// "`first` precedes `second`", with `first < second`; the negation is the other order.
    Precedence { first: u32, second: u32 },
    /// A boolean not tied to the order.
    Fresh,
}

/// The problem as the caller stated it, kept apart from the solver so that the solver can be
/// built lazily (once the preferred order is known) and extended between solves.
struct Formula {
    events: usize,
    variables: Vec<Variable>,
    /// The precedence variable of each unordered pair `(smaller, larger)` asked about. Only
    /// looked up, never iterated, so its order cannot influence results.
    atom_of_pair: FxHashMap<(u32, u32), usize>,
    hard_edges: Vec<(u32, u32)>,
    clause_literals: Vec<Lit>,
    /// Where each clause ends in `clause_literals`.
    clause_ends: Vec<usize>,
    /// Each event's position in the preferred order.
    preferred_position: Vec<u32>,
    /// The value the search tries first for variables given one by [`OrderProblem::prefer`].
    preferred_value: Vec<Option<bool>>,
    precedence_atoms: usize,
}

impl Formula {
    fn clauses(&self) -> impl Iterator<Item = &[Lit]> + '_ {
        let starts = std::iter::once(0).chain(self.clause_ends.iter().copied());
        starts
            .zip(self.clause_ends.iter().copied())
            .map(|(start, end)| &self.clause_literals[start..end])
    }
}

/// An order problem over a fixed number of events; see the module documentation.
pub struct OrderProblem {
    formula: Formula,
    /// The SAT solver and the order theory, created by the first solve.
    engine: Option<Engine>,
    /// Each variable's value in the model of the latest solve, if that solve returned `Sat`.
    model: Option<Vec<bool>>,
}

impl OrderProblem {
    /// A problem over `events` events, numbered `0..events`.
    pub fn new(events: usize) -> OrderProblem {
        let events_u32 =
            u32::try_from(events).expect("an order problem has fewer than 2^32 events");
        OrderProblem {
            formula: Formula {
                events,
                variables: Vec::new(),
                atom_of_pair: FxHashMap::default(),
                hard_edges: Vec::new(),
                clause_literals: Vec::new(),
                clause_ends: Vec::new(),
                preferred_position: (0..events_u32).collect(),
                preferred_value: Vec::new(),
                precedence_atoms: 0,
            },
            engine: None,
            model: None,
        }
    }

    /// A hard edge: `a` precedes `b` in every solution (program order, spawn, join, fixed
    /// synchronisation order). `must_precede(a, a)` makes the problem unsatisfiable.
    ///
    /// # Panics
    ///
    /// If `a` or `b` is not an event of the problem.
    pub fn must_precede(&mut self, a: usize, b: usize) {
        let (a, b) = (self.event(a), self.event(b));
        self.formula.hard_edges.push((a, b));
    }

    /// The atom "`a` precedes `b`". `before(b, a)` is `!before(a, b)`: both name the same
    /// variable, made on first use and found again by a hash lookup afterwards.
    ///
    /// # Panics
    ///
    /// If `a == b`, or if either is not an event of the problem.
    pub fn before(&mut self, a: usize, b: usize) -> Lit {
        assert_ne!(a, b, "an event cannot precede itself");
        let (a, b) = (self.event(a), self.event(b));
        let (first, second) = (a.min(b), a.max(b));
        let formula = &mut self.formula;
        let variable = match formula.atom_of_pair.get(&(first, second)) {
            Some(&variable) => variable,
            None => {
                let variable = formula.variables.len();
                formula
                    .variables
                    .push(Variable::Precedence { first, second });
                formula.atom_of_pair.insert((first, second), variable);
                formula.precedence_atoms += 1;
                variable
            }
        };
        // The variable says "first precedes second", so asking for the other order negates it.
        Lit::new(variable, a != first)
    }

    /// A fresh boolean not tied to the order (for example "read q reads from write w").
    pub fn fresh(&mut self) -> Lit {
        let variable = self.formula.variables.len();
        self.formula.variables.push(Variable::Fresh);
        Lit::new(variable, false)
    }

    /// Adds a clause (a disjunction). An empty clause makes the problem unsatisfiable.
    pub fn clause(&mut self, lits: &[Lit]) {
        let formula = &mut self.formula;
        formula.clause_literals.extend_from_slice(lits);
        formula.clause_ends.push(formula.clause_literals.len());
    }

    /// Size figures for reports.
    pub fn size(&self) -> ProblemSize {
        let formula = &self.formula;
        ProblemSize {
            precedence_atoms: formula.precedence_atoms,
            fresh_variables: formula.variables.len() - formula.precedence_atoms,
            clauses: formula.clause_ends.len(),
            literals: formula.clause_literals.len(),
            hard_edges: formula.hard_edges.len(),
        }
    }

    /// Hint: the order observed in the trace, a permutation of `0..events`. The search first
    /// decides every atom as this order has it, which the measurements found makes consistency
    /// checks fast, and a `Sat` answer lists events in this order where the constraints allow.
    ///
    /// It applies to atoms made before the first solve and to all atoms made after this call;
    /// the first solve also starts its topological order from it. Call it before solving.
    /// Events listed twice count at their first place, events out of range are ignored, and
    /// events not listed come after the listed ones in index order.
    pub fn prefer_order(&mut self, order: &[usize]) {
        let events = self.formula.events;
        let mut position = vec![u32::MAX; events];
        let mut next = 0u32;
        let listed = order.iter().copied().chain(0..events);
        for event in listed.filter(|&event| event < events) {
            if position[event] == u32::MAX {
                position[event] = next;
                next += 1;
            }
        }
        self.formula.preferred_position = position;
    }

    /// Hint: the search tries `lit` true first (for example the read-from choice observed in
    /// the trace; free booleans are otherwise tried false first). Like
    /// [`OrderProblem::prefer_order`], it applies only to variables no solve has seen yet: call
    /// it before the first solve, or before the next one for variables made since. For a
    /// precedence atom it overrides the preferred order.
    pub fn prefer(&mut self, lit: Lit) {
        let formula = &mut self.formula;
        if formula.preferred_value.len() <= lit.variable() {
            formula.preferred_value.resize(lit.variable() + 1, None);
        }
        formula.preferred_value[lit.variable()] = Some(!lit.is_negated());
    }

    /// Decides the problem within `conflicts` solver conflicts, a deterministic budget: a
    /// budget of 0 still decides problems that need no conflict, and `u64::MAX` is unlimited.
    ///
    /// Solving again after adding edges, atoms or clauses reuses what the solver has learnt.
    pub fn solve(&mut self, conflicts: u64) -> Solution {
        self.solve_assuming(&[], conflicts)
    }

    /// Like [`OrderProblem::solve`], with `assumptions` holding for this solve only: `Unsat`
    /// then means no solution makes all of them true. This is how to ask many queries of one
    /// problem, each guarded by its own fresh literal, without the queries constraining one
    /// another.
    pub fn solve_assuming(&mut self, assumptions: &[Lit], conflicts: u64) -> Solution {
        self.model = None;
        let formula = &self.formula;
        let engine = self.engine.get_or_insert_with(|| Engine::new(formula));
        engine.synchronise(formula);
        if engine.hard_cycle {
            return Solution::Unsat;
        }
        engine.sat.cb_mut().limit = conflicts;
        let assumptions: Vec<batsat::Lit> = assumptions
            .iter()
            .map(|&lit| engine.sat_literal(lit))
            .collect();
        let result = engine
            .sat
            .solve_limited_th(&mut engine.theory, &assumptions);
        if result == lbool::FALSE {
            return Solution::Unsat;
        }
        if result != lbool::TRUE {
            return Solution::Unknown;
        }
        let Some((model, order)) = engine.checked_model(formula, &assumptions) else {
            // A model that fails the check is a solver bug. Tests stop on it; elsewhere it is
            // better to admit not knowing than to report an order that breaks a constraint.
            debug_assert!(false, "the solver returned a model that breaks the problem");
            return Solution::Unknown;
        };
        self.model = Some(model);
        Solution::Sat(order)
    }

    #[cfg(test)]
    /// The value of `lit` in the model of the latest solve, if that solve returned `Sat` and
    /// `lit` existed then.
    pub fn value(&self, lit: Lit) -> Option<bool> {
        let model = self.model.as_ref()?;
        let value = *model.get(lit.variable())?;
        Some(value != lit.is_negated())
    }

    fn event(&self, event: usize) -> u32 {
        assert!(
            event < self.formula.events,
            "event {event} is not one of the problem's {} events",
            self.formula.events
        );
        // The constructor checked that every event index fits in a u32.
        event as u32
    }
}

/// A topological order of the hard edges and of the edges `model` gives the atoms, preferring
/// at each step the ready event that comes first in the preferred order; `None` if the graph has
/// a cycle.
fn model_order(formula: &Formula, model: &[bool]) -> Option<Vec<usize>> {
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
struct Engine {
    sat: batsat::Solver<ConflictBudget>,
    theory: OrderTheory,
    /// The solver literal of each problem variable's positive literal.
    positive_literal: Vec<batsat::Lit>,
    synchronised_variables: usize,
    synchronised_hard_edges: usize,
    synchronised_clauses: usize,
    /// The hard edges (with atoms fixed before any decision) form a cycle.
    hard_cycle: bool,
}

impl Engine {
    fn new(formula: &Formula) -> Engine {
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

    fn sat_literal(&self, lit: Lit) -> batsat::Lit {
        let positive = self.positive_literal[lit.variable()];
        if lit.is_negated() {
            !positive
        } else {
            positive
        }
    }

    /// After a `Sat` answer: each variable's value and the order, if every variable has a
    /// value, the graph is acyclic, and every clause and assumption holds.
    fn checked_model(
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
    fn synchronise(&mut self, formula: &Formula) {
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
struct ConflictBudget {
    limit: u64,
    spent: u64,
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

/// The acyclicity theory: each assigned atom adds its edge to the graph; an edge that would
/// close a cycle is a conflict.
struct OrderTheory {
    graph: IncrementalOrder,
    /// The edge each solver variable stands for when true (reversed when false); `None` for
    /// free booleans.
    edge_if_true: Vec<Option<(u32, u32)>>,
    /// How much of the solver's trail has become edges.
    processed: usize,
    /// For each open decision level, the edge count and `processed` when it was opened.
    levels: Vec<(usize, usize)>,
    conflict: Vec<batsat::Lit>,
}

impl OrderTheory {
    fn new(preferred_position: &[u32]) -> OrderTheory {
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
    fn process_trail(&mut self, acts: &mut TheoryArg) {
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

/// An edge of the order graph, with the atom literal that put it there (`None` for hard edges).
#[derive(Clone, Copy, Debug)]
struct Edge {
    from: u32,
    to: u32,
    reason: Option<batsat::Lit>,
}

/// A directed acyclic graph with a topological order maintained under edge insertion by
/// Pearce and Kelly's algorithm (*A dynamic topological sort algorithm for directed acyclic
/// graphs*, JEA 2007). Edges are removed only in the reverse order of their insertion.
struct IncrementalOrder {
    /// Each event's place in the topological order.
    position: Vec<u32>,
    /// Indices into `edges` of each event's outgoing and incoming edges, in insertion order.
    outgoing: Vec<Vec<u32>>,
    incoming: Vec<Vec<u32>>,
    /// All edges, in insertion order.
    edges: Vec<Edge>,
    /// The search epoch each event was last visited in.
    visited: Vec<u32>,
    epoch: u32,
    /// The edge the forward search reached each event by, to rebuild a cycle.
    reached_by: Vec<u32>,
    forward: Vec<u32>,
    backward: Vec<u32>,
    places: Vec<u32>,
    /// After a refused insertion: the reasons of the cycle's edges, the refused edge's first.
    cycle_reasons: Vec<batsat::Lit>,
}

impl IncrementalOrder {
    fn new(preferred_position: &[u32]) -> IncrementalOrder {
        let events = preferred_position.len();
        IncrementalOrder {
            position: preferred_position.to_vec(),
            outgoing: vec![Vec::new(); events],
            incoming: vec![Vec::new(); events],
            edges: Vec::new(),
            visited: vec![0; events],
            epoch: 0,
            reached_by: vec![0; events],
            forward: Vec::new(),
            backward: Vec::new(),
            places: Vec::new(),
            cycle_reasons: Vec::new(),
        }
    }

    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // The stamps wrapped around: clear them so that no stale stamp matches.
            self.visited.fill(0);
            self.epoch = 1;
        }
    }

    /// Adds the edge `from → to` and returns true, or returns false and leaves the graph
    /// unchanged if the edge would close a cycle; `cycle_reasons` then holds the cycle's reasons.
    fn insert(&mut self, from: u32, to: u32, reason: Option<batsat::Lit>) -> bool {
        let lower = self.position[to as usize];
        let upper = self.position[from as usize];
        if lower > upper {
            self.push_edge(from, to, reason);
            return true;
        }
        self.cycle_reasons.clear();
        self.cycle_reasons.extend(reason);
        if from == to {
            return false;
        }

        // Forward: the events reachable from `to` that precede `from` in the current order. Every
        // path from `to` to `from` stays among them, so reaching `from` is the only way to find a
        // cycle.
        self.next_epoch();
        self.forward.clear();
        self.forward.push(to);
        self.visited[to as usize] = self.epoch;
        let mut head = 0;
        while head < self.forward.len() {
            let event = self.forward[head];
            head += 1;
            for &edge in &self.outgoing[event as usize] {
                let next = self.edges[edge as usize].to;
                if next == from {
                    self.collect_cycle(to, event, edge);
                    return false;
                }
                if self.position[next as usize] < upper && self.visited[next as usize] != self.epoch
                {
                    self.visited[next as usize] = self.epoch;
                    self.reached_by[next as usize] = edge;
                    self.forward.push(next);
                }
            }
        }

        // Backward: the events that reach `from` and follow `to` in the current order. No event
        // is in both sets (that would be a cycle), so one epoch serves both searches.
        self.backward.clear();
        self.backward.push(from);
        self.visited[from as usize] = self.epoch;
        let mut head = 0;
        while head < self.backward.len() {
            let event = self.backward[head];
            head += 1;
            for &edge in &self.incoming[event as usize] {
                let previous = self.edges[edge as usize].from;
                if self.position[previous as usize] > lower
                    && self.visited[previous as usize] != self.epoch
                {
                    self.visited[previous as usize] = self.epoch;
                    self.backward.push(previous);
                }
            }
        }

        // Reorder: the backward set moves before the forward set, both keeping their relative
        // order, into the places the two sets occupied.
        let position = &self.position;
        self.forward
            .sort_unstable_by_key(|&event| position[event as usize]);
        self.backward
            .sort_unstable_by_key(|&event| position[event as usize]);
        self.places.clear();
        self.places.extend(
            self.backward
                .iter()
                .chain(self.forward.iter())
                .map(|&event| position[event as usize]),
        );
        self.places.sort_unstable();
        for (&event, &place) in self
            .backward
            .iter()
            .chain(self.forward.iter())
            .zip(&self.places)
        {
            self.position[event as usize] = place;
        }
        self.push_edge(from, to, reason);
        true
    }

    /// Collects the reasons of the path the forward search found from `start` to `last`, and of
    /// `closing`, the edge from `last` back to the refused edge's source.
    fn collect_cycle(&mut self, start: u32, last: u32, closing: u32) {
        self.cycle_reasons
            .extend(self.edges[closing as usize].reason);
        let mut event = last;
        while event != start {
            let edge = self.edges[self.reached_by[event as usize] as usize];
            self.cycle_reasons.extend(edge.reason);
            event = edge.from;
        }
    }

    fn push_edge(&mut self, from: u32, to: u32, reason: Option<batsat::Lit>) {
        let index = self.edges.len() as u32;
        self.edges.push(Edge { from, to, reason });
        self.outgoing[from as usize].push(index);
        self.incoming[to as usize].push(index);
    }

    /// Removes the edges after the first `count`. The topological order stays valid, since it
    /// only ever had to respect more edges.
    fn truncate(&mut self, count: usize) {
        while self.edges.len() > count {
            let Some(edge) = self.edges.pop() else { break };
            // Edges leave in the reverse order they came, so each is last in both its lists.
            self.outgoing[edge.from as usize].pop();
            self.incoming[edge.to as usize].pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use batsat::intmap::AsIndex;
    use rand_core::{RngCore, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;

    /// Checks `order` against everything `problem` states, independently of the solver: it is a
    /// permutation, respects every hard edge, agrees with the model on every atom, and makes
    /// every clause true (atoms read off `order`, free booleans off the model).
    fn assert_valid(problem: &OrderProblem, order: &[usize]) {
        let formula = &problem.formula;
        let mut position = vec![usize::MAX; formula.events];
        for (place, &event) in order.iter().enumerate() {
            assert_eq!(
                position[event],
                usize::MAX,
                "event {event} appears twice in {order:?}"
            );
            position[event] = place;
        }
        assert_eq!(order.len(), formula.events, "{order:?} misses events");
        for &(from, to) in &formula.hard_edges {
            assert!(
                position[from as usize] < position[to as usize],
                "{order:?} breaks {from} → {to}"
            );
        }
        let holds = |lit: Lit| match formula.variables[lit.variable()] {
            Variable::Precedence { first, second } => {
                (position[first as usize] < position[second as usize]) != lit.is_negated()
            }
            Variable::Fresh => problem.value(lit).expect("a Sat solve has a model"),
        };
        for variable in 0..formula.variables.len() {
            let lit = Lit::new(variable, false);
            assert_eq!(
                problem.value(lit),
                Some(holds(lit)),
                "the model disagrees with {order:?}"
            );
        }
        for clause in formula.clauses() {
            assert!(
                clause.iter().any(|&lit| holds(lit)),
                "{order:?} breaks a clause"
            );
        }
    }

    fn expect_sat(problem: &mut OrderProblem) -> Vec<usize> {
        match problem.solve(u64::MAX) {
            Solution::Sat(order) => {
                assert_valid(problem, &order);
                order
            }
            other => panic!("expected a solution, got {other:?}"),
        }
    }

    #[test]
    fn atoms_ordering_events_in_a_cycle_are_unsat() {
        let mut two = OrderProblem::new(2);
        let forward = two.before(0, 1);
        let backward = two.before(1, 0);
        two.clause(&[forward]);
        two.clause(&[backward]);
        assert_eq!(two.solve(u64::MAX), Solution::Unsat);

        let mut three = OrderProblem::new(3);
        let atoms = [three.before(0, 1), three.before(1, 2), three.before(2, 0)];
        for atom in atoms {
            three.clause(&[atom]);
        }
        assert_eq!(three.solve(u64::MAX), Solution::Unsat);
    }

    #[test]
    fn a_cycle_of_hard_edges_is_unsat() {
        let mut problem = OrderProblem::new(4);
        problem.must_precede(0, 1);
        problem.must_precede(1, 2);
        problem.must_precede(2, 0);
        assert_eq!(problem.solve(u64::MAX), Solution::Unsat);

        let mut self_loop = OrderProblem::new(2);
        self_loop.must_precede(1, 1);
        assert_eq!(self_loop.solve(u64::MAX), Solution::Unsat);
    }

    #[test]
    fn a_problem_without_events_is_sat() {
        assert_eq!(OrderProblem::new(0).solve(0), Solution::Sat(Vec::new()));
    }

    #[test]
    fn an_empty_clause_is_unsat() {
        let mut problem = OrderProblem::new(2);
        problem.clause(&[]);
        assert_eq!(problem.solve(u64::MAX), Solution::Unsat);
    }

    #[test]
    fn a_satisfiable_problem_gets_an_order_that_respects_everything() {
        // Two threads, 0 → 1 and 2 → 3, each a critical section on one lock: one must finish
        // before the other starts. A free boolean says which; event 4 must follow both.
        let mut problem = OrderProblem::new(5);
        problem.must_precede(0, 1);
        problem.must_precede(2, 3);
        problem.must_precede(1, 4);
        problem.must_precede(3, 4);
        let first_thread_first = problem.fresh();
        let one_before_two = problem.before(1, 2);
        let three_before_zero = problem.before(3, 0);
        problem.clause(&[one_before_two, three_before_zero]);
        problem.clause(&[!first_thread_first, one_before_two]);
        problem.clause(&[first_thread_first, three_before_zero]);
        problem.clause(&[!first_thread_first]);
        let order = expect_sat(&mut problem);
        assert_eq!(order, vec![2, 3, 0, 1, 4]);
        assert_eq!(problem.value(first_thread_first), Some(false));
        assert_eq!(problem.value(three_before_zero), Some(true));
        assert_eq!(problem.value(!three_before_zero), Some(false));
    }

    #[test]
    fn before_names_one_variable_per_pair() {
        let mut problem = OrderProblem::new(3);
        let forward = problem.before(0, 2);
        assert_eq!(problem.before(2, 0), !forward);
        assert_eq!(problem.before(0, 2), forward);
        assert_ne!(problem.before(0, 1), forward);
        let fresh = problem.fresh();
        problem.clause(&[forward, fresh]);
        problem.clause(&[]);
        problem.must_precede(1, 2);
        assert_eq!(
            problem.size(),
            ProblemSize {
                precedence_atoms: 2,
                fresh_variables: 1,
                clauses: 2,
                literals: 2,
                hard_edges: 1
            }
        );
    }

    #[test]
    fn an_atom_that_contradicts_hard_edges_is_forced() {
        let mut problem = OrderProblem::new(3);
        problem.must_precede(0, 1);
        problem.must_precede(1, 2);
        let against = problem.before(2, 0);
        let other = problem.fresh();
        problem.prefer(!other);
        problem.clause(&[against, other]);
        expect_sat(&mut problem);
        assert_eq!(problem.value(against), Some(false));
        assert_eq!(problem.value(other), Some(true));

        problem.clause(&[!other]);
        assert_eq!(problem.solve(u64::MAX), Solution::Unsat);
    }

    #[test]
    fn a_solution_follows_the_preferred_order_where_it_can() {
        let mut problem = OrderProblem::new(4);
        problem.prefer_order(&[2, 0, 3, 1]);
        let three_before_zero = problem.before(3, 0);
        assert_eq!(expect_sat(&mut problem), vec![2, 0, 3, 1]);
        assert_eq!(problem.value(three_before_zero), Some(false));

        problem.clause(&[three_before_zero]);
        assert_eq!(expect_sat(&mut problem), vec![2, 3, 0, 1]);
    }

    #[test]
    fn assumptions_hold_for_one_solve_only() {
        let mut problem = OrderProblem::new(3);
        problem.must_precede(0, 1);
        let two_first = problem.before(2, 0);
        let two_last = problem.before(1, 2);
        assert_eq!(
            problem.solve_assuming(&[two_first, two_last], u64::MAX),
            Solution::Unsat
        );
        match problem.solve_assuming(&[two_last], u64::MAX) {
            Solution::Sat(order) => {
                assert_valid(&problem, &order);
                assert_eq!(order, vec![0, 1, 2]);
            }
            other => panic!("expected a solution, got {other:?}"),
        }
        assert_eq!(problem.value(two_first), Some(false));
        expect_sat(&mut problem);
    }

    /// Three critical sections on one lock, each of whose acquisitions is forced before every
    /// other's release: mutual exclusion is impossible, but only search finds that out.
    fn overlapping_critical_sections() -> OrderProblem {
        let sections = 3;
        let mut problem = OrderProblem::new(2 * sections);
        let (acquire, release) = (|s: usize| 2 * s, |s: usize| 2 * s + 1);
        for s in 0..sections {
            problem.must_precede(acquire(s), release(s));
            for t in 0..sections {
                if s != t {
                    problem.must_precede(acquire(t), release(s));
                }
            }
        }
        for s in 0..sections {
            for t in s + 1..sections {
                let s_first = problem.before(release(s), acquire(t));
                let t_first = problem.before(release(t), acquire(s));
                problem.clause(&[s_first, t_first]);
            }
        }
        problem
    }

    #[test]
    fn the_conflict_budget_bounds_the_search() {
        assert_eq!(overlapping_critical_sections().solve(0), Solution::Unknown);
        assert_eq!(
            overlapping_critical_sections().solve(1_000),
            Solution::Unsat
        );

        let mut unconstrained = OrderProblem::new(3);
        let atom = unconstrained.before(0, 2);
        unconstrained.clause(&[atom]);
        assert!(matches!(unconstrained.solve(0), Solution::Sat(_)));
    }

    /// A literal of a randomly generated problem, for the brute-force reference.
    #[derive(Clone, Copy, Debug)]
    enum SpecLit {
        Before(usize, usize),
        Fresh(usize, bool),
    }

    /// Hard edges and clauses added between two solves.
    #[derive(Debug, Default)]
    struct Stage {
        edges: Vec<(usize, usize)>,
        clauses: Vec<Vec<SpecLit>>,
    }

    /// A small random problem: hard edges and clauses, stated in two stages with a solve after
    /// each, and assumptions for the second solve.
    #[derive(Debug, Default)]
    struct Spec {
        events: usize,
        fresh: usize,
        stages: [Stage; 2],
        assumptions: Vec<SpecLit>,
        preferred: Option<Vec<usize>>,
    }

    fn below(rng: &mut Pcg64Mcg, bound: usize) -> usize {
        (rng.next_u64() % bound as u64) as usize
    }

    fn random_spec(rng: &mut Pcg64Mcg) -> Spec {
        let events = 3 + below(rng, 4);
        let fresh = below(rng, 3);
        let mut spec = Spec {
            events,
            fresh,
            ..Spec::default()
        };
        let random_lit = |rng: &mut Pcg64Mcg| {
            if fresh > 0 && below(rng, 4) == 0 {
                SpecLit::Fresh(below(rng, fresh), below(rng, 2) == 0)
            } else {
                let a = below(rng, events);
                let b = (a + 1 + below(rng, events - 1)) % events;
                SpecLit::Before(a, b)
            }
        };
        for stage in &mut spec.stages {
            for _ in 0..below(rng, events) {
                let a = below(rng, events);
                // Rarely a self-loop, which makes the problem unsatisfiable.
                let b = if below(rng, 60) == 0 {
                    a
                } else {
                    (a + 1 + below(rng, events - 1)) % events
                };
                stage.edges.push((a, b));
            }
            for _ in 0..1 + below(rng, events + 1) {
                let length = if below(rng, 50) == 0 {
                    0
                } else {
                    1 + below(rng, 3)
                };
                stage
                    .clauses
                    .push((0..length).map(|_| random_lit(rng)).collect());
            }
        }
        spec.assumptions = (0..below(rng, 3)).map(|_| random_lit(rng)).collect();
        if below(rng, 2) == 0 {
            let mut order: Vec<usize> = (0..events).collect();
            for i in (1..events).rev() {
                order.swap(i, below(rng, i + 1));
            }
            spec.preferred = Some(order);
        }
        spec
    }

    /// Whether some order of the events and some values of the free booleans satisfy the first
    /// `stages` stages of `spec` (and the assumptions, if asked), by trying them all.
    fn brute_force(spec: &Spec, stages: usize, with_assumptions: bool) -> bool {
        let mut order: Vec<usize> = (0..spec.events).collect();
        let mut position = vec![0; spec.events];
        let edges = || {
            spec.stages[..stages]
                .iter()
                .flat_map(|stage| stage.edges.iter())
        };
        let clauses = || {
            spec.stages[..stages]
                .iter()
                .flat_map(|stage| stage.clauses.iter())
        };
        let assumptions = if with_assumptions {
            &spec.assumptions[..]
        } else {
            &[]
        };
        loop {
            for (place, &event) in order.iter().enumerate() {
                position[event] = place;
            }
            if edges().all(|&(a, b)| position[a] < position[b]) {
                for fresh_values in 0..1u32 << spec.fresh {
                    let holds = |lit: &SpecLit| match *lit {
                        SpecLit::Before(a, b) => position[a] < position[b],
                        SpecLit::Fresh(index, positive) => {
                            (fresh_values >> index & 1 == 1) == positive
                        }
                    };
                    if clauses().all(|clause| clause.iter().any(holds))
                        && assumptions.iter().all(holds)
                    {
                        return true;
                    }
                }
            }
            if !next_permutation(&mut order) {
                return false;
            }
        }
    }

    /// Advances `items` to the next permutation in lexicographic order; false after the last.
    fn next_permutation(items: &mut [usize]) -> bool {
        let Some(pivot) = (1..items.len()).rev().find(|&i| items[i - 1] < items[i]) else {
            return false;
        };
        let successor = (pivot..items.len())
            .rev()
            .find(|&i| items[i] > items[pivot - 1])
            .unwrap_or(pivot);
        items.swap(pivot - 1, successor);
        items[pivot..].reverse();
        true
    }

    #[test]
    fn random_small_problems_agree_with_brute_force() {
        let mut answers = [0usize; 2];
        for seed in 0..3_000 {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            let spec = random_spec(&mut rng);
            let mut problem = OrderProblem::new(spec.events);
            if let Some(order) = &spec.preferred {
                problem.prefer_order(order);
            }
            let fresh: Vec<Lit> = (0..spec.fresh).map(|_| problem.fresh()).collect();
            let lit = |problem: &mut OrderProblem, spec_lit: &SpecLit| match *spec_lit {
                SpecLit::Before(a, b) => problem.before(a, b),
                SpecLit::Fresh(index, positive) if positive => fresh[index],
                SpecLit::Fresh(index, _) => !fresh[index],
            };
            for (stage_index, stage) in spec.stages.iter().enumerate() {
                for &(a, b) in &stage.edges {
                    problem.must_precede(a, b);
                }
                for clause in &stage.clauses {
                    let lits: Vec<Lit> = clause
                        .iter()
                        .map(|spec_lit| lit(&mut problem, spec_lit))
                        .collect();
                    problem.clause(&lits);
                }
                let expected = brute_force(&spec, stage_index + 1, false);
                let answer = problem.solve(u64::MAX);
                match &answer {
                    Solution::Sat(order) => assert_valid(&problem, order),
                    Solution::Unsat => {}
                    Solution::Unknown => panic!("seed {seed}: an unlimited budget ran out"),
                }
                assert_eq!(
                    matches!(answer, Solution::Sat(_)),
                    expected,
                    "seed {seed}: {spec:?}"
                );
                answers[usize::from(expected)] += 1;
            }
            let assumptions: Vec<Lit> = spec
                .assumptions
                .iter()
                .map(|spec_lit| lit(&mut problem, spec_lit))
                .collect();
            let expected = brute_force(&spec, 2, true);
            match problem.solve_assuming(&assumptions, u64::MAX) {
                Solution::Sat(order) => {
                    assert!(expected, "seed {seed}: {spec:?}");
                    assert_valid(&problem, &order);
                    assert!(assumptions
                        .iter()
                        .all(|&lit| problem.value(lit) == Some(true)));
                }
                Solution::Unsat => assert!(!expected, "seed {seed}: {spec:?}"),
                Solution::Unknown => panic!("seed {seed}: an unlimited budget ran out"),
            }
        }
        // Both answers must be common for the comparison to mean something.
        assert!(answers.iter().all(|&count| count > 1_000), "{answers:?}");
    }

    #[test]
    fn the_incremental_order_stays_topological_and_explains_cycles() {
        for seed in 0..200 {
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            let events = 2 + below(&mut rng, 12);
            let identity: Vec<u32> = (0..events as u32).collect();
            let mut graph = IncrementalOrder::new(&identity);
            let mut reasons = Vec::new();
            for step in 0..3 * events {
                if below(&mut rng, 8) == 0 {
                    let keep = below(&mut rng, graph.edges.len() + 1);
                    graph.truncate(keep);
                    reasons.truncate(keep);
                }
                let (from, to) = (
                    below(&mut rng, events) as u32,
                    below(&mut rng, events) as u32,
                );
                // Each edge gets its own literal so that a cycle's reasons name its edges.
                let reason = batsat::Lit::new(batsat::Var::from_index(step), true);
                let closes_cycle = from == to || reaches(&graph, to, from);
                let inserted = graph.insert(from, to, Some(reason));
                assert_eq!(inserted, !closes_cycle, "seed {seed}");
                if inserted {
                    reasons.push((reason, (from, to)));
                } else {
                    let mut cycle: Vec<(u32, u32)> = graph.cycle_reasons[1..]
                        .iter()
                        .map(|lit| {
                            reasons
                                .iter()
                                .find(|(reason, _)| reason == lit)
                                .expect("a known edge")
                                .1
                        })
                        .collect();
                    assert_eq!(graph.cycle_reasons[0], reason);
                    // The reasons after the refused edge's name a path from `to` back to `from`.
                    cycle.reverse();
                    let mut at = to;
                    for (edge_from, edge_to) in cycle {
                        assert_eq!(edge_from, at, "seed {seed}");
                        at = edge_to;
                    }
                    assert_eq!(at, from, "seed {seed}");
                }
                for edge in &graph.edges {
                    assert!(graph.position[edge.from as usize] < graph.position[edge.to as usize]);
                }
            }
        }
    }

    fn reaches(graph: &IncrementalOrder, from: u32, to: u32) -> bool {
        let mut seen = vec![false; graph.position.len()];
        let mut stack = vec![from];
        while let Some(event) = stack.pop() {
            if event == to {
                return true;
            }
            if !std::mem::replace(&mut seen[event as usize], true) {
                stack.extend(
                    graph.outgoing[event as usize]
                        .iter()
                        .map(|&edge| graph.edges[edge as usize].to),
                );
            }
        }
        false
    }

    /// An operation of a synthetic thread.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Operation {
        Acquire(usize),
        Release(usize),
        Read(usize),
        Write(usize),
    }

    /// A query about a synthetic trace.
    #[derive(Clone, Copy, Debug)]
    enum Query {
        /// Can the second event come before the first (which precedes it in the trace)?
        Reorder(usize, usize),
        /// Can this read (an index into `observed_read_from`) read from another write?
        OtherWriter(usize),
    }

    /// The order problem of a synthetic trace: `threads` threads of critical sections on three
    /// locks and reads and writes of six variables, run under a random schedule that respects
    /// the locks. Its constraints are TAME's: program order and a few cross-thread edges (as
    /// fork, join or fixed synchronisation would give) are hard; two critical sections on one
    /// lock in different threads do not overlap; and each read reads from exactly one of up to
    /// three writes, which precedes it with no other of them in between.
    struct SyntheticTrace {
        problem: OrderProblem,
        /// The read-from choice each read made in the trace.
        observed_read_from: Vec<Lit>,
        queries: Vec<Query>,
    }

    fn synthetic_trace(events: usize, threads: usize, seed: u64) -> SyntheticTrace {
        const LOCKS: usize = 3;
        const VARIABLES: usize = 6;
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let access = |rng: &mut Pcg64Mcg| {
            let variable = below(rng, VARIABLES);
            if below(rng, 2) == 0 {
                Operation::Read(variable)
            } else {
                Operation::Write(variable)
            }
        };
        // Events are numbered thread by thread, so within a thread numbers follow program order.
        let mut operations = Vec::new();
        let mut thread_of = Vec::new();
        let mut thread_start = Vec::new();
        for thread in 0..threads {
            thread_start.push(operations.len());
            let end = (thread + 1) * events / threads;
            while operations.len() < end {
                if below(&mut rng, 3) == 0 {
                    let lock = below(&mut rng, LOCKS);
                    operations.push(Operation::Acquire(lock));
                    for _ in 0..1 + below(&mut rng, 3) {
                        operations.push(access(&mut rng));
                    }
                    operations.push(Operation::Release(lock));
                } else {
                    operations.push(access(&mut rng));
                }
            }
            thread_of.resize(operations.len(), thread);
        }
        thread_start.push(operations.len());
        let events = operations.len();

        // A random schedule in which a lock's holder runs until it releases before anyone
        // else acquires it.
        let mut next = thread_start[..threads].to_vec();
        let mut holder = [None; LOCKS];
        let mut observed = Vec::with_capacity(events);
        while observed.len() < events {
            let enabled: Vec<usize> = (0..threads)
                .filter(|&thread| next[thread] < thread_start[thread + 1])
                .filter(|&thread| match operations[next[thread]] {
                    Operation::Acquire(lock) => holder[lock].is_none(),
                    _ => true,
                })
                .collect();
            let thread = enabled[below(&mut rng, enabled.len())];
            let event = next[thread];
            next[thread] += 1;
            match operations[event] {
                Operation::Acquire(lock) => holder[lock] = Some(thread),
                Operation::Release(lock) => holder[lock] = None,
                _ => {}
            }
            observed.push(event);
        }
        let mut position = vec![0; events];
        for (place, &event) in observed.iter().enumerate() {
            position[event] = place;
        }

        let mut problem = OrderProblem::new(events);
        problem.prefer_order(&observed);
        for thread in 0..threads {
            for event in thread_start[thread] + 1..thread_start[thread + 1] {
                problem.must_precede(event - 1, event);
            }
        }
        for _ in 0..events / 50 {
            let place = below(&mut rng, events - 1);
            let later = place + 1 + below(&mut rng, (events - place - 1).min(20));
            let (from, to) = (observed[place], observed[later]);
            if thread_of[from] != thread_of[to] {
                problem.must_precede(from, to);
            }
        }
        // "a precedes b" as a literal, or as a known truth value within one thread.
        let precedes = |problem: &mut OrderProblem, a: usize, b: usize| {
            if thread_of[a] == thread_of[b] {
                Err(a < b)
            } else {
                Ok(problem.before(a, b))
            }
        };
        let add = |problem: &mut OrderProblem, parts: &[Result<Lit, bool>]| {
            if !parts.contains(&Err(true)) {
                let lits: Vec<Lit> = parts.iter().filter_map(|part| part.ok()).collect();
                problem.clause(&lits);
            }
        };

        let mut sections: Vec<Vec<(usize, usize)>> = vec![Vec::new(); LOCKS];
        for (event, operation) in operations.iter().enumerate() {
            if let Operation::Acquire(lock) = *operation {
                let release = (event..).find(|&e| operations[e] == Operation::Release(lock));
                sections[lock].extend(release.map(|release| (event, release)));
            }
        }
        for lock_sections in &sections {
            for (index, &(acquire, release)) in lock_sections.iter().enumerate() {
                for &(other_acquire, other_release) in &lock_sections[index + 1..] {
                    if thread_of[acquire] != thread_of[other_acquire] {
                        let first = precedes(&mut problem, release, other_acquire);
                        let second = precedes(&mut problem, other_release, acquire);
                        add(&mut problem, &[first, second]);
                    }
                }
            }
        }

        let writes: Vec<Vec<usize>> = (0..VARIABLES)
            .map(|variable| {
                let mut writes: Vec<usize> = (0..events)
                    .filter(|&event| operations[event] == Operation::Write(variable))
                    .collect();
                writes.sort_by_key(|&event| position[event]);
                writes
            })
            .collect();
        let mut observed_read_from = Vec::new();
        for &read in &observed {
            let Operation::Read(variable) = operations[read] else {
                continue;
            };
            let writes = &writes[variable];
            let earlier = writes.partition_point(|&write| position[write] < position[read]);
            let Some(&observed_writer) = earlier.checked_sub(1).map(|index| &writes[index]) else {
                continue;
            };
            // The observed writer and the writes of other threads nearest to the read.
            let mut others: Vec<usize> = writes
                .iter()
                .copied()
                .filter(|&write| write != observed_writer && thread_of[write] != thread_of[read])
                .collect();
            others.sort_by_key(|&write| position[write].abs_diff(position[read]));
            let candidates: Vec<usize> = std::iter::once(observed_writer)
                .chain(others.into_iter().take(2))
                .collect();
            let choices: Vec<Lit> = candidates.iter().map(|_| problem.fresh()).collect();
            problem.prefer(choices[0]);
            observed_read_from.push(choices[0]);
            problem.clause(&choices);
            for (index, (&writer, &choice)) in candidates.iter().zip(&choices).enumerate() {
                for &other_choice in &choices[index + 1..] {
                    problem.clause(&[!choice, !other_choice]);
                }
                let writer_first = precedes(&mut problem, writer, read);
                add(&mut problem, &[Ok(!choice), writer_first]);
                for &other in candidates.iter().filter(|&&other| other != writer) {
                    let other_earlier = precedes(&mut problem, other, writer);
                    let other_later = precedes(&mut problem, read, other);
                    add(&mut problem, &[Ok(!choice), other_earlier, other_later]);
                }
            }
        }

        let mut queries = Vec::new();
        for index in 0..20 {
            if index % 2 == 0 {
                let place = below(&mut rng, events - 1);
                let first = observed[place];
                let second = observed[place + 1..]
                    .iter()
                    .copied()
                    .find(|&event| thread_of[event] != thread_of[first]);
                queries.extend(second.map(|second| Query::Reorder(first, second)));
            } else {
                queries.push(Query::OtherWriter(below(
                    &mut rng,
                    observed_read_from.len(),
                )));
            }
        }
        SyntheticTrace {
            problem,
            observed_read_from,
            queries,
        }
    }

    /// The assumption that asks `query`.
    fn query_literal(trace: &mut SyntheticTrace, query: Query) -> Lit {
        match query {
            Query::Reorder(first, second) => trace.problem.before(second, first),
            Query::OtherWriter(read) => !trace.observed_read_from[read],
        }
    }

    #[test]
    fn a_synthetic_trace_of_300_events_is_consistent_and_answers_queries() {
        let mut trace = synthetic_trace(300, 4, 7);
        let size = trace.problem.size();
        assert!(
            size.clauses > 1_000 && size.precedence_atoms > 500,
            "{size:?}"
        );
        expect_sat(&mut trace.problem);
        let mut answers = [0usize; 2];
        for query in trace.queries.clone() {
            let assumption = query_literal(&mut trace, query);
            let incremental = trace.problem.solve_assuming(&[assumption], 100_000);
            if let Solution::Sat(order) = &incremental {
                assert_valid(&trace.problem, order);
                assert_eq!(trace.problem.value(assumption), Some(true));
            }
            // A problem built from scratch, with the query as a clause, must agree.
            let mut fresh = synthetic_trace(300, 4, 7);
            let assumption = query_literal(&mut fresh, query);
            fresh.problem.clause(&[assumption]);
            let from_scratch = fresh.problem.solve(100_000);
            assert_eq!(
                matches!(incremental, Solution::Sat(_)),
                matches!(from_scratch, Solution::Sat(_)),
                "{query:?}"
            );
            assert!(!matches!(incremental, Solution::Unknown), "{query:?}");
            answers[usize::from(matches!(incremental, Solution::Sat(_)))] += 1;
        }
        assert!(answers.iter().all(|&count| count > 0), "{answers:?}");
    }
}
