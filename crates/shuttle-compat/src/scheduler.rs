//! shuttle's schedulers, each naming the interleave strategy it runs:
//!
//! | shuttle | interleave |
//! |---|---|
//! | `RandomScheduler::new(n)` / `new_from_seed(s, n)` | `random`, `n` executions (seed `s`) |
//! | `PctScheduler::new(d, n)` / `new_from_seed(s, d, n)` | `pct:d=<d>`, `n` executions |
//! | `DfsScheduler::new(max, _)` | `dfs`, at most `max` executions; random data is enumerated too |
//! | `UrwRandomScheduler::new(n)` | `random`: interleave has no uniform random walk, so this is the plain random walk |
//! | `RoundRobinScheduler::new(n)` | `dfs`, whose first schedule runs each thread until it blocks |
//! | `ReplayScheduler::new_from_encoded(t)` | `interleave::replay` of token `t` |
//! | `UncontrolledNondeterminismCheckScheduler::new(s)` | `s` with interleave's re-run check on |
//!
//! `Scheduler` is sealed: shuttle's trait lets a user schedule from the list of runnable tasks,
//! but interleave's strategies plan whole executions from richer views of the program, so a
//! user-written shuttle scheduler has no meaning here and does not compile.

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
}

impl Plan {
    fn new(strategy: StrategySpec, executions: usize) -> Plan {
        Plan {
            strategy,
            executions: executions as u64,
            seed: None,
            replay: None,
            check_determinism: false,
        }
    }

    fn seeded(mut self, seed: u64) -> Plan {
        self.seed = Some(seed);
        self
    }
}

mod sealed {
    /// Keeps `Scheduler` to this crate's types (see the module docs).
    pub trait Sealed {}
}

/// A shuttle scheduler: one of this module's types, each mapped onto an interleave strategy.
pub trait Scheduler: sealed::Sealed {
    /// The interleave exploration this scheduler stands for.
    #[doc(hidden)]
    fn plan(&self) -> Plan;
}

macro_rules! scheduler {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            plan: Plan,
        }

        impl sealed::Sealed for $name {}

        impl Scheduler for $name {
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
    /// shuttle's uniform random walk; interleave runs its plain random walk.
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
    /// `max_iterations` random executions.
    pub fn new(max_iterations: usize) -> UrwRandomScheduler {
        UrwRandomScheduler {
            plan: Plan::new(StrategySpec::Random, max_iterations),
        }
    }

    /// `max_iterations` random executions from `seed`.
    pub fn new_from_seed(seed: u64, max_iterations: usize) -> UrwRandomScheduler {
        UrwRandomScheduler {
            plan: Plan::new(StrategySpec::Random, max_iterations).seeded(seed),
        }
    }
}

impl RoundRobinScheduler {
    /// The first `max_iterations` schedules of depth-first search.
    pub fn new(max_iterations: usize) -> RoundRobinScheduler {
        RoundRobinScheduler {
            plan: Plan::new(StrategySpec::Dfs, max_iterations),
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

impl<S: Scheduler> sealed::Sealed for UncontrolledNondeterminismCheckScheduler<S> {}

impl<S: Scheduler> Scheduler for UncontrolledNondeterminismCheckScheduler<S> {
    fn plan(&self) -> Plan {
        let mut plan = self.inner.plan();
        plan.check_determinism = true;
        plan
    }
}

impl<S: Scheduler + ?Sized> sealed::Sealed for Box<S> {}

impl<S: Scheduler + ?Sized> Scheduler for Box<S> {
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
