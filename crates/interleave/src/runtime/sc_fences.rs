//! The `SeqCst` fences of one execution under the weak memory model, and the floors they put
//! under later loads, so that fences order what C++20 says they order and nothing more.
//!
//! C++20 [atomics.order] p4 (RC11's `psc`, Lahav et al., PLDI 2017) asks for one total order
//! `S` of the `SeqCst` operations. The model takes `S` to be the order in which they run, and
//! stores join each location's modification order where they run, so of the four conditions
//! on `S` only those on a read `A` that is coherence-ordered before a write (it read an older
//! store than one that already ran) can fail. With `S` fixed they become floors on loads:
//!
//! - a `SeqCst` load reads no store older than one a `SeqCst` access to its location wrote or
//!   read (condition 4.1; the location's `sc_floor` in `memory.rs`);
//! - a `SeqCst` load reads no store older than one that was written or read, by any thread,
//!   at a point that happens before a `SeqCst` fence that ran before the load (4.2);
//! - a load that a `SeqCst` fence `X` happens before reads no store older than one a `SeqCst`
//!   access wrote or read before `X` ran (4.3), nor one that happens before a `SeqCst` fence
//!   that ran before `X` (4.4), nor one that happens before `X` itself (coherence).
//!
//! Each fence therefore keeps, per location, the newest store index any of these conditions
//! puts under a load after it: the previous fence's floors joined with the `SeqCst` floors and
//! its own thread's view at the fence. The floors only grow from fence to fence, so a load
//! needs the floors of the latest fence that happens before it (or, for a `SeqCst` load, of
//! the latest fence). Fences create no happens-before edge of their own beyond their acquire
//! and release parts, so a data race that only `SeqCst` fences "order" is reported, as C++20
//! has it.
//!
//! Precision: with `S` the order of execution these floors are exact: every outcome they
//! allow is allowed by C++20, and they rule out no outcome C++20 allows with that `S`. What
//! the model gives up besides (outcomes that need `S` to differ from the order of execution,
//! the limits of store history and yields) is listed in `memory.rs`.

use super::clock::VectorClock;

/// The `SeqCst` fences of an execution, in the order they ran, with their floors.
#[derive(Debug, Default)]
pub(super) struct ScFences {
    /// How many fences ran; a fence is named by its index in that order.
    count: u32,
    /// By thread: `(mark, fence)` for each of its fences in order, the mark being one more
    /// than the thread's epoch at the fence, so a clock knows the fence when the mark is at
    /// most its entry for the thread plus one (as `Store::seen_within` tests a store's).
    by_thread: Vec<Vec<(u32, u32)>>,
    /// By location: `(fence, floor)` at each fence that raised the location's floor, so
    /// fence `f`'s floor is that of the last entry at or before `f`. Kept as changes rather
    /// than a table of every fence by every location, which grew with their product.
    floors: Vec<Vec<(u32, u64)>>,
}

impl ScFences {
    /// Forgets the last execution, keeping the buffers.
    pub(super) fn clear(&mut self) {
        self.count = 0;
        for fences in &mut self.by_thread {
            fences.clear();
        }
        for floors in &mut self.floors {
            floors.clear();
        }
    }

    /// Whether a `SeqCst` fence ran in this execution.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Records a fence by `thread` at `mark` (its epoch plus one) over `locations` locations,
    /// whose floor at `location` is the previous fence's joined with `floor_of(location)`.
    pub(super) fn record(
        &mut self,
        thread: usize,
        mark: u32,
        locations: usize,
        mut floor_of: impl FnMut(usize) -> u64,
    ) {
        let fence = self.count;
        self.count = fence.checked_add(1).expect("fewer than 2^32 fences");
        if self.floors.len() < locations {
            self.floors.resize_with(locations, Vec::new);
        }
        for (location, floors) in self.floors.iter_mut().enumerate().take(locations) {
            let floor = floor_of(location);
            if floor > floors.last().map_or(0, |&(_, before)| before) {
                floors.push((fence, floor));
            }
        }
        if self.by_thread.len() <= thread {
            self.by_thread.resize_with(thread + 1, Vec::new);
        }
        self.by_thread[thread].push((mark, fence));
    }

    /// The floor `fence` puts under loads of `location`.
    fn floor_at(&self, fence: u32, location: usize) -> u64 {
        let Some(floors) = self.floors.get(location) else {
            return 0;
        };
        let count = floors.partition_point(|&(raised_at, _)| raised_at <= fence);
        count.checked_sub(1).map_or(0, |last| floors[last].1)
    }

    /// The floor every fence so far puts under a `SeqCst` load of `location`: the latest's.
    #[inline]
    pub(super) fn latest_floor(&self, location: usize) -> u64 {
        self.floors
            .get(location)
            .and_then(|floors| floors.last())
            .map_or(0, |&(_, floor)| floor)
    }

    /// The floor under a load of `location` by a thread whose clock is `clock`: that of the
    /// latest fence that happens before it, found per thread by the fences' marks (which grow
    /// along each thread's fences).
    pub(super) fn floor_known_to(&self, location: usize, clock: &VectorClock) -> u64 {
        self.by_thread
            .iter()
            .enumerate()
            .filter_map(|(thread, fences)| {
                let known = u64::from(clock.get(thread)) + 1;
                let count = fences.partition_point(|&(mark, _)| u64::from(mark) <= known);
                count.checked_sub(1).map(|last| fences[last].1)
            })
            .max()
            .map_or(0, |fence| self.floor_at(fence, location))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that knows `epochs[t]` of each thread `t`.
    fn clock_knowing(epochs: &[u32]) -> VectorClock {
        let mut clock = VectorClock::default();
        for (thread, &epoch) in epochs.iter().enumerate() {
            clock.set(thread, epoch);
        }
        clock
    }

    #[test]
    fn a_load_gets_the_floors_of_the_latest_fence_that_happens_before_it() {
        let mut fences = ScFences::default();
        // Thread 0 fences at epoch 2 with floor 3 at location 1; then thread 1 at epoch 5
        // with floor 7 at location 1 and 4 at location 0; then thread 0 again at epoch 4,
        // raising nothing.
        fences.record(0, 3, 2, |location| [0, 3][location]);
        fences.record(1, 6, 2, |location| [4, 7][location]);
        fences.record(0, 5, 2, |_| 0);
        // A `SeqCst` load gets the latest floors, whichever thread it runs on.
        assert_eq!((fences.latest_floor(0), fences.latest_floor(1)), (4, 7));
        // Knowing thread 0's first fence only.
        assert_eq!(fences.floor_known_to(1, &clock_knowing(&[2, 4])), 3);
        // Knowing thread 0's second fence, which ran after thread 1's: its floors hold
        // thread 1's.
        assert_eq!(fences.floor_known_to(1, &clock_knowing(&[4, 0])), 7);
        // Knowing thread 1's fence.
        assert_eq!(fences.floor_known_to(0, &clock_knowing(&[0, 5])), 4);
        // Knowing none, or a location no fence raised.
        assert_eq!(fences.floor_known_to(1, &clock_knowing(&[1, 4])), 0);
        assert_eq!(fences.floor_known_to(5, &clock_knowing(&[4, 5])), 0);
        fences.clear();
        assert!(fences.is_empty());
        assert_eq!(fences.floor_known_to(1, &clock_knowing(&[4, 5])), 0);
    }
}
