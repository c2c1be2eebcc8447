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

pub mod sync;

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::runtime;
use crate::runtime::op::{Op, OpKind, NO_OBJECT};
use crate::thread::{self, Thread};

/// Wakes a task by unparking its thread.
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // A waker kept past its execution (in a static, say) has nothing left to wake.
        if runtime::in_execution() {
            self.0.unpark();
        }
    }
}

/// Runs `future` to completion on the current thread: polls it, and parks the thread while it
/// is pending until its waker is woken.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    let site = Location::caller();
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        thread::park_at(site);
    }
}

/// A scheduling point at `site`: every poll of this module's futures is one, so a task
/// switch can happen at every `.await` on them.
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
    aborted: bool,
    /// The task awaiting the handle.
    joiner: Option<Waker>,
}

/// An owned permission to await a spawned task, as tokio's `JoinHandle`: awaiting it gives
/// the task's output, or why there is none.
pub struct JoinHandle<T> {
    state: Arc<StdMutex<TaskState<T>>>,
    thread: Thread,
    /// Where the task was spawned, for the join's scheduling point.
    site: &'static Location<'static>,
}

/// Spawns a task running `future` on a new thread of the execution.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let site = Location::caller();
    let state = Arc::new(StdMutex::new(TaskState {
        output: None,
        finished: false,
        aborted: false,
        joiner: None,
    }));
    let shared = state.clone();
    let thread = thread::spawn_task(
        move || {
            let output = run_task(future, &shared, site);
            let joiner = {
                let mut state = lock(&shared);
                state.output = Some(output);
                state.finished = true;
                state.joiner.take()
            };
            if let Some(joiner) = joiner {
                joiner.wake();
            }
        },
        site,
    );
    JoinHandle {
        state,
        thread,
        site,
    }
}

/// Polls `future` like [`block_on`], giving up as soon as the task is aborted.
fn run_task<F: Future>(
    future: F,
    state: &StdMutex<TaskState<F::Output>>,
    site: &'static Location<'static>,
) -> Result<F::Output, JoinError> {
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if lock(state).aborted {
            return Err(JoinError::Cancelled);
        }
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return Ok(value);
        }
        thread::park_at(site);
    }
}

fn lock<T>(state: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Only one coroutine runs at a time and none parks holding this lock, so it is never
    // contended; a panic while holding it cannot leave the state half-written.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T> JoinHandle<T> {
    /// Cancels the task: it stops at its next poll (its future is dropped there) and awaiting
    /// the handle gives [`JoinError::Cancelled`], unless it had already finished.
    #[track_caller]
    pub fn abort(&self) {
        lock(&self.state).aborted = true;
        // Wake it so it notices, wherever it is parked.
        self.thread.unpark();
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
        poll_point(self.site);
        let mut state = lock(&self.state);
        if state.finished {
            return Poll::Ready(state.output.take().unwrap_or(Err(JoinError::Panicked)));
        }
        state.joiner = Some(context.waker().clone());
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

/// Yields to the scheduler once: the task stays runnable, and another task may run first.
pub async fn yield_now() {
    struct YieldNow(bool);

    impl Future for YieldNow {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            context.waker().wake_by_ref();
            Poll::Pending
        }
    }

    YieldNow(false).await
}
