//! Partial-order sampling (`pos`, Yuan, Yang, Gu, CAV 2018) against random walk on a bug that
//! needs one order of two racing writes with many independent steps before the first of them:
//! random walk must run all those steps before the other thread's single step, POS only has to
//! draw, at each step, a priority above the one the other thread's write holds.

use crate::helpers;
use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::Arc;
use interleave::{thread, FailureKind, Report};

/// Independent steps the late writer takes before its write.
const STEPS: u32 = 12;

/// The late writer takes `STEPS` steps on an atomic of its own and then stores 2 in `x`; the
/// early writer stores 1 in `x` as its first step. The larger value must win; it does not when
/// the late write lands first. The fixed twin writes with `fetch_max`, so the order does not
/// matter.
fn late_write(fixed: bool) {
    let x = Arc::new(AtomicU64::new(0));
    let write = move |x: &AtomicU64, value: u64| {
        if fixed {
            x.fetch_max(value, Ordering::SeqCst);
        } else {
            x.store(value, Ordering::SeqCst);
        }
    };
    let late = {
        let x = x.clone();
        thread::spawn(move || {
            let own = AtomicU64::new(0);
            for _ in 0..STEPS {
                own.fetch_add(1, Ordering::SeqCst);
            }
            write(&x, 2);
        })
    };
    let early = {
        let x = x.clone();
        thread::spawn(move || write(&x, 1))
    };
    late.join().unwrap();
    early.join().unwrap();
    assert_eq!(x.load(Ordering::SeqCst), 2, "the late write landed first");
}

fn explore(spec: &str, seed: u64, executions: u64, fixed: bool) -> Report {
    helpers::builder(spec)
        .seed(seed)
        .executions(executions)
        .explore(move || late_write(fixed))
        .unwrap()
}

/// The execution (from 1) at which `spec` first fails with seed `seed`, if within `budget`.
fn executions_to_bug(spec: &str, seed: u64, budget: u64) -> Option<u64> {
    let report = explore(spec, seed, budget, false);
    report.first_failure().map(|failure| {
        assert_eq!(failure.kind, FailureKind::Panic, "{spec}: {failure}");
        assert!(failure.message.contains("the late write landed first"));
        failure.execution + 1
    })
}

#[test]
fn pos_finds_a_late_racing_write_far_sooner_than_random_walk() {
    let mut pos_total = 0;
    let mut random_total = 0;
    for seed in 0..10 {
        let pos = executions_to_bug("pos", seed, 100)
            .unwrap_or_else(|| panic!("pos, seed {seed}: not found in 100 executions"));
        let random = executions_to_bug("random", seed, 100_000)
            .unwrap_or_else(|| panic!("random, seed {seed}: not found in 100,000 executions"));
        println!("seed {seed}: pos {pos}, random {random}");
        pos_total += pos;
        random_total += random;
    }
    println!("executions to the bug, 10 seeds in all: pos {pos_total}, random {random_total}");
    assert!(
        pos_total * 20 <= random_total,
        "pos {pos_total} against random {random_total}"
    );
    let fixed = explore("pos", 0, 1_000, true);
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 1_000);
}
