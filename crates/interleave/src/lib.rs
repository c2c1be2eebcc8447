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
//! ## Async code
//!
//! [`future`] runs async tasks under the same scheduler: [`future::spawn`] starts a task (a
//! thread of the execution that polls its future), [`future::block_on`] runs a future on the
//! current thread, and [`future::sync`] has tokio-shaped primitives. Every poll of them is a
//! scheduling point, and wakers are modelled, so a lost wakeup ends in a deadlock report that
//! names the parked task. Blocking and async code mix in one test.
//!
//! ```
//! use interleave::future::{self, sync::Notify};
//! use interleave::sync::atomic::{AtomicBool, Ordering};
//! use interleave::sync::Arc;
//! use interleave::{Builder, FailureKind};
//!
//! // The waiter checks a flag, then starts waiting: a `notify_waiters` in between is lost.
//! let report = Builder::new()
//!     .strategy("pct:d=3".parse().unwrap())
//!     .explore(|| {
//!         future::block_on(async {
//!             let ready = Arc::new(AtomicBool::new(false));
//!             let notify = Arc::new(Notify::new());
//!             let waiter = {
//!                 let (ready, notify) = (ready.clone(), notify.clone());
//!                 future::spawn(async move {
//!                     if !ready.load(Ordering::SeqCst) {
//!                         notify.notified().await;
//!                     }
//!                 })
//!             };
//!             ready.store(true, Ordering::SeqCst);
//!             notify.notify_waiters();
//!             waiter.await.unwrap();
//!         })
//!     })
//!     .unwrap();
//! assert_eq!(report.first_failure().unwrap().kind, FailureKind::Deadlock);
//! ```
//!
//! A crate written against tokio switches its imports in one module, as below for std:
//! `interleave::future::{spawn, yield_now}` and `interleave::future::sync::*` stand for
//! `tokio::{spawn, task::yield_now}` and `tokio::sync::*`. The `connection_pool` example is a
//! small tokio-style service tested this way.
//!
//! ## `#[interleave::test]`
//!
//! The attribute [`macro@test`] makes a function a `#[test]` whose body is explored, with the
//! same settings as [`Builder`] (all optional):
//!
//! ```
//! use interleave::sync::{Arc, Mutex};
//! use interleave::thread;
//!
//! #[interleave::test]
//! fn counter_is_consistent() {
//!     let counter = Arc::new(Mutex::new(0));
//!     let other = counter.clone();
//!     let t = thread::spawn(move || *other.lock().unwrap() += 1);
//!     *counter.lock().unwrap() += 1;
//!     t.join().unwrap();
//!     assert_eq!(*counter.lock().unwrap(), 2);
//! }
//!
//! #[interleave::test(strategy = "pct:d=3", executions = 5000, seed = 7)]
//! #[should_panic(expected = "a withdrawal was lost")]
//! fn finds_the_lost_withdrawal() {
//!     // ...
//! #   panic!("a withdrawal was lost");
//! }
//! ```
//!
//! The second test is `Builder::new().strategy("pct:d=3".parse()?).executions(5000).seed(7)`
//! `.check(|| ...)`, with a regression file.
//!
//! ## Regression files
//!
//! When an `#[interleave::test]` fails, the token of the failing schedule is appended to
//! `interleave-regressions/<module path>.<test name>.txt` in the test crate, with a comment
//! saying what failed, and every later run of the test replays the tokens saved there before
//! it explores: a bug found once is found again at once, as execution 0, until it is fixed, and
//! stays checked afterwards. Commit the directory to share the tokens. A line that is not a
//! token, or a token that no longer replays because the program changed, is skipped with a note
//! ([`Report::notes`]). Nothing is saved when the environment variable `CI` is set (saved tokens
//! are still replayed there); `INTERLEAVE_PERSIST=off` turns regression files off,
//! `INTERLEAVE_PERSIST=on` saves in CI too, and `INTERLEAVE_PERSIST=<dir>` keeps them in
//! another directory. A [`Builder`] saves nothing unless asked, with
//! [`Builder::persist_failures`]:
//!
//! ```
//! # use interleave::sync::{Arc, Mutex};
//! # use interleave::thread;
//! use interleave::{Builder, Persisted, Persistence};
//!
//! # fn lost_withdrawal() {
//! #     let balance = Arc::new(Mutex::new(100));
//! #     let withdraw = |balance: &Mutex<i32>| {
//! #         let current = *balance.lock().unwrap();
//! #         *balance.lock().unwrap() = current - 10;
//! #     };
//! #     let other = balance.clone();
//! #     let t = thread::spawn(move || withdraw(&other));
//! #     withdraw(&balance);
//! #     t.join().unwrap();
//! #     assert_eq!(*balance.lock().unwrap(), 80, "a withdrawal was lost");
//! # }
//! let directory = std::env::temp_dir().join(format!("bank-{}", std::process::id()));
//! let explore = || {
//!     Builder::new()
//!         .ignore_environment() // saving even in CI, for this example
//!         .strategy("pct:d=2".parse().unwrap())
//!         .persist_failures(Persistence::new(&directory, "bank::withdrawals"))
//!         .explore(lost_withdrawal)
//!         .unwrap()
//! };
//! let first = explore();
//! let failure = first.first_failure().expect("the lost withdrawal is found");
//! assert!(failure.execution > 0);
//! assert!(matches!(failure.persisted, Some(Persisted::SavedTo { .. })));
//!
//! let second = explore(); // replays the saved token before exploring
//! let again = second.first_failure().expect("it fails again");
//! assert_eq!(again.execution, 0);
//! assert!(matches!(again.persisted, Some(Persisted::ReplayedFrom { .. })));
//! # std::fs::remove_dir_all(&directory).unwrap();
//! ```
//!
//! ## Strategies
//!
//! A strategy is chosen by value ([`StrategySpec`]) or by spec string, the same strings the CLI
//! and `INTERLEAVE_STRATEGY` take:
//!
//! - `auto` (the default): a portfolio that interleaves the strongest samplers (SURW, POS, PCT)
//!   and a random walk in a fixed cycle of executions; a failure names the member that found it;
//! - `random`: a random walk over the enabled threads;
//! - `pos`: partial-order sampling;
//! - `surw`: selectively uniform random walk, uniform over the interleavings of the accesses to
//!   a few shared objects drawn per execution; the fewest executions to the bug on the
//!   benchmark suite (geometric mean of the medians over its programs);
//! - `rff`: reads-from guided greybox fuzzing, which keeps and mutates the schedules that
//!   produced new (write, read) pairs;
//! - `dpor`: exhaustive search with partial-order reduction, for small tests that should be
//!   checked completely;
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
//! `INTERLEAVE_SEED`, `INTERLEAVE_STRATEGY`, `INTERLEAVE_MAX_STEPS`, `INTERLEAVE_WORKERS`,
//! `INTERLEAVE_REPLAY` and `INTERLEAVE_PERSIST` variables override them, so a CI failure can be
//! reproduced or a search widened without editing code.
//! `INTERLEAVE_STACK_SIZE` sets the bytes of every thread's stack and `INTERLEAVE_WATCHDOG` the
//! seconds without progress before the watchdog ends a hung test (see below).
//! `INTERLEAVE_MEMORY=sc` runs every atomic as `SeqCst` ([`Config::memory`]);
//! `INTERLEAVE_SPURIOUS_WAKEUPS` and `INTERLEAVE_SPURIOUS_CAS_FAILURES` (`on` or `off`) turn
//! spurious wake-ups and `compare_exchange_weak` failures on or off; `INTERLEAVE_FULL_REPORT`
//! prints a report's interleaving with every step ([`Config::full_interleaving`]).
//! `INTERLEAVE_SHARD=i/n` ([`Builder::shard`]) runs shard `i` of `n` (counted from 1) of every
//! exploration, so that `n` CI jobs split a test's executions: together they run exactly the
//! executions of one run, and `interleave merge-shards` combines the summaries they print
//! ([`ShardSummary`]) into its verdict.
//!
//! ## Testing the same code against std
//!
//! Route the imports of the code under test through one module, in the pattern of tokio's
//! `src/loom/mod.rs`, and build with `RUSTFLAGS="--cfg interleave"` to test it. Three pieces:
//!
//! 1. `Cargo.toml` of the crate under test: interleave only in that build, and the cfg
//!    declared so that rustc does not warn about it:
//!
//!    ```toml
//!    [target.'cfg(interleave)'.dev-dependencies]
//!    interleave = "0.1"
//!
//!    [lints.rust]
//!    unexpected_cfgs = { level = "warn", check-cfg = ['cfg(interleave)'] }
//!    ```
//!
//!    (A `[dependencies]` entry under the same `target` table instead, when the library's own
//!    code, not only its tests, must use interleave's types in that build.)
//!
//! 2. One module the code imports its primitives from; std's `UnsafeCell` has no `with`/
//!    `with_mut`, so the std side gets a small wrapper with interleave's (and loom's) shape:
//!
//!    ```ignore
//!    // src/sync.rs of the crate under test
//!    #[cfg(interleave)]
//!    pub(crate) use interleave::{cell::UnsafeCell, sync::*, thread};
//!    #[cfg(not(interleave))]
//!    pub(crate) use std::{sync::*, thread};
//!
//!    #[cfg(not(interleave))]
//!    #[derive(Debug)]
//!    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);
//!
//!    #[cfg(not(interleave))]
//!    impl<T> UnsafeCell<T> {
//!        pub(crate) const fn new(value: T) -> Self {
//!            UnsafeCell(std::cell::UnsafeCell::new(value))
//!        }
//!        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
//!            f(self.0.get())
//!        }
//!        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
//!            f(self.0.get())
//!        }
//!    }
//!    ```
//!
//! 3. Tests that exist only in that build, and the command that builds it:
//!
//!    ```ignore
//!    #[cfg(interleave)]
//!    #[test]
//!    fn the_queue_is_linearizable() {
//!        interleave::check(|| { /* threads using crate::sync */ });
//!    }
//!    ```
//!
//!    ```sh
//!    RUSTFLAGS="--cfg interleave" cargo test --release
//!    ```
//!
//! Forgetting `RUSTFLAGS` builds the std side, where the `#[cfg(interleave)]` tests do not
//! exist: the run says "running 0 tests". Setting `RUSTFLAGS` rebuilds every dependency; a
//! separate target directory (`CARGO_TARGET_DIR=target/interleave`) keeps the normal build's
//! artifacts. The types in [`sync`] and [`thread`] have std's signatures, so the same source
//! compiles both ways. [`cell::Var`] and [`rand`] have no std counterpart; outside tests, use a
//! `Mutex` or plain field and your own randomness.
//!
//! ## Limits
//!
//! - Atomics follow a weak memory model ([`Config::memory`]): a load may read a store that is
//!   not the latest when the orderings allow it. The model is an operational approximation of
//!   C++20's, not all of it; `INTERLEAVE_MEMORY=sc` runs every atomic as `SeqCst`.
//! - Only operations on this crate's types are scheduling points. Code that synchronises
//!   through `std::sync`, real I/O or the clock is not controlled. A thread that blocks or
//!   spins on such code stops the whole execution; after [`Config::watchdog`] (10 s) without
//!   progress the watchdog prints the running thread, its last operation and the likely cause,
//!   and ends the process. A waker woken from another OS thread fails the execution with an
//!   explanation.
//! - Every thread runs on a coroutine stack of [`Config::stack_size`] bytes (256 KiB;
//!   `thread::Builder::stack_size` asks for more). A thread that overflows it hits a guard page,
//!   and the process aborts with a message naming the thread, as std does.
//! - Time is virtual ([`time`]): a sleep or timeout may end at any scheduling point after it
//!   started, and the clock then moves to its deadline; `Instant` measures that clock.
//! - std's freedoms are explored, not fixed: which waiter `Condvar::notify_one` wakes, whether a
//!   timed wait times out. A panic in a spawned thread is returned by `join`, and fails the
//!   execution only if no `join` observes it; locks and `Once` are poisoned as std's are.
//!   Spurious wake-ups of `Condvar::wait` and `park` are explored only with
//!   [`Config::spurious_wakeups`] (they keep every waiter runnable).
//! - Objects kept in plain `static`s keep their data from one execution to the next. Tests that
//!   cargo runs in parallel take turns at one: an execution that needs it waits until the other
//!   test's execution using it has ended. The workers of one exploration (an explicit
//!   [`Builder::workers`] above 1) cannot take turns, so the second execution fails at once,
//!   naming the static: declare such statics with [`lazy_static!`], which gives every execution
//!   its own value. With the default worker count (one per core) a test that uses one runs on
//!   one worker.

#![warn(missing_docs)]

mod analysis;
pub mod atomic_set;
mod branch;
pub mod cell;
mod config;
mod explore;
pub mod future;
pub mod hint;
pub mod lazy_static;
mod persistence;
pub mod rand;
mod regressions;
mod report;
mod runtime;
pub mod ssb;
pub mod strategy;
pub mod sync;
pub mod thread;
pub mod time;

pub use atomic_set::unit_of_work;
pub use branch::branch;
pub use config::{
    Config, MemoryModel, RaceMode, Shard, ShardError, YieldVisibility, AUTOMATIC_WORKERS,
    ENV_EXECUTIONS, ENV_FULL_REPORT, ENV_MAX_STEPS, ENV_MEMORY, ENV_PERSIST, ENV_REPLAY, ENV_SEED,
    ENV_SHARD, ENV_STRATEGY, ENV_WORKERS,
};
pub use explore::{check, replay, Builder};
/// Makes a function a test that explores its body under interleave's scheduler.
///
/// ```
/// # use interleave::sync::{Arc, Mutex};
/// # use interleave::thread;
/// #[interleave::test]
/// fn counter_is_consistent() {
///     let counter = Arc::new(Mutex::new(0));
///     let other = counter.clone();
///     let t = thread::spawn(move || *other.lock().unwrap() += 1);
///     *counter.lock().unwrap() += 1;
///     t.join().unwrap();
///     assert_eq!(*counter.lock().unwrap(), 2);
/// }
///
/// #[interleave::test(strategy = "pct:d=3", executions = 5000, seed = 7)]
/// fn finds_nothing_with_pct() {
///     // ...
/// }
/// ```
///
/// The function becomes a `#[test]` that runs its body as
/// `Builder::new().strategy(..).executions(..).seed(..).persist_failures(..).check(|| body)`:
/// it panics with the report of the first failing execution, and the environment variables
/// (`INTERLEAVE_EXECUTIONS`, `INTERLEAVE_REPLAY`, ...) override the settings as they do for
/// [`Builder::new`]. The settings, all optional literals:
///
/// | setting | [`Builder`] method | example |
/// |---|---|---|
/// | `strategy` | [`Builder::strategy`], a spec string checked when the test runs | `strategy = "pct:d=3"` |
/// | `executions` | [`Builder::executions`] | `executions = 5000` |
/// | `seed` | [`Builder::seed`] | `seed = 7` |
/// | `max_steps` | [`Builder::max_steps`] | `max_steps = 1_000_000` |
/// | `workers` | [`Builder::workers`] | `workers = 2` |
/// | `persist` | [`Builder::persist_failures`] | `persist = false` |
///
/// Failing schedules are saved in `interleave-regressions/<module path>.<name>.txt` in the test
/// crate and replayed first by the next run (see [`Persistence`]), except for a test marked
/// `#[should_panic]`, whose failure is expected, unless it says `persist = true`. Attributes
/// written after this one (`#[should_panic]`, `#[ignore]`) apply to the generated test. The
/// function takes no arguments and returns `()` or a `Result<(), E>` with `E: Debug` (an
/// `Err` fails the execution); it cannot be `async`.
///
/// Do not write `#[test]` as well. A module that glob-imports `interleave::*` has two
/// attributes called `test` in scope, and rustc rejects a plain `#[test]` there as ambiguous:
/// import what you need by name instead.
pub use interleave_macros::test;
/// Makes a function a unit of work: see [`atomic_set`].
pub use interleave_macros::unit_of_work;
pub use persistence::{Persistence, REGRESSIONS_DIRECTORY};
pub use report::{
    AtomicityViolation, Failure, FailureKind, Persisted, Report, ShardFailure, ShardPartition,
    ShardSummary, TokenError, SHARD_SUMMARY_PREFIX,
};
pub use runtime::StopHandle;
pub use strategy::{SpecError, StrategySpec};

/// `#[interleave::test]` rejects, at compile time, what it cannot run. Each example below is
/// a valid test with one mistake.
///
/// An unknown setting:
/// ```compile_fail
/// #[interleave::test(executoins = 10)]
/// fn misspelled() {}
/// ```
/// A setting that is not a literal:
/// ```compile_fail
/// const EXECUTIONS: u64 = 10;
/// #[interleave::test(executions = EXECUTIONS)]
/// fn computed() {}
/// ```
/// A literal of the wrong type:
/// ```compile_fail
/// #[interleave::test(seed = "7")]
/// fn quoted_seed() {}
/// ```
/// No executions:
/// ```compile_fail
/// #[interleave::test(executions = 0)]
/// fn never_runs() {}
/// ```
/// An async function:
/// ```compile_fail
/// #[interleave::test]
/// async fn asynchronous() {}
/// ```
/// Arguments:
/// ```compile_fail
/// #[interleave::test]
/// fn with_argument(threads: usize) {}
/// ```
/// A second `#[test]`:
/// ```compile_fail
/// #[interleave::test]
/// #[test]
/// fn twice() {}
/// ```
#[cfg(doctest)]
mod test_attribute_errors {}

/// What the code `#[interleave::test]` generates refers to; not a stable API.
#[doc(hidden)]
pub mod __private {
    use std::fmt::Debug;

    /// What an `#[interleave::test]` function may return, as for `#[test]`.
    #[diagnostic::on_unimplemented(
        message = "an #[interleave::test] function must return `()` or `Result<(), E>` with `E: Debug`, not `{Self}`"
    )]
    pub trait TestOutcome {
        /// Panics, failing the execution, when the outcome is an error.
        fn assert_passed(self);
    }

    impl TestOutcome for () {
        fn assert_passed(self) {}
    }

    impl<E: Debug> TestOutcome for Result<(), E> {
        fn assert_passed(self) {
            if let Err(error) = self {
                panic!("the test returned an error: {error:?}");
            }
        }
    }
}

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
    /// A regression file (see [`Persistence`]) could not be read or written.
    #[error("could not {operation} the regression file {}: {source}", path.display())]
    RegressionFile {
        /// What was being done: "read", "write", ...
        operation: &'static str,
        /// The regression file.
        path: std::path::PathBuf,
        /// The error the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// An exploration was started inside a test that already runs under interleave.
    #[error(
        "interleave::check, Builder::explore or interleave::replay was called at {site} inside \
         a test that already runs under interleave: explorations cannot be nested; call the \
         inner test's body directly"
    )]
    Nested {
        /// Where the inner exploration was started.
        site: String,
    },
}
