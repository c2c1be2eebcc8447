//! Enabledness: which threads can take their pending operation now, whether a waiting thread
//! may end its wait by itself (a timeout), and whether a blocked lock request is a relock.

use super::waiters::{bit, members, Answer};
use super::*;

/// Whether a pending `RwLock::read` that finds readers holding the lock and a writer waiting
/// joins the readers or waits behind the writer (`ThreadSlot::read_preference`). The
/// discriminants index [`GATE_MASKS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadPreference {
    /// It joins the readers (reader preference).
    Joins = 0,
    /// It waits behind the writer (writer preference).
    Defers = 1,
    /// Not chosen yet: the choice is drawn the first time the question arises.
    Undecided = 2,
}

impl Execution {
    /// Whether the park `op` may end without an unpark: any park under
    /// `Config::spurious_wakeups`, the program's own (`thread::park`, not a task's between
    /// polls) under `Config::spurious_park_wakeups`.
    #[inline]
    pub(crate) fn may_wake_spuriously(&self, op: Op) -> bool {
        let limits = &self.recording.limits;
        limits.spurious_wakeups
            || (limits.spurious_park_wakeups && op.arg == op::PARK_OF_THE_THREAD)
    }

    /// Marks thread `t` as finished or not (a finished thread that kept values runs again to
    /// drop them, `kept.rs`). A thread that finishes while it waits to write (unwound at the
    /// end of an execution) no longer counts as waiting. Inlined, as it was before the sets of
    /// waiting threads made it larger: out of line it cost every thread about 20 instructions.
    #[inline(always)]
    pub(super) fn set_finished(&mut self, t: usize, finished: bool) {
        if finished && t == 0 {
            // The main thread returned: the end of the test is `decide_before_enabled`'s.
            self.decide_in_full_from_now();
        }
        let slot = &mut self.threads[t];
        let changed = slot.finished != finished;
        slot.finished = finished;
        if finished && slot.write_request {
            slot.write_request = false;
            self.objects[slot.pending.object as usize].lock -= LOCK_ONE_WAITING;
        }
        if changed && self.waiters.active {
            self.refile_finished(t, finished);
        }
    }

    /// Takes thread `t` out of the sets of waiting threads as it finishes, or files it again
    /// as it runs again.
    #[inline(never)]
    fn refile_finished(&mut self, t: usize, finished: bool) {
        let pending = self.threads[t].pending;
        if finished {
            self.waiters.leave(&mut self.objects, t, pending);
        } else {
            self.waiters.enter(&mut self.objects, t, pending);
        }
    }

    /// Makes `op` thread `t`'s pending operation, filing the thread anew where the sets of
    /// waiting threads are kept (the previous operation is read only there). The announcement
    /// does the same inline for the running thread.
    pub(crate) fn set_pending(&mut self, t: usize, op: Op) {
        let slot = &mut self.threads[t];
        if self.waiters.active && !slot.finished {
            let previous = std::mem::replace(&mut slot.pending, op);
            self.waiters.refile(&mut self.objects, t, previous, op);
        } else {
            slot.pending = op;
        }
    }

    /// Records whether thread `t`'s pending read joins the readers or defers to a waiting
    /// writer (`ThreadSlot::read_preference`). Only the test of whether the sets of waiting
    /// threads are kept is inlined: this is part of the record of every step.
    #[inline(always)]
    pub(super) fn set_read_preference(&mut self, t: usize, preference: ReadPreference) {
        self.threads[t].read_preference = preference;
        if self.waiters.active {
            self.waiters.set_read_preference(t, preference);
        }
    }

    /// Thread `t` announced that it waits to take `RwLock` `object` for writing: it counts in
    /// the lock's word until it takes the lock (`take_rwlock`) or finishes.
    #[inline(never)]
    pub(super) fn note_write_request(&mut self, t: usize, object: ObjIdx) {
        debug_assert!(
            !self.threads[t].write_request,
            "a write request counted twice"
        );
        self.threads[t].write_request = true;
        self.objects[object as usize].lock += LOCK_ONE_WAITING;
    }

    /// Whether thread `t`'s pending operation can take effect now. A timed operation (a
    /// sleep, a timeout, a parked task's timer) may end by its timeout at any scheduling point
    /// after it started (`early`), since the time a thread takes to reach a step is not
    /// bounded; without `early` no timeout counts, which tells whether anything but its timeout
    /// lets the thread run (`wakes_itself`). With spurious wake-ups allowed, a
    /// condition-variable wait or a park may end at any point too (`early` only).
    #[inline(always)]
    pub(super) fn op_enabled(&self, t: usize, early: bool) -> bool {
        let slot = &self.threads[t];
        let op = slot.pending;
        let state = || &self.objects[op.object as usize].state;
        match op.kind {
            OpKind::Lock => match state() {
                ObjState::Mutex { holder } => holder.is_none(),
                _ => true,
            },
            OpKind::ReadLock => match state() {
                ObjState::RwLock { writer, .. } => {
                    writer.is_none()
                        && !(slot.read_preference == ReadPreference::Defers
                            && self.writer_waits(op.object, t).is_some())
                }
                _ => true,
            },
            OpKind::WriteLock => match state() {
                ObjState::RwLock { writer, readers } => writer.is_none() && readers.is_empty(),
                _ => true,
            },
            OpKind::Wake => {
                let mutex_free = matches!(
                    self.objects[op.arg as usize].state,
                    ObjState::Mutex { holder: None }
                );
                let notified = || match state() {
                    ObjState::Condvar { queue } => queue.can_take(t),
                    _ => false,
                };
                let spurious = early && self.recording.limits.spurious_wakeups;
                mutex_free
                    && (!slot.waiting || self.may_time_out(slot, early) || notified() || spurious)
            }
            OpKind::Join => self.threads[op.arg as usize].finished,
            OpKind::Park => {
                slot.park_token
                    || (early && self.may_wake_spuriously(op))
                    || self.may_time_out(slot, early)
                    || (early && slot.timer_deadline.is_some())
            }
            OpKind::Sleep => self.may_time_out(slot, early),
            OpKind::BarrierLeave => match state() {
                ObjState::Barrier { generation, .. } => *generation != slot.barrier_generation,
                _ => true,
            },
            OpKind::OnceEnter => match state() {
                ObjState::Once { runner, done } => match op.arg {
                    op::ONCE_WAIT => {
                        *done || (runner.is_none() && self.objects[op.object as usize].poisoned)
                    }
                    op::ONCE_WAIT_FORCE => *done,
                    _ => runner.is_none(),
                },
                _ => true,
            },
            OpKind::Send => match state() {
                ObjState::Channel {
                    len,
                    capacity: Some(capacity),
                    receiver_alive,
                    ..
                } if *capacity > 0 => *len < *capacity || !*receiver_alive,
                _ => true,
            },
            OpKind::SendWait => match state() {
                ObjState::Channel {
                    received,
                    receiver_alive,
                    ..
                } => *received >= slot.ticket || !*receiver_alive,
                _ => true,
            },
            OpKind::Recv => match state() {
                ObjState::Channel { len, senders, .. } => {
                    *len > 0 || *senders == 0 || self.may_time_out(slot, early)
                }
                _ => true,
            },
            _ => true,
        }
    }

    /// Fills `self.enabled`, in thread order; flags a thread that waits for a lock it holds.
    ///
    /// Where the execution keeps its sets of waiting threads (`waiters.rs`, between 5 and 64
    /// threads), the threads whose operation cannot block and those waiting for a lock are
    /// answered by the sets: a few mask operations per lock some thread asks for, however many
    /// threads ask. Joins and woken `Condvar` waiters are answered from their slots, and the
    /// rest tested in full, one by one in thread order, so values are drawn and the execution
    /// stops as a visit of every thread in turn would. Visiting every thread cost about 20-35
    /// instructions per thread and decision, most of it for threads that cannot block, wait
    /// for the one contended lock, or have finished. With fewer threads the pass visits each
    /// (`enable_by_gate`), where the branches on their answers predict well.
    pub(super) fn compute_enabled(&mut self) {
        self.compute_enabled_inline();
    }

    /// [`compute_enabled`](Self::compute_enabled), inlined into the common decision
    /// (`switching::decide_inline`). Called there, its entry and exit saved and restored the
    /// registers of a second frame at every decision that computes the enabled threads:
    /// inlined, the peers bench's mutex workload runs 4.9% fewer instructions per execution
    /// and the condvar one 2.9% (callgrind, `pct:d=3`).
    #[inline(always)]
    pub(super) fn compute_enabled_inline(&mut self) {
        self.enabled.clear();
        if self.waiters.active {
            if !self.enable_by_sets() {
                return;
            }
        } else {
            let first_left = self.enable_by_gate();
            if first_left < self.threads.len() && !self.enable_from(first_left) {
                return;
            }
        }
        self.enabled_fresh = true;
        if cfg!(debug_assertions) {
            self.check_gates();
        }
    }

    /// The first enabled thread after thread `thread` in thread order, wrapping around to the
    /// first one: how the runs without a schedule (the end of the test, an abandoned
    /// execution) take turns. The enabled threads are computed and not empty.
    pub(super) fn next_enabled_after(&self, thread: usize) -> usize {
        self.enabled
            .iter()
            .copied()
            .find(|&t| t > thread)
            .unwrap_or(self.enabled[0])
    }

    /// Adds to `self.enabled` the threads that can run, by the sets of waiting threads; returns
    /// false if the execution stopped.
    #[inline(always)]
    fn enable_by_sets(&mut self) -> bool {
        let Answer { mut runnable, look } = self.waiters.answer(&mut self.objects, self.current);
        runnable |= self.joins_and_wakes_runnable();
        if look != 0 {
            let Some(more) = self.runnable_in_full(look) else {
                return false;
            };
            runnable |= more;
        }
        push_threads(&mut self.enabled, runnable);
        true
    }

    /// Adds to `self.enabled` the threads whose pending operation its gate answers (`Gate`),
    /// up to the first one it cannot answer, which it returns (every thread: `threads.len()`).
    /// The loop borrows only the tables it reads, so their addresses stay in registers.
    #[inline(always)]
    fn enable_by_gate(&mut self) -> usize {
        let current = self.current;
        let (threads, objects, enabled) = (&self.threads[..], &self.objects[..], &mut self.enabled);
        for t in 0..threads.len() {
            match gate_answer(threads, objects, t, current) {
                Some(true) => enabled.push(t),
                Some(false) => {}
                None => return t,
            }
        }
        threads.len()
    }

    /// Adds to `self.enabled` the threads from `from` on that can run; returns false if the
    /// execution stopped.
    #[inline(never)]
    fn enable_from(&mut self, from: usize) -> bool {
        for t in from..self.threads.len() {
            match self.can_run(t) {
                Some(true) => self.enabled.push(t),
                Some(false) => {}
                None => return false,
            }
        }
        true
    }

    /// Which of the threads waiting to join a thread or to take a mutex back after a
    /// `Condvar` wait can run, by their gates (`gate_answer`'s `Join` and `Wake`).
    #[inline(always)]
    fn joins_and_wakes_runnable(&self) -> u64 {
        let (threads, objects) = (&self.threads[..], &self.objects[..]);
        let mut runnable = 0;
        for t in members(self.waiters.with_gate(Gate::Join)) {
            runnable |= u64::from(joined(threads, threads[t].pending)) << t;
        }
        for t in members(self.waiters.with_gate(Gate::Wake)) {
            runnable |= u64::from(woken(&threads[t], objects)) << t;
        }
        runnable
    }

    /// Which of the threads of set `look` can run, tested in turn in thread order; `None` if
    /// the execution stopped.
    #[inline(never)]
    fn runnable_in_full(&mut self, look: u64) -> Option<u64> {
        let mut runnable = 0;
        for t in members(look) {
            if self.can_run(t)? {
                runnable |= bit(t);
            }
        }
        Some(runnable)
    }

    /// Whether thread `t` can run, by its gate where it answers and by the full test where it
    /// does not; `None` if the execution stopped.
    #[inline(always)]
    fn can_run(&mut self, t: usize) -> Option<bool> {
        match gate_answer(&self.threads, &self.objects, t, self.current) {
            Some(can_run) => Some(can_run),
            None => self.can_run_in_full(t),
        }
    }

    /// Whether thread `t`'s pending operation can take effect now, by the full test; `None` if
    /// the execution stopped (`t` waits for a lock it holds).
    #[inline(never)]
    fn can_run_in_full(&mut self, t: usize) -> Option<bool> {
        let pending = self.threads[t].pending;
        let enabled = if pending.kind == OpKind::ReadLock {
            // The common answers inline: a writer holds the lock, or no reader holds it and
            // this read does not wait behind writers (no choice to draw, nothing to scan).
            match &self.objects[pending.object as usize].state {
                ObjState::RwLock {
                    writer: Some(_), ..
                } => false,
                ObjState::RwLock { readers, .. } => {
                    let readers_hold = !readers.is_empty();
                    if !readers_hold && self.threads[t].read_preference != ReadPreference::Defers {
                        true
                    } else {
                        self.read_lock_enabled(t, readers_hold)
                    }
                }
                _ => true,
            }
        } else {
            self.op_enabled(t, true)
        };
        if enabled {
            // Only waits can end by themselves; a lock, a join or a send cannot, and their
            // flag stays false: it is cleared whenever the thread takes a step, and only
            // a step changes its pending operation.
            if pending.timed || matches!(pending.kind, OpKind::Park | OpKind::Wake) {
                self.threads[t].times_out = self.wakes_itself(t);
            }
        } else if t == self.current {
            // Only the thread that just announced its operation can have started to wait
            // for a lock it holds.
            if let Some(since) = self.held_by_requester(t) {
                self.stop(Stop::Relock { thread: t, since });
                return None;
            }
        }
        Some(enabled)
    }

    /// Checks, in debug builds (the test suite), that the gates answered as the full test
    /// does: that every lock's word says what its holders say, and that each thread whose
    /// gate decided it is in `self.enabled` exactly when `op_enabled` says it can run.
    fn check_gates(&self) {
        if self.waiters.active {
            self.waiters.check(&self.threads, &self.objects);
        }
        for (index, entry) in self.objects.iter().enumerate() {
            let expected = match &entry.state {
                ObjState::Mutex { holder: Some(_) } => LOCK_WRITER,
                ObjState::RwLock { writer, readers } => {
                    let waiting = (0..self.threads.len())
                        .filter(|&u| {
                            writer_waits_in(&self.threads[u], u, index as ObjIdx, usize::MAX)
                        })
                        .count() as u32;
                    (if writer.is_some() { LOCK_WRITER } else { 0 })
                        | readers.len() as u32
                        | (waiting * LOCK_ONE_WAITING)
                }
                _ => 0,
            };
            assert_eq!(
                entry.lock, expected,
                "the lock word of object {index} is stale"
            );
            let eligible = match &entry.state {
                ObjState::Condvar { queue } => queue.eligible_below(),
                _ => 0,
            };
            assert_eq!(
                entry.condvar_eligible, eligible,
                "the notifications of object {index} are not mirrored"
            );
        }
        for (t, slot) in self.threads.iter().enumerate() {
            assert_eq!(
                slot.write_request,
                writer_waits_in(slot, t, slot.pending.object, usize::MAX),
                "thread {t}'s write request is not counted as it waits"
            );
            if slot.finished || slot.pending.gate == Gate::Other {
                continue;
            }
            if slot.pending.gate == Gate::Wake {
                assert!(
                    !self.recording.limits.spurious_wakeups,
                    "thread {t}'s wait may wake spuriously but its gate says it cannot"
                );
                assert!(
                    !slot.times_out,
                    "thread {t}'s wait without a timeout is flagged as timing out"
                );
            }
            assert_eq!(
                self.enabled.contains(&t),
                self.op_enabled(t, true),
                "the gate of thread {t}'s {:?} disagrees with its full test",
                slot.pending.kind
            );
        }
    }

    /// Checks, in debug builds (the test suite), that reusing the enabled threads a decision
    /// computed earlier (`Execution::enabled_fresh`) gives what computing them again gives,
    /// and that computing them again would draw no value and stop nothing, so the reuse
    /// changes no schedule.
    pub(super) fn check_reused_enabled(&mut self) {
        let reused = self.enabled.clone();
        let values = self.recording.values.len();
        self.compute_enabled();
        assert_eq!(
            self.enabled,
            reused,
            "the enabled threads reused at step {} differ from the ones computed again",
            self.steps()
        );
        assert_eq!(
            self.recording.values.len(),
            values,
            "computing the reused enabled threads again drew a value"
        );
        assert!(
            self.recording.failure.is_none(),
            "computing the reused enabled threads again stopped the execution"
        );
    }

    /// Whether thread `t`'s pending `RwLock::read` of a lock no writer holds (`readers_hold`:
    /// whether readers do) can take it now: what `op_enabled` says, after choosing its
    /// preference. std leaves open whether a read request that finds
    /// readers holding an `RwLock` and a writer waiting for them joins the readers (reader
    /// preference) or waits behind the writer (writer preference, as Linux's futex-based lock
    /// does). The first time that question arises for thread `t`'s pending read, the schedule
    /// answers it with a recorded value (0 joins, 1 waits), so every strategy and the replay
    /// token see the choice and the exhaustive searches take both outcomes. Whether a writer
    /// waits is counted in the lock's word (`ObjectEntry::lock`).
    // Kept out of line, where it was when it scanned the threads (inlined, that scan cost a
    // Mutex workload about 4% more instructions per step): only a read that may draw its
    // preference comes here.
    #[inline(never)]
    fn read_lock_enabled(&mut self, t: usize, readers_hold: bool) -> bool {
        let object = self.threads[t].pending.object;
        let a_writer_waits = writers_wait(self.objects[object as usize].lock);
        if self.threads[t].read_preference == ReadPreference::Undecided
            && readers_hold
            && a_writer_waits
        {
            let preference = if self.choose_value(2) == 1 {
                ReadPreference::Defers
            } else {
                ReadPreference::Joins
            };
            self.set_read_preference(t, preference);
        }
        !(self.threads[t].read_preference == ReadPreference::Defers && a_writer_waits)
    }

    /// Whether `RwLock::try_read` by the running thread on `object` fails because it gives
    /// way to a waiting writer; the same recorded choice as a blocking read's, drawn when
    /// readers hold the lock and a writer waits.
    pub(crate) fn try_read_defers(&mut self, object: ObjIdx) -> bool {
        self.read_contested(object, self.current) && self.choose_value(2) == 1
    }

    /// Whether a read request of thread `reader` on `object` meets readers holding the lock
    /// and another thread waiting to write it.
    fn read_contested(&self, object: ObjIdx, reader: usize) -> bool {
        matches!(
            &self.objects[object as usize].state,
            ObjState::RwLock { writer: None, readers } if !readers.is_empty()
        ) && self.writer_waits(object, reader).is_some()
    }

    /// A thread other than `reader` that waits to take `object` for writing, if any: for the
    /// report, `try_read` and the full test (`op_enabled`); the gates and `read_lock_enabled`
    /// read the count in the lock's word.
    #[inline(never)]
    pub(super) fn writer_waits(&self, object: ObjIdx, reader: usize) -> Option<usize> {
        (0..self.threads.len()).find(|&u| writer_waits_in(&self.threads[u], u, object, reader))
    }

    /// Where thread `t` took the lock its pending operation asks for, if it already holds it
    /// (a `Mutex` it holds, or an `RwLock` it holds for writing, or for reading when it asks
    /// to write): std would deadlock or panic there.
    pub(super) fn held_by_requester(&self, t: usize) -> Option<Site> {
        let op = self.threads[t].pending;
        let held_by_t = |h: &Option<Holder>| h.filter(|h| h.thread == t);
        let earlier = match (op.kind, &self.objects.get(op.object as usize)?.state) {
            (OpKind::Lock, ObjState::Mutex { holder }) => held_by_t(holder),
            (OpKind::ReadLock | OpKind::WriteLock, ObjState::RwLock { writer, readers }) => {
                held_by_t(writer).or_else(|| {
                    (op.kind == OpKind::WriteLock)
                        .then(|| readers.iter().find(|r| r.thread == t).copied())
                        .flatten()
                })
            }
            _ => None,
        }?;
        Some(earlier.site)
    }
}

/// Whether thread `u` (its slot) is not `reader` and waits to take `object` for writing.
#[inline(always)]
fn writer_waits_in(slot: &ThreadSlot, u: usize, object: ObjIdx, reader: usize) -> bool {
    u != reader
        && !slot.finished
        && slot.pending.kind == OpKind::WriteLock
        && slot.pending.object == object
}

/// Whether thread `t` can run, as its pending operation's gate answers it (`Gate`; a finished
/// thread cannot): `None` where the gate leaves it to `Execution::can_run_in_full`, which
/// is for an operation with gate `Other`, a read that must choose whether it defers to a
/// waiting writer (a recorded choice, `read_lock_enabled`), and the `current` thread when its
/// lock request is blocked (it may wait for a lock it holds itself).
#[inline(always)]
fn gate_answer(
    threads: &[ThreadSlot],
    objects: &[ObjectEntry],
    t: usize,
    current: usize,
) -> Option<bool> {
    let slot = &threads[t];
    if slot.finished {
        return Some(false);
    }
    let op = slot.pending;
    let can_run = match op.gate {
        Gate::Free => true,
        Gate::Exclusive => objects[op.object as usize].lock & LOCK_HOLDERS == 0,
        Gate::Shared => {
            let lock = objects[op.object as usize].lock;
            let waits = writers_wait(lock);
            if lock & LOCK_WRITER != 0 {
                false
            } else {
                match slot.read_preference {
                    ReadPreference::Joins => true,
                    // Readers hold the lock and a writer waits: the read chooses.
                    ReadPreference::Undecided if waits && lock & LOCK_HOLDERS != 0 => return None,
                    ReadPreference::Undecided => true,
                    ReadPreference::Defers => !waits,
                }
            }
        }
        Gate::Join => joined(threads, op),
        // Without a timeout or spurious wake-ups the wait cannot end by itself, so its
        // `times_out` flag stays false (`wakes_itself`).
        Gate::Wake => woken(slot, objects),
        Gate::Other => return None,
    };
    let relock_possible = op.gate.asks_for_lock();
    (can_run || t != current || !relock_possible).then_some(can_run)
}

/// Whether the `join` `op` can take effect: its thread has finished (gate `Join`).
#[inline(always)]
fn joined(threads: &[ThreadSlot], op: Op) -> bool {
    threads[op.arg as usize].finished
}

/// Whether the thread of `slot`, a `Condvar` waiter taking its mutex back (gate `Wake`), can
/// run: the mutex is free, and the thread was notified (its arrival number is below the
/// `Condvar`'s `ObjectEntry::condvar_eligible`) or is no longer waiting.
#[inline(always)]
fn woken(slot: &ThreadSlot, objects: &[ObjectEntry]) -> bool {
    let op = slot.pending;
    objects[op.arg as usize].lock == 0
        && (!slot.waiting || slot.condvar_arrival < objects[op.object as usize].condvar_eligible)
}

/// Appends the threads of set `threads` to `list`, in thread order, through its spare
/// capacity: a push tests the capacity and stores the length for every thread, and counting
/// the threads first is a dozen instructions on CPUs without a population count.
#[inline(always)]
fn push_threads(list: &mut Vec<usize>, threads: u64) {
    const ALL: usize = u64::BITS as usize;
    list.reserve(ALL);
    let spare = &mut list.spare_capacity_mut()[..ALL];
    let mut count = 0;
    for t in members(threads) {
        spare[count % ALL].write(t);
        count += 1;
    }
    // SAFETY: the loop initialised the `count` entries past the length, within the capacity
    // reserved (a set has at most `ALL` threads).
    unsafe { list.set_len(list.len() + count) };
}
