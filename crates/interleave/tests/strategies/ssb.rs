//! The schedule-sensitive-branch analysis (`interleave::ssb`): it reports the branches a
//! reordering flips, each confirmed by its replay token, and nothing where synchronisation or
//! thread-local data decides the branch. Each small program is also explored exhaustively, and
//! the analysis must report a branch exactly when some schedule takes it both ways.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::panic::Location;

use interleave::cell::Var;
use interleave::ssb::{Analysis, BranchKind, Partition, SsbReport};
use interleave::sync::atomic::{AtomicUsize, Ordering};
use interleave::sync::{mpsc, Arc, Condvar, Mutex};
use interleave::{thread, Builder};

thread_local! {
    /// The (site, outcome) pairs `check` saw in the current execution (every execution runs on
    /// this OS thread).
    static SEEN: RefCell<Vec<(String, bool)>> = const { RefCell::new(Vec::new()) };
}

/// `interleave::branch`, also remembering the outcome for the exhaustive search.
#[track_caller]
fn check(condition: bool) -> bool {
    let site = Location::caller().to_string();
    SEEN.with(|seen| seen.borrow_mut().push((site, condition)));
    interleave::branch(condition)
}

/// Analyses `f` and checks every reported branch against its replay token.
fn analyse(f: impl Fn() + Sync + Copy, partition: Partition) -> SsbReport {
    let report = Analysis::new().partition(partition).run(f).unwrap();
    for b in &report.branches {
        assert!(b.confirm(f).unwrap(), "not confirmed by its token:\n{b}");
    }
    report
}

/// The sites of `check` conditions whose outcomes (the multiset over all threads) differ
/// between two schedules of `f`, over every schedule.
fn sensitive_by_exhaustive_search(f: impl Fn() + Sync + Copy) -> BTreeSet<String> {
    let executions = std::sync::Mutex::new(Vec::new());
    let report = Builder::new()
        .strategy("dpor".parse().unwrap())
        .executions(100_000)
        .workers(1)
        .data_races(interleave::RaceMode::Warn)
        .explore(|| {
            SEEN.with(|seen| seen.borrow_mut().clear());
            f();
            let seen = SEEN.with(|seen| seen.take());
            executions.lock().unwrap().push(seen);
        })
        .unwrap();
    assert!(report.executions < 100_000, "the search must be exhaustive");
    let executions = executions.into_inner().unwrap();
    let mut sensitive = BTreeSet::new();
    for one in &executions {
        for other in &executions {
            for (site, _) in one {
                let outcomes = |e: &Vec<(String, bool)>| {
                    let mut o: Vec<bool> = e
                        .iter()
                        .filter(|(s, _)| s == site)
                        .map(|(_, t)| *t)
                        .collect();
                    o.sort_unstable();
                    o
                };
                if outcomes(one) != outcomes(other) {
                    sensitive.insert(site.clone());
                }
            }
        }
    }
    sensitive
}

fn reported_sites(report: &SsbReport) -> BTreeSet<String> {
    report
        .branches
        .iter()
        .filter(|b| b.kind == BranchKind::Condition)
        .map(|b| b.site.clone())
        .collect()
}

/// Checks the analysis against exhaustive search on `f` and returns its report.
fn agrees_with_exhaustive_search(f: impl Fn() + Sync + Copy) -> SsbReport {
    let report = analyse(f, Partition::Whole);
    assert_eq!(reported_sites(&report), sensitive_by_exhaustive_search(f));
    report
}

fn flag_race() {
    let ready = Arc::new(Var::new(false));
    let writer = ready.clone();
    let t = thread::spawn(move || writer.set(true));
    if check(ready.get()) {
        std::hint::black_box(1);
    }
    t.join().unwrap();
}

#[test]
fn an_unordered_flag_read_is_schedule_sensitive() {
    let report = agrees_with_exhaustive_search(flag_race);
    assert_eq!(report.branches.len(), 1);
    let flip = &report.branches[0];
    assert!(flip.read.site.contains("tests/strategies/ssb.rs"));
    assert!(flip.to_string().contains("schedule-sensitive branch at"));
}

/// The check sits inside the critical section that writes what it reads: the other thread's
/// write cannot come between.
fn lock_held_across_the_check() {
    let x = Arc::new(Mutex::new(0));
    let other = x.clone();
    let t = thread::spawn(move || *other.lock().unwrap() = 2);
    {
        let mut guard = x.lock().unwrap();
        *guard = 1;
        let seen = *guard;
        check(seen == 1);
    }
    t.join().unwrap();
}

/// The same check on a tracked variable, whose accesses are scheduling points of their own.
fn var_under_lock_across_the_check() {
    let lock = Arc::new(Mutex::new(()));
    let x = Arc::new(Var::new(0));
    let (lock2, x2) = (lock.clone(), x.clone());
    let t = thread::spawn(move || {
        let _g = lock2.lock().unwrap();
        x2.set(2);
    });
    {
        let _g = lock.lock().unwrap();
        x.set(1);
        check(x.get() == 1);
    }
    t.join().unwrap();
}

#[test]
fn a_lock_held_across_write_and_check_makes_the_flip_impossible() {
    assert!(agrees_with_exhaustive_search(lock_held_across_the_check)
        .branches
        .is_empty());
    let report = agrees_with_exhaustive_search(var_under_lock_across_the_check);
    assert!(report.branches.is_empty());
    assert!(report.queries == 0 || report.unsatisfiable > 0);
}

/// Two critical sections in either order: the check in one sees the other's write or not.
fn lock_ordered_either_way() {
    let lock = Arc::new(Mutex::new(()));
    let x = Arc::new(Var::new(0));
    let (lock2, x2) = (lock.clone(), x.clone());
    let t = thread::spawn(move || {
        let _g = lock2.lock().unwrap();
        x2.set(1);
    });
    {
        let _g = lock.lock().unwrap();
        check(x.get() == 0);
    }
    t.join().unwrap();
}

#[test]
fn critical_sections_in_the_other_order_flip_the_check() {
    assert_eq!(
        agrees_with_exhaustive_search(lock_ordered_either_way)
            .branches
            .len(),
        1
    );
}

/// The write happens before the join, the read after it.
fn join_orders_the_read() {
    let x = Arc::new(Var::new(0));
    let x2 = x.clone();
    let t = thread::spawn(move || x2.set(1));
    t.join().unwrap();
    check(x.get() == 1);
}

/// Written before the spawn, read by the child; sent over a channel after the write.
fn spawn_and_channel_order_the_reads() {
    let x = Arc::new(Var::new(0));
    x.set(5);
    let data = Arc::new(Var::new(0));
    let (tx, rx) = mpsc::channel();
    let (x2, data2) = (x.clone(), data.clone());
    let t = thread::spawn(move || {
        check(x2.get() == 5);
        data2.set(7);
        tx.send(()).unwrap();
    });
    rx.recv().unwrap();
    check(data.get() == 7);
    t.join().unwrap();
}

/// A condition-variable handshake: the reader waits for the flag, then reads the data the
/// writer stored before raising it.
fn condvar_handshake() {
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let data = Arc::new(Var::new(0));
    let (state2, data2) = (state.clone(), data.clone());
    let t = thread::spawn(move || {
        data2.set(42);
        *state2.0.lock().unwrap() = true;
        state2.1.notify_one();
    });
    let mut ready = state.0.lock().unwrap();
    while !*ready {
        ready = state.1.wait(ready).unwrap();
    }
    drop(ready);
    check(data.get() == 42);
    t.join().unwrap();
}

/// Branches on thread-local data only, next to an unrelated shared counter.
fn thread_local_branches() {
    let counter = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let counter = counter.clone();
            thread::spawn(move || {
                let mine = Var::new(i);
                for step in 0..3 {
                    mine.set(mine.get() + step);
                    check(mine.get() % 2 == 0);
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Another thread stores the value the reader already sees: no value changes.
fn same_value_store() {
    let x = Arc::new(AtomicUsize::new(3));
    let x2 = x.clone();
    let t = thread::spawn(move || x2.store(3, Ordering::SeqCst));
    check(x.load(Ordering::SeqCst) == 3);
    t.join().unwrap();
}

#[test]
fn branches_ordered_by_synchronisation_or_local_data_are_not_reported() {
    for program in [
        join_orders_the_read as fn(),
        spawn_and_channel_order_the_reads,
        condvar_handshake,
        thread_local_branches,
        same_value_store,
    ] {
        let report = agrees_with_exhaustive_search(program);
        assert!(report.branches.is_empty(), "{:#?}", report.branches);
    }
}

/// Fig. 2 of the paper (Derby): a null check, then a dereference another thread can break.
fn null_check_then_use() {
    let map: Arc<Var<Option<u32>>> = Arc::new(Var::new(Some(1)));
    let other = map.clone();
    let t = thread::spawn(move || other.set(None));
    if check(map.get().is_some()) {
        // The `Option` check the user wraps: its flip is the panic's condition.
        let value = map.get();
        check(value.is_some());
        std::hint::black_box(value.expect("checked just before"));
    }
    t.join().unwrap();
}

#[test]
fn a_flipped_check_can_expose_a_panic() {
    let report = agrees_with_exhaustive_search_allowing_failures(null_check_then_use);
    let panic = report
        .branches
        .iter()
        .find(|b| b.kind == BranchKind::Panic)
        .expect("the unwrap after the check panics under some schedule");
    assert!(panic.exposes_failure());
    assert!(!report.failures.is_empty());
}

fn agrees_with_exhaustive_search_allowing_failures(f: fn()) -> SsbReport {
    let report = analyse(f, Partition::Whole);
    assert!(
        reported_sites(&report).is_subset(&sensitive_by_exhaustive_search(|| {
            let _ = std::panic::catch_unwind(f);
        }))
    );
    report
}

#[test]
fn partitions_find_the_flag_race_too() {
    for partition in [Partition::distributed(4), Partition::Global { window: 6 }] {
        assert_eq!(
            analyse(flag_race, partition).branches.len(),
            1,
            "{partition:?}"
        );
    }
}

#[test]
fn impossible_settings_are_errors() {
    let error = Analysis::new()
        .partition(Partition::Global { window: 0 })
        .run(flag_race)
        .unwrap_err();
    assert!(error.to_string().contains("window"));
}
