//! The weak memory model of atomics: which store an atomic load may read, and which
//! happens-before edges each atomic access and fence creates, under the memory model of C++20
//! and Rust as RC11 formalises it (Lahav, Vafeiadis, Kang, Hur, Dreyer, "Repairing Sequential
//! Consistency in C/C++11", PLDI 2017), explored by a tester that runs one thread at a time.
//!
//! ## The model
//!
//! - **Modification order.** Every atomic location keeps the stores made to it, in the order
//!   they ran: that order is the location's modification order. The value the atomic itself
//!   holds is always the latest store's.
//! - **Which store a load reads.** A load may read any store that coherence allows: none older
//!   than a store that happens before the load (write-read coherence), than a store that a read
//!   happening before the load read (read-read coherence, for reads of the loading thread and
//!   of threads it synchronised with), or, for a `SeqCst` load, than any store a `SeqCst` access
//!   to the location wrote or read before it. When several stores qualify, the schedule chooses
//!   one ([`Schedule::next_value`](super::Schedule::next_value), option 0 being the latest), so
//!   every strategy explores the choice, the replay token records it, and the systematic
//!   searches try every option.
//! - **Happens-before.** A `Release` (or stronger) store carries its thread's clock; an
//!   `Acquire` (or stronger) load that reads it joins that clock. A `Relaxed` store carries the
//!   clock of its thread's last release fence, and a `Relaxed` load keeps what it read for the
//!   thread's next acquire fence. A read-modify-write continues the release sequence of the
//!   store it read (C++20: only read-modify-writes continue one), so its store carries the
//!   clock of the store it read as well as its own.
//! - **Sequential consistency.** `SeqCst` operations take effect in the order they run, which
//!   is the single total order `S` C++20 requires. Its four conditions ([atomics.order] p4)
//!   become floors under loads: a `SeqCst` load reads no store older than one a `SeqCst`
//!   access to its location wrote or read, and the `SeqCst` fences add theirs
//!   ([`super::sc_fences`]). So store buffering with `SeqCst` accesses or with `SeqCst`
//!   fences, and IRIW with `SeqCst` loads, cannot show their weak outcomes, while neither
//!   `SeqCst` accesses nor `SeqCst` fences create happens-before edges C++20 does not have:
//!   a data race that only they "order" is reported, and one-sided fence protocols (a fence
//!   in one thread against `SeqCst` accesses without a fence in the other) show their weak
//!   outcomes.
//!
//! ## Where the model is stronger than RC11
//!
//! Every outcome the model produces is allowed by RC11, so a report it leads to is real. It
//! gives up these outcomes to stay a stateless tester that runs one thread at a time:
//!
//! - stores join the modification order where they run, so outcomes that need a store to be
//!   ordered before one that ran earlier (2+2W's) never happen;
//! - every read-modify-write reads the latest store, also a failed `compare_exchange` (whose
//!   load could read an older one); `fetch_update` is std's load and loop of compare-exchanges,
//!   so its load may read an older store, and its exchange then fails and retries;
//! - a load reads one of the last [`STORE_HISTORY`] stores of its location (loom keeps seven);
//! - once a thread yields (`yield_now`, `spin_loop`, a sleep, a wait that times out), its loads
//!   read no store the thread saw before the yield unless it is the latest (loom's rule,
//!   [`YieldVisibility::UnseenBeforeYield`], the default), or, under
//!   [`YieldVisibility::LatestBeforeYield`], no store older than the latest one made before the
//!   yield: stores become visible in finite time ([intro.progress]), and either rule makes the
//!   search tree of a spin loop finite;
//! - no load buffering: a load reads only stores that have run, never one its thread's own
//!   later operations enable;
//! - `SeqCst` operations take their place in the single total order `S` where they run, so `S`
//!   contains happens-before, which C++20 (since P0668) and RC11 require only of "strongly
//!   happens before": an outcome that needs a `SeqCst` operation ordered in `S` before one that
//!   happens before it through a `Release`/`Acquire` pair never happens (the Z6.U shape: with
//!   `x.store(1, SeqCst); y.store(1, Release)` in one thread, `y.load(SeqCst)` reading 1 in a
//!   second, and `y.store(3, SeqCst); x.load(SeqCst)` in a third, `y` ending at 3 with the
//!   third thread's load reading `x == 0` is allowed but never produced);
//! - loads never read values that no store wrote (no out-of-thin-air, as RC11 requires too).

use std::sync::atomic::Ordering;

use super::clock::{VectorClock, NARROW_THREADS};
use super::op::ObjIdx;
use super::sc_fences::ScFences;

/// How many stores of a location a load may choose among: the latest and the ones just before
/// it. Older stores are forgotten.
pub const STORE_HISTORY: usize = 8;

/// How the runtime treats atomic operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemoryModel {
    /// Orderings count: a load may read an older store when no happens-before edge forbids it,
    /// and only `Release`/`Acquire` (or stronger) pairs, fences and `SeqCst` synchronise (see
    /// the module documentation of `runtime::memory`).
    #[default]
    Weak,
    /// Every atomic operation behaves as `SeqCst` and every load reads the latest store,
    /// whatever ordering the program passes; every store releases and every load acquires.
    SequentiallyConsistent,
}

impl MemoryModel {
    /// The names `INTERLEAVE_MEMORY` accepts.
    pub const NAMES: [&'static str; 2] = ["weak", "sc"];

    /// The model named `name` (`weak` or `sc`), if any.
    pub fn from_name(name: &str) -> Option<MemoryModel> {
        match name {
            "weak" => Some(MemoryModel::Weak),
            "sc" => Some(MemoryModel::SequentiallyConsistent),
            _ => None,
        }
    }
}

/// Which stores a thread's atomic loads may still read once it has yielded (`yield_now`,
/// `spin_loop`, a sleep, a wait that timed out). Stores become visible to other threads in
/// finite time ([intro.progress]), so a thread that spins cannot read an old value forever.
/// Each rule takes some stale stores away from a thread's loads at each of its yields, which
/// makes the search tree of a spin loop finite; each hides some stale reads that the other
/// allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum YieldVisibility {
    /// No store older than the latest one made to its location, by any thread, before the
    /// yield. A thread may still read that latest store again after the yield when newer ones
    /// exist. This hides a stale read the program never looked at: a thread that loads a flag,
    /// yields (or sleeps) and then loads the data the flag announces always sees data stored
    /// before its yield, however the two were ordered.
    LatestBeforeYield,
    /// No store the thread itself wrote or read before the yield, unless it is the latest
    /// store; older stores it never saw stay readable. This is loom's rule, the default: a
    /// thread spinning on a stale value reads a newer one after each yield, where under
    /// `LatestBeforeYield` it may read the latest store made before the yield once more at each
    /// turn while the newer ones are made after it, and a yield or sleep between loading a
    /// `Relaxed` flag and loading its data keeps the data's stale values readable.
    #[default]
    UnseenBeforeYield,
}

/// Whether an access with `order` acquires.
pub(crate) fn acquires(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// Whether an access with `order` releases.
pub(crate) fn releases(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// The step index recorded for a location's initial value, which no step stored.
pub(crate) const INITIAL_VALUE: u64 = u64::MAX;

/// The low bits of a modification-order index, which name its slot in the location's ring, so
/// the latest store and the slot of the next one are found without an offset or a division.
const SLOT_MASK: u64 = STORE_HISTORY as u64 - 1;
const _: () = assert!(STORE_HISTORY.is_power_of_two());

/// One store in a location's modification order.
#[derive(Debug, Default)]
struct Store {
    /// The value, as the bits of a `u64` (`sync::atomic`'s `Bits`).
    bits: u64,
    /// How many stores the execution had made when this one was made (1 for the first); the
    /// initial value has 0.
    seq: u64,
    /// The step that made the store, or [`INITIAL_VALUE`].
    step: u64,
    /// What an acquire that reads this store joins: the clock its release sequence carries.
    sync: VectorClock,
    /// The thread that made the store (0 for the initial value, whose mark is 0).
    writer: u32,
    /// One more than the writer's epoch at the store; 0 for the initial value.
    writer_mark: u32,
    /// Whether `sync` is at most the writer's clock at the store (true of every store but a
    /// `Relaxed` or `Release` read-modify-write that read a store its thread had not
    /// synchronised with). Then a clock that knows the writer's epoch at the store holds all
    /// of `sync`: a thread's clock reaches another clock only through a release, after which
    /// the releasing thread's epoch ends (`tick`), so knowing epoch `e` of thread `w` means
    /// holding `w`'s clock at the end of `e`. Reading such a store needs no join
    /// ([`sync_known_to`](Self::sync_known_to)).
    sync_within_writer: bool,
    /// The other threads that read the store. A load must not read an older store than one a
    /// thread saw at an epoch that happens before the load.
    readers: Vec<Reader>,
}

/// A thread that read a store, and when it first did.
#[derive(Clone, Copy, Debug)]
struct Reader {
    thread: u32,
    /// One more than the thread's epoch at its first read of the store.
    mark: u32,
    /// How many times the thread had yielded by its first read of the store (for
    /// [`YieldVisibility::UnseenBeforeYield`]).
    yields: u32,
}

impl Store {
    /// Makes this the store of `bits` by `thread` (clock `clock`), the execution's `seq`-th
    /// store, at step `step`; its `sync` (and `sync_within_writer`) are set by the caller.
    #[inline]
    fn set(&mut self, bits: u64, seq: u64, step: u64, thread: usize, clock: &VectorClock) {
        self.bits = bits;
        self.seq = seq;
        self.step = step;
        self.writer = thread as u32;
        self.writer_mark = clock.get(thread) + 1;
        self.readers.clear();
    }

    /// Whether a thread whose clock is `clock` must not read a store older than this one: a
    /// thread wrote or read it at an epoch that happens before `clock`.
    #[inline]
    fn seen_within(&self, clock: &VectorClock) -> bool {
        let within = |thread: u32, mark: u32| mark != 0 && mark <= clock.get(thread as usize) + 1;
        within(self.writer, self.writer_mark)
            || self
                .readers
                .iter()
                .any(|reader| within(reader.thread, reader.mark))
    }

    /// Whether thread `thread`, whose memory is `me`, wrote or read this store before its last
    /// yield ([`YieldVisibility::UnseenBeforeYield`]).
    #[inline]
    fn seen_before_yield(&self, thread: usize, me: &ThreadMemory) -> bool {
        let thread = thread as u32;
        // A store its writer made before the yield is one of the stores the execution had
        // made by then, which `flushed` counts; a reader's first read is dated by its yields.
        if self.writer == thread && self.writer_mark != 0 {
            return self.seq <= me.flushed;
        }
        self.readers
            .iter()
            .any(|reader| reader.thread == thread && reader.yields < me.yields)
    }

    /// Whether `clock` already holds `sync`, known without comparing the clocks: the store's
    /// `sync` is within its writer's clock at the store, and `clock` knows the writer's epoch
    /// at the store (see [`sync_within_writer`](Self::sync_within_writer)). The initial value
    /// (mark 0, empty `sync`) is known to every clock.
    #[inline(always)]
    fn sync_known_to(&self, clock: &VectorClock) -> bool {
        let known = self.sync_within_writer
            && u64::from(self.writer_mark) <= u64::from(clock.get(self.writer as usize)) + 1;
        debug_assert!(
            !known || self.sync.leq(clock),
            "a clock that knows the writer's epoch at a store must hold the store's clock"
        );
        known
    }

    /// Thread `thread` (clock `clock`, memory `me`) reads this store with `order`: the store is
    /// seen at the thread's epoch, and an acquire joins what the store's release sequence
    /// carries, while a relaxed read keeps it for the thread's next acquire fence.
    #[inline(always)]
    fn observe(
        &mut self,
        thread: usize,
        clock: &mut VectorClock,
        order: Ordering,
        me: &mut ThreadMemory,
    ) {
        let reader = thread as u32;
        // The initial value has no writer (mark 0), though its `writer` field is thread 0's.
        let wrote_it = reader == self.writer && self.writer_mark != 0;
        if !wrote_it && !self.readers.iter().any(|r| r.thread == reader) {
            self.readers.push(Reader {
                thread: reader,
                mark: clock.get(thread) + 1,
                yields: me.yields,
            });
        }
        self.acquire_into(clock, order, &mut me.pending_acquire);
    }

    /// The acquire half of reading this store: an acquiring read joins what its release
    /// sequence carries into the thread's clock, a relaxed one keeps it for the thread's next
    /// acquire fence (`pending_acquire`). Nothing is joined when the clock holds it already
    /// (a later acquire fence joins into a clock that has only grown).
    #[inline(always)]
    fn acquire_into(
        &self,
        clock: &mut VectorClock,
        order: Ordering,
        pending_acquire: &mut VectorClock,
    ) {
        if self.sync_known_to(clock) {
            return;
        }
        if acquires(order) {
            clock.join(&self.sync);
        } else {
            pending_acquire.join(&self.sync);
        }
    }
}

/// The slots of a location's stores: index `i` of its modification order is in slot
/// `i & SLOT_MASK`, so finding one needs no bounds check.
type Ring = [Store; STORE_HISTORY];

/// The slot of modification-order index `index`.
#[inline(always)]
fn slot(index: u64) -> usize {
    (index & SLOT_MASK) as usize
}

/// Which stores of a location are kept, by modification-order index, which keeps counting
/// when a non-atomic write starts the order afresh: the kept ones are
/// [`start`](Self::start)`..end`.
#[derive(Debug, Default)]
struct Span {
    /// The modification-order index of the store the order last started afresh with
    /// (`Location::restart`); the stores before it are forgotten.
    first: u64,
    /// One past the modification-order index of the latest store (`start` when none is kept).
    end: u64,
    /// The highest modification-order index a `SeqCst` access wrote or read.
    sc_floor: u64,
    /// The value of the latest store, kept here too so that an access compares it with the
    /// atomic's value ([`Location::holds`]) without finding the store's slot.
    latest_bits: u64,
}

impl Span {
    /// The modification-order index of the oldest store kept: the first since the order
    /// started afresh, or the oldest of the last [`STORE_HISTORY`]. Found when a load needs
    /// it rather than kept up to date by every store (about 5 instructions per store).
    #[inline(always)]
    fn start(&self) -> u64 {
        self.first
            .max(self.end.saturating_sub(STORE_HISTORY as u64))
    }

    /// Makes the next index the latest store's, a store of `bits`, which forgets the oldest
    /// one when the ring is full; returns the new store's index.
    #[inline(always)]
    fn push(&mut self, bits: u64) -> u64 {
        let index = self.end;
        self.end += 1;
        self.latest_bits = bits;
        index
    }
}

/// One atomic location: its last [`STORE_HISTORY`] stores, in a ring whose slots (and their
/// buffers) are reused from store to store and from execution to execution.
#[derive(Debug, Default)]
struct Location {
    span: Span,
    /// Allocated when the location is first used (entries of other objects stay empty).
    ring: Option<Box<Ring>>,
    /// The epoch of each thread's latest store to the location in this execution, so a plain
    /// read (`unsync_load`) checks that every store happens before it
    /// ([`WeakMemory::stores_happen_before`]). Kept here rather than in the object's clock,
    /// which a read-modify-write then had to find as well (about 5 instructions).
    writers: VectorClock,
}

impl Location {
    /// Forgets every store, keeping the slots.
    fn clear(&mut self) {
        self.span = Span::default();
    }

    /// The floor a `SeqCst` fence of a thread whose clock is `clock` puts under later loads
    /// of this location (`sc_fences.rs`): the modification-order index of the newest store the
    /// thread has seen (written or read at a point that happens before `clock`'s) or a
    /// `SeqCst` access wrote or read; 0, which puts nothing under a load, when there is none.
    fn fence_floor(&self, clock: &VectorClock) -> u64 {
        let Some(ring) = self.ring.as_deref() else {
            return 0;
        };
        let span = &self.span;
        let seen = (span.start()..span.end)
            .rev()
            .find(|&index| ring[slot(index)].seen_within(clock))
            .unwrap_or(0);
        seen.max(span.sc_floor)
    }

    /// Whether the location was used (its ring is allocated then) and its latest store
    /// holds `current`: no write outside the atomic operations changed it since.
    #[inline(always)]
    fn holds(span: &Span, current: u64) -> bool {
        span.end != span.first && span.latest_bits == current
    }

    /// Starts the modification order afresh with one store of `bits` that every thread sees.
    /// At the location's first access in the execution, its writers are forgotten too (a
    /// plain write later in the execution keeps them: the earlier stores still have to happen
    /// before a plain read).
    #[cold]
    fn restart(
        span: &mut Span,
        ring: &mut Option<Box<Ring>>,
        writers: &mut VectorClock,
        bits: u64,
    ) {
        if span.end == span.first {
            writers.reset();
        }
        span.first = span.end;
        span.sc_floor = span.first;
        span.end += 1;
        span.latest_bits = bits;
        let ring = ring.get_or_insert_with(|| Box::new(std::array::from_fn(|_| Store::default())));
        let store = &mut ring[slot(span.first)];
        store.bits = bits;
        store.seq = 0;
        store.step = INITIAL_VALUE;
        store.sync = VectorClock::default();
        store.writer = 0;
        store.writer_mark = 0;
        store.sync_within_writer = true;
        store.readers.clear();
    }
}

/// What an access works on, found once by [`WeakMemory::begin`]: its location's span, ring
/// and writers, its thread's memory and the execution's store count.
struct Access<'a> {
    span: &'a mut Span,
    ring: &'a mut Ring,
    writers: &'a mut VectorClock,
    me: &'a mut ThreadMemory,
    stores: &'a mut u64,
}

/// What the model keeps of one thread besides its happens-before clock.
#[derive(Debug, Default)]
struct ThreadMemory {
    /// The thread's clock at its last release fence: what its `Relaxed` stores carry.
    fence_release: VectorClock,
    /// What its `Relaxed` reads read since its last acquire fence, for the next one.
    pending_acquire: VectorClock,
    /// How many stores the execution had made at the thread's last yield.
    flushed: u64,
    /// How many times the thread has yielded.
    yields: u32,
}

impl ThreadMemory {
    /// Forgets the last execution, keeping the buffers.
    fn clear(&mut self) {
        self.fence_release.reset();
        self.pending_acquire.reset();
        self.flushed = 0;
        self.yields = 0;
    }
}

/// The result of a load: the value, and when it was not the latest, which store it was.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Read {
    pub bits: u64,
    pub stale: Option<StaleRead>,
    /// The load could also have read a store older than the last [`STORE_HISTORY`], which
    /// the location has forgotten.
    pub older_store_forgotten: bool,
}

/// A load that read a store older than the latest one (for reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StaleRead {
    /// The step of the load.
    pub load: u64,
    /// The step of the store it read, or [`INITIAL_VALUE`].
    pub read: u64,
    /// The step of the latest store, which it did not see.
    pub latest: u64,
}

/// The state of the weak memory model in one execution.
#[derive(Debug, Default)]
pub(crate) struct WeakMemory {
    /// By object index; entries of objects that are not atomics stay empty.
    locations: Vec<Location>,
    threads: Vec<ThreadMemory>,
    /// The `SeqCst` fences so far, with the floors they put under later loads.
    sc_fences: ScFences,
    /// Whether a clock the model keeps (a store's or a thread's memory) may have
    /// entries past the first [`NARROW_THREADS`] (`VectorClock::is_narrow`). Only a thread
    /// whose own clock has them, or which is not one of the first threads, can bring them in:
    /// every clock the model keeps is made of the accessing threads' clocks and of clocks it
    /// already keeps. So the general path sets this for such a thread, the straight path of a
    /// read-modify-write tests only this and the thread's clock instead of every clock it
    /// reads or overwrites, and `clear` makes the kept clocks narrow again.
    may_be_wide: bool,
    /// How many stores the execution made.
    stores: u64,
}

impl WeakMemory {
    /// Forgets the last execution, keeping the buffers.
    pub fn clear(&mut self) {
        for location in &mut self.locations {
            location.clear();
        }
        // Reset in place: emptying the table made every execution grow it again (about 166
        // instructions per execution of the atomic workload).
        for thread in &mut self.threads {
            thread.clear();
        }
        self.sc_fences.clear();
        if self.may_be_wide {
            // The stores' clocks of this execution stay in the rings' slots, which the
            // straight path overwrites without clearing their wide entries.
            for ring in self
                .locations
                .iter_mut()
                .filter_map(|l| l.ring.as_deref_mut())
            {
                for store in ring {
                    store.sync.reset();
                }
            }
            self.may_be_wide = false;
        }
        self.stores = 0;
    }

    /// Notes that thread `thread`, whose clock is `clock`, may bring wide clocks into the
    /// model (see [`may_be_wide`](Self::may_be_wide)).
    #[inline(always)]
    fn note_width(&mut self, thread: usize, clock: &VectorClock) {
        if thread >= NARROW_THREADS || !clock.is_narrow() {
            self.may_be_wide = true;
        }
    }

    /// Makes room for thread `thread` in the thread table.
    #[inline]
    fn make_room_for(&mut self, thread: usize) {
        if self.threads.len() <= thread {
            self.grow_threads(thread);
        }
    }

    #[cold]
    fn grow_threads(&mut self, thread: usize) {
        self.threads.resize_with(thread + 1, ThreadMemory::default);
    }

    #[cold]
    fn grow_locations(&mut self, index: usize) {
        self.locations.resize_with(index + 1, Location::default);
    }

    /// Starts an access of thread `thread` (clock `clock`) to `object`, whose atomic now holds
    /// `current`: the tables make room. A location starts with its current value as its
    /// initial store; a value that differs from the latest store's was written without an
    /// atomic operation (`get_mut`, `as_ptr`), which needs exclusive access or a happens-before
    /// edge, so it starts the history afresh. Returns what the access works on.
    #[inline(always)]
    fn begin(
        &mut self,
        object: ObjIdx,
        thread: usize,
        clock: &VectorClock,
        current: u64,
    ) -> Access<'_> {
        self.note_width(thread, clock);
        self.make_room_for(thread);
        let index = object as usize;
        if self.locations.len() <= index {
            self.grow_locations(index);
        }
        // Both tables have room now; `get_mut` lets the compiler see it without a second
        // bounds check each.
        let Some((
            Location {
                span,
                ring,
                writers,
            },
            me,
        )) = location_and_thread(&mut self.locations, &mut self.threads, object, thread)
        else {
            unreachable!("the tables have just made room");
        };
        if !Location::holds(span, current) {
            Location::restart(span, ring, writers, current);
        }
        let Some(ring) = ring.as_deref_mut() else {
            unreachable!("a location's ring is allocated when it starts");
        };
        Access {
            span,
            ring,
            writers,
            me,
            stores: &mut self.stores,
        }
    }

    /// Thread `thread` (clock `clock`) reads the store of modification-order index `index`
    /// with `order` (see [`Store::observe`]); a `SeqCst` read raises the floor of later
    /// `SeqCst` loads to it. Returns the value.
    #[inline(always)]
    fn read(
        access: Access<'_>,
        index: u64,
        thread: usize,
        clock: &mut VectorClock,
        order: Ordering,
    ) -> u64 {
        let store = &mut access.ring[slot(index)];
        store.observe(thread, clock, order, access.me);
        if order == Ordering::SeqCst {
            access.span.sc_floor = access.span.sc_floor.max(index);
        }
        store.bits
    }

    /// A load of `object` with `order` by thread `thread` (clock `clock`), at step `step`, whose
    /// thread reads after a yield as `yield_visibility` says; the atomic holds `current`.
    /// `choose` picks one of `n > 1` readable stores (0 is the latest).
    #[allow(clippy::too_many_arguments)]
    pub fn load(
        &mut self,
        object: ObjIdx,
        thread: usize,
        clock: &mut VectorClock,
        order: Ordering,
        current: u64,
        step: u64,
        yield_visibility: YieldVisibility,
        choose: impl FnOnce(u64) -> u64,
    ) -> Read {
        // The floor the `SeqCst` fences put under this load (`sc_fences.rs`), found before
        // the access borrows the tables.
        let fenced_floor = if self.sc_fences.is_empty() {
            0
        } else if order == Ordering::SeqCst {
            self.sc_fences.latest_floor(object as usize)
        } else {
            self.sc_fences.floor_known_to(object as usize, clock)
        };
        let access = self.begin(object, thread, clock, current);
        let (span, ring) = (&*access.span, &*access.ring);
        // Under `UnseenBeforeYield` the yield puts no floor of its own: with `flushed` at 0, no
        // store the loop tests counts as made before it, since only the initial value has seq 0
        // and it is the oldest store kept, which the loop never tests.
        let flushed = match yield_visibility {
            YieldVisibility::LatestBeforeYield => access.me.flushed,
            YieldVisibility::UnseenBeforeYield => 0,
        };
        let latest = span.end - 1;
        let mut floor = latest;
        let start = span.start();
        while floor > start {
            let store = &ring[slot(floor)];
            if store.seq <= flushed || store.seen_within(clock) {
                break;
            }
            floor -= 1;
        }
        // The thread has seen every store it wrote or read, so of the stores from the floor
        // on, only the floor's can be one it saw before its last yield.
        if yield_visibility == YieldVisibility::UnseenBeforeYield
            && floor < latest
            && ring[slot(floor)].seen_before_yield(thread, access.me)
        {
            floor += 1;
        }
        floor = floor.max(fenced_floor);
        if order == Ordering::SeqCst {
            floor = floor.max(span.sc_floor);
        }
        // The oldest store kept is readable and nothing the thread has seen or any fence
        // puts it at the floor: the ring's end did, so a forgotten store was readable too.
        let older_store_forgotten = floor == start
            && start > span.first
            && start < latest
            && fenced_floor < start
            && (order != Ordering::SeqCst || span.sc_floor < start)
            && {
                let oldest = &ring[slot(start)];
                oldest.seq > flushed && !oldest.seen_within(clock)
            };
        floor = floor.min(latest);
        let index = if floor < latest {
            latest - choose(latest - floor + 1).min(latest - floor)
        } else {
            latest
        };
        let stale = (index != latest).then(|| StaleRead {
            load: step,
            read: ring[slot(index)].step,
            latest: ring[slot(latest)].step,
        });
        let bits = Self::read(access, index, thread, clock, order);
        Read {
            bits,
            stale,
            older_store_forgotten,
        }
    }

    /// A store of `bits` to `object` with `order` by thread `thread` at step `step`; the atomic
    /// held `previous` before it.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        object: ObjIdx,
        thread: usize,
        clock: &mut VectorClock,
        order: Ordering,
        previous: u64,
        bits: u64,
        step: u64,
    ) {
        let access = self.begin(object, thread, clock, previous);
        access.writers.set(thread, clock.get(thread));
        let index = access.span.push(bits);
        let store = &mut access.ring[slot(index)];
        // Both are within the thread's clock: a release fence's clock is an earlier one.
        store.sync.copy_from(if releases(order) {
            &*clock
        } else {
            &access.me.fence_release
        });
        store.sync_within_writer = true;
        *access.stores += 1;
        store.set(bits, *access.stores, step, thread, clock);
        after_write(access.span, index, thread, clock, order);
    }

    /// A read-modify-write of `object` with `order` by thread `thread` at step `step`: it read
    /// the latest store, `previous`, and stored `written` unless it failed (a failed
    /// `compare_exchange`, whose `order` is then the failure ordering, is a load of the latest
    /// store).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn read_modify_write(
        &mut self,
        object: ObjIdx,
        thread: usize,
        clock: &mut VectorClock,
        order: Ordering,
        previous: u64,
        written: Option<u64>,
        step: u64,
    ) {
        let access = self.begin(object, thread, clock, previous);
        let latest = access.span.end - 1;
        let Some(bits) = written else {
            Self::read(access, latest, thread, clock, order);
            return;
        };
        // A successful one reads as a load does, except that it does not mark the store it
        // read as seen by its thread: the store it writes next is newer and carries the same
        // mark (the thread's epoch does not move in between), so a later load's floor stops
        // there first and the reader mark could change no choice. For the same reason its
        // `SeqCst` read leaves the floor of `SeqCst` loads to `after_write`, which raises it to
        // the new store. Only the clocks move.
        let Access {
            span,
            ring,
            writers,
            me,
            stores,
        } = access;
        writers.set(thread, clock.get(thread));
        let read = &ring[slot(latest)];
        // The store continues the release sequence of the store it read; an acquiring and
        // releasing one joins that into its clock first, so its clock is all it carries.
        let within = if acquires(order) && releases(order) {
            read.acquire_into(clock, order, &mut me.pending_acquire);
            ring[slot(latest + 1)].sync.copy_from(clock);
            true
        } else {
            continue_release_sequence(ring, latest, clock, order, me)
        };
        let index = span.push(bits);
        let store = &mut ring[slot(index)];
        store.sync_within_writer = within;
        *stores += 1;
        store.set(bits, *stores, step, thread, clock);
        after_write(span, index, thread, clock, order);
    }

    /// A successful `AcqRel` (or, with `SEQ_CST`, `SeqCst`) read-modify-write of `object` by
    /// thread `thread` at step `step`, which read the latest store, `previous`, and stored
    /// `written`, as [`read_modify_write`](Self::read_modify_write) does it, when nothing calls
    /// for its general path: the location holds `previous`, the tables have room, the thread
    /// is one of the first [`NARROW_THREADS`] and every clock involved is narrow. Then it
    /// returns true; otherwise it returns false, having changed nothing.
    ///
    /// The ordering is a constant here and every test is made before anything changes, so the
    /// work is a straight line in scratch registers; on the atomic workload (60
    /// `fetch_add(1, SeqCst)` per execution) an access costs 94 instructions with the entry
    /// point, where the general path cost 172.
    #[inline(always)]
    pub fn read_modify_write_acq_rel<const SEQ_CST: bool>(
        &mut self,
        object: ObjIdx,
        thread: usize,
        clock: &mut VectorClock,
        previous: u64,
        written: u64,
        step: u64,
    ) -> bool {
        if self.may_be_wide || thread >= NARROW_THREADS || !clock.is_narrow() {
            return false;
        }
        let Some(Location {
            span,
            ring,
            writers,
        }) = self.locations.get_mut(object as usize)
        else {
            return false;
        };
        let Some(ring) = ring.as_deref_mut() else {
            return false;
        };
        if !Location::holds(span, previous) {
            return false;
        }
        writers.set(thread, clock.get(thread));
        // Every clock here is narrow (`may_be_wide`). As in `read_modify_write`, it acquires
        // what the store it read carries, so its clock is all its store carries; the joined
        // entries are written to the copy from registers. The join is made without a test that
        // could skip it (a join of a clock the thread holds already changes nothing): the epoch
        // test of `Store::sync_known_to` cost more than the joins it saved, and so, on the
        // random walk of the atomic workload, did the cheaper test of a thread reading its own
        // store (+150 instructions per execution; -40 under PCT, where a thread runs on).
        let read = ring[slot(span.end - 1)].sync.narrow_entries();
        let index = span.push(written);
        let store = &mut ring[slot(index)];
        clock.join_narrow_copying(read, [&mut store.sync]);
        if SEQ_CST {
            span.sc_floor = index;
        }
        store.sync_within_writer = true;
        self.stores += 1;
        store.set(written, self.stores, step, thread, clock);
        clock.tick(thread);
        true
    }

    /// Starts the history of `object` afresh with `current`, its atomic's value, when it does
    /// not hold it (the location's first access in the execution, or one after a plain write),
    /// as [`begin`](Self::begin) would, so that the access can take the straight path of
    /// [`read_modify_write_acq_rel`](Self::read_modify_write_acq_rel) after all. Returns
    /// whether it did; a location the table has no room for yet is left to `begin`.
    #[inline]
    pub fn restart_if_changed(&mut self, object: ObjIdx, current: u64) -> bool {
        let Some(Location {
            span,
            ring,
            writers,
        }) = self.locations.get_mut(object as usize)
        else {
            return false;
        };
        if Location::holds(span, current) {
            return false;
        }
        Location::restart(span, ring, writers, current);
        true
    }

    /// The step of the newest store to `object` made before step `step`, if the location still
    /// keeps it: a load at `step` that did not read a stale value read that store. `None` when
    /// the store was forgotten (older than the last [`STORE_HISTORY`], or before a plain write
    /// started the order afresh) and for the initial value.
    pub fn latest_store_before(&self, object: ObjIdx, step: u64) -> Option<u64> {
        let location = self.locations.get(object as usize)?;
        let ring = location.ring.as_deref()?;
        let span = &location.span;
        (span.start()..span.end)
            .rev()
            .map(|index| ring[slot(index)].step)
            .find(|&store| store < step)
            .filter(|&store| store != INITIAL_VALUE)
    }

    /// Whether every store to `object` in this execution happens before the point of a thread
    /// whose clock is `clock`: a plain read there does not race with them.
    pub fn stores_happen_before(&self, object: ObjIdx, clock: &VectorClock) -> bool {
        match self.locations.get(object as usize) {
            Some(location) if location.span.end != location.span.first => {
                location.writers.leq(clock)
            }
            _ => true,
        }
    }

    /// A fence with `order` (not `Relaxed`) by thread `thread`. A `SeqCst` fence takes its
    /// place in the order of `SeqCst` operations with the floors it puts under later loads
    /// (`sc_fences.rs`): per location, the newest store its thread has seen (what happens
    /// before the fence, its acquire part included) and the newest a `SeqCst` access wrote or
    /// read, joined with the earlier fences' floors.
    pub fn fence(&mut self, thread: usize, clock: &mut VectorClock, order: Ordering) {
        self.note_width(thread, clock);
        self.make_room_for(thread);
        if acquires(order) {
            let pending = std::mem::take(&mut self.threads[thread].pending_acquire);
            clock.join(&pending);
        }
        if order == Ordering::SeqCst {
            let locations = &self.locations;
            let seen = &*clock;
            self.sc_fences
                .record(thread, clock.get(thread) + 1, locations.len(), |location| {
                    locations[location].fence_floor(seen)
                });
        }
        if releases(order) {
            self.threads[thread].fence_release.copy_from(clock);
            clock.tick(thread);
        }
    }

    /// Thread `thread` yielded: from now on its loads follow the execution's
    /// [`YieldVisibility`] (`Limits::yield_visibility`, which `load` is given).
    #[inline]
    pub fn flush(&mut self, thread: usize) {
        self.make_room_for(thread);
        let me = &mut self.threads[thread];
        me.flushed = self.stores;
        me.yields += 1;
    }
}

/// The location of `object` and the memory of thread `thread`, when both tables have them.
#[inline(always)]
fn location_and_thread<'a>(
    locations: &'a mut [Location],
    threads: &'a mut [ThreadMemory],
    object: ObjIdx,
    thread: usize,
) -> Option<(&'a mut Location, &'a mut ThreadMemory)> {
    Some((
        locations.get_mut(object as usize)?,
        threads.get_mut(thread)?,
    ))
}

/// The clock a read-modify-write that does not both acquire and release carries, into the
/// slot after `latest`, the store it read: that store's, joined with its thread's clock if it
/// releases or its last release fence's if not; the read acquires as its `order` says.
/// Returns whether the new clock is within the thread's (see `Store::sync_within_writer`).
#[inline(never)]
fn continue_release_sequence(
    ring: &mut Ring,
    latest: u64,
    clock: &mut VectorClock,
    order: Ordering,
    me: &mut ThreadMemory,
) -> bool {
    let (read, slot) = two_slots(ring, slot(latest), slot(latest + 1));
    let known = read.sync_known_to(clock);
    read.acquire_into(clock, order, &mut me.pending_acquire);
    slot.sync.copy_from(&read.sync);
    slot.sync.join(if releases(order) {
        &*clock
    } else {
        &me.fence_release
    });
    // An acquiring one joined what it read; a release fence's clock is an earlier one of the
    // thread's.
    known || acquires(order)
}

/// The store in slot `read` and the one in slot `write`, which differ.
fn two_slots(ring: &mut Ring, read: usize, write: usize) -> (&Store, &mut Store) {
    if read < write {
        let (low, high) = ring.split_at_mut(write);
        (&low[read], &mut high[0])
    } else {
        let (low, high) = ring.split_at_mut(read);
        (&high[0], &mut low[write])
    }
}

/// What a store or a successful read-modify-write does after joining the modification order
/// as index `index`: a `SeqCst` one raises the location's floor for `SeqCst` loads; a
/// releasing one ends its thread's epoch.
#[inline(always)]
fn after_write(
    span: &mut Span,
    index: u64,
    thread: usize,
    clock: &mut VectorClock,
    order: Ordering,
) {
    if order == Ordering::SeqCst {
        span.sc_floor = index;
    }
    if releases(order) {
        clock.tick(thread);
    }
}
