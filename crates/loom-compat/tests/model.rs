//! `loom::model` over interleave: a lost update is found by the exhaustive search and reported
//! as interleave's report, its fixed twin passes, a preemption bound of 0 cannot see the lost
//! update while a bound of 1 can, and `Notify` hands a value over. Where loom's semantics differ
//! from std's they are kept: no `Send` on spawn, an unnamed main thread, `Arc` leak checks, and
//! settings interleave cannot honour are refused rather than ignored.

use std::rc::Rc;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Notify};
use loom::thread;

/// A spawned thread's panic fails the model with its own message, as under loom, whose threads
/// do not catch their panics for `join`: the report opens with it, not with the `unwrap` of
/// the `Err` the join would have returned.
#[test]
fn a_spawned_threads_panic_fails_the_model_with_its_own_message() {
    let payload = std::panic::catch_unwind(|| {
        loom::model(|| {
            let worker = thread::spawn(|| panic!("the worker's invariant broke"));
            worker.join().unwrap();
        })
    })
    .expect_err("the model fails");
    let report = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        report.contains("panicked at") && report.contains("the worker's invariant broke"),
        "{report}"
    );
    assert!(!report.contains("on an `Err` value"), "{report}");
}

/// Two threads increment a counter; `atomic` uses one read-modify-write, otherwise a load and
/// a store that another thread can interleave.
fn increments(atomic: bool) {
    let counter = Arc::new(AtomicUsize::new(0));
    let other = {
        let counter = counter.clone();
        thread::spawn(move || increment(&counter, atomic))
    };
    increment(&counter, atomic);
    other.join().unwrap();
    assert_eq!(counter.load(Ordering::SeqCst), 2, "an increment was lost");
}

fn increment(counter: &AtomicUsize, atomic: bool) {
    if atomic {
        counter.fetch_add(1, Ordering::SeqCst);
    } else {
        let seen = counter.load(Ordering::SeqCst);
        counter.store(seen + 1, Ordering::SeqCst);
    }
}

#[test]
#[should_panic(expected = "an increment was lost")]
fn the_lost_update_is_found() {
    loom::model(|| increments(false));
}

#[test]
fn the_atomic_increment_passes() {
    loom::model(|| increments(true));
}

#[test]
fn no_preemption_cannot_lose_the_update() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(0);
    builder.check(|| increments(false));
}

#[test]
#[should_panic(expected = "an increment was lost")]
fn one_preemption_loses_the_update() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(1);
    builder.check(|| increments(false));
}

#[test]
fn notify_hands_a_value_over() {
    loom::model(|| {
        let slot = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(Notify::new());
        let producer = {
            let (slot, ready) = (slot.clone(), ready.clone());
            thread::spawn(move || {
                slot.store(7, Ordering::SeqCst);
                ready.notify();
            })
        };
        ready.wait();
        assert_eq!(slot.load(Ordering::SeqCst), 7);
        producer.join().unwrap();
    });
}

#[test]
#[should_panic(expected = "memory leak")]
fn a_forgotten_arc_is_a_leak() {
    loom::model(|| std::mem::forget(Arc::new(5)));
}

#[test]
fn spawned_closures_need_not_be_send() {
    loom::model(|| {
        let shared = Rc::new(3);
        let other = shared.clone();
        let t = thread::spawn(move || *other + 1);
        assert_eq!(t.join().unwrap(), 4);
        assert_eq!(*shared, 3);
    });
}

#[test]
#[should_panic(expected = "deadlock")]
fn a_wait_without_notify_is_a_deadlock() {
    loom::model(|| Notify::new().wait());
}

#[test]
fn the_main_thread_has_no_name_as_in_loom() {
    loom::model(|| assert_eq!(thread::current().name(), None));
}

#[test]
fn a_preemption_bound_maps_to_bounded_dpor_and_none_to_dpor() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = None;
    assert_eq!(builder.strategy().to_string(), "dpor");
    builder.preemption_bound = Some(2);
    assert_eq!(builder.strategy().to_string(), "dpor:c=2");
}

/// loom's own `spec::acq_rel` shape, which sets a preemption bound: two spinners each wait for
/// one flag and then read the other with `Acquire`, so under the weak memory model either read
/// may miss the other flag's store, and the count of reads that saw it takes every value from 0
/// to 2. A preemption bound used to map onto `icb`, which reads the latest store at every load
/// and never reached 0; `dpor:c=1` explores the weak memory model.
#[test]
fn a_preemption_bound_still_explores_the_weak_memory_model() {
    use loom::sync::atomic::AtomicBool;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(1);
    let recorded = seen.clone();
    builder.check(move || {
        let x = Arc::new(AtomicBool::new(false));
        let y = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let setter = {
            let y = y.clone();
            thread::spawn(move || y.store(true, Ordering::Release))
        };
        let spinner = |wait_for: Arc<AtomicBool>, then_read: Arc<AtomicBool>| {
            let count = count.clone();
            thread::spawn(move || {
                while !wait_for.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                if then_read.load(Ordering::Acquire) {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let first = spinner(x.clone(), y.clone());
        let second = spinner(y.clone(), x.clone());
        x.store(true, Ordering::Release);
        for handle in [setter, first, second] {
            handle.join().unwrap();
        }
        recorded
            .lock()
            .unwrap()
            .insert(count.load(Ordering::SeqCst));
    });
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, [0, 1, 2].into_iter().collect());
}

/// After a yield, a thread does not read again a store it read before the yield while a newer
/// one exists (loom's rule): the writer's flag, seen raised after the yield, shows that its
/// second store to `x` was made, so the reader's second load of `x` cannot return the 1 its
/// first load read. A store the reader never saw stays readable however old, which interleave's
/// own rule would hide: with `y` seen raised before the yield, the first load's stale 0 is
/// followed by a stale 1.
#[test]
fn loads_after_a_yield_follow_looms_rule() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let recorded = seen.clone();
    loom::model(move || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let writer = {
            let (x, y) = (x.clone(), y.clone());
            thread::spawn(move || {
                x.store(1, Ordering::Relaxed);
                x.store(2, Ordering::Relaxed);
                y.store(1, Ordering::Relaxed);
            })
        };
        let before = (y.load(Ordering::Relaxed), x.load(Ordering::Relaxed));
        thread::yield_now();
        let after = (y.load(Ordering::Relaxed), x.load(Ordering::Relaxed));
        writer.join().unwrap();
        recorded.lock().unwrap().insert((before, after));
    });
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.contains(&((0, 1), (1, 1))), "{seen:?}");
    assert!(seen.contains(&((1, 0), (1, 1))), "{seen:?}");
}

#[test]
#[should_panic(expected = "exceeded the step bound")]
fn a_branch_bound_fails_a_long_execution() {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2;
    builder.check(|| {
        for _ in 0..5 {
            thread::yield_now();
        }
    });
}

#[test]
#[should_panic(expected = "checkpoints")]
fn checkpoints_are_refused_not_ignored() {
    let mut builder = loom::model::Builder::new();
    builder.checkpoint_file("model.json");
    builder.check(|| {});
}
