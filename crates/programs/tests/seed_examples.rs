//! Data-driven tests of the seed example programs.
//!
//! One row per program: the strategy that should expose its buggy version and the execution
//! budget it gets. For every row:
//!
//! - **buggy**: for each of the seeds `0..10`, exploring with the row's strategy and budget
//!   finds a failure, of the kind the program declares (assertion/panic -> `Panic`, deadlock ->
//!   `Deadlock`), and replaying the failure's token reproduces the same failure (kind and message). Buggy programs
//!   run with `RaceMode::Warn`: several race on purpose, but their bug is the assertion.
//! - **fixed**: the fixed twin reports nothing, and no race warning, over 10,000 random
//!   executions and 10,000 `pct:d=3` executions, with `RaceMode::Fail`.
//!
//! Run with `--nocapture` to see executions-to-first-bug per seed (min / median / max).

use interleave::{Builder, FailureKind, RaceMode, Report, StrategySpec};
use interleave_programs::{find, Program, Surface, Variant};

/// Seeds every buggy program is explored with.
const SEEDS: std::ops::Range<u64> = 0..10;
/// Executions each fixed twin gets per strategy.
const FIXED_EXECUTIONS: u64 = 10_000;
/// Strategies each fixed twin is run with.
const FIXED_STRATEGIES: [&str; 2] = ["random", "pct:d=3"];

/// One row of the table.
struct Case {
    /// The program's name in `interleave_programs::all()`.
    name: &'static str,
    /// Strategy that should expose the buggy version.
    strategy: &'static str,
    /// Executions allowed per seed.
    budget: u64,
}

/// Depth per row: c + 1 for a bug needing c preemptions (c = 0 bugs use depth 2 anyway), except
/// `seed000-fig10`, a c = 2 bug that PCT can only expose with three change points (depth 4; see
/// `interleave_programs::seed000::fig10`). Budgets leave a margin of at least 2x over the worst
/// of the ten seeds as measured.
const CASES: &[Case] = &[
    Case {
        name: "seed000-fig1",
        strategy: "pct:d=2",
        budget: 200,
    },
    Case {
        name: "seed000-fig2",
        strategy: "pct:d=2",
        budget: 500,
    },
    Case {
        name: "seed000-fig3",
        strategy: "pct:d=3",
        budget: 3_000,
    },
    Case {
        name: "seed000-fig4",
        strategy: "pct:d=3",
        budget: 6_000,
    },
    Case {
        name: "seed000-fig8",
        strategy: "pct:d=2",
        budget: 200,
    },
    Case {
        name: "seed000-fig9",
        strategy: "pct:d=2",
        budget: 1_000,
    },
    Case {
        name: "seed000-fig10",
        strategy: "pct:d=4",
        budget: 20_000,
    },
    Case {
        name: "seed001-d1",
        strategy: "pct:d=2",
        budget: 500,
    },
    Case {
        name: "seed001-d2",
        strategy: "pct:d=3",
        budget: 5_000,
    },
    Case {
        name: "seed002-fig1-1",
        strategy: "pct:d=2",
        budget: 1_000,
    },
    Case {
        name: "seed002-fig5-1",
        strategy: "pct:d=2",
        budget: 1_000,
    },
    Case {
        name: "seed003-account",
        strategy: "pct:d=2",
        budget: 1_000,
    },
    Case {
        name: "seed004-derby",
        strategy: "pct:d=2",
        budget: 500,
    },
];

fn case(name: &str) -> &'static Case {
    CASES
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no table row for {name}"))
}

fn program(name: &str) -> &'static Program {
    find(name).unwrap_or_else(|| panic!("no program called {name}"))
}

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

fn buggy_builder(p: &Program, c: &Case, seed: u64) -> Builder {
    Builder::new()
        .ignore_environment()
        .strategy(spec(c.strategy))
        .executions(c.budget)
        .seed(seed)
        .workers(1)
        .data_races(race_mode(p))
}

/// The buggy version is found by the row's strategy within budget for every seed, with the
/// declared kind, and every failure replays to the same kind. Returns executions-to-first-bug.
fn check_buggy(name: &str) -> Vec<u64> {
    let p = program(name);
    let c = case(name);
    let body = move || (p.run)(Variant::Buggy);
    let mut firsts = Vec::new();
    for seed in SEEDS {
        let report: Report = buggy_builder(p, c, seed)
            .explore(body)
            .unwrap_or_else(|e| panic!("{name} seed {seed}: explore failed: {e}"));
        assert!(
            !report.failures.is_empty(),
            "{name}: {} found no bug in {} executions with seed {seed} ({} run)",
            c.strategy,
            c.budget,
            report.executions
        );
        for failure in &report.failures {
            assert!(
                matches_surface(&failure.kind, p.bug.surface()),
                "{name} seed {seed}: declared bug {} but found {:?}:\n{failure}",
                p.bug,
                failure.kind
            );
            let replayed = buggy_builder(p, c, seed)
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

/// The fixed twin reports nothing (no failure, no race warning) under either strategy.
fn check_fixed(name: &str) {
    let p = program(name);
    let body = move || (p.run)(Variant::Fixed);
    for strategy in FIXED_STRATEGIES {
        let report = Builder::new()
            .ignore_environment()
            .strategy(spec(strategy))
            .executions(FIXED_EXECUTIONS)
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
        assert_eq!(
            report.executions, FIXED_EXECUTIONS,
            "{name} (fixed) {strategy}"
        );
    }
}

fn check(name: &str) {
    let mut firsts = check_buggy(name);
    firsts.sort_unstable();
    let c = case(name);
    println!(
        "{name:16} {:8} budget {:6}: executions to first bug over seeds 0..10: min {} / median {} / max {}  {firsts:?}",
        c.strategy,
        c.budget,
        firsts[0],
        (firsts[4] + firsts[5]) / 2,
        firsts[9],
    );
    check_fixed(name);
}

macro_rules! cases {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($name);
            }
        )*

        /// Every program has exactly one row, and every row names a program.
        #[test]
        fn table_covers_every_program() {
            let tested = [$($name),*];
            for p in interleave_programs::all() {
                assert!(tested.contains(&p.name), "{} has no test", p.name);
                case(p.name);
            }
            for c in CASES {
                program(c.name);
                assert!(tested.contains(&c.name), "row {} has no test", c.name);
            }
            assert_eq!(CASES.len(), interleave_programs::all().len());
        }
    };
}

cases! {
    seed000_fig1 => "seed000-fig1",
    seed000_fig2 => "seed000-fig2",
    seed000_fig3 => "seed000-fig3",
    seed000_fig4 => "seed000-fig4",
    seed000_fig8 => "seed000-fig8",
    seed000_fig9 => "seed000-fig9",
    seed000_fig10 => "seed000-fig10",
    seed001_d1 => "seed001-d1",
    seed001_d2 => "seed001-d2",
    seed002_fig1_1 => "seed002-fig1-1",
    seed002_fig5_1 => "seed002-fig5-1",
    seed003_account => "seed003-account",
    seed004_derby => "seed004-derby",
}
