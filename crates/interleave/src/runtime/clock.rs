//! Vector clocks for happens-before, growing with the number of threads (no thread cap).
//!
//! Entry `i` counts the synchronisation epochs of thread `i`. A thread increments its own entry
//! after every release-like operation, so an access tagged with epoch `(u, e)` happens before
//! the current point of thread `t` exactly when `e <= clock_t[u]`.

/// A vector clock; missing entries are zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorClock(Vec<u32>);

impl VectorClock {
    /// The entry of thread `thread`.
    #[inline]
    pub fn get(&self, thread: usize) -> u32 {
        self.0.get(thread).copied().unwrap_or(0)
    }

    /// Sets the entry of thread `thread`.
    pub fn set(&mut self, thread: usize, value: u32) {
        if self.0.len() <= thread {
            self.0.resize(thread + 1, 0);
        }
        self.0[thread] = value;
    }

    /// Increments the entry of thread `thread`.
    #[inline]
    pub fn tick(&mut self, thread: usize) {
        let next = self.get(thread) + 1;
        self.set(thread, next);
    }

    /// Pointwise maximum with `other`.
    #[inline]
    pub fn join(&mut self, other: &VectorClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            if *theirs > *mine {
                *mine = *theirs;
            }
        }
    }

    /// Replaces the contents with a copy of `other`, reusing the allocation.
    #[inline]
    pub fn copy_from(&mut self, other: &VectorClock) {
        self.0.clear();
        self.0.extend_from_slice(&other.0);
    }
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
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2), a.get(7)), (3, 0, 5, 0));
        a.tick(1);
        assert_eq!(a.get(1), 1);
    }
}
