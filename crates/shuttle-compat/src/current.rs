//! `shuttle::current`: the identity of the running task, its labels, tag and name, and its
//! vector clock.
//!
//! A task is an interleave thread (an async task runs on one), identified by its index in the
//! execution. Labels and tags are kept by this crate per task (see the crate's `labels`
//! module): a task starts with a copy of its parent's, taken when it was spawned through this
//! crate's `thread` or `future` functions, and a task spawned with a name
//! (`thread::Builder::name`) gets it as its [`TaskName`]. Threads spawned in a `thread::scope`
//! start without labels. A task's labels and tag outlive it, and are dropped at the end of the
//! execution as that task, in task order. The vector clock is interleave's happens-before clock.

use std::any::Any;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

pub use crate::labels::Labels;
pub use crate::scheduler::TaskId;

/// The running task.
pub fn me() -> TaskId {
    TaskId::from(interleave::thread::current().id().as_usize())
}

/// The running task.
///
/// # Panics
/// Outside an execution, with shuttle's words (`ExecutionState` is not set).
pub fn get_current_task() -> Option<TaskId> {
    match try_get_current_task() {
        Some(task) => Some(task),
        None => panic!("`ExecutionState` is not set: get_current_task called outside a test"),
    }
}

/// The running task, or `None` outside an execution (and while interleave's runtime itself
/// runs, where shuttle too has no current task), so `Drop` handlers and `tracing` layers can
/// call it anywhere.
pub fn try_get_current_task() -> Option<TaskId> {
    interleave::thread::try_current().map(|thread| TaskId::from(thread.id().as_usize()))
}

/// The number of possible context switches so far in this execution (interleave's scheduling
/// points, `interleave::thread::context_switches`).
pub fn context_switches() -> usize {
    interleave::thread::context_switches()
}

/// A vector clock: entry `i` counts the synchronisation epochs of task `i` that happen before
/// the point it was read at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorClock {
    entries: Vec<u32>,
}

impl VectorClock {
    /// An empty clock (every entry zero).
    pub fn new() -> VectorClock {
        VectorClock::default()
    }

    /// The entry of task `i`, zero beyond the clock's length.
    pub fn get(&self, i: usize) -> u32 {
        self.entries.get(i).copied().unwrap_or(0)
    }
}

impl<const N: usize> From<&[u32; N]> for VectorClock {
    fn from(entries: &[u32; N]) -> VectorClock {
        VectorClock::from(&entries[..])
    }
}

impl From<&[u32]> for VectorClock {
    fn from(entries: &[u32]) -> VectorClock {
        VectorClock {
            entries: entries.to_vec(),
        }
    }
}

impl std::ops::Deref for VectorClock {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.entries
    }
}

impl PartialOrd for VectorClock {
    /// Happens-before: `Less` when every entry is at most the other's and the clocks differ,
    /// `None` when neither is below the other. Missing entries count as zero.
    fn partial_cmp(&self, other: &VectorClock) -> Option<Ordering> {
        let length = self.entries.len().max(other.entries.len());
        let mut ordering = Ordering::Equal;
        for i in 0..length {
            ordering = match (ordering, self.get(i).cmp(&other.get(i))) {
                (ordering, Ordering::Equal) => ordering,
                (Ordering::Equal, entry) => entry,
                (ordering, entry) if ordering == entry => ordering,
                _ => return None,
            };
        }
        Some(ordering)
    }
}

/// shuttle's reset of the step count that its step bound checks, for a test that calls it
/// whenever it has made progress.
///
/// # Panics
/// Always: interleave's step bound (`Config::max_steps`) counts every step of the execution,
/// which the strategies and the replay token rely on, so it cannot be reset; raise the bound
/// instead.
pub fn reset_step_count() {
    panic!(
        "interleave-shuttle cannot reset the step count: interleave's step bound counts every \
         step of the execution; raise Config::max_steps instead"
    );
}

/// The running task's vector clock (interleave's happens-before clock).
pub fn clock() -> VectorClock {
    VectorClock {
        entries: interleave::thread::vector_clock(),
    }
}

/// The vector clock of another task is not recorded by interleave; only the running task's is
/// available.
///
/// # Panics
/// Unless `task` is the running task.
pub fn clock_for(task: TaskId) -> VectorClock {
    assert_eq!(
        task,
        me(),
        "interleave-shuttle: clock_for gives only the running task's clock"
    );
    clock()
}

/// A task's name, shown with its id: the name it was spawned with, or one set with
/// [`set_name_for_task`].
#[derive(Clone, PartialEq, Eq)]
pub struct TaskName(String);

impl From<String> for TaskName {
    fn from(name: String) -> TaskName {
        TaskName(name)
    }
}

impl From<&str> for TaskName {
    fn from(name: &str) -> TaskName {
        TaskName(name.to_owned())
    }
}

impl From<TaskName> for String {
    fn from(name: TaskName) -> String {
        name.0
    }
}

impl<'a> From<&'a TaskName> for &'a String {
    fn from(name: &'a TaskName) -> &'a String {
        &name.0
    }
}

impl fmt::Debug for TaskName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A label that sets the labels of the tasks its holder spawns: when a task with this label
/// spawns a child, the child's copy of the labels is passed to the function (with the child's
/// id) before the child runs.
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct ChildLabelFn(pub Arc<dyn Fn(TaskId, &mut Labels) + 'static>);

impl fmt::Debug for ChildLabelFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChildLabelFn")
    }
}

/// Runs `f` on the labels of `task`.
pub fn with_labels_for_task<F, T>(task: TaskId, f: F) -> T
where
    F: FnOnce(&mut Labels) -> T,
{
    crate::labels::with_labels(task, f)
}

/// The label of type `T` of `task`, if set.
pub fn get_label_for_task<T: Clone + fmt::Debug + 'static>(task: TaskId) -> Option<T> {
    with_labels_for_task(task, |labels| labels.get().cloned())
}

/// Sets the label of type `T` of `task`, returning the one it replaces.
pub fn set_label_for_task<T: Clone + fmt::Debug + 'static>(task: TaskId, value: T) -> Option<T> {
    with_labels_for_task(task, |labels| labels.insert(value))
}

/// Removes the label of type `T` of `task`, returning it.
pub fn remove_label_for_task<T: Clone + fmt::Debug + 'static>(task: TaskId) -> Option<T> {
    with_labels_for_task(task, |labels| labels.remove())
}

/// The name of `task`, if it has one.
pub fn get_name_for_task(task: TaskId) -> Option<TaskName> {
    get_label_for_task::<TaskName>(task)
}

/// Names `task`, returning its previous name.
pub fn set_name_for_task(task: TaskId, name: impl Into<TaskName>) -> Option<TaskName> {
    set_label_for_task(task, name.into())
}

/// A piece of metadata attached to a task, as shuttle's deprecated `Tag`: implemented for every
/// [`Taggable`] type. A task starts with its parent's tag.
pub trait Tag: Taggable {
    /// The tag as `Any`, to downcast it to its type.
    fn as_any(&self) -> &dyn Any;
}

/// The opt-in marker of the types that can be a [`Tag`].
pub trait Taggable: fmt::Debug {}

impl<T: Taggable + Any> Tag for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Sets the running task's tag, returning the previous one.
pub fn set_tag_for_current_task(tag: Arc<dyn Tag>) -> Option<Arc<dyn Tag>> {
    crate::labels::set_tag(me(), tag)
}

/// The running task's tag.
pub fn get_tag_for_current_task() -> Option<Arc<dyn Tag>> {
    crate::labels::tag(me())
}

/// The tag of `task`.
pub fn get_tag_for_task(task: TaskId) -> Option<Arc<dyn Tag>> {
    crate::labels::tag(task)
}

/// Sets the tag of `task`, returning the previous one.
pub fn set_tag_for_task(task: TaskId, tag: Arc<dyn Tag>) -> Option<Arc<dyn Tag>> {
    crate::labels::set_tag(task, tag)
}
