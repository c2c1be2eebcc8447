//! Failure detectors: online ones inside the runtime (deadlock, re-locking, the step bound,
//! data races), the lock-order deadlock predictor and the race predictor that analyse a finished
//! execution, and the concurrent access pairs of seed 002 that value-schedule testing derives
//! its orders from. Each explains its finding in terms of threads, objects and source sites.

pub(crate) mod access_pairs;
pub(crate) mod atomic_set_prediction;
pub(crate) mod deadlock;
pub(crate) mod fork_join;
pub(crate) mod lock_order;
pub(crate) mod lockset;
pub(crate) mod race;
pub(crate) mod race_prediction;
pub(crate) mod serializability;

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
