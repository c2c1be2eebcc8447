//! Leak checks at the end of each execution, as loom's: every tracked allocation (each
//! [`Arc`](crate::sync::Arc), each block of [`crate::alloc::alloc`], each
//! [`Track`](crate::alloc::Track)) registers here while it lives, and an allocation still alive when
//! the execution ends fails the execution with the site that created it.
//!
//! An `Arc`'s entry also carries the history its holders released when they dropped their
//! references, which the holder of the last one acquires, as std's `Arc` orders every drop before
//! the last (a release decrement, an acquire fence) and before a successful `get_mut` or
//! `try_unwrap`: without it, a destructor reading a cell another thread wrote before dropping
//! its reference was reported as a data race.
//!
//! The register is a per-execution `lazy_static!` value: interleave drops those at the end of
//! the execution, after every thread has ended, and a panicking destructor there fails the
//! execution. It is created by the first tracked allocation, before any `lazy_static!` value
//! that holds one has finished initialising, so it is dropped after those values.

use std::cell::RefCell;
use std::panic::Location;

use interleave::sync::Causality;

/// A live tracked allocation.
struct Allocation {
    address: usize,
    kind: &'static str,
    site: &'static Location<'static>,
    /// What the holders of its dropped references had done (an `Arc`'s).
    released: Causality,
}

/// The live tracked allocations of one execution.
struct Register {
    live: RefCell<Vec<Allocation>>,
}

// SAFETY: all threads of an execution run on one OS thread, one at a time, and no borrow of
// `live` is held across a scheduling point.
unsafe impl Sync for Register {}

interleave::lazy_static! {
    static ref LIVE: Register = Register { live: RefCell::new(Vec::new()) };
}

/// Records that the allocation at `address`, a `kind` created at `site`, is alive.
pub(crate) fn allocated(address: usize, kind: &'static str, site: &'static Location<'static>) {
    LIVE.live.borrow_mut().push(Allocation {
        address,
        kind,
        site,
        released: Causality::new(),
    });
}

/// Records that the allocation at `address` was freed.
pub(crate) fn freed(address: usize) {
    let mut live = LIVE.live.borrow_mut();
    if let Some(position) = live.iter().position(|a| a.address == address) {
        live.swap_remove(position);
    }
}

/// The running thread dropped one of several references to the allocation at `address`: what
/// it did so far happens before what the holder of the last reference does with the value.
pub(crate) fn released(address: usize) {
    with_history(address, Causality::release_into);
}

/// The running thread holds the only reference to the allocation at `address` and uses the
/// value as its own (drops it, unwraps it, borrows it mutably): what the holders of the dropped
/// references did happens before.
pub(crate) fn acquired(address: usize) {
    with_history(address, |released| released.acquire());
}

/// Runs `f` on the history the holders of the allocation at `address` released, if it is
/// tracked and a thread of an execution runs (a drop outside an execution, or from inside the
/// engine, has no thread to release or acquire).
fn with_history(address: usize, f: impl FnOnce(&mut Causality)) {
    if interleave::thread::try_current().is_none() {
        return;
    }
    if let Some(allocation) = LIVE
        .live
        .borrow_mut()
        .iter_mut()
        .find(|a| a.address == address)
    {
        f(&mut allocation.released);
    }
}

impl Drop for Register {
    fn drop(&mut self) {
        let live = self.live.get_mut();
        if live.is_empty() {
            return;
        }
        let sites: Vec<String> = live
            .iter()
            .map(|a| format!("{} created at {}", a.kind, a.site))
            .collect();
        panic!(
            "memory leak: {} tracked allocation(s) still alive at the end of the execution: {}",
            live.len(),
            sites.join(", ")
        );
    }
}
