//! `shuttle::thread`: interleave's threads under shuttle's names. `spawn` and `Builder` wrap
//! interleave's so that a thread starts with its parent's labels and tag and is named by its
//! builder's name (see [`crate::current`]); scoped threads start without labels.

pub use interleave::thread::{
    current, panicking, park, park_timeout, scope, sleep, yield_now, AccessError, JoinHandle,
    LocalKey, Result, Scope, ScopedJoinHandle, Thread, ThreadId,
};

use crate::labels;

/// Spawns a thread, which starts with the labels and tag of the running task.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let inherited = labels::for_child();
    interleave::thread::spawn(move || {
        let _running = labels::adopt(inherited);
        f()
    })
}

/// Configures a thread before spawning it.
#[derive(Debug, Default)]
pub struct Builder {
    inner: interleave::thread::Builder,
}

impl Builder {
    /// A builder with no name set.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread: `thread::current().name()` and `current::get_name_for_task` give it.
    pub fn name(self, name: String) -> Builder {
        Builder {
            inner: self.inner.name(name),
        }
    }

    /// Gives the thread a coroutine stack of at least `size` bytes.
    pub fn stack_size(self, size: usize) -> Builder {
        Builder {
            inner: self.inner.stack_size(size),
        }
    }

    /// Spawns the thread, which starts with the labels and tag of the running task.
    ///
    /// # Errors
    /// When its stack cannot be allocated.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let inherited = labels::for_child();
        self.inner.spawn(move || {
            let _running = labels::adopt(inherited);
            f()
        })
    }

    /// Spawns a scoped thread, which starts with the labels and tag of the running task.
    ///
    /// # Errors
    /// When its stack cannot be allocated.
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
        let inherited = labels::for_child();
        self.inner.spawn_scoped(scope, move || {
            let _running = labels::adopt(inherited);
            f()
        })
    }
}
