//! Confirmation: running a predicted reordering and seeing which branches flip.
//!
//! A solved prefix becomes a plan, one thread per step: the chunk's cut exactly as observed,
//! then the chunk's events before `r` in the solved order (each thread's non-critical steps run
//! just before its next critical one), then `r`. [`GuidedSchedule`] follows the plan; after it,
//! `r`'s thread runs on for up to `FOCUS_STEPS` steps while it can, so the branches right after
//! `r` see `r`'s new value before anything else changes, and then every enabled thread in turn,
//! one step each, so a thread polling for another one's progress cannot starve it. A planned
//! thread that is not enabled (the prediction was wrong) ends the plan and the run goes on the
//! same way.
//!
//! Whether the plan was followed or not, the comparison is between two real executions of the
//! same program with the same inputs: a branch instance (the `n`-th evaluation of one site by
//! one thread) with different outcomes in the two is schedule-sensitive, and the confirming
//! execution's replay token shows it. Threads are matched by their spawn path (parent, spawn
//! site, and how many threads the parent had spawned there), not by number, so a different
//! spawn order cannot pair two different threads.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::encode::ChunkModel;
use super::model::{Item, Trace};
use crate::report::FailureKind;
use crate::runtime::op::{OpKind, Site};
use crate::runtime::Recording;
use crate::strategy::replay::ReplaySchedule;
use crate::strategy::{Schedule, View};

/// How many steps `r`'s thread runs alone after the plan.
const FOCUS_STEPS: u32 = 1_000;

/// The schedule of a confirming execution.
pub(crate) struct GuidedSchedule {
    plan: Vec<u32>,
    next: usize,
    focus: usize,
    focus_steps: u32,
    /// Replays the observed execution's `interleave::rand` values (the same input).
    values: ReplaySchedule,
    /// Where the plan could not be followed.
    diverged_at: Option<usize>,
}

impl GuidedSchedule {
    pub fn new(plan: Vec<u32>, focus: usize, values: Vec<u64>) -> GuidedSchedule {
        GuidedSchedule {
            plan,
            next: 0,
            focus,
            focus_steps: 0,
            values: ReplaySchedule::new(Vec::new(), values),
            diverged_at: None,
        }
    }
}

impl Schedule for GuidedSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let enabled = view.enabled();
        if let Some(&wanted) = self.plan.get(self.next) {
            if enabled.contains(&(wanted as usize)) {
                self.next += 1;
                return wanted as usize;
            }
            self.diverged_at = Some(self.next);
            self.next = self.plan.len();
        }
        if self.focus_steps < FOCUS_STEPS && enabled.contains(&self.focus) {
            self.focus_steps += 1;
            return self.focus;
        }
        self.focus_steps = FOCUS_STEPS;
        // Round robin: the first enabled thread after the one that ran last.
        let last = view.last_thread().unwrap_or(0);
        enabled
            .iter()
            .copied()
            .find(|&t| t > last)
            .unwrap_or(enabled[0])
    }

    fn next_value(&mut self, bound: u64) -> u64 {
        self.values.next_value(bound)
    }

    /// Where the plan could not be followed (`Option<usize>`).
    fn feedback(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(self.diverged_at))
    }
}

/// The plan that replays `model`'s cut, then its nodes in `order` up to and including `r`.
pub(crate) fn plan(trace: &Trace, model: &ChunkModel<'_>, order: &[usize], r: u32) -> Vec<u32> {
    let chunk = &model.chunk;
    let mut plan: Vec<u32> = trace
        .steps
        .iter()
        .filter(|s| s.position < chunk.cut[s.thread as usize])
        .map(|s| s.thread)
        .collect();
    let mut next: Vec<u32> = chunk.cut.clone();
    let mut run_until = |plan: &mut Vec<u32>, thread: usize, position: u32| {
        while next[thread] < position {
            if let Item::Step(_) = trace.items[thread][next[thread] as usize] {
                plan.push(thread as u32);
            }
            next[thread] += 1;
        }
    };
    for &node in order {
        let step = model.step(node as u32);
        let thread = step.thread as usize;
        if step.kind == OpKind::Join {
            let joined = step.arg as usize;
            run_until(&mut plan, joined, chunk.end[joined]);
        }
        run_until(&mut plan, thread, step.position + 1);
        if node as u32 == r {
            break;
        }
    }
    plan
}

/// A thread's identity across executions: its spawn path.
pub(crate) type ThreadKey = u64;

/// What one execution's branches did.
#[derive(Default)]
pub(crate) struct Outcomes {
    /// Each (thread, site)'s outcomes in evaluation order.
    pub branches: FxHashMap<(ThreadKey, Site), Vec<bool>>,
    /// Each thread's key, by thread number.
    pub keys: Vec<ThreadKey>,
    /// The thread and site of a panic that ended the execution.
    pub panic: Option<(ThreadKey, String)>,
}

impl Outcomes {
    pub fn of(ex: &Recording) -> Outcomes {
        let mut keys: Vec<ThreadKey> = vec![0; ex.threads.len()];
        let mut spawns: FxHashMap<(ThreadKey, Site), u32> = FxHashMap::default();
        let mut child = 0usize;
        for event in &ex.events {
            if event.kind == OpKind::Spawn {
                child += 1;
                let parent = keys[event.thread as usize];
                let counter = spawns.entry((parent, event.site)).or_default();
                let mut hasher = FxHasher::default();
                (parent, event.site, *counter).hash(&mut hasher);
                *counter += 1;
                if let Some(key) = keys.get_mut(child) {
                    *key = hasher.finish();
                }
            }
        }
        let mut branches: FxHashMap<(ThreadKey, Site), Vec<bool>> = FxHashMap::default();
        for b in &ex.annotations.branches {
            branches
                .entry((keys[b.thread], b.site))
                .or_default()
                .push(b.taken);
        }
        let panic = ex.failure.as_ref().and_then(|f| {
            let thread = f.thread?;
            (f.kind == FailureKind::Panic)
                .then(|| (keys[thread], f.site.clone().unwrap_or_default()))
        });
        Outcomes {
            branches,
            keys,
            panic,
        }
    }

    /// The branch instances whose outcome differs in `other`: (thread, site, occurrence,
    /// outcome here), one per (thread, site), in a deterministic order.
    pub fn flips(&self, other: &Outcomes) -> Vec<(ThreadKey, Site, usize, bool)> {
        let mut flips: Vec<_> = self
            .branches
            .iter()
            .filter_map(|(key, mine)| {
                let theirs = other.branches.get(key)?;
                let at = mine.iter().zip(theirs).position(|(a, b)| a != b)?;
                Some((key.0, key.1, at, mine[at]))
            })
            .collect();
        flips.sort_unstable_by_key(|&(thread, site, at, _)| {
            (thread, site.file(), site.line(), site.column(), at)
        });
        flips
    }
}
