//! Switching and recording: how a visible operation is announced, decided by the schedule
//! (`decide`), recorded as a step with its synchronisation effect, and how the running thread
//! suspends when another thread was chosen.

use super::*;

/// The choke point: announce `op` at `site` and let the strategy decide who runs.
///
/// Returns when this thread has been chosen; the operation is then enabled and the caller
/// performs it. When the strategy keeps this thread running, no coroutine switch happens.
/// During teardown it returns at once.
///
/// This and the primitives' hot methods are inlined so the suspension sits directly in the
/// caller's frame: after a switch, every return through a frame that was live at the
/// suspension is mispredicted (the return-stack buffer holds the other stack's addresses),
/// which measured at about 25 ns per switch before inlining.
#[inline(always)]
#[track_caller]
pub(crate) fn switch(op: Op, site: Site) {
    let decision = with_in_data_step(|ex| ex.announce(op, site));
    suspend(decision);
}

/// The operation `switch_on` announces on an object of kind `$kind` (an `OpKind` variant),
/// with `$arg` (`Op::arg`) if given, built from the object's index. Each use is a closure of
/// its own type, so the announcement (`switch_on`'s borrow of the runtime, which is not inlined
/// into its callers) is compiled once per operation with its kind's properties (gate, whether
/// it blocks, whether it is a data access) known; one copy shared by every kind tested them at
/// run time, about 10 instructions per step.
macro_rules! op_on {
    ($kind:ident) => {
        |object| $crate::runtime::op::Op::new($crate::runtime::op::OpKind::$kind, object)
    };
    ($kind:ident, $arg:expr) => {{
        let arg = $arg;
        move |object| {
            $crate::runtime::op::Op::with($crate::runtime::op::OpKind::$kind, object, arg, false)
        }
    }};
}
pub(crate) use op_on;

/// What [`switch_on`] hands back: the object's index in this execution, and for an atomic
/// whether the execution logs the values it holds (`Limits::log_values`) and runs the weak
/// memory model, read in the same borrow so atomics pay nothing more for the question (the
/// execution keeps both flags ready, `Execution::switched_flags`; other kinds get them too and
/// ignore them). Packed in one `u32` (the flags in the top bits, above every object index) so
/// that it and the `Decision` come back from the borrow in registers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Switched(u32);

// Every object index fits below the flag bits.
const _: () = assert!(MAX_OBJECTS < 1 << 30);

impl Switched {
    const LOGS_VALUES: u32 = 1 << 31;
    const WEAK_MEMORY: u32 = 1 << 30;

    /// The flags of an execution run under `limits` (`Execution::switched_flags`).
    pub(super) fn flags(limits: &Limits) -> u32 {
        let mut flags = 0;
        if limits.log_values {
            flags |= Self::LOGS_VALUES;
        }
        if limits.memory == MemoryModel::Weak {
            flags |= Self::WEAK_MEMORY;
        }
        flags
    }

    /// The object's index in this execution.
    #[inline(always)]
    pub(crate) fn index(self) -> ObjIdx {
        self.0 & !(Self::LOGS_VALUES | Self::WEAK_MEMORY)
    }

    /// Whether atomics run under the weak memory model in this execution (`Limits::memory`):
    /// the access then goes through `Execution::atomic_load` and its siblings.
    #[inline(always)]
    pub(crate) fn weak_memory(self) -> bool {
        self.0 & Self::WEAK_MEMORY != 0
    }

    /// Whether atomics log their values around each access in this execution.
    #[inline(always)]
    pub(crate) fn logs_values(self) -> bool {
        self.0 & Self::LOGS_VALUES != 0
    }
}

/// Registers `handle` (on first use in this execution) and announces `op` on it at `site`:
/// the choke point ([`switch`]) for operations on an object.
#[inline(always)]
#[track_caller]
pub(crate) fn switch_on(
    handle: &ObjectHandle,
    object: ObjectKind,
    op: impl FnOnce(ObjIdx) -> Op,
    site: Site,
) -> Switched {
    let (switched, decision) = with_in_data_step(|ex| {
        let idx = ex.object(handle, object);
        // Every kind gets the flags, which only atomics read: `object` is a value in this
        // closure, which is not inlined, and testing it cost more than the load.
        (
            Switched(idx | ex.switched_flags),
            ex.announce(op(idx), site),
        )
    });
    suspend(decision);
    switched
}

/// What an announcement asks of the running thread: go on, or hand control to the scheduler
/// loop with the next thread to run or the end of the execution. One `u32`, so the borrow that
/// decides returns it (with an object index) in registers: a wider value went through memory
/// and its reload stalled on a failed store-to-load forward, about 4 ns per step.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Decision(u32);

impl Decision {
    /// The running thread goes on without a switch.
    pub(super) const GO_ON: Decision = Decision(u32::MAX);
    /// The running thread stops: the execution is over (or it is abandoned in teardown).
    pub(super) const STOP: Decision = Decision(u32::MAX - 1);

    /// Thread `next` runs next, or the execution is over when `None`.
    #[inline(always)]
    fn switch_to(next: Option<usize>) -> Decision {
        match next {
            Some(next) => Decision(next as u32),
            None => Decision::STOP,
        }
    }
}

/// Hands control to the scheduler loop when another thread runs next or the execution ends.
#[inline(always)]
pub(super) fn suspend(decision: Decision) {
    if decision != Decision::GO_ON {
        let next = (decision != Decision::STOP).then_some(decision.0 as usize);
        let current: *const Current = CURRENT.with(|current| current as *const Current);
        // SAFETY: the coroutine resumes on the OS thread it was suspended on (an execution
        // never migrates), so the thread-local is the same one and still alive.
        let current = unsafe { &*current };
        let state = current.coroutine.get();
        // SAFETY: the state belongs to the running coroutine (this one): it was stored when
        // the coroutine started or last resumed, and stays valid until the coroutine returns;
        // so does its yielder.
        let resume = unsafe { (*(*state).yielder).suspend(next) };
        current.coroutine.set(state);
        if resume == Resume::Unwind {
            resumed_for_teardown();
        }
    }
}

/// Suspends the running thread if the execution has failed, so nothing after the failure
/// point runs; the scheduler then ends the execution.
pub(crate) fn stop_if_failed() {
    let decision = with(|ex| {
        if ex.recording.failure.is_some() && !ex.teardown {
            Decision::STOP
        } else {
            Decision::GO_ON
        }
    });
    suspend(decision);
}

/// Chooses the thread for the next step, or `None` when the execution is over.
/// `reuse_enabled`: the enabled threads computed last still hold (see
/// `Execution::enabled_fresh`), so they are not computed again.
///
/// A common decision tests one condition before it computes the enabled threads: that the
/// step count is below `Execution::full_decision_at`, which is the step bound while nothing
/// rare has happened and 0 once something has (a failure, a stop handle, the main thread's
/// return, the end of the test); those are left to [`decide_before_enabled`], which tests each
/// in turn. The common path tested four, one by one, at every decision, and a schedule that
/// abandons the execution is one case of a choice missing from the enabled list.
pub(super) fn decide(ex: &mut Execution, reuse_enabled: bool) -> Option<usize> {
    decide_inline(ex, reuse_enabled)
}

/// [`decide`], inlined into the announcement, which is compiled once per kind of operation
/// (`op_on!`): whether the operation blocks is then a constant, and the call and its frame are
/// gone. On top of the inlined `compute_enabled_inline`, the peers bench's mutex workload runs
/// 3.0% fewer instructions per execution, the atomic one 2.4% and the condvar one 1.7%
/// (callgrind, `pct:d=3`), for 57 KB more machine code in its binary.
#[inline(always)]
fn decide_inline(ex: &mut Execution, reuse_enabled: bool) -> Option<usize> {
    if ex.steps() >= ex.full_decision_at {
        if let Some(outcome) = decide_before_enabled(ex) {
            return outcome;
        }
    } else {
        debug_assert!(
            ex.recording.failure.is_none()
                && ex.stop_handle.is_none()
                && !ex.ending
                && !ex.threads[0].finished,
            "a decision skipped the rare conditions while one of them held"
        );
    }
    if !reuse_enabled {
        ex.compute_enabled_inline();
        // The common case in three tests: no failure and the step bound not reached (a
        // failure sets `full_decision_at` to 0, and it is never above the bound), a thread
        // can run, and no spurious wake-up is possible. Testing each condition in turn took
        // five tests here and the step bound a sixth (six instructions more per decision).
        if ex.steps() >= ex.full_decision_at || ex.enabled.is_empty() || ex.spurious_possible {
            if let Some(outcome) = after_enabled_in_full(ex) {
                return outcome;
            }
        }
    } else {
        if cfg!(debug_assertions) {
            ex.check_reused_enabled();
        }
        if ex.steps() >= ex.recording.limits.max_steps {
            return stop_at_step_bound(ex);
        }
    }
    let chosen = ask_schedule(ex);
    // Whether the choice is enabled, without a branch on where in the list it is: under a
    // random walk that position is random, and a loop that stopped there was mispredicted
    // at about every other decision. A schedule that promises it is not checked in release
    // builds (`Schedule::chooses_enabled`).
    if ex.checks_choices
        && !ex
            .enabled
            .iter()
            .fold(false, |found, &t| found | (t == chosen))
    {
        return refuse(ex, chosen);
    }
    ex.record(chosen);
    Some(chosen)
}

/// The part of a decision before the enabled threads are computed, when
/// `Execution::full_decision_at` says something rare may have happened: `Some` with the
/// decision's outcome when one of those things decides it, `None` when the decision goes on
/// as a common one.
#[cold]
#[inline(never)]
fn decide_before_enabled(ex: &mut Execution) -> Option<Option<usize>> {
    if ex.recording.failure.is_some() {
        return Some(None);
    }
    // A stop ends the execution here, before the end of the test or the step bound could make
    // anything of it (`stop_signal.rs`); an execution whose threads have all finished has
    // ended by itself.
    if ex.stop_requested() && ex.threads.iter().any(|t| !t.finished) {
        ex.end_at_stop();
        return Some(None);
    }
    // The end of the test (shuttle's rule): after the main thread returned, the spawned
    // threads and the tasks somebody may still await run to their end, and the detached tasks
    // (their handles dropped) only while those do; when only detached tasks are left, the
    // execution is over and they are cancelled and dropped (`ending.rs`). The end tests its
    // own flag, not the main thread's: the main thread is revived during the end when it kept
    // values to drop as itself (`kept.rs`).
    if ex.ending {
        return Some(ex.decide_ending());
    }
    if ex.threads[0].finished && ex.threads.iter().all(|t| t.finished || t.detached) {
        return Some(ex.begin_ending());
    }
    if ex.recording.is_abandoned() {
        return Some(continue_abandoned(ex));
    }
    None
}

/// Ends the execution at the step bound.
#[cold]
#[inline(never)]
fn stop_at_step_bound(ex: &mut Execution) -> Option<usize> {
    ex.stop(Stop::StepBound);
    None
}

/// Ends the execution at a choice that is not an enabled thread: the schedule abandoned it
/// (`ABANDON`), or it chose a thread that cannot run.
#[cold]
#[inline(never)]
fn refuse(ex: &mut Execution, chosen: usize) -> Option<usize> {
    if chosen == ABANDON {
        ex.recording.abandon(ex.threads.len());
        ex.decide_in_full_from_now();
        return continue_abandoned(ex);
    }
    ex.stop(Stop::ScheduleImpossible { chosen });
    None
}

/// A decision of an execution its schedule gave up (`ABANDON`), which runs on to its end
/// without asking the schedule anything: the running thread goes on while it can and did not
/// just yield, otherwise the next enabled thread after it in thread order. Tearing the threads
/// down where the schedule gave up would unwind them in the middle of their operations, where
/// a destructor can meet a state the program never reaches (a slot claimed but not yet
/// written, dropped as if written: memory corruption in a correct program). What the
/// continuation does is cut from the recording afterwards
/// (`Recording::forget_after_abandonment`); a deadlock or the step bound still ends it by
/// teardown.
fn continue_abandoned(ex: &mut Execution) -> Option<usize> {
    ex.compute_enabled();
    if let Some(outcome) = after_enabled_in_full(ex) {
        return outcome;
    }
    let current = ex.current;
    // A thread that only a spurious wake-up lets go on is passed over while another can run
    // for real (`enabled_or_over` made sure one can): kept running, a waiter in a loop woke,
    // found its condition false and waited again until the step bound, which cost every
    // abandoned execution of a producer and consumer with spurious wake-ups on 10,000 steps.
    let stays = ex.enabled.contains(&current)
        && !ex.threads[current].last_step_yielded
        && !ex.wakes_only_spuriously(current);
    let chosen = if stays {
        current
    } else {
        let for_real = |&t: &usize| !ex.wakes_only_spuriously(t);
        let mut enabled = ex.enabled.iter().copied();
        enabled
            .clone()
            .find(|&t| t > current && for_real(&t))
            .or_else(|| enabled.find(for_real))
            .unwrap_or_else(|| ex.next_enabled_after(current))
    };
    ex.record(chosen);
    Some(chosen)
}

/// Asks the execution's schedule for the next thread, showing it the execution through a
/// [`View`]. The schedule is reached through a pointer to its own allocation while the view
/// borrows the whole execution: the view reads the execution's fields, never the schedule,
/// which lives behind its box. Moving the box out and a placeholder in, and back, cost seven
/// instructions per decision; a strategy that panics still leaves the placeholder behind
/// ([`PanickedWhileDeciding`]).
#[inline(always)]
fn ask_schedule(ex: &mut Execution) -> usize {
    let schedule: *mut (dyn Schedule + Send) = &mut *ex.schedule;
    let on_panic = PanickedWhileDeciding(ex);
    // SAFETY: the schedule is a heap allocation of its own, which nothing reached through the
    // view touches (`View` has no access to `Execution::schedule`), and nothing else uses the
    // box while the schedule decides: the runtime is borrowed (`with_in_data_step`), so a
    // strategy cannot re-enter it.
    let chosen = unsafe { (*schedule).next_thread(&View { ex: &*on_panic.0 }) };
    std::mem::forget(on_panic);
    chosen
}

/// Replaces the execution's schedule with a placeholder ([`Deciding`]) when dropped, which
/// happens only while a strategy's `next_thread` unwinds ([`ask_schedule`] forgets it
/// otherwise): the panicked schedule is dropped, and nothing asks it anything again.
struct PanickedWhileDeciding<'a>(&'a mut Execution);

impl Drop for PanickedWhileDeciding<'_> {
    #[cold]
    fn drop(&mut self) {
        self.0.schedule = Box::new(Deciding);
    }
}

/// What holds an execution's place of its schedule after the schedule panicked while it
/// decided ([`PanickedWhileDeciding`]): it has no choices.
struct Deciding;

impl Schedule for Deciding {
    fn next_thread(&mut self, _view: &View<'_>) -> usize {
        ABANDON
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }
}

/// The rest of a decision once the enabled threads are computed, when [`decide`]'s common
/// case does not hold: `Some` with the decision's outcome when the execution is over, `None`
/// when the decision goes on to ask the schedule.
#[cold]
#[inline(never)]
fn after_enabled_in_full(ex: &mut Execution) -> Option<Option<usize>> {
    if enabled_or_over(ex).is_none() {
        return Some(None);
    }
    if ex.steps() >= ex.recording.limits.max_steps {
        return Some(stop_at_step_bound(ex));
    }
    None
}

/// Lets virtual time pass while no thread is enabled, after the enabled threads were
/// computed; `None` when the execution is over (failed, or deadlocked).
fn enabled_or_over(ex: &mut Execution) -> Option<()> {
    if ex.recording.failure.is_some() {
        return None;
    }
    // Virtual time passes only when nothing can happen before the next deadline. After the
    // main thread returned the process would be gone under std, so the clock stops there.
    if ex.enabled.is_empty() && !ex.threads[0].finished {
        while ex.enabled.is_empty() && ex.advance_clock() {
            ex.compute_enabled();
            if ex.recording.failure.is_some() {
                return None;
            }
        }
    }
    // A spurious wake-up may happen but is never promised: when only spurious wake-ups could
    // let any thread go on, the threads are deadlocked (shuttle's rule too).
    if !ex.enabled.is_empty() && ex.enabled.iter().all(|&t| ex.wakes_only_spuriously(t)) {
        ex.current = 0;
        ex.stop(Stop::Deadlock);
        return None;
    }
    if ex.enabled.is_empty() {
        // Threads still blocked when nothing can run are a deadlock, also after the main thread
        // returned: under std the process would exit with them blocked, but a test that leaves
        // a thread waiting for ever has lost a wake-up or a message (shuttle and loom report it
        // too).
        // A task whose wake came from a foreign OS thread was lost, not deadlocked.
        if let Some(message) = ex.foreign.explanation(ex.tag) {
            ex.recording.outside_control = true;
            ex.current = 0;
            ex.fail(FailureKind::Nondeterminism, message);
            return None;
        }
        ex.current = 0;
        ex.stop(Stop::Deadlock);
        return None;
    }
    Some(())
}

impl Execution {
    /// Records the running thread's pending operation and decides the next step: whether the
    /// thread goes on, another one runs or the execution is over.
    #[inline(always)]
    pub(super) fn announce(&mut self, op: Op, site: Site) -> Decision {
        if self.teardown {
            // The operation goes by its fields: passed whole, it would be built in memory once
            // for this cold call, and the hot path below would copy it from there through a
            // stalled store-to-load forward (measured at about 4 ns per step).
            return self.announce_in_teardown(op.kind, op.object, op.arg, op.timed, site);
        }
        let me = self.current;
        let slot = &mut self.threads[me];
        // `set_pending` for the running thread, which is live, with the slot in hand for the
        // site: calling it here cost the mutex workload 1.3% more instructions per execution.
        if self.waiters.active {
            let previous = std::mem::replace(&mut slot.pending, op);
            self.waiters.refile(&mut self.objects, me, previous, op);
        } else {
            slot.pending = op;
        }
        slot.pending_site = site;
        if op.kind == OpKind::WriteLock {
            self.note_write_request(me, op.object);
        }
        if self.last_untracked && self.fast_path(op) {
            self.record_untracked(me);
            return Decision::GO_ON;
        }
        // An operation that cannot block leaves the running thread enabled, and nothing else
        // changed since the last decision computed the enabled threads if they are still
        // fresh.
        let next = decide_inline(self, self.enabled_fresh && !op.blocking());
        if next == Some(me) {
            Decision::GO_ON
        } else {
            Decision::switch_to(next)
        }
    }

    /// Whether `op`, announced right after a data access to an untracked object, skips the
    /// schedule: it is one too, and the execution goes on (no failure, step bound not hit, no
    /// stop asked for: `decide` ends the execution at those).
    #[inline(always)]
    pub(super) fn fast_path(&self, op: Op) -> bool {
        op.kind.is_data_access()
            && self.objects[op.object as usize].untracked
            && self.recording.failure.is_none()
            && self.steps() < self.recording.limits.max_steps
            && !self.stop_requested()
    }

    /// Records step `chosen` of the fast path (see [`Execution::fast_path`]), a data access,
    /// as [`record`](Self::record) does, out of line and with the effects of data accesses
    /// only: inlined into every announcement, `record` with its effects on every kind of
    /// object made the announcement save six registers at every step of every strategy, for a
    /// path only the strategies that leave objects untracked take; and a second use of
    /// `record` itself moved the mutex's effects out of line (mutex workload +4.4%).
    #[inline(never)]
    fn record_untracked(&mut self, chosen: usize) {
        let (kind, object, _) = self.record_event(chosen);
        debug_assert!(
            kind.is_data_access(),
            "the fast path took a step that is no data access"
        );
        self.apply_data_access_effect(kind, object);
    }

    /// Records step `chosen`, makes it the running thread, and applies the synchronisation
    /// effect of operations that need nothing from the thread and return nothing to it: clocks
    /// of atomic accesses, and the owners and clocks of blocking lock and unlock operations
    /// (`Mutex`, `RwLock`). The thread performs the operation as soon as it runs, before any
    /// other thread, so applying the effect here is equivalent and saves the primitive a second
    /// visit to the runtime.
    #[inline(always)]
    pub(super) fn record(&mut self, chosen: usize) {
        let (kind, object, site) = self.record_event(chosen);
        self.apply_step_effect(chosen, kind, object, site);
    }

    /// The part of [`record`](Self::record) before the step's effect: starts the step, logs
    /// its event and makes `chosen` the running thread; returns the step's kind, object and
    /// site.
    #[inline(always)]
    fn record_event(&mut self, chosen: usize) -> (OpKind, ObjIdx, Site) {
        let (
            Op {
                kind, object, arg, ..
            },
            site,
        ) = self.begin_step(chosen);
        self.recording.events.push(Event {
            thread: chosen as u32,
            kind,
            object,
            arg,
            site,
        });
        self.current = chosen;
        self.last_untracked =
            self.any_untracked && kind.is_data_access() && self.objects[object as usize].untracked;
        (kind, object, site)
    }

    /// Starts the step of thread `chosen`: ends its wait if its deadline is due, counts a
    /// yield, and returns its pending operation and where it was announced. A sleep or a
    /// timeout counts as a yield: a loop that waits by sleeping or by timing out lets the
    /// others run under the strategies' yield rule, as a spin loop does, and sees the stores
    /// made before it under the weak memory model.
    #[inline(always)]
    ///
    /// The thread's slot is looked up once: the timeout, which moves the clock, is handled
    /// inside the rare yield branch, where a separate lookup before it cost a second bounds
    /// check and base load per step.
    pub(super) fn begin_step(&mut self, chosen: usize) -> (Op, Site) {
        let slot = &mut self.threads[chosen];
        // Taking the flag leaves it false for the thread's next operations, which may not
        // block: this check then costs one well-predicted branch, not one per blocking kind.
        let timed_out = std::mem::take(&mut slot.times_out);
        let (op, site) = (slot.pending, slot.pending_site);
        let yielded = op.yields || timed_out;
        slot.last_step_yielded = yielded;
        if yielded {
            slot.yields += 1;
            if timed_out {
                self.move_clock_to_deadline(chosen);
            }
            self.memory.flush(chosen);
        }
        (op, site)
    }

    /// Applies the synchronisation effect of the step of thread `chosen` (now the running
    /// thread), an operation `kind` on `object` at `site`: see [`Execution::record`].
    #[inline(always)]
    pub(super) fn apply_step_effect(
        &mut self,
        chosen: usize,
        kind: OpKind,
        object: ObjIdx,
        site: Site,
    ) {
        // Every step but a data access may change whether some thread can run, by its effect
        // below or by what its primitive does once it runs.
        let data_access = kind.is_data_access();
        self.enabled_fresh &= data_access;
        // A data access is told apart by the bit test just made, before the match: through the
        // match's jump table it cost about 7 instructions and an indirect jump per step of an
        // atomic under the weak model, where it has no effect here. Under the weak memory model
        // the atomic access applies its effect itself, once it knows the value it stores and,
        // for a load, which store it reads; plain reads and writes have none.
        if data_access {
            self.apply_data_access_effect(kind, object);
            return;
        }
        match kind {
            OpKind::Lock => {
                self.recording.lock_acquisitions += 1;
                self.take_mutex(object, site);
            }
            OpKind::Unlock => self.give_mutex(object),
            OpKind::ReadLock => {
                self.recording.lock_acquisitions += 1;
                self.set_read_preference(chosen, ReadPreference::Undecided);
                self.take_rwlock(object, false, site);
            }
            OpKind::WriteLock => {
                self.recording.lock_acquisitions += 1;
                self.take_rwlock(object, true, site);
            }
            // The mutex itself is taken back by the `Condvar` once the waiter runs.
            OpKind::Wake => self.recording.lock_acquisitions += 1,
            OpKind::RwUnlock => self.give_rwlock(object),
            _ => {}
        }
    }

    /// The effect of a data access `kind` on `object` when it is recorded: under sequential
    /// consistency an atomic load acquires, a store releases and a read-modify-write does both;
    /// under the weak model the access applies its effect itself, and plain reads and writes
    /// have none.
    #[inline(always)]
    fn apply_data_access_effect(&mut self, kind: OpKind, object: ObjIdx) {
        if self.sequentially_consistent() {
            match kind {
                OpKind::AtomicLoad => self.acquire(object),
                OpKind::AtomicStore => self.release(object),
                OpKind::AtomicRmw => {
                    self.acquire(object);
                    self.release(object);
                }
                _ => {}
            }
        }
    }

    /// Whether atomics run sequentially consistent in this execution (`Limits::memory`).
    #[inline(always)]
    fn sequentially_consistent(&self) -> bool {
        self.recording.limits.memory == MemoryModel::SequentiallyConsistent
    }

    /// Asks the schedule for a value below `bound` (a recorded nondeterministic choice).
    pub fn choose_value(&mut self, bound: u64) -> u64 {
        if !self.draws_from_schedule() {
            return 0;
        }
        draw_value(&mut *self.schedule, &mut self.recording, bound)
    }

    /// Whether a nondeterministic choice now asks the schedule and is recorded. Not while the
    /// tasks left at the end are dropped (`ending.rs`), nor after the schedule gave up the
    /// execution (`continue_abandoned`), nor while the threads of a stopped or failed
    /// execution are unwound (`teardown.rs`): none of them extends the schedule, and a
    /// choice recorded after the last step would be replayed at the wrong place (a systematic
    /// search took the destructors' draws of an abandoned execution for decisions of its
    /// tree, and a later schedule that replayed them diverged).
    #[inline(always)]
    pub(super) fn draws_from_schedule(&self) -> bool {
        !self.ending && !self.teardown && !self.recording.is_abandoned()
    }
}

/// Asks `schedule` for a value below `bound` (`0`: any `u64`) and records it.
pub(super) fn draw_value(
    schedule: &mut dyn Schedule,
    recording: &mut Recording,
    bound: u64,
) -> u64 {
    let value = schedule.next_value(bound);
    let value = if bound == 0 { value } else { value % bound };
    recording.values.push(value);
    let steps = recording.steps();
    recording.value_steps.push(steps);
    value
}
