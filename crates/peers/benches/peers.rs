//! `cargo bench -p interleave-peers [-- --executions N | --quick]`; see the crate docs.
fn main() {
    interleave_peers::throughput::main_from_env();
}
