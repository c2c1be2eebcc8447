//! Replay tokens reproduce failures exactly; bad and stale tokens give clear errors; the same
//! seed gives the same report whatever the number of workers, for every strategy; uncontrolled
//! nondeterminism is flagged.

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use crate::helpers;
use crate::report_snapshots::lock_order_inversion;
use interleave::sync::atomic::{AtomicUsize, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, Error, FailureKind, Report, TokenError};

/// A lost update that needs a specific interleaving of three threads.
fn lost_update() {
    let counter = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || {
                let seen = counter.load(Ordering::SeqCst);
                counter.store(seen + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 3, "an increment was lost");
}

fn explore(spec: &str, seed: u64, workers: usize, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .seed(seed)
        .workers(workers)
        .executions(2000)
        .explore(f)
        .unwrap()
}

#[test]
fn tokens_reproduce_the_same_failure() {
    for spec in ["random", "pct:d=2", "pct:d=3"] {
        for seed in 0..5 {
            let report = explore(spec, seed, 1, lost_update);
            let failure = report.first_failure().expect("lost update found");
            let replayed = Builder::new()
                .ignore_environment()
                .replay(&failure.token, lost_update)
                .unwrap();
            let again = replayed.first_failure().expect("the replay fails again");
            assert_eq!(again.kind, failure.kind);
            assert_eq!(again.message, failure.message);
            assert_eq!(again.steps, failure.steps);
            assert_eq!(again.token, failure.token);
        }
    }
}

/// Two threads that wait for each other's flag for ever, yielding, until the step bound.
fn mutual_spin() {
    let flags = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let other = {
        let flags = flags.clone();
        thread::spawn(move || {
            while flags[0].load(Ordering::Acquire) == 0 {
                thread::yield_now();
            }
        })
    };
    while flags[1].load(Ordering::Acquire) == 0 {
        thread::yield_now();
    }
    other.join().unwrap();
}

/// A livelock runs to the default step bound of 100,000 steps, and its schedule alternates the
/// threads at random: its token used to take about 200,000 characters, more than one
/// environment variable may hold (Linux allows 128 KiB). Deflated, it fits, and it replays.
#[test]
fn a_livelock_token_fits_in_an_environment_variable_and_replays() {
    let report = helpers::builder("random")
        .executions(1)
        .explore(mutual_spin)
        .unwrap();
    let failure = report.first_failure().expect("nobody raises a flag");
    assert_eq!(failure.kind, FailureKind::StepBound);
    assert!(
        failure.token.starts_with("il3-"),
        "{}",
        &failure.token[..10]
    );
    assert!(
        failure.token.len() < 64 * 1024,
        "{} characters",
        failure.token.len()
    );
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, mutual_spin)
        .unwrap();
    let again = replayed.first_failure().expect("the replay fails again");
    assert_eq!(again.kind, failure.kind);
    assert_eq!(again.steps, failure.steps);
    assert_eq!(again.token, failure.token);
}

/// A table-driven test: one exploration of the fixed twin, then one of the lost update, run
/// on a thread named after this test (a fresh one, as each test's own thread is), with
/// `replay` as `INTERLEAVE_REPLAY` would set it.
fn table(replay: Option<String>) -> (Report, Report) {
    let name = std::thread::current().name().map(str::to_string);
    let mut thread = std::thread::Builder::new();
    if let Some(name) = name {
        thread = thread.name(name);
    }
    thread
        .spawn(move || {
            let explore = |program: fn()| {
                interleave::Builder::from_config(interleave::Config {
                    strategy: "random".parse().unwrap(),
                    executions: 2000,
                    workers: 1,
                    replay: replay.clone(),
                    ..interleave::Config::default()
                })
                .ignore_environment()
                .explore(program)
                .unwrap()
            };
            (explore(fixed_update), explore(lost_update))
        })
        .unwrap()
        .join()
        .unwrap()
}

/// `lost_update` with the increments under the lock.
fn fixed_update() {
    let counter = Arc::new(Mutex::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || *counter.lock().unwrap() += 1)
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 2);
}

/// `INTERLEAVE_REPLAY` used to replay its token in every exploration of a test that runs
/// several, so the table's fixed twin "failed" with a divergence that blamed the program's
/// determinism. A token names the exploration that recorded it, which alone replays it.
#[test]
fn a_replay_token_applies_only_to_the_exploration_that_recorded_it() {
    let (fixed, buggy) = table(None);
    assert!(fixed.is_ok(), "{fixed}");
    let failure = buggy.first_failure().expect("the lost update is found");
    let (fixed, buggy) = table(Some(failure.token.clone()));
    assert!(fixed.is_ok(), "{fixed}");
    assert!(
        fixed.notes.iter().any(|note| note.contains(
            "holds a token recorded by exploration 2 of this test, so this exploration (number \
             1) ignored it and explored as usual"
        )),
        "{fixed}"
    );
    let again = buggy.first_failure().expect("the replay fails again");
    assert_eq!(buggy.executions, 1, "a replay: {buggy}");
    assert_eq!(again.token, failure.token);
}

#[test]
fn replay_panics_with_the_report() {
    let report = explore("pct:d=2", 1, 1, lost_update);
    let token = report.first_failure().unwrap().token.clone();
    let panic = std::panic::catch_unwind(|| interleave::replay(&token, lost_update)).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("an increment was lost"), "{message}");
}

#[test]
fn malformed_tokens_are_clear_errors() {
    let replay = |token: &str| Builder::new().ignore_environment().replay(token, || {});
    assert!(matches!(
        replay("nonsense"),
        Err(Error::Token(TokenError::NotAToken(_)))
    ));
    assert!(matches!(
        replay("il7-AAAA"),
        Err(Error::Token(TokenError::UnsupportedVersion(7)))
    ));
    let report = explore("random", 0, 1, lost_update);
    let token = report.first_failure().unwrap().token.clone();
    let truncated = &token[..token.len() - 3];
    let error = replay(truncated).unwrap_err().to_string();
    assert!(
        error.contains("corrupted") || error.contains("malformed"),
        "{error}"
    );
}

#[test]
fn stale_tokens_report_divergence_and_where() {
    let report = explore("pct:d=2", 0, 1, lost_update);
    let token = report.first_failure().unwrap().token.clone();
    // The program changed: the threads now take a lock first.
    let changed = || {
        let lock = Arc::new(Mutex::new(0));
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let lock = lock.clone();
                thread::spawn(move || *lock.lock().unwrap() += 1)
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    };
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&token, changed)
        .unwrap();
    let failure = replayed.first_failure().expect("divergence is reported");
    assert_eq!(failure.kind, FailureKind::Divergence);
    assert!(
        failure.message.contains("between steps") || failure.message.contains("diverged"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains(
            "The recorded execution in the test \
             `replay::stale_tokens_report_divergence_and_where` failed (panic)"
        ) && failure.message.contains("an increment was lost"),
        "a divergence still says what the recording found:\n{}",
        failure.message
    );
}

/// `lost_update` after edits that do not change what it does: a log line, a blank line, a
/// comment, and the code in another place.
fn lost_update_edited() {
    eprint!("");
    let counter = Arc::new(AtomicUsize::new(0));

    // Three threads increment without a lock.
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || {
                let seen = counter.load(Ordering::SeqCst);

                counter.store(seen + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 3, "an increment was lost");
}

#[test]
fn a_token_replays_across_edits_that_keep_the_operations() {
    for seed in 0..5 {
        let report = explore("pct:d=3", seed, 1, lost_update);
        let failure = report.first_failure().expect("lost update found");
        let replayed = Builder::new()
            .ignore_environment()
            .replay(&failure.token, lost_update_edited)
            .unwrap();
        let again = replayed
            .first_failure()
            .expect("the edited program fails again");
        assert_eq!(again.kind, FailureKind::Panic, "{again}");
        assert_eq!(again.steps, failure.steps);
        assert!(again.message.contains("an increment was lost"), "{again}");
    }
}

#[test]
fn the_replay_variable_replays_only_in_the_test_that_recorded_the_token() {
    let token = explore("pct:d=2", 0, 1, lost_update)
        .first_failure()
        .expect("lost update found")
        .token
        .clone();
    let under_replay_variable = |token: &str, f: fn()| {
        let mut config = interleave::Config::default();
        config
            .apply_vars(|name| (name == "INTERLEAVE_REPLAY").then(|| token.to_string()))
            .unwrap();
        Builder::from_config(config)
            .ignore_environment()
            .executions(50)
            .explore(f)
            .unwrap()
    };
    let here = helpers::first_exploration(|| under_replay_variable(&token, lost_update));
    assert_eq!(here.executions, 1, "the recording test replays the token");
    assert_eq!(here.strategy, "replay");
    assert!(here.first_failure().is_some());

    let elsewhere = std::thread::Builder::new()
        .name("replay::some_other_test".to_string())
        .spawn(move || under_replay_variable(&token, lost_update_edited))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(
        elsewhere.strategy, "auto",
        "another test explores as usual instead of replaying"
    );
    assert!(
        elsewhere.notes.iter().any(|note| note.contains(
            "recorded by the test `replay::the_replay_variable_replays_only_in_the_test_that_\
             recorded_the_token`, so this test (`replay::some_other_test`) ignored it"
        )),
        "{:?}",
        elsewhere.notes
    );
}

/// Everything a report says that could depend on how executions were spread over workers.
fn report_text(report: &Report) -> String {
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("#{} {}\n{f}", f.execution, f.token))
        .collect();
    format!(
        "executions {} steps {} violations {} in {}\nwarnings {:?}\n{}",
        report.executions,
        report.steps,
        report.violations.len(),
        report.violating_executions,
        report.warnings,
        failures.join("\n")
    )
}

#[test]
fn every_strategy_reports_the_same_whatever_the_worker_count() {
    let programs: [(&str, fn()); 2] = [
        ("lost update", lost_update),
        ("lock-order deadlock", lock_order_inversion),
    ];
    let (mut runs, mut failing_runs) = (0, 0);
    for name in interleave::strategy::STRATEGY_NAMES {
        for (program, f) in programs {
            // 0: automatic, one worker per core.
            let reports: Vec<(usize, String)> = [1, 2, 7, interleave::AUTOMATIC_WORKERS]
                .into_iter()
                .map(|workers| {
                    let report = helpers::first_exploration(|| {
                        helpers::builder(name)
                            .seed(7)
                            .workers(workers)
                            .executions(300)
                            .stop_on_first_failure(false)
                            .explore(f)
                            .unwrap()
                    });
                    runs += 1;
                    failing_runs += usize::from(!report.failures.is_empty());
                    (workers, report_text(&report))
                })
                .collect();
            for (workers, text) in &reports[1..] {
                assert_eq!(
                    &reports[0].1, text,
                    "{name} on the {program}: the report with {workers} workers differs from the \
                     one with 1"
                );
            }
        }
    }
    // The comparison must not be vacuous: at least three quarters of the runs find their bug
    // (78 of 84 with 14 strategies and 3 worker counts, before `pos` and `delay` and automatic
    // workers were added).
    assert!(
        failing_runs * 4 >= runs * 3,
        "only {failing_runs} of {runs} runs found a bug"
    );
}

/// The calls a strategy receives, its plans and observations in their order, are the same
/// whatever the number of workers, with and without stopping at the first failure: the workers
/// observe a round's executions in index order and only once every plan of the round is made,
/// even though the driver observes while the round's last executions still run.
#[test]
fn a_strategy_receives_the_same_calls_whatever_the_worker_count() {
    use interleave::strategy::{Outcome, Schedule, Strategy};
    use std::sync::Mutex as StdMutex;

    /// Delegates to `inner` and writes down every plan and observation.
    struct Logged {
        inner: Box<dyn Strategy>,
        log: std::sync::Arc<StdMutex<Vec<String>>>,
    }
    impl Strategy for Logged {
        fn spec(&self) -> String {
            self.inner.spec()
        }
        fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
            self.log.lock().unwrap().push(format!("plan {execution}"));
            self.inner.plan(execution, seed)
        }
        fn observe(&mut self, execution: u64, outcome: &Outcome) {
            let failed = if outcome.failed { " failed" } else { "" };
            let entry = format!("observe {execution}{failed}");
            self.log.lock().unwrap().push(entry);
            self.inner.observe(execution, outcome);
        }
        fn round_size(&self) -> usize {
            self.inner.round_size()
        }
        fn learns_from(&self, execution: u64) -> bool {
            self.inner.learns_from(execution)
        }
        fn wants_trace(&self, execution: u64) -> bool {
            self.inner.wants_trace(execution)
        }
    }

    for stop_on_first_failure in [false, true] {
        for spec in ["random", "pct:d=3"] {
            let logs = [1, 2, 7].map(|workers| {
                let log = std::sync::Arc::new(StdMutex::new(Vec::new()));
                let report = Builder::new()
                    .ignore_environment()
                    .seed(3)
                    .workers(workers)
                    .executions(400)
                    .stop_on_first_failure(stop_on_first_failure)
                    .custom_strategy(Logged {
                        inner: spec.parse::<interleave::StrategySpec>().unwrap().build(),
                        log: log.clone(),
                    })
                    .explore(lost_update)
                    .unwrap();
                assert!(!report.failures.is_empty(), "{spec} missed the lost update");
                let log = log.lock().unwrap().clone();
                log
            });
            // Not vacuous: observations come between plans (the rounds), and one failed.
            let first_observation = logs[0].iter().position(|e| e.starts_with("observe"));
            let last_plan = logs[0].iter().rposition(|e| e.starts_with("plan"));
            assert!(first_observation < last_plan, "{spec}: {:?}", logs[0]);
            assert!(logs[0].iter().any(|e| e.ends_with("failed")));
            for (workers, log) in [2, 7].iter().zip(&logs[1..]) {
                assert_eq!(
                    &logs[0], log,
                    "{spec}, stop at the first failure {stop_on_first_failure}: the calls with \
                     {workers} workers differ from those with 1"
                );
            }
        }
    }
}

#[test]
fn different_seeds_explore_differently() {
    let executions: Vec<u64> = (0..6)
        .map(|seed| {
            explore("random", seed, 1, lost_update)
                .first_failure()
                .unwrap()
                .execution
        })
        .collect();
    assert!(
        executions.windows(2).any(|w| w[0] != w[1]),
        "{executions:?}"
    );
}

#[test]
fn hash_map_iteration_order_is_flagged_as_nondeterminism() {
    let report = explore("random", 0, 1, || {
        let mutexes = [
            Mutex::new(0),
            Mutex::new(1),
            Mutex::new(2),
            Mutex::new(3),
            Mutex::new(4),
        ];
        let by_key: HashMap<usize, &Mutex<i32>> = mutexes.iter().enumerate().collect();
        // Lock order follows the map's random iteration order.
        for lock in by_key.values() {
            drop(lock.lock().unwrap());
        }
    });
    let failure = report.first_failure().expect("nondeterminism flagged");
    assert_eq!(failure.kind, FailureKind::Nondeterminism);
    assert!(failure.message.contains("HashMap"), "{}", failure.message);
    // The objects are named as the interleaving names them (`Mutex3`), not `Mutex#2`.
    assert!(
        failure.message.contains("lock Mutex") && failure.message.contains("(created at"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains('#'), "{}", failure.message);
}

/// The order of std `HashSet` iteration decides where a program draws its random values among
/// its steps: the steps alone repeat, the positions of the draws do not.
#[test]
fn random_draws_that_move_among_the_steps_are_flagged_as_nondeterminism() {
    // With 64 elements, two iteration orders put the draws at the same positions with
    // probability 1/C(64, 32); with 10 it was 1/252, often enough to make the test flaky.
    let report = explore("dfs", 0, 1, || {
        let set: std::collections::HashSet<u64> = (0..64).collect();
        for element in set {
            if element % 2 == 0 {
                interleave::rand::random_bool();
            } else {
                thread::spawn(|| {}).join().unwrap();
            }
        }
    });
    let failure = report.first_failure().expect("nondeterminism flagged");
    assert_eq!(failure.kind, FailureKind::Nondeterminism);
    assert!(
        failure.message.contains("drew its random value"),
        "{}",
        failure.message
    );
}

#[test]
fn state_leaking_between_executions_is_flagged() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = explore("random", 0, 1, || {
        let m = Mutex::new(0);
        if RUNS
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .is_multiple_of(2)
        {
            drop(m.lock().unwrap());
        }
    });
    assert_eq!(
        report.first_failure().unwrap().kind,
        FailureKind::Nondeterminism
    );
}

/// loom's own suite counts runs in a std static and asserts the count: the determinism
/// re-run makes that fail, so the report must say what the second run failed with and how to
/// turn the check off, and with it off a program with one schedule runs exactly once.
#[test]
fn a_run_counter_in_a_static_gets_the_remedy_and_runs_once_without_the_check() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    static RUNS_UNCHECKED: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = explore("dpor", 0, 1, || {
        let previous = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(previous, 0, "the body ran twice");
    });
    let failure = report.first_failure().expect("the re-run differs");
    assert_eq!(failure.kind, FailureKind::Nondeterminism);
    assert!(
        failure.message.contains("the body ran twice")
            && failure.message.contains("check_determinism(false)"),
        "{}",
        failure.message
    );

    let report = Builder::new()
        .ignore_environment()
        .strategy("dpor".parse().unwrap())
        .check_determinism(false)
        .explore(|| {
            let previous = RUNS_UNCHECKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(previous, 0, "the body ran twice");
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.executions, 1);
}

#[test]
fn recorded_random_choices_replay() {
    let program = || {
        let pick = interleave::rand::random_range(0..1000);
        let flip = interleave::rand::random_bool();
        assert!(!(pick == 7 && flip), "rare choice {pick} {flip}");
    };
    let report = Builder::new()
        .ignore_environment()
        .executions(100_000)
        .explore(program)
        .unwrap();
    let failure = report.first_failure().expect("the rare choice is drawn");
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, program)
        .unwrap();
    assert_eq!(replayed.first_failure().unwrap().message, failure.message);
}

#[test]
fn tokens_carry_the_race_mode_and_step_bound() {
    // A racy program explored with races as warnings fails by assertion; replaying the token
    // with default settings (races fail) must use the recorded mode and fail the same way.
    let racy = || {
        let value = Arc::new(interleave::cell::Var::new(0));
        let other = value.clone();
        let t = thread::spawn(move || {
            let seen = other.get();
            other.set(seen + 1);
        });
        let seen = value.get();
        value.set(seen + 1);
        t.join().unwrap();
        assert_eq!(value.get(), 2, "lost update");
    };
    let report = Builder::new()
        .ignore_environment()
        .data_races(interleave::RaceMode::Warn)
        .strategy("pct:d=2".parse().unwrap())
        .executions(500)
        .explore(racy)
        .unwrap();
    let failure = report.first_failure().expect("lost update found");
    assert_eq!(failure.kind, FailureKind::Panic);
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, racy)
        .unwrap();
    assert_eq!(replayed.first_failure().unwrap().kind, FailureKind::Panic);
    let spin = || {
        let flag = Arc::new(AtomicUsize::new(0));
        while flag.load(Ordering::SeqCst) == 0 {}
    };
    let report = Builder::new()
        .ignore_environment()
        .max_steps(300)
        .executions(1)
        .explore(spin)
        .unwrap();
    let failure = report.first_failure().unwrap();
    assert_eq!(failure.kind, FailureKind::StepBound);
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, spin)
        .unwrap();
    let again = replayed.first_failure().unwrap();
    assert_eq!(again.kind, FailureKind::StepBound, "{again}");
    assert_eq!(again.steps, 300);
}

/// `n` loads of `value`, all at one site, so two programs that call it perform the same
/// operations there.
fn loads(value: &AtomicUsize, n: usize) {
    for _ in 0..n {
        value.load(Ordering::SeqCst);
    }
}

/// The token of the first failure of `f`, which fails on every schedule.
fn token_of(f: impl Fn() + Sync) -> interleave::Failure {
    explore("random", 0, 1, f)
        .first_failure()
        .expect("the program always fails")
        .clone()
}

/// A divergence report names the steps where the operations first differed from the recording
/// (as precisely as the token's per-64-step fingerprints allow), not only the later step where
/// the recorded schedule became impossible, and numbers steps from 1 like the interleaving.
#[test]
fn divergence_names_where_the_operations_first_differed() {
    // Recorded: 3 loads at one site, 150 at another, then a spawn.
    let recorded = token_of(|| {
        let value = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            value.load(Ordering::SeqCst);
        }
        loads(&value, 150);
        let other = value.clone();
        thread::spawn(move || loads(&other, 1)).join().unwrap();
        panic!("recorded");
    });
    // Replayed: the spawn comes first, so the first steps already differ; the schedule becomes
    // impossible only at step 155 (after the main thread's start, the spawn and 152 loads),
    // where the recording runs the main thread but it waits to join.
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&recorded.token, || {
            let value = Arc::new(AtomicUsize::new(0));
            let other = value.clone();
            let child = thread::spawn(move || loads(&other, 200));
            for _ in 0..2 {
                value.load(Ordering::SeqCst);
            }
            loads(&value, 150);
            child.join().unwrap();
        })
        .unwrap();
    let failure = replayed.first_failure().expect("the replay diverges");
    assert_eq!(failure.kind, FailureKind::Divergence);
    let message = &failure.message;
    assert!(
        message.contains("first differed from the recording between steps 1 and 64"),
        "{message}"
    );
    assert!(
        message.contains("impossible at step 155: it runs thread 0 (main) next"),
        "{message}"
    );
    let report = failure.to_string();
    assert!(
        report.contains("   154 |") && !report.contains("   155 |"),
        "the table numbers the 154 steps before the impossible one from 1: {report}"
    );
}

/// A program that goes on after the recorded schedule ended is told so, not sent to a thread
/// with the number `usize::MAX`.
#[test]
fn a_program_that_outlives_its_recording_is_told_so() {
    // The object is created at one site in both programs, so the steps they share are the same.
    let counter = || AtomicUsize::new(0);
    let recorded = token_of(|| {
        loads(&counter(), 2);
        panic!("recorded");
    });
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&recorded.token, || loads(&counter(), 3))
        .unwrap();
    let failure = replayed.first_failure().expect("the replay diverges");
    assert_eq!(failure.kind, FailureKind::Divergence);
    let message = &failure.message;
    let steps = recorded.steps;
    assert!(
        !message.contains(&usize::MAX.to_string()),
        "no thread has that number: {message}"
    );
    assert!(
        message.contains(&format!("the recorded schedule ended after {steps} steps"))
            && message.contains(&format!("at step {}", steps + 1)),
        "{message}"
    );
}
