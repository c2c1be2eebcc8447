//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS
//! 2010), as stated in Algorithm 1 of seed 001 (Cai and Yang, *Radius-aware Probabilistic
//! Testing of Deadlocks with Guarantees*).
//!
//! Each execution gives the `n` threads distinct random initial priorities above `d`, picks
//! `d - 1` distinct change points `k_1 .. k_{d-1}` uniformly among the `k` steps, always runs
//! the enabled thread of highest priority, and when the step counted as `k_i` has executed,
//! lowers the priority of the thread that executed it to `i`.
//!
//! Guarantee: a bug of depth `d` is found in one execution with probability at least
//! `1 / (n · k^(d-1))`. `n` and `k` are estimated as the largest thread count and step count
//! observed in earlier executions (observed in planning rounds, so the estimate, and hence the
//! schedules, do not depend on the number of workers). Which of `w` `Condvar` waiters takes a
//! `notify_one` is drawn, not ranked (`priority.rs`): a bug that also needs a given waiter
//! woken is found with probability `1 / w` times lower per such notification.
//!
//! Events: by default every step is an event. With [`Events::LockAcquisitions`] (seed 001's
//! deadlock optimisation, spec `locks=1`) only lock acquisitions count: `k` is the number of
//! acquisitions and change points fall right after acquisitions, since only an acquisition can
//! close a deadlock cycle.
//!
//! The machinery PCT shares with RPro, PCTVB and thread bounding (the estimates of `n` and
//! `k`, the drawing of distinct change points, the per-execution priority schedule and the
//! yield rule) is in `priority.rs`; PCT and RPro differ only in how they pick change points.
//!
//! Spin loops: PCT starves every thread but the highest enabled one, so a thread that spins
//! waiting for a lower-priority thread would run until the step bound. Following seed 000
//! section 5, a thread that yields `yield_limit` times drops below every other priority, and
//! again after each further `yield_limit` yields. The default limit is 1, as in shuttle's PCT:
//! a yield says the thread cannot make progress until another thread does, so it loses its
//! priority at once. With the old default of 100, a correct two-thread spin-wait took about
//! 200 steps whenever the spinner outranked the thread it waited for, and three threads could
//! exceed a step bound of a few hundred; with 1 it takes a handful. A demotion acts like an
//! extra change point, so the guarantee above is stated for programs that do not yield (which
//! are unaffected). On the bench suite (1,000 executions, 10 seeds), the one program that
//! yields, `async-check-then-act`, went from about 25% of executions exposing its bug to 100%
//! under `pct:d=3` (5% to 100% under `tb`), and no other program's numbers changed. A sleep
//! counts as a yield only after the thread did something else since its last yield: a run of
//! sleeps waits for no one, and demoting it put the paper's own figure 5 (a depth-1 bug behind
//! twenty sleeps) out of reach (see `Priorities`).

use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::priority::{draw_distinct, Estimates, Events, DEFAULT_YIELD_LIMIT};
use super::{Outcome, Schedule, Strategy};

/// The PCT strategy (spec `pct:d=3`).
#[derive(Clone, Debug)]
pub struct Pct {
    depth: usize,
    yield_limit: u32,
    estimates: Estimates,
}

impl Pct {
    /// PCT for bugs of depth `depth` (at least 1).
    pub fn new(depth: usize) -> Pct {
        Pct {
            depth: depth.max(1),
            yield_limit: DEFAULT_YIELD_LIMIT,
            estimates: Estimates::new(Events::All, None),
        }
    }

    /// Uses `steps` as `k` instead of estimating it from earlier executions.
    pub fn with_steps(mut self, steps: u64) -> Pct {
        self.estimates.fixed_events = Some(steps.max(1));
        self
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> Pct {
        self.yield_limit = yields.max(1);
        self
    }

    /// Counts only `events` (see [`Events`]).
    pub fn with_events(mut self, events: Events) -> Pct {
        self.estimates.events = events;
        self
    }

    /// The current estimate of `k`, the number of events of an execution.
    pub fn estimated_steps(&self) -> u64 {
        self.estimates.k()
    }

    /// The guaranteed probability `1 / (n · k^(d-1))` for the current estimates.
    pub fn guarantee(&self) -> f64 {
        self.estimates.pct_guarantee(self.depth)
    }

    /// The change points `k_1 .. k_{d-1}` (in priority order) and the generator PCT draws them
    /// with for the execution seeded `seed`.
    pub(super) fn change_points(&self, seed: u64) -> (Vec<u64>, Pcg64Mcg) {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut points = Vec::new();
        if self.estimates.known() {
            draw_distinct(&mut rng, &mut points, self.depth - 1, 1, self.estimates.k());
        }
        (points, rng)
    }
}

impl Strategy for Pct {
    fn spec(&self) -> String {
        format!(
            "pct:d={}{}",
            self.depth,
            self.estimates.spec_suffix(Events::All, self.yield_limit)
        )
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(
            self.estimates
                .schedule(self.change_points(seed), self.yield_limit),
        )
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.estimates.observe(outcome);
    }

    fn stats(&self) -> Vec<(String, String)> {
        self.estimates.stats(self.depth)
    }
}
