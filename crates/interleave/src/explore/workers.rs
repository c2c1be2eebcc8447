//! The worker pool: OS threads that live for a whole exploration and run the executions of each
//! round, so a round costs no thread start-up and every worker keeps its warm per-thread state
//! (pooled coroutine stacks, the engine's recycled buffers, the signal stack) from one round to
//! the next.
//!
//! How a round is handed over: the driver opens the round in the [`Planner`] and publishes a
//! [`Batch`] (one result slot per execution and a count of executions not yet finished), then
//! wakes the workers. Every worker, the driver's own thread included, claims executions from
//! the planner, which plans them under its lock on the claiming thread, runs them and writes
//! their summaries into their slots. A claim is a share of what is left of the round that
//! shrinks as the round drains (guided self-scheduling), capped at [`MAX_CLAIM`] executions: a
//! few claims per worker and round touch the shared lock and counters, and the last claims,
//! single executions, even out the workers' finishing times. Once the round is fully claimed,
//! the driver hands the summaries to the strategy in index order as their slots fill, while the
//! other workers finish the round's last executions; the last worker to finish wakes it.
//!
//! Waiting: a worker that finds the round fully claimed polls for the next one, then yields its
//! core between checks, for up to [`SPIN_BEFORE_PARKING`] before it parks, and so does the
//! driver when no slot it can observe is filled. Rounds of short executions end every few hundred
//! microseconds; parking at each end and being woken by a futex call left the helper idle for
//! 13-27% of the exploration (atomic workload, PCT). The wait before parking is as long as a
//! park and its wake-up cost, so it at most doubles the cost of a wait that parking would have
//! had anyway.
//!
//! Determinism does not depend on this file: the planner plans in index order and the driver
//! observes in index order, whatever the order in which the workers finish (see `rounds.rs`).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::*;

/// The most executions one claim plans. A claim plans under the planner's lock, so the other
/// workers' first claims of a round wait for the first one's plans: a cap keeps that wait to a
/// few executions' planning where a claim of a quarter of a 64-execution round made it 16.
const MAX_CLAIM: u64 = 6;

/// How long a waiting thread polls and yields before it parks: about what a park and the
/// wake-up that ends it cost on these machines.
const SPIN_BEFORE_PARKING: Duration = Duration::from_micros(30);

/// A thread's wait for a condition another thread makes true: poll and yield for
/// [`SPIN_BEFORE_PARKING`], then park until unparked (the condition is checked again at every
/// return, so a stray unpark is harmless).
struct Waiting {
    polls: u32,
    since: Option<Instant>,
}

impl Waiting {
    fn new() -> Waiting {
        Waiting {
            polls: 0,
            since: None,
        }
    }

    /// Waits a little longer: 64 polls first, then a yield of the core at each call while the
    /// spin lasts, a park after.
    fn pause(&mut self) {
        if self.polls < 64 {
            self.polls += 1;
            std::hint::spin_loop();
            return;
        }
        // Yielding rather than polling: when the machine has more runnable threads than cores
        // (parallel tests, each with a worker per core), the thread this one waits for may be
        // the one the yield lets run; on an idle machine it returns at once.
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() < SPIN_BEFORE_PARKING {
            std::thread::yield_now();
        } else {
            std::thread::park();
        }
    }
}

/// What became of one execution of a round.
enum Slot {
    /// Not finished yet (or not claimed yet).
    Pending,
    Ran(Summary),
    /// Finished without running: not planned, skipped after a failure, or its run panicked.
    NotRun,
}

/// One round of executions, shared by the driver and the workers.
struct Batch {
    /// The planner's number for this round.
    round: u64,
    /// The summary of each execution, by position.
    slots: Mutex<Vec<Slot>>,
    /// Executions claimed or not yet claimed that have not finished.
    unfinished: AtomicUsize,
    /// How many workers share the round, which sets the size of a claim.
    workers: u64,
    /// The lowest index of a failing execution so far, with `stop_early`.
    first_failure: AtomicU64,
    stop_early: bool,
    /// The payload of a panic that escaped an execution on a worker, re-raised by the driver.
    escaped: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Batch {
    /// Claims and runs executions until the round has none left; wakes `driver` when it
    /// finished the last one.
    fn work(&self, run: &Run<'_>, planning: &Mutex<Planner<'_>>, driver: &Thread) {
        let mut finished = Vec::new();
        loop {
            let claim = {
                let mut planner = lock(planning);
                let left = planner.unclaimed();
                if planner.round != self.round || left == 0 {
                    return;
                }
                match catch_unwind(AssertUnwindSafe(|| {
                    planner.claim((left / (2 * self.workers)).min(MAX_CLAIM))
                })) {
                    Ok(claim) => claim,
                    Err(payload) => {
                        // The strategy panicked while planning (a bug in it). Nobody runs the
                        // rest of the round, which counts as finished, so the driver wakes and
                        // re-raises the panic with its own message.
                        let abandoned = planner.abandon_round();
                        drop(planner);
                        *lock(&self.escaped) = Some(payload);
                        self.finish(abandoned, driver);
                        return;
                    }
                }
            };
            for (position, (index, schedule, keep_trace)) in claim.plans {
                if self.stop_early && index > self.first_failure.load(Ordering::Relaxed) {
                    continue;
                }
                match catch_unwind(AssertUnwindSafe(|| {
                    run_one(run, index, schedule, keep_trace)
                })) {
                    Ok(summary) => {
                        if summary.failed() {
                            self.first_failure.fetch_min(index, Ordering::Relaxed);
                        }
                        finished.push((position, summary));
                    }
                    Err(payload) => *lock(&self.escaped) = Some(payload),
                }
            }
            let mut slots = lock(&self.slots);
            for slot in &mut slots[claim.positions.clone()] {
                *slot = Slot::NotRun;
            }
            for (position, summary) in finished.drain(..) {
                slots[position] = Slot::Ran(summary);
            }
            drop(slots);
            self.finish(claim.positions.len(), driver);
        }
    }

    /// Counts `executions` more as finished; wakes `driver` when they were the last.
    fn finish(&self, executions: usize, driver: &Thread) {
        // AcqRel: the driver's acquire load of zero sees every summary written before.
        if executions > 0 && self.unfinished.fetch_sub(executions, Ordering::AcqRel) == executions {
            driver.unpark();
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
pub(super) struct Pool<'r, 'f, 'p, 's> {
    run: &'r Run<'f>,
    planning: &'p Mutex<Planner<'s>>,
    shared: &'r Shared,
    helpers: Vec<Thread>,
}

/// Runs `body` with a pool of `workers` threads that run the executions `planning` plans: the
/// calling thread and `workers - 1` helpers, which end when `body` returns.
pub(super) fn with_pool<R>(
    run: &Run<'_>,
    planning: &Mutex<Planner<'_>>,
    workers: usize,
    body: impl FnOnce(&mut Pool<'_, '_, '_, '_>) -> R,
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
                // Named after the exploration, its test and its number in the test, so that
                // what the engine derives from the name (the exploration a replay token
                // belongs to) is the same on every worker.
                let mut builder = std::thread::Builder::new();
                if let Some(label) = &run.test {
                    builder = builder.name(label.clone());
                }
                builder
                    .spawn_scoped(scope, move || help(run, planning, shared, &driver))
                    .expect("the operating system could not start a worker thread")
                    .thread()
                    .clone()
            })
            .collect();
        let mut pool = Pool {
            run,
            planning,
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
fn help(run: &Run<'_>, planning: &Mutex<Planner<'_>>, shared: &Shared, driver: &Thread) {
    let mut seen = 0;
    loop {
        let mut waiting = Waiting::new();
        let generation = loop {
            if shared.closed.load(Ordering::Acquire) {
                return;
            }
            let generation = shared.generation.load(Ordering::Acquire);
            if generation != seen {
                break generation;
            }
            waiting.pause();
        };
        seen = generation;
        let batch = lock(&shared.batch).clone();
        if let Some(batch) = batch {
            batch.work(run, planning, driver);
        }
    }
}

impl Pool<'_, '_, '_, '_> {
    /// Runs the round the planner has open on every worker (on the calling thread alone unless
    /// `several`) and hands its summaries to `observe` in index order until it says stop, which
    /// `execute` then returns. With `stop_early`, executions after a failing one may be skipped;
    /// they are planned all the same, so the strategy's state does not depend on the number of
    /// workers.
    ///
    /// With several workers, the driver observes the summaries in index order as they arrive,
    /// once the round is fully claimed (every plan of the round made, as the strategy's
    /// contract requires before it observes), while the last executions still run: only the
    /// summaries of those remain for the serial part between rounds.
    pub(super) fn execute(
        &mut self,
        stop_early: bool,
        several: bool,
        observe: &mut dyn FnMut(Summary) -> Flow,
    ) -> Flow {
        let (count, round) = {
            let planner = lock(self.planning);
            (planner.round_len(), planner.round)
        };
        if !several || self.helpers.is_empty() || count <= 1 {
            return execute_here(self.run, self.planning, stop_early, observe);
        }
        let batch = Arc::new(Batch {
            round,
            slots: Mutex::new((0..count).map(|_| Slot::Pending).collect()),
            unfinished: AtomicUsize::new(count),
            workers: self.helpers.len() as u64 + 1,
            first_failure: AtomicU64::new(u64::MAX),
            stop_early,
            escaped: Mutex::new(None),
        });
        *lock(&self.shared.batch) = Some(batch.clone());
        self.shared.generation.fetch_add(1, Ordering::Release);
        for helper in &self.helpers {
            helper.unpark();
        }
        let driver = std::thread::current();
        batch.work(self.run, self.planning, &driver);
        let mut flow = Flow::Continue;
        let mut observed = 0;
        let mut ready = Vec::new();
        let mut waiting = Waiting::new();
        loop {
            let finished = batch.unfinished.load(Ordering::Acquire) == 0;
            {
                let mut slots = lock(&batch.slots);
                while let Some(slot) = slots.get_mut(observed) {
                    if matches!(slot, Slot::Pending) {
                        break;
                    }
                    if let Slot::Ran(summary) = std::mem::replace(slot, Slot::NotRun) {
                        ready.push(summary);
                    }
                    observed += 1;
                }
            }
            if !ready.is_empty() {
                for summary in ready.drain(..) {
                    if flow == Flow::Continue {
                        flow = observe(summary);
                    }
                }
                waiting = Waiting::new();
            } else if finished {
                break;
            } else {
                waiting.pause();
            }
        }
        if let Some(payload) = lock(&batch.escaped).take() {
            resume_unwind(payload);
        }
        flow
    }
}

/// Plans and runs the open round's executions one after another on the calling thread, then
/// hands their summaries to `observe` in index order until it says stop.
fn execute_here(
    run: &Run<'_>,
    planning: &Mutex<Planner<'_>>,
    stop_early: bool,
    observe: &mut dyn FnMut(Summary) -> Flow,
) -> Flow {
    let mut summaries = Vec::new();
    let mut failed = false;
    loop {
        let plan = {
            let mut planner = lock(planning);
            if planner.unclaimed() == 0 {
                break;
            }
            planner.claim_one()
        };
        if let Some((index, schedule, keep_trace)) = plan {
            if failed && stop_early {
                continue;
            }
            let summary = run_one(run, index, schedule, keep_trace);
            failed |= summary.failed();
            summaries.push(summary);
        }
    }
    for summary in summaries {
        if observe(summary) == Flow::Stop {
            return Flow::Stop;
        }
    }
    Flow::Continue
}
