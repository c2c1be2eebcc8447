//! Vector clocks for happens-before, growing with the number of threads (no thread cap).
//!
//! Entry `i` counts the synchronisation epochs of thread `i`. A thread increments its own entry
//! after every release-like operation, so an access tagged with epoch `(u, e)` happens before
//! the current point of thread `t` exactly when `e <= clock_t[u]`.

/// Threads whose entries live in the first inline array.
const LOW_THREADS: usize = 8;
/// Threads whose entries live in the first inline array, for callers that keep to them (see
/// [`VectorClock::is_narrow`]).
pub(crate) const NARROW_THREADS: usize = LOW_THREADS;
/// Threads whose entries live inline, in the first array or the second.
const INLINE_THREADS: usize = 2 * LOW_THREADS;

/// A vector clock; missing entries are zero. Entries of threads `0..8` are a fixed array, so
/// joining two clocks of a typical test is a branch-free maximum over eight lanes. Entries of
/// threads `8..16` are a second array, joined only when the other clock has one set (`wide`):
/// a test of eight spawned threads has nine with the main one, and when they spilled into the
/// vector, every clock that saw the ninth grew it in every execution (allocation and the
/// spilled join were a tenth of the instructions of an 8-thread `RwLock` workload). Further
/// threads spill into a vector.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorClock {
    low: [u32; LOW_THREADS],
    high: [u32; LOW_THREADS],
    /// Whether an entry of `high` or `spill` was ever set (it may be zero).
    wide: bool,
    spill: Vec<u32>,
}

impl VectorClock {
    /// The entry of thread `thread`.
    #[inline]
    pub fn get(&self, thread: usize) -> u32 {
        if let Some(&value) = self.low.get(thread) {
            return value;
        }
        self.get_wide(thread)
    }

    fn get_wide(&self, thread: usize) -> u32 {
        match self.high.get(thread - LOW_THREADS) {
            Some(&value) => value,
            None => self
                .spill
                .get(thread - INLINE_THREADS)
                .copied()
                .unwrap_or(0),
        }
    }

    /// Sets the entry of thread `thread`.
    #[inline]
    pub fn set(&mut self, thread: usize, value: u32) {
        match self.low.get_mut(thread) {
            Some(entry) => *entry = value,
            None => self.set_wide(thread, value),
        }
    }

    fn set_wide(&mut self, thread: usize, value: u32) {
        self.wide = true;
        match self.high.get_mut(thread - LOW_THREADS) {
            Some(entry) => *entry = value,
            None => {
                let index = thread - INLINE_THREADS;
                if self.spill.len() <= index {
                    self.spill.resize(index + 1, 0);
                }
                self.spill[index] = value;
            }
        }
    }

    /// Increments the entry of thread `thread`.
    #[inline]
    pub fn tick(&mut self, thread: usize) {
        match self.low.get_mut(thread) {
            Some(entry) => {
                debug_assert!(*entry < i32::MAX as u32, "joins compare entries as i32");
                *entry += 1
            }
            None => self.set_wide(thread, self.get_wide(thread) + 1),
        }
    }

    /// Pointwise maximum with `other`. Always inlined: it is a few vector instructions, and
    /// with the plain hint whether `decide` inlined it changed with the partition of the crate
    /// into codegen units (mutex +970 instructions per execution after an unrelated change).
    #[inline(always)]
    pub fn join(&mut self, other: &VectorClock) {
        // Both arrays are copied out and the maximum written back whole: a loop over the
        // entries in place was compiled lane by lane where it was inlined (four times the
        // instructions of the vector form).
        let (mine, theirs) = (self.low, other.low);
        self.low = std::array::from_fn(|i| max_epoch(mine[i], theirs[i]));
        if other.wide {
            self.join_high(other);
        }
    }

    /// `join` of the entries of threads `8..16`, and of the spilled ones if `other` has any.
    /// With nine threads (a test with eight spawned threads) every clock that saw the ninth
    /// is wide, and the spill's bookkeeping done at every such join cost an `RwLock` workload
    /// of nine threads about 57 instructions per join, 1,700 per execution; this is 21. Cold
    /// all the same, so the callers' hot paths are laid out as before (not cold, the
    /// `Mutex` workload's decisions ran about 4 instructions more each).
    #[cold]
    #[inline(never)]
    fn join_high(&mut self, other: &VectorClock) {
        self.wide = true;
        let (mine, theirs) = (self.high, other.high);
        self.high = std::array::from_fn(|i| max_epoch(mine[i], theirs[i]));
        if !other.spill.is_empty() {
            self.join_spill(other);
        }
    }

    /// `join` of the entries of threads from 16 on, which only tests of 17 or more threads have.
    #[cold]
    fn join_spill(&mut self, other: &VectorClock) {
        if self.spill.len() < other.spill.len() {
            self.spill.resize(other.spill.len(), 0);
        }
        for (mine, theirs) in self.spill.iter_mut().zip(&other.spill) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Whether every entry is at most `other`'s: what this clock saw happens before `other`.
    pub fn leq(&self, other: &VectorClock) -> bool {
        let longest = self.spill.len().max(other.spill.len()) + INLINE_THREADS;
        (0..longest).all(|t| self.get(t) <= other.get(t))
    }

    /// Replaces the contents with a copy of `other`, reusing the allocation.
    #[inline]
    pub fn copy_from(&mut self, other: &VectorClock) {
        self.low = other.low;
        if self.wide || other.wide {
            self.copy_wide(other);
        }
    }

    #[cold]
    fn copy_wide(&mut self, other: &VectorClock) {
        self.high = other.high;
        self.wide = other.wide;
        self.spill.clear();
        self.spill.extend_from_slice(&other.spill);
    }

    /// Whether only the entries of threads `0..8` were ever set: then
    /// [`join_narrow_copying`](Self::join_narrow_copying) does what `join` and `copy_from` do.
    #[inline(always)]
    pub fn is_narrow(&self) -> bool {
        !self.wide
    }

    /// The entries of this narrow clock (see [`is_narrow`](Self::is_narrow)), by value.
    #[inline(always)]
    pub fn narrow_entries(&self) -> NarrowEntries {
        debug_assert!(self.is_narrow(), "narrow_entries of a wide clock");
        NarrowEntries(self.low)
    }

    /// `join` of the entries of a narrow clock into this narrow one, whose result is then
    /// copied (`copy_from`) into each of the narrow clocks `copies`; for a caller that tested
    /// every clock already. The copies are written from the joined entries, where separate
    /// calls read them back from memory.
    #[inline(always)]
    pub fn join_narrow_copying<const N: usize>(
        &mut self,
        other: NarrowEntries,
        copies: [&mut VectorClock; N],
    ) {
        debug_assert!(self.is_narrow(), "join_narrow_copying into a wide clock");
        let (mine, theirs) = (self.low, other.0);
        let joined = std::array::from_fn(|i| max_epoch(mine[i], theirs[i]));
        self.low = joined;
        for copy in copies {
            debug_assert!(copy.is_narrow(), "join_narrow_copying into a wide copy");
            copy.low = joined;
        }
    }

    /// Sets every entry to zero, keeping the allocation (a reused thread slot's clock, the weak
    /// memory model's clocks between executions).
    #[inline]
    pub fn reset(&mut self) {
        self.low = [0; LOW_THREADS];
        if self.wide {
            self.high = [0; LOW_THREADS];
            self.wide = false;
            self.spill.clear();
        }
    }

    /// The entries of threads `0..threads`.
    pub fn to_vec(&self, threads: usize) -> Vec<u32> {
        (0..threads).map(|thread| self.get(thread)).collect()
    }
}

/// The entries of a narrow clock ([`VectorClock::narrow_entries`]), by value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NarrowEntries([u32; LOW_THREADS]);

/// The larger of two entries, compared as signed integers: equal to the unsigned maximum
/// while entries stay below 2^31 (an execution would need that many releases of one thread),
/// and x86-64's baseline vector instructions compare signed lanes directly where an unsigned
/// maximum needs two more instructions per four lanes to flip the sign bits.
#[inline(always)]
fn max_epoch(mine: u32, theirs: u32) -> u32 {
    (mine as i32).max(theirs as i32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_pointwise_max_and_grows() {
        let mut a = VectorClock::default();
        a.set(0, 3);
        let mut b = VectorClock::default();
        b.set(0, 1);
        b.set(2, 5);
        b.set(11, 4);
        a.join(&b);
        b.set(INLINE_THREADS + 3, 6);
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2), a.get(7)), (3, 0, 5, 0));
        assert_eq!((a.get(10), a.get(11), a.get(30)), (0, 4, 0));
        assert_eq!(a.get(INLINE_THREADS + 3), 6);
        a.tick(1);
        a.tick(INLINE_THREADS + 4);
        assert_eq!((a.get(1), a.get(INLINE_THREADS + 4)), (1, 1));
        let mut c = VectorClock::default();
        c.copy_from(&a);
        assert_eq!(c, a);
        c.copy_from(&VectorClock::default());
        assert_eq!(c, VectorClock::default());
    }
}
