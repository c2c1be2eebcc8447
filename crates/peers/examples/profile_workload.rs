//! Runs one workload of the throughput bench under one tool and strategy, untimed, so a profiler
//! (`valgrind --tool=callgrind`, whose instruction counts are repeatable on a shared machine) can
//! attribute its cost per function.
//!
//! `cargo run --release -p interleave-peers --example profile_workload -- WORKLOAD TOOL N
//! [WORKERS]`, where WORKLOAD is `mutex`, `atomic`, `condvar` or `rwlock`, TOOL is
//! `interleave:<strategy>` (for example `interleave:random`, `interleave:pct:d=3`),
//! `shuttle:random`, `shuttle:pct` or `loom`, N the number of executions and WORKERS interleave's
//! worker count (default 1). Instructions per execution are the difference of two runs with
//! different N divided by the difference of N, which cancels the process's fixed start-up cost.

use anyhow::{bail, Context, Result};
use interleave_peers::throughput::{self, all_workloads};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (workload, tool, n, workers) = match args.as_slice() {
        [workload, tool, n] => (workload, tool, n, 1),
        [workload, tool, n, workers] => (
            workload,
            tool,
            n,
            workers.parse().context("WORKERS must be a number")?,
        ),
        _ => bail!("usage: profile_workload WORKLOAD TOOL N [WORKERS]"),
    };
    let n: u64 = n.parse().context("N must be a number")?;
    let Some(w) = all_workloads()
        .into_iter()
        .find(|w| w.name.ends_with(workload.as_str()))
    else {
        bail!("unknown workload {workload:?}");
    };
    let run = match tool.split_once(':') {
        Some(("interleave", spec)) => throughput::run_interleave_on(spec, n, workers, w.interleave),
        Some(("shuttle", "random")) => throughput::run_shuttle_random(n, w.shuttle),
        Some(("shuttle", "pct")) => throughput::run_shuttle_pct(n, w.shuttle),
        None if tool == "loom" => throughput::run_loom(n, w.loom),
        _ => bail!("unknown tool {tool:?}"),
    };
    println!(
        "{} executions, {} steps",
        run.executions,
        run.steps.map_or("-".to_string(), |s| s.to_string())
    );
    Ok(())
}
