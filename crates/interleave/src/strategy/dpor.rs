//! Dynamic partial-order reduction with source sets and sleep sets (spec `dpor`): the
//! source-DPOR algorithm of Abdulla, Aronis, Jonsson and Sagonas, *Optimal Dynamic Partial
//! Order Reduction*, POPL 2014 (Algorithm 1), over the stateless tree of `dfs.rs`, after
//! Flanagan and Godefroid's DPOR (POPL 2005). What loom does, with a finer dependence relation.
//!
//! After each execution, every new step `i` of thread `p` is checked against the earlier steps
//! of other threads it depends on (`hb.rs`, `dpor_conflicts`: same object and not both only
//! reading it, a channel's message or ends, a barrier's generation, a thread's park token,
//! a thread's last step against `JoinHandle::is_finished` about it, a `try_send` on a
//! rendezvous channel against each receiver's step before its receive (the offer is taken
//! only if the receiver already waits there), spawning; `reads_only` says which steps only
//! read). Such a step `j` is in a race with `i`
//! when it happens before `i` only through that dependence (vector clocks over program order,
//! spawn, join and the dependences). For a race, the initials of `notdep(j).i` (the threads
//! whose first step among the steps after `j` that do not happen after it, then `i`, has no
//! predecessor there) can reverse it from the state before `j`: unless one of them already
//! runs there, has run there or sleeps there, one of them is added there, `p` when it is one.
//! A step that only let `i` run (the release before a blocking acquisition, the send of the
//! message a receive took, the last sender's drop before a receive found the channel
//! disconnected) cannot be reversed with it and is no race, nor does it hide the race with
//! the step before it. A step that disables a thread that could run before it (a lock taken,
//! a notification consumed) races with that thread's pending operation, which the trace may
//! never show, so that thread runs from the state before it too. The walk over the trace is
//! kept from one execution to the next and rewound to the first step that changed
//! (`dpor_clocks.rs`), so an execution costs the analysis its new steps.
//!
//! Sleep sets (Godefroid, 1996): a thread whose step from a node has been explored sleeps in
//! the node's later subtrees until a step that may depend on its pending operation runs
//! (`hb.rs`, `may_depend`: coarser than the trace's relation, since a pending operation shows
//! less), is not scheduled while asleep, and an execution in which every thread that could run sleeps is
//! redundant: its schedule abandons it (the report counts these). Wakeup trees, the other half
//! of optimal DPOR, are left out: an execution may end with every thread asleep, so the search
//! is not optimal in general; on the programs of the tests (store buffering, writers, locked
//! counters, barriers, channels with several senders, self-waking tasks) it runs exactly one
//! execution per Mazurkiewicz trace.
//!
//! The yield rule of `dfs.rs` (a thread that yields waits until every other thread that could
//! run has taken a step) enters the search in three places. A thread the rule holds back is
//! treated like a disabled one. A yield of thread `t` and a step of another thread `u` are
//! dependent (which of `u`'s steps ends `t`'s wait depends on their order), modelled as a
//! pseudo-object per pair of threads that `t`'s yields and all of `u`'s steps write; for sleep
//! sets a yield may depend on every step. A thread's start step is the exception: under the
//! searches' rule it ends no wait (`YieldRule::for_search`), so either order of a yield and
//! another thread's start leaves the yielder waiting for that thread, and the two commute.
//! (Ordering them doubled the executions of a spin-wait that yields before its partner
//! started: a spin-wait of two threads took 20 executions under the weak memory model, loom
//! 12; now 10.) And the step that ends a wait happens before the waiting thread's next step,
//! since that step could not run earlier. Spin-waits cost more executions than programs
//! without yields (each yield is ordered against the other threads' adjacent steps), but
//! their search is finite.
//!
//! Preemption-bounded DPOR (spec `dpor:c=N`) is the bounded partial-order reduction of Coons,
//! Musuvathi and McKinley, *Bounded Partial-Order Reduction*, OOPSLA 2013, on the same
//! analysis. The tree (`Tree::bounded`) counts preemptions, switches away from the thread
//! that took the last step while the yield rule still lets it run, and never tries an option
//! that would take an execution beyond `N`. That alone is unsound: the point where a race must
//! be reversed may lie in the middle of another thread's block of steps, where running the
//! racing thread costs a preemption the bound does not have, while running it at the start of
//! that block costs nothing more than the switch the trace made there. So every reversal (and
//! every disabled thread's) is also required at the conservative point, the start of the
//! block of consecutive steps of one thread that ends just before the reversed step, when one
//! of its initials can run there within the bound. Sleep sets shrink under the bound: a
//! thread `t` asleep at a node stands for the schedules that run it later, which are
//! equivalent to schedules that ran it first from the ancestor where it was explored, but
//! those may need up to two more preemptions (one to switch to `t` there, one to switch away
//! after its step), beyond the bound. So `t` may sleep in a sibling's subtree only when its
//! step gave way (left `t` unable to run: a yield, a block, its last step) and choosing it
//! there cost no more than the sibling; then the reordered schedule needs no more
//! preemptions than the one it stands for. (Plain sleep sets lose traces under the bound;
//! the brute-force comparison of the tests shows it.) With fewer sleepers, a small program
//! can take more executions under `dpor:c=N` than under unbounded `dpor`; against `dfs:c=N`,
//! plain preemption-bounded search, it takes from 4 to 90 times fewer on the tests'
//! programs without yields.
//!
//! `interleave::rand` draws are value nodes of the tree (see `dfs.rs`): every value is tried,
//! whatever the races; sleep sets pass through them unchanged.
//!
//! An execution that a failure other than a deadlock stops before every thread has finished
//! (a panic, a data race, the step bound, with `stop_on_first_failure(false)`) ends its trace
//! before the steps those threads had left, whose races are then never reversed: after one,
//! the search reports that it is not exhaustive, however its tree ends.
//!
//! Guarantee: when it finishes, at least one schedule of every class of schedules that the
//! yield rule allows, equivalent up to the order of independent steps, has run, for every value
//! of every draw of at most 32 values; so every happens-before graph `dfs` reaches, every
//! deadlock and every assertion failure that depends only on the schedule and those values is
//! reached. With a bound `dpor:c=N`, for any number of threads: every schedule it runs has at
//! most `N` preemptions, and every class that has a schedule with at most `N` preemptions has
//! one run, so it reaches every happens-before graph `dfs:c=N` reaches (Coons et al.'s
//! theorem for their conservative points; the tests check it against an enumeration of every
//! schedule of programs of three and four threads with atomics, locks and channels, for
//! `N` = 0, 1, 2).

use super::dfs::{Reused, Steps, Tree};
use super::dpor_clocks::HappensBefore;
use super::{ChannelStep, OpKind, Outcome, Schedule, Strategy, TraceEvent, TraceTarget};

/// Dynamic partial-order reduction (spec `dpor`).
#[derive(Clone, Debug)]
pub struct Dpor {
    tree: Tree,
    races: u64,
    /// The analysis's state, kept from execution to execution (`dpor_clocks.rs`); a copy of
    /// the search starts without it and walks its first trace whole.
    happens_before: Reused<HappensBefore>,
}

impl Default for Dpor {
    fn default() -> Dpor {
        Dpor::new()
    }
}

impl Dpor {
    /// A search from the first schedule.
    pub fn new() -> Dpor {
        Dpor {
            tree: Tree::with_sleep_sets(),
            races: 0,
            happens_before: Reused::default(),
        }
    }

    /// A search over the schedules of at most `preemptions` preemptions (spec `dpor:c=N`),
    /// with the conservative backtracking points of bounded partial-order reduction (see the
    /// module docs).
    pub fn bounded(preemptions: u32) -> Dpor {
        Dpor {
            tree: Tree::bounded(preemptions, true),
            races: 0,
            happens_before: Reused::default(),
        }
    }

    /// Requires one of `initials` to run from the state before step `step` (`preferred` when
    /// it can), unless one already runs there; under a preemption bound, also from the
    /// conservative point before it (see [`conservative_point`]).
    fn require(&mut self, trace: &[TraceEvent], step: usize, initials: &[usize], preferred: usize) {
        if self.tree.needs_one_of(step, initials) {
            self.tree.require_one_of(step, initials, preferred, true);
        }
        if self.tree.bound().is_none() {
            return;
        }
        if let Some(point) = conservative_point(trace, step) {
            if self.tree.needs_one_of(point, initials) {
                self.tree.require_one_of(point, initials, preferred, false);
            }
        }
    }

    /// Finds the races of the new steps of the execution just observed (from `first_new`)
    /// and requires their reversal.
    fn analyse(&mut self, outcome: &Outcome, first_new: usize) {
        let Some(trace) = outcome.trace else { return };
        let steps = outcome.feedback.and_then(|f| f.downcast_ref::<Steps>());
        let n = outcome.threads.max(1);
        let mut hb = std::mem::take(&mut self.happens_before.0);
        for i in hb.begin(trace, steps, n, first_new)..trace.len() {
            hb.walk(trace, steps);
            if i < first_new {
                continue;
            }
            let (step_clocks, dependences) = (&hb.step_clocks, &hb.dependences);
            let timed_out = steps.is_some_and(|s| s.is_timeout(i));
            let enables = |k: usize| enables(&trace[k], &trace[i], timed_out);
            for &j in dependences.iter().filter(|&&j| !enables(j)) {
                let (thread, local) = (trace[j].thread, step_clocks[j * n + trace[j].thread]);
                // A race: `j` happens before this step only through their dependence, not
                // through the thread's earlier steps or another dependence of this step.
                let ordered_otherwise = hb.before[thread] >= local
                    || dependences
                        .iter()
                        .any(|&k| k != j && !enables(k) && step_clocks[k * n + thread] >= local);
                if !ordered_otherwise {
                    self.races += 1;
                    self.reverse(trace, step_clocks, n, j, i);
                }
            }
        }
        #[cfg(debug_assertions)]
        hb.check_against_full_walk(trace, steps, n);
        self.happens_before.0 = hb;
        // A step that disables another thread's pending operation (a lock taken, a condition
        // variable's notification consumed, a `Once` entered) is in a race with it that the
        // trace may never show: the disabled operation runs later, if at all, after other
        // steps that hide the race. So that thread must also run from the state before it.
        let last = trace.len().saturating_sub(1);
        for (i, event) in trace.iter().enumerate().take(last).skip(first_new) {
            let (now, next) = (self.tree.options(i), self.tree.options(i + 1));
            let disabled: Vec<usize> = now
                .iter()
                .copied()
                .filter(|&t| t != event.thread && !next.contains(&t))
                .collect();
            for thread in disabled {
                self.require(trace, i, &[thread], thread);
            }
        }
    }
}

impl Dpor {
    /// Makes sure the race of step `j` with the later step `i` is reversed: some thread that
    /// can start the rest of the execution with `j` moved after `i` (an initial of
    /// `notdep(j).i`, the steps after `j` that do not happen after it, then `i`; Abdulla et
    /// al., Algorithm 1) runs from the state before `j`, unless one already has, will, or
    /// sleeps there. The thread of `i` is preferred.
    fn reverse(&mut self, trace: &[TraceEvent], step_clocks: &[u32], n: usize, j: usize, i: usize) {
        let (racer, local) = (trace[j].thread, step_clocks[j * n + trace[j].thread]);
        if self.tree.saturated(j) && self.tree.bound().is_none() {
            return;
        }
        // Each thread's own clock entry at its first step in `notdep(j).i`, and the threads
        // whose first step there has no predecessor there.
        let mut first: Vec<Option<u32>> = vec![None; n];
        let mut initials = Vec::new();
        for k in j + 1..=i {
            let q = trace[k].thread;
            let clock = &step_clocks[k * n..(k + 1) * n];
            if first[q].is_some() || (k < i && clock[racer] >= local) {
                continue;
            }
            let preceded = (0..n).any(|r| first[r].is_some_and(|f| clock[r] >= f));
            first[q] = Some(clock[q]);
            if !preceded {
                initials.push(q);
            }
        }
        self.require(trace, j, &initials, trace[i].thread);
    }
}

/// The conservative backtracking point of bounded partial-order reduction for a race
/// reversed at step `step` (Coons, Musuvathi and McKinley, *Bounded Partial-Order
/// Reduction*, OOPSLA 2013): the start of the block of consecutive steps of one thread that
/// ends just before `step`, that is, the latest step before it at which the thread running
/// changed (or the first step). A thread that cannot run at `step` within the preemption
/// bound (running it there preempts the thread in the middle of its block) may still run at
/// a block's start, where the switch costs no more than the one the trace made; running it
/// there instead is what makes the bounded search cover every schedule of the bounded
/// depth-first search. `None` for the first step.
fn conservative_point(trace: &[TraceEvent], step: usize) -> Option<usize> {
    let mut point = step.checked_sub(1)?;
    while point > 0 && trace[point - 1].thread == trace[point].thread {
        point -= 1;
    }
    Some(point)
}

/// Whether step `earlier` is a dependence of the later step `later` only because it let
/// `later` run, so the two cannot be reversed and `earlier` must not hide the race of `later`
/// with the step before it: a release of a lock (or the end of a `Once` initialiser) before a
/// blocking acquisition, which races with the acquisition that release ended; the send of the
/// message a receive took; a receive before a send on a bounded channel (it may have made the
/// room the send waited for, and otherwise the two commute: the receive takes an older
/// message); a sender's drop before a receive that found the channel disconnected
/// (`timed_out`: the receive ended by its timeout instead, which a drop does not cause).
fn enables(earlier: &TraceEvent, later: &TraceEvent, timed_out: bool) -> bool {
    match (later.kind, later.target) {
        (
            OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock | OpKind::Wake | OpKind::OnceEnter,
            _,
        ) => {
            matches!(
                earlier.kind,
                OpKind::Unlock | OpKind::RwUnlock | OpKind::OnceComplete
            )
        }
        (
            OpKind::Recv | OpKind::Poll,
            Some(TraceTarget::Channel(ChannelStep::Received { ticket })),
        ) => {
            matches!(
                earlier.target,
                Some(TraceTarget::Channel(ChannelStep::Sent { ticket: sent, .. })) if sent == ticket
            )
        }
        (_, Some(TraceTarget::Channel(ChannelStep::Sent { bounded: true, .. }))) => matches!(
            earlier.target,
            Some(TraceTarget::Channel(ChannelStep::Received { .. }))
        ),
        (OpKind::Recv, Some(TraceTarget::Channel(ChannelStep::FoundNone { .. }))) => {
            !timed_out && earlier.target == Some(TraceTarget::Channel(ChannelStep::SenderDropped))
        }
        _ => false,
    }
}

impl Strategy for Dpor {
    fn spec(&self) -> String {
        match self.tree.bound() {
            Some(bound) => format!("dpor:c={bound}"),
            None => "dpor".to_string(),
        }
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        self.tree.plan()
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }

    fn searches_exhaustively(&self) -> bool {
        true
    }

    fn round_size(&self) -> usize {
        1
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        if outcome.cut_short {
            self.tree.note_cut_short(execution);
        }
        let first_new = self.tree.grow(outcome, false);
        self.analyse(outcome, first_new);
        self.tree.backtrack();
    }

    fn stats(&self) -> Vec<(String, String)> {
        let mut stats = self.tree.stats();
        stats.push(("races reversed".to_string(), self.races.to_string()));
        stats
    }

    fn warnings(&self) -> Vec<String> {
        self.tree.warnings()
    }
}
