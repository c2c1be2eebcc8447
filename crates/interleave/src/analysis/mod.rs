//! What is learnt from executions, above the engine:
//!
//! - [`stops`]: after the run, why the engine stopped it (deadlock, re-locking, the step
//!   bound, a schedule that became impossible), from the state it recorded at the stop.
//! - [`online`]: verdicts while the execution runs: data races on tracked variables, and the
//!   atomic-set serializability monitor.
//! - [`predict`]: from one recorded execution, what other schedules of the same program
//!   would do: lock-order deadlock cycles, potential races, atomic-set violations and the
//!   concurrent access pairs of seed 002, over must-happen-before and lockset helpers.
//!
//! Each explains its finding in terms of threads, objects and source sites.

pub(crate) mod online;
pub(crate) mod predict;
pub(crate) mod stops;

use std::fmt::Write;

use crate::runtime::op::{ShortSite, Site};
use crate::runtime::Recording;

/// `thread 1 (worker, spawned at tests/x.rs:10:5)`, for a thread of a finished execution.
pub(crate) fn thread_label(recording: &Recording, thread: usize) -> String {
    let record = &recording.threads[thread];
    label(thread, record.name.as_deref(), record.spawn_site)
}

/// The label of thread `thread`, named `name` and spawned at `spawn_site`.
pub(crate) fn label(thread: usize, name: Option<&str>, spawn_site: Site) -> String {
    let mut label = format!("thread {thread}");
    match (name, thread) {
        (_, 0) => label.push_str(" (main)"),
        (Some(name), _) => {
            let _ = write!(label, " ({name}, spawned at {})", ShortSite(spawn_site));
        }
        (None, _) => {
            let _ = write!(label, " (spawned at {})", ShortSite(spawn_site));
        }
    }
    label
}
