//! Seed 002 (Jun Chen, thesis: *Guided Testing of Concurrent Programs Using Value Schedules*),
//! Table 3.2: the kernel programs (K).
//!
//! The thesis evaluates its tool on eleven small "kernel" programs from the SIR/IBM collections,
//! each designed to show one kind of concurrency bug. It lists them in Table 3.2 with their
//! thread count, size and failure (exception caused by a race, by barging or by an atomicity
//! violation, or a deadlock), and Table 4.2 counts the kinds of conflicting access pairs the
//! static analysis finds in each: read/write pairs on fields (RW), pairs of monitor entries
//! (MM), wait/monitor-entry pairs (WM) and wait/notify pairs (WN). The thesis gives no source
//! code, so every program here is rebuilt from that description and from the well-known shape
//! of the kernel program of that name; each doc comment records the choices that were open.
//!
//! Conventions: a Java `synchronized` block or method is a critical section of a `Mutex` that
//! holds the fields the monitor guards; `wait`/`notify`/`notifyAll` on that monitor are a
//! `Condvar` paired with it (one wait set per monitor, as in Java). A field read or written
//! without its monitor is a [`Var`], so every such access is a scheduling point and is checked
//! for races. A Java exception thrown on a failed check is an `assert!` naming the invariant
//! (bug kind `Assertion`); an exception the JVM raises by itself (an array index out of bounds)
//! is the corresponding natural Rust panic (bug kind `Panic`). Where the original surrounding
//! code is unknown, `unrelated_work` stands for it, placed in the thread whose conflicting
//! access must arrive late, so that a random walk exposes each bug only in a small fraction of
//! its executions.

use super::rt::cell::Var;
use super::rt::sync::{Arc, Condvar, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work the reader of [`twostage`] does before its first stage.
pub const TWOSTAGE_PREP: u32 = 6;
/// Steps of unrelated work the second thread of [`wronglock`] does before its increment.
pub const WRONGLOCK_PREP: u32 = 6;
/// Steps of unrelated work a producer of [`producerconsumer`] does before each `put`.
pub const PRODUCERCONSUMER_WORK: u32 = 4;
/// Steps of unrelated work a party of [`blockbarrier`] does before each `await`.
pub const BLOCKBARRIER_WORK: u32 = 8;
/// Steps of unrelated work the setter of [`reorder`] does before its writes.
pub const REORDER_PREP: u32 = 6;
/// Steps of unrelated work the second thread of [`deadlock_d1`] does before its first lock.
pub const DEADLOCK_D1_PREP: u32 = 6;
/// Steps of unrelated work the second thread of [`deadlock_d2`] does before it bows.
pub const DEADLOCK_D2_PREP: u32 = 6;
/// Steps of unrelated work (thinking) philosopher `i` of [`diningphilosopher`] does before
/// each meal is `DINING_THINK * (i + 1)`.
pub const DINING_THINK: u32 = 2;
/// Steps of unrelated work the notifier of [`losenotify`] does before it notifies.
pub const LOSENOTIFY_PREP: u32 = 6;
/// Steps of unrelated work each task of [`clean`] does to process an event before it signals
/// the other task.
pub const CLEAN_WORK: u32 = 4;
/// Steps of unrelated work the waiter of [`nestedmonitor`] does before it takes the monitors.
pub const NESTEDMONITOR_PREP: u32 = 6;

// ---------------------------------------------------------------------------------------------
// twostage
// ---------------------------------------------------------------------------------------------

/// The two data objects of [`twostage`], each guarded by its own monitor.
struct TwoStage {
    /// `data1.value`, guarded by `data1`'s monitor.
    data1: Mutex<i32>,
    /// `data2.value`, guarded by `data2`'s monitor.
    data2: Mutex<i32>,
}

/// twostage (2 threads, exception caused by a race): a value is published in two stages, each
/// in its own critical section, and a reader that also reads in two stages can see the first
/// stage done and the second not.
///
/// Original (Table 3.2: 2 threads, 52 lines; Table 4.2: no RW pair, 2 MM pairs, i.e. every
/// field access is inside a monitor and the bug lies in how the critical sections are split):
/// the classic two-stage access. The writer sets `data1.value = 1` holding `data1`'s monitor,
/// releases it, then sets `data2.value = data1.value + 1` holding `data2`'s monitor, using the
/// value it read in the first block. The reader, holding `data1`'s monitor, returns if
/// `data1.value` is still 0 and otherwise keeps it as `t1`; then, holding `data2`'s monitor, it
/// reads `t2 = data2.value` and throws if `t2 != t1 + 1`.
///
/// Rebuilt as is, each monitor a `Mutex<i32>` holding its object's `value`. The bug needs the
/// reader's two critical sections to fall between the writer's two: the writer must be
/// preempted right after its first stage (PCT depth 2: writer above reader, one change point
/// after the writer's first critical section). Choice left open: the reader first does
/// [`TWOSTAGE_PREP`] steps of unrelated work, so a random walk usually lets the writer finish
/// both stages first (or, less often, the reader sees `data1.value == 0` and returns). The
/// failed check is an assertion (bug kind `Assertion`). Fixed twin: both threads hold `data1`'s
/// monitor across both stages (nesting `data2`'s inside it, in the same order in both
/// threads), so each two-stage access is atomic.
///
/// `THREADS` is the number of threads the program spawns: `THREADS - 1` writers, started first,
/// and one reader, as in SCTBench's scaled versions `twostage_X` (Thomson, Donaldson, Betts,
/// PPoPP 2014), where X counts the threads. The thesis's program is `twostage::<2>`. With more
/// writers the reader's two critical sections must fall between the first writer's first stage
/// and the first second stage of any writer: each writer that runs on past its own first stage
/// closes the window, so the reader, started last, must come between one writer's two stages
/// before any other writer gets there. Still one preemption (PCT depth 2), but every other
/// writer must stay below the main thread and the reader until the reader has read, so PCT's
/// chance per execution shrinks as writers are added.
pub fn twostage<const THREADS: usize>(variant: Variant) {
    let s = Arc::new(TwoStage {
        data1: Mutex::new(0),
        data2: Mutex::new(0),
    });

    let writers: Vec<_> = (1..THREADS)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || match variant {
                Variant::Buggy => {
                    let v = {
                        let mut d1 = s.data1.lock().unwrap(); // synchronized (data1)
                        *d1 = 1;
                        *d1
                    };
                    let mut d2 = s.data2.lock().unwrap(); // synchronized (data2)
                    *d2 = v + 1;
                }
                Variant::Fixed => {
                    let mut d1 = s.data1.lock().unwrap();
                    *d1 = 1;
                    let mut d2 = s.data2.lock().unwrap();
                    *d2 = *d1 + 1;
                }
            })
        })
        .collect();
    let reader = {
        let s = s.clone();
        thread::spawn(move || {
            unrelated_work(TWOSTAGE_PREP);
            let (t1, t2) = match variant {
                Variant::Buggy => {
                    let t1 = {
                        let d1 = s.data1.lock().unwrap(); // synchronized (data1)
                        if *d1 == 0 {
                            return;
                        }
                        *d1
                    };
                    let t2 = *s.data2.lock().unwrap(); // synchronized (data2)
                    (t1, t2)
                }
                Variant::Fixed => {
                    let d1 = s.data1.lock().unwrap();
                    if *d1 == 0 {
                        return;
                    }
                    let d2 = s.data2.lock().unwrap();
                    (*d1, *d2)
                }
            };
            assert!(
                t2 == t1 + 1,
                "twostage: the reader must see data2.value == data1.value + 1 (data1.value = {t1}, data2.value = {t2})"
            );
        })
    };
    for writer in writers {
        writer.join().unwrap();
    }
    reader.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// wronglock
// ---------------------------------------------------------------------------------------------

/// The shared state of [`wronglock`].
struct WrongLock {
    /// `data.value`: meant to be guarded by `lock_a`, but the second thread uses `lock_b`.
    value: Var<i32>,
    /// The monitor the first thread holds.
    lock_a: Mutex<()>,
    /// The monitor the second thread holds (the wrong one).
    lock_b: Mutex<()>,
}

/// wronglock (2 threads, exception caused by a race): two threads update the same field, each
/// holding a lock, but not the same lock.
///
/// Original (Table 3.2: 2 threads, 4 lines; Table 4.2: 5 RW pairs and no MM pair, since no
/// monitor is shared): one thread increments `data.value` holding one object's monitor and
/// checks, still inside, that the field now holds what it wrote; the other increments the same
/// field holding a different object's monitor. The locks exclude nothing, so the increments
/// race.
///
/// Rebuilt with `data.value` a [`Var`] (each read and write a scheduling point) and the two
/// monitors two `Mutex<()>`s. Java's `value++` is a separate read and write. The first thread
/// reads `t`, writes `t + 1` and asserts the field is `t + 1`; the main thread asserts after
/// both joins that both increments are counted. Either assertion fails when the second thread's
/// read or write falls inside the first thread's read-write-check window (one preemption of the
/// first thread: PCT depth 2, first thread above the second, a change point after its read or
/// write). Choice left open: the second thread first does [`WRONGLOCK_PREP`] steps of unrelated
/// work, so a random walk usually lets the first thread finish. Bug kind `Assertion` (the
/// buggy version also has a data race on the field, reported as a warning). Fixed twin: the
/// second thread holds `lock_a` too.
///
/// `THREADS` is the number of threads the program spawns: the checking thread, started first,
/// and `THREADS - 1` threads that increment under `lock_b`, as in SCTBench's scaled versions
/// `wronglock_X` (Thomson, Donaldson, Betts, PPoPP 2014), where X counts the threads. The
/// thesis's program is `wronglock::<2>`. The incrementing threads exclude each other (they all
/// hold `lock_b`), so every lost update and every broken check involves the checking thread; the
/// main thread asserts that all `THREADS` increments are counted.
pub fn wronglock<const THREADS: usize>(variant: Variant) {
    let w = Arc::new(WrongLock {
        value: Var::new(0),
        lock_a: Mutex::new(()),
        lock_b: Mutex::new(()),
    });

    let t1 = {
        let w = w.clone();
        thread::spawn(move || {
            let _a = w.lock_a.lock().unwrap(); // synchronized (lockA)
            let t = w.value.get();
            w.value.set(t + 1);
            let now = w.value.get();
            assert!(
                now == t + 1,
                "wronglock: inside its critical section the field must hold what the thread wrote (wrote {}, found {now})",
                t + 1
            );
        })
    };
    let others: Vec<_> = (1..THREADS)
        .map(|_| {
            let w = w.clone();
            thread::spawn(move || {
                unrelated_work(WRONGLOCK_PREP);
                let _lock = match variant {
                    Variant::Buggy => w.lock_b.lock().unwrap(), // synchronized (lockB): wrong lock
                    Variant::Fixed => w.lock_a.lock().unwrap(),
                };
                let t = w.value.get();
                w.value.set(t + 1);
            })
        })
        .collect();
    t1.join().unwrap();
    for other in others {
        other.join().unwrap();
    }
    let total = w.value.get();
    assert!(
        total == THREADS as i32,
        "wronglock: every thread's increment must be counted ({THREADS} threads, value = {total})"
    );
}

// ---------------------------------------------------------------------------------------------
// producerconsumer
// ---------------------------------------------------------------------------------------------

/// Slots of the bounded buffer of [`producerconsumer`].
const PC_CAPACITY: usize = 1;
/// Producer threads of [`producerconsumer`].
const PC_PRODUCERS: usize = 2;
/// Items each producer of [`producerconsumer`] puts.
const PC_ITEMS: usize = 2;

/// The fields of the bounded buffer, guarded by its monitor.
struct Slots {
    items: [u32; PC_CAPACITY],
    count: usize,
}

/// The bounded buffer of [`producerconsumer`]: a monitor with one wait set for both "not full"
/// and "not empty", as a Java object's monitor has.
struct BoundedBuffer {
    slots: Mutex<Slots>,
    changed: Condvar,
}

impl BoundedBuffer {
    /// `synchronized void put(item)`. The buggy version waits with `if (full) wait();`, so a
    /// woken producer does not check again that a slot is still free.
    fn put(&self, item: u32, variant: Variant) {
        let mut s = self.slots.lock().unwrap();
        match variant {
            Variant::Buggy => {
                if s.count == PC_CAPACITY {
                    s = self.changed.wait(s).unwrap();
                }
            }
            Variant::Fixed => {
                while s.count == PC_CAPACITY {
                    s = self.changed.wait(s).unwrap();
                }
            }
        }
        let i = s.count;
        s.items[i] = item; // out of bounds when the buffer is full
        s.count = i + 1;
        self.changed.notify_all();
    }

    /// `synchronized Object take()`: waits while the buffer is empty (correctly, in a loop).
    fn take(&self) -> u32 {
        let mut s = self.slots.lock().unwrap();
        while s.count == 0 {
            s = self.changed.wait(s).unwrap();
        }
        s.count -= 1;
        let item = s.items[s.count];
        self.changed.notify_all();
        item
    }
}

/// producerconsumer (exception caused by a race): producers woken by a consumer's `notifyAll`
/// race for the freed slot of a bounded buffer, and the loser writes past the end.
///
/// Original (Table 3.2: 7 threads, 87 lines; Table 4.2: 41 RW, 44 MM, 54 WM and 54 WN pairs):
/// producers and consumers share a bounded buffer whose methods are synchronized and wait on
/// the buffer's monitor. The thesis describes the scenario (Section 5.3, Figure 5.25): with the
/// buffer full, producers block in `wait()`; a consumer takes an item and calls `notifyAll()`;
/// the woken producers then compete for the monitor from the ready list. The producer waits
/// with `if (full) wait();` rather than a loop, so whichever producer re-enters second does not
/// notice that the slot has been taken again.
///
/// Rebuilt scaled down from 7 threads to 3 (the thesis's own Figure 5.25 has two producers
/// and one consumer): two producers put `PC_ITEMS` items each into a buffer of
/// `PC_CAPACITY` slot, one consumer takes them all. The buffer is an array with a count, so a
/// put into a full buffer indexes past the end and panics (`index out of bounds`, Java's
/// `ArrayIndexOutOfBoundsException`; bug kind `Panic`). The bug needs a producer to find the
/// buffer full and wait (the other producer put and the consumer has not taken yet), and then,
/// after the consumer's take and `notifyAll`, the other producer to put again before the woken
/// one re-enters (either barging in from the monitor entry or woken too). No preemption is
/// needed: running each thread until it blocks (producer 1, producer 2, then the consumer)
/// leaves both producers waiting on the full buffer, and the consumer's one take wakes both.
/// What makes it uncommon is the timing of the items. Choices left open: one consumer, the capacity (1), the item
/// counts, the consumer's correct `while` loop, and [`PRODUCERCONSUMER_WORK`] steps of
/// unrelated work before each put (producing the item), so a random walk rarely has a
/// producer waiting on a full buffer exactly when the other has its next item ready. Fixed
/// twin: the producer waits in a `while` loop, re-checking that a slot is free.
pub fn producerconsumer(variant: Variant) {
    let buf = Arc::new(BoundedBuffer {
        slots: Mutex::new(Slots {
            items: [0; PC_CAPACITY],
            count: 0,
        }),
        changed: Condvar::new(),
    });

    let producers: Vec<_> = (0..PC_PRODUCERS)
        .map(|p| {
            let buf = buf.clone();
            thread::spawn(move || {
                for j in 0..PC_ITEMS {
                    unrelated_work(PRODUCERCONSUMER_WORK);
                    buf.put((p * PC_ITEMS + j + 1) as u32, variant);
                }
            })
        })
        .collect();
    let consumer = {
        let buf = buf.clone();
        thread::spawn(move || {
            let mut sum = 0;
            for _ in 0..PC_PRODUCERS * PC_ITEMS {
                sum += buf.take();
            }
            sum
        })
    };
    for p in producers {
        p.join().unwrap();
    }
    let sum = consumer.join().unwrap();
    let n = (PC_PRODUCERS * PC_ITEMS) as u32;
    assert_eq!(
        sum,
        n * (n + 1) / 2,
        "producerconsumer: the consumer must take every item exactly once"
    );
}

// ---------------------------------------------------------------------------------------------
// blockbarrier
// ---------------------------------------------------------------------------------------------

/// Parties (threads) of [`blockbarrier`].
const BB_PARTIES: usize = 4;
/// Rounds each party of [`blockbarrier`] goes through the barrier.
const BB_ROUNDS: usize = 2;

/// The barrier's fields, guarded by its monitor.
struct BarrierState {
    /// Parties that have arrived in the current round.
    arrived: usize,
    /// Parties released in the current round that have left the barrier.
    left: usize,
}

/// The monitor-based barrier of [`blockbarrier`].
struct BlockBarrier {
    state: Mutex<BarrierState>,
    cv: Condvar,
}

impl BlockBarrier {
    /// `synchronized void await()`: arrive, wait until every party has arrived, leave; the last
    /// party to leave resets the barrier for the next round.
    fn await_all(&self, variant: Variant) {
        let mut s = self.state.lock().unwrap();
        if variant == Variant::Fixed {
            // Entry gate: do not join the next round while this one is still draining.
            while s.arrived == BB_PARTIES {
                s = self.cv.wait(s).unwrap();
            }
        }
        s.arrived += 1;
        assert!(
            s.arrived <= BB_PARTIES,
            "blockbarrier: at most {BB_PARTIES} parties can be inside one round of the barrier (arrived = {}, left = {})",
            s.arrived,
            s.left
        );
        if s.arrived == BB_PARTIES {
            self.cv.notify_all();
        } else {
            while s.arrived < BB_PARTIES {
                s = self.cv.wait(s).unwrap();
            }
        }
        s.left += 1;
        if s.left == BB_PARTIES {
            s.arrived = 0;
            s.left = 0;
            if variant == Variant::Fixed {
                self.cv.notify_all();
            }
        }
    }
}

/// blockbarrier (4 threads, exception caused by barging): a reusable barrier built from a
/// monitor, where a released party that comes straight back for the next round barges in
/// before the other released parties have left.
///
/// Original (Table 3.2: 4 threads, 120 lines; Table 4.2: no RW pair, 6 MM, 12 WM and 12 WN
/// pairs, i.e. four threads contending for one monitor with `wait`/`notifyAll`): a barrier
/// whose `await` is a synchronized method. Arriving parties count themselves in and `wait()`
/// until all have arrived; the last one `notifyAll()`s. The count is reset only when the
/// released parties have all left. The woken parties must re-acquire the monitor to leave, and
/// Java lets a thread at the monitor's entry barge in ahead of them: a party that has already
/// left and arrives for the next round counts itself into a round that is still full, breaking
/// the barrier's invariant, and the barrier throws.
///
/// Rebuilt with the monitor a `Mutex<BarrierState>` (`arrived`, `left`) and its wait set a
/// `Condvar`; the barrier checks its invariant `arrived <= parties` with an assertion (bug kind
/// `Assertion`). Each of the 4 parties does [`BLOCKBARRIER_WORK`] steps of unrelated work and
/// then awaits, for `BB_ROUNDS` rounds. The bug needs one released party to finish its work
/// and re-enter while another released party is still on the ready list: a random walk must
/// leave that party unscheduled for the whole of the other's work, which is rare. A
/// priority-based schedule exposes it without any change point: the highest-priority woken
/// party leaves, works and re-enters before any lower-priority woken party runs (PCT depth 1;
/// PCT finds it in almost every execution, while a random walk does in a few percent). Choices
/// left open: the number of rounds (2, the least that reuses the barrier), the work between rounds,
/// and the reset-on-last-leave design. Fixed twin: an entry gate, arriving parties wait while
/// the round is full, and the last party to leave notifies them after the reset.
pub fn blockbarrier(variant: Variant) {
    let barrier = Arc::new(BlockBarrier {
        state: Mutex::new(BarrierState {
            arrived: 0,
            left: 0,
        }),
        cv: Condvar::new(),
    });
    let parties: Vec<_> = (0..BB_PARTIES)
        .map(|_| {
            let barrier = barrier.clone();
            thread::spawn(move || {
                for _ in 0..BB_ROUNDS {
                    unrelated_work(BLOCKBARRIER_WORK);
                    barrier.await_all(variant);
                }
            })
        })
        .collect();
    for p in parties {
        p.join().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// reorder
// ---------------------------------------------------------------------------------------------

/// The shared state of [`reorder`].
struct Reorder {
    a: Var<i32>,
    b: Var<i32>,
    /// The fixed twin's lock (the buggy program has none).
    lock: Mutex<()>,
}

/// reorder (2 threads, exception caused by an atomicity violation): a setter writes two fields
/// that belong together, a checker reads them one at a time and finds a mix of old and new.
///
/// Original (Table 3.2: 2 threads, 44 lines; Table 4.2: 20 RW pairs and no monitor at all): a
/// setter thread runs `a = 1; b = -1;` and a checker thread tests `(a == 0 && b == 0) || (a ==
/// 1 && b == -1)` and throws if it does not hold. Each of the setter's and checker's pairs of
/// accesses is meant to be atomic, but nothing makes it so.
///
/// Rebuilt with `a` and `b` two [`Var`]s and one setter and one checker (the thesis's two
/// threads). The checker reads `a` and then `b`; the check fails if a write of the setter falls
/// between the two reads (it sees `a == 1, b == 0` or `a == 0, b == -1`): one preemption of the
/// checker (PCT depth 2: checker above setter, one change point right after it reads `a`).
/// Choice left open: the setter first does [`REORDER_PREP`] steps of unrelated work, so a
/// random walk usually lets the checker read both fields before the setter writes. Bug kind
/// `Assertion` (the accesses also race; that is reported as a warning). Fixed twin: both the
/// setter's writes and the checker's reads are one critical section of a lock.
///
/// `THREADS` is the number of threads the program spawns: `THREADS - 1` setters, started first,
/// and one checker, as in SCTBench's scaled versions `reorder_X` (Thomson, Donaldson, Betts,
/// PPoPP 2014; CHESS's `reorder` with `X - 1` setters), where X counts the threads. The thesis's
/// program is `reorder::<2>`. Every setter writes the same two values, so the fields go from
/// both unset, to `a` set by the first setter to write it, to both set by the first setter to
/// write `b`, and stay there. The checker, started last, sees a mix only if it reads `a` before
/// every setter's write of `a` and `b` after some setter's write of `b` (every setter must wait
/// until the checker has started and read `a`, and the checker must then be preempted until
/// one setter has finished), or reads both inside the window between the first write of `a`
/// and the first of `b` (the setter inside it preempted, and no other setter reaching its
/// write of `b` before the checker's reads). Still one preemption (PCT depth 2), but PCT's
/// priorities must hold every other setter back (below the main thread and the checker) and its
/// change point must hit one step among a number growing with the thread count, so its chance
/// per execution falls with the square of the thread count; a random walk almost never holds
/// every setter back.
pub fn reorder<const THREADS: usize>(variant: Variant) {
    let r = Arc::new(Reorder {
        a: Var::new(0),
        b: Var::new(0),
        lock: Mutex::new(()),
    });
    let fixed = variant == Variant::Fixed;

    let setters: Vec<_> = (1..THREADS)
        .map(|_| {
            let r = r.clone();
            thread::spawn(move || {
                unrelated_work(REORDER_PREP);
                let _g = fixed.then(|| r.lock.lock().unwrap());
                r.a.set(1);
                r.b.set(-1);
            })
        })
        .collect();
    let checker = {
        let r = r.clone();
        thread::spawn(move || {
            let g = fixed.then(|| r.lock.lock().unwrap());
            let a = r.a.get();
            let b = r.b.get();
            drop(g);
            assert!(
                (a == 0 && b == 0) || (a == 1 && b == -1),
                "reorder: the checker must see a and b both unset or both set (a = {a}, b = {b})"
            );
        })
    };
    for setter in setters {
        setter.join().unwrap();
    }
    checker.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// deadlock.d1
// ---------------------------------------------------------------------------------------------

/// deadlock.d1 (2 threads, deadlock): two nested synchronized blocks on the same two objects,
/// entered in opposite orders.
///
/// Original (Table 3.2: 2 threads, 24 lines; Table 4.2: 2 MM pairs, one per lock): thread 1
/// runs `synchronized (lock1) { synchronized (lock2) { .. } }`, thread 2 `synchronized (lock2)
/// { synchronized (lock1) { .. } }`: the lock-order inversion.
///
/// Rebuilt with each lock a `Mutex<i32>` holding a counter that the inner block updates (each
/// thread moves one unit from its outer lock's counter to its inner one's; the main thread
/// checks the total). The deadlock needs each thread to hold its outer lock when the other asks
/// for it: two ordering constraints, PCT depth 2 (the thread with the higher priority preempted
/// right after its first acquisition). Choice left open: thread 2 first does
/// [`DEADLOCK_D1_PREP`] steps of unrelated work, so a random walk usually lets thread 1 take
/// and release both locks first. Fixed twin: thread 2 takes the locks in thread 1's order.
pub fn deadlock_d1(variant: Variant) {
    let lock1 = Arc::new(Mutex::new(5i32));
    let lock2 = Arc::new(Mutex::new(5i32));

    let t1 = {
        let (lock1, lock2) = (lock1.clone(), lock2.clone());
        thread::spawn(move || {
            let mut g1 = lock1.lock().unwrap(); // synchronized (lock1)
            let mut g2 = lock2.lock().unwrap(); // synchronized (lock2)
            *g1 -= 1;
            *g2 += 1;
        })
    };
    let t2 = {
        let (lock1, lock2) = (lock1.clone(), lock2.clone());
        thread::spawn(move || {
            unrelated_work(DEADLOCK_D1_PREP);
            match variant {
                Variant::Buggy => {
                    let mut g2 = lock2.lock().unwrap(); // synchronized (lock2)
                    let mut g1 = lock1.lock().unwrap(); // synchronized (lock1)
                    *g2 -= 1;
                    *g1 += 1;
                }
                Variant::Fixed => {
                    let mut g1 = lock1.lock().unwrap();
                    let mut g2 = lock2.lock().unwrap();
                    *g2 -= 1;
                    *g1 += 1;
                }
            }
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    let total = *lock1.lock().unwrap() + *lock2.lock().unwrap();
    assert_eq!(
        total, 10,
        "deadlock.d1: moving units between the two counters must keep the total"
    );
}

// ---------------------------------------------------------------------------------------------
// deadlock.d2
// ---------------------------------------------------------------------------------------------

/// A party of [`deadlock_d2`]: an object whose synchronized methods update its counter.
struct Friend {
    /// Bows and bows-back received, guarded by this object's monitor.
    bows: Mutex<u32>,
}

impl Friend {
    /// `synchronized void bow(Friend other)`: while holding its own monitor, calls the
    /// synchronized `other.bowBack(this)` (buggy), or does so after leaving its monitor
    /// (fixed: an open call).
    fn bow(&self, other: &Friend, variant: Variant) {
        match variant {
            Variant::Buggy => {
                let mut mine = self.bows.lock().unwrap();
                *mine += 1;
                other.bow_back();
                drop(mine);
            }
            Variant::Fixed => {
                *self.bows.lock().unwrap() += 1;
                other.bow_back();
            }
        }
    }

    /// `synchronized void bowBack(Friend bower)`.
    fn bow_back(&self) {
        *self.bows.lock().unwrap() += 1;
    }
}

/// deadlock.d2 (2 threads, deadlock): a nested-monitor deadlock through synchronized methods,
/// each thread calling a synchronized method of the other thread's object from inside a
/// synchronized method of its own.
///
/// Original (Table 3.2: 2 threads, 24 lines; Table 4.2: 4 MM pairs, and d2 is one of the
/// programs whose monitor entries the analysis cannot resolve to one object, i.e. the monitors
/// are reached through references whose targets depend on the caller): the classic "bow"
/// deadlock. Two objects of one class; `a.bow(b)` is synchronized on `a` and calls the
/// synchronized `b.bowBack(a)`; thread 1 runs `a.bow(b)`, thread 2 runs `b.bow(a)`. Unlike
/// [`deadlock_d1`], no line of the program names two locks: each lock order is made at run
/// time by a method call under a monitor.
///
/// Rebuilt with the two objects in a fixed array, each with a `Mutex<u32>` counting the bows
/// it received. The deadlock needs each thread inside its own `bow` when the other calls
/// `bowBack` on it: two ordering constraints, PCT depth 2. Choice left open: thread 2 first
/// does [`DEADLOCK_D2_PREP`] steps of unrelated work, so a random walk usually lets thread 1
/// finish its bow first. Fixed twin: `bow` makes an open call, updating its own object and
/// leaving its monitor before calling `bowBack`, so no thread ever holds two monitors.
pub fn deadlock_d2(variant: Variant) {
    let friends = Arc::new([
        Friend {
            bows: Mutex::new(0),
        },
        Friend {
            bows: Mutex::new(0),
        },
    ]);

    let t1 = {
        let friends = friends.clone();
        thread::spawn(move || friends[0].bow(&friends[1], variant))
    };
    let t2 = {
        let friends = friends.clone();
        thread::spawn(move || {
            unrelated_work(DEADLOCK_D2_PREP);
            friends[1].bow(&friends[0], variant);
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    for (i, f) in friends.iter().enumerate() {
        let bows = *f.bows.lock().unwrap();
        assert_eq!(
            bows, 2,
            "deadlock.d2: friend {i} must get one bow and one bow-back"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// diningphilosopher
// ---------------------------------------------------------------------------------------------

/// Philosophers (threads, and forks) of [`diningphilosopher`].
const DINING_PHILOSOPHERS: usize = 3;
/// Meals each philosopher of [`diningphilosopher`] eats.
const DINING_MEALS: u32 = 2;

/// diningphilosopher (deadlock): every philosopher picks up the fork on the left and then the
/// one on the right; if all hold their left fork, all wait forever.
///
/// Original (Table 3.2: 5 threads, 25 lines; Table 4.2: 40 MM pairs; Section 6.4 notes each
/// fork is shared by two adjacent philosophers): philosopher `i` synchronizes on fork `i` and,
/// inside, on fork `i + 1 mod n`, eats, and releases both, in a loop.
///
/// Rebuilt scaled down from 5 philosophers to `DINING_PHILOSOPHERS` (3; the circular wait
/// survives with any number of philosophers of at least 2, and fewer threads keep the
/// program within loom's limit and the bug within reach of PCT). Each fork is a `Mutex<u32>`
/// counting the meals it served; each philosopher eats `DINING_MEALS` meals. The deadlock
/// needs every philosopher to hold its left fork at once, so `n - 1` of them must be preempted
/// between their two forks: PCT with depth `n` (here 3) finds it reliably, depth 2 only
/// rarely. Choice left open: before each meal philosopher `i` thinks for `DINING_THINK * (i +
/// 1)` steps of unrelated work ([`DINING_THINK`]), so the philosophers rarely reach the table
/// together under a random walk. Fixed twin: the last philosopher picks up its right fork
/// (fork 0) first, so every philosopher takes the lower-numbered fork first and the circular
/// wait cannot form.
pub fn diningphilosopher(variant: Variant) {
    let forks: Arc<Vec<Mutex<u32>>> =
        Arc::new((0..DINING_PHILOSOPHERS).map(|_| Mutex::new(0)).collect());

    let philosophers: Vec<_> = (0..DINING_PHILOSOPHERS)
        .map(|i| {
            let forks = forks.clone();
            thread::spawn(move || {
                let left = i;
                let right = (i + 1) % DINING_PHILOSOPHERS;
                let (first, second) = match variant {
                    Variant::Buggy => (left, right),
                    Variant::Fixed => (left.min(right), left.max(right)),
                };
                for _ in 0..DINING_MEALS {
                    unrelated_work(DINING_THINK * (i as u32 + 1));
                    let mut f1 = forks[first].lock().unwrap(); // synchronized (fork[left])
                    let mut f2 = forks[second].lock().unwrap(); // synchronized (fork[right])
                    *f1 += 1;
                    *f2 += 1;
                }
            })
        })
        .collect();
    for p in philosophers {
        p.join().unwrap();
    }
    let served: u32 = forks.iter().map(|f| *f.lock().unwrap()).sum();
    assert_eq!(
        served,
        2 * DINING_MEALS * DINING_PHILOSOPHERS as u32,
        "diningphilosopher: every meal uses two forks"
    );
}

// ---------------------------------------------------------------------------------------------
// losenotify
// ---------------------------------------------------------------------------------------------

/// The monitor of [`losenotify`].
struct LoseNotify {
    /// Notifications sent; the buggy waiter never looks at it (it has no condition flag).
    sent: Mutex<u32>,
    cv: Condvar,
}

/// losenotify (2 threads, deadlock): a thread waits for a notification that was sent before it
/// started waiting, and waits forever.
///
/// Original (Table 3.2: 2 threads, 41 lines; Table 4.2: 1 MM, 1 WM and 1 WN pair, one monitor
/// with one `wait` and one `notify`; the thesis names the pattern *LostNotify*, a `notify()`
/// preceding the `wait()`): one thread enters the monitor and calls `wait()` unconditionally;
/// the other enters the same monitor and calls `notify()`. If the notifier goes first, the
/// notification wakes nobody and is lost; the waiter then waits forever while the main thread
/// waits to join it: a deadlock.
///
/// Rebuilt with the monitor a `Mutex<u32>` counting notifications and a `Condvar`. The bug
/// needs one ordering constraint (the notifier's critical section before the waiter's) and no
/// preemption: PCT finds it whenever the notifier runs ahead of the waiter by priority. Choice
/// left open: the notifier
/// first does [`LOSENOTIFY_PREP`] steps of unrelated work (the work whose completion it
/// announces), so a random walk usually has the waiter already waiting. Fixed twin: the waiter
/// waits in a loop on a condition, `while sent == 0 wait()`, so a notification sent earlier is
/// not lost.
pub fn losenotify(variant: Variant) {
    let m = Arc::new(LoseNotify {
        sent: Mutex::new(0),
        cv: Condvar::new(),
    });

    let waiter = {
        let m = m.clone();
        thread::spawn(move || {
            let mut sent = m.sent.lock().unwrap(); // synchronized (monitor)
            match variant {
                Variant::Buggy => {
                    sent = m.cv.wait(sent).unwrap(); // monitor.wait(), no condition
                }
                Variant::Fixed => {
                    while *sent == 0 {
                        sent = m.cv.wait(sent).unwrap();
                    }
                }
            }
            drop(sent);
        })
    };
    let notifier = {
        let m = m.clone();
        thread::spawn(move || {
            unrelated_work(LOSENOTIFY_PREP);
            let mut sent = m.sent.lock().unwrap(); // synchronized (monitor)
            *sent += 1;
            m.cv.notify_one(); // monitor.notify()
        })
    };
    waiter.join().unwrap();
    notifier.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// clean
// ---------------------------------------------------------------------------------------------

/// Iterations of each task of [`clean`].
const CLEAN_ROUNDS: usize = 2;

/// An event of [`clean`]: a counter bumped by `signal_event` under the event's monitor, but read
/// by the tasks without it.
struct Event {
    /// The event's monitor (it guards `count`, but the buggy tasks also read `count` outside).
    monitor: Mutex<()>,
    count: Var<u32>,
    cv: Condvar,
}

impl Event {
    fn new() -> Event {
        Event {
            monitor: Mutex::new(()),
            count: Var::new(0),
            cv: Condvar::new(),
        }
    }

    /// `synchronized void signal_event() { count++; notifyAll(); }`
    fn signal_event(&self) {
        let _m = self.monitor.lock().unwrap();
        self.count.update(|c| c + 1);
        self.cv.notify_all();
    }

    /// `synchronized void wait_for_event() { wait(); }`: the buggy wait, on a condition tested
    /// by the caller outside the monitor.
    fn wait_for_event(&self) {
        let m = self.monitor.lock().unwrap();
        let _m = self.cv.wait(m).unwrap();
    }

    /// The fixed wait: tests the condition inside the monitor, in a loop, and returns the
    /// count it saw change.
    fn wait_for_change(&self, seen: u32) -> u32 {
        let mut m = self.monitor.lock().unwrap();
        loop {
            let now = self.count.get();
            if now != seen {
                return now;
            }
            m = self.cv.wait(m).unwrap();
        }
    }
}

/// The two events and the work counter of [`clean`].
struct Clean {
    event1: Event,
    event2: Event,
}

/// clean (2 threads, deadlock): two tasks signal each other through two event objects, but
/// each tests an event's counter outside the event's monitor before waiting on it, so a signal
/// can land between the test and the wait and be lost; then both tasks wait forever.
///
/// Original (Table 3.2: 2 threads, 51 lines; Table 4.2: 7 RW, 2 MM, 2 WM and 2 WN pairs, i.e.
/// two monitors, each with a `wait` and a `notifyAll`, plus unsynchronised field accesses):
/// the thesis gives no more detail. Rebuilt as the classic two-event ping-pong that fits these
/// numbers (the program known from JPF's examples): an `Event` has a synchronized
/// `signal_event()` that increments `count` and calls `notifyAll()`, and a synchronized
/// `wait_for_event()` that just calls `wait()`. The first task loops `if (count ==
/// event1.count) event1.wait_for_event(); count = event1.count; event2.signal_event();`, the
/// second loops `event1.signal_event(); if (count == event2.count) event2.wait_for_event();
/// count = event2.count;` (the `count` on the left being each task's own copy). The reads of
/// `eventN.count` are outside the monitor (RW pairs). If a task finds the count unchanged, and
/// the other task signals before the first enters `wait_for_event`, the signal is lost; the
/// signaller then waits for the first task's answer, which never comes: a deadlock.
///
/// Rebuilt with `count` a [`Var`] beside the event's `Mutex<()>` monitor and its `Condvar`,
/// `CLEAN_ROUNDS` iterations per task (the original loops forever), and the counter
/// incremented without the original's modulo (the loops are bounded, so it cannot overflow).
/// The deadlock needs a signal to land between a task's read of the count and its wait: either
/// one preemption of a task between its test and its wait, long enough for the other task to
/// signal (PCT depth 2), or the second task signalling `event1` before the first task has read
/// its initial count (the first task then waits for a signal it has already counted, which no
/// preemption is needed for if the second task runs first). Choice left open: each task does [`CLEAN_WORK`]
/// steps of unrelated work to process an event before signalling the other, so a random walk
/// rarely lets a signal land inside the short test-to-wait window. Fixed twin: the wait tests
/// the count inside the monitor, in a loop (`while (count == seen) wait();`), every read of
/// `count` holds the monitor, and each task starts from the known initial count 0 instead of
/// reading the count before its loop (a signal can overtake that read too, and the task would
/// then wait for a signal that only comes after its own); so no signal is lost and no access
/// races.
pub fn clean(variant: Variant) {
    let c = Arc::new(Clean {
        event1: Event::new(),
        event2: Event::new(),
    });

    let first = {
        let c = c.clone();
        thread::spawn(move || match variant {
            Variant::Buggy => {
                let mut count = c.event1.count.get();
                for _ in 0..CLEAN_ROUNDS {
                    if count == c.event1.count.get() {
                        c.event1.wait_for_event();
                    }
                    count = c.event1.count.get();
                    unrelated_work(CLEAN_WORK);
                    c.event2.signal_event();
                }
            }
            Variant::Fixed => {
                let mut count = 0;
                for _ in 0..CLEAN_ROUNDS {
                    count = c.event1.wait_for_change(count);
                    unrelated_work(CLEAN_WORK);
                    c.event2.signal_event();
                }
            }
        })
    };
    let second = {
        let c = c.clone();
        thread::spawn(move || match variant {
            Variant::Buggy => {
                let mut count = c.event2.count.get();
                for _ in 0..CLEAN_ROUNDS {
                    unrelated_work(CLEAN_WORK);
                    c.event1.signal_event();
                    if count == c.event2.count.get() {
                        c.event2.wait_for_event();
                    }
                    count = c.event2.count.get();
                }
            }
            Variant::Fixed => {
                let mut count = 0;
                for _ in 0..CLEAN_ROUNDS {
                    unrelated_work(CLEAN_WORK);
                    c.event1.signal_event();
                    count = c.event2.wait_for_change(count);
                }
            }
        })
    };
    first.join().unwrap();
    second.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// nestedmonitor
// ---------------------------------------------------------------------------------------------

/// The two monitors of [`nestedmonitor`].
struct Nested {
    /// The outer monitor; guards a count of completed hand-overs.
    outer: Mutex<u32>,
    /// The inner monitor; guards the `ready` flag the waiter waits for.
    inner: Mutex<bool>,
    /// The inner monitor's wait set.
    cv: Condvar,
}

/// nestedmonitor (2 threads, deadlock): the nested monitor lockout. A thread waits on an inner
/// monitor while holding an outer one; `wait()` releases only the inner monitor, so the thread
/// that would notify it blocks at the outer monitor's entry.
///
/// Original (Table 3.2: 2 threads, 53 lines; Table 4.2: 2 MM, 2 WM and 2 WN pairs): the waiter
/// runs `synchronized (outer) { synchronized (inner) { while (!ready) inner.wait(); } .. }`,
/// the signaller `synchronized (outer) { synchronized (inner) { ready = true;
/// inner.notify(); } .. }`. If the waiter gets in first, it waits holding `outer`, and the
/// signaller can never enter `outer` to set `ready`: both block.
///
/// Rebuilt with `outer` a `Mutex<u32>` counting completed hand-overs, `inner` a `Mutex<bool>`
/// holding `ready`, and a `Condvar` for the inner monitor. The lockout needs one ordering
/// constraint (the waiter enters `outer` before the signaller) and no preemption: PCT finds it
/// whenever the waiter runs ahead of the signaller by priority. Choice left open: the waiter first does
/// [`NESTEDMONITOR_PREP`] steps of unrelated work, so a random walk usually lets the signaller
/// set `ready` first (the waiter then does not wait at all). Fixed twin: the waiter waits for
/// `ready` holding only the inner monitor and takes the outer one afterwards, so it never
/// waits while holding a monitor the signaller needs.
pub fn nestedmonitor(variant: Variant) {
    let n = Arc::new(Nested {
        outer: Mutex::new(0),
        inner: Mutex::new(false),
        cv: Condvar::new(),
    });

    let waiter = {
        let n = n.clone();
        thread::spawn(move || {
            unrelated_work(NESTEDMONITOR_PREP);
            match variant {
                Variant::Buggy => {
                    let mut outer = n.outer.lock().unwrap(); // synchronized (outer)
                    let mut ready = n.inner.lock().unwrap(); // synchronized (inner)
                    while !*ready {
                        ready = n.cv.wait(ready).unwrap(); // inner.wait(), still holding outer
                    }
                    drop(ready);
                    *outer += 1;
                }
                Variant::Fixed => {
                    let mut ready = n.inner.lock().unwrap();
                    while !*ready {
                        ready = n.cv.wait(ready).unwrap();
                    }
                    drop(ready);
                    *n.outer.lock().unwrap() += 1;
                }
            }
        })
    };
    let signaller = {
        let n = n.clone();
        thread::spawn(move || {
            let mut outer = n.outer.lock().unwrap(); // synchronized (outer)
            let mut ready = n.inner.lock().unwrap(); // synchronized (inner)
            *ready = true;
            n.cv.notify_one(); // inner.notify()
            drop(ready);
            *outer += 1;
        })
    };
    waiter.join().unwrap();
    signaller.join().unwrap();
    assert_eq!(
        *n.outer.lock().unwrap(),
        2,
        "nestedmonitor: both threads complete their hand-over"
    );
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

/// The programs of this module, in the order of the thesis's Table 3.2.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "valsched-twostage",
        origin: "Chen (value schedules), Table 3.2 (kernel: twostage)",
        bug: BugKind::Assertion,
        summary: "a reader's two critical sections fall between the writer's two stages and see data2 not yet updated",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: twostage::<2>,
    },
    Program {
        name: "valsched-wronglock",
        origin: "Chen (value schedules), Table 3.2 (kernel: wronglock)",
        bug: BugKind::Assertion,
        summary: "two threads increment one field holding different locks, so an update interleaves with the other",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: wronglock::<2>,
    },
    Program {
        name: "valsched-producerconsumer",
        origin: "Chen (value schedules), Table 3.2 (kernel: producerconsumer)",
        bug: BugKind::Panic,
        summary: "a producer woken by notifyAll does not re-check that the buffer has room and writes past its end",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: producerconsumer,
    },
    Program {
        name: "valsched-blockbarrier",
        origin: "Chen (value schedules), Table 3.2 (kernel: blockbarrier)",
        bug: BugKind::Assertion,
        summary: "a released party barges back into the barrier before the others have left and overfills the round",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: blockbarrier,
    },
    Program {
        name: "valsched-reorder",
        origin: "Chen (value schedules), Table 3.2 (kernel: reorder)",
        bug: BugKind::Assertion,
        summary: "the checker reads a and b on either side of the setter's writes and sees a mix",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: reorder::<2>,
    },
    Program {
        name: "valsched-deadlock-d1",
        origin: "Chen (value schedules), Table 3.2 (kernel: deadlock.d1)",
        bug: BugKind::Deadlock,
        summary: "two threads nest synchronized blocks on two locks in opposite orders",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: deadlock_d1,
    },
    Program {
        name: "valsched-deadlock-d2",
        origin: "Chen (value schedules), Table 3.2 (kernel: deadlock.d2)",
        bug: BugKind::Deadlock,
        summary: "each thread calls the other object's synchronized bowBack from inside its own synchronized bow",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: deadlock_d2,
    },
    Program {
        name: "valsched-diningphilosopher",
        origin: "Chen (value schedules), Table 3.2 (kernel: diningphilosopher)",
        bug: BugKind::Deadlock,
        summary: "every philosopher holds its left fork and waits for its right one",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: diningphilosopher,
    },
    Program {
        name: "valsched-losenotify",
        origin: "Chen (value schedules), Table 3.2 (kernel: losenotify)",
        bug: BugKind::Deadlock,
        summary: "the notify comes before the unconditional wait, which then waits forever",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 50,
        },
        long: false,
        needs_weak_memory: false,
        run: losenotify,
    },
    Program {
        name: "valsched-clean",
        origin: "Chen (value schedules), Table 3.2 (kernel: clean)",
        bug: BugKind::Deadlock,
        summary: "a task tests an event's count outside its monitor, the other task's signal lands before the wait and is lost",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 50,
        },
        long: false,
        needs_weak_memory: false,
        run: clean,
    },
    Program {
        name: "valsched-nestedmonitor",
        origin: "Chen (value schedules), Table 3.2 (kernel: nestedmonitor)",
        bug: BugKind::Deadlock,
        summary: "a thread waits on the inner monitor while holding the outer one, locking out its notifier",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: nestedmonitor,
    },
];
