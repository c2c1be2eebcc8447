//! `auto`, the default strategy: a portfolio that interleaves the strongest samplers.
//!
//! No single sampler is best everywhere. Measured on the benchmark suite (64 programs, 10 seeds of
//! 10,000 executions), SURW (Zhao, Wolff, Mathur, Roychoudhury, ASPLOS 2025) needs the fewest
//! executions overall (a geometric mean of 3.8 over the programs' medians, POS 6.3) but is weak
//! where its estimated event counts mislead it (merge-sort: a median of 132 against POS's 16);
//! POS (Yuan, Yang, Gu, CAV 2018) is weak where SURW is strong (the MySQL-like deadlock: 252
//! against 2.5); PCT (Burckhardt et al., ASPLOS 2010) at depth 3 wins where a bug needs a few
//! priority changes among long runs of independent steps. The portfolio runs its members in a
//! fixed cycle of execution slots ([`CYCLE`]):
//! execution `i` belongs to the member of slot `i % CYCLE.len()`, which plans it as its own next
//! execution, with the execution's seed, and observes its outcome, so each member runs as if it
//! were alone, on a share of the executions.
//!
//! Determinism: which member runs an execution depends only on the index, and each member plans
//! from what it observed, in its own index order. The portfolio's rounds are at most as large as
//! every member allows ([`Strategy::round_size`] scaled by the member's share of the cycle), so
//! no member plans further ahead of its observations than it would alone, and the schedules do
//! not depend on the number of workers.
//!
//! Guarantee: the union of the members'; in particular the random walk's, so every schedule of
//! `k` steps with `n` threads has probability at least `1/(6·n^k)` per execution. With `m` of
//! the cycle's slots, a member's per-execution
//! guarantee (for example PCT's `1/(n·k^(d-1))` for a bug of depth `d`) holds for `m` of every
//! `CYCLE.len()` executions. A failure names the member that found it.

use super::{Outcome, Schedule, Strategy, StrategySpec, LEARNING_ROUND};

/// The cycle of execution slots, each naming the member (an index into [`members`]) that runs
/// it. SURW, the strongest alone, runs every other execution; POS, strong where SURW is weak,
/// PCT at depth 3 and the random walk one in six each. The random walk is there for coverage:
/// the other members hold a thread that sleeps or yields back until the others have taken a
/// step, so none of them lets a sleeper's send beat a receiver's later timeout (the receiver's
/// only step is timing out); a walk has no such rule, so every schedule keeps a positive
/// probability in one execution of six.
const CYCLE: [usize; 6] = [0, 1, 0, 2, 0, 3];

/// The members' specs, in the order [`CYCLE`] names them.
fn members() -> [StrategySpec; 4] {
    [
        StrategySpec::surw(),
        StrategySpec::Pos,
        StrategySpec::pct(3),
        StrategySpec::Random,
    ]
}

/// One strategy of the portfolio and its share of the cycle.
struct Member {
    strategy: Box<dyn Strategy>,
    /// The cycle's slots that belong to it, in order.
    slots: Vec<usize>,
    /// Executions it found a failure in.
    failures: u64,
    /// Executions it ran.
    executions: u64,
}

/// The portfolio (spec `auto`).
pub struct Auto {
    members: Vec<Member>,
}

impl Default for Auto {
    fn default() -> Self {
        Auto::new()
    }
}

impl std::fmt::Debug for Auto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.members.iter().map(|member| member.strategy.spec()))
            .finish()
    }
}

impl Auto {
    /// The portfolio with its fixed members.
    pub fn new() -> Auto {
        let members = members()
            .iter()
            .enumerate()
            .map(|(index, spec)| Member {
                strategy: spec.build(),
                slots: (0..CYCLE.len())
                    .filter(|&slot| CYCLE[slot] == index)
                    .collect(),
                failures: 0,
                executions: 0,
            })
            .collect();
        Auto { members }
    }

    /// The member that runs portfolio execution `execution`, and that execution's index among
    /// the member's own.
    fn route(&self, execution: u64) -> (usize, u64) {
        let cycle = CYCLE.len() as u64;
        let slot = (execution % cycle) as usize;
        let member = CYCLE[slot];
        let slots = &self.members[member].slots;
        let rank = slots.iter().position(|&s| s == slot).unwrap_or(0) as u64;
        (member, execution / cycle * slots.len() as u64 + rank)
    }

    /// The spec of the member that ran portfolio execution `execution`.
    pub fn member_of(&self, execution: u64) -> String {
        self.members[self.route(execution).0].strategy.spec()
    }
}

impl Strategy for Auto {
    fn spec(&self) -> String {
        "auto".to_string()
    }

    fn plan(&mut self, execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let (member, local) = self.route(execution);
        self.members[member].strategy.plan(local, seed)
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let (member, local) = self.route(execution);
        let member = &mut self.members[member];
        member.executions += 1;
        member.failures += u64::from(outcome.failed);
        member.strategy.observe(local, outcome);
    }

    fn learns_from(&self, execution: u64) -> bool {
        let (member, local) = self.route(execution);
        self.members[member].strategy.learns_from(local)
    }

    fn wants_trace(&self, execution: u64) -> bool {
        let (member, local) = self.route(execution);
        self.members[member].strategy.wants_trace(local)
    }

    fn round_size(&self) -> usize {
        // A round of `r` cycles gives each member at most `r` times its slot count; every
        // member must allow that many plans ahead of its observations. The portfolio learns
        // (its SURW and PCT do) and so learns at least as often as a learning strategy alone.
        let cycles = self
            .members
            .iter()
            .map(|member| member.strategy.round_size().max(1) / member.slots.len())
            .min()
            .unwrap_or(1)
            .max(1);
        (cycles * CYCLE.len()).min(LEARNING_ROUND)
    }

    fn member(&self, execution: u64) -> Option<String> {
        Some(self.member_of(execution))
    }

    fn warnings(&self) -> Vec<String> {
        self.members
            .iter()
            .flat_map(|member| member.strategy.warnings())
            .collect()
    }

    fn stats(&self) -> Vec<(String, String)> {
        let mut stats = Vec::new();
        for member in &self.members {
            let spec = member.strategy.spec();
            stats.push((
                format!("{spec}: executions"),
                format!("{} ({} failed)", member.executions, member.failures),
            ));
            for (name, value) in member.strategy.stats() {
                stats.push((format!("{spec}: {name}"), value));
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_routes_to_its_member_in_the_members_own_order() {
        let auto = Auto::new();
        let mut next = vec![0u64; auto.members.len()];
        for execution in 0..10 * CYCLE.len() as u64 {
            let (member, local) = auto.route(execution);
            assert_eq!(member, CYCLE[execution as usize % CYCLE.len()]);
            assert_eq!(local, next[member], "execution {execution}");
            next[member] += 1;
        }
        assert!(
            auto.members.iter().all(|member| !member.slots.is_empty()),
            "every member has a slot"
        );
    }
}
