//! The only place that names the runtime.
//!
//! Program files import runtime items exclusively through `crate::rt::...`, so that another crate
//! (the peer comparison) can compile the same sources against a shuttle or loom shim by providing a
//! module with the same shape: `sync` (std-shaped `Arc`, `Mutex`, `Condvar`, atomics), `thread`
//! (`spawn`, `JoinHandle::join`), `cell::Var` (a tracked plain shared variable) and `rand`.

pub use interleave::{cell, rand, sync, thread};
