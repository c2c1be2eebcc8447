//! `cargo bench -p interleave-peers [-- --executions N | --quick]`; see the crate docs.
//!
//! The last section compares async task switches of `interleave::future` and `shuttle::future`
//! (`interleave_peers::async_switch`); `cargo bench -p interleave-peers --bench peers --
//! --async-only [--executions N | --quick]` runs only that section.
fn main() {
    interleave_peers::throughput::main_from_env();
}
