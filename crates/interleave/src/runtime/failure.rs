//! How an execution can fail, in the engine's words: the kind, the message, the thread and the
//! site. The report layer turns a recorded failure into what the user reads.

use std::fmt;

use super::op::Site;

/// The kind of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// A thread panicked (a failed assertion, an `unwrap` on `None`, an explicit `panic!`).
    Panic,
    /// No thread could run while the main thread was blocked.
    Deadlock,
    /// A thread tried to lock a mutex (or `RwLock`) it already held.
    Relock,
    /// The execution exceeded the step bound: a livelock or an unbounded spin loop.
    StepBound,
    /// Two conflicting accesses to a tracked variable were not ordered by happens-before.
    DataRace,
    /// A replayed schedule no longer matches what the program does.
    Divergence,
    /// The program behaved differently under the same schedule: it depends on something the
    /// scheduler does not control.
    Nondeterminism,
}

impl FailureKind {
    pub(crate) fn code(self) -> u8 {
        match self {
            FailureKind::Panic => 1,
            FailureKind::Deadlock => 2,
            FailureKind::Relock => 3,
            FailureKind::StepBound => 4,
            FailureKind::DataRace => 5,
            FailureKind::Divergence => 6,
            FailureKind::Nondeterminism => 7,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<FailureKind> {
        Some(match code {
            1 => FailureKind::Panic,
            2 => FailureKind::Deadlock,
            3 => FailureKind::Relock,
            4 => FailureKind::StepBound,
            5 => FailureKind::DataRace,
            6 => FailureKind::Divergence,
            7 => FailureKind::Nondeterminism,
            _ => return None,
        })
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Panic => "panic",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Relock => "relock",
            FailureKind::StepBound => "step bound exceeded",
            FailureKind::DataRace => "data race",
            FailureKind::Divergence => "replay divergence",
            FailureKind::Nondeterminism => "uncontrolled nondeterminism",
        })
    }
}

/// A failure as the runtime records it, before the report is assembled.
#[derive(Clone, Debug)]
pub(crate) struct FailureInfo {
    pub kind: FailureKind,
    pub message: String,
    pub thread: Option<usize>,
    /// Where a panic was raised.
    pub site: Option<String>,
}

/// Why the engine stopped an execution by itself, as data: the analysis layer puts it into
/// words (`super::Narrator::stop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// No thread can run, and some have not finished.
    Deadlock,
    /// `thread` asks for a lock it has held since `since`.
    Relock { thread: usize, since: Site },
    /// The execution reached the step bound.
    StepBound,
    /// The schedule chose `chosen`, which cannot run: a replay whose program changed.
    ScheduleImpossible { chosen: usize },
}
