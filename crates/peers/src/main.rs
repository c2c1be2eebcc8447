//! `cargo run --release -p interleave-peers --bin peers -- [--executions N] [--quick]`
fn main() {
    interleave_peers::main_from_env();
}
