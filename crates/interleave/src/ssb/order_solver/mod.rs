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

use std::ops::Not;

use batsat::{lbool, SolverInterface};
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

mod solver;
mod theory;
mod topological;

#[cfg(test)]
mod tests;

use solver::Engine;
