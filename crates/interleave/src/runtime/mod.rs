//! The controlled execution engine: runs one execution of a test closure with every thread as a
//! stackful coroutine on the current OS thread, exactly one running at a time.
//!
//! **Invariant (the choke point):** every visible operation calls [`switch`] *before* it takes
//! effect. `switch` records the pending operation in the thread's slot, computes which threads
//! are enabled, asks the execution's [`Schedule`] which one runs, and records the step. If the
//! same thread was chosen it simply goes on and performs its operation; otherwise it suspends,
//! handing the decision to the scheduler loop in [`run`], which resumes the chosen thread. The
//! runtime never consults the strategy anywhere else, and the strategy never mutates the
//! runtime: it sees a read-only [`View`]. The one shortcut: a data access to an object the
//! schedule does not track (`Schedule::tracks`) right after another such access of the same
//! thread is recorded without asking the schedule, which promised to keep the thread running.
//!
//! **Virtual time:** every execution has a clock that starts at zero and moves only when no
//! thread can run while the main thread is still running: it then jumps to the earliest future
//! deadline of a blocked thread (a sleep, a timed wait, or an async timer of a parked thread),
//! which makes exactly the threads due at that instant runnable. The jump is no scheduling
//! decision, so it is the same under every strategy and in every replay.
//!
//! A failure (panic, deadlock, relock, step bound, data race, divergence) stops the execution;
//! the remaining coroutines are then torn down in reverse creation order (children before the
//! parents whose stacks scoped children may borrow from). See [`teardown`] for how: a thread is
//! unwound by a panic the runtime raises in it, user code may never run on in the dead
//! execution, and a thread that cannot be unwound without blocking, spinning or aborting the
//! process is abandoned with its stack.

pub(crate) mod annotations;
pub(crate) mod clock;
pub(crate) mod condvar_queue;
pub(crate) mod foreign;
mod guard;
mod live;
pub(crate) mod object;
pub mod op;
mod panics;
mod signal_text;
mod stacks;
mod view;
mod watchdog;

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rustc_hash::FxHashMap;

use crate::config::RaceMode;
use crate::report::{FailureInfo, FailureKind};
use crate::strategy::Schedule;
use annotations::Annotations;
use clock::VectorClock;
use object::{Holder, ObjState, ObjectEntry, ObjectHandle, MAX_OBJECTS};
use op::{ObjIdx, ObjectId, ObjectKind, Op, OpKind, Site, NO_OBJECT};

pub use view::{PendingOp, ThreadState, UnitView, View};

/// Coroutines yield the thread the scheduler loop should resume next (`None`: the execution is
/// over), so a switch costs the loop no visit to the runtime; the loop tells a coroutine it
/// resumes whether to go on or to unwind.
type ThreadCoroutine = Coroutine<Resume, Option<usize>, (), DefaultStack>;
type ThreadYielder = Yielder<Resume, Option<usize>>;

/// What the scheduler loop asks of a coroutine it resumes. Passing it as the resume value costs
/// the switch nothing, where a look at the execution after every switch would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resume {
    /// Perform the operation the thread announced.
    Run,
    /// The execution is over: unwind (see [`teardown`]).
    Unwind,
}

/// How many visible operations one thread may attempt while it is torn down before it is
/// abandoned: a destructor that spins on `yield_now` must not hang the exploration.
const TEARDOWN_STEP_BOUND: u32 = 10_000;

/// One step of an execution: which thread performed which operation on which object, where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub thread: u32,
    pub kind: OpKind,
    pub object: ObjIdx,
    /// The operation's argument (see `Op::arg`).
    pub arg: u32,
    pub site: Site,
}

/// The runtime's record of one thread.
pub(crate) struct ThreadSlot {
    pub pending: Op,
    pub pending_site: Site,
    pub finished: bool,
    /// The thread finished by returning from its closure, so its `JoinHandle` holds a value.
    pub returned: bool,
    /// A panic raised in this thread (seen by the hook) may still be unwinding its stack: set
    /// when the panic starts, cleared when the thread's root catches it. A `catch_unwind` in
    /// user code leaves it set, which only makes teardown more careful.
    pub panicked: bool,
    /// Teardown raised its unwind in this thread and the payload was not dropped yet (see
    /// [`TeardownUnwind`]).
    pub teardown_unwinding: bool,
    /// The thread ended by a panic that no `join` has observed yet: its message and site. A
    /// panic observed through `join` is the program's business, as under std; one left
    /// unobserved when the execution ends is a failure (see `Execution::unobserved_panic`).
    /// Boxed: it is rare, and the slot stays small for the scheduler's scans.
    pub unobserved_panic: Option<Box<(String, Option<String>)>>,
    /// An async task whose `JoinHandle` was dropped: once the main thread has returned and only
    /// such tasks are left, the execution ends and they are cancelled (see `decide`).
    pub detached: bool,
    /// The pending operation can run now only by ending its wait by itself, with a timeout or
    /// (when allowed) a spurious wake-up (set with the enabled threads, see `time_out_if_due`);
    /// strategies count such a step as a yield.
    pub times_out: bool,
    pub clock: VectorClock,
    pub name: Option<Arc<str>>,
    pub spawn_site: Site,
    /// `thread::park`'s token.
    pub park_token: bool,
    /// What `unpark` calls released to this thread, acquired when `park` consumes the token.
    pub unpark_clock: VectorClock,
    /// In a condition variable's wait queue and not yet notified.
    pub waiting: bool,
    /// The barrier generation this thread waits to see pass.
    pub barrier_generation: u64,
    /// The rendezvous message number this thread waits to see received.
    pub ticket: u64,
    /// How many yields this thread performed in this execution.
    pub yields: u32,
    /// Values of `thread_local!` keys, by key address.
    pub locals: Vec<(usize, Box<dyn Any>)>,
    /// Set once the thread has started destroying its thread-locals (`LocalKey::try_with`).
    pub locals_destroyed: bool,
    /// The outermost unit of work this thread is in (an index into `Annotations::units`),
    /// and how deeply units are nested there.
    pub unit: Option<usize>,
    pub unit_depth: u32,
    /// What a task's future was pending on at its last poll (`future::awaiting`): what a
    /// parked task waits for, for the deadlock report.
    pub awaiting: Vec<Awaited>,
    /// The virtual time at which the pending operation times out; meaningful only while that
    /// operation is timed (`Op::timed`).
    pub deadline: Duration,
    /// The earliest deadline of the async timers this thread registered: it ends the thread's
    /// `Park`, which is how a task waits for its future.
    pub timer_deadline: Option<Duration>,
    /// The data address of the waker of the task this thread polls (0 outside `block_on` and
    /// tasks), so firing a timer does not wake the thread that is already awake to poll again.
    pub task_waker: usize,
}

/// An async timer (`crate::time::Sleep`) waiting for the virtual clock: the thread that polled
/// it last and the waker to wake at its deadline.
pub(crate) struct Timer {
    pub key: TimerKey,
    pub deadline: Duration,
    pub thread: usize,
    pub waker: Waker,
}

/// What a `Sleep` keeps to find its timer: the execution it registered in, and its number there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    tag: u64,
    id: u64,
}

/// What a pending task's future waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Awaited {
    /// One of the async primitives (its kind), awaited at a site when it is known.
    Primitive(&'static str, Option<Site>),
    /// The end of the task spawned at this site (awaiting its `JoinHandle`).
    Task(Site),
}

/// Per-execution settings the runtime needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub max_steps: u64,
    pub stack_size: usize,
    pub races: RaceMode,
    /// Whether atomics log the values they held around each access (for the
    /// schedule-sensitive-branch analysis, which compares values); off, they pay one test.
    pub log_values: bool,
    /// How long the execution may go without a coroutine switch before the watchdog reports
    /// it (`watchdog.rs`); `None`: never.
    pub watchdog: Option<Duration>,
    /// Waits (`Condvar::wait`, `park`) may end without a notification (`Config::spurious_wakeups`).
    pub spurious_wakeups: bool,
}

/// The state of one execution.
pub(crate) struct Execution {
    /// Distinguishes this execution from every other one in the process, so object handles
    /// registered in an earlier execution re-register.
    pub tag: u64,
    pub threads: Vec<ThreadSlot>,
    pub objects: Vec<ObjectEntry>,
    site_instances: FxHashMap<usize, u32>,
    /// One event per step; `events[i].thread` is the thread chosen at step `i`.
    pub events: Vec<Event>,
    /// The values returned by `interleave::rand`, in order.
    pub values: Vec<u64>,
    /// Steps that acquired a lock (see `OpKind::is_lock_acquisition`), counted as they are
    /// recorded, for strategies that count only acquisitions.
    pub lock_acquisitions: u64,
    /// The last step was a data access to an object the schedule does not track, so a
    /// following one takes the fast path (see `Schedule::tracks`).
    last_untracked: bool,
    enabled: Vec<usize>,
    pub current: usize,
    pub failure: Option<FailureInfo>,
    /// The schedule ended the execution early (`strategy::ABANDON`).
    pub abandoned: bool,
    /// Something outside the schedule's control changed what the execution did: a stack that
    /// could not be allocated, a waker woken from a foreign OS thread. Re-running it under the
    /// same schedule says nothing about the program's determinism.
    pub outside_control: bool,
    /// Wakes of this OS thread's executions' tasks from other OS threads (`foreign.rs`).
    pub foreign: Arc<foreign::ForeignWakes>,
    /// The values of `lazy_static!` statics created in this execution.
    pub lazy_statics: crate::lazy_static::Values,
    pub teardown: bool,
    /// Visible operations the thread being torn down attempted (see `TEARDOWN_STEP_BOUND`).
    teardown_steps: u32,
    /// Code runs on the scheduler loop's own stack after teardown (dropping timers), where no
    /// thread can be suspended or unwound: visible operations there are no-ops.
    on_scheduler_stack: bool,
    pub warnings: Vec<String>,
    /// Units of work and atomic-set owners the program declared (`crate::atomic_set`).
    pub annotations: Annotations,
    /// The virtual clock: time since the execution started.
    pub now: Duration,
    /// Where the clock moved: the index of the step that came next, and the new time (for
    /// reports).
    pub clock_advances: Vec<(usize, Duration)>,
    /// The registered async timers, in registration order.
    timers: Vec<Timer>,
    next_timer: u64,
    spawned: Vec<(usize, ThreadCoroutine, guard::Guarded)>,
    pub schedule: Box<dyn Schedule + Send>,
    pub limits: Limits,
}

static EXECUTION_TAGS: AtomicU64 = AtomicU64::new(1);

/// The execution running on this OS thread, and whether it is borrowed. A raw pointer and a
/// flag instead of a `RefCell<Option<Box<_>>>`: both are destructor-free, so each access is a
/// plain thread-local load, and this is read twice per step.
struct Current {
    execution: Cell<*mut Execution>,
    borrowed: Cell<bool>,
    /// The hook saw a panic while the execution was borrowed, so it could not tell which
    /// thread panicked: teardown then treats every thread as possibly unwinding.
    unattributed_panic: Cell<bool>,
    /// The yielder of the coroutine running on this OS thread: set when the coroutine starts
    /// and again whenever it resumes from a suspension, so announcements need not carry it.
    yielder: Cell<*const ThreadYielder>,
}

thread_local! {
    static CURRENT: Current = const {
        Current {
            execution: Cell::new(std::ptr::null_mut()),
            borrowed: Cell::new(false),
            unattributed_panic: Cell::new(false),
            yielder: Cell::new(std::ptr::null()),
        }
    };
    static SPARE: RefCell<Option<Box<Execution>>> = const { RefCell::new(None) };
}

/// Clears the borrow flag when a borrow ends, even by unwinding.
struct Borrow<'a>(&'a Cell<bool>);

impl Drop for Borrow<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Runs `f` with the current execution.
///
/// # Panics
/// When called outside an execution (a primitive of this crate was used outside
/// `interleave::check` or its siblings), or re-entered from inside `f` (a strategy called into
/// the runtime).
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    // The thread-local is reached with a closure too small not to inline: with `f` inside it,
    // `LocalKey::with` grew past the inliner's limit and every primitive paid a call.
    let current: *const Current = CURRENT.with(|current| current as *const Current);
    // SAFETY: a thread-local outlives every use on its own thread, and the reference does not
    // leave this function.
    let current = unsafe { &*current };
    let execution = current.execution.get();
    if execution.is_null() {
        outside_execution();
    }
    if current.borrowed.replace(true) {
        reentered();
    }
    let _borrow = Borrow(&current.borrowed);
    // SAFETY: the pointer is set by `run` to the execution it owns and cleared before that
    // execution is dropped; the borrow flag makes this the only reference to it.
    f(unsafe { &mut *execution })
}

#[cold]
fn outside_execution() -> ! {
    panic!(
        "an interleave primitive was used outside an interleave execution: run the code \
         inside interleave::check, Builder::explore or interleave::replay"
    )
}

#[cold]
fn reentered() -> ! {
    panic!(
        "the interleave runtime was re-entered: a strategy must not call interleave's primitives"
    )
}

/// True while the runtime's state is borrowed on this OS thread: code running then is the
/// runtime's or a strategy's, never the test's.
pub(crate) fn runtime_borrowed() -> bool {
    CURRENT.with(|current| current.borrowed.get())
}

/// True while an execution runs on this OS thread.
pub(crate) fn in_execution() -> bool {
    CURRENT.with(|current| !current.execution.get().is_null())
}

/// Runs `f` with the current execution if there is one and it is not borrowed; for code that
/// may run anywhere (the panic hook, destructors of panic payloads).
fn try_with<R>(f: impl FnOnce(&mut Execution) -> R) -> Option<R> {
    CURRENT.with(|current| {
        let execution = current.execution.get();
        if execution.is_null() || current.borrowed.get() {
            return None;
        }
        current.borrowed.set(true);
        let _borrow = Borrow(&current.borrowed);
        // SAFETY: as in `with`.
        Some(f(unsafe { &mut *execution }))
    })
}

/// Makes `execution` the current one of this OS thread until the guard is dropped, and resets
/// the OS thread's runtime state on both ends, even when user code or the runtime panicked:
/// the execution pointer, the borrow flag, the cells' access flag and the panic capture. A
/// stale pointer would make the next primitive used on this OS thread touch freed memory.
struct Entered;

impl Entered {
    fn new(execution: *mut Execution) -> Entered {
        reset_thread_state();
        CURRENT.with(|current| current.execution.set(execution));
        Entered
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        reset_thread_state();
    }
}

fn reset_thread_state() {
    CURRENT.with(|current| {
        current.execution.set(std::ptr::null_mut());
        current.borrowed.set(false);
        current.unattributed_panic.set(false);
        current.yielder.set(std::ptr::null());
    });
    crate::cell::reset_access_flag();
    panics::reset();
}

/// Called by the panic hook when a panic starts inside an execution: remembers that the
/// running thread may be unwinding (see `ThreadSlot::panicked`).
fn note_panic() {
    let noted = try_with(|ex| {
        if let Some(slot) = ex.threads.get_mut(ex.current) {
            slot.panicked = true;
        }
    });
    if noted.is_none() {
        CURRENT.with(|current| current.unattributed_panic.set(true));
    }
}

/// Called by the panic hook just before Rust aborts the process because a destructor panicked
/// during unwinding (`unwinding` and `destructor` are the two panics' messages and sites, when
/// the hook saw them). `explore` will never return, so the execution's failure is printed here:
/// the failure already recorded (teardown was unwinding the thread), or else the panic that was
/// unwinding, with the interleaving so far and a replay token that leads to the same abort.
fn report_before_abort(unwinding: (String, String), destructor: (String, String)) {
    let at = |site: &str| {
        if site.is_empty() {
            String::new()
        } else {
            format!(" at {site}")
        }
    };
    let mut text = String::from(
        "interleave: a destructor panicked while its thread was unwinding; Rust aborts the \
         process in that case, so the exploration cannot return its report. The failure:\n\n",
    );
    let execution = try_with(|ex| {
        let info = ex.failure.clone().unwrap_or_else(|| FailureInfo {
            kind: FailureKind::Panic,
            message: unwinding.0.clone(),
            thread: Some(ex.current),
            site: (!unwinding.1.is_empty()).then(|| unwinding.1.clone()),
        });
        let thread = info
            .thread
            .map(|t| crate::detect::thread_label(ex, t))
            .unwrap_or_else(|| "a thread".to_string());
        let token = crate::report::token::Token::from_run(ex, Some(info.kind)).encode();
        (info, thread, crate::report::render_interleaving(ex), token)
    });
    match execution {
        Some((info, thread, interleaving, token)) => {
            text.push_str(&format!(
                "  {} of {thread}{}:\n    {}\n\n",
                info.kind,
                at(info.site.as_deref().unwrap_or_default()),
                info.message.replace('\n', "\n    ")
            ));
            text.push_str(&format!(
                "  then, while unwinding, a destructor panicked{}:\n    {}\n\n",
                at(&destructor.1),
                destructor.0
            ));
            text.push_str(&format!(
                "{interleaving}\nTo reproduce this execution (and the abort), run the same test \
                 with\n    {}={token}\n",
                crate::config::ENV_REPLAY
            ));
        }
        None => text.push_str(&format!(
            "  a panic{}:\n    {}\n  then, while unwinding, a destructor panicked{}:\n    {}\n",
            at(&unwinding.1),
            unwinding.0,
            at(&destructor.1),
            destructor.0
        )),
    }
    eprintln!("{text}");
}

/// The tag of the execution running on this OS thread, if one is.
pub(crate) fn current_tag() -> Option<u64> {
    in_execution().then(|| with(|ex| ex.tag))
}

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
pub(crate) fn switch(op: Op, site: Site) {
    let decision = with(|ex| ex.announce(op, site));
    suspend(decision);
}

/// Registers `handle` (on first use in this execution) and announces `kind` on it at `site`.
#[inline(always)]
pub(crate) fn switch_on(
    handle: &ObjectHandle,
    object: ObjectKind,
    kind: OpKind,
    site: Site,
) -> ObjIdx {
    switch_on_with(handle, object, site, |idx| Op::new(kind, idx))
}

/// Like [`switch_on`], for operations that need an argument or a timeout: `op` builds the
/// operation from the object's index.
#[inline(always)]
pub(crate) fn switch_on_with(
    handle: &ObjectHandle,
    object: ObjectKind,
    site: Site,
    op: impl FnOnce(ObjIdx) -> Op,
) -> ObjIdx {
    switch_on_reading(handle, object, site, op, |_| ()).0
}

/// Like [`switch_on`] for a data access, and says in the same borrow whether the execution
/// logs values (`Limits::log_values`), so atomics pay nothing more for the question.
#[inline(always)]
pub(crate) fn switch_on_logging(
    handle: &ObjectHandle,
    object: ObjectKind,
    kind: OpKind,
    site: Site,
) -> bool {
    switch_on_reading(
        handle,
        object,
        site,
        |idx| Op::new(kind, idx),
        |ex| ex.limits.log_values,
    )
    .1
}

#[inline(always)]
fn switch_on_reading<R>(
    handle: &ObjectHandle,
    object: ObjectKind,
    site: Site,
    op: impl FnOnce(ObjIdx) -> Op,
    read: impl FnOnce(&Execution) -> R,
) -> (ObjIdx, R) {
    let (idx, value, decision) = with(|ex| {
        let idx = ex.object(handle, object);
        let value = read(ex);
        (idx, value, ex.announce(op(idx), site))
    });
    suspend(decision);
    (idx, value)
}

/// What an announcement asks of the running thread: go on, or hand control to the scheduler
/// loop with the next thread to run or the end of the execution. One `u32`, so the borrow that
/// decides returns it (with an object index) in registers: a wider value went through memory
/// and its reload stalled on a failed store-to-load forward, about 4 ns per step.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Decision(u32);

impl Decision {
    /// The running thread goes on without a switch.
    const GO_ON: Decision = Decision(u32::MAX);
    /// The running thread stops: the execution is over (or it is abandoned in teardown).
    const STOP: Decision = Decision(u32::MAX - 1);

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
fn suspend(decision: Decision) {
    if decision != Decision::GO_ON {
        let next = (decision != Decision::STOP).then_some(decision.0 as usize);
        let current: *const Current = CURRENT.with(|current| current as *const Current);
        // SAFETY: the coroutine resumes on the OS thread it was suspended on (an execution
        // never migrates), so the thread-local is the same one and still alive.
        let current = unsafe { &*current };
        let yielder = current.yielder.get();
        // SAFETY: the yielder belongs to the running coroutine (this one): it was stored when
        // the coroutine started or last resumed, and stays valid until the coroutine returns.
        let resume = unsafe { (*yielder).suspend(next) };
        current.yielder.set(yielder);
        if resume == Resume::Unwind {
            resumed_for_teardown();
        }
    }
}

/// Teardown resumed this thread where it was suspended: unwind it, or if it is already
/// unwinding, let its operation go on when that is harmless (see `Execution::teardown_point`).
#[cold]
#[inline(never)]
fn resumed_for_teardown() {
    let decision = with(|ex| {
        let slot = &ex.threads[ex.current];
        let (op, site) = (slot.pending, slot.pending_site);
        ex.teardown_point(op, site)
    });
    suspend(decision);
}

/// The payload of the panic that unwinds a thread during teardown. While it exists the thread
/// is unwinding (or user code holds the payload); dropping it, which the thread's root does
/// after catching it and a user's `catch_unwind` does when it discards the result, tells the
/// runtime the thread is no longer unwinding.
struct TeardownUnwind {
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

/// Suspends the running thread if the execution has failed, so nothing after the failure
/// point runs; the scheduler then ends the execution.
pub(crate) fn stop_if_failed() {
    let decision = with(|ex| {
        if ex.failure.is_some() && !ex.teardown {
            Decision::STOP
        } else {
            Decision::GO_ON
        }
    });
    suspend(decision);
}

impl Execution {
    /// A fresh execution, reusing the buffers of the last one that ran on this OS thread.
    fn new(schedule: Box<dyn Schedule + Send>, limits: Limits) -> Box<Execution> {
        if let Some(mut spare) = SPARE.with(|spare| spare.borrow_mut().take()) {
            spare.tag = EXECUTION_TAGS.fetch_add(1, Ordering::Relaxed);
            spare.threads.clear();
            spare.objects.clear();
            spare.site_instances.clear();
            spare.events.clear();
            spare.values.clear();
            spare.lock_acquisitions = 0;
            spare.last_untracked = false;
            spare.enabled.clear();
            spare.current = 0;
            spare.failure = None;
            spare.abandoned = false;
            spare.outside_control = false;
            spare.lazy_statics.clear();
            spare.teardown = false;
            spare.teardown_steps = 0;
            spare.on_scheduler_stack = false;
            spare.warnings.clear();
            spare.annotations.clear();
            spare.now = Duration::ZERO;
            spare.clock_advances.clear();
            spare.timers.clear();
            spare.next_timer = 0;
            spare.schedule = schedule;
            spare.limits = limits;
            return spare;
        }
        Box::new(Execution {
            tag: EXECUTION_TAGS.fetch_add(1, Ordering::Relaxed),
            threads: Vec::new(),
            objects: Vec::new(),
            site_instances: FxHashMap::default(),
            events: Vec::new(),
            values: Vec::new(),
            lock_acquisitions: 0,
            last_untracked: false,
            enabled: Vec::new(),
            current: 0,
            failure: None,
            abandoned: false,
            outside_control: false,
            foreign: Arc::default(),
            lazy_statics: Default::default(),
            teardown: false,
            teardown_steps: 0,
            on_scheduler_stack: false,
            warnings: Vec::new(),
            annotations: Annotations::default(),
            now: Duration::ZERO,
            clock_advances: Vec::new(),
            timers: Vec::new(),
            next_timer: 0,
            spawned: Vec::new(),
            schedule,
            limits,
        })
    }

    /// Hands the execution's buffers to the next execution on this OS thread.
    pub fn recycle(self: Box<Execution>) {
        SPARE.with(|spare| *spare.borrow_mut() = Some(self));
    }

    /// Records the running thread's pending operation and decides the next step: whether the
    /// thread goes on, another one runs or the execution is over.
    #[inline(always)]
    fn announce(&mut self, op: Op, site: Site) -> Decision {
        if self.teardown {
            // The operation goes by its fields: passed whole, it would be built in memory once
            // for this cold call, and the hot path below would copy it from there through a
            // stalled store-to-load forward (measured at about 4 ns per step).
            return self.announce_in_teardown(op.kind, op.object, op.arg, op.timed, site);
        }
        let me = self.current;
        let slot = &mut self.threads[me];
        slot.pending = op;
        slot.pending_site = site;
        if self.last_untracked && self.fast_path(op) {
            self.record(me);
            return Decision::GO_ON;
        }
        let next = decide(self);
        if next == Some(me) {
            Decision::GO_ON
        } else {
            Decision::switch_to(next)
        }
    }

    /// A visible operation while the execution is torn down: no schedule, no step, no event.
    #[cold]
    #[inline(never)]
    fn announce_in_teardown(
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
        self.teardown_point(Op::with(kind, object, arg, timed), site)
    }

    /// What the running thread does at a visible operation during teardown. The execution is
    /// over, so user code must not go on with it; how to stop it depends on whether the thread
    /// is unwinding, because a panic raised inside a destructor that runs during unwinding
    /// aborts the process:
    ///
    /// - Not unwinding (teardown just resumed it, or user code caught the teardown's unwind
    ///   with `catch_unwind` and went on): raise the teardown's unwind (again). A user's
    ///   `catch_unwind` can delay the end of the thread, never let it perform an operation.
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
    /// The slot's pending operation is left as it was when the execution stopped: the report
    /// shows it.
    fn teardown_point(&mut self, op: Op, site: Site) -> Decision {
        let me = self.current;
        self.teardown_steps += 1;
        if self.teardown_steps > TEARDOWN_STEP_BOUND {
            return Decision::STOP;
        }
        if !self.may_be_unwinding(me) {
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

    /// Whether thread `t` may be running a destructor during unwinding, where raising a panic
    /// would abort the process. No panic in flight on this OS thread means no; otherwise the
    /// runtime's record of the panics raised in `t` decides, erring towards yes.
    fn may_be_unwinding(&self, t: usize) -> bool {
        if !std::thread::panicking() {
            return false;
        }
        let slot = &self.threads[t];
        slot.teardown_unwinding
            || slot.panicked
            || CURRENT.with(|current| current.unattributed_panic.get())
    }

    /// Whether thread `t`'s operation `op` may go on during teardown.
    fn enabled_in_teardown(&mut self, t: usize, op: Op) -> bool {
        match op.kind {
            OpKind::Spawn => false,
            // `join` must hand over a value: an `Err` would make the usual `join().unwrap()`
            // in a destructor panic during unwinding, which aborts.
            OpKind::Join => self
                .threads
                .get(op.arg as usize)
                .is_some_and(|target| target.finished && target.returned),
            _ if !op.blocking => true,
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
    fn apply_lock_effect(&mut self, op: Op, site: Site) {
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

    /// Whether `op`, announced right after a data access to an untracked object, skips the
    /// schedule: it is one too, and the execution goes on (no failure, step bound not hit).
    #[inline(always)]
    fn fast_path(&self, op: Op) -> bool {
        op.kind.is_data_access()
            && self.objects[op.object as usize].untracked
            && self.failure.is_none()
            && self.steps() < self.limits.max_steps
    }

    /// The running thread.
    #[inline]
    pub fn me(&self) -> usize {
        self.current
    }

    /// The number of steps executed so far.
    pub fn steps(&self) -> u64 {
        self.events.len() as u64
    }

    /// The index of `handle`'s object, registering it if this is its first use here.
    #[inline]
    pub fn object(&mut self, handle: &ObjectHandle, kind: ObjectKind) -> ObjIdx {
        match handle.index_in(self.tag) {
            Some(idx) => {
                // A value can move between uses; its atomic set follows where it is now.
                self.objects[idx as usize].address = handle as *const ObjectHandle as usize;
                idx
            }
            None => self.register(handle, kind),
        }
    }

    #[cold]
    fn register(&mut self, handle: &ObjectHandle, kind: ObjectKind) -> ObjIdx {
        let site = handle.site();
        let counter = self
            .site_instances
            .entry(site as *const _ as usize)
            .or_insert(0);
        let instance = *counter;
        *counter += 1;
        let idx = self.objects.len();
        assert!(
            idx < MAX_OBJECTS,
            "an execution registered more than {MAX_OBJECTS} objects"
        );
        let id = ObjectId {
            kind,
            site,
            instance,
        };
        let claimed = handle.claim(self.tag, idx as ObjIdx, |owner| {
            live::running_on(owner).is_some()
        });
        self.objects.push(ObjectEntry {
            id,
            state: ObjState::fresh(kind),
            clock: VectorClock::default(),
            // A shared object fails the execution at its next step, which the fast path of
            // untracked objects would skip.
            untracked: claimed.is_ok() && !self.schedule.tracks(id),
            address: handle as *const ObjectHandle as usize,
            poisoned: false,
        });
        if let Err(owner) = claimed {
            self.shared_with_running_execution(id, owner);
        }
        idx as ObjIdx
    }

    /// Fails the execution because the object `id` is in use by the execution tagged `owner`,
    /// which runs at the same time on another OS thread. The object stays registered to its
    /// owner, so that execution goes on undisturbed.
    #[cold]
    fn shared_with_running_execution(&mut self, id: ObjectId, owner: u64) {
        let os_thread = live::running_on(owner)
            .map(|name| format!(" (OS thread '{name}')"))
            .unwrap_or_default();
        let site = id.site;
        let message = format!(
            "the {kind} created at {file}:{line}:{column} is in use by another execution running \
             at the same time{os_thread}.\n\n\
             An interleave primitive in a `static` (or any value that outlives an execution) is \
             shared by every exploration of the process: cargo runs tests on parallel OS threads, \
             and `Builder::workers` runs executions on several. Two executions using it at once \
             would share its data (two threads inside one critical section, one on each OS \
             thread), so this execution stopped before using it.\n\n\
             Remedies: declare it with `interleave::lazy_static!`, which gives every execution its \
             own value; or create it inside the test and share it with `Arc`; or run such tests \
             one at a time (`cargo test -- --test-threads=1`) with one worker \
             (`Builder::workers(1)`).",
            kind = id.kind.name(),
            file = site.file(),
            line = site.line(),
            column = site.column(),
        );
        self.outside_control = true;
        self.fail(FailureKind::Nondeterminism, message);
    }

    /// Makes the first panic of a spawned thread that no `join` observed the execution's
    /// failure. It happened before whatever else ended the execution, so it replaces a deadlock
    /// or step-bound verdict, which it likely caused (a worker that panicked never signals), and
    /// keeps that verdict as a note; any other failure stays and gets the panic as a note. An
    /// abandoned execution stopped before it could join, so it reports nothing.
    fn unobserved_panic(&mut self) {
        if self.abandoned {
            return;
        }
        let Some(index) = self
            .threads
            .iter()
            .position(|thread| thread.unobserved_panic.is_some())
        else {
            return;
        };
        let Some(panic) = self.threads[index].unobserved_panic.take() else {
            return;
        };
        let (message, site) = *panic;
        let panic = FailureInfo {
            kind: FailureKind::Panic,
            message,
            thread: Some(index),
            site,
        };
        self.failure = Some(match self.failure.take() {
            None => panic,
            Some(earlier)
                if matches!(earlier.kind, FailureKind::Deadlock | FailureKind::StepBound) =>
            {
                FailureInfo {
                    message: format!(
                        "{}\n\nnote: no join observed this panic, and afterwards the execution \
                         ended in a {}:\n{}",
                        panic.message, earlier.kind, earlier.message
                    ),
                    ..panic
                }
            }
            Some(mut earlier) => {
                earlier.message = format!(
                    "{}\n\nnote: before this, thread {index} panicked and no join observed it: {}",
                    earlier.message, panic.message
                );
                earlier
            }
        });
        self.current = index;
    }

    /// The running thread acquires what was released into `object` (happens-before edge).
    #[inline]
    pub fn acquire(&mut self, object: ObjIdx) {
        let me = self.current;
        let (threads, objects) = (&mut self.threads, &self.objects);
        threads[me].clock.join(&objects[object as usize].clock);
    }

    /// The running thread releases its history into `object` and starts a new epoch.
    #[inline]
    pub fn release(&mut self, object: ObjIdx) {
        let me = self.current;
        let (threads, objects) = (&mut self.threads, &mut self.objects);
        objects[object as usize].clock.join(&threads[me].clock);
        threads[me].clock.tick(me);
    }

    /// The running thread takes mutex `object` at `site` (happens-before included).
    #[inline]
    pub fn take_mutex(&mut self, object: ObjIdx, site: Site) {
        let thread = self.current;
        if let ObjState::Mutex { holder } = &mut self.objects[object as usize].state {
            *holder = Some(Holder { thread, site });
        }
        self.acquire(object);
    }

    /// The running thread releases mutex `object` (happens-before included).
    #[inline]
    pub fn give_mutex(&mut self, object: ObjIdx) {
        if let ObjState::Mutex { holder } = &mut self.objects[object as usize].state {
            *holder = None;
        }
        self.release(object);
    }

    /// The running thread takes read-write lock `object` for reading or writing at `site`.
    pub fn take_rwlock(&mut self, object: ObjIdx, write: bool, site: Site) {
        let holder = Holder {
            thread: self.current,
            site,
        };
        if let ObjState::RwLock { writer, readers } = &mut self.objects[object as usize].state {
            if write {
                *writer = Some(holder);
            } else {
                readers.push(holder);
            }
        }
        self.acquire(object);
    }

    /// The running thread releases read-write lock `object`, which it holds for writing or
    /// for reading.
    pub fn give_rwlock(&mut self, object: ObjIdx) {
        let me = self.current;
        if let ObjState::RwLock { writer, readers } = &mut self.objects[object as usize].state {
            if writer.is_some_and(|w| w.thread == me) {
                *writer = None;
            } else if let Some(position) = readers.iter().position(|r| r.thread == me) {
                readers.swap_remove(position);
            }
        }
        self.release(object);
    }

    /// What identifies step `event` across runs of the same program: its thread, operation,
    /// site and object identity. A thread's start is reported at its spawn site, or for the
    /// main thread wherever the exploration was started, so its site is left out.
    pub fn step_identity(&self, event: &Event) -> (u32, OpKind, Option<Site>, Option<ObjectId>) {
        (
            event.thread,
            event.kind,
            (event.kind != OpKind::Start).then_some(event.site),
            self.objects.get(event.object as usize).map(|o| o.id),
        )
    }

    /// Records a failure of the running execution (the first one wins).
    pub fn fail(&mut self, kind: FailureKind, message: String) {
        if self.failure.is_none() && !self.teardown {
            self.failure = Some(FailureInfo {
                kind,
                message,
                thread: Some(self.current),
                site: None,
            });
        }
    }

    /// A stack for the next thread to be added, named `name` and spawned at `site`: at least
    /// `requested` bytes (`thread::Builder::stack_size`) and at least the configured size. A
    /// stack that cannot be allocated marks the execution as touched by something outside
    /// the schedule's control.
    pub fn stack_for(
        &mut self,
        requested: Option<usize>,
        name: Option<&str>,
        site: Site,
    ) -> Result<DefaultStack, stacks::StackError> {
        let size = requested.unwrap_or(0).max(self.limits.stack_size);
        stacks::take(size).map_err(|os_error| {
            self.outside_control = true;
            stacks::StackError::new(size, self.threads.len(), name, site, os_error)
        })
    }

    /// Adds thread `index` running `body` on `stack` (from [`Execution::stack_for`]); it
    /// starts at the next decision.
    pub fn add_thread(
        &mut self,
        body: Box<dyn FnOnce()>,
        name: Option<Arc<str>>,
        site: Site,
        stack: DefaultStack,
    ) -> usize {
        let index = self.threads.len();
        let guarded = guard::Guarded {
            guard: stacks::guard_page(&stack),
            usable: stacks::usable(&stack),
            index,
            name: name.clone(),
            site,
        };
        let mut clock = VectorClock::default();
        if let Some(parent) = self.threads.get_mut(self.current) {
            clock.copy_from(&parent.clock);
            parent.clock.tick(self.current);
        }
        clock.tick(index);
        self.threads.push(ThreadSlot {
            pending: Op::new(OpKind::Start, NO_OBJECT),
            pending_site: site,
            finished: false,
            returned: false,
            panicked: false,
            teardown_unwinding: false,
            unobserved_panic: None,
            detached: false,
            times_out: false,
            clock,
            name,
            spawn_site: site,
            park_token: false,
            unpark_clock: VectorClock::default(),
            waiting: false,
            barrier_generation: 0,
            ticket: 0,
            yields: 0,
            locals: Vec::new(),
            locals_destroyed: false,
            unit: None,
            unit_depth: 0,
            awaiting: Vec::new(),
            deadline: Duration::ZERO,
            timer_deadline: None,
            task_waker: 0,
        });
        let coroutine = Coroutine::with_stack(stack, move |yielder: &ThreadYielder, _: Resume| {
            thread_main(index, yielder, body)
        });
        self.spawned.push((index, coroutine, guarded));
        index
    }

    /// Whether thread `t`'s pending operation can take effect now. A timed operation (a
    /// sleep, a timeout, a parked task's timer) may end by its timeout at any scheduling point
    /// after it started (`early`), since the time a thread takes to reach a step is not
    /// bounded; without `early`, only once the virtual clock has reached its deadline. With
    /// spurious wake-ups allowed, a condition-variable wait or a park may end at any point too
    /// (`early` only).
    #[inline(always)]
    fn op_enabled(&self, t: usize, early: bool) -> bool {
        let slot = &self.threads[t];
        let op = slot.pending;
        let state = || &self.objects[op.object as usize].state;
        match op.kind {
            OpKind::Lock => match state() {
                ObjState::Mutex { holder } => holder.is_none(),
                _ => true,
            },
            OpKind::ReadLock => match state() {
                ObjState::RwLock { writer, .. } => writer.is_none(),
                _ => true,
            },
            OpKind::WriteLock => match state() {
                ObjState::RwLock { writer, readers } => writer.is_none() && readers.is_empty(),
                _ => true,
            },
            OpKind::Wake => {
                let mutex_free = matches!(
                    self.objects[op.arg as usize].state,
                    ObjState::Mutex { holder: None }
                );
                let notified = || match state() {
                    ObjState::Condvar { queue } => queue.can_take(t),
                    _ => false,
                };
                let spurious = early && self.limits.spurious_wakeups;
                mutex_free
                    && (!slot.waiting || self.may_time_out(slot, early) || notified() || spurious)
            }
            OpKind::Join => self.threads[op.arg as usize].finished,
            OpKind::Park => {
                slot.park_token
                    || (early && self.limits.spurious_wakeups)
                    || self.may_time_out(slot, early)
                    || slot.timer_deadline.is_some_and(|d| early || d <= self.now)
            }
            OpKind::Sleep => self.may_time_out(slot, early),
            OpKind::BarrierLeave => match state() {
                ObjState::Barrier { generation, .. } => *generation != slot.barrier_generation,
                _ => true,
            },
            OpKind::OnceEnter => match state() {
                ObjState::Once { runner, .. } => runner.is_none(),
                _ => true,
            },
            OpKind::Send => match state() {
                ObjState::Channel {
                    len,
                    capacity: Some(capacity),
                    receiver_alive,
                    ..
                } if *capacity > 0 => *len < *capacity || !*receiver_alive,
                _ => true,
            },
            OpKind::SendWait => match state() {
                ObjState::Channel {
                    received,
                    receiver_alive,
                    ..
                } => *received >= slot.ticket || !*receiver_alive,
                _ => true,
            },
            OpKind::Recv => match state() {
                ObjState::Channel { len, senders, .. } => {
                    *len > 0 || *senders == 0 || self.may_time_out(slot, early)
                }
                _ => true,
            },
            _ => true,
        }
    }

    /// Whether `slot`'s pending operation is timed and may end by its timeout now: at any
    /// time when `early`, otherwise once the clock has reached its deadline.
    #[inline]
    fn may_time_out(&self, slot: &ThreadSlot, early: bool) -> bool {
        slot.pending.timed && (early || slot.deadline <= self.now)
    }

    /// Whether thread `t`'s pending operation is timed, so it may end by its timeout (it may
    /// still wait for its mutex).
    pub fn deadline_passed(&self, t: usize) -> bool {
        self.may_time_out(&self.threads[t], true)
    }

    /// Whether thread `t`, enabled, can run only by ending its wait by itself: by its timeout or
    /// its async timer, or by a spurious wake-up when those are allowed.
    #[cold]
    fn wakes_itself(&self, t: usize) -> bool {
        let slot = &self.threads[t];
        let can = slot.pending.timed
            || (slot.pending.kind == OpKind::Park
                && (slot.timer_deadline.is_some() || self.limits.spurious_wakeups))
            || (slot.pending.kind == OpKind::Wake && self.limits.spurious_wakeups);
        can && !self.op_enabled(t, false)
    }

    /// Thread `chosen` is about to take its step: when only its timeout lets it (its operation
    /// could not take effect otherwise), the virtual clock moves to that deadline, so `Instant`
    /// readings after the wait are at least its deadline. Returns whether the step is a
    /// timeout.
    #[inline(always)]
    fn time_out_if_due(&mut self, chosen: usize) -> bool {
        // Taking the flag leaves it false for the thread's next operations, which may not
        // block: this check then costs one well-predicted branch, not one per blocking kind.
        if !std::mem::take(&mut self.threads[chosen].times_out) {
            return false;
        }
        self.move_clock_to_deadline(chosen);
        true
    }

    /// The timeout of thread `chosen` happens now: the clock moves to its deadline.
    #[cold]
    fn move_clock_to_deadline(&mut self, chosen: usize) {
        if let Some(deadline) = self.next_deadline(chosen) {
            self.now = deadline;
            self.clock_advances.push((self.events.len(), deadline));
        }
    }

    /// The earliest future instant at which thread `t` stops waiting by itself: its timed
    /// operation's deadline, or for a `Park` also its earliest async timer.
    fn next_deadline(&self, t: usize) -> Option<Duration> {
        let slot = &self.threads[t];
        let own = slot.pending.timed.then_some(slot.deadline);
        let timers = slot
            .timer_deadline
            .filter(|_| slot.pending.kind == OpKind::Park);
        own.into_iter()
            .chain(timers)
            .filter(|&deadline| deadline > self.now)
            .min()
    }

    /// Moves the clock to the earliest future deadline of an unfinished thread; false when
    /// none has one. Called only when no thread can run, so the jump skips nothing: before
    /// that instant nothing could happen.
    fn advance_clock(&mut self) -> bool {
        let next = (0..self.threads.len())
            .filter(|&t| !self.threads[t].finished)
            .filter_map(|t| self.next_deadline(t))
            .min();
        match next {
            Some(deadline) => {
                self.now = deadline;
                self.clock_advances.push((self.events.len(), deadline));
                true
            }
            None => false,
        }
    }

    /// The virtual time `duration` from now (saturating: an enormous timeout never fires
    /// before the end of representable time).
    pub fn deadline_after(&self, duration: Duration) -> Duration {
        self.now.saturating_add(duration)
    }

    /// Sets the deadline of the timed operation the running thread announces next.
    pub fn set_deadline(&mut self, deadline: Duration) {
        let me = self.current;
        self.threads[me].deadline = deadline;
    }

    /// Registers the running thread's timer for `deadline` waking `waker`, or updates the
    /// timer `key` names if it is still registered in this execution. Returns its key and the
    /// waker it replaced, which the caller drops outside the runtime (dropping a waker can run
    /// arbitrary code).
    pub fn set_timer(
        &mut self,
        key: Option<TimerKey>,
        deadline: Duration,
        waker: &Waker,
    ) -> (TimerKey, Option<Waker>) {
        let me = self.current;
        let existing = key.and_then(|key| self.timer_position(key));
        let (key, replaced, previous_thread) = match existing {
            Some(position) => {
                let timer = &mut self.timers[position];
                timer.deadline = deadline;
                let previous_thread = std::mem::replace(&mut timer.thread, me);
                let replaced = (!timer.waker.will_wake(waker))
                    .then(|| std::mem::replace(&mut timer.waker, waker.clone()));
                (timer.key, replaced, Some(previous_thread))
            }
            None => {
                let key = TimerKey {
                    tag: self.tag,
                    id: self.next_timer,
                };
                self.next_timer += 1;
                self.timers.push(Timer {
                    key,
                    deadline,
                    thread: me,
                    waker: waker.clone(),
                });
                (key, None, None)
            }
        };
        self.refresh_timer_deadline(me);
        if let Some(previous) = previous_thread.filter(|&t| t != me) {
            self.refresh_timer_deadline(previous);
        }
        (key, replaced)
    }

    /// Moves the deadline of timer `key`, if it is still registered in this execution.
    pub fn reset_timer(&mut self, key: TimerKey, deadline: Duration) {
        if let Some(position) = self.timer_position(key) {
            self.timers[position].deadline = deadline;
            let thread = self.timers[position].thread;
            self.refresh_timer_deadline(thread);
        }
    }

    /// Removes timer `key`, if it is still registered in this execution, and returns its waker
    /// for the caller to drop outside the runtime.
    pub fn cancel_timer(&mut self, key: TimerKey) -> Option<Waker> {
        let position = self.timer_position(key)?;
        let timer = self.timers.remove(position);
        self.refresh_timer_deadline(timer.thread);
        Some(timer.waker)
    }

    /// Removes the running thread's timers whose deadline has come, in registration order, and
    /// returns the wakers to wake, leaving out the thread's own task waker (it is awake and
    /// polls its future next anyway) and returning that one as the second list, to drop.
    pub fn fire_due_timers(&mut self) -> (Vec<Waker>, Vec<Waker>) {
        let me = self.current;
        if self.threads[me].timer_deadline.is_none_or(|d| d > self.now) {
            return (Vec::new(), Vec::new());
        }
        let own = self.threads[me].task_waker;
        let (mut wake, mut redundant) = (Vec::new(), Vec::new());
        let now = self.now;
        let mut kept = Vec::with_capacity(self.timers.len());
        for timer in self.timers.drain(..) {
            if timer.thread != me || timer.deadline > now {
                kept.push(timer);
            } else if timer.waker.data() as usize == own {
                redundant.push(timer.waker);
            } else {
                wake.push(timer.waker);
            }
        }
        self.timers = kept;
        self.refresh_timer_deadline(me);
        (wake, redundant)
    }

    /// Takes every registered timer out of the execution, for dropping outside the runtime.
    fn take_timers(&mut self) -> Vec<Timer> {
        for slot in &mut self.threads {
            slot.timer_deadline = None;
        }
        std::mem::take(&mut self.timers)
    }

    fn timer_position(&self, key: TimerKey) -> Option<usize> {
        if key.tag != self.tag {
            return None;
        }
        self.timers.iter().position(|timer| timer.key == key)
    }

    fn refresh_timer_deadline(&mut self, thread: usize) {
        let earliest = self
            .timers
            .iter()
            .filter(|timer| timer.thread == thread)
            .map(|timer| timer.deadline)
            .min();
        if let Some(slot) = self.threads.get_mut(thread) {
            slot.timer_deadline = earliest;
        }
    }

    /// Fills `self.enabled`; flags a thread that waits for a lock it holds.
    fn compute_enabled(&mut self) {
        self.enabled.clear();
        for t in 0..self.threads.len() {
            if self.threads[t].finished {
                continue;
            }
            let pending = self.threads[t].pending;
            if !pending.blocking {
                // `times_out` is read only for blocking operations (see `View::times_out`).
                self.enabled.push(t);
            } else if self.op_enabled(t, true) {
                self.enabled.push(t);
                // Only waits can end by themselves; a lock, a join or a send cannot.
                let may_wake_itself =
                    pending.timed || matches!(pending.kind, OpKind::Park | OpKind::Wake);
                let times_out = may_wake_itself && self.wakes_itself(t);
                self.threads[t].times_out = times_out;
            } else if t == self.current {
                // Only the thread that just announced its operation can have started to wait
                // for a lock it holds.
                if let Some(message) = crate::detect::deadlock::relock(self, t) {
                    self.fail(FailureKind::Relock, message);
                    return;
                }
            }
        }
    }

    /// Records step `chosen`, makes it the running thread, and applies the synchronisation
    /// effect of operations that need nothing from the thread and return nothing to it: clocks
    /// of atomic accesses, and the owners and clocks of blocking lock and unlock operations
    /// (`Mutex`, `RwLock`). The thread performs the operation as soon as it runs, before any
    /// other thread, so applying the effect here is equivalent and saves the primitive a second
    /// visit to the runtime.
    #[inline]
    fn record(&mut self, chosen: usize) {
        let timed_out = self.time_out_if_due(chosen);
        let slot = &mut self.threads[chosen];
        let Op {
            kind, object, arg, ..
        } = slot.pending;
        let site = slot.pending_site;
        // A sleep or a timeout counts as a yield: a loop that waits by sleeping or by timing
        // out lets the others run under the strategies' yield rule, as a spin loop does.
        if kind == OpKind::Yield || kind == OpKind::Sleep || timed_out {
            slot.yields += 1;
        }
        self.events.push(Event {
            thread: chosen as u32,
            kind,
            object,
            arg,
            site,
        });
        self.current = chosen;
        self.last_untracked = kind.is_data_access() && self.objects[object as usize].untracked;
        match kind {
            OpKind::AtomicLoad => self.acquire(object),
            OpKind::AtomicStore => self.release(object),
            OpKind::AtomicRmw => {
                self.acquire(object);
                self.release(object);
            }
            OpKind::Lock => {
                self.lock_acquisitions += 1;
                self.take_mutex(object, site);
            }
            OpKind::Unlock => self.give_mutex(object),
            OpKind::ReadLock => {
                self.lock_acquisitions += 1;
                self.take_rwlock(object, false, site);
            }
            OpKind::WriteLock => {
                self.lock_acquisitions += 1;
                self.take_rwlock(object, true, site);
            }
            // The mutex itself is taken back by the `Condvar` once the waiter runs.
            OpKind::Wake => self.lock_acquisitions += 1,
            OpKind::RwUnlock => self.give_rwlock(object),
            _ => {}
        }
    }

    /// Asks the schedule for a value below `bound` (a recorded nondeterministic choice).
    pub fn choose_value(&mut self, bound: u64) -> u64 {
        let value = self.schedule.next_value(bound);
        let value = if bound == 0 { value } else { value % bound };
        self.values.push(value);
        value
    }

    /// The running thread acquires the final clock of finished thread `target` (`join`).
    pub fn join_clock(&mut self, target: usize) {
        let me = self.current;
        let target_clock = std::mem::take(&mut self.threads[target].clock);
        self.threads[me].clock.join(&target_clock);
        self.threads[target].clock = target_clock;
    }
}

/// The body of every coroutine: run the thread (or, for a thread the execution ended before
/// it started, only drop its closure), capture its panic, run its thread-locals' destructors,
/// mark it finished. No panic leaves it: one that reached the coroutine's root would come out
/// of `resume` in the scheduler loop and escape `explore`.
fn thread_main(index: usize, yielder: &ThreadYielder, body: Box<dyn FnOnce()>) {
    CURRENT.with(|current| current.yielder.set(yielder));
    let started_in_teardown = with(|ex| ex.teardown);
    let outcome = if started_in_teardown {
        // The closure's destructors are user code and may panic: they run here, on the
        // thread's own stack and exactly once, rather than inside the coroutine library.
        panic::catch_unwind(AssertUnwindSafe(move || drop(body))).map(|()| false)
    } else {
        panic::catch_unwind(AssertUnwindSafe(body)).map(|()| true)
    };
    let returned = match outcome {
        Ok(returned) => returned,
        Err(payload) => {
            thread_panicked(index, payload, "");
            false
        }
    };
    with(|ex| ex.threads[index].panicked = false);
    drop_thread_locals(index);
    with(|ex| {
        let slot = &mut ex.threads[index];
        // A spawned thread's closure catches its own panic for `join`: it has no value then.
        slot.returned = returned && slot.unobserved_panic.is_none();
        // A thread torn down stays unfinished: the report shows what it was about to do.
        slot.finished = !ex.teardown;
    });
}

/// A spawned thread's closure panicked with `payload`. Outside teardown the panic is kept for
/// the thread's `JoinHandle` (`Ok`, to be stored there) and recorded as unobserved until a
/// `join` takes it; the teardown's own unwind and panics while tearing down are given back
/// (`Err`) to be raised again, so the thread's root handles them as before.
pub(crate) fn spawned_thread_panicked(
    payload: Box<dyn Any + Send>,
) -> Result<Box<dyn Any + Send>, Box<dyn Any + Send>> {
    if payload.is::<TeardownUnwind>() || with(|ex| ex.teardown) {
        return Err(payload);
    }
    let (message, site) = panics::describe(payload.as_ref());
    with(|ex| {
        let me = ex.current;
        ex.threads[me].unobserved_panic = Some(Box::new((message, site)));
    });
    Ok(payload)
}

/// A `join` of thread `index` returned its panic to the program.
pub(crate) fn panic_observed(index: usize) {
    with(|ex| ex.threads[index].unobserved_panic = None);
}

/// Thread `index` ended by a panic with `payload` (`context` prefixes the message): the
/// execution's failure, unless the execution had already failed and this is the teardown's
/// unwind or a panic raised while tearing down, which only becomes a warning.
fn thread_panicked(index: usize, payload: Box<dyn Any + Send>, context: &str) {
    let teardown_unwind = payload.is::<TeardownUnwind>();
    let (message, site) = panics::describe(payload.as_ref());
    drop_quietly(payload);
    with(|ex| {
        if teardown_unwind {
            return;
        }
        if ex.teardown {
            ex.warnings.push(format!(
                "while the failed execution was torn down, thread {index} panicked: \
                 {context}{message}"
            ));
            return;
        }
        ex.current = index;
        if ex.failure.is_none() {
            ex.failure = Some(FailureInfo {
                kind: FailureKind::Panic,
                message: format!("{context}{message}"),
                thread: Some(index),
                site,
            });
        }
    });
}

/// Drops the execution's `lazy_static!` values, the latest initialised first and each while the
/// others can still be used, on the scheduler loop's stack (visible operations of their destructors are no-ops there). A destructor that
/// panics fails an execution that had not failed yet, as a panic of the main thread.
fn drop_lazy_statics() {
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
                if ex.failure.is_none() {
                    ex.current = 0;
                    ex.failure = Some(FailureInfo {
                        kind: FailureKind::Panic,
                        message: format!(
                            "the destructor of a lazy_static! value panicked at the end of the \
                             execution: {message}"
                        ),
                        thread: Some(0),
                        site,
                    });
                }
            });
        }
    }
}

/// Drops `value`, discarding a panic of its destructor (and leaking that panic's payload, whose
/// own destructor might panic too).
fn drop_quietly<T>(value: T) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// How many times the destructors of a finishing thread's thread-locals may create new ones
/// (a destructor that uses another key) before the rest are leaked.
const THREAD_LOCAL_ROUNDS: usize = 4;

/// Runs the destructors of thread `index`'s thread-locals, one at a time, each on its own: a
/// panicking destructor is a panic of the thread (std aborts the process there), reported
/// like one, and the other values are still dropped.
fn drop_thread_locals(index: usize) {
    with(|ex| ex.threads[index].locals_destroyed = true);
    for _ in 0..THREAD_LOCAL_ROUNDS {
        let locals = with(|ex| std::mem::take(&mut ex.threads[index].locals));
        if locals.is_empty() {
            return;
        }
        for (_, value) in locals {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(value))) {
                thread_panicked(index, payload, "a thread_local! destructor panicked: ");
            }
        }
    }
    let left = with(|ex| std::mem::take(&mut ex.threads[index].locals));
    std::mem::forget(left);
}

/// The coroutines of one execution, by thread. Teardown empties it; if the scheduler loop
/// itself panics, the remaining coroutines are abandoned (leaked), never unwound by the
/// coroutine library, whose forced unwind would run user destructors outside the runtime.
struct Coroutines(Vec<Option<ThreadCoroutine>>);

impl Drop for Coroutines {
    fn drop(&mut self) {
        for coroutine in self.0.drain(..).flatten() {
            std::mem::forget(coroutine);
        }
    }
}

/// Runs one execution of `main` under `schedule`.
pub(crate) fn run(
    main: &(dyn Fn() + Sync),
    site: Site,
    schedule: Box<dyn Schedule + Send>,
    limits: Limits,
) -> Box<Execution> {
    panics::install_hook();
    guard::prepare();
    // SAFETY: the main thread's coroutine finishes, is unwound or is abandoned (never resumed
    // again) before `run` returns, so the borrow of `main` outlives every use of it.
    let main: &'static (dyn Fn() + Sync) = unsafe { std::mem::transmute(main) };
    assert!(
        !in_execution(),
        "interleave executions cannot be nested: interleave::check was called inside a test \
         that is already running under interleave"
    );
    let mut execution = Execution::new(schedule, limits);
    let _live = live::start(execution.tag);
    match execution.stack_for(None, None, site) {
        Ok(stack) => {
            execution.add_thread(Box::new(main), None, site, stack);
        }
        Err(error) => {
            execution.failure = Some(FailureInfo {
                kind: FailureKind::Panic,
                message: error.to_string(),
                thread: None,
                site: None,
            });
            return execution;
        }
    }
    let foreign = execution.foreign.clone();
    foreign.start(execution.tag);
    let watch = watchdog::Watch::start(limits.watchdog);
    let raw = Box::into_raw(execution);
    let entered = Entered::new(raw);

    let mut coroutines = Coroutines(Vec::new());
    let mut guards = guard::Guards::default();
    let mut next = with(decide);
    while let Some(chosen) = next {
        if coroutines.0.get(chosen).is_none_or(Option::is_none) {
            with(|ex| adopt(ex, &mut coroutines.0, &mut guards));
        }
        let coroutine = coroutines.0[chosen]
            .as_mut()
            .expect("the scheduler chose a thread without a coroutine");
        watch.beat();
        next = match coroutine.resume(Resume::Run) {
            // The thread announced an operation and the decision chose another thread (or
            // ended the execution).
            CoroutineResult::Yield(next) => next,
            // The thread finished: decide again without it.
            CoroutineResult::Return(()) => {
                if let Some(done) = coroutines.0[chosen].take() {
                    stacks::give_back(done.into_stack());
                }
                with(decide)
            }
        };
    }
    with(|ex| adopt(ex, &mut coroutines.0, &mut guards));
    // A foreign wake that no deadlock check saw still explains what the execution did.
    with(|ex| {
        if ex.failure.is_none() {
            if let Some(message) = ex.foreign.explanation(ex.tag) {
                ex.outside_control = true;
                ex.current = 0;
                ex.fail(FailureKind::Nondeterminism, message);
            }
        }
    });

    with(Execution::unobserved_panic);
    teardown(&mut coroutines.0);
    drop(guards);
    drop(watch);
    foreign.stop();
    // Dropping a waker can drop a future (and its timers) with it, which needs the runtime, so
    // the timers are dropped while the execution is still current but not borrowed.
    let timers = with(|ex| {
        ex.on_scheduler_stack = true;
        ex.take_timers()
    });
    drop_quietly(timers);
    drop_lazy_statics();
    drop(entered);
    // SAFETY: `raw` came from `Box::into_raw` above and nothing else owns it; the pointer in
    // `CURRENT` that aliased it has just been cleared.
    unsafe { Box::from_raw(raw) }
}

/// Takes the coroutines of threads spawned since the last call, and publishes their guard
/// pages to the stack overflow handler (`guard.rs`).
#[inline]
fn adopt(
    ex: &mut Execution,
    coroutines: &mut Vec<Option<ThreadCoroutine>>,
    guards: &mut guard::Guards,
) {
    for (index, coroutine, guarded) in ex.spawned.drain(..) {
        if coroutines.len() <= index {
            coroutines.resize_with(index + 1, || None);
        }
        coroutines[index] = Some(coroutine);
        guards.push(guarded);
    }
}

/// Chooses the thread for the next step, or `None` when the execution is over.
fn decide(ex: &mut Execution) -> Option<usize> {
    if ex.failure.is_some() {
        return None;
    }
    // The end of the test (shuttle's rule): after the main thread returned, the spawned
    // threads and the tasks somebody may still await run to their end, and the detached tasks
    // (their handles dropped) only while those do; when only detached tasks are left, the
    // execution is over and teardown cancels them.
    if ex.threads[0].finished && ex.threads.iter().all(|t| t.finished || t.detached) {
        return None;
    }
    ex.compute_enabled();
    if ex.failure.is_some() {
        return None;
    }
    // Virtual time passes only when nothing can happen before the next deadline. After the
    // main thread returned the process would be gone under std, so the clock stops there.
    if ex.enabled.is_empty() && !ex.threads[0].finished {
        while ex.enabled.is_empty() && ex.advance_clock() {
            ex.compute_enabled();
            if ex.failure.is_some() {
                return None;
            }
        }
    }
    if ex.enabled.is_empty() {
        // Threads still blocked when nothing can run are a deadlock, also after the main thread
        // returned: under std the process would exit with them blocked, but a test that leaves
        // a thread waiting for ever has lost a wake-up or a message (shuttle and loom report it
        // too).
        // A task whose wake came from a foreign OS thread was lost, not deadlocked.
        if let Some(message) = ex.foreign.explanation(ex.tag) {
            ex.outside_control = true;
            ex.current = 0;
            ex.fail(FailureKind::Nondeterminism, message);
            return None;
        }
        let message = crate::detect::deadlock::explain(ex);
        ex.current = 0;
        ex.fail(FailureKind::Deadlock, message);
        return None;
    }
    if ex.steps() >= ex.limits.max_steps {
        let message = crate::detect::deadlock::step_bound(ex);
        ex.fail(FailureKind::StepBound, message);
        return None;
    }
    let chosen = {
        let view = View {
            threads: &ex.threads,
            objects: &ex.objects,
            enabled: &ex.enabled,
            step: ex.events.len() as u64,
            last: ex.events.last().map(|e| e.thread as usize),
            units: &ex.annotations.units,
        };
        ex.schedule.next_thread(&view)
    };
    if chosen == crate::strategy::ABANDON {
        ex.abandoned = true;
        return None;
    }
    if !ex.enabled.contains(&chosen) {
        let message = crate::detect::deadlock::not_enabled(ex, chosen);
        ex.fail(FailureKind::Divergence, message);
        return None;
    }
    ex.record(chosen);
    Some(chosen)
}

/// Tears down every unfinished thread, children first, and recycles the stacks.
///
/// Each coroutine is resumed once with `Resume::Unwind`: a thread that never started drops its
/// closure (`thread_main`), a suspended one raises the teardown's unwind where it stopped
/// (`Execution::teardown_point`), which its root catches. Its destructors run and may perform
/// visible operations under the rules of `teardown_point`. A coroutine that comes back
/// suspended instead of finished was abandoned: it would block or spin forever, and raising a
/// panic in it would abort the process because it is already unwinding. Its stack is leaked,
/// not freed or reused, so nothing that lives there (values scoped children borrow, pinned
/// futures) is ever used or freed without its destructor; its thread-locals leak with it.
fn teardown(coroutines: &mut [Option<ThreadCoroutine>]) {
    let clean = with(|ex| {
        ex.teardown = true;
        ex.threads.iter().all(|t| t.finished)
    });
    if clean {
        return;
    }
    for index in (0..coroutines.len()).rev() {
        let Some(mut coroutine) = coroutines[index].take() else {
            continue;
        };
        with(|ex| {
            ex.current = index;
            ex.teardown_steps = 0;
        });
        match coroutine.resume(Resume::Unwind) {
            CoroutineResult::Return(()) => stacks::give_back(coroutine.into_stack()),
            CoroutineResult::Yield(_) => {
                with(|ex| {
                    let slot = &mut ex.threads[index];
                    std::mem::forget(std::mem::take(&mut slot.locals));
                    let operation = slot.pending.kind.name();
                    ex.warnings.push(format!(
                        "while the failed execution was torn down, thread {index} was abandoned \
                         at `{operation}`: it could not go on without blocking or spinning"
                    ));
                });
                std::mem::forget(coroutine);
            }
        }
    }
}
