//! The end of a passing execution: dropping the detached tasks left unfinished when the main
//! thread has returned and only they are left (shuttle's protocol for the tasks left at the end
//! of an execution; std would exit the process with them).
//!
//! The protocol, run as part of the execution, so destructors see a working runtime:
//!
//! 1. Every task parked between polls (or not yet started) is cancelled: it wakes and drops its
//!    future as itself, on its own stack, with every primitive working (it may lock, wait,
//!    spawn, yield). Its thread-locals are dropped as it finishes.
//! 2. A thread spawned meanwhile is cancelled at once: a task drops its future without polling
//!    it (its handle reports `Cancelled`), a thread drops its closure without running it (its
//!    `join` returns `Err`).
//! 3. The cancelled threads run in creation order: the earliest one that can make progress
//!    runs; one that blocks or yields lets the next one run, and threads that all yield take
//!    turns.
//! 4. A task that was in the middle of a poll (spinning, or blocked on a primitive) takes no
//!    step: it is unwound, one at a time in creation order, whenever no cancelled thread can go
//!    on but by yielding while holding no lock. Its destructors run as in a failed execution's
//!    teardown (`teardown.rs`): operations that can take effect go on at once. A destructor
//!    there that would block or spin fails the execution.
//! 5. The values threads kept until the end of the execution (`kept.rs`) are dropped as their
//!    threads in the same turns: a thread still running drops them as it finishes, and a
//!    finished one is revived, as a cancelled thread, to drop them.
//! 6. A cancelled thread that blocks for ever is a deadlock, and one that keeps running (spins,
//!    or respawns) exceeds the step bound: both fail the execution, with words that say the
//!    tasks left at the end were being dropped (`analysis/stops.rs`).
//!
//! Determinism: no strategy is asked and nothing is recorded: the order above is a function
//! of the state, so the same schedule ends the same way. The steps count towards the step
//! bound and `thread::context_switches`, and value choices (random numbers, which store a
//! load reads) take the first option, so the end never extends a schedule.

use super::*;

impl Execution {
    /// The main thread has returned and only detached tasks are left: cancels those parked
    /// between polls, leaves those in the middle of a poll to be unwound, and decides the first
    /// step of dropping them. `None` when nothing is left.
    #[cold]
    #[inline(never)]
    pub(super) fn begin_ending(&mut self) -> Option<usize> {
        if self.threads.iter().all(|t| t.finished && t.kept.is_empty()) {
            return None;
        }
        self.ending = true;
        self.decide_in_full_from_now();
        self.last_untracked = false;
        for slot in self.threads.iter_mut().filter(|t| !t.finished) {
            // A task parks between polls at the site it was spawned at (`future::run_task`);
            // a `block_on` inside its future parks at its own call site.
            let between_polls = slot.pending.kind == OpKind::Start
                || (slot.pending.kind == OpKind::Park
                    && std::ptr::eq(slot.pending_site, slot.spawn_site));
            if between_polls {
                slot.cancelled = true;
                slot.park_token = true;
            } else {
                slot.left_to_unwind = true;
            }
        }
        // The finished threads that kept values run again to drop them (`kept.rs`).
        self.revive_keepers();
        self.decide_ending()
    }

    /// The next step while the tasks left at the end are dropped: the earliest cancelled
    /// thread that can run an operation other than a yield; else the next task left in the
    /// middle of a poll is unwound (`unwind_next`, `None` returned) if no cancelled thread
    /// holds a lock its destructors might need; else the yielders take turns. No thread able
    /// to run is a deadlock.
    #[cold]
    #[inline(never)]
    pub(super) fn decide_ending(&mut self) -> Option<usize> {
        if self.recording.failure.is_some() {
            return None;
        }
        // Values kept while the end went on revive their finished threads (`kept.rs`).
        if self.threads.iter().all(|t| t.finished) && !self.revive_keepers() {
            return None;
        }
        self.compute_enabled();
        if self.recording.failure.is_some() {
            return None;
        }
        let threads = &self.threads;
        self.enabled.retain(|&t| !threads[t].left_to_unwind);
        let progresses = self
            .enabled
            .iter()
            .copied()
            .find(|&t| !self.threads[t].pending.yields);
        let chosen = match progresses {
            Some(chosen) => chosen,
            None => {
                let unwind = self.threads.iter().position(|t| t.left_to_unwind);
                if let Some(unwind) = unwind {
                    if self.enabled.is_empty() || !self.cancelled_thread_holds_a_lock() {
                        self.unwind_next = Some(unwind);
                        return None;
                    }
                }
                if self.enabled.is_empty() {
                    self.current = self.threads.iter().position(|t| !t.finished).unwrap_or(0);
                    self.stop(Stop::Deadlock);
                    return None;
                }
                self.next_enabled_after(self.current)
            }
        };
        if self.steps() + self.ending_steps >= self.recording.limits.max_steps {
            self.current = chosen;
            self.stop(Stop::StepBound);
            return None;
        }
        self.ending_steps += 1;
        let (Op { kind, object, .. }, site) = self.begin_step(chosen);
        self.current = chosen;
        self.apply_step_effect(chosen, kind, object, site);
        Some(chosen)
    }

    /// Whether a thread that is being dropped holds a `Mutex` or `RwLock`: then the stack of a
    /// task left in the middle of a poll is not unwound yet, since its destructors could not
    /// wait for the lock.
    fn cancelled_thread_holds_a_lock(&self) -> bool {
        let holds = |holder: &Holder| {
            let slot = &self.threads[holder.thread];
            !slot.finished && !slot.left_to_unwind
        };
        self.objects.iter().any(|object| match &object.state {
            ObjState::Mutex { holder } => holder.as_ref().is_some_and(holds),
            ObjState::RwLock { writer, readers } => {
                writer.as_ref().is_some_and(holds) || readers.iter().any(holds)
            }
            _ => false,
        })
    }

    /// Whether the running thread was cancelled by the end of the execution (`ending.rs`).
    pub(crate) fn cancelled(&self) -> bool {
        self.threads[self.current].cancelled
    }

    /// Whether the running thread is being unwound by the runtime itself (teardown), rather
    /// than by a panic of the program: a guard it drops then poisons nothing.
    pub(crate) fn unwound_by_teardown(&self) -> bool {
        self.threads[self.current].teardown_unwinding
    }

    /// Whether the tasks left at the end of a passing execution are being dropped.
    pub(crate) fn ending(&self) -> bool {
        self.ending
    }

    /// The number of scheduling points passed so far, those of the end included.
    pub(crate) fn scheduling_points(&self) -> u64 {
        self.steps() + self.ending_steps
    }
}

/// Unwinds thread `index`, a task left in the middle of a poll at the end of a passing
/// execution, as a failed execution's teardown would (`teardown.rs`): it runs alone until it
/// has finished. A destructor there that would block or spin abandons the thread with its
/// stack and fails the execution, since it could never finish.
pub(super) fn unwind_at_end(coroutines: &mut [Option<ThreadCoroutine>], index: usize) {
    let Some(mut coroutine) = coroutines.get_mut(index).and_then(Option::take) else {
        with(|ex| ex.threads[index].left_to_unwind = false);
        return;
    };
    with(|ex| {
        ex.teardown = true;
        ex.current = index;
        ex.teardown_steps = 0;
    });
    let finished = match coroutine.resume(Resume::Unwind) {
        CoroutineResult::Return(()) => {
            let stack = coroutine.into_stack();
            with(|ex| ex.stacks.give_back(stack));
            true
        }
        CoroutineResult::Yield(_) => {
            std::mem::forget(coroutine);
            false
        }
    };
    with(|ex| {
        ex.teardown = false;
        let slot = &mut ex.threads[index];
        slot.left_to_unwind = false;
        ex.set_finished(index, true);
        let slot = &mut ex.threads[index];
        if !finished {
            std::mem::forget(std::mem::take(&mut slot.locals));
            let operation = slot.pending.name();
            let site = slot.pending_site;
            ex.current = index;
            ex.fail(
                FailureKind::Deadlock,
                format!(
                    "deadlock while dropping the tasks that were unfinished at the end of the \
                     execution: thread {index} was in the middle of a poll at `{operation}` \
                     ({}:{}), and a destructor that ran as it was unwound could not go on \
                     without blocking or spinning",
                    site.file(),
                    site.line()
                ),
            );
        }
    });
}
