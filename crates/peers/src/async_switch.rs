//! What an async task switch costs under interleave's `future` module and under shuttle's, on
//! the same two workloads, with the same number of executions, in one run.
//!
//! # What it measures
//!
//! The workloads are written once, in the `async_workloads!` macro, and instantiated against
//! `interleave::future` and `shuttle::future` (`spawn`, `block_on`, `yield_now`, `JoinHandle`)
//! with each tool's own `sync::{Arc, Mutex}`:
//!
//! - **(y) yields**: [`TASKS`] tasks each `yield_now().await` [`YIELDS`] times; the main thread
//!   `block_on`s awaiting their handles. A yield is a task switch: the task stays runnable and
//!   gives the scheduler a choice.
//! - **(p) ping-pong**: two tasks hand a turn back and forth, [`ROUNDS`] turns each, through a
//!   `Mutex` holding whose turn it is and the waker of the task waiting for it: a task whose
//!   turn it is not stores its waker and returns `Pending`, and the other wakes it when it
//!   passes the turn. Every handoff is a task switch through a waker, which is what an async
//!   channel or `Notify` does under the hood.
//!
//! Each is run under interleave `random` and `pct:d=3` and shuttle's `RandomScheduler` and
//! `PctScheduler` (depth 3), seed 1, one OS thread, the fastest of
//! [`REPETITIONS`](crate::throughput::REPETITIONS) runs, like the throughput table.
//!
//! # How to read it
//!
//! `ns/switch` is wall time divided by executions times the workload's task switches per
//! execution ([`TASKS`] × [`YIELDS`] yields, or 2 × [`ROUNDS`] handoffs): the same denominator
//! for both tools, so it is the cost of the same work. `dec/exec` is interleave's scheduling
//! decisions per execution and `own` shuttle's `next_task` calls per execution (a separate
//! untimed run), for reference. The ratio is interleave's time per switch over shuttle's:
//! below 1.0 interleave is faster.
//!
//! It runs as the last section of `cargo bench -p interleave-peers --bench peers`; only this
//! section runs with
//! `cargo bench -p interleave-peers --bench peers -- --async-only [--executions N | --quick]`.

use crate::throughput::{
    best_of, run_interleave, run_shuttle_pct, run_shuttle_random, shuttle_own_decisions, Options,
    Run,
};

/// Tasks of workload (y).
pub const TASKS: u64 = 3;
/// Yields of each task in workload (y).
pub const YIELDS: u64 = 20;
/// Turns of each task in workload (p).
pub const ROUNDS: u64 = 20;

/// Writes the async workloads once against the runtime crate `$rt`.
macro_rules! async_workloads {
    ($module:ident, $rt:ident) => {
        /// The async workloads instantiated for one tool.
        pub mod $module {
            use std::task::{Poll, Waker};

            use ::$rt::future;
            use ::$rt::sync::{Arc, Mutex};

            use $crate::async_switch::{ROUNDS, TASKS, YIELDS};

            /// (y) `TASKS` tasks x `YIELDS` `yield_now().await`.
            pub fn yields() {
                future::block_on(async {
                    let tasks: Vec<_> = (0..TASKS)
                        .map(|_| {
                            future::spawn(async {
                                for _ in 0..YIELDS {
                                    future::yield_now().await;
                                }
                            })
                        })
                        .collect();
                    for task in tasks {
                        task.await.unwrap();
                    }
                })
            }

            /// Whose turn it is, and the waker of the task waiting for its turn.
            struct Turn {
                next: usize,
                waiting: [Option<Waker>; 2],
            }

            /// (p) two tasks pass a turn back and forth, `ROUNDS` turns each.
            pub fn ping_pong() {
                future::block_on(async {
                    let turn = Arc::new(Mutex::new(Turn {
                        next: 0,
                        waiting: [None, None],
                    }));
                    let players: Vec<_> = (0..2)
                        .map(|me| {
                            let turn = turn.clone();
                            future::spawn(async move {
                                for _ in 0..ROUNDS {
                                    std::future::poll_fn(|context| {
                                        let mut turn = turn.lock().unwrap();
                                        if turn.next == me {
                                            return Poll::Ready(());
                                        }
                                        turn.waiting[me] = Some(context.waker().clone());
                                        Poll::Pending
                                    })
                                    .await;
                                    let other = {
                                        let mut turn = turn.lock().unwrap();
                                        turn.next = 1 - me;
                                        turn.waiting[1 - me].take()
                                    };
                                    if let Some(other) = other {
                                        other.wake();
                                    }
                                }
                            })
                        })
                        .collect();
                    for player in players {
                        player.await.unwrap();
                    }
                    assert_eq!(turn.lock().unwrap().next, 0);
                })
            }
        }
    };
}

async_workloads!(on_interleave, interleave);
async_workloads!(on_shuttle, shuttle);

/// One async workload, as the two instantiations of the same source.
pub struct AsyncWorkload {
    /// Short name.
    pub name: &'static str,
    /// What it does.
    pub description: String,
    /// Task switches per execution: the denominator of `ns/switch`.
    pub switches: u64,
    /// The interleave instantiation.
    pub interleave: fn(),
    /// The shuttle instantiation.
    pub shuttle: fn(),
}

/// The two async workloads.
pub fn all_async_workloads() -> Vec<AsyncWorkload> {
    vec![
        AsyncWorkload {
            name: "(y) yields",
            description: format!("{TASKS} tasks x {YIELDS} yield_now().await"),
            switches: TASKS * YIELDS,
            interleave: on_interleave::yields,
            shuttle: on_shuttle::yields,
        },
        AsyncWorkload {
            name: "(p) ping-pong",
            description: format!(
                "2 tasks pass a turn {ROUNDS} times each through a Mutex and wakers"
            ),
            switches: 2 * ROUNDS,
            interleave: on_interleave::ping_pong,
            shuttle: on_shuttle::ping_pong,
        },
    ]
}

/// Nanoseconds per task switch of `run` for a workload with `switches` per execution.
fn ns_per_switch(run: &Run, switches: u64) -> f64 {
    run.time.as_secs_f64() * 1e9 / (run.executions.max(1) * switches) as f64
}

/// Runs both async workloads under both tools and prints their table to stdout.
pub fn run(opts: &Options) {
    let n = opts.executions;
    let reps = opts.repetitions;
    println!(
        "async task switches: interleave::future vs shuttle::future {}, same workload source",
        crate::throughput::SHUTTLE_VERSION
    );
    println!(
        "{n} executions per run, {reps} repetition(s) per runner, the fastest reported; seed 1, \
         one OS thread; ns/switch = time / (executions x task switches per execution)"
    );
    println!("ratio = interleave ns/switch / shuttle ns/switch (below 1.0: interleave faster)");
    for workload in all_async_workloads() {
        println!();
        println!(
            "{}: {} ({} task switches per execution)",
            workload.name, workload.description, workload.switches
        );
        let interleave_random = best_of(reps, || run_interleave("random", n, workload.interleave));
        let interleave_pct = best_of(reps, || run_interleave("pct:d=3", n, workload.interleave));
        let shuttle_random = best_of(reps, || run_shuttle_random(n, workload.shuttle));
        let shuttle_pct = best_of(reps, || run_shuttle_pct(n, workload.shuttle));
        let own_n = n.min(2_000);
        let own_random = shuttle_own_decisions(false, own_n, workload.shuttle);
        let own_pct = shuttle_own_decisions(true, own_n, workload.shuttle);
        println!(
            "  {:<20} {:>8} {:>10} {:>10} {:>9} {:>9}",
            "runner", "execs", "best time", "ns/switch", "dec/exec", "own"
        );
        let rows = [
            ("interleave random", &interleave_random, None),
            ("interleave pct:d=3", &interleave_pct, None),
            ("shuttle random", &shuttle_random, Some(own_random)),
            ("shuttle pct d=3", &shuttle_pct, Some(own_pct)),
        ];
        for (runner, run, own) in rows {
            let decisions = run
                .steps
                .map(|steps| format!("{:.1}", steps as f64 / run.executions.max(1) as f64))
                .unwrap_or_else(|| "-".into());
            let own = own
                .map(|own| format!("{own:.1}"))
                .unwrap_or_else(|| "-".into());
            println!(
                "  {:<20} {:>8} {:>9.3}s {:>10.1} {:>9} {:>9}",
                runner,
                run.executions,
                run.time.as_secs_f64(),
                ns_per_switch(run, workload.switches),
                decisions,
                own,
            );
        }
        println!(
            "  ratio interleave / shuttle (time per switch): random {:.2}, pct {:.2}",
            ns_per_switch(&interleave_random, workload.switches)
                / ns_per_switch(&shuttle_random, workload.switches),
            ns_per_switch(&interleave_pct, workload.switches)
                / ns_per_switch(&shuttle_pct, workload.switches),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a timing test: checks that every async workload runs clean under both tools.
    #[test]
    fn every_async_workload_runs_under_both_tools() {
        for workload in all_async_workloads() {
            for spec in ["random", "pct:d=3"] {
                let run = run_interleave(spec, 20, workload.interleave);
                assert_eq!(run.executions, 20, "{} {spec}", workload.name);
            }
            assert_eq!(run_shuttle_random(20, workload.shuttle).executions, 20);
            assert_eq!(run_shuttle_pct(20, workload.shuttle).executions, 20);
        }
    }
}
