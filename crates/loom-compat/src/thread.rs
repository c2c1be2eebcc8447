//! `loom::thread`: threads of the model. As in loom, a spawned closure need not be `Send`:
//! every thread of an execution runs on the one OS thread that runs the execution.
//! `Builder::stack_size` counts machine words, as loom's (its generator stacks are sized in
//! words), and is converted to bytes for interleave. The main thread of a model has no name,
//! as in loom (std and interleave call it `main`).

use std::fmt;
use std::io;

pub use interleave::thread::panicking;
pub use interleave::thread::{park, yield_now, AccessError, LocalKey, ThreadId};

/// A handle to a thread of the model.
#[derive(Clone, Debug)]
pub struct Thread {
    inner: interleave::thread::Thread,
}

impl Thread {
    /// The thread's identifier.
    pub fn id(&self) -> ThreadId {
        self.inner.id()
    }

    /// The name given to the thread's builder; the main thread has none, as in loom.
    pub fn name(&self) -> Option<&str> {
        if self.inner.id().as_usize() == 0 {
            return None;
        }
        self.inner.name()
    }

    /// Makes the thread's park token available, waking it if it is parked.
    #[track_caller]
    pub fn unpark(&self) {
        self.inner.unpark();
    }
}

/// The handle of the running thread.
pub fn current() -> Thread {
    Thread {
        inner: interleave::thread::current(),
    }
}

/// Moves a value between threads of one execution.
struct SameOsThread<T>(T);

// SAFETY: interleave runs every thread of an execution as a coroutine on the OS thread that
// runs the execution, one at a time, and a thread cannot outlive its execution; a value moved
// into or out of a spawned thread therefore never leaves the OS thread it was created on,
// which is what loom (whose threads are generators on one OS thread too) relies on as well.
unsafe impl<T> Send for SameOsThread<T> {}

impl<T> SameOsThread<T> {
    /// Takes the value out; a method, so that closures capture the whole wrapper.
    fn into_inner(self) -> T {
        self.0
    }
}

/// An owned permission to join a thread.
pub struct JoinHandle<T> {
    inner: interleave::thread::JoinHandle<SameOsThread<T>>,
    thread: Thread,
}

impl<T> JoinHandle<T> {
    fn new(inner: interleave::thread::JoinHandle<SameOsThread<T>>) -> JoinHandle<T> {
        let thread = Thread {
            inner: inner.thread().clone(),
        };
        JoinHandle { inner, thread }
    }
}

impl<T> JoinHandle<T> {
    /// Waits for the thread and returns its result. A panic of the thread fails the model
    /// with that panic, as under loom, so it never reaches `join`.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.inner.join().map(SameOsThread::into_inner)
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has finished (a scheduling point).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("thread", self.thread())
            .finish()
    }
}

/// Spawns a thread of the model.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    let body = SameOsThread(f);
    JoinHandle::new(interleave::thread::spawn(move || {
        SameOsThread(body.into_inner()())
    }))
}

/// Configures a thread before it is spawned.
#[derive(Debug, Default)]
pub struct Builder {
    inner: interleave::thread::Builder,
}

impl Builder {
    /// A builder with no name and the default stack.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread.
    pub fn name(self, name: String) -> Builder {
        Builder {
            inner: self.inner.name(name),
        }
    }

    /// Sets the thread's stack size in machine words, as loom does.
    pub fn stack_size(self, words: usize) -> Builder {
        Builder {
            inner: self
                .inner
                .stack_size(words.saturating_mul(std::mem::size_of::<usize>())),
        }
    }

    /// Spawns the thread; fails when its stack cannot be allocated.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        let body = SameOsThread(f);
        let inner = self
            .inner
            .spawn(move || SameOsThread(body.into_inner()()))?;
        Ok(JoinHandle::new(inner))
    }
}
