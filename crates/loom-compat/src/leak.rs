//! Leak checks at the end of each execution, as loom's: every tracked allocation (each
//! [`Arc`](crate::sync::Arc), each block of [`crate::alloc::alloc`], each
//! [`Track`](crate::alloc::Track)) registers here while it lives, and an allocation still alive when
//! the execution ends fails the execution with the site that created it.
//!
//! The register is a per-execution `lazy_static!` value: interleave drops those at the end of
//! the execution, after every thread has ended, and a panicking destructor there fails the
//! execution. It is created by the first tracked allocation, before any `lazy_static!` value
//! that holds one has finished initialising, so it is dropped after those values.

use std::cell::RefCell;
use std::panic::Location;

/// The live tracked allocations of one execution, by address.
struct Register {
    live: RefCell<Vec<(usize, &'static str, &'static Location<'static>)>>,
}

// SAFETY: all threads of an execution run on one OS thread, one at a time, and no borrow of
// `live` is held across a scheduling point.
unsafe impl Sync for Register {}

interleave::lazy_static! {
    static ref LIVE: Register = Register { live: RefCell::new(Vec::new()) };
}

/// Records that the allocation at `address`, a `kind` created at `site`, is alive.
pub(crate) fn allocated(address: usize, kind: &'static str, site: &'static Location<'static>) {
    LIVE.live.borrow_mut().push((address, kind, site));
}

/// Records that the allocation at `address` was freed.
pub(crate) fn freed(address: usize) {
    let mut live = LIVE.live.borrow_mut();
    if let Some(position) = live.iter().position(|(known, _, _)| *known == address) {
        live.swap_remove(position);
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
            .map(|(_, kind, site)| format!("{kind} created at {site}"))
            .collect();
        panic!(
            "memory leak: {} tracked allocation(s) still alive at the end of the execution: {}",
            live.len(),
            sites.join(", ")
        );
    }
}
