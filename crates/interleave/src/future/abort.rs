//! `AbortHandle`: a handle that can cancel a task without being able to await it, as tokio's
//! and shuttle's.

use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use super::{Abort, JoinHandle};
use crate::runtime;
use crate::thread::{self, Thread};

/// Cancels a task; cloned freely, it does not detach or await the task.
#[derive(Clone)]
pub struct AbortHandle {
    aborted: Arc<Abort>,
    thread: Thread,
}

impl<T> JoinHandle<T> {
    /// A handle that can cancel this task.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            aborted: self.aborted.clone(),
            thread: self.thread.clone(),
        }
    }
}

impl AbortHandle {
    /// Cancels the task, as [`JoinHandle::abort`] does.
    #[track_caller]
    pub fn abort(&self) {
        // One step sets the flag and wakes the task: a second scheduling point here would let
        // the task drop its future before the aborting thread's next step, which no runtime
        // does (tokio and shuttle both set the flag and wake the task at once). The step is an
        // unpark of the task, which is what orders it against the task's parks (see `Abort`).
        let aborted = &self.aborted;
        self.thread.unpark_with(Location::caller(), |stepped| {
            aborted.set();
            if stepped {
                // Reports show the step as the abort it is, not as the unpark it takes.
                runtime::with(|ex| ex.label_step_just_taken("abort"));
            }
        });
    }

    /// Whether the task has finished, by completing or by being cancelled (a scheduling
    /// point).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        thread::is_finished_inner(&self.thread, Location::caller())
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}
