//! The worker pool: OS threads that live for a whole exploration and run the executions of each
//! round the driver hands them, so a round costs no thread start-up and every worker keeps its
//! warm per-thread state (pooled coroutine stacks, the engine's recycled buffers, the signal
//! stack) from one round to the next.
//!
//! How a round is handed over: the driver publishes a [`Batch`] (the round's plans, one result
//! slot per plan, a claim counter and a count of executions still running) and wakes the
//! workers; every worker, the driver's own thread included, claims the next plan with one
//! `fetch_add` on the claim counter, runs it and writes its summary into that plan's slot. The
//! last worker to finish an execution wakes the driver, which reads the slots in index order.
//! Per execution that is two uncontended atomic read-modify-writes and two uncontended slot
//! locks; per round, one wake-up of each worker and one of the driver. A worker that finds the
//! round exhausted spins briefly for the next one before it parks, because the driver often
//! publishes it within a microsecond (observing and planning a round is cheap next to running
//! it), and waking a parked thread costs microseconds more.
//!
//! Determinism does not depend on this file: the driver plans and observes in index order
//! whatever the order in which the workers finish (see `rounds.rs`).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::Thread;

use super::*;

/// How many times a waiting thread polls before it parks. A poll is a load and a spin-loop
/// hint (a few to tens of nanoseconds), so this is a microsecond or a few: enough for a round
/// handed over at once, short enough not to burn a core the machine's other users need. On the
/// shared 2-core machine, 2,000 polls cost 4-10% more CPU per execution with 2 workers than
/// with 1 (spinning while the other worker was descheduled); no spinning at all, 0-4%.
const SPINS_BEFORE_PARKING: u32 = 100;

/// One round of executions, shared by the driver and the workers.
struct Batch {
    plans: Vec<Mutex<Option<Plan>>>,
    /// The summary of each plan, by position; `None` for an execution skipped after a failure.
    summaries: Vec<Mutex<Option<Summary>>>,
    /// The position of the next plan to claim.
    next: AtomicUsize,
    /// Executions claimed or not yet claimed that have not finished.
    unfinished: AtomicUsize,
    /// The lowest index of a failing execution so far, with `stop_early`.
    first_failure: AtomicU64,
    stop_early: bool,
    /// The payload of a panic that escaped an execution on a worker, re-raised by the driver.
    escaped: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Batch {
    /// Claims and runs plans until none is left; wakes `driver` when it finished the last one.
    fn work(&self, run: &Run<'_>, driver: &Thread) {
        loop {
            let position = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(plan) = self.plans.get(position) else {
                return;
            };
            let taken = plan.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some((index, schedule, keep_trace)) = taken {
                let skipped = self.stop_early && index > self.first_failure.load(Ordering::Relaxed);
                if !skipped {
                    match catch_unwind(AssertUnwindSafe(|| {
                        run_one(run, index, schedule, keep_trace)
                    })) {
                        Ok(summary) => {
                            if summary.failure.is_some() {
                                self.first_failure.fetch_min(index, Ordering::Relaxed);
                            }
                            *self.summaries[position]
                                .lock()
                                .unwrap_or_else(|p| p.into_inner()) = Some(summary);
                        }
                        Err(payload) => {
                            *self.escaped.lock().unwrap_or_else(|p| p.into_inner()) = Some(payload);
                        }
                    }
                }
            }
            // AcqRel: the driver's acquire load of zero sees every summary written before.
            if self.unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
                driver.unpark();
            }
        }
    }
}

/// What the driver and the workers share for the whole exploration.
struct Shared {
    /// The current round, replaced by the driver once the previous one is over.
    batch: Mutex<Option<Arc<Batch>>>,
    /// Bumped each time a round is published, so a worker knows it has not seen it yet.
    generation: AtomicU64,
    closed: std::sync::atomic::AtomicBool,
}

/// Persistent workers for one exploration; see the module documentation.
pub(super) struct Pool<'r, 'f> {
    run: &'r Run<'f>,
    shared: &'r Shared,
    helpers: Vec<Thread>,
}

/// Runs `body` with a pool of `workers` threads: the calling thread and `workers - 1` helpers,
/// which end when `body` returns.
pub(super) fn with_pool<R>(
    run: &Run<'_>,
    workers: usize,
    body: impl FnOnce(&mut Pool<'_, '_>) -> R,
) -> R {
    let shared = Shared {
        batch: Mutex::new(None),
        generation: AtomicU64::new(0),
        closed: std::sync::atomic::AtomicBool::new(false),
    };
    let driver = std::thread::current();
    std::thread::scope(|scope| {
        let helpers = (1..workers.max(1))
            .map(|_| {
                let (shared, driver) = (&shared, driver.clone());
                scope
                    .spawn(move || help(run, shared, &driver))
                    .thread()
                    .clone()
            })
            .collect();
        let mut pool = Pool {
            run,
            shared: &shared,
            helpers,
        };
        // The helpers must end even when `body` unwinds, or the scope would wait for them.
        let result = catch_unwind(AssertUnwindSafe(|| body(&mut pool)));
        shared.closed.store(true, Ordering::Release);
        for helper in &pool.helpers {
            helper.unpark();
        }
        match result {
            Ok(result) => result,
            Err(payload) => resume_unwind(payload),
        }
    })
}

/// A helper's life: wait for a round it has not seen, work on it, repeat until closed.
fn help(run: &Run<'_>, shared: &Shared, driver: &Thread) {
    let mut seen = 0;
    loop {
        let mut spins = 0;
        let generation = loop {
            if shared.closed.load(Ordering::Acquire) {
                return;
            }
            let generation = shared.generation.load(Ordering::Acquire);
            if generation != seen {
                break generation;
            }
            if spins < SPINS_BEFORE_PARKING {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        };
        seen = generation;
        let batch = shared
            .batch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(batch) = batch {
            batch.work(run, driver);
        }
    }
}

impl Pool<'_, '_> {
    /// Runs `plans` on every worker (on the calling thread alone unless `several`) and returns
    /// their summaries in index order. With `stop_early`, executions after a failing one may be
    /// skipped.
    pub(super) fn execute(
        &mut self,
        plans: Vec<Plan>,
        stop_early: bool,
        several: bool,
    ) -> Vec<Summary> {
        if !several || self.helpers.is_empty() || plans.len() <= 1 {
            return execute_here(self.run, plans, stop_early);
        }
        let count = plans.len();
        let batch = Arc::new(Batch {
            plans: plans.into_iter().map(|p| Mutex::new(Some(p))).collect(),
            summaries: (0..count).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            unfinished: AtomicUsize::new(count),
            first_failure: AtomicU64::new(u64::MAX),
            stop_early,
            escaped: Mutex::new(None),
        });
        *self.shared.batch.lock().unwrap_or_else(|p| p.into_inner()) = Some(batch.clone());
        self.shared.generation.fetch_add(1, Ordering::Release);
        for helper in &self.helpers {
            helper.unpark();
        }
        let driver = std::thread::current();
        batch.work(self.run, &driver);
        let mut spins = 0;
        while batch.unfinished.load(Ordering::Acquire) != 0 {
            if spins < SPINS_BEFORE_PARKING {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        }
        if let Some(payload) = batch
            .escaped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            resume_unwind(payload);
        }
        batch
            .summaries
            .iter()
            .filter_map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
            .collect()
    }
}

/// Runs `plans` one after another on the calling thread.
fn execute_here(run: &Run<'_>, plans: Vec<Plan>, stop_early: bool) -> Vec<Summary> {
    let mut summaries = Vec::with_capacity(plans.len());
    for (index, schedule, keep_trace) in plans {
        let summary = run_one(run, index, schedule, keep_trace);
        let failed = summary.failure.is_some();
        summaries.push(summary);
        if failed && stop_early {
            break;
        }
    }
    summaries
}
