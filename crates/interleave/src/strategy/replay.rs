//! Replays a recorded schedule exactly: the thread of every step and every recorded value.
//! When the recorded thread cannot run, the runtime reports the divergence and where.

use super::{Schedule, View};

/// The schedule recorded in a replay token.
pub(crate) struct ReplaySchedule {
    choices: Vec<u32>,
    values: Vec<u64>,
    next_value: usize,
}

impl ReplaySchedule {
    pub fn new(choices: Vec<u32>, values: Vec<u64>) -> ReplaySchedule {
        ReplaySchedule {
            choices,
            values,
            next_value: 0,
        }
    }
}

/// What `next_thread` returns when the recording has no more steps: no thread has this index,
/// so the runtime reports a divergence.
pub(crate) const END_OF_RECORDING: usize = usize::MAX;

impl Schedule for ReplaySchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.choices
            .get(view.step() as usize)
            .map_or(END_OF_RECORDING, |&t| t as usize)
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        let value = self.values.get(self.next_value).copied().unwrap_or(0);
        self.next_value += 1;
        value
    }
}
