//! Strategy specs: `name` or `name:key=value,key=value`, the one syntax shared by the API, the
//! CLI and the `INTERLEAVE_STRATEGY` environment variable.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::{
    AssetFuzzer, AtomFuzzer, Auto, DeadlockFuzzer, DelayBound, Dfs, Dpor, Events, Icb, Pct, PctVb,
    Pos, RPro, RaceFuzzer, Random, Rff, RoundRobin, RuntimeMonitor, Strategy, Surw, ThreadBound,
    ValueSchedule,
};

/// A built-in strategy with its parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategySpec {
    /// The portfolio of the strongest samplers (`auto`, the default): POS, PCT at depths 2
    /// and 3 and PCTVB, interleaved in a fixed cycle of executions.
    #[default]
    Auto,
    /// Random walk (`random`).
    Random,
    /// Round robin (`rr`): one deterministic schedule that runs the next thread in order at
    /// every step, as shuttle's `check` does.
    RoundRobin,
    /// PCT with bug depth `depth` (`pct:d=3`); `steps` fixes `k` instead of estimating it
    /// (`pct:d=3,k=500`); `yields` sets the yield limit of the spin-loop rule.
    Pct {
        /// The bug depth `d`, at least 1.
        depth: usize,
        /// A fixed `k`, or `None` to estimate it from earlier executions.
        steps: Option<u64>,
        /// Yields after which a thread loses its priority.
        yields: u32,
        /// Which steps are events (`locks=1`: only lock acquisitions).
        events: Events,
    },
    /// RPro with bug depth `depth` and radius `radius` (`rpro:d=3,r=20`); `locks=0` turns off
    /// the deadlock optimisation (on by default), `k` and `yields` are as for PCT.
    RPro {
        /// The bug depth `d`, at least 1.
        depth: usize,
        /// The bug radius `r`, at least 1.
        radius: u64,
        /// A fixed `k`, or `None` to estimate it from earlier executions.
        steps: Option<u64>,
        /// Yields after which a thread loses its priority.
        yields: u32,
        /// Which steps are events (by default only lock acquisitions).
        events: Events,
    },
    /// PCT with variable bounding (`pctvb:d=3,v=1`): change points only at accesses of `v`
    /// variables drawn per execution, after `profile` profiling executions.
    PctVb {
        /// The bug depth `d`, at least 1.
        depth: usize,
        /// Variables per execution, at least 1.
        variables: usize,
        /// Profiling executions, at least 1.
        profile: u64,
        /// Yields after which a thread loses its priority.
        yields: u32,
    },
    /// Thread bounding (`tb:t=2,c=1`): random priority permutations of the `n + c` thread
    /// fragments, `c` preemptions per execution.
    ThreadBound {
        /// The thread bound `t`, at least 2.
        threads: usize,
        /// Preemptions per execution.
        preemptions: usize,
        /// Yields after which a thread loses its priority.
        yields: u32,
    },
    /// Systematic search in increasing order of preemptions at accesses of variable subsets
    /// (`icb:c=2,v=2`; `icb:c=2,v=all` tracks every variable in one subset), under the
    /// priority orders of `t` threads (`t=2` by default), with happens-before pruning
    /// (`prune=0` turns it off).
    Icb {
        /// The preemption bound `c`.
        preemptions: usize,
        /// The largest variable subset `v`, or `None` for every variable at once.
        variables: Option<usize>,
        /// The thread bound `t`, at least 2.
        threads: usize,
        /// Happens-before pruning.
        prune: bool,
        /// Yields after which a thread loses its priority.
        yields: u32,
    },
    /// Partial-order sampling (`pos`): random priorities per pending operation, redrawn for
    /// the operations that race with each step.
    Pos,
    /// Selectively uniform random walk (`surw`, `surw:v=1,profile=4`): threads chosen with
    /// probability proportional to their remaining accesses to `v` shared objects drawn per
    /// execution (`v=all`: every shared object), which makes the interleavings of those
    /// accesses uniform, after `profile` profiling executions.
    Surw {
        /// Interesting objects per execution, at least 1, or `None` for every candidate.
        variables: Option<usize>,
        /// Profiling executions, at least 1.
        profile: u64,
    },
    /// Reads-from guided greybox fuzzing (`rff`): a corpus of abstract schedules (reads-from
    /// constraints) that produced new (write, read) pairs, mutated, with POS choosing what the
    /// constraints leave open.
    Rff,
    /// Iterative delay bounding (`delay:d=2`): every schedule of the round-robin scheduler with
    /// at most `d` delays, in increasing order of delays.
    Delay {
        /// The delay bound `d`.
        delays: usize,
    },
    /// Exhaustive depth-first search over every schedule (`dfs`).
    Dfs,
    /// Exhaustive depth-first search under a looser yield rule (`dfs:yields=2`): a thread
    /// waits for the others only at every `yields`-th yield, so it may go on past the others
    /// before the other threads step, as std's `yield_now` allows.
    DfsYieldLimit {
        /// Every how many yields a thread waits, at least 2 (1 is plain `dfs`).
        yields: u32,
    },
    /// Depth-first search with dynamic partial-order reduction (`dpor`).
    Dpor,
    /// Depth-first search over every schedule of at most `c` preemptions (`dfs:c=2`).
    BoundedDfs {
        /// The preemption bound `c`.
        preemptions: u32,
    },
    /// Bounded partial-order reduction (`dpor:c=2`): `dpor` over the schedules of at most `c`
    /// preemptions, reaching every Mazurkiewicz trace `dfs:c=N` reaches.
    BoundedDpor {
        /// The preemption bound `c`.
        preemptions: u32,
    },
    /// Value-schedule-based testing (`vs`, `vs:profile=8`): depth-first over the orders of
    /// concurrent access pairs, after `profile` random profiling executions.
    ValueSchedule {
        /// Profiling executions.
        profile: u64,
    },
    /// Deadlock prediction from one execution, then directed executions that try to realise
    /// each predicted cycle (`deadlock-fuzzer`, `deadlock-fuzzer:tries=20`).
    DeadlockFuzzer {
        /// Directed executions per predicted cycle, at least 1.
        tries: u64,
    },
    /// The runtime-monitoring baseline of seed 003 (`rm`): random walks, each checked
    /// against the eleven atomic-set serializability patterns.
    RuntimeMonitor,
    /// AssetFuzzer (`assetfuzzer`, `assetfuzzer:profile=10,tries=10`): potential atomic-set
    /// serializability violations inferred from `profile` random executions, then
    /// directed executions, `tries` per prediction first, round robin after.
    AssetFuzzer {
        /// Profiling executions, at least 1.
        profile: u64,
        /// Directed executions per prediction in the first round, at least 1.
        tries: u64,
    },
    /// RaceFuzzer: race prediction from `profile` executions, then directed executions that
    /// postpone threads at each potential race's statements until the race happens
    /// (`racefuzzer`, `racefuzzer:tries=20,profile=1`).
    RaceFuzzer {
        /// Directed executions per potential race, at least 1.
        tries: u64,
        /// Profiling executions, at least 1.
        profile: u64,
    },
    /// AtomFuzzer: random walk that pauses a thread about to re-acquire, inside a unit of work,
    /// a lock it released earlier in the unit, and reports the atomicity-violating locking
    /// pattern when another thread takes the lock in between (`atomfuzzer`,
    /// `atomfuzzer:pause=100`).
    AtomFuzzer {
        /// Scheduling decisions a paused thread waits at most, at least 1.
        pause: u64,
    },
}

/// Names of the built-in strategies, for error messages and help.
pub const STRATEGY_NAMES: &[&str] = &[
    "auto",
    "random",
    "pos",
    "surw",
    "rff",
    "pct",
    "rpro",
    "pctvb",
    "tb",
    "icb",
    "delay",
    "dfs",
    "dpor",
    "vs",
    "deadlock-fuzzer",
    "rm",
    "assetfuzzer",
    "racefuzzer",
    "atomfuzzer",
    "rr",
];

/// Why a strategy spec could not be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    /// The spec is empty.
    #[error("empty strategy spec: expected one of {}", STRATEGY_NAMES.join(", "))]
    Empty,
    /// The strategy name is not known.
    #[error("unknown strategy {0:?}: expected one of {names}", names = STRATEGY_NAMES.join(", "))]
    UnknownStrategy(String),
    /// A parameter is not of the form `key=value`.
    #[error("malformed parameter {0:?} in strategy spec: expected key=value")]
    Malformed(String),
    /// The strategy does not take this parameter.
    #[error("strategy {strategy} has no parameter {parameter:?} (it takes: {known})")]
    UnknownParameter {
        /// The strategy name.
        strategy: &'static str,
        /// The parameter given.
        parameter: String,
        /// The parameters it takes.
        known: &'static str,
    },
    /// A parameter is given more than once (under one name or two of its names).
    #[error("strategy {strategy} is given its parameter {parameter:?} more than once")]
    RepeatedParameter {
        /// The strategy name.
        strategy: &'static str,
        /// The parameter, as given the second time.
        parameter: String,
    },
    /// A parameter value is not valid.
    #[error("invalid value {value:?} for {parameter}: {reason}")]
    BadValue {
        /// The parameter.
        parameter: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl StrategySpec {
    /// PCT with depth `depth` and default settings.
    pub fn pct(depth: usize) -> StrategySpec {
        StrategySpec::Pct {
            depth,
            steps: None,
            yields: super::priority::DEFAULT_YIELD_LIMIT,
            events: Events::All,
        }
    }

    /// SURW with its default settings (`surw`).
    pub fn surw() -> StrategySpec {
        StrategySpec::Surw {
            variables: Some(super::surw::DEFAULT_VARIABLES),
            profile: super::surw::DEFAULT_PROFILE,
        }
    }

    /// RPro with depth `depth`, radius `radius` and default settings (deadlock optimisation on).
    pub fn rpro(depth: usize, radius: u64) -> StrategySpec {
        StrategySpec::RPro {
            depth,
            radius,
            steps: None,
            yields: super::priority::DEFAULT_YIELD_LIMIT,
            events: Events::LockAcquisitions,
        }
    }

    /// Whether the strategy ignores the exploration seed (systematic search): every seed gives
    /// the same schedules.
    pub fn is_deterministic(&self) -> bool {
        matches!(
            self,
            StrategySpec::Icb { .. }
                | StrategySpec::Delay { .. }
                | StrategySpec::Dfs
                | StrategySpec::DfsYieldLimit { .. }
                | StrategySpec::Dpor
                | StrategySpec::BoundedDfs { .. }
                | StrategySpec::BoundedDpor { .. }
        )
    }

    /// A fresh strategy object for this spec.
    pub fn build(&self) -> Box<dyn Strategy> {
        match *self {
            StrategySpec::Auto => Box::new(Auto::new()),
            StrategySpec::Random => Box::new(Random),
            StrategySpec::RoundRobin => Box::new(RoundRobin),
            StrategySpec::Pct {
                depth,
                steps,
                yields,
                events,
            } => {
                let mut pct = Pct::new(depth).with_yield_limit(yields).with_events(events);
                if let Some(steps) = steps {
                    pct = pct.with_steps(steps);
                }
                Box::new(pct)
            }
            StrategySpec::RPro {
                depth,
                radius,
                steps,
                yields,
                events,
            } => {
                let mut rpro = RPro::new(depth, radius)
                    .with_yield_limit(yields)
                    .with_events(events);
                if let Some(steps) = steps {
                    rpro = rpro.with_steps(steps);
                }
                Box::new(rpro)
            }
            StrategySpec::PctVb {
                depth,
                variables,
                profile,
                yields,
            } => Box::new(
                PctVb::new(depth, variables)
                    .with_profile(profile)
                    .with_yield_limit(yields),
            ),
            StrategySpec::ThreadBound {
                threads,
                preemptions,
                yields,
            } => Box::new(ThreadBound::new(threads, preemptions).with_yield_limit(yields)),
            StrategySpec::Icb {
                preemptions,
                variables,
                threads,
                prune,
                yields,
            } => Box::new(
                Icb::new(preemptions, variables)
                    .with_threads(threads)
                    .with_pruning(prune)
                    .with_yield_limit(yields),
            ),
            StrategySpec::Pos => Box::new(Pos::new()),
            StrategySpec::Surw { variables, profile } => {
                Box::new(Surw::new(variables).with_profile(profile))
            }
            StrategySpec::Rff => Box::new(Rff::new()),
            StrategySpec::Delay { delays } => Box::new(DelayBound::new(delays)),
            StrategySpec::Dfs => Box::new(Dfs::new()),
            StrategySpec::DfsYieldLimit { yields } => Box::new(Dfs::with_yield_limit(yields)),
            StrategySpec::Dpor => Box::new(Dpor::new()),
            StrategySpec::BoundedDfs { preemptions } => Box::new(Dfs::bounded(preemptions)),
            StrategySpec::BoundedDpor { preemptions } => Box::new(Dpor::bounded(preemptions)),
            StrategySpec::ValueSchedule { profile } => {
                Box::new(ValueSchedule::new().with_profile(profile))
            }
            StrategySpec::DeadlockFuzzer { tries } => Box::new(DeadlockFuzzer::new(tries)),
            StrategySpec::RuntimeMonitor => Box::new(RuntimeMonitor::default()),
            StrategySpec::AssetFuzzer { profile, tries } => {
                Box::new(AssetFuzzer::new(profile, tries))
            }
            StrategySpec::RaceFuzzer { tries, profile } => {
                Box::new(RaceFuzzer::new(tries).with_profile(profile))
            }
            StrategySpec::AtomFuzzer { pause } => Box::new(AtomFuzzer::new(pause)),
        }
    }
}

/// The `key=value` parameters of one spec, taken one by one by the strategy's parser; whatever
/// is left at the end is a parameter the strategy does not take.
struct Parameters<'a> {
    strategy: &'static str,
    known: &'static str,
    pairs: Vec<(&'a str, &'a str)>,
    /// A parameter given more than once, which [`Parameters::finish`] refuses.
    repeated: Option<&'a str>,
}

impl<'a> Parameters<'a> {
    /// Removes every pair named by one of `names` and returns the last value given; a second
    /// one is remembered for [`Parameters::finish`] to refuse.
    fn value(&mut self, names: &[&str]) -> Option<(&'a str, &'a str)> {
        let mut found = None;
        let mut repeated = None;
        self.pairs.retain(|&(key, value)| {
            let wanted = names.contains(&key);
            if wanted {
                if found.is_some() {
                    repeated = Some(key);
                }
                found = Some((key, value));
            }
            !wanted
        });
        self.repeated = self.repeated.or(repeated);
        found
    }

    /// A whole number of at least `minimum`, or `default` when not given.
    fn number<T: FromStr + PartialOrd + fmt::Display>(
        &mut self,
        names: &[&str],
        default: T,
        minimum: T,
    ) -> Result<T, SpecError> {
        match self.value(names) {
            Some((key, value)) => parse_number(key, value, minimum),
            None => Ok(default),
        }
    }

    /// Like [`number`](Self::number), `None` when not given.
    fn optional_number<T: FromStr + PartialOrd + fmt::Display>(
        &mut self,
        names: &[&str],
        minimum: T,
    ) -> Result<Option<T>, SpecError> {
        self.value(names)
            .map(|(key, value)| parse_number(key, value, minimum))
            .transpose()
    }

    /// A switch given as `0|1` (also `false|true`), `default` when not given.
    fn switch(&mut self, names: &[&str], default: bool) -> Result<bool, SpecError> {
        match self.value(names) {
            None => Ok(default),
            Some((_, "1" | "true")) => Ok(true),
            Some((_, "0" | "false")) => Ok(false),
            Some((key, value)) => Err(SpecError::BadValue {
                parameter: key.to_string(),
                value: value.to_string(),
                reason: "expected 0 or 1".to_string(),
            }),
        }
    }

    /// `locks=0|1`: which steps are events.
    fn events(&mut self, default: Events) -> Result<Events, SpecError> {
        let locks = self.switch(&["locks"], default == Events::LockAcquisitions)?;
        Ok(if locks {
            Events::LockAcquisitions
        } else {
            Events::All
        })
    }

    /// `v=N` (at least `minimum`) or `v=all`.
    fn variables(
        &mut self,
        default: Option<usize>,
        minimum: usize,
    ) -> Result<Option<usize>, SpecError> {
        match self.value(&["v", "variables"]) {
            None => Ok(default),
            Some((_, "all")) => Ok(None),
            Some((key, value)) => parse_number(key, value, minimum).map(Some),
        }
    }

    /// Succeeds if every parameter was taken.
    fn finish(self) -> Result<(), SpecError> {
        if let Some(parameter) = self.repeated {
            return Err(SpecError::RepeatedParameter {
                strategy: self.strategy,
                parameter: parameter.to_string(),
            });
        }
        match self.pairs.first() {
            None => Ok(()),
            Some((key, _)) => Err(SpecError::UnknownParameter {
                strategy: self.strategy,
                parameter: key.to_string(),
                known: self.known,
            }),
        }
    }
}

fn parse_number<T: FromStr + PartialOrd + fmt::Display>(
    parameter: &str,
    value: &str,
    minimum: T,
) -> Result<T, SpecError> {
    let bad = |reason: String| SpecError::BadValue {
        parameter: parameter.to_string(),
        value: value.to_string(),
        reason,
    };
    let number: T = value.parse().map_err(|_| {
        // A run of digits that does not parse is a whole number too large for the parameter.
        let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
        bad(if digits {
            "it is too large".to_string()
        } else {
            "expected a whole number".to_string()
        })
    })?;
    if number < minimum {
        return Err(bad(format!("it must be at least {minimum}")));
    }
    Ok(number)
}

impl FromStr for StrategySpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<StrategySpec, SpecError> {
        let text = text.trim();
        let (name, parameters) = text.split_once(':').unwrap_or((text, ""));
        let mut pairs = Vec::new();
        for pair in parameters
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| SpecError::Malformed(pair.to_string()))?;
            pairs.push((key.trim(), value.trim()));
        }
        let name = name.trim().to_ascii_lowercase();
        let (strategy, known) = match name.as_str() {
            "" => return Err(SpecError::Empty),
            "auto" => ("auto", "no parameters"),
            "random" => ("random", "no parameters"),
            "rr" => ("rr", "no parameters"),
            "pos" => ("pos", "no parameters"),
            "surw" => ("surw", "v, profile"),
            "rff" => ("rff", "no parameters"),
            "pct" => ("pct", "d, k, yields, locks"),
            "rpro" => ("rpro", "d, r, k, yields, locks"),
            "pctvb" => ("pctvb", "d, v, profile, yields"),
            "tb" => ("tb", "t, c, yields"),
            "icb" => ("icb", "c, v, t, prune, yields"),
            "delay" => ("delay", "d"),
            "dfs" => ("dfs", "c, yields"),
            "dpor" => ("dpor", "c"),
            "vs" => ("vs", "profile"),
            "deadlock-fuzzer" => ("deadlock-fuzzer", "tries"),
            "rm" => ("rm", "no parameters"),
            "assetfuzzer" => ("assetfuzzer", "profile, tries"),
            "racefuzzer" => ("racefuzzer", "tries, profile"),
            "atomfuzzer" => ("atomfuzzer", "pause"),
            other => return Err(SpecError::UnknownStrategy(other.to_string())),
        };
        let mut p = Parameters {
            strategy,
            known,
            pairs,
            repeated: None,
        };
        let yield_limit = super::priority::DEFAULT_YIELD_LIMIT;
        let spec = match strategy {
            "auto" => StrategySpec::Auto,
            "random" => StrategySpec::Random,
            "rr" => StrategySpec::RoundRobin,
            "pos" => StrategySpec::Pos,
            "surw" => StrategySpec::Surw {
                variables: p.variables(Some(super::surw::DEFAULT_VARIABLES), 1)?,
                profile: p.number(&["profile"], super::surw::DEFAULT_PROFILE, 1)?,
            },
            "rff" => StrategySpec::Rff,
            "delay" => StrategySpec::Delay {
                delays: p.number(&["d", "delays"], super::delay::DEFAULT_DELAYS, 0)?,
            },
            "dfs" => {
                let bound = p.optional_number(&["c", "preemptions"], 0)?;
                match (bound, p.number(&["yields"], 1, 1)?) {
                    (Some(preemptions), 1) => StrategySpec::BoundedDfs { preemptions },
                    (None, 1) => StrategySpec::Dfs,
                    (None, yields) => StrategySpec::DfsYieldLimit { yields },
                    (Some(_), yields) => {
                        return Err(SpecError::BadValue {
                            parameter: "yields".to_string(),
                            value: yields.to_string(),
                            reason: "a preemption bound counts every yield as a free switch, \
                                     so it takes only yields=1"
                                .to_string(),
                        })
                    }
                }
            }
            "dpor" => match p.optional_number(&["c", "preemptions"], 0)? {
                Some(preemptions) => StrategySpec::BoundedDpor { preemptions },
                None => StrategySpec::Dpor,
            },
            "rm" => StrategySpec::RuntimeMonitor,
            "assetfuzzer" => StrategySpec::AssetFuzzer {
                profile: p.number(&["profile"], super::asset_fuzzer::DEFAULT_PROFILE, 1)?,
                tries: p.number(&["tries"], super::asset_fuzzer::DEFAULT_TRIES, 1)?,
            },
            "vs" => StrategySpec::ValueSchedule {
                profile: p.number(&["profile"], super::value_schedule::DEFAULT_PROFILE, 0)?,
            },
            "pct" => StrategySpec::Pct {
                depth: p.number(&["d", "depth"], 3, 1)?,
                steps: p.optional_number(&["k", "steps"], 1)?,
                yields: p.number(&["yields"], yield_limit, 1)?,
                events: p.events(Events::All)?,
            },
            "rpro" => StrategySpec::RPro {
                depth: p.number(&["d", "depth"], 3, 1)?,
                radius: p.number(&["r", "radius"], 20, 1)?,
                steps: p.optional_number(&["k", "steps"], 1)?,
                yields: p.number(&["yields"], yield_limit, 1)?,
                events: p.events(Events::LockAcquisitions)?,
            },
            "pctvb" => StrategySpec::PctVb {
                depth: p.number(&["d", "depth"], 3, 1)?,
                variables: p.number(&["v", "variables"], 1, 1)?,
                profile: p.number(&["profile"], super::pctvb::DEFAULT_PROFILE, 1)?,
                yields: p.number(&["yields"], yield_limit, 1)?,
            },
            "tb" => StrategySpec::ThreadBound {
                threads: p.number(&["t", "threads"], 2, 2)?,
                preemptions: p.number(&["c", "preemptions"], 1, 0)?,
                yields: p.number(&["yields"], yield_limit, 1)?,
            },
            "icb" => StrategySpec::Icb {
                preemptions: p.number(&["c", "preemptions"], 2, 0)?,
                variables: p.variables(Some(2), 0)?,
                threads: p.number(&["t", "threads"], 2, 2)?,
                prune: p.switch(&["prune"], true)?,
                yields: p.number(&["yields"], yield_limit, 1)?,
            },
            "racefuzzer" => StrategySpec::RaceFuzzer {
                tries: p.number(&["tries"], super::race_fuzzer::DEFAULT_TRIES, 1)?,
                profile: p.number(&["profile"], super::race_fuzzer::DEFAULT_PROFILE, 1)?,
            },
            "atomfuzzer" => StrategySpec::AtomFuzzer {
                pause: p.number(&["pause"], super::atom_fuzzer::DEFAULT_PAUSE, 1)?,
            },
            _ => StrategySpec::DeadlockFuzzer {
                tries: p.number(&["tries"], super::deadlock_fuzzer::DEFAULT_TRIES, 1)?,
            },
        };
        p.finish()?;
        Ok(spec)
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.build().spec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_specs() {
        assert_eq!("random".parse::<StrategySpec>(), Ok(StrategySpec::Random));
        assert_eq!("pct:d=2".parse::<StrategySpec>(), Ok(StrategySpec::pct(2)));
        let spec: StrategySpec = " PCT: d=4, k=200 ".parse().unwrap();
        assert_eq!(spec.to_string(), "pct:d=4,k=200");
        assert_eq!(StrategySpec::pct(3).to_string(), "pct:d=3");
    }

    #[test]
    fn rejects_bad_specs_clearly() {
        assert_eq!(
            "bfs".parse::<StrategySpec>(),
            Err(SpecError::UnknownStrategy("bfs".into()))
        );
        assert!(matches!(
            "pct:r=3".parse::<StrategySpec>(),
            Err(SpecError::UnknownParameter { .. })
        ));
        for repeated in ["pct:d=3,d=5", "pct:d=3,depth=5", "dpor:c=1,c=1"] {
            let error = repeated.parse::<StrategySpec>().unwrap_err();
            assert!(
                matches!(error, SpecError::RepeatedParameter { .. }),
                "{repeated}: {error}"
            );
            assert!(error.to_string().contains("more than once"), "{error}");
        }
        assert!(matches!(
            "pct:d=0".parse::<StrategySpec>(),
            Err(SpecError::BadValue { .. })
        ));
        assert!(matches!(
            "pct:d".parse::<StrategySpec>(),
            Err(SpecError::Malformed(_))
        ));
        let message = "pct:d=x".parse::<StrategySpec>().unwrap_err().to_string();
        assert!(message.contains("expected a whole number"), "{message}");
        let message = "pct:d=99999999999999999999"
            .parse::<StrategySpec>()
            .unwrap_err()
            .to_string();
        assert!(message.contains("it is too large"), "{message}");
        for (bad, expected) in [
            (
                "rpro:d=0",
                "invalid value \"0\" for d: it must be at least 1",
            ),
            (
                "rpro:r=0",
                "invalid value \"0\" for r: it must be at least 1",
            ),
            (
                "rpro:locks=2",
                "invalid value \"2\" for locks: expected 0 or 1",
            ),
            (
                "rpro:q=1",
                "strategy rpro has no parameter \"q\" (it takes: d, r, k, yields, locks)",
            ),
            (
                "racefuzzer:tries=0",
                "invalid value \"0\" for tries: it must be at least 1",
            ),
            (
                "racefuzzer:profile=x",
                "invalid value \"x\" for profile: expected a whole number",
            ),
            (
                "racefuzzer:d=2",
                "strategy racefuzzer has no parameter \"d\" (it takes: tries, profile)",
            ),
        ] {
            let message = bad.parse::<StrategySpec>().unwrap_err().to_string();
            assert_eq!(message, expected, "{bad}");
        }
    }

    #[test]
    fn parses_atomfuzzer_and_its_pause() {
        assert_eq!(
            "atomfuzzer".parse::<StrategySpec>(),
            Ok(StrategySpec::AtomFuzzer {
                pause: crate::strategy::atom_fuzzer::DEFAULT_PAUSE
            })
        );
        assert_eq!(
            "AtomFuzzer: pause=7".parse::<StrategySpec>(),
            Ok(StrategySpec::AtomFuzzer { pause: 7 })
        );
        assert_eq!(
            "atomfuzzer:pause=7"
                .parse::<StrategySpec>()
                .unwrap()
                .to_string(),
            "atomfuzzer:pause=7"
        );
        let default = format!(
            "atomfuzzer:pause={}",
            crate::strategy::atom_fuzzer::DEFAULT_PAUSE
        );
        assert_eq!(
            default.parse::<StrategySpec>().unwrap().to_string(),
            "atomfuzzer"
        );
        for (bad, expected) in [
            (
                "atomfuzzer:pause=0",
                "invalid value \"0\" for pause: it must be at least 1",
            ),
            (
                "atomfuzzer:pause=long",
                "invalid value \"long\" for pause: expected a whole number",
            ),
            (
                "atomfuzzer:tries=3",
                "strategy atomfuzzer has no parameter \"tries\" (it takes: pause)",
            ),
        ] {
            let message = bad.parse::<StrategySpec>().unwrap_err().to_string();
            assert_eq!(message, expected, "{bad}");
        }
        let message = "atom".parse::<StrategySpec>().unwrap_err().to_string();
        assert!(message.contains("atomfuzzer"), "{message}");
    }

    #[test]
    fn parses_pos_and_delay_bounding() {
        assert_eq!("pos".parse::<StrategySpec>(), Ok(StrategySpec::Pos));
        assert_eq!(" POS ".parse::<StrategySpec>().unwrap().to_string(), "pos");
        assert_eq!(
            "delay".parse::<StrategySpec>(),
            Ok(StrategySpec::Delay { delays: 2 })
        );
        assert_eq!(
            "delay".parse::<StrategySpec>().unwrap().to_string(),
            "delay:d=2"
        );
        for spec in ["delay:d=0", "delay:d=5"] {
            assert_eq!(spec.parse::<StrategySpec>().unwrap().to_string(), spec);
        }
        assert!("delay:d=3"
            .parse::<StrategySpec>()
            .unwrap()
            .is_deterministic());
        assert!(!"pos".parse::<StrategySpec>().unwrap().is_deterministic());
        for (bad, expected) in [
            (
                "delay:d=-1",
                "invalid value \"-1\" for d: expected a whole number",
            ),
            (
                "delay:c=2",
                "strategy delay has no parameter \"c\" (it takes: d)",
            ),
            (
                "pos:d=2",
                "strategy pos has no parameter \"d\" (it takes: no parameters)",
            ),
            (
                "delay:d",
                "malformed parameter \"d\" in strategy spec: expected key=value",
            ),
        ] {
            let message = bad.parse::<StrategySpec>().unwrap_err().to_string();
            assert_eq!(message, expected, "{bad}");
        }
    }

    #[test]
    fn parses_surw_and_rff() {
        assert_eq!(
            "surw".parse::<StrategySpec>(),
            Ok(StrategySpec::Surw {
                variables: Some(crate::strategy::surw::DEFAULT_VARIABLES),
                profile: crate::strategy::surw::DEFAULT_PROFILE,
            })
        );
        assert_eq!(
            " SURW ".parse::<StrategySpec>().unwrap().to_string(),
            "surw"
        );
        for spec in [
            "surw:v=1",
            "surw:v=all",
            "surw:v=3,profile=4",
            "surw:profile=2",
        ] {
            assert_eq!(spec.parse::<StrategySpec>().unwrap().to_string(), spec);
        }
        assert_eq!("rff".parse::<StrategySpec>(), Ok(StrategySpec::Rff));
        assert_eq!("rff".parse::<StrategySpec>().unwrap().to_string(), "rff");
        assert!(!"surw".parse::<StrategySpec>().unwrap().is_deterministic());
        assert!(!"rff".parse::<StrategySpec>().unwrap().is_deterministic());
        for (bad, expected) in [
            (
                "surw:v=0",
                "invalid value \"0\" for v: it must be at least 1",
            ),
            (
                "surw:v=some",
                "invalid value \"some\" for v: expected a whole number",
            ),
            (
                "surw:profile=0",
                "invalid value \"0\" for profile: it must be at least 1",
            ),
            (
                "surw:d=2",
                "strategy surw has no parameter \"d\" (it takes: v, profile)",
            ),
            (
                "rff:tries=2",
                "strategy rff has no parameter \"tries\" (it takes: no parameters)",
            ),
        ] {
            let message = bad.parse::<StrategySpec>().unwrap_err().to_string();
            assert_eq!(message, expected, "{bad}");
        }
    }

    #[test]
    fn parses_rpro_and_the_lock_option() {
        assert_eq!(
            "rpro:d=3,r=20".parse::<StrategySpec>(),
            Ok(StrategySpec::rpro(3, 20))
        );
        assert_eq!(StrategySpec::rpro(4, 150).to_string(), "rpro:d=4,r=150");
        let spec: StrategySpec = "rpro:r=5,locks=0,k=90".parse().unwrap();
        assert_eq!(spec.to_string(), "rpro:d=3,r=5,locks=0,k=90");
        let spec: StrategySpec = "pct:d=2,locks=1".parse().unwrap();
        assert_eq!(spec.to_string(), "pct:d=2,locks=1");
        for spec in [
            "pctvb:d=3,v=1",
            "pctvb:d=2,v=2,profile=4",
            "tb:t=3,c=0",
            "tb:t=2,c=2",
            "icb:c=2,v=2",
            "icb:c=1,v=all",
            "icb:c=0,v=0,t=3,prune=0",
            "dfs",
            "dpor",
            "dfs:c=0",
            "dpor:c=2",
            "vs",
            "vs:profile=5",
            "racefuzzer",
            "racefuzzer:tries=5",
            "racefuzzer:profile=3",
            "racefuzzer:tries=1,profile=2",
        ] {
            assert_eq!(spec.parse::<StrategySpec>().unwrap().to_string(), spec);
        }
        for bad in [
            "tb:t=1",
            "pctvb:v=0",
            "pctvb:d=0",
            "tb:q=1",
            "icb:v=some",
            "icb:t=1",
            "icb:prune=2",
            "racefuzzer:tries=0",
            "racefuzzer:profile=0",
            "racefuzzer:d=2",
        ] {
            assert!(bad.parse::<StrategySpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_preemption_bounds_of_the_systematic_searches() {
        assert_eq!(
            "dpor:c=2".parse::<StrategySpec>(),
            Ok(StrategySpec::BoundedDpor { preemptions: 2 })
        );
        assert_eq!(
            "dfs:preemptions=0".parse::<StrategySpec>(),
            Ok(StrategySpec::BoundedDfs { preemptions: 0 })
        );
        assert!(StrategySpec::BoundedDpor { preemptions: 1 }.is_deterministic());
        assert_eq!(
            "dfs:yields=2".parse::<StrategySpec>(),
            Ok(StrategySpec::DfsYieldLimit { yields: 2 })
        );
        assert_eq!(
            StrategySpec::DfsYieldLimit { yields: 3 }.to_string(),
            "dfs:yields=3"
        );
        assert_eq!(
            "dfs:yields=1".parse::<StrategySpec>(),
            Ok(StrategySpec::Dfs)
        );
        assert!(matches!(
            "dfs:c=2,yields=2".parse::<StrategySpec>(),
            Err(SpecError::BadValue { parameter, .. }) if parameter == "yields"
        ));
        assert!("dfs:yields=0".parse::<StrategySpec>().is_err());
        for (bad, expected) in [
            (
                "dpor:c=-1",
                "invalid value \"-1\" for c: expected a whole number",
            ),
            (
                "dpor:c=two",
                "invalid value \"two\" for c: expected a whole number",
            ),
            (
                "dpor:d=2",
                "strategy dpor has no parameter \"d\" (it takes: c)",
            ),
            (
                "dfs:c=1,v=all",
                "strategy dfs has no parameter \"v\" (it takes: c, yields)",
            ),
        ] {
            let message = bad.parse::<StrategySpec>().unwrap_err().to_string();
            assert_eq!(message, expected, "{bad}");
        }
    }
}
