//! The `bench`, `merge`, `list` and `replay` commands: run (or combine) measurements, print the
//! table, write the requested files, and fail loudly on false positives.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::bail;
use interleave_programs::{Program, Variant};

use crate::cli::{BenchPlan, Outputs};
use crate::plan;
use crate::results::{Results, FORMAT};
use crate::{chart, runner, table};

pub fn bench(plan: &BenchPlan) -> anyhow::Result<()> {
    let jobs: Vec<plan::Job> = plan::jobs(&plan.config)?
        .into_iter()
        .enumerate()
        .filter(|(i, _)| plan.shard.contains(*i))
        .map(|(_, job)| job)
        .collect();
    let records = runner::run(&jobs, plan.config.executions, plan.threads);
    let results = Results {
        format: FORMAT.to_string(),
        config: plan.config.clone(),
        shards: vec![plan.shard],
        records,
    };
    if plan.shard.count > 1 {
        println!(
            "shard {}/{}: {} of the run's measurements; combine the shards' --json files with `interleave merge`",
            plan.shard.index,
            plan.shard.count,
            jobs.len()
        );
    }
    report(&results, &plan.outputs)
}

pub fn merge(inputs: &[PathBuf], outputs: &Outputs) -> anyhow::Result<()> {
    let parts = inputs
        .iter()
        .map(|path| Ok((path.display().to_string(), Results::read_json(path)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut results = Results::merge(parts)?;
    let order: HashMap<_, usize> = plan::jobs(&results.config)?
        .iter()
        .enumerate()
        .map(|(i, job)| (job.key(), i))
        .collect();
    let position = |r: &crate::results::Record| {
        order
            .get(&(r.program.clone(), r.fixed, r.strategy.clone(), r.seed))
            .copied()
    };
    if let Some(stray) = results.records.iter().find(|r| position(r).is_none()) {
        bail!(
            "a shard holds a measurement its configuration does not contain ({} {} seed {}): the file was edited or is corrupt",
            stray.program,
            stray.strategy,
            stray.seed
        );
    }
    results.records.sort_by_key(|r| position(r));
    report(&results, outputs)
}

/// Prints the table and writes the requested files; an error if a fixed twin failed.
fn report(results: &Results, outputs: &Outputs) -> anyhow::Result<()> {
    let (text, false_positives) = table::render(results);
    print!("{text}");
    if let Some(path) = &outputs.json {
        results.write_json(path)?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &outputs.csv {
        results.write_csv(path)?;
        println!("wrote {}", path.display());
    }
    if let Some(dir) = &outputs.svg {
        for path in chart::write_all(results, dir)? {
            println!("wrote {}", path.display());
        }
    }
    if false_positives > 0 {
        bail!("{false_positives} runs failed on fixed twins: false positives (listed above)");
    }
    Ok(())
}

pub fn list() {
    println!(
        "{:<32} {:<26} {:<46} summary",
        "program", "bug kind", "origin"
    );
    for program in interleave_programs::all() {
        // Long programs are left out of default bench runs; the mark says why one is missing.
        let long = if program.long {
            " (long: runs only when named)"
        } else {
            ""
        };
        println!(
            "{:<32} {:<26} {:<46} {}{long}",
            program.name,
            program.bug.to_string(),
            program.origin,
            program.summary
        );
    }
}

pub fn replay(program: &Program, variant: Variant, token: &str) -> anyhow::Result<()> {
    let report = runner::builder(program, variant).replay(token, || (program.run)(variant))?;
    match report.first_failure() {
        Some(failure) => println!("{failure}"),
        None => println!("the schedule ran to completion without a failure"),
    }
    for warning in &report.warnings {
        println!("warning: {warning}");
    }
    Ok(())
}
