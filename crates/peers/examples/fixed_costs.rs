//! The fixed costs of an execution and of a thread's life, for a profiler: explores a closure
//! that spawns and joins THREADS threads which do nothing (0: an empty closure), N executions,
//! random strategy, seed 1, one worker, and prints nothing but the number of executions.
//!
//! `cargo build --release -p interleave-peers --example fixed_costs`, then under
//! `valgrind --tool=callgrind`: `fixed_costs THREADS N`. The cost of an empty execution is
//! (Ir(0, 1200) - Ir(0, 200)) / 1000, and a thread's life (its spawn, start, finish and join
//! decisions included) adds ((Ir(1, 1200) - Ir(1, 200)) - (Ir(0, 1200) - Ir(0, 200))) / 1000.

use anyhow::{bail, Context, Result};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [threads, n] = args.as_slice() else {
        bail!("usage: fixed_costs THREADS N");
    };
    let threads: usize = threads.parse().context("THREADS must be a number")?;
    let n: u64 = n.parse().context("N must be a number")?;
    let builder = interleave::Builder::new()
        .strategy("random".parse().expect("random is a strategy"))
        .executions(n)
        .seed(1)
        .workers(1);
    let report = match threads {
        0 => builder.explore(|| {}),
        1 => builder.explore(|| interleave::thread::spawn(|| {}).join().unwrap()),
        2 => builder.explore(|| {
            let a = interleave::thread::spawn(|| {});
            let b = interleave::thread::spawn(|| {});
            a.join().unwrap();
            b.join().unwrap();
        }),
        _ => bail!("THREADS must be 0, 1 or 2"),
    }
    .context("the exploration failed")?;
    println!("{}", report.executions);
    Ok(())
}
