//! The constraints of TAME (seed 004, section 4.1) for one chunk and one shared read `r`:
//! Φmhb ∧ Φlock ∧ Φrw under the maximal causal model, solved by `super::order_solver`.
//!
//! A solution is a total order of the chunk's critical events; the events before `r` are the
//! prefix a confirming execution runs, and `r` comes last. The constraints:
//!
//! - **Φmhb** (hard edges): program order, spawn before the child's first event, the joined
//!   thread's last event before the join, and the observed order of every synchronisation
//!   object other than a lock (condition variables, channels, barriers, `Once`, parking, the
//!   virtual clock, and locks used with `try_lock`, whose results the trace does not show).
//! - **Φlock**: two critical sections of one lock in different threads (one of them exclusive)
//!   do not overlap when both acquisitions are in the prefix. A section still open at the end of
//!   its thread's window never ends in the prefix; one open at the chunk's cut started before it.
//! - **Φrw**: every read in the prefix reads a value equal to the one it read in the trace, from
//!   a write in the chunk or from the chunk's initial state (what the cut left), so every
//!   thread's control flow up to `r` is the observed one; `r` reads a different value.
//!
//! Before anything is encoded, each window is cut short at its first event that cannot run in
//! any prefix: one that needs an event outside the chunk (a spawn, the end of a joined thread,
//! a synchronisation predecessor, the release of a lock held at the cut) or a non-critical read
//! whose value the chunk's initial state does not give. Pairs already ordered by the hard edges
//! get no atom (TAME's must-happen-before optimisation), and a write that a must-happen-before
//! path puts between a write and a read removes that candidate.

use rustc_hash::{FxHashMap, FxHashSet};

use super::model::{shared_data_objects, Item, Step, Trace, Value};
use super::order_solver::{Lit, OrderProblem};
use super::partition::Chunk;
use crate::runtime::op::{Access, OpKind};

/// A constraint term: a literal or a constant that must-happen-before already decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Term {
    True,
    False,
    Lit(Lit),
}

impl std::ops::Not for Term {
    type Output = Term;
    fn not(self) -> Term {
        match self {
            Term::True => Term::False,
            Term::False => Term::True,
            Term::Lit(l) => Term::Lit(!l),
        }
    }
}

/// Adds the clause `terms` (a disjunction) to `problem`, simplified by its constants.
fn clause(problem: &mut OrderProblem, terms: &[Term]) {
    if terms.contains(&Term::True) {
        return;
    }
    let lits: Vec<Lit> = terms
        .iter()
        .filter_map(|t| match t {
            Term::Lit(l) => Some(*l),
            _ => None,
        })
        .collect();
    problem.clause(&lits);
}

/// One critical section of a lock within the chunk.
#[derive(Clone, Copy, Debug)]
struct Section {
    thread: u32,
    /// The acquiring node; `None`: held since the cut.
    acquire: Option<u32>,
    /// The releasing node; `None`: still held at the end of the window.
    release: Option<u32>,
    exclusive: bool,
}

/// One chunk, reduced to its critical events (nodes) with the must-happen-before order, its
/// lock sections, and each shared object's writes and initial value.
pub(crate) struct ChunkModel<'t> {
    trace: &'t Trace,
    /// Each thread's window, after cutting it short where it cannot run.
    pub chunk: Chunk,
    /// The critical steps of the windows, in trace order.
    pub nodes: Vec<u32>,
    node_of: FxHashMap<u32, u32>,
    /// `clocks[n * k + t]`: how many of thread `t`'s nodes must happen before or at node `n`.
    clocks: Vec<u32>,
    /// Each node's index among its thread's nodes.
    rank: Vec<u32>,
    hard_edges: Vec<(u32, u32)>,
    sections: Vec<Vec<Section>>,
    writes: FxHashMap<u32, Vec<u32>>,
    reads: Vec<u32>,
    initial: FxHashMap<u32, Value>,
}

/// Whether `kind` releases a lock (a waiter releases its mutex). A condition variable's wait
/// and wake are on two chains, the condition variable's and the mutex's; only the mutex is a
/// reorderable lock, so on a lock's chain these tests need no chain position.
fn releases(kind: OpKind) -> bool {
    matches!(kind, OpKind::Unlock | OpKind::RwUnlock | OpKind::Wait)
}

impl<'t> ChunkModel<'t> {
    pub fn new(trace: &'t Trace, chunk: &Chunk) -> ChunkModel<'t> {
        let mut chunk = chunk.clone();
        let shared = loop {
            let before = chunk.end.clone();
            truncate_blocked(trace, &mut chunk);
            let shared = shared_objects(trace, &chunk);
            truncate_unreadable(trace, &mut chunk, &shared);
            if chunk.end == before {
                break shared;
            }
        };
        let k = trace.threads;
        let mut nodes = Vec::new();
        let mut window_steps: Vec<u32> = Vec::new();
        for t in 0..k {
            for item in &trace.items[t][chunk.cut[t] as usize..chunk.end[t] as usize] {
                if let Item::Step(s) = *item {
                    window_steps.push(s);
                }
            }
        }
        window_steps.sort_unstable();
        for &s in &window_steps {
            if is_critical(trace, &trace.steps[s as usize], &shared) {
                nodes.push(s);
            }
        }
        let node_of: FxHashMap<u32, u32> = nodes
            .iter()
            .enumerate()
            .map(|(n, &s)| (s, n as u32))
            .collect();
        let mut model = ChunkModel {
            trace,
            chunk,
            nodes,
            node_of,
            clocks: Vec::new(),
            rank: Vec::new(),
            hard_edges: Vec::new(),
            sections: Vec::new(),
            writes: FxHashMap::default(),
            reads: Vec::new(),
            initial: FxHashMap::default(),
        };
        model.order_and_sections();
        model.data(&shared);
        model
    }

    /// The hard edges, their must-happen-before clocks, and the lock sections.
    fn order_and_sections(&mut self) {
        let trace = self.trace;
        let k = trace.threads;
        let mut last_node: Vec<Option<u32>> = vec![None; k];
        let mut counts = vec![0u32; k];
        let mut open: FxHashMap<(u32, u32), Vec<usize>> = FxHashMap::default();
        let mut section_of_lock: FxHashMap<u32, usize> = FxHashMap::default();
        self.clocks = vec![0; self.nodes.len() * k];
        for n in 0..self.nodes.len() {
            let step = &trace.steps[self.nodes[n] as usize];
            let t = step.thread as usize;
            let mut sources = vec![];
            if let Some(previous) = last_node[t] {
                sources.push(previous);
            } else if let Some(spawn) = trace.spawned_by[t].and_then(|s| self.node_of.get(&s)) {
                sources.push(*spawn);
            }
            if step.kind == OpKind::Join {
                if let Some(last) = last_node.get(step.arg as usize).copied().flatten() {
                    sources.push(last);
                }
            }
            for (slot, chain) in trace.chains(step).into_iter().enumerate() {
                let Some(chain) = chain else { continue };
                if trace.is_reorderable_lock(chain) {
                    let sections = self.sections_of(&mut section_of_lock, chain);
                    let key = (chain, step.thread);
                    if step.kind.is_lock_acquisition() {
                        self.sections[sections].push(Section {
                            thread: step.thread,
                            acquire: Some(n as u32),
                            release: None,
                            exclusive: step.kind != OpKind::ReadLock,
                        });
                        open.entry(key)
                            .or_default()
                            .push(self.sections[sections].len() - 1);
                    } else if releases(step.kind) {
                        match open.get_mut(&key).and_then(Vec::pop) {
                            Some(index) => self.sections[sections][index].release = Some(n as u32),
                            None => self.sections[sections].push(Section {
                                thread: step.thread,
                                acquire: None,
                                release: Some(n as u32),
                                exclusive: trace.objects[chain as usize].kind
                                    == crate::runtime::op::ObjectKind::Mutex,
                            }),
                        }
                    }
                } else if let Some(previous) = trace.chain_previous[self.nodes[n] as usize][slot] {
                    if let Some(&p) = self.node_of.get(&previous) {
                        sources.push(p);
                    }
                }
            }
            let (before, row) = self.clocks.split_at_mut(n * k);
            for &source in &sources {
                self.hard_edges.push((source, n as u32));
                let source = source as usize * k;
                for (mine, theirs) in row[..k].iter_mut().zip(&before[source..source + k]) {
                    *mine = (*mine).max(*theirs);
                }
            }
            counts[t] += 1;
            row[t] = counts[t];
            self.rank.push(counts[t] - 1);
            last_node[t] = Some(n as u32);
        }
    }

    fn sections_of(&mut self, index: &mut FxHashMap<u32, usize>, lock: u32) -> usize {
        *index.entry(lock).or_insert_with(|| {
            self.sections.push(Vec::new());
            self.sections.len() - 1
        })
    }

    /// Each shared object's reads, writes and initial value in the chunk.
    fn data(&mut self, shared: &FxHashSet<u32>) {
        for (n, &s) in self.nodes.iter().enumerate() {
            let step = &self.trace.steps[s as usize];
            if !step.kind.is_data_access() {
                continue;
            }
            if step.written.is_some() {
                self.writes.entry(step.object).or_default().push(n as u32);
            }
            if step.read.is_some() {
                self.reads.push(n as u32);
            }
        }
        for &object in shared {
            self.initial
                .insert(object, initial_value(self.trace, &self.chunk, object));
        }
    }

    /// Whether node `a` must happen before (or is) node `b`.
    fn ordered(&self, a: u32, b: u32) -> bool {
        let k = self.trace.threads;
        let t = self.trace.steps[self.nodes[a as usize] as usize].thread as usize;
        self.clocks[b as usize * k + t] > self.rank[a as usize]
    }

    /// The term "node `a` comes before node `b`".
    fn before(&self, problem: &mut OrderProblem, a: u32, b: u32) -> Term {
        if a == b {
            Term::False
        } else if self.ordered(a, b) {
            Term::True
        } else if self.ordered(b, a) {
            Term::False
        } else {
            Term::Lit(problem.before(a as usize, b as usize))
        }
    }

    /// The chunk's reads that a branch later in the same window could depend on: the
    /// candidates for `r`, each with the branch events that follow it.
    pub fn candidates(&self) -> Vec<(u32, Vec<u32>)> {
        let trace = self.trace;
        let mut out = Vec::new();
        for &n in &self.reads {
            let step = &trace.steps[self.nodes[n as usize] as usize];
            let t = step.thread as usize;
            let window = &trace.items[t][step.position as usize + 1..self.chunk.end[t] as usize];
            let branches: Vec<u32> = window
                .iter()
                .filter_map(|item| match item {
                    Item::Branch(b) => Some(*b),
                    Item::Step(_) => None,
                })
                .collect();
            if !branches.is_empty() && self.can_change(n) {
                out.push((n, branches));
            }
        }
        out
    }

    /// Whether some write of the chunk, or its initial state, offers `r` another value.
    fn can_change(&self, r: u32) -> bool {
        let step = &self.trace.steps[self.nodes[r as usize] as usize];
        let read = step.read;
        let writes = self.writes.get(&step.object).map_or(&[][..], Vec::as_slice);
        writes.iter().any(|&w| {
            w != r
                && !self.ordered(r, w)
                && self.trace.steps[self.nodes[w as usize] as usize].written != read
        }) || self.initial.get(&step.object).copied() != read
    }

    /// The order problem whose solutions are the prefixes ending with node `r` in which `r`
    /// reads a new value.
    pub fn problem(&self, r: u32) -> OrderProblem {
        let mut problem = OrderProblem::new(self.nodes.len());
        for &(a, b) in &self.hard_edges {
            problem.must_precede(a as usize, b as usize);
        }
        let observed: Vec<usize> = (0..self.nodes.len()).collect();
        problem.prefer_order(&observed);
        let in_prefix = |problem: &mut OrderProblem, n: Option<u32>| match n {
            None => Term::True,
            Some(n) if n == r => Term::True,
            Some(n) => self.before(problem, n, r),
        };
        for sections in &self.sections {
            for (i, s1) in sections.iter().enumerate() {
                for s2 in &sections[i + 1..] {
                    if s1.thread == s2.thread || !(s1.exclusive || s2.exclusive) {
                        continue;
                    }
                    let first = match (s1.release, s2.acquire) {
                        (Some(release), Some(acquire)) => {
                            self.before(&mut problem, release, acquire)
                        }
                        _ => Term::False,
                    };
                    let second = match (s2.release, s1.acquire) {
                        (Some(release), Some(acquire)) => {
                            self.before(&mut problem, release, acquire)
                        }
                        _ => Term::False,
                    };
                    let in1 = in_prefix(&mut problem, s1.acquire);
                    let in2 = in_prefix(&mut problem, s2.acquire);
                    clause(&mut problem, &[!in1, !in2, first, second]);
                }
            }
        }
        for &q in &self.reads {
            if q == r {
                continue;
            }
            let in_q = in_prefix(&mut problem, Some(q));
            if in_q == Term::False {
                continue;
            }
            let mut options = vec![!in_q];
            self.read_options(&mut problem, q, true, &mut options);
            clause(&mut problem, &options);
        }
        let mut options = Vec::new();
        self.read_options(&mut problem, r, false, &mut options);
        clause(&mut problem, &options);
        problem
    }

    /// Appends the ways node `q` can read a value equal (`same`) or unequal to its observed
    /// one: from a write of the chunk, or from the initial state.
    fn read_options(&self, problem: &mut OrderProblem, q: u32, same: bool, out: &mut Vec<Term>) {
        let step = &self.trace.steps[self.nodes[q as usize] as usize];
        let read = step.read;
        let writes = self.writes.get(&step.object).map_or(&[][..], Vec::as_slice);
        let others: Vec<u32> = writes.iter().copied().filter(|&w| w != q).collect();
        let value_of = |w: u32| self.trace.steps[self.nodes[w as usize] as usize].written;
        for &w in &others {
            if (value_of(w) == read) != same || self.ordered(q, w) {
                continue;
            }
            if others
                .iter()
                .any(|&v| v != w && self.ordered(w, v) && self.ordered(v, q))
            {
                continue;
            }
            let choice = problem.fresh();
            // The search starts from the trace: a read keeps its observed writer first.
            if same && step.read_from == Some(self.nodes[w as usize]) {
                problem.prefer(choice);
            }
            let reads_from = Term::Lit(choice);
            let w_before_q = self.before(problem, w, q);
            clause(problem, &[!reads_from, w_before_q]);
            for &v in &others {
                if v == w {
                    continue;
                }
                let v_before_w = self.before(problem, v, w);
                let q_before_v = self.before(problem, q, v);
                clause(problem, &[!reads_from, v_before_w, q_before_v]);
            }
            out.push(reads_from);
        }
        if (self.initial.get(&step.object).copied() == read) == same
            && !others.iter().any(|&v| self.ordered(v, q))
        {
            let choice = problem.fresh();
            if same
                && step
                    .read_from
                    .is_none_or(|w| !self.node_of.contains_key(&w))
            {
                problem.prefer(choice);
            }
            let initial = Term::Lit(choice);
            for &v in &others {
                let q_before_v = self.before(problem, q, v);
                clause(problem, &[!initial, q_before_v]);
            }
            out.push(initial);
        }
    }

    /// The value `object` holds when the chunk's windows begin.
    pub fn initial_of(&self, object: u32) -> Option<Value> {
        self.initial.get(&object).copied()
    }

    pub fn step(&self, node: u32) -> &'t Step {
        &self.trace.steps[self.nodes[node as usize] as usize]
    }
}

/// Whether a window step takes part in the order problem: a data access to an object shared in
/// the chunk, or a synchronisation step.
fn is_critical(trace: &Trace, step: &Step, shared: &FxHashSet<u32>) -> bool {
    if step.kind.is_data_access() {
        return shared.contains(&step.object);
    }
    match step.kind {
        OpKind::Spawn | OpKind::Join => true,
        kind => kind.access() == Access::Sync || trace.chains(step) != [None, None],
    }
}

/// The objects that two threads access in the chunk's windows, one of them writing.
fn shared_objects(trace: &Trace, chunk: &Chunk) -> FxHashSet<u32> {
    shared_data_objects((0..trace.threads).flat_map(|t| {
        trace.items[t][chunk.cut[t] as usize..chunk.end[t] as usize]
            .iter()
            .filter_map(|item| match *item {
                Item::Step(s) => Some(&trace.steps[s as usize]),
                Item::Branch(_) => None,
            })
    }))
}

/// Whether `step` lies in the chunk's cut or windows.
fn in_scope(trace: &Trace, chunk: &Chunk, step: u32) -> bool {
    let s = &trace.steps[step as usize];
    s.position < chunk.end[s.thread as usize]
}

/// Cuts each window short at its first step that needs a step outside the chunk.
fn truncate_blocked(trace: &Trace, chunk: &mut Chunk) {
    loop {
        let mut changed = false;
        for t in 0..trace.threads {
            let window = chunk.cut[t] as usize..chunk.end[t] as usize;
            let blocked = trace.items[t][window].iter().find_map(|item| {
                let Item::Step(s) = *item else { return None };
                is_blocked(trace, chunk, s).then_some(trace.steps[s as usize].position)
            });
            if let Some(position) = blocked {
                chunk.end[t] = position;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

fn is_blocked(trace: &Trace, chunk: &Chunk, s: u32) -> bool {
    let step = &trace.steps[s as usize];
    let t = step.thread as usize;
    if step.position == 0 && trace.spawned_by[t].is_some_and(|p| !in_scope(trace, chunk, p)) {
        return true;
    }
    if step.kind == OpKind::Join {
        let joined = step.arg as usize;
        if chunk.end.get(joined).copied() != trace.items.get(joined).map(|i| i.len() as u32) {
            return true;
        }
    }
    for (slot, chain) in trace.chains(step).into_iter().enumerate() {
        let (Some(chain), Some(previous)) = (chain, trace.chain_previous[s as usize][slot]) else {
            continue;
        };
        if in_scope(trace, chunk, previous) {
            continue;
        }
        if !trace.is_reorderable_lock(chain) {
            return true;
        }
        // The lock's previous holder releases it after its window: only a section that
        // started inside that window can be reordered after this acquisition.
        let released = &trace.steps[previous as usize];
        let holder_start = trace
            .chains(released)
            .iter()
            .position(|c| *c == Some(chain))
            .and_then(|slot| trace.chain_previous[previous as usize][slot]);
        let started_in_window = holder_start.is_some_and(|a| {
            let acquire = &trace.steps[a as usize];
            acquire.position >= chunk.cut[acquire.thread as usize] && in_scope(trace, chunk, a)
        });
        if !started_in_window {
            return true;
        }
    }
    false
}

/// Cuts each window short at its first read of an unshared object that would not read its
/// observed value (the chunk's initial state differs from what the read saw).
fn truncate_unreadable(trace: &Trace, chunk: &mut Chunk, shared: &FxHashSet<u32>) {
    let mut initial: FxHashMap<u32, Value> = FxHashMap::default();
    for t in 0..trace.threads {
        let mut own: FxHashMap<u32, Value> = FxHashMap::default();
        let window = chunk.cut[t] as usize..chunk.end[t] as usize;
        let mut stop = None;
        for item in &trace.items[t][window] {
            let Item::Step(s) = *item else { continue };
            let step = &trace.steps[s as usize];
            if !step.kind.is_data_access() || shared.contains(&step.object) {
                continue;
            }
            if let Some(read) = step.read {
                let seen = match own.get(&step.object) {
                    Some(value) => *value,
                    None => *initial
                        .entry(step.object)
                        .or_insert_with(|| initial_value(trace, chunk, step.object)),
                };
                if seen != read {
                    stop = Some(step.position);
                    break;
                }
            }
            if let Some(written) = step.written {
                own.insert(step.object, written);
            }
        }
        if let Some(position) = stop {
            chunk.end[t] = position;
        }
    }
}

/// The value `object` holds after the chunk's cut: the last write among the cut's steps, in
/// trace order.
fn initial_value(trace: &Trace, chunk: &Chunk, object: u32) -> Value {
    trace
        .last_write_before(object, &chunk.cut)
        .and_then(|w| trace.steps[w as usize].written)
        .unwrap_or(trace.objects[object as usize].initial)
}

#[cfg(test)]
mod tests {
    //! The encoding against brute force: for small programs, every candidate read's problem is
    //! satisfiable exactly when some interleaving of the chunk's critical events, simulated
    //! step by step (program order, spawn, join, lock ownership, observed synchronisation order,
    //! and the value every read sees), reaches the read with a new value while every earlier
    //! read keeps its observed one.

    use super::*;
    use crate::cell::Var;
    use crate::config::Config;
    use crate::explore::limits;
    use crate::runtime::{self, Limits};
    use crate::ssb::model::Trace;
    use crate::ssb::order_solver::Solution;
    use crate::ssb::partition::{chunks, Partition};
    use crate::strategy::random::Random;
    use crate::strategy::Strategy;
    use crate::sync::{Arc, Condvar, Mutex, RwLock};
    use crate::thread;

    /// Whether some interleaving of `model`'s nodes reaches `r` with a new value.
    fn brute_force(model: &ChunkModel<'_>, r: u32) -> bool {
        let mut placed = vec![false; model.nodes.len()];
        search(model, r, &mut placed, &mut Vec::new())
    }

    fn search(model: &ChunkModel<'_>, r: u32, placed: &mut [bool], order: &mut Vec<u32>) -> bool {
        for n in 0..model.nodes.len() as u32 {
            if placed[n as usize] || !can_place(model, placed, order, n, r) {
                continue;
            }
            if n == r {
                return true;
            }
            placed[n as usize] = true;
            order.push(n);
            let found = search(model, r, placed, order);
            order.pop();
            placed[n as usize] = false;
            if found {
                return true;
            }
        }
        false
    }

    fn can_place(model: &ChunkModel<'_>, placed: &[bool], order: &[u32], n: u32, r: u32) -> bool {
        let trace = model.trace;
        let step = model.step(n);
        let thread_of = |m: u32| model.step(m).thread;
        // Program order, spawn, join.
        let earlier_unplaced = (0..n).any(|m| thread_of(m) == step.thread && !placed[m as usize]);
        if earlier_unplaced {
            return false;
        }
        if let Some(spawn) =
            trace.spawned_by[step.thread as usize].and_then(|s| model.node_of.get(&s))
        {
            if !placed[*spawn as usize] {
                return false;
            }
        }
        if step.kind == OpKind::Join
            && (0..model.nodes.len() as u32)
                .any(|m| thread_of(m) == step.arg && !placed[m as usize])
        {
            return false;
        }
        // Synchronisation objects other than locks keep their observed order; locks are
        // simulated.
        for (slot, chain) in trace.chains(step).into_iter().enumerate() {
            let Some(chain) = chain else { continue };
            if trace.is_reorderable_lock(chain) {
                let acquiring = step.kind.is_lock_acquisition();
                if acquiring && !lock_free(model, order, chain, step.kind == OpKind::ReadLock) {
                    return false;
                }
            } else if let Some(previous) =
                trace.chain_previous[model.nodes[n as usize] as usize][slot]
            {
                if model
                    .node_of
                    .get(&previous)
                    .is_some_and(|&p| !placed[p as usize])
                {
                    return false;
                }
            }
        }
        // Values.
        let Some(read) = step.read else { return true };
        let seen = order
            .iter()
            .rev()
            .map(|&m| model.step(m))
            .find(|s| s.object == step.object && s.written.is_some())
            .and_then(|s| s.written)
            .or_else(|| model.initial.get(&step.object).copied());
        (seen == Some(read)) != (n == r)
    }

    /// Whether `lock` can be taken after `order` (shared: by a reader).
    fn lock_free(model: &ChunkModel<'_>, order: &[u32], lock: u32, shared: bool) -> bool {
        let mut writers = 0i32;
        let mut readers = 0i32;
        for &m in order {
            let s = model.step(m);
            if !model.trace.chains(s).contains(&Some(lock)) {
                continue;
            }
            if s.kind.is_lock_acquisition() {
                if s.kind == OpKind::ReadLock {
                    readers += 1;
                } else {
                    writers += 1;
                }
            } else if releases(s.kind) {
                // A release ends the thread's own latest section; per-thread nesting is
                // program order, so counting is enough here.
                let reader_section = order
                    .iter()
                    .rev()
                    .map(|&a| model.step(a))
                    .find(|a| {
                        a.thread == s.thread && a.object == lock && a.kind.is_lock_acquisition()
                    })
                    .is_some_and(|a| a.kind == OpKind::ReadLock);
                if reader_section {
                    readers -= 1;
                } else {
                    writers -= 1;
                }
            }
        }
        writers <= 0 && (shared || readers <= 0)
    }

    fn traces_of(program: fn(), seeds: u64) -> Vec<Trace> {
        (0..seeds)
            .map(|seed| {
                let schedule = Random.plan(0, seed).unwrap();
                let limits = Limits {
                    races: crate::RaceMode::Warn,
                    log_values: true,
                    memory: crate::MemoryModel::SequentiallyConsistent,
                    spurious_cas_failures: false,
                    ..limits(&Config::default())
                };
                let ex = runtime::run(&program, std::panic::Location::caller(), schedule, limits);
                Trace::of(&ex)
            })
            .collect()
    }

    /// Checks every candidate of every seed's trace; returns (satisfiable, unsatisfiable).
    fn compare(program: fn()) -> (u32, u32) {
        let mut counts = (0, 0);
        for trace in traces_of(program, 12) {
            let (all, _) = chunks(&trace, Partition::Whole);
            for chunk in &all {
                let model = ChunkModel::new(&trace, chunk);
                for &r in &model.reads {
                    let expected = brute_force(&model, r);
                    let solved = match model.problem(r).solve(1_000_000) {
                        Solution::Sat(_) => true,
                        Solution::Unsat => false,
                        Solution::Unknown => panic!("a tiny problem ran out of budget"),
                    };
                    assert_eq!(solved, expected, "read {r} of {:?}", model.step(r));
                    if solved {
                        counts.0 += 1;
                    } else {
                        counts.1 += 1;
                    }
                }
            }
        }
        counts
    }

    fn two_writers_two_readers() {
        let x = Arc::new(Var::new(0));
        let y = Arc::new(Var::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x2.set(1);
            y2.set(1);
        });
        let a = x.get();
        let b = y.get();
        crate::branch(a == b);
        t.join().unwrap();
    }

    fn lock_across_write_and_read() {
        let m = Arc::new(Mutex::new(()));
        let x = Arc::new(Var::new(0));
        let (m2, x2) = (m.clone(), x.clone());
        let t = thread::spawn(move || {
            let _g = m2.lock().unwrap();
            x2.set(2);
        });
        {
            let _g = m.lock().unwrap();
            x.set(1);
            crate::branch(x.get() == 1);
        }
        t.join().unwrap();
        crate::branch(x.get() == 1);
    }

    fn join_before_read() {
        let x = Arc::new(Var::new(0));
        let x2 = x.clone();
        let y = Arc::new(Var::new(0));
        let y2 = y.clone();
        let t = thread::spawn(move || {
            x2.set(1);
            y2.set(1);
        });
        crate::branch(y.get() == 1);
        t.join().unwrap();
        crate::branch(x.get() == 1);
    }

    fn readers_and_writer() {
        let lock = Arc::new(RwLock::new(()));
        let x = Arc::new(Var::new(0));
        let (lock2, x2) = (lock.clone(), x.clone());
        let t = thread::spawn(move || {
            let _w = lock2.write().unwrap();
            x2.set(1);
            x2.set(2);
        });
        {
            let _r = lock.read().unwrap();
            crate::branch(x.get() == 1);
        }
        t.join().unwrap();
    }

    fn condvar_flag() {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let data = Arc::new(Var::new(0));
        let (state2, data2) = (state.clone(), data.clone());
        let t = thread::spawn(move || {
            data2.set(7);
            *state2.0.lock().unwrap() = true;
            state2.1.notify_one();
        });
        let mut ready = state.0.lock().unwrap();
        while !*ready {
            ready = state.1.wait(ready).unwrap();
        }
        drop(ready);
        crate::branch(data.get() == 7);
        t.join().unwrap();
    }

    #[test]
    fn the_encoding_agrees_with_brute_force() {
        let (mut sat, mut unsat) = (0, 0);
        for program in [
            two_writers_two_readers as fn(),
            lock_across_write_and_read,
            join_before_read,
            readers_and_writer,
            condvar_flag,
        ] {
            let (s, u) = compare(program);
            sat += s;
            unsat += u;
        }
        assert!(sat > 20 && unsat > 20, "sat {sat}, unsat {unsat}");
    }

    /// Whether the main thread's `index`-th read can read a new value in some reordering.
    fn main_read_can_change(trace: &Trace, index: usize) -> bool {
        let (all, _) = chunks(trace, Partition::Whole);
        let model = ChunkModel::new(trace, &all[0]);
        let reads: Vec<u32> = model
            .reads
            .iter()
            .copied()
            .filter(|&r| model.step(r).thread == 0)
            .collect();
        matches!(
            model.problem(reads[index]).solve(1_000_000),
            Solution::Sat(_)
        )
    }

    #[test]
    fn a_lock_held_across_write_and_read_or_a_join_leaves_no_solution() {
        for trace in traces_of(lock_across_write_and_read, 12) {
            // The read in the critical section that wrote the value.
            assert!(!main_read_can_change(&trace, 0));
        }
        for trace in traces_of(join_before_read, 12) {
            // The read of `y` before the join can move; the read of `x` after it cannot.
            assert!(main_read_can_change(&trace, 0));
            assert!(!main_read_can_change(&trace, 1));
        }
    }
}
