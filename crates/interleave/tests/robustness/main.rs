//! The robustness suite: each test is one way the engine was observed to crash, abort, hang,
//! lose a report, report a bug that is not there or hide an interleaving std allows, on code
//! nobody here wrote. Probes that could take the process down run in a child process
//! (`probe::Probe`), so the suite survives them and asserts on what the child printed.

mod bad_input;
mod misuse;
mod probe;
mod slow_search;
mod stacks;
mod statics;
mod stopping;
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

/// A strategy whose `plan` panics on a helper worker (the workers plan what they claim): the
/// exploration re-raises that panic with its own message, where the helper's death used to
/// surface only as std's "a scoped thread panicked" once the driver had run the rest alone.
#[test]
fn a_strategy_that_panics_while_planning_on_a_worker_is_re_raised() {
    use interleave::strategy::{Schedule, Strategy};

    /// Plans as `random` on the thread that started the exploration and panics on any other.
    struct PanicsOnAHelper {
        random: Box<dyn Strategy>,
        driver: std::thread::ThreadId,
    }
    impl Strategy for PanicsOnAHelper {
        fn spec(&self) -> String {
            "panics-on-a-helper".to_string()
        }
        fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
            assert!(
                std::thread::current().id() == self.driver,
                "the strategy's own bug, planning on a helper"
            );
            self.random.plan(execution, seed)
        }
    }

    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(|| {
            interleave::Builder::new()
                .ignore_environment()
                .executions(10_000)
                .workers(2)
                .custom_strategy(PanicsOnAHelper {
                    random: "random"
                        .parse::<interleave::StrategySpec>()
                        .unwrap()
                        .build(),
                    driver: std::thread::current().id(),
                })
                .explore(|| {
                    let child = interleave::thread::spawn(|| interleave::thread::yield_now());
                    interleave::thread::yield_now();
                    child.join().unwrap();
                })
        });
        let _ = sender.send(outcome.map(|_| ()).map_err(|payload| {
            match payload.downcast::<String>() {
                Ok(message) => *message,
                Err(payload) => payload
                    .downcast_ref::<&str>()
                    .map(|message| message.to_string())
                    .unwrap_or_default(),
            }
        }));
    });
    let outcome = receiver
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the exploration did not end after its strategy panicked on a worker");
    let message = outcome.expect_err("the strategy's panic must reach the caller");
    assert!(
        message.contains("the strategy's own bug, planning on a helper"),
        "{message}"
    );
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
