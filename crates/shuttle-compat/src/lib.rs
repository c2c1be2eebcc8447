//! shuttle 0.9's public API over interleave's controlled scheduler.
//!
//! Depend on this crate under shuttle's name and a crate's existing shuttle tests build
//! unchanged:
//!
//! ```toml
//! [dev-dependencies]
//! shuttle = { package = "interleave-shuttle", version = "0.1" }
//! ```
//!
//! Each entry point runs the interleave strategy that matches the shuttle scheduler (see
//! [`scheduler`]): `check_random` a random walk, `check_pct` PCT, `check_dfs` exhaustive
//! depth-first search. A failure panics with interleave's report, which names the failing
//! schedule as a replay token that [`replay`] takes; the panic keeps the key words shuttle's
//! own panics have (`deadlock`, `exceeded max_steps bound`, `tried to acquire a Mutex it already
//! holds`, `possible nondeterminism`), so `#[should_panic(expected = ...)]` tests still match.
//! The `INTERLEAVE_*` environment variables override what the mapping chose.
//!
//! ```
//! use shuttle::sync::{Arc, Mutex};
//! use shuttle::thread;
//!
//! shuttle::check_random(
//!     || {
//!         let counter = Arc::new(Mutex::new(0));
//!         let other = counter.clone();
//!         let t = thread::spawn(move || *other.lock().unwrap() += 1);
//!         *counter.lock().unwrap() += 1;
//!         t.join().unwrap();
//!         assert_eq!(*counter.lock().unwrap(), 2);
//!     },
//!     100,
//! );
//! ```
//!
//! What interleave has no notion of is kept here: per-task labels, tags and names
//! ([`current`]; a task starts with a copy of its parent's, and `thread::Builder::name` names
//! it), shuttle's one-variant `future::JoinError`, `future::batch_semaphore`, and 128-bit
//! atomics (always sequentially consistent). `current::clock` is interleave's happens-before
//! vector clock of the running task.
//!
//! A [`PortfolioRunner`] runs its schedulers at once, one OS thread each, as shuttle does; with
//! early stop, the first scheduler to fail stops the others (`interleave::StopHandle`), whose
//! running executions are abandoned at their next scheduling point without running the
//! destructors of their threads' values.
//!
//! What has no equivalent is refused, not imitated: a `Scheduler` written by the user does
//! not compile (interleave's strategies see more of the program than shuttle's trait passes),
//! a shuttle schedule string given to `replay` is rejected as a malformed token, and
//! `current::clock_for` panics for any task but the running one.

#![warn(missing_docs)]

mod config;
pub mod current;
pub mod future;
mod labels;
pub mod rand;
mod runner;
pub mod scheduler;
pub mod sync;
pub mod thread;

pub use config::{
    Config, ContinuationFunctionBehavior, FailurePersistence, MaxSteps, UngracefulShutdownConfig,
};
pub use interleave::{hint, lazy_static, thread_local};
pub use runner::{
    check, check_dfs, check_pct, check_random, check_random_with_seed,
    check_uncontrolled_nondeterminism, check_urw, replay, replay_from_file, PortfolioRunner,
    Runner,
};

/// shuttle's environment variable that makes it capture each task's backtrace for a deadlock's
/// panic message. interleave's report names where every blocked thread waits without it, so it
/// is not read; the name is here so that code that mentions it builds.
pub const CAPTURE_BACKTRACE: &str = "SHUTTLE_CAPTURE_BACKTRACE";

/// shuttle's environment variable that silences its warnings about its memory model and its
/// `lazy_static!`. interleave-shuttle prints neither (it runs the weak memory model, and its
/// `lazy_static!` values are dropped at the end of each execution), so it is not read.
pub const SILENCE_WARNINGS: &str = "SHUTTLE_SILENCE_WARNINGS";

/// shuttle's environment variable naming the file its annotation scheduler writes; annotations
/// are not offered, so it is not read.
pub const ANNOTATION_FILE: &str = "SHUTTLE_ANNOTATION_FILE";
