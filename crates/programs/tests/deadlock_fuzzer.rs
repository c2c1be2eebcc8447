//! DeadlockFuzzer (`deadlock-fuzzer`) on the suite's lock-order deadlocks: one profiling
//! execution plus at most 100 directed executions realise each of them, and the fixed twins get
//! neither a failure nor a warning.

use interleave::{Builder, FailureKind, RaceMode, Report};
use interleave_programs::{find, Variant};

/// Every deadlock of the suite that is a cycle of `Mutex`/`RwLock` acquisitions. (The suite's
/// other deadlocks wait for notifications, or, like `rpro-sqlite`, for a lock the program
/// builds itself from a flag and a `Condvar`; a lock-order predictor cannot see those.)
const LOCK_ORDER_DEADLOCKS: [&str; 9] = [
    "rpro-d1",
    "rpro-d2",
    "rpro-hawknl",
    "rpro-mysql",
    "rpro-dining-philosophers",
    "valsched-deadlock-d1",
    "valsched-deadlock-d2",
    "valsched-diningphilosopher",
    "valsched-account-deadlock",
];

fn fuzz(name: &str, variant: Variant, seed: u64) -> Report {
    let program = find(name).expect("a suite program");
    Builder::new()
        .ignore_environment()
        .strategy("deadlock-fuzzer".parse().unwrap())
        .executions(101)
        .seed(seed)
        .data_races(match variant {
            Variant::Buggy => RaceMode::Warn,
            Variant::Fixed => RaceMode::Fail,
        })
        .explore(move || (program.run)(variant))
        .expect("explores")
}

#[test]
fn every_lock_order_deadlock_is_predicted_and_realised() {
    for name in LOCK_ORDER_DEADLOCKS {
        for seed in 0..5 {
            let report = fuzz(name, Variant::Buggy, seed);
            let failure = report.first_failure().unwrap_or_else(|| {
                panic!(
                    "{name} seed {seed}: not realised; {:?}",
                    report.strategy_stats
                )
            });
            assert_eq!(failure.kind, FailureKind::Deadlock, "{name}: {failure}");
        }
        let fixed = fuzz(name, Variant::Fixed, 0);
        assert!(
            fixed.failures.is_empty(),
            "{name} (fixed): {}",
            fixed.failures[0]
        );
        assert!(
            fixed.warnings.is_empty(),
            "{name} (fixed): {:?}",
            fixed.warnings
        );
    }
}
