//! The engine's words come from the layer above it. The engine knows why it stopped an
//! execution (a [`Stop`]); explaining it (the blocked threads, the wait-for cycle, what to do)
//! and printing the report before a process abort (the interleaving, the replay token) belong
//! to the analysis and report layers. They hand the engine a [`Narrator`] in its
//! [`super::Limits`], so the engine imports nothing above it.
//!
//! The engine calls the narrator at the moment of the stop: teardown then unwinds the
//! remaining threads, whose guards release the locks the explanation names.

use super::failure::{FailureInfo, Stop};
use super::Execution;

/// How a stop, and a failure that ends in a process abort, are put into words.
#[derive(Debug)]
pub(crate) struct Narrator {
    /// The message of a failure the engine detected itself.
    pub stop: fn(&Execution, Stop) -> String,
    /// The report printed just before Rust aborts the process because a destructor panicked
    /// while its thread was unwinding: `failure` (the execution's, or the unwinding panic) and
    /// then `destructor` (the engine's paragraph on the second panic), with the interleaving so
    /// far and a replay token.
    pub before_abort: fn(&Execution, &FailureInfo, destructor: &str) -> String,
}
