//! Primitives used outside an execution (a test that forgot `interleave::check`): the panic
//! says what to do and points at the line of the test that made the call, not into the runtime,
//! so the message std prints is enough to find it.

use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::{mpsc, Barrier, Condvar, Mutex, Once, RwLock};
use interleave::{cell, future, rand, thread, time};

use crate::probe::Probe;

/// A named call with the line it is on (`line!()` in a macro is its invocation's line).
macro_rules! call {
    ($name:literal, $call:expr) => {
        (
            $name,
            line!(),
            Box::new(|| {
                let _ = $call;
            }) as Box<dyn Fn()>,
        )
    };
}

/// A call's name, its line and the call.
type Call = (&'static str, u32, Box<dyn Fn()>);

/// One call of each kind of primitive.
fn calls() -> Vec<Call> {
    vec![
        call!("lock", Mutex::new(0).lock()),
        call!("read", RwLock::new(0).read()),
        call!("rmw", AtomicUsize::new(0).fetch_add(1, Ordering::SeqCst)),
        call!("load", AtomicBool::new(false).load(Ordering::Acquire)),
        call!("notify_one", Condvar::new().notify_one()),
        call!("barrier", Barrier::new(1).wait()),
        call!("once", Once::new().call_once(|| ())),
        call!("send", mpsc::channel::<u8>().0.send(1)),
        call!("spawn", thread::spawn(|| ())),
        call!("current", thread::current()),
        call!("sleep", thread::sleep(Duration::from_millis(1))),
        call!("now", time::Instant::now()),
        call!("cell", cell::UnsafeCell::new(0).with(|_| ())),
        call!("rand", rand::random_bool()),
        call!("block_on", future::block_on(async {})),
    ]
}

#[test]
fn a_primitive_used_outside_an_execution_panics_at_the_callers_line() {
    let probe = Probe::new(
        module_path!(),
        "a_primitive_used_outside_an_execution_panics_at_the_callers_line",
    );
    let outcome = probe.run(|| {
        panic::set_hook(Box::new(|info| {
            if let Some(location) = info.location() {
                println!("at {}:{}", location.file(), location.line());
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            println!("message {}", message.unwrap_or_default());
        }));
        for (name, _, call) in calls() {
            println!("call {name}");
            assert!(
                panic::catch_unwind(AssertUnwindSafe(call)).is_err(),
                "{name}"
            );
        }
    });
    let Some(outcome) = outcome else { return };
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    let output = outcome.output();
    for (name, line, _) in calls() {
        let reported = output
            .split(&format!("call {name}\n"))
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .unwrap_or_default();
        assert_eq!(
            reported,
            format!("at {}:{line}", file!()),
            "{name}: {output}"
        );
    }
    assert!(
        output.contains(
            "used outside an interleave execution: run the code inside interleave::check"
        ),
        "{output}"
    );
}

/// A lost update between two threads on the mutex `$new` makes: each reads the value under one
/// lock and writes it back under another.
macro_rules! lost_update_on {
    ($new:expr) => {
        &|| {
            let shared = interleave::sync::Arc::new($new);
            let other = shared.clone();
            let t = thread::spawn(move || {
                let seen = *other.lock().unwrap();
                *other.lock().unwrap() = seen + 1;
            });
            let seen = *shared.lock().unwrap();
            *shared.lock().unwrap() = seen + 1;
            t.join().unwrap();
            assert_eq!(*shared.lock().unwrap(), 2);
        }
    };
}

/// A newcomer's first mistake, a `use std::sync::Mutex` left in: the lost update between the
/// threads is invisible, so every execution passed in silence. The report (and `check`, on the
/// standard error) says that the threads gave the scheduler nothing to interleave; the same
/// test on interleave's `Mutex` gets no such note and its bug is found.
#[test]
fn a_test_whose_threads_share_only_std_state_is_told_there_was_nothing_to_interleave() {
    let explore = |f: &(dyn Fn() + Sync)| {
        interleave::Builder::new()
            .ignore_environment()
            .executions(200)
            .explore(f)
            .unwrap()
    };
    let std_mutex = explore(lost_update_on!(std::sync::Mutex::new(0)));
    assert!(std_mutex.is_ok(), "{std_mutex}");
    assert!(
        std_mutex.notes.iter().any(|note| note
            .contains("took no scheduling point besides starting, spawning and joining")
            && note.contains("std::sync")),
        "{std_mutex}"
    );
    let ours = explore(lost_update_on!(Mutex::new(0)));
    assert!(ours.first_failure().is_some(), "{ours}");
    assert!(ours.notes.is_empty(), "{ours}");
}

/// A thread started with `std::thread::spawn` runs outside the execution, so the primitives it
/// uses panic there, and the test's thread sees only `Err(Any)` from its `join`: the panic says
/// which spawn to use, and the failure of the execution names the line the stray thread used a
/// primitive at. It runs in a child process, as a stray thread's use is noted process-wide.
#[test]
fn a_thread_started_with_std_spawn_is_named_in_the_failure() {
    let probe = Probe::new(
        module_path!(),
        "a_thread_started_with_std_spawn_is_named_in_the_failure",
    );
    let stray_line = line!() + 9;
    let outcome = probe.run(|| {
        let explore = |std_spawn: bool| {
            interleave::Builder::new()
                .ignore_environment()
                .executions(100)
                .explore(move || {
                    let counter = interleave::sync::Arc::new(Mutex::new(0));
                    let other = counter.clone();
                    let work = move || *other.lock().unwrap() += 1;
                    if std_spawn {
                        std::thread::spawn(work).join().unwrap();
                    } else {
                        thread::spawn(work).join().unwrap();
                    }
                    assert_eq!(*counter.lock().unwrap(), 1);
                })
                .unwrap()
        };
        let stray = explore(true);
        println!(
            "stray: {}",
            stray
                .first_failure()
                .map_or(String::new(), |f| f.message.clone())
        );
        let ours = explore(false);
        println!(
            "ours: {} failures, notes {:?}",
            ours.failures.len(),
            ours.notes
        );
    });
    let Some(outcome) = outcome else { return };
    let output = outcome.output();
    assert_eq!(outcome.code, Some(0), "{output}");
    assert!(
        output.contains(
            "on a thread interleave did not start: a thread started with std::thread::spawn"
        ) && output.contains("start it with interleave::thread::spawn"),
        "{output}"
    );
    assert!(
        output.contains(&format!(
            "note: while this execution ran, a thread interleave did not start used an \
             interleave primitive at robustness/misuse.rs:{stray_line}:"
        )),
        "{output}"
    );
    assert!(output.contains("ours: 0 failures, notes []"), "{output}");
}
