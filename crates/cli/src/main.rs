//! `interleave`: the command-line front end. `bench` runs the bundled benchmark programs under
//! each strategy and reports, per program and strategy, how often the bug was exposed and how
//! many executions it took to expose it first; `list` shows the programs; `replay` re-runs one
//! failing schedule of a program.
//!
//! Arguments are parsed into plain data ([`cli::Command`]) first, then run ([`bench`]).

mod bench;
mod cli;

use clap::Parser;

fn main() -> anyhow::Result<()> {
    let command = cli::Cli::parse().into_command()?;
    match command {
        cli::Command::Bench(plan) => bench::run(&plan),
        cli::Command::List => {
            bench::list();
            Ok(())
        }
        cli::Command::Replay {
            program,
            variant,
            token,
        } => bench::replay(program, variant, &token),
    }
}
