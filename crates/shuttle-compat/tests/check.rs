//! interleave-shuttle finds bugs with shuttle's entry points, passes correct programs, keeps
//! the key words of shuttle's panics, and fails a test whose code panicked with that panic.

use std::panic::{catch_unwind, AssertUnwindSafe};

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::sync::{Arc, Mutex};
use shuttle::{thread, Config, FailurePersistence, MaxSteps, PortfolioRunner, Runner};

fn panic_message<R: std::fmt::Debug>(f: impl FnOnce() -> R) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the run should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn lost_update() {
    let hits = Arc::new(AtomicUsize::new(0));
    let other = hits.clone();
    let t = thread::spawn(move || {
        let seen = other.load(Ordering::SeqCst);
        other.store(seen + 1, Ordering::SeqCst);
    });
    let seen = hits.load(Ordering::SeqCst);
    hits.store(seen + 1, Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 2, "an increment was lost");
}

fn lock_order_inversion() {
    let a = Arc::new(Mutex::new(()));
    let b = Arc::new(Mutex::new(()));
    let (a2, b2) = (a.clone(), b.clone());
    let t = thread::spawn(move || {
        let _b = b2.lock().unwrap();
        let _a = a2.lock().unwrap();
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    t.join().unwrap();
}

#[test]
fn check_random_and_check_pct_find_a_lost_update() {
    let message = panic_message(|| shuttle::check_random(lost_update, 1000));
    assert!(message.contains("an increment was lost"), "{message}");
    let message = panic_message(|| shuttle::check_pct(lost_update, 1000, 2));
    assert!(message.contains("an increment was lost"), "{message}");
}

#[test]
fn check_dfs_reports_a_deadlock_in_shuttle_words() {
    let message = panic_message(|| shuttle::check_dfs(lock_order_inversion, None));
    assert!(message.starts_with("deadlock"), "{message}");
}

#[test]
fn a_relock_keeps_shuttle_words() {
    let message = panic_message(|| {
        shuttle::check_random(
            || {
                let lock = Mutex::new(());
                let _first = lock.lock().unwrap();
                let _second = lock.lock().unwrap();
            },
            1,
        )
    });
    assert!(
        message.contains("tried to acquire a Mutex it already holds"),
        "{message}"
    );
}

/// A second read while a writer waits in between deadlocks (interleave explores the writer
/// preference std allows); shuttle refuses the second read itself, and the report carries its
/// words.
#[test]
fn a_deadlocking_recursive_read_keeps_shuttle_words() {
    let message = panic_message(|| {
        shuttle::check_dfs(
            || {
                let lock = Arc::new(shuttle::sync::RwLock::new(0));
                let first = lock.read().unwrap();
                let writer = {
                    let lock = lock.clone();
                    thread::spawn(move || *lock.write().unwrap() += 1)
                };
                thread::yield_now();
                drop(lock.read().unwrap());
                drop(first);
                writer.join().unwrap();
            },
            None,
        )
    });
    assert!(
        message.contains("tried to acquire a RwLock it already holds"),
        "{message}"
    );
}

/// With `immediately_return_on_panic`, shuttle's message replaces the panic's payload.
#[test]
fn early_return_on_panic_keeps_shuttle_words() {
    let mut config = Config::new();
    config
        .ungraceful_shutdown_config
        .immediately_return_on_panic = true;
    let message = panic_message(|| {
        Runner::new(RandomScheduler::new(1), config).run(|| panic!("the first panic"))
    });
    assert!(
        message.starts_with("Task panicked, and early return is enabled."),
        "{message}"
    );
    assert!(message.contains("the first panic"), "{message}");
}

#[test]
fn a_correct_program_passes_every_schedule() {
    shuttle::check_dfs(
        || {
            let total = Arc::new(Mutex::new(0));
            let other = total.clone();
            let t = thread::spawn(move || *other.lock().unwrap() += 1);
            *total.lock().unwrap() += 1;
            t.join().unwrap();
            assert_eq!(*total.lock().unwrap(), 2);
        },
        None,
    );
}

fn spin_forever() {
    loop {
        thread::yield_now();
    }
}

#[test]
fn max_steps_fail_after_and_continue_after() {
    let mut config = Config::new();
    config.max_steps = MaxSteps::FailAfter(50);
    let message = panic_message(|| Runner::new(RandomScheduler::new(1), config).run(spin_forever));
    assert!(message.contains("exceeded max_steps bound"), "{message}");

    let mut config = Config::new();
    config.max_steps = MaxSteps::ContinueAfter(50);
    let executions = Runner::new(RandomScheduler::new(3), config).run(spin_forever);
    assert_eq!(executions, 3);
}

/// A panic of the test's code fails the test with its own message, as under shuttle, and the
/// schedule persisted to a file replays it.
#[test]
fn a_panic_keeps_its_message_and_the_persisted_schedule_replays_it() {
    let directory = std::env::temp_dir().join(format!(
        "interleave-shuttle-persisted-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&directory).expect("a scratch directory");
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::File(Some(directory.clone()));
    let message =
        panic_message(|| Runner::new(RandomScheduler::new(1000), config).run(lost_update));
    assert!(
        message.starts_with("assertion `left == right` failed: an increment was lost"),
        "{message}"
    );
    let schedules: Vec<_> = std::fs::read_dir(&directory)
        .expect("the directory is readable")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert_eq!(schedules.len(), 1, "one failure, one schedule");
    let replayed = panic_message(|| shuttle::replay_from_file(lost_update, &schedules[0]));
    std::fs::remove_dir_all(&directory).expect("the scratch directory is removed");
    assert!(replayed.contains("an increment was lost"), "{replayed}");
}

#[test]
fn a_portfolio_reports_the_failure_of_any_scheduler() {
    let mut portfolio = PortfolioRunner::new(true, Config::new());
    portfolio.add(RandomScheduler::new(500));
    portfolio.add(PctScheduler::new(2, 500));
    let message = panic_message(|| portfolio.run(lost_update));
    assert!(message.contains("an increment was lost"), "{message}");
}

/// A spawned thread's panic fails the test with its own payload, as under shuttle, although
/// the main thread's `join().unwrap()` would otherwise panic first with "called
/// `Result::unwrap()` on an `Err` value".
#[test]
fn a_spawned_threads_panic_fails_with_its_own_payload() {
    let message = panic_message(|| {
        shuttle::check_random(
            || {
                let worker = thread::spawn(|| panic!("the worker's invariant broke"));
                worker.join().unwrap();
            },
            10,
        )
    });
    assert_eq!(message, "the worker's invariant broke");
}

#[test]
#[should_panic(expected = "possible nondeterminism")]
fn uncontrolled_nondeterminism_keeps_shuttle_words() {
    // A std counter outside the scheduler's control: every other run spawns a thread.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    shuttle::check_uncontrolled_nondeterminism(
        move || {
            if runs
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                .is_multiple_of(2)
            {
                thread::spawn(|| {}).join().unwrap();
            }
        },
        10,
    );
}

/// As under shuttle's DFS, a thread may go on past its `yield_now` before the others step:
/// `check_dfs` reaches the outcome where a spawned thread raises a flag after its yield before
/// the main thread reads it, which plain `dfs`'s yield rule leaves out.
#[test]
fn check_dfs_lets_a_thread_go_on_past_its_yield() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let collected = seen.clone();
    shuttle::check_dfs(
        move || {
            let flag = Arc::new(AtomicUsize::new(0));
            let raiser = {
                let flag = flag.clone();
                thread::spawn(move || {
                    thread::yield_now();
                    flag.store(1, Ordering::SeqCst);
                })
            };
            collected
                .lock()
                .unwrap()
                .insert(flag.load(Ordering::SeqCst));
            raiser.join().unwrap();
        },
        None,
    );
    assert_eq!(*seen.lock().unwrap(), [0, 1].into());
}
