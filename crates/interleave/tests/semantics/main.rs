//! The std-shaped API behaves as std allows, and no more: primitives, time, async tasks and
//! channels under every explored schedule; correct std programs report nothing.

mod helpers;

#[allow(dead_code)]
#[path = "../../examples/connection_pool.rs"]
mod connection_pool;

mod end_of_execution;
mod example_service;
mod future;
mod future_sync;
mod loom_shuttle_primitives;
mod many_threads;
mod memory_model;
mod primitives;
mod std_programs;
mod std_semantics;
mod std_switch;
mod time;
