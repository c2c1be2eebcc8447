//! Happens-before fingerprints of execution prefixes, for pruning systematic search (seed 000,
//! section 5, after CHESS).
//!
//! Two executions have the same happens-before graph when every thread performs the same
//! sequence of operations and every two conflicting operations (same object, different threads,
//! at least one of them a write) come in the same order. The graph is summarised by a 128-bit
//! number: the wrapping sum, over the events, of a hash of the event's thread, its position in
//! that thread, its operation, object and site, and the last write to the same object before
//! it (as thread and position). A read names the write it follows, a write the write it
//! follows; that fixes the order of every conflicting pair (a read comes before a write `w`
//! exactly when the write it follows comes before `w`). The sum does not depend on the order
//! of independent events, so it can be updated event by event along a prefix.
//!
//! Precision: equal graphs give equal fingerprints; different graphs give different ones
//! except for a hash collision (about 2^-128 per pair). Everything that is not a read counts
//! as a write (locks, condition variables, channels; a woken waiter also writes its mutex),
//! and spawning and parking are writes of one shared pseudo-object, so the graph is finer than necessary, never coarser: pruning with
//! it never merges two executions that can behave differently.

use rustc_hash::FxHashMap;

use super::dfs::is_yield;
use super::{
    splitmix64, Access, ChannelStep, ObjectId, ObjectKind, OpKind, PendingOp, TraceEvent,
    TraceTarget, View,
};

/// What a step conflicts on: an object, or the shared pseudo-object of thread management.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Conflict {
    Object(ObjectId),
    Threads,
    /// The order of `SeqCst` operations under the weak memory model: `SeqCst` fences write it
    /// and `SeqCst` atomic accesses read it, so a fence is dependent on every other `SeqCst`
    /// step while two `SeqCst` accesses to different objects stay independent.
    SeqCst,
    /// One message of a channel, by ticket: its send and the receive that takes it (or finds
    /// it missing) write it; or one generation of a barrier, which its arrivals write and its
    /// leaves read ([`dpor_conflicts`] only).
    Message(ObjectId, u32),
    /// The park token of one thread: its parks and the unparks of it write it
    /// ([`dpor_conflicts`] only; [`conflicts`] puts them on [`Conflict::Threads`]).
    Parking(usize),
    /// Whether a thread has finished: its last step writes it, and asking
    /// `JoinHandle::is_finished` about it reads it (`dpor` only).
    Finished(usize),
    /// A channel's receiving end: every receive writes it.
    Receiving(ObjectId),
    /// A channel's count of senders: a sender's drop reads it (drops commute), a receive that
    /// finds no message writes it (whether it finds the channel disconnected depends on
    /// every drop before it).
    Senders(ObjectId),
    /// The threads that wait in a receive on a rendezvous channel: a thread's step after which
    /// it announces a receive writes it (from then on the thread waits there), and an offer
    /// (`ChannelStep::Offered`), which a waiting receiver takes, reads it (`dpor` only).
    Receivers(ObjectId),
}

/// What `event` conflicts on, each with whether the event writes it: its object; for a woken
/// `Condvar` waiter also the mutex it takes back; for spawning, parking and sleeping (a sleeper
/// waits for the clock, which every thread's blocking moves) the thread-management
/// pseudo-object; these it writes exactly when the caller says it `writes` (what counts as a
/// read is the caller's). A `SeqCst` step also conflicts on [`Conflict::SeqCst`], which a fence
/// writes and an atomic access reads. Two steps of different threads are dependent when they
/// share a conflict that one of them writes.
pub(super) fn conflicts(event: &TraceEvent, writes: bool) -> [Option<(Conflict, bool)>; 3] {
    let second = match event.target {
        Some(TraceTarget::Object(object)) => Some((Conflict::Object(object), writes)),
        _ => None,
    };
    let seq_cst = event
        .seq_cst
        .then_some((Conflict::SeqCst, event.kind == OpKind::Fence));
    match primary_conflict(event.kind, event.object) {
        Some(first @ Conflict::Object(_)) => [Some((first, writes)), second, seq_cst],
        first => [first.map(|c| (c, writes)), None, seq_cst],
    }
}

/// What `event` conflicts on for `dpor`, each with whether the event writes it: as
/// [`conflicts`], except that a channel step the runtime described (`TraceTarget::Channel`)
/// conflicts on its message and the channel's ends only. A send writes the channel itself (the
/// order of sends decides the tickets) and its message, and on a bounded channel the receiving
/// end (it waited for room); a receive writes the receiving end and the message it took or
/// found missing, and the senders' count when it found none; a sender's drop reads the
/// senders' count. So a send and a receive of another message commute, and so do two drops.
/// A channel step without a description writes all three, so it depends on every other step on
/// the channel.
pub(super) fn dpor_conflicts(event: &TraceEvent, writes: bool) -> [Option<(Conflict, bool)>; 3] {
    // The arrival that fills a generation of a barrier writes it; the other arrivals and the
    // leaves read it. Two arrivals that do not fill it commute (each only adds itself to the
    // count, and neither becomes the leader in either order), the filling one decides the
    // leader against each of them, a leave waits for it, and steps of different generations
    // commute.
    match (event.object, event.target) {
        (Some(barrier), Some(TraceTarget::Generation(generation))) => {
            return [
                Some((Conflict::Message(barrier, generation), false)),
                None,
                None,
            ];
        }
        (Some(barrier), Some(TraceTarget::FilledGeneration(generation))) => {
            return [
                Some((Conflict::Message(barrier, generation), true)),
                None,
                None,
            ];
        }
        _ => {}
    }
    match (event.kind, event.target) {
        (OpKind::Park, _) => return [Some((Conflict::Parking(event.thread), true)), None, None],
        (OpKind::Unpark, Some(TraceTarget::Thread(target))) => {
            return [Some((Conflict::Parking(target), true)), None, None]
        }
        _ => {}
    }
    let Some(channel) = event.object.filter(|o| o.kind == ObjectKind::Channel) else {
        return conflicts(event, writes);
    };
    let message = |ticket| Some((Conflict::Message(channel, ticket), true));
    let (receiving, senders) = (
        Some((Conflict::Receiving(channel), true)),
        Some((Conflict::Senders(channel), true)),
    );
    match event.target {
        Some(TraceTarget::Channel(ChannelStep::Sent { ticket, bounded })) => [
            Some((Conflict::Object(channel), true)),
            message(ticket),
            receiving.filter(|_| bounded),
        ],
        Some(TraceTarget::Channel(ChannelStep::Received { ticket })) => {
            [receiving, message(ticket), None]
        }
        Some(TraceTarget::Channel(ChannelStep::FoundNone { ticket })) => {
            [receiving, message(ticket), senders]
        }
        Some(TraceTarget::Channel(ChannelStep::SenderDropped)) => {
            [Some((Conflict::Senders(channel), false)), None, None]
        }
        _ => [Some((Conflict::Object(channel), true)), receiving, senders],
    }
}

/// What an operation of kind `kind` on `object` conflicts on, leaving out the mutex a woken
/// waiter takes back: all a pending operation shows (`View::pending`), so what the samplers
/// that reprioritise racing operations compare.
pub(super) fn primary_conflict(kind: OpKind, object: Option<ObjectId>) -> Option<Conflict> {
    match (object, kind) {
        (Some(object), _) => Some(Conflict::Object(object)),
        (None, OpKind::Spawn | OpKind::Park | OpKind::Unpark | OpKind::Sleep) => {
            Some(Conflict::Threads)
        }
        (None, _) => None,
    }
}

/// Whether a step of kind `kind` only reads what it conflicts on, for `dpor`: loads and reads;
/// a release of a lock (it is ordered after its own acquisition anyway, and the next
/// acquisition by another thread then races with that acquisition, the step whose reversal
/// gives the other critical-section order), and likewise the end of a `Once` initialiser;
/// and leaving a barrier (it waits for the barrier's generation to change, which only
/// arrivals do, so two threads leaving commute).
pub(super) fn reads_only(kind: OpKind) -> bool {
    kind.access() == Access::Read
        || matches!(
            kind,
            OpKind::Unlock | OpKind::RwUnlock | OpKind::OnceComplete | OpKind::BarrierLeave
        )
}

/// Whether the pending operations of threads `a` and `b` may be dependent, for sleep sets: a
/// relation at least as coarse as the one `dpor` computes on the trace, from what a pending
/// operation shows. A `try_send` on a rendezvous channel depends on every step (any may be a
/// receiver's last before it waits); otherwise a thread's start depends only on asking whether
/// it has finished; a yield (or a wait that times out) depends on every step, under the yield
/// rule; a fence on every atomic access and fence (it may be `SeqCst`); a woken `Condvar`
/// waiter on every mutex step and every other waking waiter (the mutex it takes back is not
/// shown); otherwise the two share [`primary_conflict`] and do not both only read it.
pub(super) fn may_depend(view: &View<'_>, a: usize, b: usize) -> bool {
    let (Some(x), Some(y)) = (view.pending(a), view.pending(b)) else {
        return true;
    };
    // An offer on a rendezvous channel is taken when a receiver waits, so it depends on the
    // step after which a receiver waits, which may be any pending step, a start included.
    let offers = |t: usize, op: &PendingOp| {
        op.kind == OpKind::Poll
            && op.object.is_some_and(|o| o.kind == ObjectKind::Channel)
            && view.pending_arg(t) == crate::sync::mpsc::OFFERS
    };
    if offers(a, &x) || offers(b, &y) {
        return true;
    }
    // Asking whether a thread has finished depends on that thread's steps (one may be its
    // last).
    let asks_about = |t: usize, op: &PendingOp, other: usize| {
        op.kind == OpKind::Poll && op.object.is_none() && view.pending_arg(t) == other as u32 + 1
    };
    // A thread's start step touches nothing another thread sees and, under the searches'
    // yield rule, ends no wait (`dfs.rs`, `YieldRule::for_search`): only the question whether
    // the thread has finished depends on it, since it may be the thread's last step.
    if x.kind == OpKind::Start || y.kind == OpKind::Start {
        return asks_about(a, &x, b) || asks_about(b, &y, a);
    }
    if is_yield(view, a) || is_yield(view, b) {
        return true;
    }
    let atomic = |kind| {
        matches!(
            kind,
            OpKind::Fence | OpKind::AtomicLoad | OpKind::AtomicStore | OpKind::AtomicRmw
        )
    };
    if (x.kind == OpKind::Fence && atomic(y.kind)) || (y.kind == OpKind::Fence && atomic(x.kind)) {
        return true;
    }
    let mutex_step = |op: &PendingOp| {
        op.kind == OpKind::Wake || op.object.is_some_and(|o| o.kind == ObjectKind::Mutex)
    };
    if (x.kind == OpKind::Wake && mutex_step(&y)) || (y.kind == OpKind::Wake && mutex_step(&x)) {
        return true;
    }
    if asks_about(a, &x, b) || asks_about(b, &y, a) {
        return true;
    }
    // A park and an unpark depend on each other only through the thread parked.
    let parked = |t: usize, op: &PendingOp| match op.kind {
        OpKind::Park => Some(t),
        OpKind::Unpark => Some(view.pending_arg(t) as usize),
        _ => None,
    };
    if let (Some(p), Some(q)) = (parked(a, &x), parked(b, &y)) {
        return p == q;
    }
    // Two arrivals at a barrier commute unless one of them may fill its generation, which
    // decides the leader (see `dpor_conflicts`).
    if x.kind == OpKind::BarrierArrive && y.kind == OpKind::BarrierArrive && x.object == y.object {
        return view
            .barrier_arrivals_missing(a)
            .is_none_or(|missing| missing <= 2);
    }
    // A thread can leave a barrier only once its generation is full, so an arrival that can
    // run at the same time belongs to a later generation.
    if x.object == y.object
        && matches!(
            (x.kind, y.kind),
            (OpKind::BarrierArrive, OpKind::BarrierLeave)
                | (OpKind::BarrierLeave, OpKind::BarrierArrive)
        )
    {
        return false;
    }
    // On a channel, a sender's drop or a send on an unbounded channel commutes with a receive
    // that can run at the same time (it takes a message that is already there, while a sender
    // is alive) and with each other, except two sends (which fix the order of messages).
    if let (Some(channel), Some(other)) = (x.object, y.object) {
        if channel == other && channel.kind == ObjectKind::Channel {
            let commutes = |t: usize, op: &PendingOp| {
                view.pending_arg(t) == crate::sync::mpsc::COMMUTES
                    && matches!(op.kind, OpKind::Send | OpKind::Poll)
            };
            let receives = |op: &PendingOp| op.kind == OpKind::Recv;
            let both_send = x.kind == OpKind::Send && y.kind == OpKind::Send;
            return !(!both_send
                && ((commutes(a, &x) && (commutes(b, &y) || receives(&y)))
                    || (commutes(b, &y) && receives(&x))));
        }
    }
    match (
        primary_conflict(x.kind, x.object),
        primary_conflict(y.kind, y.object),
    ) {
        (Some(c), Some(d)) => c == d && !(reads_only(x.kind) && reads_only(y.kind)),
        _ => false,
    }
}

/// The running fingerprint of an execution prefix.
#[derive(Default)]
pub(crate) struct HbFingerprint {
    sum: u128,
    /// The number of events of each thread so far.
    positions: Vec<u32>,
    /// The last write to each object, as (thread, position).
    last_write: FxHashMap<Conflict, (u32, u32)>,
}

impl HbFingerprint {
    /// Adds the next event of the prefix.
    pub(crate) fn add(&mut self, event: &TraceEvent) {
        if self.positions.len() <= event.thread {
            self.positions.resize(event.thread + 1, 0);
        }
        let position = self.positions[event.thread];
        self.positions[event.thread] += 1;
        // An offer's outcome depends on whether a receiver waited, which no conflict of the
        // prefix shows (the receiver's step before its receive may be its start), so it is
        // part of the event: prefixes whose offers went differently differ.
        let taken = matches!(
            event.target,
            Some(TraceTarget::Channel(ChannelStep::Offered { taken: true }))
        );
        let mut words = [
            event.thread as u64,
            u64::from(position),
            event.kind as u64 | u64::from(taken) << 32,
            event.site as *const _ as usize as u64,
            0,
            0,
            0,
        ];
        let writes = event.kind.access() != Access::Read;
        for (slot, conflict) in conflicts(event, writes).into_iter().enumerate() {
            let Some((conflict, writes)) = conflict else {
                continue;
            };
            let mut word = match conflict {
                Conflict::Object(object) => {
                    (object.site as *const _ as usize as u64)
                        ^ (object.kind as u64) << 56
                        ^ u64::from(object.instance).rotate_left(32)
                }
                Conflict::Threads => u64::MAX,
                Conflict::SeqCst => u64::MAX - 1,
                // Only `dpor_conflicts` gives these.
                Conflict::Message(..)
                | Conflict::Finished(_)
                | Conflict::Parking(_)
                | Conflict::Receiving(_)
                | Conflict::Senders(_)
                | Conflict::Receivers(_) => u64::MAX - 2,
            };
            if let Some((thread, at)) = self.last_write.get(&conflict) {
                word ^= mix(&[u64::from(*thread), u64::from(*at)]) as u64;
            }
            words[4 + slot] = word;
            if writes {
                self.last_write
                    .insert(conflict, (event.thread as u32, position));
            }
        }
        self.sum = self.sum.wrapping_add(mix(&words));
    }

    /// The fingerprint of the prefix added so far.
    pub(crate) fn value(&self) -> u128 {
        self.sum
    }
}

/// A 128-bit hash of `words`: two splitmix64 lanes with different seeds.
pub(super) fn mix(words: &[u64]) -> u128 {
    let (mut low, mut high) = (0x243f_6a88_85a3_08d3u64, 0x1319_8a2e_0370_7344u64);
    for &word in words {
        low = splitmix64(low ^ word);
        high = splitmix64(high.rotate_left(17) ^ word);
    }
    u128::from(high) << 64 | u128::from(low)
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;

    fn event(thread: usize, kind: OpKind, object: Option<ObjectId>) -> TraceEvent {
        TraceEvent {
            thread,
            kind,
            object,
            object_name: "",
            target: None,
            site: Location::caller(),
            yields: crate::runtime::op::counts_as_yield(kind, 0),
            seq_cst: false,
        }
    }

    fn fingerprint(events: &[TraceEvent]) -> u128 {
        let mut hb = HbFingerprint::default();
        events.iter().for_each(|e| hb.add(e));
        hb.value()
    }

    #[test]
    fn independent_steps_commute_and_conflicting_ones_do_not() {
        let object = |instance| ObjectId {
            kind: ObjectKind::Atomic,
            site: Location::caller(),
            instance,
        };
        let (x, y) = (Some(object(0)), Some(object(1)));
        let a_reads_x = event(1, OpKind::AtomicLoad, x);
        let b_reads_x = event(2, OpKind::AtomicLoad, x);
        let b_writes_x = event(2, OpKind::AtomicStore, x);
        let b_writes_y = event(2, OpKind::AtomicStore, y);
        // Two reads, or accesses of different objects, commute.
        assert_eq!(
            fingerprint(&[a_reads_x, b_reads_x]),
            fingerprint(&[b_reads_x, a_reads_x])
        );
        assert_eq!(
            fingerprint(&[a_reads_x, b_writes_y]),
            fingerprint(&[b_writes_y, a_reads_x])
        );
        // A read and a write of one object do not.
        assert_ne!(
            fingerprint(&[a_reads_x, b_writes_x]),
            fingerprint(&[b_writes_x, a_reads_x])
        );
        // Neither do two lock operations.
        let lock = Some(ObjectId {
            kind: ObjectKind::Mutex,
            site: Location::caller(),
            instance: 0,
        });
        let (a_locks, b_locks) = (event(1, OpKind::Lock, lock), event(2, OpKind::Lock, lock));
        assert_ne!(
            fingerprint(&[a_locks, b_locks]),
            fingerprint(&[b_locks, a_locks])
        );
    }

    #[test]
    fn an_offer_taken_by_a_waiting_receiver_differs_from_one_refused_before_it_started() {
        let channel = Some(ObjectId {
            kind: ObjectKind::Channel,
            site: Location::caller(),
            instance: 0,
        });
        let start = event(1, OpKind::Start, None);
        let offer = |taken| TraceEvent {
            target: Some(TraceTarget::Channel(ChannelStep::Offered { taken })),
            ..event(2, OpKind::Poll, channel)
        };
        // The receiver's start commutes with every step, but whether it came first decided
        // the offer.
        assert_ne!(
            fingerprint(&[offer(false), start]),
            fingerprint(&[start, offer(true)])
        );
        assert_eq!(
            fingerprint(&[offer(false), start]),
            fingerprint(&[start, offer(false)])
        );
    }
}
