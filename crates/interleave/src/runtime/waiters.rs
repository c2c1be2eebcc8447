//! Who waits for what, as sets of threads: each live thread is filed by its pending
//! operation's gate (`Gate`), and each lock keeps the set of threads that ask for it, so the
//! enabledness pass (`enabled.rs`) answers every thread waiting for one lock with a few mask
//! operations on that lock's word instead of visiting each thread at each decision.
//!
//! A live thread is in the set of its pending operation's gate (`Waiters::by_gate`), and when
//! it asks for a `Mutex` or an `RwLock`, in that lock's [`LockRequests`] too; a finished thread
//! is in none. The pass answers the threads that cannot block and the lock requests from the
//! sets and the locks' words, joins and woken `Condvar` waiters from their slots (a few
//! instructions each), and tests the rest in full.
//!
//! The sets mirror the slots: they change where a slot's pending operation, finished flag or
//! read preference does, which is the announcement of an operation (`Execution::announce`,
//! inlined into every primitive, where the operation's gate is a constant, so filing the
//! thread under it is one or two stores), `Execution::set_finished`, `Execution::set_pending`
//! for the rare other writers of a pending operation, and `Execution::set_read_preference`.
//! Debug builds check the mirror at every computation of the enabled threads.
//!
//! Bit `t` stands for thread `t`, so the sets describe at most [`MASK_THREADS`] threads. They
//! are kept only while the execution has more than [`FEW_THREADS`] threads and at most
//! [`MASK_THREADS`] (`Waiters::active`); otherwise the pass visits each thread in turn.
//!
//! Two earlier designs kept the answers themselves up to date and paid at every lock step for
//! every thread watching the lock, which cost more than visiting every thread
//! (`docs/bench/hotpath-issue22.txt`); here a lock step changes only the lock's word, as before,
//! and the answers are computed at the decision from the word and the sets.

use super::enabled::ReadPreference;
use super::object::{writers_wait, ObjectEntry, LOCK_HOLDERS, LOCK_WRITER};
use super::op::{Gate, ObjIdx, Op};
use super::ThreadSlot;

/// How many threads the sets can describe: one bit each in a `u64`.
const MASK_THREADS: usize = 64;

/// Up to how many threads an execution visits every thread instead of keeping the sets: with
/// so few, the visit costs less than the sets' fixed cost per decision. Kept for the 3-thread
/// `Mutex` workload, the sets ran 16% more instructions and took 7-11% more time.
const FEW_THREADS: usize = 4;

/// The bit of thread `t`. The shift wraps past [`MASK_THREADS`], which saves a test: the sets
/// are not kept then.
#[inline(always)]
pub(super) fn bit(t: usize) -> u64 {
    1u64 << (t % MASK_THREADS)
}

/// The threads of set `set`, in thread order.
#[inline(always)]
pub(super) fn members(mut set: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let t = set.trailing_zeros() as usize;
            set &= set - 1;
            t
        })
    })
}

/// The threads that ask for one lock (a `Mutex` or an `RwLock`), by kind of request: kept in
/// the lock's `ObjectEntry`, next to its word.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LockRequests {
    /// The threads whose pending operation is `Mutex::lock` or `RwLock::write` of this lock
    /// (index 0, gate `Exclusive`), and those whose pending operation is `RwLock::read` of it
    /// (index 1, gate `Shared`).
    by_gate: [u64; 2],
    /// The lock is in `Waiters::locks`.
    listed: bool,
}

/// Where lock gate `gate` indexes `LockRequests::by_gate`.
#[inline(always)]
fn request_index(gate: Gate) -> usize {
    (gate as usize).wrapping_sub(Gate::Exclusive as usize) & 1
}

/// The execution's sets of threads by what their pending operations wait for.
#[derive(Debug, Default)]
pub(super) struct Waiters {
    /// The sets are kept: the execution has more than [`FEW_THREADS`] threads, and no more
    /// than [`MASK_THREADS`]. Otherwise the sets mean nothing, and only
    /// [`Waiters::thread_added`] changes them.
    pub active: bool,
    /// The live threads by their pending operation's gate (`Gate as usize`; 8 entries, so an
    /// index masked to 3 bits needs no bounds check).
    by_gate: [u64; 8],
    /// Threads whose pending read chose to join the readers (`ReadPreference::Joins`).
    read_joins: u64,
    /// Threads whose pending read chose to wait behind a writer (`ReadPreference::Defers`).
    read_defers: u64,
    /// Every lock some live thread asks for, and possibly some that nobody asks for any more:
    /// the pass drops those as it meets them, so a request costs one push only when its lock
    /// was not listed.
    locks: Vec<ObjIdx>,
}

impl Waiters {
    /// The sets of an execution that has no thread yet.
    pub(super) fn clear(&mut self) {
        let mut locks = std::mem::take(&mut self.locks);
        locks.clear();
        *self = Waiters {
            locks,
            ..Waiters::default()
        };
    }

    /// The live threads whose pending operation has gate `gate`.
    #[inline(always)]
    pub(super) fn with_gate(&self, gate: Gate) -> u64 {
        self.by_gate[gate as usize & 7]
    }

    /// Takes note of the execution's newest thread, the last of `threads` (`objects`: the
    /// object table): starts keeping the sets, filing every thread, when the thread count
    /// passes [`FEW_THREADS`], and stops when it passes [`MASK_THREADS`]. Only the test is
    /// inlined into every spawn.
    #[inline(always)]
    pub(super) fn thread_added(&mut self, objects: &mut [ObjectEntry], threads: &[ThreadSlot]) {
        if self.active || threads.len() > FEW_THREADS {
            self.thread_added_past_few(objects, threads);
        }
    }

    /// [`Waiters::thread_added`] past [`FEW_THREADS`] threads.
    #[inline(never)]
    fn thread_added_past_few(&mut self, objects: &mut [ObjectEntry], threads: &[ThreadSlot]) {
        let count = threads.len();
        if count > MASK_THREADS {
            self.active = false;
        } else if self.active {
            self.enter(objects, count - 1, threads[count - 1].pending);
        } else if count > FEW_THREADS {
            self.active = true;
            for (t, slot) in threads.iter().enumerate() {
                self.set_read_preference(t, slot.read_preference);
                if !slot.finished {
                    self.enter(objects, t, slot.pending);
                }
            }
        }
    }

    /// Files live thread `t`, whose pending operation was `previous`, under its new one, `op`.
    /// The caller tests `active`.
    #[inline(always)]
    pub(super) fn refile(&mut self, objects: &mut [ObjectEntry], t: usize, previous: Op, op: Op) {
        if previous.gate != Gate::Free || op.gate != Gate::Free {
            self.leave(objects, t, previous);
            self.enter(objects, t, op);
        }
    }

    /// Files live thread `t` under its pending operation `op`. The caller tests `active`.
    #[inline(always)]
    pub(super) fn enter(&mut self, objects: &mut [ObjectEntry], t: usize, op: Op) {
        self.enter_with(t, op, move |object| &mut objects[object as usize].requests);
    }

    /// [`Waiters::enter`] with the lock requests of each object where `requests_of` finds
    /// them: the object table's, or the debug check's own.
    #[inline(always)]
    fn enter_with<'r>(
        &mut self,
        t: usize,
        op: Op,
        requests_of: impl FnOnce(ObjIdx) -> &'r mut LockRequests,
    ) {
        let bit = bit(t);
        self.by_gate[op.gate as usize & 7] |= bit;
        if op.gate.asks_for_lock() {
            let requests = requests_of(op.object);
            requests.by_gate[request_index(op.gate)] |= bit;
            if !requests.listed {
                requests.listed = true;
                self.locks.push(op.object);
            }
        }
    }

    /// Takes live thread `t` out of the sets its pending operation `op` filed it in. The
    /// caller tests `active`.
    #[inline(always)]
    pub(super) fn leave(&mut self, objects: &mut [ObjectEntry], t: usize, op: Op) {
        let bit = bit(t);
        self.by_gate[op.gate as usize & 7] &= !bit;
        if op.gate.asks_for_lock() {
            objects[op.object as usize].requests.by_gate[request_index(op.gate)] &= !bit;
        }
    }

    /// Records thread `t`'s read preference. The caller tests `active` (this is part of the
    /// record of every step, which inlines only the test).
    #[inline(never)]
    pub(super) fn set_read_preference(&mut self, t: usize, preference: ReadPreference) {
        let bit = bit(t);
        self.read_joins &= !bit;
        self.read_defers &= !bit;
        match preference {
            ReadPreference::Joins => self.read_joins |= bit,
            ReadPreference::Defers => self.read_defers |= bit,
            ReadPreference::Undecided => {}
        }
    }

    /// The threads that can run by what the sets and the locks' words say, leaving out the
    /// joins and the woken `Condvar` waiters (`Execution::compute_enabled` answers those from
    /// their slots), and the threads the pass must test in full (`look`): those whose gate is
    /// `Other`, the reads that must draw whether they defer to a waiting writer (readers hold
    /// the lock and a writer waits), and the `current` thread when its lock request is
    /// blocked (it may wait for a lock it holds itself). Drops the listed locks nobody asks for
    /// any more.
    ///
    /// The answers are the lock gates' (`enabled::gate_answer`): a `Mutex` lock or an `RwLock`
    /// write runs while nobody holds the lock; a read, while no writer does, unless a writer
    /// waits and the read chose to defer (or must choose, where readers hold the lock).
    #[inline(always)]
    pub(super) fn answer(&mut self, objects: &mut [ObjectEntry], current: usize) -> Answer {
        let mut runnable = self.with_gate(Gate::Free);
        let mut look = self.with_gate(Gate::Other);
        let mut index = 0;
        while index < self.locks.len() {
            let entry = &mut objects[self.locks[index] as usize];
            let [exclusive, shared] = entry.requests.by_gate;
            if exclusive | shared == 0 {
                entry.requests.listed = false;
                self.locks.swap_remove(index);
                continue;
            }
            index += 1;
            let lock = entry.lock;
            if lock & LOCK_HOLDERS == 0 {
                runnable |= exclusive;
            }
            if lock & LOCK_WRITER == 0 {
                if !writers_wait(lock) {
                    runnable |= shared;
                } else {
                    let undecided = shared & !(self.read_joins | self.read_defers);
                    runnable |= shared & self.read_joins;
                    if lock & LOCK_HOLDERS != 0 {
                        look |= undecided;
                    } else {
                        runnable |= undecided;
                    }
                }
            }
        }
        let requests = self.with_gate(Gate::Exclusive) | self.with_gate(Gate::Shared);
        look |= requests & !runnable & bit(current);
        Answer { runnable, look }
    }

    /// Checks, in debug builds, that the sets mirror `threads`, and `objects` the lock
    /// requests.
    pub(super) fn check(&self, threads: &[ThreadSlot], objects: &[ObjectEntry]) {
        let mut expected = Waiters::default();
        let mut requests = vec![LockRequests::default(); objects.len()];
        for (t, slot) in threads.iter().enumerate() {
            expected.set_read_preference(t, slot.read_preference);
            if !slot.finished {
                expected.enter_with(t, slot.pending, |object| &mut requests[object as usize]);
            }
        }
        let sets = |w: &Waiters| (w.by_gate, w.read_joins, w.read_defers);
        assert_eq!(sets(self), sets(&expected), "the waiters' sets are stale");
        for (index, (entry, expected)) in objects.iter().zip(&requests).enumerate() {
            let kept = entry.requests;
            assert_eq!(
                kept.by_gate, expected.by_gate,
                "the lock requests of object {index} are stale"
            );
            assert_eq!(
                kept.listed,
                self.locks.contains(&(index as ObjIdx)),
                "object {index} is listed as a lock asked for, or not, against its flag"
            );
            assert!(
                kept.listed || kept.by_gate == [0, 0],
                "object {index} is asked for but not listed"
            );
        }
    }
}

/// What [`Waiters::answer`] finds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Answer {
    /// The threads that can run.
    pub runnable: u64,
    /// The threads to test one by one, in thread order.
    pub look: u64,
}
