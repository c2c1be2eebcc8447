//! Tracked shared variables for plain racy data.
//!
//! [`Var`] models a field or global that threads read and write without atomics (a Java field,
//! a C global): every access is a scheduling point, and every access is checked for data races
//! with vector clocks. A race fails the execution, or with `RaceMode::Warn` becomes a warning.
//! [`UnsafeCell`] is shaped like loom's: raw-pointer access for code that builds its own
//! synchronisation, where any race fails the execution.

use std::cell::UnsafeCell as StdUnsafeCell;
use std::fmt;
use std::panic::Location;

use crate::analysis::online::race;
use crate::runtime;
use crate::runtime::object::ObjectHandle;
use crate::runtime::op::{ObjIdx, ObjectKind, Op, OpKind, Site};
use crate::runtime::{FailureKind, RaceMode};

/// Schedules an access of `kind` to the variable `handle`, checks it for races, and runs `f`.
/// An access inside another access's closure (loom allows it, and sharded-slab's loom models
/// do it) takes no scheduling point, since the outer reference is live, and is checked for
/// races as part of the outer access's step.
#[inline(always)]
#[track_caller]
fn access<R>(
    handle: &ObjectHandle,
    kind: OpKind,
    site: Site,
    always_fail: bool,
    f: impl FnOnce() -> R,
) -> R {
    let outer = runtime::access_in_progress();
    if outer != 0 {
        return nested_access(handle, outer, kind, site, always_fail, f);
    }
    let idx = runtime::switch_on(handle, ObjectKind::Var, |idx| Op::new(kind, idx), site).index();
    check_races(idx, kind, site, always_fail);
    runtime::set_access_in_progress(handle as *const ObjectHandle as usize);
    // Cleared even when `f` panics: a flag left set would refuse the next access on this OS
    // thread, in this execution's other threads and in later explorations.
    let _access = AccessGuard;
    f()
}

/// An access inside the closure of the access to the cell whose handle is at `outer`.
#[cold]
#[inline(never)]
#[track_caller]
fn nested_access<R>(
    handle: &ObjectHandle,
    outer: usize,
    kind: OpKind,
    site: Site,
    always_fail: bool,
    f: impl FnOnce() -> R,
) -> R {
    assert!(
        outer != handle as *const ObjectHandle as usize,
        "a closure passed to Var::with/with_mut (or UnsafeCell::with/with_mut) accessed the \
         same cell again, while the reference it was given is live"
    );
    let idx = runtime::with(|ex| ex.object(handle, ObjectKind::Var));
    check_races(idx, kind, site, always_fail);
    f()
}

/// Checks the running thread's access of `kind` to `Var` `idx` at `site` for data races, and
/// fails the execution (or warns) when it races.
#[inline(always)]
#[track_caller]
fn check_races(idx: ObjIdx, kind: OpKind, site: Site, always_fail: bool) {
    let write = kind != OpKind::Read;
    let failed = runtime::with_in_data_step(|ex| {
        let Some(found) = race::access(ex, idx, write, site) else {
            return false;
        };
        if race::in_last_arc_drop(found.earlier.site, site) {
            return false;
        }
        let (message, mut cited) = race::describe(ex, idx, write, site, &found);
        if always_fail || ex.limits().races == RaceMode::Fail {
            cited.push(found.earlier.step);
            ex.fail_at_steps(FailureKind::DataRace, message, &cited);
            true
        } else {
            ex.warn(message);
            false
        }
    });
    if failed {
        runtime::stop_if_failed();
    }
}

/// Records a variable's creation inside an execution as the running thread's write of its
/// initial value, so that a thread that reaches the variable without the happens-before of its
/// creation (a node published through a `Relaxed` pointer) races with it. A variable made
/// outside every execution (before `check`, or in a `static`) has no creating thread, and its
/// first access is its first write or read, as before. Not inlined: it runs once per variable,
/// and the lookup of the execution would otherwise sit in every constructor's caller.
#[inline(never)]
fn record_creation(handle: &ObjectHandle) {
    runtime::try_with(|ex| race::created(ex, handle));
}

/// Ends the access in progress when its closure ends, by returning or by unwinding.
struct AccessGuard;

impl Drop for AccessGuard {
    #[inline(always)]
    fn drop(&mut self) {
        runtime::set_access_in_progress(0);
    }
}

/// A shared variable whose every access is a scheduling point and is checked for data races.
///
/// ```
/// use interleave::cell::Var;
/// use interleave::sync::Arc;
/// use interleave::{Builder, FailureKind};
///
/// let report = Builder::new()
///     .explore(|| {
///         let flag = Arc::new(Var::new(false));
///         let other = flag.clone();
///         let t = interleave::thread::spawn(move || other.set(true));
///         let _ = flag.get(); // unsynchronised with the write: a data race
///         t.join().unwrap();
///     })
///     .unwrap();
/// assert_eq!(report.first_failure().unwrap().kind, FailureKind::DataRace);
/// ```
pub struct Var<T> {
    handle: ObjectHandle,
    value: StdUnsafeCell<T>,
}

// SAFETY: all threads of an execution are coroutines on one OS thread and only one runs at a
// time; accesses happen between scheduling points (an access nested inside `with`/`with_mut`
// takes none, and one to the same cell is refused), so they never overlap.
unsafe impl<T: Send> Sync for Var<T> {}

impl<T> Var<T> {
    /// A new variable holding `value`. Inside an execution, the creation counts as the
    /// running thread's write of `value` (see [`record_creation`]).
    #[track_caller]
    pub fn new(value: T) -> Var<T> {
        let var = Var {
            handle: ObjectHandle::new(Location::caller()),
            value: StdUnsafeCell::new(value),
        };
        record_creation(&var.handle);
        var
    }

    /// Reads the value.
    #[inline]
    #[track_caller]
    pub fn get(&self) -> T
    where
        T: Clone,
    {
        // SAFETY: see the `Sync` impl.
        self.with(|value| value.clone())
    }

    /// Writes `value`.
    #[inline]
    #[track_caller]
    pub fn set(&self, value: T) {
        access(
            &self.handle,
            OpKind::Write,
            Location::caller(),
            false,
            || {
                // SAFETY: see the `Sync` impl.
                unsafe { *self.value.get() = value };
            },
        );
    }

    /// Replaces the value with `f(value)` in one step (a read and a write).
    #[inline]
    #[track_caller]
    pub fn update(&self, f: impl FnOnce(T) -> T)
    where
        T: Clone,
    {
        access(
            &self.handle,
            OpKind::Update,
            Location::caller(),
            false,
            || {
                // SAFETY: see the `Sync` impl.
                let slot = unsafe { &mut *self.value.get() };
                *slot = f(slot.clone());
            },
        );
    }

    /// Writes `value` and returns the previous value, in one step.
    #[inline]
    #[track_caller]
    pub fn replace(&self, value: T) -> T {
        access(
            &self.handle,
            OpKind::Update,
            Location::caller(),
            false,
            || {
                // SAFETY: see the `Sync` impl.
                std::mem::replace(unsafe { &mut *self.value.get() }, value)
            },
        )
    }

    /// Runs `f` with a shared reference to the value (a read).
    #[inline]
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        access(
            &self.handle,
            OpKind::Read,
            Location::caller(),
            false,
            || {
                // SAFETY: see the `Sync` impl.
                f(unsafe { &*self.value.get() })
            },
        )
    }

    /// Runs `f` with a mutable reference to the value (a write).
    #[inline]
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        access(
            &self.handle,
            OpKind::Write,
            Location::caller(),
            false,
            || {
                // SAFETY: see the `Sync` impl.
                f(unsafe { &mut *self.value.get() })
            },
        )
    }

    /// A mutable reference to the value; no scheduling is needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// Consumes the variable and returns the value.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: Default> Default for Var<T> {
    #[track_caller]
    fn default() -> Var<T> {
        Var::new(T::default())
    }
}

impl<T> fmt::Debug for Var<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Var").finish_non_exhaustive()
    }
}

/// A loom-shaped `UnsafeCell`: access through raw pointers, and any data race fails the
/// execution whatever the race mode.
pub struct UnsafeCell<T: ?Sized> {
    handle: ObjectHandle,
    value: StdUnsafeCell<T>,
}

// SAFETY: as for `Var`; in addition the caller promises the synchronisation, and any race is
// reported before the racing access runs.
unsafe impl<T: ?Sized + Send> Sync for UnsafeCell<T> {}

impl<T> UnsafeCell<T> {
    /// A new cell holding `value`. Inside an execution, the creation counts as the running
    /// thread's write of `value` (see [`record_creation`]), as loom counts it.
    #[track_caller]
    pub fn new(value: T) -> UnsafeCell<T> {
        let cell = UnsafeCell {
            handle: ObjectHandle::named(Location::caller(), "UnsafeCell"),
            value: StdUnsafeCell::new(value),
        };
        record_creation(&cell.handle);
        cell
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a const pointer to the value (a read).
    #[inline]
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        access(&self.handle, OpKind::Read, Location::caller(), true, || {
            f(self.value.get())
        })
    }

    /// Runs `f` with a mutable pointer to the value (a write).
    #[inline]
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        access(
            &self.handle,
            OpKind::Write,
            Location::caller(),
            true,
            || f(self.value.get()),
        )
    }

    /// A mutable reference to the value; no scheduling is needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: ?Sized> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnsafeCell").finish_non_exhaustive()
    }
}
