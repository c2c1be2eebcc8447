//! What an exploration returns and what a failure report says: the failure and its
//! explanation, the interleaving as per-thread columns, the seed, and a replay token with the
//! one-line call and the environment variable that reproduce it.

mod interleaving;
mod shard;
pub(crate) mod token;
mod violation;

use std::fmt;
use std::path::PathBuf;

pub use shard::{ShardFailure, ShardPartition, ShardSummary, SHARD_SUMMARY_PREFIX};
pub use token::TokenError;
pub use violation::AtomicityViolation;

use crate::config::ENV_REPLAY;

use crate::analysis::stops::failure_text;
pub(crate) use crate::runtime::FailureInfo;
pub use crate::runtime::FailureKind;
use crate::runtime::Recording;

/// Tokens longer than this are printed once in a report, not once per way to replay them.
const LONG_TOKEN: usize = 200;

/// The strategy a report of a token's replay names: the token's schedule ran, which no
/// strategy chose and no seed drew, and the report says so instead of naming them.
pub(crate) const REPLAY_SPEC: &str = "replay";

/// One failing execution.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The 0-based index of the failing execution.
    pub execution: u64,
    /// What went wrong.
    pub kind: FailureKind,
    /// The explanation: the panic message, the deadlock's blocked threads and cycle, the race's
    /// two accesses.
    pub message: String,
    /// The replay token that reproduces this execution (`interleave::replay`).
    pub token: String,
    /// The number of steps the failing execution ran.
    pub steps: u64,
    pub(crate) thread: Option<String>,
    pub(crate) site: Option<String>,
    pub(crate) interleaving: String,
    /// What happened to the failing schedule with regression files (when the exploration
    /// had a [`crate::Persistence`]): where it came from or where it was saved.
    pub persisted: Option<Persisted>,
    pub(crate) strategy: String,
    pub(crate) seed: u64,
    pub(crate) static_message: Option<&'static str>,
}

/// What happened to a failing schedule with regression files (see [`crate::Persistence`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Persisted {
    /// The failure came from replaying the token on `line` (1-based) of `file`, saved by an
    /// earlier run, before any exploration.
    ReplayedFrom {
        /// The regression file.
        file: PathBuf,
        /// The line of the token.
        line: usize,
    },
    /// The token was appended to `file`: the next run of the test replays it first.
    SavedTo {
        /// The regression file.
        file: PathBuf,
    },
    /// The token was not written to `file`.
    NotSaved {
        /// The regression file.
        file: PathBuf,
        /// Why: saving is off, the execution cannot be replayed, or the error that writing
        /// the file met.
        reason: String,
    },
}

impl fmt::Display for Persisted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Persisted::ReplayedFrom { file, line } => write!(
                f,
                "This schedule comes from the regression file {} (line {line}), where an \
                 earlier failing run saved it; it was replayed before exploring.",
                file.display()
            ),
            Persisted::SavedTo { file } => write!(
                f,
                "The schedule was saved to the regression file {}; the next run of this test \
                 replays it first.",
                file.display()
            ),
            Persisted::NotSaved { file, reason } => write!(
                f,
                "The schedule was not saved to the regression file {}: {reason}.",
                file.display()
            ),
        }
    }
}

impl Failure {
    /// The payload of the panic that failed the execution when it was a `&'static str`
    /// (`panic!` with a literal message, `unreachable!()`), so that a caller can raise the same
    /// payload again; `None` for a formatted message, any other payload, or a failure that is
    /// no panic of the program.
    pub fn static_panic_message(&self) -> Option<&'static str> {
        self.static_message
    }

    /// The strategy that found the failure: its spec, and for a portfolio (`auto`) the member
    /// that planned the failing execution (`"auto, member pct:d=3"`).
    pub fn found_by(&self) -> &str {
        &self.strategy
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.to_string();
        let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        if self.strategy == REPLAY_SPEC {
            // A replay runs the token's schedule: no strategy chose it and no seed drew it.
            writeln!(f, "interleave replayed a token and found {article} {kind}:")?;
        } else {
            writeln!(
                f,
                "interleave found {article} {kind} in execution {} (strategy {}, seed {}):",
                self.execution, self.strategy, self.seed
            )?;
        }
        writeln!(f)?;
        match (&self.thread, self.kind) {
            (Some(thread), FailureKind::Panic) => {
                write!(f, "  {thread} panicked")?;
                if let Some(site) = &self.site {
                    write!(f, " at {site}")?;
                }
                writeln!(f, ":")?;
                for line in self.message.lines() {
                    writeln!(f, "    {line}")?;
                }
            }
            _ => {
                for line in self.message.lines() {
                    writeln!(f, "  {line}")?;
                }
            }
        }
        writeln!(f)?;
        writeln!(f, "{}", self.interleaving)?;
        if self.kind == FailureKind::Divergence {
            // The token of a divergence would only replay the divergence: what reproduces the
            // recorded failure is a fresh exploration of the program as it is now.
            return write!(
                f,
                "The token no longer fits the program: run the exploration again for a fresh one."
            );
        }
        writeln!(
            f,
            "To reproduce this execution exactly, run the same test with"
        )?;
        writeln!(f, "    {ENV_REPLAY}={}", self.token)?;
        writeln!(f, "or replace the call with")?;
        if self.token.len() > LONG_TOKEN {
            // A long token (thousands of steps) is printed once: the call refers to it.
            write!(
                f,
                "    interleave::replay(TOKEN, || ...), TOKEN being the {} characters after \
                 {ENV_REPLAY}= above",
                self.token.len()
            )?;
        } else {
            write!(f, "    interleave::replay(\"{}\", || ...)", self.token)?;
        }
        if let Some(persisted) = &self.persisted {
            write!(f, "\n\n{persisted}")?;
        }
        Ok(())
    }
}

/// The result of an exploration.
#[derive(Clone, Debug)]
pub struct Report {
    /// How many executions ran.
    pub executions: u64,
    /// Scheduling decisions over all executions.
    pub steps: u64,
    /// The failures found, in execution order (at most one unless the exploration was asked to
    /// continue after failures).
    pub failures: Vec<Failure>,
    /// Findings that do not fail the execution (data races in `RaceMode::Warn`).
    pub warnings: Vec<String>,
    /// The strategy's spec.
    pub strategy: String,
    /// The exploration seed.
    pub seed: u64,
    /// Strategy statistics: parameters, estimates and the guarantee they give.
    pub strategy_stats: Vec<(String, String)>,
    /// Distinct states reached (distinct happens-before graphs of execution prefixes), when
    /// the exploration was asked to count them (`Builder::count_states`).
    pub states: Option<u64>,
    /// Atomic-set serializability violations the executions really produced, one per distinct
    /// pattern, units of work and sites, when executions were monitored
    /// ([`crate::Builder::monitor_atomic_sets`]).
    pub violations: Vec<AtomicityViolation>,
    /// Executions that produced at least one violation.
    pub violating_executions: u64,
    /// Remarks about the run rather than the program: lines of the regression file that were
    /// skipped (not a token, or a token that no longer replays) and regression files that
    /// could not be read.
    pub notes: Vec<String>,
    /// What this shard ran and found, when the exploration was sharded
    /// ([`crate::Config::shard`]); `interleave merge-shards` combines the shards' summaries.
    pub shard: Option<ShardSummary>,
    /// A [`crate::StopHandle`] stopped the exploration before its budget was spent and before
    /// its strategy had run out ([`crate::Builder::stop_handle`]): the report holds what the
    /// executions that ended before the stop found, and the execution the stop cut short is
    /// not counted. A stop is not a failure.
    pub stopped: bool,
}

impl Report {
    /// An empty report for an exploration with `strategy` and `seed`.
    pub(crate) fn new(strategy: String, seed: u64) -> Report {
        Report {
            executions: 0,
            steps: 0,
            failures: Vec::new(),
            warnings: Vec::new(),
            strategy,
            seed,
            strategy_stats: Vec::new(),
            states: None,
            violations: Vec::new(),
            violating_executions: 0,
            notes: Vec::new(),
            shard: None,
            stopped: false,
        }
    }

    /// True when no execution failed.
    pub fn is_ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// The first failure, if any.
    pub fn first_failure(&self) -> Option<&Failure> {
        self.failures.first()
    }

    /// The value of the strategy statistic called `name`, or else of the first one whose name
    /// contains `name` (statistic names carry explanations, e.g. "interleavings abandoned
    /// (target unreachable)").
    pub fn stat(&self, name: &str) -> Option<&str> {
        let stats = &self.strategy_stats;
        stats
            .iter()
            .find(|(k, _)| k == name)
            .or_else(|| stats.iter().find(|(k, _)| k.contains(name)))
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.strategy == REPLAY_SPEC {
            writeln!(f, "1 replayed execution, {} steps", self.steps)?;
        } else {
            writeln!(
                f,
                "{} executions, {} steps, strategy {}, seed {}",
                self.executions, self.steps, self.strategy, self.seed
            )?;
        }
        if let Some(states) = self.states {
            writeln!(f, "  distinct states (happens-before prefixes): {states}")?;
        }
        for (name, value) in &self.strategy_stats {
            writeln!(f, "  {name}: {value}")?;
        }
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        if !self.violations.is_empty() {
            writeln!(
                f,
                "distinct atomic-set serializability violations: {} (in {} executions)",
                self.violations.len(),
                self.violating_executions
            )?;
            for violation in &self.violations {
                writeln!(f)?;
                writeln!(f, "{violation}")?;
            }
            writeln!(f)?;
        }
        if self.failures.is_empty() {
            write!(f, "no failure found")
        } else {
            for failure in &self.failures {
                writeln!(f)?;
                writeln!(f, "{failure}")?;
            }
            Ok(())
        }
    }
}

pub(crate) use interleaving::render as render_interleaving;

/// The name of the test this thread runs, as the test harness names its threads (and the
/// exploration its workers); `None` outside a test (the main thread, or a thread without a
/// name).
pub(crate) fn current_test() -> Option<String> {
    std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .map(str::to_string)
}

thread_local! {
    /// How many explorations `Builder::explore` started on this OS thread (a test's thread).
    static EXPLORATIONS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Notes that an exploration starts on this OS thread: the next one of its test.
pub(crate) fn begin_exploration() {
    EXPLORATIONS.with(|count| count.set(count.get() + 1));
}

/// What tokens name the running exploration by: its test ([`current_test`]), followed by `#k`
/// for the `k`-th exploration of a test that runs several (a table-driven test), so that
/// `INTERLEAVE_REPLAY` replays only the exploration that recorded the token and the others
/// explore as usual. The exploration's workers are named with it, and start no exploration of
/// their own, so on them it is their name.
pub(crate) fn current_exploration() -> Option<String> {
    let test = current_test()?;
    let ordinal = EXPLORATIONS.with(std::cell::Cell::get);
    Some(if ordinal > 1 {
        format!("{test}#{ordinal}")
    } else {
        test
    })
}

/// The report the engine prints just before a process abort (`Limits::report_before_abort`).
pub(crate) fn report_before_abort(
    ex: &Recording,
    failure: &FailureInfo,
    destructor: &str,
) -> String {
    let thread = failure
        .thread
        .map(|t| crate::analysis::thread_label(ex, t))
        .unwrap_or_else(|| "a thread".to_string());
    let at = failure
        .site
        .as_deref()
        .filter(|site| !site.is_empty())
        .map(|site| format!(" at {site}"))
        .unwrap_or_default();
    let text = failure_text(ex, failure);
    // Labelled with the test, as every other token is, so that `INTERLEAVE_REPLAY` applies to
    // this test alone (a worker thread carries its test's name too, see `workers.rs`).
    let token = token::Token::from_run(ex, Some(failure.kind))
        .labelled(current_exploration().as_deref(), &text)
        .encode();
    format!(
        "  {} of {thread}{at}:\n    {}\n\n{destructor}\n{}\nTo reproduce this execution (and the \
         abort), run the same test with\n    {ENV_REPLAY}={token}\n",
        failure.kind,
        text.replace('\n', "\n    ").replace("\n    \n", "\n\n"),
        render_interleaving(ex),
    )
}
