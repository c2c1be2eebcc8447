//! The vocabulary of visible operations: what a thread is about to do when it reaches the choke
//! point, and the identities of the objects it does it to.
//!
//! These types are what strategies see (through [`crate::strategy::View`]) and what reports
//! print, so they are plain `Copy` data with no references into the runtime.

use std::fmt;
use std::panic::Location;

/// A source location captured with `#[track_caller]`.
pub type Site = &'static Location<'static>;

/// The kind of a visible operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OpKind {
    /// The first step of a thread, before it runs any code: lets a strategy preempt a thread
    /// before its first access.
    Start,
    /// Spawning a thread.
    Spawn,
    /// Waiting for a thread to finish.
    Join,
    /// `thread::yield_now` or `hint::spin_loop`.
    Yield,
    /// `thread::park` (blocks until the thread's token is available).
    Park,
    /// `Thread::unpark`.
    Unpark,
    /// `Mutex::lock` (blocks while another thread holds the mutex).
    Lock,
    /// `Mutex::try_lock` (never blocks).
    TryLock,
    /// Releasing a mutex (dropping its guard).
    Unlock,
    /// `RwLock::read` (blocks while a writer holds the lock).
    ReadLock,
    /// `RwLock::write` (blocks while anyone holds the lock).
    WriteLock,
    /// `RwLock::try_read` / `try_write` (never blocks).
    TryRwLock,
    /// Releasing a read or write lock.
    RwUnlock,
    /// `Condvar::wait*`: releases the mutex and starts waiting.
    Wait,
    /// Waking from `Condvar::wait*` and re-acquiring the mutex (blocks until notified, unless
    /// the wait has a timeout, and until the mutex is free).
    Wake,
    /// `Condvar::notify_one`.
    NotifyOne,
    /// `Condvar::notify_all`.
    NotifyAll,
    /// Arriving at a `Barrier`.
    BarrierArrive,
    /// Leaving a `Barrier` (blocks until every party has arrived).
    BarrierLeave,
    /// Entering `Once::call_once` or `OnceLock` initialisation (blocks while another thread
    /// runs the initialiser).
    OnceEnter,
    /// Finishing a `Once` initialiser.
    OnceComplete,
    /// An atomic load.
    AtomicLoad,
    /// An atomic store.
    AtomicStore,
    /// An atomic read-modify-write (swap, compare-exchange, fetch-op).
    AtomicRmw,
    /// An atomic fence.
    Fence,
    /// A read of a tracked shared variable.
    Read,
    /// A write of a tracked shared variable.
    Write,
    /// A read-modify-write of a tracked shared variable.
    Update,
    /// Sending on a channel (blocks while a bounded channel is full).
    Send,
    /// Waiting for a rendezvous channel's receiver to take the message.
    SendWait,
    /// Receiving from a channel (blocks while the channel is empty and has senders).
    Recv,
    /// A non-blocking query or state change: `try_recv`, `try_send`, dropping a channel
    /// endpoint, `JoinHandle::is_finished`, `Once::is_completed`.
    Poll,
    /// `thread::sleep` (blocks until the virtual clock reaches the sleep's deadline).
    Sleep,
}

impl OpKind {
    /// The access kind of the operation, for dependence and race reasoning.
    pub fn access(self) -> Access {
        use OpKind::*;
        match self {
            AtomicLoad | Read => Access::Read,
            AtomicStore | Write => Access::Write,
            AtomicRmw | Update => Access::ReadWrite,
            Lock | TryLock | Unlock | ReadLock | WriteLock | TryRwLock | RwUnlock | Wait | Wake
            | NotifyOne | NotifyAll | BarrierArrive | BarrierLeave | OnceEnter | OnceComplete
            | Send | SendWait | Recv | Poll | Fence => Access::Sync,
            Start | Spawn | Join | Yield | Park | Unpark | Sleep => Access::Thread,
        }
    }

    /// True for the steps that acquire a lock: `Mutex::lock`, `RwLock::read`/`write`, and a
    /// woken `Condvar` waiter taking its mutex back (the steps that can close a deadlock cycle;
    /// `try_lock` never waits, so it cannot).
    pub const fn is_lock_acquisition(self) -> bool {
        matches!(
            self,
            OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock | OpKind::Wake
        )
    }

    /// True for reads and writes of data (atomics and `cell::Var`): the steps that change no
    /// other thread's state, so the runtime may skip the scheduler for them (see
    /// [`Schedule::tracks`](crate::strategy::Schedule::tracks)).
    ///
    /// One bit test of a constant: the `matches!` it replaces compiled to a range test and a
    /// byte table, seven instructions at each of the three uses of every step.
    #[inline(always)]
    pub const fn is_data_access(self) -> bool {
        const DATA_ACCESSES: u64 = 1 << OpKind::AtomicLoad as u64
            | 1 << OpKind::AtomicStore as u64
            | 1 << OpKind::AtomicRmw as u64
            | 1 << OpKind::Read as u64
            | 1 << OpKind::Write as u64
            | 1 << OpKind::Update as u64;
        DATA_ACCESSES >> self as u64 & 1 != 0
    }

    /// True for operations that may have to wait for another thread.
    pub const fn can_block(self) -> bool {
        matches!(
            self,
            OpKind::Join
                | OpKind::Park
                | OpKind::Lock
                | OpKind::ReadLock
                | OpKind::WriteLock
                | OpKind::Wake
                | OpKind::BarrierLeave
                | OpKind::OnceEnter
                | OpKind::Send
                | OpKind::SendWait
                | OpKind::Recv
                | OpKind::Sleep
        )
    }

    /// The name reports give an operation of this kind with argument `arg`: [`OpKind::name`],
    /// but a `OnceEnter` that waits for the initialiser (`Once::wait`) is a `once wait`, the
    /// release of `RwLockWriteGuard::downgrade` a `downgrade`, a task's park after
    /// `future::yield_now` a `yield`, and an atomic access or fence carries its ordering
    /// (`load Acquire`), a failed compare-exchange its failure ordering (`failed cas Relaxed`).
    pub fn name_with_arg(self, arg: u32) -> &'static str {
        /// An atomic access's or fence's name with its ordering (`ordering_code`), so that a
        /// report shows which `Relaxed` access a missing `Release` or `Acquire` belongs to.
        const ORDERED: [[&str; 5]; 5] = [
            [
                "load Relaxed",
                "load Release",
                "load Acquire",
                "load AcqRel",
                "load SeqCst",
            ],
            [
                "store Relaxed",
                "store Release",
                "store Acquire",
                "store AcqRel",
                "store SeqCst",
            ],
            [
                "rmw Relaxed",
                "rmw Release",
                "rmw Acquire",
                "rmw AcqRel",
                "rmw SeqCst",
            ],
            [
                "fence Relaxed",
                "fence Release",
                "fence Acquire",
                "fence AcqRel",
                "fence SeqCst",
            ],
            [
                "failed cas Relaxed",
                "failed cas Release",
                "failed cas Acquire",
                "failed cas AcqRel",
                "failed cas SeqCst",
            ],
        ];
        let ordered = |row: usize| ORDERED[row].get(arg as usize).copied();
        let name = match (self, arg) {
            (OpKind::OnceEnter, ONCE_WAIT | ONCE_WAIT_FORCE) => Some("once wait"),
            (OpKind::RwUnlock, RW_DOWNGRADE) => Some("downgrade"),
            (OpKind::Park, PARK_AFTER_YIELD) => Some("yield"),
            (OpKind::AtomicLoad, _) => ordered(0),
            (OpKind::AtomicStore, _) => ordered(1),
            (OpKind::AtomicRmw, _) if arg & FAILED_EXCHANGE != 0 => ORDERED[4]
                .get(ordering_code(effective_ordering(arg)) as usize)
                .copied(),
            (OpKind::AtomicRmw, _) => ordered(2),
            (OpKind::Fence, _) => ordered(3),
            _ => None,
        };
        name.unwrap_or_else(|| self.name())
    }

    /// A short lower-case name for reports.
    pub fn name(self) -> &'static str {
        use OpKind::*;
        match self {
            Start => "start",
            Spawn => "spawn",
            Join => "join",
            Yield => "yield",
            Park => "park",
            Unpark => "unpark",
            Lock => "lock",
            TryLock => "try_lock",
            Unlock => "unlock",
            ReadLock => "read-lock",
            WriteLock => "write-lock",
            TryRwLock => "try-lock",
            RwUnlock => "unlock",
            Wait => "wait",
            Wake => "wake",
            NotifyOne => "notify_one",
            NotifyAll => "notify_all",
            BarrierArrive => "barrier arrive",
            BarrierLeave => "barrier leave",
            OnceEnter => "once enter",
            OnceComplete => "once complete",
            AtomicLoad => "load",
            AtomicStore => "store",
            AtomicRmw => "rmw",
            Fence => "fence",
            Read => "read",
            Write => "write",
            Update => "update",
            Send => "send",
            SendWait => "send (rendezvous)",
            Recv => "recv",
            Poll => "poll",
            Sleep => "sleep",
        }
    }
}

// Every kind has a bit in a `u64` (`OpKind::is_data_access`).
const _: () = assert!((OpKind::Sleep as u64) < 64);

/// How an operation touches its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Reads the object's value.
    Read,
    /// Writes the object's value.
    Write,
    /// Reads and writes the object's value in one step.
    ReadWrite,
    /// A synchronisation operation (lock, condition variable, channel, barrier, once).
    Sync,
    /// A thread-management operation (spawn, join, yield, park).
    Thread,
}

/// The kind of a tracked object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectKind {
    /// A `sync::Mutex`.
    Mutex,
    /// A `sync::RwLock`.
    RwLock,
    /// A `sync::Condvar`.
    Condvar,
    /// A `sync::Barrier`.
    Barrier,
    /// A `sync::Once` or `sync::OnceLock`.
    Once,
    /// An `mpsc` channel.
    Channel,
    /// An atomic.
    Atomic,
    /// A `cell::Var` or `cell::UnsafeCell`.
    Var,
}

impl ObjectKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ObjectKind::Mutex => "Mutex",
            ObjectKind::RwLock => "RwLock",
            ObjectKind::Condvar => "Condvar",
            ObjectKind::Barrier => "Barrier",
            ObjectKind::Once => "Once",
            ObjectKind::Channel => "channel",
            ObjectKind::Atomic => "atomic",
            ObjectKind::Var => "Var",
        }
    }

    /// The type name reports give an object of this kind when its primitive chose none.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            ObjectKind::Channel => "Channel",
            ObjectKind::Atomic => "Atomic",
            kind => kind.name(),
        }
    }
}

/// The identity of a tracked object, stable across executions of the same program: its
/// creation site and the number of objects the same site created before it in this execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectId {
    /// What the object is.
    pub kind: ObjectKind,
    /// Where it was created (`new` was called).
    pub site: Site,
    /// How many objects this site created earlier in the same execution.
    pub instance: u32,
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}#{} ({})",
            self.kind.name(),
            self.instance,
            ShortSite(self.site)
        )
    }
}

/// A path short enough for a report's table that still tells the file apart. Cargo names the
/// files of the crates in the user's workspace relative to it, and those are cut to their last
/// two components (`tests/bank.rs`, `mutex/spin.rs`). The files of every other crate (a path
/// dependency outside the workspace, a registry crate) come with an absolute path; their last
/// two components read like the user's own files (`src/leak.rs`), so they keep the crate's
/// directory, the component before the crate's `src`, `tests`, `examples` or `benches`
/// (`loom-compat/src/leak.rs`, `spin-0.9.8/src/mutex/spin.rs`).
pub(crate) fn short_path(path: &str) -> &str {
    let separators = ['/', '\\'];
    let absolute = path.starts_with(separators) || path.get(1..2) == Some(":");
    if absolute {
        let mut components: Vec<(usize, &str)> = Vec::new();
        let mut start = 0;
        for (i, c) in path.char_indices() {
            if separators.contains(&c) {
                components.push((start, &path[start..i]));
                start = i + 1;
            }
        }
        let crate_root = components
            .iter()
            .rposition(|&(_, name)| matches!(name, "src" | "tests" | "examples" | "benches"));
        if let Some(root) = crate_root.filter(|&root| root > 1) {
            return &path[components[root - 1].0..];
        }
    }
    let mut cut = path.len();
    for _ in 0..2 {
        match path[..cut].rfind(separators) {
            Some(i) => cut = i,
            None => return path,
        }
    }
    &path[cut + 1..]
}

/// Formats a site as `file:line:column` with a shortened path.
pub(crate) struct ShortSite(pub Site);

impl fmt::Display for ShortSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            short_path(self.0.file()),
            self.0.line(),
            self.0.column()
        )
    }
}

/// The argument of an atomic access or fence with ordering `order` (`Op::arg`).
pub(crate) const fn ordering_code(order: std::sync::atomic::Ordering) -> u32 {
    use std::sync::atomic::Ordering::*;
    match order {
        Relaxed => 0,
        Release => 1,
        Acquire => 2,
        AcqRel => 3,
        _ => ORDERING_SEQ_CST,
    }
}

/// The argument of a `SeqCst` atomic access or fence.
pub(crate) const ORDERING_SEQ_CST: u32 = 4;

/// Set in the argument of a compare-exchange's step when the exchange failed
/// (`Execution::describe_failed_exchange`), with the code of its failure ordering above
/// [`FAILURE_ORDERING_SHIFT`]. The low bits keep the ordering it announced, which the searches
/// and the memory model's `SeqCst` order go by, as they did before the outcome was known.
pub(crate) const FAILED_EXCHANGE: u32 = 8;
const FAILURE_ORDERING_SHIFT: u32 = 4;

/// The argument of a compare-exchange's step that announced `announced` (an `ordering_code`)
/// and failed, reading with `failure`.
pub(crate) const fn failed_exchange_code(
    announced: u32,
    failure: std::sync::atomic::Ordering,
) -> u32 {
    (announced & ORDERING_BITS)
        | FAILED_EXCHANGE
        | (ordering_code(failure) << FAILURE_ORDERING_SHIFT)
}

/// The ordering an atomic step's access had, for explanations: the one it announced, but a
/// failed compare-exchange's failure ordering, since it only loaded.
pub(crate) const fn effective_ordering(arg: u32) -> std::sync::atomic::Ordering {
    if arg & FAILED_EXCHANGE != 0 {
        ordering_of_code(arg >> FAILURE_ORDERING_SHIFT)
    } else {
        ordering_of_code(arg)
    }
}

/// The bits of an atomic step's argument that hold the ordering it announced.
const ORDERING_BITS: u32 = 7;

/// The ordering an atomic access's argument names: the inverse of [`ordering_code`].
pub(crate) const fn ordering_of_code(code: u32) -> std::sync::atomic::Ordering {
    use std::sync::atomic::Ordering::*;
    match code & ORDERING_BITS {
        0 => Relaxed,
        1 => Release,
        2 => Acquire,
        3 => AcqRel,
        _ => SeqCst,
    }
}

/// Index of an object in the execution's object table.
pub(crate) type ObjIdx = u32;

/// Marker for operations without an object.
pub(crate) const NO_OBJECT: ObjIdx = u32::MAX;

/// A pending operation as the runtime stores it: compact and `Copy`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    pub kind: OpKind,
    pub object: ObjIdx,
    /// Kind-specific argument: the target thread for `Join` and `Unpark`, the mutex for `Wake`,
    /// the ordering for atomic accesses and fences ([`ordering_code`]).
    pub arg: u32,
    /// The operation has a deadline (the thread slot's `deadline`): once the virtual clock
    /// reaches it, the operation may complete without its wake-up condition (a timeout).
    pub timed: bool,
    /// How deciding which threads are enabled tests the operation (see [`Gate`]). Computed
    /// once when the operation is built (usually at compile time), so deciding which threads
    /// are enabled only inspects the few operations that can block, and those mostly by one
    /// load.
    pub gate: Gate,
    /// The operation is a yield ([`counts_as_yield`]), computed with the gate: a step tests it
    /// with one load, where testing the kind and, for a park, the argument cost about five
    /// instructions per step.
    pub yields: bool,
}

/// What a pending operation waits for, in the form the enabledness pass tests first: most
/// blocking operations of lock-heavy programs wait for a lock or for a thread to finish, and
/// are answered from the lock's word (`ObjectEntry::lock`) or the thread's flag without a
/// dispatch on the operation's kind or a look at the object's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// The operation cannot block: the thread is enabled.
    Free,
    /// `Mutex::lock` or `RwLock::write`: enabled while nobody holds the lock.
    Exclusive,
    /// `RwLock::read`: enabled while no writer holds the lock, with the reader-preference
    /// choice of `Execution::read_lock_enabled` where readers hold it.
    Shared,
    /// `join`: enabled once the thread `arg` has finished.
    Join,
    /// A woken `Condvar` waiter taking its mutex (`arg`) back, without a timeout: enabled
    /// while the mutex is free, once the thread is notified. Under `Config::spurious_wakeups`
    /// the wait may end by itself, and the `Condvar` announces it with `Other` instead.
    Wake,
    /// Anything else that can block, or any timed operation: `Execution::op_enabled` decides.
    Other,
}

impl Gate {
    /// The gate of operation `kind`, `timed` or not: computed where the operation is built,
    /// which folds it away for a constant kind (every `op_on!`).
    #[inline(always)]
    pub const fn of(kind: OpKind, timed: bool) -> Gate {
        let gate = Gate::untimed(kind);
        if timed && !matches!(gate, Gate::Free) {
            Gate::Other
        } else {
            gate
        }
    }

    /// Whether the operation asks for a lock (`Mutex::lock`, `RwLock::read` or `write`): only
    /// such a request can wait for a lock its own thread holds.
    #[inline(always)]
    pub const fn asks_for_lock(self) -> bool {
        matches!(self, Gate::Exclusive | Gate::Shared)
    }

    const fn untimed(kind: OpKind) -> Gate {
        if !kind.can_block() {
            return Gate::Free;
        }
        match kind {
            OpKind::Lock | OpKind::WriteLock => Gate::Exclusive,
            OpKind::ReadLock => Gate::Shared,
            OpKind::Join => Gate::Join,
            OpKind::Wake => Gate::Wake,
            _ => Gate::Other,
        }
    }
}

/// The argument of a park the program itself makes (`thread::park`, `park_timeout`), which
/// may wake spuriously under `Config::spurious_park_wakeups`; the parks of tasks between polls
/// and of `block_on` carry 0: a spurious wake-up there would only poll a future again.
pub(crate) const PARK_OF_THE_THREAD: u32 = 1;
/// The argument of a task's park between polls that ends a `future::yield_now`: the task woke
/// itself and returned `Pending`, so the park finds its token set and only lets the others run
/// first. It is the yield's one scheduling point, and the strategies' yield rules count it as
/// a yield ([`counts_as_yield`]); a separate yield step before it, as `thread::yield_now`
/// takes, would be a second point at which nothing another thread can see changes.
pub(crate) const PARK_AFTER_YIELD: u32 = 2;

/// Whether a step of `kind` with argument `arg` is a yield for the strategies' yield rules and
/// the weak memory model (a `yield_now`, a sleep, or a task's park after
/// `future::yield_now`, [`PARK_AFTER_YIELD`]); a wait that ends by its timeout counts too,
/// which the thread's slot says, not the operation.
#[inline(always)]
pub(crate) const fn counts_as_yield(kind: OpKind, arg: u32) -> bool {
    matches!(kind, OpKind::Yield | OpKind::Sleep)
        || (matches!(kind, OpKind::Park) && arg == PARK_AFTER_YIELD)
}

/// The argument of a `OnceEnter` that waits for an initialiser to complete instead of entering
/// to run one (`Once::wait`): it can go on once one completed, or once one panicked and none is
/// running. 0, entering, goes on whenever no initialiser runs.
pub(crate) const ONCE_WAIT: u32 = 1;
/// The argument of the `RwUnlock` of `RwLockWriteGuard::downgrade`, which takes the lock for
/// reading in the same step.
pub(crate) const RW_DOWNGRADE: u32 = 1;
/// The argument of a `OnceEnter` that waits for an initialiser to complete whatever panicked
/// before (`Once::wait_force`, `OnceLock::wait`).
pub(crate) const ONCE_WAIT_FORCE: u32 = 2;

impl Op {
    /// The name reports give the operation ([`OpKind::name_with_arg`]).
    pub fn name(self) -> &'static str {
        self.kind.name_with_arg(self.arg)
    }

    #[inline(always)]
    pub const fn new(kind: OpKind, object: ObjIdx) -> Op {
        Op::with(kind, object, 0, false)
    }

    #[inline(always)]
    pub const fn with(kind: OpKind, object: ObjIdx, arg: u32, timed: bool) -> Op {
        Op {
            kind,
            object,
            arg,
            timed,
            gate: Gate::of(kind, timed),
            yields: counts_as_yield(kind, arg),
        }
    }

    /// Whether the operation may have to wait for another thread.
    #[inline(always)]
    pub fn blocking(self) -> bool {
        self.gate != Gate::Free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_path_keeps_two_components() {
        assert_eq!(short_path("a/b/c/d.rs"), "c/d.rs");
        assert_eq!(short_path("d.rs"), "d.rs");
        assert_eq!(short_path("c/d.rs"), "c/d.rs");
        assert_eq!(short_path("src/mutex/spin.rs"), "mutex/spin.rs");
    }

    #[test]
    fn short_path_keeps_the_crate_of_a_file_outside_the_workspace() {
        assert_eq!(
            short_path("/work/main/crates/loom-compat/src/leak.rs"),
            "loom-compat/src/leak.rs"
        );
        assert_eq!(
            short_path(
                "/root/.cargo/registry/src/index.crates.io-1949/spin-0.9.8/src/mutex/spin.rs"
            ),
            "spin-0.9.8/src/mutex/spin.rs"
        );
        assert_eq!(
            short_path("/tmp/t/tests/common/mod.rs"),
            "t/tests/common/mod.rs"
        );
        assert_eq!(
            short_path("C:\\dev\\app\\src\\main.rs"),
            "app\\src\\main.rs"
        );
        assert_eq!(short_path("/no/crate/here.rs"), "crate/here.rs");
        assert_eq!(short_path("/src/x.rs"), "src/x.rs");
    }
}
