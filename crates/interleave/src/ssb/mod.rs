//! Schedule-sensitive branches: TAME (Huang and Rauchwerger, "Finding schedule-sensitive
//! branches", ESEC/FSE 2015; seed 004), predicted by constraint solving over one trace and
//! confirmed by re-execution.
//!
//! A branch is schedule-sensitive (an SSB) when, for the same input, its outcome depends on the
//! schedule. Most SSBs are concurrency bugs or ad hoc synchronisation. The analysis:
//!
//! 1. runs the program once (a random walk from the seed) and records a trace: every step with
//!    the values atomics held (`model`), and every branch event ([`crate::branch!`]; a panic is
//!    the outcome of an implicit branch at its site);
//! 2. slices the trace into chunks ([`Partition`], `partition`);
//! 3. for each chunk and each shared read `r` followed by a branch of its thread in the chunk,
//!    asks `order_solver` for a reordering of the chunk in which `r` reads a different
//!    value while every read before it reads the value it read in the trace (`encode`): TAME's
//!    Φmhb ∧ Φlock ∧ Φrw under the maximal causal model, so the prefix is feasible;
//! 4. runs every solution (`confirm`) and compares every branch outcome with the trace's.
//!
//! **Guarantee (precision):** every reported [`ScheduleSensitiveBranch`] is real: two
//! executions of the program with the same inputs took it differently, and its replay token
//! reproduces the second ([`ScheduleSensitiveBranch::confirm`]). Predictions that did not flip
//! anything are counted ([`SsbReport::unconfirmed`]), never reported. TAME's branch conditions
//! come from concolic execution of Java bytecode; Rust cannot be executed symbolically, so the
//! solver targets the reads a branch could depend on and the run decides, which keeps TAME's
//! precision without its symbolic conditions.
//!
//! **Coverage:** an SSB is found when some chunk contains a read the branch depends on, a write
//! that gives it another value, and a feasible order between them; reorderings across chunk
//! edges are missed (the partition trades them for speed, as in TAME). A `Var`'s values are
//! compared by the write that stored them (the runtime cannot compare an arbitrary `T`), so a
//! prediction through a write of an equal value is counted as unconfirmed.
//!
//! ```
//! use interleave::cell::Var;
//! use interleave::sync::Arc;
//! use interleave::{branch, thread};
//!
//! let report = interleave::ssb::Analysis::new()
//!     .run(|| {
//!         let ready = Arc::new(Var::new(false));
//!         let writer = ready.clone();
//!         let t = thread::spawn(move || writer.set(true));
//!         if branch!(ready.get()) {
//!             // the writer ran first
//!         }
//!         t.join().unwrap();
//!     })
//!     .unwrap();
//! assert_eq!(report.branches.len(), 1);
//! ```

mod confirm;
mod encode;
mod model;
pub(crate) mod order_solver;
mod partition;

use std::fmt;
use std::panic::Location;
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

pub use partition::Partition;

use crate::analysis::thread_label;
use crate::config::Config;
use crate::explore::{describe_failure, limits, run_token};
use crate::report::token::Token;
use crate::report::{Failure, FailureKind};
use crate::runtime::op::Site;
use crate::runtime::{self, Limits, Recording};
use crate::strategy::random::Random;
use crate::strategy::Strategy;
use crate::{Error, RaceMode};
use confirm::{GuidedSchedule, Outcomes, ThreadKey};
use encode::ChunkModel;
use model::{Trace, Value};
use order_solver::Solution;

/// The settings of one analysis; [`Analysis::run`] runs it.
#[derive(Clone, Debug)]
pub struct Analysis {
    seed: u64,
    partition: Partition,
    conflicts: u64,
    attempts_per_read: u32,
    max_steps: u64,
}

impl Default for Analysis {
    fn default() -> Analysis {
        Analysis::new()
    }
}

impl Analysis {
    /// The defaults: seed 0, the whole trace as one chunk, 100,000 solver conflicts per query,
    /// 4 confirmations per read site, 1,000,000 steps per execution.
    pub fn new() -> Analysis {
        Analysis {
            seed: 0,
            partition: Partition::Whole,
            conflicts: 100_000,
            attempts_per_read: 4,
            max_steps: 1_000_000,
        }
    }

    /// The seed of the observed execution's random walk.
    pub fn seed(mut self, seed: u64) -> Analysis {
        self.seed = seed;
        self
    }

    /// How the trace is sliced into chunks.
    pub fn partition(mut self, partition: Partition) -> Analysis {
        self.partition = partition;
        self
    }

    /// The solver's budget per query, in conflicts (deterministic, unlike a time limit); an
    /// exhausted budget counts the query as undecided.
    pub fn conflict_budget(mut self, conflicts: u64) -> Analysis {
        self.conflicts = conflicts;
        self
    }

    /// How many predictions for one read site are run before the site is given up: TAME's
    /// filter of redundant events at one location, which long traces repeat in every chunk.
    pub fn attempts_per_read(mut self, attempts: u32) -> Analysis {
        self.attempts_per_read = attempts;
        self
    }

    /// The step bound of every execution (observed and confirming).
    pub fn max_steps(mut self, steps: u64) -> Analysis {
        self.max_steps = steps;
        self
    }

    fn validate(&self) -> Result<(), Error> {
        let window = match self.partition {
            Partition::Whole => 1,
            Partition::Distributed { window, .. } | Partition::Global { window } => window,
        };
        if window == 0 {
            return Err(Error::Config(
                "a partition window must hold at least one event".into(),
            ));
        }
        if self.attempts_per_read == 0 || self.conflicts == 0 || self.max_steps == 0 {
            return Err(Error::Config(
                "the conflict budget, the attempts per read and the step bound must be positive"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Runs `f` once, analyses its trace, confirms every prediction, and reports the
    /// schedule-sensitive branches.
    #[track_caller]
    pub fn run<F: Fn() + Sync>(&self, f: F) -> Result<SsbReport, Error> {
        self.validate()?;
        let site = Location::caller();
        let limits = Limits {
            max_steps: self.max_steps,
            races: RaceMode::Warn,
            log_values: true,
            // TAME's encoding orders the trace's events sequentially consistently, and
            // decides a compare-exchange by its comparison alone.
            memory: crate::MemoryModel::SequentiallyConsistent,
            spurious_cas_failures: false,
            ..limits(&Config::default())
        };
        let schedule = Random
            .plan(0, self.seed)
            .expect("the random walk plans every execution");
        let started = Instant::now();
        let observed = runtime::run(&f, site, schedule, limits);
        let trace_time = started.elapsed();
        let trace = Trace::of(&observed);
        let mut session = Session {
            analysis: self,
            f: &f,
            site,
            limits,
            trace: &trace,
            outcomes: Outcomes::of(&observed),
            observed: &observed,
            report: SsbReport::default(),
            reported: FxHashSet::default(),
            reported_panics: FxHashSet::default(),
            attempts: FxHashMap::default(),
            failure_keys: FxHashSet::default(),
        };
        session.report.trace_time = trace_time;
        session.describe_trace();
        session.analyse();
        let report = session.report;
        Ok(report)
    }
}

/// What one analysis found, with the figures of TAME's tables.
#[derive(Clone, Debug, Default)]
pub struct SsbReport {
    /// Threads of the observed execution.
    pub threads: usize,
    /// Its events: steps and branch events.
    pub events: usize,
    /// Its critical events: synchronisation steps and accesses to objects that several threads
    /// access, one of them writing.
    pub critical_events: usize,
    /// Its branch events (`branch!` evaluations and a panic, if it panicked).
    pub branch_events: usize,
    /// How long the observed execution took, with value logging.
    pub trace_time: Duration,
    /// Constraint construction and solving, summed over all queries.
    pub solving_time: Duration,
    /// The confirming executions.
    pub confirming_time: Duration,
    /// Chunks the partition has (combinations, for the distributed partition).
    pub chunk_combinations: u128,
    /// Distinct chunks analysed.
    pub chunks: u64,
    /// Solver queries (one per candidate read per chunk).
    pub queries: u64,
    /// Queries with a solution.
    pub satisfiable: u64,
    /// Queries proven to have none.
    pub unsatisfiable: u64,
    /// Queries whose conflict budget ran out.
    pub undecided: u64,
    /// Literals over all queries' clauses (divide by `queries` for the average constraint
    /// size).
    pub constraint_literals: u64,
    /// Solutions whose confirming execution flipped a branch or panicked.
    pub confirmed: u64,
    /// Solutions whose confirming execution flipped nothing new.
    pub unconfirmed: u64,
    /// The schedule-sensitive branches, one per site, in the order they were confirmed.
    pub branches: Vec<ScheduleSensitiveBranch>,
    /// Failures the confirming executions ran into (each once), with their tokens.
    pub failures: Vec<Failure>,
}

impl SsbReport {
    /// The average number of literals per query.
    pub fn average_constraint_size(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.constraint_literals as f64 / self.queries as f64
        }
    }
}

/// What kind of branch flipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BranchKind {
    /// A `branch!` condition.
    Condition,
    /// A panic (a failed assertion, an `unwrap` on `None`, ...): the implicit branch between
    /// panicking and going on.
    Panic,
}

/// A read the solver moved to make a branch flip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlippingRead {
    /// The thread that reads.
    pub thread: String,
    /// Where it reads.
    pub site: String,
    /// What it reads.
    pub object: String,
    /// Where the value it read in the observed execution came from.
    pub observed_source: String,
    /// Where the value it reads in the confirming execution comes from.
    pub new_source: String,
}

/// A confirmed schedule-sensitive branch.
#[derive(Clone, Debug)]
pub struct ScheduleSensitiveBranch {
    /// Where the branch is.
    pub site: String,
    /// The thread whose evaluation flipped.
    pub thread: String,
    /// A condition or a panic.
    pub kind: BranchKind,
    /// Which evaluation of the site by that thread flipped (0 is the first).
    pub occurrence: usize,
    /// Its outcome in the observed execution (for a panic: whether it panicked).
    pub observed: bool,
    /// Its outcome in the confirming execution.
    pub flipped: bool,
    /// The read whose new value made it flip.
    pub read: FlippingRead,
    /// Whether the confirming execution followed the solved prefix to the end (otherwise the
    /// prediction was off, and the flip happened anyway).
    pub prefix_followed: bool,
    /// How the confirming execution ended, if it failed.
    pub failure: Option<FailureKind>,
    /// The confirming execution's replay token.
    pub token: String,
    thread_key: ThreadKey,
    /// The branch's site (`None` for a panic, whose site is `site`).
    branch_site: Option<Site>,
}

impl ScheduleSensitiveBranch {
    /// Whether the branch flipped in the confirming execution of a failing run or is a panic:
    /// the flip exposes a bug, not just a different path.
    pub fn exposes_failure(&self) -> bool {
        self.failure.is_some()
    }

    /// Replays the token on `f` and checks that the branch again takes its flipped outcome.
    #[track_caller]
    pub fn confirm<F: Fn() + Sync>(&self, f: F) -> Result<bool, Error> {
        let token = Token::decode(&self.token)?;
        let ex = run_token(&Config::default(), &token, &f, Location::caller());
        let outcomes = Outcomes::of(&ex);
        drop(ex);
        Ok(match self.kind {
            BranchKind::Condition => {
                self.branch_site
                    .and_then(|site| outcomes.branches.get(&(self.thread_key, site)))
                    .and_then(|all| all.get(self.occurrence))
                    == Some(&self.flipped)
            }
            BranchKind::Panic => {
                outcomes.panic.as_ref().map(|p| &p.1) == Some(&self.site) && self.flipped
            }
        })
    }
}

impl fmt::Display for ScheduleSensitiveBranch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = |taken: bool| match (self.kind, taken) {
            (BranchKind::Condition, true) => "true",
            (BranchKind::Condition, false) => "false",
            (BranchKind::Panic, true) => "panics",
            (BranchKind::Panic, false) => "does not panic",
        };
        writeln!(
            f,
            "schedule-sensitive branch at {} ({}, evaluation {}): {} observed, {} under another schedule",
            self.site,
            self.thread,
            self.occurrence + 1,
            outcome(self.observed),
            outcome(self.flipped),
        )?;
        let read = &self.read;
        writeln!(
            f,
            "  flipped by the read of {} at {} ({}): observed {}, now {}",
            read.object, read.site, read.thread, read.observed_source, read.new_source
        )?;
        if let Some(kind) = self.failure {
            writeln!(f, "  the flipping execution fails: {kind}")?;
        }
        write!(f, "  replay: {}", self.token)
    }
}

/// How many solver queries one read site gets over the whole analysis: a long trace repeats
/// the same read in every chunk, and a site that has been asked about this often has shown
/// what reorderings of it can do (TAME skips repeated branch events of one location the same
/// way).
const QUERIES_PER_READ_SITE: u32 = 16;

/// What one read site has cost so far.
#[derive(Clone, Copy, Debug, Default)]
struct Attempts {
    queries: u32,
    confirmations: u32,
}

/// The state of one run of the analysis.
struct Session<'a> {
    analysis: &'a Analysis,
    f: &'a (dyn Fn() + Sync),
    site: &'static Location<'static>,
    limits: Limits,
    observed: &'a Recording,
    trace: &'a Trace,
    outcomes: Outcomes,
    report: SsbReport,
    /// Branch sites already reported.
    reported: FxHashSet<Site>,
    /// Panic sites already reported.
    reported_panics: FxHashSet<String>,
    /// Queries and confirmations per read site.
    attempts: FxHashMap<Site, Attempts>,
    failure_keys: FxHashSet<(FailureKind, Option<String>)>,
}

impl Session<'_> {
    fn describe_trace(&mut self) {
        let trace = self.trace;
        self.report.threads = trace.threads;
        self.report.events = trace.event_count();
        self.report.critical_events = trace.critical_events();
        self.report.branch_events =
            trace.branches.len() + usize::from(self.outcomes.panic.is_some());
    }

    fn analyse(&mut self) {
        let trace = self.trace;
        let (chunks, combinations) = partition::chunks(trace, self.analysis.partition);
        self.report.chunk_combinations = combinations;
        for chunk in &chunks {
            self.report.chunks += 1;
            let started = Instant::now();
            let model = ChunkModel::new(trace, chunk);
            let candidates = model.candidates();
            self.report.solving_time += started.elapsed();
            for (r, branches) in candidates {
                let read_site = model.step(r).site;
                let open = branches.iter().any(|&b| {
                    !self
                        .reported
                        .contains(&self.trace.branches[b as usize].site)
                });
                let attempts = self.attempts.get(&read_site).copied().unwrap_or_default();
                if !open
                    || attempts.confirmations >= self.analysis.attempts_per_read
                    || attempts.queries >= QUERIES_PER_READ_SITE
                {
                    continue;
                }
                self.attempts.entry(read_site).or_default().queries += 1;
                let started = Instant::now();
                let mut problem = model.problem(r);
                self.report.queries += 1;
                self.report.constraint_literals += problem.size().literals as u64;
                let solution = problem.solve(self.analysis.conflicts);
                self.report.solving_time += started.elapsed();
                match solution {
                    Solution::Sat(order) => {
                        self.report.satisfiable += 1;
                        self.attempts.entry(read_site).or_default().confirmations += 1;
                        self.confirm(&model, &order, r);
                    }
                    Solution::Unsat => self.report.unsatisfiable += 1,
                    Solution::Unknown => self.report.undecided += 1,
                }
            }
        }
    }

    /// Runs the solved order and reports what flipped.
    fn confirm(&mut self, model: &ChunkModel<'_>, order: &[usize], r: u32) {
        let started = Instant::now();
        let plan = confirm::plan(self.trace, model, order, r);
        let focus = model.step(r).thread as usize;
        let schedule = GuidedSchedule::new(plan, focus, self.observed.values.clone());
        let mut ex = runtime::run(self.f, self.site, Box::new(schedule), self.limits);
        let followed = ex
            .feedback
            .take()
            .and_then(|f| f.downcast::<Option<usize>>().ok())
            .is_none_or(|diverged| diverged.is_none());
        let outcomes = Outcomes::of(&ex);
        let failure = ex.failure.as_ref().map(|f| f.kind);
        let token = Token::from_run(&ex, failure).encode();
        let read = self.describe_read(model, order, r);
        let mut flipped_any = false;
        for (thread, site, occurrence, observed) in self.outcomes.flips(&outcomes) {
            if !self.reported.insert(site) {
                continue;
            }
            flipped_any = true;
            self.report.branches.push(ScheduleSensitiveBranch {
                site: site.to_string(),
                thread: self.label_of(thread),
                kind: BranchKind::Condition,
                occurrence,
                observed,
                flipped: !observed,
                read: read.clone(),
                prefix_followed: followed,
                failure,
                token: token.clone(),
                thread_key: thread,
                branch_site: Some(site),
            });
        }
        if let Some((thread, site)) = &outcomes.panic {
            let new_panic = self.outcomes.panic.as_ref() != Some(&(*thread, site.clone()));
            if new_panic && self.reported_panics.insert(site.clone()) {
                flipped_any = true;
                self.report.branches.push(ScheduleSensitiveBranch {
                    site: site.clone(),
                    thread: self.label_of(*thread),
                    kind: BranchKind::Panic,
                    occurrence: 0,
                    observed: false,
                    flipped: true,
                    read: read.clone(),
                    prefix_followed: followed,
                    failure,
                    token: token.clone(),
                    thread_key: *thread,
                    branch_site: None,
                });
            }
        }
        if let Some(info) = ex.failure.clone() {
            if self.failure_keys.insert((info.kind, info.site.clone())) {
                let index = self.report.failures.len() as u64;
                self.report.failures.push(describe_failure(
                    "ssb",
                    self.analysis.seed,
                    index,
                    &ex,
                    &info,
                    None,
                ));
            }
        }
        if flipped_any {
            self.report.confirmed += 1;
        } else {
            self.report.unconfirmed += 1;
        }
        drop(ex);
        self.report.confirming_time += started.elapsed();
    }

    fn label_of(&self, key: ThreadKey) -> String {
        match self.outcomes.keys.iter().position(|&k| k == key) {
            Some(t) => thread_label(self.observed, t),
            None => "a thread the observed execution did not spawn".to_string(),
        }
    }

    /// Describes `r` and where its value comes from, observed and in the solved order.
    fn describe_read(&self, model: &ChunkModel<'_>, order: &[usize], r: u32) -> FlippingRead {
        let step = model.step(r);
        let object = self
            .observed
            .objects
            .get(step.object as usize)
            .map_or_else(String::new, |o| o.id.to_string());
        let source = |writer: Option<u32>, initial: Option<Value>| match (writer, initial) {
            (Some(w), _) => {
                let w = &self.trace.steps[w as usize];
                format!(
                    "the write at {} ({})",
                    w.site,
                    thread_label(self.observed, w.thread as usize)
                )
            }
            (None, Some(Value::Initial(_)) | None) => "the initial value".to_string(),
            (None, Some(_)) => "the value it held when the analysed window began".to_string(),
        };
        let position = order
            .iter()
            .position(|&n| n as u32 == r)
            .unwrap_or(order.len());
        let new_writer = order[..position]
            .iter()
            .rev()
            .find(|&&n| {
                let s = model.step(n as u32);
                s.object == step.object && s.written.is_some()
            })
            .map(|&n| model.nodes[n]);
        let observed_source = source(step.read_from, Some(Value::Initial(step.object)));
        FlippingRead {
            thread: thread_label(self.observed, step.thread as usize),
            site: step.site.to_string(),
            object,
            observed_source,
            new_source: source(new_writer, model.initial_of(step.object)),
        }
    }
}
