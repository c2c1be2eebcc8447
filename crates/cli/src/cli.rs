//! Argument parsing: turns the command line into plain data, validating every value (unknown
//! program or strategy names, impossible numbers, malformed shard specs) with a one-line message
//! that says what is wrong and what the valid choices are.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use interleave::ssb::Partition;
use interleave_programs::{Program, Variant};

use crate::output;
use crate::plan::{self, Column, JobPlan, Sweep};
use crate::results::{Config, Shard};

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
    /// Run the benchmark programs under strategies (and under shuttle and loom) and report how
    /// often and how fast each exposes each bug.
    Bench(BenchArgs),
    /// Combine the JSON files of the shards of one `bench --shard i/n` run into one table,
    /// JSON, CSV and charts.
    Merge {
        /// The shards' `--json` files.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        #[command(flatten)]
        outputs: OutputArgs,
    },
    /// Combine the summaries that the shards of sharded tests (`INTERLEAVE_SHARD=i/n`) print
    /// into one verdict per test: every shard must be there, and the failure with the smallest
    /// execution index is the one an unsharded run reports first.
    #[command(name = "merge-shards", after_help = MERGE_SHARDS_EXIT_STATUS)]
    MergeShards {
        /// Files holding the shards' summary lines (CI job logs, saved test output).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Write the verdicts as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// List the benchmark programs with their origin and bug kind.
    List,
    /// Re-run one schedule of a program from a replay token and print the report.
    #[command(after_help = REPLAY_EXIT_STATUS)]
    Replay {
        /// The program name.
        program: String,
        /// The replay token from a failure report.
        token: String,
        /// Which version of the program to run.
        #[arg(long, value_enum, default_value_t = OneVariantArg::Buggy)]
        variant: OneVariantArg,
    },
    /// Find the schedule-sensitive branches of a program (TAME): run it once, predict by
    /// constraint solving which reorderings flip a `branch!`, and confirm each by running it.
    Ssb(SsbArgs),
    /// Serve peer jobs on stdin/stdout (used by `bench` itself).
    #[cfg(feature = "peers")]
    #[command(name = "peer-worker", hide = true)]
    PeerWorker,
}

/// What `interleave merge-shards` exits with.
const MERGE_SHARDS_EXIT_STATUS: &str = "Exit status:
  0  every test passed on all of its shards
  1  a test failed (the verdict names the first failing execution and its token)
  2  no verdict: a shard's summary is missing, inconsistent or unreadable";

/// What `interleave replay` exits with; `main` maps outcomes to these codes.
const REPLAY_EXIT_STATUS: &str = "Exit status:
  0  the schedule ran to completion without a failure
  1  the program failed under the schedule (the failure reproduced)
  2  the replay could not run: bad arguments, an unknown program, or a malformed token
  3  the program diverged from the token: it no longer performs the recorded operations";

#[derive(Args)]
struct SsbArgs {
    /// The program name.
    #[arg(long = "program", short = 'p')]
    program: String,
    /// Which version of the program to run.
    #[arg(long, value_enum, default_value_t = OneVariantArg::Buggy)]
    variant: OneVariantArg,
    /// The seed of the observed execution.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How to slice the trace: the whole trace, TAME's distributed partition (per-thread
    /// windows), or global windows.
    #[arg(long, value_enum, default_value_t = PartitionArg::Whole)]
    partition: PartitionArg,
    /// Events per window (distributed: per thread; global: steps of the whole trace).
    #[arg(long, default_value_t = 10_000)]
    window: usize,
    /// Write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum PartitionArg {
    Whole,
    Distributed,
    Global,
}

#[derive(Args)]
struct BenchArgs {
    /// Programs to run (repeatable or comma-separated); by default every program except the long
    /// ones (`interleave list` marks them), which run only when named.
    #[arg(long = "program", short = 'p', value_delimiter = ',')]
    programs: Vec<String>,
    /// Strategy specs (repeatable or comma-separated): interleave strategies such as `random`,
    /// `pct:d=3`, and peers `shuttle-random`, `shuttle-pct:d=3`, `loom:b=2` (in a build with the
    /// `peers` feature). Default: auto, random and pct:d=3. A comma followed by `key=value`
    /// continues the previous spec: `-s random,rpro:d=3,r=20` is two strategies.
    #[arg(long = "strategy", short = 's')]
    strategies: Vec<String>,
    /// Add the peer columns (shuttle-random, shuttle-pct:d=3, loom:b=2, loom:b=3) to the
    /// strategies: needs a build with them (`cargo run --release -p interleave-cli --features
    /// peers -- bench --peers`).
    #[arg(long)]
    peers: bool,
    /// A parameter sweep, e.g. `pct:d=1..5` or `pct:d=3,steps=10..100/10`: one strategy per value
    /// of the range, charted as probability against the parameter (repeatable).
    #[arg(long = "sweep")]
    sweeps: Vec<String>,
    /// Executions per program, variant, strategy and seed.
    #[arg(long, short = 'n', default_value_t = 1000)]
    executions: u64,
    /// Number of seeds to repeat each measurement with.
    #[arg(long, default_value_t = 10)]
    seeds: u64,
    /// The first seed; the others follow it.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Which version of each program to run.
    #[arg(long, value_enum, default_value_t = VariantArg::Both)]
    variant: VariantArg,
    /// Worker threads (default: all cores); results do not depend on it.
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Run only part `i` of `n` of the (program, strategy, seed) space, e.g. `--shard 2/4`;
    /// combine the parts' --json files with `interleave merge`.
    #[arg(long)]
    shard: Option<String>,
    /// Print the programs with their origin and bug kind, and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    outputs: OutputArgs,
}

#[derive(Args, Default)]
struct OutputArgs {
    /// Write every measurement, with the configuration, as JSON (the input of `merge`).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write every measurement as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write SVG charts into this directory.
    #[arg(long)]
    svg: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum VariantArg {
    Buggy,
    Fixed,
    Both,
}

impl VariantArg {
    fn names(self) -> Vec<String> {
        match self {
            VariantArg::Buggy => vec!["buggy".into()],
            VariantArg::Fixed => vec!["fixed".into()],
            VariantArg::Both => vec!["buggy".into(), "fixed".into()],
        }
    }
}

/// Where to write results.
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub svg: Option<PathBuf>,
}

impl Outputs {
    /// Checks that every requested output can be written, before anything runs.
    pub fn check(&self) -> anyhow::Result<()> {
        if let Some(path) = &self.json {
            output::check_file("--json", path)?;
        }
        if let Some(path) = &self.csv {
            output::check_file("--csv", path)?;
        }
        if let Some(dir) = &self.svg {
            output::check_directory("--svg", dir)?;
        }
        Ok(())
    }
}

impl From<OutputArgs> for Outputs {
    fn from(args: OutputArgs) -> Outputs {
        Outputs {
            json: args.json,
            csv: args.csv,
            svg: args.svg,
        }
    }
}

/// A validated benchmark run.
pub struct BenchPlan {
    pub config: Config,
    pub shard: Shard,
    pub threads: usize,
    pub outputs: Outputs,
}

/// What to do.
pub enum Command {
    Bench(BenchPlan),
    Merge {
        inputs: Vec<PathBuf>,
        outputs: Outputs,
    },
    MergeShards {
        inputs: Vec<PathBuf>,
        json: Option<PathBuf>,
    },
    List,
    Replay {
        program: &'static Program,
        variant: Variant,
        token: String,
    },
    Ssb(SsbPlan),
    #[cfg(feature = "peers")]
    PeerWorker,
}

/// What `interleave ssb` runs.
pub struct SsbPlan {
    pub program: &'static Program,
    pub variant: Variant,
    pub analysis: interleave::ssb::Analysis,
    pub json: Option<PathBuf>,
}

/// The version of a program for a command that runs one (`replay`, `ssb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OneVariantArg {
    Buggy,
    Fixed,
}

impl From<OneVariantArg> for Variant {
    fn from(variant: OneVariantArg) -> Variant {
        match variant {
            OneVariantArg::Buggy => Variant::Buggy,
            OneVariantArg::Fixed => Variant::Fixed,
        }
    }
}

impl Cli {
    /// Whether the command is `replay`, whose exit codes say what the replay did.
    pub fn is_replay(&self) -> bool {
        matches!(self.command, CliCommand::Replay { .. })
    }

    /// Whether the command is `merge-shards`, whose exit code 1 means a test failed.
    pub fn is_merge_shards(&self) -> bool {
        matches!(self.command, CliCommand::MergeShards { .. })
    }

    pub fn into_command(self) -> anyhow::Result<Command> {
        match self.command {
            CliCommand::List => Ok(Command::List),
            #[cfg(feature = "peers")]
            CliCommand::PeerWorker => Ok(Command::PeerWorker),
            CliCommand::Merge { inputs, outputs } => {
                let outputs = Outputs::from(outputs);
                outputs.check()?;
                Ok(Command::Merge { inputs, outputs })
            }
            CliCommand::MergeShards { inputs, json } => {
                if let Some(path) = &json {
                    output::check_file("--json", path)?;
                }
                Ok(Command::MergeShards { inputs, json })
            }
            CliCommand::Replay {
                program,
                token,
                variant,
            } => {
                let variant = Variant::from(variant);
                Ok(Command::Replay {
                    program: plan::program(&program)?,
                    variant,
                    token,
                })
            }
            CliCommand::Ssb(args) => {
                let variant = Variant::from(args.variant);
                if args.window == 0 {
                    bail!("--window must be at least 1");
                }
                let partition = match args.partition {
                    PartitionArg::Whole => Partition::Whole,
                    PartitionArg::Distributed => Partition::distributed(args.window),
                    PartitionArg::Global => Partition::Global {
                        window: args.window,
                    },
                };
                if let Some(path) = &args.json {
                    output::check_file("--json", path)?;
                }
                Ok(Command::Ssb(SsbPlan {
                    program: plan::program(&args.program)?,
                    variant,
                    analysis: interleave::ssb::Analysis::new()
                        .seed(args.seed)
                        .partition(partition),
                    json: args.json,
                }))
            }
            CliCommand::Bench(args) if args.list => Ok(Command::List),
            CliCommand::Bench(args) => {
                let plan = bench_plan(args)?;
                plan.outputs.check()?;
                Ok(Command::Bench(plan))
            }
        }
    }
}

/// Splits comma-separated strategy lists, keeping `key=value` pieces with the spec before them
/// (`random,rpro:d=3,r=20` is `random` and `rpro:d=3,r=20`).
fn split_specs(arguments: &[String]) -> Vec<String> {
    let mut specs = Vec::new();
    for argument in arguments {
        let mut current: Option<String> = None;
        for piece in argument.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let parameter = piece.contains('=') && !piece.contains(':');
            match current.as_mut() {
                Some(spec) if parameter => {
                    spec.push(',');
                    spec.push_str(piece);
                }
                _ => specs.extend(current.replace(piece.to_string())),
            }
        }
        specs.extend(current);
    }
    specs
}

fn bench_plan(args: BenchArgs) -> anyhow::Result<BenchPlan> {
    // Long programs (a million steps per execution, or 50 to 100 threads) run only when named.
    let programs: Vec<String> = if args.programs.is_empty() {
        interleave_programs::default_suite()
            .map(|p| p.name.to_string())
            .collect()
    } else {
        args.programs
            .iter()
            .map(|name| plan::program(name).map(|p| p.name.to_string()))
            .collect::<anyhow::Result<_>>()?
    };
    let mut strategies: Vec<String> = Vec::new();
    let defaults = args.strategies.is_empty() && args.sweeps.is_empty();
    let explicit = if defaults {
        ["auto", "random", "pct:d=3"].map(String::from).to_vec()
    } else {
        args.strategies
    };
    for spec in &split_specs(&explicit) {
        let column = Column::parse(spec).with_context(|| format!("in --strategy {spec:?}"))?;
        strategies.push(column.to_string());
    }
    if args.peers {
        #[cfg(feature = "peers")]
        strategies.extend(
            crate::peers::PeerSpec::DEFAULTS
                .iter()
                .map(|p| p.to_string()),
        );
        #[cfg(not(feature = "peers"))]
        bail!("--peers: {}", crate::peers::NOT_BUILT);
    }
    for sweep in &args.sweeps {
        strategies.extend(
            Sweep::parse(sweep)?
                .points
                .into_iter()
                .map(|(_, spec)| spec),
        );
    }
    let mut seen = std::collections::HashSet::new();
    strategies.retain(|s| seen.insert(s.clone()));
    if strategies.is_empty() {
        bail!("--strategy names no strategy (an empty list runs nothing); leave it out for the defaults");
    }
    if args.executions == 0 {
        bail!("--executions must be at least 1");
    }
    if args.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let threads = match args.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let shard = match &args.shard {
        Some(text) => Shard::parse(text)?,
        None => Shard::WHOLE,
    };
    let config = Config {
        programs,
        strategies,
        sweeps: args.sweeps,
        variants: args.variant.names(),
        executions: args.executions,
        seeds: args.seeds,
        first_seed: args.seed,
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    // The plan is made again when the run starts; making it here refuses impossible seed
    // ranges with the other argument errors.
    JobPlan::new(&config)?;
    Ok(BenchPlan {
        config,
        shard,
        threads,
        outputs: args.outputs.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Command> {
        let mut argv = vec!["interleave"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv)?.into_command()
    }

    fn error(args: &[&str]) -> String {
        match parse(args) {
            Ok(_) => panic!("{args:?} was accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn defaults_are_interleave_strategies_on_both_variants() {
        let Command::Bench(plan) = parse(&["bench"]).unwrap() else {
            panic!("not a bench")
        };
        assert_eq!(plan.config.strategies, ["auto", "random", "pct:d=3"]);
        assert_eq!(plan.config.variants, ["buggy", "fixed"]);
        assert_eq!(plan.config.seeds, 10);
        assert_eq!(plan.shard, Shard::WHOLE);
    }

    #[cfg(feature = "peers")]
    #[test]
    fn the_peers_flag_adds_the_four_peer_columns() {
        let Command::Bench(plan) = parse(&["bench", "-s", "auto", "--peers"]).unwrap() else {
            panic!("not a bench")
        };
        assert_eq!(
            plan.config.strategies,
            [
                "auto",
                "shuttle-random",
                "shuttle-pct:d=3",
                "loom:b=2",
                "loom:b=3"
            ]
        );
        assert!(error(&["bench", "-s", "loom:b=x"]).contains("peer specs:"));
    }

    #[cfg(not(feature = "peers"))]
    #[test]
    fn a_build_without_the_peers_says_how_to_get_them() {
        for args in [&["bench", "--peers"][..], &["bench", "-s", "loom:b=2"]] {
            let message = error(args);
            assert!(
                message.contains("--features peers -- bench --peers"),
                "{args:?}: {message}"
            );
            assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        }
    }

    #[test]
    fn explicit_strategies_sweeps_and_shards() {
        let Command::Bench(plan) = parse(&[
            "bench",
            "-s",
            "pct:d=2",
            "--sweep",
            "pct:d=1..3",
            "--shard",
            "2/3",
            "-p",
            "rpro-d1",
        ])
        .unwrap() else {
            panic!("not a bench")
        };
        assert_eq!(plan.config.strategies, ["pct:d=2", "pct:d=1", "pct:d=3"]);
        assert_eq!(plan.shard, Shard { index: 2, count: 3 });
        assert_eq!(plan.config.programs, ["rpro-d1"]);
        let Command::Bench(plan) = parse(&[
            "bench",
            "-s",
            "random,rpro:d=3,r=20,locks=0,pct:d=2",
            "-s",
            "rpro:r=5",
        ])
        .unwrap() else {
            panic!("not a bench")
        };
        assert_eq!(
            plan.config.strategies,
            ["random", "rpro:d=3,r=20,locks=0", "pct:d=2", "rpro:d=3,r=5"]
        );
    }

    #[test]
    fn malformed_options_are_one_line_errors_with_the_choices() {
        let cases: [(&[&str], &str); 5] = [
            (&["bench", "-p", "nope"], "the programs are: bounding-fig1"),
            (&["bench", "-s", "quantum"], "expected one of"),
            (&["bench", "-s", "pct:d=0"], "at least 1"),
            (&["bench", "--shard", "3/2"], "expected i/n"),
            (&["bench", "--sweep", "pct:d=3"], "exactly one parameter"),
        ];
        for (args, expected) in cases {
            let message = error(args);
            assert!(message.contains(expected), "{args:?}: {message}");
            assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        }
        assert!(error(&["bench", "-n", "0"]).contains("at least 1"));
        assert!(error(&["bench", "-s", ""]).contains("names no strategy"));
        let both = error(&["replay", "rpro-d1", "x", "--variant", "both"]);
        assert!(both.contains("possible values: buggy, fixed"), "{both}");
    }
}
