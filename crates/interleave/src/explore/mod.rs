//! The exploration driver: runs executions planned by a strategy, in rounds, on one or more
//! worker threads, verifies determinism, and assembles the [`Report`].
//!
//! Determinism across worker counts: a strategy plans a round of executions from what it
//! observed in earlier rounds only, every execution's randomness comes from a seed derived from
//! the exploration seed and the execution index, and outcomes are observed in index order. A
//! run with 1 worker and a run with 8 workers therefore execute the same schedules and report
//! the same first failure.
//!
//! This file holds the entry points (`Builder`, `check`, `replay`); `rounds.rs` runs the rounds,
//! `tree_split.rs` splits a depth-first search's tree among the workers instead,
//! `determinism.rs` re-runs executions to check that they repeat, and `replay.rs` replays tokens
//! and regression files.

use std::any::Any;
use std::collections::HashSet;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashSet;

use crate::analysis::online::serializability::{self, set_accesses};
use crate::analysis::stops::failure_text;
use crate::analysis::thread_label;
use crate::atomic_set::Declarations;
use crate::config::{Config, AUTOMATIC_WORKERS, ENV_REPLAY};
use crate::persistence::Persistence;
use crate::regressions::{self, SavedLine};
use crate::report::token::{block_fingerprints, fingerprint, Token, BLOCK};
use crate::report::{
    begin_exploration, current_exploration, render_interleaving, AtomicityViolation, Failure,
    FailureInfo, FailureKind, Persisted, Report,
};
use crate::runtime::op::{ShortSite, Site};
use crate::runtime::{self, Event, Finished, Limits, Recording, StopHandle};
use crate::strategy::hb::HbFingerprint;
use crate::strategy::replay::ReplaySchedule;
use crate::strategy::{execution_seed, Outcome, Schedule, Strategy, StrategySpec, TraceEvent};
use crate::{Error, RaceMode};

mod determinism;
mod prefix_split;
mod replay;
mod rounds;
mod shard;
mod slow_search;
mod tree_split;
mod workers;

use determinism::*;
use replay::*;
use rounds::*;
use workers::*;

pub(crate) use replay::run_token;
pub(crate) use rounds::{describe_failure, limits};

/// Rounds grow 1, 2, 4, ... up to the strategy's round size ([`Strategy::round_size`]), and
/// never past this many executions: a round's summaries wait in memory until it is observed.
const MAX_ROUND: usize = 1024;

/// Configures and runs an exploration.
///
/// ```
/// use interleave::sync::atomic::{AtomicUsize, Ordering};
/// use interleave::sync::Arc;
/// use interleave::thread;
///
/// let report = interleave::Builder::new()
///     .strategy("pct:d=2".parse().unwrap())
///     .executions(500)
///     .explore(|| {
///         let hits = Arc::new(AtomicUsize::new(0));
///         let other = hits.clone();
///         let t = thread::spawn(move || {
///             let seen = other.load(Ordering::SeqCst);
///             other.store(seen + 1, Ordering::SeqCst);
///         });
///         let seen = hits.load(Ordering::SeqCst);
///         hits.store(seen + 1, Ordering::SeqCst);
///         t.join().unwrap();
///         assert_eq!(hits.load(Ordering::SeqCst), 2, "an increment was lost");
///     })
///     .unwrap();
/// let failure = report.first_failure().expect("PCT finds the lost update");
/// assert_eq!(failure.kind, interleave::FailureKind::Panic);
/// ```
pub struct Builder {
    config: Config,
    custom: Option<Box<dyn Strategy>>,
    use_environment: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// Default settings (see [`Config`]), overridable by the environment.
    pub fn new() -> Builder {
        Builder::from_config(Config::default())
    }

    /// Starts from `config`.
    pub fn from_config(config: Config) -> Builder {
        Builder {
            config,
            custom: None,
            use_environment: true,
        }
    }

    /// The settings so far (before the environment is applied).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Uses a built-in strategy.
    pub fn strategy(mut self, spec: StrategySpec) -> Builder {
        self.config.strategy = spec;
        self.custom = None;
        self
    }

    /// Uses a strategy of your own. `INTERLEAVE_STRATEGY` still overrides it.
    pub fn custom_strategy(mut self, strategy: impl Strategy + 'static) -> Builder {
        self.custom = Some(Box::new(strategy));
        self
    }

    /// Runs at most `executions` executions.
    pub fn executions(mut self, executions: u64) -> Builder {
        self.config.executions = executions;
        self
    }

    /// Sets the exploration seed.
    pub fn seed(mut self, seed: u64) -> Builder {
        self.config.seed = seed;
        self
    }

    /// Fails an execution as a livelock after `steps` steps.
    pub fn max_steps(mut self, steps: u64) -> Builder {
        self.config.max_steps = steps;
        self
    }

    /// Runs executions on `workers` OS threads; 0 ([`crate::AUTOMATIC_WORKERS`], the
    /// default) runs them on one per core, or on one when the test uses a `static` primitive
    /// (see [`Config::workers`]). The report is the same whatever the count.
    pub fn workers(mut self, workers: usize) -> Builder {
        self.config.workers = workers;
        self
    }

    /// Runs only shard `number` of `count` (counted from 1) of the exploration, so that `count`
    /// machines split it; an invalid shard (`3/2`, `0/0`) is an error when the exploration
    /// starts. `INTERLEAVE_SHARD=i/n` overrides it. See [`Config::shard`] and the README's
    /// section on sharding.
    pub fn shard(mut self, number: u64, count: u64) -> Builder {
        self.config.shard = Some(crate::config::Shard::unchecked(number, count));
        self
    }

    /// Chooses whether data races on `cell::Var` fail the execution or warn.
    pub fn data_races(mut self, mode: RaceMode) -> Builder {
        self.config.data_races = mode;
        self
    }

    /// Keeps exploring after a failure, collecting every failing execution.
    pub fn stop_on_first_failure(mut self, stop: bool) -> Builder {
        self.config.stop_on_first_failure = stop;
        self
    }

    /// Sets the stack size of the program's threads (see [`Config::stack_size`]).
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.config.stack_size = bytes;
        self
    }

    /// Sets how long an execution may make no progress before the watchdog reports it and
    /// ends the process; `None` turns it off (see [`Config::watchdog`]).
    pub fn watchdog(mut self, timeout: Option<std::time::Duration>) -> Builder {
        self.config.watchdog = timeout;
        self
    }

    /// Sets how long an exploration may run before it says on the standard error that it is
    /// not finished, how far it got, and why an exhaustive search may never end; `None` turns
    /// the notice off (see
    /// [`Config::slow_search_notice`]).
    pub fn slow_search_notice(mut self, after: Option<std::time::Duration>) -> Builder {
        self.config.slow_search_notice = after;
        self
    }

    /// Lets `Condvar::wait` and `thread::park` wake spuriously, as std allows (see
    /// [`Config::spurious_wakeups`]).
    pub fn spurious_wakeups(mut self, on: bool) -> Builder {
        self.config.spurious_wakeups = on;
        self
    }

    /// Lets `thread::park` wake spuriously, as std allows, but not `Condvar::wait` (see
    /// [`Config::spurious_park_wakeups`]).
    pub fn spurious_park_wakeups(mut self, on: bool) -> Builder {
        self.config.spurious_park_wakeups = on;
        self
    }

    /// Lets `compare_exchange_weak` fail spuriously, as std allows, or not, whatever the
    /// strategy (by default the samplers let it and the exhaustive searches do not, see
    /// [`Config::spurious_cas_failures`]).
    pub fn spurious_cas_failures(mut self, on: bool) -> Builder {
        self.config.spurious_cas_failures = Some(on);
        self
    }

    /// Makes every panic fail the execution at once and leaks the panicking thread's stack
    /// instead of unwinding it, so a destructor that would panic during the unwind cannot abort
    /// the process (see [`Config::panic_stops_execution`]).
    pub fn panic_stops_execution(mut self, on: bool) -> Builder {
        self.config.panic_stops_execution = on;
        self
    }

    /// Makes a panic that ends a spawned thread or task fail the execution with that panic,
    /// as under loom and shuttle, instead of going to its `JoinHandle` (see
    /// [`Config::spawned_panics_fail`]).
    pub fn spawned_panics_fail(mut self, on: bool) -> Builder {
        self.config.spawned_panics_fail = on;
        self
    }

    /// Prints every step of a failing execution's interleaving instead of a shortened one (see
    /// [`Config::full_interleaving`]).
    pub fn full_interleaving(mut self, on: bool) -> Builder {
        self.config.full_interleaving = on;
        self
    }

    /// Sets how atomics behave: the weak memory model (the default) or sequential consistency
    /// (see [`Config::memory`]).
    pub fn memory(mut self, model: crate::MemoryModel) -> Builder {
        self.config.memory = model;
        self
    }

    /// Sets which stores a thread's atomic loads may still read after it yielded (see
    /// [`Config::yield_visibility`]).
    pub fn yield_visibility(mut self, rule: crate::YieldVisibility) -> Builder {
        self.config.yield_visibility = rule;
        self
    }

    /// Counts the distinct states reached (see [`Config::count_states`]).
    pub fn count_states(mut self, count: bool) -> Builder {
        self.config.count_states = count;
        self
    }

    /// Checks executions for atomic-set serializability violations (see
    /// [`Config::monitor_atomic_sets`]).
    pub fn monitor_atomic_sets(mut self, monitor: bool) -> Builder {
        self.config.monitor_atomic_sets = monitor;
        self
    }

    /// Lets `handle` (or any clone of it) stop the exploration from another OS thread (see
    /// [`Config::stop`]): once [`StopHandle::stop`] is called, the running executions end at
    /// their next scheduling point and no new one starts; the report says so
    /// ([`Report::stopped`]).
    ///
    /// ```
    /// use interleave::sync::atomic::{AtomicBool, Ordering};
    /// use interleave::StopHandle;
    ///
    /// let stop = StopHandle::new();
    /// let report = std::thread::scope(|scope| {
    ///     let exploring = scope.spawn(|| {
    ///         interleave::Builder::new()
    ///             .stop_handle(stop.clone())
    ///             .max_steps(u64::MAX)
    ///             .explore(|| {
    ///                 // Spins for ever, under control: every load is a scheduling point.
    ///                 let flag = AtomicBool::new(false);
    ///                 while !flag.load(Ordering::Relaxed) {}
    ///             })
    ///             .unwrap()
    ///     });
    ///     stop.stop();
    ///     exploring.join().unwrap()
    /// });
    /// assert!(report.stopped && report.is_ok());
    /// ```
    pub fn stop_handle(mut self, handle: StopHandle) -> Builder {
        self.config.stop = Some(handle);
        self
    }

    /// Turns the re-run that checks for uncontrolled nondeterminism on or off.
    pub fn check_determinism(mut self, check: bool) -> Builder {
        self.config.check_determinism = check;
        self
    }

    /// Saves the tokens of failing schedules in a regression file and replays the saved ones
    /// first, before exploring (see [`Persistence`]; `#[interleave::test]` does this itself).
    ///
    /// ```no_run
    /// use interleave::{Builder, Persistence};
    ///
    /// Builder::new()
    ///     .persist_failures(Persistence::in_crate(
    ///         env!("CARGO_MANIFEST_DIR"),
    ///         concat!(module_path!(), "::transfers_are_atomic"),
    ///     ))
    ///     .check(|| { /* the test */ });
    /// ```
    pub fn persist_failures(mut self, persistence: Persistence) -> Builder {
        self.config.persistence = Some(persistence);
        self
    }

    /// Ignores the `INTERLEAVE_*` environment variables (and `CI`).
    pub fn ignore_environment(mut self) -> Builder {
        self.use_environment = false;
        self
    }

    fn resolve(self) -> Result<(Config, Box<dyn Strategy>), Error> {
        let mut config = self.config;
        let chosen = config.strategy.clone();
        if self.use_environment {
            config.apply_env()?;
        } else {
            config.validate()?;
        }
        let strategy = match self.custom {
            Some(custom) if config.strategy == chosen => {
                // An automatic exploration that meets a `static` primitive starts again with a
                // strategy built from the config, which a custom strategy cannot be.
                if config.workers == AUTOMATIC_WORKERS {
                    config.workers = 1;
                }
                custom
            }
            _ => config.strategy.build(),
        };
        Ok((config, strategy))
    }

    /// Explores `f` and returns what was found.
    ///
    /// With a regression file ([`Builder::persist_failures`]), the tokens saved there are
    /// replayed first: the first that fails again is reported at once, as execution 0. The
    /// tokens of the failures the exploration then finds are saved there.
    #[track_caller]
    pub fn explore<F: Fn() + Sync>(self, f: F) -> Result<Report, Error> {
        let site = Location::caller();
        refuse_nesting(site)?;
        let (config, mut strategy) = self.resolve()?;
        let monitor = config.monitor_atomic_sets || strategy.monitors_atomic_sets();
        let mut notes = Vec::new();
        begin_exploration();
        if let Some(token) = config.replay.clone() {
            match recorded_by_another_test(&token) {
                None => return replay_with(&config, monitor, &token, &f, site),
                Some(note) => notes.push(note),
            }
        }
        let mut report =
            match &config.persistence {
                None => explore_with(&config, strategy.as_mut(), &f, site),
                Some(persistence) => {
                    if let Some(mut report) =
                        replay_saved(&config, persistence, monitor, &f, site, &mut notes)
                    {
                        // Every shard replays the saved tokens, and each says so in its summary:
                        // a failure there comes first, as execution 0, as it would unsharded.
                        report.shard = shard::Sharding::new(config.shard, strategy.as_ref())
                            .summary(&config, &report, current_exploration());
                        return Ok(report);
                    }
                    let mut report = explore_with(&config, strategy.as_mut(), &f, site);
                    save_failures(persistence, &mut report.failures);
                    report
                }
            };
        notes.append(&mut report.notes);
        report.notes = notes;
        Ok(report)
    }

    /// Explores `f` and panics with the report of the first failure. When nothing fails,
    /// the report's notes (skipped lines of the regression file, such as a saved token that no
    /// longer replays) are written straight to the process's standard error, past the test
    /// harness's capture, so they are seen without `--nocapture`; each note once per process.
    #[track_caller]
    pub fn check<F: Fn() + Sync>(self, f: F) {
        match self.explore(f) {
            Err(error) => panic!("interleave: {error}"),
            Ok(report) => {
                if let Some(summary) = &report.shard {
                    show_once(&summary.to_line(), "");
                }
                if let Some(failure) = report.first_failure() {
                    let notes: String = report
                        .notes
                        .iter()
                        .map(|note| format!("\n\nnote: {note}"))
                        .collect();
                    panic!("{failure}{notes}");
                }
                for note in &report.notes {
                    show_once(note, "interleave: note: ");
                }
            }
        }
    }

    /// Re-runs the one execution recorded in `token`.
    #[track_caller]
    pub fn replay<F: Fn() + Sync>(self, token: &str, f: F) -> Result<Report, Error> {
        let site = Location::caller();
        refuse_nesting(site)?;
        let (config, strategy) = self.resolve()?;
        let monitor = config.monitor_atomic_sets || strategy.monitors_atomic_sets();
        replay_with(&config, monitor, token, &f, site)
    }
}

/// Refuses an exploration started at `site` inside an execution (a test that calls `check` in
/// a test that runs under interleave): the inner one would run its executions on the outer
/// one's threads, or block it on workers it cannot see.
fn refuse_nesting(site: Site) -> Result<(), Error> {
    if runtime::in_execution() {
        return Err(Error::Nested {
            site: ShortSite(site).to_string(),
        });
    }
    Ok(())
}

/// Explores `f` with the default settings (10,000 executions of the `auto` portfolio,
/// overridable by the `INTERLEAVE_*` environment variables) and panics with a report on the
/// first failure.
///
/// `f` runs more often than the execution count: the determinism check runs executions 0, 1,
/// 2, 4, 8, ... and a failing one a second time under the same schedule
/// ([`Config::check_determinism`](crate::Config::check_determinism)), so a counter kept outside
/// the closure sees those runs too.
#[track_caller]
pub fn check<F: Fn() + Sync>(f: F) {
    Builder::new().check(f);
}

/// Re-runs the execution recorded in `token` (printed in a failure report) and panics with the
/// report if it fails again; a malformed or stale token panics with an explanation.
#[track_caller]
pub fn replay<F: Fn() + Sync>(token: &str, f: F) {
    match Builder::new().replay(token, f) {
        Err(error) => panic!("interleave::replay: {error}"),
        Ok(report) => {
            if let Some(failure) = report.first_failure() {
                panic!("{failure}");
            }
        }
    }
}

/// An execution index, its schedule, and whether to keep its trace.
type Plan = (u64, Box<dyn Schedule + Send>, bool);

/// Writes `note` after `prefix` to the process's standard error unless it was written before.
/// The test harness captures only what the print macros write, so a note written through the
/// stream itself shows in the output of `cargo test` without `--nocapture`.
fn show_once(note: &str, prefix: &str) {
    use std::io::Write;
    static SHOWN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut shown = SHOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if shown.iter().any(|earlier| earlier == note) {
        return;
    }
    shown.push(note.to_string());
    // A closed standard error leaves nowhere to say it; the test still passes.
    let _ = writeln!(std::io::stderr().lock(), "{prefix}{note}");
}
