//! The robustness suite: each test is one way the engine was observed to crash, abort, hang,
//! lose a report, report a bug that is not there or hide an interleaving std allows, on code
//! nobody here wrote. Probes that could take the process down run in a child process
//! (`probe::Probe`), so the suite survives them and asserts on what the child printed.

mod bad_input;
mod probe;
mod stacks;
mod statics;
mod teardown;

use std::time::Duration;

use probe::Probe;

/// The harness itself: a child that aborts is seen as ended by a signal, one that hangs as
/// timed out, and one that panics as a failed test that printed its message.
#[test]
fn probe_harness_sees_aborts_hangs_and_panics() {
    let here = |label| {
        Probe::new(module_path!(), "probe_harness_sees_aborts_hangs_and_panics").label(label)
    };
    if let Some(outcome) = here("abort").run(|| std::process::abort()) {
        assert!(!outcome.survived() && !outcome.timed_out, "{outcome:?}");
    }
    let hang = here("hang").timeout(Duration::from_millis(500));
    if let Some(outcome) = hang.run(|| std::thread::sleep(Duration::from_secs(30))) {
        assert!(outcome.timed_out, "{outcome:?}");
    }
    if let Some(outcome) = here("panic")
        .env("PROBE_MESSAGE", "the probe's own message")
        .run(|| panic!("{}", std::env::var("PROBE_MESSAGE").unwrap_or_default()))
    {
        assert_eq!(outcome.code, Some(101), "{outcome:?}");
        assert!(
            outcome.output().contains("the probe's own message"),
            "{outcome:?}"
        );
    }
}

/// A strategy that panics (a bug in a strategy, ours or a user's) inside the runtime: its
/// message used to be swallowed by the hook that keeps the test's own panics quiet, so the
/// test failed with no output at all.
#[test]
fn a_panicking_strategy_is_reported_with_its_message() {
    use interleave::strategy::{Schedule, Strategy, View};

    struct Broken;
    struct BrokenSchedule;
    impl Schedule for BrokenSchedule {
        fn next_thread(&mut self, _view: &View<'_>) -> usize {
            panic!("the strategy's own bug");
        }
        fn next_value(&mut self, _bound: u64) -> u64 {
            0
        }
    }
    impl Strategy for Broken {
        fn spec(&self) -> String {
            "broken".to_string()
        }
        fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
            Some(Box::new(BrokenSchedule))
        }
    }

    let probe = Probe::new(
        module_path!(),
        "a_panicking_strategy_is_reported_with_its_message",
    );
    if let Some(outcome) = probe.run(|| {
        let _ = interleave::Builder::new()
            .ignore_environment()
            .custom_strategy(Broken)
            .explore(|| interleave::thread::yield_now());
    }) {
        assert!(
            outcome.output().contains("the strategy's own bug"),
            "{outcome:?}"
        );
    }
}
