//! Runs benchmark plans and prints their results.
//!
//! For each program, variant and strategy, every seed runs the full budget of executions (the
//! exploration does not stop at the first failure), so the table shows both the fraction of
//! executions that exposed the bug (the per-execution probability the seeds report) and the
//! index of the first exposing execution (executions to first bug). Only failures of the
//! program's declared kind count as exposing the bug; others are listed separately, and any
//! failure of a fixed twin is flagged as a false positive.

use std::time::Instant;

use anyhow::bail;
use interleave::{Builder, FailureKind, RaceMode, Report};
use interleave_programs::{Program, Surface, Variant};

use crate::cli::BenchPlan;

fn expected_kind(program: &Program) -> FailureKind {
    match program.bug.surface() {
        Surface::Panic => FailureKind::Panic,
        Surface::Deadlock => FailureKind::Deadlock,
        Surface::DataRace => FailureKind::DataRace,
    }
}

fn builder(program: &Program) -> Builder {
    let races = if program.bug.surface() == Surface::DataRace {
        RaceMode::Fail
    } else {
        RaceMode::Warn
    };
    Builder::new().ignore_environment().data_races(races)
}

/// What one (program, variant, strategy) cell measured over all seeds.
struct Cell {
    executions: u64,
    hits: u64,
    other_failures: u64,
    first_hits: Vec<Option<u64>>,
    seconds: f64,
}

impl Cell {
    fn add(&mut self, report: &Report, expected: FailureKind) {
        self.executions += report.executions;
        let hits = report
            .failures
            .iter()
            .filter(|f| f.kind == expected)
            .count() as u64;
        self.hits += hits;
        self.other_failures += report.failures.len() as u64 - hits;
        self.first_hits.push(
            report
                .failures
                .iter()
                .find(|f| f.kind == expected)
                .map(|f| f.execution + 1),
        );
    }

    /// `median (min..max)` of executions to first bug over the seeds that found it, and how
    /// many seeds did.
    fn first_bug(&self) -> String {
        let mut found: Vec<u64> = self.first_hits.iter().flatten().copied().collect();
        if found.is_empty() {
            return "-".to_string();
        }
        found.sort_unstable();
        let median = found[found.len() / 2];
        let seeds = format!("{}/{}", found.len(), self.first_hits.len());
        if found.len() == 1 {
            format!("{median} ({seeds} seeds)")
        } else {
            format!(
                "{median} ({}..{}, {seeds} seeds)",
                found[0],
                found[found.len() - 1]
            )
        }
    }
}

pub fn run(plan: &BenchPlan) -> anyhow::Result<()> {
    println!(
        "{} executions per seed, seeds {}..{}, {} worker(s)",
        plan.executions,
        plan.seeds.start,
        plan.seeds.end - 1,
        plan.workers
    );
    println!(
        "{:<24} {:<7} {:<12} {:>9} {:>10}  {:<34} notes",
        "program", "variant", "strategy", "execs", "hit rate", "executions to first bug"
    );
    let mut false_positives = 0;
    for program in &plan.programs {
        let expected = expected_kind(program);
        for &variant in &plan.variants {
            for strategy in &plan.strategies {
                let mut cell = Cell {
                    executions: 0,
                    hits: 0,
                    other_failures: 0,
                    first_hits: Vec::new(),
                    seconds: 0.0,
                };
                let mut example = None;
                for seed in plan.seeds.clone() {
                    let started = Instant::now();
                    let report = builder(program)
                        .strategy(strategy.clone())
                        .executions(plan.executions)
                        .seed(seed)
                        .workers(plan.workers)
                        .stop_on_first_failure(false)
                        .explore(|| (program.run)(variant))?;
                    cell.seconds += started.elapsed().as_secs_f64();
                    cell.add(&report, expected);
                    if example.is_none() {
                        example = report.failures.into_iter().find(|f| f.kind != expected);
                    }
                }
                let mut notes = format!("{:.2}s", cell.seconds);
                if cell.other_failures > 0 {
                    notes.push_str(&format!(", {} other failures", cell.other_failures));
                }
                let failures = cell.hits + cell.other_failures;
                if variant == Variant::Fixed && failures > 0 {
                    false_positives += failures;
                    notes.push_str(", FALSE POSITIVE on the fixed twin");
                }
                println!(
                    "{:<24} {:<7} {:<12} {:>9} {:>9.3}%  {:<34} {}",
                    program.name,
                    variant.to_string(),
                    strategy.to_string(),
                    cell.executions,
                    100.0 * cell.hits as f64 / cell.executions.max(1) as f64,
                    cell.first_bug(),
                    notes
                );
                if let Some(failure) = example {
                    println!("  example of another failure:\n{failure}\n");
                }
            }
        }
    }
    if false_positives > 0 {
        bail!("{false_positives} failures on fixed twins: these are false positives");
    }
    Ok(())
}

pub fn list() {
    println!(
        "{:<24} {:<26} {:<40} summary",
        "program", "bug kind", "origin"
    );
    for program in interleave_programs::all() {
        println!(
            "{:<24} {:<26} {:<40} {}",
            program.name,
            program.bug.to_string(),
            program.origin,
            program.summary
        );
    }
}

pub fn replay(program: &Program, variant: Variant, token: &str) -> anyhow::Result<()> {
    let report = builder(program).replay(token, || (program.run)(variant))?;
    match report.first_failure() {
        Some(failure) => println!("{failure}"),
        None => println!("the schedule ran to completion without a failure"),
    }
    for warning in &report.warnings {
        println!("warning: {warning}");
    }
    Ok(())
}
