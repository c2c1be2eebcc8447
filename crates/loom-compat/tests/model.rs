//! interleave-loom finds what loom finds, passes what loom passes, and keeps loom's semantics
//! where they differ from std (no `Send` on spawn, stack sizes in words, Arc leak checks).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex, Notify};
use loom::thread;

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the model should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_lost_update_is_found_with_a_replay_token() {
    let message = panic_message(|| {
        loom::model(|| {
            let hits = Arc::new(AtomicUsize::new(0));
            let other = hits.clone();
            let t = thread::spawn(move || {
                let seen = other.load(Ordering::SeqCst);
                other.store(seen + 1, Ordering::SeqCst);
            });
            let seen = hits.load(Ordering::SeqCst);
            hits.store(seen + 1, Ordering::SeqCst);
            t.join().unwrap();
            assert_eq!(hits.load(Ordering::SeqCst), 2, "an increment was lost");
        })
    });
    assert!(message.contains("an increment was lost"), "{message}");
    assert!(message.contains("INTERLEAVE_REPLAY=il1-"), "{message}");
}

#[test]
fn a_locked_counter_passes() {
    loom::model(|| {
        let total = Arc::new(Mutex::new(0));
        let other = total.clone();
        let t = thread::spawn(move || *other.lock().unwrap() += 1);
        *total.lock().unwrap() += 1;
        t.join().unwrap();
        assert_eq!(*total.lock().unwrap(), 2);
    });
}

#[test]
fn a_forgotten_arc_is_a_leak() {
    let message = panic_message(|| loom::model(|| std::mem::forget(Arc::new(5))));
    assert!(message.contains("memory leak"), "{message}");
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
fn notify_hands_over_one_permit() {
    loom::model(|| {
        let ready = Arc::new(Notify::new());
        let other = ready.clone();
        let t = thread::spawn(move || other.wait());
        ready.notify();
        t.join().unwrap();
    });
}

#[test]
fn a_wait_without_notify_is_a_deadlock() {
    let message = panic_message(|| loom::model(|| Notify::new().wait()));
    assert!(message.contains("deadlock"), "{message}");
}

#[test]
fn the_main_thread_has_no_name_as_in_loom() {
    loom::model(|| assert_eq!(thread::current().name(), None));
}

#[test]
fn a_preemption_bound_maps_to_icb_and_none_to_dpor() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = None;
    assert_eq!(builder.strategy().to_string(), "dpor");
    builder.preemption_bound = Some(2);
    assert!(builder.strategy().to_string().starts_with("icb:c=2"));
}

#[test]
fn a_branch_bound_fails_a_long_execution() {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2;
    let message = panic_message(|| {
        builder.check(|| {
            for _ in 0..5 {
                thread::yield_now();
            }
        })
    });
    assert!(!message.is_empty());
}

#[test]
#[should_panic(expected = "checkpoints")]
fn checkpoints_are_refused_not_ignored() {
    let mut builder = loom::model::Builder::new();
    builder.checkpoint_file("model.json");
    builder.check(|| {});
}
