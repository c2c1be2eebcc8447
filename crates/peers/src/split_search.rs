//! Depth-first search split among workers: executions per second of plain `dfs` and
//! `dfs:c=2` on the exhaustion programs ([`crate::exhaustion`]) with 1 and with 2 workers, and
//! with automatic workers (one per core, which split a tree only after its first executions),
//! each search run to its end (or to [`SPLIT_LIMIT`] executions), the counts in alternation so
//! each pair ran under about the same load.
//!
//! `cargo run --release -p interleave-peers --bin peers -- --split-only [--repetitions N]`. The report is the same
//! with either count (the library's tests check that); what changes is the wall time. Beside
//! executions per second it prints the CPU time per execution of the whole process (a second
//! worker that waits or repeats work shows there, whatever the machine's load), and what a
//! CPU-bound loop gains on two threads right after each pair (`machine`, 2.0 on an idle 2-core
//! machine), since the machine is shared.

use crate::exhaustion::all_programs;
use crate::throughput::{load_average, machine_speedup, run_interleave_on, thousands, Run};
use interleave::AUTOMATIC_WORKERS;

/// The most executions one search runs: the larger programs' `dfs` trees are far bigger, and
/// their searches stop there, which shows what a budget below the tree gains.
pub const SPLIT_LIMIT: u64 = 200_000;

/// A budget below the larger trees: with it, executions a helper runs past the budget are
/// wasted, which shows in the CPU time per execution.
pub const BELOW_TREE: u64 = 2_000;

/// The searches measured, with their budgets; a search under [`BELOW_TREE`] is shown only for
/// the programs whose tree is larger (labelled `dfs@2000`).
const SEARCHES: [(&str, u64); 3] = [
    ("dfs", SPLIT_LIMIT),
    ("dfs:c=2", SPLIT_LIMIT),
    ("dfs", BELOW_TREE),
];

/// Prints the table, with `reps` repetitions of each pair.
pub fn run(reps: usize) {
    println!(
        "dfs split among workers: executions/s with 1 and 2 workers, best of {reps} \
         (paired low-high), CPU µs per execution, and automatic workers ({} cores); at most \
         {SPLIT_LIMIT} executions (dfs@N: at most N); load {}",
        std::thread::available_parallelism().map_or(1, |cores| cores.get()),
        load_average()
    );
    println!(
        "  {:<26} {:<8} {:>8} {:>9} {:>9} {:>16} {:>7} {:>7} {:>9} {:>8} {:>9}",
        "program",
        "search",
        "execs",
        "1w ex/s",
        "2w ex/s",
        "speed-up",
        "cpu 1w",
        "cpu 2w",
        "auto ex/s",
        "cpu auto",
        "machine"
    );
    for program in all_programs() {
        for (spec, budget) in SEARCHES {
            let (mut one, mut two, mut auto, mut machine) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for _ in 0..reps.max(1) {
                one.push(run_interleave_on(spec, budget, 1, program.interleave));
                two.push(run_interleave_on(spec, budget, 2, program.interleave));
                auto.push(run_interleave_on(
                    spec,
                    budget,
                    AUTOMATIC_WORKERS,
                    program.interleave,
                ));
                machine.push(machine_speedup());
            }
            if budget < SPLIT_LIMIT && one[0].executions < budget {
                continue;
            }
            let label = if budget < SPLIT_LIMIT {
                format!("{spec}@{budget}")
            } else {
                spec.to_string()
            };
            let rate = |runs: &[Run]| runs.iter().map(Run::execs_per_sec).fold(0.0, f64::max);
            let cpu = |runs: &[Run]| {
                runs.iter()
                    .map(|run| run.cpu.as_secs_f64() * 1e6 / run.executions.max(1) as f64)
                    .fold(f64::INFINITY, f64::min)
            };
            let paired: Vec<f64> = one
                .iter()
                .zip(&two)
                .map(|(one, two)| two.execs_per_sec() / one.execs_per_sec())
                .collect();
            let low = paired.iter().copied().fold(f64::INFINITY, f64::min);
            let high = paired.iter().copied().fold(0.0, f64::max);
            let machine_range = format!(
                "{:.2}-{:.2}",
                machine.iter().copied().fold(f64::INFINITY, f64::min),
                machine.iter().copied().fold(0.0, f64::max)
            );
            println!(
                "  {:<26} {:<8} {:>8} {:>9} {:>9} {:>16} {:>7.2} {:>7.2} {:>9} {:>8.2} {:>9}",
                program.name,
                label,
                one[0].executions,
                thousands(rate(&one)),
                thousands(rate(&two)),
                format!("{:.2}x ({low:.2}-{high:.2})", rate(&two) / rate(&one)),
                cpu(&one),
                cpu(&two),
                thousands(rate(&auto)),
                cpu(&auto),
                machine_range,
            );
        }
    }
}
