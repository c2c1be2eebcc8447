//! The exploration driver: runs executions planned by a strategy, in rounds, on one or more
//! worker threads, verifies determinism, and assembles the [`Report`].
//!
//! Determinism across worker counts: a strategy plans a round of executions from what it
//! observed in earlier rounds only, every execution's randomness comes from a seed derived from
//! the exploration seed and the execution index, and outcomes are observed in index order. A
//! run with 1 worker and a run with 8 workers therefore execute the same schedules and report
//! the same first failure.

use std::any::Any;
use std::collections::HashSet;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashSet;

use crate::analysis::online::serializability::{self, set_accesses};
use crate::analysis::thread_label;
use crate::atomic_set::Declarations;
use crate::config::Config;
use crate::persistence::Persistence;
use crate::regressions::{self, SavedLine};
use crate::report::token::{block_fingerprints, fingerprint, Token, BLOCK};
use crate::report::{
    render_interleaving, AtomicityViolation, Failure, FailureInfo, FailureKind, Persisted, Report,
};
use crate::runtime::op::{ShortSite, Site};
use crate::runtime::{self, Event, Execution, Limits};
use crate::strategy::hb::HbFingerprint;
use crate::strategy::replay::ReplaySchedule;
use crate::strategy::{execution_seed, Outcome, Schedule, Strategy, StrategySpec, TraceEvent};
use crate::{Error, RaceMode};

/// Rounds grow 1, 2, 4, ... up to this many executions.
const MAX_ROUND: usize = 64;

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

    /// Runs executions on `workers` OS threads.
    pub fn workers(mut self, workers: usize) -> Builder {
        self.config.workers = workers;
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

    /// Lets `Condvar::wait` and `thread::park` wake spuriously, as std allows (see
    /// [`Config::spurious_wakeups`]).
    pub fn spurious_wakeups(mut self, on: bool) -> Builder {
        self.config.spurious_wakeups = on;
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
            Some(custom) if config.strategy == chosen => custom,
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
        let (config, mut strategy) = self.resolve()?;
        let monitor = config.monitor_atomic_sets || strategy.monitors_atomic_sets();
        if let Some(token) = config.replay.clone() {
            return replay_with(&config, monitor, &token, &f, site);
        }
        let Some(persistence) = &config.persistence else {
            return Ok(explore_with(&config, strategy.as_mut(), &f, site));
        };
        let mut notes = Vec::new();
        if let Some(report) = replay_saved(&config, persistence, monitor, &f, site, &mut notes) {
            return Ok(report);
        }
        let mut report = explore_with(&config, strategy.as_mut(), &f, site);
        save_failures(persistence, &mut report.failures);
        notes.append(&mut report.notes);
        report.notes = notes;
        Ok(report)
    }

    /// Explores `f` and panics with the report of the first failure. When nothing fails,
    /// the report's notes (skipped lines of the regression file) go to standard error, which
    /// the test harness shows only on request (`--nocapture`).
    #[track_caller]
    pub fn check<F: Fn() + Sync>(self, f: F) {
        match self.explore(f) {
            Err(error) => panic!("interleave: {error}"),
            Ok(report) => {
                if let Some(failure) = report.first_failure() {
                    let notes: String = report
                        .notes
                        .iter()
                        .map(|note| format!("\n\nnote: {note}"))
                        .collect();
                    panic!("{failure}{notes}");
                }
                for note in &report.notes {
                    eprintln!("interleave: note: {note}");
                }
            }
        }
    }

    /// Re-runs the one execution recorded in `token`.
    #[track_caller]
    pub fn replay<F: Fn() + Sync>(self, token: &str, f: F) -> Result<Report, Error> {
        let site = Location::caller();
        let (config, strategy) = self.resolve()?;
        let monitor = config.monitor_atomic_sets || strategy.monitors_atomic_sets();
        replay_with(&config, monitor, token, &f, site)
    }
}

/// Explores `f` with the default settings (1,000 random executions, overridable by the
/// `INTERLEAVE_*` environment variables) and panics with a report on the first failure.
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

/// What one exploration run shares with its workers.
struct Run<'a> {
    f: &'a (dyn Fn() + Sync),
    /// Where the exploration was started: the main thread's spawn site.
    site: Site,
    limits: Limits,
    spec: String,
    seed: u64,
    check_determinism: bool,
    count_states: bool,
    monitor_atomic_sets: bool,
}

/// The result of one execution as the driver keeps it.
struct Summary {
    index: u64,
    steps: u64,
    threads: usize,
    lock_acquisitions: u64,
    abandoned: bool,
    trace: Option<Vec<TraceEvent>>,
    /// The happens-before fingerprint of every prefix, when counting states.
    states: Vec<u128>,
    feedback: Option<Box<dyn Any + Send>>,
    failure: Option<Failure>,
    warnings: Vec<String>,
    /// What the program declared, when the strategy asked for the trace.
    declarations: Option<Declarations>,
    violations: Vec<AtomicityViolation>,
}

pub(crate) fn limits(config: &Config) -> Limits {
    Limits {
        narrator: &crate::report::NARRATOR,
        max_steps: config.max_steps,
        stack_size: config.stack_size,
        races: config.data_races,
        log_values: false,
        watchdog: config.watchdog,
        spurious_wakeups: config.spurious_wakeups,
    }
}

/// Replays the tokens saved in the regression file of `persistence` and returns the report of
/// the first that fails again. Lines that are not tokens, tokens that no longer replay, and a
/// file that cannot be read become `notes`.
fn replay_saved(
    config: &Config,
    persistence: &Persistence,
    monitor_atomic_sets: bool,
    f: &(dyn Fn() + Sync),
    site: Site,
    notes: &mut Vec<String>,
) -> Option<Report> {
    let file = persistence.file();
    let lines = match regressions::load(&file) {
        Ok(lines) => lines,
        Err(error) => {
            notes.push(format!("{error}; exploring without its saved schedules"));
            return None;
        }
    };
    // Every malformed line is noted, even those after a token that fails again.
    let mut tokens = Vec::new();
    for saved in lines {
        match saved {
            SavedLine::Token { line, token } => tokens.push((line, token)),
            SavedLine::Malformed { line, error } => notes.push(format!(
                "skipped line {line} of the regression file {}: {error}; delete that line",
                file.display()
            )),
            SavedLine::NotText { line } => notes.push(format!(
                "skipped line {line} of the regression file {}: it is not UTF-8 text, so it \
                 is neither a token nor a comment; delete that line",
                file.display()
            )),
        }
    }
    for (line, token) in tokens {
        let mut report = replay_token(
            config,
            monitor_atomic_sets,
            &token,
            f,
            site,
            ReplayMode::Regression,
        );
        let Some(failure) = report.failures.first_mut() else {
            // The saved failure does not happen any more: the bug is fixed, and the token
            // stays in the file as a regression test.
            continue;
        };
        if failure.kind == FailureKind::Divergence {
            notes.push(format!(
                "skipped the token on line {line} of the regression file {}: it no longer \
                 replays, because the program performs different operations than when it was \
                 saved; delete that token and the comment above it",
                file.display()
            ));
            continue;
        }
        failure.persisted = Some(Persisted::ReplayedFrom {
            file: file.clone(),
            line,
        });
        report.notes = std::mem::take(notes);
        return Some(report);
    }
    None
}

/// Appends the tokens of `failures` to the regression file of `persistence` (unless saving is
/// off), and records in each failure what happened to its token.
fn save_failures(persistence: &Persistence, failures: &mut [Failure]) {
    let file = persistence.file();
    for failure in failures {
        let not_saved = |reason: &str| Persisted::NotSaved {
            file: file.clone(),
            reason: reason.to_string(),
        };
        let replayable = !matches!(
            failure.kind,
            FailureKind::Nondeterminism | FailureKind::Divergence
        );
        failure.persisted = Some(if !replayable {
            not_saved("an execution that behaved differently when re-run cannot be replayed")
        } else if !persistence.save {
            not_saved(
                "saving is off (it is by default when the environment variable CI is set; \
                 INTERLEAVE_PERSIST=on turns it on)",
            )
        } else {
            match regressions::append(persistence, failure) {
                Ok(file) => Persisted::SavedTo { file },
                Err(error) => not_saved(&error.to_string()),
            }
        });
    }
}

fn explore_with(
    config: &Config,
    strategy: &mut dyn Strategy,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Report {
    let run = Run {
        f,
        site,
        limits: limits(config),
        spec: strategy.spec(),
        seed: config.seed,
        check_determinism: config.check_determinism,
        count_states: config.count_states,
        monitor_atomic_sets: config.monitor_atomic_sets || strategy.monitors_atomic_sets(),
    };
    let mut report = Report::new(run.spec.clone(), config.seed);
    let mut seen_warnings = HashSet::new();
    let mut seen_violations = HashSet::new();
    let mut states: FxHashSet<u128> = FxHashSet::default();
    let mut round = 1usize;
    let mut next = 0u64;
    'rounds: while next < config.executions {
        let size = (round.min(strategy.round_size().max(1)) as u64).min(config.executions - next);
        let mut plans = Vec::new();
        for index in next..next + size {
            match strategy.plan(index, execution_seed(config.seed, index)) {
                Some(schedule) => plans.push((index, schedule, strategy.wants_trace(index))),
                None => break,
            }
        }
        let planned = plans.len() as u64;
        for summary in execute(&run, plans, config.workers, config.stop_on_first_failure) {
            strategy.observe(
                summary.index,
                &Outcome {
                    steps: summary.steps,
                    threads: summary.threads,
                    failed: summary.failure.is_some(),
                    abandoned: summary.abandoned,
                    lock_acquisitions: summary.lock_acquisitions,
                    trace: summary.trace.as_deref(),
                    feedback: summary.feedback.as_deref(),
                    declarations: summary.declarations.as_ref(),
                    violations: summary.violations.len(),
                },
            );
            report.executions += 1;
            report.steps += summary.steps;
            if !summary.violations.is_empty() {
                report.violating_executions += 1;
            }
            for violation in summary.violations {
                if seen_violations.insert(violation.key.clone()) {
                    report.violations.push(violation);
                }
            }
            states.extend(summary.states);
            for warning in summary.warnings {
                if seen_warnings.insert(warning.clone()) {
                    report.warnings.push(warning);
                }
            }
            if let Some(failure) = summary.failure {
                report.failures.push(failure);
                if config.stop_on_first_failure {
                    break 'rounds;
                }
            }
        }
        if planned < size {
            break;
        }
        next += planned;
        round = (round * 2).min(MAX_ROUND);
    }
    report.strategy_stats = strategy.stats();
    report.states = config.count_states.then_some(states.len() as u64);
    for warning in strategy.warnings() {
        if seen_warnings.insert(warning.clone()) {
            report.warnings.push(warning);
        }
    }
    report
}

/// Runs the planned executions, on `workers` threads, and returns their summaries in index
/// order. With `stop_early`, executions after a failing one may be skipped.
/// An execution index, its schedule, and whether to keep its trace.
type Plan = (u64, Box<dyn Schedule + Send>, bool);

fn execute(run: &Run<'_>, plans: Vec<Plan>, workers: usize, stop_early: bool) -> Vec<Summary> {
    if workers <= 1 || plans.len() <= 1 {
        let mut summaries = Vec::with_capacity(plans.len());
        for (index, schedule, keep_trace) in plans {
            let summary = run_one(run, index, schedule, keep_trace);
            let failed = summary.failure.is_some();
            summaries.push(summary);
            if failed && stop_early {
                break;
            }
        }
        return summaries;
    }
    let first_failure = AtomicU64::new(u64::MAX);
    let next_plan = AtomicUsize::new(0);
    let plans: Vec<Mutex<Option<Plan>>> = plans.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let summaries = Mutex::new(Vec::with_capacity(plans.len()));
    std::thread::scope(|scope| {
        for _ in 0..workers.min(plans.len()) {
            scope.spawn(|| loop {
                let position = next_plan.fetch_add(1, Ordering::Relaxed);
                let Some(plan) = plans.get(position) else {
                    break;
                };
                let Some((index, schedule, keep_trace)) = plan.lock().expect("plan lock").take()
                else {
                    continue;
                };
                if stop_early && index > first_failure.load(Ordering::Relaxed) {
                    continue;
                }
                let summary = run_one(run, index, schedule, keep_trace);
                if summary.failure.is_some() {
                    first_failure.fetch_min(index, Ordering::Relaxed);
                }
                summaries.lock().expect("summary lock").push(summary);
            });
        }
    });
    let mut summaries = summaries.into_inner().expect("summary lock");
    summaries.sort_by_key(|s| s.index);
    summaries
}

fn run_one(
    run: &Run<'_>,
    index: u64,
    schedule: Box<dyn Schedule + Send>,
    keep_trace: bool,
) -> Summary {
    let mut ex = runtime::run(run.f, run.site, schedule, run.limits);
    let mut failure = ex
        .failure
        .clone()
        .map(|info| failure_of(run, index, &ex, &info));
    // Re-running executions 0, 1, 2, 4, 8, ... costs about log2(executions) extra runs and
    // catches nondeterminism that one comparison could miss by chance.
    let sampled = index == 0 || index.is_power_of_two();
    // An abandoned execution stopped where its schedule chose to; a replay of its steps could
    // not tell that stop from a divergence. One that met something outside the schedule's
    // control (a stack it could not allocate, a wake from a foreign OS thread) says nothing
    // about the program's determinism either.
    if run.check_determinism
        && !ex.abandoned
        && !ex.outside_control
        && (sampled || failure.is_some())
    {
        if let Some(difference) = rerun_difference(run, &ex) {
            failure = Some(match failure {
                // The program's own failure (the assertion that failed, the deadlock) is what
                // the user must see; that the run does not repeat is a note on it.
                Some(mut first) => {
                    first.message = format!("{}\n\nnote: {difference}", first.message);
                    first
                }
                None => {
                    let info = FailureInfo {
                        kind: FailureKind::Nondeterminism,
                        message: difference,
                        thread: None,
                        site: None,
                        stop: None,
                    };
                    failure_of(run, index, &ex, &info)
                }
            });
        }
    }
    let events =
        (keep_trace || run.count_states || run.monitor_atomic_sets).then(|| crate::trace::of(&ex));
    let declarations = (keep_trace || run.monitor_atomic_sets)
        .then(|| Declarations::of(&ex))
        .flatten();
    let violations = match (&events, &declarations) {
        (Some(events), Some(declarations)) if run.monitor_atomic_sets => {
            atomicity_violations(&ex, index, events, declarations)
        }
        _ => Vec::new(),
    };
    let states = match (&events, run.count_states) {
        (Some(events), true) => prefix_fingerprints(events),
        _ => Vec::new(),
    };
    let summary = Summary {
        index,
        steps: ex.steps(),
        threads: ex.threads.len(),
        lock_acquisitions: ex.lock_acquisitions,
        abandoned: ex.abandoned,
        trace: events.filter(|_| keep_trace),
        states,
        feedback: ex.schedule.feedback(),
        failure,
        warnings: std::mem::take(&mut ex.warnings),
        declarations: declarations.filter(|_| keep_trace),
        violations,
    };
    ex.recycle();
    summary
}

/// The atomic-set serializability violations execution `index` produced.
fn atomicity_violations(
    ex: &Execution,
    index: u64,
    events: &[TraceEvent],
    declarations: &Declarations,
) -> Vec<AtomicityViolation> {
    let accesses = set_accesses(events, declarations);
    serializability::violations(&accesses)
        .iter()
        .map(|v| AtomicityViolation::describe(ex, index, events, declarations, v))
        .collect()
}

/// The happens-before fingerprint of every prefix of `events` (the empty one included).
fn prefix_fingerprints(events: &[TraceEvent]) -> Vec<u128> {
    let mut fingerprint = HbFingerprint::default();
    let mut all = vec![fingerprint.value()];
    for event in events {
        fingerprint.add(event);
        all.push(fingerprint.value());
    }
    all
}

fn failure_of(run: &Run<'_>, index: u64, ex: &Execution, info: &FailureInfo) -> Failure {
    describe_failure(&run.spec, run.seed, index, ex, info)
}

/// The report of execution `index`'s failure `info`, found by the strategy `spec` with `seed`.
pub(crate) fn describe_failure(
    spec: &str,
    seed: u64,
    index: u64,
    ex: &Execution,
    info: &FailureInfo,
) -> Failure {
    Failure {
        execution: index,
        kind: info.kind,
        message: info.message.clone(),
        token: Token::from_run(ex, Some(info.kind)).encode(),
        steps: ex.steps(),
        thread: info.thread.map(|t| thread_label(ex, t)),
        site: info.site.clone(),
        interleaving: render_interleaving(ex),
        persisted: None,
        strategy: spec.to_string(),
        seed,
    }
}

fn describe_event(ex: &Execution, event: &Event) -> String {
    let mut text = format!("thread {} {}", event.thread, event.kind.name());
    if let Some(object) = ex.objects.get(event.object as usize) {
        text.push_str(&format!(" {}", object.id));
    }
    format!("{text} at {}", ShortSite(event.site))
}

/// Re-runs `first`'s schedule and describes the first difference, if any.
fn rerun_difference(run: &Run<'_>, first: &Execution) -> Option<String> {
    let schedule = ReplaySchedule::new(
        first.events.iter().map(|e| e.thread).collect(),
        first.values.clone(),
    );
    let second = runtime::run(run.f, run.site, Box::new(schedule), run.limits);
    let kind = |ex: &Execution| ex.failure.as_ref().map(|f| f.kind);
    let differing = first
        .events
        .iter()
        .zip(&second.events)
        .position(|(a, b)| first.step_identity(a) != second.step_identity(b));
    let difference = match differing {
        Some(step) => Some(format!(
            "at step {}, the first run did `{}` and the second did `{}`",
            step + 1,
            describe_event(first, &first.events[step]),
            describe_event(&second, &second.events[step]),
        )),
        None if first.events.len() != second.events.len() => Some(format!(
            "the first run took {} steps and the second {}",
            first.events.len(),
            second.events.len()
        )),
        None if kind(first) != kind(&second) => Some(format!(
            "the first run ended with {} and the second with {}",
            kind(first).map_or("success".to_string(), |k| k.to_string()),
            kind(&second).map_or("success".to_string(), |k| k.to_string()),
        )),
        None => None,
    };
    // What the second run failed with is often the clue (an assertion on a counter kept in a
    // std static), so it is shown unless the first run failed the same way.
    let second_failure = second
        .failure
        .as_ref()
        .filter(|f| first.failure.as_ref().map(|g| &g.message) != Some(&f.message))
        .map(|f| format!("\nThe second run failed with {}: {}", f.kind, f.message))
        .unwrap_or_default();
    second.recycle();
    difference.map(|difference| {
        format!(
            "the program behaved differently when re-run under the same schedule: \
             {difference}.{second_failure}\n\
             It depends on something interleave does not control: std::sync or std::thread used \
             directly, HashMap/HashSet iteration order (RandomState), the clock, randomness \
             outside interleave::rand, or state kept in statics between executions. \
             interleave re-runs executions 0, 1, 2, 4, 8, ... and every failing one to check \
             this; a test that deliberately keeps state across executions (a std static counting \
             runs) can turn the check off with `Builder::check_determinism(false)`."
        )
    })
}

fn replay_with(
    config: &Config,
    monitor_atomic_sets: bool,
    text: &str,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Result<Report, Error> {
    let token = Token::decode(text)?;
    let mut report = replay_token(
        config,
        monitor_atomic_sets,
        &token,
        f,
        site,
        ReplayMode::Exact,
    );
    if report.is_ok() {
        if let Some(kind) = token.failure {
            report.warnings.push(format!(
                "the recorded {kind} did not happen again, although the program performed \
                 the same operations: the failure depends on data the scheduler does not see"
            ));
        }
    }
    Ok(report)
}

/// How a replay treats a program that no longer performs the operations it recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReplayMode {
    /// Any difference is a divergence (`interleave::replay`, `INTERLEAVE_REPLAY`): the point is
    /// to see the recorded execution again.
    Exact,
    /// A failure counts even when the operations differ (tokens of a regression file): it is a
    /// failure of the program as it is now, and its report carries a token of its own. Source
    /// locations are part of the recorded operations, so otherwise any edit that moves the
    /// test's code would make every saved token useless.
    Regression,
}

/// Runs the one execution `token` records, with the token's settings.
/// The limits a replay of `token` runs with: the token's settings, not the caller's, because
/// they are part of what the execution did.
fn token_limits(config: &Config, token: &Token) -> Limits {
    Limits {
        narrator: &crate::report::NARRATOR,
        max_steps: token.max_steps,
        races: token.races,
        spurious_wakeups: token.spurious_wakeups,
        ..limits(config)
    }
}

/// Runs the one execution `token` records.
pub(crate) fn run_token(
    config: &Config,
    token: &Token,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Box<Execution> {
    let schedule = ReplaySchedule::from_runs(token.runs.clone(), token.values.clone());
    runtime::run(f, site, Box::new(schedule), token_limits(config, token))
}

fn replay_token(
    config: &Config,
    monitor_atomic_sets: bool,
    token: &Token,
    f: &(dyn Fn() + Sync),
    site: Site,
    mode: ReplayMode,
) -> Report {
    let run = Run {
        f,
        site,
        limits: token_limits(config, token),
        spec: "replay".to_string(),
        seed: config.seed,
        check_determinism: false,
        count_states: false,
        monitor_atomic_sets,
    };
    let ex = run_token(config, token, f, site);
    let mut report = Report::new(run.spec.clone(), config.seed);
    report.executions = 1;
    report.steps = ex.steps();
    report.warnings = ex.warnings.clone();
    if run.monitor_atomic_sets {
        if let Some(declarations) = Declarations::of(&ex) {
            report.violations = atomicity_violations(&ex, 0, &crate::trace::of(&ex), &declarations);
            report.violating_executions = u64::from(!report.violations.is_empty());
        }
    }
    let info = match &ex.failure {
        // The runtime saw the step where the recorded schedule became impossible; the report
        // also says where the operations first differed, which may be much earlier.
        Some(failure) if failure.kind == FailureKind::Divergence => Some(FailureInfo {
            message: locate_divergence(&ex, token, Some(&failure.message)),
            ..failure.clone()
        }),
        Some(failure) if mode == ReplayMode::Regression => Some(failure.clone()),
        _ if fingerprint(&ex) != token.fingerprint => Some(FailureInfo {
            kind: FailureKind::Divergence,
            message: locate_divergence(&ex, token, None),
            thread: None,
            site: None,
            stop: None,
        }),
        failure => failure.clone(),
    };
    if let Some(info) = info {
        report.failures.push(failure_of(&run, 0, &ex, &info));
    }
    report
}

/// The steps (numbered from 1, as in the interleaving) within which the replayed operations
/// first differed from the recorded ones. The token keeps one fingerprint per [`BLOCK`] steps,
/// so the answer is the first block whose fingerprints differ; when every block both runs
/// completed matches, it is the steps after them up to the first step only one run has.
fn first_difference(ex: &Execution, token: &Token) -> (u64, u64) {
    let replayed = ex.events.len() as u64;
    let recorded = token.steps();
    let block = BLOCK as u64;
    let mut matched = 0;
    for (index, (now, then)) in block_fingerprints(ex).iter().zip(&token.blocks).enumerate() {
        let begin = index as u64 * block;
        let end = (begin + block).min(replayed);
        // A block that one run has only part of has a fingerprint over other steps.
        if end != (begin + block).min(recorded) {
            break;
        }
        if now != then {
            return (begin + 1, end);
        }
        matched = end;
    }
    if matched == replayed && replayed == recorded {
        // Every block matched and the runs are as long, yet the whole fingerprints differ: two
        // blocks collided in their 16 bits, so any step may be the one.
        return (1, replayed.max(1));
    }
    (matched + 1, replayed.min(recorded) + 1)
}

/// `at step 3` or `between steps 1 and 64`.
fn steps_text((first, last): (u64, u64)) -> String {
    if first == last {
        format!("at step {first}")
    } else {
        format!("between steps {first} and {last}")
    }
}

/// Explains a replay divergence: where the operations first differed from the recording and,
/// when the runtime stopped the replay, the step where the recorded schedule became impossible
/// (`impossible`, the runtime's explanation).
fn locate_divergence(ex: &Execution, token: &Token, impossible: Option<&str>) -> String {
    let range = first_difference(ex, token);
    let next = ex.events.len() as u64 + 1;
    if let (Some(impossible), true) = (impossible, range == (next, next)) {
        // Every step before the impossible one matched: the runtime's account says it all.
        return impossible.to_string();
    }
    let precision = if range.0 == range.1 {
        String::new()
    } else {
        format!(" (a token keeps one fingerprint per {BLOCK} steps, so it tells no closer)")
    };
    let differed = format!(
        "the replayed execution's operations first differed from the recording {}{precision}",
        steps_text(range)
    );
    match impossible {
        Some(impossible) => format!("{differed}; then {impossible}"),
        None => format!(
            "{differed}: the recording has {} steps, this run {}. The program changed since the \
             token was recorded, or it depends on something the scheduler does not control",
            token.steps(),
            ex.events.len()
        ),
    }
}
