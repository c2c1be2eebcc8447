//! Branch events: the conditions whose outcome the schedule-sensitive-branch analysis
//! ([`crate::ssb`]) watches.
//!
//! Rust code cannot be executed symbolically the way TAME (seed 004) executes Java bytecode, so
//! the branches to check are the ones the program names: `interleave::branch!(condition)`
//! evaluates `condition`, records its site and outcome in the execution's trace, and returns
//! it, so it wraps the condition of an `if`, a `while` or an `assert!`. `Option` and `Result`
//! checks are wrapped the same way (`branch!(slot.is_some())`). A panic needs no annotation: the
//! analysis treats every panic as the outcome of an implicit branch at the panicking site.
//!
//! Recording is not a scheduling point, so annotating a program does not change its schedules.
//! Outside an execution (plain `cargo test`, or another runtime) `branch!` only evaluates the
//! condition.

use std::panic::Location;

use crate::runtime;

/// Records the outcome of a branch condition evaluated at the caller's site and returns it.
///
/// The function form of [`branch!`](crate::branch!), for code that prefers a call or wraps it
/// in its own `#[track_caller]` helper.
#[track_caller]
#[inline]
pub fn branch(condition: bool) -> bool {
    if runtime::in_execution() {
        let site = Location::caller();
        runtime::with(|ex| ex.record_branch(site, condition));
    }
    condition
}

/// Records the outcome of a branch condition and returns it: `if interleave::branch!(x > 0)`.
///
/// See [`branch()`](crate::branch()) and the [`ssb`](crate::ssb) module.
#[macro_export]
macro_rules! branch {
    ($condition:expr $(,)?) => {
        $crate::branch($condition)
    };
}
