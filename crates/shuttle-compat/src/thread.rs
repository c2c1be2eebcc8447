//! `shuttle::thread`: interleave's threads under shuttle's names.

pub use interleave::thread::{
    current, park, park_timeout, scope, sleep, spawn, yield_now, AccessError, Builder, JoinHandle,
    LocalKey, Result, Scope, ScopedJoinHandle, Thread, ThreadId,
};
pub use std::thread::panicking;
