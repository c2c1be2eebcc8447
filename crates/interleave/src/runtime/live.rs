//! Which executions are running right now, and on which OS threads; and the turns that
//! explorations running at once take at the objects they share.
//!
//! An object's handle remembers the execution that registered it last (its tag). A handle
//! that lives outside any execution, in a `static`, is seen by every exploration of the
//! process: cargo runs tests on parallel OS threads and `Builder::workers` runs executions on
//! several, and two executions that use the same static primitive at the same time would share
//! its data behind each other's back (two threads in one critical section, one on each OS
//! thread). Before an execution takes over a handle that another execution registered, it asks
//! this registry whether that execution is still running.
//!
//! If that execution belongs to the same exploration (its workers), the object is shared and
//! the execution fails at once with the object's site and the remedies: waiting would make the
//! object's data depend on the workers' timing, and so the report. If it belongs to another
//! exploration (another test that cargo runs at the same time), the execution waits for its
//! turn ([`wait_for_turn`]), as two std tests sharing a static would, one execution at a time:
//! until the owner's execution ends and every execution of another exploration that asked for
//! the object earlier has had it. An execution's objects stay its own until it ends, so two
//! executions that each wait for an object the other holds would wait for ever: the waits are
//! a graph, and the wait that would close a cycle gives up, as does one that lasts longer than
//! [`LONGEST_WAIT`]; that execution then fails as before, naming the object and the remedies.
//!
//! Cost: each OS thread that runs executions publishes the tag of its current execution with
//! one store at the start and one at the end of an execution, and the end reads one counter of
//! waiting executions. The registry itself is read only when a handle registered by another
//! execution is used again, which happens only to objects that outlive an execution (statics,
//! leaked values).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The execution an OS thread runs, or 0 between executions.
struct OsThread {
    tag: AtomicU64,
    /// The exploration the execution belongs to (see [`new_exploration`]).
    exploration: AtomicU64,
    os_thread: String,
}

/// Every OS thread that ever ran an execution and still exists.
static REGISTRY: Mutex<Vec<Arc<OsThread>>> = Mutex::new(Vec::new());

fn lock_registry() -> MutexGuard<'static, Vec<Arc<OsThread>>> {
    // The registry is a list of handles; a panic elsewhere leaves it consistent.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This OS thread's entry, registered on first use and removed when the thread exits.
struct Registration(Arc<OsThread>);

impl Registration {
    fn new() -> Registration {
        let running = Arc::new(OsThread {
            tag: AtomicU64::new(0),
            exploration: AtomicU64::new(0),
            os_thread: std::thread::current()
                .name()
                .unwrap_or("<unnamed>")
                .to_string(),
        });
        lock_registry().push(running.clone());
        Registration(running)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock_registry().retain(|running| !Arc::ptr_eq(running, &self.0));
    }
}

thread_local! {
    static REGISTRATION: Registration = Registration::new();
}

/// A number for a new exploration, unique in the process and never 0: the executions of one
/// exploration share objects only one after the other, those of two may wait for each other.
pub(crate) fn new_exploration() -> u64 {
    static EXPLORATIONS: AtomicU64 = AtomicU64::new(1);
    EXPLORATIONS.fetch_add(1, Ordering::Relaxed)
}

/// Publishes that the execution tagged `tag`, of exploration `exploration`, runs on this OS
/// thread until the returned guard is dropped.
pub(crate) fn start(tag: u64, exploration: u64) -> Live {
    // Release: whoever sees a handle this execution registered (an acquire load of its slot)
    // also sees that the execution runs. During the OS thread's exit the registration may be
    // gone; the execution then simply is not listed.
    let _ = REGISTRATION.try_with(|r| {
        r.0.exploration.store(exploration, Ordering::Relaxed);
        r.0.tag.store(tag, Ordering::SeqCst);
    });
    Live(())
}

/// The guard of [`start`]: the execution is over when it is dropped, also by unwinding.
pub(crate) struct Live(());

impl Drop for Live {
    fn drop(&mut self) {
        // Release: an execution that takes over one of this execution's objects next sees what
        // this one wrote into it. SeqCst with the waiters' count: a waiter counts itself
        // before it looks whether this execution still runs, so either it sees the end or
        // this end sees it and wakes it.
        let _ = REGISTRATION.try_with(|r| r.0.tag.store(0, Ordering::SeqCst));
        if WAITING.load(Ordering::SeqCst) > 0 {
            let _waits = lock_waits();
            TURNS.notify_all();
        }
    }
}

/// The entry of the OS thread that runs the execution tagged `tag`, if it runs.
fn running(tag: u64) -> Option<Arc<OsThread>> {
    lock_registry()
        .iter()
        .find(|running| running.tag.load(Ordering::Acquire) == tag)
        .cloned()
}

/// Whether the execution tagged `tag` is running.
pub(crate) fn runs(tag: u64) -> bool {
    running(tag).is_some()
}

/// The name of the OS thread on which the execution tagged `tag` is running, if it is.
pub(crate) fn running_on(tag: u64) -> Option<String> {
    running(tag).map(|running| running.os_thread.clone())
}

/// Whether the execution tagged `tag` runs and belongs to exploration `exploration`.
pub(crate) fn runs_in(tag: u64, exploration: u64) -> bool {
    running(tag).is_some_and(|running| running.exploration.load(Ordering::Relaxed) == exploration)
}

/// The longest an execution waits for its turn at an object another exploration uses.
pub(crate) const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// How often a waiting execution looks again without being woken, and tells the watchdog
/// that it is waiting rather than hung.
const RECHECK: Duration = Duration::from_millis(50);

/// An execution waiting for its turn at an object.
struct Waiter {
    tag: u64,
    exploration: u64,
    /// The address of the object's handle.
    object: usize,
    /// The execution it waits for now (the object's running owner or a waiter ahead of it),
    /// 0 while it waits for no one: the edges of the graph of waits.
    waits_for: u64,
}

/// The executions waiting for their turn, in the order they began to wait.
static WAITS: Mutex<Vec<Waiter>> = Mutex::new(Vec::new());
/// Signalled when an execution ends or a waiter gives up its place.
static TURNS: Condvar = Condvar::new();
/// How many executions wait, so that an execution's end looks at [`WAITS`] only if any does.
static WAITING: AtomicUsize = AtomicUsize::new(0);

fn lock_waits() -> MutexGuard<'static, Vec<Waiter>> {
    // The list is plain data; a panic elsewhere leaves it consistent.
    WAITS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether an execution of an exploration other than `exploration` waits for its turn at the
/// object whose handle is at `object`: an execution of `exploration` then lets it go first.
pub(crate) fn others_wait_for(object: usize, exploration: u64) -> bool {
    WAITING.load(Ordering::SeqCst) > 0
        && lock_waits()
            .iter()
            .any(|w| w.object == object && w.exploration != exploration)
}

/// Why an execution stopped waiting without its turn.
#[derive(Debug)]
pub(crate) enum NoTurn {
    /// The execution it waited for waits, through others perhaps, for this one.
    Cycle,
    /// It waited [`LONGEST_WAIT`].
    TooLong,
}

/// Waits until the execution tagged `tag`, of exploration `exploration`, may take over the
/// object whose handle is at `object`: no execution of another exploration that waits for it
/// came first, and `owner()`, the tag of the object's last owner, names no running execution.
/// The caller then claims it while the returned [`Turn`] keeps its place, so that no later
/// execution of another exploration takes it first. `beat` is called at every look, for the
/// watchdog.
pub(crate) fn wait_for_turn(
    tag: u64,
    exploration: u64,
    object: usize,
    owner: impl Fn() -> u64,
    beat: impl Fn(),
) -> Result<Turn, NoTurn> {
    let started = Instant::now();
    let mut waits = lock_waits();
    waits.push(Waiter {
        tag,
        exploration,
        object,
        waits_for: 0,
    });
    WAITING.fetch_add(1, Ordering::SeqCst);
    let outcome = loop {
        beat();
        let mine = waits
            .iter()
            .position(|w| w.tag == tag)
            .expect("a waiter stays listed until it stops waiting");
        let ahead = waits[..mine]
            .iter()
            .find(|w| w.object == object && w.exploration != exploration)
            .map(|w| w.tag);
        let owner = owner();
        let blocker = match ahead {
            Some(ahead) => ahead,
            None if owner != 0 && owner != tag && runs(owner) => owner,
            None => return Ok(Turn { tag }),
        };
        waits[mine].waits_for = blocker;
        if closes_a_cycle(&waits, tag) {
            break NoTurn::Cycle;
        }
        let left = LONGEST_WAIT.saturating_sub(started.elapsed());
        if left.is_zero() {
            break NoTurn::TooLong;
        }
        waits = TURNS
            .wait_timeout(waits, left.min(RECHECK))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    };
    // Leave before the list is unlocked, so that the waiter this one waited for cannot find
    // the same cycle and give up too.
    leave(&mut waits, tag);
    Err(outcome)
}

/// Takes the waiter tagged `tag` off the list and wakes the others: those behind it may go now,
/// or find a cycle no longer there.
fn leave(waits: &mut Vec<Waiter>, tag: u64) {
    waits.retain(|w| w.tag != tag);
    WAITING.fetch_sub(1, Ordering::SeqCst);
    TURNS.notify_all();
}

/// An execution's place among the waiters, kept while it claims the object it waited for.
pub(crate) struct Turn {
    tag: u64,
}

impl Drop for Turn {
    fn drop(&mut self) {
        leave(&mut lock_waits(), self.tag);
    }
}

/// Whether following the waits from `tag` leads back to it.
fn closes_a_cycle(waits: &[Waiter], tag: u64) -> bool {
    let mut at = tag;
    for _ in 0..=waits.len() {
        let Some(next) = waits.iter().find(|w| w.tag == at).map(|w| w.waits_for) else {
            return false;
        };
        if next == tag {
            return true;
        }
        if next == 0 {
            return false;
        }
        at = next;
    }
    false
}
