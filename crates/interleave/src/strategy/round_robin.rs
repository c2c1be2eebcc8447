//! Round robin: at every scheduling point, run the next enabled thread after the one that took
//! the last step, in thread order, wrapping around.
//!
//! A deterministic smoke test rather than a search: one schedule that switches threads at
//! every step it can, which exposes in one execution the bugs that any switch between two
//! chosen steps exposes (a lock-order inversion, a missing lock around a read-modify-write).
//! It is what shuttle's `check` runs. Guarantee: none beyond its single schedule; every
//! execution takes the same thread order, and only the values a test draws (`interleave::rand`)
//! differ between executions, by seed.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Schedule, Strategy, View, ROUND_WITHOUT_LEARNING};

/// The round-robin strategy (spec `rr`).
#[derive(Clone, Debug, Default)]
pub struct RoundRobin;

impl Strategy for RoundRobin {
    fn spec(&self) -> String {
        "rr".to_string()
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(Box::new(RoundRobinSchedule {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }))
    }

    fn learns_from(&self, _execution: u64) -> bool {
        false
    }

    fn round_size(&self) -> usize {
        ROUND_WITHOUT_LEARNING
    }
}

struct RoundRobinSchedule {
    rng: Pcg64Mcg,
}

impl Schedule for RoundRobinSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let enabled = view.enabled();
        view.last_thread()
            .and_then(|last| enabled.iter().copied().find(|&t| t > last))
            .unwrap_or(enabled[0])
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }
}
