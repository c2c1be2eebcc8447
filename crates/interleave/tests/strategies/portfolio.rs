//! The default portfolio (`auto`): on every seed it finds a bug its members find quickly and one
//! behind a long run that its other members find far sooner than POS alone, names the member
//! that found each, stays clean on the fixed twins, and is what `Builder::new()` runs.

use crate::helpers::{self, corner_variable};
use interleave::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use interleave::sync::Arc;
use interleave::{thread, Builder, FailureKind};

/// Steps the long thread takes on an object of its own before it raises its flag.
const LONG_RUN: u32 = 60;

/// A bug of depth 1 behind a long run: the checker fails only if it reads the flag after the
/// other thread has taken all its `LONG_RUN` steps. A walk (and POS, which redraws the priority
/// of the thread that ran at every step) must win a draw at each of those steps; PCT needs only
/// the right initial priorities, and SURW, for which the steps on the thread's own object are
/// not interesting, only the right order of the two accesses of the flag. The fixed twin's
/// checker reads a flag nobody raises.
fn long_run(fixed: bool) {
    let raised = Arc::new(AtomicBool::new(false));
    let never = AtomicBool::new(false);
    let long = {
        let raised = raised.clone();
        thread::spawn(move || {
            let own = AtomicU64::new(0);
            for _ in 0..LONG_RUN {
                own.fetch_add(1, Ordering::SeqCst);
            }
            raised.store(true, Ordering::SeqCst);
        })
    };
    let flag = if fixed { &never } else { &*raised };
    assert!(
        !flag.load(Ordering::SeqCst),
        "the checker ran after the long run"
    );
    long.join().unwrap();
}

/// Benign accesses around seed 000's Figure 6 bug: enough that a walk rarely preempts at the one
/// read that matters.
const BENIGN: u32 = 40;

/// The execution (from 1) at which `auto` first fails with `seed`, and the member named.
fn first_failure(seed: u64, budget: u64) -> Option<(u64, String)> {
    let report = helpers::builder("auto")
        .seed(seed)
        .executions(budget)
        .explore(|| corner_variable(BENIGN, false))
        .unwrap();
    report.first_failure().map(|failure| {
        assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
        (failure.execution + 1, failure.found_by().to_string())
    })
}

#[test]
fn auto_finds_the_corner_variable_bug_on_every_seed_and_names_the_member() {
    for seed in 0..10 {
        let (executions, member) = first_failure(seed, 200)
            .unwrap_or_else(|| panic!("auto, seed {seed}: not found in 200 executions"));
        println!("seed {seed}: execution {executions}, {member}");
        assert!(member.starts_with("auto, member "), "{member}");
        assert_eq!(
            first_failure(seed, 200),
            Some((executions, member.clone())),
            "seed {seed}: the same seed must find the same failure"
        );
    }
    let fixed = helpers::builder("auto")
        .seed(3)
        .executions(2_000)
        .explore(|| corner_variable(BENIGN, true))
        .unwrap();
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 2_000);
}

#[test]
fn auto_finds_a_bug_behind_a_long_run_far_sooner_than_pos_alone() {
    let (mut auto_total, mut pos_total, mut by_others) = (0, 0, 0);
    for seed in 0..10 {
        let found = |spec: &str, budget| {
            helpers::builder(spec)
                .seed(seed)
                .executions(budget)
                .explore(|| long_run(false))
                .unwrap()
                .first_failure()
                .map(|failure| (failure.execution + 1, failure.found_by().to_string()))
        };
        let (auto, member) =
            found("auto", 100).unwrap_or_else(|| panic!("auto, seed {seed}: not found in 100"));
        let (pos, _) =
            found("pos", 2_000).unwrap_or_else(|| panic!("pos, seed {seed}: not found in 2,000"));
        println!("seed {seed}: auto {auto} ({member}), pos {pos}");
        assert!(member.starts_with("auto, member "), "{member}");
        auto_total += auto;
        pos_total += pos;
        if member != "auto, member pos" {
            by_others += 1;
        }
    }
    println!("10 seeds in all: auto {auto_total}, pos {pos_total}; other members {by_others}");
    assert!(
        auto_total * 4 <= pos_total,
        "auto {auto_total}, pos {pos_total}"
    );
    assert!(
        by_others >= 8,
        "members other than pos found the bug on only {by_others} seeds"
    );
    let fixed = helpers::builder("auto")
        .seed(1)
        .executions(1_000)
        .explore(|| long_run(true))
        .unwrap();
    assert!(fixed.first_failure().is_none(), "{fixed}");
}

#[test]
fn auto_is_the_default_strategy() {
    let report = Builder::new()
        .ignore_environment()
        .executions(12)
        .explore(|| corner_variable(2, true))
        .unwrap();
    assert_eq!(report.strategy, "auto");
    for member in ["surw", "pos", "pct:d=3", "random"] {
        assert!(
            report
                .strategy_stats
                .iter()
                .any(|(name, _)| name.starts_with(member)),
            "no statistics of member {member}: {:?}",
            report.strategy_stats
        );
    }
}
