//! Seed 002's Tables 6.2-6.4 analogue: `cargo bench -p interleave-peers --bench value_schedules
//! [-- --quick]`.
//!
//! For every program of the seed 002 suite (buggy version), the effort each systematic search
//! spends before its first failure: executions, scheduling steps (the analogue of executed
//! bytecodes), distinct states (distinct happens-before prefixes, the analogue of JPF's new
//! states) and time, for value-schedule testing (`vs`, and `vs:profile=0` without its two
//! random profiling walks), plain depth-first search (`dfs`) and DPOR (`dpor`), next to loom at preemption bounds 2 and 3 (executions and time; loom reports
//! neither steps nor states). Loom runs in the worker process, as in `interleave bench`.

use std::time::Instant;

use interleave::{Builder, RaceMode};
use interleave_peers::suite_runs::PeerSpec;
use interleave_peers::worker::{Client, Job};
use interleave_programs::{Surface, Variant};

/// What one search spent before its first failure (or in all, when it found none).
struct Effort {
    found: bool,
    executions: u64,
    steps: Option<u64>,
    states: Option<u64>,
    seconds: f64,
}

impl Effort {
    fn cell(&self, budget: u64) -> String {
        if !self.found {
            return format!(
                "- ({}{})",
                self.executions,
                if self.executions >= budget { "+" } else { "" }
            );
        }
        let mut text = self.executions.to_string();
        if let (Some(steps), Some(states)) = (self.steps, self.states) {
            text.push_str(&format!("/{steps}/{states}"));
        }
        format!("{text} {:.2}s", self.seconds)
    }
}

fn interleave(program: &interleave_programs::Program, spec: &str, budget: u64) -> Effort {
    let races = if program.bug.surface() == Surface::DataRace {
        RaceMode::Fail
    } else {
        RaceMode::Warn
    };
    let started = Instant::now();
    let report = Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("spec"))
        .executions(budget)
        .data_races(races)
        .count_states(true)
        .explore(move || (program.run)(Variant::Buggy))
        .expect("explore");
    Effort {
        found: report.first_failure().is_some(),
        executions: report.executions,
        steps: Some(report.steps),
        states: report.states,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn loom(client: &mut Client, program: &str, bound: usize, budget: u64) -> Effort {
    let started = Instant::now();
    let run = client
        .run(&Job {
            peer: PeerSpec::Loom {
                preemption_bound: bound,
            },
            program: program.to_string(),
            variant: Variant::Buggy,
            seed: 0,
            executions: budget,
        })
        .expect("loom worker");
    Effort {
        found: run.failure.is_some(),
        executions: run.failure.map_or(run.executions, |f| f.execution + 1),
        steps: None,
        states: None,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let budget = if quick { 2_000 } else { 100_000 };
    let mut client = Client::new(env!("CARGO_BIN_EXE_peers").into(), vec!["worker".into()]);
    println!(
        "Seed 002 Tables 6.2-6.4 analogue: effort before the first failure, budget {budget} \
         executions; interleave cells are executions/steps/states time, `-` not found"
    );
    // `vs` starts with two random profiling walks (seed 0); `vs:profile=0` is the search
    // alone, deterministic, learning its pairs from its own executions.
    let columns = ["vs", "vs:profile=0", "dfs", "dpor"];
    print!("{:<28}", "program");
    for column in columns {
        print!(" {column:>28}");
    }
    println!(" {:>16} {:>16}", "loom:b=2", "loom:b=3");
    let mut found = [0usize; 6];
    // The thesis's programs, in the suite's order; not the scaled SCTBench ports of its kernels
    // (`seed002_scaled`, 10 to 100 threads), whose searches run out of this budget, each taking
    // minutes.
    use interleave_programs::suite::{seed002, seed002_apps, seed002_kernel};
    let programs: Vec<_> = [
        seed002::PROGRAMS,
        seed002_kernel::PROGRAMS,
        seed002_apps::PROGRAMS,
    ]
    .into_iter()
    .flatten()
    .collect();
    for &program in &programs {
        print!("{:<28}", program.name);
        for (i, column) in columns.iter().enumerate() {
            let effort = interleave(program, column, budget);
            found[i] += usize::from(effort.found);
            print!(" {:>28}", effort.cell(budget));
        }
        for (i, bound) in [2, 3].into_iter().enumerate() {
            let effort = loom(&mut client, program.name, bound, budget);
            found[columns.len() + i] += usize::from(effort.found);
            print!(" {:>16}", effort.cell(budget));
        }
        println!();
    }
    let names = columns.iter().copied().chain(["loom:b=2", "loom:b=3"]);
    let counts: Vec<String> = names
        .zip(found)
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    println!("found: {} of {}", counts.join(", "), programs.len());
}
