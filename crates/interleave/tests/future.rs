//! Async tasks and the async primitives: bugs of async code found by PCT, fixed twins clean.

use interleave::future::sync::{Mutex, Notify, Semaphore};
use interleave::future::{self, JoinError};
use interleave::sync::atomic::{AtomicBool, Ordering};
use interleave::sync::Arc;
use interleave::{Builder, FailureKind, Report};

/// A lost wakeup: the waiter checks a flag, then starts waiting; `notify_waiters` in between
/// wakes nobody and stores nothing. Fixed: the waiter registers (makes the `Notified`) before
/// it checks.
fn lost_wakeup(fixed: bool) {
    future::block_on(async {
        let ready = Arc::new(AtomicBool::new(false));
        let notify = Arc::new(Notify::new());
        let waiter = {
            let (ready, notify) = (ready.clone(), notify.clone());
            future::spawn(async move {
                if fixed {
                    let notified = notify.notified();
                    if !ready.load(Ordering::SeqCst) {
                        notified.await;
                    }
                } else if !ready.load(Ordering::SeqCst) {
                    notify.notified().await;
                }
            })
        };
        ready.store(true, Ordering::SeqCst);
        notify.notify_waiters();
        waiter.await.unwrap();
    })
}

/// A check-then-act across two acquisitions of an async mutex: both withdrawals read 100.
/// Fixed: one guard covers the read and the write.
fn split_withdrawals(fixed: bool) {
    future::block_on(async {
        let balance = Arc::new(Mutex::new(100));
        let withdraw = move |balance: Arc<Mutex<i32>>| async move {
            if fixed {
                let mut guard = balance.lock().await;
                *guard -= 10;
            } else {
                let current = *balance.lock().await;
                *balance.lock().await = current - 10;
            }
        };
        let other = future::spawn(withdraw(balance.clone()));
        withdraw(balance.clone()).await;
        other.await.unwrap();
        assert_eq!(*balance.lock().await, 80, "a withdrawal was lost");
    })
}

/// A permit leak: a worker that sees the job cancelled returns early and forgets to give its
/// permit back, so the next acquire waits for ever. Fixed: the permit is dropped.
fn leaked_permit(fixed: bool) {
    future::block_on(async {
        let permits = Arc::new(Semaphore::new(1));
        let cancelled = Arc::new(AtomicBool::new(false));
        let worker = {
            let (permits, cancelled) = (permits.clone(), cancelled.clone());
            future::spawn(async move {
                let permit = permits.acquire().await.unwrap();
                if cancelled.load(Ordering::SeqCst) {
                    if !fixed {
                        permit.forget();
                    }
                    return;
                }
                future::yield_now().await;
                drop(permit);
            })
        };
        cancelled.store(true, Ordering::SeqCst);
        drop(permits.acquire().await.unwrap());
        worker.await.unwrap();
    })
}

fn pct(seed: u64, program: fn(bool), fixed: bool) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("pct:d=3".parse().unwrap())
        .seed(seed)
        .executions(1000)
        .explore(move || program(fixed))
        .unwrap()
}

fn found_in_every_seed(program: fn(bool), kind: FailureKind) -> Vec<u64> {
    (0..10)
        .map(|seed| {
            let report = pct(seed, program, false);
            let failure = report
                .first_failure()
                .unwrap_or_else(|| panic!("seed {seed}: {report}"));
            assert_eq!(failure.kind, kind, "seed {seed}: {failure}");
            let fixed = pct(seed, program, true);
            assert!(fixed.is_ok(), "fixed twin, seed {seed}: {fixed}");
            failure.execution + 1
        })
        .collect()
}

#[test]
fn pct_finds_the_async_lost_wakeup() {
    let found = found_in_every_seed(lost_wakeup, FailureKind::Deadlock);
    println!("lost wakeup: executions to the bug per seed {found:?}");
}

#[test]
fn pct_finds_the_async_check_then_act() {
    let found = found_in_every_seed(split_withdrawals, FailureKind::Panic);
    println!("check-then-act: executions to the bug per seed {found:?}");
}

#[test]
fn pct_finds_the_leaked_permit() {
    let found = found_in_every_seed(leaked_permit, FailureKind::Deadlock);
    println!("leaked permit: executions to the bug per seed {found:?}");
}

#[test]
fn an_aborted_task_is_cancelled_and_a_finished_one_keeps_its_output() {
    let report = Builder::new()
        .ignore_environment()
        .executions(200)
        .explore(|| {
            future::block_on(async {
                let notify = Arc::new(Notify::new());
                let stuck = {
                    let notify = notify.clone();
                    future::spawn(async move { notify.notified().await })
                };
                stuck.abort();
                assert_eq!(stuck.await, Err(JoinError::Cancelled));
                let done = future::spawn(async { 7 });
                future::yield_now().await;
                let finished = done.is_finished();
                let value = done.await.unwrap();
                assert_eq!(value, 7);
                let _ = finished;
            })
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
}

/// `yield_now().await` in a spin loop is the thread's yield, so PCT lets the task it waits
/// for run instead of reporting a livelock.
#[test]
fn an_async_spin_loop_on_yield_now_is_not_a_livelock() {
    for seed in 0..5 {
        let report = Builder::new()
            .ignore_environment()
            .strategy("pct:d=3".parse().unwrap())
            .seed(seed)
            .executions(300)
            .explore(|| {
                future::block_on(async {
                    let flag = Arc::new(AtomicBool::new(false));
                    let setter = {
                        let flag = flag.clone();
                        future::spawn(async move { flag.store(true, Ordering::SeqCst) })
                    };
                    while !flag.load(Ordering::SeqCst) {
                        future::yield_now().await;
                    }
                    setter.await.unwrap();
                })
            })
            .unwrap();
        assert!(report.is_ok(), "seed {seed}: {report}");
    }
}
