//! loom 0.7's public API over interleave's controlled scheduler.
//!
//! Depend on this crate under loom's name and a crate's existing loom tests build unchanged:
//!
//! ```toml
//! [target.'cfg(loom)'.dev-dependencies]
//! loom = { package = "interleave-loom", version = "0.1" }
//! ```
//!
//! [`model()`] explores the closure with interleave's exhaustive `dpor` strategy, or with
//! preemption-bounded `dpor:c=N` when a preemption bound is set (see [`model::Builder`] for how every
//! loom setting and `LOOM_*` variable maps). A failure is interleave's report, with the
//! interleaving and a replay token; `INTERLEAVE_STRATEGY` and the other `INTERLEAVE_*` variables
//! still override the mapped settings, so a loom test can also be sampled with PCT beyond
//! loom's thread limit.
//!
//! ```
//! use loom::sync::atomic::{AtomicUsize, Ordering};
//! use loom::sync::Arc;
//! use loom::thread;
//!
//! loom::model(|| {
//!     let hits = Arc::new(AtomicUsize::new(0));
//!     let other = hits.clone();
//!     let t = thread::spawn(move || other.fetch_add(1, Ordering::SeqCst));
//!     hits.fetch_add(1, Ordering::SeqCst);
//!     t.join().unwrap();
//!     assert_eq!(hits.load(Ordering::SeqCst), 2);
//! });
//! ```
//!
//! Atomics run under interleave's weak memory model: `dpor` and the samplers explore the stale
//! values a `Relaxed` or `Acquire` load may read, as loom does; preemption-bounded `icb` reads
//! the latest store at every load.

#![warn(missing_docs)]

pub mod alloc;
pub mod cell;
pub mod future;
pub mod hint;
mod leak;
pub mod model;
pub mod sync;
pub mod thread;

pub use interleave::thread_local;
pub use model::model;

pub mod lazy_static {
    //! `loom::lazy_static`: interleave's statics with one value per execution ([`Lazy`]), and
    //! the error of a thread-local accessed while it is destroyed, which loom exports here too
    //! (tokio's loom build imports it from this path).
    pub use interleave::lazy_static::*;
    pub use interleave::thread::AccessError;
}

/// `loom::lazy_static!`: interleave's [`lazy_static!`](interleave::lazy_static!), whose statics
/// have one value per execution, dropped at its end.
#[macro_export]
macro_rules! lazy_static {
    ($($tokens:tt)*) => {
        $crate::__interleave::lazy_static!($($tokens)*);
    };
}

/// The path through which [`lazy_static!`] reaches interleave's macro from the user's crate,
/// which need not depend on interleave itself.
#[doc(hidden)]
pub use interleave as __interleave;

/// loom's limit on the threads of one execution. interleave has no such limit; the constant
/// stays for code that sizes arrays with it.
pub const MAX_THREADS: usize = 5;

/// loom's hook for models built with `expect_explicit_explore`: interleave explores every
/// execution from its start, so there is nothing to switch on.
///
/// # Panics
/// Always: the model would otherwise run differently from what the test asks.
pub fn explore() {
    panic!(
        "loom::explore is not supported by interleave-loom: interleave explores every \
         execution from its start; remove `expect_explicit_explore` and the explore() call"
    );
}

/// loom's request to stop exploring the current branch.
///
/// # Panics
/// Always: interleave's strategies cannot prune a branch on the test's request.
pub fn skip_branch() {
    panic!(
        "loom::skip_branch is not supported by interleave-loom: interleave's strategies \
         cannot prune a branch on request"
    );
}

/// loom's request to stop exploring new branches from here on.
///
/// # Panics
/// Always: interleave's strategies cannot prune on the test's request.
pub fn stop_exploring() {
    panic!(
        "loom::stop_exploring is not supported by interleave-loom: interleave's strategies \
         cannot prune on request"
    );
}
