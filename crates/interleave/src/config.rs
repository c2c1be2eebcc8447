//! Exploration settings, their defaults, and the environment variables that override them.
//!
//! Every setting lives in [`Config`]; [`Config::apply_env`] is the one function that reads the
//! environment, so a failing CI run can be reproduced or widened without editing code:
//!
//! | variable | setting | example |
//! |---|---|---|
//! | `INTERLEAVE_EXECUTIONS` | [`Config::executions`] | `INTERLEAVE_EXECUTIONS=100000` |
//! | `INTERLEAVE_SEED` | [`Config::seed`] | `INTERLEAVE_SEED=42` |
//! | `INTERLEAVE_STRATEGY` | [`Config::strategy`] | `INTERLEAVE_STRATEGY=pct:d=3` |
//! | `INTERLEAVE_MAX_STEPS` | [`Config::max_steps`] | `INTERLEAVE_MAX_STEPS=1000000` |
//! | `INTERLEAVE_WORKERS` | [`Config::workers`] | `INTERLEAVE_WORKERS=4` |
//! | `INTERLEAVE_REPLAY` | [`Config::replay`] | `INTERLEAVE_REPLAY=il2-...` |
//! | `INTERLEAVE_PERSIST` | [`Config::persistence`] | `INTERLEAVE_PERSIST=off` |
//! | `INTERLEAVE_STACK_SIZE` | [`Config::stack_size`] | `INTERLEAVE_STACK_SIZE=8388608` |
//! | `INTERLEAVE_WATCHDOG` | [`Config::watchdog`] (seconds, 0 for off) | `INTERLEAVE_WATCHDOG=60` |
//! | `INTERLEAVE_SLOW_NOTICE` | [`Config::slow_search_notice`] (seconds, 0 for off) | `INTERLEAVE_SLOW_NOTICE=60` |
//! | `INTERLEAVE_SPURIOUS_WAKEUPS` | [`Config::spurious_wakeups`] (`on`/`off`) | `INTERLEAVE_SPURIOUS_WAKEUPS=on` |
//! | `INTERLEAVE_SPURIOUS_CAS_FAILURES` | [`Config::spurious_cas_failures`] (`on`/`off`) | `INTERLEAVE_SPURIOUS_CAS_FAILURES=off` |
//! | `INTERLEAVE_FULL_REPORT` | [`Config::full_interleaving`] (`on`/`off`) | `INTERLEAVE_FULL_REPORT=1` |
//! | `INTERLEAVE_SHARD` | [`Config::shard`] (`i/n`, counted from 1) | `INTERLEAVE_SHARD=2/3` |
//! | `CI` | [`Persistence::save`] (false when set) | `CI=true` |

use std::path::PathBuf;
use std::time::Duration;

use crate::persistence::Persistence;
use crate::strategy::StrategySpec;
use crate::Error;

/// [`Config::workers`]: as many workers as the machine has cores, one for a test with statics.
pub const AUTOMATIC_WORKERS: usize = 0;

/// Overrides [`Config::executions`].
pub const ENV_EXECUTIONS: &str = "INTERLEAVE_EXECUTIONS";
/// Overrides [`Config::seed`].
pub const ENV_SEED: &str = "INTERLEAVE_SEED";
/// Overrides [`Config::strategy`] with a spec string.
pub const ENV_STRATEGY: &str = "INTERLEAVE_STRATEGY";
/// Overrides [`Config::max_steps`].
pub const ENV_MAX_STEPS: &str = "INTERLEAVE_MAX_STEPS";
/// Overrides [`Config::workers`].
pub const ENV_WORKERS: &str = "INTERLEAVE_WORKERS";
/// Sets [`Config::replay`]: replay this token instead of exploring, in the test that recorded it
/// (a token names its test; other tests explore as usual, with a note).
pub const ENV_REPLAY: &str = "INTERLEAVE_REPLAY";
/// Overrides [`Config::persistence`]: `off` turns regression files off (no replaying, no
/// saving; also `false`, `0`, `no`), `on` saves new failures even when `CI` is set (also `true`,
/// `1`, `yes`), and a path (with a `/`, `\\` or `.`: `regressions/`) is the directory of
/// regression files (and saves too); any other word is refused as a likely typo. It changes nothing for an exploration without a
/// [`Persistence`], because there is no test name to name the file after.
pub const ENV_PERSIST: &str = "INTERLEAVE_PERSIST";
/// Overrides [`Config::stack_size`] (bytes).
pub const ENV_STACK_SIZE: &str = "INTERLEAVE_STACK_SIZE";
/// Overrides [`Config::watchdog`]: seconds without progress (fractions allowed), `0` for off.
pub const ENV_WATCHDOG: &str = "INTERLEAVE_WATCHDOG";
/// Overrides [`Config::slow_search_notice`]: seconds (fractions allowed), `0` for off.
pub const ENV_SLOW_NOTICE: &str = "INTERLEAVE_SLOW_NOTICE";
/// Overrides [`Config::spurious_wakeups`]: `on`, `true`, `1` or `off`, `false`, `0`.
pub const ENV_SPURIOUS_WAKEUPS: &str = "INTERLEAVE_SPURIOUS_WAKEUPS";
/// Overrides [`Config::spurious_cas_failures`]: `on`, `true`, `1` or `off`, `false`, `0`.
pub const ENV_SPURIOUS_CAS_FAILURES: &str = "INTERLEAVE_SPURIOUS_CAS_FAILURES";
/// Overrides [`Config::memory`]: `weak` or `sc`.
pub const ENV_MEMORY: &str = "INTERLEAVE_MEMORY";
/// Overrides [`Config::full_interleaving`]: `on`, `true`, `1` or `off`, `false`, `0`.
pub const ENV_FULL_REPORT: &str = "INTERLEAVE_FULL_REPORT";
/// Sets [`Config::shard`]: `i/n` runs shard `i` of `n` (counted from 1, as `cargo nextest
/// --partition count:i/n` counts), such as `INTERLEAVE_SHARD=2/3`; empty for no sharding.
pub const ENV_SHARD: &str = "INTERLEAVE_SHARD";
/// Set by continuous integration services; when it is set (to anything but empty, `0` or
/// `false`) and [`ENV_PERSIST`] is not, failures are not saved ([`Persistence::save`]).
const ENV_CI: &str = "CI";

/// The default budget ([`Config::executions`]).
const DEFAULT_EXECUTIONS: u64 = 10_000;

pub use crate::runtime::{MemoryModel, RaceMode, YieldVisibility};

/// Exploration settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// How schedules are chosen. Default: `auto`, the portfolio of the strongest samplers (SURW,
    /// POS, PCT) and a random walk. Environment: `INTERLEAVE_STRATEGY`.
    pub strategy: StrategySpec,
    /// How many executions to run at most. Default: 10,000, which takes a tenth to a third of a
    /// second on one core for a test of a few threads and ten to a hundred scheduling points, a
    /// few seconds for one of a thousand. Environment: `INTERLEAVE_EXECUTIONS`.
    pub executions: u64,
    /// The exploration seed; the same seed and program give the same schedules. Default: 0.
    /// Environment: `INTERLEAVE_SEED`.
    pub seed: u64,
    /// Steps after which an execution fails as a livelock. Default: 100,000.
    /// Environment: `INTERLEAVE_MAX_STEPS`.
    pub max_steps: u64,
    /// OS threads running executions in parallel; results do not depend on it. Default: 0,
    /// automatic: as many as the machine has cores (`std::thread::available_parallelism`),
    /// except that an exploration whose executions use an object registered by an earlier one
    /// (an interleave primitive in a `static`) runs on one worker, started again from its
    /// first execution if it had already run some on several, so its report is still the
    /// one-worker report. A custom strategy runs on one worker unless told otherwise.
    /// Environment: `INTERLEAVE_WORKERS` (at least 1). An explicit count greater than 1 makes
    /// executions that use a `static` primitive at the same time fail with the remedies.
    pub workers: usize,
    /// What a data race on a `cell::Var` does. Default: [`RaceMode::Fail`].
    pub data_races: RaceMode,
    /// Stop at the first failing execution. Default: true.
    pub stop_on_first_failure: bool,
    /// Bytes of stack for each thread of the program under test; a thread spawned with
    /// [`crate::thread::Builder::stack_size`] gets the larger of the two. A thread that needs
    /// more overflows into a guard page and the process aborts with a report naming it.
    /// Default: 256 KiB. Environment: `INTERLEAVE_STACK_SIZE`.
    pub stack_size: usize,
    /// How long an execution may go without a coroutine switch before the watchdog reports
    /// the thread that runs (it blocks or spins on something interleave does not control: a
    /// `std::sync` lock, a std atomic, I/O) and ends the process; `None` turns the watchdog
    /// off. Default: 10 s. Environment: `INTERLEAVE_WATCHDOG` (seconds, `0` for off).
    pub watchdog: Option<Duration>,
    /// How long an exploration may run before it says once, on the standard error, that it is
    /// not finished and how far it got: a sampler, how long the rest of its budget should
    /// take; an exhaustive search (`dfs`, `dpor`, `icb`), when its executions keep growing,
    /// that a spin which can lose its race for ever makes its tree infinite, with the bound that
    /// makes it finite. `None` turns the notice off. It changes nothing in the report.
    /// Default: 20 s. Environment: `INTERLEAVE_SLOW_NOTICE` (seconds, `0` for off).
    pub slow_search_notice: Option<Duration>,
    /// Let `Condvar::wait` and `thread::park` return without a notification or an unpark at
    /// any point, as std allows (spurious wake-ups), so code that waits without re-checking
    /// its condition in a loop is caught. Off by default because every waiting thread then
    /// stays runnable, which enlarges the search. Environment: `INTERLEAVE_SPURIOUS_WAKEUPS`.
    pub spurious_wakeups: bool,
    /// Let `thread::park` and `thread::park_timeout` return without an unpark at any point, as
    /// std allows, while `Condvar::wait` still needs a notification (shuttle's choice, which
    /// its compat crate keeps); [`Config::spurious_wakeups`] covers parks too. Off by default,
    /// for the same reason.
    pub spurious_park_wakeups: bool,
    /// Let `compare_exchange_weak` fail although the atomic holds the expected value, as std
    /// allows (on processors with load-linked/store-conditional instructions it does), so code
    /// that treats a weak exchange's failure as proof that another thread changed the value
    /// (a weak exchange outside a retry loop) is caught. A thread's weak exchange never fails
    /// spuriously twice in a row, so a retry loop stays finite. Default (`None`): on for the
    /// samplers (`auto`, `random`, PCT, ...), off for the exhaustive searches (`dfs`, `dpor`,
    /// `icb`), where each such choice multiplies the schedules of every retry loop (a
    /// spinlock's `dpor` search grew from 322,096 executions to more than 3,000,000).
    /// Environment: `INTERLEAVE_SPURIOUS_CAS_FAILURES`.
    pub spurious_cas_failures: Option<bool>,
    /// How atomics behave: [`MemoryModel::Weak`] explores the stores each load may read under
    /// the Rust (C++20) memory model, so a missing `Acquire`/`Release` is found;
    /// [`MemoryModel::SequentiallyConsistent`] runs every atomic operation as `SeqCst`.
    /// Default: `Weak`. Environment: `INTERLEAVE_MEMORY` (`weak` or `sc`).
    pub memory: MemoryModel,
    /// Which stores a thread's atomic loads may still read after it yielded, under the weak
    /// memory model. Default: loom's [`YieldVisibility::UnseenBeforeYield`].
    pub yield_visibility: YieldVisibility,
    /// Print every step of a failing execution's interleaving. Off, a long interleaving is
    /// shortened to its last rows with long runs of one thread collapsed, though the steps a
    /// failure is about (the failing step, both accesses of a data race, the acquisitions of
    /// the locks that deadlocked threads hold) are always shown. Default: false.
    /// Environment: `INTERLEAVE_FULL_REPORT` (`on`/`off`).
    pub full_interleaving: bool,
    /// Every panic fails the execution the moment it is raised, even one that a
    /// `catch_unwind` or a `join` would observe, and the panicking thread is never resumed:
    /// the execution stops at its next scheduling point, and teardown leaks its stack instead of
    /// unwinding it further. So a destructor that would panic while the thread unwinds, which
    /// makes Rust abort the process, never runs, and the test fails with the first panic
    /// instead. The price: Rust counts panics per OS thread, and the unwinding that never ends
    /// leaves `std::thread::panicking()` true on that OS thread for good. Off by default
    /// (panics are std's: `join` returns them, and only a panic nobody observes fails);
    /// shuttle's `immediately_return_on_panic`.
    pub panic_stops_execution: bool,
    /// A panic that ends a spawned thread or task fails the execution with that panic, as
    /// loom and shuttle do, instead of going to its `JoinHandle` as std's does (where only a
    /// panic nobody joins fails, and a `join().unwrap()` fails with "called `Result::unwrap()`
    /// on an `Err` value"). The compat crates turn it on, so a test that expects a spawned
    /// thread's panic message (`#[should_panic(expected = ...)]`) sees it. Default: false.
    pub spawned_panics_fail: bool,
    /// Replay this token instead of exploring. Default: none. Environment: `INTERLEAVE_REPLAY`.
    pub replay: Option<String>,
    /// Re-run executions 0, 1, 2, 4, 8, ... and every failing one under the same schedule, and
    /// fail with [`crate::FailureKind::Nondeterminism`] if the program behaves differently.
    /// Default: true.
    pub check_determinism: bool,
    /// Count the distinct states the exploration reached, approximated by distinct
    /// happens-before graphs of execution prefixes (seed 002's state count), in
    /// [`crate::Report::states`]. It fingerprints every prefix of every execution, so it costs
    /// time and memory. Default: false.
    pub count_states: bool,
    /// Check every execution against the eleven problematic access patterns of atomic-set
    /// serializability over the units of work and atomic sets the program declared
    /// (`crate::atomic_set`), and list the matches in [`crate::Report::violations`]. The
    /// `rm` and `assetfuzzer` strategies turn it on themselves. Default: false.
    pub monitor_atomic_sets: bool,
    /// Where the tokens of failing schedules are saved, to be replayed first by the next run
    /// of the same test before it explores (see [`Persistence`]). Default: none.
    /// `#[interleave::test]` sets it to the file `<test name>.txt` in the directory
    /// `interleave-regressions` of the test crate (its `CARGO_MANIFEST_DIR`), and
    /// [`crate::Builder::persist_failures`] sets it for a hand-written test.
    /// Environment: `INTERLEAVE_PERSIST` ([`ENV_PERSIST`]) and `CI`.
    pub persistence: Option<Persistence>,
    /// Run only this machine's share of the exploration, so that `n` machines (CI jobs) split
    /// one test's executions; their summaries combine with `interleave merge-shards`. Default:
    /// none (every execution). Environment: `INTERLEAVE_SHARD` (`i/n`, counted from 1).
    pub shard: Option<Shard>,
    /// Stops the exploration from another OS thread when it is stopped
    /// ([`crate::StopHandle::stop`]): every running execution ends at its next scheduling
    /// point (a thread that spins on an interleave atomic included), no further execution
    /// starts, and the report says it was stopped ([`crate::Report::stopped`]) and holds
    /// what finished before, without counting the executions the stop cut short. A stop is no
    /// failure. A stopped execution ends as a process that exits: its unfinished threads are
    /// never resumed or unwound, and their stacks, thread-locals, kept values and the
    /// execution's `lazy_static!` values are leaked without running a destructor. Default:
    /// none. A replay ([`crate::Builder::replay`], the regression file's tokens) is not
    /// stopped.
    pub stop: Option<crate::StopHandle>,
}

/// Shard `number` of `count` ([`Config::shard`]), counted from 1: `1/3`, `2/3` and `3/3` split
/// an exploration in three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    number: u64,
    count: u64,
}

/// Why a shard such as `3/2` or `a/b` is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The text is not two whole numbers around a slash.
    #[error("expected i/n, two whole numbers such as 2/3 (shard i of n, counted from 1)")]
    Format,
    /// Zero shards.
    #[error("the number of shards n in i/n must be at least 1")]
    NoShards,
    /// The shard's number is 0 or larger than the count.
    #[error("there is no shard {number} of {count}: shards are counted from 1 to {count}")]
    OutOfRange {
        /// The shard asked for.
        number: u64,
        /// How many shards there are.
        count: u64,
    },
}

impl Shard {
    /// Shard `number` of `count`, counted from 1.
    pub fn new(number: u64, count: u64) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::NoShards);
        }
        if number == 0 || number > count {
            return Err(ShardError::OutOfRange { number, count });
        }
        Ok(Shard { number, count })
    }

    /// A shard that [`Config::validate`] checks later, for the builder's infallible setter.
    pub(crate) fn unchecked(number: u64, count: u64) -> Shard {
        Shard { number, count }
    }

    /// Its number, from 1 to [`Shard::count`].
    pub fn number(&self) -> u64 {
        self.number
    }

    /// How many shards the exploration is split into.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether this shard owns what `key` numbers (an execution index, a prefix's hash): keys
    /// are dealt round robin, shard 1 taking those equal to 0 modulo the count.
    pub(crate) fn owns(&self, key: u64) -> bool {
        key % self.count == self.number - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.number, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let (number, count) = text.trim().split_once('/').ok_or(ShardError::Format)?;
        let whole = |part: &str| {
            let part = part.trim();
            // `parse` accepts a leading `+`; a shard is digits only.
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ShardError::Format);
            }
            part.parse::<u64>().map_err(|_| ShardError::Format)
        };
        Shard::new(whole(number)?, whole(count)?)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            strategy: StrategySpec::default(),
            executions: DEFAULT_EXECUTIONS,
            seed: 0,
            max_steps: 100_000,
            workers: AUTOMATIC_WORKERS,
            data_races: RaceMode::Fail,
            stop_on_first_failure: true,
            stack_size: 256 * 1024,
            watchdog: Some(Duration::from_secs(10)),
            slow_search_notice: Some(Duration::from_secs(20)),
            spurious_wakeups: false,
            spurious_park_wakeups: false,
            spurious_cas_failures: None,
            memory: MemoryModel::Weak,
            yield_visibility: YieldVisibility::UnseenBeforeYield,
            full_interleaving: false,
            panic_stops_execution: false,
            spawned_panics_fail: false,
            replay: None,
            check_determinism: true,
            count_states: false,
            monitor_atomic_sets: false,
            persistence: None,
            shard: None,
            stop: None,
        }
    }
}

impl Config {
    /// Applies the `INTERLEAVE_*` environment variables and `CI`; the only place that reads
    /// the environment.
    pub fn apply_env(&mut self) -> Result<(), Error> {
        self.apply_vars(|name| std::env::var(name).ok())
    }

    /// Applies the settings of the same variables, looked up with `var` instead of in the
    /// process environment: for testing how a test behaves under some environment (in CI, for
    /// instance) without changing the environment of the whole test process.
    ///
    /// ```
    /// use interleave::{Config, Persistence};
    ///
    /// let mut config = Config {
    ///     persistence: Some(Persistence::new("regressions", "my_test")),
    ///     ..Config::default()
    /// };
    /// config
    ///     .apply_vars(|name| (name == "CI").then(|| "true".to_string()))
    ///     .unwrap();
    /// assert!(!config.persistence.unwrap().save, "nothing is saved in CI");
    /// ```
    pub fn apply_vars(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), Error> {
        fn number<T>(name: &'static str, value: &str) -> Result<T, Error>
        where
            T: std::str::FromStr<Err = std::num::ParseIntError> + Bounded + std::fmt::Display,
        {
            value
                .trim()
                .parse()
                .map_err(|error: std::num::ParseIntError| {
                    let reason = match error.kind() {
                        std::num::IntErrorKind::PosOverflow => {
                            format!("too large: at most {}", T::MAX)
                        }
                        _ => "expected a whole number".to_string(),
                    };
                    Error::Environment {
                        name,
                        value: value.to_string(),
                        reason,
                    }
                })
        }
        fn seconds(name: &'static str, value: &str) -> Result<Option<Duration>, Error> {
            let invalid = || Error::Environment {
                name,
                value: value.to_string(),
                reason: "expected a number of seconds".to_string(),
            };
            let seconds: f64 = value.trim().parse().map_err(|_| invalid())?;
            let duration = Duration::try_from_secs_f64(seconds).map_err(|_| invalid())?;
            Ok((!duration.is_zero()).then_some(duration))
        }
        if let Some(value) = var(ENV_EXECUTIONS) {
            self.executions = number(ENV_EXECUTIONS, &value)?;
        }
        if let Some(value) = var(ENV_SEED) {
            self.seed = number(ENV_SEED, &value)?;
        }
        if let Some(value) = var(ENV_STRATEGY) {
            self.strategy = value
                .parse()
                .map_err(|e: crate::SpecError| Error::Environment {
                    name: ENV_STRATEGY,
                    value: value.clone(),
                    reason: e.to_string(),
                })?;
        }
        if let Some(value) = var(ENV_MAX_STEPS) {
            self.max_steps = number(ENV_MAX_STEPS, &value)?;
        }
        if let Some(value) = var(ENV_WORKERS) {
            self.workers = number(ENV_WORKERS, &value)?;
            if self.workers == AUTOMATIC_WORKERS {
                return Err(Error::Environment {
                    name: ENV_WORKERS,
                    value,
                    reason: "workers must be at least 1 (leave it unset for one per core)"
                        .to_string(),
                });
            }
        }
        if let Some(value) = var(ENV_REPLAY) {
            if !value.trim().is_empty() {
                self.replay = Some(value);
            }
        }
        if let Some(value) = var(ENV_STACK_SIZE) {
            self.stack_size = number(ENV_STACK_SIZE, &value)?;
        }
        if let Some(value) = var(ENV_WATCHDOG) {
            self.watchdog = seconds(ENV_WATCHDOG, &value)?;
        }
        if let Some(value) = var(ENV_SLOW_NOTICE) {
            self.slow_search_notice = seconds(ENV_SLOW_NOTICE, &value)?;
        }
        if let Some(value) = var(ENV_SPURIOUS_WAKEUPS) {
            self.spurious_wakeups = on_off(ENV_SPURIOUS_WAKEUPS, value)?;
        }
        if let Some(value) = var(ENV_SPURIOUS_CAS_FAILURES) {
            self.spurious_cas_failures = Some(on_off(ENV_SPURIOUS_CAS_FAILURES, value)?);
        }
        if let Some(value) = var(ENV_FULL_REPORT) {
            self.full_interleaving = on_off(ENV_FULL_REPORT, value)?;
        }
        if let Some(value) = var(ENV_MEMORY) {
            self.memory =
                MemoryModel::from_name(value.trim()).ok_or_else(|| Error::Environment {
                    name: ENV_MEMORY,
                    value: value.clone(),
                    reason: format!("expected one of {}", MemoryModel::NAMES.join(", ")),
                })?;
        }
        if let Some(value) = var(ENV_SHARD) {
            self.shard = if value.trim().is_empty() {
                None
            } else {
                Some(value.parse().map_err(|e: ShardError| Error::Environment {
                    name: ENV_SHARD,
                    value: value.clone(),
                    reason: e.to_string(),
                })?)
            };
        }
        self.apply_persistence_vars(&var)?;
        self.validate()
    }

    fn apply_persistence_vars(
        &mut self,
        var: &impl Fn(&str) -> Option<String>,
    ) -> Result<(), Error> {
        let requested = var(ENV_PERSIST).filter(|value| !value.trim().is_empty());
        if let Some(value) = &requested {
            let value = value.trim();
            // A directory must look like a path: a bare word is far likelier to be a mistyped
            // switch (`INTERLEAVE_PERSIST=maybe`), which would otherwise quietly create a
            // directory of that name and save failures there.
            if switch(value).is_none() && !value.contains(['/', '\\', '.']) {
                return Err(Error::Environment {
                    name: ENV_PERSIST,
                    value: value.to_string(),
                    reason: "expected on or off, or a directory written as a path (with a \
                             `/`, as in `regressions/` or `./regressions`)"
                        .to_string(),
                });
            }
        }
        let Some(persistence) = &mut self.persistence else {
            return Ok(());
        };
        match requested
            .as_deref()
            .map(|value| (value.trim(), switch(value)))
        {
            None => {
                let in_ci = var(ENV_CI).is_some_and(|value| {
                    let value = value.trim();
                    !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
                });
                if in_ci {
                    persistence.save = false;
                }
            }
            Some((_, Some(false))) => self.persistence = None,
            Some((_, Some(true))) => persistence.save = true,
            Some((directory, None)) => {
                persistence.directory = PathBuf::from(directory);
                persistence.save = true;
            }
        }
        Ok(())
    }

    /// Rejects impossible settings with a message that says which one.
    pub fn validate(&self) -> Result<(), Error> {
        let invalid = |what: &str| Err(Error::Config(what.to_string()));
        if self.executions == 0 {
            return invalid(
                "executions (INTERLEAVE_EXECUTIONS) must be at least 1 (zero executions would \
                 test nothing)",
            );
        }
        if self.max_steps == 0 {
            return invalid("max_steps (INTERLEAVE_MAX_STEPS) must be at least 1");
        }
        if self.stack_size < 16 * 1024 {
            return invalid("stack_size (INTERLEAVE_STACK_SIZE) must be at least 16 KiB");
        }
        if let Some(shard) = self.shard {
            if let Err(error) = Shard::new(shard.number, shard.count) {
                return Err(Error::Config(format!("shard {shard}: {error}")));
            }
        }
        Ok(())
    }
}

/// An on/off value of an environment variable: `on`, `true`, `1`, `yes` or `off`, `false`, `0`,
/// `no`, in any case; `None` for anything else.
fn switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Some(true),
        "off" | "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// The setting of the switch variable `name`: on or off as [`switch`] reads it, off when empty.
fn on_off(name: &'static str, value: String) -> Result<bool, Error> {
    match switch(&value) {
        Some(on) => Ok(on),
        None if value.trim().is_empty() => Ok(false),
        None => Err(Error::Environment {
            name,
            value,
            reason: "expected on or off".to_string(),
        }),
    }
}

/// The largest value of a numeric setting's type, for the message that rejects a larger one.
trait Bounded: Sized {
    const MAX: Self;
}

impl Bounded for u64 {
    const MAX: u64 = u64::MAX;
}

impl Bounded for usize {
    const MAX: usize = usize::MAX;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn environment_overrides_settings() {
        let mut config = Config::default();
        config
            .apply_vars(env(&[
                (ENV_EXECUTIONS, "77"),
                (ENV_SEED, "5"),
                (ENV_STRATEGY, "pct:d=2"),
                (ENV_REPLAY, "il2-abc"),
                (ENV_MEMORY, "sc"),
            ]))
            .unwrap();
        assert_eq!(config.memory, MemoryModel::SequentiallyConsistent);
        assert_eq!(config.executions, 77);
        assert_eq!(config.seed, 5);
        assert_eq!(config.strategy, StrategySpec::pct(2));
        assert_eq!(config.replay.as_deref(), Some("il2-abc"));
    }

    #[test]
    fn the_shard_variable_takes_i_of_n_counted_from_one() {
        let mut config = Config::default();
        config.apply_vars(env(&[(ENV_SHARD, " 2/3 ")])).unwrap();
        assert_eq!(config.shard, Some(Shard::new(2, 3).unwrap()));
        config.apply_vars(env(&[(ENV_SHARD, "1/1")])).unwrap();
        assert_eq!(config.shard.map(|s| (s.number(), s.count())), Some((1, 1)));
        config.apply_vars(env(&[(ENV_SHARD, "")])).unwrap();
        assert_eq!(config.shard, None, "an empty value means no sharding");
    }

    #[test]
    fn bad_shards_are_rejected_with_the_reason() {
        let cases: [(&'static [(&'static str, &'static str)], &str); 7] = [
            (&[(ENV_SHARD, "3/2")], "there is no shard 3 of 2"),
            (&[(ENV_SHARD, "0/2")], "counted from 1 to 2"),
            (&[(ENV_SHARD, "0/0")], "must be at least 1"),
            (&[(ENV_SHARD, "a/b")], "expected i/n"),
            (&[(ENV_SHARD, "2")], "expected i/n"),
            (&[(ENV_SHARD, "-1/2")], "expected i/n"),
            (&[(ENV_SHARD, "1/99999999999999999999")], "expected i/n"),
        ];
        for (pairs, reason) in cases {
            let message = Config::default()
                .apply_vars(env(pairs))
                .unwrap_err()
                .to_string();
            assert!(
                message.contains(ENV_SHARD) && message.contains(reason),
                "{pairs:?}: {message}"
            );
        }
        let built = Config {
            shard: Some(Shard::unchecked(4, 3)),
            ..Config::default()
        };
        let message = built.validate().unwrap_err().to_string();
        assert!(message.contains("there is no shard 4 of 3"), "{message}");
    }

    #[test]
    fn environment_asks_for_the_full_interleaving() {
        let mut config = Config::default();
        assert!(!config.full_interleaving);
        config.apply_vars(env(&[(ENV_FULL_REPORT, "1")])).unwrap();
        assert!(config.full_interleaving);
        config.apply_vars(env(&[(ENV_FULL_REPORT, "off")])).unwrap();
        assert!(!config.full_interleaving);
        let error = config
            .apply_vars(env(&[(ENV_FULL_REPORT, "everything")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains(ENV_FULL_REPORT), "{error}");
    }

    fn persisted() -> Config {
        Config {
            persistence: Some(Persistence::new("crate/interleave-regressions", "tests::t")),
            ..Config::default()
        }
    }

    fn persistence_under(pairs: &'static [(&'static str, &'static str)]) -> Option<Persistence> {
        let mut config = persisted();
        config.apply_vars(env(pairs)).unwrap();
        config.persistence
    }

    #[test]
    fn environment_sets_the_stack_size_and_the_watchdog() {
        let mut config = Config::default();
        config
            .apply_vars(env(&[(ENV_STACK_SIZE, "8388608"), (ENV_WATCHDOG, "0.5")]))
            .unwrap();
        assert_eq!(config.stack_size, 8 << 20);
        assert_eq!(config.watchdog, Some(Duration::from_millis(500)));
        config.apply_vars(env(&[(ENV_WATCHDOG, "0")])).unwrap();
        assert_eq!(config.watchdog, None, "0 turns the watchdog off");
        for bad in [&[(ENV_WATCHDOG, "-1")], &[(ENV_WATCHDOG, "soon")]] {
            let message = Config::default()
                .apply_vars(env(bad))
                .unwrap_err()
                .to_string();
            assert!(message.contains(ENV_WATCHDOG), "{message}");
        }
    }

    #[test]
    fn environment_moves_and_turns_off_the_slow_search_notice() {
        let mut config = Config::default();
        assert_eq!(config.slow_search_notice, Some(Duration::from_secs(20)));
        config.apply_vars(env(&[(ENV_SLOW_NOTICE, "90")])).unwrap();
        assert_eq!(config.slow_search_notice, Some(Duration::from_secs(90)));
        config.apply_vars(env(&[(ENV_SLOW_NOTICE, "0")])).unwrap();
        assert_eq!(config.slow_search_notice, None, "0 turns the notice off");
        let message = Config::default()
            .apply_vars(env(&[(ENV_SLOW_NOTICE, "later")]))
            .unwrap_err()
            .to_string();
        assert!(message.contains(ENV_SLOW_NOTICE), "{message}");
    }

    #[test]
    fn zero_and_oversized_numbers_are_rejected_with_the_reason() {
        let message = |pairs| {
            Config::default()
                .apply_vars(env(pairs))
                .unwrap_err()
                .to_string()
        };
        let zero = message(&[(ENV_EXECUTIONS, "0")]);
        assert!(
            zero.contains("executions (INTERLEAVE_EXECUTIONS) must be at least 1"),
            "{zero}"
        );
        let huge = message(&[(ENV_EXECUTIONS, "99999999999999999999")]);
        assert!(
            huge.contains("too large: at most 18446744073709551615"),
            "{huge}"
        );
        let word = message(&[(ENV_SEED, "many")]);
        assert!(word.contains("expected a whole number"), "{word}");
    }

    #[test]
    fn failures_are_saved_except_in_ci() {
        let saves = |pairs| persistence_under(pairs).is_some_and(|p| p.save);
        assert!(saves(&[]));
        assert!(!saves(&[(ENV_CI, "true")]));
        assert!(!saves(&[(ENV_CI, "1")]));
        assert!(saves(&[(ENV_CI, "false")]), "CI=false is not CI");
        assert!(saves(&[(ENV_CI, "")]));
        assert!(saves(&[(ENV_CI, "true"), (ENV_PERSIST, "on")]));
        assert!(
            !saves(&[(ENV_CI, "true"), (ENV_PERSIST, " ")]),
            "a blank value is unset"
        );
    }

    #[test]
    fn the_persist_variable_turns_regression_files_off_or_moves_them() {
        assert_eq!(persistence_under(&[(ENV_PERSIST, "off")]), None);
        assert_eq!(persistence_under(&[(ENV_PERSIST, "false")]), None);
        assert_eq!(persistence_under(&[(ENV_PERSIST, "No")]), None);
        let on = persistence_under(&[(ENV_PERSIST, "true"), (ENV_CI, "true")]).expect("on");
        assert!(on.save);
        assert_eq!(
            on.directory,
            PathBuf::from("crate/interleave-regressions"),
            "true is a switch, not a directory"
        );
        assert_eq!(
            persistence_under(&[(ENV_PERSIST, "OFF"), (ENV_CI, "true")]),
            None
        );
        let moved = persistence_under(&[(ENV_PERSIST, "/tmp/regressions"), (ENV_CI, "true")])
            .expect("still on");
        assert_eq!(moved.directory, PathBuf::from("/tmp/regressions"));
        assert_eq!(moved.test_name, "tests::t");
        assert!(moved.save, "a directory asks for saving, even in CI");
        let relative = persistence_under(&[(ENV_PERSIST, "regressions/")]).expect("on");
        assert_eq!(relative.directory, PathBuf::from("regressions/"));
        let typos: [&'static [(&str, &str)]; 3] = [
            &[(ENV_PERSIST, "maybe")],
            &[(ENV_PERSIST, "disabled")],
            &[(ENV_PERSIST, "onn")],
        ];
        for typo in typos {
            let message = persisted().apply_vars(env(typo)).unwrap_err().to_string();
            assert!(
                message.contains(ENV_PERSIST) && message.contains("written as a path"),
                "{typo:?}: {message}"
            );
        }
    }

    #[test]
    fn the_persist_variable_does_not_invent_a_test_name() {
        let mut config = Config::default();
        config.apply_vars(env(&[(ENV_PERSIST, "on")])).unwrap();
        assert_eq!(config.persistence, None);
        config
            .apply_vars(env(&[(ENV_PERSIST, "/tmp/regressions")]))
            .unwrap();
        assert_eq!(config.persistence, None);
    }

    #[test]
    fn an_unknown_memory_model_is_a_clear_error() {
        assert_eq!(Config::default().memory, MemoryModel::Weak);
        let error = Config::default()
            .apply_vars(env(&[(ENV_MEMORY, "tso")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("INTERLEAVE_MEMORY"), "{error}");
        assert!(error.contains("expected one of weak, sc"), "{error}");
    }

    #[test]
    fn bad_environment_values_name_the_variable() {
        let message = Config::default()
            .apply_vars(env(&[(ENV_STRATEGY, "bfs")]))
            .unwrap_err()
            .to_string();
        assert!(message.contains("INTERLEAVE_STRATEGY") && message.contains("unknown strategy"));
        let message = Config::default()
            .apply_vars(env(&[(ENV_WORKERS, "0")]))
            .unwrap_err()
            .to_string();
        assert!(message.contains("workers"), "{message}");
    }
}
