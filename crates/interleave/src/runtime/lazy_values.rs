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

    /// The guard of the initialisation of the static `key`, made by `make` on first use.
    pub(crate) fn guard(
        &mut self,
        key: usize,
        make: impl FnOnce() -> Box<dyn Any>,
    ) -> *const dyn Any {
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
        &*self.entries[position].guard
    }

    pub(crate) fn initialised(&mut self, key: usize, value: Box<dyn Any>) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.key == key) {
            entry.value = Some((self.completed, value));
            self.completed += 1;
        }
    }

    /// Takes the values out, the latest initialised first: the order to drop them in, since a
    /// static initialised later may use those initialised before it.
    pub(crate) fn take_for_drop(&mut self) -> Vec<Box<dyn Any>> {
        let mut values: Vec<(u64, Box<dyn Any>)> = self
            .entries
            .drain(..)
            .filter_map(|entry| entry.value)
            .collect();
        self.completed = 0;
        values.sort_by_key(|(completed, _)| std::cmp::Reverse(*completed));
        values.into_iter().map(|(_, value)| value).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.completed = 0;
    }
}
