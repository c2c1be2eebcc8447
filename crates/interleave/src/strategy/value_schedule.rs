//! Value-schedule-based testing (seed 002, chapters 5 and 6; spec `vs`): a depth-first search
//! that permutes only conflicting accesses that may happen in parallel, knows which access each
//! context switch is meant to reach, and abandons the interleaving as soon as it cannot.
//!
//! The concurrent access pairs (`analysis::predict::access_pairs`) come from the executions themselves:
//! `profile` random walks first (default 2), then every execution adds the pairs it shows. The
//! search is chapter 6's incremental derivation, stateless:
//!
//! - an execution follows a prefix of thread choices and then the default continuation (the
//!   running thread while it can run and has not just yielded, otherwise the lowest-numbered
//!   enabled thread);
//! - every step of the new part of an execution whose access `a` (of thread `p`) forms pairs
//!   becomes a backtracking point, holding the ordered pairs still to try: for each paired
//!   access `b` of a live thread `q`, "`q`'s next `b` before `a`". Two kinds of pair are left
//!   out because no fulfilment could exist (the incremental accessibility check, done before
//!   running rather than by running): those where `p` was the only enabled thread at `a`, and
//!   those where `p` holds, at `a`, a lock that every observed step of `b` held (the lock
//!   already orders the two, and its own MM pair permutes that order);
//! - trying one re-executes the prefix up to `a` (no state snapshots), then runs `q` toward
//!   its next `b` (other threads only while `q` is blocked, never `p`), then lets `p` perform
//!   `a`, then continues by default, recording the new backtracking points. Trying `b` again
//!   from the point reached gives the next instance, so every instance is derived (Lemma
//!   6.3.1);
//! - the interleaving is abandoned (`strategy::ABANDON`) as soon as `b` cannot be reached: `q`
//!   finished, or only `p` could run;
//! - backtracking takes the deepest point first, except for chapter 6's prioritisation (Figure
//!   6.5): a point holding a pair of a more relevant kind (RW > WN > WM >= WW > MM, must-alias
//!   before may-alias) than the deepest one is tried out of order once, each pair fulfilled a
//!   single time and the execution run to completion without new points; the point stays
//!   for its normal turn, which skips the pairs whose out-of-order try was abandoned
//!   (executions are deterministic, so it would be abandoned again);
//! - a bounded digression, the chapter 5 form of out-of-order testing kept to one level: each
//!   RW pair of a completed out-of-order run is fulfilled once more, right away and without
//!   new points. A bug that needs two racing steps of a thread whose points sit low in the
//!   stack (RW-exception: a writer slips in, then the reader re-enters) is found without
//!   waiting for every permutation above them.
//!
//! Guarantee: when it finishes, every value schedule (the order of every two conflicting
//! accesses, including lock acquisitions and wait/notify) of the accesses the pair analysis
//! knows has been tested: the completeness of seed 002's Theorem 6.3.3, limited to the pairs the
//! observed executions revealed and to the locksets they showed (an access observed only under
//! a lock is taken to need it). Out-of-order tries and digressions only add executions.
//! Nondeterministic choices (`interleave::rand`) are always 0.

use std::any::Any;
use std::sync::Arc;

use super::dfs::Continuation;
use super::{Outcome, Random, Schedule, Site, Strategy, ThreadState, TraceTarget, View, ABANDON};
use crate::analysis::predict::access_pairs::{access_of, AccessClass, AccessPairs, PairKind};
use crate::analysis::predict::lockset::{Held, HeldLocks};
use crate::strategy::OpKind;

/// Random-walk executions that find the first pairs, when the spec does not say.
pub const DEFAULT_PROFILE: u64 = 2;

/// Steps a fulfilment may take before it counts as unreachable (a spinning target thread).
const FULFILMENT_STEPS: u32 = 10_000;

/// Spurious wake-ups of its target a fulfilment may use before it counts as unreachable. A
/// wait without a loop goes on after one; a wait in a loop whose condition only the waiting
/// thread can make true wakes, finds it false and waits again, for ever: with spurious
/// wake-ups on, each such fulfilment ran to `FULFILMENT_STEPS` (a producer and a consumer on a
/// condition variable: 4,760 steps per execution instead of 33).
const FULFILMENT_SPURIOUS_WAKES: u32 = 4;

/// One ordered pair to try at a backtracking point: thread `thread`'s next access at `site` of
/// class `class` before the point's access.
#[derive(Clone, Copy, Debug)]
struct Alternative {
    thread: usize,
    site: Site,
    class: AccessClass,
    kind: PairKind,
    must_alias: bool,
    /// Its out-of-order fulfilment was abandoned: executions are deterministic, so the
    /// normal turn would be abandoned too and skips it.
    unreachable: bool,
}

impl Alternative {
    /// Lower is tried first (Figure 6.5's order).
    fn priority(&self) -> (PairKind, bool) {
        (self.kind, !self.must_alias)
    }
}

/// A backtracking point: the state before step `step` of a recorded run, where `thread` was
/// about to perform a paired access.
#[derive(Clone, Debug)]
struct Point {
    /// The thread of every step of the run the point was found in.
    run: Arc<Vec<usize>>,
    step: usize,
    thread: usize,
    alternatives: Vec<Alternative>,
    /// The next alternative of the normal depth-first turn.
    next: usize,
    /// The next alternative of the out-of-order pass, and whether that pass is over.
    next_out_of_order: usize,
    out_of_order_done: bool,
}

impl Point {
    fn priority(&self) -> Option<(PairKind, bool)> {
        self.alternatives[self.next..]
            .iter()
            .map(Alternative::priority)
            .min()
    }
}

/// How a planned execution relates to the search.
#[derive(Clone, Copy, Debug)]
enum Planned {
    /// The first run: its points are the root of the search.
    Root,
    /// The normal depth-first turn of point `point` of the stack: the run's points from that
    /// point's step on are pushed, and what it finds at that very step (the point's state)
    /// joins the point's alternatives.
    Normal { point: usize },
    /// The out-of-order fulfilment of alternative `alternative` of point `point`: its
    /// most relevant points become the digressions.
    OutOfOrder { point: usize, alternative: usize },
    /// A digression: nothing is recorded.
    Digression,
}

/// The strategy (spec `vs`).
#[derive(Clone, Debug)]
pub struct ValueSchedule {
    profile: u64,
    profiled: u64,
    pairs: AccessPairs,
    stack: Vec<Point>,
    /// The points of the latest out-of-order run with a pair of the most relevant kind (RW),
    /// each fulfilled once before the search goes on.
    digressions: Vec<Point>,
    root_planned: bool,
    finished: bool,
    in_flight: Option<(u64, Planned)>,
    // Counts for the report.
    executions: u64,
    abandoned: u64,
    points: u64,
    out_of_order: u64,
    digressed: u64,
}

impl Default for ValueSchedule {
    fn default() -> Self {
        ValueSchedule::new()
    }
}

impl ValueSchedule {
    /// The search after `DEFAULT_PROFILE` (2) profiling executions.
    pub fn new() -> ValueSchedule {
        ValueSchedule {
            profile: DEFAULT_PROFILE,
            profiled: 0,
            pairs: AccessPairs::default(),
            stack: Vec::new(),
            digressions: Vec::new(),
            root_planned: false,
            finished: false,
            in_flight: None,
            executions: 0,
            abandoned: 0,
            points: 0,
            out_of_order: 0,
            digressed: 0,
        }
    }

    /// Runs `executions` random-walk profiling executions first (0: none).
    pub fn with_profile(mut self, executions: u64) -> ValueSchedule {
        self.profile = executions;
        self
    }

    /// The next ordered pair to try: the point, the alternative's index, and whether out of
    /// order.
    fn choose(&mut self) -> Option<(usize, usize, bool)> {
        while let Some(point) = self.stack.last_mut() {
            while point
                .alternatives
                .get(point.next)
                .is_some_and(|a| a.unreachable)
            {
                point.next += 1;
            }
            if point.next < point.alternatives.len() {
                break;
            }
            self.stack.pop();
        }
        let top = self.stack.len().checked_sub(1)?;
        let top_priority = self.stack[top].priority();
        // Figure 6.5: a more relevant point deeper in the worklist goes first, once.
        let better = (0..top)
            .rev()
            .filter(|&i| {
                let point = &self.stack[i];
                !point.out_of_order_done && point.next < point.alternatives.len()
            })
            .filter_map(|i| Some((self.stack[i].priority()?, i)))
            .filter(|&(priority, _)| Some(priority) < top_priority)
            .min_by_key(|&(priority, i)| (priority, std::cmp::Reverse(i)));
        if let Some((_, i)) = better {
            let point = &mut self.stack[i];
            // Alternatives the normal turn has already tried are not tried again.
            let chosen = point.next_out_of_order.max(point.next);
            point.next_out_of_order = chosen + 1;
            if point.next_out_of_order >= point.alternatives.len() {
                point.out_of_order_done = true;
            }
            return Some((i, chosen, true));
        }
        let point = &mut self.stack[top];
        point.next += 1;
        Some((top, point.next - 1, false))
    }

    /// The next digression to try: the point and the alternative's index.
    fn digress(&mut self) -> Option<(&Point, usize)> {
        while self
            .digressions
            .last()
            .is_some_and(|p| p.next >= p.alternatives.len())
        {
            self.digressions.pop();
        }
        let point = self.digressions.last_mut()?;
        point.next += 1;
        self.digressed += 1;
        Some((point, point.next - 1))
    }

    /// Pushes the backtracking points of the steps from `from` of an execution. With a
    /// `parent`, step `from` starts from the parent point's state: its ordered pairs join
    /// that point's (a node per state, so no state is expanded twice and the search is a tree
    /// whose prefixes grow).
    ///
    /// With `digress`, the points go to the digressions instead, keeping only their RW pairs.
    fn record(&mut self, outcome: &Outcome, from: usize, parent: Option<usize>, digress: bool) {
        let Some(trace) = outcome.trace else { return };
        let solo: &[bool] = outcome
            .feedback
            .and_then(|f| f.downcast_ref::<SoloSteps>())
            .map_or(&[], |s| &s.0);
        let run: Arc<Vec<usize>> = Arc::new(trace.iter().map(|e| e.thread).collect());
        let threads = outcome.threads;
        // When each thread was spawned (the main thread: before everything) and its last step.
        let mut spawned_at = vec![0; threads];
        let mut last = vec![0; threads];
        for (i, event) in trace.iter().enumerate() {
            last[event.thread] = i;
            if let Some(TraceTarget::Thread(child)) = event.target {
                if event.kind == OpKind::Spawn && child < threads {
                    spawned_at[child] = i;
                }
            }
        }
        let mut locks = HeldLocks::default();
        for (i, event) in trace.iter().enumerate() {
            let candidate = i >= from && !solo.get(i).copied().unwrap_or(false);
            let found = candidate.then(|| access_of(event)).flatten();
            // The locks `p` holds while it waits at `a` (a woken waiter does not hold the
            // mutex it is taking back).
            let held: Vec<Held> = match (found, event.target) {
                (None, _) => Vec::new(),
                (Some(_), Some(TraceTarget::Object(mutex))) if event.kind == OpKind::Wake => locks
                    .of(event.thread)
                    .iter()
                    .filter(|h| h.lock != mutex)
                    .copied()
                    .collect(),
                (Some(_), _) => locks.of(event.thread).to_vec(),
            };
            locks.step(event);
            let Some((access, object)) = found else {
                continue;
            };
            let merge_into = parent.filter(|_| i == from);
            let mut alternatives: Vec<Alternative> = Vec::new();
            for partner in self.pairs.partners(access, object) {
                let q = partner.access.thread;
                // `q` must exist at `i` and do something after it.
                let alive = q < threads && spawned_at[q] < i && last[q] > i;
                // A lock `p` holds decides the order: `q` cannot get there before `a`.
                let blocked = self.pairs.excluded_by(partner.access, &held);
                let same = |a: &Alternative| {
                    a.thread == q
                        && a.site == partner.access.site
                        && a.class == partner.access.class
                };
                let known = alternatives.iter().any(same)
                    || merge_into.is_some_and(|p| {
                        let point = &self.stack[p];
                        point.thread == q || point.alternatives.iter().any(same)
                    });
                let relevant = !digress || partner.kind == PairKind::RW;
                if alive && !blocked && !known && relevant {
                    alternatives.push(Alternative {
                        thread: q,
                        site: partner.access.site,
                        class: partner.access.class,
                        kind: partner.kind,
                        must_alias: partner.must_alias,
                        unreachable: false,
                    });
                }
            }
            if alternatives.is_empty() {
                continue;
            }
            alternatives.sort_by_key(Alternative::priority);
            if let Some(p) = merge_into {
                // Tried after the point's own, in the normal turn (an out-of-order pass that
                // is over stays over).
                self.stack[p].alternatives.extend(alternatives);
                continue;
            }
            let point = Point {
                run: run.clone(),
                step: i,
                thread: event.thread,
                alternatives,
                next: 0,
                next_out_of_order: 0,
                out_of_order_done: false,
            };
            if digress {
                self.digressions.push(point);
            } else {
                self.points += 1;
                self.stack.push(point);
            }
        }
    }
}

impl Strategy for ValueSchedule {
    fn spec(&self) -> String {
        if self.profile == DEFAULT_PROFILE {
            "vs".to_string()
        } else {
            format!("vs:profile={}", self.profile)
        }
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        if self.profiled < self.profile {
            return Random.plan(execution, seed);
        }
        let (schedule, planned) = if !self.root_planned {
            self.root_planned = true;
            (VsSchedule::new(Vec::new(), None), Planned::Root)
        } else {
            let (point, chosen, planned) = if let Some((point, chosen)) = self.digress() {
                (point, chosen, Planned::Digression)
            } else {
                let Some((index, chosen, out_of_order)) = self.choose() else {
                    self.finished = true;
                    return None;
                };
                let planned = if out_of_order {
                    self.out_of_order += 1;
                    Planned::OutOfOrder {
                        point: index,
                        alternative: chosen,
                    }
                } else {
                    Planned::Normal { point: index }
                };
                (&self.stack[index], chosen, planned)
            };
            let alternative = point.alternatives[chosen];
            let prefix = point.run[..point.step].to_vec();
            let fulfil = Fulfilment {
                target: alternative.thread,
                site: alternative.site,
                class: alternative.class,
                waiting: point.thread,
                steps: 0,
                spurious_wakes: 0,
            };
            (VsSchedule::new(prefix, Some(fulfil)), planned)
        };
        self.executions += 1;
        self.in_flight = Some((execution, planned));
        Some(Box::new(schedule))
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }

    fn round_size(&self) -> usize {
        1
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        if let Some(trace) = outcome.trace {
            self.pairs.observe(trace);
        }
        if self.profiled < self.profile {
            self.profiled += 1;
            return;
        }
        let Some((planned_execution, planned)) = self.in_flight.take() else {
            return;
        };
        debug_assert_eq!(planned_execution, execution);
        if outcome.abandoned {
            self.abandoned += 1;
            if let Planned::OutOfOrder { point, alternative } = planned {
                self.stack[point].alternatives[alternative].unreachable = true;
            }
            return;
        }
        match planned {
            Planned::Root => self.record(outcome, 0, None, false),
            Planned::Normal { point } => {
                let from = self.stack[point].step;
                self.record(outcome, from, Some(point), false);
            }
            Planned::OutOfOrder { point, .. } => {
                let from = self.stack[point].step;
                self.record(outcome, from, None, true);
            }
            Planned::Digression => {}
        }
    }

    fn stats(&self) -> Vec<(String, String)> {
        let pairs: Vec<String> = self
            .pairs
            .counts()
            .iter()
            .map(|(kind, count)| format!("{kind:?} {count}"))
            .collect();
        vec![
            (
                "profiling executions".to_string(),
                self.profiled.to_string(),
            ),
            ("concurrent access pairs".to_string(), pairs.join(", ")),
            ("schedules run".to_string(), self.executions.to_string()),
            ("backtracking points".to_string(), self.points.to_string()),
            (
                "out-of-order fulfilments (prioritised)".to_string(),
                self.out_of_order.to_string(),
            ),
            (
                "digressions (one more RW pair after an out-of-order one)".to_string(),
                self.digressed.to_string(),
            ),
            (
                "interleavings abandoned (target unreachable)".to_string(),
                self.abandoned.to_string(),
            ),
            (
                "covered".to_string(),
                if self.finished {
                    "every value schedule of the known access pairs".to_string()
                } else {
                    "stopped early (the execution budget, a failure or a stop): not every \
                     value schedule has run"
                        .to_string()
                },
            ),
        ]
    }
}

/// Running thread `target` toward its next access at `site` of class `class`, before thread
/// `waiting` performs its own access.
#[derive(Clone, Copy, Debug)]
struct Fulfilment {
    target: usize,
    site: Site,
    class: AccessClass,
    waiting: usize,
    steps: u32,
    /// The spurious wake-ups of the target it used (see [`FULFILMENT_SPURIOUS_WAKES`]).
    spurious_wakes: u32,
}

/// For every step of an execution, whether the thread that took it was the only enabled one:
/// no other thread could have been run toward a target there.
struct SoloSteps(Vec<bool>);

/// One execution of the search: a prefix, an optional fulfilment, the default continuation.
struct VsSchedule {
    prefix: Vec<usize>,
    fulfil: Option<Fulfilment>,
    /// The thread to run first once the fulfilment is done (the one that waited).
    then: Option<usize>,
    continuation: Continuation,
    solo: Vec<bool>,
}

impl VsSchedule {
    fn new(prefix: Vec<usize>, fulfil: Option<Fulfilment>) -> VsSchedule {
        VsSchedule {
            prefix,
            fulfil,
            then: None,
            continuation: Continuation::default(),
            solo: Vec::new(),
        }
    }

    /// The fulfilment's choice at this step, or `ABANDON`.
    fn fulfil(&mut self, view: &View<'_>) -> usize {
        let Some(f) = self.fulfil.as_mut() else {
            return ABANDON;
        };
        f.steps += 1;
        let state = view.state(f.target);
        if f.steps > FULFILMENT_STEPS || state == ThreadState::Finished {
            return ABANDON;
        }
        let spurious_only = state == ThreadState::Enabled && view.wakes_only_spuriously(f.target);
        if state == ThreadState::Enabled && !spurious_only {
            let hit = view
                .pending(f.target)
                .is_some_and(|op| op.site == f.site && AccessClass::of(op.kind) == Some(f.class));
            let target = f.target;
            if hit {
                self.then = Some(f.waiting);
                self.fulfil = None;
            }
            return target;
        }
        // The target is blocked, or only a spurious wake-up would let it go on: let another
        // thread, never the waiting one, wake it for real.
        if let Some(other) = view
            .enabled()
            .iter()
            .copied()
            .find(|&t| t != f.waiting && t != f.target)
        {
            return other;
        }
        // Without one, a blocked target is unreachable, and one that can wake spuriously
        // does so a few times at most.
        f.spurious_wakes += 1;
        if !spurious_only || f.spurious_wakes > FULFILMENT_SPURIOUS_WAKES {
            return ABANDON;
        }
        f.target
    }
}

impl Schedule for VsSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.solo.push(view.enabled().len() == 1);
        let forced = if let Some(&thread) = self.prefix.get(view.step() as usize) {
            Some(thread)
        } else if self.fulfil.is_some() {
            Some(self.fulfil(view))
        } else {
            self.then.take().filter(|t| view.enabled().contains(t))
        };
        self.continuation.choose(view, forced)
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(SoloSteps(std::mem::take(&mut self.solo))))
    }
}
