//! `shuttle::current`: the identity of the running task.

use crate::scheduler::TaskId;

/// The running task.
pub fn me() -> TaskId {
    TaskId::from(interleave::thread::current().id().as_usize())
}

/// The running task (always `Some` inside a test).
pub fn get_current_task() -> Option<TaskId> {
    Some(me())
}

/// The number of possible context switches so far in this execution (interleave's scheduling
/// points, `interleave::thread::context_switches`).
pub fn context_switches() -> usize {
    interleave::thread::context_switches()
}
