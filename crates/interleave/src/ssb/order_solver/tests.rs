//! The order solver against brute force, and the incremental order's invariants.

use batsat::intmap::AsIndex;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::topological::IncrementalOrder;
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
                    SpecLit::Fresh(index, positive) => (fresh_values >> index & 1 == 1) == positive,
                };
                if clauses().all(|clause| clause.iter().any(holds)) && assumptions.iter().all(holds)
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
