//! Seed 004 (Huang, Rauchwerger: *Finding Schedule-Sensitive Branches*): the Apache Derby
//! example of the paper's Fig 2 ([`derby`]), the `is_good` protocol-choice example of its
//! Fig 1 ([`fig1`]), and the `checkHash` example the paper uses to explain fine-grained
//! tracing ([`check_hash`]).
//!
//! A schedule-sensitive branch (SSB) is a branch whose outcome, for the same input, depends on
//! the thread schedule. The paper finds most SSBs in real programs are caused by concurrency
//! bugs; its Fig 2 shows one in Derby where the unexpected side of the branch leads to a
//! `NullPointerException`. In every program here the assertion sits in the code behind the
//! unexpected side of the schedule-sensitive branch.

use std::collections::BTreeMap;

use super::rt::cell::Var;
use super::rt::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::{unrelated_work, Gate};
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work t2 does before it releases the map (see [`derby`]).
pub const PREP: u32 = 16;

/// Derby's `FormatableBitSet`, as a bit mask over a table's columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ColumnMap(u64);

impl ColumnMap {
    fn is_set(self, column: u32) -> bool {
        self.0 & (1 << column) != 0
    }
}

/// Columns of the table the statement refers to.
const COLUMNS: u32 = 3;
/// Columns 0 and 2 are referenced by the statement.
const REFERENCED: ColumnMap = ColumnMap(0b0101);

/// The shared descriptor: the field `referencedColumnMap` (`None` is Java's `null`, meaning
/// "all columns are referenced") plus the fixed twin's lock.
struct Descriptor {
    referenced_column_map: Var<Option<ColumnMap>>,
    lock: Mutex<()>,
}

/// Fig 2: Derby's `referencedColumnMap` null check (a schedule-sensitive branch).
///
/// Original (Java, Apache Derby): thread t1 checks `if (referencedColumnMap == null)` and, if
/// the map is not null, takes the other branch `else if (referencedColumnMap.isSet(..))`, which
/// reads the field again to dereference it. Thread t2 may concurrently set
/// `referencedColumnMap = null`. The null check is schedule sensitive (that by itself is
/// expected: `null` means "every column"), but if t2 runs right after t1's check and before the
/// dereference, t1 dereferences `null` and throws `NullPointerException`.
///
/// Rebuilt with the map as a bit mask behind a `Var<Option<..>>`: t1 runs the check once per
/// column of a three-column table (the loop that decides which columns to read, counting the
/// referenced ones), each iteration reading the field for the check and again for the
/// dereference; t2 releases the map (sets it to `None`). The observable consequence of the
/// unexpected branch is expressed as an assertion at the dereference: the value just checked
/// to be non-null must still be non-null. Choice left open: t2 first does [`PREP`] steps of
/// unrelated work (the invalidation does more than clear the field), so a random walk usually
/// lets t1 finish its short loop first. Needs t1 above t2 and one preemption between a check
/// and its dereference (PCT depth 2: one change point right after one of the three checks); if
/// t2 runs first every check takes the null side, and if it runs after t1's loop nothing is
/// dereferenced late. At the end, t1 must have counted at least the two referenced columns
/// (3 if the map was null for some checks). Fixed twin: each iteration reads the field once,
/// under a lock that t2's write also takes, and branches on that snapshot, so check and
/// dereference see the same value.
pub fn derby(variant: Variant) {
    let d = Arc::new(Descriptor {
        referenced_column_map: Var::new(Some(REFERENCED)),
        lock: Mutex::new(()),
    });

    let t1 = {
        let d = d.clone();
        thread::spawn(move || {
            let mut columns_to_read = 0;
            for column in 0..COLUMNS {
                let referenced = match variant {
                    Variant::Buggy => {
                        if d.referenced_column_map.get().is_none() {
                            true // null: every column is referenced
                        } else {
                            // `referencedColumnMap.isSet(column)`: reads the field again.
                            let map = d.referenced_column_map.get();
                            assert!(
                                map.is_some(),
                                "Derby: referencedColumnMap was checked non-null but is null at its dereference (NullPointerException in Derby)"
                            );
                            map.unwrap().is_set(column)
                        }
                    }
                    Variant::Fixed => {
                        let map = {
                            let _guard = d.lock.lock().unwrap();
                            d.referenced_column_map.get()
                        };
                        match map {
                            None => true,
                            Some(map) => map.is_set(column),
                        }
                    }
                };
                if referenced {
                    columns_to_read += 1;
                }
            }
            columns_to_read
        })
    };
    let t2 = {
        let d = d.clone();
        thread::spawn(move || {
            unrelated_work(PREP);
            match variant {
                Variant::Buggy => d.referenced_column_map.set(None),
                Variant::Fixed => {
                    let _guard = d.lock.lock().unwrap();
                    d.referenced_column_map.set(None);
                }
            }
        })
    };
    let columns_to_read = t1.join().unwrap();
    t2.join().unwrap();
    assert!(
        (2..=COLUMNS).contains(&columns_to_read),
        "Derby: t1 must read at least the referenced columns, counted {columns_to_read}"
    );
}

/// Steps of unrelated work the transferring thread of [`fig1`] does before its branch.
pub const TRANSFER_PREP: u32 = 12;
/// Steps of unrelated work each measurement of the monitor of [`fig1`] takes.
pub const MEASURE_STEPS: u32 = 2;
/// Measurements the monitor of [`fig1`] takes.
const MEASUREMENTS: u32 = 2;
/// The network's actual speed in [`fig1`], and the speed protocol A needs (Mbit/s).
const LINK_MBPS: u32 = 2;
const GOOD_MBPS: u32 = 10;

/// The network of [`fig1`]: its actual speed, which the monitor measures and protocol A
/// depends on (immutable; reading it is not a shared access).
struct Network {
    mbps: u32,
}

/// Shared state of [`fig1`].
struct Transfer {
    /// `is_good`: the monitor's verdict on the network. It starts out optimistic (`true`)
    /// until the first measurement.
    is_good: AtomicBool,
    /// The fixed twin's gate: opened once the first measurement is published.
    measured: Gate,
    net: Network,
}

/// `useProtocolA()`: a fast protocol without retransmission; on a link below `GOOD_MBPS` it
/// loses data, which the transfer checks.
fn use_protocol_a(net: &Network) -> &'static str {
    assert!(
        net.mbps >= GOOD_MBPS,
        "is_good: protocol A was chosen on a {} Mbit/s link (it needs {GOOD_MBPS}); the is_good branch read the optimistic initial value before the monitor's first measurement",
        net.mbps
    );
    "A"
}

/// `useProtocolB()`: the slower, retransmitting protocol, correct on any link.
fn use_protocol_b(_net: &Network) -> &'static str {
    "B"
}

/// The paper's first example of a schedule-sensitive branch: choosing a transfer protocol by a
/// flag that a monitor thread updates.
///
/// Original (the paper's Fig 1, the introductory example printed beside the Derby bug of Fig 2,
/// which is [`derby`]): thread t1 transfers files with
/// `if (is_good) useProtocolA(); else useProtocolB();`, while thread t2 periodically measures
/// the network and sets `is_good = true` if the speed is good, `false` otherwise. The branch is
/// schedule sensitive: its outcome depends on whether t2's update comes before t1's check. The
/// paper notes such branches are often unintended and the result of programming errors.
///
/// Rebuilt with `is_good` as an `AtomicBool` (a `volatile` field) and a network whose actual
/// speed, `LINK_MBPS`, is too slow for protocol A. Choices left open: `is_good` starts
/// `true` (an optimistic default before any measurement); the monitor takes
/// `MEASUREMENTS` measurements of [`MEASURE_STEPS`] steps each; t1 first prepares the files
/// for [`TRANSFER_PREP`] steps of unrelated work. The unexpected side is protocol A on the slow
/// link, where `useProtocolA` asserts that the link is fast enough.
///
/// Bug: t1 checks `is_good` before the monitor's first measurement is published. One ordering
/// constraint (PCT depth 1: t1 above t2 suffices, so PCT exposes it in about half of its
/// executions), while a random walk rarely lets t1 finish its preparation before the monitor's
/// short first measurement. Fixed twin: t1 waits for the first measurement (a `Gate` the
/// monitor opens after publishing it), so the branch sees a measured value.
pub fn fig1(variant: Variant) {
    let shared = Arc::new(Transfer {
        is_good: AtomicBool::new(true),
        measured: Gate::new(),
        net: Network { mbps: LINK_MBPS },
    });

    let t1 = {
        let s = shared.clone();
        thread::spawn(move || {
            unrelated_work(TRANSFER_PREP); // prepare the files
            if variant == Variant::Fixed {
                s.measured.wait();
            }
            if s.is_good.load(Ordering::SeqCst) {
                use_protocol_a(&s.net)
            } else {
                use_protocol_b(&s.net)
            }
        })
    };
    let t2 = {
        let s = shared.clone();
        thread::spawn(move || {
            for round in 0..MEASUREMENTS {
                unrelated_work(MEASURE_STEPS); // sample the link
                let speed = s.net.mbps;
                if speed >= GOOD_MBPS {
                    s.is_good.store(true, Ordering::SeqCst);
                } else {
                    s.is_good.store(false, Ordering::SeqCst);
                }
                if round == 0 {
                    s.measured.open();
                }
            }
        })
    };
    let protocol = t1.join().unwrap();
    t2.join().unwrap();
    assert_eq!(
        protocol, "B",
        "is_good: the slow link must be served by protocol B"
    );
}

/// The string both threads of [`check_hash`] hash.
const HASH_INPUT: &str = "interleave";
/// Steps of unrelated work standing for t1's hash computation in [`check_hash`].
pub const HASH1_STEPS: u32 = 2;
/// Steps of unrelated work standing for t2's (slower) hash computation in [`check_hash`].
pub const HASH2_STEPS: u32 = 10;

/// FNV-1a over the bytes, written as a loop (t1's library, `DigestUtils.sha256Hex` in the
/// paper).
fn hash_loop(input: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in input.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The same hash written as a fold (t2's library, Guava's `Hashing.sha256()` in the paper).
fn hash_fold(input: &str) -> u64 {
    input.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Shared state of [`check_hash`].
struct HashCheck {
    /// The map from input to the first hash computed for it (every operation atomic).
    map: Mutex<BTreeMap<&'static str, u64>>,
    /// How many times a thread compared its hash with the stored one.
    comparisons: AtomicUsize,
}

impl HashCheck {
    /// `checkHash(hash)`: `hashed = map.get(input); if (hashed == null) map.put(input, hash);
    /// else if (!hashed.equals(hash)) error(...)`. Buggy: the get and the put are separate
    /// map operations; fixed: the whole method is one critical section (`synchronized`).
    fn check(&self, hash: u64, variant: Variant) {
        let mut fixed_guard = match variant {
            Variant::Buggy => None,
            Variant::Fixed => Some(self.map.lock().unwrap()),
        };
        let hashed = match fixed_guard.as_mut() {
            Some(map) => map.get(HASH_INPUT).copied(),
            None => self.map.lock().unwrap().get(HASH_INPUT).copied(),
        };
        match hashed {
            None => {
                let previous = match fixed_guard.as_mut() {
                    Some(map) => map.insert(HASH_INPUT, hash),
                    None => self.map.lock().unwrap().insert(HASH_INPUT, hash),
                };
                assert!(
                    previous.is_none(),
                    "checkHash: both threads took the hashed == null side; the other thread's hash was stored between map.get and map.put and is overwritten without ever being compared"
                );
            }
            Some(hashed) => {
                self.comparisons.fetch_add(1, Ordering::SeqCst);
                assert_eq!(
                    hashed, hash,
                    "checkHash: the two hash implementations disagree"
                );
            }
        }
    }
}

/// The paper's `checkHash` example (the figure used to explain fine-grained tracing): two
/// threads cross-check two hash implementations through a shared map.
///
/// Original (Java): thread t1 computes `hash1` with Apache Commons' `DigestUtils.sha256Hex`,
/// thread t2 computes `hash2` with Guava's `Hashing.sha256()`, and both call
/// `checkHash(hash)`: `hashed = map.get(input); if (hashed == null) map.put(input, hash); else
/// if (!hashed.equals(hash)) error(...)`. The paper explains that the branch `hashed == null`
/// is schedule sensitive (whichever thread comes first takes the null side, the other compares)
/// while the comparison branch is not, as long as both hash functions are deterministic. (t1's
/// later `if (!t2.isAlive())` branch, schedule sensitive through native code, is left out: the
/// runtimes have no `isAlive`.)
///
/// Rebuilt with the two implementations as the same FNV-1a hash written two ways (a loop and a
/// fold) plus unrelated work standing for their cost, and the map as a `BTreeMap` behind a
/// `Mutex`, so every map operation is atomic (a synchronized map rather than Java's plain
/// `HashMap`, so that the bug is the schedule-sensitive check-then-act and not a race inside
/// the map). Choices left open: t1's hash costs [`HASH1_STEPS`] steps and t2's
/// [`HASH2_STEPS`] (one library is slower), so a random walk usually lets t1 finish
/// `checkHash` before t2 gets there.
///
/// Bug: the intended schedule sensitivity is only *which* thread stores and which compares.
/// If both threads read `null` (the second thread's `get` between the first's `get` and
/// `put`), both take the null side, the second `put` overwrites the first hash, and the
/// cross-check silently never happens; the assertion behind the null side checks that `put`
/// did not replace a hash. PCT depth 2: the thread that outranks the other is preempted between
/// its `get` and its `put`. Fixed twin: `checkHash` is `synchronized` (one critical section),
/// so exactly one thread stores and the other compares.
pub fn check_hash(variant: Variant) {
    let shared = Arc::new(HashCheck {
        map: Mutex::new(BTreeMap::new()),
        comparisons: AtomicUsize::new(0),
    });

    let t1 = {
        let s = shared.clone();
        thread::spawn(move || {
            let hash1 = hash_loop(HASH_INPUT);
            unrelated_work(HASH1_STEPS);
            s.check(hash1, variant);
        })
    };
    let t2 = {
        let s = shared.clone();
        thread::spawn(move || {
            let hash2 = hash_fold(HASH_INPUT);
            unrelated_work(HASH2_STEPS);
            s.check(hash2, variant);
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    assert_eq!(
        shared.comparisons.load(Ordering::SeqCst),
        1,
        "checkHash: exactly one thread must compare its hash with the stored one"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "seed004-derby",
        origin: "seed 004, Fig 2 (Apache Derby referencedColumnMap)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "a non-null check of a shared field is followed by a second read that another thread may have nulled",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        run: derby,
    },
    Program {
        name: "seed004-fig1",
        origin: "seed 004, Fig 1 (is_good: protocol chosen by a monitored flag)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "the is_good branch reads the optimistic initial value before the monitor's first measurement and picks the wrong protocol",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        run: fig1,
    },
    Program {
        name: "seed004-check-hash",
        origin: "seed 004, checkHash example (fine-grained tracing figure)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "both threads see no stored hash, both store, and the cross-check of the two hash implementations never happens",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        run: check_hash,
    },
];
