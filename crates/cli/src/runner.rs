//! Runs jobs on worker threads and turns each into a [`Record`].
//!
//! Interleave jobs run in-process, one exploration per job on one worker (the exploration's own
//! result does not depend on threads). Peer jobs (in a build with the `peers` feature) go to a
//! per-thread worker process (see `interleave_peers::worker`). Jobs are handed out in order from a shared counter and their
//! records are put back in job order, so the output does not depend on `--jobs`. Jobs are made
//! from the plan as they are handed out, and records are kept only for jobs that ran, so memory
//! follows the work done, not the size of the run. Setting the stop flag (Ctrl-C) ends the
//! hand-out; the jobs already running finish.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use interleave::{Builder, Failure, FailureKind, RaceMode};
#[cfg(feature = "peers")]
use crate::peers::{worker, PeerSpec};
use interleave_programs::{Program, Surface, Variant};

use crate::plan::{Column, Job, JobPlan};
use crate::results::{Record, Shard};

/// The hidden subcommand that makes this binary a peer worker.
#[cfg(feature = "peers")]
pub const PEER_WORKER_COMMAND: &str = "peer-worker";

/// The failure kind that exposes `program`'s declared bug, by name.
pub fn expected_kind(program: &Program) -> &'static str {
    match program.bug.surface() {
        Surface::Panic => "panic",
        Surface::Deadlock => "deadlock",
        Surface::DataRace => "data-race",
    }
}

/// A failure kind in kebab case (`data-race`, `step-bound-exceeded`), as records store it.
fn kind_name(kind: FailureKind) -> String {
    kind.to_string().replace(' ', "-")
}

/// An interleave builder for `program`: races are failures when the declared bug is a race or
/// the program is the fixed twin (which must be race-free), and warnings otherwise (several
/// buggy programs race on purpose, but their bug is the assertion). A long program gets the
/// step bound it needs.
pub fn builder(program: &Program, variant: Variant) -> Builder {
    let races = if variant == Variant::Fixed || program.bug.surface() == Surface::DataRace {
        RaceMode::Fail
    } else {
        RaceMode::Warn
    };
    let builder = Builder::new().ignore_environment().data_races(races);
    match program.max_steps() {
        Some(steps) => builder.max_steps(steps),
        None => builder,
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

fn run_interleave(job: &Job, spec: &interleave::StrategySpec, executions: u64) -> Record {
    let started = Instant::now();
    let program = job.program;
    let variant = job.variant;
    let result = builder(program, variant)
        .strategy(spec.clone())
        .executions(executions)
        .seed(job.seed)
        .workers(1)
        .stop_on_first_failure(false)
        .explore(move || (program.run)(variant));
    let mut record = empty_record(job);
    record.seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(report) => {
            let expected = expected_kind(program);
            let is_bug = |f: &&Failure| variant == Variant::Buggy && kind_name(f.kind) == expected;
            record.executions = report.executions;
            record.steps = Some(report.steps);
            record.failures = report.failures.len() as u64;
            record.bugs = report.failures.iter().filter(is_bug).count() as u64;
            record.first_bug = report.failures.iter().find(is_bug).map(|f| f.execution);
            if let Some(first) = report.failures.first() {
                record.first_failure = Some(first.execution);
                record.failure_kind = Some(kind_name(first.kind));
                record.message = Some(first_line(&first.message));
                record.token = Some(first.token.clone());
            }
            let stats: Vec<String> = report
                .strategy_stats
                .iter()
                .map(|(name, value)| format!("{name}: {value}"))
                .collect();
            record.stats = (!stats.is_empty()).then(|| stats.join("; "));
            if variant == Variant::Fixed && !report.warnings.is_empty() {
                record.note = Some(format!("warnings: {}", report.warnings.join("; ")));
            }
        }
        Err(e) => record.note = Some(format!("error: {e}")),
    }
    record
}

#[cfg(feature = "peers")]
fn run_peer(job: &Job, peer: PeerSpec, executions: u64, client: &mut worker::Client) -> Record {
    let started = Instant::now();
    let result = client.run(&worker::Job {
        peer,
        program: job.program.name.to_string(),
        variant: job.variant,
        seed: job.seed,
        executions,
    });
    let mut record = empty_record(job);
    record.seconds = started.elapsed().as_secs_f64();
    record.stops_at_first_failure = true;
    match result {
        Ok(run) => {
            record.executions = run.executions;
            if let Some(reason) = run.unsupported {
                record.note = Some(format!("unsupported: {reason}"));
            } else if run.exhausted {
                record.note = Some(format!(
                    "exhausted the bounded search after {} executions",
                    run.executions
                ));
            }
            if let Some(failure) = run.failure {
                let kind = failure.kind.name();
                record.failures = 1;
                record.first_failure = Some(failure.execution);
                record.failure_kind = Some(kind.to_string());
                record.message = Some(failure.message);
                if job.variant == Variant::Buggy && kind == expected_kind(job.program) {
                    record.bugs = 1;
                    record.first_bug = Some(failure.execution);
                }
            }
        }
        Err(e) => record.note = Some(format!("error: {e}")),
    }
    record
}

fn empty_record(job: &Job) -> Record {
    Record {
        program: job.program.name.to_string(),
        fixed: job.variant == Variant::Fixed,
        strategy: job.column.to_string(),
        tool: job.column.tool().to_string(),
        seed: job.seed,
        executions: 0,
        first_failure: None,
        failures: 0,
        first_bug: None,
        bugs: 0,
        stops_at_first_failure: false,
        steps: None,
        seconds: 0.0,
        failure_kind: None,
        message: None,
        token: None,
        note: None,
        stats: None,
    }
}

#[cfg(feature = "peers")]
fn peer_client() -> worker::Client {
    let exe = std::env::current_exe().unwrap_or_else(|_| "interleave".into());
    worker::Client::new(exe, vec![std::ffi::OsString::from(PEER_WORKER_COMMAND)])
}

/// The records of a run, in job order, and whether every job of the shard ran.
pub struct Finished {
    pub records: Vec<Record>,
    pub complete: bool,
}

/// Runs the jobs of `shard` of `plan` with `executions` each on `threads` threads, showing a
/// progress bar on a terminal, until they are done or `stop` is set; returns one record per job
/// that finished, in job order.
pub fn run(
    plan: &JobPlan,
    shard: Shard,
    executions: u64,
    threads: usize,
    stop: &AtomicBool,
) -> Finished {
    let total = shard.len(plan.len());
    let progress = ProgressBar::new(total);
    progress.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:32}] {pos}/{len} runs, eta {eta} {wide_msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    progress.enable_steady_tick(Duration::from_millis(250));
    let next = AtomicU64::new(0);
    let records: Mutex<Vec<(u64, Record)>> = Mutex::new(Vec::new());
    let workers = u64::try_from(threads)
        .unwrap_or(u64::MAX)
        .clamp(1, total.max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                #[cfg(feature = "peers")]
                let mut client: Option<worker::Client> = None;
                loop {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        break;
                    }
                    let Some(job) = plan.get(shard.job(n)) else {
                        break;
                    };
                    progress.set_message(format!(
                        "{} ({}) {}",
                        job.program.name, job.variant, job.column
                    ));
                    let record = match &job.column {
                        Column::Interleave(spec) => run_interleave(&job, spec, executions),
                        #[cfg(feature = "peers")]
                        Column::Peer(peer) => run_peer(
                            &job,
                            *peer,
                            executions,
                            client.get_or_insert_with(peer_client),
                        ),
                    };
                    // A peer worker gets the terminal's Ctrl-C too and dies mid-job: that
                    // error is the interrupt, not a measurement.
                    let interrupted = stop.load(Ordering::SeqCst)
                        && record
                            .note
                            .as_deref()
                            .is_some_and(|n| n.starts_with("error"));
                    if !interrupted {
                        records
                            .lock()
                            .expect("no panics while holding it")
                            .push((n, record));
                    }
                    progress.inc(1);
                }
            });
        }
    });
    progress.finish_and_clear();
    let mut records = records.into_inner().expect("no panics while holding it");
    records.sort_by_key(|(n, _)| *n);
    Finished {
        complete: records.len() as u64 == total,
        records: records.into_iter().map(|(_, record)| record).collect(),
    }
}
