//! `shuttle::future`: interleave's tasks under shuttle's names, with shuttle's `JoinError`.
//!
//! shuttle's `JoinError` has one variant, `Cancelled`, and code matches on it exhaustively; a
//! task that panics fails the whole test in shuttle rather than giving its joiner an error. The
//! handle here therefore maps interleave's task output onto that error type: an aborted task
//! gives `Err(JoinError::Cancelled)`, and interleave's `Panicked` outcome, which shuttle has no
//! way to express, panics with a message saying so.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pub use interleave::future::{block_on, yield_now, AbortHandle};

use crate::labels;

pub mod batch_semaphore;

/// Why a task did not produce its output, as shuttle's `JoinError`.
#[derive(Debug)]
pub enum JoinError {
    /// The task was aborted before it finished.
    Cancelled,
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Cancelled => f.write_str("task was cancelled"),
        }
    }
}

impl Error for JoinError {}

/// An owned permission to await a spawned task: awaiting it gives the task's output, or
/// `Err(JoinError::Cancelled)` if the task was aborted. Dropping it detaches the task.
#[derive(Debug)]
pub struct JoinHandle<T> {
    inner: interleave::future::JoinHandle<T>,
}

impl<T> JoinHandle<T> {
    /// Aborts the task: it stops at its next poll, and awaiting the handle gives
    /// `Err(JoinError::Cancelled)` unless it finished first. The abort is a scheduling point.
    #[track_caller]
    pub fn abort(&self) {
        self.inner.abort();
    }

    /// Whether the task has finished (a scheduling point).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// A handle that can abort the task without awaiting it.
    pub fn abort_handle(&self) -> AbortHandle {
        self.inner.abort_handle()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.inner)
            .poll(context)
            .map(|output| match output {
                Ok(value) => Ok(value),
                Err(interleave::future::JoinError::Cancelled) => Err(JoinError::Cancelled),
                Err(interleave::future::JoinError::Panicked) => panic!(
                    "an awaited task panicked; shuttle's JoinError has no variant for a panic, \
                     so the awaiting task fails too"
                ),
            })
    }
}

/// Spawns a task running `future`; it starts with the labels of the spawning task (see
/// [`crate::current`]).
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let inherited = labels::for_child();
    JoinHandle {
        inner: interleave::future::spawn(async move {
            let _running = labels::adopt(inherited);
            future.await
        }),
    }
}

/// Spawns a task running `future` without requiring `Send`, as tokio's `spawn_local`; it starts
/// with the labels of the spawning task.
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let inherited = labels::for_child();
    JoinHandle {
        inner: interleave::future::spawn_local(async move {
            let _running = labels::adopt(inherited);
            future.await
        }),
    }
}
