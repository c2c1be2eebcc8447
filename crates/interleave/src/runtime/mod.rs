//! The controlled execution engine: runs one execution of a test closure with every thread as a
//! stackful coroutine on the current OS thread, exactly one running at a time.
//!
//! **Invariant (the choke point):** every visible operation calls [`switch`] *before* it takes
//! effect. `switch` records the pending operation in the thread's slot, computes which threads
//! are enabled, asks the execution's [`Schedule`] which one runs, and records the step. If the
//! same thread was chosen it simply goes on and performs its operation; otherwise it suspends,
//! handing the decision to the scheduler loop in [`run`], which resumes the chosen thread.
//! Besides that question the runtime asks the schedule only for recorded value choices
//! (`Schedule::next_value`), once per object whether it tracks it, and at the end for its
//! feedback; the schedule never mutates the runtime: it sees a read-only [`View`]. The one shortcut: a data access to an object the
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
//!
//! Files: this one holds the execution's state, the thread-local that reaches it, and the
//! scheduler loop (`run`); `switching.rs` announces, decides and records steps; `enabled.rs`
//! says which threads can run; `timers.rs` keeps virtual time; `ending.rs` drops the detached
//! tasks left when a passing execution ends; `kept.rs` drops the values threads kept until
//! the end, as their threads; `teardown.rs` ends an execution after a failure;
//! `stop_signal.rs` stops one from another OS thread and ends it as a process exits;
//! `stacks.rs` and `blocks.rs` keep the idle coroutine stacks and the freed blocks of spawned
//! threads' packets for the next executions on the OS thread, both in an `idle.rs` pool.

pub(crate) mod annotations;
mod atomics;
mod blocks;
pub(crate) mod clock;
pub(crate) mod condvar_queue;
mod enabled;
mod ending;
pub(crate) mod failure;
pub(crate) mod foreign;
mod guard;
mod idle;
mod kept;
mod lazy_values;
mod live;
pub(crate) mod memory;
pub(crate) mod object;
pub mod op;
mod panics;
mod recording;
mod sc_fences;
pub(crate) mod schedule;
mod signal_text;
mod stacks;
mod stop_signal;
mod switching;
mod teardown;
mod timers;
mod view;
mod waiters;
mod watchdog;

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rustc_hash::FxHashMap;

use clock::VectorClock;
use object::{
    writers_wait, Holder, ObjState, ObjectEntry, ObjectHandle, LOCK_HOLDERS, LOCK_ONE_WAITING,
    LOCK_WRITER, MAX_OBJECTS,
};
use op::{Gate, ObjIdx, ObjectId, ObjectKind, Op, OpKind, Site, NO_OBJECT};
use waiters::LockRequests;

pub(crate) use atomics::{weak_exchange_fails_spuriously, Handover};
pub use failure::FailureKind;
pub(crate) use failure::{FailureInfo, Stop, Stopped, ThreadAtStop};
pub use memory::{MemoryModel, YieldVisibility};
pub use recording::{ChannelStep, TraceEvent, TraceTarget};
pub(crate) use recording::{
    CoverageGaps, Event, Finished, ObjectRecord, Recording, StepLabel, ThreadRecord,
};
pub use schedule::{Schedule, ABANDON};
pub use stop_signal::StopHandle;
pub use view::{PendingOp, ThreadState, UnitView, View};

use enabled::ReadPreference;
use ending::unwind_at_end;
use kept::{drop_kept_values, drop_kept_values_after_the_end};
pub(crate) use live::new_exploration;
pub(crate) use stacks::StackError;
use stop_signal::abandon_at_stop;
use switching::{decide, suspend, Decision};
pub(crate) use switching::{op_on, stop_if_failed, switch, switch_on, Switched};
use teardown::*;
pub(crate) use timers::{Timer, TimerKey};

/// Coroutines yield the thread the scheduler loop should resume next (`None`: the execution is
/// over), so a switch costs the loop no visit to the runtime; the loop tells a coroutine it
/// resumes whether to go on or to unwind.
type ThreadCoroutine = Coroutine<Resume, Option<usize>, (), DefaultStack>;
type ThreadYielder = Yielder<Resume, Option<usize>>;

/// What a thread runs: the main thread's function, borrowed for the execution, or a spawned
/// thread's closure, which shares one block with the slot of its result
/// (`thread::spawn_inner`) so a spawn allocates at most once.
pub(crate) enum ThreadBody {
    Main(&'static (dyn Fn() + Sync)),
    Spawned(SpawnedBody),
}

/// A spawned thread's closure, owned with the slot of its result in a block the thread shares
/// with its handle (`thread.rs`): the block and the functions that know its type. The thread
/// holds one share of the block, which dropping the body gives up (after `run` or `discard`,
/// or unused).
pub(crate) struct SpawnedBody {
    block: NonNull<()>,
    run: unsafe fn(NonNull<()>, bool),
    discard: unsafe fn(NonNull<()>),
    let_go: unsafe fn(NonNull<()>),
}

impl SpawnedBody {
    /// The body of the thread whose share of `block` this is.
    ///
    /// # Safety
    /// `run(block, cancelled)` runs the closure (or, when `cancelled`, may drop it unrun) and
    /// stores its result; `discard(block)` drops the closure unrun; `let_go(block)` gives up
    /// the share, after either or instead of them. Each must be sound to call once with
    /// `block` while the share is held, on the thread's own stack.
    pub(crate) unsafe fn new(
        block: NonNull<()>,
        run: unsafe fn(NonNull<()>, bool),
        discard: unsafe fn(NonNull<()>),
        let_go: unsafe fn(NonNull<()>),
    ) -> SpawnedBody {
        SpawnedBody {
            block,
            run,
            discard,
            let_go,
        }
    }

    /// Runs the closure and stores its result; the share is given up at the end, as the
    /// closure's captures are (also when the run unwinds: the teardown's unwind passes through
    /// here). `cancelled`: the end of the execution cancelled the thread before it started
    /// (`ThreadSlot::cancelled`), read by `thread_main` as it starts.
    fn run(self, cancelled: bool) {
        // The body's own drop gives the share up when `run` returns or unwinds: the guard is
        // here rather than in the generic `run`, whose code (the thread's closure inlined)
        // compiled worse with it (callgrind, mutex workload).
        // SAFETY: the share is held (the body was not used); `run` leaves it to the drop.
        unsafe { (self.run)(self.block, cancelled) }
    }

    /// Drops the closure without running it (the thread started in teardown).
    fn discard(self) {
        // SAFETY: as in `run`.
        unsafe { (self.discard)(self.block) }
    }
}

impl Drop for SpawnedBody {
    fn drop(&mut self) {
        // SAFETY: the share is held until here: `run` and `discard` leave it to this drop.
        unsafe { (self.let_go)(self.block) }
    }
}

/// A block of `layout` for a spawned thread's packet (`thread::spawn_inner`), from the
/// execution's idle blocks when it has one of that layout.
#[inline]
pub(crate) fn take_block(ex: &mut Execution, layout: std::alloc::Layout) -> NonNull<u8> {
    ex.blocks.take(layout)
}

/// Gives back a packet's `block` of `layout`, whose contents were dropped: to the running
/// execution's idle blocks, or to the allocator where none can take it (outside an execution,
/// while the runtime is borrowed).
#[inline]
pub(crate) fn give_block(block: NonNull<u8>, layout: std::alloc::Layout) {
    if try_with(|ex| ex.blocks.give_back(block, layout)).is_none() {
        blocks::free(block, layout);
    }
}

/// What the scheduler loop asks of a coroutine it resumes. Passing it as the resume value costs
/// the switch nothing, where a look at the execution after every switch would not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resume {
    /// Perform the operation the thread announced.
    Run,
    /// The execution is over: unwind (see [`teardown`]).
    Unwind,
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
    /// The last panic raised in this thread while it may still be unwinding it (set with
    /// `panicked`): if the execution stops in the middle of that unwind, the panic is the
    /// program's and is reported (see `teardown.rs`). Boxed: it is rare.
    pub panic_in_flight: Option<Box<UnobservedPanic>>,
    /// The thread was unwinding a panic of the program when the execution stopped (set when
    /// teardown begins).
    pub unwinding_at_stop: bool,
    /// Teardown raised its unwind in this thread and the payload was not dropped yet (see
    /// [`TeardownUnwind`]).
    pub teardown_unwinding: bool,
    /// The thread ended by a panic that no `join` has observed yet: its message and site. A
    /// panic observed through `join` is the program's business, as under std; one left
    /// unobserved when the execution ends is a failure (see `Execution::unobserved_panic`).
    /// Boxed: it is rare, and the slot stays small for the scheduler's scans.
    pub unobserved_panic: Option<Box<UnobservedPanic>>,
    /// The thread's panic after a `join` returned it to the program: a later panic of the
    /// joiner names it in a note (see `Execution::note_joined_panics`).
    pub joined_panic: Option<Box<UnobservedPanic>>,
    /// An async task whose `JoinHandle` was dropped: once the main thread has returned and only
    /// such tasks are left, the execution ends and they are cancelled (see `ending.rs`).
    pub detached: bool,
    /// The end of the execution cancelled this thread (`ending.rs`): a task parked between
    /// polls, or one that had not started, drops its future as itself; a thread spawned while
    /// the tasks are dropped never runs its closure.
    pub cancelled: bool,
    /// The execution ended while this task was in the middle of a poll (spinning or blocked):
    /// it takes no step, and is unwound once the cancelled threads cannot go on (`ending.rs`).
    pub left_to_unwind: bool,
    /// The pending operation can run now only by ending its wait by itself, with a timeout or
    /// (when allowed) a spurious wake-up (set with the enabled threads, see `begin_step`);
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
    /// The arrival number of the thread's latest wait in a condition variable's queue (see
    /// `ObjectEntry::condvar_eligible`).
    pub condvar_arrival: u64,
    /// The barrier generation this thread waits to see pass.
    pub barrier_generation: u64,
    /// The rendezvous message number this thread waits to see received.
    pub ticket: u64,
    /// How many yields this thread performed in this execution.
    pub yields: u32,
    /// Whether the thread's latest step counted as a yield (see `Execution::begin_step`): the
    /// strategies' yield rule may hold the thread back until the others have stepped.
    pub last_step_yielded: bool,
    /// The thread's latest `compare_exchange_weak` whose comparison held failed spuriously,
    /// so its next one succeeds (`Execution::weak_exchange_fails_spuriously`).
    pub failed_spuriously: bool,
    /// Values of `thread_local!` keys, by key address.
    pub locals: Vec<(usize, Box<dyn Any>)>,
    /// Set once the thread has started destroying its thread-locals (`LocalKey::try_with`).
    pub locals_destroyed: bool,
    /// The thread's closure (or future) has ended: what runs now is the runtime's clean-up at
    /// the thread's root (dropping a panic's payload, thread-locals, kept values), whose
    /// destructors go on during teardown rather than being unwound (`teardown_point`).
    pub at_root: bool,
    /// Values kept until the end of the execution, to be dropped as this thread (`kept.rs`).
    pub kept: Vec<Box<dyn Any>>,
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
    /// Where the task this thread polls called `future::yield_now` during its current poll,
    /// which woke the task's waker and returned `Pending`: the park that ends the poll is then
    /// the yield's scheduling point (`op::PARK_AFTER_YIELD`). `None` outside such a poll.
    pub yield_before_park: Option<Site>,
    /// Whether the pending `RwLock::read` waits behind a writer that waits (writer preference)
    /// rather than joining the readers that hold the lock: a recorded choice, drawn the first
    /// time a writer waits while readers hold the lock (see `read_lock_enabled`); `Undecided`
    /// until then.
    pub read_preference: ReadPreference,
    /// The pending operation is an `RwLock::write` the thread waits to take: it counts in
    /// the lock's word (`ObjectEntry::lock`) until the lock is taken or the thread finishes.
    pub write_request: bool,
}

impl ThreadSlot {
    /// The slot of a thread spawned at `site`, about to start.
    fn new(site: Site, name: Option<Arc<str>>, cancelled: bool) -> ThreadSlot {
        ThreadSlot {
            pending: Op::new(OpKind::Start, NO_OBJECT),
            pending_site: site,
            finished: false,
            returned: false,
            panicked: false,
            panic_in_flight: None,
            unwinding_at_stop: false,
            teardown_unwinding: false,
            unobserved_panic: None,
            joined_panic: None,
            detached: false,
            cancelled,
            left_to_unwind: false,
            times_out: false,
            clock: VectorClock::default(),
            name,
            spawn_site: site,
            park_token: false,
            unpark_clock: VectorClock::default(),
            waiting: false,
            condvar_arrival: 0,
            barrier_generation: 0,
            ticket: 0,
            yields: 0,
            last_step_yielded: false,
            failed_spuriously: false,
            locals: Vec::new(),
            locals_destroyed: false,
            at_root: false,
            kept: Vec::new(),
            unit: None,
            unit_depth: 0,
            awaiting: Vec::new(),
            deadline: Duration::ZERO,
            timer_deadline: None,
            task_waker: 0,
            yield_before_park: None,
            read_preference: ReadPreference::Undecided,
            write_request: false,
        }
    }

    /// Drops what the slot of a thread of the last execution still owns (as dropping the slot
    /// did) and keeps the rest for a thread of the next one ([`ThreadSlot::restart`]).
    fn retire(&mut self) {
        self.panic_in_flight = None;
        self.unobserved_panic = None;
        self.joined_panic = None;
        self.name = None;
        self.locals.clear();
        self.kept.clear();
        self.awaiting.clear();
    }

    /// Makes a retired slot what [`ThreadSlot::new`] builds, in place, keeping the buffers of
    /// its vectors and clocks. Every field is named, so a new one cannot be forgotten.
    fn restart(&mut self, site: Site, name: Option<Arc<str>>, cancelled: bool) {
        let ThreadSlot {
            pending,
            pending_site,
            finished,
            returned,
            panicked,
            panic_in_flight,
            unwinding_at_stop,
            teardown_unwinding,
            unobserved_panic,
            joined_panic,
            detached,
            cancelled: slot_cancelled,
            left_to_unwind,
            times_out,
            clock,
            name: slot_name,
            spawn_site,
            park_token,
            unpark_clock,
            waiting,
            condvar_arrival,
            barrier_generation,
            ticket,
            yields,
            last_step_yielded,
            failed_spuriously,
            locals,
            locals_destroyed,
            at_root,
            kept,
            unit,
            unit_depth,
            awaiting,
            deadline,
            timer_deadline,
            task_waker,
            yield_before_park,
            read_preference,
            write_request,
        } = self;
        // Emptied by `retire`.
        debug_assert!(panic_in_flight.is_none() && unobserved_panic.is_none());
        debug_assert!(joined_panic.is_none() && slot_name.is_none());
        debug_assert!(locals.is_empty() && kept.is_empty() && awaiting.is_empty());
        *pending = Op::new(OpKind::Start, NO_OBJECT);
        *pending_site = site;
        *finished = false;
        *returned = false;
        *panicked = false;
        *unwinding_at_stop = false;
        *teardown_unwinding = false;
        *detached = false;
        *slot_cancelled = cancelled;
        *left_to_unwind = false;
        *times_out = false;
        clock.reset();
        *slot_name = name;
        *spawn_site = site;
        *park_token = false;
        unpark_clock.reset();
        *waiting = false;
        *condvar_arrival = 0;
        *barrier_generation = 0;
        *ticket = 0;
        *yields = 0;
        *last_step_yielded = false;
        *failed_spuriously = false;
        *locals_destroyed = false;
        *at_root = false;
        *unit = None;
        *unit_depth = 0;
        *deadline = Duration::ZERO;
        *timer_deadline = None;
        *task_waker = 0;
        *yield_before_park = None;
        *read_preference = ReadPreference::Undecided;
        *write_request = false;
    }
}

/// A panic that ended a thread and that no `join` has observed yet.
pub(crate) struct UnobservedPanic {
    /// When the panic was raised, in the order of the execution's panics: the earliest one
    /// left unobserved is the one reported.
    pub order: u64,
    pub message: String,
    pub site: Option<String>,
    /// The payload, when it was a `&'static str` (`FailureInfo::static_message`).
    pub static_message: Option<&'static str>,
}

/// What a pending task's future waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Awaited {
    /// One of the async primitives (its kind), awaited at a site when it is known.
    Primitive(&'static str, Option<Site>),
    /// The end of the task that thread `thread` runs, spawned at `site` (awaiting its
    /// `JoinHandle`).
    Task { thread: usize, site: Site },
    /// A notification of the blocking `sync::Notify` whose state is object `object`, waited
    /// for at `site`.
    Notification { object: u32, site: Site },
}

/// What to do when two accesses to a tracked variable race.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RaceMode {
    /// The race fails the execution (the default). Races on `cell::UnsafeCell` always fail.
    #[default]
    Fail,
    /// The race is reported once per pair of sites as a warning and the execution goes on:
    /// for programs whose `Var`s model deliberately racy fields.
    Warn,
}

/// What a thread's coroutine keeps of its own, on its own stack: `Current::coroutine` points at
/// the running one's, and `suspend` points it back at its own when a coroutine resumes, so
/// what is here follows the thread across switches at no cost to them.
struct CoroutineState {
    yielder: *const ThreadYielder,
    /// While a closure passed to `cell::Var::with`/`with_mut` (or `UnsafeCell`'s) runs in
    /// this thread, the address of the accessed cell's handle (0 otherwise): an access nested
    /// in the closure takes no scheduling point, since the reference is live (`cell.rs`). The
    /// thread's own: an atomic operation in the closure may switch to another thread, which is
    /// in no access.
    in_access: Cell<usize>,
}

impl CoroutineState {
    fn new(yielder: &ThreadYielder) -> CoroutineState {
        CoroutineState {
            yielder,
            in_access: Cell::new(0),
        }
    }

    /// Makes this the running coroutine's state; it must live until the coroutine returns.
    fn enter(&self) {
        CURRENT.with(|current| current.coroutine.set(self));
    }
}

/// Runs `f` with the running coroutine's access in progress, if a coroutine runs.
#[inline(always)]
fn with_access_in_progress<R>(f: impl FnOnce(&Cell<usize>) -> R) -> Option<R> {
    CURRENT.with(|current| {
        let state = current.coroutine.get();
        // SAFETY: a non-null state is the running coroutine's, alive on its stack.
        (!state.is_null()).then(|| f(unsafe { &(*state).in_access }))
    })
}

/// The cell access in progress in the running thread ([`CoroutineState::in_access`]).
#[inline(always)]
pub(crate) fn access_in_progress() -> usize {
    with_access_in_progress(Cell::get).unwrap_or(0)
}

/// Marks the access to the cell whose handle is at `handle` as in progress in the running
/// thread, or none when 0 ([`CoroutineState::in_access`]).
#[inline(always)]
pub(crate) fn set_access_in_progress(handle: usize) {
    with_access_in_progress(|access| access.set(handle));
}

/// Per-execution settings the runtime needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Writes the report printed just before Rust aborts the process because a destructor
    /// panicked while its thread was unwinding: the one report that cannot wait for the run to
    /// end. It gets the recording so far, the failure (the execution's, or the unwinding
    /// panic) and `destructor`, the engine's paragraph on the second panic.
    pub report_before_abort: fn(&Recording, &FailureInfo, destructor: &str) -> String,
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
    /// A thread's own `park` may end without an unpark (`Config::spurious_park_wakeups`).
    pub spurious_park_wakeups: bool,
    /// `compare_exchange_weak` may fail spuriously (`Config::spurious_cas_failures`).
    pub spurious_cas_failures: bool,
    /// How atomics behave (`Config::memory`).
    pub memory: MemoryModel,
    /// Which stores a thread's loads may read after it yielded (`Config::yield_visibility`).
    pub yield_visibility: YieldVisibility,
    /// Reports print every step of the interleaving (`Config::full_interleaving`).
    pub full_interleaving: bool,
    /// A panic fails the execution when it is raised, and teardown leaks the stack of a thread
    /// that is unwinding one instead of resuming it (`Config::panic_stops_execution`).
    pub panic_stops_execution: bool,
    /// A panic that ends a spawned thread or task fails the execution
    /// (`Config::spawned_panics_fail`).
    pub spawned_panics_fail: bool,
    /// The exploration the execution belongs to (`live::new_exploration`): an object another
    /// exploration's running execution uses is waited for, one of its own fails it.
    pub exploration: u64,
}

/// The state of one execution.
///
/// Only the engine and the primitives built on it (`sync`, `thread`, `future`, `cell`,
/// `time`, the online detectors) see it, while the execution runs; afterwards everything reads
/// the [`Recording`] that [`run`] hands back.
pub(crate) struct Execution {
    /// Distinguishes this execution from every other one in the process, so object handles
    /// registered in an earlier execution re-register.
    pub tag: u64,
    /// The threads' slots. Past its length, up to `initialised_slots`, the vector holds the
    /// retired slots of earlier executions, initialised, which `add_thread` restarts in place
    /// (`ThreadSlot::restart`): dropping every slot and building it afresh cost a thread
    /// about 80 instructions (callgrind, `fixed_costs`). Nothing but `Execution::new`,
    /// `add_thread` and `Drop` changes the length.
    pub threads: Vec<ThreadSlot>,
    /// How many slots of `threads`' buffer are initialised (live or retired).
    initialised_slots: usize,
    pub objects: Vec<ObjectEntry>,
    site_instances: FxHashMap<usize, u32>,
    /// What the execution leaves behind: its steps, values, failure, warnings, declarations.
    recording: Recording,
    /// The last step was a data access to an object the schedule does not track, so a
    /// following one takes the fast path (see `Schedule::tracks`).
    last_untracked: bool,
    /// Some object of this execution is untracked: without one, no step is a data access to
    /// one and `record` need not look up the stepped object to know it.
    any_untracked: bool,
    enabled: Vec<usize>,
    /// The live threads filed by what their pending operations wait for, which
    /// `compute_enabled` reads (`waiters.rs`).
    waiters: waiters::Waiters,
    /// `enabled` still holds what `compute_enabled` would compute now, apart from the running
    /// thread's own entry: set when it was computed, cleared by every entry into the runtime
    /// (`with`, `try_with`) except the choke point's and a data access's effect
    /// (`with_in_data_step`), and by the record of every step that is not a data access.
    /// Whether another thread can run changes only through the object table, the threads'
    /// pending operations, their finishing, park tokens, timers and the clock, and the choke
    /// point and data accesses change none of these for any thread but the running one, so a
    /// decision whose running thread announces an operation that cannot block (it is enabled
    /// whatever the state) reuses the list instead of scanning every thread again.
    enabled_fresh: bool,
    /// The step count from which every decision takes the full path (`decide_before_enabled`):
    /// the step bound while nothing rare has happened, 0 once something has or may (a
    /// failure, a stop handle, the main thread's return, the end of the test). A common
    /// decision then tests one condition for all of these (`decide`).
    full_decision_at: u64,
    /// Each decision checks that the schedule's choice is an enabled thread: always in debug
    /// builds, and in release builds unless the schedule promises it (`Schedule::chooses_enabled`).
    checks_choices: bool,
    /// Spurious wake-ups are allowed in this execution (`Limits::spurious_wakeups` or
    /// `Limits::spurious_park_wakeups`): one flag for the common decision to test.
    spurious_possible: bool,
    /// The flags `switch_on` hands back with every object's index (`Switched`): whether atomics
    /// log their values and run under the weak memory model, from the limits, computed once per
    /// execution instead of at every access (about 7 instructions per step of an atomic).
    switched_flags: u32,
    current: usize,
    /// Wakes of this OS thread's executions' tasks from other OS threads (`foreign.rs`).
    pub foreign: Arc<foreign::ForeignWakes>,
    /// How many uses of a primitive on a thread interleave did not start the process had seen
    /// when this execution started (`foreign::outside_use`).
    outside_uses_at_start: u64,
    /// The values of `lazy_static!` statics created in this execution.
    pub lazy_statics: lazy_values::Values,
    teardown: bool,
    /// The main thread returned and only detached tasks were left: they are being dropped
    /// (`ending.rs`).
    ending: bool,
    /// Steps taken while the tasks left at the end are dropped: they count towards the step
    /// bound and `thread::context_switches`, but are not recorded (no strategy chooses them).
    ending_steps: u64,
    /// The task left in the middle of a poll that the scheduler loop unwinds next
    /// (`ending.rs`).
    unwind_next: Option<usize>,
    /// Visible operations the thread being torn down attempted (see `TEARDOWN_STEP_BOUND`).
    teardown_steps: u32,
    /// Teardown left the thread it resumed where it stood (see `Execution::teardown_point`).
    left_standing: bool,
    /// Code runs on the scheduler loop's own stack after teardown (dropping timers), where no
    /// thread can be suspended or unwound: visible operations there are no-ops.
    on_scheduler_stack: bool,
    /// The OS thread was already panicking when the execution started (an earlier execution
    /// leaked a stack in the middle of an unwind): `std::thread::panicking()` then says nothing
    /// about this execution's threads.
    panicking_at_start: bool,
    /// How many panics the hook has seen in this execution (`UnobservedPanic::order`).
    panics_seen: u64,
    /// The virtual clock: time since the execution started.
    pub now: Duration,
    /// The registered async timers, in registration order.
    timers: Vec<Timer>,
    next_timer: u64,
    spawned: Vec<(usize, ThreadCoroutine, guard::Guarded)>,
    /// The scheduler loop's tables of coroutines (every entry `None`) and of their guard pages
    /// (empty), kept for the next execution on this OS thread: grown afresh, they cost an
    /// allocation and a reallocation or two per execution each.
    coroutine_buffer: Vec<Option<ThreadCoroutine>>,
    guard_buffer: Vec<guard::Guarded>,
    /// The emptied lists of the last execution's objects, for this execution's.
    spare_lists: object::SpareLists,
    schedule: Box<dyn Schedule + Send>,
    /// The handle that stops the execution from another OS thread, if it has one
    /// (`stop_signal.rs`).
    stop_handle: Option<StopHandle>,
    /// The weak memory model's state (used when `Limits::memory` is `Weak`).
    memory: memory::WeakMemory,
    /// Idle coroutine stacks, kept with the recycled execution for the next ones on this OS
    /// thread.
    stacks: stacks::Pool,
    /// Idle blocks of spawned threads' packets, kept likewise (`blocks.rs`).
    blocks: blocks::Blocks,
}

impl Drop for Execution {
    fn drop(&mut self) {
        let initialised = self.initialised_slots.max(self.threads.len());
        // SAFETY: the slots up to `initialised_slots` are initialised (see `threads`): the
        // vector drops the retired ones with the live ones.
        unsafe { self.threads.set_len(initialised) };
    }
}

/// The next block of execution tags no OS thread has taken.
static EXECUTION_TAGS: AtomicU64 = AtomicU64::new(1);

/// Tags an OS thread takes at a time, so the workers of an exploration do not pass the
/// counter's cache line between their cores at every execution.
const TAG_BLOCK: u64 = 1024;

thread_local! {
    /// The next tag of this OS thread's block and the end of the block.
    static TAGS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// `Execution::full_decision_at` at the start of an execution: the step bound, or 0 with a
/// stop handle, whose flag another OS thread may set at any time (`decide_before_enabled` reads
/// it at every decision).
fn full_decision_at(limits: &Limits, stop_handle: &Option<StopHandle>) -> u64 {
    if stop_handle.is_some() {
        0
    } else {
        limits.max_steps
    }
}

/// `Execution::spurious_possible` for an execution under `limits`.
fn spurious_possible(limits: &Limits) -> bool {
    limits.spurious_wakeups || limits.spurious_park_wakeups
}

/// `Execution::checks_choices` for an execution decided by `schedule`.
fn checks_choices(schedule: &(dyn Schedule + Send)) -> bool {
    cfg!(debug_assertions) || !schedule.chooses_enabled()
}

/// A tag no other execution of the process has: unique, and never 0.
fn fresh_tag() -> u64 {
    TAGS.with(|tags| {
        let (mut next, mut end) = tags.get();
        if next == end {
            next = EXECUTION_TAGS.fetch_add(TAG_BLOCK, Ordering::Relaxed);
            end = next + TAG_BLOCK;
        }
        tags.set((next + 1, end));
        next
    })
}

/// The execution running on this OS thread, and whether it is borrowed. A raw pointer and a
/// flag instead of a `RefCell<Option<Box<_>>>`: both are destructor-free, so each access is a
/// plain thread-local load, and this is read twice per step.
struct Current {
    execution: Cell<*mut Execution>,
    borrowed: Cell<bool>,
    /// The hook saw a panic while the execution was borrowed, so it could not tell which
    /// thread panicked: teardown then treats every thread as possibly unwinding.
    unattributed_panic: Cell<bool>,
    /// The state of the coroutine running on this OS thread, its yielder among it: set when
    /// the coroutine starts and again whenever it resumes from a suspension, so announcements
    /// need not carry it.
    coroutine: Cell<*const CoroutineState>,
}

thread_local! {
    static CURRENT: Current = const {
        Current {
            execution: Cell::new(std::ptr::null_mut()),
            borrowed: Cell::new(false),
            unattributed_panic: Cell::new(false),
            coroutine: Cell::new(std::ptr::null()),
        }
    };
    /// The last execution's state on this OS thread, for the next one to reuse
    /// (`Box::into_raw`; null when there is none). A destructor-free raw pointer: a
    /// `RefCell<Option<Box<_>>>` (registered for its destructor, borrowed, its old value
    /// dropped) cost each execution about 60 instructions to take it and give it back
    /// (callgrind, `fixed_costs`). `SPARE_OWNER` frees it when the OS thread exits.
    static SPARE: Cell<*mut Execution> = const { Cell::new(std::ptr::null_mut()) };
    /// Frees the spare execution when the OS thread exits; touched once per OS thread, when
    /// the first execution there ends, which registers its destructor.
    static SPARE_OWNER: SpareOwner = const { SpareOwner };
    /// `SPARE_OWNER` was touched on this OS thread.
    static SPARE_OWNED: Cell<bool> = const { Cell::new(false) };
}

/// Frees the spare execution of its OS thread (`SPARE`) when the thread exits.
struct SpareOwner;

impl Drop for SpareOwner {
    fn drop(&mut self) {
        let spare = SPARE.replace(std::ptr::null_mut());
        if !spare.is_null() {
            // SAFETY: a non-null `SPARE` came from `Box::into_raw` in `recycle`, and was
            // just taken out, so nothing else owns it.
            drop(unsafe { Box::from_raw(spare) });
        }
    }
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
/// `f` may change whether any thread can run, so the enabled threads the last decision
/// computed are recomputed at the next one (`Execution::enabled_fresh`).
///
/// # Panics
/// When called outside an execution (a primitive of this crate was used outside
/// `interleave::check` or its siblings), or re-entered from inside `f` (a strategy called into
/// the runtime).
#[inline(always)]
#[track_caller]
pub(crate) fn with<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    with_in_data_step(|ex| {
        ex.enabled_fresh = false;
        f(ex)
    })
}

/// Runs `f` with the current execution, for the choke point (`switch`, `switch_on`) and the
/// effect of a data access (an atomic's memory-model bookkeeping, a `Var`'s race check) only:
/// unlike [`with`], it keeps the enabled threads the last decision computed, since these
/// change whether a thread can run only through `record`, which looks after that itself.
///
/// # Panics
/// As [`with`].
#[inline(always)]
#[track_caller]
pub(crate) fn with_in_data_step<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
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

/// Runs `f` with the current execution for the effect of a data access whose announcement
/// (`switch_on`) the running thread has just made, as [`with_in_data_step`] does but without
/// its two tests: the execution is there (the announcement returned instead of unwinding the
/// thread, so the thread runs in the execution it announced in) and no one borrows it (the
/// announcement's borrow ended, and `f` is the runtime's own bookkeeping, which reaches no user
/// code, strategy or thread-local that could borrow it again). About 6 instructions per
/// read-modify-write and store of an atomic under the weak memory model.
///
/// # Safety
/// The caller announced its access with `switch_on` and calls only the runtime's own code
/// in between; `f` does not reach [`with`], [`with_in_data_step`] or a strategy.
#[inline(always)]
pub(crate) unsafe fn with_announced<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    let current: *const Current = CURRENT.with(|current| current as *const Current);
    // SAFETY: as in `with_in_data_step`.
    let current = unsafe { &*current };
    let execution = current.execution.get();
    debug_assert!(
        !execution.is_null() && !current.borrowed.get(),
        "with_announced without an announcement"
    );
    // SAFETY: the execution is set and not borrowed (see above); the reference does not leave
    // this function.
    f(unsafe { &mut *execution })
}

#[cold]
#[track_caller]
fn outside_execution() -> ! {
    // A test harness names the threads that run tests (a test that forgot `interleave::check`
    // uses its primitives on one of those), so an unnamed one is most likely a thread the test
    // started itself, outside interleave's control, while one of its executions ran.
    if std::thread::current().name().is_none() {
        foreign::outside_use(std::panic::Location::caller());
        panic!(
            "an interleave primitive was used outside an interleave execution, on a thread \
             interleave did not start: a thread started with std::thread::spawn or \
             std::thread::scope inside a test runs outside interleave's control; start it with \
             interleave::thread::spawn or interleave::thread::scope (outside a test, run the \
             code inside interleave::check, Builder::explore or interleave::replay)"
        )
    }
    panic!(
        "an interleave primitive was used outside an interleave execution: run the code \
         inside interleave::check, Builder::explore or interleave::replay"
    )
}

#[cold]
#[track_caller]
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

/// Whether the running thread is unwinding a panic: `std::thread::panicking` for a thread of
/// the program. std's answer is the OS thread's, and every thread of an execution runs on that
/// one OS thread: a thread switched out in the middle of an unwind (a destructor reached a
/// scheduling point) made it true for the others too, so a lock they released then was
/// poisoned. The panic hook marks the thread whose panic started (`ThreadSlot::panicked`):
/// while another thread is so marked and this one is not, the unwind is the other's.
#[inline]
pub(crate) fn thread_panicking() -> bool {
    std::thread::panicking() && unwinding_is_the_running_threads()
}

/// The part of [`thread_panicking`] that runs while the OS thread is unwinding, out of line:
/// every lock acquisition and release asks.
#[cold]
#[inline(never)]
fn unwinding_is_the_running_threads() -> bool {
    // The running thread is marked, or no thread is (the hook was replaced, say: std's answer).
    try_with(|ex| {
        ex.threads.get(ex.current).is_some_and(|slot| slot.panicked)
            || !ex.threads.iter().any(|slot| slot.panicked)
    })
    .unwrap_or(true)
}

/// True while an execution runs on this OS thread.
pub(crate) fn in_execution() -> bool {
    CURRENT.with(|current| !current.execution.get().is_null())
}

/// Runs `f` with the current execution if there is one and it is not borrowed; for code that
/// may run anywhere (the panic hook, destructors of panic payloads).
pub(crate) fn try_with<R>(f: impl FnOnce(&mut Execution) -> R) -> Option<R> {
    CURRENT.with(|current| {
        let execution = current.execution.get();
        if execution.is_null() || current.borrowed.get() {
            return None;
        }
        current.borrowed.set(true);
        let _borrow = Borrow(&current.borrowed);
        // SAFETY: as in `with`.
        let execution = unsafe { &mut *execution };
        execution.enabled_fresh = false;
        Some(f(execution))
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
        current.coroutine.set(std::ptr::null());
    });
    panics::reset();
}

/// Called by the panic hook when a panic starts inside an execution: remembers that the
/// running thread may be unwinding (see `ThreadSlot::panicked`), and under
/// `Limits::panic_stops_execution` makes the panic (`message`, raised at `site`) the
/// execution's failure at once, so the thread stops at its next scheduling point.
fn note_panic(message: &str, site: &str, static_message: Option<&'static str>) {
    let noted = try_with(|ex| {
        let me = ex.current;
        let order = ex.next_panic_order();
        if let Some(slot) = ex.threads.get_mut(me) {
            slot.panicked = true;
            slot.panic_in_flight = Some(Box::new(UnobservedPanic {
                order,
                message: message.to_string(),
                site: (!site.is_empty()).then(|| site.to_string()),
                static_message,
            }));
        }
        if ex.recording.limits.panic_stops_execution
            && !ex.teardown
            && ex.recording.failure.is_none()
        {
            ex.record_failure(FailureInfo {
                site: (!site.is_empty()).then(|| site.to_string()),
                static_message,
                ..FailureInfo::new(FailureKind::Panic, message.to_string(), Some(me))
            });
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
    let destructor_paragraph = format!(
        "  then, while unwinding, a destructor panicked{}:\n    {}\n",
        at(&destructor.1),
        destructor.0
    );
    let told = try_with(|ex| {
        // The report renders the failure from the recording (the unwinding thread then shows
        // no next operation); the process ends right after, so nothing else reads it.
        let current = ex.current;
        ex.recording.failure.get_or_insert_with(|| FailureInfo {
            site: (!unwinding.1.is_empty()).then(|| unwinding.1.clone()),
            ..FailureInfo::new(FailureKind::Panic, unwinding.0.clone(), Some(current))
        });
        // An earlier panic of another thread that no join observed is often the cause (a worker
        // that panicked holding a lock poisoned it), and the end of the execution, which would
        // note it, never comes: it is noted here. The unwinding thread's own panic is the
        // failure already.
        ex.threads[current].unobserved_panic = None;
        ex.unobserved_panic();
        ex.current = current;
        let info = ex
            .recording
            .failure
            .clone()
            .expect("the failure was just recorded");
        ex.complete_recording();
        (ex.recording.limits.report_before_abort)(&ex.recording, &info, &destructor_paragraph)
    });
    match told {
        Some(report) => text.push_str(&report),
        None => text.push_str(&format!(
            "  a panic{}:\n    {}\n{destructor_paragraph}",
            at(&unwinding.1),
            unwinding.0,
        )),
    }
    eprintln!("{text}");
}

/// The tag of the execution running on this OS thread, if one is.
pub(crate) fn current_tag() -> Option<u64> {
    in_execution().then(|| with(|ex| ex.tag))
}

impl Execution {
    /// A fresh execution, reusing the buffers of the last one that ran on this OS thread.
    fn new(
        schedule: Box<dyn Schedule + Send>,
        limits: Limits,
        stop_handle: Option<StopHandle>,
    ) -> Box<Execution> {
        let spare = SPARE.replace(std::ptr::null_mut());
        if !spare.is_null() {
            // SAFETY: a non-null `SPARE` came from `Box::into_raw` in `recycle`, and was just
            // taken out, so nothing else owns it.
            let mut spare = unsafe { Box::from_raw(spare) };
            spare.tag = fresh_tag();
            spare.retire_slots();
            let Execution {
                objects,
                spare_lists,
                ..
            } = &mut *spare;
            // A loop and a clear rather than a drain, whose drop costs every execution a few
            // dozen instructions.
            for entry in objects.iter_mut() {
                entry.state.give_lists_to(spare_lists);
            }
            objects.clear();
            spare.site_instances.clear();
            spare.recording.clear(limits);
            spare.last_untracked = false;
            spare.any_untracked = false;
            spare.enabled.clear();
            spare.waiters.clear();
            spare.enabled_fresh = false;
            spare.full_decision_at = full_decision_at(&limits, &stop_handle);
            spare.checks_choices = checks_choices(&*schedule);
            spare.spurious_possible = spurious_possible(&limits);
            spare.switched_flags = switching::Switched::flags(&limits);
            spare.current = 0;
            spare.lazy_statics.clear();
            spare.teardown = false;
            spare.ending = false;
            spare.ending_steps = 0;
            spare.unwind_next = None;
            spare.teardown_steps = 0;
            spare.left_standing = false;
            spare.on_scheduler_stack = false;
            spare.panicking_at_start = false;
            spare.panics_seen = 0;
            spare.now = Duration::ZERO;
            spare.timers.clear();
            spare.next_timer = 0;
            spare.schedule = schedule;
            spare.stop_handle = stop_handle;
            spare.memory.clear();
            return spare;
        }
        Box::new(Execution {
            tag: fresh_tag(),
            threads: Vec::new(),
            initialised_slots: 0,
            objects: Vec::new(),
            site_instances: FxHashMap::default(),
            recording: Recording::new(limits),
            last_untracked: false,
            any_untracked: false,
            enabled: Vec::new(),
            waiters: waiters::Waiters::default(),
            enabled_fresh: false,
            full_decision_at: full_decision_at(&limits, &stop_handle),
            checks_choices: checks_choices(&*schedule),
            spurious_possible: spurious_possible(&limits),
            switched_flags: switching::Switched::flags(&limits),
            current: 0,
            foreign: Arc::default(),
            outside_uses_at_start: 0,
            lazy_statics: Default::default(),
            teardown: false,
            ending: false,
            ending_steps: 0,
            unwind_next: None,
            teardown_steps: 0,
            left_standing: false,
            on_scheduler_stack: false,
            panicking_at_start: false,
            panics_seen: 0,
            now: Duration::ZERO,
            timers: Vec::new(),
            next_timer: 0,
            spawned: Vec::new(),
            coroutine_buffer: Vec::new(),
            guard_buffer: Vec::new(),
            spare_lists: object::SpareLists::default(),
            schedule,
            stop_handle,
            memory: memory::WeakMemory::default(),
            stacks: stacks::Pool::default(),
            blocks: blocks::Blocks::default(),
        })
    }

    /// Retires the slots of the last execution's threads, for `add_thread` to restart.
    fn retire_slots(&mut self) {
        for slot in &mut self.threads {
            slot.retire();
        }
        self.initialised_slots = self.initialised_slots.max(self.threads.len());
        // SAFETY: shortening a vector is sound; the slots past the new length stay
        // initialised, as `initialised_slots` records, and `add_thread` and `Drop` use them
        // as such.
        unsafe { self.threads.set_len(0) };
    }

    /// Hands the execution's buffers to the next execution on this OS thread.
    fn recycle(self: Box<Execution>) {
        if !SPARE_OWNED.replace(true) {
            // The first execution recycled on this OS thread: touching the owner registers
            // its destructor. During the thread's exit, when it cannot be touched, the
            // execution is leaked instead.
            if SPARE_OWNER.try_with(|_| {}).is_err() {
                std::mem::forget(self);
                return;
            }
        }
        let earlier = SPARE.replace(Box::into_raw(self));
        if !earlier.is_null() {
            // SAFETY: as in `Execution::new`. An execution created while another was spare
            // (executions do not nest, so never today) frees the older one.
            drop(unsafe { Box::from_raw(earlier) });
        }
    }

    /// The running thread.
    #[inline]
    pub fn me(&self) -> usize {
        self.current
    }

    /// Describes what the running thread's step just taken did on a channel, for the trace
    /// (`TraceTarget::Channel`).
    pub(crate) fn describe_channel_step(&mut self, step: recording::ChannelStep) {
        self.describe_step(&[OpKind::Send, OpKind::Recv, OpKind::Poll], step.encode());
    }

    /// Records the barrier generation the running thread's step just taken (an arrival, or a
    /// leave) belongs to, and whether it was the arrival that filled it, for the trace
    /// (`TraceTarget::Generation`, `TraceTarget::FilledGeneration`).
    pub(crate) fn describe_barrier_step(&mut self, generation: u32, fills: bool) {
        let arg = (generation & !recording::FILLS_GENERATION) | (u32::from(fills) << 31);
        self.describe_step(&[OpKind::BarrierArrive, OpKind::BarrierLeave], arg);
    }

    /// Marks the running thread's step just taken, a compare-exchange, as one that failed and
    /// read with `failure`: reports then show it as the load it was, with that ordering.
    pub(crate) fn describe_failed_exchange(&mut self, failure: std::sync::atomic::Ordering) {
        let me = self.current as u32;
        if let Some(event) = self.recording.events.last_mut() {
            if event.thread == me && event.kind == OpKind::AtomicRmw {
                event.arg = op::failed_exchange_code(event.arg, failure);
            }
        }
    }

    /// Sets the argument of the running thread's step just taken, if it is of one of `kinds`.
    fn describe_step(&mut self, kinds: &[OpKind], arg: u32) {
        let me = self.current as u32;
        if let Some(event) = self.recording.events.last_mut() {
            if event.thread == me && kinds.contains(&event.kind) {
                event.arg = arg;
            }
        }
    }

    /// The number of steps executed so far.
    pub fn steps(&self) -> u64 {
        self.recording.steps()
    }

    /// Whether thread `thread` has taken a step after its start.
    pub fn stepped_past_start(&self, thread: usize) -> bool {
        // The scan stops at the thread's second step, near its start, instead of counting
        // every step of the execution.
        self.recording
            .events
            .iter()
            .filter(|event| event.thread as usize == thread)
            .nth(1)
            .is_some()
    }

    /// The settings this execution runs under.
    #[inline]
    pub fn limits(&self) -> &Limits {
        &self.recording.limits
    }

    /// Records a warning for the report.
    pub fn warn(&mut self, warning: String) {
        self.recording.warnings.push(warning);
    }

    /// Fills in the threads' final states and the schedule's feedback: what the recording
    /// needs that the engine kept elsewhere while the execution ran.
    fn complete_recording(&mut self) {
        let recording = &mut self.recording;
        recording.threads.clear();
        recording
            .threads
            .extend(self.threads.iter().map(|slot| ThreadRecord {
                name: slot.name.clone(),
                spawn_site: slot.spawn_site,
                finished: slot.finished,
                pending: slot.pending,
                pending_site: slot.pending_site,
            }));
        recording.feedback = self.schedule.feedback();
    }

    /// The index of `handle`'s object, registering it if this is its first use here.
    #[inline]
    pub fn object(&mut self, handle: &ObjectHandle, kind: ObjectKind) -> ObjIdx {
        match handle.index_in(self.tag) {
            Some(idx) => {
                // A value can move between uses; its atomic set follows where it is now.
                self.recording.objects[idx as usize].address =
                    handle as *const ObjectHandle as usize;
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
        let claimed = self.claim(handle, idx as ObjIdx);
        self.recording.objects.push(ObjectRecord {
            id,
            name: handle.name().unwrap_or(kind.type_name()),
            internal: handle.is_internal(),
            address: handle as *const ObjectHandle as usize,
            outlived: !matches!(claimed, Ok(false)),
        });
        // A shared object fails the execution at its next step, which the fast path of
        // untracked objects would skip.
        let untracked = claimed.is_ok() && !self.schedule.tracks(id);
        self.any_untracked |= untracked;
        self.objects.push(ObjectEntry {
            state: ObjState::fresh(kind, &mut self.spare_lists),
            clock: VectorClock::default(),
            untracked,
            poisoned: false,
            lock: 0,
            condvar_eligible: 0,
            requests: LockRequests::default(),
        });
        match claimed {
            Ok(outlived) => self.recording.outlived_objects |= outlived,
            Err((owner, no_turn)) => {
                self.recording.outlived_objects = true;
                self.shared_with_running_execution(id, owner, no_turn);
            }
        }
        idx as ObjIdx
    }

    /// Registers `handle` as this execution's object `index` (see `ObjectHandle::claim`). An
    /// object that an execution of another exploration uses, or waits for, is waited for (see
    /// `live.rs`); one that another execution of this exploration uses is refused. `Err` names
    /// the execution that keeps it, and why this one did not wait for it to end (`None`: it is
    /// an execution of this exploration).
    fn claim(
        &self,
        handle: &ObjectHandle,
        index: ObjIdx,
    ) -> Result<bool, (u64, Option<live::NoTurn>)> {
        let exploration = self.recording.limits.exploration;
        let address = handle as *const ObjectHandle as usize;
        // Held while this execution claims the object it waited for: the waiters behind it are
        // then no reason to wait again.
        let mut turn = None;
        loop {
            let claimed = handle.claim(self.tag, index, |owner| {
                live::runs(owner) || (turn.is_none() && live::others_wait_for(address, exploration))
            });
            drop(turn.take());
            let owner = match claimed {
                Err(owner) if !live::runs_in(owner, exploration) => owner,
                claimed => return claimed.map_err(|owner| (owner, None)),
            };
            match live::wait_for_turn(
                self.tag,
                exploration,
                address,
                || handle.owner(),
                watchdog::beat_this_thread,
            ) {
                Ok(next) => turn = Some(next),
                Err(no_turn) => return Err((owner, Some(no_turn))),
            }
        }
    }

    /// Fails the execution because the object `id` is in use by the execution tagged `owner`,
    /// which runs at the same time on another OS thread: an execution of this exploration, or
    /// of another one it could not wait for (`no_turn`). The object stays registered to its
    /// owner, so that execution goes on undisturbed.
    #[cold]
    fn shared_with_running_execution(
        &mut self,
        id: ObjectId,
        owner: u64,
        no_turn: Option<live::NoTurn>,
    ) {
        let os_thread = live::running_on(owner)
            .map(|name| format!(" (OS thread '{name}')"))
            .unwrap_or_default();
        let why = match no_turn {
            None => "Executions of different tests take turns at such an object, one execution \
                     at a time, but the executions of one exploration on several workers cannot: \
                     what each found in it would depend on their timing, and so would the report."
                .to_string(),
            Some(live::NoTurn::Cycle) => "This execution waited for its turn at it, but the \
                     execution that uses it waits, perhaps through others, for an object this \
                     one uses: the two would wait for each other for ever."
                .to_string(),
            Some(live::NoTurn::TooLong) => format!(
                "This execution waited {} s for its turn at it, which did not come.",
                live::LONGEST_WAIT.as_secs()
            ),
        };
        let site = id.site;
        let message = format!(
            "the {kind} created at {file}:{line}:{column} is in use by another execution running \
             at the same time{os_thread}.\n\n\
             An interleave primitive in a `static` (or any value that outlives an execution) is \
             shared by every exploration of the process: cargo runs tests on parallel OS threads, \
             and `Builder::workers` runs executions on several. Two executions using it at once \
             would share its data (two threads inside one critical section, one on each OS \
             thread). {why} So this execution stopped before using it.\n\n\
             Remedies: declare it with `interleave::lazy_static!`, which gives every execution its \
             own value; or create it inside the test and share it with `Arc`; or run such tests \
             one at a time (`cargo test -- --test-threads=1`) with one worker \
             (`Builder::workers(1)`).",
            kind = id.kind.name(),
            file = site.file(),
            line = site.line(),
            column = site.column(),
        );
        self.recording.outside_control = true;
        self.fail(FailureKind::Nondeterminism, message);
    }

    /// Adds to a panic that fails the execution a note for each panic of another thread that a
    /// `join` returned to the program before it, in the order they were raised: a panic in
    /// `join().unwrap()` says only "called `Result::unwrap()` on an `Err` value".
    fn note_joined_panics(&mut self) {
        let Some(failure) = &self.recording.failure else {
            return;
        };
        if failure.kind != FailureKind::Panic
            || !self.threads.iter().any(|t| t.joined_panic.is_some())
        {
            return;
        }
        let mut joined: Vec<(u64, String)> = (0..self.threads.len())
            .filter(|&t| Some(t) != failure.thread)
            .filter_map(|t| {
                let panic = self.threads[t].joined_panic.as_ref()?;
                let at = panic
                    .site
                    .as_deref()
                    .map(|site| format!(" at {site}"))
                    .unwrap_or_default();
                let note = format!(
                    "thread {t} also panicked{at}: {}; a join returned that panic as `Err`",
                    panic.message
                );
                Some((panic.order, note))
            })
            .collect();
        joined.sort();
        if let Some(failure) = &mut self.recording.failure {
            failure.notes = joined.into_iter().map(|(_, note)| note).collect();
        }
    }

    /// Adds to the execution's failure, if any, a note on a primitive used meanwhile on a
    /// thread interleave did not start (`foreign::outside_use`).
    fn note_outside_use(&mut self) {
        if foreign::outside_uses() == self.outside_uses_at_start {
            return;
        }
        if let (Some(failure), Some(note)) =
            (&mut self.recording.failure, foreign::outside_use_note())
        {
            failure.notes.push(note);
        }
    }

    /// Makes the first panic of a spawned thread that no `join` observed the execution's
    /// failure. It happened before whatever else ended the execution, so it replaces a deadlock
    /// or step-bound verdict, which it likely caused (a worker that panicked never signals), and
    /// keeps that verdict as a note; any other failure stays and gets the panic as a note. An
    /// abandoned or stopped execution ended before it could join, so it reports nothing.
    fn unobserved_panic(&mut self) {
        if self.recording.is_abandoned() || self.recording.stopped {
            return;
        }
        self.note_joined_panics();
        self.note_outside_use();
        let Some(index) = (0..self.threads.len())
            .filter_map(|t| Some((self.threads[t].unobserved_panic.as_ref()?.order, t)))
            .min()
            .map(|(_, t)| t)
        else {
            return;
        };
        let Some(panic) = self.threads[index].unobserved_panic.take() else {
            return;
        };
        let UnobservedPanic {
            message,
            site,
            static_message,
            ..
        } = *panic;
        let panic = FailureInfo {
            site,
            static_message,
            ..FailureInfo::new(FailureKind::Panic, message, Some(index))
        };
        let failure = match self.recording.failure.take() {
            None => panic,
            Some(earlier)
                if matches!(earlier.kind, FailureKind::Deadlock | FailureKind::StepBound) =>
            {
                FailureInfo {
                    afterwards: Some(Box::new(earlier)),
                    ..panic
                }
            }
            Some(mut earlier) => {
                // The message is no longer the panic's own.
                earlier.static_message = None;
                // The earlier panic is the likely cause: where it happened, and that nothing
                // had joined its thread by the end (a join still to come does not observe it).
                let at = panic
                    .site
                    .as_deref()
                    .map_or(String::new(), |site| format!(" at {site}"));
                earlier.message = format!(
                    "{}\n\nnote: before this, thread {index} panicked{at}, and the execution ended \
                     before any join observed it: {}",
                    earlier.message, panic.message
                );
                earlier
            }
        };
        self.record_failure(failure);
        self.current = index;
    }

    /// The running thread acquires what was released into `object` (happens-before edge).
    /// Always inlined, as [`Execution::release`] is, for the same reason.
    #[inline(always)]
    pub fn acquire(&mut self, object: ObjIdx) {
        let me = self.current;
        let (threads, objects) = (&mut self.threads, &self.objects);
        threads[me].clock.join(&objects[object as usize].clock);
    }

    /// The next number in the order of the execution's panics.
    fn next_panic_order(&mut self) -> u64 {
        self.panics_seen += 1;
        self.panics_seen
    }

    /// The order of the panic thread `t` ends with: when the hook saw it raised, or now.
    fn panic_order(&mut self, t: usize) -> u64 {
        match &self.threads[t].panic_in_flight {
            Some(panic) => panic.order,
            None => self.next_panic_order(),
        }
    }

    /// The running thread's clock as it releases it now, after which it moves on (its own
    /// entry ticks): what a message, an unpark or a receipt carries to the thread that
    /// acquires it later.
    pub(crate) fn release_snapshot(&mut self) -> VectorClock {
        let me = self.current;
        let clock = self.threads[me].clock.clone();
        self.threads[me].clock.tick(me);
        clock
    }

    /// The running thread releases its history into `object` and starts a new epoch.
    /// Inlined into `record`'s unlock steps, as `acquire` is into its lock steps (out of
    /// line, a call cost about 15 of its 58 instructions per unlock). Always: with a plain
    /// hint, whether `decide` inlined it changed with the partition of the crate into codegen
    /// units (mutex +1,300 instructions per execution after an unrelated change in `thread.rs`).
    #[inline(always)]
    pub fn release(&mut self, object: ObjIdx) {
        let me = self.current;
        let (threads, objects) = (&mut self.threads, &mut self.objects);
        objects[object as usize].clock.join(&threads[me].clock);
        threads[me].clock.tick(me);
    }

    /// The running thread takes mutex `object` at `site` (happens-before included). Always
    /// inlined: the inliner's choice for `decide` (through `record`) flipped with unrelated
    /// changes, and out of line this and `give_mutex` cost the mutex workload 4.4%.
    #[inline(always)]
    pub fn take_mutex(&mut self, object: ObjIdx, site: Site) {
        let thread = self.current;
        let entry = &mut self.objects[object as usize];
        if let ObjState::Mutex { holder } = &mut entry.state {
            *holder = Some(Holder { thread, site });
            entry.lock = LOCK_WRITER;
        }
        self.acquire(object);
    }

    /// The running thread releases mutex `object` (happens-before included); always inlined,
    /// as `take_mutex`.
    #[inline(always)]
    pub fn give_mutex(&mut self, object: ObjIdx) {
        let entry = &mut self.objects[object as usize];
        if let ObjState::Mutex { holder } = &mut entry.state {
            *holder = None;
            entry.lock = 0;
        }
        self.release(object);
    }

    /// The running thread takes read-write lock `object` for reading or writing at `site`.
    pub fn take_rwlock(&mut self, object: ObjIdx, write: bool, site: Site) {
        let holder = Holder {
            thread: self.current,
            site,
        };
        let entry = &mut self.objects[object as usize];
        if let ObjState::RwLock { writer, readers } = &mut entry.state {
            if write {
                *writer = Some(holder);
                entry.lock |= LOCK_WRITER;
                // The thread no longer waits to write (during teardown it may take the lock
                // without having announced the request).
                let slot = &mut self.threads[holder.thread];
                if slot.write_request {
                    slot.write_request = false;
                    entry.lock -= LOCK_ONE_WAITING;
                }
            } else {
                readers.push(holder);
                entry.lock += 1;
            }
        }
        self.acquire(object);
    }

    /// The running thread releases read-write lock `object`, which it holds for writing or
    /// for reading.
    pub fn give_rwlock(&mut self, object: ObjIdx) {
        let me = self.current;
        let entry = &mut self.objects[object as usize];
        if let ObjState::RwLock { writer, readers } = &mut entry.state {
            if writer.is_some_and(|w| w.thread == me) {
                *writer = None;
                entry.lock &= !LOCK_WRITER;
            } else if let Some(position) = readers.iter().position(|r| r.thread == me) {
                readers.swap_remove(position);
                entry.lock -= 1;
            }
        }
        self.release(object);
    }

    /// Makes every later decision of this execution take the full path (see
    /// `Execution::full_decision_at`): something rare happened that it must look at. Called
    /// when a failure is recorded (`record_failure`), the main thread returns or the end of
    /// the test begins.
    #[inline(always)]
    pub(super) fn decide_in_full_from_now(&mut self) {
        self.full_decision_at = 0;
    }

    /// Records `failure` as the execution's failure, replacing any earlier one (the callers
    /// decide which wins), and has every later decision look at it.
    pub(super) fn record_failure(&mut self, failure: FailureInfo) {
        self.decide_in_full_from_now();
        self.recording.failure = Some(failure);
    }

    /// Records a failure of the running execution (the first one wins).
    pub fn fail(&mut self, kind: FailureKind, message: String) {
        if self.recording.failure.is_none() && !self.teardown {
            self.record_failure(FailureInfo::new(kind, message, Some(self.current)));
        }
    }

    /// Fails the execution like [`Execution::fail`], and has the report show `steps` (the
    /// earlier access of a data race) however long the interleaving.
    pub fn fail_at_steps(&mut self, kind: FailureKind, message: String, steps: &[u64]) {
        if self.recording.failure.is_none() && !self.teardown {
            self.recording.failure_steps.extend_from_slice(steps);
        }
        self.fail(kind, message);
    }

    /// Has reports show the running thread's latest step, a step on the internal state lock
    /// of a primitive built on it, as the user operation `label` (`lock` for an async mutex's
    /// `lock().await`). The primitive calls this while it holds the state lock, so that step
    /// is the thread's latest.
    pub fn show_last_step_as(&mut self, operation: &'static str) {
        if let Some(label) = self.last_step_label() {
            label.operation = operation;
        }
    }

    /// Has reports show the running thread's latest step, if it is a step on a primitive's
    /// internal state lock, as an operation that has to wait (`lock (waits)`).
    pub fn show_last_step_waits(&mut self) {
        if let Some(label) = self.last_step_label() {
            label.waits = true;
        }
    }

    /// The label of the running thread's latest step, created (as `poll`) if it has none, if
    /// that step is on a primitive's internal state lock. The release of the state lock does
    /// not count: the primitive may have released it already, and reports show the release
    /// as part of the step that took it.
    fn last_step_label(&mut self) -> Option<&mut StepLabel> {
        // Destructors that run while the execution is torn down take no steps.
        if self.teardown {
            return None;
        }
        let me = self.current as u32;
        let recording = &mut self.recording;
        let internal = |object: ObjIdx| {
            recording
                .objects
                .get(object as usize)
                .is_some_and(|o| o.internal)
        };
        let step = recording.events.iter().rposition(|event| {
            event.thread == me && !(event.kind == OpKind::Unlock && internal(event.object))
        })?;
        if !internal(recording.events[step].object) {
            return None;
        }
        Some(recording.step_label(step as u64))
    }

    /// Names the step the running thread has just taken `operation` in reports, where its kind
    /// alone would mislead (an abort is an unpark of the task).
    pub(crate) fn label_step_just_taken(&mut self, operation: &'static str) {
        let Some(step) = self.recording.events.len().checked_sub(1) else {
            return;
        };
        debug_assert_eq!(
            self.recording.events[step].thread as usize, self.current,
            "the running thread's step"
        );
        self.recording.step_label(step as u64).operation = operation;
    }

    /// The one name reports give the object with index `object` (`Recording::object_name`).
    pub fn object_name(&self, object: ObjIdx) -> String {
        self.recording.object_name(object)
    }

    /// Fails the execution for a reason the engine found itself, keeping the state it stopped
    /// in for the explanation written after the run.
    #[cold]
    fn stop(&mut self, stop: Stop) {
        if self.recording.failure.is_some() || self.teardown {
            return;
        }
        let threads = (0..self.threads.len())
            .map(|t| {
                let slot = &self.threads[t];
                ThreadAtStop {
                    finished: slot.finished,
                    pending: slot.pending,
                    pending_site: slot.pending_site,
                    waiting: slot.waiting,
                    deadline_passed: self.deadline_passed(t),
                    deadline: slot.deadline,
                    yields: slot.yields,
                    awaiting: slot.awaiting.clone(),
                    behind_writer: (slot.pending.kind == OpKind::ReadLock
                        && slot.read_preference == ReadPreference::Defers)
                        .then(|| self.writer_waits(slot.pending.object, t))
                        .flatten(),
                }
            })
            .collect();
        let stopped = Stopped {
            stop,
            at_end: self.ending,
            steps: self.steps(),
            now: self.now,
            threads,
            objects: self.objects.iter().map(|o| o.state.clone()).collect(),
        };
        self.fail(stop.kind(), String::new());
        if let Some(failure) = &mut self.recording.failure {
            failure.stopped = Some(Box::new(stopped));
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
        let size = requested.unwrap_or(0).max(self.recording.limits.stack_size);
        self.stacks.take(size).map_err(|os_error| {
            self.recording.outside_control = true;
            stacks::StackError::new(size, self.threads.len(), name, site, os_error)
        })
    }

    /// Adds thread `index` running `body` on `stack` (from [`Execution::stack_for`]); it
    /// starts at the next decision.
    pub fn add_thread(
        &mut self,
        body: ThreadBody,
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
        // Created first: the coroutine is assembled on the stack with narrow stores and copied
        // into `spawned` below with wide loads, which stall on store forwarding when they
        // follow the stores closely (created last, its copy took a third of the wall-clock
        // samples of this function, perf record).
        let coroutine = Coroutine::with_stack(stack, move |yielder: &ThreadYielder, _: Resume| {
            thread_main(index, yielder, body)
        });
        // A slot an earlier execution retired is restarted in place; a new one is written
        // where it will live: built as an argument of `push`, which may grow the vector
        // first, the 432-byte slot was built on the stack and copied (a memcpy call per
        // thread).
        if index < self.initialised_slots {
            // SAFETY: the slot at `index` is initialised (`initialised_slots`) and within
            // the capacity.
            unsafe { self.threads.set_len(index + 1) };
            self.threads[index].restart(site, name, self.ending);
        } else {
            // Growing reallocates only when the length is the capacity, so no retired slot
            // lies past the length then (they all lie below `initialised_slots`, which is at
            // most `index`).
            self.threads.reserve(1);
            // A thread spawned while the tasks left at the end are dropped never runs.
            self.threads.spare_capacity_mut()[0].write(ThreadSlot::new(site, name, self.ending));
            // SAFETY: the slot past the length was just initialised, within the capacity
            // reserved.
            unsafe { self.threads.set_len(index + 1) };
        }
        // The new thread's clock is its parent's (the running thread's, if there is one), set
        // in place: built on the stack and copied into the slot, its entry written by the
        // tick was read back at once with wide loads, which stalled on store forwarding.
        let current = self.current;
        if let Ok([parent, child]) = self.threads.get_disjoint_mut([current, index]) {
            child.clock.copy_from(&parent.clock);
            parent.clock.tick(current);
        }
        self.threads[index].clock.tick(index);
        self.waiters.thread_added(&mut self.objects, &self.threads);
        // Written in place too: pushed, the tuple was assembled on the stack and copied.
        self.spawned.reserve(1);
        let spawned = self.spawned.len();
        self.spawned.spare_capacity_mut()[0].write((index, coroutine, guarded));
        // SAFETY: the element past the length was just initialised, within the capacity
        // reserved.
        unsafe { self.spawned.set_len(spawned + 1) };
        index
    }

    /// Whether an unpark of thread `target` by the running thread, now, orders nothing against
    /// the other threads' steps, so that it needs no scheduling point of its own.
    ///
    /// That is so when `target` has finished (nothing reads its token again), and when
    /// `target` waits to take its park with its token already set (a task woken and not yet
    /// polled again) while the running thread's latest step was neither an unpark of it nor a
    /// spawn, and `target`'s latest step was no yield nor is its park one. The unpark then
    /// finds the token set and leaves it set. The only step of another
    /// thread it does not commute with is `target`'s park, which consumes the token, so the
    /// only schedules a scheduling point here adds are those in which that park comes between
    /// the running thread's latest step and this unpark (the task polled once more before
    /// the wake, and woken again). The park is enabled already and is `target`'s next step,
    /// so it commutes with the running thread's latest step unless that step is what set the
    /// token (an unpark of `target`, or its spawn), and each such schedule is the schedule that
    /// runs the park before that step, where this unpark finds the token consumed and is a
    /// scheduling point again. That earlier schedule is one the strategies' yield rule allows
    /// only if `target` is not held back by a yield of its own, hence the condition on its
    /// latest step (a task that yielded and waits for the waker's step would otherwise lose
    /// every schedule in which it runs on before the wake). A park after `future::yield_now`
    /// is no such park: the task wakes itself again at its next yield, so running the park
    /// earlier does not leave the token consumed for this unpark, and the unpark (a task's
    /// abort, say) would lose the schedules in which it comes between two of the task's
    /// yields. The token and the clock are updated as by any unpark.
    pub(crate) fn unpark_orders_nothing(&self, target: usize) -> bool {
        let Some(slot) = self.threads.get(target) else {
            return false;
        };
        if self.teardown || self.ending {
            return false;
        }
        if slot.finished {
            return true;
        }
        if !(slot.park_token && slot.pending.kind == OpKind::Park)
            || slot.last_step_yielded
            || slot.pending.yields
        {
            return false;
        }
        match self.recording.events.last() {
            Some(last) if last.thread as usize == self.current => {
                last.kind != OpKind::Spawn
                    && !(last.kind == OpKind::Unpark && last.arg as usize == target)
            }
            _ => false,
        }
    }

    /// Leaks the coroutines of threads spawned too late to run (see `run_stoppable`).
    fn leak_late_spawns(&mut self) {
        if self.spawned.is_empty() {
            return;
        }
        for (_, coroutine, _) in self.spawned.drain(..) {
            std::mem::forget(coroutine);
        }
    }

    /// No thread keeps values or thread-locals and no `lazy_static!` value exists: the passes
    /// that drop them after the end would find nothing.
    fn keeps_nothing(&self) -> bool {
        self.lazy_statics.len() == 0
            && self
                .threads
                .iter()
                .all(|slot| slot.kept.is_empty() && slot.locals.is_empty())
    }

    /// The running thread acquires the final clock of finished thread `target` (`join`).
    pub fn join_clock(&mut self, target: usize) {
        let me = self.current;
        // Both slots borrowed at once: taking the target's clock out and putting it back
        // moved two 96-byte clocks per join.
        if let Ok([joiner, joined]) = self.threads.get_disjoint_mut([me, target]) {
            joiner.clock.join(&joined.clock);
        }
    }
}

/// The body of every coroutine: run the thread (or, for a thread the execution ended before
/// it started, only drop its closure), capture its panic, run its thread-locals' destructors,
/// mark it finished. No panic leaves it: one that reached the coroutine's root would come out
/// of `resume` in the scheduler loop and escape `explore`.
fn thread_main(index: usize, yielder: &ThreadYielder, body: ThreadBody) {
    let state = CoroutineState::new(yielder);
    state.enter();
    let (started_in_teardown, cancelled) = with(|ex| {
        // A thread that never started only drops its closure: past its own code, its
        // destructors may use the primitives (`Execution::teardown_point`).
        let slot = &mut ex.threads[index];
        slot.cancelled |= ex.teardown;
        (ex.teardown, slot.cancelled)
    });
    let outcome = if started_in_teardown {
        // The closure's destructors are user code and may panic: they run here, on the
        // thread's own stack and exactly once, rather than inside the coroutine library.
        panic::catch_unwind(AssertUnwindSafe(move || match body {
            ThreadBody::Main(_) => {}
            ThreadBody::Spawned(spawned) => spawned.discard(),
        }))
        .map(|()| false)
    } else {
        panic::catch_unwind(AssertUnwindSafe(move || match body {
            ThreadBody::Main(main) => main(),
            ThreadBody::Spawned(spawned) => spawned.run(cancelled),
        }))
        .map(|()| true)
    };
    let returned = match outcome {
        Ok(returned) => returned,
        Err(payload) => {
            with(|ex| ex.threads[index].at_root = true);
            thread_panicked(index, payload, "");
            false
        }
    };
    // One visit to the runtime for what the thread's root marks, clears and takes once its
    // closure has ended (each was a visit of its own). A thread without thread-locals, outside
    // the end of a passing execution, has nothing left to drop: it finishes in the same visit.
    let (locals, ending, finished) = with(|ex| {
        let ending = ex.ending;
        let slot = &mut ex.threads[index];
        slot.at_root = true;
        slot.panicked = false;
        slot.panic_in_flight = None;
        slot.locals_destroyed = true;
        let locals = std::mem::take(&mut slot.locals);
        let finished = locals.is_empty() && !ending;
        if finished {
            finish_thread(ex, index, returned);
        }
        (locals, ending, finished)
    });
    if finished {
        return;
    }
    // The destructors of thread-locals may take steps, during which the execution may come
    // to its end: then whether it is ending is asked again.
    let ending = if locals.is_empty() {
        ending
    } else {
        drop_thread_locals_taken(index, locals);
        with(|ex| ex.ending)
    };
    // A thread that finishes while the end of a passing execution drops what is left drops
    // what it kept then too, in its turn (`kept.rs`).
    if ending {
        drop_kept_values(index);
    }
    with(|ex| {
        finish_thread(ex, index, returned);
    });
}

/// Marks thread `index`, whose root has nothing left to do, as finished (`returned`: its
/// closure returned), in an execution being torn down or not, ending or not.
#[inline(always)]
fn finish_thread(ex: &mut Execution, index: usize, returned: bool) {
    let slot = &mut ex.threads[index];
    // A spawned thread's closure catches its own panic for `join`: it has no value then.
    slot.returned = returned && slot.unobserved_panic.is_none();
    // A thread torn down after a failure stays unfinished: the report shows what it was about
    // to do. One unwound at the end of a passing execution has finished.
    let finished = !ex.teardown || ex.ending;
    ex.set_finished(index, finished);
}

/// A spawned thread's closure panicked with `payload`. Outside teardown the panic is kept for
/// the thread's `JoinHandle` (`Ok`, to be stored there) and recorded as unobserved until a
/// `join` takes it; the teardown's own unwind and panics while tearing down are given back
/// (`Err`) to be raised again, so the thread's root handles them as before.
pub(crate) fn spawned_thread_panicked(
    payload: Box<dyn Any + Send>,
) -> Result<Box<dyn Any + Send>, Box<dyn Any + Send>> {
    let payload = match payload.downcast::<RecordedPanic>() {
        // Recorded by the task itself before it woke its joiner (`future::spawn`).
        Ok(recorded) => return Ok(recorded.0),
        Err(payload) => payload,
    };
    // A panic that ends while a task left at the end is unwound (`ending.rs`) is the
    // program's, as in a running execution.
    if payload.is::<TeardownUnwind>() || with(|ex| ex.teardown && !ex.ending) {
        return Err(payload);
    }
    let (message, site) = panics::describe(payload.as_ref());
    let static_message = payload.downcast_ref::<&'static str>().copied();
    with(|ex| {
        // The panic is the execution's failure already (`Limits::panic_stops_execution`).
        if ex.recording.limits.panic_stops_execution {
            return;
        }
        let me = ex.current;
        // Under loom's and shuttle's rule the panic fails the execution now that its thread
        // has unwound, whoever would have joined it. While the tasks left at the end are
        // dropped nobody joins any more, and the end goes on dropping the others (shuttle's
        // too), so the panic is left to fail it as an unobserved one.
        if ex.recording.limits.spawned_panics_fail && !ex.ending {
            if ex.recording.failure.is_none() {
                ex.record_failure(FailureInfo {
                    site,
                    static_message,
                    ..FailureInfo::new(FailureKind::Panic, message, Some(me))
                });
            }
            return;
        }
        let order = ex.panic_order(me);
        ex.threads[me].unobserved_panic = Some(Box::new(UnobservedPanic {
            order,
            message,
            site,
            static_message,
        }));
    });
    Ok(payload)
}

/// The payload of a task's panic that the task recorded itself ([`spawned_thread_panicked`])
/// before it woke the thread awaiting its `JoinHandle`, which may then have observed it; the
/// task's root takes the payload inside as recorded, and drops it there as the task, as any.
pub(crate) struct RecordedPanic(pub(crate) Box<dyn Any + Send>);

/// A `join` of thread `index` returned its panic to the program.
pub(crate) fn panic_observed(index: usize) {
    with(|ex| {
        let slot = &mut ex.threads[index];
        slot.joined_panic = slot.unobserved_panic.take();
    });
}

/// Thread `index` ended by a panic with `payload` (`context` prefixes the message): the
/// execution's failure, unless the execution had already failed and this is the teardown's
/// unwind or a panic raised while tearing down, which only becomes a warning.
fn thread_panicked(index: usize, payload: Box<dyn Any + Send>, context: &str) {
    let teardown_unwind = payload.is::<TeardownUnwind>();
    let (message, site) = panics::describe(payload.as_ref());
    let static_message = payload
        .downcast_ref::<&'static str>()
        .copied()
        .filter(|_| context.is_empty());
    drop_quietly(payload);
    with(|ex| {
        if teardown_unwind {
            return;
        }
        // The thread was unwinding this panic when the execution stopped, and teardown let the
        // unwind finish: the panic is the program's, and no `join` observed it.
        let order = ex.panic_order(index);
        let slot = &mut ex.threads[index];
        let at_stop = ex.teardown && !ex.ending && slot.unwinding_at_stop && context.is_empty();
        // While the end of a passing execution drops what is left, the panic (of a thread's
        // root: a payload's or a thread-local's destructor, a kept value's) is kept like a
        // task's panic, so the earliest panic of the end is the one reported.
        if at_stop || ex.ending {
            slot.unwinding_at_stop = false;
            if slot.unobserved_panic.is_none() {
                slot.unobserved_panic = Some(Box::new(UnobservedPanic {
                    order,
                    message: format!("{context}{message}"),
                    site,
                    static_message,
                }));
            } else {
                ex.recording.warnings.push(format!(
                    "thread {index} panicked again after a panic no join observed: \
                     {context}{message}"
                ));
            }
            return;
        }
        if ex.teardown && !ex.ending {
            ex.recording.warnings.push(format!(
                "while the failed execution was torn down, thread {index} panicked: \
                 {context}{message}"
            ));
            return;
        }
        ex.current = index;
        if ex.recording.failure.is_none() {
            ex.record_failure(FailureInfo {
                site,
                static_message,
                ..FailureInfo::new(
                    FailureKind::Panic,
                    format!("{context}{message}"),
                    Some(index),
                )
            });
        }
    });
}

/// The coroutines of one execution, by thread. Teardown empties it; if the scheduler loop
/// itself panics, the remaining coroutines are abandoned (leaked), never unwound by the
/// coroutine library, whose forced unwind would run user destructors outside the runtime.
///
/// The table keeps its length from execution to execution, every entry `None` between them:
/// grown again from empty, it cost every thread a `resize_with` in `adopt`, and every
/// execution a clear (about 60 instructions per thread and execution together, callgrind).
struct Coroutines(Vec<Option<ThreadCoroutine>>);

impl Coroutines {
    /// The table, every entry emptied, for the next execution's scheduler loop. Teardown took
    /// every coroutine; one still there is abandoned, as `drop` would.
    fn into_buffer(self) -> Vec<Option<ThreadCoroutine>> {
        // Not dropped: the empty vector left behind owns nothing, and its drop was a call per
        // execution.
        let mut table = std::mem::ManuallyDrop::new(self);
        let mut buffer = std::mem::take(&mut table.0);
        abandon_coroutines(&mut buffer);
        buffer
    }
}

impl Drop for Coroutines {
    fn drop(&mut self) {
        // Taken by `into_buffer`, which every execution that ends calls.
        abandon_coroutines(&mut self.0);
    }
}

/// Leaks the coroutines left in `table`, leaving every entry `None`.
fn abandon_coroutines(table: &mut [Option<ThreadCoroutine>]) {
    for slot in table.iter_mut() {
        if let Some(coroutine) = slot.take() {
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
) -> Finished {
    run_stoppable(main, site, schedule, limits, None)
}

/// Runs one execution of `main` under `schedule`, which `stop` ends at its next scheduling
/// point once it is stopped (`stop_signal.rs`).
pub(crate) fn run_stoppable(
    main: &(dyn Fn() + Sync),
    site: Site,
    schedule: Box<dyn Schedule + Send>,
    limits: Limits,
    stop: Option<&StopHandle>,
) -> Finished {
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
    let mut execution = Execution::new(schedule, limits, stop.cloned());
    execution.panicking_at_start = std::thread::panicking();
    let _live = live::start(execution.tag, limits.exploration);
    match execution.stack_for(None, None, site) {
        Ok(stack) => {
            execution.add_thread(ThreadBody::Main(main), None, site, stack);
        }
        Err(error) => {
            execution.record_failure(FailureInfo::new(
                FailureKind::Panic,
                error.to_string(),
                None,
            ));
            execution.complete_recording();
            return Finished::new(execution);
        }
    }
    let foreign = execution.foreign.clone();
    foreign.start(execution.tag);
    execution.outside_uses_at_start = foreign::outside_uses();
    let watch = watchdog::Watch::start(limits.watchdog);
    let mut coroutines = Coroutines(std::mem::take(&mut execution.coroutine_buffer));
    let mut guards = guard::Guards::with_buffer(std::mem::take(&mut execution.guard_buffer));
    let raw = Box::into_raw(execution);
    let entered = Entered::new(raw);

    let mut next = with(|ex| decide(ex, false));
    loop {
        while let Some(chosen) = next {
            // One lookup when the thread's coroutine is there (every switch but a new
            // thread's first): a test followed by a second indexing cost a bounds check and an
            // `Option` test more per switch.
            let coroutine = match coroutines.0.get_mut(chosen) {
                Some(Some(coroutine)) => coroutine,
                _ => {
                    with(|ex| adopt(ex, &mut coroutines.0, &mut guards));
                    coroutines.0[chosen]
                        .as_mut()
                        .expect("the scheduler chose a thread without a coroutine")
                }
            };
            watch.beat();
            next = match coroutine.resume(Resume::Run) {
                // The thread announced an operation and the decision chose another thread (or
                // ended the execution).
                CoroutineResult::Yield(next) => next,
                // The thread finished: decide again without it.
                CoroutineResult::Return(()) => {
                    let done = coroutines.0[chosen].take();
                    with(|ex| {
                        if let Some(done) = done {
                            ex.stacks.give_back(done.into_stack());
                        }
                        decide(ex, false)
                    })
                }
            };
        }
        // The tasks left at the end of a passing execution in the middle of a poll are unwound
        // one at a time, whenever the cancelled ones cannot go on (`ending.rs`).
        let Some(unwound) = with(|ex| ex.unwind_next.take()) else {
            break;
        };
        with(|ex| adopt(ex, &mut coroutines.0, &mut guards));
        unwind_at_end(&mut coroutines.0, unwound);
        next = with(|ex| decide(ex, false));
    }
    with(|ex| {
        if !ex.spawned.is_empty() {
            adopt(ex, &mut coroutines.0, &mut guards);
        }
    });
    // A foreign wake that no deadlock check saw still explains what the execution did.
    with(|ex| {
        if ex.recording.failure.is_none() && !ex.recording.stopped {
            if let Some(message) = ex.foreign.explanation(ex.tag) {
                ex.recording.outside_control = true;
                ex.current = 0;
                ex.fail(FailureKind::Nondeterminism, message);
            }
        }
    });

    // A stopped execution ends as a process does, without unwinding anything; after it,
    // teardown finds every coroutine gone and the steps below have nothing left to drop.
    if with(|ex| ex.recording.stopped) {
        abandon_at_stop(&mut coroutines.0);
    }
    teardown(&mut coroutines.0);
    // One visit for what follows teardown in every execution (each was a visit of its own).
    // Dropping a waker can drop a future (and its timers) with it, which needs the runtime, so
    // the timers are taken here and dropped below, while the execution is still current but
    // not borrowed.
    let (timers, nothing_kept) = with(|ex| {
        // After teardown, which records the panics that were unwinding when the execution
        // stopped as unobserved too.
        ex.unobserved_panic();
        // A coroutine spawned too late to run must never be dropped by the coroutine library,
        // whose forced unwind would run user code outside the execution.
        ex.leak_late_spawns();
        ex.on_scheduler_stack = true;
        let timers = ex.take_timers();
        // Without timers to drop no user code runs between this look at what is kept and the
        // passes below, which would each find nothing: they are skipped.
        let nothing_kept = timers.is_empty() && ex.keeps_nothing();
        if nothing_kept {
            // What `drop_lazy_statics` does first, which the end skips below.
            ex.current = 0;
        }
        (timers, nothing_kept)
    });
    let guard_buffer = guards.into_buffer();
    drop(watch);
    foreign.stop();
    drop_quietly(timers);
    if !nothing_kept {
        drop_kept_values_after_the_end();
        drop_lazy_statics();
        drop_late_thread_locals();
        // What the destructors of statics and late thread-locals kept: dropped here, inside
        // the execution, and whatever they keep in turn is leaked, never dropped with the
        // slots outside it.
        drop_kept_values_after_the_end();
        // A destructor above that spawned left a coroutine that can never run; like those
        // spawned too late above, it is leaked rather than handed to the next execution.
        with(Execution::leak_late_spawns);
    }
    drop(entered);
    // SAFETY: `raw` came from `Box::into_raw` above and nothing else owns it; the pointer in
    // `CURRENT` that aliased it has just been cleared.
    let mut execution = unsafe { Box::from_raw(raw) };
    // The buffers wait for the next execution on this OS thread; the handle must not.
    execution.stop_handle = None;
    put_back(&mut execution.coroutine_buffer, coroutines.into_buffer());
    put_back(&mut execution.guard_buffer, guard_buffer);
    execution.complete_recording();
    execution.recording.forget_after_abandonment();
    Finished::new(execution)
}

/// Puts `buffer` back into `slot`, which holds the empty vector `mem::take` left there:
/// assigning would drop that one, which owns nothing, at the cost of a call per execution.
fn put_back<T>(slot: &mut Vec<T>, buffer: Vec<T>) {
    let placeholder = std::mem::replace(slot, buffer);
    debug_assert_eq!(placeholder.capacity(), 0);
    std::mem::forget(placeholder);
}

/// Takes the coroutines of threads spawned since the last call, and publishes their guard
/// pages to the stack overflow handler (`guard.rs`).
#[inline]
fn adopt(
    ex: &mut Execution,
    coroutines: &mut Vec<Option<ThreadCoroutine>>,
    guards: &mut guard::Guards,
) {
    // Popped rather than drained (a drain's drop costs a few dozen instructions per call, and
    // there is a call per spawned thread). The order within one call does not matter: the
    // coroutines go to their threads' places, and the stacks of threads spawned between two
    // adoptions are distinct, so the fault handler's newest-first search of the guards finds
    // the same guard whatever their order among themselves.
    while let Some((index, coroutine, guarded)) = ex.spawned.pop() {
        if coroutines.len() <= index {
            coroutines.resize_with(index + 1, || None);
        }
        coroutines[index] = Some(coroutine);
        guards.push(guarded);
    }
}
