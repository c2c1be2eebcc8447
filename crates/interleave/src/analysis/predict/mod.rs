//! Predictive analyses: from one recorded execution, what other schedules of the same program
//! would do. The strategies of seeds 001, 002 and 003 and RaceFuzzer direct their schedules
//! at what these find.

pub(crate) mod access_pairs;
pub(crate) mod atomic_set_prediction;
pub(crate) mod fork_join;
pub(crate) mod lock_order;
pub(crate) mod lockset;
pub(crate) mod object_names;
pub(crate) mod race_prediction;
