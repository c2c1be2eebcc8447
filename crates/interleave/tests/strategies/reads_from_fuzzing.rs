//! RFF (`rff`, Wolff, Shi, Duck, Mathur, Roychoudhury, ASPLOS 2024) on the late interference
//! of `helpers::late_interference`: the main thread reads `a` twice at once, a writer takes many
//! steps of its own before writing `a`, and the bug is the second read seeing the write. The
//! first executions cover the reads from the initial value; a constraint that the second read
//! reads from the write, once drawn, holds the read back until the write is the last one, and
//! every execution under it fails. POS needs the writer to outrank the waiting read at each of
//! its steps.

use crate::helpers;

/// The program, with the steps the writer takes before its write.
const PROGRAM: helpers::LateInterference = helpers::LateInterference { steps: 60 };

#[test]
fn rff_finds_the_late_interference_on_every_seed_far_sooner_than_pos() {
    let (mut rff_total, mut pos_total) = (0, 0);
    for seed in 0..10 {
        let rff = PROGRAM
            .executions_to_bug("rff", seed, 50)
            .unwrap_or_else(|| panic!("rff, seed {seed}: not found in 50 executions"));
        let pos = PROGRAM
            .executions_to_bug("pos", seed, 100_000)
            .unwrap_or_else(|| panic!("pos, seed {seed}: not found in 100,000 executions"));
        println!("seed {seed}: rff {rff}, pos {pos}");
        rff_total += rff;
        pos_total += pos;
    }
    println!("executions to the bug, 10 seeds in all: rff {rff_total}, pos {pos_total}");
    assert!(
        rff_total * 4 <= pos_total,
        "rff {rff_total} against pos {pos_total}"
    );
    let fixed = PROGRAM.explore("rff", 0, 1_000, 1, true);
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 1_000);
}

#[test]
fn rff_finds_the_same_failure_for_a_seed_whatever_the_worker_count() {
    let first = |workers| {
        helpers::first_exploration(|| PROGRAM.explore("rff", 3, 50, workers, false))
            .first_failure()
            .cloned()
            .expect("found within 50 executions")
    };
    let (one, three) = (first(1), first(3));
    assert_eq!(one.execution, three.execution);
    assert_eq!(one.token, three.token);
}
