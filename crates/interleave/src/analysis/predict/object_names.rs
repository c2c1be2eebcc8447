//! The names reports give objects, for analyses that read traces rather than a recording: an
//! object is its type's name and its ordinal among the objects of that type in the order the
//! execution first used them (`AtomicU321`, `Mutex2`), as `Recording::object_name` names it,
//! and a legend line says where it was created (`AtomicU321 = AtomicU32 created at
//! src/lib.rs:4:17`), as the interleaving's legend does. Warnings written after the run (the
//! races RaceFuzzer predicted or realised) use these, so one object has one name everywhere.

use std::collections::HashMap;

use crate::runtime::op::{ObjectId, ShortSite};
use crate::runtime::TraceEvent;

/// The names of the objects of the traces observed so far.
#[derive(Clone, Debug, Default)]
pub struct ObjectNames {
    names: HashMap<ObjectId, (&'static str, usize)>,
    /// How many objects of each type name have been named.
    counts: HashMap<&'static str, usize>,
}

impl ObjectNames {
    /// Names the objects of `trace` not named yet, in the order the trace first uses them.
    pub fn observe(&mut self, trace: &[TraceEvent]) {
        for event in trace {
            let Some(object) = event.object else { continue };
            if self.names.contains_key(&object) {
                continue;
            }
            let type_name = if event.object_name.is_empty() {
                object.kind.type_name()
            } else {
                event.object_name
            };
            let count = self.counts.entry(type_name).or_default();
            *count += 1;
            self.names.insert(object, (type_name, *count));
        }
    }

    /// The name of `object` (its type and ordinal), or for an object no observed trace used,
    /// its type and where it was created.
    pub fn name(&self, object: ObjectId) -> String {
        match self.names.get(&object) {
            Some((type_name, ordinal)) => format!("{type_name}{ordinal}"),
            None => format!(
                "the {} created at {}",
                object.kind.type_name(),
                ShortSite(object.site)
            ),
        }
    }

    /// The legend line of `object`: `AtomicU321 = AtomicU32 created at src/lib.rs:4:17`.
    pub fn legend(&self, object: ObjectId) -> String {
        let type_name = self
            .names
            .get(&object)
            .map_or(object.kind.type_name(), |(type_name, _)| type_name);
        format!(
            "{} = {type_name} created at {}",
            self.name(object),
            ShortSite(object.site)
        )
    }
}
