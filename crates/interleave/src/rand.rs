//! Recorded nondeterministic choices. A value drawn here is chosen by the strategy and recorded
//! in the schedule, so a replay token reproduces it; randomness from elsewhere would make
//! executions irreproducible.

use std::ops::Range;

use crate::runtime;

/// A value in `range`, chosen by the strategy and recorded for replay.
///
/// # Panics
/// If `range` is empty.
#[track_caller]
pub fn random_range(range: Range<u64>) -> u64 {
    assert!(
        range.start < range.end,
        "interleave::rand::random_range called with the empty range {range:?}"
    );
    let width = range.end - range.start;
    range.start + runtime::with(|ex| ex.choose_value(width))
}

/// A boolean chosen by the strategy and recorded for replay.
#[track_caller]
pub fn random_bool() -> bool {
    runtime::with(|ex| ex.choose_value(2)) == 1
}
