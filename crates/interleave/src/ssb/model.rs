//! The trace the schedule-sensitive-branch analysis reasons about: one observed execution's
//! steps with the values they read and wrote, its branch events, each thread's items in program
//! order, and the dependences that decide which prefixes of the trace can be replayed.
//!
//! Values are what the maximal causal model compares. An atomic's values are logged numbers
//! (`Limits::log_values`), so two writes of the same number are the same value. A `cell::Var`
//! holds an arbitrary `T` the runtime cannot compare, so its value is named by the write that
//! stored it (or by the variable's initial value): two writes always count as different values.
//! That is the safe direction for the prefix (a read keeps its value only by keeping its writer)
//! and costs at most an unconfirmed candidate for the flipping read.

use crate::runtime::op::{ObjectKind, OpKind, Site, NO_OBJECT};
use crate::runtime::Recording;

/// A value read or written, as far as the analysis can compare values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    /// A logged atomic value.
    Number(u64),
    /// The value the step with this index stored into a `Var`.
    StoredBy(u32),
    /// The initial value of the object with this index.
    Initial(u32),
}

/// One step of the observed execution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub thread: u32,
    /// The step's position among its thread's items.
    pub position: u32,
    pub kind: OpKind,
    /// The object index, or `NO_OBJECT`.
    pub object: u32,
    /// For `Spawn` the child thread, for `Join` the joined thread, for `Wake` and `Wait` the
    /// mutex (a `Wait` releases the mutex its thread's next `Wake` takes back).
    pub arg: u32,
    pub site: Site,
    /// The value a data read returned.
    pub read: Option<Value>,
    /// The value a data write stored.
    pub written: Option<Value>,
    /// The step whose write a data read returned (`None`: the initial value).
    pub read_from: Option<u32>,
}

/// One branch event: a `branch!` evaluation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BranchEvent {
    pub position: u32,
    pub site: Site,
}

/// An entry of a thread's program-order list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    Step(u32),
    Branch(u32),
}

/// What the analysis knows of one object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectInfo {
    pub kind: ObjectKind,
    /// The value a read sees before any write.
    pub initial: Value,
    /// Whether `try_lock`-style steps use it: their result is not in the trace, so such a lock
    /// keeps its observed order.
    pub tried: bool,
}

/// The observed execution, ready for partitioning.
pub(crate) struct Trace {
    pub threads: usize,
    pub steps: Vec<Step>,
    pub branches: Vec<BranchEvent>,
    /// Each thread's items in program order.
    pub items: Vec<Vec<Item>>,
    pub objects: Vec<ObjectInfo>,
    /// Each (object, thread)'s writes, in trace order.
    writes: rustc_hash::FxHashMap<(u32, u32), Vec<u32>>,
    /// The step that spawned each thread (`None` for the main thread).
    pub spawned_by: Vec<Option<u32>>,
    /// Each step's predecessor on each of its chains (see `Trace::chains`).
    pub chain_previous: Vec<[Option<u32>; 2]>,
    /// `dependences[s * threads + t]`: how many of thread `t`'s items the prefix up to and
    /// including step `s` needs (program order, spawn, join, reads-from, and the observed order
    /// of every synchronisation object's steps), transitively.
    dependences: Vec<u32>,
}

/// Chains the steps on one synchronisation object, parking, or the virtual clock, in trace
/// order: the prefix that contains a step must contain its predecessor on the chain.
const PARKING_CHAIN: u32 = u32::MAX - 1;
const CLOCK_CHAIN: u32 = u32::MAX - 2;

impl Trace {
    /// Reads the trace of a finished execution that ran with `Limits::log_values`.
    pub fn of(ex: &Recording) -> Trace {
        let threads = ex.threads.len();
        let mut items: Vec<Vec<Item>> = vec![Vec::new(); threads];
        let mut steps = Vec::with_capacity(ex.events.len());
        let mut branches = Vec::with_capacity(ex.annotations.branches.len());
        let mut objects: Vec<ObjectInfo> = ex
            .objects
            .iter()
            .enumerate()
            .map(|(index, o)| ObjectInfo {
                kind: o.id.kind,
                initial: Value::Initial(index as u32),
                tried: false,
            })
            .collect();
        let mut logged = ex.annotations.values.iter().peekable();
        let mut last_write: Vec<Option<u32>> = vec![None; objects.len()];
        let mut writes: rustc_hash::FxHashMap<(u32, u32), Vec<u32>> = Default::default();
        let mut next_branch = ex.annotations.branches.iter().peekable();
        let mut spawned = 0u32;
        for (index, event) in ex.events.iter().enumerate() {
            while let Some(b) = next_branch.next_if(|b| b.at <= index) {
                push_branch(&mut items, &mut branches, b);
            }
            let thread = event.thread as usize;
            let mut step = Step {
                thread: event.thread,
                position: items[thread].len() as u32,
                kind: event.kind,
                object: event.object,
                arg: event.arg,
                site: event.site,
                read: None,
                written: None,
                read_from: None,
            };
            if event.kind == OpKind::Spawn {
                spawned += 1;
                step.arg = spawned;
            }
            if matches!(event.kind, OpKind::TryLock | OpKind::TryRwLock) {
                if let Some(o) = objects.get_mut(event.object as usize) {
                    o.tried = true;
                }
            }
            if event.kind.is_data_access() && event.object != NO_OBJECT {
                let object = event.object as usize;
                let access = event.kind.access();
                let is_read = access != crate::runtime::op::Access::Write;
                let is_write = access != crate::runtime::op::Access::Read;
                let number = logged
                    .next_if(|v| v.step == index)
                    .map(|v| (v.before, v.after));
                if is_read {
                    step.read_from = last_write[object];
                    step.read = Some(match number {
                        Some((before, _)) => Value::Number(before),
                        None => last_write[object]
                            .map_or(Value::Initial(object as u32), Value::StoredBy),
                    });
                }
                if is_write {
                    step.written = Some(match number {
                        Some((_, after)) => Value::Number(after),
                        None => Value::StoredBy(index as u32),
                    });
                    last_write[object] = Some(index as u32);
                    writes
                        .entry((object as u32, event.thread))
                        .or_default()
                        .push(index as u32);
                }
                // An atomic's initial value is what its first access found.
                if let Some((before, _)) = number {
                    let info = &mut objects[object];
                    if info.initial == Value::Initial(object as u32) {
                        info.initial = Value::Number(before);
                    }
                }
            }
            items[thread].push(Item::Step(index as u32));
            steps.push(step);
        }
        for b in next_branch {
            push_branch(&mut items, &mut branches, b);
        }
        // A `Wait` releases the mutex that its thread's next `Wake` takes back.
        let mut pending_wait: Vec<Option<usize>> = vec![None; threads];
        for index in 0..steps.len() {
            let thread = steps[index].thread as usize;
            match steps[index].kind {
                OpKind::Wait => pending_wait[thread] = Some(index),
                OpKind::Wake => {
                    if let Some(wait) = pending_wait[thread].take() {
                        steps[wait].arg = steps[index].arg;
                    }
                }
                _ => {}
            }
        }
        for wait in pending_wait.into_iter().flatten() {
            steps[wait].arg = NO_OBJECT;
        }
        let mut trace = Trace {
            threads,
            steps,
            branches,
            items,
            objects,
            writes,
            spawned_by: vec![None; threads],
            chain_previous: Vec::new(),
            dependences: Vec::new(),
        };
        trace.chain_previous = trace.compute_chains();
        trace.dependences = trace.compute_dependences();
        trace
    }

    /// The synchronisation chains a step belongs to (see `PARKING_CHAIN`).
    pub fn chains(&self, step: &Step) -> [Option<u32>; 2] {
        let object = (step.object != NO_OBJECT).then_some(step.object);
        match step.kind {
            OpKind::Park | OpKind::Unpark => [Some(PARKING_CHAIN), None],
            OpKind::Sleep => [Some(CLOCK_CHAIN), None],
            // A condition variable's wait and wake also release and take its mutex.
            OpKind::Wait | OpKind::Wake => [object, (step.arg != NO_OBJECT).then_some(step.arg)],
            kind if kind.is_data_access() || kind.access() != crate::runtime::op::Access::Sync => {
                [None, None]
            }
            _ => [object, None],
        }
    }

    fn compute_chains(&mut self) -> Vec<[Option<u32>; 2]> {
        let mut last: rustc_hash::FxHashMap<u32, u32> = Default::default();
        let mut previous = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            if step.kind == OpKind::Spawn {
                if let Some(slot) = self.spawned_by.get_mut(step.arg as usize) {
                    *slot = Some(index as u32);
                }
            }
            let chains = self.chains(step);
            previous.push(chains.map(|chain| chain.and_then(|c| last.insert(c, index as u32))));
        }
        previous
    }

    /// Whether a chain is a lock whose critical sections the constraints reorder (a `Mutex` or
    /// `RwLock` never used with `try_lock`); the other chains keep their observed order.
    pub fn is_reorderable_lock(&self, chain: u32) -> bool {
        self.objects
            .get(chain as usize)
            .is_some_and(|o| matches!(o.kind, ObjectKind::Mutex | ObjectKind::RwLock) && !o.tried)
    }

    fn compute_dependences(&self) -> Vec<u32> {
        let k = self.threads;
        let mut clocks = vec![0u32; self.steps.len() * k];
        let mut thread_last: Vec<Option<u32>> = vec![None; k];
        for (index, step) in self.steps.iter().enumerate() {
            let thread = step.thread as usize;
            let [first_chain, second_chain] = self.chain_previous[index];
            let sources = [
                thread_last[thread],
                thread_last[thread].map_or(self.spawned_by[thread], |_| None),
                (step.kind == OpKind::Join)
                    .then(|| thread_last.get(step.arg as usize).copied().flatten())
                    .flatten(),
                step.read.and(step.read_from),
                first_chain,
                second_chain,
            ];
            let (before, row) = clocks.split_at_mut(index * k);
            for source in sources.into_iter().flatten() {
                let source = source as usize * k;
                for (mine, theirs) in row[..k].iter_mut().zip(&before[source..source + k]) {
                    *mine = (*mine).max(*theirs);
                }
            }
            row[thread] = step.position + 1;
            thread_last[thread] = Some(index as u32);
        }
        clocks
    }

    /// The last write to `object` among the first `cut[t]` items of every thread `t`, in trace
    /// order.
    pub fn last_write_before(&self, object: u32, cut: &[u32]) -> Option<u32> {
        (0..self.threads as u32)
            .filter_map(|t| {
                let writes = self.writes.get(&(object, t))?;
                let before =
                    writes.partition_point(|&w| self.steps[w as usize].position < cut[t as usize]);
                before.checked_sub(1).map(|i| writes[i])
            })
            .max()
    }

    /// How many of `thread`'s items the prefix ending with `step` needs.
    pub fn needs(&self, step: u32, thread: usize) -> u32 {
        self.dependences[step as usize * self.threads + thread]
    }

    /// The smallest replayable cut that contains the first `cut[t]` items of every thread `t`:
    /// raises `cut` until it is closed under the dependences.
    pub fn close_cut(&self, cut: &mut [u32]) {
        loop {
            let mut changed = false;
            for thread in 0..self.threads {
                let Some(step) = self.last_step_before(thread, cut[thread]) else {
                    continue;
                };
                for (other, needed) in cut.iter_mut().enumerate() {
                    let need = self.needs(step, other);
                    if need > *needed {
                        *needed = need;
                        changed = true;
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// The last step among `thread`'s first `end` items.
    pub fn last_step_before(&self, thread: usize, end: u32) -> Option<u32> {
        self.items[thread][..end as usize]
            .iter()
            .rev()
            .find_map(|item| match item {
                Item::Step(s) => Some(*s),
                Item::Branch(_) => None,
            })
    }

    /// Where the main thread spawns its first child (its items before that are never
    /// schedule-sensitive, TAME section 3.4).
    pub fn first_spawn(&self) -> u32 {
        self.items[0]
            .iter()
            .position(|item| matches!(item, Item::Step(s) if self.steps[*s as usize].kind == OpKind::Spawn))
            .map_or(0, |p| p as u32)
    }

    /// The critical events of the whole trace: synchronisation steps and accesses to objects
    /// that several threads access, one of them writing.
    pub fn critical_events(&self) -> usize {
        let shared = shared_data_objects(self.steps.iter());
        self.steps
            .iter()
            .filter(|s| match s.kind {
                OpKind::Start | OpKind::Yield => false,
                kind if kind.is_data_access() => shared.contains(&s.object),
                _ => true,
            })
            .count()
    }

    /// All items of every thread: the events the tables count.
    pub fn event_count(&self) -> usize {
        self.steps.len() + self.branches.len()
    }
}

/// The objects that two of `steps`' threads access as data, one of them writing.
pub(crate) fn shared_data_objects<'a>(
    steps: impl Iterator<Item = &'a Step>,
) -> rustc_hash::FxHashSet<u32> {
    let mut accessors: rustc_hash::FxHashMap<u32, (u32, bool, bool)> = Default::default();
    for step in steps.filter(|s| s.kind.is_data_access()) {
        let entry = accessors
            .entry(step.object)
            .or_insert((step.thread, false, false));
        entry.1 |= entry.0 != step.thread;
        entry.2 |= step.written.is_some();
    }
    accessors
        .into_iter()
        .filter(|(_, (_, several, written))| *several && *written)
        .map(|(object, _)| object)
        .collect()
}

fn push_branch(
    items: &mut [Vec<Item>],
    branches: &mut Vec<BranchEvent>,
    record: &crate::runtime::annotations::BranchRecord,
) {
    let thread = record.thread;
    branches.push(BranchEvent {
        position: items[thread].len() as u32,
        site: record.site,
    });
    items[thread].push(Item::Branch(branches.len() as u32 - 1));
}
