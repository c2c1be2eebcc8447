//! The runtime the program sources in [`crate::suite`] are compiled against: interleave.
//!
//! `interleave-peers` provides modules of the same shape for shuttle and loom; there
//! `atomic_set` only runs the closures, and `branch` only returns its condition, since neither
//! peer checks atomic-set serializability or looks for schedule-sensitive branches.

pub use interleave::{atomic_set, branch, cell, sync, thread};
