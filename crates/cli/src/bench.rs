//! The `bench`, `merge`, `list` and `replay` commands: run (or combine) measurements, print the
//! table, write the requested files, and fail loudly on false positives.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::bail;
use interleave::FailureKind;
use interleave_programs::{Program, Variant};

use crate::cli::{BenchPlan, Outputs};
use crate::plan::JobPlan;
use crate::results::{Results, FORMAT};
use crate::{chart, runner, table};

/// The exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it.
const INTERRUPTED: u8 = 130;

/// Set by the first Ctrl-C: no new job starts.
static STOP: AtomicBool = AtomicBool::new(false);

/// The first Ctrl-C stops handing out jobs, so the run ends when the running ones finish and
/// writes what finished; a second one quits at once without writing.
fn stop_on_ctrl_c() {
    let installed = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("interrupted again: quitting without writing results");
            std::process::exit(INTERRUPTED.into());
        }
        eprintln!(
            "interrupted: finishing the measurements that are running, then writing those that \
             finished (Ctrl-C again to quit at once)"
        );
    });
    if let Err(error) = installed {
        eprintln!("warning: Ctrl-C will end the run without writing results ({error})");
    }
}

pub fn bench(plan: &BenchPlan) -> anyhow::Result<ExitCode> {
    let jobs = JobPlan::new(&plan.config)?;
    stop_on_ctrl_c();
    let finished = runner::run(
        &jobs,
        plan.shard,
        plan.config.executions,
        plan.threads,
        &STOP,
    );
    let total = plan.shard.len(jobs.len());
    let results = Results {
        format: FORMAT.to_string(),
        config: plan.config.clone(),
        shards: vec![plan.shard],
        partial: !finished.complete,
        records: finished.records,
    };
    if plan.shard.count > 1 {
        println!(
            "shard {}/{}: {total} of the run's measurements; combine the shards' --json files with `interleave merge`",
            plan.shard.index,
            plan.shard.count,
        );
    }
    let false_positives = report(&results, &plan.outputs)?;
    if results.partial {
        eprintln!(
            "interrupted: {} of {total} measurements finished; the results written are marked partial",
            results.records.len()
        );
        if false_positives > 0 {
            eprintln!("error: {false_positives} runs failed on fixed twins: false positives (listed above)");
        }
        return Ok(ExitCode::from(INTERRUPTED));
    }
    if false_positives > 0 {
        bail!("{false_positives} runs failed on fixed twins: false positives (listed above)");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn merge(inputs: &[PathBuf], outputs: &Outputs) -> anyhow::Result<ExitCode> {
    let parts = inputs
        .iter()
        .map(|path| Ok((path.display().to_string(), Results::read_json(path)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut results = Results::merge(parts)?;
    let plan = JobPlan::new(&results.config)?;
    let position =
        |r: &crate::results::Record| plan.index_of(&r.program, r.fixed, &r.strategy, r.seed);
    if let Some(stray) = results.records.iter().find(|r| position(r).is_none()) {
        bail!(
            "a shard holds a measurement its configuration does not contain ({} {} seed {}): the file was edited or is corrupt",
            stray.program,
            stray.strategy,
            stray.seed
        );
    }
    results.records.sort_by_key(|r| position(r));
    let false_positives = report(&results, outputs)?;
    if false_positives > 0 {
        bail!("{false_positives} runs failed on fixed twins: false positives (listed above)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the table and writes the requested files; returns the number of runs that failed on
/// fixed twins.
fn report(results: &Results, outputs: &Outputs) -> anyhow::Result<usize> {
    let (text, false_positives) = table::render(results);
    print!("{text}");
    let partial = if results.partial { "partial " } else { "" };
    if let Some(path) = &outputs.json {
        results.write_json(path)?;
        println!("wrote {partial}results to {}", path.display());
    }
    if let Some(path) = &outputs.csv {
        results.write_csv(path)?;
        println!("wrote {partial}results to {}", path.display());
    }
    if let Some(dir) = &outputs.svg {
        for path in chart::write_all(results, dir)? {
            println!("wrote {partial}chart {}", path.display());
        }
    }
    Ok(false_positives)
}

pub fn list() {
    // Columns as wide as their widest entry, and the summary on a line of its own under them,
    // so that no long origin pushes the next column out of line.
    let programs = interleave_programs::all();
    let width = |text: &dyn Fn(&Program) -> String, title: &str| {
        programs
            .iter()
            .map(|p| text(p).chars().count())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let name_width = width(&|p| p.name.to_string(), "program");
    let kind_width = width(&|p| p.bug.to_string(), "bug kind");
    println!(
        "{:<name_width$} {:<kind_width$} origin\n    summary",
        "program", "bug kind"
    );
    for program in programs {
        // Long programs are left out of default bench runs; the mark says why one is missing.
        let long = if program.long {
            " (long: runs only when named)"
        } else {
            ""
        };
        // Says why interleave's columns do not find these bugs yet.
        let weak = if program.needs_weak_memory {
            " (needs a weak memory model)"
        } else {
            ""
        };
        println!(
            "\n{:<name_width$} {:<kind_width$} {}\n    {}{long}{weak}",
            program.name,
            program.bug.to_string(),
            program.origin,
            program.summary
        );
    }
}

/// How `interleave replay` ended, as its exit code says (see `interleave replay --help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// The schedule ran to completion without a failure.
    Clean = 0,
    /// The program failed under the schedule.
    Failed = 1,
    /// The replay could not run (arguments, program, token).
    Unusable = 2,
    /// The program no longer performs the recorded operations.
    Diverged = 3,
}

impl From<ReplayOutcome> for ExitCode {
    fn from(outcome: ReplayOutcome) -> ExitCode {
        ExitCode::from(outcome as u8)
    }
}

pub fn replay(program: &Program, variant: Variant, token: &str) -> anyhow::Result<ReplayOutcome> {
    let report = runner::builder(program, variant).replay(token, || (program.run)(variant))?;
    let outcome = match report.first_failure() {
        Some(failure) => {
            println!("{failure}");
            if failure.kind == FailureKind::Divergence {
                ReplayOutcome::Diverged
            } else {
                ReplayOutcome::Failed
            }
        }
        None => {
            println!("the schedule ran to completion without a failure");
            ReplayOutcome::Clean
        }
    };
    for warning in &report.warnings {
        println!("warning: {warning}");
    }
    Ok(outcome)
}
