//! Seed 004 (Huang, Rauchwerger: *Finding Schedule-Sensitive Branches*): the Apache Derby
//! example of the paper's Fig 2 ([`derby`]), the `is_good` protocol-choice example of its
//! Fig 1 ([`fig1`]), and the `checkHash` example the paper uses to explain fine-grained
//! tracing ([`check_hash`]); then two programs for the analysis itself rather than from the
//! paper: a precision program whose fixed twin has no schedule-sensitive branch at all
//! ([`local_branches`]), and a long-running one for the analogue of the paper's Table 2
//! ([`long_run`], over a million steps per execution, marked [`Program::long`]).
//!
//! Every program wraps its branch conditions in `rt::branch`, which records each outcome for
//! interleave's schedule-sensitive-branch analysis (loop bounds and the switches between the
//! buggy and the fixed code are left out).
//!
//! A schedule-sensitive branch (SSB) is a branch whose outcome, for the same input, depends on
//! the thread schedule. The paper finds most SSBs in real programs are caused by concurrency
//! bugs; its Fig 2 shows one in Derby where the unexpected side of the branch leads to a
//! `NullPointerException`. In every program here the assertion sits in the code behind the
//! unexpected side of the schedule-sensitive branch.

use std::collections::{BTreeMap, VecDeque};

use super::rt;
use super::rt::cell::Var;
use super::rt::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use super::rt::sync::{Arc, Condvar, Mutex};
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
        rt::branch(self.0 & (1 << column) != 0)
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
                        if rt::branch(d.referenced_column_map.get().is_none()) {
                            true // null: every column is referenced
                        } else {
                            // `referencedColumnMap.isSet(column)`: reads the field again.
                            let map = d.referenced_column_map.get();
                            assert!(
                                rt::branch(map.is_some()),
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
                        if rt::branch(map.is_none()) {
                            true // null: every column is referenced
                        } else {
                            // The snapshot is not null, so this is `isSet` on it.
                            map.is_some_and(|map| map.is_set(column))
                        }
                    }
                };
                if rt::branch(referenced) {
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
        rt::branch((2..=COLUMNS).contains(&columns_to_read)),
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
        rt::branch(net.mbps >= GOOD_MBPS),
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
            if rt::branch(s.is_good.load(Ordering::SeqCst)) {
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
                if rt::branch(speed >= GOOD_MBPS) {
                    s.is_good.store(true, Ordering::SeqCst);
                } else {
                    s.is_good.store(false, Ordering::SeqCst);
                }
                if rt::branch(round == 0) {
                    s.measured.open();
                }
            }
        })
    };
    let protocol = t1.join().unwrap();
    t2.join().unwrap();
    assert!(
        rt::branch(protocol == "B"),
        "is_good: the slow link must be served by protocol B, not {protocol}"
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
        if rt::branch(hashed.is_none()) {
            let previous = match fixed_guard.as_mut() {
                Some(map) => map.insert(HASH_INPUT, hash),
                None => self.map.lock().unwrap().insert(HASH_INPUT, hash),
            };
            assert!(
                rt::branch(previous.is_none()),
                "checkHash: both threads took the hashed == null side; the other thread's hash was stored between map.get and map.put and is overwritten without ever being compared"
            );
        } else {
            self.comparisons.fetch_add(1, Ordering::SeqCst);
            // `else if (!hashed.equals(hash)) error(...)`.
            assert!(
                rt::branch(hashed == Some(hash)),
                "checkHash: the two hash implementations disagree ({hashed:?} stored, {hash} computed)"
            );
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
    let comparisons = shared.comparisons.load(Ordering::SeqCst);
    assert!(
        rt::branch(comparisons == 1),
        "checkHash: exactly one thread must compare its hash with the stored one, {comparisons} did"
    );
}

/// Entries of the lookup table the producer of [`local_branches`] builds and publishes.
const TABLE_ENTRIES: usize = 8;
/// Items each worker of [`local_branches`] processes: the batch size the test body sets before
/// it starts the workers.
const LOCAL_BATCH: u32 = 6;
/// Requests the consumer of [`local_branches`] parses before it needs the producer's table
/// (two steps each).
pub const CONSUMER_PREP: u32 = 20;

/// The handoff of [`local_branches`]: the producer's lookup table and whether it is published,
/// both under one lock.
struct Handoff {
    published: bool,
    table: Vec<u64>,
}

/// Shared state of [`local_branches`].
struct Pipeline {
    /// The batch size: written by the test body before it starts the workers and never again,
    /// so every worker's read is ordered after the write by the spawn.
    batch: Var<u32>,
    handoff: Mutex<Handoff>,
    /// Signalled when the table is published.
    table_ready: Condvar,
    /// Items processed, counted by both workers. The value each increment returns depends on
    /// the schedule, but no branch depends on it (the test body checks the total after joining
    /// both workers).
    processed: AtomicU64,
    /// The producer's checksum of the batch: written by the producer, read by the test body
    /// after joining it.
    batch_checksum: Var<u64>,
}

/// The producer's table: a running value in a `Var` that only the calling thread ever touches,
/// so each entry is two scheduling points whose values no other thread can change.
fn build_table() -> Vec<u64> {
    let running = Var::new(1u64);
    let mut table = Vec::with_capacity(TABLE_ENTRIES);
    for entry in 0..TABLE_ENTRIES as u64 {
        let value = running.get();
        let next = if rt::branch(entry.is_multiple_of(2)) {
            value + entry
        } else {
            value * 3 % 101
        };
        running.set(next);
        table.push(next);
    }
    table
}

/// The producer of [`local_branches`]: builds the table, publishes it, then processes its own
/// share of the batch, and finally reports the batch's checksum.
fn produce(pipeline: &Pipeline) {
    let batch = pipeline.batch.get();
    if rt::branch(batch == 0) {
        return;
    }
    let table = build_table();
    let checksum = (0..batch)
        .map(|item| table[item as usize % TABLE_ENTRIES])
        .sum();
    {
        let mut handoff = pipeline.handoff.lock().unwrap();
        handoff.table = table;
        handoff.published = true;
    }
    pipeline.table_ready.notify_all();
    // Items this thread processed in odd rounds: an atomic no other thread touches.
    let odd_rounds = AtomicU64::new(0);
    for item in 0..batch {
        pipeline.processed.fetch_add(1, Ordering::SeqCst);
        if rt::branch(!item.is_multiple_of(2)) {
            odd_rounds.fetch_add(1, Ordering::SeqCst);
        }
    }
    let odd = odd_rounds.load(Ordering::SeqCst);
    assert!(
        rt::branch(odd == u64::from(batch / 2)),
        "local-branches: the producer counted {odd} odd rounds in a batch of {batch}"
    );
    pipeline.batch_checksum.set(checksum);
}

/// The consumer of [`local_branches`]: parses its requests, takes the published table, and
/// looks up every item of the batch in it; returns the sum of what it looked up.
fn consume(pipeline: &Pipeline, variant: Variant) -> u64 {
    let batch = pipeline.batch.get();
    // The parsed requests: a counter in a `Var` only this thread touches.
    let parsed = Var::new(0u32);
    for request in 0..CONSUMER_PREP {
        let count = parsed.get();
        let next = if rt::branch(request.is_multiple_of(3)) {
            count + 2
        } else {
            count + 1
        };
        parsed.set(next);
    }
    let parsed = parsed.get();
    assert!(
        rt::branch(parsed >= CONSUMER_PREP),
        "local-branches: the consumer parsed {parsed} of {CONSUMER_PREP} requests"
    );
    let table = {
        let mut handoff = pipeline.handoff.lock().unwrap();
        if variant == Variant::Fixed {
            // Whether this loop waits at all depends on the schedule: that is the waiting
            // itself, not a decision of the program, so it carries no annotation. It makes
            // every schedule reach the branch below after the producer published.
            while !handoff.published {
                handoff = pipeline.table_ready.wait(handoff).unwrap();
            }
        }
        if rt::branch(handoff.published) {
            handoff.table.clone()
        } else {
            // Not published yet: the buggy consumer goes on with an empty table.
            Vec::new()
        }
    };
    let mut looked_up = 0;
    for item in 0..batch {
        let slot = item as usize % TABLE_ENTRIES;
        assert!(
            rt::branch(slot < table.len()),
            "local-branches: the consumer looked up entry {slot} of a table with {} entries: it took the handoff's lock before the producer published the table (a mutex makes the two critical sections exclusive, not ordered)",
            table.len()
        );
        looked_up += table[slot];
        pipeline.processed.fetch_add(1, Ordering::SeqCst);
    }
    looked_up
}

/// A precision benchmark for schedule-sensitive-branch analyses: two workers whose branches
/// depend only on thread-local data or on shared values that synchronisation orders, so that
/// in the fixed twin no annotated branch is schedule sensitive under any schedule, although
/// every thread reads shared variables right before its branches.
///
/// Not from the paper: the paper's precision claim (every branch it reports is truly schedule
/// sensitive) needs programs whose branches are known *not* to be schedule sensitive, and this
/// one collects the usual reasons in one place. The test body writes the batch size to a `Var`
/// before it starts the workers (ordered by spawn). The consumer parses its requests into a
/// `Var` only it touches and branches on it; the producer builds a lookup table in a `Var` only
/// it touches, branching on local loop indices, and publishes the table under a `Mutex`,
/// signalling a `Condvar`; the consumer waits on that `Condvar` until the table is published,
/// so its branch on the published flag and its lookups always see the producer's table. Both
/// workers count the processed items in a shared atomic; the value each increment returns
/// varies with the schedule, and a branch follows each increment, but the branch only tests
/// the local loop index, so an analysis that predicts a different value there has to find, on
/// re-execution, that the branch does not flip. The producer's checksum is a `Var` the test
/// body reads after joining it (ordered by join), and the test body checks it, and the
/// processed-item total, after joining both workers.
///
/// Choices left open: [`CONSUMER_PREP`] requests of parsing (two steps each) before the
/// consumer needs the table, the consumer started first, a table of `TABLE_ENTRIES`
/// entries and a batch of `LOCAL_BATCH` items.
///
/// Bug (the buggy twin's one schedule-sensitive race): the consumer takes the handoff's lock
/// once and branches on the published flag without waiting for the producer. The lock makes
/// the two critical sections exclusive but does not order them, so if the consumer's comes
/// first the branch takes the unexpected side, the consumer continues with an empty table, and
/// its first lookup fails an assertion. One ordering constraint, the consumer's critical
/// section before the producer's (PCT depth 1 suffices: the consumer above the producer, so
/// PCT exposes it in about half of its executions), while a random walk rarely lets the
/// consumer finish its parsing before the producer's short table build (about 0.2 % of its
/// executions). The branch on the flag and the assertion behind it are the buggy twin's only
/// schedule-sensitive branches. Fixed twin: the consumer waits on the `Condvar` until the table
/// is published.
pub fn local_branches(variant: Variant) {
    let pipeline = Arc::new(Pipeline {
        batch: Var::new(0),
        handoff: Mutex::new(Handoff {
            published: false,
            table: Vec::new(),
        }),
        table_ready: Condvar::new(),
        processed: AtomicU64::new(0),
        batch_checksum: Var::new(0),
    });
    pipeline.batch.set(LOCAL_BATCH);

    let consumer = {
        let p = pipeline.clone();
        thread::spawn(move || consume(&p, variant))
    };
    let producer = {
        let p = pipeline.clone();
        thread::spawn(move || produce(&p))
    };
    let looked_up = consumer.join().unwrap();
    producer.join().unwrap();
    let expected = pipeline.batch_checksum.get();
    assert!(
        rt::branch(looked_up == expected),
        "local-branches: the consumer's lookups sum to {looked_up}, the producer's checksum is {expected}"
    );
    let processed = pipeline.processed.load(Ordering::SeqCst);
    assert!(
        rt::branch(processed == 2 * u64::from(LOCAL_BATCH)),
        "local-branches: each worker processes the whole batch, counted {processed}"
    );
}

/// Worker threads of [`long_run`].
const LONG_WORKERS: u64 = 4;
/// Batches each worker of [`long_run`] processes.
pub const LONG_BATCHES: u64 = 2_200;
/// Records in one batch of [`long_run`]; each is two steps of thread-local work.
pub const LONG_RECORDS: u64 = 64;
/// Worker 0 of [`long_run`] starts a new configuration epoch after every this many batches.
pub const LONG_EPOCH_BATCHES: u64 = 100;
/// Every worker of [`long_run`] reaches a flush point after every this many batches.
pub const LONG_FLUSH_BATCHES: u64 = 700;
/// Steps of thread-local work a worker of [`long_run`] spends reloading its configuration.
const LONG_RELOAD_STEPS: u32 = 8;
/// Flush points in one run of [`long_run`].
const LONG_FLUSH_POINTS: u64 = LONG_BATCHES / LONG_FLUSH_BATCHES;

/// Shared state of [`long_run`].
struct Service {
    /// The configuration epoch: worker 0 advances it, the other workers poll it once per batch
    /// (a `volatile` status field).
    epoch: AtomicU64,
    /// The last flush point claimed (0: none yet).
    last_flush: AtomicU64,
    /// Batch summaries waiting for the next flush.
    queue: Mutex<VecDeque<u64>>,
    /// What the flushes did.
    flushes: Mutex<FlushLog>,
}

/// The flushes of [`long_run`] so far.
struct FlushLog {
    /// Per flush point (the first is number 1, at index 0): whether it was flushed.
    flushed: Vec<bool>,
    /// Summaries the flushes took from the queue.
    summaries: u64,
}

/// The record number `record` of batch `batch` of worker `worker` of [`long_run`]: a fixed
/// pseudo-random value (SplitMix64's finaliser), so every record's branch is decided by the
/// input alone.
fn long_record(worker: u64, batch: u64, record: u64) -> u64 {
    let mut z = (worker << 48 | batch << 16 | record).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether a record of [`long_run`] is added to the checksum (one in four) or mixed in with
/// an exclusive or.
fn long_is_added(record: u64) -> bool {
    record.is_multiple_of(4)
}

/// Folds one record into a worker's checksum, adding it if `added`.
fn long_fold(checksum: u64, record: u64, added: bool) -> u64 {
    if added {
        checksum.wrapping_add(record)
    } else {
        checksum ^ record
    }
}

/// The checksum worker `worker` of [`long_run`] must end with: the same fold, without the
/// shared variable (and without recording its branches, which are the worker's).
fn long_expected_checksum(worker: u64) -> u64 {
    let mut checksum = 0;
    for batch in 1..=LONG_BATCHES {
        for record in 0..LONG_RECORDS {
            let value = long_record(worker, batch, record);
            checksum = long_fold(checksum, value, long_is_added(value));
        }
    }
    checksum
}

/// Claims flush point `point` for the calling worker: true if it is the worker to flush it.
fn claim_flush(service: &Service, point: u64, variant: Variant) -> bool {
    match variant {
        // `if (lastFlush < point) { lastFlush = point; return true; }`: the check and the
        // claim are two accesses, and another worker's check can fall between them.
        Variant::Buggy => {
            if rt::branch(service.last_flush.load(Ordering::SeqCst) < point) {
                service.last_flush.store(point, Ordering::SeqCst);
                true
            } else {
                false
            }
        }
        // One read-modify-write checks and claims.
        Variant::Fixed => rt::branch(service.last_flush.fetch_max(point, Ordering::SeqCst) < point),
    }
}

/// Flushes the queue for flush point `point`.
fn flush(service: &Service, point: u64) {
    let taken = service.queue.lock().unwrap().drain(..).count() as u64;
    let mut log = service.flushes.lock().unwrap();
    let index = (point - 1) as usize;
    assert!(
        rt::branch(!log.flushed[index]),
        "long-run: flush point {point} was flushed twice: two workers both found it unclaimed (the check of last_flush and the claim are separate accesses)"
    );
    log.flushed[index] = true;
    log.summaries += taken;
}

/// One worker of [`long_run`]; returns its checksum.
fn long_worker(service: &Service, worker: u64, variant: Variant) -> u64 {
    // The worker's running checksum: a `Var` no other thread touches.
    let checksum = Var::new(0u64);
    let mut seen_epoch = 0;
    for batch in 1..=LONG_BATCHES {
        for record in 0..LONG_RECORDS {
            let value = checksum.get();
            let record = long_record(worker, batch, record);
            checksum.set(long_fold(value, record, rt::branch(long_is_added(record))));
        }
        let summary = checksum.get();
        service.queue.lock().unwrap().push_back(summary);
        if worker == 0 {
            if rt::branch(batch.is_multiple_of(LONG_EPOCH_BATCHES)) {
                service
                    .epoch
                    .store(batch / LONG_EPOCH_BATCHES, Ordering::SeqCst);
            }
        } else {
            let epoch = service.epoch.load(Ordering::SeqCst);
            if rt::branch(epoch != seen_epoch) {
                seen_epoch = epoch;
                unrelated_work(LONG_RELOAD_STEPS); // reload the configuration
            }
        }
        if rt::branch(batch.is_multiple_of(LONG_FLUSH_BATCHES)) {
            let point = batch / LONG_FLUSH_BATCHES;
            if claim_flush(service, point, variant) {
                flush(service, point);
            }
        }
    }
    checksum.get()
}

/// A long-running program for seed 004's Table 2 analogue (the paper's real programs and large
/// benchmarks, whose traces it cuts into per-thread windows): over a million steps in one
/// execution, almost all of them thread-local, with a few schedule-sensitive branches among
/// them, one of which leads to a bug.
///
/// Not from the paper, which evaluates real Java programs whose executions log tens of millions
/// of events; this is a small service with the same shape. `LONG_WORKERS` (4) workers each
/// process [`LONG_BATCHES`] batches of [`LONG_RECORDS`] records. A record is folded into the
/// worker's running checksum, a `Var` only that worker touches (a read, a branch on the
/// record's value, a write), so almost every step and branch is thread-local and
/// input-determined. After each batch a worker pushes the batch's summary to a queue under a
/// `Mutex`, and then worker 0 advances the configuration epoch (an atomic status field) every
/// [`LONG_EPOCH_BATCHES`] batches, while the other workers read it and branch on whether it
/// changed, reloading their configuration (a few local steps) if so. Which batch first sees a
/// new epoch depends on the schedule: a benign schedule-sensitive branch, and since a worker
/// reads the epoch once per batch, the read that first sees a new epoch comes at most one batch
/// (about 130 of the reader's steps) after the write. Every
/// [`LONG_FLUSH_BATCHES`] batches a worker reaches a flush point; the first worker to arrive
/// claims it through the atomic `last_flush` and drains the queue (the later ones find it
/// claimed: a second schedule-sensitive branch, benign as long as the claim is atomic).
///
/// Choices left open: the sizes (1.16 million steps and 0.58 million branch events per
/// execution, 0.1 to 0.3 seconds under a random walk in a release build), records as
/// SplitMix64 values of their position, and the flush log checking that no flush point is
/// flushed twice.
///
/// Bug: in the buggy twin the claim is a check-then-act, `if (lastFlush < point) lastFlush =
/// point`, a load and a separate store. If a second worker's check falls between the first
/// worker's check and its store, both flush the same point, which the flush log's assertion
/// reports. The workers advance at about the same pace (under a random walk, two workers are a
/// few hundred of their steps apart when the first reaches a flush point), so a check that
/// found the point claimed comes a few hundred steps of its thread after the claim it saw: a
/// schedule-sensitive branch whose other side, found by moving that check before the claim, is
/// the bug. A random walk needs the second check in a window of one step, which happened in 3 of
/// 5,200 executions we ran; PCT needs a change point in that window out of a million steps.
/// RaceFuzzer finds it after its profiling runs, at about the 23rd execution: the load and the
/// store of `last_flush` are a potential race on an atomic, and its directed executions put
/// one worker's check right before another's claim. Fixed twin: the claim is one `fetch_max`,
/// so exactly one worker claims each point (which one is still schedule sensitive, and
/// benign).
///
/// The program is marked [`Program::long`]: default suite runs skip it, and runs that name it
/// raise the step bound.
pub fn long_run(variant: Variant) {
    let service = Arc::new(Service {
        epoch: AtomicU64::new(0),
        last_flush: AtomicU64::new(0),
        queue: Mutex::new(VecDeque::new()),
        flushes: Mutex::new(FlushLog {
            flushed: vec![false; LONG_FLUSH_POINTS as usize],
            summaries: 0,
        }),
    });
    let workers: Vec<_> = (0..LONG_WORKERS)
        .map(|worker| {
            let service = service.clone();
            thread::spawn(move || long_worker(&service, worker, variant))
        })
        .collect();
    let checksums: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap()).collect();

    for (worker, checksum) in (0..LONG_WORKERS).zip(checksums) {
        assert!(
            rt::branch(checksum == long_expected_checksum(worker)),
            "long-run: worker {worker}'s checksum must be the fold of its records"
        );
    }
    let left = service.queue.lock().unwrap().len() as u64;
    let log = service.flushes.lock().unwrap();
    assert!(
        rt::branch(log.flushed.iter().all(|&flushed| flushed)),
        "long-run: every flush point must be flushed, flushed {:?}",
        log.flushed
    );
    assert!(
        rt::branch(log.summaries + left == LONG_WORKERS * LONG_BATCHES),
        "long-run: every batch summary is flushed or still queued: {} flushed, {left} queued",
        log.summaries
    );
    assert!(
        rt::branch(service.epoch.load(Ordering::SeqCst) == LONG_BATCHES / LONG_EPOCH_BATCHES),
        "long-run: worker 0 advanced the epoch after every {LONG_EPOCH_BATCHES} batches"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "tame-derby",
        origin: "Huang, Rauchwerger (TAME), Fig 2 (Apache Derby referencedColumnMap)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "a non-null check of a shared field is followed by a second read that another thread may have nulled",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: derby,
    },
    Program {
        name: "tame-fig1",
        origin: "Huang, Rauchwerger (TAME), Fig 1 (is_good: protocol chosen by a monitored flag)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "the is_good branch reads the optimistic initial value before the monitor's first measurement and picks the wrong protocol",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: fig1,
    },
    Program {
        name: "tame-check-hash",
        origin: "Huang, Rauchwerger (TAME), checkHash example (fine-grained tracing figure)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "both threads see no stored hash, both store, and the cross-check of the two hash implementations never happens",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: check_hash,
    },
    Program {
        name: "tame-local-branches",
        origin: "Huang, Rauchwerger (TAME), precision (not in the paper): branches on thread-local and synchronisation-ordered data",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "the consumer checks under the handoff's lock whether the table is published instead of waiting for it, and looks up an empty table",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: local_branches,
    },
    Program {
        name: "tame-long-run",
        origin: "Huang, Rauchwerger (TAME), Table 2 analogue (not in the paper): a million steps, few of them shared",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "two workers both find a flush point unclaimed (check-then-act on an atomic) and flush it twice",
        found_by: Finding {
            strategy: "racefuzzer",
            within: 50,
        },
        long: true,
        needs_weak_memory: false,
        run: long_run,
    },
];
