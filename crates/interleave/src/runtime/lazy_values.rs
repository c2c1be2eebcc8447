//! The values of `interleave::lazy_static!` statics in one execution, keyed by the static's
//! address, and the order to drop them in when the execution ends. The facade
//! (`crate::lazy_static`) owns the initialisation protocol; the engine only keeps the values
//! alive for the execution.

use std::any::Any;

/// The `lazy_static!` values of one execution, each with the guard that serialises its
/// initialisers (a `sync::Once`, opaque here).
#[derive(Default)]
pub(crate) struct Values {
    entries: Vec<Entry>,
    /// Initialisations completed so far, to drop the values in reverse order.
    completed: u64,
}

struct Entry {
    key: usize,
    /// Serialises the initialisers of this static within the execution.
    guard: Box<dyn Any>,
    /// The value and when its initialiser completed.
    value: Option<(u64, Box<dyn Any>)>,
}

impl Values {
    pub(crate) fn value(&self, key: usize) -> Option<*const dyn Any> {
        self.entries
            .iter()
            .find(|entry| entry.key == key)
            .and_then(|entry| entry.value.as_ref())
            .map(|(_, value)| &**value as *const dyn Any)
    }

    /// The guard of the initialisation of the static `key`, made by `make` on first use, and
    /// the value if an initialiser stored one.
    pub(crate) fn guard_and_value(
        &mut self,
        key: usize,
        make: impl FnOnce() -> Box<dyn Any>,
    ) -> (*const dyn Any, Option<*const dyn Any>) {
        let position = match self.entries.iter().position(|entry| entry.key == key) {
            Some(position) => position,
            None => {
                self.entries.push(Entry {
                    key,
                    guard: make(),
                    value: None,
                });
                self.entries.len() - 1
            }
        };
        let entry = &self.entries[position];
        let value = entry
            .value
            .as_ref()
            .map(|(_, value)| &**value as *const dyn Any);
        (&*entry.guard, value)
    }

    pub(crate) fn initialised(&mut self, key: usize, value: Box<dyn Any>) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.key == key) {
            entry.value = Some((self.completed, value));
            self.completed += 1;
        }
    }

    /// Takes out the value initialised last, the next to drop: a static initialised later may
    /// use those initialised before it, so they stay in the table, usable, until its
    /// destructor has run.
    pub(crate) fn take_latest(&mut self) -> Option<Box<dyn Any>> {
        let position = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(position, entry)| Some((position, entry.value.as_ref()?.0)))
            .max_by_key(|&(_, completed)| completed)?
            .0;
        self.entries
            .swap_remove(position)
            .value
            .map(|(_, value)| value)
    }

    /// How many values are initialised.
    pub(crate) fn len(&self) -> usize {
        self.entries
            .iter()
            .filter(|entry| entry.value.is_some())
            .count()
    }

    /// Forgets every value and guard without dropping them: the end of a stopped execution,
    /// which runs no destructor (`stop_signal.rs`).
    pub(crate) fn leak(&mut self) {
        std::mem::forget(std::mem::take(&mut self.entries));
        self.completed = 0;
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.completed = 0;
    }
}
