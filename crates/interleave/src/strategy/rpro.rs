//! RPro, radius-aware probabilistic testing (Cai and Yang, *Radius-aware Probabilistic Testing
//! of Deadlocks with Guarantees*, seed 001, Algorithm 2).
//!
//! PCT draws all `d - 1` priority change points uniformly among the `k` events, so its
//! guarantee shrinks by a factor `k` for every unit of depth. The events of a real bug tend to
//! lie close together: the bug's *radius* is the largest distance between two of its events.
//! RPro draws the first change point `k_1` uniformly among the `k` events, as PCT does, and the
//! other `d - 2` within distance `r` of it (in `[k_1 - r, k_1 + r]` without `k_1`, clipped to
//! `1..=k`); priorities and scheduling are PCT's (one implementation, in `pct.rs`).
//!
//! Guarantee (seed 001, Theorem 1): a bug of depth `d >= 2` and radius at most `r` is found in
//! one execution with probability at least `1 / (n · k · (2r)^(d-2))` (with `2r` capped at
//! `k - 1`, the most candidates the window can hold), against PCT's
//! `1 / (n · k^(d-1))`. With `r >= k` the change points have exactly PCT's distribution (and,
//! for the same seed, are the same points).
//!
//! The deadlock optimisation is on by default (spec `locks=0` turns it off): only lock
//! acquisitions are events, so `k` counts acquisitions, releases do not count, and change
//! points fall right after acquisitions.

use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::priority::{draw_distinct, Estimates, DEFAULT_YIELD_LIMIT};
use super::{Events, Outcome, Schedule, Strategy};

/// The RPro strategy (spec `rpro:d=3,r=20`).
#[derive(Clone, Debug)]
pub struct RPro {
    depth: usize,
    radius: u64,
    yield_limit: u32,
    estimates: Estimates,
}

impl RPro {
    /// RPro for bugs of depth `depth` (at least 1) and radius at most `radius` (at least 1),
    /// counting only lock acquisitions as events.
    pub fn new(depth: usize, radius: u64) -> RPro {
        RPro {
            depth: depth.max(1),
            radius: radius.max(1),
            yield_limit: DEFAULT_YIELD_LIMIT,
            estimates: Estimates::new(Events::LockAcquisitions, None),
        }
    }

    /// Counts `events` (see [`Events`]); [`Events::All`] turns the deadlock optimisation off.
    pub fn with_events(mut self, events: Events) -> RPro {
        self.estimates.events = events;
        self
    }

    /// Uses `events` as `k` instead of estimating it from earlier executions.
    pub fn with_steps(mut self, events: u64) -> RPro {
        self.estimates.fixed_events = Some(events.max(1));
        self
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> RPro {
        self.yield_limit = yields.max(1);
        self
    }

    /// The guaranteed probability `1 / (n · k · w^(d-2))` of finding a bug of depth `d` and
    /// radius at most `r`, for the current estimates, where `w = min(2r, k - 1)` is the most
    /// candidates the window around `k_1` can hold (the paper's `2r`, which assumes `r <= k`):
    /// `1/n` for `d = 1`, PCT's `1/(n · k)` for `d = 2`.
    pub fn guarantee(&self) -> f64 {
        let n = self.estimates.n() as f64;
        let k = self.estimates.k();
        let window = (2 * self.radius).min(k.saturating_sub(1)).max(1) as f64;
        match self.depth {
            1 => 1.0 / n,
            d => 1.0 / (n * k as f64 * window.powi(d as i32 - 2)),
        }
    }

    /// The change points `k_1 .. k_{d-1}` (in priority order) and the generator they were
    /// drawn with, for the execution seeded `seed` (Algorithm 2, steps 2 and 3).
    fn change_points(&self, seed: u64) -> (Vec<u64>, Pcg64Mcg) {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut points = Vec::new();
        if self.estimates.known() && self.depth >= 2 {
            let k = self.estimates.k();
            draw_distinct(&mut rng, &mut points, 1, 1, k);
            let first = points[0];
            let lo = first.saturating_sub(self.radius).max(1);
            let hi = first.saturating_add(self.radius).min(k);
            draw_distinct(&mut rng, &mut points, self.depth - 2, lo, hi);
        }
        (points, rng)
    }
}

impl Strategy for RPro {
    fn spec(&self) -> String {
        format!(
            "rpro:d={},r={}{}",
            self.depth,
            self.radius,
            self.estimates
                .spec_suffix(Events::LockAcquisitions, self.yield_limit)
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
        let mut stats = self.estimates.stats(self.depth);
        stats.insert(1, ("radius r".to_string(), self.radius.to_string()));
        stats.push((
            "RPro guarantee 1/(n*k*min(2r,k-1)^(d-2)) per execution, bugs of radius <= r, if no thread yields, sleeps or times out"
                .to_string(),
            format!("{:.3e}", self.guarantee()),
        ));
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::super::Pct;
    use super::*;

    fn observed(k: u64, events: Events) -> Outcome<'static> {
        let (steps, lock_acquisitions) = match events {
            Events::All => (k, 0),
            Events::LockAcquisitions => (10 * k, k),
        };
        Outcome {
            steps,
            threads: 3,
            failed: false,
            abandoned: false,
            lock_acquisitions,
            trace: None,
            feedback: None,
            declarations: None,
            violations: 0,
            cut_short: false,
        }
    }

    #[test]
    fn change_points_lie_within_the_radius_of_the_first() {
        for (depth, radius, k) in [(3, 5, 1_000), (5, 20, 500), (4, 2, 10), (6, 1, 3)] {
            let mut rpro = RPro::new(depth, radius);
            rpro.observe(0, &observed(k, Events::LockAcquisitions));
            for seed in 0..2_000 {
                let (points, _) = rpro.change_points(seed);
                let first = points[0];
                let window = first.saturating_sub(radius).max(1)..=(first + radius).min(k);
                let available = window.count() - 1;
                assert_eq!(points.len(), 1 + (depth - 2).min(available));
                assert!((1..=k).contains(&first));
                for &p in &points[1..] {
                    assert!(p != first && p.abs_diff(first) <= radius && (1..=k).contains(&p));
                }
                let mut distinct = points.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), points.len(), "{points:?}");
            }
        }
    }

    #[test]
    fn with_a_radius_of_at_least_k_it_is_pct() {
        let k = 300;
        let mut rpro = RPro::new(4, k).with_events(Events::All);
        let mut pct = Pct::new(4);
        rpro.observe(0, &observed(k, Events::All));
        pct.observe(0, &observed(k, Events::All));
        for seed in 0..1_000 {
            assert_eq!(rpro.change_points(seed).0, pct.change_points(seed).0);
        }
        assert!(rpro.guarantee() >= pct.guarantee());
    }

    #[test]
    fn the_deadlock_optimisation_counts_lock_acquisitions() {
        let mut rpro = RPro::new(3, 20);
        rpro.observe(0, &observed(100, Events::LockAcquisitions));
        assert_eq!(rpro.estimates.k(), 100);
        let stats = rpro.stats();
        assert!(stats
            .iter()
            .any(|(key, v)| key.contains("lock acquisitions") && v == "100"));
        // n = 3, k = 100, r = 20: 1 / (3 * 100 * 40).
        assert!((rpro.guarantee() - 1.0 / 12_000.0).abs() < 1e-12);
        assert_eq!(rpro.spec(), "rpro:d=3,r=20");
        assert_eq!(
            rpro.with_events(Events::All).spec(),
            "rpro:d=3,r=20,locks=0"
        );
    }
}
