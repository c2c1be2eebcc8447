//! `interleave`: the command-line front end.
//!
//! - `bench` runs the bundled benchmark programs (buggy and fixed twins) under interleave's
//!   strategies and under shuttle and loom, and reports per program and strategy how often the
//!   bug was exposed and how many executions it took to expose it first; it writes JSON, CSV and
//!   SVG charts on request and can run one shard of a split run;
//! - `merge` combines shard files into the same table and charts;
//! - `list` shows the programs; `replay` re-runs one failing schedule of a program;
//! - `ssb` finds a program's schedule-sensitive branches (`interleave::ssb`).
//!
//! Arguments are parsed into plain data ([`cli::Command`]) first, then run.

mod bench;
mod chart;
mod cli;
mod plan;
mod results;
mod runner;
mod ssb;
mod table;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the context chain joined with colons.
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let command = cli::Cli::parse().into_command()?;
    match command {
        cli::Command::Bench(plan) => bench::bench(&plan),
        cli::Command::Merge { inputs, outputs } => bench::merge(&inputs, &outputs),
        cli::Command::List => {
            bench::list();
            Ok(())
        }
        cli::Command::Replay {
            program,
            variant,
            token,
        } => bench::replay(program, variant, &token),
        cli::Command::Ssb(plan) => ssb::ssb(&plan),
        cli::Command::PeerWorker => Ok(interleave_peers::worker::serve()?),
    }
}
