//! shuttle's `Config` and its parts, with shuttle's defaults; `runner.rs` maps them onto an
//! `interleave::Builder`.

use std::path::PathBuf;
use std::time::Duration;

/// How a run is configured.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The stack size of every thread of the test, in bytes.
    pub stack_size: usize,
    /// Where the schedule of a failing execution goes.
    pub failure_persistence: FailurePersistence,
    /// What happens to an execution that runs too many steps.
    pub max_steps: MaxSteps,
    /// The time budget: no execution starts after it.
    pub max_time: Option<Duration>,
    /// shuttle's switch for its warnings; interleave prints none, so it is unused.
    pub silence_warnings: bool,
    /// shuttle's tracing option; unused.
    pub record_steps_in_span: bool,
    /// shuttle's handling of the end of a failed execution. interleave tears the remaining
    /// threads down its own way; `immediately_return_on_panic` stops a panicking thread at its
    /// next scheduling point and leaks its stack (`Builder::panic_stops_execution`), so a
    /// destructor that switches and then panics while its thread unwinds never runs, and the
    /// test fails with shuttle's message for it, without the payload, as shuttle does.
    pub ungraceful_shutdown_config: UngracefulShutdownConfig,
}

impl Config {
    /// shuttle's defaults.
    pub fn new() -> Config {
        Config {
            stack_size: 0xf000,
            failure_persistence: FailurePersistence::Print,
            max_steps: MaxSteps::FailAfter(1_000_000),
            max_time: None,
            silence_warnings: false,
            record_steps_in_span: false,
            ungraceful_shutdown_config: UngracefulShutdownConfig::default(),
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

/// Where the schedule of a failing execution goes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailurePersistence {
    /// Nowhere: the panic has the report without the schedule.
    None,
    /// Into the panic message.
    Print,
    /// Into a new file in the given directory (the current directory if `None`), named in the
    /// panic message.
    File(Option<PathBuf>),
}

/// The bound on the steps of one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaxSteps {
    /// No bound.
    None,
    /// An execution that takes more steps fails.
    FailAfter(usize),
    /// An execution that takes more steps is stopped and counts as passing.
    ContinueAfter(usize),
}

/// shuttle's settings for the end of a failed execution.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct UngracefulShutdownConfig {
    /// Whether a panic ends the execution at once: interleave's
    /// `Builder::panic_stops_execution`, which fails the execution at the panic and never
    /// resumes the panicking task (its stack is leaked, so a destructor that would panic while
    /// it unwinds cannot abort the process); the test then fails with "Task panicked, and early
    /// return is enabled." instead of the panic's own payload.
    pub immediately_return_on_panic: bool,
    /// What happens to the continuations of threads left behind.
    pub continuation_function_behavior: ContinuationFunctionBehavior,
}

/// What happens to the continuations of threads left behind by a failed execution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContinuationFunctionBehavior {
    /// Drop them.
    #[default]
    Drop,
    /// Leak them.
    Leak,
}
