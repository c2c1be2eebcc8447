//! SURW (`surw`, Zhao, Wolff, Mathur, Roychoudhury, ASPLOS 2025) on seed 000's corner variable:
//! thread 1 reads `a` twice, thread 2 writes it once, and both take many steps on the benign
//! `b`. The bug is the write between the two reads. With `a` among the interesting objects
//! (one of the two drawn from the two shared ones, `v=2` by default, so always here), SURW makes
//! the three accesses' interleavings uniform, and the bug has probability 1/3 however many
//! benign steps there are; a random walk must run thread 2's benign steps inside thread 1's
//! two-step window.

use crate::helpers;
use interleave::{FailureKind, Report};

/// Benign steps per thread.
const BENIGN: u32 = 40;

fn explore(spec: &str, seed: u64, executions: u64, fixed: bool) -> Report {
    helpers::builder(spec)
        .seed(seed)
        .executions(executions)
        .explore(move || helpers::corner_variable(BENIGN, fixed))
        .unwrap()
}

/// The execution (from 1) at which `spec` first fails with seed `seed`, if within `budget`.
fn executions_to_bug(spec: &str, seed: u64, budget: u64) -> Option<u64> {
    let report = explore(spec, seed, budget, false);
    report.first_failure().map(|failure| {
        assert_eq!(failure.kind, FailureKind::Panic, "{spec}: {failure}");
        assert!(failure.message.contains("the two reads of a must agree"));
        failure.execution + 1
    })
}

#[test]
fn surw_finds_the_corner_variable_bug_on_every_seed_and_random_walk_does_not() {
    for seed in 0..10 {
        // Eight profiling executions, then about three SURW executions per find.
        let surw = executions_to_bug("surw", seed, 40)
            .unwrap_or_else(|| panic!("surw, seed {seed}: not found in 40 executions"));
        println!("seed {seed}: surw {surw}");
        assert!(
            executions_to_bug("random", seed, 40).is_none(),
            "random, seed {seed}: found in 40 executions"
        );
    }
    let fixed = explore("surw", 0, 1_000, true);
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 1_000);
}

#[test]
fn surw_finds_the_same_failure_for_a_seed_whatever_the_worker_count() {
    let run = |workers| {
        helpers::builder("surw")
            .seed(3)
            .executions(40)
            .workers(workers)
            .explore(|| helpers::corner_variable(BENIGN, false))
            .unwrap()
    };
    let (one, three) = (run(1), run(3));
    let (one, three) = (one.first_failure().unwrap(), three.first_failure().unwrap());
    assert_eq!(one.execution, three.execution);
    assert_eq!(one.token, three.token);
}
