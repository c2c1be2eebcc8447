//! The runtime the program sources in [`crate::suite`] are compiled against: interleave.
//!
//! `interleave-peers` provides modules of the same shape for shuttle and loom; there
//! `atomic_set` only runs the closures, since neither peer checks atomic-set serializability.

pub use interleave::{atomic_set, cell, sync, thread};
