//! The recording of one execution: the one trace the engine hands to everything above it.
//!
//! While an execution runs, the engine appends its steps, the values of its nondeterministic
//! choices, its warnings and the program's declarations to a [`Recording`]. When it has
//! finished, [`super::run`] hands back a [`Finished`] execution, which shows nothing but its
//! recording: strategies' feedback, the predictive analyses, the atomic-set monitor, the replay
//! token, the determinism check and the report all read this one type. A strategy that
//! analyses whole executions reads the steps with their objects and arguments resolved
//! ([`Recording::trace_events`]).

use std::any::Any;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use super::annotations::Annotations;
use super::failure::{FailureInfo, FailureKind};
use super::memory::StaleRead;
use super::op::{counts_as_yield, ordering_of_code, ObjectId, Op, OpKind, Site, NO_OBJECT};
use super::{Execution, Limits};

/// One step of an execution: which thread performed which operation on which object, where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub thread: u32,
    pub kind: OpKind,
    /// The object's index in [`Recording::objects`], or `op::NO_OBJECT`.
    pub object: u32,
    /// The operation's argument (see `Op::arg`).
    pub arg: u32,
    pub site: Site,
}

/// A thread of the execution, as it was when the execution ended.
#[derive(Clone, Debug)]
pub(crate) struct ThreadRecord {
    pub name: Option<Arc<str>>,
    /// Where it was spawned (for the main thread, where the exploration started).
    pub spawn_site: Site,
    pub finished: bool,
    /// The operation it announced last, and where: for an unfinished thread, what it was about
    /// to do when the execution stopped.
    pub pending: Op,
    pub pending_site: Site,
}

/// The user operation a step on a primitive's internal state lock performed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepLabel {
    pub step: u64,
    /// The operation, as the primitive names it (`lock`, `notify_one`).
    pub operation: &'static str,
    /// The operation could not complete and the task waits to be woken.
    pub waits: bool,
}

/// An object the execution used.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectRecord {
    pub id: ObjectId,
    /// What reports call it: the type name of the primitive that created it.
    pub name: &'static str,
    /// It is the state lock of a primitive built on it (see `ObjectHandle::internal`).
    pub internal: bool,
    /// Where its handle was at its latest use, for atomic sets declared by an owner value that
    /// contains it (`crate::atomic_set`).
    pub address: usize,
    /// An earlier execution used it too: it outlives executions (a `static`, or leaked).
    pub outlived: bool,
}

/// The lengths of a recording's step-ordered lists when the schedule gave up its execution
/// (`Recording::abandon`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AbandonedAt {
    steps: usize,
    objects: usize,
    threads: usize,
    warnings: usize,
    lock_acquisitions: u64,
    units: usize,
    branches: usize,
    logged_values: usize,
    clock_advances: usize,
    step_labels: usize,
}

/// Everything an execution leaves behind.
pub(crate) struct Recording {
    /// One event per step; `events[i].thread` is the thread chosen at step `i`.
    pub events: Vec<Event>,
    /// Every object the execution used, by index.
    pub objects: Vec<ObjectRecord>,
    /// Every thread the execution created, by index (0 is the main thread).
    pub threads: Vec<ThreadRecord>,
    /// The values returned by `interleave::rand` (and the other recorded choices), in order.
    pub values: Vec<u64>,
    /// How many steps had been taken when each value was drawn: where the choices fall among
    /// the steps, which the determinism check compares.
    pub value_steps: Vec<u64>,
    /// Steps that acquired a lock (see `OpKind::is_lock_acquisition`), counted as they are
    /// recorded, for strategies that count only acquisitions.
    pub lock_acquisitions: u64,
    /// How the execution failed, if it did.
    pub failure: Option<FailureInfo>,
    /// Where the schedule gave up the execution (`ABANDON`), if it did: the threads run on to
    /// their end, and the recording then keeps only what came before.
    pub abandoned: Option<AbandonedAt>,
    /// A `StopHandle` stopped the execution at a scheduling point before it had ended
    /// (`stop_signal.rs`); its threads were abandoned, not torn down.
    pub stopped: bool,
    /// Something outside the schedule's control changed what the execution did: a stack that
    /// could not be allocated, a waker woken from a foreign OS thread. Re-running it under the
    /// same schedule says nothing about the program's determinism.
    pub outside_control: bool,
    /// The execution used an object that an earlier execution had registered: one that
    /// outlives executions, such as a primitive in a `static`. Executions running at once on
    /// several OS threads would share it, so the driver keeps such explorations on one worker
    /// unless told otherwise.
    pub outlived_objects: bool,
    pub warnings: Vec<String>,
    /// Units of work, atomic-set owners, branch outcomes and logged values the program
    /// declared (`crate::atomic_set`, `crate::branch`).
    pub annotations: Annotations,
    /// Where the virtual clock moved: the index of the step that came next, and the new time.
    pub clock_advances: Vec<(usize, Duration)>,
    /// The atomic loads that read a store older than the latest one (weak memory model).
    pub stale_reads: Vec<StaleRead>,
    /// The steps of the `compare_exchange_weak` calls that failed spuriously
    /// (`Config::spurious_cas_failures`), in increasing order.
    pub spurious_failures: Vec<u64>,
    /// What std allows that this execution could have done and that no schedule explores
    /// (see [`CoverageGaps`]).
    pub gaps: CoverageGaps,
    /// What the schedule learnt (`Schedule::feedback`).
    pub feedback: Option<Box<dyn Any + Send>>,
    /// The user operations that steps on internal state locks performed (`lock` for an async
    /// mutex's `lock().await` that got it), by step index in increasing order, as the
    /// primitives named them (`Execution::show_last_step_as`).
    pub step_labels: Vec<StepLabel>,
    /// Steps the failure is about beyond the failing thread's last one (the earlier access of
    /// a data race), which the report shows however long the interleaving.
    pub failure_steps: Vec<u64>,
    /// The settings the execution ran under.
    pub limits: Limits,
}

impl Recording {
    pub(super) fn new(limits: Limits) -> Recording {
        Recording {
            events: Vec::new(),
            objects: Vec::new(),
            threads: Vec::new(),
            values: Vec::new(),
            value_steps: Vec::new(),
            lock_acquisitions: 0,
            failure: None,
            abandoned: None,
            stopped: false,
            outside_control: false,
            outlived_objects: false,
            warnings: Vec::new(),
            annotations: Annotations::default(),
            clock_advances: Vec::new(),
            stale_reads: Vec::new(),
            spurious_failures: Vec::new(),
            gaps: CoverageGaps::default(),
            feedback: None,
            step_labels: Vec::new(),
            failure_steps: Vec::new(),
            limits,
        }
    }

    /// Marks the point where the schedule gave up the execution (`ABANDON`), which has created
    /// `threads` threads so far (the main thread included). The threads run
    /// on to their end without the schedule (`switching::continue_abandoned`), and
    /// [`forget_after_abandonment`](Self::forget_after_abandonment) then cuts the recording
    /// back to this point.
    pub(super) fn abandon(&mut self, threads: usize) {
        self.abandoned = Some(AbandonedAt {
            steps: self.events.len(),
            objects: self.objects.len(),
            threads,
            warnings: self.warnings.len(),
            lock_acquisitions: self.lock_acquisitions,
            units: self.annotations.units.len(),
            branches: self.annotations.branches.len(),
            logged_values: self.annotations.values.len(),
            clock_advances: self.clock_advances.len(),
            step_labels: self.step_labels.len(),
        });
    }

    /// Whether the schedule gave up the execution (`ABANDON`).
    pub fn is_abandoned(&self) -> bool {
        self.abandoned.is_some()
    }

    /// Cuts the recording of an abandoned execution back to where its schedule gave it up:
    /// what the threads did afterwards, on their way to their end, is no schedule any strategy
    /// chose, so no strategy learns from it and nothing it found is reported (it ran only so
    /// that no thread is unwound in the middle of an operation, which can run a destructor on
    /// a state the program never reaches). The continuation draws no value and reads only
    /// latest stores (`Execution::draws_from_schedule`), so the values, stale reads and
    /// spurious failures need no cut.
    pub(super) fn forget_after_abandonment(&mut self) {
        let Some(at) = self.abandoned else {
            return;
        };
        self.events.truncate(at.steps);
        self.objects.truncate(at.objects);
        self.threads.truncate(at.threads);
        self.warnings.truncate(at.warnings);
        self.lock_acquisitions = at.lock_acquisitions;
        self.failure = None;
        self.failure_steps.clear();
        self.clock_advances.truncate(at.clock_advances);
        self.step_labels.truncate(at.step_labels);
        let annotations = &mut self.annotations;
        annotations.units.truncate(at.units);
        for unit in &mut annotations.units {
            if unit.end != usize::MAX && unit.end > at.steps {
                unit.end = usize::MAX;
            }
        }
        annotations.branches.truncate(at.branches);
        annotations.values.truncate(at.logged_values);
    }

    /// Empties the recording for a new execution, keeping its buffers.
    pub(super) fn clear(&mut self, limits: Limits) {
        self.events.clear();
        self.objects.clear();
        self.threads.clear();
        self.values.clear();
        self.value_steps.clear();
        self.lock_acquisitions = 0;
        self.failure = None;
        self.abandoned = None;
        self.stopped = false;
        self.outside_control = false;
        self.outlived_objects = false;
        self.warnings.clear();
        self.annotations.clear();
        self.clock_advances.clear();
        self.stale_reads.clear();
        self.spurious_failures.clear();
        self.gaps = CoverageGaps::default();
        self.feedback = None;
        self.step_labels.clear();
        self.failure_steps.clear();
        self.limits = limits;
    }

    /// The label reports show for step `step`, made (as a `poll` that does not wait) if it has
    /// none yet. Labels stay sorted by step: a later step of another thread may have one
    /// already.
    pub(crate) fn step_label(&mut self, step: u64) -> &mut StepLabel {
        let labels = &mut self.step_labels;
        let index = labels
            .binary_search_by_key(&step, |label| label.step)
            .unwrap_or_else(|index| {
                labels.insert(
                    index,
                    StepLabel {
                        step,
                        operation: "poll",
                        waits: false,
                    },
                );
                index
            });
        &mut labels[index]
    }

    /// Whether a failure other than a deadlock stopped the execution while some thread had not
    /// finished, so that the steps it had left never ran (`Outcome::cut_short`).
    pub(crate) fn cut_short(&self) -> bool {
        self.failure
            .as_ref()
            .is_some_and(|info| info.kind != FailureKind::Deadlock)
            && self.threads.iter().any(|thread| !thread.finished)
    }

    /// The number of steps executed.
    pub fn steps(&self) -> u64 {
        self.events.len() as u64
    }

    /// The identity of the object with index `object`, if there is one.
    pub fn object(&self, object: u32) -> Option<ObjectId> {
        self.objects.get(object as usize).map(|o| o.id)
    }

    /// Whether `object` is the internal state lock of a primitive built on it.
    pub fn is_internal(&self, object: u32) -> bool {
        self.objects
            .get(object as usize)
            .is_some_and(|record| record.internal)
    }

    /// Whether step `step` belongs to the user operation of the step before it: the release of
    /// a primitive's internal state lock, which the primitive takes only for the instructions
    /// of one operation.
    pub fn is_folded(&self, step: usize) -> bool {
        let event = &self.events[step];
        event.kind == OpKind::Unlock && self.is_internal(event.object)
    }

    /// Thread `thread`'s last step that the interleaving shows as a row of its own (not
    /// [folded](Recording::is_folded) into the operation before it).
    pub fn last_shown_step(&self, thread: usize) -> Option<usize> {
        (0..self.events.len())
            .rev()
            .find(|&step| self.events[step].thread as usize == thread && !self.is_folded(step))
    }

    /// What step `step` did, in the user's terms: the operation the runtime named it with (a
    /// primitive's operation on its internal state lock, an abort), or else the operation's
    /// name, `poll` for a step on an internal state lock that was given none.
    pub fn step_operation(&self, step: usize) -> String {
        let event = &self.events[step];
        let labels = &self.step_labels;
        match labels.binary_search_by_key(&(step as u64), |label| label.step) {
            Ok(index) if labels[index].waits => format!("{} (waits)", labels[index].operation),
            Ok(index) => labels[index].operation.to_string(),
            Err(_) if self.is_internal(event.object) => "poll".to_string(),
            Err(_) => event.kind.name_with_arg(event.arg).to_string(),
        }
    }

    /// The one name reports give the object with index `object`: its type name and its
    /// ordinal among the objects of that type, in the order the execution registered them (on
    /// first use), as `Mutex2`. Registering more objects never renames an earlier one, so a
    /// message written while the execution ran names it as the report written afterwards does.
    pub fn object_name(&self, object: u32) -> String {
        let Some(record) = self.objects.get(object as usize) else {
            return "an unknown object".to_string();
        };
        let ordinal = self.objects[..object as usize]
            .iter()
            .filter(|earlier| earlier.name == record.name)
            .count()
            + 1;
        format!("{}{ordinal}", record.name)
    }

    /// Where the object with index `object` comes from, for a report's legend: `Mutex created
    /// at src/cache.rs:15:17`.
    pub fn object_origin(&self, object: u32) -> String {
        match self.objects.get(object as usize) {
            Some(record) => format!(
                "{} created at {}",
                record.name,
                super::op::ShortSite(record.id.site)
            ),
            None => "an unknown object".to_string(),
        }
    }

    /// What identifies step `event` across runs of the same program: its thread, operation,
    /// site and object identity. A thread's start is reported at its spawn site, or for the
    /// main thread wherever the exploration was started, so its site is left out.
    pub fn step_identity(&self, event: &Event) -> (u32, OpKind, Option<Site>, Option<ObjectId>) {
        (
            event.thread,
            event.kind,
            (event.kind != OpKind::Start).then_some(event.site),
            self.object(event.object),
        )
    }

    /// The execution's steps with their objects and arguments resolved, as strategies that
    /// analyse whole executions read them.
    pub fn trace_events(&self) -> Vec<TraceEvent> {
        // Threads are numbered in spawn order: the `k`-th spawn creates thread `k`.
        let mut spawned = 0;
        self.events
            .iter()
            .map(|e| TraceEvent {
                thread: e.thread as usize,
                kind: e.kind,
                object: self.object(e.object),
                object_name: self
                    .objects
                    .get(e.object as usize)
                    .map_or("", |record| record.name),
                target: match e.kind {
                    OpKind::Spawn => {
                        spawned += 1;
                        Some(TraceTarget::Thread(spawned))
                    }
                    OpKind::Join | OpKind::Unpark => Some(TraceTarget::Thread(e.arg as usize)),
                    OpKind::Wake => self.object(e.arg).map(TraceTarget::Object),
                    OpKind::Poll if e.object == NO_OBJECT => e
                        .arg
                        .checked_sub(1)
                        .map(|t| TraceTarget::Thread(t as usize)),
                    OpKind::Send | OpKind::Recv | OpKind::Poll => {
                        ChannelStep::decode(e.arg).map(TraceTarget::Channel)
                    }
                    OpKind::BarrierArrive | OpKind::BarrierLeave => {
                        let generation = e.arg & !FILLS_GENERATION;
                        Some(if e.arg & FILLS_GENERATION != 0 {
                            TraceTarget::FilledGeneration(generation)
                        } else {
                            TraceTarget::Generation(generation)
                        })
                    }
                    _ => None,
                },
                site: e.site,
                yields: counts_as_yield(e.kind, e.arg),
                seq_cst: matches!(
                    e.kind,
                    OpKind::AtomicLoad | OpKind::AtomicStore | OpKind::AtomicRmw | OpKind::Fence
                ) && ordering_of_code(e.arg) == std::sync::atomic::Ordering::SeqCst,
            })
            .collect()
    }
}

/// One step of a finished execution with its object and argument resolved, as strategies that
/// analyse whole executions receive it (`strategy::Outcome::trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// The thread that took the step (0 is the main thread; spawned threads are numbered in
    /// the order they were spawned).
    pub thread: usize,
    /// What the step did.
    pub kind: OpKind,
    /// The object it acted on, if any.
    pub object: Option<ObjectId>,
    /// What reports call the type of that object (`AtomicU32`, `Mutex`, `UnsafeCell`; empty
    /// without an object), so that an analysis names it as reports do
    /// (`Recording::object_name`: the type name and the object's ordinal among those of the
    /// type, in the order the execution first used them).
    pub object_name: &'static str,
    /// For `Spawn`, the spawned thread; for `Join`, the joined thread; for `Wake`, the mutex
    /// the woken waiter takes back.
    pub target: Option<TraceTarget>,
    /// Where in the program the step was taken.
    pub site: Site,
    /// The step is a yield for the strategies' yield rules: a `yield_now`, a sleep, or a
    /// task's park after `future::yield_now` (which has the kind `Park`). A wait that ended by
    /// its timeout counts as a yield too, but the trace does not say which waits did.
    pub yields: bool,
    /// The step is a `SeqCst` atomic access or fence. Under the weak memory model where a
    /// `SeqCst` fence falls among the other `SeqCst` steps decides which stores later loads may
    /// read (see `runtime/sc_fences.rs`), so such steps are dependent even on different
    /// objects.
    pub seq_cst: bool,
}

/// What a step's argument refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceTarget {
    /// A thread (the spawned thread of a `Spawn`, the joined thread of a `Join`, the thread
    /// an `Unpark` unparks, the thread a `Poll` of `JoinHandle::is_finished` asks about).
    Thread(usize),
    /// An object (the mutex of a `Wake`).
    Object(ObjectId),
    /// What a step on a channel did (absent for a rendezvous channel's steps and a receiver's
    /// drop).
    Channel(ChannelStep),
    /// The generation of the barrier an arrival or a leave belongs to (modulo 2^31).
    Generation(u32),
    /// The generation of the barrier the arrival filled, which made its thread the leader
    /// (modulo 2^31).
    FilledGeneration(u32),
}

/// The bit of a barrier step's argument that marks the arrival that filled its generation.
pub(crate) const FILLS_GENERATION: u32 = 1 << 31;

/// What a step on a channel did, for a dependence relation finer than "same channel": a send
/// and a receive of different messages commute, and so do the drops of two senders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelStep {
    /// Sent a message.
    Sent {
        /// The message's number: messages are numbered from 1 in the order they were sent,
        /// modulo 2^29.
        ticket: u32,
        /// The channel has a capacity, so the send also waited for room.
        bounded: bool,
    },
    /// Took a message.
    Received {
        /// The message's number.
        ticket: u32,
    },
    /// Found no message: the channel was empty, or disconnected.
    FoundNone {
        /// The number the next message would have had.
        ticket: u32,
    },
    /// Dropped the last sender (the drops of the others are no steps).
    SenderDropped,
    /// Dropped the receiver while a sender was alive.
    ReceiverDropped,
    /// Offered a message on a rendezvous channel (`SyncSender::try_send` on a channel of
    /// capacity 0), which a receiver takes only if it already waits in a receive: so the outcome
    /// depends on whether a receiving thread has reached its receive, not only on the
    /// channel's steps.
    Offered {
        /// A receiver waited and took the message.
        taken: bool,
    },
}

impl ChannelStep {
    const TICKET: u32 = (1 << 29) - 1;

    /// The step's description as the argument of its recorded event (0 is none).
    pub(crate) fn encode(self) -> u32 {
        let (class, ticket) = match self {
            ChannelStep::Sent {
                ticket,
                bounded: false,
            } => (1, ticket),
            ChannelStep::Sent {
                ticket,
                bounded: true,
            } => (2, ticket),
            ChannelStep::Received { ticket } => (3, ticket),
            ChannelStep::FoundNone { ticket } => (4, ticket),
            ChannelStep::SenderDropped => (5, 0),
            ChannelStep::Offered { taken } => (6, u32::from(taken)),
            ChannelStep::ReceiverDropped => (7, 0),
        };
        class << 29 | ticket & Self::TICKET
    }

    /// The description encoded by [`ChannelStep::encode`], if any.
    pub(crate) fn decode(arg: u32) -> Option<ChannelStep> {
        let ticket = arg & Self::TICKET;
        Some(match arg >> 29 {
            1 => ChannelStep::Sent {
                ticket,
                bounded: false,
            },
            2 => ChannelStep::Sent {
                ticket,
                bounded: true,
            },
            3 => ChannelStep::Received { ticket },
            4 => ChannelStep::FoundNone { ticket },
            5 => ChannelStep::SenderDropped,
            6 => ChannelStep::Offered { taken: ticket != 0 },
            7 => ChannelStep::ReceiverDropped,
            _ => return None,
        })
    }
}

/// A finished execution: it shows its [`Recording`] and nothing else, and hands its buffers to
/// the next execution on this OS thread when dropped.
pub(crate) struct Finished(Option<Box<Execution>>);

impl Finished {
    pub(super) fn new(execution: Box<Execution>) -> Finished {
        Finished(Some(execution))
    }
}

impl Deref for Finished {
    type Target = Recording;

    fn deref(&self) -> &Recording {
        &self.0.as_ref().expect("a finished execution").recording
    }
}

impl DerefMut for Finished {
    fn deref_mut(&mut self) -> &mut Recording {
        &mut self.0.as_mut().expect("a finished execution").recording
    }
}

impl Drop for Finished {
    fn drop(&mut self) {
        if let Some(execution) = self.0.take() {
            execution.recycle();
        }
    }
}

/// Behaviour std allows at an operation an execution ran that no schedule of interleave's can
/// produce, which an exhaustive search's claim to have covered every schedule leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoverageGaps {
    /// A `compare_exchange_weak` whose comparison held ran while spurious failures were off
    /// (`Limits::spurious_cas_failures`): the failure std allows there was not explored.
    pub weak_exchange_held: bool,
    /// An atomic load could have read a store older than the last
    /// [`STORE_HISTORY`](super::memory::STORE_HISTORY) of its location, which the weak memory
    /// model forgets.
    pub older_store_forgotten: bool,
}

impl CoverageGaps {
    /// The gaps of either.
    pub fn union(self, other: CoverageGaps) -> CoverageGaps {
        CoverageGaps {
            weak_exchange_held: self.weak_exchange_held | other.weak_exchange_held,
            older_store_forgotten: self.older_store_forgotten | other.older_store_forgotten,
        }
    }
}
