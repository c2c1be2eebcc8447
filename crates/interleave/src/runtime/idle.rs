//! Idle things kept by key for reuse by the next executions on this OS thread, a bounded
//! number per key: the coroutine stacks by size class (`stacks.rs`) and the blocks of spawned
//! threads' packets by layout (`blocks.rs`). Both are kept with the recycled execution, so
//! taking and giving back cost a scan of the keys (almost always one) and a pop or a push.

/// Idle items of type `T` by key `K`.
pub(crate) struct Idle<K, T> {
    kinds: Vec<Kind<K, T>>,
}

/// The idle items of one key.
struct Kind<K, T> {
    key: K,
    /// How many the key keeps, set when it is first seen.
    keep: usize,
    items: Vec<T>,
}

impl<K, T> Default for Idle<K, T> {
    fn default() -> Self {
        Idle { kinds: Vec::new() }
    }
}

impl<K: Copy + PartialEq, T> Idle<K, T> {
    /// An idle item of `key`, if one is kept.
    #[inline(always)]
    pub(crate) fn take(&mut self, key: K) -> Option<T> {
        self.kinds
            .iter_mut()
            .find(|kind| kind.key == key)
            .and_then(|kind| kind.items.pop())
    }

    /// Keeps `item` for a later [`take`](Self::take) of `key`, unless the key holds as many
    /// as it keeps: then hands the item to `discard`. A key seen for the first time keeps
    /// `keep()` items (its first always).
    #[inline(always)]
    pub(crate) fn give_back(
        &mut self,
        key: K,
        item: T,
        keep: impl FnOnce() -> usize,
        discard: impl FnOnce(T),
    ) {
        match self.kinds.iter_mut().find(|kind| kind.key == key) {
            Some(kind) if kind.items.len() < kind.keep => kind.items.push(item),
            Some(_) => discard(item),
            None => self.first_of(key, item, keep()),
        }
    }

    /// Keeps the first item of a key not seen before.
    #[cold]
    fn first_of(&mut self, key: K, item: T, keep: usize) {
        self.kinds.push(Kind {
            key,
            keep: keep.max(1),
            items: vec![item],
        });
    }

    /// How many items of `key` are kept.
    #[cfg(test)]
    pub(crate) fn kept(&self, key: K) -> usize {
        self.kinds
            .iter()
            .find(|kind| kind.key == key)
            .map_or(0, |kind| kind.items.len())
    }

    /// Every kept item with its key, removed from the pool.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (K, T)> + '_ {
        self.kinds.drain(..).flat_map(|kind| {
            let key = kind.key;
            kind.items.into_iter().map(move |item| (key, item))
        })
    }
}
