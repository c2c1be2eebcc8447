//! Memory-ordering programs (issue 20): small lock-free programs whose buggy version gives one
//! atomic access an ordering too weak for what it publishes, and whose fixed twin uses the
//! ordering the C++20/Rust memory model (RC11, Lahav et al., PLDI 2017) needs.
//!
//! - [`flag_buffer`]: message passing, a buffer published by a `ready` flag.
//! - [`spsc_ring`]: a single-producer single-consumer ring buffer.
//! - [`peterson`]: Peterson's mutual exclusion for two threads.
//! - [`double_checked_init`]: `Once`-style lazy initialisation with a lock-free fast path.
//!
//! Unlike the seed programs, these bugs need a weak memory model: every buggy version is correct
//! under sequential consistency, so a tester that runs every atomic operation as `SeqCst` cannot
//! find them, whatever the schedule. Today that is interleave (until issue 20's model lands) and
//! shuttle; loom, which lets a load read any store that coherence and happens-before allow,
//! finds them. Every program here is therefore marked [`Program::needs_weak_memory`], and each
//! doc comment names the reordering its bug needs.
//!
//! Data that a real program would keep in plain memory is a `Relaxed` atomic here, not a `Var`:
//! a load that reads a stale relaxed store returns the stale value, so the bug shows as a wrong
//! value an assertion sees, under any runtime that models weak memory. A `Var` read returns the
//! latest write under every runtime, so there the same bug could only surface as a data race.
//!
//! The fixed twins synchronise with release/acquire and read-modify-writes only, never with
//! `SeqCst` loads and stores: loom models those as `AcqRel` (a documented limitation), so a
//! fixed twin that relied on their total order would fail under loom although it is correct.
//!
//! Every loop is bounded: a thread that waits for another retries a fixed number of times and
//! then gives up without asserting anything. The retries do not yield: a bounded loop needs no
//! yield to terminate, and interleave's systematic strategies order every yield against the
//! other threads' steps (their rule for spin loops), which multiplied the executions `dpor`
//! needs for the ring buffer by several hundred without adding a behaviour.

use super::rt::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::{BugKind, Finding, Program, Variant};

/// Slots of the buffer [`flag_buffer`] publishes.
pub const BUFFER_LEN: usize = 3;
/// Times the reader of [`flag_buffer`] looks at the flag before giving up.
pub const FLAG_READS: u32 = 2;

/// The value slot `i` of a published buffer holds: never 0, the initial value, so a stale read
/// of a slot is always a wrong value.
fn slot_value(i: usize) -> u64 {
    10 + i as u64
}

/// A buffer and the flag that says it is filled.
struct Published {
    data: [AtomicU64; BUFFER_LEN],
    ready: AtomicBool,
}

/// Message passing: a writer fills a buffer and then sets a `ready` flag; a reader that sees the
/// flag set reads the buffer and asserts it holds what the writer wrote.
///
/// The writer stores each of the [`BUFFER_LEN`] slots (`Relaxed`; they stand for plain memory)
/// and then `ready`; the reader loads `ready` at most [`FLAG_READS`] times and checks every
/// slot the first time it sees the flag set (a reader that never sees it checks nothing).
/// Buggy: `ready` is stored and loaded `Relaxed`. Nothing then orders the slot stores before the
/// reader's slot loads: the reader may see `ready == true` and still read a slot's initial 0.
/// The bug needs the reader's load of `ready` to read the writer's store while the slot stores
/// do not happen before the reader's slot loads (the MP litmus test with relaxed accesses);
/// under sequential consistency the slot stores come before the flag store in the one total
/// order, so every schedule passes. Fixed twin: `ready` is stored with `Release` and loaded with
/// `Acquire`, so a load that reads the flag's store synchronises with it and the slot stores
/// happen before the slot loads.
pub fn flag_buffer(variant: Variant) {
    let (publish, observe) = match variant {
        Variant::Buggy => (Ordering::Relaxed, Ordering::Relaxed),
        Variant::Fixed => (Ordering::Release, Ordering::Acquire),
    };
    let buffer = Arc::new(Published {
        data: std::array::from_fn(|_| AtomicU64::new(0)),
        ready: AtomicBool::new(false),
    });

    let writer = {
        let buffer = buffer.clone();
        thread::spawn(move || {
            for (i, slot) in buffer.data.iter().enumerate() {
                slot.store(slot_value(i), Ordering::Relaxed);
            }
            buffer.ready.store(true, publish);
        })
    };
    let reader = {
        let buffer = buffer.clone();
        thread::spawn(move || {
            for _ in 0..FLAG_READS {
                if buffer.ready.load(observe) {
                    for (i, slot) in buffer.data.iter().enumerate() {
                        let seen = slot.load(Ordering::Relaxed);
                        assert!(
                            seen == slot_value(i),
                            "flag buffer: a reader that sees `ready` set must see the data \
                             written before it (slot {i} holds {seen}, expected {})",
                            slot_value(i)
                        );
                    }
                    return;
                }
            }
        })
    };
    writer.join().unwrap();
    reader.join().unwrap();
}

/// Slots of the ring buffer of [`spsc_ring`].
pub const RING_CAPACITY: usize = 2;
/// Values the producer of [`spsc_ring`] sends: one more than the ring holds, so the ring wraps.
pub const RING_ITEMS: u64 = 3;
/// Times a push onto a full ring or a pop from an empty one is tried before giving up.
pub const RING_TRIES: u32 = 2;

/// A bounded single-producer single-consumer queue: `head` and `tail` count the values popped
/// and pushed so far (each written by one side only), and value `n` lives in slot
/// `n % RING_CAPACITY`.
struct Ring {
    slots: [AtomicU64; RING_CAPACITY],
    head: AtomicUsize,
    tail: AtomicUsize,
    /// The ordering of the producer's store of `tail`, which publishes a pushed value.
    publish: Ordering,
}

impl Ring {
    /// Pushes `value`; false when the ring stayed full for [`RING_TRIES`] tries.
    fn push(&self, value: u64) -> bool {
        // Only the producer writes `tail`, so it reads its own latest store.
        let tail = self.tail.load(Ordering::Relaxed);
        for _ in 0..RING_TRIES {
            // Acquire: the consumer's read of the slot about to be reused happens before the
            // store below overwrites it.
            if tail - self.head.load(Ordering::Acquire) < RING_CAPACITY {
                self.slots[tail % RING_CAPACITY].store(value, Ordering::Relaxed);
                self.tail.store(tail + 1, self.publish);
                return true;
            }
        }
        false
    }

    /// Pops the oldest value; `None` when the ring stayed empty for [`RING_TRIES`] tries.
    fn pop(&self) -> Option<u64> {
        // Only the consumer writes `head`.
        let head = self.head.load(Ordering::Relaxed);
        for _ in 0..RING_TRIES {
            if self.tail.load(Ordering::Acquire) != head {
                let value = self.slots[head % RING_CAPACITY].load(Ordering::Relaxed);
                // Release: hands the slot back to the producer after the read above.
                self.head.store(head + 1, Ordering::Release);
                return Some(value);
            }
        }
        None
    }
}

/// A single-producer single-consumer ring buffer whose producer publishes `tail` too weakly.
///
/// The ring has [`RING_CAPACITY`] slots; the producer pushes `1..=RING_ITEMS` (one more value
/// than fits, so the ring wraps) and the consumer pops up to [`RING_ITEMS`] values, asserting
/// each is the next one in order. A push onto a full ring or a pop from an empty one is tried
/// [`RING_TRIES`] times; then the producer stops pushing, or the consumer stops popping, so the
/// values popped are always a prefix of the values pushed.
/// Every other access has the ordering a correct ring needs (the consumer's `tail` load is
/// `Acquire`, its `head` store `Release`, the producer's `head` load `Acquire`). Buggy: the
/// producer stores `tail` with `Relaxed` instead of `Release`, so the consumer's acquire load
/// of `tail` synchronises with nothing: it may read the new `tail` and still read the slot's
/// old contents (its initial 0 for the first lap). The bug needs the consumer's `tail` load to
/// read a store whose slot store does not happen before the consumer's slot load (message
/// passing through an index); under sequential consistency the slot store precedes the index
/// store in the total order, so every schedule passes. Fixed twin: `tail` is stored with
/// `Release`.
pub fn spsc_ring(variant: Variant) {
    let ring = Arc::new(Ring {
        slots: std::array::from_fn(|_| AtomicU64::new(0)),
        head: AtomicUsize::new(0),
        tail: AtomicUsize::new(0),
        publish: match variant {
            Variant::Buggy => Ordering::Relaxed,
            Variant::Fixed => Ordering::Release,
        },
    });

    let producer = {
        let ring = ring.clone();
        thread::spawn(move || {
            for value in 1..=RING_ITEMS {
                if !ring.push(value) {
                    break;
                }
            }
        })
    };
    let consumer = {
        let ring = ring.clone();
        thread::spawn(move || {
            let mut expected = 1;
            while expected <= RING_ITEMS {
                let Some(value) = ring.pop() else { break };
                assert!(
                    value == expected,
                    "spsc ring: the consumer must pop the pushed values in order (popped \
                     {value}, expected {expected})"
                );
                expected += 1;
            }
        })
    };
    producer.join().unwrap();
    consumer.join().unwrap();
}

/// Times a thread of [`peterson`] checks whether it may enter before giving up.
pub const PETERSON_TRIES: u32 = 3;

/// Peterson's lock for threads 0 and 1, and a count of the threads inside the critical section.
struct Peterson {
    interested: [AtomicBool; 2],
    /// The thread that yields when both are interested.
    turn: AtomicUsize,
    occupants: AtomicUsize,
}

impl Peterson {
    /// Announces thread `me`, then waits (boundedly) until the other thread is not interested
    /// or it is the other's turn to yield; false when `me` gave up.
    fn lock(&self, me: usize, variant: Variant) -> bool {
        let other = 1 - me;
        match variant {
            Variant::Buggy => {
                self.interested[me].store(true, Ordering::Release);
                self.turn.store(other, Ordering::Release);
            }
            Variant::Fixed => {
                // The exchange reads the other thread's exchange whenever that one came first in
                // `turn`'s modification order, and then synchronises with it (AcqRel on both), so
                // the later thread sees the earlier one's `interested` store.
                self.interested[me].store(true, Ordering::Relaxed);
                self.turn.swap(other, Ordering::AcqRel);
            }
        }
        for _ in 0..PETERSON_TRIES {
            if !self.interested[other].load(Ordering::Acquire)
                || self.turn.load(Ordering::Acquire) != other
            {
                return true;
            }
        }
        self.interested[me].store(false, Ordering::Release);
        false
    }

    fn unlock(&self, me: usize) {
        self.interested[me].store(false, Ordering::Release);
    }

    /// The critical section: counts itself in, asserts it is alone, counts itself out.
    fn critical_section(&self, me: usize) {
        let others = self.occupants.fetch_add(1, Ordering::Relaxed);
        assert!(
            others == 0,
            "peterson: mutual exclusion (thread {me} entered the critical section while the \
             other thread was in it)"
        );
        self.occupants.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Peterson's mutual exclusion for two threads, with release/acquire accesses where it needs
/// sequential consistency.
///
/// Each of two threads locks once (giving up after [`PETERSON_TRIES`] checks), runs a critical
/// section that counts its occupants with read-modify-writes (which always read the latest
/// count) and asserts it is alone, and unlocks. Locking sets the thread's `interested` flag,
/// then lets the other thread go first (`turn = other`), then enters when the other is not
/// interested or `turn` is no longer the other's. Buggy: the flag and `turn` are stored with
/// `Release` and loaded with `Acquire`, which looks careful but gives no store-to-load order:
/// each thread's load of the other's flag may read the initial `false` although the other
/// thread stored `true` earlier in the schedule (neither store happens before the other
/// thread's load), so both threads enter. The bug needs that store-buffering reordering, each
/// thread's flag store not visible to the other's later flag load, and one thread still inside
/// the critical section when the other enters; under sequential consistency one of the two flag
/// stores comes first in the total order, the later thread sees it and waits (and `turn`, which
/// the later thread wrote last, keeps it waiting), so every schedule passes. Fixed twin (the
/// C++11 version Anthony Williams published): `turn` is set with an `AcqRel` swap, so the thread
/// whose swap comes second in `turn`'s modification order reads the first one's swap and
/// synchronises with it, sees the other's flag set and `turn` its own to yield, and waits
/// until the other unlocks (a `Release` store its `Acquire` load then reads). `SeqCst` on every
/// access would fix it as well, but loom treats `SeqCst` loads and stores as `AcqRel` and would
/// report that correct twin.
pub fn peterson(variant: Variant) {
    let lock = Arc::new(Peterson {
        interested: [AtomicBool::new(false), AtomicBool::new(false)],
        turn: AtomicUsize::new(0),
        occupants: AtomicUsize::new(0),
    });
    let threads: Vec<_> = (0..2)
        .map(|me| {
            let lock = lock.clone();
            thread::spawn(move || {
                if lock.lock(me, variant) {
                    lock.critical_section(me);
                    lock.unlock(me);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// The value [`double_checked_init`] initialises its cell with.
pub const INIT_VALUE: u64 = 42;

/// A lazily initialised value: a flag read without the lock, and the lock that serialises
/// initialisation.
struct Lazy {
    initialised: AtomicBool,
    /// Stands for the cell's plain memory (see the module documentation).
    value: AtomicU64,
    lock: Mutex<()>,
    /// The ordering of the lock-free check of `initialised`.
    check: Ordering,
}

impl Lazy {
    /// The value, initialising it first if no thread has.
    fn get(&self) -> u64 {
        if self.initialised.load(self.check) {
            return self.value.load(Ordering::Relaxed);
        }
        let _guard = self.lock.lock().unwrap();
        // The lock orders this check after every earlier initialisation, so it needs no
        // ordering of its own.
        if !self.initialised.load(Ordering::Relaxed) {
            self.value.store(INIT_VALUE, Ordering::Relaxed);
            self.initialised.store(true, Ordering::Release);
        }
        self.value.load(Ordering::Relaxed)
    }
}

/// `Once`-style double-checked initialisation whose lock-free check loads the flag `Relaxed`.
///
/// Two threads each get the lazily initialised value and assert it is initialised. `get` first
/// checks `initialised` without the lock and returns the value when it is set; otherwise it
/// takes the lock, checks again, and if still needed stores the value and then sets the flag
/// with `Release`. Buggy: the lock-free check loads `initialised` with `Relaxed`, so reading the
/// other thread's flag store does not synchronise with it: the fast path may see the flag set
/// and still read the value's initial 0. The bug needs the fast path's flag load to read the
/// initialising thread's store while that thread's value store does not happen before the fast
/// path's value load (message passing with a relaxed reader); under sequential consistency the
/// value store precedes the flag store in the total order, so every schedule passes. Fixed twin:
/// the lock-free check loads `initialised` with `Acquire`, as `std::sync::Once` does.
pub fn double_checked_init(variant: Variant) {
    let lazy = Arc::new(Lazy {
        initialised: AtomicBool::new(false),
        value: AtomicU64::new(0),
        lock: Mutex::new(()),
        check: match variant {
            Variant::Buggy => Ordering::Relaxed,
            Variant::Fixed => Ordering::Acquire,
        },
    });
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let lazy = lazy.clone();
            thread::spawn(move || {
                let value = lazy.get();
                assert!(
                    value == INIT_VALUE,
                    "double-checked init: a thread that finds the value initialised must see \
                     the initialised value (got {value}, expected {INIT_VALUE})"
                );
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// The budget every program below declares in `found_by`: what issue 20 asks of the weak memory
/// model (the default strategy finds each bug in every seed). It is not checked until the model
/// lands, since no schedule exposes these bugs under sequential consistency.
const WEAK_MODEL_TARGET: Finding = Finding {
    strategy: "random",
    within: 1_000,
};

/// The programs of this module.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "ordering-flag-buffer",
        origin: "memory ordering: message passing",
        bug: BugKind::Assertion,
        summary: "a reader sees the relaxed `ready` flag set but not the buffer written before it",
        found_by: WEAK_MODEL_TARGET,
        long: false,
        needs_weak_memory: true,
        run: flag_buffer,
    },
    Program {
        name: "ordering-spsc-ring",
        origin: "memory ordering: SPSC ring buffer",
        bug: BugKind::Assertion,
        summary:
            "the producer stores `tail` relaxed, so the consumer may pop a slot before its value",
        found_by: WEAK_MODEL_TARGET,
        long: false,
        needs_weak_memory: true,
        run: spsc_ring,
    },
    Program {
        name: "ordering-peterson",
        origin: "memory ordering: Peterson's lock",
        bug: BugKind::Assertion,
        summary: "with release/acquire flags each thread may miss the other's flag, and both enter",
        found_by: WEAK_MODEL_TARGET,
        long: false,
        needs_weak_memory: true,
        run: peterson,
    },
    Program {
        name: "ordering-double-checked-init",
        origin: "memory ordering: Once-style init",
        bug: BugKind::Assertion,
        summary:
            "the lock-free check loads the flag relaxed, so it may see the flag before the value",
        found_by: WEAK_MODEL_TARGET,
        long: false,
        needs_weak_memory: true,
        run: double_checked_init,
    },
];
