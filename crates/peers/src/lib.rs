//! interleave's peer comparison: everything that runs shuttle or loom lives in this crate, so
//! the library itself never depends on them.
//!
//! - [`throughput`]: executions per second of the same three workloads under interleave (six
//!   strategies, each with 1 and 2 workers), shuttle and loom (`cargo bench -p interleave-peers`).
//! - [`exhaustion`]: executions to exhaust the same loom-style programs under interleave's
//!   `dpor` and loom's model checker, printed by the same bench.
//! - [`split_search`]: executions per second of `dfs` on the same programs with 1 and 2
//!   workers, which split its tree (`--split-only`).
//! - [`async_switch`]: time per async task switch of interleave's `future` module against
//!   shuttle's on the same two workloads, printed by the same bench.
//! - [`shuttle_suite`] and [`loom_suite`]: the benchmark programs of `interleave-programs`,
//!   compiled from the same source files against shuttle and loom; [`atomic_set_shim`] is the
//!   `rt::atomic_set` of both, and [`branch_shim`] provides their `rt::branch`.
//! - [`suite_runs`]: runs one of those programs under a peer configuration and reports what the
//!   peer found, for the peer columns of `interleave bench`; [`worker`] runs those in a child
//!   process, because loom can abort the process it runs in.

// Compiling the same program sources once per peer runtime is the point of `shuttle_suite` and
// `loom_suite`.
#![allow(clippy::duplicate_mod)]

pub mod async_switch;
pub mod atomic_set_shim;
pub mod branch_shim;
pub mod exhaustion;
pub mod loom_suite;
pub mod shuttle_suite;
pub mod split_search;
pub mod suite_runs;
pub mod throughput;
mod var_shim;
pub mod worker;
