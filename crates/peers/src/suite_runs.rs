//! Runs one benchmark program under shuttle or loom and reports what the peer found.
//!
//! Each peer is run the way its users run it: shuttle's `Runner` with its random or PCT
//! scheduler, loom's `model::Builder` with a preemption bound. Both stop at the first failing
//! execution (that is how they report a failure: by panicking out of the run), so a peer run
//! yields the index of the first failing execution, never a count of failing executions.
//! Failures are classified from the peer's panic message: a deadlock (both peers detect one when
//! every thread is blocked), a data race (loom's causality checks on `Var`, on for fixed twins
//! and for programs whose declared bug is a race, like interleave's bench), or a panic of the
//! program. Loom refuses programs larger than its model (more than [`loom::MAX_THREADS`]
//! threads, or more scheduling decisions per execution than [`LOOM_MAX_BRANCHES`]); such runs
//! are reported as unsupported, with the reason, rather than as findings. A long program
//! (`Program::long`: a million scheduling decisions per execution, or 50 to 100 threads) is
//! unsupported under loom without running it, and runs under shuttle with the program's step
//! bound instead of shuttle's default of a million steps.

use std::cell::Cell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::str::FromStr;

use interleave_programs::{Program, Surface, Variant};

use crate::{loom_suite, shuttle_suite};

/// Scheduling decisions loom may take in one execution (loom's own default is 1,000, which some
/// programs' filler work exceeds; interleave's default step bound is 100,000).
pub const LOOM_MAX_BRANCHES: usize = 100_000;

/// The peer spec names, for error messages.
pub const PEER_NAMES: &str = "shuttle-random, shuttle-pct:d=N, loom:b=N";

/// A peer and its parameters, written like interleave's strategy specs: `shuttle-random`,
/// `shuttle-pct:d=3`, `loom:b=2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerSpec {
    /// Shuttle's `RandomScheduler`.
    ShuttleRandom,
    /// Shuttle's `PctScheduler` with this depth.
    ShuttlePct {
        /// PCT depth (number of priority change points plus one).
        depth: usize,
    },
    /// Loom's exhaustive search with this preemption bound.
    Loom {
        /// At most this many preemptions per execution.
        preemption_bound: usize,
    },
}

/// A peer spec that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerSpecError(String);

impl fmt::Display for PeerSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (peer specs: {PEER_NAMES})", self.0)
    }
}

impl std::error::Error for PeerSpecError {}

impl PeerSpec {
    /// The peer columns `interleave bench` shows by default: shuttle random and PCT d=3, loom
    /// with preemption bounds 2 and 3.
    pub const DEFAULTS: [PeerSpec; 4] = [
        PeerSpec::ShuttleRandom,
        PeerSpec::ShuttlePct { depth: 3 },
        PeerSpec::Loom {
            preemption_bound: 2,
        },
        PeerSpec::Loom {
            preemption_bound: 3,
        },
    ];

    /// Whether the peer ignores the seed (loom's search is deterministic), so one seed suffices.
    pub fn is_deterministic(self) -> bool {
        matches!(self, PeerSpec::Loom { .. })
    }

    /// Whether `spec` names a peer rather than an interleave strategy.
    pub fn is_peer_spec(spec: &str) -> bool {
        spec.starts_with("shuttle") || spec.starts_with("loom")
    }
}

impl fmt::Display for PeerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerSpec::ShuttleRandom => f.write_str("shuttle-random"),
            PeerSpec::ShuttlePct { depth } => write!(f, "shuttle-pct:d={depth}"),
            PeerSpec::Loom { preemption_bound } => write!(f, "loom:b={preemption_bound}"),
        }
    }
}

impl FromStr for PeerSpec {
    type Err = PeerSpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let (name, params) = spec.split_once(':').unwrap_or((spec, ""));
        let param = |key: &str| -> Result<usize, PeerSpecError> {
            let value = params
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix('='))
                .ok_or_else(|| PeerSpecError(format!("`{spec}` needs `{name}:{key}=N`")))?;
            match value.parse::<usize>() {
                Ok(n) if n >= 1 || key == "b" => Ok(n),
                _ => Err(PeerSpecError(format!(
                    "`{spec}`: `{key}` must be a whole number{}",
                    if key == "b" { "" } else { " of at least 1" }
                ))),
            }
        };
        match name {
            "shuttle-random" if params.is_empty() => Ok(PeerSpec::ShuttleRandom),
            "shuttle-random" => Err(PeerSpecError(format!(
                "`{spec}`: shuttle-random takes no parameters"
            ))),
            "shuttle-pct" => Ok(PeerSpec::ShuttlePct { depth: param("d")? }),
            "loom" => Ok(PeerSpec::Loom {
                preemption_bound: param("b")?,
            }),
            _ => Err(PeerSpecError(format!("unknown peer `{name}`"))),
        }
    }
}

/// How a peer's failure showed up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerFailureKind {
    /// A panic of the program (assertions included), or a leak loom reports.
    Panic,
    /// Every thread blocked.
    Deadlock,
    /// Loom's causality check on a `Var`.
    DataRace,
}

impl PeerFailureKind {
    /// The kebab-case name interleave's bench uses for the same kind of failure.
    pub fn name(self) -> &'static str {
        match self {
            PeerFailureKind::Panic => "panic",
            PeerFailureKind::Deadlock => "deadlock",
            PeerFailureKind::DataRace => "data-race",
        }
    }
}

/// The first failure a peer found.
#[derive(Clone, Debug)]
pub struct PeerFailure {
    /// Index of the failing execution (0-based).
    pub execution: u64,
    /// How it showed up.
    pub kind: PeerFailureKind,
    /// The peer's panic message, first line.
    pub message: String,
}

/// What one peer run found.
#[derive(Clone, Debug, Default)]
pub struct PeerRun {
    /// Executions run (including the failing one).
    pub executions: u64,
    /// The failure that stopped the run, if any.
    pub failure: Option<PeerFailure>,
    /// Loom explored its whole bounded space before the budget ran out.
    pub exhausted: bool,
    /// Why the peer could not run the program at all.
    pub unsupported: Option<String>,
}

/// Runs `program` (`variant`) under `peer` for at most `executions` executions.
pub fn run(peer: PeerSpec, program: &str, variant: Variant, seed: u64, executions: u64) -> PeerRun {
    // The async ports exist only against interleave's runtime.
    let (Some(shuttle_program), Some(loom_program)) = (
        find(&shuttle_suite::suite::programs(), program),
        find(&loom_suite::suite::programs(), program),
    ) else {
        return PeerRun {
            unsupported: Some(
                "an async port: it uses interleave::future and interleave::time, which the \
                 peers lack"
                    .to_string(),
            ),
            ..PeerRun::default()
        };
    };
    match peer {
        PeerSpec::ShuttleRandom => {
            let program = shuttle_program;
            let scheduler =
                shuttle::scheduler::RandomScheduler::new_from_seed(seed, executions as usize);
            run_shuttle(scheduler, program, variant)
        }
        PeerSpec::ShuttlePct { depth } => {
            let program = shuttle_program;
            let scheduler =
                shuttle::scheduler::PctScheduler::new_from_seed(seed, depth, executions as usize);
            run_shuttle(scheduler, program, variant)
        }
        // Loom would stop at its branch limit inside the first execution anyway; saying so
        // up front spares the run.
        PeerSpec::Loom { .. } if loom_program.long => PeerRun {
            unsupported: Some(LOOM_LONG.to_string()),
            ..PeerRun::default()
        },
        PeerSpec::Loom { preemption_bound } => {
            let program = loom_program;
            let race_checks =
                variant == Variant::Fixed || program.bug.surface() == Surface::DataRace;
            loom_suite::RACE_CHECKS.with(|on| on.set(race_checks));
            run_loom(preemption_bound, executions, program, variant)
        }
    }
}

/// Why loom does not run long programs.
pub const LOOM_LONG: &str =
    "a long program (a million scheduling decisions per execution, or 50 to 100 threads), beyond loom's model";

fn find(programs: &[Program], name: &str) -> Option<Program> {
    programs.iter().find(|p| p.name == name).copied()
}

thread_local! {
    /// Executions the peer has started on this OS thread: both peers run every thread of the
    /// program as a coroutine on the calling thread, so a panic hook can read it too.
    static STARTED: Cell<u64> = const { Cell::new(0) };
}

/// Executions the current (or last) peer run on this thread has started.
pub fn started_executions() -> u64 {
    STARTED.with(Cell::get)
}

/// A shuttle scheduler wrapper that counts the executions it starts (in [`started_executions`],
/// so a failure can be placed) and the scheduling decisions it makes.
pub(crate) struct Counting<S> {
    pub(crate) inner: S,
    pub(crate) decisions: Rc<Cell<u64>>,
}

impl<S: shuttle::scheduler::Scheduler> shuttle::scheduler::Scheduler for Counting<S> {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        let schedule = self.inner.new_execution()?;
        STARTED.with(|n| n.set(n.get() + 1));
        Some(schedule)
    }

    fn next_task(
        &mut self,
        runnable_tasks: &[&shuttle::scheduler::Task],
        current_task: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        self.decisions.set(self.decisions.get() + 1);
        self.inner
            .next_task(runnable_tasks, current_task, is_yielding)
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}

fn run_shuttle<S: shuttle::scheduler::Scheduler + 'static>(
    scheduler: S,
    program: Program,
    variant: Variant,
) -> PeerRun {
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.silence_warnings = true;
    if let Some(steps) = program.max_steps() {
        config.max_steps = shuttle::MaxSteps::FailAfter(steps as usize);
    }
    STARTED.with(|n| n.set(0));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        shuttle::Runner::new(
            Counting {
                inner: scheduler,
                decisions: Rc::default(),
            },
            config,
        )
        .run(move || (program.run)(variant))
    }));
    finish(outcome.map(|_| ()), None)
}

fn run_loom(
    preemption_bound: usize,
    executions: u64,
    program: Program,
    variant: Variant,
) -> PeerRun {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    builder.max_branches = LOOM_MAX_BRANCHES;
    // loom checks `max_permutations` only when the iteration number is a multiple of
    // `checkpoint_interval`, and stops before running that iteration: n + 1 for both gives
    // exactly n executions.
    builder.max_permutations = Some(executions as usize + 1);
    builder.checkpoint_interval = executions as usize + 1;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder.log = false;
    builder.location = false;
    STARTED.with(|n| n.set(0));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            STARTED.with(|n| n.set(n.get() + 1));
            (program.run)(variant)
        })
    }));
    finish(outcome, Some(executions))
}

/// The result of a peer run that returned (`Ok`) or panicked out (`Err`); `budget` is given for
/// loom, whose search can end before it.
fn finish(outcome: std::thread::Result<()>, budget: Option<u64>) -> PeerRun {
    let executions = started_executions();
    match outcome {
        Ok(()) => PeerRun {
            executions,
            exhausted: budget.is_some_and(|n| executions < n),
            ..PeerRun::default()
        },
        Err(payload) => failed(&panic_message(&*payload)),
    }
}

/// What a peer run that panicked with `message` found: a failure of the program, or a limit of
/// the peer that makes the program unsupported. Called from a panic hook too (see
/// [`crate::worker`]), so it only reads the execution counter.
pub fn failed(message: &str) -> PeerRun {
    let executions = started_executions();
    let first_line = message.lines().next().unwrap_or("").to_string();
    if let Some(reason) = loom_limit(message) {
        return PeerRun {
            executions,
            unsupported: Some(reason.to_string()),
            ..PeerRun::default()
        };
    }
    let kind = if message.starts_with("deadlock!") || message.starts_with("deadlock;") {
        PeerFailureKind::Deadlock
    } else if message.contains("Causality violation") {
        PeerFailureKind::DataRace
    } else {
        PeerFailureKind::Panic
    };
    PeerRun {
        executions,
        failure: Some(PeerFailure {
            execution: executions.saturating_sub(1),
            kind,
            message: first_line,
        }),
        ..PeerRun::default()
    }
}

/// The reason loom cannot model a program, if `message` is one of loom's limit panics.
fn loom_limit(message: &str) -> Option<&'static str> {
    if message.contains("self.threads.len() < self.max()") {
        Some("more threads than loom models (loom::MAX_THREADS = 5, main included)")
    } else if message.contains("maximum number of branches") {
        Some("an execution takes more scheduling decisions than loom's branch limit")
    } else if message.contains("loom internal bug") {
        Some("loom reported an internal error")
    } else {
        None
    }
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.as_str()
    } else {
        "panic with a non-string payload"
    };
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_bad_ones_are_refused() {
        for spec in ["shuttle-random", "shuttle-pct:d=3", "loom:b=2", "loom:b=0"] {
            assert_eq!(spec.parse::<PeerSpec>().unwrap().to_string(), spec);
        }
        for bad in [
            "shuttle",
            "shuttle-pct",
            "shuttle-pct:d=0",
            "shuttle-pct:x=3",
            "loom:b=x",
            "shuttle-random:d=1",
            "tokio",
        ] {
            let err = bad.parse::<PeerSpec>().unwrap_err().to_string();
            assert!(err.contains("peer specs:"), "{bad}: {err}");
        }
    }
}
