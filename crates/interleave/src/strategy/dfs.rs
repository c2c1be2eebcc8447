//! Exhaustive depth-first search over schedules (spec `dfs`), the baseline systematic
//! strategy of seed 002's evaluation, and the search tree it shares with DPOR (`dpor.rs`).
//!
//! The search is stateless: each execution follows a prefix of choices, then takes a default
//! choice at every later one (the running thread while it may run and has not just yielded,
//! otherwise the lowest-numbered thread that may; the value 0), and reports every choice with
//! its options. Each choice is a node of the search tree; after an execution the search
//! backtracks to the deepest node with an option still to try and replays the prefix up to it.
//!
//! Choices are of two kinds. A thread choice is among the enabled threads that the yield rule
//! ([`YieldRule`]) lets run: a thread that yields (`thread::yield_now`, `hint::spin_loop`, a
//! sleep, a wait that ends by its timeout) waits until every other thread that could run when
//! it yielded has taken a step (a step other than its start, which only marks that it begins
//! to run), as long as one of them can run, so a spin-wait cannot spin for
//! ever while the thread it waits for is starved, and the search tree of a correct spin-wait is
//! finite. A thread blocked at the yield (in a `join`, on a lock) does not hold the yielder
//! back: waiting for it too left out schedules the rule promises, such as the yielder going on
//! once one runnable thread has stepped while another waits in a `join`. A thread that times
//! out and waits again releases what the others wait for, so they can run at its next yield
//! and it waits for them then. A value choice is an `interleave::rand` draw: a draw below `n`
//! has `n` options (a bool two), enumerated like threads; a draw wider than [`VALUE_CAP`] (32)
//! values offers only its 16 smallest and 16 largest values, and the report then says the
//! search was not exhaustive and warns. The values are recorded like every draw, so a failure's
//! token replays them.
//!
//! For `dpor` the tree also keeps sleep sets ([`Tree::with_sleep_sets`]): each node records the
//! threads asleep on arrival, a node never tries a sleeping thread, and an execution whose
//! every runnable thread sleeps is abandoned as redundant; `dfs` keeps none.
//!
//! With a preemption bound ([`Tree::bounded`], specs `dfs:c=N` and `dpor:c=N`) a thread choice
//! never takes an execution beyond `N` preemptions: switches away from the thread that took
//! the last step while the rule still lets it run (a yield, a block or a finish makes the
//! switch free). The default continuation never preempts.
//!
//! A thread about to read or write a tracked variable (`cell::Var`, `cell::UnsafeCell`) goes
//! on, when every data race fails the execution (the default, `RaceMode::Fail`;
//! `View::about_to_access_plain_data`): the tree tries no other thread at that decision
//! (`Decision::goes_on`, whose options still list every thread that could run, which `dpor`'s
//! analysis of disabled threads reads), and `dpor` reverses no race there. In an execution
//! without a data race the access commutes with every step of the other threads, since their
//! accesses to the variable are ordered with it by happens-before; so the schedule that
//! switches at the thread's next scheduling point instead of just before the access makes as
//! many preemptions (the switch there is free if the thread blocks or finishes) and reaches the
//! same outcome, or fails earlier in that thread. An execution with a data race fails in both.
//! The fixed twins of the bundled programs exhaust in 12% fewer executions under `dfs`, 7%
//! under `dfs:c=2` and 3.6% under `dpor:c=2` (none in more); loom's `UnsafeCell` accesses are
//! no scheduling points at all.
//!
//! `dfs:yields=N` loosens the rule ([`Tree::with_yield_limit`]): a thread waits only at every
//! `N`-th yield, so it may go on past the `N - 1` yields after each wait before the others
//! step. A spin-wait keeps a finite tree, with `N - 1` more turns per wait, also when several
//! spinners take turns. `dpor` and the bounded searches keep
//! `N = 1`: DPOR's dependencies and the preemption count are built on that rule.
//!
//! Guarantee: when it finishes, every schedule the yield rule allows (with at most `N`
//! preemptions, under a bound), with every value of every draw of at most 32 values, has run,
//! up to a switch just before an access of a tracked variable, which runs just after it (for
//! `dfs`; `dpor` runs at least one of each class of such schedules that differ only in the
//! order of independent steps). The rule leaves out only schedules in which a thread
//! continues after a yield (after every `N`-th yield under `dfs:yields=N`) before another
//! thread that could run has taken a step. std makes no such promise (`yield_now` may return
//! at once, an executor may poll a task that woke itself again at once), so an outcome that
//! needs it is missed: `dfs:yields=2` reaches those that need one continuation past a
//! yield.

use std::any::Any;
use std::ops::Range;

use super::hb::may_depend;
use super::{OpKind, Outcome, Schedule, Strategy, View, ABANDON};
use crate::analysis::stops::plural;

/// The widest `interleave::rand` draw the searches enumerate completely. A wider draw (or a
/// draw over the whole `u64` range) is a choice among its `VALUE_CAP / 2` smallest and
/// `VALUE_CAP / 2` largest values, and the report says the search was not exhaustive.
pub(super) const VALUE_CAP: u64 = 32;

/// What a node of the search tree chooses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Choice {
    /// The thread that takes the next step; the options are the threads the yield rule lets
    /// run.
    #[default]
    Thread,
    /// The value of an `interleave::rand` draw below `bound` (0: the whole `u64` range); the
    /// options are indices into [`draw_value`]'s values.
    Value { bound: u64 },
}

/// One choice an execution made: what it chose among which options.
#[derive(Clone, Debug, Default)]
struct Decision {
    choice: Choice,
    options: Vec<usize>,
    chosen: usize,
    /// The threads asleep when the choice was made (see [`Tree::with_sleep_sets`]; empty
    /// otherwise).
    asleep: Vec<usize>,
    /// Preemptions before this choice (see [`Tree::bounded`]).
    preemptions: u32,
    /// The thread that took the previous step, when it is among the options: choosing any
    /// other thread preempts it. `None` when every option is free (the previous thread
    /// blocked, finished, or yielded and waits under the yield rule).
    running: Option<usize>,
    /// The running thread was about to access plain data, so it is the only choice tried here
    /// (see the module documentation); `options` still lists every thread that could run.
    goes_on: bool,
}

impl Decision {
    /// The preemptions after choosing `option` here.
    fn preemptions_with(&self, option: usize) -> u32 {
        match self.choice {
            Choice::Thread => preemptions_after(self.preemptions, self.running, option),
            Choice::Value { .. } => self.preemptions,
        }
    }
}

/// One decision as an execution reports it: a [`Decision`] whose options and sleepers are
/// ranges of [`Steps::lists`], so that recording one allocates nothing.
struct Made {
    choice: Choice,
    options: Range<usize>,
    chosen: usize,
    asleep: Range<usize>,
    preemptions: u32,
    running: Option<usize>,
    goes_on: bool,
}

/// The preemptions after choosing thread `option`, with `preemptions` before and `running` the
/// thread that took the last step if it may still run: switching away from it is one more.
fn preemptions_after(preemptions: u32, running: Option<usize>, option: usize) -> u32 {
    preemptions + u32::from(running.is_some_and(|r| r != option))
}

/// Whether `preemptions` keep a schedule within the preemption bound, if there is one.
fn within(bound: Option<u32>, preemptions: u32) -> bool {
    bound.is_none_or(|bound| preemptions <= bound)
}

/// One node of the search tree: a decision, and which of its options are still to try.
#[derive(Clone, Debug, Default)]
struct Node {
    decision: Decision,
    /// Options that have run (or are running) from this node's state.
    done: Vec<usize>,
    /// Options that must run from this node's state (all of them for plain DFS and for
    /// values).
    backtrack: Vec<usize>,
    /// The threads asleep on arrival at this node (sleep sets, `dpor` only): every execution
    /// that starts here with one of them is equivalent to one already explored, so none is
    /// tried.
    sleep: Vec<usize>,
    /// The options whose step, run from this node, left their thread unable to run next (it
    /// yielded and waits, blocked or finished): under a preemption bound only these may sleep
    /// in the node's later subtrees (see [`Tree::bounded`]).
    gave_way: Vec<usize>,
    /// The executions of the options tried here, for the estimate of the rest.
    sizes: OptionSizes,
}

impl Node {
    /// Makes this the node of `made`, whose lists are in `lists`, just made by the execution
    /// that began at `started`, reusing its buffers; `all` is as in [`Tree::grow`].
    fn start(&mut self, made: &Made, lists: &[usize], all: bool, started: u64) {
        // Every field named, so a new one cannot be left out.
        let Made {
            choice,
            options,
            chosen,
            asleep,
            preemptions,
            running,
            goes_on,
        } = made;
        let (options, asleep) = (&lists[options.clone()], &lists[asleep.clone()]);
        self.decision.choice = *choice;
        self.decision.options.clear();
        self.decision.options.extend_from_slice(options);
        self.decision.chosen = *chosen;
        self.decision.asleep.clear();
        self.decision.asleep.extend_from_slice(asleep);
        self.decision.preemptions = *preemptions;
        self.decision.running = *running;
        self.decision.goes_on = *goes_on;
        self.backtrack.clear();
        match choice {
            Choice::Thread if !all || *goes_on => self.backtrack.push(*chosen),
            _ => self.backtrack.extend_from_slice(options),
        }
        self.done.clear();
        self.done.push(*chosen);
        self.sleep.clear();
        self.sleep.extend_from_slice(asleep);
        self.gave_way.clear();
        self.sizes = OptionSizes {
            started,
            ..OptionSizes::default()
        };
    }
}

/// The executions below a node, option by option: what a search split among workers uses to
/// estimate how many executions the options still to try will take (siblings in a
/// depth-first search's tree tend to have subtrees of similar sizes).
#[derive(Clone, Copy, Debug, Default)]
struct OptionSizes {
    /// The tree's execution count when the option tried now began.
    started: u64,
    /// Executions of the options tried before it, and how many options those were.
    finished: u64,
    finished_options: u64,
}

impl OptionSizes {
    /// The estimated executions of one option of the node, with `executions` run by the tree
    /// so far: the average of the options finished, or, before one finished, those of the
    /// option tried now so far (at least one).
    fn per_option(&self, executions: u64) -> u64 {
        match self.finished_options {
            0 => executions.saturating_sub(self.started).max(1),
            options => (self.finished / options).max(1),
        }
    }

    /// The option tried now is over, after `executions` executions of the tree; the next
    /// one begins.
    fn next_option(&mut self, executions: u64) {
        self.finished += executions.saturating_sub(self.started);
        self.finished_options += 1;
        self.started = executions;
    }
}

/// What a search keeps from execution to execution only to save work (buffers, and `dpor`'s
/// walk over the last trace): a copy of the search (a worker's share of it) starts empty, and
/// so allocates or computes again what the original had kept.
#[derive(Debug, Default)]
pub(super) struct Reused<T>(pub(super) T);

impl<T: Default> Clone for Reused<T> {
    fn clone(&self) -> Reused<T> {
        Reused::default()
    }
}

/// The search tree of a stateless depth-first search.
#[derive(Clone, Debug, Default)]
// The nodes are boxed on purpose: moving a node to the spares and back then moves a pointer,
// not its lists (on st3's `chained_steal` under `dpor`, 4% of the instructions).
#[allow(clippy::vec_box)]
pub(crate) struct Tree {
    nodes: Vec<Box<Node>>,
    /// Nodes a search left, refilled by the next execution's new nodes: a node holds five
    /// small lists, and allocating them afresh for every node of every execution (and freeing
    /// them when the search backtracked past it) was about a sixth of the instructions of a
    /// `dpor` search of a real crate's loom model (st3's `chained_steal`).
    spare: Reused<Vec<Box<Node>>>,
    /// The index in `nodes` of each thread step, in step order (value nodes sit between).
    steps: Vec<usize>,
    /// The length of the prefix the last planned execution replays.
    prefix: usize,
    finished: bool,
    /// The first execution a failure cut short (`Outcome::cut_short`), for a search whose
    /// backtracking comes from the races its traces show (`dpor`, [`Tree::note_cut_short`]):
    /// the races of the steps that execution never ran were never reversed, so finishing the
    /// tree proves nothing.
    cut_short: Option<u64>,
    executions: u64,
    /// Draws wider than [`VALUE_CAP`] met so far: their values were sampled, not enumerated.
    wide_draws: u64,
    /// Whether executions keep sleep sets (Godefroid, 1996): `dpor` does, `dfs` does not.
    sleep_sets: bool,
    /// Executions ended early because every thread they could run was asleep.
    sleep_blocked: u64,
    /// Executions in which the yield rule made a thread that yielded wait for the others: the
    /// search leaves out their schedules in which it ran on first, which the report says.
    yield_waits: u64,
    /// The preemption bound (see [`Tree::bounded`]), if any.
    bound: Option<u32>,
    /// Yields a thread may make before it waits for the others, less one (see
    /// [`Tree::with_yield_limit`]).
    free_yields: u32,
    /// For the search of one subtree (see [`Tree::below`]): the choices that lead to it, which
    /// the first execution follows; empty for the whole tree.
    root: Vec<usize>,
}

/// What one execution reports: every decision, in order, and for every step the threads whose
/// wait under the yield rule it ended.
#[derive(Default)]
pub(super) struct Steps {
    decisions: Vec<Made>,
    /// The options and sleepers of the decisions, one list after another.
    lists: Vec<usize>,
    /// `(step, thread)`: step `step` ended the wait of `thread`, in step order (empty unless
    /// the program yields, so a step costs nothing here).
    ended_waits: Vec<(usize, usize)>,
    /// Thread steps so far.
    thread_steps: usize,
    /// The thread steps that ended a wait by its timeout (yields, for the yield rule), in
    /// order; the trace does not say which waits timed out.
    timeouts: Vec<usize>,
}

impl Steps {
    /// Appends `list` to [`lists`](Self::lists), returning where it is.
    fn record(&mut self, list: impl IntoIterator<Item = usize>) -> Range<usize> {
        let start = self.lists.len();
        self.lists.extend(list);
        start..self.lists.len()
    }

    /// Whether thread step `step` ended a wait by its timeout.
    pub(super) fn is_timeout(&self, step: usize) -> bool {
        self.timeouts.binary_search(&step).is_ok()
    }

    /// The thread steps that ended a wait by its timeout, and `(step, thread)` for every wait
    /// under the yield rule a step ended, both in step order.
    pub(super) fn waits_ended(&self) -> (&[usize], &[(usize, usize)]) {
        (&self.timeouts, &self.ended_waits)
    }

    /// The threads whose wait under the yield rule step `step` ended (see [`YieldRule`]).
    pub(super) fn ended_waits(&self, step: usize) -> impl Iterator<Item = usize> + '_ {
        let from = self.ended_waits.partition_point(|&(s, _)| s < step);
        self.ended_waits[from..]
            .iter()
            .take_while(move |&&(s, _)| s == step)
            .map(|&(_, thread)| thread)
    }
}

impl Tree {
    /// A tree whose executions keep sleep sets: a thread whose step from a node has been
    /// explored sleeps in the node's later subtrees until a step dependent on it (`hb.rs`,
    /// [`may_depend`]) runs, and is not scheduled while asleep; an execution in which every
    /// thread that could run is asleep is redundant and ends there.
    pub(super) fn with_sleep_sets() -> Tree {
        Tree {
            sleep_sets: true,
            ..Tree::default()
        }
    }

    /// A tree whose schedules preempt at most `bound` times: a preemption is a switch away
    /// from the thread that took the previous step while the yield rule still lets it run
    /// (Musuvathi and Qadeer, *Iterative Context Bounding*, PLDI 2007). Options that would
    /// exceed the bound are never tried; the default continuation never preempts. With
    /// `sleep_sets` (bounded DPOR), an explored option sleeps in its siblings' subtrees only
    /// when its step gave way and it cost no more preemptions than the sibling (see
    /// `dpor.rs`): other sleepers would hide schedules the bound keeps.
    pub(super) fn bounded(bound: u32, sleep_sets: bool) -> Tree {
        Tree {
            bound: Some(bound),
            sleep_sets,
            ..Tree::default()
        }
    }

    /// A tree under a looser yield rule (spec `dfs:yields=N`): a thread waits for the others
    /// only at every `yields`-th yield, the ones between going free (`yields` 1 is the rule of
    /// [`YieldRule`]). So with 2 a thread may go on past one yield before the others step, as
    /// std's `yield_now` and an executor's re-poll allow, and a spin loop still has a finite
    /// tree (each wait costs it one more turn), also when several spinners take turns.
    pub(super) fn with_yield_limit(yields: u32) -> Tree {
        Tree {
            free_yields: yields.saturating_sub(1),
            ..Tree::default()
        }
    }

    /// The yields a thread makes up to the one it waits at (see [`Tree::with_yield_limit`]).
    pub(super) fn yield_limit(&self) -> u32 {
        self.free_yields + 1
    }

    /// The search of the subtree of this (not yet started) tree below the choices `root`: its
    /// first execution follows `root`, and it never backtracks into the nodes of `root`, so it
    /// runs exactly the executions of the whole search that begin with `root`, in the same
    /// order and with the same schedules (the tree below a node depends only on the path to
    /// it). Only for trees without sleep sets, whose subtrees do not depend on each other.
    pub(super) fn below(&self, root: Vec<usize>) -> Tree {
        debug_assert!(!self.sleep_sets, "a DPOR subtree depends on the others");
        Tree {
            bound: self.bound,
            root,
            free_yields: self.free_yields,
            ..Tree::default()
        }
    }

    /// Gives away the options still to try at the shallowest node below the root that has
    /// some, as the roots of their subtrees in the order this search would have tried them
    /// (which is the order of the whole search); this search then skips them. Called between
    /// an execution's observation and the next plan. Empty when no node has an option left.
    /// Also returns the estimated executions of each subtree (see [`OptionSizes`]).
    pub(super) fn give_away(&mut self) -> (Vec<Vec<usize>>, u64) {
        if self.finished {
            return (Vec::new(), 0);
        }
        for depth in self.root.len()..self.nodes.len() {
            let untried = self.untried(&self.nodes[depth]);
            if untried.is_empty() {
                continue;
            }
            let estimate = self.nodes[depth].sizes.per_option(self.executions);
            let node = &mut self.nodes[depth];
            node.done.extend_from_slice(&untried);
            let path: Vec<usize> = self.nodes[..depth]
                .iter()
                .map(|n| n.decision.chosen)
                .collect();
            let roots = untried
                .into_iter()
                .map(|option| {
                    let mut root = path.clone();
                    root.push(option);
                    root
                })
                .collect();
            return (roots, estimate);
        }
        (Vec::new(), 0)
    }

    /// The estimated executions this search still runs after the one it planned last was
    /// observed: the option now chosen where it backtracked, and the options still to try
    /// from there up to its root, each estimated by its node's [`OptionSizes`].
    pub(super) fn remaining_estimate(&self) -> u64 {
        if self.finished {
            return 0;
        }
        let executions = self.executions;
        let now = self
            .nodes
            .last()
            .map_or(1, |node| node.sizes.per_option(executions));
        self.nodes[self.root.len().min(self.nodes.len())..]
            .iter()
            .map(|node| self.untried(node).len() as u64 * node.sizes.per_option(executions))
            .fold(now, u64::saturating_add)
    }

    /// Appends to `prefix` the choices the execution planned last was told to follow (valid
    /// until the tree observes it).
    pub(super) fn planned_prefix(&self, prefix: &mut Vec<usize>) {
        if self.nodes.is_empty() {
            prefix.extend_from_slice(&self.root);
        } else {
            prefix.extend(self.nodes[..self.prefix].iter().map(|n| n.decision.chosen));
        }
    }

    /// The schedule that follows `prefix`, then the default choices, as this tree's
    /// executions do (for a tree without sleep sets).
    pub(super) fn following(&self, prefix: Vec<usize>) -> Box<dyn Schedule + Send> {
        debug_assert!(!self.sleep_sets, "a DPOR schedule needs its sleepers");
        Box::new(PrefixSchedule::new(
            prefix,
            None,
            self.bound,
            self.free_yields,
            0,
            0,
        ))
    }

    /// The length of the prefix the next execution follows; meaningful while the search is not
    /// finished.
    pub(super) fn depth(&self) -> usize {
        self.prefix
    }

    /// The number of choices of the root of this tree's search (see [`Tree::below`]).
    pub(super) fn root_depth(&self) -> usize {
        self.root.len()
    }

    /// The draws wider than [`VALUE_CAP`] met so far.
    pub(super) fn wide_draws(&self) -> u64 {
        self.wide_draws
    }

    /// The executions so far in which a yield made a thread wait (see [`YieldRule`]).
    pub(super) fn yield_waits(&self) -> u64 {
        self.yield_waits
    }

    /// Takes the place of a search that others ran for this tree (`explore/tree_split.rs`):
    /// `executions` ran, `wide_draws` of their draws were sampled, `yield_waits` of them made a
    /// yielding thread wait, and the search then stood at depth `depth`, or was over when
    /// `depth` is `None`. The statistics and warnings are then those of having run it here.
    pub(super) fn ran_elsewhere(
        &mut self,
        executions: u64,
        wide_draws: u64,
        yield_waits: u64,
        depth: Option<usize>,
    ) {
        self.executions = executions;
        self.wide_draws = wide_draws;
        self.yield_waits = yield_waits;
        self.finished = depth.is_none();
        self.prefix = depth.unwrap_or(0);
    }

    /// The options `backtrack` would still try at `node`, in the order it would try them.
    fn untried(&self, node: &Node) -> Vec<usize> {
        let mut untried: Vec<usize> = self.untried_options(node).collect();
        untried.sort_unstable();
        untried.dedup();
        untried
    }

    /// The option `backtrack` would try next at `node`: the first of [`Tree::untried`],
    /// found without collecting them.
    fn next_untried(&self, node: &Node) -> Option<usize> {
        self.untried_options(node).min()
    }

    /// The options of `node` still to try, in no order and possibly repeated.
    fn untried_options<'a>(&'a self, node: &'a Node) -> impl Iterator<Item = usize> + 'a {
        node.backtrack
            .iter()
            .copied()
            .filter(|t| !node.done.contains(t))
            .filter(|t| node.decision.choice != Choice::Thread || !node.sleep.contains(t))
            .filter(|&t| self.within_bound(node, t))
    }

    /// The preemption bound, if any.
    pub(super) fn bound(&self) -> Option<u32> {
        self.bound
    }

    /// Whether choosing `option` at `node` keeps the schedule within the preemption bound.
    fn within_bound(&self, node: &Node, option: usize) -> bool {
        within(self.bound, node.decision.preemptions_with(option))
    }

    /// The schedule of the next execution, or `None` when the search is over.
    pub(super) fn plan(&mut self) -> Option<Box<dyn Schedule + Send>> {
        if self.finished {
            return None;
        }
        self.executions += 1;
        let sleep = self.sleep_sets.then(|| match self.prefix.checked_sub(1) {
            // The options explored before the one now chosen join the node's sleepers.
            Some(last) => {
                let node = &self.nodes[last];
                let mut sleep = node.sleep.clone();
                if node.decision.choice == Choice::Thread {
                    // Under a preemption bound, a sleeping thread `t` stands for schedules
                    // that run it later than here, which are equivalent to schedules that run
                    // it here first, explored already, but with up to two more preemptions:
                    // one to switch to `t` here, one to switch away from it after its step.
                    // Neither is added when `t` gave way after its step and costs no more
                    // here than the option now chosen; only then may it sleep.
                    let chosen = node.decision.chosen;
                    let cost = |t: usize| node.decision.preemptions_with(t);
                    let may_sleep = |t: usize| {
                        self.bound.is_none()
                            || (node.gave_way.contains(&t) && cost(t) <= cost(chosen))
                    };
                    sleep.extend(
                        node.done
                            .iter()
                            .copied()
                            .filter(|&t| t != chosen && !node.sleep.contains(&t) && may_sleep(t)),
                    );
                }
                sleep
            }
            None => Vec::new(),
        });
        let mut prefix = Vec::new();
        self.planned_prefix(&mut prefix);
        Some(Box::new(PrefixSchedule::new(
            prefix,
            sleep,
            self.bound,
            self.free_yields,
            self.prefix,
            self.nodes.len(),
        )))
    }

    /// Adds the decisions past the prefix of the execution just observed. A thread node's
    /// `backtrack` holds only the chosen thread when `all` is false, or every thread the
    /// yield rule lets run when true; a value node's holds every value. Returns the index of
    /// the first step that is new in this execution.
    pub(super) fn grow(&mut self, outcome: &Outcome, all: bool) -> usize {
        let Some(steps) = outcome.feedback.and_then(|f| f.downcast_ref::<Steps>()) else {
            return self.steps.len();
        };
        if !steps.ended_waits.is_empty() {
            self.yield_waits += 1;
        }
        // The node at `prefix - 1` took a new option, so everything from it on is new.
        let changed = self.prefix.saturating_sub(1);
        let first_new = self.steps.partition_point(|&n| n < changed);
        self.spare.0.extend(self.nodes.drain(self.prefix..));
        self.steps
            .truncate(self.steps.partition_point(|&n| n < self.prefix));
        for made in steps.decisions.iter().skip(self.prefix) {
            if let Choice::Value { bound } = made.choice {
                // A subtree's search counts only the draws below its root: those of the
                // root's nodes were counted by the search that gave the subtree away.
                if (bound == 0 || bound > VALUE_CAP) && self.nodes.len() >= self.root.len() {
                    self.wide_draws += 1;
                }
            }
            if made.choice == Choice::Thread {
                self.steps.push(self.nodes.len());
            }
            let mut node = self.spare.0.pop().unwrap_or_default();
            // Its option began with the execution observed now.
            node.start(made, &steps.lists, all, self.executions.saturating_sub(1));
            self.nodes.push(node);
        }
        // Whether each thread step from the changed node on left its thread unable to run
        // next. After the last step nothing is known (the execution may have been cut short),
        // so that step counts as not giving way.
        for at in self.steps.partition_point(|&n| n < changed)..self.steps.len() {
            let Some(&next) = self.steps.get(at + 1) else {
                break;
            };
            let index = self.steps[at];
            let chosen = self.nodes[index].decision.chosen;
            if !self.nodes[next].decision.options.contains(&chosen) {
                let node = &mut self.nodes[index];
                if !node.gave_way.contains(&chosen) {
                    node.gave_way.push(chosen);
                }
            }
        }
        if outcome.abandoned && self.sleep_sets {
            self.sleep_blocked += 1;
        }
        first_new
    }

    /// The threads that could run at step `step` (empty past the last step).
    pub(super) fn options(&self, step: usize) -> &[usize] {
        match self.steps.get(step) {
            Some(&index) => &self.nodes[index].decision.options,
            None => &[],
        }
    }

    /// Whether every option of the node of step `step` is to run, has run or sleeps there, so
    /// no race there can ask for more.
    pub(super) fn saturated(&self, step: usize) -> bool {
        let Some(&index) = self.steps.get(step) else {
            return true;
        };
        let node = &self.nodes[index];
        node.decision.options.iter().all(|&t| {
            node.backtrack.contains(&t)
                || node.done.contains(&t)
                || node.sleep.contains(&t)
                || !self.within_bound(node, t)
        })
    }

    /// Whether the node of step `step` still needs a thread from `initials` to run from the
    /// state before that step: none of them is to run there, has run there or sleeps there.
    pub(super) fn needs_one_of(&self, step: usize, initials: &[usize]) -> bool {
        let Some(&index) = self.steps.get(step) else {
            return false;
        };
        let node = &self.nodes[index];
        !initials
            .iter()
            .any(|t| node.backtrack.contains(t) || node.done.contains(t) || node.sleep.contains(t))
    }

    /// Requires one thread of `initials` to run from the state before step `step`: `preferred`
    /// when it is among them and could run there within the preemption bound, otherwise the
    /// lowest-numbered one that could. When none of them is an option there (a race the
    /// dependence relation did not order) and `fallback` is set, every option within the
    /// bound that is not asleep; when some are options but only beyond the bound, none (a
    /// bounded search adds its conservative points elsewhere, see `dpor.rs`).
    pub(super) fn require_one_of(
        &mut self,
        step: usize,
        initials: &[usize],
        preferred: usize,
        fallback: bool,
    ) {
        let Some(&index) = self.steps.get(step) else {
            return;
        };
        let node = &self.nodes[index];
        if node.decision.goes_on {
            // Its thread goes on: a thread run just after its access instead reaches the
            // same (see the module documentation).
            return;
        }
        let options = &node.decision.options;
        let runnable = |t: usize| options.contains(&t) && self.within_bound(node, t);
        let chosen = if initials.contains(&preferred) && runnable(preferred) {
            Some(preferred)
        } else {
            initials.iter().copied().filter(|&t| runnable(t)).min()
        };
        let additions: Vec<usize> = match chosen {
            Some(thread) => vec![thread],
            None if fallback && !initials.iter().any(|t| options.contains(t)) => options
                .iter()
                .copied()
                .filter(|&t| !node.sleep.contains(&t) && self.within_bound(node, t))
                .collect(),
            None => Vec::new(),
        };
        let node = &mut self.nodes[index];
        for thread in additions {
            if !node.backtrack.contains(&thread) {
                node.backtrack.push(thread);
            }
        }
    }

    /// Moves to the deepest node with an option still to try; false when there is none. A
    /// subtree's search (see [`Tree::below`]) never backtracks into its root's nodes.
    pub(super) fn backtrack(&mut self) -> bool {
        while self.nodes.len() > self.root.len() {
            let last = self.nodes.len() - 1;
            if let Some(option) = self.next_untried(&self.nodes[last]) {
                let executions = self.executions;
                let node = &mut self.nodes[last];
                node.decision.chosen = option;
                node.done.push(option);
                node.sizes.next_option(executions);
                self.prefix = self.nodes.len();
                return true;
            }
            self.spare.0.extend(self.nodes.pop());
        }
        self.finished = true;
        false
    }

    /// Notes that a failure cut execution `execution` short, for a search that backtracks only
    /// where its traces show races (see [`Tree::cut_short`]).
    pub(super) fn note_cut_short(&mut self, execution: u64) {
        self.cut_short.get_or_insert(execution);
    }

    /// The report lines both searches share.
    pub(super) fn stats(&self) -> Vec<(String, String)> {
        let mut stats = vec![
            ("schedules run".to_string(), self.executions.to_string()),
            (
                "covered".to_string(),
                if !self.finished {
                    format!(
                        "stopped early (the execution budget, a failure or a stop) at depth {}: \
                         not exhaustive",
                        self.prefix
                    )
                } else if let Some(execution) = self.cut_short {
                    format!(
                        "not exhaustive: a failure stopped execution {execution} before every \
                         thread had finished, and the steps they had left never ran, so no race \
                         of theirs was reversed (the tree of the schedules that ran is done)"
                    )
                } else if self.wide_draws > 0 {
                    format!(
                        "every schedule, but draws wider than {VALUE_CAP} values took only their \
                         {} smallest and {} largest: not exhaustive",
                        VALUE_CAP / 2,
                        VALUE_CAP / 2
                    )
                } else if let Some(bound) = self.bound {
                    format!(
                        "every schedule of at most {}",
                        plural(bound as usize, "preemption")
                    )
                } else {
                    "the whole search space".to_string()
                },
            ),
        ];
        if self.sleep_sets {
            stats.push((
                "executions ended with every thread asleep".to_string(),
                self.sleep_blocked.to_string(),
            ));
        }
        if self.yield_waits > 0 {
            stats.push((
                "yield rule".to_string(),
                format!(
                    "in {} a thread that yielded waited until the others had stepped; the \
                     schedules in which it ran on first were not searched (`dfs:yields=2` \
                     lets it run on once)",
                    plural(self.yield_waits as usize, "schedule")
                ),
            ));
        }
        stats
    }

    /// The warning both searches give when they sampled wide draws instead of enumerating them.
    pub(super) fn warnings(&self) -> Vec<String> {
        if self.wide_draws == 0 {
            return Vec::new();
        }
        vec![format!(
            "{} interleave::rand draws had more than {VALUE_CAP} possible values; systematic \
             search tried only the {} smallest and {} largest of each, so values in between \
             were never returned",
            self.wide_draws,
            VALUE_CAP / 2,
            VALUE_CAP / 2
        )]
    }
}

/// The number of values a draw below `bound` offers the search (see [`VALUE_CAP`]).
fn value_options(bound: u64) -> u64 {
    if bound == 0 || bound > VALUE_CAP {
        VALUE_CAP
    } else {
        bound
    }
}

/// The value option `index` of a draw below `bound` stands for: the value itself when the draw
/// is enumerated completely, otherwise one of the smallest or, from `VALUE_CAP / 2` on, one of
/// the largest values (`bound == 0` is the whole `u64` range, whose top is `u64::MAX`).
fn draw_value(bound: u64, index: u64) -> u64 {
    if value_options(bound) == bound || index < VALUE_CAP / 2 {
        index
    } else {
        bound.wrapping_sub(VALUE_CAP - index)
    }
}

/// The yield rule of the systematic searches: loom's rule, made strong enough that the search
/// tree of a correct spin-wait is finite.
///
/// A thread that yields (`thread::yield_now`, `hint::spin_loop`, or a sleep, which the
/// runtime counts as a yield too) declares that it cannot make progress until another thread
/// does. So after thread `t` yields, it waits for every other thread that could run at its
/// yield, and may not run again until each of them has made progress since: taken a step (of
/// any kind, a yield included; for the systematic searches, not its start step, see
/// [`YieldRule::for_search`]), or become unable to run (blocked or finished), whichever comes
/// first. A thread that waits for no one may run.
///
/// One exception: when every thread `t` still waits for would end a timed wait by its timeout
/// if chosen now (a `recv_timeout` with nothing to receive, a `wait_timeout` not notified, a
/// sleep), `t` may run once before them, its *pass*. Without it, a sleeper's send could never
/// beat a receiver's later `recv_timeout`, an order std allows: the receiver's only step is its
/// timeout, and the sleeper would wait for it. The pass is used up by running, and renewed
/// only when the wait ends, so a thread spinning on something only a timeout can bring still
/// runs at most one extra round between two steps of the threads it waits for.
///
/// Loom lets the yielding thread run again after any one other thread has taken a step; under
/// an exhaustive search that is not enough, since two spinners could then take turns for ever
/// and starve the thread they wait for. Here that thread gets its turn before either spinner
/// runs twice, as in round-robin scheduling, so every schedule the searches can follow is fair
/// to a thread that stays runnable while others spin (the property CHESS's fair scheduler
/// establishes, Musuvathi and Qadeer, *Fair Stateless Model Checking*, PLDI 2008). A correct
/// spin-wait has a finite search tree, and a spin loop that waits for something that never
/// happens is still reported by the step bound.
///
/// The waits never form a cycle: a yield adds waits that all start at the yielding thread, and
/// the yield step itself has just ended every wait for it. So some runnable thread is always
/// allowed. What the rule gives up: schedules in which a thread continues after a yield before
/// some other thread that could run has taken a step; `yield_now` promises that those make no
/// difference, which is the promise loom and CHESS rely on too.
///
/// For DPOR, the step that ends a wait is dependent on the yield that began it (running it
/// before the yield gives the yielding thread another thread to wait for), and the waiting
/// thread's next step happens after it; [`Steps`] reports which waits each step ended.
#[derive(Clone, Debug, Default)]
pub(super) struct YieldRule {
    /// `waits[t]`: the threads that could run at `t`'s latest yield and have not taken a step
    /// since.
    waits: Vec<Vec<usize>>,
    /// How many threads wait, so a program that does not yield pays one test per step.
    waiting: usize,
    /// Whether a thread's start step ends the waits for it (see [`YieldRule::for_search`]).
    starts_are_progress: bool,
    /// `passed[t]`: `t` has run on its pass (see [`YieldRule::allowed`]) since its wait began.
    passed: Vec<bool>,
    /// Yields a thread makes before the one it waits at (see
    /// [`YieldRule::with_free_yields`]); 0 for the rule itself.
    free_yields: u32,
    /// `free_used[t]`: the free yields `t` has made since it last waited (kept only with free
    /// yields).
    free_used: Vec<u32>,
}

impl YieldRule {
    /// The rule of the systematic searches: a thread's start step (which only marks that it
    /// begins to run, and touches nothing another thread sees) does not end the waits for it;
    /// its first real step does. A yield and another thread's start step then commute (either
    /// order leaves the yielder waiting for that thread), so DPOR need not order them: with
    /// the samplers' rule, a spinner that yields just before or just after a new thread starts
    /// gets one more iteration in one order than the other, and DPOR explored both.
    pub(super) fn for_search() -> YieldRule {
        YieldRule::default()
    }

    /// The rule loosened so that a thread waits only at every `free + 1`-th yield: the `free`
    /// yields it makes after a wait (or its start) let it go on. Counting yields in a row that
    /// any other thread's step ends let two spinners take turns for ever, every yield of each
    /// free after the other's load, and starve the thread they waited for.
    pub(super) fn with_free_yields(self, free: u32) -> YieldRule {
        YieldRule {
            free_yields: free,
            ..self
        }
    }

    /// Whether the yield `chosen` is about to make is one of its free yields (see
    /// [`YieldRule::with_free_yields`]), counting it; the yield it waits at starts the count
    /// again.
    fn free_yield(&mut self, chosen: usize) -> bool {
        if self.free_yields == 0 {
            return false;
        }
        if self.free_used.len() <= chosen {
            self.free_used.resize(chosen + 1, 0);
        }
        let used = &mut self.free_used[chosen];
        if *used < self.free_yields {
            *used += 1;
            true
        } else {
            *used = 0;
            false
        }
    }

    /// The rule of the samplers: every step is progress.
    pub(super) fn for_sampling() -> YieldRule {
        YieldRule {
            starts_are_progress: true,
            ..YieldRule::default()
        }
    }

    /// Pushes onto `allowed` the enabled threads the rule lets run, in increasing order, and
    /// onto `ended` the threads whose wait for a thread ended because that thread has
    /// longer run (the step taken last made it so).
    pub(super) fn allowed(
        &mut self,
        view: &View<'_>,
        allowed: &mut Vec<usize>,
        ended: &mut Vec<usize>,
    ) {
        let enabled = view.enabled();
        if self.waiting == 0 {
            allowed.extend_from_slice(enabled);
            return;
        }
        for (t, waits) in self.waits.iter_mut().enumerate() {
            let before = waits.len();
            waits.retain(|&u| view.pending(u).is_some());
            if waits.len() < before {
                ended.push(t);
                if waits.is_empty() {
                    self.waiting -= 1;
                    self.passed[t] = false;
                }
            }
        }
        allowed.extend(enabled.iter().copied().filter(|&t| {
            self.waits.get(t).is_none_or(|waits| {
                waits.is_empty() || (!self.passed[t] && only_timeouts_left(view, waits))
            })
        }));
        if allowed.is_empty() {
            // Every thread that can run waits for one that cannot (yet): a rule that exists to
            // prevent starvation must not stop every thread.
            allowed.extend_from_slice(enabled);
        }
    }

    /// Notes that `chosen` takes the next step, and pushes onto `ended` the threads whose
    /// wait for it that step ends. A step that is not a yield, while no thread waits, changes
    /// nothing: the common case of a program that does not yield, decided inline, and the
    /// rule's bookkeeping runs only otherwise.
    #[inline]
    pub(super) fn ran(&mut self, view: &View<'_>, chosen: usize, ended: &mut Vec<usize>) {
        if chosen >= view.thread_count() {
            return;
        }
        if self.waiting == 0 && !is_yield(view, chosen) {
            return;
        }
        self.note_step(view, chosen, ended);
    }

    /// [`YieldRule::ran`] when a thread waits or `chosen` yields.
    #[inline(never)]
    fn note_step(&mut self, view: &View<'_>, chosen: usize, ended: &mut Vec<usize>) {
        let starts = view.pending_kind(chosen) == Some(OpKind::Start);
        if self.waiting > 0 && (self.starts_are_progress || !starts) {
            for (t, waits) in self.waits.iter_mut().enumerate() {
                if let Some(at) = waits.iter().position(|&u| u == chosen) {
                    // A thread its pass already let run was not held back by this step, so
                    // for DPOR its next step does not happen after it.
                    let on_pass = !self.passed[t] && only_timeouts_left(view, waits);
                    waits.swap_remove(at);
                    if !on_pass {
                        ended.push(t);
                    }
                    if waits.is_empty() {
                        self.waiting -= 1;
                        self.passed[t] = false;
                    }
                }
            }
        }
        // A thread that runs while it waits runs on its pass (or because every runnable thread
        // waited). With no one waiting, the common case at every step of a program that does
        // not yield, there is nothing to look up.
        if self.waiting > 0
            && self
                .waits
                .get(chosen)
                .is_some_and(|waits| !waits.is_empty())
        {
            self.passed[chosen] = true;
        }
        if is_yield(view, chosen) && !self.free_yield(chosen) {
            if self.waits.len() <= chosen {
                self.waits.resize(chosen + 1, Vec::new());
                self.passed.resize(chosen + 1, false);
            }
            let waits = &mut self.waits[chosen];
            // A thread that runs normally waits for no one, but a prefix that no longer fits
            // the program may force one that does, and a thread on its pass yields again
            // while it waits; its new yield replaces that wait (and a used pass stays used).
            if !waits.is_empty() {
                self.waiting -= 1;
            }
            waits.clear();
            // The threads that could run at the yield; blocked ones do not hold it back.
            waits.extend(view.enabled().iter().copied().filter(|&u| u != chosen));
            if waits.is_empty() {
                self.passed[chosen] = false;
            } else {
                self.waiting += 1;
            }
        }
    }
}

/// Whether every thread in `waits` would end its wait by its timeout if chosen now: its only
/// step, which counts as a yield (see `View::times_out`).
fn only_timeouts_left(view: &View<'_>, waits: &[usize]) -> bool {
    waits.iter().all(|&u| view.times_out(u))
}

/// The yield rule for a schedule that needs only the threads it lets run, not which waits
/// ended (the samplers): the rule and its scratch buffers, kept to save an allocation per step.
#[derive(Clone, Debug)]
pub(super) struct YieldGate {
    rule: YieldRule,
    allowed: Vec<usize>,
    ended: Vec<usize>,
}

impl Default for YieldGate {
    fn default() -> YieldGate {
        YieldGate {
            rule: YieldRule::for_sampling(),
            allowed: Vec::new(),
            ended: Vec::new(),
        }
    }
}

impl YieldGate {
    /// The enabled threads the rule lets run, in increasing order (never empty). While no
    /// thread waits, the common case of a program that does not yield, that is every enabled
    /// thread, handed on without a copy.
    #[inline]
    pub(super) fn allowed<'s, 'v: 's>(&'s mut self, view: &View<'v>) -> &'s [usize] {
        if self.rule.waiting == 0 {
            return view.enabled();
        }
        self.allowed_while_waiting(view)
    }

    fn allowed_while_waiting(&mut self, view: &View<'_>) -> &[usize] {
        self.allowed.clear();
        self.ended.clear();
        self.rule.allowed(view, &mut self.allowed, &mut self.ended);
        &self.allowed
    }

    /// Notes that `chosen` takes the next step.
    #[inline]
    pub(super) fn ran(&mut self, view: &View<'_>, chosen: usize) {
        self.ended.clear();
        self.rule.ran(view, chosen, &mut self.ended);
    }
}

/// Whether the pending operation of `thread` is a yield for the yield rules of the strategies
/// (a `yield_now`, a `spin_loop` hint, a sleep, a task's park after `future::yield_now`, or a
/// wait that would end by its timeout, as `View::yields` counts them).
pub(super) fn is_yield(view: &View<'_>, thread: usize) -> bool {
    view.pending_yields(thread) || view.times_out(thread)
}

/// The default continuation of schedules without the yield rule (value schedules): the
/// running thread while it can run and has not yielded since another thread last ran,
/// otherwise the lowest-numbered other enabled thread.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Continuation {
    /// The thread that yielded and has been the only one to run since.
    yielder: Option<usize>,
}

impl Continuation {
    /// `forced` when given, otherwise the default choice; either way, notes whether the chosen
    /// thread is about to yield.
    pub(super) fn choose(&mut self, view: &View<'_>, forced: Option<usize>) -> usize {
        let avoid = self.yielder.is_some_and(|t| Some(t) == view.last_thread());
        let chosen = forced.unwrap_or_else(|| {
            let choice = default_choice(view, view.enabled(), avoid);
            // A wait that only a spurious wake-up ends is not the default while a thread can run
            // for real: continued, a waiter in a loop wakes, finds its condition false and
            // waits again until the step bound.
            if view.wakes_only_spuriously(choice) {
                view.enabled()
                    .iter()
                    .copied()
                    .find(|&t| !view.wakes_only_spuriously(t))
                    .unwrap_or(choice)
            } else {
                choice
            }
        });
        if chosen < view.thread_count() && is_yield(view, chosen) {
            self.yielder = Some(chosen);
        } else if self.yielder != Some(chosen) {
            // Another thread ran: the yielder may go on again.
            self.yielder = None;
        }
        chosen
    }
}

/// Among `allowed` (never empty): the thread that ran last while it is allowed and has not just
/// yielded, otherwise the lowest-numbered other one.
fn default_choice(view: &View<'_>, allowed: &[usize], yielded: bool) -> usize {
    match view.last_thread() {
        Some(last) if allowed.contains(&last) && !yielded => last,
        last => allowed
            .iter()
            .copied()
            .find(|&t| Some(t) != last)
            .unwrap_or(allowed[0]),
    }
}

/// One execution of a depth-first search: follow the prefix, then the default choices, under
/// the yield rule.
struct PrefixSchedule {
    prefix: Vec<usize>,
    steps: Steps,
    rule: YieldRule,
    /// The thread chosen last was about to yield.
    yielded: bool,
    /// With sleep sets, the threads asleep at the next decision from the last one of the
    /// prefix on (before it, the tree already knows the sleepers).
    sleep: Option<Vec<usize>>,
    /// Preemptions so far (see [`Tree::bounded`]).
    preemptions: u32,
    /// The preemption bound, if any.
    bound: Option<u32>,
    /// The decisions the tree already holds as nodes (the first `known` of the prefix): it
    /// never reads their options again, so they are not recorded (most of an execution's
    /// decisions in a deep tree).
    known: usize,
    /// The buffer of the options of the decision being made, kept across decisions.
    scratch: Vec<usize>,
}

impl PrefixSchedule {
    /// The schedule that follows `prefix`, then the default choices, with the sleepers
    /// `sleep` (sleep sets only) under the preemption bound `bound`, and the yield rule with
    /// `free_yields` free yields per wait (see [`YieldRule::with_free_yields`]); the options of
    /// its first `known` decisions, which the tree holds already, are not recorded. Room for
    /// `expected` decisions is made at once (the last execution's count: an execution of a
    /// deep tree would otherwise grow its list of decisions a handful of times).
    fn new(
        prefix: Vec<usize>,
        sleep: Option<Vec<usize>>,
        bound: Option<u32>,
        free_yields: u32,
        known: usize,
        expected: usize,
    ) -> PrefixSchedule {
        PrefixSchedule {
            steps: Steps {
                decisions: Vec::with_capacity(expected.max(prefix.len())),
                ..Steps::default()
            },
            prefix,
            rule: YieldRule::for_search().with_free_yields(free_yields),
            yielded: false,
            sleep,
            preemptions: 0,
            bound,
            known,
            scratch: Vec::new(),
        }
    }

    /// Records `options` as those of the decision being made, unless the tree knows it.
    fn record_options(&mut self, options: impl IntoIterator<Item = usize>) -> Range<usize> {
        if self.steps.decisions.len() < self.known {
            0..0
        } else {
            self.steps.record(options)
        }
    }

    /// The prefix's choice for the next decision, if the prefix reaches it.
    fn forced(&self) -> Option<usize> {
        self.prefix.get(self.steps.decisions.len()).copied()
    }
}

impl Schedule for PrefixSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let mut allowed = std::mem::take(&mut self.scratch);
        allowed.clear();
        let mut ended = Vec::new();
        self.rule.allowed(view, &mut allowed, &mut ended);
        // Those waits ended because of the step taken last.
        let last = self.steps.thread_steps.saturating_sub(1);
        self.steps
            .ended_waits
            .extend(ended.drain(..).map(|thread| (last, thread)));
        let decision = self.steps.decisions.len();
        let tracks_sleep = self.sleep.is_some() && decision + 1 >= self.prefix.len();
        let asleep: &[usize] = match &self.sleep {
            Some(sleep) if tracks_sleep => sleep,
            _ => &[],
        };
        // Switching away from the thread that took the last step while it may still run is
        // a preemption; a yield, a block or a finish makes the switch free.
        let running = view.last_thread().filter(|last| allowed.contains(last));
        // A thread about to access plain data goes on (see the module documentation): the
        // default choice below is that thread (it never sleeps, having just run), and the
        // tree tries no other here.
        let goes_on = running.is_some_and(|last| view.about_to_access_plain_data(last));
        // A prefix that no longer fits the program is followed anyway: the runtime reports
        // the divergence.
        let chosen = match self.forced() {
            Some(forced) => forced,
            None if asleep.is_empty() => default_choice(view, &allowed, self.yielded),
            None => {
                // Under a preemption bound, a thread beyond it is no continuation either.
                let awake: Vec<usize> = allowed
                    .iter()
                    .copied()
                    .filter(|&t| {
                        !asleep.contains(&t)
                            && within(self.bound, preemptions_after(self.preemptions, running, t))
                    })
                    .collect();
                if awake.is_empty() {
                    // Every continuation is equivalent to one explored already.
                    return ABANDON;
                }
                default_choice(view, &awake, self.yielded)
            }
        };
        let asleep = self.steps.record(asleep.iter().copied());
        if let (Some(sleep), true) = (&mut self.sleep, tracks_sleep) {
            sleep.retain(|&t| t != chosen && !may_depend(view, t, chosen));
        }
        let preemptions = self.preemptions;
        self.preemptions = preemptions_after(preemptions, running, chosen);
        self.yielded = chosen < view.thread_count() && is_yield(view, chosen);
        self.rule.ran(view, chosen, &mut ended);
        let step = self.steps.thread_steps;
        if chosen < view.thread_count() && view.times_out(chosen) {
            self.steps.timeouts.push(step);
        }
        self.steps
            .ended_waits
            .extend(ended.drain(..).map(|thread| (step, thread)));
        self.steps.thread_steps += 1;
        let options = self.record_options(allowed.iter().copied());
        self.scratch = allowed;
        self.steps.decisions.push(Made {
            choice: Choice::Thread,
            options,
            chosen,
            asleep,
            preemptions,
            running,
            goes_on,
        });
        chosen
    }

    fn next_value(&mut self, bound: u64) -> u64 {
        let options = value_options(bound);
        // A recorded option beyond this draw's options means the program diverged; the
        // runtime's nondeterminism check reports that, so any in-range value will do.
        let chosen = self.forced().filter(|&o| (o as u64) < options).unwrap_or(0);
        let asleep = match &self.sleep {
            Some(sleep) if self.steps.decisions.len() + 1 >= self.prefix.len() => {
                self.steps.record(sleep.iter().copied())
            }
            _ => 0..0,
        };
        let options = self.record_options(0..options as usize);
        self.steps.decisions.push(Made {
            choice: Choice::Value { bound },
            options,
            chosen,
            asleep,
            preemptions: self.preemptions,
            running: None,
            goes_on: false,
        });
        draw_value(bound, chosen as u64)
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

    /// A search over every schedule of at most `preemptions` preemptions (spec `dfs:c=N`): a
    /// preemption is a switch away from the thread that took the last step while the yield
    /// rule still lets it run.
    pub fn bounded(preemptions: u32) -> Dfs {
        Dfs {
            tree: Tree::bounded(preemptions, false),
        }
    }

    /// A search under a looser yield rule, where a thread waits for the others only at every
    /// `yields`-th yield (spec `dfs:yields=N`; 1 is the plain rule of `dfs`).
    pub fn with_yield_limit(yields: u32) -> Dfs {
        Dfs {
            tree: Tree::with_yield_limit(yields),
        }
    }
}

impl Strategy for Dfs {
    fn spec(&self) -> String {
        match self.tree.bound() {
            Some(bound) => format!("dfs:c={bound}"),
            None if self.tree.yield_limit() > 1 => {
                format!("dfs:yields={}", self.tree.yield_limit())
            }
            None => "dfs".to_string(),
        }
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        self.tree.plan()
    }

    fn round_size(&self) -> usize {
        1
    }

    fn splits_by_prefix(&self) -> bool {
        // The tree below a node depends only on the path to it (no sleep sets, no
        // backtracking points added from elsewhere), so shards can search disjoint subtrees.
        true
    }

    fn searches_exhaustively(&self) -> bool {
        true
    }

    fn subtree_search(&self) -> Option<super::SubtreeSearch> {
        // For the same reason, workers can search disjoint subtrees at once.
        Some(super::SubtreeSearch::whole(&self.tree))
    }

    fn searched_elsewhere(&mut self, tally: super::SplitTally) {
        tally.apply(&mut self.tree);
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.tree.grow(outcome, true);
        self.tree.backtrack();
    }

    fn stats(&self) -> Vec<(String, String)> {
        self.tree.stats()
    }

    fn warnings(&self) -> Vec<String> {
        self.tree.warnings()
    }
}
