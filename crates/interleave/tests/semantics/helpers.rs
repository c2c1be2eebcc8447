//! Exploring a test body under several strategies, shared by the primitive and time tests.

#[path = "../common/first_exploration.rs"]
mod first_exploration;
pub use first_exploration::first_exploration;

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave::Builder;

/// Explores `f` `executions` times under random and PCT schedules and fails the test on any
/// failure.
pub fn all_schedules(executions: u64, f: impl Fn() + Sync) {
    for spec in ["random", "pct:d=2", "pct:d=3"] {
        let report = Builder::new()
            .ignore_environment()
            .strategy(spec.parse().unwrap())
            .executions(executions)
            .explore(&f)
            .unwrap();
        if let Some(failure) = report.first_failure() {
            panic!("{spec}: {failure}");
        }
    }
}

/// The set of values `f` returned over 300 random schedules, none of which may fail.
pub fn outcomes<T: Ord + Send>(f: impl Fn() -> T + Sync) -> BTreeSet<T> {
    let seen = StdMutex::new(BTreeSet::new());
    let report = Builder::new()
        .ignore_environment()
        .executions(300)
        .explore(|| {
            let value = f();
            seen.lock().unwrap().insert(value);
        })
        .unwrap();
    assert!(report.is_ok(), "{report}");
    seen.into_inner().unwrap()
}

/// A builder that ignores the environment (so `INTERLEAVE_*` variables set for a whole test
/// run cannot change what a test asserts) and runs the strategy `spec`.
pub fn builder(spec: &str) -> interleave::Builder {
    interleave::Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a valid strategy spec"))
}
