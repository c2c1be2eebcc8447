//! Atomic-set serializability (Vaziri, Tip and Dolby; seed 003, Table 1): the eleven
//! problematic access patterns, and the monitor that finds them in an execution.
//!
//! A pattern is a sequence of three or four accesses to one atomic set by two units of work:
//! `u`, which the pattern interrupts, and `u'`, which interleaves it. `m` is a location of the
//! set; `m1` and `m2` are two distinct locations of it, and where a pattern writes `m` and `m̄`
//! the two accesses of `u'` touch `m1` and `m2` in either order. An execution matches a
//! pattern when its accesses to the set contain the pattern's accesses in the pattern's order
//! (not necessarily next to each other). An execution is atomic-set serializable exactly when
//! it matches none of them.
//!
//! Units of work come from `crate::atomic_set`: a step belongs to the outermost unit of work
//! its thread is in, and a step outside every unit is a unit of its own, which can play `u'`
//! but never `u` (that needs two accesses). Only data accesses (reads and writes of
//! `cell::Var`s and atomics) count; locks order them but are not locations of a set.
//!
//! Precision: a reported match is exact for the execution it was found in. Whether it is a
//! bug depends on the declared units and sets being the intended ones; the accesses and their
//! order are what the program did.

use std::collections::HashMap;

use crate::analysis::predict::access_pairs::{access_of, AccessClass};
use crate::atomic_set::{Declarations, SetId};
use crate::runtime::op::ObjectId;
use crate::trace::TraceEvent;

/// Which unit of work of the pattern an access belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The interrupted unit, `u`.
    Interrupted,
    /// The interleaving unit, `u'`.
    Interleaver,
}

/// Which location of the pattern an access touches: `A` and `B` are distinct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    A,
    B,
}

/// One access of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatternAccess {
    pub role: Role,
    pub write: bool,
    pub location: Location,
}

/// One of the eleven problematic access patterns.
#[derive(Debug)]
pub struct Pattern {
    /// Its number in seed 003's Table 1 (1 to 11).
    pub number: u8,
    /// The pattern in the paper's notation.
    pub text: &'static str,
    /// What goes wrong.
    pub meaning: &'static str,
    /// Its concrete forms (two where `u'` may touch `m1` and `m2` in either order).
    pub forms: &'static [&'static [PatternAccess]],
}

const fn access(role: Role, write: bool, location: Location) -> PatternAccess {
    PatternAccess {
        role,
        write,
        location,
    }
}

use Location::{A, B};
use Role::{Interleaver as U2, Interrupted as U1};

const R1A: PatternAccess = access(U1, false, A);
const R1B: PatternAccess = access(U1, false, B);
const W1A: PatternAccess = access(U1, true, A);
const W1B: PatternAccess = access(U1, true, B);
const R2A: PatternAccess = access(U2, false, A);
const R2B: PatternAccess = access(U2, false, B);
const W2A: PatternAccess = access(U2, true, A);
const W2B: PatternAccess = access(U2, true, B);

/// Seed 003's Table 1, in its order.
pub static PATTERNS: [Pattern; 11] = [
    Pattern {
        number: 1,
        text: "r_u(m) w_u'(m) w_u(m)",
        meaning: "the value read is stale by the time u writes back",
        forms: &[&[R1A, W2A, W1A]],
    },
    Pattern {
        number: 2,
        text: "r_u(m) w_u'(m) r_u(m)",
        meaning: "two reads of the same location in u yield different values",
        forms: &[&[R1A, W2A, R1A]],
    },
    Pattern {
        number: 3,
        text: "w_u(m) r_u'(m) w_u(m)",
        meaning: "u' observes an intermediate state of u",
        forms: &[&[W1A, R2A, W1A]],
    },
    Pattern {
        number: 4,
        text: "w_u(m) w_u'(m) r_u(m)",
        meaning: "u does not read back what it last wrote",
        forms: &[&[W1A, W2A, R1A]],
    },
    Pattern {
        number: 5,
        text: "w_u(m) w_u'(m) w_u(m)",
        meaning: "the value u' writes is lost",
        forms: &[&[W1A, W2A, W1A]],
    },
    Pattern {
        number: 6,
        text: "w_u(m1) w_u'(m) w_u'(m̄) w_u(m2)",
        meaning: "the atomic set is left in an inconsistent state",
        forms: &[&[W1A, W2A, W2B, W1B], &[W1A, W2B, W2A, W1B]],
    },
    Pattern {
        number: 7,
        text: "w_u(m1) w_u'(m2) w_u(m2) w_u'(m1)",
        meaning: "the atomic set is left in an inconsistent state",
        forms: &[&[W1A, W2B, W1B, W2A]],
    },
    Pattern {
        number: 8,
        text: "w_u(m1) r_u'(m) r_u'(m̄) w_u(m2)",
        meaning: "u' observes an inconsistent state of the atomic set",
        forms: &[&[W1A, R2A, R2B, W1B], &[W1A, R2B, R2A, W1B]],
    },
    Pattern {
        number: 9,
        text: "r_u(m1) w_u'(m) w_u'(m̄) r_u(m2)",
        meaning: "u observes an inconsistent state of the atomic set",
        forms: &[&[R1A, W2A, W2B, R1B], &[R1A, W2B, W2A, R1B]],
    },
    Pattern {
        number: 10,
        text: "r_u(m1) w_u'(m2) r_u(m2) w_u'(m1)",
        meaning: "u observes an inconsistent state of the atomic set",
        forms: &[&[R1A, W2B, R1B, W2A]],
    },
    Pattern {
        number: 11,
        text: "w_u(m1) r_u'(m2) w_u(m2) r_u'(m1)",
        meaning: "u' observes an inconsistent state of the atomic set",
        forms: &[&[W1A, R2B, W1B, R2A]],
    },
];

/// The unit of work a step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKey {
    /// An outermost unit of work (an index into `Declarations::units`).
    Unit(usize),
    /// A step outside every unit of work (its index in the trace).
    Step(usize),
}

/// A data access of an execution, with its unit of work and atomic set.
#[derive(Clone, Copy, Debug)]
pub struct SetAccess {
    /// Its index in the trace.
    pub step: usize,
    pub thread: usize,
    pub unit: UnitKey,
    pub set: SetId,
    pub object: ObjectId,
    pub write: bool,
}

/// The data accesses of `trace`, each with its unit of work and atomic set.
pub fn set_accesses(trace: &[TraceEvent], declarations: &Declarations) -> Vec<SetAccess> {
    let sets: HashMap<ObjectId, SetId> = declarations.sets.iter().copied().collect();
    // Each thread's units, in order: a step belongs to the one whose span holds it.
    let mut units_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for (index, unit) in declarations.units.iter().enumerate() {
        units_of.entry(unit.thread).or_default().push(index);
    }
    let mut next_unit: HashMap<usize, usize> = HashMap::new();
    let mut accesses = Vec::new();
    for (step, event) in trace.iter().enumerate() {
        let Some((site, object)) = access_of(event) else {
            continue;
        };
        let write = match site.class {
            AccessClass::Read => false,
            AccessClass::Write => true,
            _ => continue,
        };
        let units = units_of.get(&event.thread).map_or(&[][..], Vec::as_slice);
        let cursor = next_unit.entry(event.thread).or_default();
        while *cursor < units.len() && declarations.units[units[*cursor]].end <= step {
            *cursor += 1;
        }
        let unit = units
            .get(*cursor)
            .filter(|&&u| declarations.units[u].begin <= step)
            .map_or(UnitKey::Step(step), |&u| UnitKey::Unit(u));
        accesses.push(SetAccess {
            step,
            thread: event.thread,
            unit,
            set: sets.get(&object).copied().unwrap_or(SetId::Single(object)),
            object,
            write,
        });
    }
    accesses
}

/// An execution's match of a pattern.
#[derive(Clone, Debug)]
pub struct Violation {
    /// The pattern (an index into [`PATTERNS`]).
    pub pattern: usize,
    pub set: SetId,
    /// The interrupted unit `u` and the interleaving unit `u'`.
    pub unit: UnitKey,
    pub interleaver: UnitKey,
    /// The matched accesses, in order.
    pub accesses: Vec<SetAccess>,
}

/// Every pair of units of work of `accesses` that matches a pattern, with the first pattern
/// (in table order) it matches.
pub fn violations(accesses: &[SetAccess]) -> Vec<Violation> {
    let mut by_set: Vec<(SetId, Vec<SetAccess>)> = Vec::new();
    for access in accesses {
        match by_set.iter_mut().find(|(set, _)| *set == access.set) {
            Some((_, list)) => list.push(*access),
            None => by_set.push((access.set, vec![*access])),
        }
    }
    let mut found = Vec::new();
    for (set, list) in &by_set {
        let mut units: Vec<UnitKey> = Vec::new();
        for access in list {
            if matches!(access.unit, UnitKey::Unit(_)) && !units.contains(&access.unit) {
                units.push(access.unit);
            }
        }
        for &unit in &units {
            let own: Vec<&SetAccess> = list.iter().filter(|a| a.unit == unit).collect();
            let (Some(first), Some(last)) = (own.first(), own.last()) else {
                continue;
            };
            if own.len() < 2 {
                continue;
            }
            // The units with an access inside `unit`'s span: the only ones that interleave it.
            let mut interleavers: Vec<UnitKey> = Vec::new();
            for access in list {
                if access.step > first.step
                    && access.step < last.step
                    && access.thread != first.thread
                    && !interleavers.contains(&access.unit)
                {
                    interleavers.push(access.unit);
                }
            }
            for other in interleavers {
                let merged: Vec<(Role, SetAccess)> = list
                    .iter()
                    .filter_map(|a| {
                        if a.unit == unit {
                            Some((Role::Interrupted, *a))
                        } else if a.unit == other {
                            Some((Role::Interleaver, *a))
                        } else {
                            None
                        }
                    })
                    .collect();
                if let Some((pattern, positions)) = first_match(&merged) {
                    found.push(Violation {
                        pattern,
                        set: *set,
                        unit,
                        interleaver: other,
                        accesses: positions.iter().map(|&i| merged[i].1).collect(),
                    });
                }
            }
        }
    }
    found
}

/// The first pattern (in table order) that `sequence` contains, with the positions of its
/// accesses.
pub fn first_match(sequence: &[(Role, SetAccess)]) -> Option<(usize, Vec<usize>)> {
    PATTERNS.iter().enumerate().find_map(|(index, pattern)| {
        pattern.forms.iter().find_map(|form| {
            let mut positions = Vec::with_capacity(form.len());
            embed(sequence, form, 0, [None, None], &mut positions).then_some((index, positions))
        })
    })
}

/// Whether `form` embeds in `sequence` from position `from`, with locations `A` and `B`
/// bound as in `bound` so far; fills `positions` on success.
fn embed(
    sequence: &[(Role, SetAccess)],
    form: &[PatternAccess],
    from: usize,
    bound: [Option<ObjectId>; 2],
    positions: &mut Vec<usize>,
) -> bool {
    let Some((wanted, rest)) = form.split_first() else {
        return true;
    };
    let slot = match wanted.location {
        Location::A => 0,
        Location::B => 1,
    };
    for (offset, (role, access)) in sequence[from..].iter().enumerate() {
        if *role != wanted.role || access.write != wanted.write {
            continue;
        }
        let fits = match bound[slot] {
            Some(object) => object == access.object,
            None => bound[1 - slot] != Some(access.object),
        };
        if !fits {
            continue;
        }
        let mut next = bound;
        next[slot] = Some(access.object);
        positions.push(from + offset);
        if embed(sequence, rest, from + offset + 1, next, positions) {
            return true;
        }
        positions.pop();
    }
    false
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;
    use crate::runtime::op::ObjectKind;

    /// Two locations of one atomic set.
    fn locations() -> [ObjectId; 2] {
        let site = Location::caller();
        [0, 1].map(|instance| ObjectId {
            kind: ObjectKind::Var,
            site,
            instance,
        })
    }

    /// The accesses of `form` in order, `u` on thread 1 and `u'` on thread 2, one unit each.
    fn trace_of(form: &[PatternAccess], objects: [ObjectId; 2]) -> Vec<SetAccess> {
        form.iter()
            .enumerate()
            .map(|(step, access)| {
                let (thread, unit) = match access.role {
                    Role::Interrupted => (1, UnitKey::Unit(0)),
                    Role::Interleaver => (2, UnitKey::Unit(1)),
                };
                SetAccess {
                    step,
                    thread,
                    unit,
                    set: SetId::Owner(0),
                    object: objects[access.location as usize],
                    write: access.write,
                }
            })
            .collect()
    }

    #[test]
    fn each_pattern_is_detected_as_itself() {
        for pattern in &PATTERNS {
            for form in pattern.forms {
                let found = violations(&trace_of(form, locations()));
                assert_eq!(found.len(), 1, "pattern {}", pattern.number);
                assert_eq!(PATTERNS[found[0].pattern].number, pattern.number);
                assert_eq!(found[0].accesses.len(), form.len());
            }
        }
    }

    #[test]
    fn serial_orders_of_the_same_accesses_are_not_violations() {
        for pattern in &PATTERNS {
            for form in pattern.forms {
                // Every access of u, then every access of u' (and the other way round).
                for first in [Role::Interrupted, Role::Interleaver] {
                    let mut serial: Vec<PatternAccess> =
                        form.iter().copied().filter(|a| a.role == first).collect();
                    serial.extend(form.iter().copied().filter(|a| a.role != first));
                    let found = violations(&trace_of(&serial, locations()));
                    assert!(found.is_empty(), "pattern {}: {found:?}", pattern.number);
                }
            }
        }
    }

    #[test]
    fn accesses_of_different_atomic_sets_do_not_combine() {
        // Pattern 9 with the two locations in different sets is serializable per set.
        let mut accesses = trace_of(PATTERNS[8].forms[0], locations());
        for access in &mut accesses {
            access.set = SetId::Single(access.object);
        }
        assert!(violations(&accesses).is_empty());
    }

    #[test]
    fn a_step_outside_units_interleaves_but_is_never_interrupted() {
        let [m, _] = locations();
        let access = |step, thread, unit, write| SetAccess {
            step,
            thread,
            unit,
            set: SetId::Single(m),
            object: m,
            write,
        };
        // A lost update: u reads and writes m, a lone write slips in between (pattern 1).
        let lost = [
            access(0, 1, UnitKey::Unit(0), false),
            access(1, 2, UnitKey::Step(1), true),
            access(2, 1, UnitKey::Unit(0), true),
        ];
        let found = violations(&lost);
        assert_eq!(found.len(), 1);
        assert_eq!(PATTERNS[found[0].pattern].number, 1);
        // Two lone steps around a unit's single access interrupt nothing.
        let lone = [
            access(0, 1, UnitKey::Step(0), false),
            access(1, 2, UnitKey::Unit(0), true),
            access(2, 1, UnitKey::Step(2), true),
        ];
        assert!(violations(&lone).is_empty());
    }
}
