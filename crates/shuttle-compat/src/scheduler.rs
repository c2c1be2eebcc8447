//! shuttle's schedulers, each naming the interleave strategy it runs:
//!
//! | shuttle | interleave |
//! |---|---|
//! | `RandomScheduler::new(n)` / `new_from_seed(s, n)` | `random`, `n` executions (seed `s`) |
//! | `PctScheduler::new(d, n)` / `new_from_seed(s, d, n)` | `pct:d=<d>`, `n` executions |
//! | `DfsScheduler::new(max, _)` | `dfs`, at most `max` executions: every interleaving, as shuttle's DFS, since tests count the outcomes they collect in std types that no partial-order reduction sees; random data is enumerated too |
//! | `UrwRandomScheduler::new(n)` / `new_from_seed(s, n)` | `surw`, the selectively uniform random walk, `n` executions (seed `s`) |
//! | `RoundRobinScheduler::new(n)` | `rr`, round robin: the next runnable thread at every step, `n` executions |
//! | `ReplayScheduler::new_from_encoded(t)` | `interleave::replay` of token `t` |
//! | `UncontrolledNondeterminismCheckScheduler::new(s)` | `s` with interleave's re-run check on |
//!
//! `Scheduler` has shuttle's methods, so code that implements or wraps it builds, but a
//! user-written scheduler cannot drive interleave: interleave's strategies plan whole
//! executions from richer views of the program than the runnable tasks shuttle's trait sees.
//! Running one panics with that reason, and so does calling the decision methods of this
//! module's schedulers, which are plans for interleave's strategies rather than step-by-step
//! deciders. A [`Schedule`] (shuttle's list of task ids) builds too, and replaying one panics:
//! interleave's steps are not shuttle's, so shuttle's schedules mean nothing here; replay the
//! token of an interleave report instead.

use std::path::Path;

use interleave::strategy::StrategySpec;

/// What a scheduler asks interleave to do.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) strategy: StrategySpec,
    pub(crate) executions: u64,
    pub(crate) seed: Option<u64>,
    pub(crate) replay: Option<String>,
    pub(crate) check_determinism: bool,
    /// Why this plan cannot run, for a request interleave has no meaning for.
    pub(crate) refused: Option<&'static str>,
}

impl Plan {
    fn new(strategy: StrategySpec, executions: usize) -> Plan {
        Plan {
            strategy,
            executions: executions as u64,
            seed: None,
            replay: None,
            check_determinism: false,
            refused: None,
        }
    }

    fn seeded(mut self, seed: u64) -> Plan {
        self.seed = Some(seed);
        self
    }
}

/// Why a user-written scheduler cannot run here.
const USER_SCHEDULER: &str = "interleave-shuttle cannot run a user-written shuttle Scheduler: \
     interleave's strategies plan whole executions from a richer view of the program than the \
     runnable tasks shuttle's trait sees, so a scheduler that picks the next task has no \
     meaning here; use one of shuttle::scheduler's schedulers (each runs an interleave \
     strategy) or INTERLEAVE_STRATEGY";

/// Why this module's schedulers do not take decisions one at a time.
const NOT_STEPPED: &str = "interleave-shuttle's schedulers are plans for interleave's \
     strategies and take no decisions one at a time, so a scheduler that wraps one cannot \
     run here";

/// A shuttle scheduler. This module's types each stand for an interleave strategy; the
/// decision methods are shuttle's, so code that implements or wraps the trait builds, but only
/// this module's schedulers run (see the module docs).
pub trait Scheduler {
    /// shuttle's start of an execution.
    ///
    /// # Panics
    /// For this module's schedulers, which interleave runs whole.
    fn new_execution(&mut self) -> Option<Schedule>;

    /// shuttle's choice of the next task among `runnable_tasks`.
    ///
    /// # Panics
    /// For this module's schedulers, which interleave runs whole.
    fn next_task(
        &mut self,
        runnable_tasks: &[&Task],
        current_task: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId>;

    /// shuttle's source of random data.
    ///
    /// # Panics
    /// For this module's schedulers, which interleave runs whole.
    fn next_u64(&mut self) -> u64;

    /// The interleave exploration this scheduler stands for.
    ///
    /// # Panics
    /// For a scheduler written outside this crate, which has no interleave strategy.
    #[doc(hidden)]
    fn plan(&self) -> Plan {
        panic!("{USER_SCHEDULER}")
    }
}

/// shuttle's view of a runnable task, given to [`Scheduler::next_task`]; interleave never
/// makes one, since it runs no user-written scheduler.
#[derive(Debug)]
pub struct Task {
    id: TaskId,
}

impl Task {
    /// The task's identifier.
    pub fn id(&self) -> TaskId {
        self.id
    }
}

/// shuttle's schedule: a seed and the task (or random value) chosen at each step. It builds,
/// so code that makes one compiles, but interleave cannot replay it (see
/// [`ReplayScheduler::new_from_schedule`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The seed of the random data.
    pub seed: u64,
    steps: Vec<Option<TaskId>>,
}

impl Schedule {
    /// An empty schedule.
    pub fn new(seed: u64) -> Schedule {
        Schedule {
            seed,
            steps: Vec::new(),
        }
    }

    /// A schedule that runs `task_ids` in turn.
    pub fn new_from_task_ids<T: Into<TaskId>>(
        seed: u64,
        task_ids: impl IntoIterator<Item = T>,
    ) -> Schedule {
        Schedule {
            seed,
            steps: task_ids.into_iter().map(|id| Some(id.into())).collect(),
        }
    }

    /// Appends a step that runs `task`.
    pub fn push_task(&mut self, task: TaskId) {
        self.steps.push(Some(task));
    }

    /// Appends a step that draws random data.
    pub fn push_random(&mut self) {
        self.steps.push(None);
    }

    /// How many steps it has.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

macro_rules! scheduler {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            plan: Plan,
        }

        impl Scheduler for $name {
            fn new_execution(&mut self) -> Option<Schedule> {
                panic!("{NOT_STEPPED}")
            }

            fn next_task(
                &mut self,
                _runnable_tasks: &[&Task],
                _current_task: Option<TaskId>,
                _is_yielding: bool,
            ) -> Option<TaskId> {
                panic!("{NOT_STEPPED}")
            }

            fn next_u64(&mut self) -> u64 {
                panic!("{NOT_STEPPED}")
            }

            fn plan(&self) -> Plan {
                self.plan.clone()
            }
        }
    };
}

scheduler!(
    /// Random walk over schedules.
    RandomScheduler
);
scheduler!(
    /// PCT: random priorities with `depth - 1` priority change points.
    PctScheduler
);
scheduler!(
    /// Exhaustive depth-first search.
    DfsScheduler
);
scheduler!(
    /// shuttle's uniform random walk; interleave runs its selectively uniform random walk
    /// (`surw`).
    UrwRandomScheduler
);
scheduler!(
    /// shuttle's round-robin scheduler; interleave runs the first schedules of `dfs`.
    RoundRobinScheduler
);
scheduler!(
    /// Replays one failing schedule, given as interleave's replay token.
    ReplayScheduler
);

impl RandomScheduler {
    /// `max_iterations` random executions.
    pub fn new(max_iterations: usize) -> RandomScheduler {
        RandomScheduler {
            plan: Plan::new(StrategySpec::Random, max_iterations),
        }
    }

    /// `max_iterations` random executions from `seed`.
    pub fn new_from_seed(seed: u64, max_iterations: usize) -> RandomScheduler {
        RandomScheduler {
            plan: Plan::new(StrategySpec::Random, max_iterations).seeded(seed),
        }
    }
}

impl PctScheduler {
    /// `max_iterations` PCT executions with bug depth `max_depth`.
    pub fn new(max_depth: usize, max_iterations: usize) -> PctScheduler {
        PctScheduler {
            plan: Plan::new(StrategySpec::pct(max_depth.max(1)), max_iterations),
        }
    }

    /// Like [`new`](PctScheduler::new), from `seed`.
    pub fn new_from_seed(seed: u64, max_depth: usize, max_iterations: usize) -> PctScheduler {
        PctScheduler {
            plan: PctScheduler::new(max_depth, max_iterations)
                .plan
                .seeded(seed),
        }
    }
}

impl DfsScheduler {
    /// Every schedule, or the first `max_iterations`. Calls to [`crate::rand`] are explored
    /// as choices whatever `allow_random_data` says.
    pub fn new(max_iterations: Option<usize>, allow_random_data: bool) -> DfsScheduler {
        let _ = allow_random_data;
        let mut plan = Plan::new(StrategySpec::Dfs, 0);
        plan.executions = max_iterations.map_or(u64::MAX, |iterations| iterations as u64);
        DfsScheduler { plan }
    }
}

impl UrwRandomScheduler {
    /// `max_iterations` executions of the selectively uniform random walk.
    pub fn new(max_iterations: usize) -> UrwRandomScheduler {
        UrwRandomScheduler {
            plan: Plan::new(StrategySpec::surw(), max_iterations),
        }
    }

    /// `max_iterations` executions of the selectively uniform random walk from `seed`.
    pub fn new_from_seed(seed: u64, max_iterations: usize) -> UrwRandomScheduler {
        UrwRandomScheduler {
            plan: Plan::new(StrategySpec::surw(), max_iterations).seeded(seed),
        }
    }
}

impl RoundRobinScheduler {
    /// `max_iterations` executions of round robin, which all take the same thread order.
    pub fn new(max_iterations: usize) -> RoundRobinScheduler {
        RoundRobinScheduler {
            plan: Plan::new(StrategySpec::RoundRobin, max_iterations),
        }
    }
}

impl ReplayScheduler {
    /// Replays the execution of an interleave replay token (printed in a failure report).
    pub fn new_from_encoded(encoded_schedule: &str) -> ReplayScheduler {
        let mut plan = Plan::new(StrategySpec::Random, 1);
        plan.replay = Some(encoded_schedule.trim().to_owned());
        ReplayScheduler { plan }
    }

    /// Replays the token saved in the file at `path` (see [`crate::FailurePersistence::File`]).
    pub fn new_from_file<P: AsRef<Path>>(path: P) -> Result<ReplayScheduler, std::io::Error> {
        let token = std::fs::read_to_string(path)?;
        Ok(ReplayScheduler::new_from_encoded(&token))
    }

    /// shuttle's replay of a hand-made [`Schedule`]. It builds, and running it panics: a
    /// shuttle schedule lists shuttle's scheduling decisions, which are not interleave's steps,
    /// so it names no interleave execution.
    pub fn new_from_schedule(schedule: Schedule) -> ReplayScheduler {
        let _ = schedule;
        let mut plan = Plan::new(StrategySpec::Random, 1);
        plan.refused = Some(
            "interleave-shuttle cannot replay a shuttle Schedule: it lists shuttle's scheduling \
             decisions, which are not interleave's steps; replay the token printed in an \
             interleave report (ReplayScheduler::new_from_encoded) instead",
        );
        ReplayScheduler { plan }
    }

    /// shuttle's permission to stop a replay whose schedule ends before the test does; an
    /// interleave token always replays a whole execution, so there is nothing to allow.
    pub fn set_allow_incomplete(&mut self) {}

    /// shuttle's stop of a replay once the execution reaches the vector clock `clock`. It
    /// builds, and running the replay then panics: interleave replays a whole execution.
    pub fn set_target_clock(&mut self, clock: &[u32]) {
        let _ = clock;
        self.plan.refused.get_or_insert(
            "interleave-shuttle cannot stop a replay at a target vector clock: an interleave \
             replay token replays a whole execution",
        );
    }
}

/// Runs its scheduler's executions with interleave's check for uncontrolled nondeterminism:
/// every execution is re-run under its own schedule and must behave the same.
#[derive(Clone, Debug)]
pub struct UncontrolledNondeterminismCheckScheduler<S: Scheduler> {
    inner: S,
}

impl<S: Scheduler> UncontrolledNondeterminismCheckScheduler<S> {
    /// `scheduler`'s executions, each checked for nondeterminism.
    pub fn new(scheduler: S) -> UncontrolledNondeterminismCheckScheduler<S> {
        UncontrolledNondeterminismCheckScheduler { inner: scheduler }
    }
}

impl<S: Scheduler> Scheduler for UncontrolledNondeterminismCheckScheduler<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        self.inner.new_execution()
    }

    fn next_task(
        &mut self,
        runnable_tasks: &[&Task],
        current_task: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        self.inner
            .next_task(runnable_tasks, current_task, is_yielding)
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    fn plan(&self) -> Plan {
        let mut plan = self.inner.plan();
        plan.check_determinism = true;
        plan
    }
}

impl<S: Scheduler + ?Sized> Scheduler for Box<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        (**self).new_execution()
    }

    fn next_task(
        &mut self,
        runnable_tasks: &[&Task],
        current_task: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        (**self).next_task(runnable_tasks, current_task, is_yielding)
    }

    fn next_u64(&mut self) -> u64 {
        (**self).next_u64()
    }

    fn plan(&self) -> Plan {
        (**self).plan()
    }
}

/// A task's identifier: the index of its thread in the execution (0 for the main thread).
/// Its `Debug` shows the task's name when it has one, as shuttle's: `main-thread(0)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub(crate) usize);

impl std::fmt::Debug for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match crate::labels::name(*self) {
            Some(name) => write!(f, "{name:?}({})", self.0),
            None => f.debug_tuple("TaskId").field(&self.0).finish(),
        }
    }
}

impl From<usize> for TaskId {
    fn from(index: usize) -> TaskId {
        TaskId(index)
    }
}

impl From<TaskId> for usize {
    fn from(task: TaskId) -> usize {
        task.0
    }
}
