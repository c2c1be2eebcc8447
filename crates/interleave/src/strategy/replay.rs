//! Replays a recorded schedule exactly: the thread of every step and every recorded value.
//! When the recorded thread cannot run, the runtime reports the divergence and where.

use super::{Schedule, View};
use crate::runtime::schedule::END_OF_RECORDING;

/// The schedule recorded in a replay token.
pub(crate) struct ReplaySchedule {
    /// The recorded threads as runs of (thread, number of steps), kept as runs because a
    /// token's run lengths are untrusted numbers that may exceed any memory.
    runs: Vec<(u32, u64)>,
    /// The run that holds the step asked for last, and the step that run starts at: steps are
    /// asked for in order, so finding the next one's run is constant time.
    run: usize,
    run_start: u64,
    values: Vec<u64>,
    next_value: usize,
}

impl ReplaySchedule {
    pub fn new(choices: Vec<u32>, values: Vec<u64>) -> ReplaySchedule {
        ReplaySchedule::from_runs(runs(choices), values)
    }

    pub fn from_runs(runs: Vec<(u32, u64)>, values: Vec<u64>) -> ReplaySchedule {
        ReplaySchedule {
            runs,
            run: 0,
            run_start: 0,
            values,
            next_value: 0,
        }
    }

    /// The thread recorded for `step`, if the recording is that long.
    fn thread_at(&mut self, step: u64) -> Option<u32> {
        if step < self.run_start {
            self.run = 0;
            self.run_start = 0;
        }
        while let Some(&(thread, length)) = self.runs.get(self.run) {
            if step - self.run_start < length {
                return Some(thread);
            }
            self.run_start += length;
            self.run += 1;
        }
        None
    }
}

impl Schedule for ReplaySchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.thread_at(view.step())
            .map_or(END_OF_RECORDING, |t| t as usize)
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        let value = self.values.get(self.next_value).copied().unwrap_or(0);
        self.next_value += 1;
        value
    }
}

/// Run-length encodes a sequence of chosen threads.
pub(crate) fn runs(choices: impl IntoIterator<Item = u32>) -> Vec<(u32, u64)> {
    let mut runs: Vec<(u32, u64)> = Vec::new();
    for choice in choices {
        match runs.last_mut() {
            Some((thread, length)) if *thread == choice => *length += 1,
            _ => runs.push((choice, 1)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_answer_every_step_in_and_out_of_order() {
        let mut schedule = ReplaySchedule::new(vec![0, 0, 1, 2, 2, 2], Vec::new());
        let forward: Vec<Option<u32>> = (0..7).map(|step| schedule.thread_at(step)).collect();
        assert_eq!(
            forward,
            [Some(0), Some(0), Some(1), Some(2), Some(2), Some(2), None]
        );
        assert_eq!(schedule.thread_at(2), Some(1));
        let mut empty = ReplaySchedule::from_runs(vec![(3, 0), (4, u64::MAX)], Vec::new());
        assert_eq!(empty.thread_at(u64::MAX - 1), Some(4));
    }
}
