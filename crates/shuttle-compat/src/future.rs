//! `shuttle::future`: interleave's tasks under shuttle's names.

pub use interleave::future::{
    block_on, spawn, spawn_local, yield_now, AbortHandle, JoinError, JoinHandle,
};
