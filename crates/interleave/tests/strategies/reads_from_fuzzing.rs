//! RFF (`rff`, Wolff, Shi, Duck, Mathur, Roychoudhury, ASPLOS 2024) on seed 000's corner
//! variable.

use crate::helpers;
use interleave::{FailureKind, Report};

/// Benign steps per thread.
const BENIGN: u32 = 40;

fn explore(spec: &str, seed: u64, executions: u64, workers: usize, fixed: bool) -> Report {
    helpers::builder(spec)
        .seed(seed)
        .executions(executions)
        .workers(workers)
        .explore(move || helpers::corner_variable(BENIGN, fixed))
        .unwrap()
}

/// The execution (from 1) at which `spec` first fails with seed `seed`, if within `budget`.
fn executions_to_bug(spec: &str, seed: u64, budget: u64) -> Option<u64> {
    let report = explore(spec, seed, budget, 1, false);
    report.first_failure().map(|failure| {
        assert_eq!(failure.kind, FailureKind::Panic, "{spec}: {failure}");
        assert!(failure.message.contains("the two reads of a must agree"));
        failure.execution + 1
    })
}

#[test]
fn rff_finds_the_corner_variable_bug_on_every_seed() {
    for seed in 0..10 {
        let rff = executions_to_bug("rff", seed, 1000)
            .unwrap_or_else(|| panic!("rff, seed {seed}: not found in 1000 executions"));
        let pos = executions_to_bug("pos", seed, 1000);
        println!("seed {seed}: rff {rff} pos {pos:?}");
    }
    let fixed = explore("rff", 0, 1_000, 1, true);
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 1_000);
}
