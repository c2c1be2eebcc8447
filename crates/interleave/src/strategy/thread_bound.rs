//! Thread bounding (Bindal, Bansal, Lal: *Variable and Thread Bounding for Systematic Testing
//! of Multithreaded Programs*, seed 000, section 4), as a randomized strategy (spec
//! `tb:t=2,c=1`).
//!
//! Most bugs need ordering constraints among only `t` threads. At preemption bound `c`, a
//! preempted thread counts as two thread *fragments*, so an execution is a priority order of the
//! `n + c` fragments. Each execution draws a random permutation `P_1 .. P_{n+c}`: thread `j`
//! runs with priority `P_j` (strict priority scheduling), and at its `i`-th preemption (the
//! `i`-th of `c` change points, drawn uniformly among the `k` steps as in PCT) the running
//! thread takes priority `P_{n+i}`. Unlike PCT, a preempted thread does not go below everyone:
//! it lands at a random rank.
//!
//! Guarantee (Lemma 4.1, applied to the `n + c` fragments): after
//! `(t+c+1)! · (ln((n+c)·(t+c)) + ln(1/ε))` executions, every order of every `t + c` fragments
//! has occurred with probability at least `1 - ε`; the report gives that number for ε = 1%, the
//! current estimate of `n`, and how many executions were run.

use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::priority::{
    draw_distinct, ChangePriorities, Counting, Estimates, PrioritySchedule, DEFAULT_YIELD_LIMIT,
};
use super::{Events, Outcome, Schedule, Strategy};

/// The failure probability the coverage statements of the reports use.
pub(super) const EPSILON: f64 = 0.01;

/// Lemma 4.1: `(t+1)! · (ln(n·t) + ln(1/epsilon))` random permutations of `n` items show every
/// order of every `t` of them with probability at least `1 - epsilon` (at least 1).
pub(super) fn lemma_4_1(n: usize, t: usize, epsilon: f64) -> u64 {
    let factorial: f64 = (1..=t + 1).map(|i| i as f64).product();
    let needed = factorial * (((n * t) as f64).ln() + (1.0 / epsilon).ln());
    needed.ceil().max(1.0) as u64
}

/// The thread-bounding strategy (spec `tb:t=2,c=1`).
#[derive(Clone, Debug)]
pub struct ThreadBound {
    threads: usize,
    preemptions: usize,
    yield_limit: u32,
    estimates: Estimates,
    planned: u64,
}

impl ThreadBound {
    /// Thread bounding for bugs among `threads` (at least 2) threads needing `preemptions`
    /// preemptions.
    pub fn new(threads: usize, preemptions: usize) -> ThreadBound {
        ThreadBound {
            threads: threads.max(2),
            preemptions,
            yield_limit: DEFAULT_YIELD_LIMIT,
            estimates: Estimates::new(Events::All, None),
            planned: 0,
        }
    }

    /// Sets the number of yields after which a thread loses its priority.
    pub fn with_yield_limit(mut self, yields: u32) -> ThreadBound {
        self.yield_limit = yields.max(1);
        self
    }

    /// Lemma 4.1's number of executions after which every order of every `t + c` of the
    /// `n + c` fragments has occurred with probability at least `1 - epsilon`.
    pub fn executions_for_coverage(&self, epsilon: f64) -> u64 {
        lemma_4_1(
            self.estimates.n() + self.preemptions,
            self.threads + self.preemptions,
            epsilon,
        )
    }
}

impl Strategy for ThreadBound {
    fn spec(&self) -> String {
        let mut spec = format!("tb:t={},c={}", self.threads, self.preemptions);
        if self.yield_limit != DEFAULT_YIELD_LIMIT {
            spec.push_str(&format!(",yields={}", self.yield_limit));
        }
        spec
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        self.planned += 1;
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut points = Vec::new();
        if self.estimates.known() {
            draw_distinct(
                &mut rng,
                &mut points,
                self.preemptions,
                1,
                self.estimates.k(),
            );
        }
        // Random keys in the range of the initial priorities: together with the threads' own
        // keys they are a uniformly random permutation of the n + c fragments.
        let priorities = (0..points.len())
            .map(|_| PrioritySchedule::random_priority(&mut rng))
            .collect();
        Some(Box::new(PrioritySchedule::new(
            rng,
            points,
            ChangePriorities::Given(priorities),
            self.yield_limit,
            Counting::Global(Events::All),
        )))
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        self.estimates.observe(outcome);
    }

    fn stats(&self) -> Vec<(String, String)> {
        let needed = self.executions_for_coverage(EPSILON);
        vec![
            ("threads t".to_string(), self.threads.to_string()),
            ("preemptions c".to_string(), self.preemptions.to_string()),
            ("threads n (max observed)".to_string(), self.estimates.n().to_string()),
            ("steps k (max observed)".to_string(), self.estimates.k().to_string()),
            (
                "executions for all orders of every t+c of the n+c fragments with probability 99% (Lemma 4.1)"
                    .to_string(),
                needed.to_string(),
            ),
            (
                "executions run".to_string(),
                format!(
                    "{}{}",
                    self.planned,
                    if self.planned >= needed {
                        " (coverage reached)"
                    } else {
                        " (coverage not reached)"
                    }
                ),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lemma_4_1_counts_grow_with_t_and_c_and_logarithmically_with_n() {
        let mut tb = ThreadBound::new(2, 0);
        let outcome = |threads| Outcome {
            steps: 100,
            threads,
            failed: false,
            abandoned: false,
            lock_acquisitions: 0,
            trace: None,
            feedback: None,
            declarations: None,
            violations: 0,
            cut_short: false,
        };
        tb.observe(0, &outcome(4));
        // t + c = 2, n + c = 4: 3! * (ln 8 + ln 100) = 6 * 6.685 = 40.1.
        assert_eq!(tb.executions_for_coverage(0.01), 41);
        let mut three = ThreadBound::new(3, 0);
        three.observe(0, &outcome(4));
        assert!(three.executions_for_coverage(0.01) > 4 * tb.executions_for_coverage(0.01));
        let mut many = ThreadBound::new(2, 0);
        many.observe(0, &outcome(400));
        assert!(many.executions_for_coverage(0.01) < 2 * tb.executions_for_coverage(0.01));
    }
}
