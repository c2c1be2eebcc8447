//! Virtual time: a sleep or timeout may end at any scheduling point after it started, and the
//! clock then moves to its deadline (never back), for async timers and blocking timed waits
//! alike; `select` explores both winners of a tie; and a timeout race of async code (a reply due
//! at the same instant as the deadline) is found by PCT.

use crate::helpers;
use helpers::outcomes;

use std::collections::BTreeSet;

use interleave::future::sync::oneshot;
use interleave::future::{self, Either};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::mpsc::{self, RecvTimeoutError};
use interleave::sync::{Arc, Condvar, Mutex};
use interleave::thread;
use interleave::time::{self, Duration, Instant};
use interleave::{Builder, FailureKind, Report};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Explores `f` with random and PCT schedules and fails the test on any failure.
fn all_schedules(f: impl Fn() + Sync) {
    helpers::all_schedules(200, f);
}

/// A sleep may end at any scheduling point after it started (the sleeper may be scheduled late
/// or early relative to the others), lasts at least its duration on the virtual clock, and the
/// clock never goes back: both orders of two sleepers are reached.
#[test]
fn sleepers_wake_in_either_order_after_at_least_their_duration() {
    let orders = outcomes(|| {
        future::block_on(async {
            let start = Instant::now();
            assert_eq!(start.elapsed(), Duration::ZERO);
            let log = Arc::new(Mutex::new(Vec::new()));
            let sleeper = |millis: u64| {
                let log = log.clone();
                future::spawn(async move {
                    let before = Instant::now();
                    time::sleep(ms(millis)).await;
                    assert!(Instant::now() - before >= ms(millis));
                    log.lock().unwrap().push((millis, start.elapsed()));
                })
            };
            let slow = sleeper(10);
            let fast = sleeper(5);
            slow.await.unwrap();
            fast.await.unwrap();
            let log = log.lock().unwrap().clone();
            assert!(log.windows(2).all(|w| w[0].1 <= w[1].1), "{log:?}");
            // The fast sleeper may have started late, after the slow one woke.
            assert!(start.elapsed() >= ms(10));
            time::sleep_until(start + ms(12)).await;
            let after = Instant::now();
            assert!(after >= start + ms(12));
            time::sleep_until(start).await;
            assert_eq!(
                Instant::now(),
                after,
                "a deadline in the past completes at once"
            );
            log.iter().map(|&(millis, _)| millis).collect::<Vec<_>>()
        })
    });
    assert_eq!(orders, BTreeSet::from([vec![5, 10], vec![10, 5]]));
}

#[test]
fn a_timeout_fires_at_its_deadline_and_may_fire_before_a_slow_reply() {
    all_schedules(|| {
        future::block_on(async {
            let start = Instant::now();
            let late = time::timeout(ms(5), time::sleep(ms(10))).await;
            assert!(late.is_err());
            assert_eq!(start.elapsed(), ms(5));

            let early = time::timeout(ms(10), async {
                time::sleep(ms(3)).await;
                7
            })
            .await;
            assert_eq!(early, Ok(7));
            assert_eq!(start.elapsed(), ms(8));

            // A sender that never sends: only the deadline ends the wait.
            let (tx, rx) = oneshot::channel::<u32>();
            assert!(time::timeout_at(start + ms(20), rx).await.is_err());
            assert_eq!(start.elapsed(), ms(20));
            drop(tx);
        })
    });
    // A reply that needs no time may still come after the deadline: the replying task can be
    // scheduled late. Both outcomes are reached, and a timeout always comes at its deadline.
    let replies = outcomes(|| {
        future::block_on(async {
            let start = Instant::now();
            let (tx, rx) = oneshot::channel();
            let replier = future::spawn(async move {
                let _ = tx.send(1);
            });
            let reply = time::timeout(ms(1), rx).await;
            replier.await.unwrap();
            let elapsed = start.elapsed();
            assert!(elapsed <= ms(1));
            (reply.is_ok(), elapsed == ms(1))
        })
    });
    assert!(replies.contains(&(true, false)), "{replies:?}");
    assert!(replies.contains(&(false, true)), "{replies:?}");
}

#[test]
fn an_interval_ticks_at_once_then_every_period_and_makes_up_missed_ticks() {
    all_schedules(|| {
        future::block_on(async {
            let start = Instant::now();
            let mut ticks = time::interval(ms(3));
            assert_eq!(ticks.period(), ms(3));
            assert_eq!(ticks.tick().await, start);
            assert_eq!(ticks.tick().await, start + ms(3));
            assert_eq!(start.elapsed(), ms(3));
            time::sleep(ms(7)).await;
            // Missed ticks come at once, keeping their phase.
            assert_eq!(ticks.tick().await, start + ms(6));
            assert_eq!(ticks.tick().await, start + ms(9));
            assert_eq!(start.elapsed(), ms(10));
            assert_eq!(ticks.tick().await, start + ms(12));
            assert_eq!(start.elapsed(), ms(12));
            ticks.reset();
            assert_eq!(ticks.tick().await, start + ms(15));
        })
    });
}

#[test]
fn blocking_sleeps_and_async_sleeps_share_one_clock() {
    all_schedules(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sleeper = {
            let log = log.clone();
            thread::spawn(move || {
                thread::sleep(ms(4));
                log.lock().unwrap().push(("thread", Instant::now()));
                thread::sleep(ms(4));
                log.lock().unwrap().push(("thread", Instant::now()));
            })
        };
        let start = Instant::now();
        future::block_on(async {
            time::sleep(ms(6)).await;
            log.lock().unwrap().push(("task", Instant::now()));
            time::sleep(ms(4)).await;
            log.lock().unwrap().push(("task", Instant::now()));
        });
        sleeper.join().unwrap();
        let log = log.lock().unwrap().clone();
        assert!(
            log.windows(2).all(|w| w[0].1 <= w[1].1),
            "one clock: {log:?}"
        );
        for (who, first) in [("thread", 4), ("task", 6)] {
            let times: Vec<_> = log.iter().filter(|e| e.0 == who).map(|e| e.1).collect();
            assert!(times[0] >= start + ms(first), "{log:?}");
            assert!(times[1] >= times[0] + ms(4), "{log:?}");
        }

        // A park that nobody ends returns at its deadline.
        let before = Instant::now();
        thread::park_timeout(ms(3));
        assert_eq!(before.elapsed(), ms(3));
    });
}

#[test]
fn a_condvar_wait_may_time_out_or_be_notified_whatever_the_notifier_does() {
    /// The waiter waits at most 10 ms; the notifier first works for `work` of virtual time.
    /// Returns whether the waiter timed out and when it woke.
    fn wait_for_notifier(work: Option<Duration>) -> (bool, Duration) {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let notifier = {
            let state = state.clone();
            thread::spawn(move || {
                if let Some(work) = work {
                    thread::sleep(work);
                }
                *state.0.lock().unwrap() = true;
                state.1.notify_one();
            })
        };
        let start = Instant::now();
        let (lock, condvar) = &*state;
        let (guard, result) = condvar
            .wait_timeout_while(lock.lock().unwrap(), ms(10), |ready| !*ready)
            .unwrap();
        assert_eq!(*guard, !result.timed_out());
        let woke = start.elapsed();
        drop(guard);
        notifier.join().unwrap();
        (result.timed_out(), woke)
    }

    // The waiter may be notified or time out whenever the notifier works: the notifier can be
    // scheduled late (even start its work after the deadline). A timeout never comes before
    // the deadline, and a notification never before the notifier's work is done.
    for (work, notified, timed_out) in [
        (None, (false, Duration::ZERO), (true, ms(10))),
        (Some(ms(4)), (false, ms(4)), (true, ms(10))),
        (Some(ms(20)), (false, ms(20)), (true, ms(10))),
    ] {
        let seen = outcomes(|| wait_for_notifier(work));
        assert!(seen.contains(&notified), "{work:?}: {seen:?}");
        assert!(seen.contains(&timed_out), "{work:?}: {seen:?}");
        for &(timed_out, woke) in &seen {
            assert!(!timed_out || woke >= ms(10), "{work:?}: {seen:?}");
            assert!(
                timed_out || woke >= work.unwrap_or_default(),
                "{work:?}: {seen:?}"
            );
        }
    }

    // `wait_timeout` without a notifier times out after exactly its duration.
    all_schedules(|| {
        let pair = (Mutex::new(()), Condvar::new());
        let start = Instant::now();
        let (_guard, result) = pair.1.wait_timeout(pair.0.lock().unwrap(), ms(7)).unwrap();
        assert!(result.timed_out());
        assert_eq!(start.elapsed(), ms(7));
    });
}

/// std code passes `Duration::MAX` for "no timeout": a newcomer's correct wait timed out, and
/// the clock moved to the end of time. Each blocking timed wait with a deadline the clock
/// cannot reach ends only as its untimed form would.
#[test]
fn a_timeout_the_clock_cannot_reach_never_ends_a_wait() {
    all_schedules(|| {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let (tx, rx) = mpsc::channel();
        let other = {
            let state = state.clone();
            thread::spawn(move || {
                *state.0.lock().unwrap() = true;
                state.1.notify_one();
                tx.send(1).unwrap();
            })
        };
        let (lock, condvar) = &*state;
        let (guard, result) = condvar
            .wait_timeout_while(lock.lock().unwrap(), Duration::MAX, |ready| !*ready)
            .unwrap();
        assert!(*guard && !result.timed_out());
        drop(guard);
        assert_eq!(rx.recv_timeout(Duration::MAX), Ok(1));
        other.join().unwrap();
        let me = thread::current();
        let unparker = thread::spawn(move || me.unpark());
        thread::park_timeout(Duration::MAX);
        unparker.join().unwrap();
        assert!(Instant::now().elapsed() < ms(1));
    });
    // A reachable deadline still times out.
    let seen = outcomes(|| {
        let (_tx, rx) = mpsc::channel::<u32>();
        rx.recv_timeout(Duration::from_secs(1 << 40)) == Err(RecvTimeoutError::Timeout)
    });
    assert_eq!(seen, BTreeSet::from([true]));
}

/// std's clock counts from the machine's start, so code sets a "last time" in the past with
/// `Instant::now() - d`; the virtual clock started at the first representable instant, and a
/// newcomer's correct rate limiter panicked.
#[test]
fn an_instant_before_the_execution_started_is_representable() {
    all_schedules(|| {
        let start = Instant::now();
        let long_ago = start - Duration::from_secs(3600 * 24 * 365);
        assert_eq!(
            start.duration_since(long_ago),
            Duration::from_secs(3600 * 24 * 365)
        );
        assert!(long_ago.elapsed() >= Duration::from_secs(3600));
        assert!(format!("{long_ago:?}").contains("before the execution started"));
        assert_eq!(format!("{start:?}"), "Instant(0ns of virtual time)");
        // A sleep until an instant in the past ends at once, without moving the clock.
        future::block_on(time::sleep_until(long_ago));
        assert_eq!(Instant::now(), start);
    });
}

#[test]
fn recv_timeout_may_time_out_or_receive_whatever_the_deadline() {
    let receive = |send_after: u64, timeout: u64| {
        let (tx, rx) = mpsc::channel();
        let sender = thread::spawn(move || {
            thread::sleep(ms(send_after));
            let _ = tx.send(1);
        });
        let start = Instant::now();
        let result = match rx.recv_timeout(ms(timeout)) {
            Ok(value) => Some(value),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the sender is alive"),
        };
        let waited = start.elapsed();
        drop(rx);
        sender.join().unwrap();
        (result, waited)
    };
    // A message sent after 5 ms may miss a 10 ms timeout (the sender is scheduled late), and
    // one sent after 10 ms may still be received by a 2 ms timeout (the receiver is).
    assert_eq!(
        outcomes(|| receive(5, 10)),
        BTreeSet::from([(None, ms(10)), (Some(1), ms(5))])
    );
    let late = outcomes(|| receive(10, 2));
    assert!(late.contains(&(None, ms(2))), "{late:?}");
    assert!(late.contains(&(Some(1), ms(10))), "{late:?}");
}

/// A sleeper's send may beat a receiver's `recv_timeout` whatever their durations, under every
/// strategy that follows the yield rule, not only in `auto`'s random slot: the receiver's only
/// step is its timeout, and the yield rule's pass lets the sleeper go before it.
#[test]
fn a_sleepers_send_may_beat_a_later_timeout_under_the_yield_rule() {
    let receive = || {
        let (tx, rx) = mpsc::channel();
        let sender = thread::spawn(move || {
            thread::sleep(ms(10));
            let _ = tx.send(1);
        });
        let received = rx.recv_timeout(ms(2)).ok();
        drop(rx);
        sender.join().unwrap();
        received
    };
    for spec in [
        "pos",
        "surw",
        "rff",
        "dfs",
        "dpor",
        "dpor:c=1",
        "delay:d=2",
        "random",
        "pct:d=2",
        "rpro",
        "pctvb",
    ] {
        let seen = std::sync::Mutex::new(BTreeSet::new());
        let report = helpers::builder(spec)
            .executions(300)
            .explore(|| {
                let value = receive();
                seen.lock().unwrap().insert(value);
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen, BTreeSet::from([None, Some(1)]), "{spec}");
    }
}

#[test]
fn a_sleeping_thread_is_no_deadlock_but_a_thread_waiting_without_deadline_is() {
    all_schedules(|| {
        let start = Instant::now();
        let sleeper = thread::spawn(|| thread::sleep(Duration::from_secs(3600)));
        sleeper.join().unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3600));
    });
    let report = Builder::new()
        .ignore_environment()
        .executions(20)
        .explore(|| {
            let _sleeper = thread::spawn(|| thread::sleep(ms(5)));
            // The clock moves to 5 ms for the sleeper; after that nothing has a deadline, and
            // nothing will unpark the main thread.
            thread::park();
        })
        .unwrap();
    let failure = report.first_failure().expect("the park never ends");
    assert_eq!(failure.kind, FailureKind::Deadlock, "{failure}");
    assert!(
        failure.message.contains("waits to be unparked"),
        "{failure}"
    );
}

#[test]
fn select_explores_both_winners_when_both_are_ready() {
    let winners = outcomes(|| {
        future::block_on(async {
            match future::select(async { 1 }, async { 2 }).await {
                Either::Left(value) | Either::Right(value) => value,
            }
        })
    });
    assert_eq!(winners, BTreeSet::from([1, 2]));

    // A reply due at the same instant as the deadline: both outcomes, and the losing reply
    // stays in its channel.
    let outcomes = outcomes(|| {
        future::block_on(async {
            let (tx, mut rx) = oneshot::channel();
            let replier = future::spawn(async move {
                time::sleep(ms(10)).await;
                tx.send(5).unwrap();
            });
            replier.await.unwrap();
            let winner = future::select(&mut rx, time::sleep(Duration::ZERO)).await;
            let left = winner.is_left();
            let kept = if left { None } else { rx.try_recv().ok() };
            (left, kept)
        })
    });
    assert_eq!(outcomes, BTreeSet::from([(false, Some(5)), (true, None)]));
}

/// A client asks a server for a reply and gives up after 10 ms; the server needs 10 ms of work
/// before it replies, so the reply and the deadline fall on the same virtual instant, and
/// whether the reply is there when the client's select runs depends on the schedule (which of
/// the two tasks the strategy runs first at 10 ms, and which branch the select polls first).
/// The server counts its reply as delivered when the send succeeds.
///
/// Bug: when the deadline wins the select, the client gives up and drops the receiver, though
/// the reply may already be in it: a delivered reply is taken for a timeout. Fixed: after the
/// deadline the client closes the receiver, so nothing can arrive any more, and checks it once
/// more (tokio's `close` + `try_recv`).
fn request_with_deadline(fixed: bool) -> Outcome {
    future::block_on(async move {
        let delivered = Arc::new(AtomicBool::new(false));
        let (reply_tx, mut reply_rx) = oneshot::channel();
        let server = {
            let delivered = delivered.clone();
            future::spawn(async move {
                time::sleep(ms(10)).await;
                if reply_tx.send(42).is_ok() {
                    delivered.store(true, Ordering::SeqCst);
                }
            })
        };
        let (reply, outcome) = match future::select(&mut reply_rx, time::sleep(ms(10))).await {
            Either::Left(reply) => (reply.ok(), Outcome::Replied),
            Either::Right(()) if fixed => {
                reply_rx.close();
                match reply_rx.try_recv() {
                    Ok(reply) => (Some(reply), Outcome::ReplyAfterDeadline),
                    Err(_) => (None, Outcome::TimedOut),
                }
            }
            Either::Right(()) => (None, Outcome::TimedOut),
        };
        drop(reply_rx);
        server.await.unwrap();
        assert_eq!(
            reply.is_some(),
            delivered.load(Ordering::SeqCst),
            "the server delivered its reply but the client reported a timeout"
        );
        outcome
    })
}

/// How the client of [`request_with_deadline`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// The reply won the select.
    Replied,
    /// The deadline won, and the fixed client found the reply when it checked once more.
    ReplyAfterDeadline,
    /// No reply: the server's send came after the client closed the receiver.
    TimedOut,
}

fn pct(seed: u64, fixed: bool) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("pct:d=3".parse().unwrap())
        .seed(seed)
        .executions(1000)
        .explore(move || {
            request_with_deadline(fixed);
        })
        .unwrap()
}

#[test]
fn the_fixed_client_meets_every_outcome_of_the_race() {
    assert_eq!(
        outcomes(|| request_with_deadline(true)),
        BTreeSet::from([
            Outcome::Replied,
            Outcome::ReplyAfterDeadline,
            Outcome::TimedOut
        ])
    );
}

#[test]
fn pct_finds_the_reply_taken_for_a_timeout_in_every_seed() {
    let found: Vec<u64> = (0..10)
        .map(|seed| {
            let report = pct(seed, false);
            let failure = report
                .first_failure()
                .unwrap_or_else(|| panic!("seed {seed}: {report}"));
            assert_eq!(failure.kind, FailureKind::Panic, "seed {seed}: {failure}");
            assert!(
                failure.message.contains("reported a timeout"),
                "seed {seed}: {failure}"
            );
            let fixed = pct(seed, true);
            assert!(fixed.is_ok(), "fixed twin, seed {seed}: {fixed}");
            assert_eq!(fixed.executions, 1000, "fixed twin, seed {seed}");
            failure.execution + 1
        })
        .collect();
    println!("reply taken for a timeout: executions to the bug per seed {found:?}");
}

#[test]
fn the_same_seed_gives_the_same_report_and_the_token_replays_it() {
    let first = helpers::first_exploration(|| pct(4, false));
    let second = helpers::first_exploration(|| pct(4, false));
    assert_eq!(first.to_string(), second.to_string());
    let failure = first.first_failure().expect("the bug is found");
    assert!(
        failure.to_string().contains("virtual clock moves to 10ms"),
        "the interleaving shows when the clock moved: {failure}"
    );
    let replayed = Builder::new()
        .ignore_environment()
        .replay(&failure.token, || {
            request_with_deadline(false);
        })
        .unwrap();
    let again = replayed
        .first_failure()
        .expect("the replay fails the same way");
    assert_eq!(again.message, failure.message);
    assert_eq!(again.steps, failure.steps);
}
