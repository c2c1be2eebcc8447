//! Rounds of executions: the strategy plans a round from what it observed before, the
//! executions run on one or more workers (`workers.rs`), and their summaries come back in index
//! order.

use super::slow_search::{SearchNamed, SlowSearch};
use super::*;
use crate::runtime::memory::STORE_HISTORY;
use crate::runtime::op::OpKind;
use crate::runtime::CoverageGaps;
use std::sync::OnceLock;

/// What one exploration run shares with its workers.
pub(super) struct Run<'a> {
    pub(super) f: &'a (dyn Fn() + Sync),
    /// Where the exploration was started: the main thread's spawn site.
    pub(super) site: Site,
    pub(super) limits: Limits,
    pub(super) spec: String,
    pub(super) seed: u64,
    pub(super) check_determinism: bool,
    pub(super) count_states: bool,
    pub(super) monitor_atomic_sets: bool,
    /// The test the exploration runs in, which its failures' tokens name.
    pub(super) test: Option<String>,
    /// Stops the exploration from another OS thread (`Config::stop`).
    pub(super) stop: Option<StopHandle>,
}

impl Run<'_> {
    /// Whether the exploration was asked to stop from another OS thread (`Config::stop`).
    pub(super) fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(StopHandle::is_stopped)
    }
}

/// Whether the determinism check runs execution `index` again: executions 0, 1, 2, 4, 8, ...,
/// about log2(executions) extra runs, which catch nondeterminism that one comparison could
/// miss by chance.
pub(super) fn sampled_for_determinism(index: u64) -> bool {
    index == 0 || index.is_power_of_two()
}

/// The result of one execution as the driver keeps it.
///
/// A summary travels from the worker that ran it to the driver that observes it, and moves
/// about four times on the way; what most executions of the samplers lack is boxed in
/// [`Findings`], so that the summary itself is one cache line. At 168 bytes, copying the slots
/// another worker had written was most of the driver's serial observation of a round, during
/// which the other workers wait (atomic workload, two workers).
pub(super) struct Summary {
    pub(super) index: u64,
    pub(super) steps: u64,
    pub(super) threads: usize,
    pub(super) lock_acquisitions: u64,
    pub(super) abandoned: bool,
    /// A stop ended it before it had ended by itself (`Config::stop`).
    pub(super) stopped: bool,
    /// It used an object an earlier execution registered (a `static` primitive).
    pub(super) outlived_objects: bool,
    /// What std allows that the execution could have done and no schedule explores (see
    /// [`Collector::finish`]).
    pub(super) gaps: CoverageGaps,
    /// `None` when every part of [`Findings`] is empty.
    pub(super) findings: Option<Box<Findings>>,
}

// A summary must stay within one cache line; see its documentation.
const _: () = assert!(std::mem::size_of::<Summary>() <= 64);

/// What an execution found or recorded beyond its counts.
#[derive(Default)]
pub(super) struct Findings {
    pub(super) trace: Option<Vec<TraceEvent>>,
    /// The happens-before fingerprint of every prefix, when counting states.
    pub(super) states: Vec<u128>,
    pub(super) feedback: Option<Box<dyn Any + Send>>,
    pub(super) failure: Option<Failure>,
    pub(super) warnings: Vec<String>,
    /// What the program declared, when the strategy asked for the trace.
    pub(super) declarations: Option<Declarations>,
    pub(super) violations: Vec<AtomicityViolation>,
    /// A failure other than a deadlock stopped it while a thread had not finished: the steps
    /// that thread had left never ran (see [`Outcome::cut_short`]).
    pub(super) cut_short: bool,
    /// It is the first execution, it spawned threads, and no thread took a step other than
    /// starting, spawning or joining: see [`NOTHING_TO_INTERLEAVE`].
    pub(super) nothing_to_interleave: bool,
}

/// The note of an exploration whose first execution gave the scheduler nothing to interleave:
/// most likely the threads share state through types interleave does not control, the first
/// mistake of a newcomer (a `use std::sync::Mutex` left in), which otherwise passes every
/// execution in silence.
pub(super) const NOTHING_TO_INTERLEAVE: &str = "the threads of this test took no scheduling \
    point besides starting, spawning and joining (in its first execution), so there was nothing \
    to interleave: interleave switches threads only at its own primitives. State the threads \
    share through std::sync (a Mutex, an atomic), a std thread_local! or anything else outside \
    interleave is invisible to it: use interleave::sync, interleave::cell and interleave::thread \
    for it";

impl Findings {
    /// Boxed, or `None` when every part is empty. Inlined, so that the parts of the usual
    /// empty findings are tested where they are made rather than assembled, copied and dropped.
    #[inline(always)]
    fn boxed(self) -> Option<Box<Findings>> {
        let empty = self.trace.is_none()
            && self.states.is_empty()
            && self.feedback.is_none()
            && self.failure.is_none()
            && self.warnings.is_empty()
            && self.declarations.is_none()
            && self.violations.is_empty()
            && !self.nothing_to_interleave;
        (!empty).then(|| Box::new(self))
    }
}

impl Summary {
    /// A summary with these counts and findings.
    pub(super) fn new(
        index: u64,
        steps: u64,
        outlived_objects: bool,
        findings: Findings,
    ) -> Summary {
        Summary {
            index,
            steps,
            threads: 0,
            lock_acquisitions: 0,
            abandoned: false,
            stopped: false,
            outlived_objects,
            gaps: CoverageGaps::default(),
            findings: findings.boxed(),
        }
    }

    pub(super) fn failed(&self) -> bool {
        self.findings.as_ref().is_some_and(|f| f.failure.is_some())
    }

    pub(super) fn states(&self) -> &[u128] {
        self.findings.as_ref().map_or(&[], |f| &f.states)
    }

    pub(super) fn take_warnings(&mut self) -> Vec<String> {
        self.findings
            .as_mut()
            .map(|f| std::mem::take(&mut f.warnings))
            .unwrap_or_default()
    }

    /// Drops the schedule's feedback, which only the strategy that planned it reads.
    pub(super) fn drop_feedback(&mut self) {
        if let Some(findings) = &mut self.findings {
            findings.feedback = None;
        }
    }
}

pub(crate) fn limits(config: &Config) -> Limits {
    Limits {
        report_before_abort: crate::report::report_before_abort,
        max_steps: config.max_steps,
        stack_size: config.stack_size,
        races: config.data_races,
        log_values: false,
        watchdog: config.watchdog,
        spurious_wakeups: config.spurious_wakeups,
        spurious_park_wakeups: config.spurious_park_wakeups,
        spurious_cas_failures: config.spurious_cas_failures.unwrap_or(true),
        memory: config.memory,
        yield_visibility: config.yield_visibility,
        full_interleaving: config.full_interleaving,
        panic_stops_execution: config.panic_stops_execution,
        spawned_panics_fail: config.spawned_panics_fail,
        exploration: crate::runtime::new_exploration(),
    }
}

/// An exploration with automatic workers ran executions on several, and then one of its
/// executions used an object an earlier execution had registered (a `static` primitive): the
/// order in which executions used it was not the one-worker order, so it starts again on one.
pub(super) struct OutlivedObjects;

/// Executions that run on one worker before an automatic exploration uses several: the second
/// is the first that can meet an object the first registered, such as a `static` primitive.
pub(super) const PROBE_EXECUTIONS: u64 = 2;

/// Explores `f` under `strategy` with the settings of `config` and reports what it found.
///
/// With automatic workers ([`AUTOMATIC_WORKERS`]) the first [`PROBE_EXECUTIONS`] run on one
/// worker and the rest on one per core, unless an execution uses an object an earlier one
/// registered: then the exploration stays on one worker, and if it had already run executions
/// on several, it starts again from execution 0 with a fresh strategy built from the config
/// (automatic workers are used only with the config's own strategy, see `Builder::resolve`).
/// Either way the report is the one a single worker gives.
pub(super) fn explore_with(
    config: &Config,
    strategy: &mut dyn Strategy,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Report {
    let fixed = |strategy: &mut dyn Strategy, workers| match explore_rounds(
        config, strategy, f, site, workers, false,
    ) {
        Ok(report) => report,
        Err(OutlivedObjects) => unreachable!("only automatic workers start again"),
    };
    if config.workers != AUTOMATIC_WORKERS {
        return fixed(strategy, config.workers);
    }
    match explore_rounds(config, strategy, f, site, machine_cores(), true) {
        Ok(report) => report,
        Err(OutlivedObjects) => fixed(config.strategy.build().as_mut(), 1),
    }
}

/// The cores this process may use (`std::thread::available_parallelism`), asked once: on
/// Linux the answer reads the cgroup's files, about 30 µs, which a test of a few dozen
/// executions would pay at every exploration.
fn machine_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |cores| cores.get()))
}

/// Runs the rounds of an exploration on `workers` workers; with `automatic`, see
/// [`explore_with`].
fn explore_rounds(
    config: &Config,
    strategy: &mut dyn Strategy,
    f: &(dyn Fn() + Sync),
    site: Site,
    workers: usize,
    automatic: bool,
) -> Result<Report, OutlivedObjects> {
    let run = Run {
        f,
        site,
        limits: Limits {
            spurious_cas_failures: config
                .spurious_cas_failures
                .unwrap_or(!strategy.searches_exhaustively()),
            ..limits(config)
        },
        spec: strategy.spec(),
        seed: config.seed,
        check_determinism: config.check_determinism,
        count_states: config.count_states,
        monitor_atomic_sets: config.monitor_atomic_sets || strategy.monitors_atomic_sets(),
        test: current_exploration(),
        stop: config.stop.clone(),
    };
    let mut collector = Collector::new(config, &run, strategy.searches_exhaustively());
    let sharding = shard::Sharding::new(config.shard, strategy);
    if let (Some(search), true) = (strategy.subtree_search(), splits_trees(config, &run)) {
        // A depth-first search splits its tree among the workers: each execution costs about
        // the CPU time it costs on one worker (see ARCHITECTURE.md and docs/bench/dfs-split.txt).
        if workers > 1 {
            super::tree_split::explore(&run, strategy, search, &mut collector, workers, automatic)?;
            return Ok(collector.finish(strategy, &sharding, &run));
        }
    }
    let planning = Mutex::new(Planner::new(
        strategy,
        sharding,
        config.seed,
        config.stop.clone(),
    ));
    with_pool(&run, &planning, workers, |pool| {
        let mut round = 1usize;
        let mut next = 0u64;
        let mut outlived_objects = false;
        let mut ran_on_several = false;
        while next < config.executions {
            let size = {
                let mut planner = lock(&planning);
                let size = (round.min(planner.strategy.round_size().max(1)) as u64)
                    .min(config.executions - next);
                planner.begin_round(next, size);
                size
            };
            // Automatic workers stay at one for the probe executions and once an execution
            // used an outlived object.
            let several = !automatic || (next >= PROBE_EXECUTIONS && !outlived_objects);
            ran_on_several |= several && size > 1;
            let mut restart = false;
            let flow = pool.execute(config.stop_on_first_failure, several, &mut |summary| {
                let mut planner = lock(&planning);
                let Planner {
                    strategy, sharding, ..
                } = &mut *planner;
                // A stopped execution is no outcome: it is neither observed nor counted, and
                // the executions after it are not reported (they ran while the stop was
                // coming, or were stopped too).
                if summary.stopped {
                    collector.stopped();
                    return Flow::Stop;
                }
                if automatic && summary.outlived_objects {
                    if ran_on_several {
                        restart = true;
                        return Flow::Stop;
                    }
                    outlived_objects = true;
                }
                strategy.observe(summary.index, &outcome_of(&summary));
                match sharding.reports(
                    summary.index,
                    summary.failed(),
                    config.stop_on_first_failure,
                ) {
                    shard::Reported::Yes => collector.add(&**strategy, summary),
                    shard::Reported::No => Flow::Continue,
                    shard::Reported::NoAndStop => Flow::Stop,
                }
            });
            if restart {
                return Err(OutlivedObjects);
            }
            if flow == Flow::Stop {
                break;
            }
            let planner = lock(&planning);
            if planner.planned < size {
                if planner.stopped {
                    collector.stopped();
                }
                break;
            }
            next += size;
            round = (round * 2).min(MAX_ROUND);
        }
        Ok(())
    })?;
    let Planner {
        strategy, sharding, ..
    } = planning.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(collector.finish(strategy, &sharding, &run))
}

/// Whether an exploration goes on after an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    Stop,
}

/// Whether the exploration may split a search tree among workers: it is not sharded (a shard
/// splits the tree its own way) and does not check atomic sets (a violation's description names
/// its execution, which a worker searching a subtree does not know).
fn splits_trees(config: &Config, run: &Run<'_>) -> bool {
    config.shard.is_none() && !run.monitor_atomic_sets
}

/// The report under construction: it adds up the summaries the exploration reports, in index
/// order.
pub(super) struct Collector<'c> {
    config: &'c Config,
    report: Report,
    slow_search: SlowSearch,
    /// What std allows at operations some execution ran that no schedule explores.
    gaps: CoverageGaps,
    seen_warnings: HashSet<String>,
    seen_violations: HashSet<String>,
    states: FxHashSet<u128>,
}

impl<'c> Collector<'c> {
    fn new(config: &'c Config, run: &Run<'_>, exhaustive: bool) -> Collector<'c> {
        Collector {
            config,
            report: Report::new(run.spec.clone(), config.seed),
            slow_search: SlowSearch::new(
                config.slow_search_notice,
                exhaustive,
                SearchNamed {
                    spec: run.spec.clone(),
                    test: run.test.clone(),
                    budget: config.executions,
                },
            ),
            gaps: CoverageGaps::default(),
            seen_warnings: HashSet::new(),
            seen_violations: HashSet::new(),
            states: FxHashSet::default(),
        }
    }

    /// Notes that a stop from another OS thread ended the exploration (`Config::stop`).
    pub(super) fn stopped(&mut self) {
        self.report.stopped = true;
    }

    /// The exploration's execution budget.
    pub(super) fn budget(&self) -> u64 {
        self.config.executions
    }

    /// Adds the happens-before fingerprints of an execution's states, when its summary does
    /// not carry them.
    pub(super) fn add_states(&mut self, states: &[u128]) {
        self.states.extend(states.iter().copied());
    }

    /// Adds `summary`, the next in index order that the exploration reports, to the report;
    /// `strategy` names the member of a portfolio that found a failure.
    pub(super) fn add(&mut self, strategy: &dyn Strategy, summary: Summary) -> Flow {
        let config = self.config;
        let report = &mut self.report;
        report.executions += 1;
        report.steps += summary.steps;
        self.gaps = self.gaps.union(summary.gaps);
        self.slow_search.observe(summary.steps, report.executions);
        let Some(findings) = summary.findings else {
            return Flow::Continue;
        };
        let Findings {
            states,
            failure,
            warnings,
            violations,
            nothing_to_interleave,
            ..
        } = *findings;
        if nothing_to_interleave {
            report.notes.push(NOTHING_TO_INTERLEAVE.to_string());
        }
        if !violations.is_empty() {
            report.violating_executions += 1;
        }
        for violation in violations {
            if self.seen_violations.insert(violation.key.clone()) {
                report.violations.push(violation);
            }
        }
        // The set's extend costs a reservation even for no states, and most summaries have none.
        if !states.is_empty() {
            self.states.extend(states);
        }
        for warning in warnings {
            if self.seen_warnings.insert(warning.clone()) {
                report.warnings.push(warning);
            }
        }
        if let Some(mut failure) = failure {
            if let Some(member) = strategy.member(summary.index) {
                failure.strategy = format!("{}, member {member}", failure.strategy);
            }
            report.failures.push(failure);
            if config.stop_on_first_failure {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// The finished report.
    fn finish(
        mut self,
        strategy: &dyn Strategy,
        sharding: &shard::Sharding,
        run: &Run<'_>,
    ) -> Report {
        let mut report = self.report;
        report.shard = sharding.summary(self.config, &report, run.test.clone());
        report.strategy_stats = strategy.stats();
        if strategy.searches_exhaustively() {
            report.strategy_stats.extend(coverage_gap_stats(self.gaps));
        }
        report.states = self.config.count_states.then_some(self.states.len() as u64);
        for warning in strategy.warnings() {
            if self.seen_warnings.insert(warning.clone()) {
                report.warnings.push(warning);
            }
        }
        report
    }
}

/// The lines that qualify an exhaustive search's coverage claim, which is about the schedules
/// it tried, by what std allows there and none of them did.
fn coverage_gap_stats(gaps: CoverageGaps) -> Vec<(String, String)> {
    let mut stats = Vec::new();
    if gaps.weak_exchange_held {
        stats.push((
            "weak exchanges".to_string(),
            "compare_exchange_weak never failed spuriously (spurious_cas_failures is off for \
             the exhaustive searches: each such failure multiplies the schedules of every retry \
             loop), so what only a spurious failure causes, such as a weak exchange outside a \
             retry loop whose failure is taken as another thread's win, is not covered; \
             INTERLEAVE_SPURIOUS_CAS_FAILURES=on searches it too"
                .to_string(),
        ));
    }
    if gaps.older_store_forgotten {
        stats.push((
            "old stores".to_string(),
            format!(
                "an atomic load could also have read a store older than the last {STORE_HISTORY} \
                 of its location, which interleave forgets (loom keeps 7), so what only such a \
                 read causes is not covered"
            ),
        ));
    }
    stats
}

/// What `strategy.observe` learns from `summary`.
pub(super) fn outcome_of(summary: &Summary) -> Outcome<'_> {
    let findings = summary.findings.as_deref();
    Outcome {
        steps: summary.steps,
        threads: summary.threads,
        failed: summary.failed(),
        abandoned: summary.abandoned,
        lock_acquisitions: summary.lock_acquisitions,
        trace: findings.and_then(|f| f.trace.as_deref()),
        feedback: findings.and_then(|f| f.feedback.as_deref()),
        declarations: findings.and_then(|f| f.declarations.as_ref()),
        violations: findings.map_or(0, |f| f.violations.len()),
        cut_short: findings.is_some_and(|f| f.cut_short),
    }
}

/// The planning side of an exploration, shared by its workers: whoever claims the next
/// executions of a round plans them, in index order under the lock, on the OS thread that will
/// run them.
///
/// Planning on the running thread keeps every schedule's memory on one thread. Schedules
/// planned by the driver and dropped by another worker moved memory between glibc's per-thread
/// arenas at every execution; that made each execution on a second worker cost 14-60% more CPU
/// time than on one (PCT on the rwlock workload: 60%), where the same executions with an
/// allocator that frees across threads cheaply cost 0-2% more.
pub(super) struct Planner<'s> {
    pub(super) strategy: &'s mut dyn Strategy,
    pub(super) sharding: shard::Sharding,
    seed: u64,
    /// Bumped by each round, so a worker that comes late to a round cannot claim from the next.
    pub(super) round: u64,
    /// The first execution of the round, the next one to claim, and the end of the round.
    start: u64,
    next: u64,
    end: u64,
    /// Executions of the round the strategy planned; fewer than the round's size once it is
    /// exhausted, after which nothing more is planned.
    pub(super) planned: u64,
    exhausted: bool,
    /// Stops planning, as a strategy that has nothing more to try does (`Config::stop`).
    stop: Option<StopHandle>,
    /// Planning ended because of the stop, with executions of the budget left.
    pub(super) stopped: bool,
}

/// Executions a worker claimed: their positions in the round, and the plans of those it runs
/// (an execution that another shard runs, or that comes after the strategy ran out, has none).
pub(super) struct Claim {
    pub(super) positions: std::ops::Range<usize>,
    pub(super) plans: Vec<(usize, Plan)>,
}

impl<'s> Planner<'s> {
    fn new(
        strategy: &'s mut dyn Strategy,
        sharding: shard::Sharding,
        seed: u64,
        stop: Option<StopHandle>,
    ) -> Planner<'s> {
        Planner {
            strategy,
            sharding,
            seed,
            round: 0,
            start: 0,
            next: 0,
            end: 0,
            planned: 0,
            exhausted: false,
            stop,
            stopped: false,
        }
    }

    fn begin_round(&mut self, start: u64, size: u64) {
        self.round += 1;
        self.start = start;
        self.next = start;
        self.end = start + size;
        self.planned = 0;
    }

    /// The number of executions in the current round.
    pub(super) fn round_len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// The executions of the round nobody has claimed yet.
    pub(super) fn unclaimed(&self) -> u64 {
        self.end - self.next
    }

    /// Claims and plans the next execution of the round, as `claim(1)` does without a list:
    /// `None` when the round has none left or the execution is not planned.
    pub(super) fn claim_one(&mut self) -> Option<Plan> {
        let index = self.next;
        if index >= self.end {
            return None;
        }
        self.next = index + 1;
        self.plan(index).map(|(_, plan)| plan)
    }

    /// Plans execution `index` with its position in the round, unless the strategy is
    /// exhausted, the exploration was stopped, or another shard runs it.
    fn plan(&mut self, index: u64) -> Option<(usize, Plan)> {
        if self.exhausted {
            return None;
        }
        // A stop between executions ends the exploration the way the time budget does:
        // nothing more is planned.
        if self.stop.as_ref().is_some_and(StopHandle::is_stopped) {
            self.exhausted = true;
            self.stopped = true;
            return None;
        }
        let Some(schedule) = self.strategy.plan(index, execution_seed(self.seed, index)) else {
            self.exhausted = true;
            return None;
        };
        self.planned += 1;
        let schedule = self.sharding.admit(&*self.strategy, index, schedule)?;
        let keep_trace = self.strategy.wants_trace(index);
        Some(((index - self.start) as usize, (index, schedule, keep_trace)))
    }

    /// Gives up the executions of the round nobody has claimed, after the strategy panicked
    /// while planning one; returns how many.
    pub(super) fn abandon_round(&mut self) -> usize {
        let abandoned = (self.end - self.next) as usize;
        self.next = self.end;
        abandoned
    }

    /// Claims and plans the next `count` executions of the round (at least one, at most what
    /// is left).
    pub(super) fn claim(&mut self, count: u64) -> Claim {
        let first = self.next;
        let last = (first + count.max(1)).min(self.end);
        let mut plans = Vec::with_capacity((last - first) as usize);
        for index in first..last {
            if self.exhausted {
                break;
            }
            plans.extend(self.plan(index));
        }
        self.next = last;
        Claim {
            positions: (first - self.start) as usize..(last - self.start) as usize,
            plans,
        }
    }
}

/// Locks `mutex`, whose contents stay usable when a holder panicked: the exploration re-raises
/// that panic itself.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn run_one(
    run: &Run<'_>,
    index: u64,
    schedule: Box<dyn Schedule + Send>,
    keep_trace: bool,
) -> Summary {
    let mut ex = runtime::run_stoppable(run.f, run.site, schedule, run.limits, run.stop.as_ref());
    let mut failure = ex
        .failure
        .clone()
        .map(|info| failure_of(run, index, &ex, &info));
    let sampled = sampled_for_determinism(index);
    // An abandoned execution stopped where its schedule chose to; a replay of its steps could
    // not tell that stop from a divergence. One that met something outside the schedule's
    // control (a stack it could not allocate, a wake from a foreign OS thread) says nothing
    // about the program's determinism either.
    if run.check_determinism
        && !ex.is_abandoned()
        && !ex.stopped
        && !ex.outside_control
        && (sampled || failure.is_some())
    {
        if let Some(difference) = rerun_difference(run, &ex) {
            failure = Some(match failure {
                // The program's own failure (the assertion that failed, the deadlock) is what
                // the user must see; that the run does not repeat is a note on it.
                Some(mut first) => {
                    first.message = format!("{}\n\nnote: {difference}", first.message);
                    first
                }
                None => {
                    let info = FailureInfo::new(FailureKind::Nondeterminism, difference, None);
                    failure_of(run, index, &ex, &info)
                }
            });
        }
    }
    let events =
        (keep_trace || run.count_states || run.monitor_atomic_sets).then(|| ex.trace_events());
    let declarations = (keep_trace || run.monitor_atomic_sets)
        .then(|| Declarations::of(&ex))
        .flatten();
    let violations = match (&events, &declarations) {
        (Some(events), Some(declarations)) if run.monitor_atomic_sets => {
            atomicity_violations(&ex, index, events, declarations)
        }
        _ => Vec::new(),
    };
    let states = match (&events, run.count_states) {
        (Some(events), true) => prefix_fingerprints(events),
        _ => Vec::new(),
    };
    Summary {
        index,
        steps: ex.steps(),
        threads: ex.threads.len(),
        lock_acquisitions: ex.lock_acquisitions,
        abandoned: ex.is_abandoned(),
        stopped: ex.stopped,
        outlived_objects: ex.outlived_objects,
        gaps: ex.gaps,
        findings: Findings {
            cut_short: ex.cut_short(),
            nothing_to_interleave: index == 0 && nothing_to_interleave(&ex),
            trace: events.filter(|_| keep_trace),
            states,
            feedback: ex.feedback.take(),
            failure,
            // Taking an empty list would still write a new one in its place.
            warnings: if ex.warnings.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut ex.warnings)
            },
            declarations: declarations.filter(|_| keep_trace),
            violations,
        }
        .boxed(),
    }
}

/// Whether the execution spawned threads and took no step but their starts, spawns and joins.
fn nothing_to_interleave(ex: &Recording) -> bool {
    ex.threads.len() > 1
        && ex
            .events
            .iter()
            .all(|event| matches!(event.kind, OpKind::Start | OpKind::Spawn | OpKind::Join))
}

/// The atomic-set serializability violations execution `index` produced.
pub(super) fn atomicity_violations(
    ex: &Recording,
    index: u64,
    events: &[TraceEvent],
    declarations: &Declarations,
) -> Vec<AtomicityViolation> {
    let accesses = set_accesses(events, declarations);
    serializability::violations(&accesses)
        .iter()
        .map(|v| AtomicityViolation::describe(ex, index, events, declarations, v))
        .collect()
}

/// The happens-before fingerprint of every prefix of `events` (the empty one included).
pub(super) fn prefix_fingerprints(events: &[TraceEvent]) -> Vec<u128> {
    let mut fingerprint = HbFingerprint::default();
    let mut all = vec![fingerprint.value()];
    for event in events {
        fingerprint.add(event);
        all.push(fingerprint.value());
    }
    all
}

pub(super) fn failure_of(run: &Run<'_>, index: u64, ex: &Recording, info: &FailureInfo) -> Failure {
    describe_failure(&run.spec, run.seed, index, ex, info, run.test.as_deref())
}

/// The report of execution `index`'s failure `info`, found by the strategy `spec` with `seed`
/// in the test `test`.
pub(crate) fn describe_failure(
    spec: &str,
    seed: u64,
    index: u64,
    ex: &Recording,
    info: &FailureInfo,
    test: Option<&str>,
) -> Failure {
    let message = failure_text(ex, info);
    Failure {
        execution: index,
        kind: info.kind,
        token: Token::from_run(ex, Some(info.kind))
            .labelled(test, &message)
            .encode(),
        message,
        steps: ex.steps(),
        thread: info.thread.map(|t| thread_label(ex, t)),
        site: info.site.clone(),
        interleaving: render_interleaving(ex),
        persisted: None,
        strategy: spec.to_string(),
        seed,
        static_message: info.static_message,
    }
}
