//! Executions to exhaust: how many executions interleave's `dpor` and loom's model checker
//! each need to explore the whole search space of the same loom-style programs, unbounded and
//! with a preemption bound of 2 (`dpor:c=2`, what `interleave-loom` maps loom's
//! `preemption_bound` to).
//!
//! The programs are written once, in the `exhaustible!` macro, and instantiated against
//! `interleave` and `loom`, so both tools run the same source: two to four threads with
//! spin-waits, a spin lock, channels, a barrier built from a mutex and a condition variable
//! (loom 0.7 has no `Barrier`), and lock-protected counters. Both explore under their weak
//! memory models (loom's C11 model, interleave's default).
//!
//! | tool | how |
//! |---|---|
//! | interleave `dpor` | `Builder::new().ignore_environment().strategy("dpor").executions(LIMIT).workers(1).explore(f)`; the report must say it covered the whole search space |
//! | interleave `dpor:c=2` | the same with `strategy("dpor:c=2")`; the report must say it covered every schedule of at most 2 preemptions |
//! | loom | `loom::model::Builder::new()` with no preemption bound, `check(f)`; executions are counted by a static counter inside the model closure |
//! | loom, bound 2 | the same with `preemption_bound = Some(2)` |
//!
//! Each tool runs every program to the end of its search (up to [`LIMIT`] executions for
//! interleave; loom has no such cap here, and gives up on its own on spin loops it cannot
//! bound), and the table prints the counts and whether interleave needed no more than loom,
//! unbounded and bounded. The two tools count preemptions alike (a switch away from a thread
//! that could go on; a yield makes the switch free), but loom's schedule points and interleave's
//! steps differ, so the bounded rows compare searches of about, not exactly, the same space.
//! It also prints each tool's executions per second on the program: `dpor`'s and loom's over
//! their whole unbounded searches, and those of plain `dfs` (`strategy("dfs")`, no reduction)
//! over at most [`DFS_LIMIT`] executions, which is where it stops on the larger programs.

use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The execution budget of interleave's search: far more than any program here needs.
pub const LIMIT: u64 = 1_000_000;

/// Writes the programs once against the std-shaped API of the runtime crate `$rt`.
#[macro_export]
macro_rules! exhaustible {
    ($module:ident, $rt:ident) => {
        /// The exhaustion programs instantiated for one tool.
        pub mod $module {
            use ::$rt::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
            use ::$rt::sync::mpsc;
            use ::$rt::sync::{Arc, Condvar, Mutex};
            use ::$rt::thread;

            /// Spins until `flag` is set, yielding between tries.
            fn spin_until(flag: &AtomicBool) {
                while !flag.load(Ordering::Acquire) {
                    thread::yield_now();
                }
            }

            /// `spinners` threads (the main thread among them) spin on a flag that one more
            /// thread raises after publishing a value; each spinner then reads the value.
            fn spin_wait(spinners: usize) {
                let ready = Arc::new(AtomicBool::new(false));
                let data = Arc::new(AtomicUsize::new(0));
                let mut handles: Vec<_> = (1..spinners)
                    .map(|_| {
                        let (ready, data) = (ready.clone(), data.clone());
                        thread::spawn(move || {
                            spin_until(&ready);
                            assert_eq!(data.load(Ordering::Relaxed), 1);
                        })
                    })
                    .collect();
                handles.push({
                    let (ready, data) = (ready.clone(), data.clone());
                    thread::spawn(move || {
                        data.store(1, Ordering::Relaxed);
                        ready.store(true, Ordering::Release);
                    })
                });
                spin_until(&ready);
                assert_eq!(data.load(Ordering::Relaxed), 1);
                for handle in handles {
                    handle.join().unwrap();
                }
            }

            /// A flag raised by one thread, spun on by the main thread: 2 threads.
            pub fn spin_wait_2() {
                spin_wait(1);
            }

            /// The same with two spinners: 3 threads.
            pub fn spin_wait_3() {
                spin_wait(2);
            }

            /// Two threads take a test-and-set spin lock (yielding while it is taken) to add
            /// to a counter.
            pub fn spin_lock() {
                let locked = Arc::new(AtomicBool::new(false));
                let count = Arc::new(AtomicUsize::new(0));
                let add = |locked: &AtomicBool, count: &AtomicUsize| {
                    while locked.swap(true, Ordering::Acquire) {
                        thread::yield_now();
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                    locked.store(false, Ordering::Release);
                };
                let worker = {
                    let (locked, count) = (locked.clone(), count.clone());
                    thread::spawn(move || add(&locked, &count))
                };
                add(&locked, &count);
                worker.join().unwrap();
                assert_eq!(count.load(Ordering::Relaxed), 2);
            }

            /// `senders` threads each send `messages` numbers to the main thread, which
            /// receives them all.
            fn channel(senders: usize, messages: usize) {
                let (tx, rx) = mpsc::channel();
                let handles: Vec<_> = (0..senders)
                    .map(|s| {
                        let tx = tx.clone();
                        thread::spawn(move || {
                            for m in 0..messages {
                                tx.send(s * messages + m).unwrap();
                            }
                        })
                    })
                    .collect();
                let mut sum = 0;
                for _ in 0..senders * messages {
                    sum += rx.recv().unwrap();
                }
                let n = senders * messages;
                assert_eq!(sum, n * (n - 1) / 2);
                for handle in handles {
                    handle.join().unwrap();
                }
            }

            /// Three senders, one message each: 4 threads.
            pub fn channel_3_senders() {
                channel(3, 1);
            }

            /// Two senders, two messages each: 3 threads.
            pub fn channel_2_senders_2_messages() {
                channel(2, 2);
            }

            /// A barrier of `parties` threads (the main thread among them) built from a mutex
            /// and a condition variable, passed `rounds` times; each thread counts its passes.
            fn condvar_barrier(parties: usize, rounds: usize) {
                // (arrived in this generation, generation)
                let state = Arc::new((Mutex::new((0usize, 0usize)), Condvar::new()));
                let passes = Arc::new(AtomicUsize::new(0));
                let wait = move |state: &(Mutex<(usize, usize)>, Condvar)| {
                    let (lock, all_arrived) = state;
                    let mut guard = lock.lock().unwrap();
                    let generation = guard.1;
                    guard.0 += 1;
                    if guard.0 == parties {
                        guard.0 = 0;
                        guard.1 += 1;
                        all_arrived.notify_all();
                    } else {
                        while guard.1 == generation {
                            guard = all_arrived.wait(guard).unwrap();
                        }
                    }
                };
                let handles: Vec<_> = (1..parties)
                    .map(|_| {
                        let (state, passes) = (state.clone(), passes.clone());
                        thread::spawn(move || {
                            for _ in 0..rounds {
                                wait(&state);
                                passes.fetch_add(1, Ordering::Relaxed);
                            }
                        })
                    })
                    .collect();
                for _ in 0..rounds {
                    wait(&state);
                    passes.fetch_add(1, Ordering::Relaxed);
                }
                for handle in handles {
                    handle.join().unwrap();
                }
                assert_eq!(passes.load(Ordering::Relaxed), parties * rounds);
            }

            /// A mutex-and-condvar barrier of 2 threads, passed twice.
            pub fn barrier_2_twice() {
                condvar_barrier(2, 2);
            }

            /// A mutex-and-condvar barrier of 3 threads, passed once.
            pub fn barrier_3() {
                condvar_barrier(3, 1);
            }

            /// `threads` threads each add to a counter under one mutex.
            fn mutex_counter(threads: usize) {
                let counter = Arc::new(Mutex::new(0));
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        let counter = counter.clone();
                        thread::spawn(move || *counter.lock().unwrap() += 1)
                    })
                    .collect();
                for handle in handles {
                    handle.join().unwrap();
                }
                assert_eq!(*counter.lock().unwrap(), threads);
            }

            /// Three threads increment a mutex-protected counter: 4 threads.
            pub fn mutex_counter_3() {
                mutex_counter(3);
            }

            /// Two threads each increment an atomic twice and read it.
            pub fn atomic_counter() {
                let counter = Arc::new(AtomicUsize::new(0));
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        let counter = counter.clone();
                        thread::spawn(move || {
                            counter.fetch_add(1, Ordering::AcqRel);
                            counter.fetch_add(1, Ordering::AcqRel);
                            counter.load(Ordering::Acquire)
                        })
                    })
                    .collect();
                for handle in handles {
                    assert!(handle.join().unwrap() >= 2);
                }
                assert_eq!(counter.load(Ordering::Acquire), 4);
            }
        }
    };
}

exhaustible!(on_interleave, interleave);
exhaustible!(on_loom, loom);

/// One program, as its two instantiations.
pub struct Program {
    /// Short name.
    pub name: &'static str,
    /// The interleave instantiation.
    pub interleave: fn(),
    /// The loom instantiation.
    pub loom: fn(),
}

/// The programs of the table.
pub fn all_programs() -> Vec<Program> {
    macro_rules! program {
        ($name:literal, $f:ident) => {
            Program {
                name: $name,
                interleave: on_interleave::$f,
                loom: on_loom::$f,
            }
        };
    }
    vec![
        program!("spin-wait, 2 threads", spin_wait_2),
        program!("spin-wait, 3 threads", spin_wait_3),
        program!("spin lock, 2 threads", spin_lock),
        program!("channel, 3 senders", channel_3_senders),
        program!("channel, 2 senders x 2", channel_2_senders_2_messages),
        program!("condvar barrier, 2 x 2", barrier_2_twice),
        program!("condvar barrier, 3", barrier_3),
        program!("mutex counter, 3 threads", mutex_counter_3),
        program!("atomic counter, 2 x 2", atomic_counter),
    ]
}

/// What one tool's run of a program to the end of its search took.
#[derive(Clone, Copy, Debug)]
pub struct Exhaust {
    /// Executions run.
    pub executions: u64,
    /// Whether the search covered the whole space (for loom: it finished without giving up).
    pub exhausted: bool,
    /// Wall time of the run.
    pub time: Duration,
}

impl Exhaust {
    /// Executions per second.
    pub fn execs_per_sec(&self) -> f64 {
        self.executions as f64 / self.time.as_secs_f64()
    }
}

/// Runs `f` under interleave's systematic `strategy` (`dpor`, `dpor:c=N` or `dfs`) until it
/// covers its whole search space (under a bound: every schedule within it) or has run `limit`
/// executions.
pub fn interleave_exhaust(strategy: &str, limit: u64, f: fn()) -> Exhaust {
    let start = Instant::now();
    let report = interleave::Builder::new()
        .ignore_environment()
        .strategy(strategy.parse().expect("a systematic strategy"))
        .executions(limit)
        .workers(1)
        .explore(f)
        .unwrap_or_else(|e| panic!("interleave {strategy}: {e}"));
    let time = start.elapsed();
    if let Some(failure) = report.failures.first() {
        panic!("interleave {strategy} found a failure in a correct program:\n{failure}");
    }
    Exhaust {
        executions: report.executions,
        exhausted: report.stat("covered").is_some_and(|covered| {
            covered == "the whole search space" || covered.starts_with("every schedule of at most")
        }),
        time,
    }
}

static LOOM_EXECUTIONS: AtomicU64 = AtomicU64::new(0);

/// The message of the first panic of a loom run (see [`loom_exhaust`]).
static LOOM_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// How loom's panic begins when it gives up on a model (its branch limit).
const LOOM_GIVES_UP: &str = "Model exceeded maximum number of branches";

/// How many executions loom's model checker runs to exhaust `f` with `preemption_bound`, and
/// how long it took; `exhausted` is false when it gave up (it panics when an execution exceeds
/// its maximum number of branches, as unbounded spin loops of three threads do).
pub fn loom_exhaust(f: fn(), preemption_bound: Option<usize>) -> Exhaust {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    builder.max_permutations = None;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    LOOM_EXECUTIONS.store(0, StdOrdering::SeqCst);
    let start = Instant::now();
    // Giving up is loom's panic, expected and counted here. The hook in force would print it
    // with a backtrace, and by this point of the bench it is shuttle's, which also reports it
    // as a failed shuttle task ("Tried to get ExecutionState"). So the run's hook only keeps
    // the first panic message (loom also unwinds its threads with panics that carry none),
    // which is printed when the run did not finish and it is not loom giving up: a failure
    // loom finds in one of these correct programs must not pass for a give-up.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|m| m.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        if let Some(message) = message {
            LOOM_PANIC
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(message);
        }
    }));
    let finished = std::panic::catch_unwind(|| {
        builder.check(move || {
            LOOM_EXECUTIONS.fetch_add(1, StdOrdering::Relaxed);
            f()
        })
    });
    std::panic::set_hook(hook);
    let panic = LOOM_PANIC
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(message) = panic.filter(|m| finished.is_err() && !m.starts_with(LOOM_GIVES_UP)) {
        eprintln!("loom failed, not only gave up: {message}");
    }
    Exhaust {
        executions: LOOM_EXECUTIONS.load(StdOrdering::SeqCst),
        exhausted: finished.is_ok(),
        time: start.elapsed(),
    }
}

/// One comparison: interleave's count (`>N` when it did not exhaust) against loom's (`gave up
/// (N)` when it gave up), and whether interleave needed no more executions than loom.
fn compare(interleave: &Exhaust, loom: &Exhaust) -> (String, String, bool) {
    let interleave_text = count(interleave);
    if loom.exhausted {
        (
            interleave_text,
            loom.executions.to_string(),
            interleave.exhausted && interleave.executions <= loom.executions,
        )
    } else {
        (
            interleave_text,
            format!("gave up ({})", loom.executions),
            interleave.exhausted,
        )
    }
}

/// A run's executions, `>N` when it stopped before the end of its search.
fn count(run: &Exhaust) -> String {
    if run.exhausted {
        run.executions.to_string()
    } else {
        format!(">{}", run.executions)
    }
}

/// The preemption bound of the bounded columns.
pub const BOUND: usize = 2;

/// The executions `dfs` may run per program: plain depth-first search has no partial-order
/// reduction, so on the larger programs it would run for minutes; its executions per second
/// are measured on what it runs.
pub const DFS_LIMIT: u64 = 20_000;

/// Prints the table: every program's executions to exhaust under `dpor` and loom, unbounded
/// and with a preemption bound of [`BOUND`], and the executions per second of `dpor`, `dfs`
/// (up to [`DFS_LIMIT`]) and loom on it, unbounded.
pub fn run() {
    let start = Instant::now();
    println!(
        "executions to exhaust: interleave dpor vs loom {} (weak memory models), unbounded and \
         with preemption bound {BOUND}; execs/s of dpor, dfs (at most {DFS_LIMIT} executions) \
         and loom, unbounded",
        crate::throughput::LOOM_VERSION
    );
    println!(
        "  {:<26} {:>8} {:>16} {:>4}  {:>8} {:>16} {:>4}  {:>9} {:>7} {:>9} {:>9}",
        "program",
        "dpor",
        "loom",
        "<=",
        "dpor:c=2",
        "loom bound 2",
        "<=",
        "dpor ex/s",
        "dfs",
        "dfs ex/s",
        "loom ex/s"
    );
    let bounded = format!("dpor:c={BOUND}");
    for program in all_programs() {
        let dpor = interleave_exhaust("dpor", LIMIT, program.interleave);
        let loom = loom_exhaust(program.loom, None);
        let (dpor_text, loom_text, unbounded_ok) = compare(&dpor, &loom);
        let (dpor_bounded, loom_bounded, bounded_ok) = compare(
            &interleave_exhaust(&bounded, LIMIT, program.interleave),
            &loom_exhaust(program.loom, Some(BOUND)),
        );
        let dfs = interleave_exhaust("dfs", DFS_LIMIT, program.interleave);
        let yes = |ok: bool| if ok { "yes" } else { "no" };
        println!(
            "  {:<26} {:>8} {:>16} {:>4}  {:>8} {:>16} {:>4}  {:>9} {:>7} {:>9} {:>9}",
            program.name,
            dpor_text,
            loom_text,
            yes(unbounded_ok),
            dpor_bounded,
            loom_bounded,
            yes(bounded_ok),
            crate::throughput::thousands(dpor.execs_per_sec()),
            count(&dfs),
            crate::throughput::thousands(dfs.execs_per_sec()),
            crate::throughput::thousands(loom.execs_per_sec()),
        );
    }
    println!("  ({:.1}s)", start.elapsed().as_secs_f64());
}
