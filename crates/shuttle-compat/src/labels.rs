//! Per-task labels and tags, shuttle's `current::Labels` and `current::Tag`, kept here because
//! interleave has no notion of them.
//!
//! Every task of an execution (thread or async task) runs on the OS thread of that execution, so
//! the labels of its tasks live in a `std` thread-local map keyed by the task's index; the runner
//! clears the map when an execution starts. A task inherits a snapshot of its parent's labels and
//! tag at spawn time: the spawn wrappers of [`crate::thread`] and [`crate::future`] take the
//! snapshot with [`for_child`] and the child installs it with [`adopt`] before running its body.
//! The snapshot waits in the same thread-local map under a number, so only that number crosses
//! into the child's closure and labels need not be `Send`.
//!
//! The values are the user's, and their destructors may use shuttle's API (look up a task's
//! name, spawn, lock). So a task's labels and tag are not dropped with the map: the first time
//! a task gets an entry, a [`RecordKeeper`] for it is handed to the execution with
//! `interleave::thread::keep_until_end`, and the execution drops that keeper as the task, in
//! task order, when it ends; the keeper takes the task's entry out of the map and drops it
//! there, inside the execution, as shuttle drops its tasks' labels.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use crate::current::{ChildLabelFn, Tag, TaskName};
use crate::scheduler::TaskId;

/// A label value: any `Clone` type, boxed so that a map of them can be cloned.
trait LabelValue: Any {
    fn clone_boxed(&self) -> Box<dyn LabelValue>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Clone + 'static> LabelValue for T {
    fn clone_boxed(&self) -> Box<dyn LabelValue> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A set of labels: at most one value of each type, as shuttle's `Labels`.
#[derive(Default)]
pub struct Labels {
    values: HashMap<TypeId, Box<dyn LabelValue>>,
}

impl Clone for Labels {
    fn clone(&self) -> Labels {
        Labels {
            values: self
                .values
                .iter()
                .map(|(&type_id, value)| (type_id, value.as_ref().clone_boxed()))
                .collect(),
        }
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Labels")
            .field("len", &self.values.len())
            .finish()
    }
}

impl Labels {
    /// An empty set.
    pub fn new() -> Labels {
        Labels::default()
    }

    /// Sets the label of type `T`, returning the one it replaces.
    pub fn insert<T: Clone + 'static>(&mut self, value: T) -> Option<T> {
        self.values
            .insert(TypeId::of::<T>(), Box::new(value))
            .map(|previous| downcast_owned(previous))
    }

    /// The label of type `T`, if set.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| value.as_ref().as_any().downcast_ref())
    }

    /// The label of type `T`, mutably, if set.
    pub fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.values
            .get_mut(&TypeId::of::<T>())
            .and_then(|value| value.as_mut().as_any_mut().downcast_mut())
    }

    /// The label of type `T`, set to `value` first if it was not set.
    pub fn get_or_insert<T: Clone + 'static>(&mut self, value: T) -> &mut T {
        self.get_or_insert_with(|| value)
    }

    /// The label of type `T`, set to `make()` first if it was not set.
    pub fn get_or_insert_with<T: Clone + 'static, F: FnOnce() -> T>(&mut self, make: F) -> &mut T {
        self.values
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(make()))
            .as_mut()
            .as_any_mut()
            .downcast_mut()
            .expect("a label is stored under its own type's id")
    }

    /// The label of type `T`, set to its default first if it was not set.
    pub fn get_or_insert_default<T: Default + Clone + 'static>(&mut self) -> &mut T {
        self.get_or_insert_with(T::default)
    }

    /// Removes the label of type `T`, returning it.
    pub fn remove<T: 'static>(&mut self) -> Option<T> {
        self.values
            .remove(&TypeId::of::<T>())
            .map(|previous| downcast_owned(previous))
    }

    /// Removes every label.
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Whether no label is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The number of labels set.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Sets every label of `other`, replacing labels of the same types.
    pub fn extend(&mut self, other: Labels) {
        self.values.extend(other.values);
    }
}

/// Unboxes a label value stored under `T`'s type id.
fn downcast_owned<T: 'static>(value: Box<dyn LabelValue>) -> T {
    *value
        .into_any()
        .downcast()
        .unwrap_or_else(|_| unreachable!("a label is stored under its own type's id"))
}

/// What a task carries: its labels and its tag.
#[derive(Clone, Default)]
struct TaskRecord {
    labels: Labels,
    tag: Option<Arc<dyn Tag>>,
}

/// The tasks of the execution running on this OS thread, and the snapshots waiting for the
/// children they were taken for.
#[derive(Default)]
struct Registry {
    tasks: HashMap<usize, TaskRecord>,
    pending: HashMap<u64, TaskRecord>,
    next_pending: u64,
    /// How many resources each task has created at each site, for resource signatures.
    created: HashMap<(usize, &'static Location<'static>), usize>,
    /// The spawned tasks whose closure or future has ended (returned, panicked or was dropped).
    finished: std::collections::HashSet<usize>,
    /// The tasks whose entry in `tasks` the execution will drop when it ends (see
    /// [`RecordKeeper`]).
    kept: std::collections::HashSet<usize>,
}

impl Registry {
    /// The entry of `task`, created empty if it has none, with its keeper handed to the
    /// execution.
    fn record(&mut self, task: usize) -> &mut TaskRecord {
        if self.kept.insert(task) {
            let thread = interleave::thread::ThreadId::from_usize(task);
            if let Err(keeper) = interleave::thread::keep_until_end(thread, RecordKeeper(task)) {
                // The execution has no such task: its entry stays in the map, and the next
                // execution's `reset` leaks it rather than drop it in the wrong execution.
                std::mem::forget(keeper);
            }
        }
        self.tasks.entry(task).or_default()
    }
}

/// Drops the entry of its task, its labels and tag, when the execution drops it as that task at
/// its end (see the module documentation).
struct RecordKeeper(usize);

impl Drop for RecordKeeper {
    fn drop(&mut self) {
        let task = self.0;
        let record = REGISTRY
            .try_with(|registry| {
                let mut registry = registry.try_borrow_mut().ok()?;
                registry.kept.remove(&task);
                registry.tasks.remove(&task)
            })
            .ok()
            .flatten();
        // The user's destructors run after the map is released, so they may use labels.
        drop(record);
    }
}

thread_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

/// Forgets every task's labels and tags: called when an execution starts, since task indices
/// are reused by the next execution.
pub(crate) fn reset() {
    let mut previous = REGISTRY.with(|registry| std::mem::take(&mut *registry.borrow_mut()));
    // The previous execution dropped every entry it kept as its task. What is left (labels of a
    // task id no thread had, snapshots for children whose closures were leaked with a failed
    // execution) belongs to an execution that is over: its destructors would run in this one,
    // or use a primitive of the other, so it is leaked.
    std::mem::forget(std::mem::take(&mut previous.tasks));
    std::mem::forget(std::mem::take(&mut previous.pending));
}

/// Names the main thread of a new execution `main-thread`, shuttle's name for it (its
/// `thread::current().name()` stays interleave's `main`).
pub(crate) fn adopt_as_main() {
    let mut record = TaskRecord::default();
    record.labels.insert(TaskName::from("main-thread"));
    let me = crate::current::me();
    let replaced =
        REGISTRY.with(|registry| std::mem::replace(registry.borrow_mut().record(me.0), record));
    drop(replaced);
}

/// A snapshot of the running task's labels and tag, for a child it is about to spawn. Dropped
/// without being adopted (the child never ran), it drops the snapshot.
#[derive(Debug)]
pub(crate) struct Inherited(Option<u64>);

impl Drop for Inherited {
    fn drop(&mut self) {
        let Some(key) = self.0.take() else {
            return;
        };
        let snapshot = REGISTRY
            .try_with(|registry| registry.try_borrow_mut().ok()?.pending.remove(&key))
            .ok()
            .flatten();
        drop(snapshot);
    }
}

/// Takes the snapshot a child spawned now inherits.
///
/// # Panics
/// Outside an execution, as spawning does.
pub(crate) fn for_child() -> Inherited {
    let parent = crate::current::me().0;
    REGISTRY.with(|registry| {
        let mut registry = registry.borrow_mut();
        let Some(record) = registry.tasks.get(&parent).cloned() else {
            return Inherited(None);
        };
        let key = registry.next_pending;
        registry.next_pending += 1;
        registry.pending.insert(key, record);
        Inherited(Some(key))
    })
}

/// Marks its task finished when dropped: held by the closure or future of a spawned task for
/// as long as it runs, so it drops when the task returns, panics or is aborted.
#[must_use = "the task counts as finished when this is dropped"]
pub(crate) struct Running(usize);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = REGISTRY.try_with(|registry| {
            if let Ok(mut registry) = registry.try_borrow_mut() {
                registry.finished.insert(self.0);
            }
        });
    }
}

/// Whether the spawned task `task` of this execution has finished.
pub(crate) fn has_finished(task: usize) -> bool {
    REGISTRY.with(|registry| registry.borrow().finished.contains(&task))
}

/// Installs the inherited snapshot as the running task's labels and tag, first applying the
/// parent's `ChildLabelFn` if it had one, then naming the task after its thread's name;
/// returns what marks the task finished when its closure or future is gone.
pub(crate) fn adopt(mut inherited: Inherited) -> Running {
    let me = crate::current::me();
    let mut record = inherited
        .0
        .take()
        .and_then(|key| REGISTRY.with(|registry| registry.borrow_mut().pending.remove(&key)))
        .unwrap_or_default();
    if let Some(child_label_fn) = record.labels.get::<ChildLabelFn>().cloned() {
        (child_label_fn.0)(me, &mut record.labels);
    }
    if let Some(name) = interleave::thread::current().name() {
        record.labels.insert(TaskName::from(name));
    }
    let replaced =
        REGISTRY.with(|registry| std::mem::replace(registry.borrow_mut().record(me.0), record));
    drop(replaced);
    Running(me.0)
}

/// Runs `f` on the labels of `task`, which start empty.
pub(crate) fn with_labels<R>(task: TaskId, f: impl FnOnce(&mut Labels) -> R) -> R {
    // The label values are the user's: taking them out of the map while `f` runs lets their
    // `Clone` and `Drop` implementations use labels too without a double borrow.
    let mut labels =
        REGISTRY.with(|registry| std::mem::take(&mut registry.borrow_mut().record(task.0).labels));
    let result = f(&mut labels);
    REGISTRY.with(|registry| {
        let mut registry = registry.borrow_mut();
        let slot = &mut registry.record(task.0).labels;
        let added_meanwhile = std::mem::replace(slot, labels);
        slot.extend(added_meanwhile);
    });
    result
}

/// The name of `task`, without creating an entry for it (for `Debug`, which may run anywhere,
/// even while the labels are being changed).
pub(crate) fn name(task: TaskId) -> Option<TaskName> {
    REGISTRY.with(|registry| {
        let registry = registry.try_borrow().ok()?;
        registry
            .tasks
            .get(&task.0)?
            .labels
            .get::<TaskName>()
            .cloned()
    })
}

/// The number of resources the running task created at `site` before this one: with the task
/// and the site, it identifies a resource the same way in every execution that creates it.
pub(crate) fn creation_index(site: &'static Location<'static>) -> (TaskId, usize) {
    let me = crate::current::me();
    let index = REGISTRY.with(|registry| {
        let mut registry = registry.borrow_mut();
        let count = registry.created.entry((me.0, site)).or_default();
        *count += 1;
        *count - 1
    });
    (me, index)
}

/// The tag of `task`.
pub(crate) fn tag(task: TaskId) -> Option<Arc<dyn Tag>> {
    REGISTRY.with(|registry| {
        registry
            .borrow()
            .tasks
            .get(&task.0)
            .and_then(|record| record.tag.clone())
    })
}

/// Sets the tag of `task`, returning the previous one.
pub(crate) fn set_tag(task: TaskId, tag: Arc<dyn Tag>) -> Option<Arc<dyn Tag>> {
    REGISTRY.with(|registry| registry.borrow_mut().record(task.0).tag.replace(tag))
}
