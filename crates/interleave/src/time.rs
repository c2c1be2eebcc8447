//! Virtual time, in tokio's shapes: [`Instant`], [`sleep`], [`sleep_until`], [`timeout`],
//! [`interval`].
//!
//! Every execution has its own clock. It starts at zero (an `Instant` of that moment still
//! lies decades after the first representable one, so that `Instant::now() - d` works as
//! under std) and no wall time ever counts. A sleep,
//! a timed wait or a timer may end at any scheduling point after it started: how long a thread
//! takes to reach its next step is not bounded, so from the other threads' point of view a
//! sleeper may wake "early" (before they did what it waited for) or late. When a thread's wait
//! ends by its deadline, the clock moves to that deadline if it is not past it already, so an
//! `Instant` read after a sleep of `d` is at least `d` later, and the clock never goes back.
//! The moves depend only on the schedule, so the same schedule always sees the same times, and
//! a replay reproduces them. A timed-out wait counts as a yield for the strategies' spin-loop
//! rules, like a sleep, so a loop that waits by timing out lets the others run.
//!
//! Blocking code uses the same clock: [`thread::sleep`](crate::thread::sleep),
//! [`park_timeout`](crate::thread::park_timeout),
//! [`Condvar::wait_timeout`](crate::sync::Condvar::wait_timeout) and
//! [`Receiver::recv_timeout`](crate::sync::mpsc::Receiver::recv_timeout) may each end by their
//! timeout at any point, or be notified or receive normally before.
//!
//! **What a timeout means here.** A timeout is a scheduling choice, as it is on a loaded
//! machine: a thread that waits 10 ms for a reply may time out even though the reply needs no
//! time, and a thread that sleeps 10 ms as a delay does not know that the others did their work
//! meanwhile. Programs that rely on a sleep to order threads are the bugs this finds.
//!
//! An async [`Sleep`] registers a timer with the waker of the task that polls it; the timer
//! ends that task's wait ([`future::block_on`](crate::future::block_on) and tasks park between
//! polls) at its deadline, and wakes the waker if it is not the task's own (a thread's due
//! timers wake in the order they were registered). A `Sleep` polled by code that blocks in
//! something other than `park` (a lock, say) fires at that thread's next park. Failure reports
//! show each move of the clock in the interleaving.
//!
//! ```
//! use interleave::future;
//! use interleave::time::{self, Duration, Instant};
//!
//! interleave::check(|| {
//!     future::block_on(async {
//!         let start = Instant::now();
//!         let slow = future::spawn(time::sleep(Duration::from_millis(10)));
//!         match time::timeout(Duration::from_millis(5), slow).await {
//!             // The timeout came first, at its deadline or later.
//!             Err(_) => assert!(start.elapsed() >= Duration::from_millis(5)),
//!             // The timeout was noticed late: the slow task's sleep of 10 ms (which may
//!             // have started late too) ended first.
//!             Ok(_) => assert!(start.elapsed() >= Duration::from_millis(10)),
//!         }
//!     })
//! });
//! ```

use std::fmt;
use std::future::{Future, IntoFuture};
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

pub use std::time::Duration;

use crate::runtime::{self, TimerKey};

/// A point in an execution's virtual time, as tokio's `Instant`. Instants of different
/// executions are not comparable in any useful way.
///
/// Inside, the time since [`CLOCK_ORIGIN`] before the execution started: std's clock counts
/// from the machine's start, so programs subtract durations from `Instant::now()` (a rate
/// limiter's last call "long ago"), which must not fall before the first instant.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

/// How long before an execution's start its instants count from: about 34 years, so that any
/// duration a program subtracts from `Instant::now()` in earnest leaves a representable
/// instant.
const CLOCK_ORIGIN: Duration = Duration::from_secs(1 << 30);

impl Instant {
    /// The current virtual time.
    ///
    /// # Panics
    /// Outside an execution.
    #[track_caller]
    pub fn now() -> Instant {
        Instant::at(runtime::with(|ex| ex.now))
    }

    /// The instant at `elapsed` of the execution's clock (the time since it started).
    fn at(elapsed: Duration) -> Instant {
        Instant(CLOCK_ORIGIN.saturating_add(elapsed))
    }

    /// This instant on the execution's clock: the time since the execution started, zero for
    /// an instant before it.
    fn on_clock(self) -> Duration {
        self.0.saturating_sub(CLOCK_ORIGIN)
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later (as tokio's).
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0)
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// The virtual time that has passed since `self`.
    #[track_caller]
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + duration`, or `None` if that is not representable.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_add(duration).map(Instant)
    }

    /// `self - duration`, or `None` if that is not representable.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_sub(duration).map(Instant)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.checked_sub(CLOCK_ORIGIN) {
            Some(elapsed) => write!(f, "Instant({elapsed:?} of virtual time)"),
            None => write!(
                f,
                "Instant({:?} before the execution started)",
                CLOCK_ORIGIN - self.0
            ),
        }
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result is not representable, as std's.
    fn add(self, duration: Duration) -> Instant {
        self.checked_add(duration)
            .expect("overflow when adding a duration to an instant")
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, duration: Duration) {
        *self = *self + duration;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result is not representable, as std's (more than about 34 years before the
    /// execution started).
    fn sub(self, duration: Duration) -> Instant {
        self.checked_sub(duration)
            .expect("overflow when subtracting a duration from an instant")
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, duration: Duration) {
        *self = *self - duration;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Waits until `duration` of virtual time has passed; the deadline is fixed when this is
/// called, as tokio's.
///
/// # Panics
/// Outside an execution.
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let deadline = runtime::with(|ex| ex.deadline_after(duration));
    sleep_until(Instant::at(deadline))
}

/// Waits until the virtual clock reaches `deadline` (at once if it has).
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        timer: None,
    }
}

/// The future of [`sleep`] and [`sleep_until`]. Polling it is no scheduling point: it reads
/// the clock and, while the deadline is ahead, registers a timer with the polling task's
/// waker; dropping it cancels the timer.
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    deadline: Instant,
    timer: Option<TimerKey>,
}

impl Sleep {
    /// When it completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the clock has reached its deadline.
    #[track_caller]
    pub fn is_elapsed(&self) -> bool {
        runtime::with(|ex| ex.now >= self.deadline.on_clock())
    }

    /// Moves its deadline to `deadline`, as tokio's; a registered timer keeps waking the same
    /// task, at the new deadline.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.get_mut();
        this.deadline = deadline;
        if let Some(timer) = this.timer {
            runtime::with(|ex| ex.reset_timer(timer, deadline.on_clock()));
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let deadline = this.deadline.on_clock();
        let (ready, released) = runtime::with(|ex| {
            if ex.now >= deadline {
                let released = this.timer.take().and_then(|timer| ex.cancel_timer(timer));
                (true, released)
            } else {
                let (timer, replaced) = ex.set_timer(this.timer, deadline, context.waker());
                this.timer = Some(timer);
                (false, replaced)
            }
        });
        // A waker's drop can run arbitrary code, so it happens outside the runtime.
        drop(released);
        if ready {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        let Some(timer) = self.timer.take() else {
            return;
        };
        // A `Sleep` kept past its execution has no timer left to cancel.
        if runtime::in_execution() {
            let released: Option<Waker> = runtime::with(|ex| ex.cancel_timer(timer));
            drop(released);
        }
    }
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// The error of [`timeout`]: the deadline came first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

/// Runs `future` for at most `duration` of virtual time: its output, or [`Elapsed`] if the
/// clock reaches the deadline first. As tokio's, the future is polled before the deadline is
/// checked, so an output ready at the deadline wins. (For a race whose winner is explored, use
/// [`future::select`](crate::future::select).)
///
/// # Panics
/// Outside an execution.
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        future: future.into_future(),
        sleep: sleep(duration),
    }
}

/// Like [`timeout`], with the deadline as an instant.
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        future: future.into_future(),
        sleep: sleep_until(deadline),
    }
}

/// The future of [`timeout`] and [`timeout_at`].
#[must_use = "futures do nothing unless polled"]
pub struct Timeout<F> {
    future: F,
    sleep: Sleep,
}

impl<F> Timeout<F> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// The wrapped future, consuming the timeout.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is pinned structurally: it is never moved out of a pinned
        // `Timeout` (`into_inner` takes the `Timeout` by value, which needs it unpinned or
        // `Unpin`), and `Timeout` has no `Drop` that could move it. `sleep` is `Unpin`.
        let this = unsafe { self.get_unchecked_mut() };
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        if let Poll::Ready(output) = future.poll(context) {
            return Poll::Ready(Ok(output));
        }
        match Pin::new(&mut this.sleep).poll(context) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<F> fmt::Debug for Timeout<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("deadline", &self.sleep.deadline)
            .finish_non_exhaustive()
    }
}

/// Ticks every `period` of virtual time, the first tick at once, as tokio's `interval`.
///
/// # Panics
/// If `period` is zero (as tokio's), or outside an execution.
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period` of virtual time, the first tick at `start`.
///
/// # Panics
/// If `period` is zero, as tokio's.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        period > Duration::ZERO,
        "interleave::time::interval: the period must be non-zero"
    );
    Interval {
        period,
        sleep: sleep_until(start),
    }
}

/// The ticker of [`interval`]. Missed ticks are made up at once, one per `tick`, and the
/// schedule keeps its phase (tokio's default, `MissedTickBehavior::Burst`).
#[derive(Debug)]
pub struct Interval {
    period: Duration,
    sleep: Sleep,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was due.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|context| self.poll_tick(context)).await
    }

    /// Polls for the next tick: the instant it was due, once the clock has reached it.
    pub fn poll_tick(&mut self, context: &mut Context<'_>) -> Poll<Instant> {
        match Pin::new(&mut self.sleep).poll(context) {
            Poll::Ready(()) => {
                let due = self.sleep.deadline;
                let next = due
                    .checked_add(self.period)
                    .unwrap_or(Instant(Duration::MAX));
                Pin::new(&mut self.sleep).reset(next);
                Poll::Ready(due)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Starts the ticks afresh: the next one is a period from now.
    pub fn reset(&mut self) {
        let next = Instant::now()
            .checked_add(self.period)
            .unwrap_or(Instant(Duration::MAX));
        Pin::new(&mut self.sleep).reset(next);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
