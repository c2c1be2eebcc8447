//! Reports without puzzles: every object has one name in the whole report, each primitive
//! shows its own type, an async operation is one step at the user's line, the steps a failure
//! is about (a race's accesses, a deadlock's acquisitions) are never elided and every step can
//! be asked for, a long token is printed once, and a hand-over through a relaxed flag is
//! reported as the race it is.

use std::sync::Arc as StdArc;

use crate::helpers;
use interleave::cell::{UnsafeCell, Var};
use interleave::future;
use interleave::future::sync::{
    mpsc, oneshot, watch, Mutex as AsyncMutex, Notify, RwLock, Semaphore,
};
use interleave::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, FailureKind, Report};

fn explore(spec: &str, executions: u64, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(executions)
        .explore(f)
        .expect("a valid configuration")
}

/// The line of this file that `marker` (a comment at the end of the line) marks.
fn line_of(marker: &str) -> usize {
    let source = include_str!("readable.rs");
    let with_comment = format!("// {marker}");
    source
        .lines()
        .position(|line| line.ends_with(&with_comment))
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("no line marked {marker}"))
}

fn failure_text(report: &Report) -> String {
    report
        .first_failure()
        .unwrap_or_else(|| panic!("the program fails:\n{report}"))
        .to_string()
}

/// Two locks created on one line, taken in opposite orders.
fn inverted_locks_from_one_line() {
    let (a, b) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0))); // two mutexes
    let (a2, b2) = (a.clone(), b.clone());
    let other = thread::spawn(move || {
        let _b = b2.lock().unwrap();
        let _a = a2.lock().unwrap();
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    other.join().unwrap();
}

/// The legend line of `name`, without its leading spaces.
fn legend_line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .map(str::trim)
        .find(|line| line.starts_with(&format!("{name} = ")))
        .unwrap_or_else(|| panic!("no legend line for {name}:\n{text}"))
}

#[test]
fn an_object_has_one_name_in_the_message_the_legend_and_the_table() {
    let text = failure_text(&explore("dfs", 2000, inverted_locks_from_one_line));
    let line = line_of("two mutexes");
    let first = legend_line(&text, "Mutex1");
    let second = legend_line(&text, "Mutex2");
    let created_on_the_line = format!("Mutex created at reports/readable.rs:{line}:");
    assert!(first.contains(&created_on_the_line), "{text}");
    assert!(second.contains(&created_on_the_line), "{text}");
    assert_ne!(first, second, "the columns tell them apart:\n{text}");
    let (message, table) = text.split_once("interleaving (").expect("an interleaving");
    for name in ["Mutex1", "Mutex2"] {
        assert!(message.contains(&format!("on {name}")), "{text}");
        assert!(table.contains(&format!("lock {name} @")), "{text}");
    }
    assert!(!text.contains('#'), "no second numbering:\n{text}");
}

#[test]
fn each_primitive_shows_its_own_type_name() {
    let text = failure_text(&explore("dfs", 100, || {
        let cell = Arc::new(UnsafeCell::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let writer = {
            let (cell, flag) = (cell.clone(), flag.clone());
            thread::spawn(move || {
                flag.store(true, Ordering::Relaxed);
                cell.with_mut(|value| unsafe { *value = 1 });
            })
        };
        if flag.load(Ordering::Relaxed) {
            cell.with(|value| unsafe { *value });
        }
        cell.with_mut(|value| unsafe { *value = 2 });
        writer.join().unwrap();
    }));
    assert!(text.contains("data race on UnsafeCell1"), "{text}");
    assert!(
        text.contains("UnsafeCell1 = UnsafeCell created at"),
        "{text}"
    );
    assert!(
        text.contains("AtomicBool1 = AtomicBool created at"),
        "{text}"
    );
    assert!(!text.contains("Var"), "{text}");

    let text = failure_text(&explore("dfs", 100, || {
        future::block_on(async {
            let notify = StdArc::new(Notify::new());
            let waiter = {
                let notify = notify.clone();
                future::spawn(async move { notify.notified().await })
            };
            waiter.await.unwrap();
            notify.notify_one();
        })
    }));
    assert!(text.contains("Notify1 = Notify created at"), "{text}");
    assert!(text.contains("notified (waits) Notify1 @"), "{text}");
    assert!(!text.contains("poll Notify1"), "{text}");
    assert!(
        !text.contains("Mutex"),
        "Notify's own lock stays inside:\n{text}"
    );
}

/// Two tasks increment a counter behind an async mutex in two critical sections each: the
/// update can be lost.
fn async_lost_update() {
    future::block_on(async {
        let counter = StdArc::new(AsyncMutex::new(0));
        let task = {
            let counter = counter.clone();
            future::spawn(async move {
                let seen = *counter.lock().await;
                *counter.lock().await = seen + 1;
            })
        };
        let seen = *counter.lock().await; // the main task's first lock
        *counter.lock().await = seen + 1;
        task.await.unwrap();
        assert_eq!(*counter.lock().await, 2);
    })
}

#[test]
fn an_async_lock_is_one_step_and_its_release_another() {
    let report = helpers::builder("dfs")
        .executions(5000)
        .full_interleaving(true)
        .explore(async_lost_update)
        .expect("a valid configuration");
    let text = failure_text(&report);
    let line = |needle: &str| {
        text.lines()
            .filter(|row| row.contains(needle))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // Each of the main task's `counter.lock().await` that got the lock at once is one `lock`
    // row and its guard's drop one `unlock` row, at the user's line.
    let first_lock = format!(
        "@reports/readable.rs:{}:",
        line_of("the main task's first lock")
    );
    let rows = line(&first_lock);
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].contains("| lock AsyncMutex1 @"), "{text}");
    assert!(rows[1].contains("| unlock AsyncMutex1 @"), "{text}");
    assert!(!text.contains("poll AsyncMutex1"), "{text}");
}

/// A task waits for a notification nobody sends.
fn async_lost_notification() {
    future::block_on(async {
        let notify = StdArc::new(Notify::new());
        let lock = StdArc::new(RwLock::new(0));
        let permits = StdArc::new(Semaphore::new(1));
        let (sender, receiver) = oneshot::channel::<u32>();
        let task = {
            let (notify, lock, permits) = (notify.clone(), lock.clone(), permits.clone());
            future::spawn(async move {
                let _permit = permits.acquire().await.unwrap();
                *lock.write().await += 1;
                sender.send(1).unwrap();
                notify.notified().await;
            })
        };
        let _permit = permits.acquire().await.unwrap();
        assert_eq!(receiver.await.unwrap(), *lock.read().await);
        task.await.unwrap();
    })
}

/// A task sends on a bounded channel and a watch channel; the main task's check of what it
/// received is wrong, so every execution fails after using both.
fn async_channels() {
    future::block_on(async {
        let (sender, mut receiver) = mpsc::channel::<u32>(1);
        let (watch_sender, mut watch_receiver) = watch::channel(0);
        let task = future::spawn(async move {
            sender.send(1).await.unwrap();
            watch_sender.send(1).unwrap();
        });
        let received = receiver.recv().await.expect("a message");
        watch_receiver.changed().await.expect("a change");
        let watched = *watch_receiver.borrow_and_update();
        task.await.unwrap();
        assert_eq!(watched, received + 1, "the check is wrong");
    })
}

/// Every `file:line` in `text` with the file's path as the report shows it.
fn sites(text: &str) -> Vec<String> {
    let mut sites = Vec::new();
    for (at, _) in text.match_indices(".rs:") {
        let start = text[..at]
            .rfind(|c: char| c.is_whitespace() || c == '@' || c == '(' || c == '…')
            .map_or(0, |i| {
                i + text[i..].chars().next().map_or(1, char::len_utf8)
            });
        sites.push(text[start..at + 3].to_string());
    }
    sites
}

#[test]
fn no_site_of_an_async_report_points_into_interleave() {
    let lost_update = failure_text(&explore("dfs", 5000, async_lost_update));
    let deadlock = explore("dfs", 100, async_lost_notification);
    assert_eq!(
        deadlock.first_failure().map(|f| f.kind),
        Some(FailureKind::Deadlock),
        "{deadlock}"
    );
    let deadlock = failure_text(&deadlock);
    assert!(
        deadlock.contains("acquire (waits) Semaphore1 @"),
        "{deadlock}"
    );
    assert!(deadlock.contains("recv (waits) Oneshot1 @"), "{deadlock}");
    let channels = helpers::builder("dfs")
        .executions(100)
        .full_interleaving(true)
        .explore(async_channels)
        .expect("a valid configuration");
    let channels = failure_text(&channels);
    for operation in ["send AsyncChannel1", "recv", "changed", "send Watch1"] {
        assert!(channels.contains(operation), "{operation}:\n{channels}");
    }
    for text in [lost_update, deadlock, channels] {
        let sites = sites(&text);
        assert!(!sites.is_empty(), "{text}");
        for site in sites {
            assert!(
                site.ends_with("reports/readable.rs"),
                "a site outside the test, {site}:\n{text}"
            );
        }
    }
}

/// A thread writes a variable soon after it starts; the main thread takes many steps, which
/// a busy thread's steps interleave with, before it writes it too, without synchronisation.
fn late_racing_write() {
    let shared = Arc::new(Var::new(0));
    let steps = Arc::new(AtomicUsize::new(0));
    let writer = {
        let shared = shared.clone();
        thread::spawn(move || shared.set(1)) // the early write
    };
    let busy = {
        let steps = steps.clone();
        thread::spawn(move || {
            for _ in 0..120 {
                steps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    for _ in 0..120 {
        steps.fetch_add(1, Ordering::Relaxed);
    }
    shared.set(2); // the late write
    writer.join().unwrap();
    busy.join().unwrap();
}

#[test]
fn the_racing_steps_are_never_elided_and_every_step_can_be_shown() {
    let report = explore("random", 100, late_racing_write);
    let failure = report.first_failure().expect("the race");
    assert_eq!(failure.kind, FailureKind::DataRace);
    let text = failure.to_string();
    assert!(text.contains("not shown"), "{text}");
    assert!(text.contains("INTERLEAVE_FULL_REPORT=1"), "{text}");
    let (_, table) = text.split_once("interleaving (").expect("an interleaving");
    let early = text
        .lines()
        .find(|row| {
            row.contains(&format!(
                "write Var1 @reports/readable.rs:{}:",
                line_of("the early write")
            ))
        })
        .and_then(|row| row.trim_start().split(' ').next()?.parse::<u64>().ok())
        .expect("the early write's step");
    assert!(
        early + 60 < failure.steps,
        "the early write is early:\n{text}"
    );
    for access in [line_of("the early write"), line_of("the late write")] {
        let access = format!("write Var1 @reports/readable.rs:{access}:");
        assert!(table.contains(&access), "{access} is shown:\n{text}");
    }

    let report = helpers::builder("random")
        .executions(100)
        .full_interleaving(true)
        .explore(late_racing_write)
        .expect("a valid configuration");
    let failure = report.first_failure().expect("the race");
    let text = failure.to_string();
    assert!(!text.contains("not shown"), "{text}");
    for step in 1..=failure.steps {
        assert!(
            text.lines()
                .any(|row| row.trim_start().starts_with(&format!("{step} |"))),
            "step {step} is shown:\n{text}"
        );
    }
}

#[test]
fn a_long_token_is_printed_once() {
    let report = Builder::new()
        .ignore_environment()
        .strategy("random".parse().expect("a valid spec"))
        .max_steps(3000)
        .executions(10)
        .explore(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let other = Arc::new(AtomicBool::new(false));
            let spinner = {
                let other = other.clone();
                thread::spawn(move || while !other.load(Ordering::SeqCst) {})
            };
            while !flag.load(Ordering::SeqCst) {}
            other.store(true, Ordering::SeqCst);
            spinner.join().unwrap();
        })
        .expect("a valid configuration");
    let failure = report.first_failure().expect("the spin never ends");
    assert_eq!(failure.kind, FailureKind::StepBound);
    assert!(failure.token.len() > 200, "{}", failure.token);
    let text = failure.to_string();
    assert_eq!(text.matches(&failure.token).count(), 1, "{text}");
    assert!(text.contains("interleave::replay(TOKEN, || ...)"), "{text}");
}

/// A thread publishes a variable through a flag stored with `ordering`; the main thread reads
/// the variable once it sees the flag.
fn publish_with(ordering: Ordering) -> impl Fn() + Sync {
    move || {
        let data = Arc::new(Var::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let publisher = {
            let (data, ready) = (data.clone(), ready.clone());
            thread::spawn(move || {
                data.set(1);
                ready.store(true, ordering);
            })
        };
        if ready.load(Ordering::Acquire) {
            assert_eq!(data.get(), 1);
        }
        publisher.join().unwrap();
    }
}

#[test]
fn a_relaxed_flag_publishes_nothing_and_the_race_says_so() {
    let relaxed = explore("dfs", 1000, publish_with(Ordering::Relaxed));
    let failure = relaxed
        .first_failure()
        .expect("the relaxed hand-over races");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    assert!(failure.message.contains("data race on Var1"), "{failure}");
    assert!(explore("dfs", 1000, publish_with(Ordering::Release)).is_ok());
}

/// Each thread takes one lock early, both take many steps interleaved with a busy thread's,
/// then each wants the other's lock.
fn late_deadlock() {
    let first = Arc::new(Mutex::new(()));
    let second = Arc::new(Mutex::new(()));
    let steps = Arc::new(AtomicUsize::new(0));
    let busy = {
        let steps = steps.clone();
        thread::spawn(move || {
            for _ in 0..60 {
                steps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let other = {
        let (first, second, steps) = (first.clone(), second.clone(), steps.clone());
        thread::spawn(move || {
            let _second = second.lock().unwrap(); // the other thread's early lock
            for _ in 0..60 {
                steps.fetch_add(1, Ordering::Relaxed);
            }
            let _first = first.lock().unwrap();
        })
    };
    let _first = first.lock().unwrap(); // the main thread's early lock
    for _ in 0..60 {
        steps.fetch_add(1, Ordering::Relaxed);
    }
    let _second = second.lock().unwrap();
    drop((_second, _first));
    other.join().unwrap();
    busy.join().unwrap();
}

#[test]
fn a_deadlocks_early_acquisitions_are_never_elided() {
    let report = explore("random", 1000, late_deadlock);
    let failure = report.first_failure().expect("the deadlock");
    assert_eq!(failure.kind, FailureKind::Deadlock, "{failure}");
    let text = failure.to_string();
    assert!(text.contains("not shown"), "{text}");
    let (_, table) = text.split_once("interleaving (").expect("an interleaving");
    for (name, marker) in [
        ("Mutex1", "the main thread's early lock"),
        ("Mutex2", "the other thread's early lock"),
    ] {
        let acquisition = format!("| lock {name} @reports/readable.rs:{}:", line_of(marker));
        let row = table
            .lines()
            .find(|row| row.contains(&acquisition))
            .unwrap_or_else(|| panic!("{acquisition} is shown:\n{text}"));
        let step: u64 = row
            .trim_start()
            .split(' ')
            .next()
            .and_then(|step| step.parse().ok())
            .expect("a step row");
        assert!(
            step + 60 < failure.steps,
            "the acquisition is early:\n{text}"
        );
    }
}

/// The text of the first failure of `program` under `dfs`, and its interleaving table.
fn first_failure_and_its_interleaving(program: fn()) -> (String, String) {
    let text = failure_text(&explore("dfs", 1, program));
    let table = text
        .lines()
        .skip_while(|line| !line.starts_with("interleaving"))
        .collect::<Vec<_>>()
        .join("\n");
    (text, table)
}

/// A worker tries to receive on one channel, drops its receiver and sends on a second channel,
/// whose sender it drops at its end; the main thread tries to send on the first and receives
/// on the second, then fails on purpose so that the report shows every step.
fn channel_endpoints() {
    let (sender, receiver) = interleave::sync::mpsc::sync_channel::<u8>(1);
    let (done, finished) = interleave::sync::mpsc::channel::<u8>();
    let worker = thread::spawn(move || {
        let _ = receiver.try_recv(); // try_recv
        drop(receiver);
        done.send(0).unwrap();
    });
    let _ = sender.try_send(1); // try_send
    let _ = finished.recv();
    worker.join().unwrap();
    panic!("the end of the program");
}

/// A channel's steps that are no blocking send or receive are named for what they did, and a
/// drop shows no site, since it has none of its own; they used to be shown as a `poll` at the
/// channel's creation.
#[test]
fn a_channels_tries_and_drops_are_named_as_such() {
    let (text, table) = first_failure_and_its_interleaving(channel_endpoints);
    legend_line(&text, "Channel1");
    legend_line(&text, "Channel2");
    let at = |marker| format!("@reports/readable.rs:{}:", line_of(marker));
    for expected in [
        format!("try_recv Channel1 {}", at("try_recv")),
        format!("try_send Channel1 {}", at("try_send")),
        "drop receiver Channel1".to_string(),
        "drop sender Channel2".to_string(),
    ] {
        assert!(table.contains(&expected), "{expected:?} in\n{text}");
    }
    assert!(!table.contains("poll"), "{text}");
}

/// The main task aborts a task that waits for ever, then fails on purpose so that the report
/// shows every step. It yields twice first, so that the task has parked to wait when the abort
/// comes (an abort of a task that has not been polled yet orders nothing and takes no step).
fn aborted_task() {
    future::block_on(async {
        let (_keep, waits) = future::sync::oneshot::channel::<u8>();
        let task = future::spawn(async move {
            let _ = waits.await;
        });
        future::yield_now().await;
        future::yield_now().await;
        task.abort(); // abort
        let _ = task.await;
        panic!("the end of the program");
    });
}

/// An abort is one step, an unpark of the task, and the interleaving used to show it as
/// `unpark`: it is named `abort`, at its line.
#[test]
fn an_abort_is_named_as_such() {
    let (text, table) = first_failure_and_its_interleaving(aborted_task);
    let abort = format!("abort @reports/readable.rs:{}:", line_of("abort"));
    assert!(table.contains(&abort), "{abort:?} in\n{text}");
    let unpark = format!("unpark @reports/readable.rs:{}:", line_of("abort"));
    assert!(!table.contains(&unpark), "{text}");
}

/// A task registers its waker and waits for a flag that another thread raises before it wakes
/// the waker; the main thread then fails on purpose so that the report shows every step.
fn atomic_waker_steps() {
    let waker = Arc::new(future::AtomicWaker::new()); // new waker
    let flag = Arc::new(AtomicBool::new(false));
    let (raiser_waker, raiser_flag) = (waker.clone(), flag.clone());
    let raiser = thread::spawn(move || {
        raiser_flag.store(true, Ordering::Release);
        raiser_waker.wake(); // wake
    });
    future::block_on(std::future::poll_fn(|context| {
        waker.register_by_ref(context.waker()); // register
        if flag.load(Ordering::Acquire) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }));
    raiser.join().unwrap();
    panic!("the end of the program");
}

/// An `AtomicWaker` is a lock inside, and its steps used to be shown as `lock Mutex1` with the
/// legend `Mutex1 = Mutex created at` the waker's creation: they are its own operations.
#[test]
fn an_atomic_wakers_steps_are_named_as_its_own() {
    let (text, table) = first_failure_and_its_interleaving(atomic_waker_steps);
    assert!(
        text.contains(&format!(
            "AtomicWaker1 = AtomicWaker created at reports/readable.rs:{}:",
            line_of("new waker")
        )),
        "{text}"
    );
    let at = |marker| format!("@reports/readable.rs:{}:", line_of(marker));
    for expected in [
        format!("register AtomicWaker1 {}", at("register")),
        format!("wake AtomicWaker1 {}", at("wake")),
    ] {
        assert!(table.contains(&expected), "{expected:?} in\n{text}");
    }
    assert!(!text.contains("Mutex"), "{text}");
}

/// The report of the first panic `program` has under `dfs` with spurious wake-ups (a
/// deadlock may come first: a wait that nothing ends deadlocks unless it wakes spuriously).
fn first_panic_with_spurious_wakeups(program: fn()) -> String {
    let report = helpers::builder("dfs")
        .spurious_wakeups(true)
        .stop_on_first_failure(false)
        .executions(100)
        .explore(program)
        .expect("a valid configuration");
    let panic = report
        .failures
        .iter()
        .find(|failure| failure.kind == FailureKind::Panic)
        .unwrap_or_else(|| panic!("no panic in\n{report}"));
    panic.to_string()
}

/// A waiter that checks its condition with `if` instead of `while`, which a spurious wake-up
/// breaks, and a park that expects its unpark.
fn waits_without_a_loop() {
    let pair = Arc::new((Mutex::new(false), interleave::sync::Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        thread::spawn(move || {
            *pair.0.lock().unwrap() = true;
            pair.1.notify_one();
        })
    };
    let mut ready = pair.0.lock().unwrap();
    if !*ready {
        ready = pair.1.wait(ready).unwrap(); // the wait
    }
    assert!(*ready, "woke before the notification");
    drop(ready);
    notifier.join().unwrap();
}

fn parks_once() {
    let unparked = Arc::new(AtomicBool::new(false));
    let main = thread::current();
    let unparker = {
        let unparked = unparked.clone();
        thread::spawn(move || {
            // A step before the store: `dfs` lets a wait end by itself only after the other
            // threads have stepped, as it does a timeout.
            thread::yield_now();
            unparked.store(true, Ordering::SeqCst);
            main.unpark();
        })
    };
    thread::park(); // the park
    assert!(
        unparked.load(Ordering::SeqCst),
        "the park ended without an unpark"
    );
    unparker.join().unwrap();
}

/// A spurious wake-up used to be shown as a plain `wake` (or `park`), with no `notify` (or
/// `unpark`) anywhere in the interleaving to explain it: it is named as such.
#[test]
fn a_spurious_wake_up_is_named_as_such() {
    let text = first_panic_with_spurious_wakeups(waits_without_a_loop);
    let wake = format!(
        "wake (spurious) Condvar1 @reports/readable.rs:{}:",
        line_of("the wait")
    );
    assert!(text.contains(&wake), "{wake:?} in\n{text}");
    let text = first_panic_with_spurious_wakeups(parks_once);
    let park = format!(
        "park (spurious) @reports/readable.rs:{}:",
        line_of("the park")
    );
    assert!(text.contains(&park), "{park:?} in\n{text}");
    // A task's park that its timer ends is no spurious wake-up, with them allowed or not.
    let slept = || {
        future::block_on(interleave::time::sleep(std::time::Duration::from_millis(
            10,
        )));
        panic!("the end of the program");
    };
    for spurious in [false, true] {
        let report = helpers::builder("dfs")
            .spurious_wakeups(spurious)
            .executions(1)
            .explore(slept)
            .expect("a valid configuration");
        let text = failure_text(&report);
        assert!(text.contains("virtual clock moves to 10ms"), "{text}");
        assert!(!text.contains("spurious"), "{text}");
    }
}

/// A thread blocked for ever in `Condvar::wait` shows, in the row of what each thread does next,
/// the wait it is in, not the wake that never comes, which read as if it were about to wake.
#[test]
fn a_waiter_never_notified_is_shown_waiting() {
    let report = explore("random", 10, || {
        let state = Arc::new((Mutex::new(false), interleave::sync::Condvar::new()));
        let waiter = {
            let state = state.clone();
            thread::spawn(move || {
                let mut ready = state.0.lock().unwrap();
                while !*ready {
                    ready = state.1.wait(ready).unwrap();
                }
            })
        };
        waiter.join().unwrap();
    });
    let text = failure_text(&report);
    let next = text
        .lines()
        .find(|line| line.trim_start().starts_with("next |"))
        .unwrap_or_else(|| panic!("no next row: {text}"));
    assert!(next.contains("| wait (waits) Condvar1 @"), "{text}");
    assert!(!next.contains("wake"), "{text}");
}
