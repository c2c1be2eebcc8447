//! The program sources, written once and compiled once per runtime.
//!
//! This module names nothing outside itself except what its parent provides: `super::rt` (the
//! runtime: `sync`, `thread`, `cell::Var`, `atomic_set`, `branch`), and the metadata types
//! `super::{Program, BugKind, Finding, Variant}`. The crate root instantiates it against
//! interleave; `interleave-peers` instantiates the same files (with `#[path]`) against shuttle
//! and loom shims, which is how the peer columns of `interleave bench` run exactly the same
//! programs.
//!
//! Rules every program follows so that all three runtimes can run it (see `PORTING.md` in this
//! crate, which also explains how to add a program):
//!
//! - only these runtime items: `sync::{Arc, Mutex, RwLock, Condvar}` (`lock`, `read`, `write`,
//!   `wait`, `notify_one`, `notify_all`), `sync::atomic::*` with `SeqCst` (or acquire/release)
//!   for values the program's logic reads (the [`memory_order`] programs use weaker orderings
//!   on purpose: they are their bugs), `sync::mpsc::channel` with every message received,
//!   `thread::{spawn, yield_now}` and `JoinHandle::join`, `cell::Var`, and the function forms
//!   of `atomic_set` (`unit_of_work`, `unit_of_work_on`, `declare`; the peers' versions only run
//!   the closure), and `branch(condition)` (the peers' version only returns the condition);
//! - every spawned thread is joined, nothing leaks, and every loop is bounded.

use super::{rt, BugKind, Finding, Program, Variant};

pub mod lock_free;
pub mod memory_order;
pub mod seed000;
pub mod seed000_contest;
pub mod seed001;
pub mod seed002;
pub mod seed002_apps;
pub mod seed002_kernel;
pub mod seed002_scaled;
pub mod seed003;
pub mod seed004;
mod util;

/// Every program, by seed and then in the order of its paper (seed 002's kernel programs
/// followed by their scaled versions), then the memory-ordering and lock-free programs.
pub fn programs() -> Vec<Program> {
    [
        seed000::PROGRAMS,
        seed000_contest::PROGRAMS,
        seed001::PROGRAMS,
        seed002::PROGRAMS,
        seed002_kernel::PROGRAMS,
        seed002_scaled::PROGRAMS,
        seed002_apps::PROGRAMS,
        seed003::PROGRAMS,
        seed004::PROGRAMS,
        memory_order::PROGRAMS,
        lock_free::PROGRAMS,
    ]
    .concat()
}
