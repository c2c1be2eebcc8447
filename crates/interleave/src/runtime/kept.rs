//! Values a thread hands to the execution to keep until the execution ends (`thread::keep_until_end`):
//! per-thread data that outlives the thread itself, such as the labels and tags of shuttle's
//! API, which other threads may still look up after the thread finished. They are dropped as
//! their thread, inside the execution, so their destructors may use every primitive and see
//! the thread's own identity.
//!
//! When they are dropped:
//!
//! - At the end of a passing execution, with the detached tasks left over (`ending.rs`): a
//!   thread still running then drops its kept values right after its thread-locals, as it
//!   finishes; a thread that had already finished is *revived*: it gets a fresh coroutine under
//!   its own index, marked cancelled like a thread spawned during the end, whose only work is
//!   to drop the values. The end runs cancelled threads in creation order, so the kept values
//!   of every thread are dropped in the order of their threads, main first. Values kept while
//!   this goes on (a destructor that keeps another) revive their thread again; a cycle of
//!   them takes a step per revival and ends at the step bound like any other endless end.
//! - After a failed execution has been torn down, and for whatever was kept too late to be
//!   revived: on the scheduler loop's stack, in thread order, each as its thread, where visible
//!   operations are no-ops, like the thread-locals set late (`teardown.rs`).
//!
//! A destructor that panics is a panic of its thread: it fails an execution that had not
//! failed yet, and is a warning in one that had; it never reaches Rust's abort, since no panic
//! is in flight when the values are dropped.
//!
//! Determinism: revival follows thread order and asks no strategy, so the same schedule ends
//! the same way.

use super::*;

impl Execution {
    /// Keeps `value` until the end of the execution, to be dropped as thread `thread`; gives it
    /// back when the execution has no such thread.
    pub(crate) fn keep_until_end(
        &mut self,
        thread: usize,
        value: Box<dyn Any>,
    ) -> Result<(), Box<dyn Any>> {
        match self.threads.get_mut(thread) {
            Some(slot) => {
                slot.kept.push(value);
                Ok(())
            }
            None => Err(value),
        }
    }

    /// Revives every finished thread that has kept values (see the module documentation), in
    /// thread order; returns whether one was. A thread whose stack cannot be had keeps its
    /// values for the scheduler loop's stack.
    pub(super) fn revive_keepers(&mut self) -> bool {
        let mut revived = false;
        for index in 0..self.threads.len() {
            let slot = &self.threads[index];
            if !slot.finished || slot.kept.is_empty() {
                continue;
            }
            let site = slot.spawn_site;
            let Ok(stack) = self.stack_for(None, None, site) else {
                continue;
            };
            self.set_finished(index, false);
            self.set_pending(index, Op::new(OpKind::Start, NO_OBJECT));
            let slot = &mut self.threads[index];
            slot.cancelled = true;
            slot.pending_site = site;
            let guarded = guard::Guarded {
                guard: stacks::guard_page(&stack),
                usable: stacks::usable(&stack),
                index,
                name: slot.name.clone(),
                site,
            };
            let coroutine = Coroutine::with_stack(stack, move |yielder: &ThreadYielder, _| {
                revived_main(index, yielder)
            });
            self.spawned.push((index, coroutine, guarded));
            revived = true;
        }
        revived
    }
}

/// The body of a revived thread: drops its kept values (and the thread-locals their
/// destructors set), then finishes again. It keeps what its first life left for `join`.
fn revived_main(index: usize, yielder: &ThreadYielder) {
    let state = CoroutineState::new(yielder);
    state.enter();
    with(|ex| ex.threads[index].at_root = true);
    drop_kept_values(index);
    drop_thread_locals(index);
    with(|ex| ex.set_finished(index, true));
}

/// Drops the values thread `index` kept, as that thread, which is running: a destructor that
/// panics is a panic of the thread (`thread_panicked`), and the other values are still dropped.
pub(super) fn drop_kept_values(index: usize) {
    let kept = with(|ex| std::mem::take(&mut ex.threads[index].kept));
    for value in kept {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
            thread_panicked(
                index,
                payload,
                "the destructor of a value it kept panicked: ",
            );
        }
    }
}

/// Drops the kept values still held after the execution ended (a failed execution's, or ones
/// kept too late to revive their thread), each as its thread, in thread order, on the scheduler
/// loop's stack. A destructor that panics fails an execution that had not failed yet, and is
/// a warning otherwise.
pub(super) fn drop_kept_values_after_the_end() {
    drop_per_thread_after_the_end(
        |slot| !slot.kept.is_empty(),
        |slot| std::mem::take(&mut slot.kept),
        |index, message| {
            format!(
                "the destructor of a value thread {index} kept until the end of the execution \
                 panicked: {message}"
            )
        },
        true,
    );
}
