//! `interleave`: the command-line front end.
//!
//! - `bench` runs the bundled benchmark programs (buggy and fixed twins) under interleave's
//!   strategies and under shuttle and loom, and reports per program and strategy how often the
//!   bug was exposed and how many executions it took to expose it first; it writes JSON, CSV and
//!   SVG charts on request and can run one shard of a split run;
//! - `merge` combines shard files into the same table and charts;
//! - `merge-shards` combines the summaries of the shards of sharded tests
//!   (`INTERLEAVE_SHARD=i/n`) into one verdict per test;
//! - `list` shows the programs; `replay` re-runs one failing schedule of a program and says by
//!   its exit code whether the failure reproduced (1), the program diverged (3) or ran clean (0);
//! - `ssb` finds a program's schedule-sensitive branches (`interleave::ssb`).
//!
//! Arguments are parsed into plain data ([`cli::Command`]) first, then run.

mod bench;
mod chart;
mod cli;
mod merge_shards;
mod output;
mod peers;
mod plan;
mod results;
mod runner;
mod ssb;
mod table;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so every write after a reader closed the pipe (`interleave list |
    // head`) fails and `println!` panics. The default action ends the process quietly, as
    // other command-line tools do.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default has no preconditions, and nothing
    // else in this process has set one for SIGPIPE yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = cli::Cli::parse();
    // `replay` reports with its exit code what happened, so its errors get a code of their
    // own rather than the 1 that means "the failure reproduced".
    let error_code = if cli.is_replay() {
        bench::ReplayOutcome::Unusable.into()
    } else if cli.is_merge_shards() {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the context chain joined with colons.
            eprintln!("error: {e:#}");
            error_code
        }
    }
}

fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.into_command()? {
        cli::Command::Bench(plan) => bench::bench(&plan),
        cli::Command::Merge { inputs, outputs } => bench::merge(&inputs, &outputs),
        cli::Command::MergeShards { inputs, json } => {
            merge_shards::merge_shards(&inputs, json.as_ref())
        }
        cli::Command::List => {
            bench::list();
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Replay {
            program,
            variant,
            token,
        } => Ok(bench::replay(program, variant, &token)?.into()),
        cli::Command::Ssb(plan) => ssb::ssb(&plan).map(|()| ExitCode::SUCCESS),
        #[cfg(feature = "peers")]
        cli::Command::PeerWorker => {
            peers::worker::serve()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
