//! Threads under the controlled scheduler, shaped like `std::thread`.
//!
//! Every thread is a coroutine of the current execution; `spawn`, `join`, `yield_now`,
//! `sleep`, `park` and `unpark` are scheduling points. Because all threads share one OS
//! thread, `std::thread_local!` would be shared by all of them, and kept from one execution to
//! the next: use [`interleave::thread_local!`](crate::thread_local) instead (a bare
//! `thread_local!` is std's, whatever `thread` module is imported).
//!
//! [`sleep`] and [`park_timeout`] use the execution's virtual clock (see [`crate::time`]): a
//! sleep may end at any scheduling point after it started (how long a thread takes to reach its
//! next step is not bounded), and the clock then jumps to its deadline.

use std::alloc::Layout;
use std::any::Any;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe, Location};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::runtime::op::{Op, OpKind, Site, NO_OBJECT};
use crate::runtime::{self, Execution};

/// The result of joining a thread: `Err` holds the panic payload.
pub type Result<T> = std::thread::Result<T>;

/// std's: the machine's parallelism, a fact about the machine rather than the execution, so a
/// test that sizes its thread pool by it has the same threads in every execution on one machine.
pub use std::thread::available_parallelism;

/// A thread's identifier, unique within one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(usize);

impl ThreadId {
    /// The thread's index: 0 for the main thread, then in spawn order.
    pub fn as_usize(self) -> usize {
        self.0
    }

    /// The identifier of the thread with index `index` (see [`ThreadId::as_usize`]), which the
    /// running execution may not have (yet).
    pub fn from_usize(index: usize) -> ThreadId {
        ThreadId(index)
    }
}

/// The thread's index, as [`ThreadId::as_usize`] (shuttle's `ThreadId` converts this way).
impl From<ThreadId> for usize {
    fn from(id: ThreadId) -> usize {
        id.0
    }
}

/// A handle to a thread.
#[derive(Clone)]
pub struct Thread {
    id: ThreadId,
    name: Option<Arc<str>>,
}

impl Thread {
    /// The thread's identifier.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's name, if it has one (the main thread is called `main`).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Makes the thread's park token available, waking it if it is parked.
    #[track_caller]
    pub fn unpark(&self) {
        self.unpark_at(Location::caller());
    }

    /// [`unpark`](Thread::unpark) recorded at `site`: for a task's waker, which knows the
    /// user's line only from the waking thread's latest step.
    #[track_caller]
    pub(crate) fn unpark_at(&self, site: Site) {
        self.unpark_with(site, |_| {});
    }

    /// Unparks the thread at `site` with `effect` in the same step, run once the step is
    /// decided and before the token is set, and told whether the unpark was a step: a task's
    /// abort sets its flag this way, so the abort is one step that every search orders against
    /// the task's parks (the task reads the flag only as it comes out of a park, see
    /// `future::run_task`).
    #[track_caller]
    pub(crate) fn unpark_with(&self, site: Site, effect: impl FnOnce(bool)) {
        let target = self.id.0;
        // A thread that unparks itself (a task's waker woken while it polls, as
        // `future::yield_now` does) only sets its own token, which other threads only set too:
        // the step commutes with every other thread's, so it is no scheduling point.
        // An unpark that finds the thread finished, or waiting to take its park with its token
        // set, orders nothing either (see `Execution::unpark_orders_nothing`).
        let (unparked_itself, orders_nothing) =
            runtime::with(|ex| (ex.me() == target, ex.unpark_orders_nothing(target)));
        let steps = !unparked_itself && !orders_nothing;
        if steps {
            runtime::switch(
                Op::with(OpKind::Unpark, NO_OBJECT, target as u32, false),
                site,
            );
        }
        effect(steps);
        if unparked_itself {
            runtime::with(|ex| ex.threads[target].park_token = true);
        } else {
            self.unpark_in_this_step();
        }
    }

    /// Unparks the thread as part of the unpark step the running thread has just taken.
    fn unpark_in_this_step(&self) {
        let target = self.id.0;
        runtime::with(|ex| {
            let clock = ex.release_snapshot();
            let slot = &mut ex.threads[target];
            slot.park_token = true;
            slot.unpark_clock.join(&clock);
        });
    }
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thread")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish()
    }
}

fn thread_handle(ex: &Execution, index: usize) -> Thread {
    static MAIN: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
    let name = match (&ex.threads[index].name, index) {
        (None, 0) => Some(MAIN.get_or_init(|| Arc::from("main")).clone()),
        (name, _) => name.clone(),
    };
    Thread {
        id: ThreadId(index),
        name,
    }
}

/// The handle of the running thread.
#[track_caller]
pub fn current() -> Thread {
    runtime::with(|ex| thread_handle(ex, ex.me()))
}

/// The running thread, or `None` outside an interleave execution (and while the runtime itself
/// runs, as it may when a destructor or a logger is called from inside it): for code such as
/// `Drop` implementations and `tracing` layers that run both inside executions and outside
/// them. std has the same function, not yet stable, as `std::thread::try_current`.
///
/// ```
/// assert!(interleave::thread::try_current().is_none());
/// interleave::check(|| {
///     let main = interleave::thread::try_current().expect("inside an execution");
///     assert_eq!(main.name(), Some("main"));
/// });
/// ```
pub fn try_current() -> Option<Thread> {
    runtime::try_with(|ex| thread_handle(ex, ex.me()))
}

/// The number of scheduling points the running execution has passed so far: each was a
/// possible context switch, whether or not another thread ran. It grows with every visible
/// operation of any thread, so it orders the operations of one execution (a timestamp), and
/// the same schedule gives the same numbers.
///
/// # Panics
/// Outside an interleave execution.
pub fn context_switches() -> usize {
    runtime::with(|ex| ex.scheduling_points() as usize)
}

/// The running thread's vector clock, one entry per thread spawned so far in the execution
/// (indexed by [`ThreadId::as_usize`]): entry `i` counts the synchronisation epochs of thread
/// `i` that happen before this point, the happens-before relation interleave's searches use,
/// and is positive exactly when something thread `i` did happens before this point. For tools
/// that check causality, as shuttle's `current::clock`.
///
/// # Panics
/// Outside an interleave execution.
pub fn vector_clock() -> Vec<u32> {
    runtime::with(|ex| {
        let me = ex.me();
        let mut entries = ex.threads[me].clock.to_vec(ex.threads.len());
        // A thread's own epoch starts at 1, so that what it does before its first release is
        // ordered by the clocks; but until it has taken a step past its start it has done
        // nothing, which its own entry says with 0.
        if !ex.stepped_past_start(me) {
            entries[me] = 0;
        }
        entries
    })
}

/// Hands `value` to the execution, which keeps it until the execution ends and then drops it
/// as thread `thread`: for per-thread data that must outlive the thread, because other threads
/// may still look it up after it finished (shuttle's task labels and tags are kept this way).
///
/// At the end of a passing execution each thread drops what it kept in its turn, in thread
/// order, with the detached tasks left over: one that had finished runs again to do so, so
/// the destructors run inside the execution, see their thread as [`current`], and may use
/// every primitive (spawn, lock, wait). After a failed execution they are dropped after
/// teardown, where visible operations do nothing. A destructor that panics is a panic of its
/// thread. Gives `value` back when the execution has no thread `thread`.
///
/// ```
/// /// A label of thread `.0`, which checks that it is dropped as that thread.
/// struct Label(usize);
/// impl Drop for Label {
///     fn drop(&mut self) {
///         assert_eq!(interleave::thread::current().id().as_usize(), self.0);
///     }
/// }
/// interleave::check(|| {
///     let child = interleave::thread::spawn(|| {
///         let me = interleave::thread::current().id();
///         assert!(interleave::thread::keep_until_end(me, Label(me.as_usize())).is_ok());
///     });
///     // The child finishes here, and its label lives on until the end of the execution.
///     child.join().unwrap();
/// });
/// ```
///
/// # Panics
/// Outside an interleave execution.
pub fn keep_until_end<T: 'static>(thread: ThreadId, value: T) -> std::result::Result<(), T> {
    runtime::with(|ex| ex.keep_until_end(thread.0, Box::new(value))).map_err(|value| {
        *value
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("the execution gives back the value it was given"))
    })
}

/// Lets the scheduler run another thread. Strategies lower the priority of a thread that
/// yields repeatedly, so call this in every loop that waits for another thread.
#[inline]
#[track_caller]
pub fn yield_now() {
    runtime::switch(Op::new(OpKind::Yield, NO_OBJECT), Location::caller());
}

/// Whether the running thread is unwinding a panic, like `std::thread::panicking`. Call this
/// one in a destructor of code under test: std's tells whether the OS thread is unwinding, and
/// every thread of an execution runs on one OS thread, so a thread that another thread's
/// unwind interrupted at a scheduling point would see that thread's panic as its own. Outside
/// an execution it is std's answer.
pub fn panicking() -> bool {
    runtime::thread_panicking()
}

/// Blocks the thread until the virtual clock has advanced by `duration` (see [`crate::time`]).
/// The sleep may end at any scheduling point after it started, since how long a thread takes
/// to reach its next step is not bounded; the clock then jumps to the deadline. No wall time
/// passes. Every sleep counts as a yield for the strategies' yield
/// rule, so a loop that waits by sleeping zero time does not starve the thread it waits for.
#[track_caller]
pub fn sleep(duration: Duration) {
    runtime::with(|ex| {
        let deadline = ex.deadline_after(duration);
        ex.set_deadline(deadline);
    });
    runtime::switch(
        Op::with(OpKind::Sleep, NO_OBJECT, 0, true),
        Location::caller(),
    );
}

/// Blocks until the thread's park token is available, then consumes it. Under
/// `Config::spurious_park_wakeups` or `Config::spurious_wakeups` it may also return without
/// the token, as std's may.
#[track_caller]
pub fn park() {
    park_inner(false, Location::caller(), runtime::op::PARK_OF_THE_THREAD);
}

/// Like [`park`], but may also return without the token at any point after it started, the
/// virtual clock then moving to `duration` after the call (see [`crate::time`]). A timeout
/// the clock cannot reach (`Duration::MAX`) never ends the park.
#[track_caller]
pub fn park_timeout(duration: Duration) {
    let timed = runtime::with(|ex| {
        let deadline = ex.reachable_deadline_after(duration);
        if let Some(deadline) = deadline {
            ex.set_deadline(deadline);
        }
        deadline.is_some()
    });
    park_inner(timed, Location::caller(), runtime::op::PARK_OF_THE_THREAD);
}

/// [`yield_now`] at `site`: what an async task's `yield_now().await` does.
#[track_caller]
pub(crate) fn yield_at(site: runtime::op::Site) {
    runtime::switch(Op::new(OpKind::Yield, NO_OBJECT), site);
}

/// [`park`] at `site`: what a task parks with when its future is pending. Returns whether the
/// end of the execution cancelled the thread meanwhile (see `runtime/ending.rs`).
///
/// When the poll that returned `Pending` called `future::yield_now` (which woke the task), the
/// park is the yield: it finds the token set, is announced at the `yield_now` and counts as a
/// yield (`op::PARK_AFTER_YIELD`). Should the token not be set after all (a `block_on` nested
/// in the same poll parked on it), the yield is a step of its own before the park.
#[track_caller]
pub(crate) fn park_at(site: runtime::op::Site) -> bool {
    let (yield_site, token) = runtime::with(|ex| {
        let me = ex.me();
        let slot = &mut ex.threads[me];
        (slot.yield_before_park.take(), slot.park_token)
    });
    if let Some(yield_site) = yield_site {
        if token {
            return park_inner(false, yield_site, runtime::op::PARK_AFTER_YIELD);
        }
        yield_at(yield_site);
    }
    park_inner(false, site, 0)
}

/// Spawns a thread running `f` for a task spawned at `site`; the task keeps its own result.
///
/// # Panics
/// When the thread's stack cannot be allocated, as [`spawn`] does.
/// Not `Send`: the thread is a coroutine on the OS thread of the execution, and so is every
/// thread that could touch what `f` owns (see `future::spawn_local`).
///
/// The task's first step is a park on a token its spawn gives it, not a start: it begins as
/// a task woken and waiting to be polled, so its first poll follows the step that every
/// later poll follows (its park), and `future::run_task` finishes that park with
/// [`first_park_taken`] instead of announcing one. A start step would be a second scheduling
/// point before the first poll that orders nothing: it changes no state another thread can
/// see, so every schedule that runs other threads' steps between it and the first park is
/// the schedule that runs them before it, and `dfs` walked each of them once per position.
#[track_caller]
pub(crate) fn spawn_task(f: impl FnOnce() + 'static, site: runtime::op::Site) -> Thread {
    let thread = spawned(spawn_inner(f, None, None, site, Body::Task)).0;
    let index = thread.id.0;
    runtime::with(|ex| {
        ex.set_pending(index, Op::with(OpKind::Park, NO_OBJECT, 0, false));
        ex.threads[index].park_token = true;
    });
    thread
}

/// The rest of a task's first park, whose step the scheduler took as the task's first step
/// (see [`spawn_task`]). Returns whether the end of the execution cancelled the task.
pub(crate) fn first_park_taken() -> bool {
    // The spawn gave the task its token, so this park did not end by itself.
    after_park(None)
}

/// Parks; the thread's async timers end the park at their deadline too (that is how a task
/// waits for `time::sleep`), and those that are due when it returns are fired: their wakers
/// are woken here, in registration order.
#[track_caller]
fn park_inner(timed: bool, site: runtime::op::Site, arg: u32) -> bool {
    let park = Op::with(OpKind::Park, NO_OBJECT, arg, timed);
    runtime::switch(park, site);
    after_park((!timed).then_some(park))
}

/// What a park does once its step is taken: consumes the token (acquiring the clock of the
/// unparks that set it), then fires the async timers that are due. `untimed` is the park, when
/// it had no timeout: one that ended without the token or a task's timer that came due ended
/// by itself, as std allows (`Config::spurious_wakeups`, `spurious_park_wakeups`), and since no
/// `unpark` explains it, reports name it.
fn after_park(untimed: Option<Op>) -> bool {
    let (wake, redundant, cancelled) = runtime::with(|ex| {
        let me = ex.me();
        let cancelled = ex.cancelled();
        let slot = &ex.threads[me];
        if !slot.park_token && !cancelled {
            let timer_due = slot.timer_deadline.is_some_and(|due| due <= ex.now);
            if untimed.is_some_and(|park| ex.may_wake_spuriously(park)) && !timer_due {
                ex.label_step_just_taken("park (spurious)");
            }
        }
        let slot = &mut ex.threads[me];
        if slot.park_token {
            slot.park_token = false;
            let clock = std::mem::take(&mut slot.unpark_clock);
            slot.clock.join(&clock);
            slot.unpark_clock = clock;
        }
        let (wake, redundant) = ex.fire_due_timers();
        (wake, redundant, cancelled)
    });
    drop(redundant);
    for waker in wake {
        waker.wake();
    }
    cancelled
}

/// Where a thread's return value, or the payload of the panic that ended it, waits for `join`.
/// It opens the block the thread shares with its handle ([`PacketBlock`]), whose closure the
/// handle does not know: one block per spawn, taken from the execution's idle blocks
/// (`runtime::take_block`) and given back by whichever of the two lets go last.
#[repr(C)]
struct Packet<T> {
    /// How many of the thread and its handle still hold the block.
    holders: AtomicUsize,
    /// Drops what the block still holds (the closure, if it never ran, and the value) and
    /// gives the block back: it knows the closure's type, which the handle does not.
    free: unsafe fn(NonNull<Packet<T>>),
    value: UnsafeCell<Option<Result<T>>>,
    body: Body,
}

/// The block of a thread spawned with closure `F`: its packet first (`repr(C)`), so a pointer
/// to the block is a pointer to the packet, then the closure, taken out by the thread when it
/// runs (or drops it unrun).
#[repr(C)]
struct PacketBlock<T, F> {
    packet: Packet<T>,
    closure: UnsafeCell<Option<F>>,
}

/// A handle's share of its thread's packet.
struct Shared<T>(NonNull<Packet<T>>);

// SAFETY: all threads of an execution are coroutines on one OS thread and only one runs at a
// time; the packet is written by its thread when it finishes and read by `join` after the
// scheduler has seen the thread finish, and the closure is taken by its thread only, so
// accesses never overlap; the count of holders is atomic, as an `Arc`'s, for a handle dropped
// on another OS thread. The closure of a thread is `Send` where the handle can leave the
// execution (`spawn` asks it); a task's (`spawn_task`) drops its handle at once.
unsafe impl<T: Send> Send for Shared<T> {}
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    fn packet(&self) -> &Packet<T> {
        // SAFETY: the share keeps the block alive.
        unsafe { self.0.as_ref() }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: this share is held, and given up here once.
        unsafe { let_go(self.0) }
    }
}

/// Gives up one share of `packet`; the last one frees the block.
///
/// # Safety
/// The caller holds a share of the live block and does not use it afterwards.
unsafe fn let_go<T>(packet: NonNull<Packet<T>>) {
    // Release and acquire, as `Arc`: the last holder sees every write of the others.
    // SAFETY: the caller's share keeps the block alive until here.
    if unsafe { packet.as_ref() }
        .holders
        .fetch_sub(1, Ordering::Release)
        != 1
    {
        return;
    }
    std::sync::atomic::fence(Ordering::Acquire);
    // SAFETY: the last share: nobody else uses the block.
    unsafe { (packet.as_ref().free)(packet) }
}

/// [`let_go`] for the thread's type-erased share (`runtime::SpawnedBody`).
unsafe fn let_go_erased<T>(block: NonNull<()>) {
    // SAFETY: the caller's guarantees, for the block's packet.
    unsafe { let_go(block.cast::<Packet<T>>()) }
}

/// Drops what `packet`'s block of closure `F` still holds and gives the block back.
///
/// # Safety
/// Nobody holds a share of the block any more.
unsafe fn free_block<T, F>(packet: NonNull<Packet<T>>) {
    let block = packet.cast::<PacketBlock<T, F>>();
    // SAFETY: the block is initialised and unused; its contents are dropped once, here, by the
    // last holder (user destructors: outside the runtime's borrow, on a thread's stack or
    // wherever the handle was dropped).
    unsafe { std::ptr::drop_in_place(block.as_ptr()) };
    runtime::give_block(block.cast(), Layout::new::<PacketBlock<T, F>>());
}

/// The thread's run of its closure `F` (see `runtime::SpawnedBody::new`); the body gives up
/// the thread's share afterwards.
unsafe fn run_body<T, F: FnOnce() -> T>(block: NonNull<()>, cancelled: bool) {
    // SAFETY: the thread's share keeps the block alive; see `Shared` for the accesses.
    let block = unsafe { block.cast::<PacketBlock<T, F>>().as_ref() };
    // SAFETY: see `Shared`; the thread takes its closure once, when it starts.
    let Some(f) = (unsafe { (*block.closure.get()).take() }) else {
        return;
    };
    if block.packet.body == Body::Thread && cancelled {
        // Spawned while the tasks left at the end were dropped: it never runs, and
        // `join` finds no result.
        drop(f);
        return;
    }
    let value = panic::catch_unwind(AssertUnwindSafe(f));
    // What follows is the runtime's clean-up (dropping an unjoined result or panic
    // payload with the packet), which teardown lets go on.
    runtime::with(Execution::own_code_ended);
    let value = match value {
        Ok(value) => Ok(value),
        Err(payload) => match runtime::spawned_thread_panicked(payload) {
            Ok(payload) => Err(payload),
            Err(payload) => panic::resume_unwind(payload),
        },
    };
    // SAFETY: see `Shared`.
    unsafe { *block.packet.value.get() = Some(value) };
}

/// The thread's drop of its closure `F` unrun (see `runtime::SpawnedBody::new`); the body
/// gives up the thread's share afterwards.
unsafe fn discard_body<T, F>(block: NonNull<()>) {
    // SAFETY: see `Shared`; the thread that never ran drops its closure as itself.
    drop(unsafe { (*block.cast::<PacketBlock<T, F>>().as_ref().closure.get()).take() });
}

/// What a spawned thread runs, which decides what it does when the end of the execution
/// cancelled it before it started (`runtime/ending.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    /// A thread's closure: a cancelled thread drops it without running it, so its `join`
    /// returns `Err`.
    Thread,
    /// A task's poll loop, which sees the cancellation itself and drops the future unpolled,
    /// so its handle reports `Cancelled`.
    Task,
}

/// Spawns a thread running `f` on a stack of at least `stack_size` bytes, returning its handle
/// and the packet of its result, or the error of a stack that could not be allocated. The
/// stack is allocated before the spawn becomes a step, so a spawn that fails is no step and
/// the threads that are spawned keep their numbers.
#[track_caller]
fn spawn_inner<'a, F, T>(
    f: F,
    name: Option<String>,
    stack_size: Option<usize>,
    site: runtime::op::Site,
    body: Body,
) -> std::io::Result<(Thread, Shared<T>)>
where
    F: FnOnce() -> T + 'a,
    T: 'a,
{
    let layout = Layout::new::<PacketBlock<T, F>>();
    let (stack, block) = runtime::with(|ex| {
        let stack = ex.stack_for(stack_size, name.as_deref(), site)?;
        Ok((stack, runtime::take_block(ex, layout)))
    })
    .map_err(|error: runtime::StackError| std::io::Error::new(error.kind(), error))?;
    let block = block.cast::<PacketBlock<T, F>>();
    // SAFETY: the block is fresh or idle, of the block's layout; it is written whole.
    unsafe {
        block.as_ptr().write(PacketBlock {
            packet: Packet {
                // The thread and the handle.
                holders: AtomicUsize::new(2),
                free: free_block::<T, F>,
                value: UnsafeCell::new(None),
                body,
            },
            closure: UnsafeCell::new(Some(f)),
        });
    }
    // SAFETY: `run_body`, `discard_body` and `let_go_erased` use the thread's share as
    // `SpawnedBody::new` asks. The closure may borrow from a `scope`; the scope joins every
    // thread it spawned before it returns, and a torn-down execution unwinds children before
    // their parents, so the borrow outlives every use. Non-scoped closures are `'static`
    // already.
    let run = unsafe {
        runtime::SpawnedBody::new(
            block.cast(),
            run_body::<T, F>,
            discard_body::<T, F>,
            let_go_erased::<T>,
        )
    };
    runtime::switch(Op::new(OpKind::Spawn, NO_OBJECT), site);
    let name: Option<Arc<str>> = name.map(Arc::from);
    let thread = runtime::with(|ex| {
        let index = ex.add_thread(runtime::ThreadBody::Spawned(run), name.clone(), site, stack);
        thread_handle(ex, index)
    });
    Ok((thread, Shared(block.cast())))
}

/// What `spawn` does with the result of [`spawn_inner`]: like `std::thread::spawn`, it panics
/// when the thread cannot be created.
#[track_caller]
fn spawned<T>(result: std::io::Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("failed to spawn thread: {error}"),
    }
}

#[track_caller]
fn join_inner<T>(thread: &Thread, packet: &Shared<T>, site: runtime::op::Site) -> Result<T> {
    let packet = packet.packet();
    let target = thread.id.0;
    runtime::switch(
        Op::with(OpKind::Join, NO_OBJECT, target as u32, false),
        site,
    );
    runtime::with(|ex| ex.join_clock(target));
    // SAFETY: see `Packet`.
    match unsafe { (*packet.value.get()).take() } {
        Some(Ok(value)) => Ok(value),
        Some(Err(payload)) => {
            runtime::panic_observed(target);
            Err(payload)
        }
        // Only a thread torn down after the execution failed, or one spawned while the tasks
        // left at the end were dropped, ends without a result.
        None => Err(Box::new("the joined thread was torn down") as Box<dyn Any + Send>),
    }
}

/// Whether `thread` has finished; a scheduling point at `site`.
#[track_caller]
pub(crate) fn is_finished_inner(thread: &Thread, site: runtime::op::Site) -> bool {
    // The argument names the thread asked about (plus one: 0 is a poll about no thread), so
    // `dpor` orders the question against that thread's last step.
    let asked = thread.id.0 as u32 + 1;
    runtime::switch(Op::with(OpKind::Poll, NO_OBJECT, asked, false), site);
    runtime::with(|ex| ex.threads[thread.id.0].finished)
}

/// Spawns a thread.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (thread, packet) = spawned(spawn_inner(f, None, None, Location::caller(), Body::Thread));
    JoinHandle { thread, packet }
}

/// An owned permission to join a thread.
pub struct JoinHandle<T> {
    thread: Thread,
    packet: Shared<T>,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result.
    #[track_caller]
    pub fn join(self) -> Result<T> {
        join_inner(&self.thread, &self.packet, Location::caller())
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has finished (a scheduling point: the answer depends on the
    /// schedule).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        is_finished_inner(&self.thread, Location::caller())
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("thread", &self.thread)
            .finish()
    }
}

/// Configures a thread before spawning it.
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl Builder {
    /// A builder with no name set.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread; the name appears in failure reports.
    pub fn name(mut self, name: String) -> Builder {
        self.name = Some(name);
        self
    }

    /// Gives the thread a coroutine stack of at least `size` bytes. It never gets less than
    /// the configured size (`Config::stack_size`), which leaves room for interleave's own
    /// frames.
    pub fn stack_size(mut self, size: usize) -> Builder {
        self.stack_size = Some(size);
        self
    }

    /// Spawns the thread.
    ///
    /// # Errors
    /// When its stack cannot be allocated: the error names the thread, its spawn site and the
    /// operating system's reason.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (thread, packet) = spawn_inner(
            f,
            self.name,
            self.stack_size,
            Location::caller(),
            Body::Thread,
        )?;
        Ok(JoinHandle { thread, packet })
    }

    /// Spawns a scoped thread.
    ///
    /// # Errors
    /// When its stack cannot be allocated, as [`Builder::spawn`].
    #[track_caller]
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope Scope<'scope, 'env>,
        f: F,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        scope.spawn_named(f, self.name, self.stack_size, Location::caller())
    }
}

/// A scope for spawning threads that borrow from the enclosing stack frame.
pub struct Scope<'scope, 'env: 'scope> {
    threads: std::sync::Mutex<Vec<Thread>>,
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

impl<'scope> Scope<'scope, '_> {
    /// Spawns a thread that may borrow from outside the scope; it is joined when the scope
    /// ends, if it was not joined before.
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        spawned(self.spawn_named(f, None, None, Location::caller()))
    }

    #[track_caller]
    fn spawn_named<F, T>(
        &'scope self,
        f: F,
        name: Option<String>,
        stack_size: Option<usize>,
        site: runtime::op::Site,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        if runtime::with(|ex| ex.ending()) {
            // Nothing spawned now ever runs, so the scope could never return.
            panic!(
                "a destructor spawned a scoped thread while the execution was being torn down \
                 (dropping the tasks left unfinished at its end): the thread would never run, \
                 so its scope could not return"
            );
        }
        let (thread, packet) = spawn_inner(f, name, stack_size, site, Body::Thread)?;
        self.threads
            .lock()
            .expect("scope thread list")
            .push(thread.clone());
        Ok(ScopedJoinHandle {
            thread,
            packet,
            scope: PhantomData,
        })
    }
}

/// An owned permission to join a scoped thread.
pub struct ScopedJoinHandle<'scope, T> {
    thread: Thread,
    packet: Shared<T>,
    scope: PhantomData<&'scope ()>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to finish and returns its result.
    #[track_caller]
    pub fn join(self) -> Result<T> {
        join_inner(&self.thread, &self.packet, Location::caller())
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has finished (a scheduling point).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        is_finished_inner(&self.thread, Location::caller())
    }
}

/// Creates a scope for spawning threads that borrow local data; every thread spawned in it is
/// joined before `scope` returns.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let site = Location::caller();
    let scope = Scope {
        threads: std::sync::Mutex::new(Vec::new()),
        scope: PhantomData,
        env: PhantomData,
    };
    // As std's: a panic of the body is resumed only after every scoped thread has finished,
    // since they may borrow from the frames it unwinds. Returning at once let a scoped thread
    // run on a freed borrow.
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
    let threads = std::mem::take(&mut *scope.threads.lock().expect("scope thread list"));
    let mut unobserved = None;
    for thread in threads {
        let target = thread.id.0;
        let finished = runtime::with(|ex| ex.threads[target].finished);
        if !finished {
            runtime::switch(
                Op::with(OpKind::Join, NO_OBJECT, target as u32, false),
                site,
            );
        }
        runtime::with(|ex| {
            ex.join_clock(target);
            // The scope observes the panics of the threads nobody joined, and re-raises them.
            if let Some(panic) = ex.threads[target].unobserved_panic.take() {
                unobserved.get_or_insert(panic.message);
            }
        });
    }
    let result = result.unwrap_or_else(|payload| panic::resume_unwind(payload));
    if let Some(message) = unobserved {
        // std's message, followed by the scoped thread's own, which std's hook would print.
        panic!("a scoped thread panicked: {message}");
    }
    result
}

/// A key for a per-thread value, declared with [`thread_local!`](crate::thread_local).
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> LocalKey<T> {
        LocalKey { init }
    }

    /// Runs `f` with a reference to this thread's value, initialising it on first use.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        let key = self as *const LocalKey<T> as usize;
        let existing = runtime::with(|ex| find_local::<T>(ex, key));
        let value = match existing {
            Some(value) => value,
            None => store_local(key, (self.init)()),
        };
        // SAFETY: the value is boxed in the thread's slot and is only removed when the thread
        // finishes, after this call returns; it is only reachable from its own thread.
        f(unsafe { &*value })
    }
}

impl<T: 'static> LocalKey<T> {
    /// Runs `f` with this thread's value and `Some(value)`, or, when the thread has none yet,
    /// makes `value` its value without running the initialiser (as std's `set` does) and runs
    /// `f` with it and `None`.
    fn with_or_set<F, R>(&'static self, value: T, f: F) -> R
    where
        F: FnOnce(Option<T>, &T) -> R,
    {
        let key = self as *const LocalKey<T> as usize;
        let (unused, stored) = match runtime::with(|ex| find_local::<T>(ex, key)) {
            Some(stored) => (Some(value), stored),
            None => (None, store_local(key, value)),
        };
        // SAFETY: as in `with`.
        f(unused, unsafe { &*stored })
    }

    /// Like [`with`](LocalKey::with), but gives [`AccessError`] instead of a value once the
    /// thread has started destroying its thread-locals and this one is gone, as std's
    /// `try_with` does.
    pub fn try_with<F, R>(&'static self, f: F) -> std::result::Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        let key = self as *const LocalKey<T> as usize;
        let destroyed = runtime::with(|ex| {
            ex.threads[ex.me()].locals_destroyed && find_local::<T>(ex, key).is_none()
        });
        if destroyed {
            return Err(AccessError);
        }
        Ok(self.with(f))
    }
}

impl<T: 'static> LocalKey<Cell<T>> {
    /// Sets this thread's value, without running the initialiser if it has none yet.
    pub fn set(&'static self, value: T) {
        self.with_or_set(Cell::new(value), |unused, cell| {
            if let Some(value) = unused {
                cell.set(value.into_inner());
            }
        });
    }

    /// A copy of this thread's value.
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(Cell::get)
    }

    /// Takes this thread's value, leaving `T::default()`.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(Cell::take)
    }

    /// Replaces this thread's value, returning the old one.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> LocalKey<RefCell<T>> {
    /// Runs `f` with a shared borrow of this thread's value.
    ///
    /// # Panics
    /// If the value is mutably borrowed.
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|cell| f(&cell.borrow()))
    }

    /// Runs `f` with a mutable borrow of this thread's value.
    ///
    /// # Panics
    /// If the value is borrowed.
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|cell| f(&mut cell.borrow_mut()))
    }

    /// Sets this thread's value, without running the initialiser if it has none yet.
    ///
    /// # Panics
    /// If the value is borrowed.
    pub fn set(&'static self, value: T) {
        self.with_or_set(RefCell::new(value), |unused, cell| {
            if let Some(value) = unused {
                *cell.borrow_mut() = value.into_inner();
            }
        });
    }

    /// Takes this thread's value, leaving `T::default()`.
    ///
    /// # Panics
    /// If the value is borrowed.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(RefCell::take)
    }

    /// Replaces this thread's value, returning the old one.
    ///
    /// # Panics
    /// If the value is borrowed.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

/// The error of [`LocalKey::try_with`] on a thread-local that has been destroyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

/// Makes `value` the running thread's value of the thread-local `key`.
fn store_local<T: 'static>(key: usize, value: T) -> *const T {
    let value: Box<dyn Any> = Box::new(value);
    runtime::with(|ex| {
        let me = ex.me();
        ex.threads[me].locals.push((key, value));
        find_local::<T>(ex, key).expect("just inserted")
    })
}

fn find_local<T: 'static>(ex: &Execution, key: usize) -> Option<*const T> {
    ex.threads[ex.me()]
        .locals
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, value)| value.downcast_ref::<T>())
        .map(|value| value as *const T)
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

/// Declares per-thread values, like `std::thread_local!`, for threads of an execution.
///
/// ```
/// use std::cell::Cell;
/// interleave::thread_local! {
///     static COUNT: Cell<u32> = Cell::new(0);
/// }
/// interleave::check(|| {
///     COUNT.with(|c| c.set(c.get() + 1));
///     let t = interleave::thread::spawn(|| COUNT.with(|c| c.get()));
///     assert_eq!(t.join().unwrap(), 0, "each thread has its own value");
///     assert_eq!(COUNT.with(|c| c.get()), 1);
/// });
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    // A `const { .. }` initialiser (std's form for values built without lazy initialisation) is
    // not an `expr` fragment in edition 2021, so it has its own rules; the value is still
    // created per thread of each execution.
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey::new(|| $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey::new(|| $init);
    };
}
