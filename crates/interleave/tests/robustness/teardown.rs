//! Teardown and panics: what happens after the first failure of an execution, when the
//! remaining threads are left where they stood or unwound, and what the report says about the
//! panics that happened.
//! Every test runs code that used to take the process down (a double drop, an abort, a hang, a
//! panic escaping `explore`), so each runs in a child process (`Probe`) and asserts that the
//! child survived, printed the original failure, and could run a correct program afterwards
//! on the same OS thread.

use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool as StdAtomicBool, AtomicUsize as StdAtomicUsize, Ordering};
use std::time::Duration;

use interleave::cell::UnsafeCell;
use interleave::sync::atomic::AtomicBool;
use interleave::sync::{mpsc, Arc, Mutex};
use interleave::{thread, Builder, FailureKind, Report};

use crate::probe::{Outcome, Probe};

fn explore(f: impl Fn() + Sync) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("random".parse().expect("a valid strategy"))
        .executions(50)
        .explore(f)
        .expect("a valid configuration")
}

/// The report's first failure as the user reads it (kind, message, interleaving, token).
fn first_failure_text(report: &Report) -> String {
    report
        .first_failure()
        .map(|failure| format!("{:?}: {failure}", failure.kind))
        .unwrap_or_else(|| "no failure".to_string())
}

/// A correct program that uses the primitives (and a cell) runs clean: the OS thread's
/// runtime state was reset by whatever ran before on it.
fn a_correct_program_still_passes() {
    let report = explore(|| {
        let cell = Arc::new(UnsafeCell::new(0));
        let lock = Arc::new(Mutex::new(0));
        let (cell2, lock2) = (cell.clone(), lock.clone());
        let t = thread::spawn(move || {
            let _guard = lock2.lock().unwrap();
            cell2.with_mut(|value| unsafe { *value += 1 });
        });
        {
            let _guard = lock.lock().unwrap();
            cell.with_mut(|value| unsafe { *value += 1 });
        }
        t.join().unwrap();
        assert_eq!(*lock.lock().unwrap(), 0);
    });
    assert!(report.is_ok(), "{}", first_failure_text(&report));
    assert_eq!(report.executions, 50);
}

fn assert_survived_with(outcome: &Outcome, expected: &[&str]) {
    assert!(outcome.survived(), "{outcome:?}");
    assert_eq!(outcome.code, Some(0), "{}", outcome.output());
    for text in expected {
        assert!(
            outcome.output().contains(text),
            "{text:?} missing: {outcome:?}"
        );
    }
}

/// Panics with `message` when dropped, and counts its drops.
struct PanicOnDrop {
    message: &'static str,
    drops: &'static StdAtomicUsize,
}

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        panic!("{}", self.message);
    }
}

#[test]
fn an_unstarted_thread_whose_closure_panics_on_drop_is_dropped_once() {
    let probe = Probe::new(
        module_path!(),
        "an_unstarted_thread_whose_closure_panics_on_drop_is_dropped_once",
    );
    if let Some(outcome) = probe.run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let report = Builder::new()
            .ignore_environment()
            .executions(1)
            .check_determinism(false)
            .explore(|| {
                let guard = PanicOnDrop {
                    message: "the closure's drop panicked",
                    drops: &DROPS,
                };
                // No scheduling point between the spawn and the panic: the thread never starts.
                let _never_started = thread::spawn(move || drop(guard));
                panic!("the original failure");
            })
            .expect("a valid configuration");
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.starts_with("Panic"), "{text}");
        assert!(text.contains("the original failure"), "{text}");
        assert_eq!(DROPS.load(Ordering::SeqCst), 1, "dropped exactly once");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
}

/// After a failure, a detached task parked between polls is cancelled rather than unwound: it
/// drops its future with no panic in flight, so its destructor may lock, and one that then
/// panics is reported as a warning instead of aborting the process (as it did when teardown
/// raised its unwind in the task). The original failure is the report.
#[test]
fn a_parked_task_is_cancelled_after_a_failure_so_its_panicking_destructor_cannot_abort() {
    let probe = Probe::new(
        module_path!(),
        "a_parked_task_is_cancelled_after_a_failure_so_its_panicking_destructor_cannot_abort",
    );
    if let Some(outcome) = probe.run(|| {
        static LOCKED: StdAtomicUsize = StdAtomicUsize::new(0);
        let report = Builder::new()
            .ignore_environment()
            .executions(1)
            .check_determinism(false)
            .explore(|| {
                let lock = Arc::new(Mutex::new(0));
                let (started_tx, started_rx) = mpsc::channel();
                let in_task = lock.clone();
                drop(interleave::future::spawn(async move {
                    let _guard = PanicOnDrop {
                        message: "the parked task's destructor panicked",
                        drops: &LOCKED,
                    };
                    let _locks = LocksOnDrop(in_task, &LOCKED);
                    started_tx.send(()).unwrap();
                    std::future::pending::<()>().await;
                }));
                started_rx.recv().unwrap();
                panic!("the original failure");
            })
            .expect("a valid configuration");
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.starts_with("Panic"), "{text}");
        assert!(text.contains("the original failure"), "{text}");
        assert_eq!(LOCKED.load(Ordering::SeqCst), 2, "both destructors ran");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
}

/// Takes its lock when dropped, and counts that it did.
struct LocksOnDrop(Arc<Mutex<u32>>, &'static StdAtomicUsize);

impl Drop for LocksOnDrop {
    fn drop(&mut self) {
        *self.0.lock().unwrap() += 1;
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_destructor_panicking_during_unwinding_prints_both_messages_before_the_abort() {
    let here = |label| {
        Probe::new(
            module_path!(),
            "a_destructor_panicking_during_unwinding_prints_both_messages_before_the_abort",
        )
        .label(label)
    };
    // The thread's own panic unwinds through a destructor that panics: Rust aborts the
    // process; the report must be printed first, with both messages.
    if let Some(outcome) = here("own").run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let _ = explore(|| {
            let _guard = PanicOnDrop {
                message: "the destructor's own panic",
                drops: &DROPS,
            };
            panic!("the original failure");
        });
    }) {
        let output = outcome.output();
        assert!(!outcome.timed_out, "{outcome:?}");
        assert!(output.contains("the original failure"), "{outcome:?}");
        assert!(output.contains("the destructor's own panic"), "{outcome:?}");
        // The panicking thread is unwinding: it has no next operation, and the table does not
        // repeat its last step as one.
        assert!(!output.contains("    next |"), "{outcome:?}");
        // The token names its test, as every token does: `INTERLEAVE_REPLAY` set for a whole
        // run then replays it in this test only, and another test explores as usual with a
        // note (it used to replay the token and report a divergence).
        let token = output
            .split("INTERLEAVE_REPLAY=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no token: {outcome:?}"))
            .to_string();
        let report = std::thread::Builder::new()
            .name("another::test".to_string())
            .spawn(move || {
                let config = interleave::Config {
                    replay: Some(token),
                    executions: 10,
                    ..interleave::Config::default()
                };
                Builder::from_config(config)
                    .explore(|| {})
                    .expect("a valid configuration")
            })
            .expect("a thread")
            .join()
            .expect("no panic");
        assert!(report.is_ok(), "{report}");
        assert!(
            report
                .notes
                .iter()
                .any(|note| note.contains("recorded by the test `teardown::")),
            "{report}"
        );
    }
    // A thread that teardown used to unwind runs a destructor that panics: that aborted the
    // process after the report. Teardown now leaves the thread where it stood, so the
    // destructor does not run, the process survives, and the report is the original failure.
    if let Some(outcome) = here("teardown").run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let report = explore(|| {
            let started = Arc::new(AtomicBool::new(false));
            let flag = started.clone();
            let _child = thread::spawn(move || {
                let _guard = PanicOnDrop {
                    message: "the torn-down thread's destructor panicked",
                    drops: &DROPS,
                };
                flag.store(true, interleave::sync::atomic::Ordering::SeqCst);
                thread::park();
            });
            while !started.load(interleave::sync::atomic::Ordering::SeqCst) {
                thread::yield_now();
            }
            panic!("the original failure");
        });
        println!("{}", first_failure_text(&report));
        assert_eq!(DROPS.load(Ordering::SeqCst), 0, "the destructor never ran");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
        assert!(
            !outcome
                .output()
                .contains("the torn-down thread's destructor panicked"),
            "{outcome:?}"
        );
    }
    // A newcomer's pool: a worker panics holding the lock, the main thread's `unwrap` of the
    // poisoned lock panics, and a destructor panics during that unwind. The report printed
    // before the abort named the two last panics only; the worker's, the cause, is noted too.
    if let Some(outcome) = here("cause").run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let _ = Builder::new()
            .ignore_environment()
            .strategy("dfs".parse().expect("a valid strategy"))
            .executions(50)
            .explore(|| {
                let lock = Arc::new(Mutex::new(0));
                let held = lock.clone();
                let worker = thread::spawn(move || {
                    let _guard = held.lock().unwrap();
                    panic!("the worker's panic, the cause");
                });
                while !worker.is_finished() {
                    thread::yield_now();
                }
                let _guard = PanicOnDrop {
                    message: "the destructor's own panic",
                    drops: &DROPS,
                };
                let _value = lock.lock().unwrap();
            });
    }) {
        let output = outcome.output();
        assert!(output.contains("PoisonError"), "{outcome:?}");
        assert!(output.contains("the destructor's own panic"), "{outcome:?}");
        assert!(
            output.contains("note: before this, thread 1 panicked at ")
                && output.contains("the worker's panic, the cause"),
            "{outcome:?}"
        );
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The Rust Book's thread pool: its `Drop` closes the channel and joins every worker with
/// `join().unwrap()`.
struct ThreadPool {
    workers: Vec<thread::JoinHandle<()>>,
    sender: Option<mpsc::Sender<Job>>,
}

impl ThreadPool {
    fn new(size: usize) -> ThreadPool {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let workers = (0..size)
            .map(|_| {
                let receiver = receiver.clone();
                thread::spawn(move || loop {
                    let message = receiver.lock().unwrap().recv();
                    match message {
                        Ok(job) => job(),
                        Err(_) => break,
                    }
                })
            })
            .collect();
        ThreadPool {
            workers,
            sender: Some(sender),
        }
    }

    fn execute(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(sender) = &self.sender {
            sender.send(Box::new(job)).unwrap();
        }
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        drop(self.sender.take());
        for worker in self.workers.drain(..) {
            worker.join().unwrap();
        }
    }
}

#[test]
fn a_drop_that_joins_threads_during_teardown_does_not_abort() {
    let probe = Probe::new(
        module_path!(),
        "a_drop_that_joins_threads_during_teardown_does_not_abort",
    );
    if let Some(outcome) = probe.run(|| {
        let report = explore(|| {
            let pool = ThreadPool::new(2);
            pool.execute(|| panic!("the job's assertion failed"));
            // The main thread waits forever; the worker's panic ends the execution and the
            // pool is dropped while the main thread is unwound.
            thread::park();
        });
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.starts_with("Panic"), "{text}");
        assert!(text.contains("the job's assertion failed"), "{text}");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the job's assertion failed"]);
    }
}

/// Spins on `yield_now` until the flag it watches is set, which nobody does.
struct SpinOnDrop(Arc<AtomicBool>);

impl Drop for SpinOnDrop {
    fn drop(&mut self) {
        while !self.0.load(interleave::sync::atomic::Ordering::SeqCst) {
            thread::yield_now();
        }
    }
}

#[test]
fn a_drop_that_spins_during_teardown_is_bounded() {
    let probe = Probe::new(
        module_path!(),
        "a_drop_that_spins_during_teardown_is_bounded",
    )
    .timeout(Duration::from_secs(30));
    if let Some(outcome) = probe.run(|| {
        let report = explore(|| {
            let _spin = SpinOnDrop(Arc::new(AtomicBool::new(false)));
            // Never joined, so the panic is the execution's failure.
            let _t = thread::spawn(|| panic!("the original failure"));
            thread::park();
        });
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.contains("the original failure"), "{text}");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
}

#[test]
fn a_catch_unwind_in_the_test_cannot_keep_running_after_teardown() {
    let here = |label| {
        Probe::new(
            module_path!(),
            "a_catch_unwind_in_the_test_cannot_keep_running_after_teardown",
        )
        .label(label)
        .timeout(Duration::from_secs(30))
    };
    // The forced unwind is caught once; the next visible operation must not run.
    if let Some(outcome) = here("once").run(|| {
        static REACHED: StdAtomicBool = StdAtomicBool::new(false);
        let report = explore(|| {
            let started = Arc::new(AtomicBool::new(false));
            let flag = started.clone();
            let _child = thread::spawn(move || {
                flag.store(true, interleave::sync::atomic::Ordering::SeqCst);
                panic!("the original failure");
            });
            let _ = panic::catch_unwind(AssertUnwindSafe(|| loop {
                thread::park();
            }));
            thread::yield_now();
            REACHED.store(true, Ordering::SeqCst);
            panic!("a late panic after the execution ended");
        });
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.contains("the original failure"), "{text}");
        assert!(!text.contains("a late panic"), "{text}");
        assert!(
            !REACHED.load(Ordering::SeqCst),
            "user code ran after teardown"
        );
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
    // The forced unwind is caught again and again: teardown still ends.
    if let Some(outcome) = here("loop").run(|| {
        let report = explore(|| {
            let _child = thread::spawn(|| panic!("the original failure"));
            loop {
                let _ = panic::catch_unwind(AssertUnwindSafe(thread::park));
            }
        });
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.contains("the original failure"), "{text}");
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
}

#[test]
fn a_panicking_thread_local_destructor_is_reported_and_leaves_the_thread_usable() {
    let probe = Probe::new(
        module_path!(),
        "a_panicking_thread_local_destructor_is_reported_and_leaves_the_thread_usable",
    );
    if let Some(outcome) = probe.run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        interleave::thread_local! {
            static LOCAL: PanicOnDrop = PanicOnDrop {
                message: "the thread-local's destructor panicked",
                drops: &DROPS,
            };
        }
        let report = explore(|| {
            let t = thread::spawn(|| LOCAL.with(|_| ()));
            let _ = t.join();
        });
        let text = first_failure_text(&report);
        println!("{text}");
        assert!(text.starts_with("Panic"), "{text}");
        assert!(
            text.contains("the thread-local's destructor panicked"),
            "{text}"
        );
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the thread-local's destructor panicked"]);
    }
}

#[test]
fn a_panic_inside_unsafe_cell_with_is_reported_and_resets_the_access_flag() {
    let report = explore(|| {
        let cell = UnsafeCell::new(0);
        cell.with(|_| panic!("the assertion inside with"));
    });
    let failure = report.first_failure().expect("the panic is found");
    assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
    assert!(
        failure.message.contains("the assertion inside with"),
        "{failure}"
    );
    a_correct_program_still_passes();
}

#[test]
fn a_panic_re_raised_with_resume_unwind_is_reported_with_its_own_message() {
    let report = explore(|| {
        let caught = panic::catch_unwind(|| panic!("an earlier panic, caught"));
        assert!(caught.is_err());
        panic::resume_unwind(Box::new("the re-raised payload"));
    });
    let failure = report.first_failure().expect("the panic is found");
    assert_eq!(failure.message, "the re-raised payload", "{failure}");
}

#[test]
fn a_nondeterministic_failing_execution_keeps_the_failed_assertion() {
    static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = explore(|| {
        let lock = Mutex::new(0);
        if RUNS.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
            drop(lock.lock().unwrap());
        }
        panic!("the assertion that actually failed");
    });
    let failure = report.first_failure().expect("the failure is found");
    assert!(
        failure
            .message
            .contains("the assertion that actually failed"),
        "{failure}"
    );
    assert!(
        failure.message.contains("behaved differently when re-run"),
        "{failure}"
    );
}

/// Yields, then panics, when dropped: a destructor that Rust runs while its thread unwinds a
/// panic, and that reaches a scheduling point before it panics too.
struct YieldsThenPanicsOnDrop(&'static StdAtomicUsize);

impl Drop for YieldsThenPanicsOnDrop {
    fn drop(&mut self) {
        thread::yield_now();
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("the destructor's own panic");
    }
}

/// Under `panic_stops_execution` the first panic fails the execution at once and its thread is
/// never resumed: a destructor of its unwind that would panic at its next scheduling point does
/// not run, so the process does not abort, and the report is the first panic's, with a warning
/// that the stack was leaked; the OS thread still runs a correct program afterwards. The same
/// program without the setting aborts the process (after printing the report), as under std.
#[test]
fn panic_stops_execution_leaks_the_unwinding_thread_instead_of_aborting() {
    let here = |label| {
        Probe::new(
            module_path!(),
            "panic_stops_execution_leaks_the_unwinding_thread_instead_of_aborting",
        )
        .label(label)
    };
    let program = || {
        let child = thread::spawn(|| {
            static CHILD_DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
            let _guard = YieldsThenPanicsOnDrop(&CHILD_DROPS);
            panic!("the spawned thread's panic");
        });
        let _ = child.join();
    };
    if let Some(outcome) = here("stops").run(move || {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        for (index, body) in [
            Box::new(|| {
                let _guard = YieldsThenPanicsOnDrop(&DROPS);
                panic!("the original failure");
            }) as Box<dyn Fn() + Sync>,
            Box::new(program),
        ]
        .into_iter()
        .enumerate()
        {
            let report = Builder::new()
                .ignore_environment()
                .executions(20)
                .panic_stops_execution(true)
                .explore(body)
                .expect("a valid configuration");
            let text = first_failure_text(&report);
            println!("{text}");
            assert!(text.starts_with("Panic"), "{text}");
            let expected = ["the original failure", "the spawned thread's panic"][index];
            assert!(text.contains(expected), "{text}");
            assert!(!text.contains("the destructor's own panic"), "{text}");
            assert!(
                report
                    .warnings
                    .iter()
                    .any(|warning| warning.contains("its stack was leaked")),
                "{:?}",
                report.warnings
            );
        }
        assert_eq!(
            DROPS.load(Ordering::SeqCst),
            0,
            "the destructor never went on"
        );
        a_correct_program_still_passes();
    }) {
        assert_survived_with(
            &outcome,
            &["the original failure", "the spawned thread's panic"],
        );
    }
    if let Some(outcome) = here("std").run(move || {
        let _ = Builder::new()
            .ignore_environment()
            .executions(20)
            .explore(program);
    }) {
        assert!(!outcome.survived(), "{outcome:?}");
        assert!(
            outcome.output().contains("the destructor's own panic"),
            "{outcome:?}"
        );
    }
}

/// Yields `turns` times when dropped: keeps its thread unwinding across scheduling points.
struct YieldsOnDrop(u32);

impl Drop for YieldsOnDrop {
    fn drop(&mut self) {
        for _ in 0..self.0 {
            thread::yield_now();
        }
    }
}

/// A thread still unwinding its panic when the step bound stops the execution: the panic is
/// the program's and no `join` observed it, so it is the report's failure (the step bound a
/// note under it), whether teardown lets the unwind finish or has to abandon the thread because
/// a destructor blocks; it used to be lost (a warning at most). The twin catches its panic, so
/// the step bound stays the failure. The abandoned unwind leaves the OS thread panicking, so
/// the test runs in a child process.
#[test]
fn a_panic_unwinding_when_the_execution_stops_is_reported() {
    let probe = Probe::new(
        module_path!(),
        "a_panic_unwinding_when_the_execution_stops_is_reported",
    );
    let Some(outcome) = probe.run(panics_unwinding_at_the_stop_are_reported) else {
        return;
    };
    assert_survived_with(
        &outcome,
        &["the unwinding thread's panic", "the blocked thread's panic"],
    );
}

fn panics_unwinding_at_the_stop_are_reported() {
    let run = |body: fn()| {
        Builder::new()
            .ignore_environment()
            .executions(3)
            .max_steps(200)
            .check_determinism(false)
            .explore(move || {
                let _child = thread::spawn(body);
                loop {
                    thread::yield_now();
                }
            })
            .expect("a valid configuration")
    };
    // The unwind yields past the step bound and then finishes during teardown.
    let finishes = run(|| {
        let _yields = YieldsOnDrop(1_000);
        panic!("the unwinding thread's panic");
    });
    let failure = finishes.first_failure().expect("it fails");
    println!("{failure}");
    assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
    assert!(
        failure.message.contains("the unwinding thread's panic"),
        "{failure}"
    );

    // The twin catches its panic: the step bound is the failure.
    let caught = run(|| {
        let _ = panic::catch_unwind(|| {
            let _yields = YieldsOnDrop(1_000);
            panic!("a caught panic");
        });
        loop {
            thread::yield_now();
        }
    });
    let failure = caught.first_failure().expect("it fails");
    assert_eq!(failure.kind, FailureKind::StepBound, "{failure}");

    // The unwind blocks on a lock nobody releases.
    let blocks = Builder::new()
        .ignore_environment()
        .executions(3)
        .max_steps(200)
        .check_determinism(false)
        .explore(|| {
            let lock = Arc::new(Mutex::new(0));
            let _held = lock.lock().unwrap();
            let in_child = lock.clone();
            let _child = thread::spawn(move || {
                struct LocksOnDrop(Arc<Mutex<i32>>);
                impl Drop for LocksOnDrop {
                    fn drop(&mut self) {
                        drop(self.0.lock());
                    }
                }
                let _locks = LocksOnDrop(in_child);
                panic!("the blocked thread's panic");
            });
            loop {
                thread::yield_now();
            }
        })
        .expect("a valid configuration");
    let failure = blocks.first_failure().expect("it fails");
    println!("{failure}");
    assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
    assert!(
        failure.message.contains("the blocked thread's panic"),
        "{failure}"
    );
    assert!(
        failure.message.contains("blocked before it had finished"),
        "{failure}"
    );
}

/// A failure while the end of an execution drops the detached tasks (here a data race in the
/// first task's destructor) stops the end with the other tasks cancelled but not yet run:
/// teardown lets each drop its future with no panic in flight, so one whose destructor panics
/// is a warning; raising teardown's unwind in it, as it did, made that panic Rust's abort.
#[test]
fn a_failure_during_the_end_lets_the_cancelled_tasks_drop_their_futures_without_aborting() {
    let probe = Probe::new(
        module_path!(),
        "a_failure_during_the_end_lets_the_cancelled_tasks_drop_their_futures_without_aborting",
    );
    if let Some(outcome) = probe.run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let report = Builder::new()
            .ignore_environment()
            .executions(10)
            .check_determinism(false)
            .explore(|| {
                let cell = Arc::new(UnsafeCell::new(0));
                let in_task = cell.clone();
                let (started_tx, started_rx) = mpsc::channel();
                drop(interleave::future::spawn(async move {
                    struct Races(Arc<UnsafeCell<i32>>);
                    impl Drop for Races {
                        fn drop(&mut self) {
                            self.0.with_mut(|value| unsafe { *value += 1 });
                        }
                    }
                    let _races = Races(in_task);
                    started_tx.send(()).unwrap();
                    std::future::pending::<()>().await;
                }));
                started_rx.recv().unwrap();
                let (started_tx, started_rx) = mpsc::channel();
                drop(interleave::future::spawn(async move {
                    let _panics = PanicOnDrop {
                        message: "the second task's destructor panicked",
                        drops: &DROPS,
                    };
                    started_tx.send(()).unwrap();
                    std::future::pending::<()>().await;
                }));
                started_rx.recv().unwrap();
                cell.with_mut(|value| unsafe { *value += 1 });
            })
            .expect("a valid configuration");
        let failure = report.first_failure().expect("the race fails");
        println!("{:?}: {failure}", failure.kind);
        assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
        assert!(
            report
                .warnings
                .iter()
                .any(|warning| warning.contains("the second task's destructor panicked")),
            "{:?}",
            report.warnings
        );
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["DataRace"]);
    }
}

/// Counts its drops.
struct Counted(&'static StdAtomicUsize);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A thread's result and closure share one block with its handle, which the execution reuses
/// for later spawns: whatever lets go of it last (the joiner, a thread whose handle was dropped
/// before it finished, a handle kept past the end of its execution, a thread torn down after a
/// failure before it started) drops each value exactly once, and nothing is dropped twice.
#[test]
fn results_and_closures_are_dropped_once_however_their_block_is_let_go() {
    static CREATED: StdAtomicUsize = StdAtomicUsize::new(0);
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    static KEPT: std::sync::Mutex<Vec<thread::JoinHandle<Counted>>> =
        std::sync::Mutex::new(Vec::new());
    fn counted() -> Counted {
        CREATED.fetch_add(1, Ordering::SeqCst);
        Counted(&DROPS)
    }
    let report = Builder::new()
        .ignore_environment()
        .strategy("random".parse().expect("a valid strategy"))
        .executions(200)
        .check_determinism(false)
        .explore(|| {
            // Joined: the joiner gets the value and drops it.
            let joined = thread::spawn(counted);
            // Detached: the thread, finishing after its handle is gone, drops its result.
            drop(thread::spawn(counted));
            // Kept past the end of the execution: dropped outside any execution.
            let kept = thread::spawn(counted);
            // A closure that owns a value and returns nothing.
            let owned = counted();
            let owner = thread::spawn(move || drop(owned));
            drop(joined.join().expect("no panic"));
            owner.join().expect("no panic");
            KEPT.lock().expect("kept handles").push(kept);
        })
        .expect("a valid configuration");
    assert!(report.is_ok(), "{}", first_failure_text(&report));
    KEPT.lock().expect("kept handles").clear();
    assert_eq!(CREATED.load(Ordering::SeqCst), 4 * 200);
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        4 * 200,
        "every value dropped once"
    );

    // After a failure: a thread that never started drops its closure's value with its block.
    static UNSTARTED_DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = Builder::new()
        .ignore_environment()
        .executions(20)
        .check_determinism(false)
        .explore(|| {
            let owned = Counted(&UNSTARTED_DROPS);
            let _never_started = thread::spawn(move || drop(owned));
            panic!("the original failure");
        })
        .expect("a valid configuration");
    assert!(!report.is_ok());
    assert_eq!(
        UNSTARTED_DROPS.load(Ordering::SeqCst),
        1,
        "the first failure stops the exploration after one execution"
    );
}

/// Owns a counted value until `taken` says a thread moved it out, as a slot of a lock-free
/// queue does.
struct Slot {
    value: UnsafeCell<ManuallyDrop<Counted>>,
    taken: AtomicBool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if !*self.taken.get_mut() {
            // SAFETY: the value was not moved out (`taken` is false), and is dropped once here.
            unsafe { ManuallyDrop::drop(self.value.get_mut()) }
        }
    }
}

/// After a failure, a thread suspended between moving a value out of a slot and marking the
/// slot taken is left where it stood, as the end of a process would leave it. Teardown used to
/// unwind it there: the unwind dropped the value the thread held, and the slot's destructor,
/// run when the thread's reference went, dropped it again. In a newcomer's ring buffer of
/// `Box`es that double free crashed the test process before the report was printed. Now the
/// report is the original failure and nothing is dropped: the value stays with the thread.
#[test]
fn a_thread_in_the_middle_of_a_move_is_left_standing_after_a_failure() {
    // In a child process, whose count of threads left standing starts at zero whatever the
    // other tests of this binary left (see `MAX_LEFT_STANDING`).
    let probe = Probe::new(
        module_path!(),
        "a_thread_in_the_middle_of_a_move_is_left_standing_after_a_failure",
    );
    if let Some(outcome) = probe.run(|| {
        static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
        let report = explore(|| {
            let slot = Arc::new(Slot {
                value: UnsafeCell::new(ManuallyDrop::new(Counted(&DROPS))),
                taken: AtomicBool::new(false),
            });
            let moved = Arc::new(AtomicBool::new(false));
            let (slot2, moved2) = (slot.clone(), moved.clone());
            thread::spawn(move || {
                // SAFETY: the value is read once, and `taken` is raised before it is
                // dropped.
                let value = slot2.value.with(|value| unsafe { std::ptr::read(value) });
                moved2.store(true, Ordering::Release);
                // Nobody unparks it: the execution fails while it holds the value.
                thread::park();
                slot2.taken.store(true, Ordering::Release);
                drop(ManuallyDrop::into_inner(value));
            });
            while !moved.load(Ordering::Acquire) {
                thread::yield_now();
            }
            panic!("the original failure");
        });
        println!("{}", first_failure_text(&report));
        assert_eq!(
            DROPS.load(Ordering::SeqCst),
            0,
            "the value stays with the thread left standing, and is never dropped twice"
        );
        a_correct_program_still_passes();
    }) {
        assert_survived_with(&outcome, &["the original failure"]);
    }
}
