//! RPro (seed 001, Algorithm 2) on the suite's lock-order deadlocks: with the deadlock
//! optimisation it exposes every one at least as often as PCT of the same depth, finds it for
//! every seed, and reports nothing on the fixed twins.

use interleave::{Builder, FailureKind, RaceMode, Report};
use interleave_programs::{find, Variant};

/// The lock-order deadlocks of seed 001 and seed 002 with the depth both strategies use.
const DEADLOCKS: [(&str, usize); 6] = [
    ("rpro-d1", 3),
    ("rpro-d2", 3),
    ("rpro-hawknl", 3),
    ("rpro-sqlite", 3),
    ("rpro-mysql", 2),
    ("valsched-account-deadlock", 3),
];
const SEEDS: u64 = 4;
const EXECUTIONS: u64 = 2_000;

fn explore(name: &str, spec: &str, variant: Variant, seed: u64) -> Report {
    let program = find(name).expect("a suite program");
    Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a valid spec"))
        .executions(EXECUTIONS)
        .seed(seed)
        .data_races(match variant {
            Variant::Buggy => RaceMode::Warn,
            Variant::Fixed => RaceMode::Fail,
        })
        .stop_on_first_failure(false)
        .explore(move || (program.run)(variant))
        .expect("explores")
}

fn deadlocks(report: &Report) -> usize {
    report
        .failures
        .iter()
        .filter(|f| f.kind == FailureKind::Deadlock)
        .count()
}

#[test]
fn rpro_exposes_each_lock_deadlock_at_least_as_often_as_pct() {
    for (name, depth) in DEADLOCKS {
        let rpro = format!("rpro:d={depth},r=20");
        let pct = format!("pct:d={depth}");
        let (mut by_rpro, mut by_pct) = (0, 0);
        for seed in 0..SEEDS {
            let report = explore(name, &rpro, Variant::Buggy, seed);
            assert!(
                deadlocks(&report) > 0,
                "{name}: {rpro} missed it with seed {seed}"
            );
            assert_eq!(
                deadlocks(&report),
                report.failures.len(),
                "{name}: only deadlocks"
            );
            by_rpro += deadlocks(&report);
            by_pct += deadlocks(&explore(name, &pct, Variant::Buggy, seed));
        }
        println!(
            "{name}: {rpro} {by_rpro} deadlocks, {pct} {by_pct}, in {} executions each",
            SEEDS * EXECUTIONS
        );
        assert!(
            by_rpro >= by_pct,
            "{name}: {rpro} {by_rpro} < {pct} {by_pct}"
        );
        let fixed = explore(name, &rpro, Variant::Fixed, 0);
        assert!(
            fixed.failures.is_empty(),
            "{name} (fixed): {}",
            fixed.failures[0]
        );
    }
}
