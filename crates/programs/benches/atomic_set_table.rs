//! Seed 003's results table analogue: `cargo bench -p interleave-programs --bench
//! atomic_set_table [-- --quick]`.
//!
//! For the suite's programs that declare units of work (the atomic-set bugs of seed 003) and
//! for the whole suite, the runtime-monitoring baseline (`rm`: random walks, each checked
//! against the eleven patterns), RaceFuzzer, AtomFuzzer and AssetFuzzer run the same number
//! of executions per seed, without stopping at failures. Per program and strategy:
//!
//! - violations: distinct atomic-set serializability violations produced (monitoring
//!   strategies only), and the detection rate, executions that produced one / executions;
//! - panics: distinct panic or assertion messages (failures of any kind, by message);
//! - bug: seeds in which the program's known bug showed as a failure;
//! - cost: microseconds per execution, and its ratio to the same program under a plain random
//!   walk (the uninstrumented baseline: scheduling only, no trace, no analysis).

use std::collections::HashSet;
use std::time::Instant;

use interleave::{Builder, RaceMode, Report};
use interleave_programs::{all, default_suite, Program, Surface, Variant};

const STRATEGIES: [&str; 4] = ["rm", "racefuzzer", "atomfuzzer", "assetfuzzer"];

/// What one strategy did on one program over all seeds.
#[derive(Default)]
struct Cell {
    violations: HashSet<String>,
    violating: u64,
    executions: u64,
    panics: HashSet<String>,
    bug_seeds: u64,
    seconds: f64,
}

fn run(program: &Program, spec: &str, variant: Variant, seed: u64, executions: u64) -> Report {
    let races = if program.bug.surface() == Surface::DataRace {
        RaceMode::Fail
    } else {
        RaceMode::Warn
    };
    Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a built-in spec"))
        .seed(seed)
        .executions(executions)
        .stop_on_first_failure(false)
        .data_races(races)
        .explore(move || (program.run)(variant))
        .expect("explore")
}

fn measure(program: &Program, spec: &str, variant: Variant, seeds: u64, executions: u64) -> Cell {
    let mut cell = Cell::default();
    for seed in 0..seeds {
        let started = Instant::now();
        let report = run(program, spec, variant, seed, executions);
        cell.seconds += started.elapsed().as_secs_f64();
        cell.executions += report.executions;
        cell.violating += report.violating_executions;
        cell.violations
            .extend(report.violations.iter().map(|v| v.key().to_string()));
        cell.panics
            .extend(report.failures.iter().map(|f| f.message.clone()));
        cell.bug_seeds += u64::from(!report.failures.is_empty());
    }
    cell
}

fn per_execution(cell: &Cell) -> f64 {
    cell.seconds * 1e6 / cell.executions.max(1) as f64
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (seeds, executions) = if quick { (2, 100) } else { (10, 200) };
    println!(
        "Seed 003 results table analogue: {seeds} seeds x {executions} executions per program \
         and strategy, not stopping at failures"
    );
    println!(
        "cells: violations (distinct) / detection rate | distinct panics | bug seeds | µs per \
         execution (x the random walk)"
    );
    let declaring = |p: &&Program| p.name.starts_with("assetfuzzer-");
    for variant in [Variant::Buggy, Variant::Fixed] {
        println!();
        println!("{variant:?} versions of the atomic-set programs");
        print!("{:<22} {:>9}", "program", "random µs");
        for spec in STRATEGIES {
            print!(" | {spec:^34}");
        }
        println!();
        for program in all().iter().filter(declaring) {
            let normal = measure(program, "random", variant, seeds, executions);
            let base = per_execution(&normal);
            print!("{:<22} {:>9.1}", program.name, base);
            for spec in STRATEGIES {
                let cell = measure(program, spec, variant, seeds, executions);
                let violations = if spec == "rm" || spec == "assetfuzzer" {
                    format!(
                        "{} / {:.3}",
                        cell.violations.len(),
                        cell.violating as f64 / cell.executions.max(1) as f64
                    )
                } else {
                    "-".to_string()
                };
                let cost = per_execution(&cell);
                print!(
                    " | {violations:>11} {:>3} {:>3}/{seeds} {:>6.1} ({:.2}x)",
                    cell.panics.len(),
                    cell.bug_seeds,
                    cost,
                    cost / base
                );
            }
            println!();
        }
    }

    // The whole suite: in how many programs each strategy exposes the bug in every seed.
    println!();
    println!("whole suite (buggy versions): programs whose bug showed in every seed / some / none");
    // Long programs take a quarter of a second per execution; the table covers the default
    // suite.
    let programs: Vec<&Program> = default_suite().collect();
    for spec in STRATEGIES {
        let (mut every, mut some, mut none) = (0, 0, 0);
        for &program in &programs {
            let cell = measure(program, spec, Variant::Buggy, seeds, executions);
            match cell.bug_seeds {
                0 => none += 1,
                n if n == seeds => every += 1,
                _ => some += 1,
            }
        }
        println!(
            "  {spec:<12} {every:>3} / {some:>3} / {none:>3} of {}",
            programs.len()
        );
    }
}
