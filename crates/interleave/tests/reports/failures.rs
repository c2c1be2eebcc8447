//! Each failure kind is detected, explained, and absent from the fixed variant.

use crate::helpers;
use interleave::cell::{UnsafeCell, Var};
use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::{Arc, Condvar, Mutex, RwLock};
use interleave::{thread, Builder, FailureKind, RaceMode, Report};

fn explore(spec: &str, executions: u64, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .explore(f)
        .unwrap()
}

fn lock_order(inverted: bool) {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let (a2, b2) = (a.clone(), b.clone());
    let t = thread::spawn(move || {
        if inverted {
            let _b = b2.lock().unwrap();
            let _a = a2.lock().unwrap();
        } else {
            let _a = a2.lock().unwrap();
            let _b = b2.lock().unwrap();
        }
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    t.join().unwrap();
}

#[test]
fn deadlock_report_names_threads_holders_and_cycle() {
    let report = explore("pct:d=2", 500, || lock_order(true));
    let failure = report
        .first_failure()
        .expect("the lock-order deadlock is found");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let text = failure.to_string();
    for expected in [
        "thread 0 (main) blocked in lock",
        "thread 1 (spawned at",
        "held by thread 1 since",
        "held by thread 0 since",
        "wait-for cycle: thread",
        "failures.rs:",
        "INTERLEAVE_REPLAY=il2-",
        "interleave::replay(\"il2-",
        "next |",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(explore("pct:d=2", 2000, || lock_order(false)).is_ok());
    assert!(explore("random", 2000, || lock_order(false)).is_ok());
}

#[test]
fn relocking_a_held_mutex_is_reported() {
    let report = explore("random", 10, || {
        let m = Mutex::new(1);
        let _first = m.lock().unwrap();
        let _second = m.lock().unwrap();
    });
    let failure = report.first_failure().expect("relock");
    assert_eq!(failure.kind, FailureKind::Relock);
    assert!(
        failure.message.contains("already holds since"),
        "{}",
        failure.message
    );

    let report = explore("random", 10, || {
        let l = RwLock::new(1);
        let _r = l.read().unwrap();
        let _w = l.write().unwrap();
    });
    assert_eq!(report.first_failure().unwrap().kind, FailureKind::Relock);
}

#[test]
fn spin_without_yield_hits_the_step_bound_with_advice() {
    let spin = |yield_in_loop: bool| {
        move || {
            let flag = Arc::new(AtomicBool::new(false));
            let setter = flag.clone();
            let t = thread::spawn(move || setter.store(true, Ordering::SeqCst));
            while !flag.load(Ordering::SeqCst) {
                if yield_in_loop {
                    thread::yield_now();
                } else {
                    // No scheduling point: what a newcomer's spin lock did.
                    std::hint::spin_loop();
                }
            }
            t.join().unwrap();
        }
    };
    let report = Builder::new()
        .ignore_environment()
        .strategy("pct:d=1".parse().unwrap())
        .max_steps(2000)
        .executions(50)
        .explore(spin(false))
        .unwrap();
    let failure = report.first_failure().expect("PCT starves the setter");
    assert_eq!(failure.kind, FailureKind::StepBound);
    assert!(failure.message.contains("yield_now"), "{}", failure.message);
    // No thread yielded, so the report names the likeliest cause and interleave's spin hint.
    assert!(
        failure.message.contains("no thread has yielded")
            && failure.message.contains("interleave::hint::spin_loop()"),
        "{}",
        failure.message
    );
    // With a yield in the loop, PCT's yield rule lets the setter run.
    let report = Builder::new()
        .ignore_environment()
        .strategy("pct:d=1".parse().unwrap())
        .max_steps(2000)
        .executions(200)
        .explore(spin(true))
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(
        !failure.message.contains("the main thread has returned"),
        "{}",
        failure.message
    );
}

/// A newcomer's background ticker, never joined, ran into the step bound after the main
/// thread returned, and the report advised a `yield_now` the loop already had.
#[test]
fn a_thread_left_running_after_the_test_returned_is_named_at_the_step_bound() {
    let message = step_bound_message(|| {
        let ticks = Arc::new(AtomicBool::new(false));
        thread::spawn(move || loop {
            thread::sleep(std::time::Duration::from_millis(10));
            ticks.store(true, Ordering::Relaxed);
        });
    });
    assert!(
        message.contains("the main thread has returned")
            && message.contains("join it before the test returns"),
        "{message}"
    );
}

/// The message of the step-bound failure `program` runs into within 2,000 steps.
fn step_bound_message(program: fn()) -> String {
    let report = Builder::new()
        .ignore_environment()
        .max_steps(2000)
        .executions(5)
        .explore(program)
        .unwrap();
    let failure = report
        .first_failure()
        .expect("the program runs on for ever");
    assert_eq!(failure.kind, FailureKind::StepBound, "{failure}");
    failure.message.clone()
}

/// A spin-wait whose flag is never raised, while the main thread joins the spinner: a deadlock
/// through a spin. The step-bound report said to add the `yield_now` the loop already had.
#[test]
fn a_spinner_that_yields_is_not_told_to_yield_at_the_step_bound() {
    let message = step_bound_message(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let spinner = {
            let flag = flag.clone();
            thread::spawn(move || {
                while !flag.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            })
        };
        spinner.join().unwrap();
        flag.store(true, Ordering::Release);
    });
    assert!(
        message.contains("its loop yields")
            && message.contains("joining the spinner")
            && !message.contains("should call interleave::thread::yield_now()"),
        "{message}"
    );
}

#[test]
fn data_race_report_names_both_accesses() {
    let racy = |locked: bool| {
        move || {
            let value = Arc::new(Var::new(0));
            let lock = Arc::new(Mutex::new(()));
            let (v2, l2) = (value.clone(), lock.clone());
            let t = thread::spawn(move || {
                let _g = locked.then(|| l2.lock().unwrap());
                v2.set(1);
            });
            {
                let _g = locked.then(|| lock.lock().unwrap());
                let _ = value.get();
            }
            t.join().unwrap();
        }
    };
    let report = explore("random", 100, racy(false));
    let failure = report.first_failure().expect("the race is found");
    assert_eq!(failure.kind, FailureKind::DataRace);
    assert!(failure.message.contains("write at") && failure.message.contains("read at"));
    assert!(explore("random", 2000, racy(true)).is_ok());
    assert!(explore("pct:d=3", 2000, racy(true)).is_ok());

    // Warn mode: the race becomes a warning and exploration goes on.
    let report = Builder::new()
        .ignore_environment()
        .data_races(RaceMode::Warn)
        .executions(100)
        .explore(racy(false))
        .unwrap();
    assert!(report.is_ok());
    assert!(report.warnings.iter().any(|w| w.contains("data race")));
}

#[test]
fn joins_spawns_and_atomics_order_accesses() {
    // No race: the write happens before the spawn, the read after the join, and the flag
    // hand-off goes through an atomic.
    let report = explore("random", 1000, || {
        let cell = Arc::new(UnsafeCell::new(0));
        cell.with_mut(|p| unsafe { *p = 1 });
        let ready = Arc::new(AtomicBool::new(false));
        let (c2, r2) = (cell.clone(), ready.clone());
        let t = thread::spawn(move || {
            c2.with_mut(|p| unsafe { *p += 1 });
            r2.store(true, Ordering::Release);
        });
        while !ready.load(Ordering::Acquire) {
            thread::yield_now();
        }
        assert_eq!(cell.with(|p| unsafe { *p }), 2);
        t.join().unwrap();
        assert_eq!(cell.with(|p| unsafe { *p }), 2);
    });
    assert!(report.is_ok(), "{report}");
}

#[test]
fn panics_in_spawned_threads_are_failures_with_location() {
    let report = explore("random", 10, || {
        let t = thread::Builder::new()
            .name("worker".into())
            .spawn(|| {
                let v: Vec<u8> = Vec::new();
                let _ = v[3];
            })
            .unwrap();
        // A panic that no `join` observes fails the execution (a joined one is the program's
        // business, as under std).
        drop(t);
    });
    let failure = report.first_failure().expect("panic");
    assert_eq!(failure.kind, FailureKind::Panic);
    let text = failure.to_string();
    assert!(text.contains("(worker, spawned at"), "{text}");
    assert!(text.contains("index out of bounds"), "{text}");
    assert!(text.contains("failures.rs:"), "{text}");
}

/// A panic in `join().unwrap()` says only that the join returned `Err`: the report names the
/// joined thread's own panic, with its message and site, while the raised payload stays the
/// joiner's. A joined panic that the program handles is no failure and no note.
#[test]
fn a_panic_in_join_unwrap_names_the_joined_threads_panic() {
    let report = explore("random", 10, || {
        let t = thread::spawn(|| panic!("the worker gave up"));
        t.join().unwrap();
    });
    let failure = report.first_failure().expect("panic");
    let text = failure.to_string();
    assert!(
        text.contains("called `Result::unwrap()` on an `Err` value"),
        "{text}"
    );
    assert!(
        text.contains("thread 1 also panicked at")
            && text.contains("the worker gave up")
            && text.contains("a join returned that panic as `Err`"),
        "{text}"
    );
    let handled = explore("random", 10, || {
        let t = thread::spawn(|| panic!("the worker gave up"));
        assert!(t.join().is_err());
    });
    assert!(handled.is_ok(), "{handled}");
}

/// Under `spawned_panics_fail`, loom's and shuttle's rule, a spawned thread's panic is the
/// execution's failure, with its own message, site and payload, before anything joins it
/// (even a join that would handle it), and its token replays it.
#[test]
fn a_spawned_threads_panic_fails_the_execution_under_loom_and_shuttles_rule() {
    let program = || {
        let t = thread::spawn(|| panic!("the worker gave up"));
        let _ = t.join();
    };
    let report = helpers::builder("random")
        .executions(10)
        .spawned_panics_fail(true)
        .explore(program)
        .unwrap();
    let failure = report.first_failure().expect("the worker's panic fails it");
    assert_eq!(failure.message, "the worker gave up", "{failure}");
    assert_eq!(failure.static_panic_message(), Some("the worker gave up"));
    let text = failure.to_string();
    assert!(
        text.contains("thread 1 (spawned at") && text.contains("failures.rs:"),
        "{text}"
    );
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, program)
        .unwrap();
    let again = replayed
        .first_failure()
        .expect("the replay fails the same way");
    assert_eq!(again.message, "the worker gave up", "{again}");
    assert!(
        explore("random", 10, program).is_ok(),
        "std's rule: the join handles it"
    );
}

#[test]
fn lost_wakeup_is_a_deadlock_and_the_fix_is_clean() {
    let handshake = |check_flag: bool| {
        move || {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let p2 = pair.clone();
            let t = thread::spawn(move || {
                *p2.0.lock().unwrap() = true;
                p2.1.notify_one();
            });
            let (lock, cv) = &*pair;
            let mut ready = lock.lock().unwrap();
            if check_flag {
                while !*ready {
                    ready = cv.wait(ready).unwrap();
                }
            } else {
                // Waits even if the notification already happened: the wake-up is lost.
                ready = cv.wait(ready).unwrap();
            }
            drop(ready);
            t.join().unwrap();
        }
    };
    let report = explore("random", 500, handshake(false));
    let failure = report.first_failure().expect("lost wake-up");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(
        failure.message.contains("waits for a notification"),
        "{}",
        failure.message
    );
    // Named by the program's call, `Condvar::wait`, not by the runtime's wake-up step.
    assert!(
        failure.message.contains("blocked in wait at") && !failure.message.contains("in wake"),
        "{}",
        failure.message
    );
    assert!(explore("random", 2000, handshake(true)).is_ok());
}

#[test]
fn failures_inside_scopes_tear_down_cleanly() {
    // A deadlock between the scope's owner and a scoped thread that borrows its locals.
    let report = explore("random", 300, || {
        let a = Mutex::new(0);
        let b = Mutex::new(0);
        thread::scope(|s| {
            s.spawn(|| {
                let _b = b.lock().unwrap();
                let _a = a.lock().unwrap();
            });
            let _a = a.lock().unwrap();
            let _b = b.lock().unwrap();
        });
    });
    assert_eq!(report.first_failure().unwrap().kind, FailureKind::Deadlock);
    // A panic in a scoped thread while its parent waits at the end of the scope.
    let report = explore("random", 50, || {
        let data = [1, 2, 3];
        thread::scope(|s| {
            s.spawn(|| assert_eq!(data.iter().sum::<i32>(), 7, "scoped thread fails"));
        });
    });
    let failure = report.first_failure().unwrap();
    assert_eq!(failure.kind, FailureKind::Panic);
    assert!(failure.message.contains("scoped thread fails"));
    // Exploration continues cleanly after torn-down executions.
    let report = Builder::new()
        .ignore_environment()
        .executions(300)
        .stop_on_first_failure(false)
        .explore(|| lock_order(true))
        .unwrap();
    assert!(report.failures.len() > 1);
    assert_eq!(report.executions, 300);
}

/// A panic of a spawned thread that no join had observed when a later failure ended the
/// execution is the likely cause of that failure: the report's note says where it happened,
/// and that the execution ended before a join could observe it (the main thread here would
/// have joined, had it got that far).
#[test]
fn an_earlier_unobserved_panic_is_noted_with_its_site() {
    let report = explore("random", 50, || {
        let started = Arc::new(AtomicBool::new(false));
        let flag = started.clone();
        let worker = thread::spawn(move || {
            flag.store(true, Ordering::SeqCst);
            panic!("the worker's own assertion");
        });
        while !started.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        assert!(!started.load(Ordering::SeqCst), "the main thread gave up");
        worker.join().unwrap();
    });
    let failure = report.first_failure().expect("the main thread panics");
    let message = &failure.message;
    assert!(message.contains("the main thread gave up"), "{failure}");
    let note = message
        .split_once("note: before this, thread 1 panicked at ")
        .map(|(_, note)| note)
        .unwrap_or_else(|| panic!("no note with the site: {failure}"));
    assert!(
        note.contains("failures.rs:")
            && note.contains(
                ", and the execution ended before any join observed it: the worker's own \
                 assertion"
            ),
        "{failure}"
    );
}

/// A receive made by a receiver's iterator is reported at the program's loop (the call of
/// `iter`, or the `for` over the receiver), not inside the channel's module, where
/// `Iterator::next` would place it.
#[test]
fn receives_of_a_receivers_iterator_are_reported_at_the_loop() {
    for by_reference in [false, true] {
        let report = explore("random", 20, move || {
            let (sender, receiver) = interleave::sync::mpsc::channel::<u32>();
            sender.send(1).unwrap();
            // The sender stays alive, so the loop waits for ever after the first message.
            if by_reference {
                for _ in &receiver {}
            } else {
                for _ in receiver.iter() {}
            }
            drop(sender);
        });
        let failure = report.first_failure().expect("the loop deadlocks");
        assert_eq!(failure.kind, FailureKind::Deadlock, "{failure}");
        assert!(
            failure
                .message
                .contains("blocked in recv at reports/failures.rs:")
                && !failure.to_string().contains("mpsc.rs"),
            "{failure}"
        );
    }
}

/// A newcomer's `check` inside a `check` was reported as a panic deep in the runtime; the
/// inner call is refused with its site and what to do instead.
#[test]
fn a_nested_exploration_is_refused_at_its_site() {
    let report = Builder::new()
        .ignore_environment()
        .executions(5)
        .explore(|| interleave::check(|| {}))
        .unwrap();
    let failure = report.first_failure().expect("the nested check is refused");
    assert!(
        failure
            .message
            .contains("interleave::check, Builder::explore or interleave::replay was called at reports/failures.rs:")
            && failure.message.contains("explorations cannot be nested"),
        "{}",
        failure.message
    );
}

/// Waiting for the other references with `Arc::try_unwrap`, then reading what their holder
/// wrote: std orders the two through the reference count, which interleave's `Arc` (std's own)
/// does not show the runtime, so the race checks report a race std rules out (a known
/// limitation). The report used to give no clue; it names what interleave cannot see and the
/// remedies, and a race explained by a Relaxed handover does not get the hint.
#[test]
fn a_race_through_an_arcs_count_names_the_unseen_ordering() {
    let report = explore("dfs", 10, || {
        let mut shared = Arc::new(UnsafeCell::new(0));
        let writer = {
            let shared = shared.clone();
            thread::spawn(move || {
                shared.with_mut(|value| unsafe { *value = 7 });
                drop(shared);
            })
        };
        let cell = loop {
            match Arc::try_unwrap(shared) {
                Ok(cell) => break cell,
                Err(back) => {
                    shared = back;
                    thread::yield_now();
                }
            }
        };
        assert_eq!(cell.with(|value| unsafe { *value }), 7);
        writer.join().unwrap();
    });
    let failure = report
        .first_failure()
        .expect("the count's ordering is not seen");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    assert!(
        failure.message.contains(
            "no synchronisation that interleave sees orders them: if the program orders them \
             through something it does not see (a std::sync atomic or lock, or the reference \
             count of interleave::sync::Arc, which is std's, as in Arc::try_unwrap"
        ),
        "{failure}"
    );

    let relaxed = explore("dfs", 100, || {
        let flag = Arc::new(AtomicBool::new(false));
        let data = Arc::new(Var::new(0));
        let writer = {
            let (flag, data) = (flag.clone(), data.clone());
            thread::spawn(move || {
                data.set(1);
                flag.store(true, Ordering::Relaxed);
            })
        };
        if flag.load(Ordering::Relaxed) {
            let _ = data.get();
        }
        writer.join().unwrap();
    });
    let failure = relaxed
        .first_failure()
        .expect("the Relaxed handover orders nothing");
    assert!(failure.message.contains("releases nothing"), "{failure}");
    assert!(!failure.message.contains("sees orders them"), "{failure}");
}

/// A one-time initialisation whose winner is decided by a single `compare_exchange_weak`
/// (no retry loop): a spurious failure makes both threads wait for a store nobody makes.
fn weak_once() {
    let get = |state: &AtomicUsize| {
        if state.load(Ordering::Acquire) != 2 {
            if state
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                state.store(2, Ordering::Release);
            } else {
                while state.load(Ordering::Acquire) != 2 {
                    thread::yield_now();
                }
            }
        }
    };
    let state = Arc::new(AtomicUsize::new(0));
    let other = state.clone();
    let t = thread::spawn(move || get(&other));
    get(&state);
    t.join().unwrap();
}

/// The step-bound report of `weak_once` listed the spurious failure but explained the livelock
/// with other causes; it now names the failed exchange first.
#[test]
fn a_livelock_after_a_spurious_weak_exchange_failure_names_it() {
    let report = helpers::builder("random")
        .max_steps(2_000)
        .executions(1_000)
        .explore(weak_once)
        .unwrap();
    let failure = report
        .first_failure()
        .expect("a spurious failure strands both threads");
    assert_eq!(failure.kind, FailureKind::StepBound, "{failure}");
    assert!(
        failure
            .message
            .contains("a compare_exchange_weak failed spuriously (step ")
            && failure
                .message
                .contains("retry the weak exchange in a loop"),
        "{failure}"
    );
}

/// `dpor` runs without spurious weak-exchange failures, and said it covered "the whole search
/// space" of `weak_once`, whose bug only such a failure causes. Its report now says that the
/// claim leaves them out; with them on, the bug is found; a program without weak exchanges
/// gets no such line.
#[test]
fn an_exhaustive_search_says_its_claim_leaves_out_spurious_weak_exchange_failures() {
    let caveat = |report: &Report| report.stat("weak exchanges").map(str::to_string);
    let without = explore("dpor", 10_000, weak_once);
    assert!(without.is_ok(), "{without}");
    let line = caveat(&without).unwrap_or_else(|| panic!("no caveat in {without}"));
    assert!(line.contains("never failed spuriously"), "{line}");
    let with = helpers::builder("dpor")
        .spurious_cas_failures(true)
        .max_steps(2_000)
        .executions(10_000)
        .explore(weak_once)
        .unwrap();
    assert!(with.first_failure().is_some(), "{with}");
    assert_eq!(caveat(&with), None, "{with}");
    let locked = explore("dpor", 10_000, || lock_order(false));
    assert_eq!(caveat(&locked), None, "{locked}");
}

/// One thread makes `stores` Relaxed stores to an atomic while another loads it once, Relaxed:
/// the load may read any of them, or the initial value.
fn stores_then_load(stores: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let writer = {
        let x = x.clone();
        thread::spawn(move || {
            for value in 1..=stores {
                x.store(value, Ordering::Relaxed);
            }
        })
    };
    let seen = x.load(Ordering::Relaxed);
    assert!(seen <= stores);
    writer.join().unwrap();
}

/// The weak memory model keeps the last eight stores of a location, so a load after ten
/// Relaxed stores it has not seen never reads the two oldest (nor the initial value), which
/// std allows: `dpor`'s claim to have covered every schedule says it leaves those reads out,
/// and says nothing of the kind when every store a load could read is kept.
#[test]
fn an_exhaustive_search_says_its_claim_leaves_out_stores_older_than_the_history() {
    let caveat = |report: &Report| report.stat("old stores").map(str::to_string);
    let ten = explore("dpor", 10_000, || stores_then_load(10));
    assert!(ten.is_ok(), "{ten}");
    let line = caveat(&ten).unwrap_or_else(|| panic!("no caveat in {ten}"));
    assert!(
        line.contains("older than the last 8 of its location"),
        "{line}"
    );
    assert!(ten.to_string().contains("old stores"), "{ten}");
    let five = explore("dpor", 10_000, || stores_then_load(5));
    assert!(five.is_ok(), "{five}");
    assert_eq!(caveat(&five), None, "{five}");
    let sampled = explore("random", 1_000, || stores_then_load(10));
    assert_eq!(
        caveat(&sampled),
        None,
        "a sampler claims no coverage: {sampled}"
    );
}
