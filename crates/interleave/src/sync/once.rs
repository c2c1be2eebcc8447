//! `Once` and `OnceLock`: one-time initialisation. A thread that arrives while another runs
//! the initialiser blocks until it completes. An initialiser that panics poisons the `Once`, as
//! std's does: `call_once` then panics, `call_once_force` runs again and sees the poison, and a
//! `OnceLock` stays empty and tries again on its next use.

use std::cell::UnsafeCell;
use std::fmt;
use std::panic::{Location, RefUnwindSafe, UnwindSafe};

use crate::runtime;
use crate::runtime::object::{Holder, ObjState, ObjectHandle};
use crate::runtime::op::{ObjIdx, ObjectKind, Site};
use crate::runtime::op_on;

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
        let panicked = std::thread::panicking();
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
        runtime::with(|ex| {
            let done = matches!(
                ex.objects[idx as usize].state,
                ObjState::Once { done: true, .. }
            );
            if done {
                ex.acquire(idx);
            }
            done
        })
    }
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

    /// The value, initialising it with `f` if needed.
    #[track_caller]
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        self.init(f, Location::caller())
    }

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
