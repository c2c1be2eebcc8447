//! `loom::model` over interleave: a lost update is found by the exhaustive search and reported
//! as interleave's report, its fixed twin passes, a preemption bound of 0 cannot see the lost
//! update while a bound of 1 can, and `Notify` hands a value over.

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Notify};
use loom::thread;

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
