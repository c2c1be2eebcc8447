//! Seed 002 (Jun Chen, thesis: *Guided Testing of Concurrent Programs Using Value Schedules*),
//! Table 3.2: the real (R) and benchmark (B) programs.
//!
//! The thesis evaluates its tool on the Java programs of Table 3.2, taken from the SIR
//! repository and the IBM ConTest benchmark, and describes each only by its thread count, its
//! size and the kind of failure with its cause (an exception or a deadlock, caused by a race or
//! by barging), plus a few remarks in the evaluation (Sections 4.3 and 6.4: which programs have
//! which kinds of conflicting accesses, that only two of raxextend's many threads race, that RW
//! has two readers and two writers, that the account programs lock elements of an array of
//! accounts and call synchronized methods on them, that account-subtype calls methods through
//! subtypes). Every program here is a small rebuild of the original application, written for
//! this suite from those descriptions and the well-known structure of the benchmark programs;
//! `daisy` is left out.
//!
//! Modelling conventions (as in [`super::seed002`]): a Java object with fields is a struct of
//! [`Var`]s (one tracked variable per field, so every field access is one scheduling point and is
//! race-checked); a `synchronized` method or block on an object is a critical section of a
//! `Mutex<()>` standing for that object's monitor, and `wait`/`notify`/`notifyAll` on it are a
//! [`Condvar`] used with that mutex. Where a monitor's state is never touched outside it, it is
//! kept inside the `Mutex` instead. Java's `x++` on a field is a separate read and write. A Java
//! exception thrown on a failed check is an `assert!` naming the check (bug kind `Assertion`);
//! a NullPointerException is an `unwrap()` on `None` (bug kind `Panic`).
//!
//! Thread counts are scaled down to at most four spawned threads (loom's limit) wherever the bug
//! survives it; every program says what it kept. Loops are bounded and every wait is guarded by
//! a condition that some thread still to run will make true, or by a shutdown flag, so each
//! program terminates under every schedule except by its bug.

use super::rt;
use super::rt::cell::Var;
use super::rt::sync::{Arc, Condvar, Mutex, MutexGuard};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

// ---------------------------------------------------------------------------------------------
// alarmclock
// ---------------------------------------------------------------------------------------------

/// Ticks the clock thread of [`alarmclock`] runs before it shuts the alarm clock down.
pub const ALARMCLOCK_TICKS: u32 = 4;
/// Steps of unrelated work the clock thread of [`alarmclock`] does after each tick.
pub const ALARMCLOCK_WORK: u32 = 8;
/// How many ticks each sleeper of [`alarmclock`] asks to sleep.
const ALARMCLOCK_NAPS: [u32; 2] = [1, 2];

/// The alarm clock monitor: the time, the sorted list of sleepers' wake-up times, and the
/// shutdown flag, all guarded by `monitor`.
struct AlarmClock {
    monitor: Mutex<()>,
    cv: Condvar,
    /// `now`, in ticks.
    now: Var<u32>,
    /// The wait list: `(wake-up time, sleeper id)`, earliest first. Its head is the next alarm.
    waiting: Var<Vec<(u32, usize)>>,
    /// Set when the clock stops ticking; wakes every sleeper still waiting.
    stopped: Var<bool>,
}

impl AlarmClock {
    /// `synchronized void wakeMe(int id, int ticks)`: enter the wait list in wake-up order,
    /// wait until the time has come (or the clock stopped), then leave the list.
    fn wake_me(&self, id: usize, ticks: u32) {
        let mut guard = self.monitor.lock().unwrap();
        let wake = self.now.get() + ticks;
        self.waiting.with_mut(|w| {
            let at = w.iter().position(|&(t, _)| t > wake).unwrap_or(w.len());
            w.insert(at, (wake, id));
        });
        while self.now.get() < wake && !self.stopped.get() {
            guard = self.cv.wait(guard).unwrap();
        }
        self.waiting.with_mut(|w| w.retain(|&(_, who)| who != id));
        drop(guard);
    }

    /// `waitList.isEmpty()` read by the clock thread without the monitor (the bug).
    fn has_sleepers_unsynchronized(&self) -> bool {
        self.waiting.with(|w| !w.is_empty())
    }

    /// `synchronized void tick()` of the buggy clock, called only when the clock saw sleepers:
    /// advance the time and wake the sleepers if the first one is due. It dereferences the head
    /// of the wait list without checking it again.
    fn tick_with_sleepers(&self) {
        let _monitor = self.monitor.lock().unwrap();
        let now = self.now.get() + 1;
        self.now.set(now);
        // `waitList.first().wakeTime`: a NullPointerException if the list emptied meanwhile.
        let (wake, _) = self.waiting.with(|w| w.first().copied()).unwrap();
        if wake <= now {
            self.cv.notify_all();
        }
    }

    /// `synchronized void idleTick()`: advance the time when nobody sleeps.
    fn idle_tick(&self) {
        let _monitor = self.monitor.lock().unwrap();
        let now = self.now.get() + 1;
        self.now.set(now);
    }

    /// The fixed `tick()`: the emptiness check and the use of the head in one critical section.
    fn tick(&self) {
        let _monitor = self.monitor.lock().unwrap();
        let now = self.now.get() + 1;
        self.now.set(now);
        if let Some((wake, _)) = self.waiting.with(|w| w.first().copied()) {
            if wake <= now {
                self.cv.notify_all();
            }
        }
    }

    /// `synchronized void shutDown()`: stop the clock and release every sleeper.
    fn shut_down(&self) {
        let _monitor = self.monitor.lock().unwrap();
        self.stopped.set(true);
        self.cv.notify_all();
    }
}

/// alarmclock (real, 3 threads, NullPointerException caused by a race): the clock thread reads
/// the head of the alarm clock's wait list after checking, without the monitor, that the list is
/// not empty; a sleeper leaving the list in between makes the head `null`.
///
/// Original: the SIR alarm-clock program: an `AlarmClock` monitor
/// keeps the time and an ordered list of sleeping threads; sleeper threads call `wakeMe(n)` to
/// sleep `n` ticks, a clock thread calls `tick()`, which advances the time and wakes the
/// sleepers when the first one is due. The thesis lists it with 3 threads and a
/// NullPointerException caused by a race (it has read/write, monitor, wait/monitor and
/// wait/notify conflicts, Table 4.2).
///
/// Rebuilt with the thesis's 3 threads: one clock thread and two sleepers (sleeping
/// `ALARMCLOCK_NAPS` ticks). Choices left open: the race is an optimisation in the clock
/// thread, which checks `waitList.isEmpty()` without the monitor and then calls a `tick()` that
/// reads `waitList.first()` without checking again (if the list is empty it only advances the
/// time); the clock runs [`ALARMCLOCK_TICKS`] ticks and then shuts the clock down, releasing any
/// sleeper still waiting (so every schedule terminates); after each tick the clock does
/// [`ALARMCLOCK_WORK`] steps of unrelated work, so a random walk usually lets a woken sleeper
/// leave the list before the clock looks at it again.
///
/// Bug: the clock wakes the last sleeper at tick `t`; at tick `t + 1` it sees the list
/// non-empty (the sleeper has not left yet), and the sleeper then removes itself before the
/// clock's `tick()` reads the head: `unwrap()` on `None`, the NullPointerException (bug kind
/// `Panic`). Depth 2: with the sleeper above the clock, one change point after the woken sleeper
/// reacquires the monitor (it then holds it while the clock checks the list, and empties the
/// list before the clock gets in). Fixed twin: `tick()` checks for a head and uses it in one
/// critical section.
pub fn alarmclock(variant: Variant) {
    let clock = Arc::new(AlarmClock {
        monitor: Mutex::new(()),
        cv: Condvar::new(),
        now: Var::new(0),
        waiting: Var::new(Vec::new()),
        stopped: Var::new(false),
    });

    let sleepers: Vec<_> = ALARMCLOCK_NAPS
        .iter()
        .enumerate()
        .map(|(id, &ticks)| {
            let c = clock.clone();
            thread::spawn(move || c.wake_me(id, ticks))
        })
        .collect();
    let ticker = {
        let c = clock.clone();
        thread::spawn(move || {
            for _ in 0..ALARMCLOCK_TICKS {
                match variant {
                    Variant::Buggy => {
                        if c.has_sleepers_unsynchronized() {
                            c.tick_with_sleepers();
                        } else {
                            c.idle_tick();
                        }
                    }
                    Variant::Fixed => c.tick(),
                }
                unrelated_work(ALARMCLOCK_WORK);
            }
            c.shut_down();
        })
    };
    ticker.join().unwrap();
    for s in sleepers {
        s.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// raxextend
// ---------------------------------------------------------------------------------------------

/// Planning rounds of the planner and executive of [`raxextend`].
pub const RAX_ROUNDS: u32 = 3;
/// Tokens in a plan of [`raxextend`].
const RAX_TOKENS: u32 = 2;
/// Synchronised writes each environment task of [`raxextend`] does.
const RAX_TASK_WRITES: u32 = 2;

/// An `Event` of the remote agent: a counter bumped by `signal_event` and waited on.
struct Event {
    monitor: Mutex<()>,
    cv: Condvar,
    /// `count`, written under the monitor, read by the planner and executive without it.
    count: Var<u32>,
    /// Set when the only signaller of this event has finished (ends every wait).
    closed: Var<bool>,
}

impl Event {
    fn new() -> Event {
        Event {
            monitor: Mutex::new(()),
            cv: Condvar::new(),
            count: Var::new(0),
            closed: Var::new(false),
        }
    }

    /// `synchronized void signal_event()`: bump the count and wake the waiters.
    fn signal_event(&self) {
        let _monitor = self.monitor.lock().unwrap();
        let c = self.count.get();
        self.count.set(c + 1);
        self.cv.notify_all();
    }

    /// `synchronized wait_for_event()`, guarded by the count the caller last saw (so no
    /// notification is lost): waits while the count is still `seen` and the signaller is alive,
    /// and returns the count it then reads under the monitor.
    fn wait_for_event(&self, seen: u32) -> u32 {
        let mut guard = self.monitor.lock().unwrap();
        while self.count.get() == seen && !self.closed.get() {
            guard = self.cv.wait(guard).unwrap();
        }
        let c = self.count.get();
        drop(guard);
        c
    }

    /// `Events.x.count` read without the monitor.
    fn count_unsynchronized(&self) -> u32 {
        self.count.get()
    }

    /// The signaller is done: release every waiter.
    fn close(&self) {
        let _monitor = self.monitor.lock().unwrap();
        self.closed.set(true);
        self.cv.notify_all();
    }
}

/// The remote agent's `Plan`: a timeline of tokens and the token being executed; every method
/// is synchronized.
struct Plan {
    state: Mutex<([u32; RAX_TOKENS as usize], u32)>,
}

impl Plan {
    fn generate(&self) {
        let mut s = self.state.lock().unwrap();
        for (i, token) in s.0.iter_mut().enumerate() {
            *token = 10 + i as u32;
        }
        s.1 = 0;
    }

    fn done(&self) -> bool {
        self.state.lock().unwrap().1 >= RAX_TOKENS
    }

    fn execute_token(&self) {
        self.state.lock().unwrap().1 += 1;
    }
}

/// raxextend (real, 11 threads, exception caused by a race): the planner of the NASA Remote
/// Agent model reads its event's count twice without the monitor; the executive's signal in
/// between trips the planner's consistency check.
///
/// Original: an extension of the Remote Agent (RAX) executive model used with Java PathFinder:
/// a planner and an executive hand control to each other through two `Event` objects (a
/// counter with `signal_event`/`wait_for_event`), plus groups of environment tasks that only
/// write, under their own monitors, to objects of their own. The planner compares its last seen
/// count with the event's count and, if unchanged, reads the count again and throws if it
/// differs before waiting; both reads are unsynchronised. The thesis notes that only two of the
/// many threads have conflicting accesses that can fail, the rest only contend for monitors (a
/// hard case for plain model checking).
///
/// Rebuilt with the planner, the executive and one environment group of two tasks (4 threads
/// instead of 11: the other groups and the diagnosis thread only add monitor contention
/// unrelated to the bug). Choices left open: the planner and executive run [`RAX_ROUNDS`]
/// rounds; `wait_for_event` waits only while the count is the one the caller saw, and the count
/// does not wrap around (the RAX program's own bug, a lost notification, is removed, so the
/// exception is the only failure); when one of the two finishes it closes the event the other
/// waits on, so neither waits for ever; plans have `RAX_TOKENS` tokens.
///
/// Bug: the planner finds its count equal to the plan event's count, is preempted, the
/// executive signals the plan event, and the planner's second read sees the new count: the
/// check `count == Events.plan.count` fails (bug kind `Assertion`, the original's
/// `RuntimeException`). Depth 2: with the planner above the executive, one change point
/// right after the planner's first read in a later round (the executive, then above it, runs
/// its round and signals). A random walk seldom has the executive's signal fall into that one
/// step (about one execution in eight), since the executive first executes the whole plan. Fixed twin: the planner reads the
/// count, compares and waits in one critical section of the event's monitor.
pub fn raxextend(variant: Variant) {
    let plan_event = Arc::new(Event::new());
    let exec_event = Arc::new(Event::new());
    let plan = Arc::new(Plan {
        state: Mutex::new(([0; RAX_TOKENS as usize], 0)),
    });
    let shared = Arc::new(Mutex::new(0u32));

    let planner = {
        let (pe, ee, plan) = (plan_event.clone(), exec_event.clone(), plan.clone());
        thread::spawn(move || {
            let mut count = 0;
            for _ in 0..RAX_ROUNDS {
                match variant {
                    Variant::Buggy => {
                        if count == pe.count_unsynchronized() {
                            let again = pe.count_unsynchronized();
                            assert!(
                                count == again,
                                "raxextend: the plan event's count must not change between the planner's check and its wait ({count} then {again})"
                            );
                            pe.wait_for_event(count);
                        }
                        count = pe.count_unsynchronized();
                    }
                    Variant::Fixed => count = pe.wait_for_event(count),
                }
                plan.generate();
                ee.signal_event();
            }
            ee.close();
        })
    };
    let executive = {
        let (pe, ee, plan) = (plan_event.clone(), exec_event.clone(), plan.clone());
        thread::spawn(move || {
            let mut count = 0;
            for _ in 0..RAX_ROUNDS {
                pe.signal_event();
                match variant {
                    Variant::Buggy => {
                        if count == ee.count_unsynchronized() {
                            ee.wait_for_event(count);
                        }
                        count = ee.count_unsynchronized();
                    }
                    Variant::Fixed => count = ee.wait_for_event(count),
                }
                while !plan.done() {
                    plan.execute_token();
                }
            }
            pe.close();
        })
    };
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let shared = shared.clone();
            thread::spawn(move || {
                for _ in 0..RAX_TASK_WRITES {
                    *shared.lock().unwrap() = 0; // Shared.write(0)
                }
            })
        })
        .collect();
    planner.join().unwrap();
    executive.join().unwrap();
    for t in tasks {
        t.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// RW-deadlock, RW-exception
// ---------------------------------------------------------------------------------------------

/// Reads (writes) each reader (writer) of [`rw_exception`] does.
pub const RW_ROUNDS: u32 = 2;
/// Reads (writes) each reader (writer) of [`rw_deadlock`] does.
pub const RW_DEADLOCK_ROUNDS: u32 = 1;

/// The readers-writers monitor (`RWVSN`) and the printer built on it (`RWPrinter`). Every field
/// but `record` is guarded by `monitor`, except where the buggy version reads or writes one
/// outside it.
struct ReadersWriters {
    monitor: Mutex<()>,
    cv: Condvar,
    active_readers: Var<i32>,
    active_writers: Var<i32>,
    waiting_readers: Var<i32>,
    waiting_writers: Var<i32>,
    /// The printer's count of readers inside `doRead`.
    reading: Var<i32>,
    /// The printer's count of writers inside `doWrite`.
    writing: Var<i32>,
    /// The shared record readers read and writers update (readers-writers protected).
    record: Var<u32>,
    /// The fixed twin increments `activeReaders` inside the monitor.
    fixed: bool,
    /// Whether the printer checks for a reader and a writer inside at once (RW-exception).
    check_overlap: bool,
}

fn bump(v: &Var<i32>, by: i32) {
    let x = v.get();
    v.set(x + by);
}

impl ReadersWriters {
    fn new(variant: Variant, check_overlap: bool) -> ReadersWriters {
        ReadersWriters {
            monitor: Mutex::new(()),
            cv: Condvar::new(),
            active_readers: Var::new(0),
            active_writers: Var::new(0),
            waiting_readers: Var::new(0),
            waiting_writers: Var::new(0),
            reading: Var::new(0),
            writing: Var::new(0),
            record: Var::new(0),
            fixed: variant == Variant::Fixed,
            check_overlap,
        }
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, ()>) -> MutexGuard<'a, ()> {
        self.cv.wait(guard).unwrap()
    }

    /// `beforeRead()`: wait until no writer is active or waiting, then count in as an active
    /// reader. The buggy version does the count after leaving the monitor (its synchronized
    /// region was shrunk).
    fn before_read(&self) {
        let mut guard = self.monitor.lock().unwrap();
        bump(&self.waiting_readers, 1);
        while !(self.waiting_writers.get() == 0 && self.active_writers.get() == 0) {
            guard = self.wait(guard);
        }
        bump(&self.waiting_readers, -1);
        if self.fixed {
            bump(&self.active_readers, 1);
            drop(guard);
        } else {
            drop(guard);
            bump(&self.active_readers, 1); // ++activeReaders, unprotected
        }
    }

    /// `afterRead()`.
    fn after_read(&self) {
        let _monitor = self.monitor.lock().unwrap();
        bump(&self.active_readers, -1);
        self.cv.notify_all();
    }

    /// `beforeWrite()`: wait until no reader or writer is active.
    fn before_write(&self) {
        let mut guard = self.monitor.lock().unwrap();
        bump(&self.waiting_writers, 1);
        while !(self.active_readers.get() == 0 && self.active_writers.get() == 0) {
            guard = self.wait(guard);
        }
        bump(&self.waiting_writers, -1);
        bump(&self.active_writers, 1);
        drop(guard);
    }

    /// `afterWrite()`.
    fn after_write(&self) {
        let _monitor = self.monitor.lock().unwrap();
        bump(&self.active_writers, -1);
        self.cv.notify_all();
    }

    /// `RWPrinter.doRead()`.
    fn do_read(&self) {
        bump_locked(&self.monitor, &self.reading, 1);
        if self.check_overlap {
            let writing = self.writing.get();
            assert!(
                writing == 0,
                "RW: no writer may be writing while a reader reads (writing = {writing})"
            );
        }
        let _ = self.record.get();
        bump_locked(&self.monitor, &self.reading, -1);
    }

    /// `RWPrinter.doWrite()`.
    fn do_write(&self) {
        bump_locked(&self.monitor, &self.writing, 1);
        if self.check_overlap {
            let reading = self.reading.get();
            assert!(
                reading == 0,
                "RW: no reader may be reading while a writer writes (reading = {reading})"
            );
        }
        let r = self.record.get();
        self.record.set(r + 1);
        bump_locked(&self.monitor, &self.writing, -1);
    }

    fn read(&self) {
        self.before_read();
        self.do_read();
        self.after_read();
    }

    fn write(&self) {
        self.before_write();
        self.do_write();
        self.after_write();
    }
}

/// `synchronized (this) { v += by; }`
fn bump_locked(monitor: &Mutex<()>, v: &Var<i32>, by: i32) {
    let _monitor = monitor.lock().unwrap();
    bump(v, by);
}

/// The RW test driver: `readers` readers and `writers` writers, `rounds` operations each, all
/// started at once, or (`writers_last`) the writers started once the readers are done.
fn rw(
    variant: Variant,
    readers: usize,
    writers: usize,
    rounds: u32,
    check_overlap: bool,
    writers_last: bool,
) {
    let rw = Arc::new(ReadersWriters::new(variant, check_overlap));
    let mut handles = Vec::new();
    for _ in 0..readers {
        let rw = rw.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..rounds {
                rw.read();
            }
        }));
    }
    if writers_last {
        for h in handles.drain(..) {
            h.join().unwrap();
        }
    }
    for _ in 0..writers {
        let rw = rw.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..rounds {
                rw.write();
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
}

/// RW-deadlock (real, 4 threads, deadlock caused by a race): a reader increments the monitor's
/// count of active readers after leaving the monitor; two readers' updates of the count
/// interleave, the count ends off by one, and the writers wait for ever for it to reach zero.
///
/// Original: the SIR readers-writers program: an abstract readers-writers monitor `RWVSN`
/// (`beforeRead`/`afterRead`/`beforeWrite`/`afterWrite` keeping counts of active and waiting
/// readers and writers, writers preferred, `wait`/`notifyAll`) and a printer subclass whose
/// `doRead`/`doWrite` touch a shared record; the driver starts the readers, then the writers,
/// each looping a bounded number of times. The injected bug moves `++activeReaders` out of the
/// synchronized block of `beforeRead`. The thesis splits the program into two test cases by how
/// the bug shows: this one (two readers and two writers; the thesis attributes the failure to
/// the conflicting reads and writes of the counter and calls the monitor contention benign)
/// and [`rw_exception`].
///
/// Rebuilt with 2 readers and 2 writers, [`RW_DEADLOCK_ROUNDS`] operation each; the unprotected
/// increment is a read and a write of `activeReaders`. Choices left open: as a test case for
/// the deadlock, the printer does not check for overlapping readers and writers (that check is
/// [`rw_exception`]'s), so the deadlock is the only failure; and the driver starts the writers
/// once the readers are done (the original starts them after the readers; here they also wait
/// for the readers to finish). Without that, a writer that is running anyway gets in whenever
/// the corrupted count passes through 0 on its way to -1 or +1, and only a schedule that also
/// holds every writer back (one more preemption per writer) deadlocks.
///
/// Bug: both readers read `activeReaders` before either writes it back, and both write before
/// either counts out (or one reads it while the other is inside and writes it back after the
/// other counted out); the count ends at -1 or +1 instead of 0, `allowWriter()` never holds
/// again, and the writers wait for ever (bug kind `Deadlock`). Depth 3: a change point right
/// after one reader's read of the counter, and a lower one while the other reader is inside
/// (after its write of the counter, before it counts out). Fixed twin: the increment is back
/// inside the monitor.
pub fn rw_deadlock(variant: Variant) {
    rw(variant, 2, 2, RW_DEADLOCK_ROUNDS, false, true);
}

/// RW-exception (real, 4 threads, exception caused by a race): the same readers-writers program
/// as [`rw_deadlock`]; a writer slips in while a reader is between leaving the monitor and
/// counting itself active, and a reader and a writer end up inside at once, which the printer
/// detects and throws.
///
/// Original: as for [`rw_deadlock`]; the SIR printer's `doWrite` throws
/// a `RuntimeException` when it finds a reader inside (`reading > 0`).
///
/// Rebuilt with 1 reader and 2 writers (3 threads instead of 4): with a single reader the
/// reader count cannot lose an update, so the deadlock of [`rw_deadlock`] is impossible and the
/// exception is this test case's only failure. Choices left open: the printer checks for the
/// overlap on both sides, the writer (`reading > 0`, as in SIR) and, symmetrically, the reader
/// (`writing > 0`, with a `writing` count kept like `reading`); each thread does [`RW_ROUNDS`]
/// operations.
///
/// Bug: the reader leaves `beforeRead`'s monitor, a writer passes `beforeWrite` (it still sees
/// no active reader) and starts writing, and the reader, counting itself in and entering
/// `doRead`, finds the writer writing (or the writer finds the reader reading): the failed check
/// is the original's exception (bug kind `Assertion`). Depth 3: with the reader above the
/// writer, a change point after the reader leaves the monitor and a lower one after the writer
/// has marked itself writing. Fixed twin: the increment is back inside the monitor.
pub fn rw_exception(variant: Variant) {
    rw(variant, 1, 2, RW_ROUNDS, true, false);
}

// ---------------------------------------------------------------------------------------------
// replicatedworker
// ---------------------------------------------------------------------------------------------

/// Worker threads of [`replicatedworker`].
pub const REPWORKER_WORKERS: usize = 2;
/// Steps of unrelated work a worker of [`replicatedworker`] does to process an item, and again
/// to process its results.
pub const REPWORKER_WORK: u32 = 4;
/// Steps of unrelated work worker `w` of [`replicatedworker`] does before its first `take` is
/// `w` times this.
pub const REPWORKER_START: u32 = 12;
/// The initial work items of [`replicatedworker`]: an item `n > 0` produces item `n - 1`.
const REPWORKER_ITEMS: [u32; 1] = [2];

/// The replicated-workers `Coordinator`: the work pool, the count of workers blocked in
/// `take`, and the termination flag, guarded by `monitor`.
struct Coordinator {
    monitor: Mutex<()>,
    cv: Condvar,
    pool: Var<Vec<u32>>,
    blocked_takers: Var<i32>,
    done: Var<bool>,
    /// Sum of the processed items (the results pool).
    results: Var<u32>,
}

impl Coordinator {
    /// `notifyTakerChange()`, with the monitor held: wake the main thread when every worker is
    /// blocked taking work.
    fn notify_taker_change(&self) {
        if self.blocked_takers.get() == REPWORKER_WORKERS as i32 {
            self.cv.notify_all();
        }
    }

    /// `Vector take(1)`: count in as a blocked taker, wait for an item or termination, count
    /// out. The buggy version (its synchronization pushed inward) counts in, and may notify,
    /// before entering the monitor.
    fn take(&self, variant: Variant) -> Option<u32> {
        if variant == Variant::Buggy {
            bump(&self.blocked_takers, 1); // ++blockedTakers, unprotected
            if self.pool.with(|p| p.is_empty()) && !self.done.get() {
                let _monitor = self.monitor.lock().unwrap();
                self.notify_taker_change();
            }
        }
        let mut guard = self.monitor.lock().unwrap();
        if variant == Variant::Fixed {
            bump(&self.blocked_takers, 1);
            if self.pool.with(|p| p.is_empty()) && !self.done.get() {
                self.notify_taker_change();
            }
        }
        while self.pool.with(|p| p.is_empty()) && !self.done.get() {
            guard = self.cv.wait(guard).unwrap();
        }
        let item = if self.done.get() {
            None
        } else {
            self.pool.with_mut(|p| p.pop())
        };
        bump(&self.blocked_takers, -1);
        self.notify_taker_change();
        drop(guard);
        item
    }

    /// `synchronized void add(Vector v)` plus `notifyPoolChange()`.
    fn add(&self, items: &[u32]) {
        let _monitor = self.monitor.lock().unwrap();
        self.pool.with_mut(|p| p.extend_from_slice(items));
        if !items.is_empty() {
            self.cv.notify_all();
        }
    }

    /// `mainAwaitTerminate()` and the shutdown after it: wait until every worker is blocked
    /// taking work (the pool is drained), then set `done` and release the workers.
    fn await_termination(&self) {
        let mut guard = self.monitor.lock().unwrap();
        while self.blocked_takers.get() != REPWORKER_WORKERS as i32 && !self.done.get() {
            guard = self.cv.wait(guard).unwrap();
        }
        self.done.set(true);
        self.cv.notify_all();
        drop(guard);
    }
}

/// replicatedworker (real, 5 threads, deadlock caused by a race): a worker counts itself as
/// blocked outside the coordinator's monitor; two updates of the count interleave, the count
/// never reaches the number of workers, and the main thread waits for ever for the workers to
/// drain the pool while they wait for work.
///
/// Original: Dwyer's replicated-workers abstraction (SIR): a `Coordinator` monitor guards a work
/// pool and counts the workers blocked in `take`; workers repeatedly take work, process it
/// (possibly producing new work, put back with `add`) and the main thread detects termination
/// when every worker is blocked with the pool empty, then sets `done` and wakes them. The
/// injected error pushes the synchronization of `take` inward, so `++blockedTakers` (and the
/// check that may notify the main thread) run outside the monitor. The thesis lists it with 5
/// threads and a deadlock caused by a race.
///
/// Rebuilt with [`REPWORKER_WORKERS`] workers and the main thread (3 threads instead of 5; one
/// lost update needs only two workers). Choices left open: the work is an adaptive-quadrature
/// stand-in where item `n > 0` produces item `n - 1`, starting from `REPWORKER_ITEMS` (a
/// chain, so mostly one worker works while the other waits for work); a worker takes one item
/// at a time, processes it ([`REPWORKER_WORK`] steps of unrelated work), puts the new work back,
/// then processes the results ([`REPWORKER_WORK`] more steps, and a synchronized update of the
/// results) before taking again; worker `w` starts after `w * `[`REPWORKER_START`] steps of
/// unrelated work; the main thread's `done` is set under the coordinator's monitor (only the
/// counter is unprotected). The work between the coordinator calls keeps a random walk from
/// often interleaving two workers' updates of the counter.
///
/// Bug: both workers read `blockedTakers` before either writes its increment back, so one
/// increment is lost and the count stays one too low for ever. When the pool drains, the
/// workers wait for work with `blockedTakers` one short of the worker count, the main thread
/// waits for it to reach the worker count, and no one is left to notify: a deadlock (bug kind
/// `Deadlock`). (The other lost update, a stale increment written over the other worker's
/// decrement, leaves the count one too high; the main thread then stops the workers early,
/// which this test does not check.) Depth 2: one change point between a worker's read and write
/// of the counter, while the other worker counts itself in. Fixed twin: `take` counts in and
/// checks inside the monitor.
pub fn replicatedworker(variant: Variant) {
    let coord = Arc::new(Coordinator {
        monitor: Mutex::new(()),
        cv: Condvar::new(),
        pool: Var::new(REPWORKER_ITEMS.to_vec()),
        blocked_takers: Var::new(0),
        done: Var::new(false),
        results: Var::new(0),
    });
    let workers: Vec<_> = (0..REPWORKER_WORKERS)
        .map(|w| {
            let c = coord.clone();
            thread::spawn(move || {
                unrelated_work(w as u32 * REPWORKER_START);
                while let Some(item) = c.take(variant) {
                    unrelated_work(REPWORKER_WORK);
                    let new_work: &[u32] = if item > 0 { &[item - 1] } else { &[] };
                    c.add(new_work);
                    // process the results
                    unrelated_work(REPWORKER_WORK);
                    let _monitor = c.monitor.lock().unwrap();
                    let r = c.results.get();
                    c.results.set(r + item);
                }
            })
        })
        .collect();
    coord.await_termination();
    for w in workers {
        w.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// boundedbuffer
// ---------------------------------------------------------------------------------------------

/// Capacity of the buffer of [`boundedbuffer`].
const BB_SIZE: usize = 1;
/// Producers (and consumers) of [`boundedbuffer`].
pub const BB_THREADS: usize = 2;
/// Items each producer puts (and each consumer gets) in [`boundedbuffer`].
pub const BB_ITEMS: u32 = 2;

/// Steps of unrelated work a consumer of [`boundedbuffer`] does before each `get`.
pub const BB_CONSUMER_WORK: u32 = 3;
/// Steps of unrelated work a producer of [`boundedbuffer`] does before each `put`.
pub const BB_PRODUCER_WORK: u32 = 3;

/// The bounded buffer's state, all inside its monitor (the program has no unprotected access).
struct BufferState {
    buf: [Option<u32>; BB_SIZE],
    count: usize,
    put_at: usize,
    take_at: usize,
}

/// The slot after `at` in the circular array.
fn next_slot(at: usize) -> usize {
    if at + 1 == BB_SIZE {
        0
    } else {
        at + 1
    }
}

/// `BufferImpl`: a bounded buffer monitor with one wait set for producers and consumers.
struct BoundedBuffer {
    state: Mutex<BufferState>,
    cv: Condvar,
    /// The buggy version wakes one waiter (`notify()`), the fixed one all (`notifyAll()`).
    notify_all: bool,
}

impl BoundedBuffer {
    fn notify(&self) {
        if self.notify_all {
            self.cv.notify_all();
        } else {
            self.cv.notify_one();
        }
    }

    /// `synchronized void put(Object o)`.
    fn put(&self, item: u32) {
        let mut s = self.state.lock().unwrap();
        while s.count == BB_SIZE {
            s = self.cv.wait(s).unwrap();
        }
        let at = s.put_at;
        s.buf[at] = Some(item);
        s.count += 1;
        s.put_at = next_slot(at);
        self.notify();
    }

    /// `synchronized Object get()`.
    fn get(&self) -> u32 {
        let mut s = self.state.lock().unwrap();
        while s.count == 0 {
            s = self.cv.wait(s).unwrap();
        }
        let at = s.take_at;
        let item = s.buf[at].take().unwrap();
        s.count -= 1;
        s.take_at = next_slot(at);
        self.notify();
        item
    }
}

/// boundedbuffer (real, 8 threads, deadlock): a bounded buffer whose `put` and `get` wake one
/// waiter with `notify()`; with several producers and consumers on one wait set, a notification
/// can wake a thread of the wrong kind, which goes back to waiting, and eventually every thread
/// waits.
///
/// Original: Magee and Kramer's `BufferImpl` (SIR): a monitor with a circular array, `put`
/// waiting while the buffer is full and `get` while it is empty (`while` loops), each ending
/// with `notify()`; the driver starts equally many producers and consumers, each putting or
/// getting the same number of items. The thesis lists it with 8 threads (4 producers, 4
/// consumers); it has no unprotected field access, only monitor, wait/monitor and wait/notify
/// conflicts (Table 4.2).
///
/// Rebuilt with a buffer of size `BB_SIZE`, [`BB_THREADS`] producers and as many consumers
/// (4 threads instead of 8), [`BB_ITEMS`] items each. Choice left open: a producer makes each
/// item ([`BB_PRODUCER_WORK`] steps of unrelated work) before putting it, and a consumer does
/// [`BB_CONSUMER_WORK`] steps before each `get`; this spreads the threads' arrivals at the
/// monitor, so that a random walk mostly finds a waiter of the right kind to wake (without it,
/// a fifth of the random executions deadlock).
///
/// Bug: e.g. both consumers wait on the empty buffer; a producer puts and wakes one consumer,
/// then both producers wait on the full buffer before that consumer runs; the woken consumer
/// gets the item and its `notify()` wakes the other consumer instead of a producer (which
/// waiter a notification wakes is the scheduler's choice, in Java as in std); that consumer
/// finds the buffer empty and waits again, the first consumer comes back for its second item
/// and waits too: all four threads wait (bug kind `Deadlock`). A random walk finds it within
/// a few hundred executions; PCT, whose fixed priorities keep handing each notification to the
/// same waiter, needs about a thousand. Fixed twin: `notifyAll()`, so every waiter re-checks
/// its condition.
pub fn boundedbuffer(variant: Variant) {
    let buffer = Arc::new(BoundedBuffer {
        state: Mutex::new(BufferState {
            buf: [None; BB_SIZE],
            count: 0,
            put_at: 0,
            take_at: 0,
        }),
        cv: Condvar::new(),
        notify_all: variant == Variant::Fixed,
    });
    let mut handles = Vec::new();
    for p in 0..BB_THREADS {
        let b = buffer.clone();
        handles.push(thread::spawn(move || {
            for i in 0..BB_ITEMS {
                unrelated_work(BB_PRODUCER_WORK);
                b.put(p as u32 * 10 + i);
            }
        }));
    }
    for _ in 0..BB_THREADS {
        let b = buffer.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..BB_ITEMS {
                unrelated_work(BB_CONSUMER_WORK);
                let _ = b.get();
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// linkedlist
// ---------------------------------------------------------------------------------------------

/// Nodes each builder of [`linkedlist`] appends.
pub const LINKEDLIST_PER_BUILDER: u32 = 3;
/// Steps of unrelated work the second builder of [`linkedlist`] does before it starts.
pub const LINKEDLIST_PREP: u32 = 24;

/// A list node: its value and `next` pointer (an index into the list's node arena).
struct Node {
    value: Var<u32>,
    next: Var<Option<usize>>,
}

/// `MyLinkedList`: a header node, a tail pointer and a size, shared by the builders with no
/// synchronization (the fixed twin adds `lock`).
struct LinkedList {
    /// Node 0 is the header; node `v + 1` holds value `v`.
    nodes: Vec<Node>,
    tail: Var<usize>,
    size: Var<usize>,
    lock: Mutex<()>,
}

impl LinkedList {
    /// `addLast(v)`: fetch the tail, build the node, write the tail's `next` back, advance the
    /// tail and count the node.
    fn add(&self, value: u32, fixed: bool) {
        let guard = fixed.then(|| self.lock.lock().unwrap());
        let node = value as usize + 1;
        let last = self.tail.get(); // fetch
        self.nodes[node].value.set(value); // build the node
        self.nodes[last].next.set(Some(node)); // write back
        self.tail.set(node);
        let size = self.size.get();
        self.size.set(size + 1);
        drop(guard);
    }
}

/// linkedlist (benchmark, 2 threads, exception caused by a race): two threads append to the same
/// unsynchronized linked list; both fetch the same tail and one's `next` write overwrites the
/// other's, so the list loses nodes that its size still counts, and walking it hits `null`.
///
/// Original: the IBM benchmark's linked-list bug (`BugTester`): builder threads each append a
/// range of values to one shared list with no synchronization, so that a builder's fetch of
/// the last node and its later update of that node's `next` can straddle the other builder's
/// append; the driver then prints and empties the list, walking `size` nodes (6 in the SIR
/// test). The thesis lists it with 2 threads and read/write conflicts only.
///
/// Rebuilt as is: two builders append values `0..3` and `3..6`
/// ([`LINKEDLIST_PER_BUILDER`] each); the main thread then walks `size` nodes from the header.
/// Choice left open: the second builder first does [`LINKEDLIST_PREP`] steps of unrelated work
/// (preparing its range), so a random walk usually lets the first builder finish its appends
/// before the second starts.
///
/// Bug: builder A fetches the tail, builder B appends from the same tail (and advances the tail
/// past its node), A writes its node into the old tail's `next`, cutting B's nodes off the list;
/// the size counts them all, so the walk reaches a node whose `next` is `null`: `unwrap()` on
/// `None`, the NullPointerException (bug kind `Panic`). Depth 2: one change point between a
/// builder's fetch and write back, while the other appends. Fixed twin: `add` is synchronized.
pub fn linkedlist(variant: Variant) {
    let nodes = (0..=2 * LINKEDLIST_PER_BUILDER)
        .map(|_| Node {
            value: Var::new(0),
            next: Var::new(None),
        })
        .collect();
    let list = Arc::new(LinkedList {
        nodes,
        tail: Var::new(0),
        size: Var::new(0),
        lock: Mutex::new(()),
    });
    let fixed = variant == Variant::Fixed;
    let builders: Vec<_> = (0..2)
        .map(|b| {
            let list = list.clone();
            thread::spawn(move || {
                if b == 1 {
                    unrelated_work(LINKEDLIST_PREP);
                }
                let from = b * LINKEDLIST_PER_BUILDER;
                for v in from..from + LINKEDLIST_PER_BUILDER {
                    list.add(v, fixed);
                }
            })
        })
        .collect();
    for b in builders {
        b.join().unwrap();
    }
    // print() and empty(): walk `size` nodes from the header.
    let mut at = 0;
    let mut sum = 0;
    for _ in 0..list.size.get() {
        at = list.nodes[at].next.get().unwrap(); // NullPointerException on a lost node
        sum += list.nodes[at].value.get();
    }
    let _ = sum;
}

// ---------------------------------------------------------------------------------------------
// piper
// ---------------------------------------------------------------------------------------------

/// Seats of the plane of [`piper`].
const PIPER_SEATS: u32 = 1;
/// Passenger threads (and as many flight threads) of [`piper`].
pub const PIPER_THREADS: usize = 2;
/// Boardings per passenger thread (and flights per flight thread) of [`piper`].
pub const PIPER_TRIPS: u32 = 2;
/// Steps of unrelated work a passenger thread of [`piper`] does before each boarding.
pub const PIPER_WALK: u32 = 3;

/// The plane (`Piper`) monitor: how many passengers are on board.
struct Piper {
    on_board: Mutex<u32>,
    cv: Condvar,
    /// Whether the waits are `while` loops (fixed) or `if`s (buggy).
    recheck: bool,
}

impl Piper {
    /// Waits on the monitor while `blocked` holds (once, if the buggy version's `if`).
    fn wait_while<'a>(
        &self,
        mut guard: MutexGuard<'a, u32>,
        blocked: impl Fn(u32) -> bool,
    ) -> MutexGuard<'a, u32> {
        if self.recheck {
            while blocked(*guard) {
                guard = self.cv.wait(guard).unwrap();
            }
        } else if blocked(*guard) {
            guard = self.cv.wait(guard).unwrap();
        }
        guard
    }

    /// `synchronized void fillPlane(String name)`: board when there is a free seat.
    fn fill_plane(&self) {
        let guard = self.on_board.lock().unwrap();
        let mut guard = self.wait_while(guard, |n| n >= PIPER_SEATS);
        *guard += 1;
        self.cv.notify_all();
    }

    /// `synchronized void emptyPlane()`: fly when the plane is full, landing everyone on board.
    fn empty_plane(&self) {
        let guard = self.on_board.lock().unwrap();
        let mut guard = self.wait_while(guard, |n| n < PIPER_SEATS);
        *guard = 0;
        self.cv.notify_all();
    }
}

/// piper (benchmark, 32 threads, deadlock caused by barging): a plane monitor whose waits are
/// `if`s instead of `while` loops; a woken passenger boards although another thread got to the
/// monitor first and the plane is full again, one flight carries too many passengers, and the
/// last flight waits for ever for a passenger that never comes.
///
/// Original: the IBM benchmark's `Piper`, driven by an airline simulation: passenger threads
/// call `fillPlane` to take a seat on a small plane, flight threads call `emptyPlane` to fly it
/// when it is full; both wait on the plane's monitor and wake each other with `notifyAll`. The
/// thesis lists it with 32 threads, a deadlock caused by barging, and only monitor and wait
/// conflicts (Table 4.2).
///
/// Rebuilt with [`PIPER_THREADS`] passenger threads and as many flight threads (4 threads
/// instead of 32), a plane of `PIPER_SEATS` seat, [`PIPER_TRIPS`] boardings per passenger
/// thread and as many flights per flight thread (boardings and flights balance, so a correct
/// monitor always finishes). Choices left open: the barging bug is taken to be a wait that is
/// not re-checked in a loop (`if` instead of `while`), so a thread woken by `notifyAll` that
/// does not get the monitor first (another thread barges in, or another woken thread goes
/// first) proceeds on a stale condition; a flight lands everyone on board (`passengers = 0`);
/// a passenger thread walks to the gate ([`PIPER_WALK`] steps of unrelated work) before each
/// boarding, so a random walk seldom has both passengers waiting at a full plane at once.
///
/// Bug: both passenger threads wait at the full plane; a flight empties it and `notifyAll`
/// wakes both; the first boards (the plane is full again), and the second, not re-checking,
/// boards too: two passengers in one seat. That flight carries both, so one boarding fewer is
/// left than flights, and the last flight waits for ever (bug kind `Deadlock`). (A woken flight
/// that finds the plane already flown by another flies empty; with these counts that alone
/// never deadlocks.) With PCT it needs only the passengers above the flights (no change point).
/// Fixed twin: `while` loops.
pub fn piper(variant: Variant) {
    let plane = Arc::new(Piper {
        on_board: Mutex::new(0),
        cv: Condvar::new(),
        recheck: variant == Variant::Fixed,
    });
    let mut handles = Vec::new();
    for _ in 0..PIPER_THREADS {
        let p = plane.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..PIPER_TRIPS {
                unrelated_work(PIPER_WALK);
                p.fill_plane();
            }
        }));
        let p = plane.clone();
        handles.push(thread::spawn(move || {
            for _ in 0..PIPER_TRIPS {
                p.empty_plane();
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// account-race, account-deadlock, account-subtype
// ---------------------------------------------------------------------------------------------

/// Balance every account of the account programs starts with.
const ACCOUNT_INITIAL: i64 = 100;
/// Amount of every transfer in the account programs.
const ACCOUNT_AMOUNT: i64 = 10;
/// Accounts (and transfer threads) of [`account_race`] and [`account_subtype`].
pub const ACCOUNT_THREADS: usize = 3;
/// Steps of unrelated work a transfer thread of [`account_race`] and [`account_subtype`] does
/// before its transfer (thread `i` does `i` times this).
pub const ACCOUNT_WORK: u32 = 16;

/// An `Account`: its balance and its monitor.
struct Account {
    monitor: Mutex<()>,
    amount: Var<i64>,
}

impl Account {
    fn new() -> Account {
        Account {
            monitor: Mutex::new(()),
            amount: Var::new(ACCOUNT_INITIAL),
        }
    }

    /// `amount += by` without any lock held for this account; returns the new balance.
    fn add_unlocked(&self, by: i64) -> i64 {
        let a = self.amount.get();
        self.amount.set(a + by);
        a + by
    }

    /// `synchronized void deposit(int m)` (also `withdraw` with a negative amount); returns the
    /// new balance.
    fn deposit(&self, by: i64) -> i64 {
        let _monitor = self.monitor.lock().unwrap();
        self.add_unlocked(by)
    }
}

fn total(accounts: &[Arc<Account>]) -> i64 {
    accounts
        .iter()
        .map(|a| {
            let _monitor = a.monitor.lock().unwrap();
            a.amount.get()
        })
        .sum()
}

/// account-race (benchmark, 5 threads, exception caused by a race): `transfer` is synchronized
/// on the source account only and adds to the destination's balance directly, racing with the
/// destination's own synchronized updates; a lost update changes the bank's total, which the
/// driver checks.
///
/// Original: the IBM benchmark's bank-account program: an array of accounts with synchronized
/// `deposit`, `withdraw` and `transfer` methods, `ManageAccount` threads moving money between
/// the accounts, and a driver that checks the bank's total at the end and throws if it changed.
/// The thesis lists it with 5 threads and an exception caused by a race, and notes that the
/// threads lock elements of the accounts array and call synchronized methods on them.
///
/// Rebuilt with [`ACCOUNT_THREADS`] accounts and as many threads (3 instead of 5), thread `i`
/// transferring `ACCOUNT_AMOUNT` from account `i` to account `i + 1` (mod 3). Choices left
/// open: the race is in `transfer`, which holds only the source account's monitor while it also
/// does `to.amount += amount`; thread `i` first does `i * `[`ACCOUNT_WORK`] steps of unrelated
/// work, so a random walk usually runs the transfers one after the other; a transfer checks
/// that it did not overdraw its source account, which never happens here (90 or 100 remain,
/// even after a lost update), so that check is an ordinary branch on a value the schedule
/// decides.
///
/// Bug: thread `i` reads `to.amount` under `from`'s monitor, thread `i + 1` updates the same
/// balance under its own monitor (its withdrawal), and thread `i` writes back its stale sum: one
/// update is lost and the total is off by the amount; the driver's check fails (bug kind
/// `Assertion`). Depth 2: one change point between the read and the write of a balance.
/// Fixed twin: `transfer` withdraws under `from`'s monitor and then calls `to.deposit` (under
/// `to`'s monitor; the monitors are not nested, so no lock order to get wrong).
pub fn account_race(variant: Variant) {
    let accounts: Arc<Vec<Arc<Account>>> = Arc::new(
        (0..ACCOUNT_THREADS)
            .map(|_| Arc::new(Account::new()))
            .collect(),
    );
    let threads: Vec<_> = (0..ACCOUNT_THREADS)
        .map(|i| {
            let accounts = accounts.clone();
            thread::spawn(move || {
                unrelated_work(i as u32 * ACCOUNT_WORK);
                let from = &accounts[i];
                let to = &accounts[(i + 1) % ACCOUNT_THREADS];
                let left = match variant {
                    Variant::Buggy => {
                        let _monitor = from.monitor.lock().unwrap();
                        let left = from.add_unlocked(-ACCOUNT_AMOUNT);
                        // to.amount += amount, under from's monitor only
                        to.add_unlocked(ACCOUNT_AMOUNT);
                        left
                    }
                    Variant::Fixed => {
                        let left = from.deposit(-ACCOUNT_AMOUNT);
                        to.deposit(ACCOUNT_AMOUNT);
                        left
                    }
                };
                assert!(
                    rt::branch(left >= 0),
                    "account-race: the transfer overdrew account {i} to {left}"
                );
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let sum = total(&accounts);
    let bank_total = ACCOUNT_THREADS as i64 * ACCOUNT_INITIAL;
    // The driver's `if (bankTotal != sum) throw ...`.
    assert!(
        rt::branch(sum == bank_total),
        "account-race: transfers must preserve the bank's total: {sum}, expected {bank_total}"
    );
}

/// Steps of unrelated work the second transfer thread of [`account_deadlock`] does first.
pub const ACCOUNT_DEADLOCK_WORK: u32 = 6;

/// account-deadlock (benchmark, 5 threads, deadlock): `transfer` holds the source account's
/// monitor and calls the destination's synchronized `deposit`; two transfers between the same two
/// accounts in opposite directions take the two monitors in opposite orders.
///
/// Original: the bank-account program of [`account_race`] (same size, 5 threads) in the form
/// whose bug is a deadlock.
///
/// Rebuilt with 3 accounts and 3 transfer threads (instead of 5). Choices left open: the
/// synchronized `transfer` calls the destination's `deposit`, synchronized too, so a transfer
/// holds both monitors, the source's first; thread 0 transfers from account 0 to account 1,
/// thread 1 from account 1 to account 0 (the opposite order), thread 2 from account 2 to
/// account 0 (contending for account 0 without closing a cycle); thread 1 first does
/// [`ACCOUNT_DEADLOCK_WORK`] steps of unrelated work, so a random walk usually lets thread 0
/// finish its transfer before thread 1 starts.
///
/// Bug: thread 0 holds account 0 and waits for account 1 while thread 1 holds account 1 and
/// waits for account 0 (thread 2 then blocks on account 0 as well): a deadlock. Depth 2: the
/// thread above must be preempted right after taking its first monitor. Fixed twin: `transfer`
/// takes the two monitors in a global order (lower account index first), so the lock-order
/// graph is acyclic.
pub fn account_deadlock(variant: Variant) {
    let accounts: Arc<Vec<Account>> = Arc::new((0..3).map(|_| Account::new()).collect());
    let pairs = [(0, 1), (1, 0), (2, 0)];
    let threads: Vec<_> = pairs
        .into_iter()
        .enumerate()
        .map(|(t, (from, to))| {
            let accounts = accounts.clone();
            thread::spawn(move || {
                if t == 1 {
                    unrelated_work(ACCOUNT_DEADLOCK_WORK);
                }
                let (first, second) = match variant {
                    Variant::Buggy => (from, to),
                    Variant::Fixed => (from.min(to), from.max(to)),
                };
                let _first = accounts[first].monitor.lock().unwrap();
                let _second = accounts[second].monitor.lock().unwrap();
                accounts[from].add_unlocked(-ACCOUNT_AMOUNT);
                accounts[to].add_unlocked(ACCOUNT_AMOUNT);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let sum: i64 = accounts.iter().map(|a| a.amount.get()).sum();
    assert_eq!(
        sum,
        3 * ACCOUNT_INITIAL,
        "account-deadlock: transfers must preserve the bank's total"
    );
}

/// The account interface of [`account_subtype`]: every account type inherits the synchronized
/// `deposit` and `withdraw` of the base class unless it overrides them.
trait AccountType: Send + Sync {
    /// The base-class part of the object.
    fn account(&self) -> &Account;

    /// `synchronized void deposit(int m)`, inherited.
    fn deposit(&self, by: i64) {
        self.account().deposit(by);
    }

    /// `synchronized void withdraw(int m)`, inherited.
    fn withdraw(&self, by: i64) {
        self.account().deposit(-by);
    }
}

/// `PersonalAccount extends Account`: inherits everything.
struct PersonalAccount {
    base: Account,
}

impl AccountType for PersonalAccount {
    fn account(&self) -> &Account {
        &self.base
    }
}

/// `BusinessAccount extends Account`: overrides `deposit` to also count the deposits it
/// receives, and the override (in the buggy version) is not synchronized.
struct BusinessAccount {
    base: Account,
    deposits: Var<u32>,
    synchronized: bool,
}

impl AccountType for BusinessAccount {
    fn account(&self) -> &Account {
        &self.base
    }

    fn deposit(&self, by: i64) {
        let guard = self.synchronized.then(|| self.base.monitor.lock().unwrap());
        let a = self.base.amount.get();
        let d = self.deposits.get();
        self.deposits.set(d + 1);
        self.base.amount.set(a + by);
        drop(guard);
    }
}

/// account-subtype (benchmark, 5 threads, exception caused by a race): a subclass of `Account`
/// overrides the synchronized `deposit` with an unsynchronized one; deposits into accounts of
/// that type race with the account's own synchronized withdrawals, and the bank's total, checked
/// by the driver, changes.
///
/// Original: the bank-account program with account subtypes (`accountsubtype`, usually run with
/// business and personal accounts): `Account` has synchronized methods, `BusinessAccount` and
/// `PersonalAccount` extend it, and one subtype overrides a method without synchronization. The
/// thesis lists it with 5 threads, notes that it calls the updates through polymorphic call
/// sites, and that only the threads touching some types of accounts race.
///
/// Rebuilt with [`ACCOUNT_THREADS`] accounts (business, personal, business: 2 business accounts
/// and 1 personal one) and as many transfer threads (3 instead of 5); thread `i`
/// withdraws `ACCOUNT_AMOUNT` from account `i` and deposits it into account `i + 1` (mod 3)
/// through the account interface (a trait object, Java's virtual call). Choices left open: the
/// override also counts deposits (a read and write between its read and write of the balance),
/// and thread `i` first does `i * `[`ACCOUNT_WORK`] steps of unrelated work, so a random walk
/// usually runs the transfers one after the other.
///
/// Bug: a deposit into a business account reads its balance, the account's own thread withdraws
/// from it (synchronized, which does not help against an unsynchronized writer), and the deposit
/// writes back its stale sum: the withdrawal is lost and the total is off; the driver's check
/// fails (bug kind `Assertion`). The personal account's updates are all synchronized and never
/// race. Depth 2: one change point inside the overriding `deposit`. Fixed twin: the override is
/// synchronized.
pub fn account_subtype(variant: Variant) {
    let synchronized = variant == Variant::Fixed;
    let accounts: Arc<Vec<Box<dyn AccountType>>> = Arc::new(
        (0..ACCOUNT_THREADS)
            .map(|i| -> Box<dyn AccountType> {
                if i % 2 == 0 {
                    Box::new(BusinessAccount {
                        base: Account::new(),
                        deposits: Var::new(0),
                        synchronized,
                    })
                } else {
                    Box::new(PersonalAccount {
                        base: Account::new(),
                    })
                }
            })
            .collect(),
    );
    let threads: Vec<_> = (0..ACCOUNT_THREADS)
        .map(|i| {
            let accounts = accounts.clone();
            thread::spawn(move || {
                unrelated_work(i as u32 * ACCOUNT_WORK);
                accounts[i].withdraw(ACCOUNT_AMOUNT);
                accounts[(i + 1) % ACCOUNT_THREADS].deposit(ACCOUNT_AMOUNT);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let sum: i64 = accounts
        .iter()
        .map(|a| {
            let _monitor = a.account().monitor.lock().unwrap();
            a.account().amount.get()
        })
        .sum();
    assert_eq!(
        sum,
        ACCOUNT_THREADS as i64 * ACCOUNT_INITIAL,
        "account-subtype: transfers must preserve the bank's total"
    );
}

/// The programs of this module, in the order of the thesis's Table 3.2.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "valsched-alarmclock",
        origin: "Chen (value schedules), Table 3.2 (real: alarmclock)",
        bug: BugKind::Panic,
        summary: "the clock checks the wait list without the monitor, a sleeper leaves, and the clock dereferences the now-null head",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: alarmclock,
    },
    Program {
        name: "valsched-raxextend",
        origin: "Chen (value schedules), Table 3.2 (real: raxextend)",
        bug: BugKind::Assertion,
        summary: "the planner reads its event's count twice without the monitor and the executive's signal lands in between",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: raxextend,
    },
    Program {
        name: "valsched-rw-deadlock",
        origin: "Chen (value schedules), Table 3.2 (real: RW-deadlock)",
        bug: BugKind::Deadlock,
        summary: "readers count themselves active outside the monitor, a lost update leaves the count non-zero and writers wait for ever",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 10_000,
        },
        long: false,
        needs_weak_memory: false,
        run: rw_deadlock,
    },
    Program {
        name: "valsched-rw-exception",
        origin: "Chen (value schedules), Table 3.2 (real: RW-exception)",
        bug: BugKind::Assertion,
        summary: "a writer enters while a reader is between leaving the monitor and counting itself active, and they overlap",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: rw_exception,
    },
    Program {
        name: "valsched-replicatedworker",
        origin: "Chen (value schedules), Table 3.2 (real: replicatedworker)",
        bug: BugKind::Deadlock,
        summary: "workers count themselves blocked outside the coordinator's monitor, a lost update hides termination from the main thread",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: replicatedworker,
    },
    Program {
        name: "valsched-boundedbuffer",
        origin: "Chen (value schedules), Table 3.2 (real: boundedbuffer)",
        bug: BugKind::Deadlock,
        summary: "notify instead of notifyAll with several producers and consumers: a wake-up reaches the wrong kind of thread and all end up waiting",
        found_by: Finding {
            strategy: "random",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: boundedbuffer,
    },
    Program {
        name: "valsched-linkedlist",
        origin: "Chen (value schedules), Table 3.2 (benchmark: linkedlist)",
        bug: BugKind::Panic,
        summary: "two unsynchronized appends fetch the same tail, one overwrites the other's next pointer, and walking size nodes hits null",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: linkedlist,
    },
    Program {
        name: "valsched-piper",
        origin: "Chen (value schedules), Table 3.2 (benchmark: piper)",
        bug: BugKind::Deadlock,
        summary: "waits in if instead of while: two woken passengers both board one seat, and the last flight waits for ever",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: piper,
    },
    Program {
        name: "valsched-account-race",
        origin: "Chen (value schedules), Table 3.2 (benchmark: account-race)",
        bug: BugKind::Assertion,
        summary: "transfer updates the destination's balance under the source's monitor only, losing a concurrent update",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: account_race,
    },
    Program {
        name: "valsched-account-deadlock",
        origin: "Chen (value schedules), Table 3.2 (benchmark: account-deadlock)",
        bug: BugKind::Deadlock,
        summary: "two transfers between the same accounts in opposite directions take the two monitors in opposite orders",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: account_deadlock,
    },
    Program {
        name: "valsched-account-subtype",
        origin: "Chen (value schedules), Table 3.2 (benchmark: account-subtype)",
        bug: BugKind::Assertion,
        summary: "a subclass overrides the synchronized deposit without synchronization, losing concurrent withdrawals",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: account_subtype,
    },
];
