//! The engine's side of atomic accesses under the weak memory model: the facade
//! (`sync::atomic`) calls these right after its step was recorded, before any other thread
//! runs, with the values it read and wrote; the model (`memory.rs`) decides which store a load
//! reads and moves the thread's clock. Under sequential consistency none of this runs: the
//! step's effect is applied when it is recorded (`Execution::record`).

use std::sync::atomic::Ordering;

use super::memory::{acquires, releases};
use super::op::{effective_ordering, ordering_of_code, ObjIdx, OpKind};
use super::recording::Event;
use super::switching::draw_value;
use super::{Execution, MemoryModel};

/// [`Execution::weak_exchange_fails_spuriously`] in the current execution, for the facade's
/// `compare_exchange_weak` after its step was announced.
pub(crate) fn weak_exchange_fails_spuriously() -> bool {
    super::with(Execution::weak_exchange_fails_spuriously)
}

/// What [`Execution::unordered_handover`] finds: the load (or read-modify-write) at step
/// `load` read the store at step `store`, and the two events; whether the writer's side
/// releases (the store, or a release fence of the writer between its access and the store)
/// and whether the reader's side acquires (the load, or an acquire fence of the reader between
/// the load and its access). At least one of the two does not.
pub(crate) struct Handover {
    pub load: u64,
    pub store: u64,
    pub loaded: Event,
    pub stored: Event,
    pub releases: bool,
    pub acquires: bool,
    /// The fences that make a side release or acquire, by step, for the report.
    pub fences: Vec<u64>,
}

impl Handover {
    /// The handover of the store at step `store` read by the load (or read-modify-write) at
    /// step `load`, between the writer's access at step `written` (before the store) and the
    /// reader's at step `access` (after the load), in `events`: whether each side orders, by
    /// its own ordering or by a fence of its thread between its access and its atomic step.
    pub(crate) fn of(
        events: &[Event],
        written: u64,
        store: u64,
        load: u64,
        access: u64,
    ) -> Handover {
        let (stored, loaded) = (events[store as usize], events[load as usize]);
        // The latest fence of `thread` among `steps` whose ordering `orders` accepts.
        let fence = |thread: u32, steps: std::ops::Range<u64>, orders: fn(Ordering) -> bool| {
            steps.rev().find(|&step| {
                let event = &events[step as usize];
                event.thread == thread
                    && event.kind == OpKind::Fence
                    && orders(ordering_of_code(event.arg))
            })
        };
        let release_fence = fence(stored.thread, written + 1..store, releases);
        let acquire_fence = fence(loaded.thread, load + 1..access, acquires);
        Handover {
            load,
            store,
            loaded,
            stored,
            releases: releases(ordering_of_code(stored.arg)) || release_fence.is_some(),
            acquires: acquires(effective_ordering(loaded.arg)) || acquire_fence.is_some(),
            fences: release_fence.into_iter().chain(acquire_fence).collect(),
        }
    }
}

impl Execution {
    /// Under the weak memory model, an atomic handover that looks as if it ordered an access
    /// of thread `writer` at step `written` before the running thread's access at step
    /// `access`, but does not: the running thread's latest load (or read-modify-write) between
    /// the two that read a store `writer` made after its access, where the store does not
    /// release or the load does not acquire. For the report of a data race between the two
    /// accesses; `None` when there is no such handover (or under sequential consistency).
    pub(crate) fn unordered_handover(
        &self,
        writer: usize,
        written: u64,
        access: u64,
    ) -> Option<Handover> {
        if self.recording.limits.memory != MemoryModel::Weak {
            return None;
        }
        let events = &self.recording.events;
        let reader = self.current;
        (written + 1..access).rev().find_map(|load| {
            let loaded = events.get(load as usize)?;
            let reads = matches!(loaded.kind, OpKind::AtomicLoad | OpKind::AtomicRmw);
            if loaded.thread as usize != reader || !reads {
                return None;
            }
            let store = self.store_read_at(load)?;
            let stored = events.get(store as usize)?;
            if stored.thread as usize != writer || store <= written {
                return None;
            }
            let handover = Handover::of(events, written, store, load, access);
            (!handover.releases || !handover.acquires).then_some(handover)
        })
    }

    /// The step of the store that the atomic access at step `load` (a load or a
    /// read-modify-write) read under the weak memory model, if the model still knows it: the
    /// store a stale read names, or else the newest store made before the access. For reports:
    /// it looks through the stale reads and the location's kept stores.
    fn store_read_at(&self, load: u64) -> Option<u64> {
        if let Some(stale) = self.recording.stale_reads.iter().find(|s| s.load == load) {
            return (stale.read != super::memory::INITIAL_VALUE).then_some(stale.read);
        }
        let object = self.recording.events.get(load as usize)?.object;
        self.memory.latest_store_before(object, load)
    }

    /// Whether the running thread's `compare_exchange_weak`, whose comparison holds, fails
    /// spuriously: a recorded choice when `Limits::spurious_cas_failures` allows it, except
    /// right after the thread's previous such exchange failed spuriously, so that a retry loop
    /// ends (and an exhaustive search with it). Dropping the tasks left at the end or unwinding
    /// a stopped execution never fails one: neither extends the schedule.
    pub(crate) fn weak_exchange_fails_spuriously(&mut self) -> bool {
        if !self.recording.limits.spurious_cas_failures {
            self.recording.gaps.weak_exchange_held = true;
            return false;
        }
        if !self.draws_from_schedule() {
            return false;
        }
        let thread = self.current;
        if std::mem::take(&mut self.threads[thread].failed_spuriously) {
            return false;
        }
        let fails = self.choose_value(2) == 1;
        if fails {
            self.threads[thread].failed_spuriously = true;
            let step = self.steps() - 1;
            self.recording.spurious_failures.push(step);
        }
        fails
    }

    /// The running thread loads `object` with `order`; the atomic holds `current`. Returns the
    /// value read, which the schedule chooses among the stores coherence allows.
    pub(crate) fn atomic_load(&mut self, object: ObjIdx, order: Ordering, current: u64) -> u64 {
        let thread = self.current;
        let step = self.steps() - 1;
        // Dropping the tasks left at the end, and unwinding the threads of a stopped execution,
        // read the latest store: neither extends the schedule (`ending.rs`, `teardown.rs`).
        let ending = !self.draws_from_schedule();
        let Execution {
            memory,
            threads,
            schedule,
            recording,
            ..
        } = self;
        let read = memory.load(
            object,
            thread,
            &mut threads[thread].clock,
            order,
            current,
            step,
            recording.limits.yield_visibility,
            |options| {
                if ending {
                    0
                } else {
                    draw_value(&mut **schedule, recording, options)
                }
            },
        );
        if let Some(stale) = read.stale {
            recording.stale_reads.push(stale);
        }
        recording.gaps.older_store_forgotten |= read.older_store_forgotten;
        read.bits
    }

    /// The running thread stores `bits` to `object` with `order`; the atomic held `previous`.
    pub(crate) fn atomic_store(
        &mut self,
        object: ObjIdx,
        order: Ordering,
        previous: u64,
        bits: u64,
    ) {
        let thread = self.current;
        let step = self.steps() - 1;
        let Execution {
            threads, memory, ..
        } = self;
        memory.store(
            object,
            thread,
            &mut threads[thread].clock,
            order,
            previous,
            bits,
            step,
        );
    }

    /// The running thread read-modify-writes `object` with `SeqCst`: it read `previous`, the
    /// latest value, and wrote `written`. See [`atomic_read_modify_write_acq_rel`].
    ///
    /// [`atomic_read_modify_write_acq_rel`]: Self::atomic_read_modify_write_acq_rel
    #[inline(never)]
    pub(crate) fn atomic_read_modify_write_seq_cst(
        &mut self,
        object: ObjIdx,
        previous: u64,
        written: u64,
    ) {
        self.read_modify_write_ordered::<true>(object, previous, written);
    }

    /// The running thread read-modify-writes `object` with `AcqRel`: it read `previous`, the
    /// latest value, and wrote `written`. The facade calls this and its `SeqCst` sibling for
    /// those orderings, a constant where the facade is inlined into the caller, so the model
    /// takes its straight path ([`WeakMemory::read_modify_write_acq_rel`]) with no test of
    /// the ordering, and the general one when it cannot.
    ///
    /// [`WeakMemory::read_modify_write_acq_rel`]: super::memory::WeakMemory::read_modify_write_acq_rel
    #[inline(never)]
    pub(crate) fn atomic_read_modify_write_acq_rel(
        &mut self,
        object: ObjIdx,
        previous: u64,
        written: u64,
    ) {
        self.read_modify_write_ordered::<false>(object, previous, written);
    }

    /// The body of the two above.
    #[inline(always)]
    fn read_modify_write_ordered<const SEQ_CST: bool>(
        &mut self,
        object: ObjIdx,
        previous: u64,
        written: u64,
    ) {
        if !self.read_modify_write_straight::<SEQ_CST>(object, previous, written) {
            self.read_modify_write_off_straight::<SEQ_CST>(object, previous, written);
        }
    }

    /// The weak model's straight path for the running thread's read-modify-write; false when
    /// it does not apply.
    #[inline(always)]
    fn read_modify_write_straight<const SEQ_CST: bool>(
        &mut self,
        object: ObjIdx,
        previous: u64,
        written: u64,
    ) -> bool {
        let thread = self.current;
        let step = self.steps() - 1;
        let Execution {
            threads, memory, ..
        } = self;
        let clock = &mut threads[thread].clock;
        memory.read_modify_write_acq_rel::<SEQ_CST>(object, thread, clock, previous, written, step)
    }

    /// A read-modify-write that the straight path did not take: when only the location's
    /// history has to start afresh (its first access in the execution, or one after a plain
    /// write), it is started as the general path would and the straight path is tried again;
    /// otherwise the general path runs. Going to the general path at every first access cost
    /// about 80 instructions per execution and location on the atomic workload; restarting
    /// inside the straight path cost its every access about 8 (a call there made it save
    /// three more registers).
    #[cold]
    #[inline(never)]
    fn read_modify_write_off_straight<const SEQ_CST: bool>(
        &mut self,
        object: ObjIdx,
        previous: u64,
        written: u64,
    ) {
        if self.memory.restart_if_changed(object, previous)
            && self.read_modify_write_straight::<SEQ_CST>(object, previous, written)
        {
            return;
        }
        let order = if SEQ_CST {
            Ordering::SeqCst
        } else {
            Ordering::AcqRel
        };
        self.atomic_read_modify_write(object, order, previous, Some(written));
    }

    /// The running thread read-modify-writes `object` with `order`: it read `previous`, the
    /// latest value, and wrote `written`, or nothing when it failed (a failed
    /// `compare_exchange`, with its failure ordering).
    #[inline(never)]
    pub(crate) fn atomic_read_modify_write(
        &mut self,
        object: ObjIdx,
        order: Ordering,
        previous: u64,
        written: Option<u64>,
    ) {
        let thread = self.current;
        let step = self.steps() - 1;
        let Execution {
            threads, memory, ..
        } = self;
        let clock = &mut threads[thread].clock;
        memory.read_modify_write(object, thread, clock, order, previous, written, step);
    }

    /// The running thread fences with `order` (not `Relaxed`).
    pub(crate) fn atomic_fence(&mut self, order: Ordering) {
        let thread = self.current;
        let clock = &mut self.threads[thread].clock;
        self.memory.fence(thread, clock, order);
    }

    /// Whether every store to `object` happens before the running thread's point: under the
    /// weak memory model the epochs of the stores are kept by the model, under sequential
    /// consistency the object's clock holds the stores' released clocks.
    pub(crate) fn atomic_stores_happen_before_me(&self, object: ObjIdx) -> bool {
        let clock = &self.threads[self.current].clock;
        if self.limits().memory == MemoryModel::Weak {
            self.memory.stores_happen_before(object, clock)
        } else {
            self.objects[object as usize].clock.leq(clock)
        }
    }
}
