//! The happens-before state of `dpor`'s analysis (`dpor.rs`), kept from one execution to the
//! next and rewound to the first step that changed, so that an execution costs the analysis
//! its new steps, not its whole trace.
//!
//! A depth-first search replays the previous execution's choices up to the node it backtracks
//! to, so an execution's trace usually begins with a long prefix of the previous one's. The
//! analysis walks the trace step by step: vector clocks over program order, spawn, join and
//! the steps' dependences, and per conflict the last write and the reads since. Every change a
//! step makes to that state is recorded in an undo log, so that the state after any earlier
//! step can be restored by undoing the later steps' changes, newest first.
//!
//! Precision: exact. Before resuming at step `r`, [`HappensBefore::begin`] checks that every
//! input the walk read for the steps before `r` is the same in the new trace: the events
//! (objects and sites compared by identity, which the same program point gives the same in
//! every execution of a process), each thread's last step (which finishes it), the steps that
//! ended a wait by their timeout and the waits each step ended; a trace with a rendezvous
//! offer, whose steps also depend on where each thread next receives, is walked from the
//! start. It resumes at the first step where an input differs, so the state after each step,
//! and every race found from it, is the one a walk of the whole trace gives.

use std::hash::{Hash, Hasher};
use std::panic::Location;

use rustc_hash::FxHashMap;

use super::dfs::Steps;
use super::hb::{dpor_conflicts, reads_only, Conflict};
use super::{ChannelStep, ObjectId, ObjectKind, OpKind, TraceEvent, TraceTarget};

/// One change a step made to the state, with what it replaced.
#[derive(Clone, Copy, Debug)]
enum Undo {
    /// The first entry of a step's changes.
    Step,
    /// The thread's clock was changed; the previous one is on top of `saved_clocks`.
    Clock(usize),
    /// A read of the conflict was added to its reads.
    Read(Identity),
    /// The conflict was written: its previous last write, and its previous reads, which are
    /// `saved_reads[from..]`.
    Write {
        conflict: Identity,
        last_write: Option<usize>,
        from: usize,
    },
    LastStep(usize, Option<usize>),
    LastYield(usize, Option<usize>),
    Spawn(usize, Option<usize>),
}

/// The state of the walk after its first [`walked`](HappensBefore::walked) steps, and what
/// it needs to go on or back.
#[derive(Debug, Default)]
pub(super) struct HappensBefore {
    /// Threads of the walked trace: the stride of the clocks.
    threads: usize,
    /// Each thread's current vector clock, `threads` entries each.
    clocks: Vec<u32>,
    /// Each walked step's vector clock, `threads` entries each.
    pub(super) step_clocks: Vec<u32>,
    /// Per conflict: the last write and the reads since, as step indices.
    accesses: FxHashMap<Identity, (Option<usize>, Vec<usize>)>,
    /// The step that spawned each thread.
    spawns: Vec<Option<usize>>,
    /// Each thread's last step other than its start, and its latest yield.
    last_step: Vec<Option<usize>>,
    last_yield: Vec<Option<usize>>,
    /// The first yield among the walked steps: before it, the yield rule adds nothing.
    first_yield: Option<usize>,
    /// The walked steps' events.
    events: Vec<TraceEvent>,
    /// Each thread's last step in the walked trace.
    final_steps: Vec<usize>,
    /// The walked steps that ended a wait by its timeout, and the waits they ended as
    /// `(step, thread)`, in step order.
    timeouts: Vec<usize>,
    ended_waits: Vec<(usize, usize)>,
    /// For a trace with a rendezvous offer: per step, the channel on which its thread waits
    /// to receive after it (see `dpor.rs`); empty otherwise.
    waits_to_receive: Vec<Option<ObjectId>>,
    undo: Vec<Undo>,
    saved_clocks: Vec<u32>,
    saved_reads: Vec<usize>,
    /// The dependences of the step walked last on earlier steps of other threads, sorted.
    pub(super) dependences: Vec<usize>,
    /// The clock of the step walked last's thread before its own dependences: what happens
    /// before the step other than through them.
    pub(super) before: Vec<u32>,
    /// The new trace's last step of each thread, computed by `begin` (then the walked
    /// trace's, swapped out, as a buffer).
    next_final_steps: Vec<usize>,
}

impl HappensBefore {
    /// The number of steps walked.
    pub(super) fn walked(&self) -> usize {
        self.events.len()
    }

    /// Prepares a walk of `trace` (of `threads` threads), whose steps before `first_new`
    /// replay the previous trace's: rewinds the state to the first step whose inputs differ
    /// from the walked ones, at most `first_new`, and returns it; the caller walks the
    /// steps from there with [`HappensBefore::walk`].
    pub(super) fn begin(
        &mut self,
        trace: &[TraceEvent],
        steps: Option<&Steps>,
        threads: usize,
        first_new: usize,
    ) -> usize {
        self.next_final_steps.clear();
        self.next_final_steps.resize(threads, usize::MAX);
        for (i, event) in trace.iter().enumerate() {
            if let Some(last) = self.next_final_steps.get_mut(event.thread) {
                *last = i;
            }
        }
        let offers = trace.iter().any(|event| {
            matches!(
                event.target,
                Some(TraceTarget::Channel(ChannelStep::Offered { .. }))
            )
        });
        let mut resume = first_new.min(self.walked()).min(trace.len());
        if threads != self.threads
            || offers
            || !self.waits_to_receive.is_empty()
            || self.accesses_outgrew(trace.len())
        {
            resume = 0;
        }
        resume = trace[..resume]
            .iter()
            .zip(&self.events)
            .position(|(new, old)| !same_step(new, old))
            .unwrap_or(resume);
        for (&new, &old) in self.next_final_steps.iter().zip(&self.final_steps) {
            if new != old {
                resume = resume.min(new.min(old));
            }
        }
        let (new_timeouts, new_waits) = steps.map_or((&[][..], &[][..]), |s| s.waits_ended());
        resume = first_difference(new_timeouts, &self.timeouts, resume, |&step| step);
        resume = first_difference(new_waits, &self.ended_waits, resume, |&(step, _)| step);
        if resume == 0 {
            self.reset(trace.len(), threads);
        } else {
            self.rewind(resume);
        }
        std::mem::swap(&mut self.final_steps, &mut self.next_final_steps);
        if offers {
            // After each step, the channel its thread's next step receives on, if any.
            self.waits_to_receive.resize(trace.len(), None);
            let mut previous = vec![usize::MAX; threads];
            for (i, event) in trace.iter().enumerate() {
                let Some(slot) = previous.get_mut(event.thread) else {
                    continue;
                };
                if event.kind == OpKind::Recv && *slot != usize::MAX {
                    self.waits_to_receive[*slot] = event.object;
                }
                *slot = i;
            }
        }
        self.step_clocks.resize(trace.len() * threads, 0);
        resume
    }

    /// Whether the conflicts of earlier executions have come to outnumber the `steps` steps of
    /// this one several times over (a program whose objects differ from execution to
    /// execution): the walk then starts over with an empty map, where otherwise the entries
    /// are emptied in place, keeping their lists.
    fn accesses_outgrew(&self, steps: usize) -> bool {
        self.accesses.len() > 4 * steps + 64
    }

    /// Starts over from the first step.
    fn reset(&mut self, steps: usize, threads: usize) {
        self.threads = threads;
        self.clocks.clear();
        self.clocks.resize(threads * threads, 0);
        self.step_clocks.clear();
        if self.accesses_outgrew(steps) {
            self.accesses.clear();
        }
        for (last_write, reads) in self.accesses.values_mut() {
            *last_write = None;
            reads.clear();
        }
        for list in [&mut self.spawns, &mut self.last_step, &mut self.last_yield] {
            list.clear();
            list.resize(threads, None);
        }
        self.first_yield = None;
        self.events.clear();
        self.timeouts.clear();
        self.ended_waits.clear();
        self.waits_to_receive.clear();
        self.undo.clear();
        self.saved_clocks.clear();
        self.saved_reads.clear();
    }

    /// Undoes the changes of the walked steps from `to` on, newest first.
    fn rewind(&mut self, to: usize) {
        let n = self.threads;
        while self.events.len() > to {
            self.events.pop();
            while let Some(change) = self.undo.pop() {
                match change {
                    Undo::Step => break,
                    Undo::Clock(thread) => {
                        let from = self.saved_clocks.len() - n;
                        self.clocks[thread * n..(thread + 1) * n]
                            .copy_from_slice(&self.saved_clocks[from..]);
                        self.saved_clocks.truncate(from);
                    }
                    Undo::Read(conflict) => {
                        if let Some((_, reads)) = self.accesses.get_mut(&conflict) {
                            reads.pop();
                        }
                    }
                    Undo::Write {
                        conflict,
                        last_write,
                        from,
                    } => {
                        if let Some((last, reads)) = self.accesses.get_mut(&conflict) {
                            *last = last_write;
                            reads.clear();
                            reads.extend(self.saved_reads.drain(from..));
                        }
                    }
                    Undo::LastStep(thread, previous) => self.last_step[thread] = previous,
                    Undo::LastYield(thread, previous) => self.last_yield[thread] = previous,
                    Undo::Spawn(child, previous) => self.spawns[child] = previous,
                }
            }
        }
        self.step_clocks.truncate(to * n);
        self.timeouts
            .truncate(self.timeouts.partition_point(|&s| s < to));
        self.ended_waits
            .truncate(self.ended_waits.partition_point(|&(s, _)| s < to));
        if self.first_yield.is_some_and(|y| y >= to) {
            self.first_yield = None;
        }
    }

    /// Saves `thread`'s clock before a change.
    fn save_clock(&mut self, thread: usize) {
        let n = self.threads;
        self.saved_clocks
            .extend_from_slice(&self.clocks[thread * n..(thread + 1) * n]);
        self.undo.push(Undo::Clock(thread));
    }

    /// Step `i` reads or writes `conflict`: it depends on the last write, and a write also on
    /// the reads since.
    fn access(&mut self, conflict: Conflict, writes: bool, i: usize) {
        let conflict = Identity(conflict);
        let (last_write, reads) = self.accesses.entry(conflict).or_default();
        self.dependences.extend(last_write.iter().copied());
        if !writes {
            reads.push(i);
            self.undo.push(Undo::Read(conflict));
        } else {
            self.undo.push(Undo::Write {
                conflict,
                last_write: *last_write,
                from: self.saved_reads.len(),
            });
            self.saved_reads.extend_from_slice(reads);
            self.dependences.append(reads);
            *last_write = Some(i);
        }
    }

    /// Walks the next step of `trace`, the first not walked: its clock, its dependences and
    /// `before`, and what it changes for the steps after it.
    pub(super) fn walk(&mut self, trace: &[TraceEvent], steps: Option<&Steps>) {
        let i = self.walked();
        let event = &trace[i];
        let timed_out = steps.is_some_and(|s| s.is_timeout(i));
        let (n, p) = (self.threads, event.thread);
        let clock = p * n..(p + 1) * n;
        self.undo.push(Undo::Step);
        self.save_clock(p);
        match (event.kind, event.target) {
            (OpKind::Start, _) => {
                if let Some(j) = self.spawns[p] {
                    learn(&mut self.clocks, &self.step_clocks, n, p, j);
                }
            }
            (OpKind::Join, Some(TraceTarget::Thread(target))) => {
                self.before.clear();
                self.before
                    .extend_from_slice(&self.clocks[target * n..(target + 1) * n]);
                join(&mut self.clocks[clock.clone()], &self.before);
            }
            _ => {}
        }
        let read = reads_only(event.kind);
        self.dependences.clear();
        // A thread's last step finishes it, which `JoinHandle::is_finished` asks about.
        let finishes = (self.final_steps[p] == i).then_some((Conflict::Finished(p), true));
        let asks = match (event.kind, event.target) {
            (OpKind::Poll, Some(TraceTarget::Thread(t))) => Some((Conflict::Finished(t), false)),
            (OpKind::Poll, Some(TraceTarget::Channel(ChannelStep::Offered { .. }))) => event
                .object
                .map(|channel| (Conflict::Receivers(channel), false)),
            _ => None,
        };
        let waits = self
            .waits_to_receive
            .get(i)
            .copied()
            .flatten()
            .map(|channel| (Conflict::Receivers(channel), true));
        for (conflict, writes) in dpor_conflicts(event, !read).into_iter().flatten() {
            self.access(conflict, writes, i);
        }
        for (conflict, writes) in [finishes, asks, waits].into_iter().flatten() {
            self.access(conflict, writes, i);
        }
        // The yield rule (`dfs.rs`) makes a yield of thread `t` and any step of another thread
        // `u` dependent: which of `u`'s steps ends `t`'s wait depends on their order. That is
        // a pseudo-object per pair `(t, u)`, written by `t`'s yields and by every step of `u`,
        // so a yield depends on each other thread's last step, and a step on every other
        // thread's latest yield that came after its own thread's previous step.
        let yields = event.yields || timed_out;
        if yields && self.first_yield.is_none() {
            self.first_yield = Some(i);
        }
        // A start step neither ends a wait under the search's yield rule nor is seen by a
        // yield: it commutes with every yield.
        let starts = event.kind == OpKind::Start;
        if self.first_yield.is_some() && !starts {
            for u in (0..n).filter(|&u| u != p) {
                if yields {
                    self.dependences.extend(self.last_step[u]);
                }
                if let Some(y) = self.last_yield[u] {
                    if self.last_step[p].is_none_or(|previous| previous < y) {
                        self.dependences.push(y);
                    }
                }
            }
        }
        self.dependences.retain(|&j| trace[j].thread != p);
        self.dependences.sort_unstable();
        self.dependences.dedup();
        self.before.clear();
        self.before.extend_from_slice(&self.clocks[clock.clone()]);
        for &j in &self.dependences {
            learn(&mut self.clocks, &self.step_clocks, n, p, j);
        }
        self.clocks[p * n + p] += 1;
        self.step_clocks[i * n..(i + 1) * n].copy_from_slice(&self.clocks[clock.clone()]);
        if !starts {
            self.undo.push(Undo::LastStep(p, self.last_step[p]));
            self.last_step[p] = Some(i);
        }
        if yields {
            self.undo.push(Undo::LastYield(p, self.last_yield[p]));
            self.last_yield[p] = Some(i);
        }
        // A thread whose wait under the yield rule this step ended could not run before it,
        // so its next step happens after it.
        for t in steps.into_iter().flat_map(|s| s.ended_waits(i)) {
            self.ended_waits.push((i, t));
            if t < n && t != p {
                self.save_clock(t);
                learn(&mut self.clocks, &self.step_clocks, n, t, i);
            }
        }
        if let (OpKind::Spawn, Some(TraceTarget::Thread(child))) = (event.kind, event.target) {
            if child < n {
                self.undo.push(Undo::Spawn(child, self.spawns[child]));
                self.spawns[child] = Some(i);
            }
        }
        if timed_out {
            self.timeouts.push(i);
        }
        self.events.push(*event);
    }
}

#[cfg(debug_assertions)]
impl HappensBefore {
    /// Panics unless the state equals the one a walk of the whole of `trace` from its first
    /// step gives: debug builds check every rewound walk against it.
    pub(super) fn check_against_full_walk(
        &self,
        trace: &[TraceEvent],
        steps: Option<&Steps>,
        threads: usize,
    ) {
        let mut full = HappensBefore::default();
        for _ in full.begin(trace, steps, threads, 0)..trace.len() {
            full.walk(trace, steps);
        }
        fn live(hb: &HappensBefore) -> FxHashMap<&Identity, &(Option<usize>, Vec<usize>)> {
            hb.accesses
                .iter()
                .filter(|(_, (write, reads))| write.is_some() || !reads.is_empty())
                .collect()
        }
        let same = self.clocks == full.clocks
            && self.step_clocks == full.step_clocks
            && self.events == full.events
            && self.spawns == full.spawns
            && self.last_step == full.last_step
            && self.last_yield == full.last_yield
            && self.first_yield == full.first_yield
            && self.timeouts == full.timeouts
            && self.ended_waits == full.ended_waits
            && live(self) == live(&full);
        assert!(
            same,
            "dpor's rewound analysis differs from a walk of the whole trace"
        );
    }
}

/// A conflict, with its object compared and hashed by identity (see [`same_step`]): equal
/// conflicts are equal identities, so no dependence is lost, and the map of accesses neither
/// hashes nor compares the creation site's file name at every step.
#[derive(Clone, Copy, Debug)]
struct Identity(Conflict);

impl Identity {
    /// The conflict's parts: which conflict, its object's identity, and its number.
    fn parts(&self) -> (u8, Option<(ObjectKind, u32, usize)>, u64) {
        let object = |o: ObjectId| Some((o.kind, o.instance, o.site as *const _ as usize));
        match self.0 {
            Conflict::Object(o) => (0, object(o), 0),
            Conflict::Threads => (1, None, 0),
            Conflict::SeqCst => (2, None, 0),
            Conflict::Message(o, ticket) => (3, object(o), u64::from(ticket)),
            Conflict::Parking(thread) => (4, None, thread as u64),
            Conflict::Finished(thread) => (5, None, thread as u64),
            Conflict::Receiving(o) => (6, object(o), 0),
            Conflict::Senders(o) => (7, object(o), 0),
            Conflict::Receivers(o) => (8, object(o), 0),
        }
    }
}

impl PartialEq for Identity {
    fn eq(&self, other: &Identity) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Identity {}

impl Hash for Identity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

/// Whether two steps are the same for the walk: the same thread, operation and argument, on
/// the same object, at the same site. Objects and sites are compared by the address of their
/// creation site's location, which is the same for the same program point in every execution
/// of a process (and equal contents at two addresses count as a difference, which only makes
/// the walk resume earlier).
fn same_step(a: &TraceEvent, b: &TraceEvent) -> bool {
    let object = |event: &TraceEvent| {
        event
            .object
            .map(|o| (o.kind, o.instance, o.site as *const Location<'static>))
    };
    a.thread == b.thread
        && a.kind == b.kind
        && a.seq_cst == b.seq_cst
        && std::ptr::eq(a.site, b.site)
        && object(a) == object(b)
        && a.target == b.target
}

/// `resume`, or the step of the first entry below it where two step-ordered lists differ.
fn first_difference<T: PartialEq>(
    new: &[T],
    old: &[T],
    resume: usize,
    step: impl Fn(&T) -> usize,
) -> usize {
    let below = |list: &[T]| list.partition_point(|entry| step(entry) < resume);
    let (new, old) = (&new[..below(new)], &old[..below(old)]);
    match new.iter().zip(old).position(|(a, b)| a != b) {
        Some(entry) => step(&new[entry]).min(step(&old[entry])),
        None if new.len() != old.len() => {
            let longer = if new.len() > old.len() { new } else { old };
            step(&longer[new.len().min(old.len())])
        }
        None => resume,
    }
}

/// Thread `thread`'s clock learns step `step`'s: the clocks have `n` entries each.
fn learn(clocks: &mut [u32], step_clocks: &[u32], n: usize, thread: usize, step: usize) {
    let (mine, learnt) = (thread * n..(thread + 1) * n, step * n..(step + 1) * n);
    join(&mut clocks[mine], &step_clocks[learnt]);
}

/// `into = max(into, from)` entry by entry.
fn join(into: &mut [u32], from: &[u32]) {
    for (a, &b) in into.iter_mut().zip(from) {
        *a = (*a).max(b);
    }
}
