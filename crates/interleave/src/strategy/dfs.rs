//! Exhaustive depth-first search over schedules (spec `dfs`), the baseline systematic
//! strategy of seed 002's evaluation, and the search tree it shares with DPOR (`dpor.rs`).
//!
//! The search is stateless: each execution follows a prefix of thread choices, then takes a
//! default choice at every later step (the running thread while it can run and has not just
//! yielded, otherwise the lowest-numbered enabled thread), and reports every step's candidate
//! threads. Each step is a node of the search tree; after an execution the search backtracks to
//! the deepest node with a thread still to try and replays the prefix up to it.
//!
//! Spin loops (after loom's rule): a thread that yields (`yield_now`, `spin_loop`, a sleep, a
//! timeout) is marked, and a marked thread is not a candidate while an unmarked thread can run.
//! The marks are cleared when another thread makes progress: takes a step that can change what
//! the others observe (a store, a lock operation, a message, a spawn), not a load, a poll, a
//! `try_lock` or a yield, so two spinners cannot keep releasing each other. When only marked
//! threads can run, they all are candidates and all but the one that ran last lose their
//! marks (loom resets every mark there). A fair scheduler would run the others while
//! a thread spins, so the schedules left out only repeat a spinner's check with nothing
//! changed (and, as under loom, orders of a yielding thread's next steps between the reads of a
//! thread that runs meanwhile); with the rule a correct spin-wait ends in every schedule and
//! the search finishes, and a spin that nobody ends is still reported, as the step bound.
//!
//! Guarantee: when it finishes, every schedule of the program that respects the spin-loop rule
//! has run (for `dfs`; `dpor` runs at least one of each class of such schedules that differ
//! only in the order of independent steps), with every value of each nondeterministic choice
//! (`interleave::rand`) of at most `MAX_VALUE_BRANCHES` values. A choice from a larger range
//! tries its `MAX_VALUE_BRANCHES / 2` lowest and highest values, where off-by-one and overflow
//! bugs live; the values between are not explored.

use std::any::Any;

use super::{OpKind, Outcome, Schedule, Strategy, View};

/// How many values of one nondeterministic choice the search tries (see the module docs).
pub(super) const MAX_VALUE_BRANCHES: u64 = 16;

/// The values the search tries for a choice below `bound` (0: any `u64`).
fn value_branches(bound: u64) -> Vec<usize> {
    let half = MAX_VALUE_BRANCHES / 2;
    if bound != 0 && bound <= MAX_VALUE_BRANCHES {
        return (0..bound as usize).collect();
    }
    let top = bound.wrapping_sub(1);
    (0..half)
        .chain((0..half).rev().map(|below_top| top - below_top))
        .map(|value| value as usize)
        .collect()
}

/// One node of the search tree: a step (who could run, who ran, and which threads are still to
/// try) or a nondeterministic choice (the values to try, the one taken, those still to try).
#[derive(Clone, Debug)]
struct Node {
    /// A value choice rather than a step.
    value: bool,
    enabled: Vec<usize>,
    chosen: usize,
    /// Threads that have run (or are running) from this node's state.
    done: Vec<usize>,
    /// Threads that must run from this node's state (all enabled ones for plain DFS).
    backtrack: Vec<usize>,
}

/// The search tree of a stateless depth-first search.
#[derive(Clone, Debug, Default)]
pub(super) struct Tree {
    nodes: Vec<Node>,
    /// The node of each step (value choices are nodes between steps).
    step_nodes: Vec<usize>,
    /// The length of the prefix the last planned execution replays.
    prefix: usize,
    finished: bool,
    executions: u64,
}

/// What one execution reports: at every node, in order, whether it is a value choice, the
/// candidates and the one chosen.
#[derive(Default)]
pub(super) struct Steps {
    value: Vec<bool>,
    enabled: Vec<Vec<usize>>,
    chosen: Vec<usize>,
}

impl Tree {
    /// The schedule of the next execution, or `None` when the search is over.
    pub(super) fn plan(&mut self) -> Option<Box<dyn Schedule + Send>> {
        if self.finished {
            return None;
        }
        self.executions += 1;
        Some(Box::new(PrefixSchedule {
            prefix: self.nodes[..self.prefix].iter().map(|n| n.chosen).collect(),
            steps: Steps::default(),
            continuation: Continuation::default(),
        }))
    }

    /// Adds the steps past the prefix of the execution just observed, each with `backtrack`
    /// holding only the chosen thread when `all` is false, or every enabled thread when true.
    /// Returns the index of the first step that is new in this execution.
    pub(super) fn grow(&mut self, outcome: &Outcome, all: bool) -> usize {
        let Some(steps) = outcome.feedback.and_then(|f| f.downcast_ref::<Steps>()) else {
            return self.nodes.len();
        };
        self.nodes.truncate(self.prefix);
        let new = steps.enabled.iter().zip(&steps.chosen).zip(&steps.value);
        for ((enabled, &chosen), &value) in new.skip(self.prefix) {
            self.nodes.push(Node {
                value,
                // Every value of a choice is tried: no analysis says two values are equivalent.
                backtrack: if all || value {
                    enabled.clone()
                } else {
                    vec![chosen]
                },
                enabled: enabled.clone(),
                chosen,
                done: vec![chosen],
            });
        }
        let first_new = self.nodes[..self.prefix.saturating_sub(1)]
            .iter()
            .filter(|node| !node.value)
            .count();
        self.step_nodes.clear();
        self.step_nodes.extend(
            self.nodes
                .iter()
                .enumerate()
                .filter(|(_, node)| !node.value)
                .map(|(index, _)| index),
        );
        first_new
    }

    /// Requires `thread` to run from the state before step `step`; when it could not run there,
    /// every enabled thread.
    pub(super) fn require(&mut self, step: usize, thread: usize) {
        let Some(&index) = self.step_nodes.get(step) else {
            return;
        };
        let node = &mut self.nodes[index];
        if node.enabled.contains(&thread) {
            if !node.backtrack.contains(&thread) {
                node.backtrack.push(thread);
            }
        } else {
            node.backtrack = node.enabled.clone();
        }
    }

    /// Moves to the deepest node with a thread still to try; false when there is none.
    pub(super) fn backtrack(&mut self) -> bool {
        while let Some(node) = self.nodes.last_mut() {
            let next = node
                .backtrack
                .iter()
                .copied()
                .filter(|t| !node.done.contains(t))
                .min();
            if let Some(thread) = next {
                node.chosen = thread;
                node.done.push(thread);
                self.prefix = self.nodes.len();
                return true;
            }
            self.nodes.pop();
        }
        self.finished = true;
        false
    }

    /// The report lines both searches share.
    pub(super) fn stats(&self) -> Vec<(String, String)> {
        vec![
            ("schedules run".to_string(), self.executions.to_string()),
            (
                "covered".to_string(),
                if self.finished {
                    "the whole search space".to_string()
                } else {
                    format!(
                        "stopped by the execution budget at depth {}: not exhaustive",
                        self.prefix
                    )
                },
            ),
        ]
    }
}

/// Whether a step of `kind` that is not a yield can change what other threads observe.
fn makes_progress(kind: OpKind) -> bool {
    !matches!(
        kind,
        OpKind::AtomicLoad
            | OpKind::Read
            | OpKind::Poll
            | OpKind::Fence
            | OpKind::TryLock
            | OpKind::TryRwLock
            | OpKind::Yield
            | OpKind::Sleep
    )
}

/// The candidates and default continuation of the depth-first searches: the spin-loop rule
/// (see the module docs), then the running thread while it is a candidate, otherwise the
/// lowest-numbered candidate.
#[derive(Clone, Debug, Default)]
pub(super) struct Continuation {
    /// Threads that yielded since another thread last made progress.
    yielded: Vec<bool>,
    /// The thread chosen last, its yield count before its step (the runtime counts yields,
    /// sleeps and timeouts) and the kind of that step.
    last: Option<(usize, u32, OpKind)>,
    candidates: Vec<usize>,
}

impl Continuation {
    /// The threads the search may choose at this step: the enabled ones, less those that
    /// yielded since another thread made progress, unless that leaves none.
    pub(super) fn candidates(&mut self, view: &View<'_>) -> &[usize] {
        if let Some((thread, yields_before, kind)) = self.last {
            if view.yields(thread) > yields_before {
                if self.yielded.len() <= thread {
                    self.yielded.resize(thread + 1, false);
                }
                self.yielded[thread] = true;
            } else if makes_progress(kind) {
                // Progress by `thread` ends the wait of the others, not its own: a thread that
                // yields and then takes a step of its own loop (re-taking a lock, waiting
                // again) has not let anyone else run yet.
                for (other, yielded) in self.yielded.iter_mut().enumerate() {
                    if other != thread {
                        *yielded = false;
                    }
                }
            }
        }
        self.candidates.clear();
        let yielded = &self.yielded;
        self.candidates.extend(
            view.enabled()
                .iter()
                .copied()
                .filter(|&t| !yielded.get(t).copied().unwrap_or(false)),
        );
        if self.candidates.is_empty() {
            // Every thread that can run yielded: all are candidates, and all but the one that
            // ran last lose their marks, so that one goes last again after its next yield.
            self.candidates.extend_from_slice(view.enabled());
            let last = self.last.map(|(thread, ..)| thread);
            for (thread, yielded) in self.yielded.iter_mut().enumerate() {
                if Some(thread) != last {
                    *yielded = false;
                }
            }
        }
        &self.candidates
    }

    /// `forced` when given, otherwise the default choice among the step's `candidates`.
    pub(super) fn choose(&mut self, view: &View<'_>, forced: Option<usize>) -> usize {
        let candidates = &self.candidates;
        let chosen = forced.unwrap_or_else(|| match view.last_thread() {
            Some(last) if candidates.contains(&last) => last,
            _ => candidates[0],
        });
        // `chosen` may also be `ABANDON` (value schedules end hopeless executions).
        self.last = (chosen < view.thread_count())
            .then(|| view.pending(chosen))
            .flatten()
            .map(|op| (chosen, view.yields(chosen), op.kind));
        chosen
    }
}

/// One execution of a depth-first search: follow the prefix, then the default choices.
struct PrefixSchedule {
    prefix: Vec<usize>,
    steps: Steps,
    continuation: Continuation,
}

impl Schedule for PrefixSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        // A prefix that no longer fits the program is followed anyway: the runtime reports
        // the divergence.
        let forced = self.prefix.get(self.steps.chosen.len()).copied();
        let candidates = self.continuation.candidates(view).to_vec();
        let chosen = self.continuation.choose(view, forced);
        self.steps.value.push(false);
        self.steps.enabled.push(candidates);
        self.steps.chosen.push(chosen);
        chosen
    }

    fn next_value(&mut self, bound: u64) -> u64 {
        let values = value_branches(bound);
        let chosen = self
            .prefix
            .get(self.steps.chosen.len())
            .copied()
            .unwrap_or(values[0]);
        self.steps.value.push(true);
        self.steps.enabled.push(values);
        self.steps.chosen.push(chosen);
        chosen as u64
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(std::mem::take(&mut self.steps)))
    }
}

/// Plain depth-first search over every schedule (spec `dfs`).
#[derive(Clone, Debug, Default)]
pub struct Dfs {
    tree: Tree,
}

impl Dfs {
    /// A search from the first schedule.
    pub fn new() -> Dfs {
        Dfs::default()
    }
}

impl Strategy for Dfs {
    fn spec(&self) -> String {
        "dfs".to_string()
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        self.tree.plan()
    }

    fn round_size(&self) -> usize {
        1
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.tree.grow(outcome, true);
        self.tree.backtrack();
    }

    fn stats(&self) -> Vec<(String, String)> {
        self.tree.stats()
    }
}
