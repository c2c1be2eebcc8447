//! What is learnt from executions, above the engine:
//!
//! - [`online`]: verdicts on the execution that ran: the explanation of why it stopped
//!   (deadlock, re-locking, the step bound, a schedule that became impossible), data races
//!   on tracked variables, and the atomic-set serializability monitor.
//! - [`predict`]: from one recorded execution, what other schedules of the same program
//!   would do: lock-order deadlock cycles, potential races, atomic-set violations and the
//!   concurrent access pairs of seed 002, over must-happen-before and lockset helpers.
//!
//! Each explains its finding in terms of threads, objects and source sites.

pub(crate) mod online;
pub(crate) mod predict;

use std::fmt::Write;

use crate::runtime::op::ShortSite;
use crate::runtime::Execution;

/// `thread 1 (worker, spawned at tests/x.rs:10:5)`.
pub(crate) fn thread_label(ex: &Execution, thread: usize) -> String {
    let slot = &ex.threads[thread];
    let mut label = format!("thread {thread}");
    match (&slot.name, thread) {
        (_, 0) => label.push_str(" (main)"),
        (Some(name), _) => {
            let _ = write!(
                label,
                " ({name}, spawned at {})",
                ShortSite(slot.spawn_site)
            );
        }
        (None, _) => {
            let _ = write!(label, " (spawned at {})", ShortSite(slot.spawn_site));
        }
    }
    label
}
