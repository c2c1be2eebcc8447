//! Teardown after a failure: the remaining threads are visited in reverse creation order. A
//! thread suspended in its own code is left where it stood, as the end of a process leaves its
//! threads: its destructors do not run and its stack is leaked. Unwinding it there, as this
//! module did before, starts a panic at an operation that never panics under std, in the middle
//! of whatever the thread was doing: a lock-free structure that had copied a value out of a
//! slot but not yet advanced its index dropped the value twice, and the double free crashed the
//! process before the report was printed. A thread that is unwinding a panic of its own goes on
//! (its operations run as no-op steps with their lock effects), a task parked between polls is
//! cancelled and drops its future with no panic in flight, and a thread that would block, spin
//! or abort is abandoned with its stack. Past [`MAX_LEFT_STANDING`] threads left in one process,
//! the leaked stacks would grow without bound, so later threads are unwound as before. Also the
//! end-of-execution drops of `lazy_static!` values and thread-locals (the late ones included, as
//! their thread).

use std::sync::atomic::AtomicUsize;

use super::*;

/// How many visible operations one thread may attempt while it is torn down before it is
/// abandoned: a destructor that spins on `yield_now` must not hang the exploration.
pub(super) const TEARDOWN_STEP_BOUND: u32 = 10_000;

/// How many threads teardown may leave where they stood in one process. Each keeps its stack,
/// mapped and never reused (256 KiB by default): a run that counts every failure of thousands
/// of failing executions (the CLI's benchmark) would otherwise map stacks until the system
/// refused, so past this many the threads of later failed executions are unwound as before.
pub(super) const MAX_LEFT_STANDING: usize = 4096;

/// The threads teardown has left where they stood in this process (see [`MAX_LEFT_STANDING`]).
static LEFT_STANDING: AtomicUsize = AtomicUsize::new(0);

/// Whether one more thread may be left where it stood, counting it if so.
fn may_leave_standing() -> bool {
    LEFT_STANDING
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            (left < MAX_LEFT_STANDING).then_some(left + 1)
        })
        .is_ok()
}

/// Teardown resumed this thread where it was suspended: unwind it, or if it is already
/// unwinding, let its operation go on when that is harmless (see `Execution::teardown_point`).
#[cold]
#[inline(never)]
pub(super) fn resumed_for_teardown() {
    let decision = with(|ex| {
        let slot = &ex.threads[ex.current];
        let (op, site) = (slot.pending, slot.pending_site);
        ex.teardown_point(op, site, true)
    });
    suspend(decision);
}

/// The payload of the panic that unwinds a thread during teardown. While it exists the thread
/// is unwinding (or user code holds the payload); dropping it, which the thread's root does
/// after catching it and a user's `catch_unwind` does when it discards the result, tells the
/// runtime the thread is no longer unwinding.
pub(super) struct TeardownUnwind {
    tag: u64,
    thread: usize,
}

impl Drop for TeardownUnwind {
    fn drop(&mut self) {
        try_with(|ex| {
            if ex.tag == self.tag {
                if let Some(slot) = ex.threads.get_mut(self.thread) {
                    slot.teardown_unwinding = false;
                }
            }
        });
    }
}

/// Tears down every unfinished thread, children first, and recycles the stacks.
///
/// Each coroutine is resumed once with `Resume::Unwind`: a thread that never started drops its
/// closure (`thread_main`); a suspended one is left where it stood after a failure, or (past
/// `MAX_LEFT_STANDING`, and for the tasks the end of a passing execution unwinds) raises the
/// teardown's unwind where it stopped, which its root catches, and its destructors run under
/// the rules of `Execution::teardown_point`. A coroutine that comes back suspended instead of
/// finished was left standing or abandoned: it would block or spin forever, and raising a
/// panic in it would abort the process because it is already unwinding. Its stack is leaked,
/// not freed or reused, so nothing that lives there (values scoped children borrow, pinned
/// futures) is ever used or freed without its destructor; its thread-locals leak with it.
pub(super) fn teardown(coroutines: &mut [Option<ThreadCoroutine>]) {
    let clean = with(|ex| {
        ex.teardown = true;
        for slot in &mut ex.threads {
            slot.unwinding_at_stop = slot.panicked && slot.panic_in_flight.is_some();
        }
        // A failure while the tasks left at the end were dropped ends that protocol: what is
        // left is torn down as after any failure.
        ex.ending = false;
        ex.threads.iter().all(|t| t.finished)
    });
    if clean {
        return;
    }
    for index in (0..coroutines.len()).rev() {
        let Some(mut coroutine) = coroutines[index].take() else {
            continue;
        };
        let leaks = with(|ex| {
            ex.current = index;
            ex.teardown_steps = 0;
            ex.recording.limits.panic_stops_execution && ex.threads[index].panicked
        });
        if leaks {
            // A panic stopped the execution (`Limits::panic_stops_execution`): the thread that
            // raised it is not resumed, so no destructor of its unwind can panic and abort.
            with(|ex| {
                let slot = &mut ex.threads[index];
                std::mem::forget(std::mem::take(&mut slot.locals));
                ex.recording.warnings.push(format!(
                    "thread {index} panicked, which stopped the execution; its stack was \
                     leaked without unwinding it further, so its destructors did not run"
                ));
            });
            std::mem::forget(coroutine);
            continue;
        }
        match coroutine.resume(Resume::Unwind) {
            CoroutineResult::Return(()) => {
                let stack = coroutine.into_stack();
                with(|ex| ex.stacks.give_back(stack));
            }
            CoroutineResult::Yield(_) => {
                with(|ex| {
                    let left_standing = std::mem::take(&mut ex.left_standing);
                    let slot = &mut ex.threads[index];
                    std::mem::forget(std::mem::take(&mut slot.locals));
                    // The values the thread handed to the runtime (`keep_until_end`) are
                    // still dropped at the end, as promised, and so are `lazy_static!` values.
                    if left_standing {
                        return;
                    }
                    // An abandoned thread still unwinding keeps the OS thread panicking; only
                    // then can it be unwinding the panic that was in flight at the stop.
                    if !ex.panicking_at_start && std::thread::panicking() {
                        lost_panic(slot, index);
                    }
                    let operation = slot.pending.name();
                    ex.recording.warnings.push(format!(
                        "while the failed execution was torn down, thread {index} was abandoned \
                         at `{operation}`: it could not go on without blocking or spinning"
                    ));
                });
                std::mem::forget(coroutine);
            }
        }
    }
}

/// Thread `index`, abandoned by teardown, was still unwinding the program's panic that was in
/// flight when the execution stopped (teardown never raised its own unwind there): the panic
/// would be lost with the stack, so it is kept as unobserved, which the report then shows.
fn lost_panic(slot: &mut ThreadSlot, index: usize) {
    if !slot.unwinding_at_stop || slot.teardown_unwinding || slot.unobserved_panic.is_some() {
        return;
    }
    let Some(panic) = slot.panic_in_flight.take() else {
        return;
    };
    slot.unobserved_panic = Some(Box::new(UnobservedPanic {
        order: panic.order,
        message: format!(
            "{}\n\nthread {index} was unwinding a panic when the execution stopped, and blocked \
             before it had finished: its stack was leaked, and its panic is reported here",
            panic.message
        ),
        site: panic.site,
        static_message: None,
    }));
}

/// Drops the execution's `lazy_static!` values, the latest initialised first and each while the
/// others can still be used, on the scheduler loop's stack (visible operations of their
/// destructors are no-ops there). A destructor that
/// panics fails an execution that had not failed yet, as a panic of the main thread.
pub(super) fn drop_lazy_statics() {
    // Statics are dropped as if by the main thread, after every other thread has ended.
    with(|ex| ex.current = 0);
    // A destructor may initialise a static again; the bound ends such a cycle, leaking the rest.
    let mut budget = 4 * with(|ex| ex.lazy_statics.len()) + 16;
    while let Some(value) = with(|ex| ex.lazy_statics.take_latest()) {
        if budget == 0 {
            std::mem::forget(value);
            continue;
        }
        budget -= 1;
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
            let (message, site) = panics::describe(payload.as_ref());
            drop_quietly(payload);
            with(|ex| {
                if ex.recording.failure.is_none() {
                    ex.current = 0;
                    let message = format!(
                        "the destructor of a lazy_static! value panicked at the end of the \
                         execution: {message}"
                    );
                    ex.record_failure(FailureInfo {
                        site,
                        ..FailureInfo::new(FailureKind::Panic, message, Some(0))
                    });
                }
            });
        }
    }
}

/// Drops the thread-local values set after their thread had dropped its own (by the destructor
/// of a static, or of another thread-local), each as its thread, in thread order, on the
/// scheduler loop's stack like the statics. Left in the slot they would be dropped with the
/// execution's buffers, outside any execution. A destructor that panics fails an execution
/// that had not failed yet, as a panic of its thread.
pub(super) fn drop_late_thread_locals() {
    drop_per_thread_after_the_end(
        |slot| !slot.locals.is_empty(),
        |slot| {
            std::mem::take(&mut slot.locals)
                .into_iter()
                .map(|(_, value)| value)
                .collect()
        },
        |_, message| format!("a thread_local! destructor panicked: {message}"),
        false,
    );
}

/// Drops the values `take` takes out of each thread's slot, each as its thread, in thread
/// order, on the scheduler loop's stack, if `holds` says any slot has some (most executions
/// leave none: one look at the slots then saves a round of visits to the runtime per thread,
/// about 110 instructions each). A destructor may add values again (use another key,
/// keep another value); after [`THREAD_LOCAL_ROUNDS`] rounds the rest are leaked. A destructor
/// that panics fails an execution that had not failed yet, as a panic of its thread, with the
/// message `describe` words from the thread's index and the panic's message; after a failure
/// it is a warning when `warn_after_failure`, and nothing otherwise.
pub(super) fn drop_per_thread_after_the_end(
    holds: impl Fn(&ThreadSlot) -> bool,
    take: impl Fn(&mut ThreadSlot) -> Vec<Box<dyn Any>>,
    describe: impl Fn(usize, &str) -> String,
    warn_after_failure: bool,
) {
    let threads = with(|ex| ex.threads.iter().any(&holds).then_some(ex.threads.len()));
    let Some(threads) = threads else {
        return;
    };
    for index in 0..threads {
        for _ in 0..THREAD_LOCAL_ROUNDS {
            let values = with(|ex| {
                ex.current = index;
                take(&mut ex.threads[index])
            });
            if values.is_empty() {
                break;
            }
            for value in values {
                if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
                    let (message, site) = panics::describe(payload.as_ref());
                    drop_quietly(payload);
                    let message = describe(index, &message);
                    with(|ex| {
                        if ex.recording.failure.is_none() {
                            ex.record_failure(FailureInfo {
                                site,
                                ..FailureInfo::new(FailureKind::Panic, message, Some(index))
                            });
                        } else if warn_after_failure {
                            ex.recording.warnings.push(message);
                        }
                    });
                }
            }
        }
        let left = with(|ex| take(&mut ex.threads[index]));
        std::mem::forget(left);
    }
}

/// Drops `value`, discarding a panic of its destructor (and leaking that panic's payload, whose
/// own destructor might panic too).
pub(super) fn drop_quietly<T>(value: T) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// How many times the destructors of a finishing thread's thread-locals may create new ones
/// (a destructor that uses another key) before the rest are leaked.
pub(super) const THREAD_LOCAL_ROUNDS: usize = 4;

/// Runs the destructors of thread `index`'s thread-locals, one at a time, each on its own: a
/// panicking destructor is a panic of the thread (std aborts the process there), reported
/// like one, and the other values are still dropped.
pub(super) fn drop_thread_locals(index: usize) {
    let locals = with(|ex| {
        let slot = &mut ex.threads[index];
        slot.locals_destroyed = true;
        std::mem::take(&mut slot.locals)
    });
    drop_thread_locals_taken(index, locals);
}

/// [`drop_thread_locals`] once the thread's slot is marked (`locals_destroyed`) and its
/// values taken (`locals`), which a finishing thread does in the visit to the runtime that
/// clears its panic state.
pub(super) fn drop_thread_locals_taken(index: usize, mut locals: Vec<(usize, Box<dyn Any>)>) {
    for round in 0..THREAD_LOCAL_ROUNDS {
        if round > 0 {
            locals = with(|ex| std::mem::take(&mut ex.threads[index].locals));
        }
        if locals.is_empty() {
            return;
        }
        for (_, value) in std::mem::take(&mut locals) {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
                thread_panicked(index, payload, "a thread_local! destructor panicked: ");
            }
        }
    }
    let left = with(|ex| std::mem::take(&mut ex.threads[index].locals));
    std::mem::forget(left);
}

impl Execution {
    /// A visible operation while the execution is torn down: no schedule, no step, no event.
    #[cold]
    #[inline(never)]
    pub(super) fn announce_in_teardown(
        &mut self,
        kind: OpKind,
        object: ObjIdx,
        arg: u32,
        timed: bool,
        site: Site,
    ) -> Decision {
        if self.on_scheduler_stack {
            return Decision::GO_ON;
        }
        self.teardown_point(Op::with(kind, object, arg, timed), site, false)
    }

    /// What the running thread does at a visible operation during teardown. The execution is
    /// over, so user code must not go on with it; how to stop it depends on whether the thread
    /// is unwinding, because a panic raised inside a destructor that runs during unwinding
    /// aborts the process:
    ///
    /// - Not unwinding, after a failure: leave the thread where it stands (`STOP`, and
    ///   teardown leaks its stack), as the end of a process would. Past `MAX_LEFT_STANDING`,
    ///   at the end of a passing execution, and for a cancelled task (dropping its future at
    ///   the runtime's request), as in the case that follows.
    /// - Not unwinding (teardown just resumed it, or user code caught the teardown's unwind
    ///   with `catch_unwind` and went on): raise the teardown's unwind (again). A user's
    ///   `catch_unwind` can delay the end of the thread, never let it perform an operation.
    ///   Two exceptions go on as below: the release of a lock (a thread suspended at the
    ///   unlock in a guard's `drop` would otherwise keep the lock for good), and the
    ///   operations of the destructors of a thread's thread-locals, which run after its own
    ///   code has ended.
    /// - Unwinding (a destructor runs): the operation goes on as a no-op step if it could take
    ///   effect now (an unlock, a store, a `join` of a thread that returned a value), with its
    ///   effect on the lock it takes or releases applied, so guards keep their exclusion.
    ///   Otherwise (it would block, or spawn a thread that could never run) the thread is
    ///   suspended for good and teardown abandons it (see [`teardown`]).
    ///
    /// Either way a thread attempts at most `TEARDOWN_STEP_BOUND` operations before it is
    /// abandoned, so a destructor (or a `catch_unwind` loop) that spins cannot hang the
    /// exploration. Returns `STOP` to abandon the thread, or `GO_ON`.
    ///
    /// `resumed`: teardown has just resumed the thread at the operation it was suspended at
    /// when the execution stopped, rather than the thread announcing a new one.
    ///
    /// The slot's pending operation is left as it was when the execution stopped: the report
    /// shows it.
    pub(super) fn teardown_point(&mut self, op: Op, site: Site, resumed: bool) -> Decision {
        let me = self.current;
        self.teardown_steps += 1;
        if self.teardown_steps > TEARDOWN_STEP_BOUND {
            return Decision::STOP;
        }
        let slot = &mut self.threads[me];
        // A task parked between polls (at its spawn site) is cancelled rather than unwound: it
        // drops its future as at the end of a passing execution (`ending.rs`), with no panic in
        // flight, so a destructor that panics there is reported instead of aborting the process.
        // So is one that the end of the execution had cancelled already, and that had not run
        // since when a failure stopped the end.
        if op.kind == OpKind::Park
            && std::ptr::eq(site, slot.spawn_site)
            && !self.may_be_unwinding(me)
        {
            let slot = &mut self.threads[me];
            slot.cancelled = true;
            slot.park_token = true;
            return Decision::GO_ON;
        }
        let slot = &self.threads[me];
        // A thread that dropped its future when cancelled, or a closure it never ran, or that
        // has finished and drops its thread-locals, is past its own code: its destructors go
        // on like those of a thread that is unwinding.
        // Where teardown resumed the thread, it was suspended before the failure (in a
        // destructor that blocked, say): it is unwound from there like any other, unless its
        // closure had ended and it was dropping what it left at its root (a panic's payload,
        // its thread-locals, its kept values): there is nothing left to unwind but that.
        let past_its_code = slot.at_root || (!resumed && (slot.cancelled || slot.locals_destroyed));
        // A release goes on: a thread suspended at the unlock of a guard's `drop` is unwound
        // from there, and raising the unwind instead would leave the lock held for good.
        let releases = matches!(op.kind, OpKind::Unlock | OpKind::RwUnlock);
        if !past_its_code && !releases && !self.may_be_unwinding(me) {
            // After a failure the thread stays where it is, in the middle of its operation,
            // as the end of the process would leave it (see the module's documentation). The
            // end of a passing execution still unwinds the tasks it finds in a poll, and a
            // cancelled task, which was dropping its future at the runtime's request when a
            // destructor blocked, is unwound so that its other destructors run.
            if self.recording.failure.is_some()
                && !self.threads[me].cancelled
                && may_leave_standing()
            {
                self.left_standing = true;
                return Decision::STOP;
            }
            self.threads[me].teardown_unwinding = true;
            let payload = TeardownUnwind {
                tag: self.tag,
                thread: me,
            };
            // `resume_unwind` skips the panic hook: this is no panic of the program.
            panic::resume_unwind(Box::new(payload));
        }
        if !self.enabled_in_teardown(me, op) {
            return Decision::STOP;
        }
        self.apply_lock_effect(op, site);
        Decision::GO_ON
    }

    /// The running thread's closure (or future) has ended: what it runs from now on is the
    /// runtime's clean-up at its root, whose destructors go on during teardown
    /// (`ThreadSlot::at_root`).
    pub(crate) fn own_code_ended(&mut self) {
        let me = self.current;
        self.threads[me].at_root = true;
    }

    /// Whether thread `t` may be running a destructor during unwinding, where raising a panic
    /// would abort the process. No panic in flight on this OS thread means no; otherwise the
    /// runtime's record of the panics raised in `t` decides, erring towards yes.
    pub(super) fn may_be_unwinding(&self, t: usize) -> bool {
        if !std::thread::panicking() {
            return false;
        }
        let slot = &self.threads[t];
        slot.teardown_unwinding
            || slot.panicked
            || CURRENT.with(|current| current.unattributed_panic.get())
    }

    /// Whether thread `t`'s operation `op` may go on during teardown.
    pub(super) fn enabled_in_teardown(&mut self, t: usize, op: Op) -> bool {
        match op.kind {
            // A thread spawned while the tasks left at the end of a passing execution are
            // dropped is cancelled, and dropped in turn (`ending.rs`); after a failure it could
            // never be.
            OpKind::Spawn => self.ending,
            // `join` must hand over a value: an `Err` would make the usual `join().unwrap()`
            // in a destructor panic during unwinding, which aborts.
            OpKind::Join => self
                .threads
                .get(op.arg as usize)
                .is_some_and(|target| target.finished && target.returned),
            _ if !op.blocking() => true,
            _ => {
                // `op_enabled` reads the pending operation, which keeps what the thread was
                // doing when the execution stopped (the report shows it).
                let stopped_at = std::mem::replace(&mut self.threads[t].pending, op);
                let enabled = self.op_enabled(t, true);
                self.threads[t].pending = stopped_at;
                enabled
            }
        }
    }

    /// Applies what `record` would to the owners of locks for the running thread's operation
    /// `op` at `site`, which goes on during teardown without being recorded.
    pub(super) fn apply_lock_effect(&mut self, op: Op, site: Site) {
        let Op { kind, object, .. } = op;
        match kind {
            OpKind::Lock => self.take_mutex(object, site),
            OpKind::Unlock => self.give_mutex(object),
            OpKind::ReadLock => self.take_rwlock(object, false, site),
            OpKind::WriteLock => self.take_rwlock(object, true, site),
            OpKind::RwUnlock => self.give_rwlock(object),
            _ => {}
        }
    }
}
