//! Seed 000's Table 2 and Table 4 analogues: `cargo bench -p interleave [-- --quick]`.
//!
//! Table 2: the time of one execution when the accesses of 0, 1, 2 or all variables are
//! scheduling points, on a program with many variables. Untracked accesses take the runtime's
//! fast path (`Schedule::tracks`), which records the step without consulting the strategy; the
//! strategy here keeps the running thread, so every column runs the same schedule and only the
//! cost of the scheduling points differs. A run of the same workload on std threads gives the
//! native reference.
//!
//! Table 4: executions to the first bug for PCT and PCTVB on seed 000's Figure 6 program, as the
//! buggy variable becomes rarer next to a frequently accessed benign one.

// The benchmark shares the tests' program, not their other helpers.
#[allow(dead_code, unused_imports)]
#[path = "../tests/strategies/helpers.rs"]
mod helpers;

use std::time::{Duration, Instant};

use interleave::strategy::{ObjectId, Schedule, Strategy, View};
use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::Arc;
use interleave::{thread, Builder};

const THREADS: usize = 4;
const VARIABLES: usize = 64;
const ROUNDS: usize = 8;

/// `THREADS` threads, each reading and writing each of `VARIABLES` atomics `ROUNDS` times.
fn many_variables() {
    let cells: Arc<Vec<AtomicU64>> = Arc::new((0..VARIABLES).map(|_| AtomicU64::new(0)).collect());
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let cells = cells.clone();
            thread::spawn(move || {
                for _ in 0..ROUNDS {
                    for cell in cells.iter() {
                        let seen = cell.load(Ordering::SeqCst);
                        cell.store(seen + 1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// The same workload on std atomics and threads.
fn many_variables_native() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let cells: Vec<AtomicU64> = (0..VARIABLES).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    for cell in &cells {
                        let seen = cell.load(Ordering::SeqCst);
                        cell.store(seen + 1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    std::hint::black_box(&cells);
}

/// Keeps the running thread while it can (the lowest-numbered enabled thread otherwise) and
/// makes scheduling points of the accesses of the variables with instance number below
/// `tracked` (all of them with `None`).
struct KeepRunning {
    tracked: Option<u32>,
}

struct KeepRunningSchedule {
    tracked: Option<u32>,
}

impl Schedule for KeepRunningSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        match view.last_thread() {
            Some(last) if view.enabled().contains(&last) => last,
            _ => view.enabled()[0],
        }
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }

    fn tracks(&self, object: ObjectId) -> bool {
        self.tracked.is_none_or(|n| object.instance < n)
    }
}

impl Strategy for KeepRunning {
    fn spec(&self) -> String {
        "keep-running".into()
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(Box::new(KeepRunningSchedule {
            tracked: self.tracked,
        }))
    }
}

/// The best of three timings of `executions` executions, per execution.
fn time_per_execution(executions: u64, mut run: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed() / executions as u32
        })
        .min()
        .expect("three timings")
}

fn table_2(executions: u64) {
    println!(
        "Table 2 analogue: {THREADS} threads x {ROUNDS} rounds x {VARIABLES} atomics, {} accesses \
         per execution; best of 3 x {executions} executions",
        THREADS * ROUNDS * VARIABLES * 2
    );
    println!(
        "{:<28} {:>14} {:>14}",
        "scheduling points at", "us/execution", "v-all / this"
    );
    let columns: [(&str, Option<u32>); 4] = [
        ("v0 (no variable)", Some(0)),
        ("v1 (1 of 64 variables)", Some(1)),
        ("v2 (2 of 64 variables)", Some(2)),
        ("v-all (64 variables)", None),
    ];
    let times: Vec<(&str, Duration)> = columns
        .iter()
        .map(|&(name, tracked)| {
            let time = time_per_execution(executions, || {
                let report = Builder::new()
                    .ignore_environment()
                    .custom_strategy(KeepRunning { tracked })
                    .executions(executions)
                    .check_determinism(false)
                    .workers(1)
                    .explore(many_variables)
                    .expect("explore");
                assert!(report.failures.is_empty());
            });
            (name, time)
        })
        .collect();
    let all = times[3].1.as_secs_f64();
    for (name, time) in &times {
        println!(
            "{name:<28} {:>14.1} {:>14.2}",
            time.as_secs_f64() * 1e6,
            all / time.as_secs_f64()
        );
    }
    let native = time_per_execution(executions, || {
        for _ in 0..executions {
            many_variables_native();
        }
    });
    println!(
        "{:<28} {:>14.1}",
        "native (std threads)",
        native.as_secs_f64() * 1e6
    );
}

/// Executions until the first failure of `spec` with seed `seed`, if within `budget`.
fn first_bug(spec: &str, seed: u64, budget: u64, benign: u32) -> Option<u64> {
    let report = Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("spec"))
        .executions(budget)
        .seed(seed)
        .explore(move || helpers::corner_variable(benign, false))
        .expect("explore");
    report.first_failure().map(|f| f.execution + 1)
}

fn table_4(seeds: u64, budget: u64) {
    println!(
        "\nTable 4 analogue: executions to the first bug on seed 000's Fig 6 program, median \
         over {seeds} seeds (found/seeds), budget {budget}"
    );
    println!(
        "{:<18} {:>16} {:>18} {:>10}",
        "benign accesses", "pct:d=2", "pctvb:d=2,v=1", "PCT/PCTVB"
    );
    for benign in [5, 50, 400, 2000] {
        let median = |spec: &str| -> (f64, usize) {
            let mut firsts: Vec<u64> = (0..seeds)
                .map(|seed| first_bug(spec, seed, budget, benign).unwrap_or(budget))
                .collect();
            let found = firsts.iter().filter(|&&f| f < budget).count();
            firsts.sort_unstable();
            (firsts[firsts.len() / 2] as f64, found)
        };
        let (pct, pct_found) = median("pct:d=2");
        let (vb, vb_found) = median("pctvb:d=2,v=1");
        println!(
            "{benign:<18} {:>10} ({pct_found}/{seeds}) {:>12} ({vb_found}/{seeds}) {:>10.1}",
            pct,
            vb,
            pct / vb
        );
    }
    println!("(a median equal to the budget means the bug was not found for most seeds)");
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    table_2(if quick { 20 } else { 300 });
    table_4(
        if quick { 3 } else { 10 },
        if quick { 2_000 } else { 20_000 },
    );
}
