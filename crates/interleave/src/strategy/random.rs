//! Random walk: at every step, run a thread chosen uniformly among the enabled ones.
//!
//! The baseline every seed compares against. Guarantee: every schedule of an execution with at
//! most `k` steps and `n` threads has probability at least `1/n^k`; in practice it finds bugs
//! that need few, widely spread context switches.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, Schedule, Strategy, View, ROUND_WITHOUT_LEARNING};

/// The random-walk strategy (spec `random`).
#[derive(Clone, Debug, Default)]
pub struct Random;

impl Strategy for Random {
    fn spec(&self) -> String {
        "random".to_string()
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(Box::new(RandomSchedule {
            rng: Pcg64Mcg::seed_from_u64(seed),
        }))
    }

    fn learns_from(&self, _execution: u64) -> bool {
        // Each walk depends on its own seed only.
        false
    }

    fn round_size(&self) -> usize {
        ROUND_WITHOUT_LEARNING
    }
}

struct RandomSchedule {
    rng: Pcg64Mcg,
}

impl Schedule for RandomSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let enabled = view.enabled();
        enabled[below(self.rng.next_u64(), enabled.len())]
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    /// Each choice is an entry of the enabled list.
    fn chooses_enabled(&self) -> bool {
        true
    }
}
