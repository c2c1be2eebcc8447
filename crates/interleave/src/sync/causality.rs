//! `Causality`: happens-before carried by hand, for synchronisation primitives that are built
//! over interleave but keep their state outside its objects (a semaphore whose permits sit in
//! a `std` mutex, say). Such a primitive takes its scheduling point on an interleave object
//! (a `Relaxed` read-modify-write of an atomic orders its operations for every search without
//! ordering them by happens-before) and then says exactly what synchronises with what: the
//! thread that hands something over releases its history into a `Causality` that travels with
//! it, and the thread that takes it over acquires that history. The race checks and
//! [`crate::thread::vector_clock`] then see the primitive's own happens-before, no more.
//!
//! ```
//! use interleave::sync::Causality;
//! use interleave::thread;
//!
//! interleave::check(|| {
//!     let handed_over = Causality::release();
//!     let taker = thread::spawn(move || {
//!         handed_over.acquire();
//!     });
//!     taker.join().unwrap();
//! });
//! ```

use std::fmt;

use crate::runtime;
use crate::runtime::clock::VectorClock;

/// The history of the threads that released into it: what happens before whoever acquires it.
/// Neither releasing nor acquiring is a scheduling point.
#[derive(Clone, Default)]
pub struct Causality {
    clock: VectorClock,
}

impl Causality {
    /// An empty history: acquiring it orders nothing (for values that exist from the start).
    pub fn new() -> Causality {
        Causality::default()
    }

    /// The running thread's history so far, which then starts a new epoch, as at any release.
    ///
    /// # Panics
    /// Outside an interleave execution.
    pub fn release() -> Causality {
        let mut causality = Causality::new();
        causality.release_into();
        causality
    }

    /// Adds the running thread's history to this one (a release into it).
    ///
    /// # Panics
    /// Outside an interleave execution.
    pub fn release_into(&mut self) {
        runtime::with(|ex| {
            let me = ex.me();
            self.clock.join(&ex.threads[me].clock);
            ex.threads[me].clock.tick(me);
        });
    }

    /// Adds another history to this one, as when two handed-over values are merged.
    pub fn merge(&mut self, other: &Causality) {
        self.clock.join(&other.clock);
    }

    /// The running thread learns this history: everything released into it happens before the
    /// thread's next step.
    ///
    /// # Panics
    /// Outside an interleave execution.
    pub fn acquire(&self) {
        runtime::with(|ex| {
            let me = ex.me();
            ex.threads[me].clock.join(&self.clock);
        });
    }
}

impl fmt::Debug for Causality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Causality").finish_non_exhaustive()
    }
}
