//! How an execution can fail, in the engine's words: the kind, the message, the thread and the
//! site. The report layer turns a recorded failure into what the user reads.

use std::fmt;
use std::time::Duration;

use super::object::ObjState;
use super::op::{Op, Site};
use super::Awaited;

/// The kind of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// A thread panicked (a failed assertion, an `unwrap` on `None`, an explicit `panic!`).
    Panic,
    /// No thread could run while some thread had not finished: the main thread was blocked,
    /// or it had returned and left threads blocked that could never finish.
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
    /// The failure's text; for a stop of the engine's own, the notes that follow its
    /// explanation (see [`FailureInfo::text`]).
    pub message: String,
    pub thread: Option<usize>,
    /// Where a panic was raised.
    pub site: Option<String>,
    /// Why and in what state the engine stopped the execution by itself.
    pub stopped: Option<Box<Stopped>>,
    /// A failure that came after this one and that this one likely caused (a deadlock after a
    /// worker's unobserved panic), kept as a note.
    pub afterwards: Option<Box<FailureInfo>>,
    /// A panic's payload when it was a `&'static str` (`panic!` with a literal message).
    pub static_message: Option<&'static str>,
    /// Notes on the likely cause: panics of other threads that a `join` returned to the
    /// program before this panic (the usual cause of a panic in `join().unwrap()`, whose own
    /// message says nothing), and a use of a primitive on a thread interleave did not start.
    pub notes: Vec<String>,
}

impl FailureInfo {
    pub fn new(kind: FailureKind, message: String, thread: Option<usize>) -> FailureInfo {
        FailureInfo {
            kind,
            message,
            thread,
            site: None,
            stopped: None,
            afterwards: None,
            static_message: None,
            notes: Vec::new(),
        }
    }

    /// The failure's text, with `explain` putting the engine's stops into words.
    pub fn text(&self, explain: &dyn Fn(&Stopped) -> String) -> String {
        let mut text = match &self.stopped {
            Some(stopped) => explain(stopped) + &self.message,
            None => self.message.clone(),
        };
        for note in &self.notes {
            text.push_str("\n\nnote: ");
            text.push_str(note);
        }
        if let Some(afterwards) = &self.afterwards {
            text.push_str(&format!(
                "\n\nnote: no join observed this panic, and afterwards the execution ended in a \
                 {}:\n{}",
                afterwards.kind,
                afterwards.text(explain)
            ));
        }
        text
    }
}

/// Why the engine stopped an execution by itself, as data: the analysis layer puts it into
/// words after the run, from the [`Stopped`] state.
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

impl Stop {
    /// The kind of failure this stop is.
    pub fn kind(self) -> FailureKind {
        match self {
            Stop::Deadlock => FailureKind::Deadlock,
            Stop::Relock { .. } => FailureKind::Relock,
            Stop::StepBound => FailureKind::StepBound,
            Stop::ScheduleImpossible { .. } => FailureKind::Divergence,
        }
    }
}

/// The state in which the engine stopped an execution, taken at the stop: teardown then
/// unwinds the remaining threads, whose guards release the locks an explanation names.
#[derive(Clone, Debug)]
pub(crate) struct Stopped {
    pub stop: Stop,
    /// The stop came while the tasks left unfinished at the end of a passing execution were
    /// being dropped (`runtime/ending.rs`).
    pub at_end: bool,
    /// Steps taken before the stop.
    pub steps: u64,
    /// The virtual time of the stop.
    pub now: Duration,
    /// Every thread's state, by index.
    pub threads: Vec<ThreadAtStop>,
    /// Every object's synchronisation state, by index (as in `Recording::objects`).
    pub objects: Vec<ObjState>,
}

/// One thread's state at a stop.
#[derive(Clone, Debug)]
pub(crate) struct ThreadAtStop {
    pub finished: bool,
    pub pending: Op,
    pub pending_site: Site,
    /// In a condition variable's wait queue and not yet notified.
    pub waiting: bool,
    /// The pending operation is timed and its deadline has passed.
    pub deadline_passed: bool,
    /// When the pending operation times out (meaningful for timed operations).
    pub deadline: Duration,
    pub yields: u32,
    /// What a parked task's future waits for.
    pub awaiting: Vec<Awaited>,
    /// The thread waiting to write the `RwLock` this thread's pending read waits behind
    /// (the lock preferred the writer), if any.
    pub behind_writer: Option<usize>,
}
