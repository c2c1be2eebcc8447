//! The atomic-set monitor (`Builder::monitor_atomic_sets`) on seed 003's programs, whose
//! methods are all units of work on their instance's atomic set, as in the paper's evaluation.
//!
//! For each program, over the seeds `0..10` of a random walk within the program's budget:
//!
//! - **buggy**: the monitor reports the program's violation: the expected pattern, on the
//!   expected atomic set, with the expected interrupted and interleaving units of work, and
//!   replaying its token reproduces it. Every other violation it reports is on the same set,
//!   between the same two units, and of a pattern listed as benign for the program; there are
//!   as many violating executions as failing ones (at least as many where some pattern is
//!   benign), and no access is a data race.
//! - **fixed**: the fixed twin produces no violation and no failure within the same budget.
//!
//! Run with `--nocapture` to see executions-to-first-violation per seed.

use interleave::{AtomicityViolation, Builder, FailureKind, RaceMode, Report};
use interleave_programs::{find, Variant};

/// Seeds every program is explored with.
const SEEDS: std::ops::Range<u64> = 0..10;

/// What the monitor should report on one program's buggy version.
struct Expected {
    program: &'static str,
    /// Random executions per seed; at least twice the most any seed in `SEEDS` needed.
    within: u64,
    /// The pattern's number in seed 003's Table 1.
    pattern: u8,
    atomic_set: &'static str,
    /// The interrupted unit of work `u`, as the report names it.
    unit: &'static str,
    /// The interleaving unit of work `u'`, as the report names it.
    interleaver: &'static str,
    /// Patterns the monitor also reports, between the same two units (in either role), in
    /// executions that pass the program's assertions.
    benign: &'static [u8],
}

const EXPECTED: [Expected; 3] = [
    // Executions to the first violation, seeds 0..10:
    // 365, 269, 302, 349, 96, 79, 658, 29, 1709, 517.
    Expected {
        program: "assetfuzzer-account",
        within: 4_000,
        pattern: 9,
        atomic_set: "the objects of Account#0",
        unit: "`Account::copy_of_buggy`",
        interleaver: "`Account::credit_interest`",
        benign: &[],
    },
    // Executions to the first violation, seeds 0..10: 1, 32, 44, 68, 55, 21, 19, 8, 5, 69.
    Expected {
        program: "assetfuzzer-string-buffer",
        within: 200,
        pattern: 2,
        atomic_set: "the objects of StringBuffer#1",
        unit: "`StringBuffer::append_buggy`",
        interleaver: "`StringBuffer::set_length`",
        benign: &[],
    },
    // Executions to the first pattern-6 violation, seeds 0..10:
    // 2, 57, 25, 3, 38, 3, 69, 8, 41, 109.
    Expected {
        program: "assetfuzzer-jigsaw",
        within: 250,
        pattern: 6,
        atomic_set: "the objects of HeaderValue#0",
        unit: "`HeaderValue::emit_bytes`",
        interleaver: "`HeaderValue::set_bytes`",
        // Pattern 1: t2's write of `raw` falls between t1's check and t1's write, which
        // overwrites it (a lost update). Pattern 4: t2 then reads back t1's bytes for `rlen`.
        // Either way `raw` and `rlen` end up consistent, with t1's bytes.
        benign: &[1, 4],
    },
];

fn monitored(expected: &Expected, variant: Variant, seed: u64) -> Report {
    let program = find(expected.program).expect("a suite program");
    Builder::new()
        .ignore_environment()
        .strategy("random".parse().unwrap())
        .monitor_atomic_sets(true)
        .stop_on_first_failure(false)
        .executions(expected.within)
        .seed(seed)
        .workers(1)
        .data_races(RaceMode::Fail)
        .explore(move || (program.run)(variant))
        .expect("explores")
}

/// Whether `violation` is between the expected units of work, in the expected roles.
fn between_expected_units(expected: &Expected, violation: &AtomicityViolation) -> bool {
    violation.unit.contains(expected.unit) && violation.interleaver.contains(expected.interleaver)
}

/// The buggy version's checks for one seed; returns the executions to the expected violation.
fn check_buggy(expected: &Expected, seed: u64) -> u64 {
    let name = expected.program;
    let report = monitored(expected, Variant::Buggy, seed);
    let found = report
        .violations
        .iter()
        .filter(|v| v.pattern == expected.pattern && between_expected_units(expected, v))
        .min_by_key(|v| v.execution)
        .unwrap_or_else(|| {
            panic!(
                "{name} seed {seed}: no pattern {} violation in {} executions:\n{report}",
                expected.pattern, expected.within
            )
        });
    assert_eq!(found.atomic_set, expected.atomic_set, "{name}: {found}");

    for violation in &report.violations {
        assert_eq!(
            violation.atomic_set, expected.atomic_set,
            "{name} seed {seed}: {violation}"
        );
        let swapped = violation.unit.contains(expected.interleaver)
            && violation.interleaver.contains(expected.unit);
        assert!(
            between_expected_units(expected, violation) || swapped,
            "{name} seed {seed}: {violation}"
        );
        assert!(
            violation.pattern == expected.pattern || expected.benign.contains(&violation.pattern),
            "{name} seed {seed}: unexpected pattern {}: {violation}",
            violation.pattern
        );
    }
    assert!(
        report.failures.iter().all(|f| f.kind == FailureKind::Panic),
        "{name} seed {seed}: {}",
        report.failures[0]
    );
    if expected.benign.is_empty() {
        assert_eq!(
            report.violating_executions,
            report.failures.len() as u64,
            "{name} seed {seed}: every violating execution fails, and only those"
        );
    } else {
        assert!(
            report.violating_executions >= report.failures.len() as u64,
            "{name} seed {seed}: fewer violating executions than failing ones"
        );
    }

    let program = find(name).expect("a suite program");
    let replayed = Builder::new()
        .ignore_environment()
        .monitor_atomic_sets(true)
        .replay(&found.token, move || (program.run)(Variant::Buggy))
        .expect("replays");
    assert!(
        replayed
            .violations
            .iter()
            .any(|v| v.pattern == expected.pattern && between_expected_units(expected, v)),
        "{name} seed {seed}: replaying {} lost the violation:\n{replayed}",
        found.token
    );
    found.execution + 1
}

fn check_fixed(expected: &Expected, seed: u64) {
    let name = expected.program;
    let report = monitored(expected, Variant::Fixed, seed);
    assert!(
        report.violations.is_empty(),
        "{name} (fixed) seed {seed}: {}",
        report.violations[0]
    );
    assert_eq!(report.violating_executions, 0, "{name} (fixed) seed {seed}");
    assert!(
        report.failures.is_empty(),
        "{name} (fixed) seed {seed}: {}",
        report.failures[0]
    );
    assert_eq!(
        report.executions, expected.within,
        "{name} (fixed) seed {seed}"
    );
}

fn check(program: &str) {
    let expected = EXPECTED
        .iter()
        .find(|e| e.program == program)
        .expect("an expected violation");
    let firsts: Vec<u64> = SEEDS.map(|seed| check_buggy(expected, seed)).collect();
    println!(
        "{program:24} random within {:5}: executions to the first pattern {} violation over seeds 0..10: {firsts:?}",
        expected.within, expected.pattern
    );
    for seed in SEEDS {
        check_fixed(expected, seed);
    }
}

#[test]
fn account_copy_straddles_credit_interest() {
    check("assetfuzzer-account");
}

#[test]
fn string_buffer_append_straddles_set_length() {
    check("assetfuzzer-string-buffer");
}

#[test]
fn jigsaw_set_bytes_interleaves_emit_bytes() {
    check("assetfuzzer-jigsaw");
}

/// Every seed 003 program has an entry above.
#[test]
fn every_seed003_program_is_covered() {
    for program in interleave_programs::all() {
        if program.name.starts_with("assetfuzzer-") {
            assert!(
                EXPECTED.iter().any(|e| e.program == program.name),
                "{} has no expected violation",
                program.name
            );
        }
    }
}

/// AssetFuzzer's budget per seed: 10 profiling executions and a few directed ones.
const ASSETFUZZER_WITHIN: u64 = 30;

fn fuzzed(program: &str, variant: Variant, seed: u64) -> Report {
    let program = find(program).expect("a suite program");
    Builder::new()
        .ignore_environment()
        .strategy("assetfuzzer".parse().unwrap())
        .stop_on_first_failure(false)
        .executions(ASSETFUZZER_WITHIN)
        .seed(seed)
        .data_races(RaceMode::Fail)
        .explore(move || (program.run)(variant))
        .expect("explores")
}

/// AssetFuzzer produces each program's violation, and the failure it causes, within
/// `ASSETFUZZER_WITHIN` executions for every seed (a random walk needs up to 1,709 on the
/// account); on the fixed twins it predicts nothing and reports nothing.
#[test]
fn assetfuzzer_produces_every_atomic_set_bug_and_nothing_on_the_fixed_twins() {
    for expected in &EXPECTED {
        for seed in SEEDS {
            let report = fuzzed(expected.program, Variant::Buggy, seed);
            assert!(
                report
                    .violations
                    .iter()
                    .any(|v| v.pattern == expected.pattern && between_expected_units(expected, v)),
                "{} seed {seed}: {report}",
                expected.program
            );
            assert!(
                !report.failures.is_empty(),
                "{} seed {seed}",
                expected.program
            );

            let fixed = fuzzed(expected.program, Variant::Fixed, seed);
            assert!(fixed.violations.is_empty(), "{}: {fixed}", expected.program);
            assert!(fixed.failures.is_empty(), "{}: {fixed}", expected.program);
            assert!(
                fixed.warnings.is_empty(),
                "{} predicted on its fixed twin: {:?}",
                expected.program,
                fixed.warnings
            );
        }
    }
}
