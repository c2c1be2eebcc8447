//! `dfs` over async tasks: a task takes one scheduling point per poll (its park, the step its
//! abort is ordered against) plus its first park and the wake of its joiner, so `dfs`
//! exhausts small async programs in numbers of executions of the order of shuttle's DFS,
//! still reaches every outcome an executor allows, and still finds an async bug whose fixed
//! twin it exhausts.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::{Arc, Mutex};

use crate::helpers;

/// A future that wakes its own task and is pending `remain` times before it gives `value`,
/// as the timers of shuttle's `countdown_timer` tests.
struct Countdown {
    remain: u32,
    value: u32,
}

impl Future for Countdown {
    type Output = u32;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<u32> {
        if self.remain == 0 {
            return Poll::Ready(self.value);
        }
        self.remain -= 1;
        context.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `block_on` of a future that yields once.
fn block_on_a_yield() {
    future::block_on(future::yield_now());
}

/// One task that yields once, awaited.
fn one_task_yielding() {
    future::block_on(async { future::spawn(future::yield_now()).await.unwrap() });
}

/// Two tasks that each yield once, awaited in turn.
fn two_tasks_yielding() {
    future::block_on(async {
        let a = future::spawn(future::yield_now());
        let b = future::spawn(future::yield_now());
        a.await.unwrap();
        b.await.unwrap();
    });
}

/// `block_on` of a join of two tasks: both handles are polled at every poll of the join.
fn join_of_two_tasks() {
    future::block_on(async {
        let mut a = future::spawn(async { 1 });
        let mut b = future::spawn(async { 2 });
        let (mut left, mut right) = (None, None);
        std::future::poll_fn(|context| {
            if left.is_none() {
                if let Poll::Ready(value) = Pin::new(&mut a).poll(context) {
                    left = Some(value.unwrap());
                }
            }
            if right.is_none() {
                if let Poll::Ready(value) = Pin::new(&mut b).poll(context) {
                    right = Some(value.unwrap());
                }
            }
            if left.is_some() && right.is_some() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        assert_eq!(left.unwrap() + right.unwrap(), 3);
    });
}

/// Three self-waking timers pending 1, 2 and 2 times, awaited in turn by the main thread.
fn three_timers() {
    let a = future::spawn(Countdown {
        remain: 1,
        value: 10,
    });
    let b = future::spawn(Countdown {
        remain: 2,
        value: 20,
    });
    let c = future::spawn(Countdown {
        remain: 2,
        value: 40,
    });
    future::block_on(async move {
        let sum = a.await.unwrap() + b.await.unwrap() + c.await.unwrap();
        assert_eq!(sum, 70);
    });
}

/// The executions `dfs` takes to exhaust each program, next to shuttle 0.9's DFS on the same
/// program (its `Runner` with a `DfsScheduler`, counted outside this crate). Before a task's
/// start step and the separate step on its abort flag before every poll were folded into its
/// park, and before the poll of a finished task's handle stopped being a scheduling point,
/// they took 1, 4, 6,003, 1,433 and more than 3,000,000 executions; before a `yield_now`
/// became one step (the park that polls the task again) instead of a yield step and a park,
/// two tasks yielding took 217. What is left above
/// shuttle's counts are steps that order something an executor can do: the wake of a task's
/// joiner as the task finishes (before it, the joiner may be polled by another wake and see the
/// task finished, then be woken once more), the poll of a handle whose task has not finished
/// (the task may finish between the awaiting task's steps), and the yield rule's waits.
#[test]
fn dfs_exhausts_small_async_programs_in_about_as_many_executions_as_shuttles_dfs() {
    // (program, executions `dfs` takes now, executions shuttle's DFS takes, body)
    type Program = (&'static str, u64, u64, fn());
    let programs: [Program; 5] = [
        ("block_on of a yield", 1, 1, block_on_a_yield),
        ("one task yielding", 3, 1, one_task_yielding),
        ("two tasks yielding", 63, 26, two_tasks_yielding),
        ("join of two tasks", 41, 7, join_of_two_tasks),
        (
            "three timers of 1, 2, 2 wakes",
            134_341,
            18_011,
            three_timers,
        ),
    ];
    for (name, expected, shuttle, body) in programs {
        let report = helpers::exhaust("dfs", body);
        println!(
            "{name}: dfs {} executions, shuttle's DFS {shuttle}",
            report.executions
        );
        assert_eq!(report.executions, expected, "{name}");
    }
}

/// The outcomes `dfs` reaches on `body`, which returns what it observed, when it exhausts it.
fn outcomes(body: impl Fn() -> String + Sync) -> BTreeSet<String> {
    helpers::outcomes("dfs", body).0
}

/// A task whose future is polled twice (it wakes itself once) is aborted right after its
/// spawn: it may be cancelled before its first poll or between its polls, or finish first.
fn abort_of_a_task_polled_twice() -> String {
    future::block_on(async {
        let polls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = polls.clone();
        let mut countdown = Countdown {
            remain: 1,
            value: 7,
        };
        let task = future::spawn(std::future::poll_fn(move |context| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Pin::new(&mut countdown).poll(context)
        }));
        task.abort();
        let output = task.await;
        let polls = polls.load(std::sync::atomic::Ordering::Relaxed);
        match output {
            Ok(value) => format!("{value} after {polls} polls"),
            Err(JoinError::Cancelled) => format!("cancelled after {polls} polls"),
            Err(JoinError::Panicked) => "panicked".to_string(),
        }
    })
}

/// Two tasks that each wake themselves once log their names as they finish; the main task
/// awaits the first and then asks whether the second has finished.
fn two_tasks_finishing_in_either_order() -> String {
    future::block_on(async {
        let log = std::sync::Arc::new(StdMutex::new(String::new()));
        let task = |name: char| {
            let log = log.clone();
            future::spawn(async move {
                Countdown {
                    remain: 1,
                    value: 0,
                }
                .await;
                log.lock().unwrap().push(name);
            })
        };
        let a = task('a');
        let b = task('b');
        a.await.unwrap();
        let b_finished = b.is_finished();
        b.await.unwrap();
        let order = log.lock().unwrap().clone();
        format!("{order}, b finished: {b_finished}")
    })
}

/// The main task polls the handles of two tasks once, in one poll, and records which were
/// ready.
fn first_poll_of_two_handles() -> String {
    future::block_on(async {
        let mut a = future::spawn(async {});
        let mut b = future::spawn(async {});
        let ready = std::future::poll_fn(|context| {
            let a = Pin::new(&mut a).poll(context).is_ready();
            let b = Pin::new(&mut b).poll(context).is_ready();
            Poll::Ready((a, b))
        })
        .await;
        format!("{ready:?}")
    })
}

/// Every outcome an executor allows, and no other, is reached when `dfs` exhausts programs
/// whose outcome depends on where a task's polls fall against another task's steps: an abort
/// against the polls, the order of two completions against a query, whether each of two
/// handles is ready at one poll of both, and whether a task is polled between two wakes (the
/// second wake is no scheduling point when it finds the task still woken and the waker took
/// a step since the first, and is one when it directly follows the first).
#[test]
fn dfs_reaches_every_outcome_of_aborts_completions_and_handle_polls() {
    let expected = |outcomes: &[&str]| -> BTreeSet<String> {
        outcomes.iter().map(|outcome| outcome.to_string()).collect()
    };
    assert_eq!(
        outcomes(abort_of_a_task_polled_twice),
        expected(&[
            "cancelled after 0 polls",
            "cancelled after 1 polls",
            "7 after 2 polls"
        ])
    );
    assert_eq!(
        outcomes(two_tasks_finishing_in_either_order),
        expected(&[
            "ab, b finished: false",
            "ab, b finished: true",
            "ba, b finished: true"
        ])
    );
    assert_eq!(
        outcomes(first_poll_of_two_handles),
        expected(&[
            "(false, false)",
            "(false, true)",
            "(true, false)",
            "(true, true)"
        ])
    );
    // The abort at the task's first yield comes from a main thread that runs on past its
    // own `yield_now` before the task, ready at its yield, has been polled again: the
    // schedules the yield rule leaves out, which `dfs:yields=2` searches.
    assert_eq!(
        outcomes(abort_after_a_yield_of_each),
        expected(&["2 steps, Err(Cancelled)", "3 steps, Ok(())"])
    );
    assert_eq!(
        helpers::outcomes("dfs:yields=2", abort_after_a_yield_of_each).0,
        expected(&[
            "1 steps, Err(Cancelled)",
            "2 steps, Err(Cancelled)",
            "3 steps, Ok(())"
        ])
    );
    for step_between in [false, true] {
        assert_eq!(
            outcomes(|| polls_of_a_task_woken_twice(step_between)),
            expected(&["2 polls", "3 polls"]),
            "a step between the wakes: {step_between}"
        );
    }
}

/// The future of a task that is pending until the main task says it has woken it twice,
/// storing its waker at every poll, and then gives how many times it was polled.
struct PolledUntilWokenTwice {
    polls: usize,
    woken_twice: std::sync::Arc<std::sync::atomic::AtomicBool>,
    waker: std::sync::Arc<StdMutex<Option<Waker>>>,
}

impl Future for PolledUntilWokenTwice {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        if self.woken_twice.load(std::sync::atomic::Ordering::Relaxed) {
            return Poll::Ready(self.polls);
        }
        *self.waker.lock().unwrap() = Some(context.waker().clone());
        Poll::Pending
    }
}

/// The main task wakes a pending task twice, with a step of its own between the wakes or not,
/// and the task reports how often it was polled: twice when both wakes come before its next
/// poll (the second finds it already woken), three times when it is polled between them.
fn polls_of_a_task_woken_twice(step_between: bool) -> String {
    future::block_on(async move {
        let woken_twice = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let waker = std::sync::Arc::new(StdMutex::new(None::<Waker>));
        let task = future::spawn(PolledUntilWokenTwice {
            polls: 0,
            woken_twice: woken_twice.clone(),
            waker: waker.clone(),
        });
        let flag = AtomicBool::new(false);
        let stored = loop {
            if let Some(stored) = waker.lock().unwrap().clone() {
                break stored;
            }
            future::yield_now().await;
        };
        stored.wake_by_ref();
        if step_between {
            flag.store(true, Ordering::SeqCst);
        }
        let again = waker
            .lock()
            .unwrap()
            .clone()
            .expect("the task stored its waker");
        again.wake_by_ref();
        woken_twice.store(true, std::sync::atomic::Ordering::Relaxed);
        format!("{} polls", task.await.unwrap())
    })
}

/// A one-shot signal kept in std types only, as `futures::channel::oneshot`: sending it is no
/// step of its own, only the wake of the waiting task is.
#[derive(Default)]
struct StdSignal {
    sent: std::sync::atomic::AtomicBool,
    waker: StdMutex<Option<Waker>>,
}

impl StdSignal {
    fn send(&self) {
        self.sent.store(true, std::sync::atomic::Ordering::SeqCst);
        let waker = self.waker.lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn poll_sent(&self, context: &Context<'_>) -> Poll<()> {
        if self.sent.load(std::sync::atomic::Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *self.waker.lock().unwrap() = Some(context.waker().clone());
        Poll::Pending
    }
}

/// A task that yields twice between three counted steps is aborted after the main thread,
/// which waited for the task to start, yielded: the abort may come at either yield or after
/// the task finished (shuttle's `abort_at_second_await_point`, with its std counter and its
/// `futures` one-shot channel). The abort finds the task woken by its own yield; it stays a
/// scheduling point there (`Execution::unpark_orders_nothing`): merged into the main thread's
/// yield, the abort between the task's two yields was lost.
fn abort_after_a_yield_of_each() -> String {
    let steps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = steps.clone();
    let started = std::sync::Arc::new(StdSignal::default());
    let signal = started.clone();
    let task = future::spawn(async move {
        signal.send();
        for step in 0..3 {
            if step > 0 {
                future::yield_now().await;
            }
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    future::block_on(std::future::poll_fn(|context| started.poll_sent(context)));
    interleave::thread::yield_now();
    task.abort();
    let result = future::block_on(task);
    let steps = steps.load(std::sync::atomic::Ordering::SeqCst);
    format!("{steps} steps, {result:?}")
}

/// A flag with the waker of the task that waits for it. With `recheck`, the waiter checks the
/// flag again after it stored its waker; without, a set between its check and the store of
/// its waker finds no waker to wake, and the waiter is parked for ever.
struct Signal {
    set: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

/// The future of a task waiting for a [`Signal`].
struct WaitFor {
    signal: Arc<Signal>,
    recheck: bool,
}

impl Future for WaitFor {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.signal.set.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *self.signal.waker.lock().unwrap() = Some(context.waker().clone());
        if self.recheck && self.signal.set.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// A task waits for a signal that another task sets.
fn lost_wakeup(recheck: bool) {
    future::block_on(async move {
        let signal = Arc::new(Signal {
            set: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        let waiter = future::spawn(WaitFor {
            signal: signal.clone(),
            recheck,
        });
        let setter = {
            let signal = signal.clone();
            future::spawn(async move {
                signal.set.store(true, Ordering::SeqCst);
                let waker = signal.waker.lock().unwrap().take();
                if let Some(waker) = waker {
                    waker.wake();
                }
            })
        };
        setter.await.unwrap();
        waiter.await.unwrap();
    });
}

/// The lost wakeup is found (the waiter parked for ever, reported as a deadlock), and the
/// fixed twin is exhausted clean.
#[test]
fn dfs_finds_a_lost_wakeup_between_tasks_and_exhausts_the_fixed_twin() {
    let report = helpers::builder("dfs")
        .executions(100_000)
        .explore(|| lost_wakeup(false))
        .unwrap();
    let failure = report.first_failure().expect("the lost wakeup is found");
    assert!(failure.message.contains("deadlock"), "{failure}");
    let fixed = helpers::exhaust("dfs", || lost_wakeup(true));
    println!(
        "lost wakeup found at execution {}, fixed twin exhausted in {}",
        failure.execution, fixed.executions
    );
}
