//! The per-execution object table: the synchronisation state of every tracked object.
//!
//! Primitives keep their user data (a mutex's `T`, a channel's messages) themselves and keep
//! here only what the runtime needs to decide which threads are enabled and to explain
//! failures: owners, waiters, counters and clocks. A primitive registers lazily, on its first
//! use in an execution, so objects created in `const` contexts (statics) work too; its identity
//! is its creation site plus the number of objects from that site registered before it.

use std::sync::atomic::{AtomicU64, Ordering};

use super::clock::VectorClock;
use super::condvar_queue::CondvarQueue;
use super::op::{ObjIdx, ObjectKind, Site};
use super::waiters::LockRequests;

/// Bits of a handle's slot that hold the object index; the rest hold the execution tag.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// The maximum number of objects one execution can register.
pub(crate) const MAX_OBJECTS: usize = INDEX_MASK as usize;

/// What a primitive embeds to find its entry in the current execution's object table.
#[derive(Debug)]
pub(crate) struct ObjectHandle {
    site: Site,
    /// What reports call the object: its type's name, or empty for the kind's default.
    name: &'static str,
    /// The object is the internal state lock of a primitive built on it (the async
    /// primitives): reports show its steps as that primitive's operations.
    internal: bool,
    /// `execution tag << INDEX_BITS | index`, or 0 before the first registration.
    slot: AtomicU64,
}

impl ObjectHandle {
    pub const fn new(site: Site) -> ObjectHandle {
        ObjectHandle::named(site, "")
    }

    /// A handle whose object reports call `name` (a type name such as `UnsafeCell`).
    pub const fn named(site: Site, name: &'static str) -> ObjectHandle {
        ObjectHandle {
            site,
            name,
            internal: false,
            slot: AtomicU64::new(0),
        }
    }

    /// The handle of the state lock of the primitive `name` built on it.
    pub const fn internal(site: Site, name: &'static str) -> ObjectHandle {
        ObjectHandle {
            internal: true,
            ..ObjectHandle::named(site, name)
        }
    }

    pub fn site(&self) -> Site {
        self.site
    }

    /// What reports call the object, if its primitive chose a name.
    pub fn name(&self) -> Option<&'static str> {
        (!self.name.is_empty()).then_some(self.name)
    }

    pub fn is_internal(&self) -> bool {
        self.internal
    }

    /// The index of this object in the execution tagged `tag`, if it registered there.
    #[inline]
    pub fn index_in(&self, tag: u64) -> Option<ObjIdx> {
        let slot = self.slot.load(Ordering::Relaxed);
        (slot >> INDEX_BITS == tag).then_some((slot & INDEX_MASK) as ObjIdx)
    }

    /// The tag of the execution that registered the handle last, 0 if none has.
    pub fn owner(&self) -> u64 {
        self.slot.load(Ordering::Acquire) >> INDEX_BITS
    }

    /// Makes this object's index in the execution tagged `tag` be `index`, unless another
    /// execution that `running` says is still running registered it: then returns that
    /// execution's tag. The object outlives executions (a `static`), and two executions that
    /// used it at once would share its data.
    /// On success, says whether an earlier execution had registered it: the handle outlives
    /// executions.
    pub fn claim(
        &self,
        tag: u64,
        index: ObjIdx,
        running: impl Fn(u64) -> bool,
    ) -> Result<bool, u64> {
        let mine = tag << INDEX_BITS | index as u64;
        // Acquire and release pair with `runtime::live`: an execution publishes that it runs
        // before it claims a handle, so whoever sees its claim sees that it runs.
        let mut current = self.slot.load(Ordering::Acquire);
        loop {
            let owner = current >> INDEX_BITS;
            if owner != 0 && owner != tag && running(owner) {
                return Err(owner);
            }
            match self.slot.compare_exchange_weak(
                current,
                mine,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(owner != 0 && owner != tag),
                Err(now) => current = now,
            }
        }
    }
}

/// Who holds a lock and where they took it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Holder {
    pub thread: usize,
    pub site: Site,
}

/// One access to a tracked variable, for race detection: the thread, its epoch, the site.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub thread: usize,
    pub epoch: u32,
    pub site: Site,
    pub write: bool,
    /// The access is the cell's creation, which writes its initial value (`race::created`).
    pub creation: bool,
    /// The step (index into the recording's events) of the access, for the report.
    pub step: u64,
}

/// The synchronisation state of one object.
#[derive(Clone, Debug)]
pub(crate) enum ObjState {
    Mutex {
        holder: Option<Holder>,
    },
    RwLock {
        writer: Option<Holder>,
        readers: Vec<Holder>,
    },
    Condvar {
        queue: CondvarQueue<()>,
    },
    Barrier {
        parties: usize,
        arrived: usize,
        generation: u64,
    },
    Once {
        runner: Option<Holder>,
        done: bool,
    },
    Channel {
        /// Messages in flight.
        len: usize,
        /// `None` for unbounded channels; `Some(0)` for rendezvous channels.
        capacity: Option<usize>,
        senders: usize,
        receiver_alive: bool,
        /// Messages taken by the receiver so far (rendezvous senders wait for their ticket).
        received: u64,
        sent: u64,
    },
    Atomic,
    Var {
        last_write: Option<Access>,
        /// The latest read of each thread since the last write.
        reads: Vec<Access>,
    },
}

impl ObjState {
    /// The state of a new object of kind `kind`, its lists taken from `spare` when the last
    /// execution left some.
    pub fn fresh(kind: ObjectKind, spare: &mut SpareLists) -> ObjState {
        match kind {
            ObjectKind::Mutex => ObjState::Mutex { holder: None },
            ObjectKind::RwLock => ObjState::RwLock {
                writer: None,
                readers: spare.readers.pop().unwrap_or_default(),
            },
            ObjectKind::Condvar => ObjState::Condvar {
                queue: spare.condvar_queues.pop().unwrap_or_default(),
            },
            ObjectKind::Barrier => ObjState::Barrier {
                parties: 0,
                arrived: 0,
                generation: 0,
            },
            ObjectKind::Once => ObjState::Once {
                runner: None,
                done: false,
            },
            ObjectKind::Channel => ObjState::Channel {
                len: 0,
                capacity: None,
                senders: 0,
                receiver_alive: true,
                received: 0,
                sent: 0,
            },
            ObjectKind::Atomic => ObjState::Atomic,
            ObjectKind::Var => ObjState::Var {
                last_write: None,
                reads: spare.var_reads.pop().unwrap_or_default(),
            },
        }
    }

    /// Keeps the lists of this state, emptied, in `spare` for the next execution's objects.
    #[inline]
    pub fn give_lists_to(&mut self, spare: &mut SpareLists) {
        match self {
            ObjState::RwLock { readers, .. } => {
                readers.clear();
                spare.readers.push(std::mem::take(readers));
            }
            ObjState::Condvar { queue } => {
                queue.clear();
                spare.condvar_queues.push(std::mem::take(queue));
            }
            ObjState::Var { reads, .. } => {
                reads.clear();
                spare.var_reads.push(std::mem::take(reads));
            }
            _ => {}
        }
    }
}

/// The emptied lists of the last execution's objects, for this execution's: grown afresh,
/// each cost an allocation, and mostly a reallocation or two, per object and execution (a
/// `Condvar`'s queues about 1,200 instructions per execution of the peers bench's condvar
/// workload).
#[derive(Debug, Default)]
pub(crate) struct SpareLists {
    readers: Vec<Vec<Holder>>,
    condvar_queues: Vec<CondvarQueue<()>>,
    var_reads: Vec<Vec<Access>>,
}

/// One row of the object table: what the engine needs while the execution runs. The object's
/// identity and address are in the recording (`Recording::objects`, same index).
#[derive(Debug)]
pub(crate) struct ObjectEntry {
    pub state: ObjState,
    /// The clock released into this object (lock release, atomic store, send, notify).
    pub clock: VectorClock,
    /// The schedule does not track this object (see `Schedule::tracks`).
    pub untracked: bool,
    /// A lock released (or a `Once` left) by a panicking thread (see `sync::poison`).
    pub poisoned: bool,
    /// Who holds a lock, as one word the enabledness pass reads without matching `state`:
    /// [`LOCK_WRITER`] while a `Mutex` or an `RwLock` is held exclusively, plus the number
    /// of readers holding an `RwLock` (the bits of [`LOCK_HOLDERS`] below it), plus
    /// [`LOCK_ONE_WAITING`] for every thread waiting to take an `RwLock` for writing; 0 for
    /// a free lock nobody waits to write, and always 0 for other objects. The holders are
    /// kept by `take_mutex`, `give_mutex`, `take_rwlock` and `give_rwlock` with `state`, the
    /// waiting writers by `Execution::note_write_request`, `take_rwlock` and
    /// `Execution::set_finished`; debug builds check both at every decision.
    pub lock: u32,
    /// For a `Condvar`, its queue's `CondvarQueue::eligible_below`, kept by `sync::condvar`
    /// after every change of the queue: a waiter's gate (`Gate::Wake`) compares its arrival
    /// number (`ThreadSlot::condvar_arrival`) with it instead of finding itself among the
    /// waiters at every decision. 0 for other objects.
    pub condvar_eligible: u64,
    /// The threads that ask for this lock (`waiters.rs`); none for other objects.
    pub requests: LockRequests,
}

/// The bit of [`ObjectEntry::lock`] set while a thread holds the lock exclusively.
pub(crate) const LOCK_WRITER: u32 = 1 << 31;

/// The bits of [`ObjectEntry::lock`] that say who holds the lock: [`LOCK_WRITER`] and the
/// number of readers below bit 16.
pub(crate) const LOCK_HOLDERS: u32 = LOCK_WRITER | 0xffff;

/// One thread waiting to take an `RwLock` for writing, in [`ObjectEntry::lock`] (bits 16 to
/// 30 count them).
pub(crate) const LOCK_ONE_WAITING: u32 = 1 << 16;

/// Whether the lock word `lock` ([`ObjectEntry::lock`]) counts a thread waiting to write.
#[inline(always)]
pub(crate) fn writers_wait(lock: u32) -> bool {
    lock & !LOCK_WRITER >= LOCK_ONE_WAITING
}
