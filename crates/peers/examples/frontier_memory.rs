//! The memory of the search frontier of interleave's systematic searches (`dfs`, `dpor`) on a
//! program of 4 threads and about 1,000 steps, measured with a counting global allocator.
//!
//! `cargo run --release -p interleave-peers --example frontier_memory -- [EXECUTIONS...]`
//! runs the program for each execution budget (default 10, 100 and 1,000) under `random`,
//! `dfs` and `dpor`, one worker, and prints the peak of live heap bytes during each run. The
//! random walk keeps no frontier, so the difference of a search's peak and random's is the
//! memory of its frontier (its search tree and what it keeps of the last execution); a peak
//! that stays flat as the budget grows shows the frontier is bounded by the depth of the
//! program, not by the executions run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};

/// Counts the bytes live on the heap and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator with the same arguments; the counters
// only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            if new_size >= layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                    + (new_size - layout.size());
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Threads of the program.
const THREADS: usize = 4;
/// Atomic increments each thread makes: with spawns and joins, about 1,000 steps in all.
const INCREMENTS: usize = 245;

/// 4 threads each increment their own counter and a shared one, alternately: every step is a
/// scheduling point, and the shared counter makes the threads' steps depend on each other.
fn program() {
    use interleave::sync::atomic::{AtomicUsize, Ordering};
    use interleave::sync::Arc;
    let shared = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let shared = Arc::clone(&shared);
            interleave::thread::spawn(move || {
                let own = AtomicUsize::new(0);
                for i in 0..INCREMENTS {
                    if i % 2 == 0 {
                        own.fetch_add(1, Ordering::Relaxed);
                    } else {
                        shared.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("no thread panics");
    }
}

/// Runs `program` under `strategy` for `executions` and returns the peak of live heap bytes
/// above what was live before, and the steps per execution.
fn peak_of(strategy: &str, executions: u64) -> Result<(usize, f64)> {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let report = interleave::Builder::new()
        .ignore_environment()
        .strategy(strategy.parse().context("strategy")?)
        .executions(executions)
        .seed(1)
        .workers(1)
        .explore(program)
        .context("explore")?;
    anyhow::ensure!(
        report.failures.is_empty(),
        "the program failed under {strategy}"
    );
    let peak = PEAK.load(Ordering::Relaxed) - before;
    Ok((peak, report.steps as f64 / report.executions.max(1) as f64))
}

fn main() -> Result<()> {
    let budgets: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().context("an execution budget"))
        .collect::<Result<_>>()?;
    let budgets = if budgets.is_empty() {
        vec![10, 100, 1_000]
    } else {
        budgets
    };
    println!("frontier memory: {THREADS} threads x {INCREMENTS} atomic increments, one worker");
    println!(
        "  {:<8} {:>10} {:>10} {:>14} {:>14} {:>10}",
        "strategy", "executions", "steps/exec", "peak heap", "over random", "per step"
    );
    // A first run allocates what stays for the process (thread-locals, the panic hook), so
    // it is left out of every figure.
    peak_of("random", 1)?;
    for &n in &budgets {
        let (random, _) = peak_of("random", n)?;
        for strategy in ["random", "dfs", "dpor"] {
            let (peak, steps) = peak_of(strategy, n)?;
            let frontier = peak as f64 - random as f64;
            println!(
                "  {:<8} {:>10} {:>10.0} {:>12} B {:>12} B {:>8.0} B",
                strategy,
                n,
                steps,
                peak,
                frontier,
                frontier / steps
            );
        }
    }
    Ok(())
}
