//! `PortfolioRunner` runs its schedulers at once, one OS thread each, as shuttle does: they
//! can meet, the first failure stops the others (a spinning execution included, whose stack is
//! abandoned without running its destructors), the failure raised without early stop is the
//! earliest-added scheduler's whatever the timing, and a panic of one exploration stops the
//! others instead of leaving them to spin for ever.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool as StdAtomicBool, AtomicUsize as StdAtomicUsize};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use shuttle::rand::{thread_rng, Rng};
use shuttle::scheduler::{RandomScheduler, ReplayScheduler};
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::{Config, MaxSteps, PortfolioRunner, Runner};

/// How long a test waits for a portfolio before it fails as hung (a portfolio that runs its
/// schedulers one after the other never ends in the tests below that spin).
const HANG: Duration = Duration::from_secs(60);

/// Runs `run` on an OS thread of its own and returns the message it panicked with (`None` if
/// it returned), failing the test if it has not ended within [`HANG`].
fn panic_of(run: impl FnOnce() + Send + 'static) -> Option<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = catch_unwind(AssertUnwindSafe(run)).err().map(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|message| format!("&str: {message}"))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        });
        let _ = sender.send(outcome);
    });
    receiver
        .recv_timeout(HANG)
        .expect("the portfolio did not end")
}

/// shuttle's defaults without a step bound: a spinning execution ends only when stopped.
fn unbounded() -> Config {
    let mut config = Config::new();
    config.max_steps = MaxSteps::None;
    config
}

/// Waits up to `limit` for `done`; whether it came.
fn wait_for(done: impl Fn() -> bool, limit: Duration) -> bool {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Each scheduler's one execution waits for the other's to arrive: they meet only if they run
/// at the same time.
#[test]
fn the_schedulers_of_a_portfolio_run_at_once() {
    let arrived = std::sync::Arc::new(StdAtomicUsize::new(0));
    let mut portfolio = PortfolioRunner::new(false, Config::new());
    portfolio.add(RandomScheduler::new(1));
    portfolio.add(RandomScheduler::new(1));
    let message = panic_of(move || {
        portfolio.run(move || {
            arrived.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let met = wait_for(
                || arrived.load(std::sync::atomic::Ordering::SeqCst) >= 2,
                Duration::from_secs(10),
            );
            assert!(met, "the other scheduler's execution never arrived");
        })
    });
    assert_eq!(message, None);
}

/// Counts its drops after an atomic load, as shuttle's own portfolio test does.
struct CountsDrops(AtomicUsize, &'static StdAtomicUsize);

impl Drop for CountsDrops {
    fn drop(&mut self) {
        self.0.load(Ordering::SeqCst);
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The first execution to arrive spins for ever on a shuttle atomic; the second panics once
/// the first spins. The panic is raised with its own payload, and the spinning execution is
/// stopped without the destructor of the value on its stack running.
#[test]
fn the_first_failure_stops_the_other_schedulers() {
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    static SPINNING: StdAtomicBool = StdAtomicBool::new(false);
    let roles = std::sync::Arc::new(StdAtomicUsize::new(0));
    let mut portfolio = PortfolioRunner::new(true, unbounded());
    portfolio.add(RandomScheduler::new(1));
    portfolio.add(RandomScheduler::new(1));
    let message = panic_of(move || {
        portfolio.run(move || {
            if roles.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                let on_stack = CountsDrops(AtomicUsize::new(0), &DROPS);
                SPINNING.store(true, std::sync::atomic::Ordering::SeqCst);
                loop {
                    on_stack.0.load(Ordering::SeqCst);
                }
            }
            wait_for(
                || SPINNING.load(std::sync::atomic::Ordering::SeqCst),
                Duration::from_secs(10),
            );
            panic!("the second scheduler's failure");
        })
    });
    assert_eq!(
        message.as_deref(),
        Some("&str: the second scheduler's failure")
    );
    assert_eq!(DROPS.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// The first random value an execution of `RandomScheduler::new_from_seed(seed, 1)` draws,
/// learnt from the message of the panic that shows it.
fn first_value(seed: u64) -> String {
    let message = panic_of(move || {
        Runner::new(RandomScheduler::new_from_seed(seed, 1), Config::new()).run(|| {
            panic!("drew {}", thread_rng().gen::<u64>());
        });
    });
    message.expect("the run panics with the value it drew")
}

/// Without early stop, every scheduler runs to its end and the failure raised is the
/// earliest-added scheduler's, although it comes last in time: the two executions meet first,
/// then the earliest-added one fails after the other.
#[test]
fn without_early_stop_the_earliest_added_schedulers_failure_is_raised() {
    let (slow, fast) = (first_value(1), first_value(2));
    assert_ne!(slow, fast, "the two seeds draw different values");
    let mut portfolio = PortfolioRunner::new(false, Config::new());
    portfolio.add(RandomScheduler::new_from_seed(1, 1));
    portfolio.add(RandomScheduler::new_from_seed(2, 1));
    let slow_value = slow.clone();
    let arrived = std::sync::Arc::new(StdAtomicUsize::new(0));
    let message = panic_of(move || {
        portfolio.run(move || {
            let drawn = format!("drew {}", thread_rng().gen::<u64>());
            arrived.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let met = wait_for(
                || arrived.load(std::sync::atomic::Ordering::SeqCst) >= 2,
                Duration::from_secs(10),
            );
            assert!(met, "the other scheduler's execution never arrived");
            if drawn == slow_value {
                std::thread::sleep(Duration::from_millis(300));
            }
            panic!("{drawn}");
        })
    });
    assert_eq!(message, Some(slow));
}

/// A scheduler whose exploration panics itself (a replay token that is no token) stops the
/// scheduler spinning next to it, and its panic is raised.
#[test]
fn a_panicking_exploration_stops_the_others() {
    let mut portfolio = PortfolioRunner::new(false, unbounded());
    portfolio.add(RandomScheduler::new(1));
    portfolio.add(ReplayScheduler::new_from_encoded("not a token"));
    let message = panic_of(move || {
        portfolio.run(|| {
            let spins = AtomicUsize::new(0);
            loop {
                spins.load(Ordering::SeqCst);
            }
        })
    });
    let message = message.expect("the exploration's panic is raised");
    assert!(message.starts_with("interleave-shuttle:"), "{message}");
}
