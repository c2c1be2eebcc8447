//! `spawn_local`: a task whose future need not be `Send`, as tokio's and shuttle's.

use std::future::Future;
use std::panic::Location;

use super::JoinHandle;

/// Spawns a task whose future need not be `Send`; awaiting the handle gives its output.
///
/// Sound without `Send` because interleave runs every thread and task of an execution as a
/// coroutine on the one OS thread that runs the execution, and none outlives it: the future
/// never leaves the OS thread it was created on.
///
/// The task is still a thread of its own, scheduled independently of its spawner, as a task of
/// a multi-threaded runtime is: it is not co-scheduled with the other tasks of one executor
/// thread. So a blocking call in one local task (a sync lock held by another across an
/// `.await`) blocks only that task here, where on tokio's current-thread runtime or in a
/// `LocalSet` it would block every task of the executor.
///
/// ```
/// use std::rc::Rc;
/// use interleave::future;
///
/// interleave::check(|| {
///     future::block_on(async {
///         let shared = Rc::new(5);
///         let task = future::spawn_local({
///             let shared = shared.clone();
///             async move { *shared + 1 }
///         });
///         assert_eq!(task.await.unwrap(), 6);
///     })
/// });
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    super::spawn_at(future, Location::caller())
}
