//! Throughput comparison of interleave with its peers, shuttle and loom, on four workloads.
//!
//! # What it measures
//!
//! Four small workloads are written once, in the `workloads!` macro, and instantiated three
//! times against `interleave`, `shuttle` and `loom`, so all three tools run the same source code:
//!
//! - **(a) mutex**: 2 threads each do 50 increments of an `Arc<Mutex<u64>>`; asserts 100.
//! - **(b) atomic**: 3 threads each do 20 `AtomicUsize::fetch_add(1)`; asserts 60.
//! - **(c) condvar**: 2 producers and 2 consumers share a one-slot buffer
//!   (`Mutex<Option<u64>>` plus a `not_empty` and a `not_full` `Condvar`); each producer puts
//!   [`ITEMS_PER_THREAD`] items, each consumer takes as many; asserts every item was consumed once.
//! - **(d) rwlock**: 8 threads share an `Arc<RwLock<u64>>`: 6 readers and 2 writers each take
//!   it [`RWLOCK_ROUNDS`] times (a writer adds 1, a reader checks the bound); asserts 8. loom 0.7
//!   runs at most 5 threads with the main one, so its instantiation has 3 readers and 1 writer:
//!   its row in this table measures a smaller program.
//!
//! Each workload is run in one process under these runners:
//!
//! | runner | how |
//! |---|---|
//! | interleave random | `Builder::new().strategy("random").executions(n).seed(1).workers(1).explore(f)`, on one OS thread |
//! | interleave random x2 | the same with `workers(2)`: two OS threads (this machine's cores) |
//! | interleave pct:d=3, pos, surw, pctvb, auto (each also x2) | the same with that spec ([`INTERLEAVE_STRATEGIES`]) |
//! | shuttle random | `shuttle::Runner::new(RandomScheduler::new_from_seed(1, n), Config::default()).run(f)` |
//! | shuttle pct d=3 | the same with `PctScheduler::new_from_seed(1, 3, n)` |
//! | loom bound 2 | `loom::model::Builder` with `preemption_bound = Some(2)`, capped at `n` executions with `max_permutations` (loom's DFS may finish the bounded space sooner; executions are counted by a static counter inside the model closure) |
//!
//! Every runner is repeated [`REPETITIONS`] times and the **fastest** repetition is reported
//! (best of 3), because this is a shared 2-core machine where the noise only ever adds time.
//! Each interleave strategy's 1-worker and 2-worker repetitions alternate, so each pair ran under
//! about the same load; the `x2/x1` line gives the speed-up of the best 2-worker repetition over
//! the best 1-worker one, with the lowest and highest speed-up of the pairs (the spread the
//! machine's other users cause), and the load average is printed next to it. After each pair
//! two one-worker explorations of the same strategy run at once on two OS threads
//! ([`pair_speedup`]): their combined rate over one worker's is what two workers that never
//! synchronise got from the machine then, so the pool's speed-up is to be read against it (at
//! load averages above 2 on 2 cores it is often 1.2-1.5x, not 2x; a CPU-bound loop, which the
//! bench timed before, stayed at 2.0x while two workers fell to 1.2x). The `cpu/exec`
//! column, the process's CPU time per execution, shows what a second worker costs apart from
//! the load.
//!
//! # How to read it
//!
//! - `execs/s` is executions of the workload per second: the number that decides how many
//!   schedules a test budget buys.
//! - `dec/exec` is scheduling decisions per execution. For interleave it is its own count,
//!   `Report::steps / Report::executions`. Shuttle and loom do not report theirs, so their
//!   `ns/dec` is computed **with interleave's count for the same workload and strategy family**
//!   (interleave random's count for shuttle random and loom, interleave pct's for shuttle pct):
//!   that makes `ns/dec` the time each tool spends per unit of the *same* work. For reference the
//!   table also shows, in `own dec/exec`, how many times shuttle called its scheduler's
//!   `next_task` per execution, counted in a separate untimed run through a counting wrapper, and
//!   in `ns/own` shuttle's time per one of its own decisions (the unit of the per-decision figures
//!   in `shared/notes/measurements.md`).
//! - The ratio lines divide interleave's executions per second by the peer's: above 1.0x
//!   interleave is faster. The first two compare the table's rows, which ran minutes apart and,
//!   for interleave, between runs that kept both cores busy. The `alternating pairs` line runs
//!   interleave on one worker and shuttle in turn ([`REPETITIONS`] + 2 pairs per strategy
//!   family) and gives the ratio of the fastest runs and the median and range of the ratios
//!   within pairs: on this machine two runs of the same code a second apart differ by up to
//!   1.5x, and the pairs' median is the single-core figure least moved by that.
//!
//! After these four tables, the same run prints the executions each of interleave's `dpor`
//! and loom needs to exhaust the same loom-style programs, with the executions per second of
//! `dpor`, `dfs` and loom on each ([`crate::exhaustion`]), then the
//! async task-switch comparison of interleave's `future` module with shuttle's
//! ([`crate::async_switch`]).
//!
//! Run it with `cargo bench -p interleave-peers` or
//! `cargo run --release -p interleave-peers --bin peers -- [--executions N] [--quick]`;
//! `--async-only` runs only the async section.

use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
use std::time::{Duration, Instant};

use crate::suite_runs::Counting;

/// Items each producer puts (and each consumer takes) in workload (c).
pub const ITEMS_PER_THREAD: u64 = 5;
/// Times each thread of workload (d) takes the `RwLock`.
pub const RWLOCK_ROUNDS: u64 = 4;
/// Repetitions per runner; the fastest is reported.
pub const REPETITIONS: usize = 3;
/// Executions per runner and repetition when `--executions` is not given (~1-2 minutes in all).
pub const DEFAULT_EXECUTIONS: u64 = 80_000;
/// Executions per runner with `--quick`.
pub const QUICK_EXECUTIONS: u64 = 300;

/// The shuttle version this crate pins (see Cargo.toml).
pub const SHUTTLE_VERSION: &str = "0.9.9";
/// The loom version this crate pins (see Cargo.toml).
pub const LOOM_VERSION: &str = "0.7.2";

/// Writes the workloads once against the std-shaped API of the runtime crate `$rt`.
#[macro_export]
macro_rules! workloads {
    ($module:ident, $rt:ident) => {
        /// The workloads instantiated for one tool.
        pub mod $module {
            use ::$rt::sync::atomic::{AtomicUsize, Ordering};
            use ::$rt::sync::{Arc, Condvar, Mutex, RwLock};
            use ::$rt::thread;

            /// (a) 2 threads x 50 Mutex increments.
            pub fn mutex() {
                let counter = Arc::new(Mutex::new(0u64));
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        let counter = Arc::clone(&counter);
                        thread::spawn(move || {
                            for _ in 0..50 {
                                *counter.lock().unwrap() += 1;
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().unwrap();
                }
                assert_eq!(*counter.lock().unwrap(), 100);
            }

            /// (b) 3 threads x 20 AtomicUsize fetch_add.
            pub fn atomic() {
                let counter = Arc::new(AtomicUsize::new(0));
                let handles: Vec<_> = (0..3)
                    .map(|_| {
                        let counter = Arc::clone(&counter);
                        thread::spawn(move || {
                            for _ in 0..20 {
                                counter.fetch_add(1, Ordering::SeqCst);
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().unwrap();
                }
                assert_eq!(counter.load(Ordering::SeqCst), 60);
            }

            /// (c) 2 producers + 2 consumers over a one-slot buffer, Mutex + 2 Condvars.
            pub fn condvar() {
                const K: u64 = $crate::throughput::ITEMS_PER_THREAD;
                // (slot, not_empty, not_full)
                let shared = Arc::new((Mutex::new(None::<u64>), Condvar::new(), Condvar::new()));
                let producers: Vec<_> = (0..2u64)
                    .map(|p| {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || {
                            let (slot, not_empty, not_full) = &*shared;
                            for i in 0..K {
                                let mut guard = slot.lock().unwrap();
                                while guard.is_some() {
                                    guard = not_full.wait(guard).unwrap();
                                }
                                *guard = Some(p * K + i + 1);
                                drop(guard);
                                not_empty.notify_one();
                            }
                        })
                    })
                    .collect();
                let consumers: Vec<_> = (0..2)
                    .map(|_| {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || {
                            let (slot, not_empty, not_full) = &*shared;
                            let mut sum = 0u64;
                            for _ in 0..K {
                                let mut guard = slot.lock().unwrap();
                                let item = loop {
                                    match guard.take() {
                                        Some(item) => break item,
                                        None => guard = not_empty.wait(guard).unwrap(),
                                    }
                                };
                                drop(guard);
                                not_full.notify_one();
                                sum += item;
                            }
                            sum
                        })
                    })
                    .collect();
                for h in producers {
                    h.join().unwrap();
                }
                let total: u64 = consumers.into_iter().map(|h| h.join().unwrap()).sum();
                // Items are 1..=2K, each consumed exactly once.
                assert_eq!(total, (2 * K) * (2 * K + 1) / 2);
                assert!(shared.0.lock().unwrap().is_none());
            }

            /// (d) 8 threads share an `RwLock<u64>`: 6 readers and 2 writers, each taking the
            /// lock [`RWLOCK_ROUNDS`](crate::throughput::RWLOCK_ROUNDS) times.
            pub fn rwlock() {
                rwlock_with(6, 2);
            }

            /// (d) as loom can run it: loom 0.7 caps an execution at 5 threads with the main
            /// one (`MAX_THREADS`), so 3 readers and 1 writer.
            pub fn rwlock_small() {
                rwlock_with(3, 1);
            }

            /// `readers` threads read-lock and `writers` threads write-lock one `RwLock<u64>`
            /// [`RWLOCK_ROUNDS`](crate::throughput::RWLOCK_ROUNDS) times each; a writer adds 1,
            /// a reader checks the value never exceeds what the writers can have added.
            fn rwlock_with(readers: u64, writers: u64) {
                const ROUNDS: u64 = $crate::throughput::RWLOCK_ROUNDS;
                let lock = Arc::new(RwLock::new(0u64));
                let handles: Vec<_> = (0..readers + writers)
                    .map(|i| {
                        let lock = Arc::clone(&lock);
                        thread::spawn(move || {
                            for _ in 0..ROUNDS {
                                if i < writers {
                                    *lock.write().unwrap() += 1;
                                } else {
                                    assert!(*lock.read().unwrap() <= writers * ROUNDS);
                                }
                            }
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().unwrap();
                }
                assert_eq!(*lock.read().unwrap(), writers * ROUNDS);
            }
        }
    };
}

workloads!(on_interleave, interleave);
workloads!(on_shuttle, shuttle);
workloads!(on_loom, loom);

/// One workload, as the three instantiations of the same source.
pub struct Workload {
    /// Short name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// The interleave instantiation.
    pub interleave: fn(),
    /// The shuttle instantiation.
    pub shuttle: fn(),
    /// The loom instantiation.
    pub loom: fn(),
}

/// The four workloads.
pub fn all_workloads() -> Vec<Workload> {
    vec![
        Workload {
            name: "(a) mutex",
            description: "2 threads x 50 Mutex increments",
            interleave: on_interleave::mutex,
            shuttle: on_shuttle::mutex,
            loom: on_loom::mutex,
        },
        Workload {
            name: "(b) atomic",
            description: "3 threads x 20 AtomicUsize fetch_add",
            interleave: on_interleave::atomic,
            shuttle: on_shuttle::atomic,
            loom: on_loom::atomic,
        },
        Workload {
            name: "(c) condvar",
            description: "2 producers + 2 consumers x 5 items, one-slot buffer, Mutex + 2 Condvars",
            interleave: on_interleave::condvar,
            shuttle: on_shuttle::condvar,
            loom: on_loom::condvar,
        },
        Workload {
            name: "(d) rwlock",
            description: "6 readers + 2 writers x 4 RwLock acquisitions (loom: 3 readers + 1 writer, its 5-thread cap)",
            interleave: on_interleave::rwlock,
            shuttle: on_shuttle::rwlock,
            loom: on_loom::rwlock_small,
        },
    ]
}

/// What one timed run produced.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Wall time of the whole run.
    pub time: Duration,
    /// Executions completed.
    pub executions: u64,
    /// Scheduling decisions, when the tool reports them (interleave only).
    pub steps: Option<u64>,
    /// CPU time the process spent during the run, on all its threads: unlike the wall time, it
    /// does not grow when other processes take the cores, so it shows what a second worker
    /// costs apart from the machine's load.
    pub cpu: Duration,
}

impl Run {
    /// Executions per second.
    pub fn execs_per_sec(&self) -> f64 {
        self.executions as f64 / self.time.as_secs_f64()
    }
}

/// Runs `f` under interleave with the strategy `spec` for `n` executions on one worker.
pub fn run_interleave(spec: &str, n: u64, f: fn()) -> Run {
    run_interleave_on(spec, n, 1, f)
}

/// Runs `f` under interleave with the strategy `spec` for `n` executions on `workers` workers.
pub fn run_interleave_on(spec: &str, n: u64, workers: usize, f: fn()) -> Run {
    let strategy = spec
        .parse()
        .unwrap_or_else(|e| panic!("bad strategy {spec:?}: {e:?}"));
    let cpu = process_cpu_time();
    let start = Instant::now();
    let report = interleave::Builder::new()
        .strategy(strategy)
        .executions(n)
        .seed(1)
        .workers(workers)
        .explore(f)
        .unwrap_or_else(|e| panic!("interleave {spec}: {e}"));
    let time = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu);
    if let Some(failure) = report.failures.first() {
        panic!("interleave {spec} found a failure in a correct workload:\n{failure}");
    }
    Run {
        time,
        executions: report.executions,
        steps: Some(report.steps),
        cpu,
    }
}

/// Runs `f` under shuttle's random scheduler, seed 1, for `n` executions.
pub fn run_shuttle_random(n: u64, f: fn()) -> Run {
    let scheduler = shuttle::scheduler::RandomScheduler::new_from_seed(1, n as usize);
    time_shuttle(scheduler, f)
}

/// Runs `f` under shuttle's PCT scheduler, depth 3, seed 1, for `n` executions.
pub fn run_shuttle_pct(n: u64, f: fn()) -> Run {
    let scheduler = shuttle::scheduler::PctScheduler::new_from_seed(1, 3, n as usize);
    time_shuttle(scheduler, f)
}

fn time_shuttle<S: shuttle::scheduler::Scheduler + 'static>(scheduler: S, f: fn()) -> Run {
    let cpu = process_cpu_time();
    let start = Instant::now();
    let executions = shuttle::Runner::new(scheduler, shuttle::Config::default()).run(f);
    Run {
        time: start.elapsed(),
        executions: executions as u64,
        steps: None,
        cpu: process_cpu_time().saturating_sub(cpu),
    }
}

/// Shuttle's own decisions per execution (`next_task` calls), from an untimed run of `n`.
pub fn shuttle_own_decisions(pct: bool, n: u64, f: fn()) -> f64 {
    let decisions = std::rc::Rc::new(std::cell::Cell::new(0));
    let executions = if pct {
        let inner = shuttle::scheduler::PctScheduler::new_from_seed(1, 3, n as usize);
        let counting = Counting {
            inner,
            decisions: decisions.clone(),
        };
        shuttle::Runner::new(counting, shuttle::Config::default()).run(f)
    } else {
        let inner = shuttle::scheduler::RandomScheduler::new_from_seed(1, n as usize);
        let counting = Counting {
            inner,
            decisions: decisions.clone(),
        };
        shuttle::Runner::new(counting, shuttle::Config::default()).run(f)
    };
    decisions.get() as f64 / executions.max(1) as f64
}

static LOOM_EXECUTIONS: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` under loom with preemption bound 2, stopping after `n` executions (or sooner if loom
/// exhausts the bounded space).
pub fn run_loom(n: u64, f: fn()) -> Run {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    // loom only looks at `max_permutations` when the iteration number is a multiple of
    // `checkpoint_interval`, and stops *before* running that iteration: n + 1 for both gives
    // exactly n executions.
    builder.max_permutations = Some(n as usize + 1);
    builder.checkpoint_interval = n as usize + 1;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    LOOM_EXECUTIONS.store(0, StdOrdering::SeqCst);
    let cpu = process_cpu_time();
    let start = Instant::now();
    builder.check(move || {
        LOOM_EXECUTIONS.fetch_add(1, StdOrdering::Relaxed);
        f()
    });
    Run {
        time: start.elapsed(),
        executions: LOOM_EXECUTIONS.load(StdOrdering::SeqCst) as u64,
        steps: None,
        cpu: process_cpu_time().saturating_sub(cpu),
    }
}

/// The CPU time this process has used so far, on all its threads (zero where the clock is not
/// available).
pub fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer, which is valid.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Best (fastest) of `reps` runs.
pub fn best_of(reps: usize, mut run: impl FnMut() -> Run) -> Run {
    (0..reps.max(1))
        .map(|_| run())
        .min_by(|a, b| {
            // Compare per-execution time: loom's execution count can differ between runs only if
            // its exploration ends early, which it does identically every time.
            let a = a.time.as_secs_f64() / a.executions.max(1) as f64;
            let b = b.time.as_secs_f64() / b.executions.max(1) as f64;
            a.total_cmp(&b)
        })
        .expect("at least one repetition")
}

/// Command-line options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Executions per runner and repetition.
    pub executions: u64,
    /// Repetitions per runner.
    pub repetitions: usize,
    /// Whether to run only the async task-switch section ([`crate::async_switch`]).
    pub async_only: bool,
    /// Whether to run only the executions-to-exhaust table ([`crate::exhaustion`]).
    pub exhaustion_only: bool,
    /// Whether to run only the thread workloads' throughput tables.
    pub workloads_only: bool,
    /// Whether to run only the table of `dfs` split among workers ([`crate::split_search`]).
    pub split_only: bool,
}

impl Options {
    /// Parses `--executions N`, `--repetitions N`, `--quick` and the `--*-only` switches; ignores `--bench` (passed by
    /// `cargo bench`).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
        let mut executions = None;
        let mut quick = false;
        let mut async_only = false;
        let mut exhaustion_only = false;
        let mut workloads_only = false;
        let mut split_only = false;
        let mut repetitions = None;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--executions" | "-n" => {
                    let v = args.next().ok_or("--executions needs a value")?;
                    executions = Some(parse_count(&v)?);
                }
                s if s.starts_with("--executions=") => {
                    executions = Some(parse_count(&s["--executions=".len()..])?);
                }
                "--repetitions" => {
                    let v = args.next().ok_or("--repetitions needs a value")?;
                    repetitions = Some(parse_count(&v)?.max(1) as usize);
                }
                "--quick" => quick = true,
                "--async-only" => async_only = true,
                "--exhaustion-only" => exhaustion_only = true,
                "--workloads-only" => workloads_only = true,
                "--split-only" => split_only = true,
                "--bench" => {}
                "-h" | "--help" => return Err(USAGE.to_string()),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
            }
        }
        Ok(Options {
            executions: executions.unwrap_or(if quick {
                QUICK_EXECUTIONS
            } else {
                DEFAULT_EXECUTIONS
            }),
            repetitions: repetitions.unwrap_or(if quick { 1 } else { REPETITIONS }),
            async_only,
            exhaustion_only,
            workloads_only,
            split_only,
        })
    }
}

const USAGE: &str =
    "usage: peers [--executions N] [--repetitions N] [--quick] [--async-only] [--exhaustion-only] [--workloads-only] [--split-only]\n  \
    --executions N  executions per runner and repetition (default 80000)\n  \
    --repetitions N repetitions of each runner, the fastest reported (default 3)\n  \
    --quick         smoke run: 300 executions, one repetition\n  \
    --async-only    only the async task-switch section (interleave::future vs shuttle::future)\n  \
    --exhaustion-only  only the executions-to-exhaust table (interleave dpor vs loom)\n  \
    --workloads-only   only the thread workloads' throughput tables\n  \
    --split-only       only dfs split among 1 and 2 workers on the exhaustion programs";

fn parse_count(v: &str) -> Result<u64, String> {
    let n: u64 = v
        .replace('_', "")
        .parse()
        .map_err(|_| format!("--executions: not a number: {v:?}"))?;
    if n == 0 {
        return Err("--executions must be at least 1".into());
    }
    Ok(n)
}

/// One row of the table.
struct Row {
    runner: String,
    run: Run,
    /// Decisions per execution used for ns/decision.
    decisions: f64,
    /// Where `decisions` came from.
    decisions_note: &'static str,
    /// Shuttle's own count, if measured.
    own: Option<f64>,
}

/// Runs every workload under every runner and prints the tables to stdout: the thread
/// workloads under all three tools, then the async task switches of
/// [`crate::async_switch`].
pub fn run(opts: &Options) {
    let total = Instant::now();
    if opts.exhaustion_only {
        crate::exhaustion::run();
        return;
    }
    if opts.workloads_only {
        run_thread_workloads(opts);
        return;
    }
    if opts.split_only {
        crate::split_search::run(opts.repetitions);
        return;
    }
    if !opts.async_only {
        run_thread_workloads(opts);
        println!();
        crate::exhaustion::run();
        println!();
    }
    crate::async_switch::run(opts);
    println!();
    println!("total wall time {:.1}s", total.elapsed().as_secs_f64());
}

/// The strategies interleave runs every workload under, each with 1 and with 2 workers.
pub const INTERLEAVE_STRATEGIES: [&str; 6] = ["random", "pct:d=3", "pos", "surw", "pctvb", "auto"];

/// The worker counts of interleave's rows: one worker, and as many as this 2-core machine has.
pub const WORKER_COUNTS: [usize; 2] = [1, 2];

/// The repetitions of one interleave strategy with 1 and with 2 workers, taken in alternation so
/// each pair ran under about the same load.
struct Scaling {
    spec: &'static str,
    one: Vec<Run>,
    two: Vec<Run>,
    /// What the machine allowed at each repetition: [`pair_speedup`] right after the pair.
    pair: Vec<f64>,
}

impl Scaling {
    fn measure(spec: &'static str, reps: usize, n: u64, f: fn()) -> Scaling {
        let (mut one, mut two, mut pair) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps.max(1) {
            one.push(run_interleave_on(spec, n, WORKER_COUNTS[0], f));
            two.push(run_interleave_on(spec, n, WORKER_COUNTS[1], f));
            pair.push(pair_speedup(spec, n, f, one.last().expect("just pushed")));
        }
        Scaling {
            spec,
            one,
            two,
            pair,
        }
    }

    fn best_one(&self) -> Run {
        fastest(&self.one)
    }

    fn best_two(&self) -> Run {
        fastest(&self.two)
    }

    /// The speed-up of the best 2-worker repetition over the best 1-worker one, and the lowest
    /// and highest speed-up of the repetitions paired in the order they ran.
    fn speedups(&self) -> (f64, f64, f64) {
        let best = self.best_two().execs_per_sec() / self.best_one().execs_per_sec();
        let paired: Vec<f64> = self
            .one
            .iter()
            .zip(&self.two)
            .map(|(one, two)| two.execs_per_sec() / one.execs_per_sec())
            .collect();
        let low = paired.iter().copied().fold(f64::INFINITY, f64::min);
        let high = paired.iter().copied().fold(0.0, f64::max);
        (best, low, high)
    }
}

/// Interleave on one worker against a peer, run in alternation so that each pair of runs met
/// about the same load: the ratio of the two fastest runs, and the median, lowest and highest
/// ratio within the pairs. On this shared machine two runs of the same code a second apart
/// differ by up to 1.5x, so a ratio of runs taken minutes apart (the table's rows) can be off
/// by as much; the pairs' median is the figure least moved by it.
struct Paired {
    best: f64,
    median: f64,
    low: f64,
    high: f64,
}

impl Paired {
    fn measure(
        pairs: usize,
        mut ours: impl FnMut() -> Run,
        mut theirs: impl FnMut() -> Run,
    ) -> Paired {
        let (mut our_runs, mut their_runs) = (Vec::new(), Vec::new());
        for _ in 0..pairs.max(1) {
            our_runs.push(ours());
            their_runs.push(theirs());
        }
        let mut ratios: Vec<f64> = our_runs
            .iter()
            .zip(&their_runs)
            .map(|(ours, theirs)| ours.execs_per_sec() / theirs.execs_per_sec())
            .collect();
        ratios.sort_by(f64::total_cmp);
        Paired {
            best: fastest(&our_runs).execs_per_sec() / fastest(&their_runs).execs_per_sec(),
            median: ratios[ratios.len() / 2],
            low: ratios[0],
            high: ratios[ratios.len() - 1],
        }
    }
}

impl std::fmt::Display for Paired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2}x best/best, {:.2}x median ({:.2}-{:.2})",
            self.best, self.median, self.low, self.high
        )
    }
}

/// The rate of two independent one-worker explorations of the same workload and strategy run at
/// once, on two OS threads of this process, over `one`'s rate (a one-worker run just before):
/// what two workers that never synchronise would reach on this machine right now, with its
/// shared caches, memory and the host's scheduling of its two cores (2.0 at best). A worker
/// pool's speed-up below this one is the pool's own cost; below 2.0 but at this one, the
/// machine's.
pub fn pair_speedup(spec: &str, n: u64, f: fn(), one: &Run) -> f64 {
    let start = Instant::now();
    let executions = std::thread::scope(|scope| {
        let other = scope.spawn(|| run_interleave_on(spec, n, 1, f).executions);
        run_interleave_on(spec, n, 1, f).executions + other.join().expect("the pair's run")
    });
    let rate = executions as f64 / start.elapsed().as_secs_f64();
    rate / one.execs_per_sec()
}

/// How much faster the same CPU-bound loop (no memory traffic, no synchronisation) runs on two
/// OS threads than on one right now: the most any 2-worker speed-up can be at this moment on
/// this shared machine (2.0 on an idle 2-core one).
pub fn machine_speedup() -> f64 {
    fn spin(rounds: u64) -> u64 {
        let mut x = 0u64;
        for i in 0..rounds {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        x
    }
    // About 30 ms per thread.
    const ROUNDS: u64 = 30_000_000;
    let start = Instant::now();
    spin(ROUNDS);
    let one = start.elapsed();
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| spin(ROUNDS));
        spin(ROUNDS);
    });
    let two = start.elapsed();
    2.0 * one.as_secs_f64() / two.as_secs_f64()
}

/// The fastest of `runs` per execution.
fn fastest(runs: &[Run]) -> Run {
    let mut runs = runs.iter().copied();
    best_of(runs.len(), || runs.next().expect("one run per repetition"))
}

/// The load averages of the machine (`/proc/loadavg`'s first three fields), for the record: the
/// machine is shared, and a speed-up measured under load is lower than the same code's on an
/// idle machine.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_string())
}

/// The thread workloads under shuttle, loom and interleave's strategies with 1 and 2 workers.
fn run_thread_workloads(opts: &Options) {
    let n = opts.executions;
    let reps = opts.repetitions;
    println!("interleave-peers: interleave vs shuttle {SHUTTLE_VERSION} and loom {LOOM_VERSION}, same workload source for all three");
    println!(
        "{n} executions per run, {reps} repetition(s) per runner, {} reported; seed 1; shuttle and loom on one OS thread,",
        if reps > 1 { "the fastest (best of N)" } else { "the only one" }
    );
    println!("interleave with workers(1) and workers(2) (rows `x2`; the two alternate, so each pair ran under the same load)");
    println!("dec/exec: interleave = its Report::steps / Report::executions; shuttle and loom are charged");
    println!("interleave's count for the same workload (random's for shuttle random and loom, pct's for shuttle pct);");
    println!("own = shuttle's own next_task calls per execution (separate untimed run); ns/own = time per own decision.");
    println!("ratios = interleave execs/s / peer execs/s (above 1.0x: interleave faster); x2/x1 = 2 workers / 1 worker,");
    println!("best of N, with the lowest and highest of the N paired repetitions, and the best speed-up of two independent");
    println!("one-worker runs at once right after each pair (pair: what the machine allowed this code; 2.00x at best).");
    println!("load average at start: {}", load_average());
    for w in all_workloads() {
        println!();
        println!("{}: {}", w.name, w.description);
        let scalings: Vec<Scaling> = INTERLEAVE_STRATEGIES
            .iter()
            .map(|spec| Scaling::measure(spec, reps, n, w.interleave))
            .collect();
        let ir = scalings[0].best_one();
        let ip = scalings[1].best_one();
        let sr = best_of(reps, || run_shuttle_random(n, w.shuttle));
        let sp = best_of(reps, || run_shuttle_pct(n, w.shuttle));
        let lm = best_of(reps, || run_loom(n, w.loom));
        let own_n = n.min(2_000);
        let own_r = shuttle_own_decisions(false, own_n, w.shuttle);
        let own_p = shuttle_own_decisions(true, own_n, w.shuttle);
        let per = |r: &Run| r.steps.unwrap_or(0) as f64 / r.executions.max(1) as f64;
        let (dr, dp) = (per(&ir), per(&ip));
        let mut rows = Vec::new();
        for scaling in &scalings {
            for (label, run) in [("", scaling.best_one()), (" x2", scaling.best_two())] {
                rows.push(Row {
                    runner: format!("interleave {}{label}", scaling.spec),
                    run,
                    decisions: per(&run),
                    decisions_note: "own",
                    own: None,
                });
            }
        }
        rows.extend([
            Row {
                runner: "shuttle random".into(),
                run: sr,
                decisions: dr,
                decisions_note: "il-random",
                own: Some(own_r),
            },
            Row {
                runner: "shuttle pct d=3".into(),
                run: sp,
                decisions: dp,
                decisions_note: "il-pct",
                own: Some(own_p),
            },
            Row {
                runner: "loom bound 2".into(),
                run: lm,
                decisions: dr,
                decisions_note: "il-random",
                own: None,
            },
        ]);
        println!(
            "  {:<24} {:>8} {:>10} {:>8} {:>11} {:>9} {:<10} {:>7} {:>8} {:>8}",
            "runner",
            "execs",
            "best time",
            "cpu/exec",
            "execs/s",
            "dec/exec",
            "(from)",
            "ns/dec",
            "own",
            "ns/own"
        );
        for row in &rows {
            let secs = row.run.time.as_secs_f64();
            let ns_per_dec = if row.decisions > 0.0 {
                format!(
                    "{:.0}",
                    secs * 1e9 / (row.run.executions as f64 * row.decisions)
                )
            } else {
                "-".to_string()
            };
            let ns_per_own = row
                .own
                .filter(|&o| o > 0.0)
                .map(|o| format!("{:.0}", secs * 1e9 / (row.run.executions as f64 * o)))
                .unwrap_or_else(|| "-".into());
            println!(
                "  {:<24} {:>8} {:>9.3}s {:>6.2}us {:>11} {:>9.1} {:<10} {:>7} {:>8} {:>8}",
                row.runner,
                row.run.executions,
                secs,
                row.run.cpu.as_secs_f64() * 1e6 / row.run.executions.max(1) as f64,
                thousands(row.run.execs_per_sec()),
                row.decisions,
                row.decisions_note,
                ns_per_dec,
                row.own
                    .map(|o| format!("{o:.1}"))
                    .unwrap_or_else(|| "-".into()),
                ns_per_own,
            );
        }
        if lm.executions < n {
            println!(
                "  (loom exhausted its preemption-bounded space after {} executions)",
                lm.executions
            );
        }
        let i2r = scalings[0].best_two();
        let i2p = scalings[1].best_two();
        println!(
            "  ratios, 1 worker:  interleave random / shuttle random = {:.2}x, interleave pct / shuttle pct = {:.2}x, interleave random / loom = {:.2}x",
            ir.execs_per_sec() / sr.execs_per_sec(),
            ip.execs_per_sec() / sp.execs_per_sec(),
            ir.execs_per_sec() / lm.execs_per_sec(),
        );
        println!(
            "  ratios, 2 workers: interleave random / shuttle random = {:.2}x, interleave pct / shuttle pct = {:.2}x, interleave random / loom = {:.2}x",
            i2r.execs_per_sec() / sr.execs_per_sec(),
            i2p.execs_per_sec() / sp.execs_per_sec(),
            i2r.execs_per_sec() / lm.execs_per_sec(),
        );
        let pairs = reps + 2;
        let paired_random = Paired::measure(
            pairs,
            || run_interleave("random", n, w.interleave),
            || run_shuttle_random(n, w.shuttle),
        );
        let paired_pct = Paired::measure(
            pairs,
            || run_interleave("pct:d=3", n, w.interleave),
            || run_shuttle_pct(n, w.shuttle),
        );
        println!(
            "  1 worker, {pairs} alternating pairs: interleave random / shuttle random = {paired_random}, interleave pct / shuttle pct = {paired_pct}"
        );
        let speedups: Vec<String> = scalings
            .iter()
            .map(|scaling| {
                let (best, low, high) = scaling.speedups();
                let pair = scaling.pair.iter().copied().fold(0.0, f64::max);
                format!(
                    "{} {best:.2}x ({low:.2}-{high:.2}; pair {pair:.2}x)",
                    scaling.spec
                )
            })
            .collect();
        println!("  x2/x1: {}", speedups.join(", "));
        println!("  load average: {}", load_average());
    }
}

/// `x` rounded, with thousands separated by commas.
pub fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Entry point shared by the `peers` binary and the `peers` bench.
pub fn main_from_env() {
    match Options::parse(std::env::args().skip(1)) {
        Ok(opts) => run(&opts),
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a timing test: checks that every workload is correct under every runner.
    #[test]
    fn every_workload_runs_under_every_tool() {
        for w in all_workloads() {
            assert_eq!(
                run_interleave("random", 20, w.interleave).executions,
                20,
                "{}",
                w.name
            );
            assert_eq!(
                run_interleave("pct:d=3", 20, w.interleave).executions,
                20,
                "{}",
                w.name
            );
            assert_eq!(
                run_shuttle_random(20, w.shuttle).executions,
                20,
                "{}",
                w.name
            );
            assert_eq!(run_shuttle_pct(20, w.shuttle).executions, 20, "{}", w.name);
            assert_eq!(run_loom(20, w.loom).executions, 20, "{}", w.name);
        }
    }

    #[test]
    fn options() {
        let p = |a: &[&str]| Options::parse(a.iter().map(|s| s.to_string()));
        assert_eq!(p(&["--bench"]).unwrap().executions, DEFAULT_EXECUTIONS);
        assert_eq!(p(&["--quick"]).unwrap().executions, QUICK_EXECUTIONS);
        assert_eq!(p(&["--quick", "--executions", "7"]).unwrap().executions, 7);
        assert_eq!(p(&["--executions=1_000"]).unwrap().executions, 1000);
        assert!(p(&["--async-only"]).unwrap().async_only);
        assert!(!p(&["--quick"]).unwrap().async_only);
        assert!(p(&["--workloads-only"]).unwrap().workloads_only);
        assert!(p(&["--bogus"]).is_err());
    }
}
