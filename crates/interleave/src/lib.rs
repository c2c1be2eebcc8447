//! # interleave: find concurrency bugs by running code under a controlled scheduler
//!
//! `interleave` runs a test closure many times. Each time, every thread the closure spawns runs
//! as a coroutine on one OS thread, and at every *visible operation* (a lock, an atomic access,
//! a channel send, an access to a tracked variable, ...) a strategy decides which thread runs
//! next. When an execution fails, you get a report that says what happened, the interleaving
//! that led there, and a replay token that reproduces it exactly.
//!
//! ## A first test
//!
//! Write the test against `interleave`'s std-shaped types:
//!
//! ```
//! use interleave::sync::{Arc, Mutex};
//! use interleave::thread;
//!
//! // A correct counter: the lock covers the whole read-modify-write.
//! interleave::check(|| {
//!     let counter = Arc::new(Mutex::new(0));
//!     let handles: Vec<_> = (0..2)
//!         .map(|_| {
//!             let counter = counter.clone();
//!             thread::spawn(move || *counter.lock().unwrap() += 1)
//!         })
//!         .collect();
//!     for handle in handles {
//!         handle.join().unwrap();
//!     }
//!     assert_eq!(*counter.lock().unwrap(), 2);
//! });
//! ```
//!
//! `check` panics with a report when an execution fails. To look at the result instead, use
//! [`Builder::explore`]. Here a check-then-act across two critical sections loses an update,
//! and PCT finds it:
//!
//! ```
//! use interleave::sync::{Arc, Mutex};
//! use interleave::{thread, Builder, FailureKind};
//!
//! let report = Builder::new()
//!     .strategy("pct:d=2".parse().unwrap())
//!     .executions(1000)
//!     .explore(|| {
//!         let balance = Arc::new(Mutex::new(100));
//!         let withdraw = |balance: &Mutex<i32>| {
//!             let current = *balance.lock().unwrap(); // read under the lock ...
//!             *balance.lock().unwrap() = current - 10; // ... write under another: not atomic
//!         };
//!         let other = balance.clone();
//!         let t = thread::spawn(move || withdraw(&other));
//!         withdraw(&balance);
//!         t.join().unwrap();
//!         assert_eq!(*balance.lock().unwrap(), 80, "a withdrawal was lost");
//!     })
//!     .unwrap();
//! let failure = report.first_failure().expect("the lost withdrawal is found");
//! assert_eq!(failure.kind, FailureKind::Panic);
//! println!("{failure}"); // the report: panic message, interleaving, replay token
//! ```
//!
//! The report ends with a token; `interleave::replay(token, || ...)` or the environment
//! variable `INTERLEAVE_REPLAY=token` re-runs exactly that execution.
//!
//! ## Strategies
//!
//! A strategy is chosen by value ([`StrategySpec`]) or by spec string, the same strings the CLI
//! and `INTERLEAVE_STRATEGY` take:
//!
//! - `random`: a random walk over the enabled threads;
//! - `pct:d=3`: PCT, which finds a bug of depth `d` with probability at least `1/(n·k^(d-1))`
//!   per execution (`n` threads, `k` steps).
//!
//! Your own strategy implements [`strategy::Strategy`], which sees every thread's state and
//! pending operation at each decision.
//!
//! ## What is detected
//!
//! - a panic or failed assertion in any thread;
//! - a deadlock: the report names each blocked thread, what it waits for, who holds it, and the
//!   wait-for cycle;
//! - locking a `Mutex` or `RwLock` the thread already holds;
//! - a livelock or unbounded spin loop (the step bound);
//! - data races on [`cell::Var`] and [`cell::UnsafeCell`]: two conflicting accesses not
//!   ordered by happens-before, with both source locations;
//! - uncontrolled nondeterminism: the program does something different under the same
//!   schedule (it used `std::sync` directly, `HashMap` iteration order, the clock).
//!
//! ## Settings and the environment
//!
//! [`Config`] documents every setting with its default; the `INTERLEAVE_EXECUTIONS`,
//! `INTERLEAVE_SEED`, `INTERLEAVE_STRATEGY`, `INTERLEAVE_MAX_STEPS`, `INTERLEAVE_WORKERS` and
//! `INTERLEAVE_REPLAY` variables override them, so a CI failure can be reproduced or a search
//! widened without editing code.
//!
//! ## Testing the same code against std
//!
//! Route the imports of the code under test through one module, in the pattern of tokio's
//! `src/loom/mod.rs`, and build with `RUSTFLAGS="--cfg interleave"` to test it:
//!
//! ```ignore
//! // src/sync.rs of the crate under test
//! #[cfg(interleave)]
//! pub(crate) use interleave::{sync::*, thread};
//! #[cfg(not(interleave))]
//! pub(crate) use std::{sync::*, thread};
//! ```
//!
//! (Declare the cfg in `Cargo.toml` with `[lints.rust] unexpected_cfgs = { level = "warn",
//! check-cfg = ['cfg(interleave)'] }`.) The types in [`sync`] and [`thread`] have std's
//! signatures, so the same source compiles both ways. [`cell::Var`] and [`rand`] have no std
//! counterpart; outside tests, use a `Mutex` or plain field and your own randomness.
//!
//! ## Limits
//!
//! - Sequential consistency: every atomic behaves as `SeqCst`, whatever ordering is passed.
//!   Bugs that need weak memory behaviour are not found.
//! - Only operations on this crate's types are scheduling points. Code that synchronises
//!   through `std::sync`, real I/O or the clock is not controlled.
//! - Time is virtual ([`time`]): each execution has a clock that moves only when no thread can
//!   run, to the earliest deadline of a sleeping or timed-waiting thread or an async timer. So a
//!   timeout (`Condvar::wait_timeout`, `recv_timeout`, `park_timeout`, `time::timeout`) is not
//!   a free scheduling choice: it fires only when nothing else can happen before its deadline.
//!   `thread::sleep` blocks until its deadline.
//! - `Condvar` has no spurious wake-ups and `notify_one` wakes the longest waiter.
//! - Threads still blocked after the main thread returned are not reported (std would kill
//!   them with the process).
//! - Objects kept in `static`s keep their state from one execution to the next, and must not
//!   be shared by several workers.
//! - Poisoning is not modelled: a panic fails the execution, so a poisoned lock is never seen.

#![warn(missing_docs)]

pub mod atomic_set;
pub mod cell;
mod config;
mod detect;
mod explore;
pub mod future;
pub mod hint;
pub mod rand;
mod report;
mod runtime;
pub mod strategy;
pub mod sync;
pub mod thread;
pub mod time;

pub use atomic_set::unit_of_work;
pub use config::{
    Config, RaceMode, ENV_EXECUTIONS, ENV_MAX_STEPS, ENV_REPLAY, ENV_SEED, ENV_STRATEGY,
    ENV_WORKERS,
};
pub use explore::{check, replay, Builder};
/// Makes a function a unit of work: see [`atomic_set`].
pub use interleave_macros::unit_of_work;
pub use report::{AtomicityViolation, Failure, FailureKind, Report, TokenError};
pub use strategy::{SpecError, StrategySpec};

/// Why an exploration or replay could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A strategy spec is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A replay token is malformed or from another version.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// An `INTERLEAVE_*` environment variable has an invalid value.
    #[error("environment variable {name}={value:?} is invalid: {reason}")]
    Environment {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting is impossible.
    #[error("invalid configuration: {0}")]
    Config(String),
}
