//! interleave's peer comparison: everything that runs shuttle or loom lives in this crate, so
//! the library itself never depends on them.
//!
//! - [`throughput`]: executions per second of the same three workloads under interleave, shuttle
//!   and loom (`cargo bench -p interleave-peers`).
//! - [`shuttle_suite`] and [`loom_suite`]: the benchmark programs of `interleave-programs`,
//!   compiled from the same source files against shuttle and loom; [`atomic_set_shim`] is the
//!   `rt::atomic_set` of both.
//! - [`suite_runs`]: runs one of those programs under a peer configuration and reports what the
//!   peer found, for the peer columns of `interleave bench`; [`worker`] runs those in a child
//!   process, because loom can abort the process it runs in.

// Compiling the same program sources once per peer runtime is the point of `shuttle_suite` and
// `loom_suite`.
#![allow(clippy::duplicate_mod)]

pub mod atomic_set_shim;
pub mod loom_suite;
pub mod shuttle_suite;
pub mod suite_runs;
pub mod throughput;
mod var_shim;
pub mod worker;
