//! Virtual time: deadlines of sleeps and timed waits, async timers, and the clock that jumps to
//! the earliest deadline when no thread can run (see the module docs of `runtime`).

use super::*;

/// An async timer (`time::Sleep`) waiting for the virtual clock: the thread that polled
/// it last and the waker to wake at its deadline.
pub(crate) struct Timer {
    pub key: TimerKey,
    pub deadline: Duration,
    pub thread: usize,
    pub waker: Waker,
}

/// What a `Sleep` keeps to find its timer: the execution it registered in, and its number there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    tag: u64,
    id: u64,
}

impl Execution {
    /// Whether thread `t`'s pending operation is timed, so it may end by its timeout (it may
    /// still wait for its mutex).
    pub fn deadline_passed(&self, t: usize) -> bool {
        self.may_time_out(&self.threads[t], true)
    }

    /// Whether `slot`'s pending operation is timed and may end by its timeout now: at any time
    /// when `early`, never otherwise (see `op_enabled`).
    #[inline]
    pub(super) fn may_time_out(&self, slot: &ThreadSlot, early: bool) -> bool {
        slot.pending.timed && early
    }

    /// Whether thread `t`, enabled, can run only by ending its wait by itself: by its timeout or
    /// its async timer (due or not), or by a spurious wake-up when those are allowed. A
    /// timeout already due still ends the wait by itself: the strategies' yield rule must see
    /// that the thread's only step is a timeout (see `View::times_out`).
    #[cold]
    pub(super) fn wakes_itself(&self, t: usize) -> bool {
        let slot = &self.threads[t];
        let can = slot.pending.timed
            || (slot.pending.kind == OpKind::Park
                && (slot.timer_deadline.is_some() || self.may_wake_spuriously(slot.pending)))
            || (slot.pending.kind == OpKind::Wake && self.recording.limits.spurious_wakeups);
        can && !self.op_enabled(t, false)
    }

    /// Whether thread `t`, enabled, can run only by a spurious wake-up: spurious wake-ups are
    /// allowed, and it is at a park or a condition-variable wait with no timeout, no timer and
    /// nothing that lets it go on.
    pub(super) fn wakes_only_spuriously(&self, t: usize) -> bool {
        self.spurious_possible && self.wakes_only_spuriously_in_full(t)
    }

    #[cold]
    fn wakes_only_spuriously_in_full(&self, t: usize) -> bool {
        let slot = &self.threads[t];
        matches!(slot.pending.kind, OpKind::Park | OpKind::Wake)
            && !slot.pending.timed
            && slot.timer_deadline.is_none()
            && !self.op_enabled(t, false)
    }

    /// The timeout of thread `chosen` happens now (it is about to take its step, and only its
    /// timeout lets it: its operation could not take effect otherwise; `begin_step`): the
    /// virtual clock moves to that deadline, so `Instant` readings after the wait are at least
    /// its deadline.
    #[cold]
    pub(super) fn move_clock_to_deadline(&mut self, chosen: usize) {
        if let Some(deadline) = self.next_deadline(chosen) {
            self.now = deadline;
            self.recording
                .clock_advances
                .push((self.recording.events.len(), deadline));
        }
    }

    /// The earliest future instant at which thread `t` stops waiting by itself: its timed
    /// operation's deadline, or for a `Park` also its earliest async timer.
    pub(super) fn next_deadline(&self, t: usize) -> Option<Duration> {
        let slot = &self.threads[t];
        let own = slot.pending.timed.then_some(slot.deadline);
        let timers = slot
            .timer_deadline
            .filter(|_| slot.pending.kind == OpKind::Park);
        own.into_iter()
            .chain(timers)
            .filter(|&deadline| deadline > self.now)
            .min()
    }

    /// Moves the clock to the earliest future deadline of an unfinished thread; false when
    /// none has one. Called only when no thread can run, so the jump skips nothing: before
    /// that instant nothing could happen.
    pub(super) fn advance_clock(&mut self) -> bool {
        let next = (0..self.threads.len())
            .filter(|&t| !self.threads[t].finished)
            .filter_map(|t| self.next_deadline(t))
            .min();
        match next {
            Some(deadline) => {
                self.now = deadline;
                self.recording
                    .clock_advances
                    .push((self.recording.events.len(), deadline));
                true
            }
            None => false,
        }
    }

    /// The deadline of a wait with a timeout of `duration` starting now, or `None` when the
    /// clock cannot reach it (`Duration::MAX`, which std code passes for "no timeout"): such a
    /// wait ends only as an untimed one would, where otherwise its timeout, a scheduling
    /// choice, could end it at any point and move the clock to the end of time.
    pub fn reachable_deadline_after(&self, duration: Duration) -> Option<Duration> {
        self.now
            .checked_add(duration)
            .filter(|&deadline| deadline < Duration::MAX)
    }

    /// The virtual time `duration` from now (saturating: an enormous timeout never fires
    /// before the end of representable time).
    pub fn deadline_after(&self, duration: Duration) -> Duration {
        self.now.saturating_add(duration)
    }

    /// Sets the deadline of the timed operation the running thread announces next.
    pub fn set_deadline(&mut self, deadline: Duration) {
        let me = self.current;
        self.threads[me].deadline = deadline;
    }

    /// Registers the running thread's timer for `deadline` waking `waker`, or updates the
    /// timer `key` names if it is still registered in this execution. Returns its key and the
    /// waker it replaced, which the caller drops outside the runtime (dropping a waker can run
    /// arbitrary code).
    pub fn set_timer(
        &mut self,
        key: Option<TimerKey>,
        deadline: Duration,
        waker: &Waker,
    ) -> (TimerKey, Option<Waker>) {
        let me = self.current;
        let existing = key.and_then(|key| self.timer_position(key));
        let (key, replaced, previous_thread) = match existing {
            Some(position) => {
                let timer = &mut self.timers[position];
                timer.deadline = deadline;
                let previous_thread = std::mem::replace(&mut timer.thread, me);
                let replaced = (!timer.waker.will_wake(waker))
                    .then(|| std::mem::replace(&mut timer.waker, waker.clone()));
                (timer.key, replaced, Some(previous_thread))
            }
            None => {
                let key = TimerKey {
                    tag: self.tag,
                    id: self.next_timer,
                };
                self.next_timer += 1;
                self.timers.push(Timer {
                    key,
                    deadline,
                    thread: me,
                    waker: waker.clone(),
                });
                (key, None, None)
            }
        };
        self.refresh_timer_deadline(me);
        if let Some(previous) = previous_thread.filter(|&t| t != me) {
            self.refresh_timer_deadline(previous);
        }
        (key, replaced)
    }

    /// Moves the deadline of timer `key`, if it is still registered in this execution.
    pub fn reset_timer(&mut self, key: TimerKey, deadline: Duration) {
        if let Some(position) = self.timer_position(key) {
            self.timers[position].deadline = deadline;
            let thread = self.timers[position].thread;
            self.refresh_timer_deadline(thread);
        }
    }

    /// Removes timer `key`, if it is still registered in this execution, and returns its waker
    /// for the caller to drop outside the runtime.
    pub fn cancel_timer(&mut self, key: TimerKey) -> Option<Waker> {
        let position = self.timer_position(key)?;
        let timer = self.timers.remove(position);
        self.refresh_timer_deadline(timer.thread);
        Some(timer.waker)
    }

    /// Removes the running thread's timers whose deadline has come, in registration order, and
    /// returns the wakers to wake, leaving out the thread's own task waker (it is awake and
    /// polls its future next anyway) and returning that one as the second list, to drop.
    pub fn fire_due_timers(&mut self) -> (Vec<Waker>, Vec<Waker>) {
        let me = self.current;
        if self.threads[me].timer_deadline.is_none_or(|d| d > self.now) {
            return (Vec::new(), Vec::new());
        }
        let own = self.threads[me].task_waker;
        let (mut wake, mut redundant) = (Vec::new(), Vec::new());
        let now = self.now;
        let mut kept = Vec::with_capacity(self.timers.len());
        for timer in self.timers.drain(..) {
            if timer.thread != me || timer.deadline > now {
                kept.push(timer);
            } else if timer.waker.data() as usize == own {
                redundant.push(timer.waker);
            } else {
                wake.push(timer.waker);
            }
        }
        self.timers = kept;
        self.refresh_timer_deadline(me);
        (wake, redundant)
    }

    /// Takes every registered timer out of the execution, for dropping outside the runtime.
    pub(super) fn take_timers(&mut self) -> Vec<Timer> {
        for slot in &mut self.threads {
            slot.timer_deadline = None;
        }
        std::mem::take(&mut self.timers)
    }

    pub(super) fn timer_position(&self, key: TimerKey) -> Option<usize> {
        if key.tag != self.tag {
            return None;
        }
        self.timers.iter().position(|timer| timer.key == key)
    }

    pub(super) fn refresh_timer_deadline(&mut self, thread: usize) {
        let earliest = self
            .timers
            .iter()
            .filter(|timer| timer.thread == thread)
            .map(|timer| timer.deadline)
            .min();
        if let Some(slot) = self.threads.get_mut(thread) {
            slot.timer_deadline = earliest;
        }
    }
}
