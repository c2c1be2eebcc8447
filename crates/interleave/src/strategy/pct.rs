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
//! schedules, do not depend on the number of workers).
//!
//! Spin loops: PCT starves every thread but the highest enabled one, so a thread that spins
//! waiting for a lower-priority thread would run until the step bound. Following seed 000
//! section 5, a thread that yields `yield_limit` times (default 100) drops below every other
//! priority, and again after each further `yield_limit` yields.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, Outcome, Schedule, Strategy, View};

/// The number of yields after which a thread loses its priority (seed 000, section 5).
pub const DEFAULT_YIELD_LIMIT: u32 = 100;

/// The PCT strategy (spec `pct:d=3`).
#[derive(Clone, Debug)]
pub struct Pct {
    depth: usize,
    yield_limit: u32,
    fixed_steps: Option<u64>,
    max_steps_seen: u64,
    max_threads_seen: usize,
}

impl Pct {
    /// PCT for bugs of depth `depth` (at least 1).
    pub fn new(depth: usize) -> Pct {
        Pct {
            depth: depth.max(1),
            yield_limit: DEFAULT_YIELD_LIMIT,
            fixed_steps: None,
            max_steps_seen: 0,
            max_threads_seen: 0,
        }
    }

    /// Uses `steps` as `k` instead of estimating it from earlier executions.
    pub fn with_steps(mut self, steps: u64) -> Pct {
        self.fixed_steps = Some(steps.max(1));
        self
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> Pct {
        self.yield_limit = yields.max(1);
        self
    }

    /// The current estimate of `k`, the number of steps of an execution.
    pub fn estimated_steps(&self) -> u64 {
        self.fixed_steps.unwrap_or(self.max_steps_seen).max(1)
    }

    /// The guaranteed probability `1 / (n · k^(d-1))` for the current estimates.
    pub fn guarantee(&self) -> f64 {
        let n = self.max_threads_seen.max(1) as f64;
        let k = self.estimated_steps() as f64;
        1.0 / (n * k.powi(self.depth as i32 - 1))
    }
}

impl Strategy for Pct {
    fn spec(&self) -> String {
        let mut spec = format!("pct:d={}", self.depth);
        if let Some(k) = self.fixed_steps {
            spec.push_str(&format!(",k={k}"));
        }
        if self.yield_limit != DEFAULT_YIELD_LIMIT {
            spec.push_str(&format!(",yields={}", self.yield_limit));
        }
        spec
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let k = self.estimated_steps();
        // Before any execution has been observed, `k` is unknown: run without change points
        // (a depth-1 sample) rather than putting every change point on the first step.
        let known = self.fixed_steps.is_some() || self.max_steps_seen > 0;
        let points = if known {
            (self.depth - 1).min(k as usize)
        } else {
            0
        };
        let mut change_points: Vec<u64> = Vec::with_capacity(points);
        while change_points.len() < points {
            let point = 1 + below(rng.next_u64(), k as usize) as u64;
            if !change_points.contains(&point) {
                change_points.push(point);
            }
        }
        let next_change = change_points.iter().copied().min().unwrap_or(u64::MAX);
        Some(Box::new(PctSchedule {
            rng,
            priorities: Vec::new(),
            change_points,
            next_change,
            yield_limit: self.yield_limit,
            demoted_at_yields: Vec::new(),
            lowest: 0,
        }))
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.max_steps_seen = self.max_steps_seen.max(outcome.steps);
        self.max_threads_seen = self.max_threads_seen.max(outcome.threads);
    }

    fn stats(&self) -> Vec<(String, String)> {
        vec![
            ("depth d".to_string(), self.depth.to_string()),
            (
                "threads n (max observed)".to_string(),
                self.max_threads_seen.to_string(),
            ),
            (
                "steps k (max observed)".to_string(),
                self.estimated_steps().to_string(),
            ),
            (
                "guarantee 1/(n*k^(d-1)) per execution".to_string(),
                format!("{:.3e}", self.guarantee()),
            ),
        ]
    }
}

struct PctSchedule {
    rng: Pcg64Mcg,
    /// Priority of each thread; larger runs first. Initial priorities are above `2^32`, change
    /// point `i` sets priority `i`, yield demotions go below zero.
    priorities: Vec<i64>,
    /// `change_points[i - 1] = k_i`, in the order drawn.
    change_points: Vec<u64>,
    /// The earliest change point not yet reached, so most steps test one number.
    next_change: u64,
    yield_limit: u32,
    demoted_at_yields: Vec<u32>,
    lowest: i64,
}

impl Schedule for PctSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        while self.priorities.len() < view.thread_count() {
            // Independent uniform keys give a uniformly random order of the initial priorities.
            self.priorities
                .push((1i64 << 32) + (self.rng.next_u32() as i64));
            self.demoted_at_yields.push(0);
        }
        if let Some(last) = view.last_thread() {
            let step = view.step();
            if step == self.next_change {
                if let Some(i) = self.change_points.iter().position(|&k| k == step) {
                    self.priorities[last] = i as i64 + 1;
                }
                self.next_change = self
                    .change_points
                    .iter()
                    .copied()
                    .filter(|&k| k > step)
                    .min()
                    .unwrap_or(u64::MAX);
            }
            let yields = view.yields(last);
            if yields >= self.demoted_at_yields[last] + self.yield_limit {
                self.demoted_at_yields[last] = yields;
                self.lowest -= 1;
                self.priorities[last] = self.lowest;
            }
        }
        let priorities = &self.priorities[..view.thread_count()];
        let mut best = view.enabled()[0];
        let mut best_priority = priorities[best];
        for &t in &view.enabled()[1..] {
            if priorities[t] > best_priority {
                best = t;
                best_priority = priorities[t];
            }
        }
        best
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }
}
