//! Data-race detection on tracked variables (`cell::Var`, `cell::UnsafeCell`) with vector
//! clocks, in the style of FastTrack: each variable keeps its last write and the latest read of
//! each thread since, tagged with the accessing thread's epoch.
//!
//! Precision: happens-before is built from spawn/join, lock release/acquire, condition
//! variables, channels, barriers, once, park/unpark and atomics. Under the weak memory model
//! (`MemoryModel::Weak`, the default) an atomic synchronises as its ordering says (a `Relaxed`
//! store publishes nothing, a `Release` store read by an `Acquire` load does), so data handed
//! over through a relaxed flag races; under `MemoryModel::SequentiallyConsistent` every store
//! releases and every load acquires, and such a race is missed. A report is a pair of
//! conflicting accesses with no happens-before between them in the explored execution.
//!
//! One ordering comes from code the runtime does not see: `sync::Arc` is std's own (it keeps
//! `Arc<dyn Trait>` coercions), whose last holder runs the value's destructor only after every
//! other holder has dropped its reference, with a release and an acquire in between. A
//! destructor that reads or writes a cell another thread used before dropping its reference
//! (the slots of a queue, freed by the queue's `Drop`) is therefore ordered after that use, and
//! a race whose later access runs inside `Arc::drop_slow` (std's destructor path of the last
//! reference) is taken as ordered ([`in_last_arc_drop`]): otherwise it was the one false
//! positive of the checks. The price is one missed race: a destructor run by the last `Arc` that
//! touches a cell outside its value (a global, another `Arc`'s value) while a thread that holds
//! no reference uses it. Found through the symbols of a backtrace taken the first time two sites
//! race, so a binary without symbols keeps the false positive, and the ordering std's
//! `Arc::get_mut`, `try_unwrap` and `into_inner` give is not seen.

use std::cell::RefCell;
use std::panic::Location;

use rustc_hash::FxHashMap;

use crate::analysis::label;
use crate::runtime::object::{Access, ObjState, ObjectHandle};
use crate::runtime::op::{
    effective_ordering, ObjIdx, ObjectKind, OpKind, ShortSite, Site, FAILED_EXCHANGE,
};
use crate::runtime::{Event, Execution, Handover};

/// A race found at an access: the earlier access it conflicts with.
pub(crate) struct Race {
    pub earlier: Access,
}

/// Checks an access of the running thread to variable `object` and records it.
pub(crate) fn access(ex: &mut Execution, object: ObjIdx, write: bool, site: Site) -> Option<Race> {
    let me = ex.me();
    // The access is the step just recorded.
    let step = ex.steps().saturating_sub(1);
    let (threads, objects) = (&ex.threads, &mut ex.objects);
    let clock = &threads[me].clock;
    let ObjState::Var { last_write, reads } = &mut objects[object as usize].state else {
        return None;
    };
    let ordered = |a: &Access| a.thread == me || a.epoch <= clock.get(a.thread);
    let mut race = last_write
        .filter(|w| !ordered(w))
        .map(|earlier| Race { earlier });
    if write && race.is_none() {
        race = reads
            .iter()
            .find(|r| !ordered(r))
            .map(|&earlier| Race { earlier });
    }
    let this = Access {
        thread: me,
        epoch: clock.get(me),
        site,
        write,
        creation: false,
        step,
    };
    if write {
        *last_write = Some(this);
        reads.clear();
    } else if let Some(slot) = reads.iter_mut().find(|r| r.thread == me) {
        *slot = this;
    } else {
        reads.push(this);
    }
    race
}

/// Records the creation of the variable `handle` by the running thread as a write of its
/// initial value, at the thread's current epoch: a cell built by one thread and handed to
/// another through a `Relaxed` pointer is read without the happens-before of the value it was
/// built with (a Treiber stack's node, a lazily initialised object), a race loom and miri
/// report. Creation is no scheduling point: no other thread can reach the cell before the
/// creating thread hands it over, which its next operation does at the earliest.
pub(crate) fn created(ex: &mut Execution, handle: &ObjectHandle) {
    let object = ex.object(handle, ObjectKind::Var);
    let me = ex.me();
    let this = Access {
        thread: me,
        epoch: ex.threads[me].clock.get(me),
        site: handle.site(),
        write: true,
        creation: true,
        // The creating thread's latest step, which the report's explanation counts from.
        step: ex.steps().saturating_sub(1),
    };
    if let ObjState::Var { last_write, reads } = &mut ex.objects[object as usize].state {
        *last_write = Some(this);
        reads.clear();
    }
}

thread_local! {
    /// For each pair of sites (the earlier access's, the later one's) that raced on this OS
    /// thread, whether the later access ran under `Arc::drop_slow` the first time: see
    /// [`in_last_arc_drop`].
    static UNDER_ARC_DROP: RefCell<FxHashMap<(usize, usize), bool>> =
        RefCell::new(FxHashMap::default());
}

/// Whether the running thread, whose access at `later` races with one at `earlier`, is inside
/// `Arc::drop_slow`, the destructor of an `Arc`'s value that std runs in the last holder once
/// every other reference is gone: see the module's documentation. Read from the symbols of a
/// backtrace (std marks `drop_slow` `inline(never)`, so it is a frame of its own; the name is
/// `alloc::sync::Arc<T,A>::drop_slow` under legacy symbol mangling and
/// `<alloc::sync::Arc<...>>::drop_slow` under v0), once per pair of sites on each OS thread:
/// resolving the symbols costs about a millisecond, and a run that counts every failure (the
/// CLI's benchmark) or warns of every race (`RaceMode::Warn`) meets the same pair thousands of
/// times. A pair whose later site is reached both from `drop_slow` and from elsewhere (a
/// destructor of a value that is sometimes in an `Arc` and sometimes not) keeps the answer of
/// its first race.
pub(crate) fn in_last_arc_drop(earlier: Site, later: Site) -> bool {
    let key = (
        earlier as *const Location<'static> as usize,
        later as *const Location<'static> as usize,
    );
    if let Some(known) = UNDER_ARC_DROP.with(|known| known.borrow().get(&key).copied()) {
        return known;
    }
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    let found = trace
        .lines()
        .any(|line| line.contains("alloc::sync::Arc<") && line.contains(">::drop_slow"));
    UNDER_ARC_DROP.with(|known| known.borrow_mut().insert(key, found));
    found
}

/// Describes a race between the running thread's access and `race.earlier`, and returns the
/// steps the description cites besides the two accesses (the load and the store of an
/// unordered handover), which the report's shortened interleaving must keep.
pub(crate) fn describe(
    ex: &Execution,
    object: ObjIdx,
    write: bool,
    site: Site,
    race: &Race,
) -> (String, Vec<u64>) {
    let kind = |w: bool| if w { "write" } else { "read" };
    let thread_label = |ex: &Execution, t: usize| {
        let slot = &ex.threads[t];
        label(t, slot.name.as_deref(), slot.spawn_site)
    };
    let earlier_kind = if race.earlier.creation {
        "creation"
    } else {
        kind(race.earlier.write)
    };
    let earlier = if race.earlier.creation {
        "write of the initial value (its creation)"
    } else {
        earlier_kind
    };
    let mut text = format!(
        "data race on {}: {} {} at {} and {} {} at {} are not ordered by happens-before",
        ex.object_name(object),
        thread_label(ex, race.earlier.thread),
        earlier,
        ShortSite(race.earlier.site),
        thread_label(ex, ex.me()),
        kind(write),
        ShortSite(site),
    );
    let access = ex.steps().saturating_sub(1);
    let mut cited = Vec::new();
    if let Some(handover) = ex.unordered_handover(race.earlier.thread, race.earlier.step, access) {
        cited.extend([handover.store, handover.load]);
        cited.extend(&handover.fences);
        let (loaded, stored) = (&handover.loaded, &handover.stored);
        let (load, store) = (atomic_access(loaded), atomic_access(stored));
        let why = unordered_sides(&handover, earlier_kind, kind(write));
        text.push_str(&format!(
            "\n  the {load} of {} at step {} read the {store} at step {}, made after the {}, but \
             {why}: a Release (or stronger) store read by an Acquire (or stronger) load, or \
             fences of those orderings around the two, would order the accesses",
            ex.object_name(loaded.object),
            handover.load + 1,
            handover.store + 1,
            earlier_kind,
        ));
    } else {
        text.push_str(
            "\n  no synchronisation that interleave sees orders them: if the program orders them \
             through something it does not see (a std::sync atomic or lock, or the reference \
             count of interleave::sync::Arc, which is std's, as in Arc::try_unwrap, get_mut or \
             into_inner), use interleave's types, join the thread, or hand its history over with \
             interleave::sync::Causality",
        );
    }
    (text, cited)
}

/// What keeps `handover` (at least one side of which does not order) from ordering the
/// writer's `earlier` access before the reader's `later` one: the side that lacks an ordering,
/// or both, each told where a fence would have to be. A side that orders through a fence is
/// not blamed.
pub(crate) fn unordered_sides(handover: &Handover, earlier: &str, later: &str) -> String {
    let store_side = format!(
        "a {} releases nothing, and no Release fence comes between the {earlier} and it",
        atomic_access(&handover.stored)
    );
    let load_side = format!(
        "a {} acquires nothing, and no Acquire fence comes between it and the {later}",
        atomic_access(&handover.loaded)
    );
    match (handover.releases, handover.acquires) {
        (false, true) => store_side,
        (true, false) => load_side,
        _ => format!("{store_side}; {load_side}"),
    }
}

/// An atomic access as the handover explanations name it: its ordering, then what it does
/// (`Relaxed store`, `Acquire load`, `AcqRel read-modify-write`).
fn atomic_access(event: &Event) -> String {
    let ordering = effective_ordering(event.arg);
    let access = match event.kind {
        OpKind::AtomicLoad => "load",
        OpKind::AtomicStore => "store",
        _ if event.arg & FAILED_EXCHANGE != 0 => "compare-exchange that failed (a load)",
        _ => "read-modify-write",
    };
    format!("{ordering:?} {access}")
}
