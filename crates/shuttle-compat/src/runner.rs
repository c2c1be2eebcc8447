//! `Runner`, `PortfolioRunner` and the `check_*` functions: a scheduler's plan and a `Config`
//! become one `interleave::Builder` run, and its first failure becomes a panic: a panic of the
//! test's code is raised again with its own message after the report is printed, any other
//! failure panics with shuttle's key words in front of interleave's report. A portfolio runs
//! its schedulers' explorations at once, one OS thread each, as shuttle does, and stops the
//! others through one `interleave::StopHandle` when one fails.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use interleave::strategy::TimeBudget;
use interleave::{Failure, FailureKind, Report, StopHandle};

use crate::config::{Config, FailurePersistence, MaxSteps};
use crate::labels;
use crate::scheduler::{
    DfsScheduler, PctScheduler, Plan, RandomScheduler, ReplayScheduler, RoundRobinScheduler,
    Scheduler, UncontrolledNondeterminismCheckScheduler, UrwRandomScheduler,
};

/// interleave's smallest stack; shuttle's default (60 KiB) is below what interleave's runtime
/// needs, so a smaller configured size is raised to it.
const MIN_STACK_SIZE: usize = 256 * 1024;

/// Steps that stand for "no bound" (shuttle's `MaxSteps::None`).
const UNBOUNDED_STEPS: u64 = 1 << 40;

/// Runs a test under one scheduler.
#[derive(Debug)]
pub struct Runner<S: Scheduler> {
    scheduler: S,
    config: Config,
}

impl<S: Scheduler> Runner<S> {
    /// A runner of `scheduler` with `config`.
    pub fn new(scheduler: S, config: Config) -> Runner<S> {
        Runner { scheduler, config }
    }

    /// Runs `f` under the scheduler's executions and returns how many ran.
    ///
    /// # Panics
    /// With the report of the first failing execution.
    #[track_caller]
    pub fn run<F>(self, f: F) -> usize
    where
        F: Fn() + Send + Sync + 'static,
    {
        let report = explore(&self.scheduler.plan(), &self.config, &f, None);
        if let Some(failure) = first_failure(&report, &self.config) {
            fail(failure, &self.config);
        }
        report.executions as usize
    }
}

/// Runs a test under several schedulers at once, each on its own OS thread.
#[derive(Debug)]
pub struct PortfolioRunner {
    stop_on_first_failure: bool,
    config: Config,
    plans: Vec<Plan>,
}

impl PortfolioRunner {
    /// An empty portfolio; with `stop_on_first_failure` the first scheduler to fail stops the
    /// others, otherwise every scheduler runs to its end (see [`PortfolioRunner::run`]).
    pub fn new(stop_on_first_failure: bool, config: Config) -> PortfolioRunner {
        PortfolioRunner {
            stop_on_first_failure,
            config,
            plans: Vec::new(),
        }
    }

    /// Adds a scheduler.
    pub fn add(&mut self, scheduler: impl Scheduler + Send + 'static) {
        self.plans.push(scheduler.plan());
    }

    /// Runs `f` under every scheduler at once, each scheduler's exploration on its own OS
    /// thread (named as the calling thread, so failure tokens name the test) and as
    /// deterministic as it is alone.
    ///
    /// With `stop_on_first_failure`, the first exploration to end with a failure (first in
    /// time) stops the others through an [`interleave::StopHandle`]: each ends its current
    /// execution at its next scheduling point, abandoning that execution's threads without
    /// running their destructors, and the failure is raised as [`Runner::run`] raises one.
    /// Without it, every scheduler runs to its end and the failure raised is that of the
    /// earliest-added scheduler that failed, so the report does not depend on timing.
    ///
    /// # Panics
    /// With the report of the failure chosen above. A panic of a scheduler's exploration
    /// itself (a refused scheduler, a bad configuration) stops the others too and is raised
    /// again, the earliest-added scheduler's first, before any failure.
    #[track_caller]
    pub fn run<F>(self, f: F)
    where
        F: Fn() + Send + Sync + 'static,
    {
        let stop_on_first_failure = self.stop_on_first_failure;
        let stop = StopHandle::new();
        // The index of the first exploration to end with a failure, in time.
        let first_in_time = AtomicUsize::new(usize::MAX);
        let outcomes: Vec<Mutex<Option<Outcome>>> =
            self.plans.iter().map(|_| Mutex::new(None)).collect();
        let name = std::thread::current().name().map(str::to_string);
        std::thread::scope(|scope| {
            for (index, plan) in self.plans.iter().enumerate() {
                let (f, stop, config) = (&f, &stop, &self.config);
                let (first_in_time, outcome) = (&first_in_time, &outcomes[index]);
                let mut thread = std::thread::Builder::new();
                if let Some(name) = &name {
                    thread = thread.name(name.clone());
                }
                let explores = move || {
                    let result = panic::catch_unwind(AssertUnwindSafe(|| {
                        explore(plan, config, f, Some(stop))
                    }));
                    let finished = match result {
                        Ok(report) => {
                            let failure = first_failure(&report, config).cloned();
                            if failure.is_some()
                                && stop_on_first_failure
                                && first_in_time
                                    .compare_exchange(
                                        usize::MAX,
                                        index,
                                        Ordering::AcqRel,
                                        Ordering::Acquire,
                                    )
                                    .is_ok()
                            {
                                stop.stop();
                            }
                            Outcome::Finished(failure.map(Box::new))
                        }
                        // Whatever went wrong, the others must not wait for this one.
                        Err(payload) => {
                            stop.stop();
                            Outcome::Panicked(payload)
                        }
                    };
                    *outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(finished);
                };
                if let Err(error) = thread.spawn_scoped(scope, explores) {
                    stop.stop();
                    *outcomes[index].lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(Outcome::Panicked(Box::new(format!(
                            "interleave-shuttle: could not start the portfolio's thread for \
                             scheduler {index}: {error}"
                        ))));
                }
            }
        });
        let mut outcomes: Vec<Option<Outcome>> = outcomes
            .into_iter()
            .map(|outcome| outcome.into_inner().unwrap_or_else(|p| p.into_inner()))
            .collect();
        let panicked = outcomes
            .iter()
            .position(|outcome| matches!(outcome, Some(Outcome::Panicked(_))));
        if let Some(Some(Outcome::Panicked(payload))) = panicked.map(|index| outcomes[index].take())
        {
            panic::resume_unwind(payload);
        }
        let failure_of = |outcome: &Option<Outcome>| match outcome {
            Some(Outcome::Finished(Some(failure))) => Some(failure.as_ref().clone()),
            _ => None,
        };
        let chosen = match first_in_time.load(Ordering::Acquire) {
            usize::MAX => outcomes.iter().find_map(failure_of),
            index => failure_of(&outcomes[index]),
        };
        if let Some(failure) = chosen {
            fail(&failure, &self.config);
        }
    }
}

/// How one scheduler's exploration in a portfolio ended.
enum Outcome {
    /// It returned its report, with the failure to raise if it found one.
    Finished(Option<Box<Failure>>),
    /// It panicked itself, with this payload.
    Panicked(Box<dyn Any + Send>),
}
/// Fails the test with `failure`, as shuttle does: a panic of the test's code is raised again
/// with its own message (the report goes to stderr first, where shuttle prints the schedule),
/// so a test that catches it sees what the code panicked with; any other failure panics with
/// shuttle's key words in front of interleave's report.
#[track_caller]
fn fail(failure: &Failure, config: &Config) -> ! {
    let description = describe(failure, config);
    if failure.kind != FailureKind::Panic {
        panic!("{description}");
    }
    // shuttle returns at once from a panic with this setting and loses its payload.
    if config
        .ungraceful_shutdown_config
        .immediately_return_on_panic
    {
        panic!("Task panicked, and early return is enabled.\n\n{description}");
    }
    eprintln!("{description}");
    // The payload has the original's type where tests downcast it: a `&'static str` for
    // `panic!` with a literal, a `String` otherwise.
    match failure.static_panic_message() {
        Some(message) => std::panic::panic_any(message),
        None => std::panic::panic_any(failure.message.clone()),
    }
}

/// Runs the exploration `plan` describes under `config`, which `stop` ends early when it is
/// stopped. The report names the caller's line as where the main thread started (a test's
/// `check_random` call), not this crate's.
#[track_caller]
fn explore<F: Fn() + Sync>(
    plan: &Plan,
    config: &Config,
    f: &F,
    stop: Option<&StopHandle>,
) -> Report {
    if let Some(reason) = plan.refused {
        panic!("{reason}");
    }
    let mut builder = interleave::Builder::new()
        .strategy(plan.strategy.clone())
        .executions(plan.executions)
        .check_determinism(plan.check_determinism)
        .stack_size(config.stack_size.max(MIN_STACK_SIZE))
        // shuttle lets `thread::park` return without an unpark, as std does, but never wakes a
        // condition variable's waiter without a notification.
        .spurious_park_wakeups(true)
        // A panic that ends a spawned thread or task fails the test with its own payload at
        // once, as under shuttle, whose tasks do not catch their panics for `join`.
        .spawned_panics_fail(true)
        // shuttle returns at the first panic and never resumes the panicking task.
        .panic_stops_execution(
            config
                .ungraceful_shutdown_config
                .immediately_return_on_panic,
        );
    if let Some(seed) = plan.seed {
        builder = builder.seed(seed);
    }
    if let Some(stop) = stop {
        builder = builder.stop_handle(stop.clone());
    }
    builder = match config.max_steps {
        MaxSteps::None => builder.max_steps(UNBOUNDED_STEPS),
        MaxSteps::FailAfter(steps) => builder.max_steps(steps as u64),
        // Executions stopped at the bound are not failures: the search goes on past them and
        // `first_failure` skips them.
        MaxSteps::ContinueAfter(steps) => {
            builder.max_steps(steps as u64).stop_on_first_failure(false)
        }
    };
    if let Some(budget) = config.max_time {
        builder = builder.custom_strategy(TimeBudget::new(plan.strategy.build(), budget));
    }
    // Every execution starts with no labels but the main thread's name.
    let run = || {
        labels::reset();
        labels::adopt_as_main();
        f()
    };
    let outcome = match &plan.replay {
        Some(token) => builder.replay(token, run),
        None => builder.explore(run),
    };
    match outcome {
        Ok(report) => report,
        Err(error) => panic!("interleave-shuttle: {error}"),
    }
}

/// The failure to report: the first one, except executions that `MaxSteps::ContinueAfter`
/// stopped, which pass.
fn first_failure<'a>(report: &'a Report, config: &Config) -> Option<&'a Failure> {
    let continue_after = matches!(config.max_steps, MaxSteps::ContinueAfter(_));
    report
        .failures
        .iter()
        .find(|failure| !(continue_after && failure.kind == FailureKind::StepBound))
}

/// How interleave's explanation of a stop says that it came while the tasks left unfinished at
/// the end of the execution were being dropped.
const AT_END: &str = "unfinished at the end of the execution";

/// shuttle's key words for a failure, which `should_panic(expected = ...)` tests match.
fn key_words(failure: &Failure, config: &Config) -> Option<String> {
    match failure.kind {
        // shuttle refuses every recursive read; interleave reports the deadlock it causes when
        // a writer waits in between, in shuttle's words too.
        FailureKind::Deadlock if failure.message.contains("a recursive read") => {
            Some("deadlock: tried to acquire a RwLock it already holds".into())
        }
        FailureKind::Deadlock => Some("deadlock".into()),
        FailureKind::Relock => {
            let lock = if failure.message.contains("RwLock") {
                "RwLock"
            } else {
                "Mutex"
            };
            Some(format!(
                "deadlock: tried to acquire a {lock} it already holds"
            ))
        }
        // interleave says when the bound was exceeded while the tasks left at the end of the
        // execution were dropped; shuttle names the bound then.
        FailureKind::StepBound if failure.message.contains(AT_END) => {
            let bound = match config.max_steps {
                MaxSteps::FailAfter(steps) | MaxSteps::ContinueAfter(steps) => steps.to_string(),
                MaxSteps::None => "none".into(),
            };
            Some(format!(
                "exceeded max_steps bound: exceeded the step bound ({bound}) while it was being \
                 dropped at the end of the execution"
            ))
        }
        FailureKind::StepBound => Some("exceeded max_steps bound".into()),
        FailureKind::Nondeterminism => Some("possible nondeterminism".into()),
        _ => None,
    }
}

/// The panic message: shuttle's key words, interleave's report, and the schedule where
/// `config.failure_persistence` puts it.
fn describe(failure: &Failure, config: &Config) -> String {
    let mut message = String::new();
    if let Some(words) = key_words(failure, config) {
        message.push_str(&words);
        message.push_str("\n\n");
    }
    message.push_str(&failure.to_string());
    match &config.failure_persistence {
        FailurePersistence::None => {}
        FailurePersistence::Print => message.push_str(&format!(
            "\nfailing schedule:\n\"\n{}\n\"\npass that string to `shuttle::replay` to replay \
             the failure",
            failure.token
        )),
        FailurePersistence::File(directory) => {
            match persist(&failure.token, directory.as_deref()) {
                Ok(path) => message.push_str(&format!(
                    "\nfailing schedule persisted to file: {}\npass that path to \
                     `shuttle::replay_from_file` to replay the failure",
                    path.display()
                )),
                Err(error) => message.push_str(&format!(
                    "\nthe failing schedule could not be saved ({error}): {}",
                    failure.token
                )),
            }
        }
    }
    message
}

/// Saves `token` in a new file of `directory` (the current directory by default).
fn persist(token: &str, directory: Option<&Path>) -> std::io::Result<PathBuf> {
    let directory = directory.map_or_else(std::env::current_dir, |dir| Ok(dir.to_path_buf()))?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let path = directory.join(format!("schedule{stamp:x}.txt"));
    std::fs::write(&path, token)?;
    Ok(path)
}

/// Runs `f` once, under round robin (`rr`), as shuttle does.
#[track_caller]
pub fn check<F>(f: F)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(RoundRobinScheduler::new(1), Config::new()).run(f);
}

/// Runs `f` in `iterations` schedules of the selectively uniform random walk (see
/// [`UrwRandomScheduler`]).
#[track_caller]
pub fn check_urw<F>(f: F, iterations: usize)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(UrwRandomScheduler::new(iterations), Config::new()).run(f);
}

/// Runs `f` in `iterations` random schedules.
#[track_caller]
pub fn check_random<F>(f: F, iterations: usize)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(RandomScheduler::new(iterations), Config::new()).run(f);
}

/// Runs `f` in `iterations` random schedules from `seed`.
#[track_caller]
pub fn check_random_with_seed<F>(f: F, seed: u64, iterations: usize)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(
        RandomScheduler::new_from_seed(seed, iterations),
        Config::new(),
    )
    .run(f);
}

/// Runs `f` in `iterations` PCT schedules of bug depth `depth`.
#[track_caller]
pub fn check_pct<F>(f: F, iterations: usize, depth: usize)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(PctScheduler::new(depth, iterations), Config::new()).run(f);
}

/// Runs `f` in every schedule, or the first `max_iterations`.
#[track_caller]
pub fn check_dfs<F>(f: F, max_iterations: Option<usize>)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(DfsScheduler::new(max_iterations, false), Config::new()).run(f);
}

/// Runs `f` in `max_iterations` random schedules, each re-run to check that it behaves the
/// same under the same schedule.
#[track_caller]
pub fn check_uncontrolled_nondeterminism<F>(f: F, max_iterations: usize)
where
    F: Fn() + Send + Sync + 'static,
{
    let scheduler =
        UncontrolledNondeterminismCheckScheduler::new(RandomScheduler::new(max_iterations));
    Runner::new(scheduler, Config::new()).run(f);
}

/// Replays the execution of an interleave replay token, as printed by a failure.
#[track_caller]
pub fn replay<F>(f: F, encoded_schedule: &str)
where
    F: Fn() + Send + Sync + 'static,
{
    Runner::new(
        ReplayScheduler::new_from_encoded(encoded_schedule),
        Config::new(),
    )
    .run(f);
}

/// Replays the token saved in the file at `path`.
///
/// # Panics
/// If the file cannot be read, or with the report of the replayed failure.
#[track_caller]
pub fn replay_from_file<F, P>(f: F, path: P)
where
    F: Fn() + Send + Sync + 'static,
    P: AsRef<Path>,
{
    let path = path.as_ref();
    let scheduler = match ReplayScheduler::new_from_file(path) {
        Ok(scheduler) => scheduler,
        Err(error) => panic!(
            "could not read the schedule file {}: {error}",
            path.display()
        ),
    };
    Runner::new(scheduler, Config::new()).run(f);
}
