//! A data race on data handed over through an atomic flag, under the weak memory model: the
//! report says which load read which store, and which of the two orderings keeps the handover
//! from ordering the accesses. Accept a reviewed change to the snapshot with
//! `UPDATE_EXPECT=1 cargo test -p interleave --test reports weak_race_report`.
//!
//! The programs come first and the snapshot last, so rewriting the snapshot never moves the
//! source sites the report names.

use crate::helpers;
use expect_test::expect;
use interleave::cell::Var;
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::thread;

/// A thread writes `data` and raises `ready` with `store`; the main thread reads `data` once it
/// sees `ready` raised with `load`.
fn hand_over(store: Ordering, load: Ordering) {
    let shared = Arc::new((Var::new(0), AtomicBool::new(false)));
    let writer = {
        let shared = shared.clone();
        thread::spawn(move || {
            shared.0.set(42);
            shared.1.store(true, store);
        })
    };
    if shared.1.load(load) {
        assert_eq!(shared.0.get(), 42);
    }
    writer.join().unwrap();
}

/// The text of the first failure of `hand_over(store, load)` under `dfs`, without its replay
/// token; `None` when no execution fails.
fn first_race(store: Ordering, load: Ordering) -> Option<String> {
    let report = helpers::builder("dfs")
        .executions(2000)
        .explore(|| hand_over(store, load))
        .expect("a valid configuration");
    let text = report.first_failure()?.to_string();
    text.split("\n\nTo reproduce").next().map(str::to_string)
}

#[test]
fn a_relaxed_store_read_by_an_acquire_load_is_named_in_the_race() {
    let body = first_race(Ordering::Relaxed, Ordering::Acquire).expect("the handover races");
    expect![[r#"
        interleave found a data race in execution 1 (strategy dfs, seed 0):

          data race on Var1: thread 1 (spawned at reports/weak_race_report.rs:22:9) write at reports/weak_race_report.rs:23:22 and thread 0 (main) read at reports/weak_race_report.rs:28:29 are not ordered by happens-before
            the Acquire load of AtomicBool1 at step 6 read the Relaxed store at step 5, made after the write, but a Relaxed store releases nothing: a Release (or stronger) store read by an Acquire (or stronger) load, or fences of those orderings around the two, would order the accesses

        interleaving (7 steps):
          T0 = thread 0 (main)
          T1 = thread 1 (spawned at reports/weak_race_report.rs:22:9)
          AtomicBool1 = AtomicBool created at reports/weak_race_report.rs:19:41
          Var1 = Var created at reports/weak_race_report.rs:19:28
            step | T0                                                          | T1
               1 | start @reports/weak_race_report.rs:38:10                    |
               2 | spawn @reports/weak_race_report.rs:22:9                     |
               3 |                                                             | start @reports/weak_race_report.rs:22:9
               4 |                                                             | write Var1 @reports/weak_race_report.rs:23:22
               5 |                                                             | store Relaxed AtomicBool1 @reports/weak_race_report.rs:24:22
               6 | load Acquire AtomicBool1 @reports/weak_race_report.rs:27:17 |
               7 | read Var1 @reports/weak_race_report.rs:28:29                |"#]]
    .assert_eq(&body);
}

#[test]
fn a_release_store_read_by_a_relaxed_load_blames_the_load() {
    let body = first_race(Ordering::Release, Ordering::Relaxed).expect("the handover races");
    assert!(
        body.contains(
            "the Relaxed load of AtomicBool1 at step 6 read the Release store at step 5, made \
             after the write, but a Relaxed load acquires nothing"
        ),
        "{body}"
    );
}

#[test]
fn a_race_without_a_handover_has_no_explanation_and_a_correct_one_no_race() {
    assert_eq!(first_race(Ordering::Release, Ordering::Acquire), None);
    assert_eq!(first_race(Ordering::SeqCst, Ordering::SeqCst), None);
    let unsynchronised = helpers::builder("dfs")
        .executions(2000)
        .explore(|| {
            let data = Arc::new(Var::new(0));
            let writer = {
                let data = data.clone();
                thread::spawn(move || data.set(1))
            };
            data.set(2);
            writer.join().unwrap();
        })
        .expect("a valid configuration");
    let text = unsynchronised
        .first_failure()
        .expect("the writes race")
        .to_string();
    assert!(!text.contains("read the"), "{text}");
}

/// The shortened interleaving keeps the load and the store the explanation cites, however many
/// steps come between them and the race (a newcomer's report cited a store its table had
/// folded into `... more steps`).
#[test]
fn the_steps_the_explanation_cites_stay_in_a_shortened_interleaving() {
    let report = helpers::builder("dfs")
        .executions(2000)
        .explore(|| {
            let shared = Arc::new((Var::new(0), AtomicBool::new(false), AtomicBool::new(false)));
            let writer = {
                let shared = shared.clone();
                thread::spawn(move || {
                    shared.0.set(42);
                    for _ in 0..60 {
                        shared.2.store(true, Ordering::Relaxed);
                    }
                    shared.1.store(true, Ordering::Relaxed);
                    for _ in 0..60 {
                        shared.2.store(true, Ordering::Relaxed);
                    }
                })
            };
            for _ in 0..60 {
                shared.2.load(Ordering::Relaxed);
            }
            if shared.1.load(Ordering::Acquire) {
                assert_eq!(shared.0.get(), 42);
            }
            writer.join().unwrap();
        })
        .expect("a valid configuration");
    let text = report
        .first_failure()
        .expect("the handover races")
        .to_string();
    let cited = |what: &str| -> String {
        let at = text
            .find(what)
            .unwrap_or_else(|| panic!("{what:?} missing: {text}"));
        text[at + what.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect()
    };
    assert!(
        text.contains("more steps"),
        "the interleaving is shortened: {text}"
    );
    for step in [cited("at step "), cited("read the Relaxed store at step ")] {
        let row = format!("\n{step:>8} | ");
        assert!(
            text.contains(&row),
            "step {step} is cited but not shown: {text}"
        );
    }
}
