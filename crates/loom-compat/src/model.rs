//! `loom::model` and `loom::model::Builder`, mapped onto interleave's systematic strategies.
//!
//! | loom | interleave |
//! |---|---|
//! | `model`, `Builder::check` without a preemption bound | `dpor`: every schedule up to partial-order equivalence |
//! | `preemption_bound` / `LOOM_MAX_PREEMPTIONS` = `c` | `dpor:c=<c>`: bounded partial-order reduction, every schedule with at most `c` preemptions up to partial-order equivalence, any number of threads, under the weak memory model |
//! | `max_permutations` / `LOOM_MAX_PERMUTATIONS` | `Builder::executions` |
//! | `max_duration` / `LOOM_MAX_DURATION` | a time budget: no execution starts after it |
//! | `max_branches` / `LOOM_MAX_BRANCHES` | `Builder::max_steps` (a longer execution fails as a livelock); loom's default of 1,000 branches is not mapped (interleave counts every step, not only the branching ones), so a model whose spin lock can lose its race for ever, which loom fails at once with "Model exceeded maximum number of branches", explores until its budget here, and says so on the standard error after 20 s (`INTERLEAVE_SLOW_NOTICE`): give it `LOOM_MAX_PREEMPTIONS`, whose bound makes its search finite |
//! | `max_threads` | accepted and unused: interleave has no thread limit |
//! | `location`, `log` / `LOOM_LOCATION`, `LOOM_LOG` | accepted: every report has locations |
//! | `checkpoint_file` / `LOOM_CHECKPOINT_FILE` | refused with a panic: interleave resumes from replay tokens instead (`INTERLEAVE_PERSIST`) |
//! | `expect_explicit_explore` | refused with a panic |
//!
//! Atomics follow loom's rule for loads after a yield
//! (`interleave::YieldVisibility::UnseenBeforeYield`): once a thread has yielded, it does not
//! read again a store it saw before the yield while a newer one exists. A model's spin loops
//! then branch as loom's do: thingbuf 0.1.6's `spsc` model, with a preemption bound of 2, runs
//! 18,345 executions where loom 0.5.6 runs 12,439, and did not finish in 300 s under
//! interleave's own rule.
//!
//! loom has no re-run of executions to catch uncontrolled nondeterminism, and its suites keep
//! std statics across executions, so the models run with interleave's determinism check off.
//! `INTERLEAVE_STRATEGY`, `INTERLEAVE_EXECUTIONS` and the other `INTERLEAVE_*` variables still
//! override what this mapping chose.

use std::path::PathBuf;
use std::time::Duration;

use interleave::strategy::{StrategySpec, TimeBudget};

const DEFAULT_MAX_THREADS: usize = 5;
const DEFAULT_MAX_BRANCHES: usize = 1_000;
const DEFAULT_CHECKPOINT_INTERVAL: usize = 20_000;

/// Executions a model may run when loom sets no `max_permutations`: far more than any model
/// that ends in reasonable time needs, so the systematic strategies run until they are done.
pub const EXECUTION_CAP: u64 = 1 << 40;

/// Configures a model, with loom's public fields and defaults.
#[derive(Debug)]
#[non_exhaustive]
pub struct Builder {
    /// loom's thread limit; interleave has none, so this is not enforced.
    pub max_threads: usize,
    /// The longest execution, in scheduling steps: a longer one fails as a livelock.
    pub max_branches: usize,
    /// The most executions to run.
    pub max_permutations: Option<usize>,
    /// The time budget: no execution starts after it is spent.
    pub max_duration: Option<Duration>,
    /// Explore only schedules with at most this many preemptions.
    pub preemption_bound: Option<usize>,
    /// loom's checkpoint file; not supported (see the module docs).
    pub checkpoint_file: Option<PathBuf>,
    /// loom's checkpoint interval; unused.
    pub checkpoint_interval: usize,
    /// loom's explicit-explore mode; not supported.
    pub expect_explicit_explore: bool,
    /// loom's switch for source locations; interleave's reports always have them.
    pub location: bool,
    /// loom's switch for logging; unused.
    pub log: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// Reads the `LOOM_*` variable `name`, panicking on a malformed value as loom does.
fn env_parsed<T: std::str::FromStr>(name: &str) -> Option<T> {
    let value = std::env::var(name).ok()?;
    match value.parse() {
        Ok(parsed) => Some(parsed),
        Err(_) => panic!("invalid value for `{name}`: {value:?}"),
    }
}

impl Builder {
    /// loom's defaults, overridden by the `LOOM_*` environment variables.
    pub fn new() -> Builder {
        Builder {
            max_threads: DEFAULT_MAX_THREADS,
            max_branches: env_parsed("LOOM_MAX_BRANCHES").unwrap_or(DEFAULT_MAX_BRANCHES),
            max_permutations: env_parsed("LOOM_MAX_PERMUTATIONS"),
            max_duration: env_parsed("LOOM_MAX_DURATION").map(Duration::from_secs),
            preemption_bound: env_parsed("LOOM_MAX_PREEMPTIONS"),
            checkpoint_file: env_parsed("LOOM_CHECKPOINT_FILE"),
            checkpoint_interval: env_parsed("LOOM_CHECKPOINT_INTERVAL")
                .unwrap_or(DEFAULT_CHECKPOINT_INTERVAL),
            expect_explicit_explore: false,
            location: std::env::var_os("LOOM_LOCATION").is_some(),
            log: std::env::var_os("LOOM_LOG").is_some(),
        }
    }

    /// Sets loom's checkpoint file; [`check`](Builder::check) then refuses to run.
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// The strategy this configuration maps to.
    pub fn strategy(&self) -> StrategySpec {
        match self.preemption_bound {
            None => StrategySpec::Dpor,
            Some(bound) => StrategySpec::BoundedDpor {
                // A bound beyond `u32::MAX` preemptions bounds nothing a model can reach.
                preemptions: u32::try_from(bound).unwrap_or(u32::MAX),
            },
        }
    }

    /// The interleave builder this configuration maps to (see the module docs).
    ///
    /// # Panics
    /// When the configuration asks for a loom feature interleave does not have.
    pub fn to_interleave(&self) -> interleave::Builder {
        if let Some(file) = &self.checkpoint_file {
            panic!(
                "loom checkpoints ({}) are not supported by interleave-loom: failing \
                 schedules are printed as replay tokens, and INTERLEAVE_PERSIST=1 saves them \
                 for the next run",
                file.display()
            );
        }
        assert!(
            !self.expect_explicit_explore,
            "loom's expect_explicit_explore is not supported by interleave-loom"
        );
        let executions = self
            .max_permutations
            .map_or(EXECUTION_CAP, |permutations| permutations as u64);
        let spec = self.strategy();
        let mut builder = interleave::Builder::new()
            .strategy(spec.clone())
            .executions(executions)
            .check_determinism(false)
            // loom's weak exchanges never fail spuriously: a model's search space and the
            // outcomes its tests count stay loom's.
            .spurious_cas_failures(false)
            .yield_visibility(interleave::YieldVisibility::UnseenBeforeYield)
            // A spawned thread's panic fails the model with its own message, as under loom,
            // whose threads do not catch their panics for `join`.
            .spawned_panics_fail(true);
        if self.max_branches != DEFAULT_MAX_BRANCHES {
            builder = builder.max_steps(self.max_branches as u64);
        }
        if let Some(budget) = self.max_duration {
            builder = builder.custom_strategy(TimeBudget::new(spec.build(), budget));
        }
        builder
    }

    /// Explores every schedule of `f` the configuration allows, and panics with interleave's
    /// report of the first failing one.
    #[track_caller]
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        self.to_interleave().check(f);
    }
}

/// Explores every schedule of `f` with the default [`Builder`], which the `LOOM_*` variables
/// adjust, and panics with interleave's report of the first failing one.
#[track_caller]
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Builder::new().check(f);
}
