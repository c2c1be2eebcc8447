//! What a benchmark run consists of: the columns (interleave strategies and peer
//! configurations), parameter sweeps, and the job list derived from a [`Config`].
//!
//! The job order is a pure function of the configuration, so every shard of a split run, and
//! `merge` afterwards, agree on which job is which without talking to each other.

#[cfg(feature = "peers")]
use crate::peers::{PeerSpec, PEER_NAMES};
use anyhow::{anyhow, bail, Context};
use interleave::StrategySpec;
use interleave_programs::{Program, Variant};

use crate::results::Config;

/// One column of the table: an interleave strategy or a peer configuration.
#[derive(Clone, Debug)]
pub enum Column {
    /// An interleave strategy.
    Interleave(StrategySpec),
    /// Shuttle or loom.
    #[cfg(feature = "peers")]
    Peer(PeerSpec),
}

impl Column {
    /// Parses a strategy spec (`pct:d=3`) or a peer spec (`shuttle-pct:d=3`, `loom:b=2`).
    pub fn parse(spec: &str) -> anyhow::Result<Column> {
        let spec = spec.trim();
        if crate::peers::is_peer_spec(spec) {
            #[cfg(feature = "peers")]
            return Ok(Column::Peer(spec.parse()?));
            #[cfg(not(feature = "peers"))]
            bail!("{spec}: {}", crate::peers::NOT_BUILT);
        }
        #[cfg(feature = "peers")]
        let or_peers = format!(" (or a peer: {PEER_NAMES})");
        #[cfg(not(feature = "peers"))]
        let or_peers = "";
        spec.parse::<StrategySpec>()
            .map(Column::Interleave)
            .map_err(|e| anyhow!("{e}{or_peers}"))
    }

    /// `interleave`, `shuttle` or `loom`.
    pub fn tool(&self) -> &'static str {
        match self {
            Column::Interleave(_) => "interleave",
            #[cfg(feature = "peers")]
            Column::Peer(PeerSpec::Loom { .. }) => "loom",
            #[cfg(feature = "peers")]
            Column::Peer(_) => "shuttle",
        }
    }

    /// Whether the column ignores the seed, so it runs for the first seed only.
    pub fn is_deterministic(&self) -> bool {
        match self {
            Column::Interleave(spec) => spec.is_deterministic(),
            #[cfg(feature = "peers")]
            Column::Peer(peer) => peer.is_deterministic(),
        }
    }
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Interleave(spec) => spec.fmt(f),
            #[cfg(feature = "peers")]
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
                    #[cfg(feature = "peers")]
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
    #[cfg(test)]
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
///
/// The plan is a generator, not a list: job `i` is computed from `i` when asked for, so a run
/// of a billion seeds costs no memory until its jobs run (and a run cut short by Ctrl-C never
/// made the rest).
#[derive(Clone, Debug)]
pub struct JobPlan {
    programs: Vec<&'static Program>,
    variants: Vec<Variant>,
    columns: Vec<Column>,
    first_seed: u64,
    /// For each column, the index of its first job within a (program, variant) block; one
    /// more entry holds the block's size.
    column_starts: Vec<u64>,
    len: u64,
}

impl JobPlan {
    /// Parses the configuration's names; refuses seeds past `u64::MAX` and runs whose job
    /// count does not fit in 64 bits.
    pub fn new(config: &Config) -> anyhow::Result<JobPlan> {
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
        if config
            .first_seed
            .checked_add(config.seeds.saturating_sub(1))
            .is_none()
        {
            bail!(
                "--seed {} with --seeds {} goes past the largest seed, {}",
                config.first_seed,
                config.seeds,
                u64::MAX
            );
        }
        let too_many = || anyhow!("the run has more than 2^64 measurements; use fewer --seeds");
        let mut column_starts = vec![0u64];
        let mut block = 0u64;
        for column in &columns {
            let seeds = if column.is_deterministic() {
                1
            } else {
                config.seeds
            };
            block = block.checked_add(seeds).ok_or_else(too_many)?;
            column_starts.push(block);
        }
        let len = (programs.len() as u64)
            .checked_mul(variants.len() as u64)
            .and_then(|blocks| blocks.checked_mul(block))
            .ok_or_else(too_many)?;
        Ok(JobPlan {
            programs,
            variants,
            columns,
            first_seed: config.first_seed,
            column_starts,
            len,
        })
    }

    /// The number of jobs.
    pub fn len(&self) -> u64 {
        self.len
    }

    fn block(&self) -> u64 {
        self.column_starts.last().copied().unwrap_or(0)
    }

    /// Job number `index`, if there is one.
    pub fn get(&self, index: u64) -> Option<Job> {
        if index >= self.len {
            return None;
        }
        let block = self.block();
        let (pair, within) = (index / block, index % block);
        let program = self.programs[(pair / self.variants.len() as u64) as usize];
        let variant = self.variants[(pair % self.variants.len() as u64) as usize];
        // The last column that starts at or before `within`.
        let column = self.column_starts.partition_point(|&start| start <= within) - 1;
        Some(Job {
            program,
            variant,
            column: self.columns[column].clone(),
            seed: self.first_seed + (within - self.column_starts[column]),
        })
    }

    /// The jobs in order, made one at a time.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = Job> + '_ {
        (0..self.len).map_while(|index| self.get(index))
    }

    /// The index of the job a record with this identity measures, if the plan has it.
    pub fn index_of(&self, program: &str, fixed: bool, strategy: &str, seed: u64) -> Option<u64> {
        let p = self.programs.iter().position(|p| p.name == program)?;
        let wanted = if fixed {
            Variant::Fixed
        } else {
            Variant::Buggy
        };
        let v = self.variants.iter().position(|&v| v == wanted)?;
        let c = self
            .columns
            .iter()
            .position(|column| column.to_string() == strategy)?;
        let offset = seed.checked_sub(self.first_seed)?;
        let (start, end) = (self.column_starts[c], self.column_starts[c + 1]);
        if offset >= end - start {
            return None;
        }
        let pair = (p * self.variants.len() + v) as u64;
        Some(pair * self.block() + start + offset)
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    use super::*;

    #[test]
    fn columns_parse_strategies_and_peers() {
        assert_eq!(Column::parse("pct:d=3").unwrap().tool(), "interleave");
        let err = Column::parse("quantum").unwrap_err().to_string();
        assert!(err.contains("random"), "names the valid choices: {err}");
        #[cfg(feature = "peers")]
        {
            assert_eq!(Column::parse("shuttle-random").unwrap().tool(), "shuttle");
            assert_eq!(Column::parse("loom:b=2").unwrap().tool(), "loom");
            assert!(err.contains("loom:b=N"), "names the peers too: {err}");
        }
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

    fn config(seeds: u64) -> Config {
        Config {
            programs: vec!["rpro-d1".into(), "rpro-d2".into()],
            strategies: vec!["random".into(), "dfs".into()],
            sweeps: vec![],
            variants: vec!["buggy".into(), "fixed".into()],
            executions: 10,
            seeds,
            first_seed: 5,
            version: "0".into(),
        }
    }

    #[test]
    fn a_deterministic_column_runs_once_per_program_and_variant() {
        let plan = JobPlan::new(&config(3)).unwrap();
        let jobs: Vec<Job> = plan.iter().collect();
        assert_eq!(jobs.len() as u64, plan.len());
        assert_eq!(jobs.len(), 2 * 2 * (3 + 1));
        assert_eq!(jobs[0].seed, 5);
        assert_eq!(jobs[3].column.to_string(), "dfs");
        assert_eq!(jobs[3].seed, 5);
        assert_eq!(jobs[4].variant, Variant::Fixed);
        assert_eq!(jobs[8].program.name, "rpro-d2");
        for (index, job) in jobs.iter().enumerate() {
            let (program, fixed, strategy, seed) = job.key();
            assert_eq!(
                plan.index_of(&program, fixed, &strategy, seed),
                Some(index as u64)
            );
        }
        assert_eq!(plan.index_of("rpro-d1", false, "dfs", 6), None);
        assert_eq!(plan.index_of("rpro-d1", false, "random", 8), None);
        assert_eq!(plan.index_of("rpro-d1", false, "random", 4), None);
        assert!(plan.get(plan.len()).is_none());
    }

    /// The bytes allocated by the current thread since it started (see `Counting`).
    fn allocated() -> u64 {
        ALLOCATED.with(Cell::get)
    }

    thread_local! {
        static ALLOCATED: Cell<u64> = const { Cell::new(0) };
    }

    /// The system allocator, counting each thread's allocations, so a test can tell how much
    /// memory a call asked for without timing it.
    struct Counting;

    // SAFETY: every call is forwarded to the system allocator unchanged; the counter is a
    // constant-initialised thread-local without a destructor, which does not allocate.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let _ = ALLOCATED.try_with(|bytes| bytes.set(bytes.get() + layout.size() as u64));
            // SAFETY: the caller's contract is the system allocator's.
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` was allocated by `alloc` above, that is by the system allocator.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    /// A billion seeds make a plan of four billion jobs without allocating for them: the first
    /// jobs, the last, and a job's index cost the same as in a run of three seeds.
    #[test]
    fn a_billion_seeds_cost_nothing_until_they_run() {
        let before = allocated();
        let plan = JobPlan::new(&config(1_000_000_000)).unwrap();
        let first: Vec<u64> = plan.iter().take(1000).map(|job| job.seed).collect();
        let last = plan.get(plan.len() - 1).unwrap();
        let index = plan.index_of("rpro-d2", true, "random", 999_999_999);
        let used = allocated() - before;
        assert_eq!(plan.len(), 2 * 2 * 1_000_000_001);
        assert_eq!(first, (5..1005).collect::<Vec<u64>>());
        assert_eq!((last.program.name, last.seed), ("rpro-d2", 5));
        assert_eq!(index, Some(3 * 1_000_000_001 + 999_999_994));
        assert!(used < 1 << 20, "the plan allocated {used} bytes");

        let mut overflowing = config(u64::MAX);
        overflowing.first_seed = 0;
        let error = JobPlan::new(&overflowing).unwrap_err().to_string();
        assert!(error.contains("more than 2^64"), "{error}");
        let mut past_the_end = config(2);
        past_the_end.first_seed = u64::MAX;
        let error = JobPlan::new(&past_the_end).unwrap_err().to_string();
        assert!(error.contains("largest seed"), "{error}");
    }
}
