//! Stacks and code outside interleave's control: a coroutine stack that overflows, a stack size
//! the program asks for, a stack that cannot be allocated, and a thread that stops making
//! progress because it blocks or spins on something interleave does not schedule. Each of these
//! used to crash the process with a bare signal, hang it, or report the wrong thing.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use interleave::thread;

use crate::probe::Probe;

/// Recursion whose frames the optimiser can neither merge nor drop: about 1 KiB per level.
#[inline(never)]
fn recurse(levels: u64) -> u64 {
    let frame = std::hint::black_box([levels as u8; 1024]);
    if levels == 0 {
        return u64::from(frame[0]);
    }
    recurse(std::hint::black_box(levels - 1)) + u64::from(std::hint::black_box(&frame)[7])
}

/// About 4 MiB of stack: far beyond the default 256 KiB, well within 16 MiB.
const DEEP: u64 = 4000;
const RAISED: usize = 16 << 20;

fn one_execution() -> interleave::Builder {
    interleave::Builder::new()
        .executions(1)
        .check_determinism(false)
}

#[test]
fn deep_recursion_in_a_spawned_thread_reports_a_stack_overflow() {
    let probe = Probe::new(
        module_path!(),
        "deep_recursion_in_a_spawned_thread_reports_a_stack_overflow",
    );
    if let Some(outcome) = probe.run(|| {
        one_execution().check(|| {
            let deep = thread::Builder::new()
                .name("deep".to_string())
                .spawn(|| recurse(DEEP))
                .expect("spawned");
            deep.join().expect("joined");
        })
    }) {
        let output = outcome.output();
        assert!(!outcome.timed_out, "{outcome:?}");
        assert!(output.contains("has overflowed its stack"), "{output}");
        assert!(output.contains("'deep'"), "names the thread: {output}");
        assert!(output.contains("thread 1"), "gives its index: {output}");
        assert!(
            output.contains("stacks.rs:"),
            "gives its spawn site: {output}"
        );
        assert!(output.contains("262144"), "gives the stack size: {output}");
        assert!(
            output.contains("stack_size") && output.contains("INTERLEAVE_STACK_SIZE"),
            "says how to raise it: {output}"
        );
    }
}

#[test]
fn deep_recursion_in_the_main_thread_reports_a_stack_overflow() {
    let probe = Probe::new(
        module_path!(),
        "deep_recursion_in_the_main_thread_reports_a_stack_overflow",
    );
    if let Some(outcome) = probe.run(|| {
        one_execution().check(|| {
            recurse(DEEP);
        })
    }) {
        let output = outcome.output();
        assert!(!outcome.timed_out, "{outcome:?}");
        assert!(output.contains("has overflowed its stack"), "{output}");
        assert!(output.contains("'main'"), "names the thread: {output}");
    }
}

#[test]
fn a_raised_stack_size_lets_deep_recursion_pass() {
    let probe = Probe::new(
        module_path!(),
        "a_raised_stack_size_lets_deep_recursion_pass",
    );
    let thread_builder = probe.label("thread::Builder").run(|| {
        one_execution().check(|| {
            let deep = thread::Builder::new()
                .stack_size(RAISED)
                .spawn(|| recurse(DEEP))
                .expect("spawned");
            assert!(deep.join().expect("joined") > 0);
        })
    });
    if let Some(outcome) = thread_builder {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
    }
    let probe = Probe::new(
        module_path!(),
        "a_raised_stack_size_lets_deep_recursion_pass",
    );
    let environment = probe
        .label("environment")
        .env("INTERLEAVE_STACK_SIZE", &RAISED.to_string())
        .run(|| {
            one_execution().check(|| {
                let deep = thread::spawn(|| recurse(DEEP));
                assert!(recurse(DEEP) > 0);
                assert!(deep.join().expect("joined") > 0);
            })
        });
    if let Some(outcome) = environment {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
    }
}

#[test]
fn an_unallocatable_stack_is_a_clear_error() {
    let probe = Probe::new(module_path!(), "an_unallocatable_stack_is_a_clear_error");
    if let Some(outcome) = probe.run(|| {
        one_execution().check(|| {
            for size in [usize::MAX, 1 << 50] {
                let error = thread::Builder::new()
                    .stack_size(size)
                    .spawn(|| ())
                    .expect_err("no such stack");
                let message = error.to_string();
                assert!(
                    message.contains(&format!("could not allocate a {size}-byte stack"))
                        && message.contains("thread 1")
                        && message.contains("stacks.rs:"),
                    "{message}"
                );
            }
        });
        let report = one_execution()
            .stack_size(1 << 50)
            .explore(|| ())
            .expect("explored");
        let failure = report
            .first_failure()
            .expect("the main thread has no stack");
        assert!(
            failure.message.contains(&format!(
                "could not allocate a {}-byte stack for thread 0 (main) started at",
                1u64 << 50
            )),
            "{}",
            failure.message
        );
    }) {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
    }
}

/// Spawns threads that all stay alive (parked) until the main thread has spawned them all.
fn many_live_threads(count: usize) {
    let threads: Vec<_> = (0..count).map(|_| thread::spawn(thread::park)).collect();
    for t in &threads {
        t.thread().unpark();
    }
    for t in threads {
        t.join().expect("joined");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn running_out_of_address_space_for_stacks_is_a_clear_failure() {
    let probe = Probe::new(
        module_path!(),
        "running_out_of_address_space_for_stacks_is_a_clear_failure",
    );
    if let Some(outcome) = probe.run(|| {
        // Like `ulimit -v`: the address space left allows a few hundred 1 MiB stacks only.
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        let used_kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmSize:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmSize");
        let limit = (used_kib + 256 * 1024) * 1024;
        let rlimit = libc::rlimit {
            rlim_cur: limit,
            rlim_max: limit,
        };
        // SAFETY: plain system call on a valid struct.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rlimit) }, 0);
        interleave::Builder::new()
            .executions(4)
            .stack_size(1 << 20)
            .check(|| many_live_threads(2000));
    }) {
        let output = outcome.output();
        assert!(outcome.survived(), "{outcome:?}");
        assert!(
            output.contains("could not allocate a 1048576-byte stack for thread"),
            "{output}"
        );
        assert!(
            output.contains("reduce the number of live threads"),
            "{output}"
        );
        assert!(
            output.contains("panicked at crates/interleave/tests/robustness/stacks.rs"),
            "the panic is the spawn's, at the spawn site: {output}"
        );
        assert!(!output.contains("index out of bounds"), "{output}");
        assert!(!output.contains("behaved differently"), "{output}");
    }
}

/// Waits for `INTERLEAVE_WATCHDOG`'s verdict on a probe that never makes progress again.
fn watched(test: &str, label: &str) -> Probe {
    Probe::new(module_path!(), test)
        .label(label)
        .env("INTERLEAVE_WATCHDOG", "1")
        .timeout(Duration::from_secs(60))
}

#[test]
fn a_spin_on_a_std_atomic_is_reported_by_the_watchdog() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let probe = watched("a_spin_on_a_std_atomic_is_reported_by_the_watchdog", "spin");
    if let Some(outcome) = probe.run(|| {
        interleave::Builder::new().executions(100).check(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let setter = flag.clone();
            let t = thread::spawn(move || setter.store(true, Ordering::SeqCst));
            thread::yield_now();
            // Spins on a std atomic without a scheduling point: if the setter has not run yet,
            // it never will.
            while !flag.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            t.join().expect("joined");
        })
    }) {
        let output = outcome.output();
        assert!(!outcome.timed_out, "hung: {outcome:?}");
        assert!(outcome.code.is_some_and(|c| c != 0), "{outcome:?}");
        assert!(output.contains("watchdog"), "{output}");
        assert!(output.contains("thread 0"), "names the thread: {output}");
        assert!(output.contains("stacks.rs:"), "gives the site: {output}");
        assert!(
            output.contains("yield"),
            "gives the last operation: {output}"
        );
        assert!(
            output.contains("std atomic"),
            "names likely causes: {output}"
        );
    }
}

#[test]
fn a_std_mutex_held_across_a_scheduling_point_is_reported_by_the_watchdog() {
    let probe = watched(
        "a_std_mutex_held_across_a_scheduling_point_is_reported_by_the_watchdog",
        "std-mutex",
    );
    if let Some(outcome) = probe.run(|| {
        interleave::Builder::new().executions(100).check(|| {
            static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let t = thread::spawn(|| {
                let _guard = LOCK.lock().expect("not poisoned");
                thread::yield_now();
            });
            thread::yield_now();
            drop(LOCK.lock().expect("not poisoned"));
            t.join().expect("joined");
        })
    }) {
        let output = outcome.output();
        assert!(!outcome.timed_out, "hung: {outcome:?}");
        assert!(outcome.code.is_some_and(|c| c != 0), "{outcome:?}");
        assert!(output.contains("watchdog"), "{output}");
        assert!(output.contains("stacks.rs:"), "gives the site: {output}");
        assert!(
            output.contains("std::sync"),
            "names likely causes: {output}"
        );
    }
}

/// A future that hands its waker to an OS thread of its own on the first poll and is ready on
/// the second: the way a future driven by a foreign reactor behaves.
struct WokenElsewhere {
    polled: bool,
}

impl Future for WokenElsewhere {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            return Poll::Ready(());
        }
        self.polled = true;
        let waker = cx.waker().clone();
        std::thread::spawn(move || waker.wake())
            .join()
            .expect("the foreign thread ran");
        Poll::Pending
    }
}

#[test]
fn a_waker_woken_from_a_foreign_os_thread_is_not_a_deadlock() {
    let report = one_execution()
        .explore(|| interleave::future::block_on(WokenElsewhere { polled: false }))
        .expect("explored");
    let failure = report.first_failure().expect("a failure");
    assert_ne!(
        failure.kind,
        interleave::FailureKind::Deadlock,
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("woken from an OS thread"),
        "{}",
        failure.message
    );
}

/// A future that keeps its waker where it outlives the execution, and is ready at once.
struct KeepsItsWaker;

static KEPT: std::sync::Mutex<Option<std::task::Waker>> = std::sync::Mutex::new(None);

impl Future for KeepsItsWaker {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *KEPT.lock().expect("not poisoned") = Some(cx.waker().clone());
        Poll::Ready(())
    }
}

#[test]
fn a_waker_woken_after_its_execution_wakes_nothing() {
    let report = one_execution()
        .explore(|| interleave::future::block_on(KeepsItsWaker))
        .expect("explored");
    assert!(report.is_ok(), "{:?}", report.first_failure());
    let waker = KEPT.lock().expect("not poisoned").take().expect("kept");
    std::thread::spawn(move || waker.wake())
        .join()
        .expect("waking a stale waker from another OS thread is harmless");
    let report = one_execution()
        .explore(|| interleave::future::block_on(async {}))
        .expect("explored");
    assert!(report.is_ok(), "{:?}", report.first_failure());
}
