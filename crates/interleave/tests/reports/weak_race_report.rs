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

/// A thread writes `data` and raises `ready` with `raise`; the main thread reads `data` once
/// `sees` says it saw `ready` raised.
fn hand_over(raise: impl Fn(&AtomicBool) + Send + 'static, sees: impl Fn(&AtomicBool) -> bool) {
    let shared = Arc::new((Var::new(0), AtomicBool::new(false)));
    let writer = {
        let shared = shared.clone();
        thread::spawn(move || {
            shared.0.set(42);
            raise(&shared.1);
        })
    };
    if sees(&shared.1) {
        assert_eq!(shared.0.get(), 42);
    }
    writer.join().unwrap();
}

/// The text of the first failure of `program` under `dfs`; `None` when no execution fails.
fn first_failure(program: impl Fn() + Sync) -> Option<String> {
    let report = helpers::builder("dfs")
        .executions(2000)
        .explore(program)
        .expect("a valid configuration");
    Some(report.first_failure()?.to_string())
}

/// The text of the first failure of the handover with a plain `store` and `load`, without its
/// replay token.
fn first_race(store: Ordering, load: Ordering) -> Option<String> {
    let text = first_failure(|| {
        hand_over(
            move |ready| ready.store(true, store),
            |ready| ready.load(load),
        )
    })?;
    text.split("\n\nTo reproduce").next().map(str::to_string)
}

#[test]
fn a_relaxed_store_read_by_an_acquire_load_is_named_in_the_race() {
    let body = first_race(Ordering::Relaxed, Ordering::Acquire).expect("the handover races");
    expect![[r#"
        interleave found a data race in execution 1 (strategy dfs, seed 0):

          data race on Var1: thread 1 (spawned at reports/weak_race_report.rs:22:9) write at reports/weak_race_report.rs:23:22 and thread 0 (main) read at reports/weak_race_report.rs:28:29 are not ordered by happens-before
            the Acquire load of AtomicBool1 at step 6 read the Relaxed store at step 5, made after the write, but a Relaxed store releases nothing, and no Release fence comes between the write and it: a Release (or stronger) store read by an Acquire (or stronger) load, or fences of those orderings around the two, would order the accesses

        interleaving (7 steps):
          T0 = thread 0 (main)
          T1 = thread 1 (spawned at reports/weak_race_report.rs:22:9)
          Var1 = Var created at reports/weak_race_report.rs:19:28
          AtomicBool1 = AtomicBool created at reports/weak_race_report.rs:19:41
            step | T0                                                          | T1
               1 | start @reports/weak_race_report.rs:37:10                    |
               2 | spawn @reports/weak_race_report.rs:22:9                     |
               3 |                                                             | start @reports/weak_race_report.rs:22:9
               4 |                                                             | write Var1 @reports/weak_race_report.rs:23:22
               5 |                                                             | store Relaxed AtomicBool1 @reports/weak_race_report.rs:47:32
               6 | load Acquire AtomicBool1 @reports/weak_race_report.rs:48:27 |
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

/// The text of the first failure when the main thread reads the data after a
/// `compare_exchange(false, true, success, failure)` on the flag failed, having read the
/// writer's `Release` store: the exchange was a load with its `failure` ordering.
fn first_race_after_a_failed_exchange(success: Ordering, failure: Ordering) -> Option<String> {
    first_failure(|| {
        hand_over(
            |ready| ready.store(true, Ordering::Release),
            |ready| ready.compare_exchange(false, true, success, failure) == Err(true),
        )
    })
}

/// A newcomer's failed exchange was shown with its success ordering (`rmw AcqRel`, which
/// looked like a false positive) and without the explanation; one whose failure ordering
/// acquired was said to acquire nothing.
#[test]
fn a_failed_exchange_is_shown_as_a_load_with_its_failure_ordering() {
    let text = first_race_after_a_failed_exchange(Ordering::AcqRel, Ordering::Relaxed)
        .expect("a failure ordering of Relaxed acquires nothing");
    assert!(
        text.contains("| failed cas Relaxed AtomicBool1 @"),
        "{text}"
    );
    assert!(!text.contains("rmw AcqRel"), "{text}");
    assert!(
        text.contains(
            "the Relaxed compare-exchange that failed (a load) of AtomicBool1 at step 6 read the \
             Release store at step 5, made after the write, but a Relaxed compare-exchange that \
             failed (a load) acquires nothing"
        ),
        "{text}"
    );
    assert_eq!(
        first_race_after_a_failed_exchange(Ordering::Relaxed, Ordering::Acquire),
        None,
        "a failure ordering of Acquire orders the read"
    );
}

/// The text of the first failure of a handover through a `Relaxed` flag where the writer has a
/// `fence(Release)` before its store if `writer_fence`, and the reader a `fence(Acquire)` after
/// its load if `reader_fence` (both: no race).
fn first_race_with_fences(writer_fence: bool, reader_fence: bool) -> Option<String> {
    use interleave::sync::atomic::fence;
    first_failure(|| {
        hand_over(
            move |ready| {
                if writer_fence {
                    fence(Ordering::Release);
                }
                ready.store(true, Ordering::Relaxed);
            },
            |ready| {
                let seen = ready.load(Ordering::Relaxed);
                if seen && reader_fence {
                    fence(Ordering::Acquire);
                }
                seen
            },
        )
    })
}

/// A newcomer's fence-based handover was told that the writer's `Relaxed` store releases
/// nothing, although a `fence(Release)` came just before it: the explanation blames only the
/// side that lacks an ordering, and shows the fence.
#[test]
fn a_fence_that_orders_its_side_is_not_blamed() {
    let reader_lacks = first_race_with_fences(true, false).expect("no acquire on the reader");
    assert!(
        reader_lacks.contains(
            "a Relaxed load acquires nothing, and no Acquire fence comes between it and the read"
        ) && !reader_lacks.contains("releases nothing"),
        "{reader_lacks}"
    );
    assert!(reader_lacks.contains("| fence Release @"), "{reader_lacks}");
    let writer_lacks = first_race_with_fences(false, true).expect("no release on the writer");
    assert!(
        writer_lacks.contains(
            "a Relaxed store releases nothing, and no Release fence comes between the write and it"
        ) && !writer_lacks.contains("acquires nothing"),
        "{writer_lacks}"
    );
    assert_eq!(first_race_with_fences(true, true), None);
}
