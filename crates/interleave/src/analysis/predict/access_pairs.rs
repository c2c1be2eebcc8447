//! Concurrent access pairs (seed 002, chapter 4), computed from executions instead of static
//! may-happen-in-parallel analysis.
//!
//! An *access* is a step's static identity: its thread, source site, class (read, write, lock
//! acquisition, wait, notify, woken waiter re-entering) and the object it contends on (a woken
//! waiter contends on the mutex it takes back). Two accesses of different threads form a
//! concurrent access pair when they contend on the same object and are not ordered by
//! must-happen-before (program order, spawn and join) in some observed execution:
//!
//! - RW: a read or write and a write of one variable (a potential data race);
//! - MM: two lock acquisitions of one lock (not two read locks);
//! - WN: a wait and a notify on one condition variable (lost notifications);
//! - WM: a woken waiter re-entering and a lock acquisition of its mutex (barging);
//! - WW: two woken waiters re-entering one mutex.
//!
//! Precision: pairs come from observed executions only, so accesses that no observed execution
//! reaches are missing (the analysis is as complete as the executions it saw); every pair
//! reported did contend in parallel in some execution. The static analysis's may-alias
//! distinction becomes: a pair is *must-alias* when each of its two accesses has only ever
//! touched that one object, *may-alias* when one of them has touched several.
//!
//! Each access also keeps its *guard*: the locks held exclusively at every one of its
//! observed steps (the intersection of their locksets). An access whose guard another thread
//! holds cannot happen until that thread lets the lock go, which is what lets value-schedule
//! testing skip ordered pairs that a lock already decides.

use std::collections::{BTreeMap, BTreeSet};

use super::fork_join::ForkJoin;
use super::lockset::{Held, HeldLocks};
use crate::runtime::clock::VectorClock;
use crate::runtime::op::{Access, ObjectId, OpKind, Site};
use crate::trace::{TraceEvent, TraceTarget};

/// What an access does to the object it contends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessClass {
    /// Reads a variable.
    Read,
    /// Writes (or reads and writes) a variable.
    Write,
    /// Acquires a lock (for writing, or a mutex).
    Lock,
    /// Acquires a read-write lock for reading.
    ReadLock,
    /// Waits on a condition variable.
    Wait,
    /// Notifies a condition variable.
    Notify,
    /// A woken waiter re-entering its mutex.
    Wake,
}

impl AccessClass {
    /// The class of a step, if it is an access that can form a pair.
    pub fn of(kind: OpKind) -> Option<AccessClass> {
        match kind {
            OpKind::Wake => Some(AccessClass::Wake),
            OpKind::Wait => Some(AccessClass::Wait),
            OpKind::NotifyOne | OpKind::NotifyAll => Some(AccessClass::Notify),
            OpKind::Lock | OpKind::WriteLock => Some(AccessClass::Lock),
            OpKind::ReadLock => Some(AccessClass::ReadLock),
            _ => match kind.access() {
                Access::Read => Some(AccessClass::Read),
                Access::Write | Access::ReadWrite => Some(AccessClass::Write),
                Access::Sync | Access::Thread => None,
            },
        }
    }
}

/// The five kinds of concurrent access pairs, in seed 002's priority order (Figure 6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PairKind {
    /// Conflicting accesses of one variable.
    RW,
    /// A wait and a notify on one condition variable.
    WN,
    /// A woken waiter re-entering and a lock acquisition of its mutex.
    WM,
    /// Two woken waiters re-entering one mutex.
    WW,
    /// Two lock acquisitions of one lock.
    MM,
}

impl PairKind {
    /// The kind of pair two access classes form, if any.
    pub fn of(a: AccessClass, b: AccessClass) -> Option<PairKind> {
        use AccessClass::*;
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        match (a, b) {
            (Read, Write) | (Write, Write) => Some(PairKind::RW),
            (Lock, Lock) | (Lock, ReadLock) => Some(PairKind::MM),
            (Wait, Notify) => Some(PairKind::WN),
            (Lock | ReadLock, Wake) => Some(PairKind::WM),
            (Wake, Wake) => Some(PairKind::WW),
            _ => None,
        }
    }
}

/// The static identity of an access (without the object).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccessSite {
    /// The thread (0 is the main thread, spawned threads in spawn order).
    pub thread: usize,
    /// Where in the source.
    pub site: Site,
    /// What it does.
    pub class: AccessClass,
}

/// The object a step contends on and its access site, if it is an access.
pub fn access_of(event: &TraceEvent) -> Option<(AccessSite, ObjectId)> {
    let class = AccessClass::of(event.kind)?;
    let object = match (class, event.target) {
        (AccessClass::Wake, Some(TraceTarget::Object(mutex))) => mutex,
        _ => event.object?,
    };
    Some((
        AccessSite {
            thread: event.thread,
            site: event.site,
            class,
        },
        object,
    ))
}

/// One concurrent access pair, as seen from one of its accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partner {
    /// The other access.
    pub access: AccessSite,
    /// The pair's kind.
    pub kind: PairKind,
    /// Whether both accesses have only ever touched the pair's object.
    pub must_alias: bool,
}

/// The concurrent access pairs of the executions seen so far.
#[derive(Clone, Debug, Default)]
pub struct AccessPairs {
    /// The partners of each access on each object (both directions of every pair).
    partners: BTreeMap<(AccessSite, ObjectIdKey), BTreeSet<AccessSite>>,
    /// The objects each access site has touched.
    objects: BTreeMap<AccessSite, BTreeSet<ObjectIdKey>>,
    /// The locks held exclusively at every observed step of each access site.
    guards: BTreeMap<AccessSite, BTreeSet<ObjectIdKey>>,
}

/// An object identity that orders (for deterministic iteration).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct ObjectIdKey {
    site: Site,
    instance: u32,
}

impl From<ObjectId> for ObjectIdKey {
    fn from(id: ObjectId) -> ObjectIdKey {
        ObjectIdKey {
            site: id.site,
            instance: id.instance,
        }
    }
}

impl AccessPairs {
    /// Adds the pairs of one execution.
    pub fn observe(&mut self, trace: &[TraceEvent]) {
        let mut order = ForkJoin::default();
        let mut locks = HeldLocks::default();
        // Per object, the clock of the latest step of each access site: when that step is
        // ordered before a later access, so are the site's earlier steps (program order).
        let mut latest: BTreeMap<ObjectIdKey, BTreeMap<AccessSite, VectorClock>> = BTreeMap::new();
        for event in trace {
            let clock = order.step(event);
            let held = locks.of(event.thread);
            let found = access_of(event);
            if let Some((access, _)) = found {
                let exclusive = held.iter().filter(|h| h.exclusive).map(|h| h.lock.into());
                match self.guards.get_mut(&access) {
                    Some(guard) => {
                        let now: BTreeSet<ObjectIdKey> = exclusive.collect();
                        guard.retain(|lock| now.contains(lock));
                    }
                    None => {
                        self.guards.insert(access, exclusive.collect());
                    }
                }
            }
            locks.step(event);
            let Some((access, object)) = found else {
                continue;
            };
            let object = ObjectIdKey::from(object);
            self.objects.entry(access).or_default().insert(object);
            let earlier = latest.entry(object).or_default();
            for (other, other_clock) in earlier.iter() {
                if other.thread != access.thread
                    && !other_clock.leq(clock)
                    && PairKind::of(other.class, access.class).is_some()
                {
                    self.partners
                        .entry((access, object))
                        .or_default()
                        .insert(*other);
                    self.partners
                        .entry((*other, object))
                        .or_default()
                        .insert(access);
                }
            }
            earlier.insert(access, clock.clone());
        }
    }

    /// The accesses `access` on `object` pairs with.
    pub fn partners(&self, access: AccessSite, object: ObjectId) -> Vec<Partner> {
        let single = |a: &AccessSite| self.objects.get(a).is_some_and(|o| o.len() == 1);
        self.partners
            .get(&(access, ObjectIdKey::from(object)))
            .into_iter()
            .flatten()
            .filter_map(|other| {
                Some(Partner {
                    access: *other,
                    kind: PairKind::of(access.class, other.class)?,
                    must_alias: single(&access) && single(other),
                })
            })
            .collect()
    }

    /// Whether `access` cannot happen while a thread holds `held`: every observed step of it
    /// held one of those locks (exclusively, as `held` does).
    pub fn excluded_by(&self, access: AccessSite, held: &[Held]) -> bool {
        self.guards.get(&access).is_some_and(|guard| {
            held.iter()
                .any(|h| h.exclusive && guard.contains(&ObjectIdKey::from(h.lock)))
        })
    }

    /// How many pairs of each kind there are.
    pub fn counts(&self) -> BTreeMap<PairKind, usize> {
        let mut counts = BTreeMap::new();
        for ((access, _), others) in &self.partners {
            // Each pair is stored from both sides: count it from its smaller access.
            for other in others.iter().filter(|other| access < *other) {
                if let Some(kind) = PairKind::of(access.class, other.class) {
                    *counts.entry(kind).or_default() += 1;
                }
            }
        }
        counts
    }
}
