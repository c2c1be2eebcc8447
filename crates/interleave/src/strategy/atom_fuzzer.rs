//! AtomFuzzer (Park and Sen, *Randomized active atomicity violation detection in concurrent
//! programs*, FSE 2008), the active random tester that seed 003 (AssetFuzzer) compares against
//! as a baseline (spec `atomfuzzer`, or `atomfuzzer:pause=100`).
//!
//! AtomFuzzer looks for one *atomicity-violating locking pattern* inside an atomic block, here a
//! unit of work ([`crate::atomic_set`]; a nested unit belongs to the outermost one): thread `t`,
//! inside unit of work `U`, acquires and releases lock `L`; another thread `t'` then acquires
//! `L`; then `t` acquires `L` again while still inside the same `U`. Whatever `t'` did under
//! `L` then ran in the middle of a block that was meant to be atomic (a check-then-act split
//! over two critical sections loses an update this way).
//!
//! The scheduler is the random walk, with one active twist. When a thread inside a unit of work
//! is about to acquire a lock that it already acquired and released earlier in the same unit
//! (the same dynamic instance), it is *paused*: not scheduled for up to `pause` scheduling
//! decisions, so that other threads get the chance to take the lock first. The pause ends early
//! once another thread acquires the lock; the paused thread's re-acquisition then completes the
//! pattern, and only at that moment is the violation reported. If every enabled thread is
//! paused, one of them, drawn at random, is let go (thrash breaking). A thread let go after a
//! timeout or a thrash break is not paused again before its next step. The execution then goes
//! on at random, so the consequence of the violation (a failed assertion, a panic, a deadlock)
//! is caught in the same execution, with the usual report and replay token. One phase, no
//! profiling run: the search is driven by what the current execution has done so far.
//!
//! Acquisitions are `Mutex::lock` and `RwLock::read`/`write`. Two acquisitions of an `RwLock`
//! conflict unless both are read locks; the pattern is reported only when the interloper's
//! acquisition conflicts with one of `t`'s earlier acquisitions in the unit (a reader slipping
//! between two read-only critical sections changes nothing). `try_lock` and a `Condvar` waiter
//! taking its mutex back are not seen as acquisitions (the schedule cannot tell from the pending
//! step whether a `try_lock` succeeds, nor which mutex a waiter takes back), so patterns that
//! need them are missed, never invented.
//!
//! Precision: every reported violation is a pattern that this execution really produced: the
//! three acquisitions and `t`'s release between the first two are steps the schedule chose, in
//! that order, and all three acquisitions lie in one dynamic instance of `U`. It is incomplete:
//! violations that are not this locking pattern are missed, for example a check-then-act whose
//! check or act is an unlocked access, an update split over two *different* locks, or the
//! asymmetric races seed 003 names as the main reason AtomFuzzer finds the fewest bugs in its
//! evaluation (well-behaved threads lock, an ill-behaved one forgets to).

use std::collections::HashMap;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{below, ObjectId, OpKind, Outcome, Schedule, Site, Strategy, UnitView, View};
use crate::runtime::op::ShortSite;

/// Scheduling decisions a paused thread waits at most when the spec does not say.
pub const DEFAULT_PAUSE: u64 = 100;

/// The AtomFuzzer strategy (spec `atomfuzzer`, or `atomfuzzer:pause=100`).
#[derive(Clone, Debug)]
pub struct AtomFuzzer {
    pause: u64,
    totals: Counters,
    /// Distinct violations, in the order they were first realised.
    findings: Vec<Finding>,
    /// The index in `findings` of each violation's deduplication key.
    known: HashMap<FindingKey, usize>,
    executions_with_violation: u64,
    failed_executions_with_violation: u64,
}

impl AtomFuzzer {
    /// AtomFuzzer pausing a thread for at most `pause` scheduling decisions (at least 1).
    pub fn new(pause: u64) -> AtomFuzzer {
        AtomFuzzer {
            pause: pause.max(1),
            totals: Counters::default(),
            findings: Vec::new(),
            known: HashMap::new(),
            executions_with_violation: 0,
            failed_executions_with_violation: 0,
        }
    }
}

impl Default for AtomFuzzer {
    fn default() -> AtomFuzzer {
        AtomFuzzer::new(DEFAULT_PAUSE)
    }
}

impl Strategy for AtomFuzzer {
    fn spec(&self) -> String {
        if self.pause == DEFAULT_PAUSE {
            "atomfuzzer".to_string()
        } else {
            format!("atomfuzzer:pause={}", self.pause)
        }
    }

    fn plan(&mut self, _execution: u64, seed: u64) -> Option<Box<dyn Schedule + Send>> {
        Some(Box::new(AtomSchedule::new(self.pause, seed)))
    }

    fn observe(&mut self, execution: u64, outcome: &Outcome) {
        let Some(report) = outcome
            .feedback
            .and_then(|feedback| feedback.downcast_ref::<ExecutionReport>())
        else {
            return;
        };
        self.totals.add(&report.counters);
        if report.violations.is_empty() {
            return;
        }
        self.executions_with_violation += 1;
        if outcome.failed {
            self.failed_executions_with_violation += 1;
        }
        for violation in &report.violations {
            let key = violation.key();
            match self.known.get(&key) {
                Some(&index) => {
                    let finding = &mut self.findings[index];
                    finding.occurrences += 1;
                    if finding.last_execution != execution {
                        finding.last_execution = execution;
                        finding.executions += 1;
                    }
                }
                None => {
                    self.known.insert(key, self.findings.len());
                    self.findings.push(Finding {
                        first: violation.clone(),
                        first_execution: execution,
                        last_execution: execution,
                        occurrences: 1,
                        executions: 1,
                    });
                }
            }
        }
    }

    fn stats(&self) -> Vec<(String, String)> {
        let totals = &self.totals;
        vec![
            (
                "pause budget (scheduling decisions)".to_string(),
                self.pause.to_string(),
            ),
            ("pauses".to_string(), totals.pauses.to_string()),
            (
                "pauses ended by another thread's acquisition".to_string(),
                totals.interloped.to_string(),
            ),
            (
                "pauses ended by the budget".to_string(),
                totals.timeouts.to_string(),
            ),
            (
                "thrash breaks".to_string(),
                totals.thrash_breaks.to_string(),
            ),
            (
                "violations realised".to_string(),
                totals.violations.to_string(),
            ),
            (
                "distinct violations".to_string(),
                self.findings.len().to_string(),
            ),
            (
                "executions with a violation".to_string(),
                self.executions_with_violation.to_string(),
            ),
            (
                "executions with a violation that failed".to_string(),
                self.failed_executions_with_violation.to_string(),
            ),
        ]
    }

    fn warnings(&self) -> Vec<String> {
        self.findings.iter().map(Finding::describe).collect()
    }
}

/// What one execution's schedule counted.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    pauses: u64,
    /// Pauses ended because another thread acquired the awaited lock.
    interloped: u64,
    /// Pauses ended because the thread had waited `pause` decisions.
    timeouts: u64,
    thrash_breaks: u64,
    violations: u64,
}

impl Counters {
    fn add(&mut self, other: &Counters) {
        self.pauses += other.pauses;
        self.interloped += other.interloped;
        self.timeouts += other.timeouts;
        self.thrash_breaks += other.thrash_breaks;
        self.violations += other.violations;
    }
}

/// A realised locking pattern.
#[derive(Clone, Debug)]
struct Violation {
    unit: &'static str,
    unit_site: Site,
    thread: usize,
    lock: ObjectId,
    first_site: Site,
    interloper: Acquisition,
    reacquire_site: Site,
}

/// The deduplication key of a violation: unit of work name and the three acquisition sites.
type FindingKey = (&'static str, Site, Site, Site);

impl Violation {
    fn key(&self) -> FindingKey {
        (
            self.unit,
            self.first_site,
            self.interloper.site,
            self.reacquire_site,
        )
    }
}

/// One distinct violation over the exploration.
#[derive(Clone, Debug)]
struct Finding {
    first: Violation,
    first_execution: u64,
    last_execution: u64,
    occurrences: u64,
    executions: u64,
}

impl Finding {
    fn describe(&self) -> String {
        let v = &self.first;
        format!(
            "atomicity violation in unit of work `{unit}` (entered at {unit_site}): thread \
             {thread} acquired {lock} at {first} and released it, thread {other} then acquired \
             it at {interloper}, and thread {thread} acquired it again at {reacquire} while still \
             inside the same unit of work, so thread {other}'s critical section ran in the middle \
             of a unit of work meant to be atomic (AtomFuzzer's locking pattern, first realised \
             in execution {execution}; {occurrences} in {executions})",
            unit = v.unit,
            unit_site = ShortSite(v.unit_site),
            thread = v.thread,
            lock = v.lock,
            first = ShortSite(v.first_site),
            other = v.interloper.thread,
            interloper = ShortSite(v.interloper.site),
            reacquire = ShortSite(v.reacquire_site),
            execution = self.first_execution,
            occurrences = counted(self.occurrences, "time"),
            executions = counted(self.executions, "execution"),
        )
    }
}

/// `count` followed by `noun`, in the plural unless `count` is 1.
fn counted(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// What a schedule hands to [`AtomFuzzer::observe`].
struct ExecutionReport {
    counters: Counters,
    violations: Vec<Violation>,
}

/// Another thread's acquisition of a lock.
#[derive(Clone, Copy, Debug)]
struct Acquisition {
    thread: usize,
    site: Site,
}

/// A lock a thread acquired inside its current unit of work.
struct UnitLock {
    lock: ObjectId,
    /// The thread's first acquisition of the lock in the unit.
    first_site: Site,
    /// Whether one of the thread's acquisitions of the lock in the unit was exclusive.
    exclusive: bool,
    /// The thread released the lock and has not acquired it again since.
    released: bool,
    /// The first conflicting acquisition by another thread since that release.
    interloper: Option<Acquisition>,
}

/// What the schedule knows about one thread.
#[derive(Default)]
struct ThreadRecord {
    /// The index of the unit of work the thread is in, as `View::unit` gives it.
    unit: Option<usize>,
    /// The locks the thread holds, with how many times (read locks can be held repeatedly).
    held: Vec<(ObjectId, u32)>,
    /// The locks it acquired inside `unit`.
    unit_locks: Vec<UnitLock>,
}

/// A thread kept from running before it re-acquires `lock`.
struct Pause {
    thread: usize,
    lock: ObjectId,
    /// The decision at which the pause began.
    since: u64,
}

/// One AtomFuzzer execution.
struct AtomSchedule {
    rng: Pcg64Mcg,
    pause: u64,
    decisions: u64,
    threads: Vec<ThreadRecord>,
    paused: Vec<Pause>,
    /// Threads let go after a timeout or a thrash break, not to be paused again before their
    /// next step.
    spared: Vec<usize>,
    counters: Counters,
    violations: Vec<Violation>,
}

impl AtomSchedule {
    fn new(pause: u64, seed: u64) -> AtomSchedule {
        AtomSchedule {
            rng: Pcg64Mcg::seed_from_u64(seed),
            pause,
            decisions: 0,
            threads: Vec::new(),
            paused: Vec::new(),
            spared: Vec::new(),
            counters: Counters::default(),
            violations: Vec::new(),
        }
    }

    /// Forgets the unit locks of every thread that left its unit of work (or entered another)
    /// since the last decision: the pattern must lie in one dynamic instance of a unit.
    fn follow_units(&mut self, view: &View<'_>) {
        if self.threads.len() < view.thread_count() {
            self.threads
                .resize_with(view.thread_count(), ThreadRecord::default);
        }
        for (thread, record) in self.threads.iter_mut().enumerate() {
            let unit = view.unit(thread).map(|u| u.index);
            if record.unit != unit {
                record.unit = unit;
                record.unit_locks.clear();
            }
        }
    }

    /// Lets go the threads that have been paused for `pause` decisions.
    fn end_expired_pauses(&mut self) {
        let (decisions, pause) = (self.decisions, self.pause);
        let mut expired = Vec::new();
        self.paused.retain(|p| {
            let waiting = decisions - p.since < pause;
            if !waiting {
                expired.push(p.thread);
            }
            waiting
        });
        self.counters.timeouts += expired.len() as u64;
        self.spared.extend(expired);
    }

    /// Pauses every enabled thread that is about to re-acquire, inside its unit of work, a lock
    /// it released earlier in the same unit, and that no other thread has acquired since.
    fn pause_reacquisitions(&mut self, view: &View<'_>) {
        for &thread in view.enabled() {
            if self.spared.contains(&thread) || self.paused.iter().any(|p| p.thread == thread) {
                continue;
            }
            let Some(lock) = lock_to_acquire(view, thread) else {
                continue;
            };
            let record = &self.threads[thread];
            let awaits_interloper = record.unit.is_some()
                && record
                    .unit_locks
                    .iter()
                    .any(|u| u.lock == lock && u.released && u.interloper.is_none());
            if awaits_interloper {
                self.paused.push(Pause {
                    thread,
                    lock,
                    since: self.decisions,
                });
                self.counters.pauses += 1;
            }
        }
    }

    /// Applies the chosen step to the records. The runtime applies a chosen lock operation
    /// before any other step is taken, so the records can follow it at the choice.
    fn take_step(&mut self, view: &View<'_>, chosen: usize) {
        self.spared.retain(|&t| t != chosen);
        let Some(op) = view.pending(chosen) else {
            return;
        };
        let Some(lock) = op.object else {
            return;
        };
        match op.kind {
            OpKind::Lock | OpKind::WriteLock => {
                self.acquire(view.unit(chosen), chosen, lock, true, op.site);
            }
            OpKind::ReadLock => self.acquire(view.unit(chosen), chosen, lock, false, op.site),
            OpKind::Unlock | OpKind::RwUnlock => self.release(chosen, lock),
            _ => {}
        }
    }

    fn acquire(
        &mut self,
        unit: Option<UnitView>,
        thread: usize,
        lock: ObjectId,
        exclusive: bool,
        site: Site,
    ) {
        for (other, record) in self.threads.iter_mut().enumerate() {
            if other == thread {
                continue;
            }
            let mut interloped = false;
            for unit_lock in record.unit_locks.iter_mut().filter(|u| {
                u.lock == lock && u.released && u.interloper.is_none() && (exclusive || u.exclusive)
            }) {
                unit_lock.interloper = Some(Acquisition { thread, site });
                interloped = true;
            }
            // The paused thread has what it waited for: its re-acquisition now completes the
            // pattern, as soon as the lock is free again.
            if interloped {
                let before = self.paused.len();
                self.paused
                    .retain(|p| !(p.thread == other && p.lock == lock));
                self.counters.interloped += (before - self.paused.len()) as u64;
            }
        }
        let record = &mut self.threads[thread];
        match record.held.iter_mut().find(|(held, _)| *held == lock) {
            Some((_, count)) => *count += 1,
            None => record.held.push((lock, 1)),
        }
        let Some(unit) = unit else {
            return;
        };
        match record.unit_locks.iter_mut().find(|u| u.lock == lock) {
            Some(unit_lock) => {
                if unit_lock.released {
                    if let Some(interloper) = unit_lock.interloper.take() {
                        self.counters.violations += 1;
                        self.violations.push(Violation {
                            unit: unit.name,
                            unit_site: unit.site,
                            thread,
                            lock,
                            first_site: unit_lock.first_site,
                            interloper,
                            reacquire_site: site,
                        });
                    }
                    unit_lock.released = false;
                }
                unit_lock.exclusive |= exclusive;
            }
            None => record.unit_locks.push(UnitLock {
                lock,
                first_site: site,
                exclusive,
                released: false,
                interloper: None,
            }),
        }
    }

    fn release(&mut self, thread: usize, lock: ObjectId) {
        let record = &mut self.threads[thread];
        if let Some(position) = record.held.iter().position(|(held, _)| *held == lock) {
            record.held[position].1 -= 1;
            if record.held[position].1 > 0 {
                return;
            }
            record.held.swap_remove(position);
        }
        if let Some(unit_lock) = record.unit_locks.iter_mut().find(|u| u.lock == lock) {
            unit_lock.released = true;
        }
    }
}

/// The lock thread `thread` is about to acquire, if its pending step is a blocking acquisition.
fn lock_to_acquire(view: &View<'_>, thread: usize) -> Option<ObjectId> {
    let op = view.pending(thread)?;
    match op.kind {
        OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock => op.object,
        _ => None,
    }
}

impl Schedule for AtomSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        self.decisions += 1;
        self.follow_units(view);
        self.end_expired_pauses();
        self.pause_reacquisitions(view);
        let runnable: Vec<usize> = view
            .enabled()
            .iter()
            .copied()
            .filter(|&t| !self.paused.iter().any(|p| p.thread == t))
            .collect();
        let chosen = if runnable.is_empty() {
            // Thrashing: every enabled thread is paused, and each may be waiting for another
            // paused one. Let one of them go, drawn at random.
            let enabled = view.enabled();
            let chosen = enabled[below(self.rng.next_u64(), enabled.len())];
            self.paused.retain(|p| p.thread != chosen);
            self.counters.thrash_breaks += 1;
            chosen
        } else {
            runnable[below(self.rng.next_u64(), runnable.len())]
        };
        self.take_step(view, chosen);
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    fn feedback(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        Some(Box::new(ExecutionReport {
            counters: self.counters,
            violations: std::mem::take(&mut self.violations),
        }))
    }
}
