//! Benchmark programs for `interleave`, ported from the example programs of the seed papers.
//!
//! Every entry of [`all()`] is one small concurrent program in two versions selected by
//! [`Variant`]: the **buggy** program, whose bug is real but only exposed by some schedules, and
//! its **fixed twin**, which is correct (and free of data races) under every schedule. A program
//! is a plain function meant to run as the body of one `interleave` execution, e.g.
//!
//! ```no_run
//! let p = interleave_programs::find("seed001-d1").unwrap();
//! let report = interleave::Builder::new()
//!     .strategy("pct:d=2".parse().unwrap())
//!     .executions(1_000)
//!     .data_races(interleave::RaceMode::Warn)
//!     .explore(|| (p.run)(interleave_programs::Variant::Buggy))
//!     .unwrap();
//! assert!(!report.failures.is_empty());
//! ```
//!
//! Sources, one module per seed paper (see `/work/shared/seeds/README.md` for the papers):
//!
//! | module | paper | programs |
//! |---|---|---|
//! | [`seed000`] | Bindal, Bansal, Lal: variable and thread bounding | Figs 1-4 (c, v bounds), Figs 8-10 (thread bound t = 3) |
//! | [`seed001`] | Cai, Yang: radius-aware probabilistic testing of deadlocks | deadlock d1, JDBC-like deadlock d2 |
//! | [`seed002`] | Chen: value schedules (thesis) | Fig 1.1 (division by zero), Fig 5.1 (two accounts) |
//! | [`seed003`] | Lai, Cheung, Chan: atomic-set serializability | `Account` copy constructor vs `creditInterest` |
//! | [`seed004`] | Huang, Rauchwerger: schedule-sensitive branches | Fig 2 (Derby `referencedColumnMap` null check) |
//!
//! Every program terminates under every schedule: loops are bounded and waiting is done with
//! blocking primitives (`join`, `Condvar`), never with unbounded spinning. Bugs surface as a
//! panic (an `assert!` naming the violated invariant, or a natural panic such as a division by
//! zero) or as a deadlock. Runtime items are imported only through [`rt`].

use std::fmt;

pub mod rt;

pub mod seed000;
pub mod seed001;
pub mod seed002;
pub mod seed003;
pub mod seed004;
mod util;

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
    /// fields (an atomic set) interleaves with another one; surfaces as a failed assertion.
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
    /// Kebab-case, unique name, e.g. `"seed001-d1"`.
    pub name: &'static str,
    /// Where it comes from, e.g. `"seed 001, Fig 1 (deadlock d1)"`.
    pub origin: &'static str,
    /// The kind of bug in the buggy version.
    pub bug: BugKind,
    /// One line: what goes wrong in the buggy version.
    pub summary: &'static str,
    /// The test body; runs inside an interleave execution.
    pub run: fn(Variant),
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("bug", &self.bug)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

static PROGRAMS: &[Program] = &[
    Program {
        name: "seed000-fig1",
        origin: "seed 000, Fig 1 (c=0, v=0)",
        bug: BugKind::Assertion,
        summary: "the checker asserts the initial value of `a`, but the worker may increment it first",
        run: seed000::fig1,
    },
    Program {
        name: "seed000-fig2",
        origin: "seed 000, Fig 2 (c=1, v=1)",
        bug: BugKind::Assertion,
        summary: "two reads of `a` differ when the other thread's `a++` lands between them",
        run: seed000::fig2,
    },
    Program {
        name: "seed000-fig3",
        origin: "seed 000, Fig 3 (c=2, v=1)",
        bug: BugKind::Assertion,
        summary: "two reads of `a` differ when they see the writer's transient `a = 1` and then its `a = 0`",
        run: seed000::fig3,
    },
    Program {
        name: "seed000-fig4",
        origin: "seed 000, Fig 4 (c=2, v=2)",
        bug: BugKind::Assertion,
        summary: "the reads of `a` straddle `a = 1` while the read of `b` sees the transient `b = 1`",
        run: seed000::fig4,
    },
    Program {
        name: "seed000-fig8",
        origin: "seed 000, Fig 8 (c=0, v=0, t=3)",
        bug: BugKind::Assertion,
        summary: "the checker sees `a == 2` when both incrementing threads run before it",
        run: seed000::fig8,
    },
    Program {
        name: "seed000-fig9",
        origin: "seed 000, Fig 9 (c=1, v=1, t=3)",
        bug: BugKind::Assertion,
        summary: "`a` grows by 2 between two reads when both other threads' `a++` land between them",
        run: seed000::fig9,
    },
    Program {
        name: "seed000-fig10",
        origin: "seed 000, Fig 10 (c=2, v=2, t=3)",
        bug: BugKind::Assertion,
        summary: "both pairs of reads (of `a`, then of `b`) differ when each is split by another thread's increment",
        run: seed000::fig10,
    },
    Program {
        name: "seed001-d1",
        origin: "seed 001, Fig 1 (deadlock d1)",
        bug: BugKind::Deadlock,
        summary: "two threads take locks m and n in opposite orders",
        run: seed001::d1,
    },
    Program {
        name: "seed001-d2",
        origin: "seed 001, deadlock d2 (adapted from a JDBC connector deadlock)",
        bug: BugKind::Deadlock,
        summary: "locks p and n taken in opposite orders, reachable only if the second thread slips through lock s and the first releases n first",
        run: seed001::d2,
    },
    Program {
        name: "seed002-fig1-1",
        origin: "seed 002, Fig 1.1 (simple Java example)",
        bug: BugKind::Panic,
        summary: "thread 2 divides by a field it just set to 1, but thread 1 may zero it in between",
        run: seed002::fig1_1,
    },
    Program {
        name: "seed002-fig5-1",
        origin: "seed 002, Fig 5.1 (sample program, two accounts)",
        bug: BugKind::Assertion,
        summary: "thread 2 updates accX under the monitor of accY, so a concurrent deposit to accX can be lost",
        run: seed002::fig5_1,
    },
    Program {
        name: "seed003-account",
        origin: "seed 003, motivating example (class Account and its test case)",
        bug: BugKind::AtomicSetViolation,
        summary: "the copy constructor reads checking and savings in two critical sections; creditInterest between them yields a mixed copy",
        run: seed003::account,
    },
    Program {
        name: "seed004-derby",
        origin: "seed 004, Fig 2 (Apache Derby referencedColumnMap)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "a non-null check of a shared field is followed by a second read that another thread may have nulled",
        run: seed004::derby,
    },
];

/// Every program, in a stable order (by seed, then by figure).
pub fn all() -> &'static [Program] {
    PROGRAMS
}

/// The program called `name`, if any.
pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
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
}
