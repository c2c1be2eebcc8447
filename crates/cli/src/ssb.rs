//! `interleave ssb`: the schedule-sensitive-branch analysis of one program, printed as text and
//! optionally written as JSON.

use std::time::Duration;

use anyhow::Context;
use interleave::ssb::{BranchKind, ScheduleSensitiveBranch, SsbReport};
use serde::Serialize;

use crate::cli::SsbPlan;

/// Runs the analysis of `plan` and prints the report.
pub fn ssb(plan: &SsbPlan) -> anyhow::Result<()> {
    let program = plan.program;
    let variant = plan.variant;
    let mut analysis = plan.analysis.clone();
    if let Some(steps) = program.max_steps() {
        analysis = analysis.max_steps(steps);
    }
    let report = analysis
        .run(|| (program.run)(variant))
        .with_context(|| format!("analysing {}", program.name))?;
    print!("{}", describe(program.name, &report));
    if let Some(path) = &plan.json {
        let json = serde_json::to_string_pretty(&SsbJson::of(
            program.name,
            &variant.to_string(),
            &report,
        ))?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The text report: the trace's figures, then every branch.
fn describe(program: &str, report: &SsbReport) -> String {
    let mut text = format!(
        "{program}: {} threads, {} events ({} critical, {} branch events); trace {}, \
         constraints {:.0} literals on average over {} queries ({} sat, {} unsat, {} undecided), \
         solving {}, confirming {}\n",
        report.threads,
        report.events,
        report.critical_events,
        report.branch_events,
        millis(report.trace_time),
        report.average_constraint_size(),
        report.queries,
        report.satisfiable,
        report.unsatisfiable,
        report.undecided,
        millis(report.solving_time),
        millis(report.confirming_time),
    );
    text.push_str(&format!(
        "{} chunks analysed of {}; {} predictions confirmed, {} unconfirmed\n",
        report.chunks, report.chunk_combinations, report.confirmed, report.unconfirmed
    ));
    if report.branches.is_empty() {
        text.push_str("no schedule-sensitive branch found\n");
    }
    for branch in &report.branches {
        text.push_str(&format!("\n{branch}\n"));
    }
    for failure in &report.failures {
        text.push_str(&format!("\na flipping schedule fails:\n{failure}\n"));
    }
    text
}

fn millis(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

#[derive(Serialize)]
struct SsbJson {
    program: String,
    variant: String,
    threads: usize,
    events: usize,
    critical_events: usize,
    branch_events: usize,
    trace_ms: f64,
    solving_ms: f64,
    confirming_ms: f64,
    chunks: u64,
    chunk_combinations: String,
    queries: u64,
    satisfiable: u64,
    unsatisfiable: u64,
    undecided: u64,
    average_constraint_literals: f64,
    confirmed: u64,
    unconfirmed: u64,
    branches: Vec<BranchJson>,
    failures: Vec<String>,
}

#[derive(Serialize)]
struct BranchJson {
    site: String,
    thread: String,
    kind: &'static str,
    occurrence: usize,
    observed: bool,
    flipped: bool,
    read_site: String,
    read_thread: String,
    object: String,
    observed_source: String,
    new_source: String,
    exposes_failure: bool,
    token: String,
}

impl SsbJson {
    fn of(program: &str, variant: &str, report: &SsbReport) -> SsbJson {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        SsbJson {
            program: program.to_string(),
            variant: variant.to_string(),
            threads: report.threads,
            events: report.events,
            critical_events: report.critical_events,
            branch_events: report.branch_events,
            trace_ms: ms(report.trace_time),
            solving_ms: ms(report.solving_time),
            confirming_ms: ms(report.confirming_time),
            chunks: report.chunks,
            chunk_combinations: report.chunk_combinations.to_string(),
            queries: report.queries,
            satisfiable: report.satisfiable,
            unsatisfiable: report.unsatisfiable,
            undecided: report.undecided,
            average_constraint_literals: report.average_constraint_size(),
            confirmed: report.confirmed,
            unconfirmed: report.unconfirmed,
            branches: report.branches.iter().map(BranchJson::of).collect(),
            failures: report.failures.iter().map(|f| f.to_string()).collect(),
        }
    }
}

impl BranchJson {
    fn of(branch: &ScheduleSensitiveBranch) -> BranchJson {
        BranchJson {
            site: branch.site.clone(),
            thread: branch.thread.clone(),
            kind: match branch.kind {
                BranchKind::Condition => "condition",
                BranchKind::Panic => "panic",
            },
            occurrence: branch.occurrence,
            observed: branch.observed,
            flipped: branch.flipped,
            read_site: branch.read.site.clone(),
            read_thread: branch.read.thread.clone(),
            object: branch.read.object.clone(),
            observed_source: branch.read.observed_source.clone(),
            new_source: branch.read.new_source.clone(),
            exposes_failure: branch.exposes_failure(),
            token: branch.token.clone(),
        }
    }
}
