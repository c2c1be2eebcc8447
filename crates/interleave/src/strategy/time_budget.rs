//! A time budget around any strategy: once the budget has passed since the first execution was
//! planned, no further execution is planned, and the exploration ends as if the strategy had
//! nothing more to try. loom's `max_duration` and shuttle's `max_time` map onto it.

use std::time::{Duration, Instant};

use super::{Outcome, Schedule, Strategy};

/// Runs `inner` until it is done or `budget` has passed, whichever comes first.
pub struct TimeBudget {
    inner: Box<dyn Strategy>,
    budget: Duration,
    started: Option<Instant>,
}

impl TimeBudget {
    /// `inner`, limited to `budget` of wall time from its first plan.
    pub fn new(inner: Box<dyn Strategy>, budget: Duration) -> TimeBudget {
        TimeBudget {
            inner,
            budget,
            started: None,
        }
    }
}

impl Strategy for TimeBudget {
    fn spec(&self) -> String {
        self.inner.spec()
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let started = *self.started.get_or_insert_with(Instant::now);
        if started.elapsed() >= self.budget {
            return None;
        }
        self.inner.plan(execution, seed)
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        self.inner.observe(execution, outcome);
    }

    fn wants_trace(&self, execution: u64) -> bool {
        self.inner.wants_trace(execution)
    }

    fn warnings(&self) -> Vec<String> {
        self.inner.warnings()
    }

    fn round_size(&self) -> usize {
        self.inner.round_size()
    }

    fn stats(&self) -> Vec<(String, String)> {
        let mut stats = self.inner.stats();
        stats.push(("time budget".into(), format!("{:?}", self.budget)));
        stats
    }

    fn searches_exhaustively(&self) -> bool {
        self.inner.searches_exhaustively()
    }

    fn monitors_atomic_sets(&self) -> bool {
        self.inner.monitors_atomic_sets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::StrategySpec;

    #[test]
    fn a_spent_budget_plans_nothing() {
        let mut strategy = TimeBudget::new(StrategySpec::Random.build(), Duration::ZERO);
        assert!(strategy.plan(0, 0).is_none());
    }

    #[test]
    fn a_budget_left_plans_what_the_inner_strategy_plans() {
        let mut strategy = TimeBudget::new(StrategySpec::Random.build(), Duration::from_secs(60));
        assert!(strategy.plan(0, 0).is_some());
    }
}
