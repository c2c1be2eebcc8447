//! `Once`, `OnceLock` and `LazyLock`: one-time initialisation. A thread that arrives while
//! another runs the initialiser blocks until it completes. An initialiser that panics poisons
//! the `Once`, as std's does: `call_once` then panics, `call_once_force` runs again and sees the
//! poison, a `OnceLock` stays empty and tries again on its next use, and every later use of a
//! `LazyLock` panics (its initialiser was consumed).

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::Deref;
use std::panic::{Location, RefUnwindSafe, UnwindSafe};

use crate::runtime;
use crate::runtime::object::{Holder, ObjState, ObjectHandle};
use crate::runtime::op::{self, ObjIdx, ObjectKind, Site};
use crate::runtime::op_on;
use crate::runtime::Execution;

/// Runs an initialiser exactly once.
#[derive(Debug)]
pub struct Once {
    handle: ObjectHandle,
}

/// State passed to [`Once::call_once_force`]'s closure.
#[derive(Debug)]
pub struct OnceState {
    poisoned: bool,
}

impl OnceState {
    /// Whether an earlier initialiser of this `Once` panicked.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

/// Ends the run of an initialiser: completes the `Once` when the initialiser returned, or
/// poisons it and lets the next thread in when it panicked (dropped while unwinding).
struct Completion<'a> {
    once: &'a Once,
    idx: ObjIdx,
    site: Site,
}

impl Drop for Completion<'_> {
    fn drop(&mut self) {
        let panicked = runtime::thread_panicking();
        runtime::switch_on(
            &self.once.handle,
            ObjectKind::Once,
            op_on!(OnceComplete),
            self.site,
        );
        let idx = self.idx as usize;
        runtime::with(|ex| {
            let entry = &mut ex.objects[idx];
            if let ObjState::Once { runner, done } = &mut entry.state {
                *runner = None;
                *done = !panicked;
            }
            entry.poisoned = panicked;
            ex.release(self.idx);
        });
    }
}

impl Once {
    /// A new `Once`.
    #[track_caller]
    pub const fn new() -> Once {
        Once {
            handle: ObjectHandle::new(Location::caller()),
        }
    }

    /// A `Once` that reports call `name` (the `OnceLock` built on it).
    #[track_caller]
    const fn named(name: &'static str) -> Once {
        Once {
            handle: ObjectHandle::named(Location::caller(), name),
        }
    }

    /// A `Once` identified by `site`, for the runtime's own use (`lazy_static!`).
    pub(crate) const fn at(site: Site) -> Once {
        Once {
            handle: ObjectHandle::new(site),
        }
    }

    /// Runs `f` unless an initialiser completed. A poisoned `Once` panics, as std's
    /// `call_once` does, unless `force` (`call_once_force`, `OnceLock`).
    #[track_caller]
    fn run(&self, f: impl FnOnce(&OnceState), site: Site, force: bool) {
        let idx =
            runtime::switch_on(&self.handle, ObjectKind::Once, op_on!(OnceEnter), site).index();
        let must_run = runtime::with(|ex| {
            let thread = ex.me();
            let entry = &mut ex.objects[idx as usize];
            let poisoned = entry.poisoned;
            let ObjState::Once { runner, done } = &mut entry.state else {
                unreachable!("a Once handle points at another kind of object");
            };
            if *done {
                ex.acquire(idx);
                None
            } else if poisoned && !force {
                ex.acquire(idx);
                Some(Err(()))
            } else {
                *runner = Some(Holder { thread, site });
                Some(Ok(poisoned))
            }
        });
        match must_run {
            None => {}
            Some(Err(())) => panic!("Once instance has previously been poisoned"),
            Some(Ok(poisoned)) => {
                let completion = Completion {
                    once: self,
                    idx,
                    site,
                };
                f(&OnceState { poisoned });
                drop(completion);
            }
        }
    }

    /// Runs `f` if no call has run an initialiser yet; waits for a running one to finish.
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        self.run(|_| f(), Location::caller(), false);
    }

    /// Like [`Once::call_once`]; the closure receives the `Once`'s state.
    #[track_caller]
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        self.run(f, Location::caller(), true);
    }

    /// Whether an initialiser has completed, and if so makes the running thread acquire what
    /// it released; no scheduling point (`lazy_static!`'s access to a value it has).
    pub(crate) fn acquire_completion(&self, ex: &mut Execution) -> bool {
        self.handle
            .index_in(ex.tag)
            .is_some_and(|idx| acquire_if_completed(ex, idx))
    }

    /// Whether an initialiser has completed (a scheduling point).
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        let idx = runtime::switch_on(
            &self.handle,
            ObjectKind::Once,
            op_on!(Poll),
            Location::caller(),
        )
        .index();
        runtime::with(|ex| acquire_if_completed(ex, idx))
    }

    /// Blocks until an initialiser has completed (a scheduling point), as std's `Once::wait`.
    ///
    /// # Panics
    /// If an initialiser panicked and no initialiser runs or has completed since.
    #[track_caller]
    pub fn wait(&self) {
        self.wait_for_completion(op::ONCE_WAIT, Location::caller());
    }

    /// Blocks until an initialiser has completed, as [`Once::wait`], but a panicked
    /// initialiser does not end the wait: a later `call_once_force` may still complete it.
    #[track_caller]
    pub fn wait_force(&self) {
        self.wait_for_completion(op::ONCE_WAIT_FORCE, Location::caller());
    }

    /// Waits as the `OnceEnter` argument `how` says, then acquires the completion, or panics
    /// when the wait ended by a poison (`ONCE_WAIT` only).
    #[track_caller]
    fn wait_for_completion(&self, how: u32, site: Site) {
        let idx = runtime::switch_on(&self.handle, ObjectKind::Once, op_on!(OnceEnter, how), site)
            .index();
        if !runtime::with(|ex| acquire_if_completed(ex, idx)) {
            panic!("Once instance has previously been poisoned");
        }
    }
}

/// Whether the `Once` at `idx` has completed, and if so makes the running thread acquire what
/// its initialiser released.
fn acquire_if_completed(ex: &mut Execution, idx: ObjIdx) -> bool {
    let done = matches!(
        ex.objects[idx as usize].state,
        ObjState::Once { done: true, .. }
    );
    if done {
        ex.acquire(idx);
    }
    done
}

impl Default for Once {
    #[track_caller]
    fn default() -> Once {
        Once::new()
    }
}

/// A cell written at most once.
pub struct OnceLock<T> {
    once: Once,
    value: UnsafeCell<Option<T>>,
}

// SAFETY: the value is written once, by the thread running the `Once`, before any thread can
// observe completion; afterwards it is only read (or accessed through `&mut self`).
unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}
unsafe impl<T: Send> Send for OnceLock<T> {}
impl<T: UnwindSafe> UnwindSafe for OnceLock<T> {}
impl<T: RefUnwindSafe + UnwindSafe> RefUnwindSafe for OnceLock<T> {}

impl<T> OnceLock<T> {
    /// An empty cell.
    #[track_caller]
    pub const fn new() -> OnceLock<T> {
        OnceLock {
            once: Once::named("OnceLock"),
            value: UnsafeCell::new(None),
        }
    }

    /// The value, if initialised (a scheduling point).
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        if self.once.is_completed() {
            // SAFETY: see the `Sync` impl.
            unsafe { (*self.value.get()).as_ref() }
        } else {
            None
        }
    }

    /// A mutable reference to the value, if initialised.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut().as_mut()
    }

    /// Initialises the cell with `value` unless it already is; returns `value` back if so.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), T> {
        let mut value = Some(value);
        self.init(|| value.take().expect("taken once"), Location::caller());
        match value {
            None => Ok(()),
            Some(value) => Err(value),
        }
    }

    /// Blocks until the cell has a value (a scheduling point), as std's `OnceLock::wait`; an
    /// initialiser that panicked leaves it empty, so the wait goes on.
    #[track_caller]
    pub fn wait(&self) -> &T {
        self.once.wait_force();
        // SAFETY: see the `Sync` impl.
        unsafe { (*self.value.get()).as_ref() }.expect("a completed OnceLock holds a value")
    }

    /// The value, initialising it with `f` if needed.
    #[track_caller]
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        self.init(f, Location::caller())
    }

    #[track_caller]
    fn init(&self, f: impl FnOnce() -> T, site: Site) -> &T {
        // std's `OnceLock` ignores the poison of an initialiser that panicked: the cell stays
        // empty and the next caller initialises it.
        self.once.run(
            |_| {
                let value = f();
                // SAFETY: only the thread running the `Once` writes, before completion.
                unsafe { *self.value.get() = Some(value) };
            },
            site,
            true,
        );
        // SAFETY: see the `Sync` impl.
        unsafe { (*self.value.get()).as_ref() }.expect("the initialiser stored a value")
    }

    /// Consumes the cell and returns its value.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
    }

    /// Takes the value out, leaving the cell empty.
    #[track_caller]
    pub fn take(&mut self) -> Option<T> {
        let value = self.value.get_mut().take();
        self.once = Once::named("OnceLock");
        value
    }
}

impl<T> Default for OnceLock<T> {
    #[track_caller]
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceLock").finish_non_exhaustive()
    }
}

/// A value initialised on first access by the function it was created with, shaped like
/// `std::sync::LazyLock`: the first access runs the function (a scheduling point, like
/// `Once::call_once`), and a thread that arrives meanwhile waits for it. In a `static`, the
/// value is made once per process, in the first execution that uses it, and later executions
/// see it, as with std; [`lazy_static!`](crate::lazy_static!) gives each execution its own.
pub struct LazyLock<T, F = fn() -> T> {
    once: Once,
    init: UnsafeCell<Option<F>>,
    value: UnsafeCell<Option<T>>,
}

// SAFETY: the initialiser is taken and the value written only by the thread running the
// `Once`, before any thread can observe completion; afterwards the value is only read. As
// std's, sharing needs `T: Send` because the value may be made on another thread than the one
// that drops it, and `F: Send` because the initialiser may run on any thread.
unsafe impl<T: Sync + Send, F: Send> Sync for LazyLock<T, F> {}
impl<T: RefUnwindSafe + UnwindSafe, F: UnwindSafe> RefUnwindSafe for LazyLock<T, F> {}
impl<T: UnwindSafe, F: UnwindSafe> UnwindSafe for LazyLock<T, F> {}

impl<T, F: FnOnce() -> T> LazyLock<T, F> {
    /// A value that `f` makes on first access.
    #[track_caller]
    pub const fn new(f: F) -> LazyLock<T, F> {
        LazyLock {
            once: Once::named("LazyLock"),
            init: UnsafeCell::new(Some(f)),
            value: UnsafeCell::new(None),
        }
    }

    /// The value, made by the initialiser if this is the first access (a scheduling point).
    ///
    /// # Panics
    /// If the initialiser panicked, in this call or an earlier one, as std's does.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        this.once.run(
            |_| {
                // SAFETY: only the thread running the `Once` takes the initialiser and writes
                // the value, before completion.
                if unsafe { (*this.value.get()).is_some() } {
                    // A `static` made its value in an earlier execution, which it keeps for
                    // the whole process, as std's does.
                    return;
                }
                // The initialiser is gone once it ran: it panicked, in this execution or (for
                // a `static`) in an earlier one.
                let Some(f) = (unsafe { (*this.init.get()).take() }) else {
                    panic!("LazyLock instance has previously been poisoned");
                };
                let value = f();
                // SAFETY: as above.
                unsafe { *this.value.get() = Some(value) };
            },
            Location::caller(),
            true,
        );
        // SAFETY: see the `Sync` impl.
        unsafe { (*this.value.get()).as_ref() }.expect("the initialiser stored a value")
    }
}

impl<T, F: FnOnce() -> T> Deref for LazyLock<T, F> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T: Default> Default for LazyLock<T> {
    /// A value that `T::default` makes on first access.
    #[track_caller]
    fn default() -> LazyLock<T> {
        LazyLock::new(T::default)
    }
}

impl<T: fmt::Debug, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Looking at the state would be a scheduling point, which formatting must not add.
        f.debug_struct("LazyLock").finish_non_exhaustive()
    }
}
