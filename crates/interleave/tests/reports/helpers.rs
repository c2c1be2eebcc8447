//! What the report tests share.

#[path = "../common/first_exploration.rs"]
mod first_exploration;
pub use first_exploration::first_exploration;

/// A builder that ignores the environment (so `INTERLEAVE_*` variables set for a whole test
/// run cannot change what a test asserts) and runs the strategy `spec`.
pub fn builder(spec: &str) -> interleave::Builder {
    interleave::Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a valid strategy spec"))
}
