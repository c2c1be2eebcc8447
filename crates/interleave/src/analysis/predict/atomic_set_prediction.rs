//! AssetFuzzer's phase I (seed 003, section 4.1): from one execution, the atomic-set
//! serializability violations some feasible reordering of it would produce.
//!
//! The *hybrid analysis* combines two constraints on a reordering:
//!
//! - the relaxed happens-before relation (program order plus spawn, join and wait/notify
//!   edges; lock hand-overs and data flow are left out, since another schedule can change
//!   them): an access of `u'` can move between two accesses of `u` only if it is not ordered
//!   before the first or after the second;
//! - the lockset analysis: it cannot move there if `u`'s thread holds a lock from the first of
//!   the two accesses to the second without releasing it (one critical section) and `u'`'s
//!   thread holds that lock at the access too.
//!
//! A prediction names the pattern, the atomic set, the accesses in the order the pattern puts
//! them (site, read or write, and unit of work, which is what phase II matches them by), and
//! each unit's *vulnerable-window lockset*: the locks the unit releases between the accesses
//! the other unit must slip between, held in common by both units at their accesses. Phase II
//! switches threads only once those are released, so it does not thrash.
//!
//! Precision: predictions are potential. Control flow and values may differ in the reordered
//! execution, so a prediction can be infeasible; phase II confirms each by producing it, and
//! only what it produces is reported.

use std::collections::HashSet;

use super::fork_join::ForkJoin;
use super::lockset::{Held, HeldLocks};
use crate::analysis::online::serializability::{
    set_accesses, PatternAccess, Role, SetAccess, UnitKey, PATTERNS,
};
use crate::atomic_set::{Declarations, SetId};
use crate::runtime::clock::VectorClock;
use crate::runtime::op::{ObjectId, Site};
use crate::runtime::TraceEvent;

/// How phase II recognises an access: its site, whether it writes, and its unit of work (name
/// and entry site), or `None` outside every unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AccessKey {
    pub site: Site,
    pub write: bool,
    pub unit: Option<(&'static str, Site)>,
}

/// One access of a prediction, in the pattern's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub role: Role,
    pub key: AccessKey,
    pub object: ObjectId,
}

/// A potential violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// The pattern (an index into `PATTERNS`).
    pub pattern: usize,
    pub set: SetId,
    /// The accesses in the order the pattern puts them.
    pub order: Vec<Target>,
    /// The vulnerable-window lockset of `u` and of `u'`.
    pub windows: [Vec<ObjectId>; 2],
}

impl Prediction {
    /// What identifies the prediction across executions.
    pub fn key(&self) -> (usize, Vec<(Role, AccessKey)>) {
        (
            self.pattern,
            self.order.iter().map(|t| (t.role, t.key)).collect(),
        )
    }
}

/// One access with what the analysis needs about it.
struct Observed {
    access: SetAccess,
    key: AccessKey,
    clock: VectorClock,
    held: Vec<Held>,
}

/// The potential violations of one execution, one per distinct pattern and access keys.
pub fn predict(trace: &[TraceEvent], declarations: &Declarations) -> Vec<Prediction> {
    let accesses = set_accesses(trace, declarations);
    let observed = observe(trace, declarations, &accesses);
    let mut seen = HashSet::new();
    let mut predictions = Vec::new();
    let mut sets: Vec<SetId> = Vec::new();
    for o in &observed {
        if !sets.contains(&o.access.set) {
            sets.push(o.access.set);
        }
    }
    for set in sets {
        let on_set: Vec<&Observed> = observed.iter().filter(|o| o.access.set == set).collect();
        let mut units: Vec<UnitKey> = Vec::new();
        for o in &on_set {
            if !units.contains(&o.access.unit) {
                units.push(o.access.unit);
            }
        }
        for &unit in &units {
            let own: Vec<&Observed> = on_set
                .iter()
                .copied()
                .filter(|o| o.access.unit == unit)
                .collect();
            if own.len() < 2 || !matches!(unit, UnitKey::Unit(_)) {
                continue;
            }
            for &other in &units {
                let theirs: Vec<&Observed> = on_set
                    .iter()
                    .copied()
                    .filter(|o| o.access.unit == other)
                    .collect();
                if other == unit || theirs[0].access.thread == own[0].access.thread {
                    continue;
                }
                for (pattern, form) in PATTERNS
                    .iter()
                    .enumerate()
                    .flat_map(|(i, p)| p.forms.iter().map(move |f| (i, *f)))
                {
                    let mut chosen = Vec::with_capacity(form.len());
                    if let Some(prediction) =
                        realise(pattern, set, form, &own, &theirs, &mut chosen, [None, None])
                    {
                        if seen.insert(prediction.key()) {
                            predictions.push(prediction);
                        }
                    }
                }
            }
        }
    }
    predictions
}

/// Every data access with its relaxed happens-before clock, held locks and key.
fn observe(
    trace: &[TraceEvent],
    declarations: &Declarations,
    accesses: &[SetAccess],
) -> Vec<Observed> {
    let mut order = ForkJoin::with_notifications();
    let mut locks = HeldLocks::default();
    let mut observed = Vec::with_capacity(accesses.len());
    let mut next = accesses.iter().peekable();
    for (step, event) in trace.iter().enumerate() {
        let clock = order.step(event);
        if let Some(access) = next.next_if(|a| a.step == step) {
            let unit = match access.unit {
                UnitKey::Unit(index) => {
                    let unit = &declarations.units[index];
                    Some((unit.name, unit.site))
                }
                UnitKey::Step(_) => None,
            };
            observed.push(Observed {
                access: *access,
                key: AccessKey {
                    site: event.site,
                    write: access.write,
                    unit,
                },
                clock: clock.clone(),
                held: locks.of(event.thread).to_vec(),
            });
        }
        locks.step(event);
    }
    observed
}

/// Picks accesses for the rest of `form` (each unit's in program order, locations bound as
/// in `bound`) and returns the prediction if the reordering they describe is feasible.
fn realise(
    pattern: usize,
    set: SetId,
    form: &[PatternAccess],
    own: &[&Observed],
    theirs: &[&Observed],
    chosen: &mut Vec<(Role, usize)>,
    bound: [Option<ObjectId>; 2],
) -> Option<Prediction> {
    let Some(wanted) = form.get(chosen.len()) else {
        return feasible(own, theirs, chosen).map(|windows| Prediction {
            pattern,
            set,
            order: chosen
                .iter()
                .map(|&(role, i)| {
                    let o = pick(own, theirs, role, i);
                    Target {
                        role,
                        key: o.key,
                        object: o.access.object,
                    }
                })
                .collect(),
            windows,
        });
    };
    let list = match wanted.role {
        Role::Interrupted => own,
        Role::Interleaver => theirs,
    };
    // Program order within a unit: after the unit's previous pick.
    let start = chosen
        .iter()
        .rev()
        .find(|(role, _)| *role == wanted.role)
        .map_or(0, |&(_, i)| i + 1);
    let slot = wanted.location as usize;
    for (i, o) in list.iter().enumerate().skip(start) {
        let object = o.access.object;
        let fits = o.access.write == wanted.write
            && match bound[slot] {
                Some(b) => b == object,
                None => bound[1 - slot] != Some(object),
            };
        if !fits {
            continue;
        }
        let mut next = bound;
        next[slot] = Some(object);
        chosen.push((wanted.role, i));
        if let Some(found) = realise(pattern, set, form, own, theirs, chosen, next) {
            return Some(found);
        }
        chosen.pop();
    }
    None
}

fn pick<'a>(own: &[&'a Observed], theirs: &[&'a Observed], role: Role, i: usize) -> &'a Observed {
    match role {
        Role::Interrupted => own[i],
        Role::Interleaver => theirs[i],
    }
}

/// Whether the order `chosen` can happen, and then each unit's vulnerable-window lockset.
fn feasible(
    own: &[&Observed],
    theirs: &[&Observed],
    chosen: &[(Role, usize)],
) -> Option<[Vec<ObjectId>; 2]> {
    let events: Vec<(Role, &Observed)> = chosen
        .iter()
        .map(|&(role, i)| (role, pick(own, theirs, role, i)))
        .collect();
    // Relaxed happens-before: a later access of the order must not be forced before an
    // earlier one of the other unit.
    for (i, (role_a, a)) in events.iter().enumerate() {
        for (role_b, b) in &events[i + 1..] {
            if role_a != role_b && b.clock.leq(&a.clock) {
                return None;
            }
        }
    }
    let mut windows = [Vec::new(), Vec::new()];
    for (side, role) in [Role::Interrupted, Role::Interleaver]
        .into_iter()
        .enumerate()
    {
        // The unit's accesses around the other unit's: its first and last in the order.
        let positions: Vec<usize> = (0..events.len()).filter(|&i| events[i].0 == role).collect();
        let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
            continue;
        };
        if first == last {
            continue;
        }
        let inside: Vec<&Observed> = events[first + 1..last]
            .iter()
            .filter(|(r, _)| *r != role)
            .map(|(_, o)| *o)
            .collect();
        if inside.is_empty() {
            continue;
        }
        let (from, to) = (events[first].1, events[last].1);
        // One critical section across the window whose lock the other unit needs inside.
        let across = from
            .held
            .iter()
            .filter(|h| h.exclusive && to.held.iter().any(|g| g.acquired == h.acquired))
            .any(|h| {
                inside
                    .iter()
                    .any(|o| o.held.iter().any(|g| g.lock == h.lock))
            });
        if across {
            return None;
        }
        // The locks held in common that the unit lets go inside the window.
        let mut window: Vec<ObjectId> = from
            .held
            .iter()
            .filter(|h| !to.held.iter().any(|g| g.acquired == h.acquired))
            .filter(|h| {
                inside
                    .iter()
                    .all(|o| o.held.iter().any(|g| g.lock == h.lock))
            })
            .map(|h| h.lock)
            .collect();
        window.dedup();
        windows[side] = window;
    }
    Some(windows)
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use super::*;
    use crate::atomic_set::{OwnerInfo, UnitInfo};
    use crate::runtime::op::{ObjectKind, OpKind};
    use crate::runtime::TraceTarget;

    /// A hand-built trace with units of work on one account's atomic set {A, B} guarded by
    /// lock L.
    #[derive(Default)]
    struct Builder {
        trace: Vec<TraceEvent>,
        units: Vec<UnitInfo>,
    }

    fn object(kind: ObjectKind, instance: u32) -> ObjectId {
        ObjectId {
            kind,
            site: Location::caller(),
            instance,
        }
    }

    fn a() -> ObjectId {
        object(ObjectKind::Var, 0)
    }
    fn b() -> ObjectId {
        object(ObjectKind::Var, 1)
    }
    fn l() -> ObjectId {
        object(ObjectKind::Mutex, 0)
    }

    impl Builder {
        #[track_caller]
        fn step(&mut self, thread: usize, kind: OpKind, object: Option<ObjectId>) -> &mut Self {
            let target = match kind {
                OpKind::Spawn | OpKind::Join => {
                    object.map(|o| TraceTarget::Thread(o.instance as usize))
                }
                _ => None,
            };
            let object = if target.is_some() { None } else { object };
            self.trace.push(TraceEvent {
                thread,
                kind,
                object,
                object_name: "",
                target,
                site: Location::caller(),
                yields: crate::runtime::op::counts_as_yield(kind, 0),
                seq_cst: false,
            });
            self
        }
        fn spawn(&mut self, parent: usize, child: usize) -> &mut Self {
            self.step(
                parent,
                OpKind::Spawn,
                Some(object(ObjectKind::Var, child as u32)),
            )
        }
        fn join(&mut self, parent: usize, child: usize) -> &mut Self {
            self.step(
                parent,
                OpKind::Join,
                Some(object(ObjectKind::Var, child as u32)),
            )
        }
        fn lock(&mut self, t: usize) -> &mut Self {
            self.step(t, OpKind::Lock, Some(l()))
        }
        fn unlock(&mut self, t: usize) -> &mut Self {
            self.step(t, OpKind::Unlock, Some(l()))
        }
        fn read(&mut self, t: usize, o: ObjectId) -> &mut Self {
            self.step(t, OpKind::Read, Some(o))
        }
        fn write(&mut self, t: usize, o: ObjectId) -> &mut Self {
            self.step(t, OpKind::Write, Some(o))
        }
        /// Runs `body` as unit `name` of thread `t`.
        fn unit(
            &mut self,
            t: usize,
            name: &'static str,
            body: impl FnOnce(&mut Self),
        ) -> &mut Self {
            let begin = self.trace.len();
            body(self);
            self.units.push(UnitInfo {
                thread: t,
                name,
                site: Location::caller(),
                owner: Some(0),
                begin,
                end: self.trace.len(),
            });
            self
        }
        fn predict(&mut self) -> Vec<Prediction> {
            self.units.sort_by_key(|u| u.begin);
            let declarations = Declarations {
                units: self.units.clone(),
                owners: vec![OwnerInfo {
                    type_name: "Account",
                    instance: 0,
                }],
                sets: vec![
                    (a(), SetId::Owner(0)),
                    (b(), SetId::Owner(0)),
                    (l(), SetId::Owner(0)),
                ],
            };
            predict(&self.trace, &declarations)
        }
    }

    /// `copy` reads A and B in two critical sections; `credit` writes both in one.
    fn copy(t: usize, one_section: bool) -> impl FnOnce(&mut Builder) {
        move |s: &mut Builder| {
            s.lock(t).read(t, a());
            if !one_section {
                s.unlock(t).lock(t);
            }
            s.read(t, b()).unlock(t);
        }
    }

    fn credit(t: usize) -> impl FnOnce(&mut Builder) {
        move |s: &mut Builder| {
            s.lock(t).write(t, a()).write(t, b()).unlock(t);
        }
    }

    #[test]
    fn a_serial_run_predicts_the_credit_inside_the_copy() {
        let mut s = Builder::default();
        s.spawn(0, 1).spawn(0, 2);
        s.unit(1, "copy", copy(1, false));
        s.unit(2, "credit", credit(2));
        let predictions = s.predict();
        let nine = predictions
            .iter()
            .find(|p| PATTERNS[p.pattern].number == 9)
            .expect("pattern 9");
        let roles: Vec<Role> = nine.order.iter().map(|t| t.role).collect();
        assert_eq!(
            roles,
            [
                Role::Interrupted,
                Role::Interleaver,
                Role::Interleaver,
                Role::Interrupted
            ]
        );
        // The copy lets L go between its reads, and the credit holds it: the window is L.
        assert_eq!(nine.windows[0], vec![l()]);
    }

    #[test]
    fn a_lock_held_across_the_window_excludes_it() {
        let mut s = Builder::default();
        s.spawn(0, 1).spawn(0, 2);
        s.unit(1, "copy", copy(1, true));
        s.unit(2, "credit", credit(2));
        assert!(s.predict().is_empty());
    }

    #[test]
    fn a_spawn_after_the_unit_excludes_it() {
        let mut s = Builder::default();
        s.spawn(0, 1);
        s.unit(1, "copy", copy(1, false));
        s.spawn(1, 2);
        s.unit(2, "credit", credit(2));
        assert!(s.predict().is_empty());
    }

    #[test]
    fn a_join_before_the_unit_excludes_it() {
        let mut s = Builder::default();
        s.spawn(0, 2);
        s.unit(2, "credit", credit(2));
        s.join(0, 2).spawn(0, 1);
        s.unit(1, "copy", copy(1, false));
        assert!(s.predict().is_empty());
    }
}
