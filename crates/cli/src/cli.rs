//! Argument parsing: turns the command line into plain data, validating every value (unknown
//! program or strategy names, impossible numbers) with a message that says what is wrong.

use anyhow::{anyhow, bail, Context};
use clap::{Parser, Subcommand, ValueEnum};
use interleave::StrategySpec;
use interleave_programs::{Program, Variant};

#[derive(Parser)]
#[command(
    name = "interleave",
    version,
    about = "Find concurrency bugs by controlled scheduling"
)]
pub struct Cli {
    #[command(subcommand)]
    command: CliCommand,
}

#[derive(Subcommand)]
enum CliCommand {
    /// Run benchmark programs under strategies and report how often and how fast each exposes
    /// its bug.
    Bench {
        /// Programs to run (repeatable or comma-separated); all programs by default.
        #[arg(long = "program", short = 'p', value_delimiter = ',')]
        programs: Vec<String>,
        /// Strategy specs (repeatable or comma-separated, e.g. `random`, `pct:d=3`); default:
        /// random, pct:d=2, pct:d=3.
        #[arg(long = "strategy", short = 's', value_delimiter = ',')]
        strategies: Vec<String>,
        /// Executions per program, strategy and seed.
        #[arg(long, short = 'n', default_value_t = 1000)]
        executions: u64,
        /// Number of seeds (0, 1, ..., seeds-1) to repeat each run with.
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        /// The first seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Which version of each program to run.
        #[arg(long, value_enum, default_value_t = VariantArg::Buggy)]
        variant: VariantArg,
        /// Worker threads (default: all cores); results do not depend on it.
        #[arg(long, short = 'j')]
        workers: Option<usize>,
    },
    /// List the benchmark programs.
    List,
    /// Re-run one schedule of a program from a replay token and print the report.
    Replay {
        /// The program name.
        program: String,
        /// The replay token from a failure report.
        token: String,
        /// Which version of the program to run.
        #[arg(long, value_enum, default_value_t = VariantArg::Buggy)]
        variant: VariantArg,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum VariantArg {
    Buggy,
    Fixed,
    Both,
}

impl VariantArg {
    fn variants(self) -> Vec<Variant> {
        match self {
            VariantArg::Buggy => vec![Variant::Buggy],
            VariantArg::Fixed => vec![Variant::Fixed],
            VariantArg::Both => vec![Variant::Buggy, Variant::Fixed],
        }
    }
}

/// A validated benchmark plan.
pub struct BenchPlan {
    pub programs: Vec<&'static Program>,
    pub strategies: Vec<StrategySpec>,
    pub variants: Vec<Variant>,
    pub executions: u64,
    pub seeds: std::ops::Range<u64>,
    pub workers: usize,
}

/// What to do.
pub enum Command {
    Bench(BenchPlan),
    List,
    Replay {
        program: &'static Program,
        variant: Variant,
        token: String,
    },
}

fn find_program(name: &str) -> anyhow::Result<&'static Program> {
    interleave_programs::find(name.trim()).ok_or_else(|| {
        let names: Vec<&str> = interleave_programs::all().iter().map(|p| p.name).collect();
        anyhow!(
            "unknown program {name:?}; the programs are: {}",
            names.join(", ")
        )
    })
}

impl Cli {
    pub fn into_command(self) -> anyhow::Result<Command> {
        match self.command {
            CliCommand::List => Ok(Command::List),
            CliCommand::Replay {
                program,
                token,
                variant,
            } => {
                let variant = match variant {
                    VariantArg::Both => bail!("replay runs one variant: choose buggy or fixed"),
                    VariantArg::Buggy => Variant::Buggy,
                    VariantArg::Fixed => Variant::Fixed,
                };
                Ok(Command::Replay {
                    program: find_program(&program)?,
                    variant,
                    token,
                })
            }
            CliCommand::Bench {
                programs,
                strategies,
                executions,
                seeds,
                seed,
                variant,
                workers,
            } => {
                let programs = if programs.is_empty() {
                    interleave_programs::all().iter().collect()
                } else {
                    programs
                        .iter()
                        .map(|name| find_program(name))
                        .collect::<anyhow::Result<_>>()?
                };
                let strategies = if strategies.is_empty() {
                    vec![
                        StrategySpec::Random,
                        StrategySpec::pct(2),
                        StrategySpec::pct(3),
                    ]
                } else {
                    strategies
                        .iter()
                        .map(|spec| {
                            spec.parse::<StrategySpec>()
                                .with_context(|| format!("in --strategy {spec:?}"))
                        })
                        .collect::<anyhow::Result<_>>()?
                };
                if executions == 0 {
                    bail!("--executions must be at least 1");
                }
                if seeds == 0 {
                    bail!("--seeds must be at least 1");
                }
                let workers = match workers {
                    Some(0) => bail!("--workers must be at least 1"),
                    Some(n) => n,
                    None => std::thread::available_parallelism().map_or(1, |n| n.get()),
                };
                Ok(Command::Bench(BenchPlan {
                    programs,
                    strategies,
                    variants: variant.variants(),
                    executions,
                    seeds: seed..seed.saturating_add(seeds),
                    workers,
                }))
            }
        }
    }
}
