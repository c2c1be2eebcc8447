//! Enabledness: which threads can take their pending operation now, whether a waiting thread
//! may end its wait by itself (a timeout), and whether a blocked lock request is a relock.

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

/// Up to how many threads `Execution::enable_by_gate` branches on each thread's answer.
const FEW_THREADS: usize = 4;

impl Execution {
    /// Whether the park `op` may end without an unpark: any park under
    /// `Config::spurious_wakeups`, the program's own (`thread::park`, not a task's between
    /// polls) under `Config::spurious_park_wakeups`.
    #[inline]
    pub(super) fn may_wake_spuriously(&self, op: Op) -> bool {
        let limits = &self.recording.limits;
        limits.spurious_wakeups
            || (limits.spurious_park_wakeups && op.arg == op::PARK_OF_THE_THREAD)
    }

    /// Marks thread `t` as finished or not (a finished thread that kept values runs again to
    /// drop them, `kept.rs`). A thread that finishes while it waits to write (unwound at the
    /// end of an execution) no longer counts as waiting.
    pub(super) fn set_finished(&mut self, t: usize, finished: bool) {
        if finished && t == 0 {
            // The main thread returned: the end of the test is `decide_before_enabled`'s.
            self.decide_in_full_from_now();
        }
        let slot = &mut self.threads[t];
        slot.finished = finished;
        if finished && slot.write_request {
            slot.write_request = false;
            self.objects[slot.pending.object as usize].lock -= LOCK_ONE_WAITING;
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
                ObjState::Once { runner, .. } => runner.is_none(),
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

    /// Fills `self.enabled`; flags a thread that waits for a lock it holds.
    pub(super) fn compute_enabled(&mut self) {
        self.enabled.clear();
        let first_left = self.enable_by_gate();
        if first_left < self.threads.len() && !self.enable_from(first_left) {
            return;
        }
        self.enabled_fresh = true;
        if cfg!(debug_assertions) {
            self.check_gates();
        }
    }

    /// Adds to `self.enabled` the threads whose pending operation its gate answers (`Gate`),
    /// up to the first one it cannot answer, which it returns (every thread: `threads.len()`).
    /// The loops borrow only the tables they read, so their addresses stay in registers; a
    /// lock request costs a load of the lock's word, where the full test dispatched on the
    /// operation's kind and matched the object's state.
    ///
    /// With more than [`FEW_THREADS`] threads the loop has no branch on the answer: every
    /// thread is written at the list's end, the length grows by whether it can run, and the
    /// gates that read a lock's word answer by a mask (`masked_gate_answer`). Which threads can
    /// run changes from decision to decision, and on the 9-thread `RwLock` workload under a
    /// random walk the branches on the answer and the jump on the gate were mispredicted
    /// several times per decision: the masked loop takes 11% less time there, and 10-20% less
    /// on the 5-thread `Condvar` workload, though it runs about 35 instructions per thread
    /// where the branching one runs about 20. With fewer threads the branches are predicted
    /// well enough that the extra instructions cost more than they save (the 3-thread `Mutex`
    /// workload ran 8% more instructions and no faster).
    #[inline(always)]
    fn enable_by_gate(&mut self) -> usize {
        if self.threads.len() > FEW_THREADS {
            return self.enable_by_masks();
        }
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

    /// [`enable_by_gate`](Self::enable_by_gate) for more than [`FEW_THREADS`] threads, without
    /// a branch on a thread's answer. Out of line, so the branching loop keeps its registers.
    #[inline(never)]
    fn enable_by_masks(&mut self) -> usize {
        let current = self.current;
        let (threads, objects, enabled) = (&self.threads[..], &self.objects[..], &mut self.enabled);
        enabled.reserve(threads.len());
        let spare = enabled.spare_capacity_mut();
        let mut len = 0;
        let mut first_left = threads.len();
        for t in 0..threads.len() {
            let Some(can_run) = masked_gate_answer(threads, objects, t, current) else {
                first_left = t;
                break;
            };
            spare[len].write(t);
            len += usize::from(can_run);
        }
        // SAFETY: `compute_enabled` cleared the list, and the loop wrote its first `len`
        // entries.
        unsafe { enabled.set_len(len) };
        first_left
    }

    /// Adds to `self.enabled` the threads from `from` on that can run, by their gate where it
    /// answers and by `enable_by_operation` where it does not; returns false if the
    /// execution stopped.
    #[inline(never)]
    fn enable_from(&mut self, from: usize) -> bool {
        for t in from..self.threads.len() {
            let current = self.current;
            match gate_answer(&self.threads, &self.objects, t, current) {
                Some(true) => self.enabled.push(t),
                Some(false) => {}
                None => {
                    if !self.enable_by_operation(t) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Adds thread `t` to `self.enabled` if its pending operation can take effect now, by the
    /// full test; returns false if the execution stopped (`t` waits for a lock it holds).
    fn enable_by_operation(&mut self, t: usize) -> bool {
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
            self.enabled.push(t);
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
                return false;
            }
        }
        true
    }

    /// Checks, in debug builds (the test suite), that the gates answered as the full test
    /// does: that every lock's word says what its holders say, and that each thread whose
    /// gate decided it is in `self.enabled` exactly when `op_enabled` says it can run.
    fn check_gates(&self) {
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
            self.threads[t].read_preference = if self.choose_value(2) == 1 {
                ReadPreference::Defers
            } else {
                ReadPreference::Joins
            };
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
/// thread cannot): `None` where the gate leaves it to `Execution::enable_by_operation`, which
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
        Gate::Join => threads[op.arg as usize].finished,
        // Without a timeout or spurious wake-ups the wait cannot end by itself, so its
        // `times_out` flag stays false (`wakes_itself`).
        Gate::Wake => {
            objects[op.arg as usize].lock == 0
                && (!slot.waiting
                    || slot.condvar_arrival < objects[op.object as usize].condvar_eligible)
        }
        Gate::Other => return None,
    };
    // Only a lock request can wait for a lock its own thread holds.
    let relock_possible = matches!(op.gate, Gate::Exclusive | Gate::Shared);
    (can_run || t != current || !relock_possible).then_some(can_run)
}

/// [`gate_answer`] with the gates that read a lock's word (`Free`, `Exclusive`, `Shared`)
/// answered by a mask of the bits that block them, without a branch on which gate it is: a
/// thread's gate changes at every step it takes, and under a random schedule the jump on the
/// gate was mispredicted for about a third of the threads of a decision.
#[inline(always)]
fn masked_gate_answer(
    threads: &[ThreadSlot],
    objects: &[ObjectEntry],
    t: usize,
    current: usize,
) -> Option<bool> {
    let slot = &threads[t];
    let op = slot.pending;
    if slot.finished || op.gate as u8 > Gate::Shared as u8 {
        return gate_answer(threads, objects, t, current);
    }
    // A `Free` operation's object may be none (`NO_OBJECT`); its mask reads no bit.
    let lock = objects
        .get(op.object as usize)
        .map_or(0, |entry| entry.lock);
    let masks = GATE_MASKS[op.gate as usize * 3 + slot.read_preference as usize];
    let blocked = lock & masks.blocked_by != 0;
    // Only a lock request can be blocked by its lock's word, so only the running thread's
    // may wait for a lock it holds itself.
    if (lock & masks.undecided_if != 0) | (blocked & (t == current)) {
        return undecided_or_blocked_current(lock, blocked, t, current);
    }
    Some(!blocked)
}

/// What blocks an operation with gate `Free`, `Exclusive` or `Shared` ([`GATE_MASKS`]).
#[derive(Clone, Copy)]
struct GateMasks {
    /// The bits of the lock's word that block it.
    blocked_by: u32,
    /// The bits of the lock's word with which the answer needs a closer look: a read that
    /// has not chosen whether it defers to waiting writers, when a writer waits.
    undecided_if: u32,
}

/// The bits of a lock's word that count the threads waiting to write it.
const LOCK_WAITING: u32 = !LOCK_HOLDERS;

/// [`GateMasks`] by gate (`Free`, `Exclusive`, `Shared`) and then by the thread's
/// `read_preference` (in the order of its discriminants), which only a read's gate reads.
const GATE_MASKS: [GateMasks; 9] = {
    let free = GateMasks {
        blocked_by: 0,
        undecided_if: 0,
    };
    let exclusive = GateMasks {
        blocked_by: LOCK_HOLDERS,
        undecided_if: 0,
    };
    let joins = GateMasks {
        blocked_by: LOCK_WRITER,
        undecided_if: 0,
    };
    let defers = GateMasks {
        blocked_by: LOCK_WRITER | LOCK_WAITING,
        undecided_if: 0,
    };
    let undecided = GateMasks {
        blocked_by: LOCK_WRITER,
        undecided_if: LOCK_WAITING,
    };
    [
        free, free, free, exclusive, exclusive, exclusive, joins, defers, undecided,
    ]
};

/// [`masked_gate_answer`] for a live thread whose answer needs a closer look: the `current` thread
/// when its lock request is `blocked` (`None`: it may wait for a lock it holds itself), or a
/// read that has not chosen whether it defers to waiting writers, finding one waiting (`None`
/// when readers hold the lock and no writer does: it chooses).
#[cold]
fn undecided_or_blocked_current(
    lock: u32,
    blocked: bool,
    t: usize,
    current: usize,
) -> Option<bool> {
    if blocked {
        return (t != current).then_some(false);
    }
    if lock & LOCK_HOLDERS != 0 {
        return None;
    }
    Some(true)
}
