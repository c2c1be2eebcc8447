//! Seed 004's Tables 1 and 2 analogues: `cargo bench -p interleave-programs --bench
//! ssb_tables`.
//!
//! **Table 1** (small programs, the whole trace as one chunk): for each program with `branch!`
//! annotations, one observed execution of the buggy version (seed 0) and its analysis:
//! threads, events (steps and branch events), critical events, branch events, trace time (the
//! observed execution with value logging), the average constraint size (literals per query),
//! solving time (constraint construction and solving), confirming time, the schedule-sensitive
//! branches found, and how many of them expose the program's bug (their confirming execution
//! fails) rather than being benign. The last column is the same analysis of the fixed twin.
//!
//! **Table 2** (a long run): the program of about 1.7 million events analysed with TAME's
//! distributed partition (per-thread windows of 10,000 events, at most 10,000 combinations
//! examined). Total time includes the observed execution, the partition and the confirming
//! executions. The comparisons with other partitions of the same trace run one per process
//! with `interleave ssb -p tame-long-run --partition global --window 10000` (and
//! `distributed --window 2500`); `docs/bench/ssb-tables.txt` has both.

use std::time::{Duration, Instant};

use interleave::ssb::{Analysis, Partition, SsbReport};
use interleave_programs::{find, Program, Variant, BRANCH_ANNOTATED};

const LONG: &str = "tame-long-run";

fn analyse(program: &Program, variant: Variant, partition: Partition) -> (SsbReport, Duration) {
    let started = Instant::now();
    let mut analysis = Analysis::new().partition(partition);
    if let Some(steps) = program.max_steps() {
        analysis = analysis.max_steps(steps);
    }
    let report = analysis
        .run(|| (program.run)(variant))
        .unwrap_or_else(|e| panic!("{}: {e}", program.name));
    (report, started.elapsed())
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn bugs(report: &SsbReport) -> usize {
    report
        .branches
        .iter()
        .filter(|b| b.exposes_failure())
        .count()
}

fn main() {
    println!("Table 1: schedule-sensitive branches of the small programs (buggy version, seed 0, whole trace)\n");
    println!(
        "| program | threads | events | critical | branch | trace ms | avg constraint (literals) | queries (sat/unsat) | solving ms | confirming ms | SSBs | bugs | benign | fixed twin SSBs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut totals = (0, 0, Duration::ZERO);
    let mut reports = Vec::new();
    for name in BRANCH_ANNOTATED {
        let Some(program) = find(name) else {
            println!("| {name} | (not in this build) |");
            continue;
        };
        let (report, _) = analyse(program, Variant::Buggy, Partition::Whole);
        let (fixed, _) = analyse(program, Variant::Fixed, Partition::Whole);
        let bug = bugs(&report);
        totals.0 += report.branches.len();
        totals.1 += bug;
        totals.2 += report.solving_time;
        println!(
            "| {name} | {} | {} | {} | {} | {} | {:.0} | {} ({}/{}) | {} | {} | {} | {} | {} | {} |",
            report.threads,
            report.events,
            report.critical_events,
            report.branch_events,
            ms(report.trace_time),
            report.average_constraint_size(),
            report.queries,
            report.satisfiable,
            report.unsatisfiable,
            ms(report.solving_time),
            ms(report.confirming_time),
            report.branches.len(),
            bug,
            report.branches.len() - bug,
            fixed.branches.len(),
        );
        reports.push((name, report));
    }
    println!(
        "\nTotal: {} SSBs, {} of them exposing the program's bug; solving {} ms.\n",
        totals.0,
        totals.1,
        ms(totals.2)
    );
    for (name, report) in &reports {
        for branch in &report.branches {
            println!("{name}: {branch}\n");
        }
    }

    let Some(long) = find(LONG) else {
        println!("Table 2: {LONG} is not in this build");
        return;
    };
    println!("Table 2: {LONG} (buggy version, seed 0), one trace under two partitions\n");
    println!(
        "| partition | events | critical | branch | trace ms | chunks analysed (of) | queries (sat/unsat/undecided) | avg constraint | solving ms | confirming ms | total s | SSBs | bugs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (label, partition) in [
        (
            "distributed, 10,000 per thread",
            Partition::distributed(10_000),
        ),
        (
            "global windows of 100,000",
            Partition::Global { window: 100_000 },
        ),
    ] {
        let (report, total) = analyse(long, Variant::Buggy, partition);
        println!(
            "| {label} | {} | {} | {} | {} | {} ({}) | {} ({}/{}/{}) | {:.0} | {} | {} | {:.1} | {} | {} |",
            report.events,
            report.critical_events,
            report.branch_events,
            ms(report.trace_time),
            report.chunks,
            report.chunk_combinations,
            report.queries,
            report.satisfiable,
            report.unsatisfiable,
            report.undecided,
            report.average_constraint_size(),
            ms(report.solving_time),
            ms(report.confirming_time),
            total.as_secs_f64(),
            report.branches.len(),
            bugs(&report),
        );
        for branch in &report.branches {
            println!("\n{branch}");
        }
        println!();
    }
}
