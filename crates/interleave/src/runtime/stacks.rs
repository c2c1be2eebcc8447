//! Coroutine stacks: allocation, and a pool by size class. Allocating a stack costs a kernel
//! mapping (about 9 µs); taking one from the pool costs nanoseconds, and loom spends most of its
//! time on exactly that mapping.
//!
//! The pool belongs to the execution (`Execution::stacks`), which is recycled from execution
//! to execution on its OS thread, so it is a per-OS-thread pool without a thread-local: a
//! thread-local `RefCell` cost every take and every return about 70 instructions of lookup
//! and borrow (callgrind, `fixed_costs`), where the execution is at hand already.
//!
//! Every stack is a corosensei `DefaultStack`: one mapping whose lowest page is left
//! inaccessible, so running off the end faults there instead of writing over whatever lies
//! below. `guard.rs` turns that fault into a report naming the thread.
//!
//! Sizes are rounded up to a power of two, so a program that asks for many slightly different
//! sizes still reuses stacks, and the common case (every thread at the configured size) is one
//! class whose stacks are popped without a search.

use std::io;

use corosensei::stack::{DefaultStack, Stack};

use super::idle::Idle;
use super::op::{ShortSite, Site};

/// Keeps at most this many idle stacks of one class per OS thread...
const MAX_POOLED: usize = 64;
/// ...and of the large classes at most this many bytes' worth (but always one).
const MAX_POOLED_BYTES: usize = 16 << 20;
/// The largest stack this module will try to map: beyond it the address space of any machine
/// runs out, and rounding to a power of two would overflow.
const MAX_STACK: usize = 1 << 50;

/// A stack the operating system would not give: what the program sees, as the error of
/// `thread::Builder::spawn` or the panic of `thread::spawn`.
#[derive(Debug, thiserror::Error)]
#[error(
    "interleave could not allocate a {size}-byte stack for {thread} {origin}: {os_error}; \
     reduce the number of live threads or the stack size"
)]
pub(crate) struct StackError {
    size: usize,
    /// `thread 3 ('worker')`.
    thread: String,
    /// `spawned at src/lib.rs:10:5`.
    origin: String,
    os_error: io::Error,
}

impl StackError {
    pub(crate) fn new(
        size: usize,
        index: usize,
        name: Option<&str>,
        site: Site,
        os_error: io::Error,
    ) -> StackError {
        let thread = match (name, index) {
            (Some(name), _) => format!("thread {index} ('{name}')"),
            (None, 0) => "thread 0 (main)".to_string(),
            (None, _) => format!("thread {index}"),
        };
        let verb = if index == 0 { "started" } else { "spawned" };
        StackError {
            size,
            thread,
            origin: format!("{verb} at {}", ShortSite(site)),
            os_error,
        }
    }

    /// The kind of the operating system's error.
    pub(crate) fn kind(&self) -> io::ErrorKind {
        self.os_error.kind()
    }
}

/// The size class of a request: the power of two at or above it.
fn class_of(size: usize) -> Option<usize> {
    if size > MAX_STACK {
        return None;
    }
    size.checked_next_power_of_two()
}

/// Idle stacks, by size class (the usable bytes of its stacks, a power of two).
#[derive(Default)]
pub(crate) struct Pool {
    idle: Idle<usize, DefaultStack>,
}

impl Pool {
    /// A stack with at least `size` usable bytes below its top.
    ///
    /// # Errors
    /// The operating system's error when the stack cannot be mapped (address space or mapping
    /// count exhausted, `ulimit -v`), or `InvalidInput` for a size beyond any address space.
    #[inline]
    pub(crate) fn take(&mut self, size: usize) -> io::Result<DefaultStack> {
        let Some(class) = class_of(size) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the size exceeds any address space",
            ));
        };
        match self.idle.take(class) {
            Some(stack) => Ok(stack),
            None => DefaultStack::new(class),
        }
    }

    /// Returns a stack to the pool (or unmaps it, when its class holds enough).
    #[inline]
    pub(crate) fn give_back(&mut self, stack: DefaultStack) {
        let usable = usable(&stack);
        // The limit of a class is computed once, when it is first seen: a division per return
        // showed in the profile.
        self.idle.give_back(
            usable,
            stack,
            || (MAX_POOLED_BYTES / usable.max(1)).min(MAX_POOLED),
            drop,
        );
    }
}

/// The bytes a thread can use: the mapping without its guard page.
pub(crate) fn usable(stack: &DefaultStack) -> usize {
    stack.base().get() - stack.limit().get() - page_size()
}

/// The lowest address of the stack's guard page.
pub(crate) fn guard_page(stack: &DefaultStack) -> usize {
    stack.limit().get()
}

/// The size of a memory page (the guard page's size).
pub(crate) fn page_size() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            #[cfg(unix)]
            // SAFETY: `sysconf` has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            #[cfg(not(unix))]
            let page = 4096;
            PAGE.store(page, Ordering::Relaxed);
            page
        }
        page => page,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_has_at_least_the_requested_size_and_returns_to_its_class() {
        let mut pool = Pool::default();
        let stack = pool.take(300 * 1024).expect("allocated");
        assert_eq!(usable(&stack), 512 * 1024);
        let top = stack.base().get();
        pool.give_back(stack);
        let again = pool.take(260 * 1024).expect("pooled");
        assert_eq!(again.base().get(), top, "the pooled stack is reused");
        pool.give_back(again);
        let small = pool.take(256 * 1024).expect("allocated");
        assert_eq!(usable(&small), 256 * 1024);
    }

    #[test]
    fn a_class_keeps_a_bounded_number_of_idle_stacks() {
        let mut pool = Pool::default();
        let stacks: Vec<_> = (0..MAX_POOLED + 3)
            .map(|_| pool.take(4096).expect("allocated"))
            .collect();
        for stack in stacks {
            pool.give_back(stack);
        }
        assert_eq!(pool.idle.kept(4096), MAX_POOLED);
    }

    #[test]
    fn impossible_sizes_are_errors_not_panics() {
        let mut pool = Pool::default();
        assert_eq!(
            pool.take(usize::MAX).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidInput)
        );
        assert!(pool.take(MAX_STACK).is_err(), "no machine maps a PiB");
    }
}
