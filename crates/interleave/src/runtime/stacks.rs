//! A per-OS-thread pool of coroutine stacks. Allocating a stack costs a kernel mapping (about
//! 9 µs); taking one from the pool costs nanoseconds, and loom spends most of its time on
//! exactly that mapping.

use std::cell::RefCell;

use corosensei::stack::DefaultStack;

thread_local! {
    static POOL: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// Keeps at most this many idle stacks per OS thread.
const MAX_POOLED: usize = 64;

/// A stack of at least `size` bytes.
pub(crate) fn take(size: usize) -> DefaultStack {
    let pooled = POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let position = pool.iter().rposition(|s| stack_size(s) >= size)?;
        Some(pool.swap_remove(position))
    });
    pooled.unwrap_or_else(|| {
        DefaultStack::new(size).unwrap_or_else(|e| {
            panic!("interleave could not allocate a {size}-byte coroutine stack: {e}")
        })
    })
}

/// Returns a stack to the pool.
pub(crate) fn give_back(stack: DefaultStack) {
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < MAX_POOLED {
            pool.push(stack);
        }
    });
}

fn stack_size(stack: &DefaultStack) -> usize {
    use corosensei::stack::Stack;
    stack.base().get() - stack.limit().get()
}
