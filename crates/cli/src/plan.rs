//! What a benchmark run consists of: the columns (interleave strategies and peer
//! configurations), parameter sweeps, and the job list derived from a [`Config`].
//!
//! The job order is a pure function of the configuration, so every shard of a split run, and
//! `merge` afterwards, agree on which job is which without talking to each other.

use anyhow::{anyhow, bail, Context};
use interleave::StrategySpec;
use interleave_peers::suite_runs::{PeerSpec, PEER_NAMES};
use interleave_programs::{Program, Variant};

use crate::results::Config;

/// One column of the table: an interleave strategy or a peer configuration.
#[derive(Clone, Debug)]
pub enum Column {
    /// An interleave strategy.
    Interleave(StrategySpec),
    /// Shuttle or loom.
    Peer(PeerSpec),
}

impl Column {
    /// Parses a strategy spec (`pct:d=3`) or a peer spec (`shuttle-pct:d=3`, `loom:b=2`).
    pub fn parse(spec: &str) -> anyhow::Result<Column> {
        let spec = spec.trim();
        if PeerSpec::is_peer_spec(spec) {
            return Ok(Column::Peer(spec.parse()?));
        }
        spec.parse::<StrategySpec>()
            .map(Column::Interleave)
            .map_err(|e| anyhow!("{e} (or a peer: {PEER_NAMES})"))
    }

    /// `interleave`, `shuttle` or `loom`.
    pub fn tool(&self) -> &'static str {
        match self {
            Column::Interleave(_) => "interleave",
            Column::Peer(PeerSpec::Loom { .. }) => "loom",
            Column::Peer(_) => "shuttle",
        }
    }

    /// Whether the column ignores the seed, so it runs for the first seed only.
    pub fn is_deterministic(&self) -> bool {
        match self {
            Column::Interleave(spec) => spec.is_deterministic(),
            Column::Peer(peer) => peer.is_deterministic(),
        }
    }
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Interleave(spec) => spec.fmt(f),
            Column::Peer(peer) => peer.fmt(f),
        }
    }
}

/// A parameter sweep such as `pct:d=1..5` or `rpro:d=3,r=1..300/10`: one parameter given as an
/// inclusive range with an optional step, expanded into one strategy per value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The swept parameter's name (`d`, `r`, ...).
    pub parameter: String,
    /// Each value with the strategy spec it gives.
    pub points: Vec<(u64, String)>,
}

impl Sweep {
    /// Parses and expands a sweep; every expanded spec must be a valid strategy.
    pub fn parse(text: &str) -> anyhow::Result<Sweep> {
        let bad = |why: &str| anyhow!("bad sweep {text:?}: {why} (e.g. --sweep pct:d=1..5)");
        let (name, params) = text
            .split_once(':')
            .ok_or_else(|| bad("expected strategy:parameter=lo..hi"))?;
        let params: Vec<&str> = params.split(',').collect();
        let swept: Vec<usize> = (0..params.len())
            .filter(|&i| params[i].contains(".."))
            .collect();
        let [index] = swept[..] else {
            return Err(bad("exactly one parameter must be a range lo..hi"));
        };
        let (parameter, range) = params[index]
            .split_once('=')
            .ok_or_else(|| bad("the range must be a parameter value, key=lo..hi"))?;
        let (range, step) = range.split_once('/').unwrap_or((range, "1"));
        let (lo, hi) = range
            .split_once("..")
            .ok_or_else(|| bad("expected lo..hi"))?;
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad("not a number"));
        let (lo, hi, step) = (number(lo)?, number(hi)?, number(step)?);
        if lo > hi || step == 0 {
            return Err(bad("need lo <= hi and a step of at least 1"));
        }
        let points = (lo..=hi)
            .step_by(step as usize)
            .map(|value| {
                let mut params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
                params[index] = format!("{parameter}={value}");
                let spec = format!("{name}:{}", params.join(","));
                match Column::parse(&spec)? {
                    Column::Interleave(parsed) => Ok((value, parsed.to_string())),
                    Column::Peer(_) => Err(bad("sweeps are for interleave strategies")),
                }
            })
            .collect::<anyhow::Result<Vec<_>>>()
            .with_context(|| format!("in --sweep {text:?}"))?;
        Ok(Sweep {
            parameter: parameter.to_string(),
            points,
        })
    }
}

/// One measurement to make.
#[derive(Clone, Debug)]
pub struct Job {
    /// The program.
    pub program: &'static Program,
    /// Which version.
    pub variant: Variant,
    /// The strategy or peer.
    pub column: Column,
    /// The seed.
    pub seed: u64,
}

impl Job {
    /// The identity of the job, as it appears in a record.
    pub fn key(&self) -> (String, bool, String, u64) {
        (
            self.program.name.to_string(),
            self.variant == Variant::Fixed,
            self.column.to_string(),
            self.seed,
        )
    }
}

/// Parses `buggy` / `fixed`.
pub fn variant(name: &str) -> anyhow::Result<Variant> {
    match name {
        "buggy" => Ok(Variant::Buggy),
        "fixed" => Ok(Variant::Fixed),
        other => bail!("unknown variant {other:?}: expected buggy or fixed"),
    }
}

/// The program called `name`, or an error listing them all.
pub fn program(name: &str) -> anyhow::Result<&'static Program> {
    interleave_programs::find(name.trim()).ok_or_else(|| {
        let names: Vec<&str> = interleave_programs::all().iter().map(|p| p.name).collect();
        anyhow!(
            "unknown program {name:?}; the programs are: {}",
            names.join(", ")
        )
    })
}

/// Every job of a configuration, in the canonical order: by program, variant, column, seed.
/// Deterministic columns (loom, systematic interleave strategies) get the first seed only.
pub fn jobs(config: &Config) -> anyhow::Result<Vec<Job>> {
    let programs = config
        .programs
        .iter()
        .map(|name| program(name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let columns = config
        .strategies
        .iter()
        .map(|spec| Column::parse(spec))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let variants = config
        .variants
        .iter()
        .map(|v| variant(v))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut jobs = Vec::new();
    for &program in &programs {
        for &variant in &variants {
            for column in &columns {
                let seeds = if column.is_deterministic() {
                    1
                } else {
                    config.seeds
                };
                for seed in config.first_seed..config.first_seed + seeds {
                    jobs.push(Job {
                        program,
                        variant,
                        column: column.clone(),
                        seed,
                    });
                }
            }
        }
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_parse_strategies_and_peers() {
        assert_eq!(Column::parse("pct:d=3").unwrap().tool(), "interleave");
        assert_eq!(Column::parse("shuttle-random").unwrap().tool(), "shuttle");
        assert_eq!(Column::parse("loom:b=2").unwrap().tool(), "loom");
        let err = Column::parse("quantum").unwrap_err().to_string();
        assert!(
            err.contains("random") && err.contains("loom:b=N"),
            "names the valid choices: {err}"
        );
    }

    #[test]
    fn sweeps_expand_one_range() {
        let sweep = Sweep::parse("pct:d=1..5/2").unwrap();
        assert_eq!(sweep.parameter, "d");
        let values: Vec<u64> = sweep.points.iter().map(|p| p.0).collect();
        assert_eq!(values, [1, 3, 5]);
        assert_eq!(sweep.points[1].1, "pct:d=3");
        for bad in [
            "pct",
            "pct:d=3",
            "pct:d=5..1",
            "pct:d=1..x",
            "pct:d=1..3/0",
            "nope:d=1..3",
        ] {
            assert!(Sweep::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn loom_runs_once_per_program_and_variant() {
        let config = Config {
            programs: vec!["seed001-d1".into(), "seed001-d2".into()],
            strategies: vec!["random".into(), "loom:b=2".into()],
            sweeps: vec![],
            variants: vec!["buggy".into(), "fixed".into()],
            executions: 10,
            seeds: 3,
            first_seed: 5,
            version: "0".into(),
        };
        let jobs = jobs(&config).unwrap();
        assert_eq!(jobs.len(), 2 * 2 * (3 + 1));
        assert_eq!(jobs[0].seed, 5);
        assert_eq!(jobs[3].column.to_string(), "loom:b=2");
        assert_eq!(jobs[3].seed, 5);
    }
}
