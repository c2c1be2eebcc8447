//! The weak memory model against the classic litmus tests: each test's outcomes are collected
//! over an exhaustive search (`dfs`, which tries every store each load may read) and the weak
//! outcome is asserted reachable or unreachable as the Rust (C++20) memory model says, or, for
//! 2+2W and the loads after a yield, as the model's documented restrictions say. Then data
//! races through relaxed publication, the sequentially consistent model, std's ordering panics,
//! and the report of a stale read.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave::cell::UnsafeCell;
use interleave::sync::atomic::{fence, AtomicUsize, Ordering};
use interleave::sync::Arc;
use interleave::{thread, FailureKind, MemoryModel, YieldVisibility};

use super::helpers::builder;

use Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};

/// Every outcome `f` returns over the whole search tree of `dfs` as `search` configures it;
/// the search must finish and no execution may fail.
fn outcomes_of<T: Ord + Send>(
    search: interleave::Builder,
    f: impl Fn() -> T + Sync,
) -> BTreeSet<T> {
    const BUDGET: u64 = 200_000;
    let seen = StdMutex::new(BTreeSet::new());
    let report = search
        .executions(BUDGET)
        .explore(|| {
            let outcome = f();
            seen.lock().unwrap().insert(outcome);
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(
        report.executions < BUDGET,
        "the search did not finish in {BUDGET} executions"
    );
    seen.into_inner().unwrap()
}

/// Every outcome `f` returns over the whole search tree of `dfs` under `memory`.
fn outcomes_under<T: Ord + Send>(memory: MemoryModel, f: impl Fn() -> T + Sync) -> BTreeSet<T> {
    outcomes_of(builder("dfs").memory(memory), f)
}

/// [`outcomes_under`] the weak model, the default.
fn outcomes<T: Ord + Send>(f: impl Fn() -> T + Sync) -> BTreeSet<T> {
    outcomes_under(MemoryModel::Weak, f)
}

/// Two locations, shared by the threads of a litmus test.
#[derive(Default)]
struct Pair {
    x: AtomicUsize,
    y: AtomicUsize,
}

/// Store buffering: each thread stores to one location and loads the other.
fn store_buffering(store: Ordering, load: Ordering, fenced: bool) -> (usize, usize) {
    let pair = Arc::new(Pair::default());
    let other = Arc::clone(&pair);
    let handle = thread::spawn(move || {
        other.y.store(1, store);
        if fenced {
            fence(SeqCst);
        }
        other.x.load(load)
    });
    pair.x.store(1, store);
    if fenced {
        fence(SeqCst);
    }
    let seen_y = pair.y.load(load);
    (seen_y, handle.join().unwrap())
}

#[test]
fn store_buffering_shows_both_stale_reads_only_without_seq_cst() {
    assert!(outcomes(|| store_buffering(Relaxed, Relaxed, false)).contains(&(0, 0)));
    assert!(outcomes(|| store_buffering(Release, Acquire, false)).contains(&(0, 0)));
    let seq_cst = outcomes(|| store_buffering(SeqCst, SeqCst, false));
    assert_eq!(seq_cst, BTreeSet::from([(0, 1), (1, 0), (1, 1)]));
    let fenced = outcomes(|| store_buffering(Relaxed, Relaxed, true));
    assert_eq!(fenced, BTreeSet::from([(0, 1), (1, 0), (1, 1)]));
}

#[test]
fn the_sequentially_consistent_model_never_reads_a_stale_store() {
    let outcomes = outcomes_under(MemoryModel::SequentiallyConsistent, || {
        store_buffering(Relaxed, Relaxed, false)
    });
    assert!(!outcomes.contains(&(0, 0)), "{outcomes:?}");
}

/// Message passing: data then a flag; the reader reads the flag then the data.
fn message_passing(publish: Ordering, observe: Ordering, fences: bool) -> (usize, usize) {
    let pair = Arc::new(Pair::default());
    let writer = Arc::clone(&pair);
    let handle = thread::spawn(move || {
        writer.x.store(1, Relaxed);
        if fences {
            fence(Release);
        }
        writer.y.store(1, publish);
    });
    let flag = pair.y.load(observe);
    if fences {
        fence(Acquire);
    }
    let data = pair.x.load(Relaxed);
    handle.join().unwrap();
    (flag, data)
}

#[test]
fn message_passing_needs_release_and_acquire() {
    assert!(outcomes(|| message_passing(Relaxed, Relaxed, false)).contains(&(1, 0)));
    assert!(outcomes(|| message_passing(Release, Relaxed, false)).contains(&(1, 0)));
    assert!(outcomes(|| message_passing(Relaxed, Acquire, false)).contains(&(1, 0)));
    let synchronised = outcomes(|| message_passing(Release, Acquire, false));
    assert_eq!(synchronised, BTreeSet::from([(0, 0), (0, 1), (1, 1)]));
    let fenced = outcomes(|| message_passing(Relaxed, Relaxed, true));
    assert_eq!(fenced, BTreeSet::from([(0, 0), (0, 1), (1, 1)]));
}

#[test]
fn load_buffering_never_reads_from_the_future() {
    let outcomes = outcomes(|| {
        let pair = Arc::new(Pair::default());
        let other = Arc::clone(&pair);
        let handle = thread::spawn(move || {
            let seen = other.y.load(Relaxed);
            other.x.store(1, Relaxed);
            seen
        });
        let seen = pair.x.load(Relaxed);
        pair.y.store(1, Relaxed);
        (seen, handle.join().unwrap())
    });
    assert!(!outcomes.contains(&(1, 1)), "{outcomes:?}");
    assert!(outcomes.contains(&(0, 0)));
}

/// IRIW: two writers, two readers that read the locations in opposite orders.
fn independent_reads_of_independent_writes(order: Ordering) -> [usize; 4] {
    let pair = Arc::new(Pair::default());
    let writers = [0, 1].map(|which| {
        let pair = Arc::clone(&pair);
        thread::spawn(move || {
            let location = if which == 0 { &pair.x } else { &pair.y };
            location.store(1, if order == SeqCst { SeqCst } else { Release });
        })
    });
    let reader = {
        let pair = Arc::clone(&pair);
        thread::spawn(move || [pair.y.load(order), pair.x.load(order)])
    };
    let [x_first, y_second] = [pair.x.load(order), pair.y.load(order)];
    let [y_first, x_second] = reader.join().unwrap();
    for writer in writers {
        writer.join().unwrap();
    }
    [x_first, y_second, y_first, x_second]
}

#[test]
fn iriw_readers_disagree_on_the_order_of_the_writes_only_without_seq_cst() {
    let acquire = outcomes(|| independent_reads_of_independent_writes(Acquire));
    assert!(acquire.contains(&[1, 0, 1, 0]));
    let seq_cst = outcomes(|| independent_reads_of_independent_writes(SeqCst));
    assert!(!seq_cst.contains(&[1, 0, 1, 0]), "{seq_cst:?}");
}

#[test]
fn reads_of_one_location_respect_its_modification_order() {
    // CoRR: two reads in one thread never see the stores in the opposite order.
    let read_read = outcomes(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let writer = Arc::clone(&x);
        let handle = thread::spawn(move || {
            writer.store(1, Relaxed);
            writer.store(2, Relaxed);
        });
        let seen = (x.load(Relaxed), x.load(Relaxed));
        handle.join().unwrap();
        seen
    });
    assert!(read_read.contains(&(0, 2)) && read_read.contains(&(1, 1)));
    assert!(
        read_read.iter().all(|&(first, second)| first <= second),
        "{read_read:?}"
    );

    // CoWR: a thread reads its own store or a later one, never the value before it.
    let write_read = outcomes(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let writer = Arc::clone(&x);
        let handle = thread::spawn(move || writer.store(2, Relaxed));
        x.store(1, Relaxed);
        let seen = x.load(Relaxed);
        handle.join().unwrap();
        seen
    });
    assert_eq!(write_read, BTreeSet::from([1, 2]));
}

#[test]
fn a_read_modify_write_hides_older_stores_from_its_thread_and_those_that_sync_with_it() {
    // The model marks a successful read-modify-write's own store as seen by its thread, not
    // the store it read (the store it writes is newer): a thread that acquires what the
    // read-modify-write's thread released afterwards must still read its store or a later one.
    let seen = outcomes(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicUsize::new(0));
        let stored = Arc::clone(&x);
        let writer = thread::spawn(move || stored.store(10, Relaxed));
        let (counter, published) = (Arc::clone(&x), Arc::clone(&flag));
        let incrementer = thread::spawn(move || {
            let read = counter.fetch_add(1, Relaxed);
            let again = counter.load(Relaxed);
            published.store(1, Release);
            (read, again)
        });
        let observed = (flag.load(Acquire) == 1).then(|| x.load(Relaxed));
        writer.join().unwrap();
        let (read, again) = incrementer.join().unwrap();
        (read, again, observed)
    });
    assert!(seen.contains(&(10, 11, Some(11))), "{seen:?}");
    assert!(seen.contains(&(0, 1, Some(1))), "{seen:?}");
    assert!(seen.contains(&(0, 1, Some(10))), "{seen:?}");
    for &(read, again, observed) in &seen {
        let allowed: &[usize] = if read == 10 { &[11] } else { &[1, 10] };
        assert!(allowed.contains(&again), "{seen:?}");
        assert!(observed.is_none_or(|v| allowed.contains(&v)), "{seen:?}");
    }
}

#[test]
fn two_plus_two_writes_keeps_the_modification_order_of_execution() {
    // RC11 allows x == 1 && y == 1 at the end for relaxed stores; the model adds stores to the
    // modification order where they run, which never orders them that way (a documented
    // restriction of runtime/memory.rs).
    let outcomes = outcomes(|| {
        let pair = Arc::new(Pair::default());
        let other = Arc::clone(&pair);
        let handle = thread::spawn(move || {
            other.x.store(1, Relaxed);
            other.y.store(2, Relaxed);
        });
        pair.y.store(1, Relaxed);
        pair.x.store(2, Relaxed);
        handle.join().unwrap();
        (pair.x.load(Relaxed), pair.y.load(Relaxed))
    });
    assert!(!outcomes.contains(&(1, 1)), "{outcomes:?}");
    assert!(outcomes.contains(&(2, 2)));
}

/// A release store to `x`, then another thread's relaxed `continuation` to `x`; a reader that
/// acquires `x == 2` checks whether the data written before the release store is visible.
fn release_sequence(read_modify_write: bool) -> BTreeSet<(usize, usize)> {
    outcomes(move || {
        let pair = Arc::new(Pair::default());
        let releaser = {
            let pair = Arc::clone(&pair);
            thread::spawn(move || {
                pair.y.store(1, Relaxed);
                pair.x.store(1, Release);
            })
        };
        let continuer = {
            let pair = Arc::clone(&pair);
            thread::spawn(move || {
                if read_modify_write {
                    pair.x.fetch_add(1, Relaxed);
                } else if pair.x.load(Relaxed) == 1 {
                    pair.x.store(2, Relaxed);
                }
            })
        };
        let seen = pair.x.load(Acquire);
        let data = pair.y.load(Relaxed);
        releaser.join().unwrap();
        continuer.join().unwrap();
        (seen, data)
    })
}

#[test]
fn a_read_modify_write_continues_a_release_sequence_and_a_store_does_not() {
    let through_rmw = release_sequence(true);
    assert!(through_rmw.contains(&(2, 1)));
    assert!(!through_rmw.contains(&(2, 0)), "{through_rmw:?}");
    // A plain store ends the sequence (C++20), so reading it synchronises with nothing.
    assert!(release_sequence(false).contains(&(2, 0)));
}

/// A relaxed read-modify-write continues the release sequence of a store its thread never
/// acquired, and then releases another flag: a reader that acquires that flag knows the
/// read-modify-write's epoch, yet reading the sequence must still give it the first store's
/// clock (a read skips that join only when its clock holds the store's, which here it does not).
#[test]
fn a_release_sequence_reaches_a_reader_that_knows_the_continuing_thread() {
    let outcomes = outcomes(|| {
        let flags = Arc::new((Pair::default(), AtomicUsize::new(0)));
        let releaser = {
            let flags = Arc::clone(&flags);
            thread::spawn(move || {
                flags.0.y.store(1, Relaxed);
                flags.0.x.store(1, Release);
            })
        };
        let continuer = {
            let flags = Arc::clone(&flags);
            thread::spawn(move || {
                if flags.0.x.fetch_add(1, Relaxed) == 1 {
                    flags.1.store(1, Release);
                }
            })
        };
        let seen = if flags.1.load(Acquire) == 1 {
            Some((flags.0.x.load(Acquire), flags.0.y.load(Relaxed)))
        } else {
            None
        };
        releaser.join().unwrap();
        continuer.join().unwrap();
        seen
    });
    assert!(outcomes.contains(&Some((2, 1))), "{outcomes:?}");
    assert!(!outcomes.contains(&Some((2, 0))), "{outcomes:?}");
}

#[test]
fn data_published_with_a_relaxed_flag_is_a_data_race() {
    let publish = |order: Ordering, observe: Ordering| {
        builder("dfs").executions(100_000).explore(move || {
            let data = Arc::new((UnsafeCell::new(0usize), AtomicUsize::new(0)));
            let writer = Arc::clone(&data);
            let handle = thread::spawn(move || {
                writer.0.with_mut(|value| unsafe { *value = 7 });
                writer.1.store(1, order);
            });
            if data.1.load(observe) == 1 {
                assert_eq!(data.0.with(|value| unsafe { *value }), 7);
            }
            handle.join().unwrap();
        })
    };
    let relaxed = publish(Relaxed, Relaxed).unwrap();
    let failure = relaxed.first_failure().expect("the race is found");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    let released = publish(Release, Acquire).unwrap();
    assert!(released.is_ok(), "{released}");
}

#[test]
fn a_cell_built_with_its_value_and_published_relaxed_is_a_data_race() {
    // The node's value is written by `UnsafeCell::new` (or `Var::new`) only, as a Treiber
    // stack's push or a lazy initialisation builds it: the creation is the write the reader
    // races with when the pointer is handed over without release and acquire.
    use interleave::cell::Var;
    use interleave::sync::atomic::AtomicPtr;
    struct Node {
        cell: UnsafeCell<usize>,
        var: Var<usize>,
    }
    let publish = |spec: &str, store: Ordering, read_var: bool| {
        builder(spec).executions(100_000).explore(move || {
            let slot = Arc::new(AtomicPtr::<Node>::new(std::ptr::null_mut()));
            let writer = Arc::clone(&slot);
            let handle = thread::spawn(move || {
                let node = Box::new(Node {
                    cell: UnsafeCell::new(7),
                    var: Var::new(7),
                });
                writer.store(Box::into_raw(node), store);
            });
            let node = slot.load(Acquire);
            if !node.is_null() {
                // SAFETY: the node stays alive until the end of the execution.
                let node = unsafe { &*node };
                let value = if read_var {
                    node.var.get()
                } else {
                    node.cell.with(|value| unsafe { *value })
                };
                assert_eq!(value, 7);
            }
            handle.join().unwrap();
            let node = slot.load(Relaxed);
            if !node.is_null() {
                // SAFETY: the thread that built it has finished; nothing else frees it.
                drop(unsafe { Box::from_raw(node) });
            }
        })
    };
    for spec in ["dpor", "random"] {
        for read_var in [false, true] {
            let relaxed = publish(spec, Relaxed, read_var).unwrap();
            let failure = relaxed.first_failure().expect("the race is found");
            assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
            assert!(
                failure
                    .message
                    .contains("write of the initial value (its creation)")
                    && failure.message.contains("a Relaxed store releases nothing"),
                "{failure}"
            );
            let released = publish(spec, Release, read_var).unwrap();
            assert!(released.is_ok(), "{spec}: {released}");
        }
    }
}

/// Store buffering with a `SeqCst` fence in the first thread only, against the second
/// thread's accesses with `store` and `load` orderings.
fn one_sided_store_buffering(store: Ordering, load: Ordering) -> (usize, usize) {
    let pair = Arc::new(Pair::default());
    let other = Arc::clone(&pair);
    let handle = thread::spawn(move || {
        other.y.store(1, store);
        other.x.load(load)
    });
    pair.x.store(1, Relaxed);
    fence(SeqCst);
    let seen_y = pair.y.load(Relaxed);
    (seen_y, handle.join().unwrap())
}

#[test]
fn a_seq_cst_fence_orders_only_against_seq_cst_operations_on_the_other_side() {
    // C++20 [atomics.order] p4: with the fence in one thread, a `SeqCst` store and an
    // `Acquire` load in the other (no fence there) may both read 0, and a `SeqCst` store and
    // load may not (conditions 4.2 and 4.3 order the fence between them in `S`).
    let acquire = outcomes(|| one_sided_store_buffering(SeqCst, Acquire));
    assert_eq!(acquire, BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]));
    let seq_cst = outcomes(|| one_sided_store_buffering(SeqCst, SeqCst));
    assert_eq!(seq_cst, BTreeSet::from([(0, 1), (1, 0), (1, 1)]));
}

/// Three threads where `SeqCst` fences must order a third thread's accesses: a reader of `x`
/// fences and loads `y`; a writer of `y` with `SeqCst` then loads `x` with `load`.
fn fenced_reader_against_seq_cst_writer(load: Ordering) -> (usize, usize, usize) {
    let pair = Arc::new(Pair::default());
    let (reader, writer) = (Arc::clone(&pair), Arc::clone(&pair));
    let reader = thread::spawn(move || {
        let seen_x = reader.x.load(Relaxed);
        fence(SeqCst);
        (seen_x, reader.y.load(Relaxed))
    });
    let writer = thread::spawn(move || {
        writer.y.store(1, SeqCst);
        writer.x.load(load)
    });
    pair.x.store(1, Relaxed);
    let (seen_x, seen_y) = reader.join().unwrap();
    (seen_x, seen_y, writer.join().unwrap())
}

#[test]
fn seq_cst_fences_order_a_third_threads_accesses_and_dpor_reaches_every_outcome_of_dfs() {
    // The reader saw x = 1 before its fence and y = 0 after it, so its fence precedes the
    // writer's `SeqCst` store in `S` (4.3); a `SeqCst` load of x after that store must then
    // see x = 1 (4.2), an `Acquire` one need not.
    let seq_cst = outcomes(|| fenced_reader_against_seq_cst_writer(SeqCst));
    assert!(!seq_cst.contains(&(1, 0, 0)), "{seq_cst:?}");
    let acquire = outcomes(|| fenced_reader_against_seq_cst_writer(Acquire));
    assert!(acquire.contains(&(1, 0, 0)), "{acquire:?}");
    let dpor = |f: fn() -> (usize, usize, usize)| outcomes_of(builder("dpor"), f);
    assert_eq!(
        dpor(|| fenced_reader_against_seq_cst_writer(SeqCst)),
        seq_cst
    );
    assert_eq!(
        dpor(|| fenced_reader_against_seq_cst_writer(Acquire)),
        acquire
    );
    let two = |f: fn() -> (usize, usize)| (outcomes(f), outcomes_of(builder("dpor"), f));
    for (dfs, dpor) in [
        two(|| one_sided_store_buffering(SeqCst, Acquire)),
        two(|| one_sided_store_buffering(SeqCst, SeqCst)),
        two(|| store_buffering(Relaxed, Relaxed, true)),
    ] {
        assert_eq!(dpor, dfs);
    }
}

/// Dekker's mutual exclusion: each thread raises its flag and enters when it then sees the
/// other's flag down; inside, it writes a shared cell. The first thread raises its flag with
/// a `Relaxed` store and a `SeqCst` fence; the second with a `SeqCst` store and, when
/// `second_fenced`, a `SeqCst` fence before its `Relaxed` load (without it, its load is
/// `Acquire`, which C++20 does not order after its store).
fn dekker(second_fenced: bool) -> interleave::Report {
    builder("dfs")
        .executions(100_000)
        .explore(move || {
            let shared = Arc::new((Pair::default(), UnsafeCell::new(0usize)));
            let other = Arc::clone(&shared);
            let handle = thread::spawn(move || {
                other.0.y.store(1, SeqCst);
                let seen = if second_fenced {
                    fence(SeqCst);
                    other.0.x.load(Relaxed)
                } else {
                    other.0.x.load(Acquire)
                };
                if seen == 0 {
                    other.1.with_mut(|value| unsafe { *value += 1 });
                }
            });
            shared.0.x.store(1, Relaxed);
            fence(SeqCst);
            if shared.0.y.load(Relaxed) == 0 {
                shared.1.with_mut(|value| unsafe { *value += 1 });
            }
            handle.join().unwrap();
        })
        .unwrap()
}

#[test]
fn mutual_exclusion_by_a_fence_on_one_side_only_is_broken() {
    let one_sided = dekker(false);
    let failure = one_sided.first_failure().expect("both threads enter");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    let fenced = dekker(true);
    assert!(fenced.is_ok(), "{fenced}");
}

#[test]
fn a_seq_cst_fence_creates_no_happens_before_edge_of_its_own() {
    // The writer publishes with a `SeqCst` fence and a `Relaxed` flag. A reader that sees the
    // flag with a `Relaxed` load synchronises with the fence only through an acquire of its
    // own (an `Acquire` fence); a `SeqCst` load of another location after the fence in `S`
    // acquires nothing from it, so the plain read races with the write.
    let publish = |acquire_fence: bool| {
        builder("dfs")
            .executions(100_000)
            .explore(move || {
                let shared = Arc::new((UnsafeCell::new(0usize), Pair::default()));
                let writer = Arc::clone(&shared);
                let handle = thread::spawn(move || {
                    writer.0.with_mut(|value| unsafe { *value = 7 });
                    fence(SeqCst);
                    writer.1.x.store(1, Relaxed);
                });
                if shared.1.x.load(Relaxed) == 1 {
                    if acquire_fence {
                        fence(Acquire);
                    } else {
                        shared.1.y.load(SeqCst);
                    }
                    assert_eq!(shared.0.with(|value| unsafe { *value }), 7);
                }
                handle.join().unwrap();
            })
            .unwrap()
    };
    let racy = publish(false);
    let failure = racy.first_failure().expect("the race is found");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    let synchronised = publish(true);
    assert!(synchronised.is_ok(), "{synchronised}");
}

#[test]
fn orderings_std_rejects_panic_as_under_std() {
    let cases: [(&str, fn()); 4] = [
        ("there is no such thing as a release load", || {
            AtomicUsize::new(0).load(Release);
        }),
        ("there is no such thing as an acquire store", || {
            AtomicUsize::new(0).store(1, Acquire)
        }),
        ("there is no such thing as a relaxed fence", || {
            fence(Relaxed)
        }),
        (
            "there is no such thing as an acquire-release failure ordering",
            || {
                let _ = AtomicUsize::new(0).compare_exchange(0, 1, SeqCst, AcqRel);
            },
        ),
    ];
    for (message, case) in cases {
        let report = builder("random").executions(1).explore(case).unwrap();
        let failure = report.first_failure().expect("the ordering panics");
        assert!(failure.message.contains(message), "{failure}");
    }
}

/// The outcomes of a reader that yields between two rounds of loads, against a writer that
/// stores 1 and then 2 to `x` and then raises `y`, everything `Relaxed`: the reader's
/// `(y, x)` before the yield and `(y, x)` after it. `y == 1` shows that both stores to `x` had
/// been made by that point.
fn reads_around_a_yield(rule: YieldVisibility) -> BTreeSet<(usize, usize, usize, usize)> {
    outcomes_of(builder("dfs").yield_visibility(rule), || {
        let pair = Arc::new(Pair::default());
        let writer = Arc::clone(&pair);
        let handle = thread::spawn(move || {
            writer.x.store(1, Relaxed);
            writer.x.store(2, Relaxed);
            writer.y.store(1, Relaxed);
        });
        let before = (pair.y.load(Relaxed), pair.x.load(Relaxed));
        thread::yield_now();
        let after = (pair.y.load(Relaxed), pair.x.load(Relaxed));
        handle.join().unwrap();
        (before.0, before.1, after.0, after.1)
    })
}

#[test]
fn each_rule_for_loads_after_a_yield_hides_the_stale_reads_it_documents() {
    // The default: after the yield, no store older than the latest one made before it. Once
    // `y` was seen raised before the yield, `x` reads 2; a store the reader saw may be read
    // again when the newer one came after the yield.
    let latest = reads_around_a_yield(YieldVisibility::LatestBeforeYield);
    assert!(
        latest.iter().all(|&(y, _, _, x)| y == 0 || x == 2),
        "{latest:?}"
    );
    assert!(latest.contains(&(0, 1, 1, 1)), "{latest:?}");
    // loom's: after the yield, no store the reader saw before it while a newer one exists
    // (`y` raised after the yield shows one does); a store it never saw may be read however
    // old.
    let unseen = reads_around_a_yield(YieldVisibility::UnseenBeforeYield);
    assert!(
        unseen
            .iter()
            .all(|&(_, before, y, after)| y == 0 || before == 2 || after != before),
        "{unseen:?}"
    );
    assert!(unseen.contains(&(1, 0, 1, 1)), "{unseen:?}");
    // Coherence holds under both: the second load of `x` reads no older store than the first.
    for &(_, before, _, after) in latest.iter().chain(&unseen) {
        assert!(before <= after);
    }
}

/// A newcomer's message passing with a `Relaxed` flag and a yield (or a sleep) between loading
/// the flag and loading the data passed every strategy under the old default rule, which
/// made every store made before the yield visible after it; a complete `dpor` search said so.
#[test]
fn a_yield_between_a_relaxed_flag_and_its_data_hides_no_stale_read_by_default() {
    let hand_over = |sleeps: bool| {
        let pair = Arc::new(Pair::default());
        let writer = Arc::clone(&pair);
        let handle = thread::spawn(move || {
            writer.x.store(42, Relaxed);
            writer.y.store(1, Relaxed);
        });
        if pair.y.load(Relaxed) == 1 {
            if sleeps {
                thread::sleep(std::time::Duration::from_millis(1));
            } else {
                thread::yield_now();
            }
            assert_eq!(pair.x.load(Relaxed), 42, "the flag was set before the data");
        }
        handle.join().unwrap();
    };
    for sleeps in [false, true] {
        for spec in ["dpor", "auto"] {
            let report = builder(spec)
                .executions(10_000)
                .explore(move || hand_over(sleeps))
                .unwrap();
            let failure = report.first_failure().expect("the stale data is read");
            assert!(failure.message.contains("the flag was set before the data"));
        }
        let old_rule = builder("dpor")
            .yield_visibility(YieldVisibility::LatestBeforeYield)
            .explore(move || hand_over(sleeps))
            .unwrap();
        assert!(old_rule.is_ok(), "{old_rule}");
    }
}

#[test]
fn a_stale_read_is_reported_with_the_store_it_read_and_the_one_it_missed() {
    let report = builder("random")
        .executions(1_000)
        .explore(|| {
            let pair = Arc::new(Pair::default());
            let writer = Arc::clone(&pair);
            let handle = thread::spawn(move || {
                writer.x.store(1, Relaxed);
                writer.y.store(1, Relaxed);
            });
            if pair.y.load(Relaxed) == 1 {
                assert_eq!(pair.x.load(Relaxed), 1, "the flag was set before the data");
            }
            handle.join().unwrap();
        })
        .unwrap();
    let failure = report.first_failure().expect("the reordering is found");
    let text = failure.to_string();
    assert!(text.contains("the flag was set before the data"), "{text}");
    assert!(text.contains("read a stale value"), "{text}");
    // Each atomic step shows its ordering, so the reader sees which access is `Relaxed`.
    assert!(text.contains("load Relaxed AtomicUsize"), "{text}");
    // And the line says why the load could miss the store: the flag's handover orders nothing.
    assert!(
        text.contains("why: step ")
            && text.contains(
                "made after the missed one, but a Relaxed store releases nothing, and no \
                 Release fence comes between the missed store and it; a Relaxed load acquires \
                 nothing"
            ),
        "{text}"
    );
}

/// A newcomer's stale-read line named a store that the shortened interleaving had folded into
/// `... more steps`.
#[test]
fn the_store_a_stale_read_missed_stays_in_a_shortened_interleaving() {
    let report = builder("dpor")
        .executions(100_000)
        .explore(|| {
            let pair = Arc::new(Pair::default());
            let filler = Arc::new(AtomicUsize::new(0));
            let (writer, writer_filler) = (Arc::clone(&pair), Arc::clone(&filler));
            let handle = thread::spawn(move || {
                for _ in 0..30 {
                    writer_filler.store(1, Relaxed);
                }
                writer.x.store(1, Relaxed);
                for _ in 0..30 {
                    writer_filler.store(1, Relaxed);
                }
                writer.y.store(1, Relaxed);
            });
            if pair.y.load(Relaxed) == 1 {
                assert_eq!(pair.x.load(Relaxed), 1, "the flag was set before the data");
            }
            handle.join().unwrap();
        })
        .unwrap();
    let text = report
        .first_failure()
        .expect("the reordering is found")
        .to_string();
    let missed = text
        .split("not the store of step ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("the stale read names the store it missed");
    assert!(
        text.lines()
            .any(|line| line.trim_start().starts_with(&format!("{missed} |"))),
        "step {missed} is not shown:\n{text}"
    );
}

#[test]
fn a_weak_exchange_may_fail_spuriously_but_never_twice_in_a_row() {
    // dfs lets weak exchanges fail spuriously only when asked; the samplers do by default.
    fn spurious() -> interleave::Builder {
        builder("dfs").spurious_cas_failures(true)
    }
    fn outcomes<T: Ord + Send>(f: impl Fn() -> T + Sync) -> BTreeSet<T> {
        outcomes_of(spurious(), f)
    }
    let weak = || AtomicUsize::new(0).compare_exchange_weak(0, 1, AcqRel, Acquire);
    assert_eq!(outcomes(weak), BTreeSet::from([Ok(0), Err(0)]));
    assert_eq!(
        outcomes_of(spurious().memory(MemoryModel::SequentiallyConsistent), weak),
        BTreeSet::from([Ok(0), Err(0)])
    );
    assert_eq!(outcomes_of(builder("dfs"), weak), BTreeSet::from([Ok(0)]));
    // A comparison that does not hold fails as under `compare_exchange`, with no choice.
    let mismatch = || AtomicUsize::new(5).compare_exchange_weak(0, 1, AcqRel, Acquire);
    assert_eq!(outcomes(mismatch), BTreeSet::from([Err(5)]));
    let strong = || AtomicUsize::new(0).compare_exchange(0, 1, AcqRel, Acquire);
    assert_eq!(outcomes(strong), BTreeSet::from([Ok(0)]));
    // A retry loop fails at most once in a row, so the exhaustive search ends.
    let retries = || {
        let a = AtomicUsize::new(0);
        let mut failures = 0;
        for target in 1..=2 {
            while a
                .compare_exchange_weak(target - 1, target, Relaxed, Relaxed)
                .is_err()
            {
                failures += 1;
            }
        }
        failures
    };
    assert_eq!(outcomes(retries), BTreeSet::from([0, 1, 2]));
    // Two threads incrementing through weak exchanges lose no update.
    let increments = || {
        let a = Arc::new(AtomicUsize::new(0));
        let other = Arc::clone(&a);
        let add = |a: &AtomicUsize| {
            let mut seen = a.load(Relaxed);
            while let Err(found) = a.compare_exchange_weak(seen, seen + 1, AcqRel, Relaxed) {
                seen = found;
            }
        };
        let handle = thread::spawn(move || add(&other));
        add(&a);
        handle.join().unwrap();
        a.load(Relaxed)
    };
    assert_eq!(outcomes(increments), BTreeSet::from([2]));
}

/// A flag claimed with one exchange, whose failure the program takes for another thread's
/// claim. With a weak exchange that is a bug: the exchange may fail while nobody holds the
/// flag.
fn claim_once(weak: bool) {
    let flag = Arc::new(AtomicUsize::new(0));
    let other = Arc::clone(&flag);
    let handle = thread::spawn(move || other.load(Acquire));
    let claimed = if weak {
        flag.compare_exchange_weak(0, 1, AcqRel, Acquire)
    } else {
        flag.compare_exchange(0, 1, AcqRel, Acquire)
    };
    if let Err(holder) = claimed {
        assert_ne!(holder, 0, "the claim failed but nobody holds the flag");
    }
    handle.join().unwrap();
}

#[test]
fn a_weak_exchange_outside_a_loop_is_caught_and_its_spurious_failure_reported() {
    let report = builder("random")
        .executions(200)
        .explore(|| claim_once(true))
        .unwrap();
    let failure = report
        .first_failure()
        .expect("the spurious failure is found");
    let text = failure.to_string();
    assert!(
        text.contains("the claim failed but nobody holds the flag"),
        "{text}"
    );
    assert!(text.contains("spurious failures"), "{text}");
    assert!(text.contains(": T0 on AtomicUsize1 @"), "{text}");
    let replayed = builder("random")
        .replay(&failure.token, || claim_once(true))
        .unwrap();
    let again = replayed.first_failure().expect("the replay fails again");
    assert_eq!(again.token, failure.token);
    assert_eq!(again.message, failure.message);

    let dfs = builder("dfs")
        .spurious_cas_failures(true)
        .explore(|| claim_once(true))
        .unwrap();
    assert!(dfs.first_failure().is_some(), "{dfs}");
    // Off by default for the exhaustive searches, and off when asked for the samplers.
    let off = builder("dfs").explore(|| claim_once(true)).unwrap();
    assert!(off.is_ok(), "{off}");
    let off = builder("random")
        .executions(200)
        .spurious_cas_failures(false)
        .explore(|| claim_once(true))
        .unwrap();
    assert!(off.is_ok(), "{off}");

    // The fixed twin: a strong exchange fails only when another thread holds the flag.
    let fixed = builder("random")
        .executions(2_000)
        .explore(|| claim_once(false))
        .unwrap();
    assert!(fixed.is_ok(), "{fixed}");
    let fixed = builder("dfs").explore(|| claim_once(false)).unwrap();
    assert!(fixed.is_ok(), "{fixed}");
}
