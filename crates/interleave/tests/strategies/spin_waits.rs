//! Correct spin-waits under the priority strategies' yield rule: a thread loses its priority at
//! its first yield (shuttle's rule), so the thread it waits for runs at once, and a step bound
//! of a few hundred is never reached. With the old limit of 100 yields, a spinner that outranks
//! the thread it waits for spins a hundred times per demotion, and the same bound is exceeded.
//! `pos` and `delay` keep to the same bound under the systematic searches' yield rule.

use crate::helpers;
use interleave::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{hint, thread, FailureKind, Report};
use std::time::Duration;

/// Every strategy built on strict priorities (and so on the yield rule of `strategy/pct.rs`).
const PRIORITY_STRATEGIES: &[&str] = &[
    "pct:d=1", "pct:d=2", "pct:d=3", "pctvb", "rpro", "tb", "icb",
];

/// The step bound: a correct spin-wait of three threads needs a few dozen steps when spinners
/// give way at once.
const MAX_STEPS: u64 = 300;

/// `spinners` threads (the main thread and `spinners - 1` spawned ones) spin, alternately with
/// `yield_now` and `hint::spin_loop`, until a releaser spawned last has published a value and
/// raised a flag; each then checks the value.
fn spin_wait(spinners: usize) {
    let ready = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicU64::new(0));
    let spin = |ready: &AtomicBool, data: &AtomicU64| {
        let mut use_hint = false;
        while !ready.load(Ordering::Acquire) {
            if use_hint {
                hint::spin_loop();
            } else {
                thread::yield_now();
            }
            use_hint = !use_hint;
        }
        assert_eq!(data.load(Ordering::Relaxed), 1);
    };
    let mut threads: Vec<_> = (1..spinners)
        .map(|_| {
            let (ready, data) = (ready.clone(), data.clone());
            thread::spawn(move || spin(&ready, &data))
        })
        .collect();
    threads.push({
        let (ready, data) = (ready.clone(), data.clone());
        thread::spawn(move || {
            data.store(1, Ordering::Relaxed);
            ready.store(true, Ordering::Release);
        })
    });
    spin(&ready, &data);
    for t in threads {
        t.join().unwrap();
    }
}

fn explore(spec: &str, executions: u64, spinners: usize) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .max_steps(MAX_STEPS)
        .explore(move || spin_wait(spinners))
        .unwrap()
}

/// Runs the spin-waits of two and three threads under each of `specs` and fails on any report.
fn assert_quiet(specs: &[&str]) {
    for spec in specs {
        for spinners in [1, 2] {
            let report = explore(spec, 1_000, spinners);
            assert!(
                report.first_failure().is_none(),
                "{spec}, {} threads: {report}",
                spinners + 1
            );
            println!(
                "{spec}, {} threads: {} executions, {:.1} steps each on average",
                spinners + 1,
                report.executions,
                report.steps as f64 / report.executions as f64
            );
        }
    }
}

#[test]
fn priority_strategies_report_nothing_on_spin_waits_with_a_small_step_bound() {
    assert_quiet(PRIORITY_STRATEGIES);
}

/// The strategies that hold a yielding thread back with the systematic searches' yield rule
/// (it waits until every other thread that could run has taken a step) instead of demoting it:
/// partial-order sampling, whose redrawn priorities would undo a demotion, and delay bounding.
#[test]
fn yield_rule_strategies_report_nothing_on_spin_waits_with_a_small_step_bound() {
    assert_quiet(&["pos", "delay:d=2"]);
}

/// The measurement behind the limit of one: with a hundred yields per demotion, the same
/// spin-waits exceed the step bound.
#[test]
fn a_limit_of_a_hundred_yields_exceeds_a_small_step_bound() {
    for spec in ["pct:d=3,yields=100", "pctvb:yields=100"] {
        let report = explore(spec, 1_000, 2);
        let failure = report
            .first_failure()
            .expect("a spinner outranks the releaser");
        assert_eq!(failure.kind, FailureKind::StepBound, "{spec}");
        println!(
            "{spec}: step bound exceeded in execution {}",
            failure.execution
        );
    }
}

/// A spin-wait that sleeps between its looks at the flag: each sleep follows a look, so it
/// counts as a yield and the spinner gives way at once, as with `yield_now`.
#[test]
fn priority_strategies_report_nothing_on_a_sleeping_spin_wait_with_a_small_step_bound() {
    for spec in PRIORITY_STRATEGIES {
        let report = helpers::builder(spec)
            .executions(1_000)
            .max_steps(MAX_STEPS)
            .explore(|| {
                let ready = Arc::new(AtomicBool::new(false));
                let releaser = {
                    let ready = ready.clone();
                    thread::spawn(move || ready.store(true, Ordering::Release))
                };
                while !ready.load(Ordering::Acquire) {
                    thread::sleep(Duration::from_millis(1));
                }
                releaser.join().unwrap();
            })
            .unwrap();
        assert!(report.first_failure().is_none(), "{spec}: {report}");
    }
}

/// PCT's figure 5 (Burckhardt et al., ASPLOS 2010), as shuttle's suite has it: a thread sleeps
/// twenty times and then sets a value, which the main thread asserts it never sees. The bug
/// has depth 1: it needs only the sleeper to outrank the main thread, which PCT gives it in
/// half the executions. A sleep with nothing before it since the thread's last yield waits for
/// no one, so the yield rule does not demote the sleeper there; it did, and the bug was out of
/// reach. The fixed twin takes the lock before it spawns the sleeper.
fn sleeps_through_a_task(fixed: bool) {
    let value = Arc::new(Mutex::new(0));
    let early = fixed.then(|| value.lock().unwrap());
    let sleeper = {
        let value = value.clone();
        thread::spawn(move || {
            for _ in 0..20 {
                thread::sleep(Duration::from_millis(1));
            }
            *value.lock().unwrap() = 1;
        })
    };
    let seen = match early {
        Some(guard) => *guard,
        None => *value.lock().unwrap(),
    };
    assert_ne!(seen, 1, "the sleeper ran to completion first");
    sleeper.join().unwrap();
}

#[test]
fn priority_strategies_find_a_sleeper_that_runs_to_completion_first() {
    for spec in ["pct:d=1", "pct:d=2", "rpro", "pctvb"] {
        let report = helpers::builder(spec)
            .executions(50)
            .explore(|| sleeps_through_a_task(false))
            .unwrap();
        let failure = report.first_failure().expect(spec);
        assert!(
            failure.message.contains("ran to completion first"),
            "{spec}: {failure}"
        );
        let fixed = helpers::builder(spec)
            .executions(300)
            .explore(|| sleeps_through_a_task(true))
            .unwrap();
        assert!(fixed.is_ok(), "{spec}: {fixed}");
    }
}

/// A future that asks to be polled again once: its first poll wakes its own waker and returns
/// `Pending` (futures-lite's and async-std's `yield_now`).
struct PollAgain(bool);

impl std::future::Future for PollAgain {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        context.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// The main task waits for a flag that a spawned task raises after publishing a value, by
/// polling a `poll_fn` that wakes itself while the flag is down (`hand_written`) or with
/// [`PollAgain`] in a loop, then checks the value. With `relaxed`, the task publishes both
/// with `Relaxed` stores, so the check may fail.
fn self_waking_wait(hand_written: bool, relaxed: bool) {
    use interleave::future;
    use std::task::Poll;
    future::block_on(async {
        let (ready, data) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let publisher = {
            let (ready, data) = (ready.clone(), data.clone());
            let raise = if relaxed {
                Ordering::Relaxed
            } else {
                Ordering::Release
            };
            future::spawn(async move {
                data.store(1, Ordering::Relaxed);
                ready.store(true, raise);
            })
        };
        let seen = if relaxed {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        if hand_written {
            std::future::poll_fn(|context| {
                if ready.load(seen) {
                    return Poll::Ready(());
                }
                context.waker().wake_by_ref();
                Poll::Pending
            })
            .await;
        } else {
            while !ready.load(seen) {
                PollAgain(false).await;
            }
        }
        assert_eq!(
            data.load(Ordering::Relaxed),
            1,
            "the value was not published"
        );
        publisher.await.unwrap();
    });
}

/// A task that wakes itself during its poll and returns `Pending` asks to be polled after the
/// others (futures-lite's `yield_now`): the priority strategies count the wake as a yield and
/// demote the task, so a task that waits that way for one of lower priority lets it run, within
/// a small step bound, and the default strategy passes. It used to poll for ever: `auto`
/// reported a livelock (its PCT member, at execution 93 of a newcomer's test). The twin that
/// publishes with `Relaxed` is found.
#[test]
fn a_task_that_wakes_itself_yields_to_the_priority_strategies() {
    for &spec in PRIORITY_STRATEGIES.iter().chain(&["auto"]) {
        for hand_written in [true, false] {
            let what = format!("{spec}, hand-written {hand_written}");
            let mut builder = helpers::builder(spec).executions(2_000);
            if spec != "auto" {
                builder = builder.max_steps(MAX_STEPS);
            }
            let report = builder
                .explore(move || self_waking_wait(hand_written, false))
                .unwrap();
            assert!(report.first_failure().is_none(), "{what}: {report}");
            println!("{what}: {} executions", report.executions);
        }
    }
    for spec in ["auto", "pct:d=3"] {
        let report = helpers::builder(spec)
            .executions(2_000)
            .explore(|| self_waking_wait(true, true))
            .unwrap();
        let failure = report.first_failure().expect("the relaxed twin fails");
        assert!(
            failure.message.contains("the value was not published"),
            "{spec}: {failure}"
        );
    }
}

/// How many times the waits of [`producer_consumer_counting_waits`] looped, over every
/// execution of the one test that runs it.
static WAIT_LOOPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A producer and a consumer handing three items over a one-slot queue on a condition
/// variable, each waiting in a loop, which counts its turns in [`WAIT_LOOPS`].
fn producer_consumer_counting_waits() {
    use interleave::sync::Condvar;
    let state = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let producer = {
        let state = state.clone();
        thread::spawn(move || {
            let (slot, ready) = &*state;
            for item in 0..3 {
                let mut slot = slot.lock().unwrap();
                while slot.is_some() {
                    WAIT_LOOPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    slot = ready.wait(slot).unwrap();
                }
                *slot = Some(item);
                ready.notify_all();
            }
        })
    };
    let (slot, ready) = &*state;
    for expected in 0..3 {
        let mut guard = slot.lock().unwrap();
        while guard.is_none() {
            WAIT_LOOPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            guard = ready.wait(guard).unwrap();
        }
        assert_eq!(guard.take(), Some(expected));
        ready.notify_all();
    }
    producer.join().unwrap();
}

/// With spurious wake-ups on, a waiter in a loop whose condition only the other thread can
/// make true may wake, find it false and wait again for ever. `vs` ran such a waiter toward
/// its target until its bound of 10,000 steps, and the continuation of every execution it then
/// abandoned ran it to the step bound: 300 executions took 2.3 s in a release build (4,760
/// recorded steps each, and about 10,000 more cut from each abandoned one). Both now let the
/// thread that can run for real go first, and a fulfilment uses a few spurious wake-ups at most.
#[test]
fn a_wait_loop_with_spurious_wakeups_is_not_spun_by_vs() {
    let report = helpers::builder("vs")
        .spurious_wakeups(true)
        .executions(300)
        .explore(producer_consumer_counting_waits)
        .unwrap();
    assert!(report.is_ok(), "{report}");
    let per_execution = report.steps / report.executions;
    assert!(
        per_execution < 100,
        "{per_execution} steps per execution: {report}"
    );
    let abandoned: u64 = report
        .stat("interleavings abandoned")
        .and_then(|text| text.parse().ok())
        .unwrap_or(0);
    assert!(abandoned > 0, "no fulfilment was abandoned: {report}");
    let loops = WAIT_LOOPS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        loops < 50 * report.executions,
        "{loops} turns of the wait loops in {} executions",
        report.executions
    );
}
