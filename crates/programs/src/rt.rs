//! The runtime the program sources in [`crate::suite`] are compiled against: interleave.
//!
//! `interleave-peers` provides modules of the same shape for shuttle and loom.

pub use interleave::{cell, sync, thread};
