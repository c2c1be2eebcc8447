//! Strict-priority scheduling, shared by PCT, RPro, PCTVB and thread bounding: the estimates of
//! the thread count `n` and event count `k` from earlier executions, the drawing of distinct
//! change points, the per-execution [`PrioritySchedule`] that runs the enabled thread of
//! highest priority and lowers a thread's priority at a change point, and seed 000's yield rule
//! (section 5), which demotes a thread that yields so a spin-wait cannot starve the thread it
//! waits for. The strategies differ only in how they pick change points and priorities; each
//! states its guarantee in its own file.
//!
//! Which of several `Condvar` waiters a `notify_one` wakes is no preemption but the platform's
//! choice (std promises only that one of the threads waiting at the call wakes), which the
//! runtime leaves to whichever eligible waiter is scheduled first (`condvar_queue.rs`). Decided
//! by priority, the same waiter won every notification it competed for in an execution, and a
//! deadlock that needs a notification taken by the wrong kind of waiter (a producer's
//! `notify_one` on a condition variable shared with the consumer, which another producer takes)
//! needed the priorities to line up at every such notification. So when the thread of highest
//! priority is about to take a notification that other waiters of the same condition variable
//! could take as well, the schedule draws the one that takes it uniformly among them
//! ([`PrioritySchedule::draw_waiter`]); the priorities stay as they were. A bug that needs a
//! given waiter woken then has probability at least `1 / w` per such notification (`w` eligible
//! waiters), on top of the bound of its other ordering constraints. On a bounded channel whose
//! senders and receiver share one condition variable (2 producers of 2 messages, capacity 1),
//! `pct:d=3` needed a median of 230 executions over 100 seeds to its deadlock, 24 with the draw
//! (shuttle's PCT: 23); with 3 producers of 3 messages and capacity 2 it found it on none of 20
//! seeds within 20,000 executions, and on 94 of 100 with the draw.

use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

use super::{below, ObjectId, OpKind, Outcome, PerObject, Schedule, View};

/// The number of yields after which a thread loses its priority (seed 000, section 5): every
/// yield, as in shuttle's PCT, since a yield says the thread waits for another thread.
pub const DEFAULT_YIELD_LIMIT: u32 = 1;

/// Which steps count as events for PCT and RPro: `k` counts them and change points fall on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Events {
    /// Every scheduling step.
    #[default]
    All,
    /// Only lock acquisitions (`Mutex::lock`, `RwLock::read`/`write`, and a woken `Condvar`
    /// waiter taking its mutex back): seed 001's deadlock optimisation.
    LockAcquisitions,
}

/// What PCT and RPro learn from earlier executions: the number of threads `n` and of events `k`.
#[derive(Clone, Debug)]
pub(super) struct Estimates {
    pub(super) events: Events,
    /// A `k` fixed by the user (`k=` in the spec) instead of the estimate.
    pub(super) fixed_events: Option<u64>,
    max_events: u64,
    max_threads: usize,
}

impl Estimates {
    pub(super) fn new(events: Events, fixed_events: Option<u64>) -> Estimates {
        Estimates {
            events,
            fixed_events: fixed_events.map(|k| k.max(1)),
            max_events: 0,
            max_threads: 0,
        }
    }

    /// `k`: the fixed value, or the most events seen in one execution (at least 1).
    pub(super) fn k(&self) -> u64 {
        self.fixed_events.unwrap_or(self.max_events).max(1)
    }

    /// `n`: the most threads seen in one execution (at least 1).
    pub(super) fn n(&self) -> usize {
        self.max_threads.max(1)
    }

    /// Whether `k` is known. Before any execution has been observed it is not, and change
    /// points are not drawn (a depth-1 sample) rather than all put on the first event.
    pub(super) fn known(&self) -> bool {
        self.fixed_events.is_some() || self.max_events > 0
    }

    pub(super) fn observe(&mut self, outcome: &Outcome) {
        let events = match self.events {
            Events::All => outcome.steps,
            Events::LockAcquisitions => outcome.lock_acquisitions,
        };
        self.max_events = self.max_events.max(events);
        self.max_threads = self.max_threads.max(outcome.threads);
    }

    /// PCT's guarantee `1 / (n · k^(d-1))` for these estimates.
    pub(super) fn pct_guarantee(&self, depth: usize) -> f64 {
        1.0 / (self.n() as f64 * (self.k() as f64).powi(depth as i32 - 1))
    }

    /// The report lines both strategies share.
    pub(super) fn stats(&self, depth: usize) -> Vec<(String, String)> {
        let events = match self.events {
            Events::All => "steps",
            Events::LockAcquisitions => "lock acquisitions",
        };
        vec![
            ("depth d".to_string(), depth.to_string()),
            ("threads n (max observed)".to_string(), self.n().to_string()),
            (
                format!(
                    "events k ({events}, {})",
                    if self.fixed_events.is_some() {
                        "fixed"
                    } else {
                        "max observed"
                    }
                ),
                self.k().to_string(),
            ),
            (
                "PCT guarantee 1/(n*k^(d-1)) per execution, if no thread yields, sleeps or times out (each demotes it like an extra change point)".to_string(),
                format!("{:.3e}", self.pct_guarantee(depth)),
            ),
        ]
    }

    /// The schedule of one execution with these change points, drawn with `rng`.
    pub(super) fn schedule(
        &self,
        (change_points, rng): (Vec<u64>, Pcg64Mcg),
        yield_limit: u32,
    ) -> Box<dyn Schedule + Send> {
        Box::new(PrioritySchedule::new(
            rng,
            change_points,
            ChangePriorities::Ordinal,
            yield_limit,
            Counting::Global(self.events),
        ))
    }

    /// The spec suffix for the shared parameters that differ from their defaults.
    pub(super) fn spec_suffix(&self, default_events: Events, yield_limit: u32) -> String {
        let mut suffix = String::new();
        if self.events != default_events {
            suffix.push_str(match self.events {
                Events::All => ",locks=0",
                Events::LockAcquisitions => ",locks=1",
            });
        }
        if let Some(k) = self.fixed_events {
            suffix.push_str(&format!(",k={k}"));
        }
        if yield_limit != DEFAULT_YIELD_LIMIT {
            suffix.push_str(&format!(",yields={yield_limit}"));
        }
        suffix
    }
}

/// Draws points uniformly in `lo..=hi`, skipping those already in `points`, until `points`
/// holds `count` of them (or the range is used up).
pub(super) fn draw_distinct(
    rng: &mut Pcg64Mcg,
    points: &mut Vec<u64>,
    count: usize,
    lo: u64,
    hi: u64,
) {
    let span = (hi - lo + 1) as usize;
    let available = span - points.iter().filter(|&&p| (lo..=hi).contains(&p)).count();
    let target = points.len() + count.min(available);
    while points.len() < target {
        let point = lo + below(rng.next_u64(), span) as u64;
        if !points.contains(&point) {
            points.push(point);
        }
    }
}

/// How the events that change points refer to are numbered.
pub(super) enum Counting {
    /// Every event of one kind ([`Events`]) in one sequence: change point `k` is the `k`-th.
    Global(Events),
    /// Accesses of each of these objects in a sequence of their own: change point
    /// [`object_event(r, j)`](object_event) is the `j`-th access of `objects[r]` (PCTVB).
    PerObject(Vec<ObjectId>),
}

/// The change point key of the `j`-th access (from 1) of the `r`-th tracked object.
pub(super) fn object_event(r: usize, j: u64) -> u64 {
    ((r as u64 + 1) << 40) | j
}

/// Strict priority scheduling with seed 000's yield rule, shared by every priority strategy:
/// the enabled thread of highest priority runs; a thread that yields `yield_limit` times drops
/// below every other, and again after each further `yield_limit` yields.
///
/// A sleep counts as a yield only when the thread did something else since its last yield (or
/// since it started): a loop that sleeps and then looks at shared state may wait for another
/// thread, but a run of sleeps with nothing in between waits for no one. Demoting such a thread
/// would make the bug of a thread that sleeps its way through a long task before it acts (PCT's
/// figure 5, depth 1) unreachable, and the sleeper's message could never beat another thread's
/// timeout.
#[derive(Clone, Debug)]
pub(super) struct Priorities {
    /// Each thread's priority and what the yield rule keeps of it, in one table so that a
    /// decision checks one length and an execution allocates one table.
    threads: Vec<ThreadPriority>,
    /// The last thread this schedule chose (`usize::MAX` before the first choice): the yield
    /// rule needs to know whether its step was a sleep, and reads that step's kind from the
    /// execution's trace when it needs it, so a decision only stores the two numbers.
    chosen_thread: usize,
    /// The step [`Priorities::chosen_thread`] was chosen for.
    chosen_step: u64,
    lowest: i64,
    yield_limit: u32,
}

/// A thread's priority and what the yield rule keeps of it.
#[derive(Clone, Copy, Debug)]
struct ThreadPriority {
    /// Larger runs first. Demotions go below zero.
    priority: i64,
    /// The yields the rule counted since the thread's last demotion.
    since_demotion: u32,
    /// `View::yields` of the thread when the rule last looked at it.
    seen: u32,
    /// `seen` when the thread took a step other than its start or a sleep since its last
    /// yield (it acted), else [`NOT_SETTLED`]: the yield rule has nothing to do for the thread
    /// while its yields equal this, which a decision tests with one comparison.
    settled_at: u32,
}

/// [`ThreadPriority::settled_at`] of a thread that has not acted since its last yield: no
/// count of yields reaches it short of 2^32 - 1 yields by one thread in one execution.
const NOT_SETTLED: u32 = u32::MAX;

/// The threads an execution's table of priorities has room for from the start: grown from
/// empty, the table of the peers bench's condvar workload (five threads) was allocated and
/// reallocated in every execution, and its rwlock workload's (nine) reallocated twice.
const EXPECTED_THREADS: usize = 16;

impl Priorities {
    pub(super) fn new(yield_limit: u32) -> Priorities {
        Priorities {
            threads: Vec::with_capacity(EXPECTED_THREADS),
            chosen_thread: usize::MAX,
            chosen_step: 0,
            lowest: 0,
            yield_limit,
        }
    }

    /// Gives the threads created since the last decision their `initial` priority.
    pub(super) fn admit(&mut self, view: &View<'_>, mut initial: impl FnMut(usize) -> i64) {
        for thread in self.threads.len()..view.thread_count() {
            self.threads.push(ThreadPriority {
                priority: initial(thread),
                since_demotion: 0,
                seen: 0,
                settled_at: NOT_SETTLED,
            });
        }
    }

    /// The number of threads with a priority.
    #[inline]
    pub(super) fn admitted(&self) -> usize {
        self.threads.len()
    }

    /// The thread chosen last (`usize::MAX` before the first choice).
    #[inline]
    pub(super) fn last_chosen(&self) -> usize {
        self.chosen_thread
    }

    /// The priority of `thread`.
    pub(super) fn get(&self, thread: usize) -> i64 {
        self.threads[thread].priority
    }

    /// Sets the priority of `thread`.
    pub(super) fn set(&mut self, thread: usize, priority: i64) {
        self.threads[thread].priority = priority;
    }

    /// Drops `thread` below every other thread.
    pub(super) fn demote(&mut self, thread: usize) {
        self.lowest -= 1;
        self.threads[thread].priority = self.lowest;
    }

    /// Applies the yield rule to `thread`, which took the steps since this schedule's last
    /// choice: the step it was chosen for, then any it took on the runtime's fast path.
    #[inline(always)]
    pub(super) fn yield_rule(&mut self, view: &View<'_>, thread: usize) {
        if !self.settled(view, thread) {
            self.count_yields(view, thread, view.yields(thread));
        }
    }

    /// Whether the yield rule has nothing to do for `thread`: it made no yield since the rule
    /// last looked and it has acted already, so nothing in `count_yields` would change. This
    /// is every step of a thread that is not in a loop of yields or sleeps, so it is tested
    /// inline in the strategy's decision.
    #[inline(always)]
    fn settled(&self, view: &View<'_>, thread: usize) -> bool {
        view.yields(thread) == self.threads[thread].settled_at
    }

    /// The yield rule for `thread`, which has `yields` yields now, when it yielded or has not
    /// acted yet: see [`Priorities::yield_rule`]. Kept out of line so that the test before it
    /// is inlined into the decision.
    #[inline(never)]
    fn count_yields(&mut self, view: &View<'_>, thread: usize, yields: u32) {
        let state = &mut self.threads[thread];
        let chosen_step = (self.chosen_thread == thread).then_some(self.chosen_step);
        let kind = chosen_step.and_then(|step| view.step_kind(step));
        let yielded = yields > state.seen;
        state.seen = yields;
        let mut acted = state.settled_at != NOT_SETTLED;
        let mut demote = false;
        if yielded {
            let lone_sleep = kind == Some(OpKind::Sleep) && !acted;
            acted = false;
            if !lone_sleep {
                state.since_demotion += 1;
                if state.since_demotion >= self.yield_limit {
                    state.since_demotion = 0;
                    demote = true;
                }
            }
        } else if kind != Some(OpKind::Start) {
            acted = true;
        }
        // Steps on the fast path after the chosen one are data accesses, never yields.
        if chosen_step.is_some_and(|step| view.step() > step + 1) {
            acted = true;
        }
        state.settled_at = if acted { yields } else { NOT_SETTLED };
        if demote {
            self.demote(thread);
        }
    }

    /// The enabled thread of highest priority (the lowest-numbered among equals), which the
    /// schedule runs next.
    #[inline]
    pub(super) fn highest(&mut self, view: &View<'_>) -> usize {
        // The step is stored first so that it holds no register across the search.
        self.chosen_step = view.step();
        let best = self.highest_of(view.enabled());
        self.chosen_thread = best;
        best
    }

    /// The thread of highest priority among `threads` (not empty; the first among equals).
    pub(super) fn highest_of(&self, threads: &[usize]) -> usize {
        let mut best = threads[0];
        let mut best_priority = self.threads[best].priority;
        for &t in &threads[1..] {
            let priority = self.threads[t].priority;
            if priority > best_priority {
                best = t;
                best_priority = priority;
            }
        }
        best
    }
}

/// One execution of a priority strategy (PCT, RPro, PCTVB, thread bounding): run the enabled
/// thread of highest priority; right after the event that is change point `k_i`, set the
/// priority of the thread that executed it to `change_priorities.at(i - 1)`.
pub(super) struct PrioritySchedule {
    rng: Pcg64Mcg,
    /// Initial priorities are random keys above `2^32`.
    priorities: Priorities,
    /// `change_points[i - 1] = k_i`.
    change_points: Vec<u64>,
    /// The priority a thread takes at each change point.
    change_priorities: ChangePriorities,
    /// With [`Counting::Global`], the earliest change point not yet reached, so most steps
    /// test one number.
    next_change: u64,
    /// Whether every step is an event ([`Events::All`]), the common case
    /// [`Schedule::next_thread`] decides without looking at `counting`.
    every_step: bool,
    /// How many threads the common decision handles: those admitted when every step is an
    /// event, 0 otherwise, so that one comparison with `View::thread_count` sends both a new
    /// thread and the other countings to the full path.
    common_threads: usize,
    counting: Counting,
    /// Lock acquisitions so far ([`Events::LockAcquisitions`]).
    events_seen: u64,
    /// Accesses so far of each object of [`Counting::PerObject`].
    object_counts: Vec<u64>,
    /// With [`Counting::PerObject`], the event sequence of each object of the execution, once
    /// looked up.
    sequence_by_index: PerObject<Option<usize>>,
    /// The event sequence the step chosen last counts in, if it is an event (not used for
    /// [`Events::All`], where every step is).
    chosen: Option<usize>,
}

/// The priority a thread takes at each change point.
pub(super) enum ChangePriorities {
    /// PCT, RPro and PCTVB: `i` at change point `i` (from 1), below every initial priority, so
    /// later change points rank above earlier ones. Computed rather than kept in a table,
    /// which would be one more allocation per execution.
    Ordinal,
    /// The `i`-th of these at change point `i` (from 1): thread bounding's random keys.
    Given(Vec<i64>),
}

impl ChangePriorities {
    /// The priority at the change point with index `index` (from 0) in the change points.
    fn at(&self, index: usize) -> i64 {
        match self {
            ChangePriorities::Ordinal => index as i64 + 1,
            ChangePriorities::Given(priorities) => priorities[index],
        }
    }
}

impl PrioritySchedule {
    pub(super) fn new(
        rng: Pcg64Mcg,
        change_points: Vec<u64>,
        change_priorities: ChangePriorities,
        yield_limit: u32,
        counting: Counting,
    ) -> PrioritySchedule {
        let next_change = change_points.iter().copied().min().unwrap_or(u64::MAX);
        let object_counts = match &counting {
            Counting::PerObject(objects) => vec![0; objects.len()],
            Counting::Global(_) => Vec::new(),
        };
        PrioritySchedule {
            rng,
            priorities: Priorities::new(yield_limit),
            change_points,
            change_priorities,
            next_change,
            every_step: matches!(counting, Counting::Global(Events::All)),
            common_threads: 0,
            counting,
            events_seen: 0,
            object_counts,
            sequence_by_index: PerObject::default(),
            chosen: None,
        }
    }

    /// A fresh random key above every change priority of PCT, for initial priorities and for
    /// thread bounding's change priorities alike.
    pub(super) fn random_priority(rng: &mut Pcg64Mcg) -> i64 {
        (1i64 << 32) + (rng.next_u32() as i64)
    }

    /// Gives the threads created since the last decision their initial priorities: independent
    /// uniform keys, which give a uniformly random order. Out of line, since few decisions
    /// see a new thread.
    #[inline(never)]
    fn admit(&mut self, view: &View<'_>) {
        let rng = &mut self.rng;
        self.priorities.admit(view, |_| Self::random_priority(rng));
        if self.every_step {
            self.common_threads = self.priorities.admitted();
        }
    }

    /// Event `event`, taken by thread `last`, is the earliest change point not yet reached
    /// ([`Counting::Global`]): `last` takes that change point's priority, and the next change
    /// point is the earliest after it.
    #[inline(never)]
    fn change_point(&mut self, last: usize, event: u64) {
        self.take_change_priority(last, event);
        self.next_change = self
            .change_points
            .iter()
            .copied()
            .filter(|&k| k > event)
            .min()
            .unwrap_or(u64::MAX);
    }

    /// If event `event` is a change point, thread `last`, which took it, takes that change
    /// point's priority.
    fn take_change_priority(&mut self, last: usize, event: u64) {
        if let Some(i) = self.change_points.iter().position(|&k| k == event) {
            self.priorities.set(last, self.change_priorities.at(i));
        }
    }

    /// [`Schedule::next_thread`] when not every step is an event (lock acquisitions only, or
    /// accesses of PCTVB's objects): the event sequence of the chosen step is kept for the
    /// next decision, which numbers the event once the step has run.
    #[inline(never)]
    fn next_thread_counting_events(&mut self, view: &View<'_>) -> usize {
        if let Some(last) = view.last_thread() {
            if let Some(event) = self.last_event(view) {
                match self.counting {
                    Counting::Global(_) => {
                        if event == self.next_change {
                            self.change_point(last, event);
                        }
                    }
                    Counting::PerObject(_) => self.take_change_priority(last, event),
                }
            }
            self.priorities.yield_rule(view, last);
        }
        let best = self.choose(view);
        self.chosen = self.sequence_of(view, best);
        best
    }

    /// [`Schedule::next_thread`] in full: new threads, change points, the yield rule, and the
    /// other countings of events.
    #[inline(never)]
    fn decide_in_full(&mut self, view: &View<'_>) -> usize {
        if view.thread_count() > self.priorities.admitted() {
            self.admit(view);
        }
        if !self.every_step {
            return self.next_thread_counting_events(view);
        }
        // Every step is an event, numbered by `View::step`, and every step goes through a
        // decision (every object is tracked, so no step takes the runtime's fast path): the
        // event just taken is the current step, and a change point is one comparison.
        if let Some(last) = view.last_thread() {
            let event = view.step();
            if event == self.next_change {
                self.change_point(last, event);
            }
            self.priorities.yield_rule(view, last);
        }
        self.choose(view)
    }

    /// The number of the event the last step was, if it was one.
    fn last_event(&mut self, view: &View<'_>) -> Option<u64> {
        match &self.counting {
            Counting::Global(Events::All) => Some(view.step()),
            Counting::Global(Events::LockAcquisitions) => self.chosen.take().map(|_| {
                self.events_seen += 1;
                self.events_seen
            }),
            Counting::PerObject(_) => self.chosen.take().map(|r| {
                self.object_counts[r] += 1;
                object_event(r, self.object_counts[r])
            }),
        }
    }

    /// The event sequence the step about to be taken by `thread` counts in, if any.
    fn sequence_of(&mut self, view: &View<'_>, thread: usize) -> Option<usize> {
        match &self.counting {
            Counting::Global(Events::All) => None,
            Counting::Global(Events::LockAcquisitions) => view
                .pending(thread)
                .is_some_and(|op| op.kind.is_lock_acquisition())
                .then_some(0),
            Counting::PerObject(objects) => self
                .sequence_by_index
                .of_pending(view, thread, |object| {
                    objects.iter().position(|&o| o == object)
                })
                .flatten(),
        }
    }

    /// The enabled thread of highest priority, unless it is a `Condvar` waiter about to take a
    /// notification: see [`PrioritySchedule::draw_waiter`]. The thread chosen last, which took
    /// the steps since, takes none when it runs on: none can have come for it since its wait
    /// began, as no other thread ran. That is most decisions, which then skip the test.
    #[inline(always)]
    fn choose(&mut self, view: &View<'_>) -> usize {
        let last = self.priorities.last_chosen();
        let best = self.priorities.highest(view);
        if best == last || view.pending_kind(best) != Some(OpKind::Wake) {
            return best;
        }
        self.draw_waiter(view, best)
    }

    /// The waiter that takes the notification `best`, the thread of highest priority, is about
    /// to take: drawn uniformly among the enabled waiters of the same condition variable that
    /// could take one (not those that could only wake spuriously or by their timeout), the
    /// platform's choice rather than a preemption (see the module documentation). A drawn
    /// waiter other than `best` becomes the thread chosen last, as `highest` made `best`.
    #[cold]
    #[inline(never)]
    fn draw_waiter(&mut self, view: &View<'_>, best: usize) -> usize {
        let condvar = view.pending_object_index(best);
        let takes_a_notification = |t: usize| {
            view.pending_kind(t) == Some(OpKind::Wake)
                && view.pending_object_index(t) == condvar
                && !view.wakes_only_spuriously(t)
                && !view.times_out(t)
        };
        if !takes_a_notification(best) {
            return best;
        }
        let waiters = || {
            view.enabled()
                .iter()
                .copied()
                .filter(|&t| takes_a_notification(t))
        };
        let count = waiters().count();
        if count < 2 {
            return best;
        }
        let drawn = below(self.rng.next_u64(), count);
        let chosen = waiters().nth(drawn).unwrap_or(best);
        self.priorities.chosen_thread = chosen;
        chosen
    }
}

impl Schedule for PrioritySchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        // The common decision: every step is an event, no thread is new, the step just taken
        // is no change point, and the yield rule has nothing to do for the thread that took
        // it. Deciding it calls no function, so no register needs saving; every other
        // decision takes the full path, which tests the same things again and acts on them.
        let last = self.priorities.last_chosen();
        let threads = view.thread_count();
        if threads <= self.common_threads && last < threads {
            // Every step goes through a decision when every step is an event (every object is
            // tracked, so no step takes the runtime's fast path): the thread chosen last took
            // the step just taken, and the trace need not be read to know it.
            debug_assert_eq!(view.last_thread(), Some(last));
            if view.step() != self.next_change && self.priorities.settled(view, last) {
                return self.choose(view);
            }
        }
        self.decide_in_full(view)
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        self.rng.next_u64()
    }

    /// Every path of `next_thread` ends in `PrioritySchedule::choose`, an entry of the enabled
    /// list.
    fn chooses_enabled(&self) -> bool {
        true
    }

    fn tracks(&self, object: ObjectId) -> bool {
        // Per-object counting changes priorities only at accesses of its objects.
        match &self.counting {
            Counting::PerObject(objects) => objects.contains(&object),
            Counting::Global(_) => true,
        }
    }
}
