//! Lock-free programs (issue 17): a Treiber stack whose nodes are reused, and the ABA problem
//! that reuse causes.
//!
//! The stack is R. K. Treiber's (*Systems Programming: Coping with Parallelism*, IBM Research
//! Report RJ 5118, 1986): a linked list whose top is swung with compare-and-swap. Its ABA
//! problem, and the fix of pairing the top with a version counter that every successful swap
//! increments, go back to the compare-and-swap appendix of IBM's System/370 *Principles of
//! Operation*; Michael and Scott (PODC 1996) describe both for their queue. Not from a seed
//! paper: the seed programs are all lock-based, and this one needs several preemptions inside
//! lock-free code.
//!
//! Nodes are indices into fixed arrays of atomics rather than pointers, so the program has no
//! memory unsafety under any of the three runtimes: a stale index is still a valid node, which
//! is exactly what makes the ABA problem a wrong answer rather than undefined behaviour.

use super::rt::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use super::rt::sync::Arc;
use super::rt::thread;
use super::{BugKind, Finding, Program, Variant};

/// Threads of [`treiber_aba`] that borrow nodes from the stack.
pub const TREIBER_THREADS: usize = 3;
/// Nodes of [`treiber_aba`]: two per thread, so the fixed twin never finds the stack empty.
pub const TREIBER_NODES: usize = 2 * TREIBER_THREADS;

/// The index that stands for "no node" in the low half of the stack's top word and in a node's
/// link.
const NO_NODE: u64 = u32::MAX as u64;
/// The low half of the top word: the index of the top node.
const INDEX_MASK: u64 = u32::MAX as u64;
/// Where the version counter starts in the top word.
const VERSION_SHIFT: u32 = 32;

/// A Treiber stack over a fixed set of nodes, used as a free list: a thread pops the nodes it
/// borrows and pushes them back when it is done with them.
struct NodeStack {
    /// The index of the top node in the low 32 bits; in the fixed twin the high 32 bits count
    /// the successful swaps of the top (they stay 0 in the buggy version).
    top: AtomicU64,
    /// Each node's link: the index of the node below it, or [`NO_NODE`].
    next: Vec<AtomicU64>,
    /// Whether a thread holds the node (popped it and has not pushed it back yet).
    held: Vec<AtomicBool>,
    /// Whether the top word carries a version counter (the fixed twin).
    versioned: bool,
}

impl NodeStack {
    /// A stack holding every node, node 0 on top.
    fn full(nodes: usize, versioned: bool) -> Self {
        let next = (0..nodes)
            .map(|i| AtomicU64::new(if i + 1 < nodes { i as u64 + 1 } else { NO_NODE }))
            .collect();
        NodeStack {
            top: AtomicU64::new(0),
            next,
            held: (0..nodes).map(|_| AtomicBool::new(false)).collect(),
            versioned,
        }
    }

    /// The top word that replaces `old` when the swap makes `index` the top node: the version
    /// advances by one in the fixed twin, so a top that went away and came back no longer
    /// compares equal.
    fn successor(&self, old: u64, index: u64) -> u64 {
        let version = if self.versioned {
            (old >> VERSION_SHIFT) + 1
        } else {
            0
        };
        (version << VERSION_SHIFT) | index
    }

    /// Pops the top node and marks it held; `None` if the stack is empty.
    ///
    /// The retry loop is bounded: a swap fails only when another thread's swap of the top
    /// succeeded in between, and every thread makes a bounded number of pops and pushes, each
    /// ending at its first successful swap.
    fn pop(&self) -> Option<usize> {
        let mut top = self.top.load(Ordering::SeqCst);
        loop {
            let index = top & INDEX_MASK;
            if index == NO_NODE {
                return None;
            }
            // The link read here goes stale if, before the swap below, the node is popped and
            // pushed back onto a different node: the ABA problem.
            let below = self.next[index as usize].load(Ordering::SeqCst);
            let new_top = self.successor(top, below);
            match self
                .top
                .compare_exchange(top, new_top, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    let index = index as usize;
                    let was_held = self.held[index].swap(true, Ordering::SeqCst);
                    assert!(
                        !was_held,
                        "treiber: a popped node must not be held by another thread (node {index})"
                    );
                    return Some(index);
                }
                Err(current) => top = current,
            }
        }
    }

    /// Gives `index` back: unmarks it and pushes it. Bounded for the reason [`NodeStack::pop`]
    /// gives.
    fn push(&self, index: usize) {
        self.held[index].store(false, Ordering::SeqCst);
        let mut top = self.top.load(Ordering::SeqCst);
        loop {
            self.next[index].store(top & INDEX_MASK, Ordering::SeqCst);
            let new_top = self.successor(top, index as u64);
            match self
                .top
                .compare_exchange(top, new_top, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return,
                Err(current) => top = current,
            }
        }
    }

    /// The nodes from the top down, stopping at the first node seen twice (a cycle) or after
    /// one more node than there are (so the walk is bounded whatever the links say).
    fn walk(&self) -> Vec<usize> {
        let mut order = Vec::new();
        let mut index = self.top.load(Ordering::SeqCst) & INDEX_MASK;
        while index != NO_NODE && order.len() <= self.next.len() {
            let node = index as usize;
            let repeated = order.contains(&node);
            order.push(node);
            if repeated {
                break;
            }
            index = self.next[node].load(Ordering::SeqCst);
        }
        order
    }
}

/// treiber-aba ([`TREIBER_THREADS`] threads, assertion): a Treiber stack used as a free list of
/// [`TREIBER_NODES`] nodes, whose top is a bare node index, loses nodes and links one into a
/// cycle when a pop's compare-and-swap succeeds on a top that was popped and pushed back in the
/// meantime (the ABA problem).
///
/// Each thread borrows two nodes and gives them back: `x = pop(); y = pop(); push(x);
/// push(y)`, where `pop` reads the top node `A` and its link `B` and swaps the top from `A` to
/// `B`, and `push` links the node to the current top and swaps the top to it. A node is marked
/// held while a thread has it; popping a node another thread holds fails an assertion, and so
/// does the main thread's final walk of the stack unless it finds every node exactly once. The
/// nodes are indices into arrays of atomics (`SeqCst` throughout), so reuse needs no memory
/// reclamation and no `unsafe`.
///
/// The bug: thread 1's pop reads top `A` and link `B` and is preempted before its swap; thread
/// 2 pops `A`, pops `B` and pushes `A` back (now linked to the node below `B`) and is preempted
/// before it pushes `B`; thread 1's swap finds `A` on top again, succeeds, and makes `B`, which
/// thread 2 holds, the top. The next pop of `B` fails the held assertion; if there is none,
/// thread 2's push of `B` links `B` to itself or into a cycle with `A`, and the node below is
/// lost, which the final walk reports. Three ordering constraints (thread 1's link read before
/// thread 2's first swap, thread 2's third swap before thread 1's swap, thread 1's swap before
/// thread 2's fourth): two preemptions, PCT depth 3, and a random walk must keep thread 1 off
/// the processor for the ten steps from thread 2's first swap to its third. Choices left open:
/// three threads (any two can play the roles, and loom models them), two nodes per thread so
/// that the fixed twin never finds the stack empty. Fixed twin: the top word also carries a version
/// counter that every successful swap increments, so thread 1's swap compares a stale version
/// and fails, and it retries with the fresh top.
pub fn treiber_aba(variant: Variant) {
    let stack = Arc::new(NodeStack::full(TREIBER_NODES, variant == Variant::Fixed));
    let threads: Vec<_> = (0..TREIBER_THREADS)
        .map(|_| {
            let stack = stack.clone();
            thread::spawn(move || {
                let first = stack.pop();
                let second = stack.pop();
                for node in [first, second].into_iter().flatten() {
                    stack.push(node);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let order = stack.walk();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert!(
        order.len() == TREIBER_NODES && sorted.len() == TREIBER_NODES,
        "treiber: once every node is given back the stack must hold each node once (found {order:?})"
    );
}

/// The programs of this module.
pub static PROGRAMS: &[Program] = &[Program {
    name: "lockfree-treiber-aba",
    origin: "issue 17: Treiber stack (IBM RJ 5118, 1986) with node reuse",
    bug: BugKind::Assertion,
    summary: "a pop's compare-and-swap succeeds on a top node popped and pushed back meanwhile, and installs a stale link",
    found_by: Finding {
        strategy: "pct:d=3",
        within: 1000,
    },
    long: false,
    needs_weak_memory: false,
    run: treiber_aba,
}];
