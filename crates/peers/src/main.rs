//! `cargo run --release -p interleave-peers --bin peers -- [--executions N] [--quick]`
fn main() {
    interleave_peers::throughput::main_from_env();
}
