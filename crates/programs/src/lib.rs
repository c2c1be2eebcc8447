//! Benchmark programs for `interleave`, ported from the example programs of the seed papers.
//!
//! Every entry of [`all()`] is one small concurrent program in two versions selected by
//! [`Variant`]: the **buggy** program, whose bug is real but only exposed by some schedules, and
//! its **fixed twin**, which is correct (and free of data races) under every schedule. A program
//! is a plain function meant to run as the body of one `interleave` execution, e.g.
//!
//! ```no_run
//! let p = interleave_programs::find("rpro-d1").unwrap();
//! let report = interleave::Builder::new()
//!     .strategy("pct:d=2".parse().unwrap())
//!     .executions(1_000)
//!     .data_races(interleave::RaceMode::Warn)
//!     .explore(|| (p.run)(interleave_programs::Variant::Buggy))
//!     .unwrap();
//! assert!(!report.failures.is_empty());
//! ```
//!
//! Sources, by seed paper (see `../shared/seeds/README.md`, relative to the repository root,
//! for the papers; `interleave list` prints every program with its origin and bug kind):
//!
//! A program's name starts with its origin, never with "seed", which means a random seed
//! everywhere a user sees it:
//!
//! | module | names | paper | programs |
//! |---|---|---|---|
//! | [`seed000`] | `bounding-fig*` | Bindal, Bansal, Lal: variable and thread bounding | Figs 1-4 (c, v bounds), Figs 8-10 (thread bound t = 3) |
//! | [`suite::seed000_contest`] | `bounding-*` | the same paper, Table 1 | the ConTest programs, plus an AllocationVector bug needing c = 2 |
//! | [`seed001`] | `rpro-*` | Cai, Yang: radius-aware probabilistic testing of deadlocks | d1, JDBC-like d2, HawkNL-, SQLite- and MySQL-like deadlocks, dining philosophers |
//! | [`seed002`] | `valsched-fig*` | Chen: value schedules (thesis) | Fig 1.1 (division by zero), Fig 5.1 (two accounts) |
//! | [`suite::seed002_kernel`] | `valsched-*` | the same thesis, Table 3.2 | the kernel programs (twostage ... nestedmonitor) |
//! | [`suite::seed002_scaled`] | `valsched-*-N` | the same kernels as SCTBench scales them (Thomson, Donaldson, Betts, PPoPP 2014) | twostage, wronglock and reorder with 10, 20, 50 and 100 threads |
//! | [`suite::seed002_apps`] | `valsched-*` | the same thesis, Table 3.2 | the real and benchmark programs (alarmclock ... account-subtype; daisy omitted) |
//! | [`seed003`] | `assetfuzzer-*` | Lai, Cheung, Chan: atomic-set serializability | `Account`, StringBuffer append/getChars, Jigsaw raw/rlen |
//! | [`seed004`] | `tame-*` | Huang, Rauchwerger: schedule-sensitive branches | Fig 1 (`is_good`), Fig 2 (Derby `referencedColumnMap`), `checkHash`, a precision program (`local-branches`) and a long-running one (`long-run`, Table 2 analogue) |
//! | [`suite::memory_order`] | `ordering-*` | issue 20: memory-ordering bugs | a flag-published buffer, an SPSC ring buffer, Peterson's lock, double-checked initialisation |
//! | [`suite::lock_free`] | `lockfree-*` | issue 17: lock-free code | a Treiber stack with node reuse and its ABA bug |
//!
//! The [`suite::memory_order`] programs are not from a paper: their bugs are atomic orderings too
//! weak for what they publish, found only under a weak memory model
//! ([`Program::needs_weak_memory`]).
//!
//! Every program terminates under every schedule: loops are bounded and waiting is done with
//! blocking primitives (`join`, `Condvar`), never with unbounded spinning. Bugs surface as a
//! panic (an `assert!` naming the violated invariant, or a natural panic such as a division by
//! zero) or as a deadlock. Runtime items are imported only through [`rt`].
//!
//! The programs wrap the conditions of the branches that matter in `rt::branch(..)`, which
//! records each outcome for interleave's schedule-sensitive-branch analysis (seed 004) and
//! returns the condition; it is not a scheduling point, so it changes no schedule. The seed 004
//! programs and several others (seed 000's ConTest account and airline, seed 002's
//! account-race, seed 003's account and StringBuffer) annotate their schedule-sensitive
//! branches and the ordinary data-dependent ones near them (loop bounds and the switches
//! between the buggy and the fixed code are left out).
//!
//! A program can be [`Program::long`] (about a million steps per execution, `tame-long-run`,
//! or 50 and 100 threads, the largest of [`suite::seed002_scaled`]): the runs that go through
//! the whole suite by default skip it ([`default_suite`]), and a run that names it gets the step
//! bound [`Program::max_steps`].

use std::fmt;

use std::sync::OnceLock;

pub mod rt;
pub mod suite;
// Interleave only: shuttle and loom have no tokio-shaped primitives or virtual time.
pub mod async_suite;

pub use suite::{seed000, seed001, seed002, seed003, seed004};

/// What kind of bug the buggy version of a program contains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BugKind {
    /// An `assert!` on a program invariant fails.
    Assertion,
    /// The program panics by itself (e.g. division by zero), without an explicit assertion.
    Panic,
    /// Threads wait for each other's locks forever.
    Deadlock,
    /// Two unsynchronised conflicting accesses to a tracked variable (reported as a failure only
    /// with `RaceMode::Fail`).
    DataRace,
    /// Each access is correctly locked, but a unit of work that should be atomic over a set of
    /// fields (an atomic set) interleaves with another one; surfaces as a failed assertion (and,
    /// where the program declares its units of work, as a violation reported by
    /// `Builder::monitor_atomic_sets`).
    AtomicSetViolation,
    /// A branch whose outcome depends on the schedule takes the unexpected side, and the code
    /// behind it misbehaves; surfaces as a failed assertion.
    ScheduleSensitiveBranch,
}

/// How a bug of a [`BugKind`] shows up in an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Surface {
    /// A panic in some thread (assertions included).
    Panic,
    /// All live threads are blocked.
    Deadlock,
    /// A data race reported by the race detector.
    DataRace,
}

impl BugKind {
    /// How this kind of bug shows up when it is triggered.
    pub fn surface(self) -> Surface {
        match self {
            BugKind::Assertion
            | BugKind::Panic
            | BugKind::AtomicSetViolation
            | BugKind::ScheduleSensitiveBranch => Surface::Panic,
            BugKind::Deadlock => Surface::Deadlock,
            BugKind::DataRace => Surface::DataRace,
        }
    }

    /// A short kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            BugKind::Assertion => "assertion",
            BugKind::Panic => "panic",
            BugKind::Deadlock => "deadlock",
            BugKind::DataRace => "data-race",
            BugKind::AtomicSetViolation => "atomic-set-violation",
            BugKind::ScheduleSensitiveBranch => "schedule-sensitive-branch",
        }
    }
}

impl fmt::Display for BugKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which version of a program to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The program as in the paper: the bug is reachable under some schedules.
    Buggy,
    /// The fixed twin: correct and race-free under every schedule.
    Fixed,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Buggy => "buggy",
            Variant::Fixed => "fixed",
        })
    }
}

/// One benchmark program (a buggy version and its fixed twin).
#[derive(Clone, Copy)]
pub struct Program {
    /// Kebab-case, unique name, e.g. `"rpro-d1"`.
    pub name: &'static str,
    /// Where it comes from, e.g. `"Cai, Yang (RPro), Fig 1 (deadlock d1)"`.
    pub origin: &'static str,
    /// The kind of bug in the buggy version.
    pub bug: BugKind,
    /// One line: what goes wrong in the buggy version.
    pub summary: &'static str,
    /// A strategy and execution budget that expose the bug for every seed in `0..10`; checked
    /// by `tests/seed_examples.rs`, so it is also a good first thing to try.
    pub found_by: Finding,
    /// Whether thousands of executions take too long for the runs that go through the whole
    /// suite: one execution takes about a million steps or more (the long-running programs of
    /// seed 004's Table 2 analogue), or the program runs 50 or 100 threads (the largest scaled
    /// kernels of [`suite::seed002_scaled`], a few milliseconds per execution in a release build
    /// rather than microseconds). Runs that go through the whole suite by default skip long
    /// programs (see [`default_suite`]); a run that names one gets the step bound
    /// [`LONG_MAX_STEPS`] (see [`Program::max_steps`]).
    pub long: bool,
    /// Whether the buggy version's bug needs a weak memory model: it gives an atomic access an
    /// ordering too weak for what it publishes, and is correct under sequential consistency, so
    /// no schedule exposes it where every atomic operation runs as `SeqCst`. interleave does that
    /// until its weak memory model lands (issue 20), and shuttle always does; loom finds these
    /// bugs. Until then `tests/seed_examples.rs` checks that the buggy version passes every
    /// schedule under sequential consistency instead of checking `found_by` (which says what
    /// the model is meant to achieve). The fixed twins are correct under both models. `false`
    /// for every program outside [`suite::memory_order`].
    pub needs_weak_memory: bool,
    /// The test body; runs inside one execution of the runtime it was compiled against.
    pub run: fn(Variant),
}

/// A strategy known to expose a program's bug, and within how many executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A strategy spec such as `"pct:d=3"`.
    pub strategy: &'static str,
    /// Executions per seed that suffice for every seed in `0..10`.
    pub within: u64,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("bug", &self.bug)
            .field("summary", &self.summary)
            .field("found_by", &self.found_by)
            .field("long", &self.long)
            .field("needs_weak_memory", &self.needs_weak_memory)
            .finish_non_exhaustive()
    }
}

/// The step bound of an execution of a [`Program::long`] program: the long programs take up to
/// about a million and a half steps, and every runtime's default bound is lower (interleave's
/// 100,000, shuttle's 1,000,000).
pub const LONG_MAX_STEPS: u64 = 4_000_000;

impl Program {
    /// The step bound an execution of this program needs, if the runtime's default is too low:
    /// [`LONG_MAX_STEPS`] for a long program, `None` for the others.
    pub fn max_steps(&self) -> Option<u64> {
        self.long.then_some(LONG_MAX_STEPS)
    }
}

/// The programs whose branches carry `rt::branch` annotations: the schedule-sensitive-branch
/// analysis's Table 1 (seed 004), plus its precision program `tame-local-branches`.
pub const BRANCH_ANNOTATED: [&str; 9] = [
    "tame-fig1",
    "tame-derby",
    "tame-check-hash",
    "tame-local-branches",
    "assetfuzzer-string-buffer",
    "assetfuzzer-account",
    "bounding-account",
    "bounding-airline-tickets",
    "valsched-account-race",
];

/// Every program, in a stable order (by seed, then by figure, then the memory-ordering and
/// lock-free programs), then the async ports; the long programs included.
pub fn all() -> &'static [Program] {
    static ALL: OnceLock<Vec<Program>> = OnceLock::new();
    ALL.get_or_init(|| [suite::programs(), async_suite::PROGRAMS.to_vec()].concat())
}

/// The programs that runs over the whole suite go through by default: [`all()`] without the
/// [`Program::long`] ones, whose executions take a quarter of a second each (in a release
/// build) rather than microseconds, or a few milliseconds for the 50- and 100-thread ones.
/// The per-seed tests, `interleave bench` without `-p`, the atomic-set table's whole-suite line
/// and the peers' fixed-twin test enumerate these; a long program runs when it is named
/// (`interleave bench -p tame-long-run`) and in its own test.
pub fn default_suite() -> impl Iterator<Item = &'static Program> {
    all().iter().filter(|p| !p.long)
}

/// The program called `name`, if any (long programs included).
pub fn find(name: &str) -> Option<&'static Program> {
    all().iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for p in all() {
            assert!(seen.insert(p.name), "duplicate name {}", p.name);
            assert!(
                p.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{} is not kebab-case",
                p.name
            );
            assert!(std::ptr::eq(find(p.name).unwrap(), p));
        }
        assert!(find("no-such-program").is_none());
    }

    #[test]
    fn the_default_suite_is_every_program_but_the_long_ones() {
        let default: Vec<&str> = default_suite().map(|p| p.name).collect();
        for p in all() {
            assert_eq!(default.contains(&p.name), !p.long, "{}", p.name);
            assert_eq!(
                p.max_steps(),
                p.long.then_some(LONG_MAX_STEPS),
                "{}",
                p.name
            );
        }
        let long_run =
            find("tame-long-run").expect("found by name although not in the default suite");
        assert!(long_run.long);
    }
}
