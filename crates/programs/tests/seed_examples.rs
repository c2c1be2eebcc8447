//! Data-driven tests of the seed example programs.
//!
//! Every program declares, in its `found_by` field, a strategy that should expose its buggy
//! version and the execution budget it gets. For every program:
//!
//! - **buggy**: for each of the seeds `0..10`, exploring with the row's strategy and budget
//!   finds a failure, of the kind the program declares (assertion/panic -> `Panic`, deadlock ->
//!   `Deadlock`), and replaying the failure's token reproduces the same failure (kind and message). Buggy programs
//!   run with `RaceMode::Warn`: several race on purpose, but their bug is the assertion.
//!   The memory-ordering programs (`Program::needs_weak_memory`) are found this way under the
//!   weak memory model, the default; under `MemoryModel::SequentiallyConsistent`, `dpor` also
//!   covers the whole search space of their buggy versions without a failure (their bugs need
//!   the weak model).
//! - **fixed**: the fixed twin reports nothing, and no race warning, over 10,000 random
//!   executions and 10,000 `pct:d=3` executions, with `RaceMode::Fail`.
//!
//! The per-seed tests skip the long programs (`Program::long`: a quarter of a second per
//! execution in a release build, over a second in a debug build, or 50 and 100 threads).
//! `long_programs` checks those, with the same buggy check, fewer fixed executions, and, for
//! the ones long by their steps, the million steps each execution must take; it is ignored by
//! default and meant for release builds: `cargo test --release -p interleave-programs --test
//! seed_examples long_programs -- --ignored --nocapture`. Two of those, the 50- and 100-thread
//! reorder programs, have a bug no strategy finds on every seed yet: only their fixed twins are
//! checked.
//!
//! Run with `--nocapture` to see executions-to-first-bug per seed (min / median / max).

use interleave::{Builder, FailureKind, MemoryModel, RaceMode, Report, StrategySpec};
use interleave_programs::suite::seed002_scaled;
use interleave_programs::{all, default_suite, Program, Surface, Variant};

/// Seeds every buggy program is explored with.
const SEEDS: std::ops::Range<u64> = 0..10;
/// Executions each fixed twin gets per strategy.
const FIXED_EXECUTIONS: u64 = 10_000;
/// Executions each long program's fixed twin gets per strategy.
const LONG_FIXED_EXECUTIONS: u64 = 10;
/// Steps one execution of a long program takes at least.
const LONG_STEPS: u64 = 1_000_000;
/// Strategies each fixed twin is run with.
const FIXED_STRATEGIES: [&str; 2] = ["random", "pct:d=3"];

fn spec(s: &str) -> StrategySpec {
    s.parse()
        .unwrap_or_else(|e| panic!("bad strategy spec {s:?}: {e:?}"))
}

fn matches_surface(kind: &FailureKind, surface: Surface) -> bool {
    match surface {
        Surface::Panic => matches!(kind, FailureKind::Panic),
        Surface::Deadlock => matches!(kind, FailureKind::Deadlock),
        Surface::DataRace => matches!(kind, FailureKind::DataRace),
    }
}

fn race_mode(p: &Program) -> RaceMode {
    if p.bug.surface() == Surface::DataRace {
        RaceMode::Fail
    } else {
        RaceMode::Warn
    }
}

/// A builder with the step bound `p` needs (the runtime's default unless `p` is long).
fn builder_for(p: &Program) -> Builder {
    let builder = Builder::new().ignore_environment();
    match p.max_steps() {
        Some(steps) => builder.max_steps(steps),
        None => builder,
    }
}

fn buggy_builder(p: &Program, seed: u64) -> Builder {
    builder_for(p)
        .strategy(spec(p.found_by.strategy))
        .executions(p.found_by.within)
        .seed(seed)
        .workers(1)
        .data_races(race_mode(p))
}

/// The buggy version is found by the row's strategy within budget for every seed, with the
/// declared kind, and every failure replays to the same kind. Returns executions-to-first-bug.
fn check_buggy(p: &'static Program) -> Vec<u64> {
    let name = p.name;
    let body = move || (p.run)(Variant::Buggy);
    let mut firsts = Vec::new();
    for seed in SEEDS {
        let report: Report = buggy_builder(p, seed)
            .explore(body)
            .unwrap_or_else(|e| panic!("{name} seed {seed}: explore failed: {e}"));
        assert!(
            !report.failures.is_empty(),
            "{name}: {} found no bug in {} executions with seed {seed} ({} run)",
            p.found_by.strategy,
            p.found_by.within,
            report.executions
        );
        for failure in &report.failures {
            assert!(
                matches_surface(&failure.kind, p.bug.surface()),
                "{name} seed {seed}: declared bug {} but found {:?}:\n{failure}",
                p.bug,
                failure.kind
            );
            let replayed = buggy_builder(p, seed)
                .replay(&failure.token, body)
                .unwrap_or_else(|e| panic!("{name} seed {seed}: replay failed: {e}"));
            let again = replayed.first_failure();
            assert!(
                again.is_some_and(|f| f.kind == failure.kind && f.message == failure.message),
                "{name} seed {seed}: replaying token {} did not reproduce the failure:\n{failure}\ngot {:?}",
                failure.token,
                again.map(|f| f.to_string())
            );
        }
        firsts.push(report.failures.iter().map(|f| f.execution).min().unwrap() + 1);
    }
    firsts
}

/// The fixed twin reports nothing (no failure, no race warning) under either strategy, in
/// `executions` executions each; returns the steps of all of them.
fn check_fixed(p: &'static Program, executions: u64) -> u64 {
    let name = p.name;
    let body = move || (p.run)(Variant::Fixed);
    let mut steps = 0;
    for strategy in FIXED_STRATEGIES {
        let report = builder_for(p)
            .strategy(spec(strategy))
            .executions(executions)
            .seed(1)
            .workers(2)
            .data_races(RaceMode::Fail)
            .explore(body)
            .unwrap_or_else(|e| panic!("{name} (fixed) {strategy}: explore failed: {e}"));
        if let Some(f) = report.failures.first() {
            panic!(
                "{name} (fixed) {strategy}: failure in execution {}:\n{f}",
                f.execution
            );
        }
        assert!(
            report.warnings.is_empty(),
            "{name} (fixed) {strategy}: warnings {:?}",
            report.warnings
        );
        assert_eq!(report.executions, executions, "{name} (fixed) {strategy}");
        steps += report.steps;
    }
    steps
}

/// Executions within which `dpor` covers the whole search space of a memory-ordering program
/// (the ring buffer, the largest, takes 767).
const SC_SEARCH_WITHIN: u64 = 10_000;

/// The buggy version of a program whose bug needs a weak memory model passes every schedule
/// under interleave's sequential consistency: `dpor` covers its whole search space (it stops
/// before the budget) without a failure.
fn check_correct_under_sc(p: &'static Program) {
    let name = p.name;
    let report = builder_for(p)
        .memory(MemoryModel::SequentiallyConsistent)
        .strategy(spec("dpor"))
        .executions(SC_SEARCH_WITHIN)
        .workers(1)
        .data_races(RaceMode::Fail)
        .explore(move || (p.run)(Variant::Buggy))
        .unwrap_or_else(|e| panic!("{name} (buggy) dpor: explore failed: {e}"));
    if let Some(f) = report.failures.first() {
        panic!("{name} (buggy) fails under sequential consistency:\n{f}");
    }
    assert!(
        report.executions < SC_SEARCH_WITHIN,
        "{name} (buggy): dpor did not cover the search space in {SC_SEARCH_WITHIN} executions"
    );
    println!(
        "{name:28} buggy, sequential consistency: dpor covered every schedule in {} executions",
        report.executions
    );
}

fn check(p: &'static Program) {
    let mut firsts = check_buggy(p);
    firsts.sort_unstable();
    println!(
        "{:28} {:10} within {:6}: executions to first bug over seeds 0..10: min {} / median {} / max {}  {firsts:?}",
        p.name,
        p.found_by.strategy,
        p.found_by.within,
        firsts[0],
        (firsts[4] + firsts[5]) / 2,
        firsts[9],
    );
}

/// Checks every program whose name starts with `prefix`, except the long ones; one test per
/// seed paper, so the suite runs in parallel without a hand-kept list of programs.
fn check_all(prefix: &str) {
    let programs: Vec<&'static Program> = default_suite()
        .filter(|p| p.name.starts_with(prefix))
        .collect();
    assert!(!programs.is_empty(), "no program starts with {prefix}");
    for p in programs {
        // The memory-ordering bugs are found under the weak model and invisible under
        // sequential consistency.
        if p.needs_weak_memory {
            check_correct_under_sc(p);
        }
        check(p);
        check_fixed(p, FIXED_EXECUTIONS);
    }
}

/// The long programs: the buggy check of every program, a few fixed executions, and, except for
/// the scaled kernels (long by
/// their thread count), at least `LONG_STEPS` steps per execution of the fixed twin, on average
/// over them.
#[test]
#[ignore = "minutes in a release build, much longer in a debug build; run with --release -- --ignored"]
fn long_programs() {
    let long: Vec<&'static Program> = all().iter().filter(|p| p.long).collect();
    assert!(!long.is_empty(), "no program is marked long");
    for p in long {
        check(p);
        let executions = LONG_FIXED_EXECUTIONS * FIXED_STRATEGIES.len() as u64;
        let steps = check_fixed(p, LONG_FIXED_EXECUTIONS);
        let scaled = seed002_scaled::PROGRAMS.iter().any(|s| s.name == p.name);
        assert!(
            scaled || steps >= LONG_STEPS * executions,
            "{}: {steps} steps in {executions} executions, fewer than {LONG_STEPS} per execution",
            p.name
        );
        println!(
            "{:28} fixed twin: {} steps per execution",
            p.name,
            steps / executions
        );
    }
}

#[test]
fn seed000() {
    check_all("bounding-");
}

#[test]
fn seed001() {
    check_all("rpro-");
}

#[test]
fn seed002() {
    check_all("valsched-");
}

#[test]
fn seed003() {
    check_all("assetfuzzer-");
}

#[test]
fn seed004() {
    check_all("tame-");
}

#[test]
fn memory_order() {
    check_all("ordering-");
}

#[test]
fn lock_free() {
    check_all("lockfree-");
}

#[test]
fn async_ports() {
    check_all("async-");
}

/// Every program belongs to one of the per-seed tests above, and its `found_by` strategy parses.
#[test]
fn every_program_is_covered() {
    for p in all() {
        assert!(
            [
                "bounding-",
                "rpro-",
                "valsched-",
                "assetfuzzer-",
                "tame-",
                "ordering-",
                "lockfree-",
                "async-"
            ]
            .iter()
            .any(|prefix| p.name.starts_with(prefix)),
            "{} is not covered by a per-seed test",
            p.name
        );
        spec(p.found_by.strategy);
        assert!(p.found_by.within > 0, "{}: empty budget", p.name);
    }
}
