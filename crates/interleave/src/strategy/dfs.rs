//! Exhaustive depth-first search over schedules (spec `dfs`), the baseline systematic
//! strategy of seed 002's evaluation, and the search tree it shares with DPOR (`dpor.rs`).
//!
//! The search is stateless: each execution follows a prefix of thread choices, then takes a
//! default choice at every later step (the running thread while it can run and has not just
//! yielded, otherwise the lowest-numbered enabled thread), and reports every step's candidate
//! threads. Each step is a node of the search tree; after an execution the search backtracks to
//! the deepest node with a thread still to try and replays the prefix up to it.
//!
//! Spin loops (loom's rule): a thread whose last step was a yield (`yield_now`, `spin_loop`, a
//! sleep, a timeout) is not a candidate again until another thread has taken a step that is not
//! a yield, unless no other thread can run. A fair scheduler would run the others meanwhile, so
//! the schedules left out only repeat a spinning thread's check without anything changing; with
//! the rule a correct spin-wait ends in every schedule and the search finishes, and a spin that
//! nobody ends is still reported, as the step bound, once the spinner is all that can run.
//!
//! Guarantee: when it finishes, every schedule of the program that respects the spin-loop rule
//! has run (for `dfs`; `dpor` runs at least one of each class of such schedules that differ
//! only in the order of independent steps). Nondeterministic choices (`interleave::rand`) are not enumerated: they are always 0.

use std::any::Any;

use super::{Outcome, Schedule, Strategy, View};

/// One step of the search tree: who could run, who ran, and which threads are still to try.
#[derive(Clone, Debug)]
struct Node {
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
    /// The length of the prefix the last planned execution replays.
    prefix: usize,
    finished: bool,
    executions: u64,
}

/// What one execution reports: the enabled threads and the chosen one at every step.
#[derive(Default)]
pub(super) struct Steps {
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
        let first_new = self.prefix.saturating_sub(1);
        self.nodes.truncate(self.prefix);
        for (enabled, &chosen) in steps.enabled.iter().zip(&steps.chosen).skip(self.prefix) {
            self.nodes.push(Node {
                backtrack: if all { enabled.clone() } else { vec![chosen] },
                enabled: enabled.clone(),
                chosen,
                done: vec![chosen],
            });
        }
        first_new
    }

    /// Requires `thread` to run from the state before step `step`; when it could not run there,
    /// every enabled thread.
    pub(super) fn require(&mut self, step: usize, thread: usize) {
        let node = &mut self.nodes[step];
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

/// The candidates and default continuation of the depth-first searches: the spin-loop rule
/// (see the module docs), then the running thread while it is a candidate, otherwise the
/// lowest-numbered candidate.
#[derive(Clone, Debug, Default)]
pub(super) struct Continuation {
    /// Threads whose last step was a yield, since another thread last made progress.
    yielded: Vec<bool>,
    /// The thread chosen last and its yield count before its step, to tell whether that step
    /// was a yield (the runtime counts yields, sleeps and timeouts).
    last: Option<(usize, u32)>,
    candidates: Vec<usize>,
}

impl Continuation {
    /// The threads the search may choose at this step: the enabled ones, less those that
    /// yielded since another thread made progress, unless that leaves none.
    pub(super) fn candidates(&mut self, view: &View<'_>) -> &[usize] {
        if let Some((thread, yields_before)) = self.last {
            if view.yields(thread) > yields_before {
                if self.yielded.len() <= thread {
                    self.yielded.resize(thread + 1, false);
                }
                self.yielded[thread] = true;
            } else {
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
            self.candidates.extend_from_slice(view.enabled());
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
        self.last = (chosen < view.thread_count()).then(|| (chosen, view.yields(chosen)));
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
        self.steps.enabled.push(candidates);
        self.steps.chosen.push(chosen);
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
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
