//! The engine's question to a strategy: which thread runs next, and which value a recorded
//! nondeterministic choice takes. A [`Schedule`] decides one execution; strategies (above the
//! engine) build one per execution and read what it learnt back through
//! [`Schedule::feedback`].

use std::any::Any;

use super::op::ObjectId;
use super::View;

/// What [`Schedule::next_thread`] returns to end the execution at once, without a failure: the
/// schedule it was following can no longer happen (its strategy counts the execution as
/// abandoned, `Outcome::abandoned` in `crate::strategy`).
pub const ABANDON: usize = usize::MAX - 1;

/// Decides one execution's schedule.
pub trait Schedule {
    /// The thread to run next; must be one of `view.enabled()`, or [`ABANDON`].
    fn next_thread(&mut self, view: &View<'_>) -> usize;

    /// A value for a nondeterministic choice (`interleave::rand`, and choices std leaves to
    /// the implementation: whether a read of an `RwLock` waits behind a waiting writer); the
    /// runtime reduces it modulo `bound` (`bound == 0` means the full `u64` range).
    fn next_value(&mut self, bound: u64) -> u64;

    /// Whether every thread [`next_thread`](Schedule::next_thread) returns is, by its
    /// construction, one of `view.enabled()` (never [`ABANDON`]): a random pick from the list,
    /// or the best of the list by some order. The engine then skips its own check of each
    /// choice in release builds, a scan of the enabled list at every decision (about 20
    /// instructions on a five-thread `Mutex` workload, 5% of a decision); a choice outside
    /// the list would go unreported there. Asked once per execution. The default, `false`,
    /// has every choice checked: a schedule that follows a recording or a plan may choose a
    /// thread that cannot run, which the engine reports as an impossible schedule.
    fn chooses_enabled(&self) -> bool {
        false
    }

    /// Whether accesses to `object` are scheduling points for this schedule; asked once per
    /// object per execution, when the object is first used.
    ///
    /// Returning `false` is a promise: after a data access (atomic or `cell::Var`) to an
    /// untracked object, if the running thread's next operation is again a data access to an
    /// untracked object, this schedule would keep the running thread. The runtime then takes
    /// the fast path for that next access: it records the step (for traces, replay tokens
    /// and race detection) without asking [`next_thread`](Schedule::next_thread). Such a
    /// step changes no other thread's state, so only a schedule that preempts at will
    /// (random walk) needs every one.
    fn tracks(&self, object: ObjectId) -> bool {
        let _ = object;
        true
    }

    /// What the schedule learnt during the execution, handed to the strategy's
    /// [`observe`](crate::strategy::Strategy::observe) in
    /// [`Outcome::feedback`](crate::strategy::Outcome::feedback).
    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        None
    }
}

/// What a replayed schedule returns when its recording has no more steps: no thread has this
/// index, so the engine reports the schedule as impossible ([`super::Stop::ScheduleImpossible`]).
pub(crate) const END_OF_RECORDING: usize = usize::MAX;
