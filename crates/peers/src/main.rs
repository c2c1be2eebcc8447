//! `cargo run --release -p interleave-peers --bin peers -- [--executions N] [--quick]
//! [--async-only]` runs the throughput comparison; `peers worker` serves peer jobs on stdin/stdout (see
//! `interleave_peers::worker`), which the crate's tests use.
fn main() -> std::io::Result<()> {
    if std::env::args().nth(1).as_deref() == Some("worker") {
        return interleave_peers::worker::serve();
    }
    interleave_peers::throughput::main_from_env();
    Ok(())
}
