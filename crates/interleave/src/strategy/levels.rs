//! The work queue of the searches that run breadth first by a bound: `icb.rs` by preemptions,
//! `delay.rs` by delays. The schedules of one bound are planned in rounds (so they can run on
//! several workers) and kept, by execution, until they are observed; what their executions find
//! becomes the next bound's schedules, which start only once every schedule of this bound has
//! been observed, so the order of the search does not depend on the number of workers.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// The most schedules one bound may queue; beyond it the search says it is no longer
/// exhaustive.
pub(super) const MAX_FRONTIER: usize = 1 << 22;

/// The schedules of the current bound, those found for the next, and those in flight.
#[derive(Clone, Debug)]
pub(super) struct Levels<T> {
    bound: usize,
    queue: VecDeque<T>,
    next: Vec<T>,
    in_flight: FxHashMap<u64, T>,
    truncated: bool,
}

impl<T> Levels<T> {
    /// A search at bound 0 with these schedules.
    pub(super) fn new(roots: Vec<T>) -> Levels<T> {
        Levels {
            bound: 0,
            queue: roots.into(),
            next: Vec::new(),
            in_flight: FxHashMap::default(),
            truncated: false,
        }
    }

    /// The bound of the schedules being planned.
    pub(super) fn bound(&self) -> usize {
        self.bound
    }

    /// Whether a bound had more than [`MAX_FRONTIER`] schedules, some of which were dropped.
    pub(super) fn truncated(&self) -> bool {
        self.truncated
    }

    /// The next schedule of the current bound, kept as execution `execution`'s until observed.
    pub(super) fn plan(&mut self, execution: u64) -> Option<&T> {
        let item = self.queue.pop_front()?;
        Some(
            self.in_flight
                .entry(execution)
                .insert_entry(item)
                .into_mut(),
        )
    }

    /// The schedule execution `execution` runs, if it is in flight.
    pub(super) fn in_flight(&self, execution: u64) -> Option<&T> {
        self.in_flight.get(&execution)
    }

    /// The schedule of execution `execution`, now observed.
    pub(super) fn observed(&mut self, execution: u64) -> Option<T> {
        self.in_flight.remove(&execution)
    }

    /// Queues a schedule of the next bound; false, and the search is no longer exhaustive, when
    /// the next bound already holds [`MAX_FRONTIER`] of them.
    pub(super) fn push_next(&mut self, item: T) -> bool {
        if self.next.len() >= MAX_FRONTIER {
            self.truncated = true;
            return false;
        }
        self.next.push(item);
        true
    }

    /// How many executions to plan before observing: only what is queued, since the next
    /// bound needs this one's outcomes.
    pub(super) fn round_size(&self) -> usize {
        self.queue.len().clamp(1, 64)
    }

    /// Whether every schedule of the current bound has been planned and observed.
    pub(super) fn drained(&self) -> bool {
        self.queue.is_empty() && self.in_flight.is_empty()
    }

    /// Moves to the next bound, its schedules in the order `order` leaves them, if it has any
    /// and the current bound is below `max`; false otherwise.
    pub(super) fn next_bound(&mut self, max: usize, order: impl FnOnce(&mut [T])) -> bool {
        if self.bound >= max || self.next.is_empty() {
            return false;
        }
        self.bound += 1;
        let mut level = std::mem::take(&mut self.next);
        order(&mut level);
        self.queue = level.into();
        true
    }

    /// Starts again at bound 0 with these schedules, dropping those found for the next bound.
    pub(super) fn restart(&mut self, roots: Vec<T>) {
        self.bound = 0;
        self.next.clear();
        self.queue = roots.into();
    }

    /// What the report says was covered: `scope` names the schedules of every bound up to the
    /// largest, `stopped` where the execution budget stopped the search.
    pub(super) fn coverage(&self, finished: bool, scope: &str, stopped: &str) -> String {
        if self.truncated {
            format!("not exhaustive: a bound had more than {MAX_FRONTIER} {scope}")
        } else if finished {
            format!("all {scope}")
        } else {
            format!(
                "stopped early (the execution budget, a failure or a stop) at {stopped}: not all \
                 {scope} have run"
            )
        }
    }
}
