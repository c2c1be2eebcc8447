//! Async tasks under the controlled scheduler, shaped like tokio's task API.
//!
//! A task is a thread of the execution that polls its future: [`spawn`] starts one,
//! [`block_on`] runs a future on the current thread. When a future returns `Pending`, its
//! thread parks until the future's [`Waker`] is woken, and waking unparks it; both are
//! scheduling points, so every strategy interleaves tasks exactly as it interleaves threads,
//! and blocking and async code mix freely in one test. The async primitives of
//! [`sync`] are scheduling points at every poll.
//!
//! Wakers are modelled, not simulated: a future that returns `Pending` without arranging to be
//! woken leaves its task parked for ever, and the execution ends in a deadlock that names the
//! parked task. That is how a lost wakeup shows.
//!
//! A task whose [`JoinHandle`] was dropped does not keep the execution going: once the main
//! thread has returned and only such tasks are left, each is cancelled and drops its future as
//! itself, with every primitive working, so its destructors run; one that blocks for ever or
//! spins there fails the execution (see `runtime/ending.rs`).
//!
//! Timers ([`crate::time`]) run on the execution's virtual clock, and [`select`] races two
//! futures with the winner of a tie chosen by the strategy, so timeout races are explored too.
//!
//! ```
//! use interleave::future;
//! use interleave::future::sync::Mutex;
//! use std::sync::Arc;
//!
//! interleave::check(|| {
//!     future::block_on(async {
//!         let counter = Arc::new(Mutex::new(0));
//!         let task = {
//!             let counter = counter.clone();
//!             future::spawn(async move { *counter.lock().await += 1 })
//!         };
//!         *counter.lock().await += 1;
//!         task.await.unwrap();
//!         assert_eq!(*counter.lock().await, 2);
//!     })
//! });
//! ```

mod abort;
mod atomic_waker;
mod local;
pub mod sync;

pub use abort::AbortHandle;
pub use atomic_waker::AtomicWaker;
pub use local::spawn_local;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::panic::{self, AssertUnwindSafe, Location};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::runtime;
use crate::runtime::foreign::ForeignWakes;
use crate::runtime::op::{Op, OpKind, NO_OBJECT};
use crate::runtime::Awaited;
use crate::sync::Causality;

use crate::thread::{self, Thread};

/// Wakes a task by unparking its thread. Only the OS thread of the task's execution can do
/// that; a wake from any other OS thread is recorded for the execution to report
/// (`runtime::foreign`), instead of being lost and ending in a deadlock that is not there.
struct ThreadWaker {
    thread: Thread,
    /// The tag of the task's execution.
    execution: u64,
    foreign: Arc<ForeignWakes>,
    /// Where the task parks while it is pending.
    site: &'static Location<'static>,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match runtime::current_tag() {
            // The wake is reported at the line of the user's code that the waking thread
            // took its latest step at (the release of a lock, a notification): a waker is
            // called through a vtable, which carries no caller's location.
            Some(tag) if tag == self.execution => {
                let site = runtime::with(|ex| {
                    let me = ex.me();
                    // A task that wakes its own waker during its poll and returns `Pending`
                    // asks to be polled again after the others: the hand-written yield of
                    // futures-lite and async-std, and every "poll me again" busy-poll. The
                    // priority strategies count it as a yield (they demote a thread at its
                    // yields), so a task waiting that way for a task of lower priority lets it
                    // run instead of polling for ever. Between polls only the runtime runs,
                    // and it never wakes the thread's own task waker (`fire_due_timers`), so
                    // a wake of it is one during the poll. It is no yield step: the searches'
                    // yield rule would hold the task back, and re-polling a woken task before
                    // the others run is something an executor does.
                    let slot = &mut ex.threads[me];
                    // (`future::yield_now` has yielded just before its wake, or its park will
                    // be the yield.)
                    if Arc::as_ptr(self) as usize == slot.task_waker
                        && slot.pending.kind != OpKind::Yield
                        && slot.yield_before_park.is_none()
                    {
                        slot.yields += 1;
                    }
                    slot.pending_site
                });
                self.thread.unpark_at(site);
            }
            // Another OS thread, or a later execution of this one: a waker kept past its
            // execution (in a static, say) has nothing left to wake, and `woken_elsewhere`
            // ignores it.
            _ => self.foreign.woken_elsewhere(
                self.execution,
                self.thread.id().as_usize(),
                Some(self.site),
            ),
        }
    }
}

/// The waker of the running thread's task. The thread remembers it while it polls, so a timer
/// that fires while the thread is parked does not wake it a second time (see
/// `Execution::fire_due_timers`); dropping this restores what an enclosing `block_on` set.
struct TaskWaker {
    waker: Waker,
    enclosing: usize,
}

impl TaskWaker {
    /// The waker of the running thread's task, which parks at `site` while it is pending.
    #[track_caller]
    fn for_current_thread(site: &'static Location<'static>) -> TaskWaker {
        let (execution, foreign) = runtime::with(|ex| (ex.tag, ex.foreign.clone()));
        let waker = Waker::from(Arc::new(ThreadWaker {
            thread: thread::current(),
            execution,
            foreign,
            site,
        }));
        let address = waker.data() as usize;
        let enclosing = runtime::with(|ex| {
            let me = ex.me();
            std::mem::replace(&mut ex.threads[me].task_waker, address)
        });
        TaskWaker { waker, enclosing }
    }
}

impl Drop for TaskWaker {
    fn drop(&mut self) {
        if runtime::in_execution() {
            let enclosing = self.enclosing;
            runtime::with(|ex| {
                let me = ex.me();
                ex.threads[me].task_waker = enclosing;
            });
        }
    }
}

/// Runs `future` to completion on the current thread: polls it, and parks the thread while it
/// is pending until its waker is woken.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    let site = Location::caller();
    let task = TaskWaker::for_current_thread(site);
    let mut context = Context::from_waker(&task.waker);
    let mut future = pin!(future);
    loop {
        poll_again();
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        thread::park_at(site);
    }
}

/// Notes that the running task's future is pending on `what` (at `site`), for the deadlock
/// report: a task parked for ever is explained by what it awaits. Cleared before each poll.
pub(crate) fn awaiting(what: &'static str, site: Option<&'static Location<'static>>) {
    if runtime::in_execution() {
        runtime::with(|ex| {
            let me = ex.me();
            ex.threads[me].awaiting.push(Awaited::Primitive(what, site));
            ex.show_last_step_waits();
        });
    }
}

/// Forgets what the running task awaited at its previous poll, and a `yield_now` of a poll
/// that did not end in a park (it returned `Ready` after all, in a `select`).
fn poll_again() {
    runtime::with(|ex| {
        let me = ex.me();
        let slot = &mut ex.threads[me];
        slot.awaiting.clear();
        slot.yield_before_park = None;
    });
}

/// A scheduling point at `site`: every poll of this module's futures is one, so a task
/// switch can happen at every `.await` on them.
#[track_caller]
pub(crate) fn poll_point(site: &'static Location<'static>) {
    runtime::switch(Op::new(OpKind::Poll, NO_OBJECT), site);
}

/// Why a task did not produce its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinError {
    /// [`JoinHandle::abort`] cancelled it.
    Cancelled,
    /// It panicked.
    Panicked,
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Cancelled => f.write_str("the task was cancelled"),
            JoinError::Panicked => f.write_str("the task panicked"),
        }
    }
}

impl std::error::Error for JoinError {}

/// What a task and its handle share.
struct TaskState<T> {
    output: Option<Result<T, JoinError>>,
    finished: bool,
    /// What the task did, released when it finished: the handle that takes its output acquires
    /// it, so the task's writes happen before what follows the `await` (or `join`), as a
    /// thread's do before its `join` returns. The state itself is a std mutex, which orders
    /// nothing the race checks see.
    history: Causality,
    /// The task awaiting the handle.
    joiner: Option<Waker>,
}

/// An owned permission to await a spawned task, as tokio's `JoinHandle`: awaiting it gives
/// the task's output, or why there is none.
pub struct JoinHandle<T> {
    state: Arc<StdMutex<TaskState<T>>>,
    aborted: Arc<Abort>,
    thread: Thread,
    /// Where the task was spawned, for the join's scheduling point.
    site: &'static Location<'static>,
}

/// A task's abort flag. `abort` sets it in one step that also unparks the task (an unpark
/// step, `Thread::unpark_with`), and the task reads it as it comes out of each park, the step
/// before each of its polls (its first step is a park too, see `thread::spawn_task`). So an
/// abort and each poll are ordered by the abort's unpark against the task's park, which every
/// search orders both ways (DPOR too: an unpark depends on the parks of its thread). An abort
/// takes effect at the task's next poll, as tokio's and shuttle's: a poll that returns `Ready`
/// has finished the task, whatever abort came while it ran.
///
/// The read is no scheduling point of its own. Between a park's step and the read the task
/// runs only its own code (and wakes the wakers of its own due timers, unparks of other
/// threads), so another thread's step there is either independent of the read (it can go
/// after the read) or an abort of this task, which is also an unpark of it and so goes
/// before the park or after it: after the park and before the read it gives the state that
/// the abort before the park gives (cancelled at this poll), up to the park token of a task
/// that never parks again. A step of its own here (as before) was a second scheduling point
/// per poll that `dfs` branched at with nothing new to find.
struct Abort {
    decided: AtomicBool,
}

impl Abort {
    /// Whether the task was aborted; read only by the task, as it comes out of a park.
    fn is_set(&self) -> bool {
        // Every thread of an execution is a coroutine on one OS thread, so the ordering is
        // irrelevant; the flag is atomic only so that handles are `Send` and `Sync`.
        self.decided.load(Ordering::Relaxed)
    }

    /// Sets the flag: called by `AbortHandle::abort` inside the step that unparks the task.
    fn set(&self) {
        self.decided.store(true, Ordering::Relaxed);
    }
}

/// Spawns a task running `future` on a new thread of the execution.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_at(future, Location::caller())
}

/// Spawns a task spawned at `site`. Nothing here needs `Send`: every task of an execution runs
/// on the OS thread of the execution (see [`spawn_local`]).
#[track_caller]
fn spawn_at<F>(future: F, site: &'static Location<'static>) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let state = Arc::new(StdMutex::new(TaskState {
        output: None,
        finished: false,
        history: Causality::new(),
        joiner: None,
    }));
    let shared = state.clone();
    let aborted = Arc::new(Abort {
        decided: AtomicBool::new(false),
    });
    let abort_flag = aborted.clone();
    let thread = thread::spawn_task(
        move || {
            // A panic of the future ends the task with no output, which the handle reports as
            // `JoinError::Panicked`, as tokio's does. The panic is recorded as the task's
            // before the joiner is woken, so that the handle's report of it observes it (the
            // wake is a scheduling point), and then goes on to the task's root, which drops
            // its payload as it drops any.
            let run = || run_task(future, &abort_flag, site);
            let (output, panicked) = match panic::catch_unwind(AssertUnwindSafe(run)) {
                Ok(output) => (Some(output), None),
                Err(payload) => match runtime::spawned_thread_panicked(payload) {
                    Ok(payload) => (None, Some(payload)),
                    // The end of the execution unwinds the task: that goes on.
                    Err(payload) => panic::resume_unwind(payload),
                },
            };
            let history = Causality::release();
            let joiner = {
                let mut state = lock(&shared);
                state.output = output;
                state.finished = true;
                state.history = history;
                state.joiner.take()
            };
            if let Some(joiner) = joiner {
                joiner.wake();
            }
            if let Some(payload) = panicked {
                panic::resume_unwind(Box::new(runtime::RecordedPanic(payload)));
            }
        },
        site,
    );
    JoinHandle {
        state,
        aborted,
        thread,
        site,
    }
}

/// Polls `future` like [`block_on`], giving up as soon as the task is aborted.
fn run_task<F: Future>(
    future: F,
    aborted: &Abort,
    site: &'static Location<'static>,
) -> Result<F::Output, JoinError> {
    let task = TaskWaker::for_current_thread(site);
    let mut context = Context::from_waker(&task.waker);
    let mut future = pin!(future);
    // The task's first step was a park on the token its spawn gave it (`thread::spawn_task`).
    // The end of the execution cancels a task parked between polls (it wakes it, and the park
    // reports it) and every task spawned while the tasks left are dropped.
    let mut cancelled = thread::first_park_taken();
    loop {
        // The abort is read as the task comes out of its park, with no scheduling point of
        // its own (see `Abort`): the abort's unpark orders it against this poll.
        if cancelled || aborted.is_set() {
            return Err(JoinError::Cancelled);
        }
        poll_again();
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return Ok(value);
        }
        cancelled = thread::park_at(site);
    }
}

fn lock<T>(state: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Only one coroutine runs at a time and none parks holding this lock, so it is never
    // contended; a panic while holding it cannot leave the state half-written.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // Nobody can await the task any more: it is detached, and cancelled when only detached
        // tasks are left after the main thread returned.
        let index = self.thread.id().as_usize();
        if runtime::in_execution() {
            runtime::with(|ex| {
                if let Some(slot) = ex.threads.get_mut(index) {
                    slot.detached = true;
                }
            });
        }
    }
}

impl<T> JoinHandle<T> {
    /// Cancels the task: it stops at its next poll (its future is dropped there) and awaiting
    /// the handle gives [`JoinError::Cancelled`], unless that poll never comes because the
    /// task finished first (a poll that was running when the abort came and returns `Ready`
    /// finishes it). The abort is one scheduling point, so whether it comes before the task
    /// finishes is explored, and the task does not act on it before the aborting thread's
    /// next step.
    #[track_caller]
    pub fn abort(&self) {
        self.abort_handle().abort();
    }

    /// Whether the task has finished (a scheduling point, like `std`'s `is_finished`).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        thread::yield_now();
        lock(&self.state).finished
    }

    /// Blocks the current thread until the task finishes and returns its output: for
    /// blocking code that waits for a task.
    #[track_caller]
    pub fn join(self) -> Result<T, JoinError> {
        block_on(self)
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        // A finished task's state no longer changes (an abort of it sets only its flag, and
        // only this handle takes the output), so reading it commutes with every other
        // thread's step and needs no scheduling point: the poll is `Ready` wherever it falls.
        // A task not finished yet may finish between the awaiting thread's last step and the
        // read, so that read is a scheduling point.
        let task = self.thread.id().as_usize();
        let output = |state: &mut TaskState<T>| {
            state.finished.then(|| {
                state.history.acquire();
                state.output.take().unwrap_or_else(|| {
                    // The task panicked, and this handle hands the panic to the program.
                    runtime::panic_observed(task);
                    Err(JoinError::Panicked)
                })
            })
        };
        let finished = output(&mut lock(&self.state));
        if let Some(output) = finished {
            return Poll::Ready(output);
        }
        poll_point(self.site);
        let mut state = lock(&self.state);
        if let Some(output) = output(&mut state) {
            return Poll::Ready(output);
        }
        state.joiner = Some(context.waker().clone());
        runtime::with(|ex| {
            let me = ex.me();
            ex.threads[me].awaiting.push(Awaited::Task {
                thread: self.thread.id().as_usize(),
                site: self.site,
            });
        });
        Poll::Pending
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("thread", &self.thread)
            .finish()
    }
}

/// Yields to the scheduler once, as tokio's: the first poll returns `Pending` (after waking the
/// task), so the other futures of a `select` or `join` in the same task are polled before it
/// completes, and another task may run first.
///
/// A task is a thread, so the yield is also the thread's yield (`thread::yield_now`): one
/// scheduling decision, and strategies treat a task that keeps yielding in a spin loop as they
/// treat a spinning thread (PCT lowers its priority so the task it waits for runs).
#[track_caller]
pub fn yield_now() -> impl Future<Output = ()> {
    YieldNow {
        site: Location::caller(),
        yielded: false,
    }
}

/// The future of [`yield_now`].
struct YieldNow {
    site: &'static Location<'static>,
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        // Polled by the task's own waker, the yield is the park that follows this poll (see
        // `thread::park_at`): one scheduling point, as under an executor, which switches tasks
        // only there. Under any other waker (a combinator's), it is a step of its own now.
        let address = context.waker().data() as usize;
        let site = self.site;
        let deferred = runtime::with(|ex| {
            let me = ex.me();
            let slot = &mut ex.threads[me];
            let own = slot.task_waker == address;
            if own {
                slot.yield_before_park = Some(site);
            }
            own
        });
        if !deferred {
            thread::yield_at(site);
        }
        context.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The output of [`select`]: which of the two futures finished first, with its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Either<L, R> {
    /// The first future finished first.
    Left(L),
    /// The second future finished first.
    Right(R),
}

impl<L, R> Either<L, R> {
    /// Whether it is [`Either::Left`].
    pub fn is_left(&self) -> bool {
        matches!(self, Either::Left(_))
    }

    /// Whether it is [`Either::Right`].
    pub fn is_right(&self) -> bool {
        matches!(self, Either::Right(_))
    }
}

/// Waits for the first of two futures to finish, returns its output, and drops the other, like
/// tokio's `select!` with two branches.
///
/// Both futures are polled at every poll of the select until one is ready. Which one is polled
/// first is a nondeterministic choice of the execution (as [`crate::rand`]: the strategy makes
/// it and the replay token records it), drawn afresh at every poll, and the first one found
/// ready wins. So when both are ready at the same poll (a reply and a deadline due at the same
/// virtual instant, say) both outcomes are explored, never a fixed favourite. The loser is
/// dropped without being polled again: a loser that had something ready keeps it wherever it
/// came from (a message stays in its channel), exactly as with tokio's branches, which are
/// polled in random order.
///
/// ```
/// use interleave::future::{self, Either};
/// use interleave::future::sync::oneshot;
/// use interleave::time::{self, Duration};
///
/// interleave::check(|| {
///     future::block_on(async {
///         let (tx, rx) = oneshot::channel::<u32>();
///         match future::select(rx, time::sleep(Duration::from_millis(10))).await {
///             Either::Left(reply) => panic!("nobody sent {reply:?}"),
///             Either::Right(()) => drop(tx), // the deadline: the sender is still silent
///         }
///     })
/// });
/// ```
pub async fn select<A: IntoFuture, B: IntoFuture>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a.into_future());
    let mut b = pin!(b.into_future());
    std::future::poll_fn(move |context| {
        let a_first = runtime::with(|ex| ex.choose_value(2)) == 0;
        if a_first {
            if let Poll::Ready(output) = a.as_mut().poll(context) {
                return Poll::Ready(Either::Left(output));
            }
        }
        if let Poll::Ready(output) = b.as_mut().poll(context) {
            return Poll::Ready(Either::Right(output));
        }
        if !a_first {
            if let Poll::Ready(output) = a.as_mut().poll(context) {
                return Poll::Ready(Either::Left(output));
            }
        }
        Poll::Pending
    })
    .await
}
