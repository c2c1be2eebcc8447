//! Heap blocks freed by the packets of spawned threads (`thread.rs`: a thread's closure and the
//! slot of its result, shared by the thread and its handle), kept by layout for the next
//! spawns on this OS thread. A spawn allocates one such block and a `join` frees it; through
//! the allocator that pair cost every thread about 140 instructions (glibc's `malloc`, `free`
//! and `_int_free`, callgrind, `fixed_costs`), through this cache a few pushes and pops.
//!
//! The cache belongs to the execution (`Execution::blocks`), which is recycled from execution
//! to execution on its OS thread. A block freed where no execution can take it (outside one,
//! or while the runtime is borrowed) goes back to the allocator; the cache frees what it holds
//! when the execution's state is dropped, at the exit of its OS thread.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use super::idle::Idle;

/// Keeps at most this many idle blocks of one layout.
const MAX_KEPT: usize = 64;

/// Idle blocks by layout; each was allocated by the global allocator with that layout.
#[derive(Default)]
pub(crate) struct Blocks {
    idle: Idle<Layout, NonNull<u8>>,
}

impl Blocks {
    /// A block of `layout` (not zero-sized): an idle one, or a new one.
    #[inline]
    pub(crate) fn take(&mut self, layout: Layout) -> NonNull<u8> {
        debug_assert!(layout.size() > 0);
        match self.idle.take(layout) {
            Some(block) => block,
            None => allocate(layout),
        }
    }

    /// Keeps `block`, allocated with `layout` and no longer used, for a later `take`.
    #[inline]
    pub(crate) fn give_back(&mut self, block: NonNull<u8>, layout: Layout) {
        self.idle
            .give_back(layout, block, || MAX_KEPT, |block| free(block, layout));
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        for (layout, block) in self.idle.drain() {
            free(block, layout);
        }
    }
}

/// A new block of `layout`.
fn allocate(layout: Layout) -> NonNull<u8> {
    // SAFETY: `layout` is not zero-sized (`take`'s callers have a reference count in it).
    let block = unsafe { alloc(layout) };
    NonNull::new(block).unwrap_or_else(|| handle_alloc_error(layout))
}

/// Returns `block`, allocated with `layout`, to the allocator.
pub(crate) fn free(block: NonNull<u8>, layout: Layout) {
    // SAFETY: every block here came from `allocate` with this layout and is used by no one.
    unsafe { dealloc(block.as_ptr(), layout) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_given_back_is_taken_again_for_its_layout_only() {
        let mut blocks = Blocks::default();
        let small = Layout::from_size_align(48, 8).expect("layout");
        let large = Layout::from_size_align(96, 16).expect("layout");
        let first = blocks.take(small);
        blocks.give_back(first, small);
        let other = blocks.take(large);
        assert_ne!(other, first, "a block of another layout is not reused");
        assert_eq!(blocks.take(small), first, "the idle block is reused");
        blocks.give_back(first, small);
        blocks.give_back(other, large);
    }

    #[test]
    fn a_layout_keeps_a_bounded_number_of_idle_blocks() {
        let mut blocks = Blocks::default();
        let layout = Layout::from_size_align(32, 8).expect("layout");
        let taken: Vec<_> = (0..MAX_KEPT + 5).map(|_| blocks.take(layout)).collect();
        for block in taken {
            blocks.give_back(block, layout);
        }
        assert_eq!(blocks.idle.kept(layout), MAX_KEPT);
    }
}
