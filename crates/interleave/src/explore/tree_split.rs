//! Several workers searching one depth-first search's tree at once, by subtrees handed out on
//! request (work stealing over prefixes), with the report a single worker gives.
//!
//! The unit of work is a task: the search of one subtree (`strategy/subtree.rs`), which runs
//! exactly the whole search's executions below its root, in the whole search's order. The
//! driver starts with the whole tree as task 0. A worker with nothing to do asks for work; the
//! next worker to finish an execution answers by giving away the options still to try at the
//! shallowest node of its subtree that has some (the largest pieces it holds), each as a new
//! task. The new tasks follow everything their parent still runs, so each task's place in the
//! order of the whole search is known when it is made: a task's own executions come first,
//! then the tasks it gave away, the last given first (they lie deeper, inside the part it was
//! searching). Reading the task tree in that order (pre-order) yields the whole search's
//! executions in index order.
//!
//! Determinism: the driver still plans and observes every execution through the strategy
//! itself, in index order, as on one worker; the workers' summaries only stand in for running
//! the planned schedule, which is the very schedule the subtree's search ran. What depends on
//! the index is redone by the driver with the index known: an execution that failed (its
//! report names its index) or that the determinism check samples (0, 1, 2, 4, ...) is run
//! again under the driver's own schedule. The strategy therefore sees the same calls, the report
//! is the one-worker report, and the statistics the strategy keeps are the same. Should the
//! tasks ever run out before the strategy does, the driver runs its plans itself.
//!
//! Speculation is bounded twice. A task whose next execution is known to come at or after the
//! execution budget (the executions read so far and those waiting before it reach it) stops:
//! with a budget smaller than the tree, a worker far ahead of the driver stops there instead of
//! searching a subtree the report will never read. And summaries waiting to be read are capped
//! ([`WAITING_CAP`]): above it, only the task the driver reads next runs, so memory stays
//! bounded when a worker's subtree lies far behind a large one.
//!
//! Why DPOR does not split this way: its backtracking points come from races seen anywhere in
//! the tree (a race deep in one subtree adds options at a shallow node), and its sleep sets
//! carry what one subtree explored into the next, so a subtree's search depends on the others
//! (see ARCHITECTURE.md).

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, MutexGuard};

use super::*;
use crate::strategy::SubtreeSearch;

/// Summaries that may wait to be read before workers pause every task but the one read next.
/// A kept summary is small (its execution's decisions past the prefix, and counters), a few
/// hundred bytes for the exhaustion programs, so this is tens of MiB at most.
const WAITING_CAP: usize = 1 << 16;

/// A task's identity: its position in [`Board::tasks`].
type TaskId = usize;

/// A task a worker holds: its identity and its subtree's search.
type Held = (TaskId, SubtreeSearch);

/// One task's part of the order of the whole search.
#[derive(Default)]
struct Task {
    /// Summaries of its own executions, not yet read, in order.
    results: VecDeque<Summary>,
    /// Its own part will produce no more summaries: its search is over, or the rest lies
    /// beyond the budget.
    finished: bool,
    /// The tasks it gave away, in the order of the whole search.
    children: Vec<TaskId>,
}

/// Where the driver reads next.
enum Next {
    Ready(Box<Summary>),
    /// The next summary is not there yet.
    Pending,
    /// Every task is over and read.
    Exhausted,
}

/// What the workers and the driver share, under one lock.
struct Board {
    tasks: Vec<Task>,
    /// Tasks no worker holds: given away and not started, or paused at the cap.
    idle: Vec<Held>,
    /// The tasks from task 0 down to the one read next, each with the position of its next
    /// child to read.
    cursor: Vec<(TaskId, usize)>,
    /// Summaries not read yet.
    waiting: usize,
    /// The index of the next execution the driver reads.
    read: u64,
    budget: u64,
    /// Workers may take tasks (false for automatic workers' probe executions).
    open: bool,
    stopped: bool,
    /// Whether the driver waits for a change.
    driver_sleeps: bool,
    /// Helpers waiting for a change.
    helpers_sleeping: usize,
    /// A panic that escaped a worker, which the driver raises again.
    escaped: Option<Box<dyn Any + Send>>,
}

impl Board {
    /// Moves the cursor past the tasks that are over and read, so it rests on the task read
    /// next; `None` when there is none.
    fn settle(&mut self) -> Option<TaskId> {
        loop {
            let &(task, child) = self.cursor.last()?;
            let task_ref = &self.tasks[task];
            if !task_ref.results.is_empty() || !task_ref.finished {
                return Some(task);
            }
            match task_ref.children.get(child) {
                Some(&next) => {
                    if let Some(top) = self.cursor.last_mut() {
                        top.1 += 1;
                    }
                    self.cursor.push((next, 0));
                }
                None => {
                    self.cursor.pop();
                }
            }
        }
    }

    /// The summary of execution `index`, when a worker ran it.
    fn next(&mut self, index: u64) -> Next {
        self.read = index;
        let Some(task) = self.settle() else {
            return Next::Exhausted;
        };
        match self.tasks[task].results.pop_front() {
            Some(summary) => {
                self.waiting -= 1;
                Next::Ready(Box::new(summary))
            }
            None => Next::Pending,
        }
    }

    /// The tasks in the order of the whole search: each task, then what it gave away.
    fn preorder(&self) -> Vec<TaskId> {
        let mut order = Vec::with_capacity(self.tasks.len());
        let mut stack = vec![0];
        while let Some(task) = stack.pop() {
            order.push(task);
            stack.extend(self.tasks[task].children.iter().rev());
        }
        order
    }

    /// Whether `task` may run now: it is the task the driver reads next, or the summaries
    /// waiting are under the cap and do not reach the budget yet (past it they may never be
    /// read, so workers wait for the driver instead of speculating further).
    fn may_run(&mut self, task: TaskId) -> bool {
        self.room() || self.settle() == Some(task)
    }

    /// Whether tasks other than the one read next may run: see [`Board::may_run`].
    fn room(&self) -> bool {
        self.waiting < WAITING_CAP && self.read + (self.waiting as u64) < self.budget
    }

    /// Whether every execution left in `task` comes at or after the budget: the executions
    /// read and those waiting in the tasks up to it already reach it.
    fn beyond_budget(&self, task: TaskId) -> bool {
        if self.read + (self.waiting as u64) < self.budget {
            return false;
        }
        let mut before = self.read;
        for earlier in self.preorder() {
            before += self.tasks[earlier].results.len() as u64;
            if earlier == task {
                break;
            }
        }
        before >= self.budget
    }

    /// The earliest idle task in the order of the whole search that may run.
    fn pick(&mut self) -> Option<Held> {
        if !self.open || self.idle.is_empty() {
            return None;
        }
        let order = self.preorder();
        let (at, _) = self
            .idle
            .iter()
            .enumerate()
            .min_by_key(|(_, (task, _))| order.iter().position(|t| t == task))?;
        let task = self.idle[at].0;
        if !self.may_run(task) {
            return None;
        }
        if self.beyond_budget(task) {
            self.idle.swap_remove(at);
            self.tasks[task].finished = true;
            return None;
        }
        Some(self.idle.swap_remove(at))
    }

    /// Records the subtrees `task` gave away.
    fn add_children(&mut self, task: TaskId, searches: Vec<SubtreeSearch>) {
        let first = self.tasks.len();
        let ids: Vec<TaskId> = (first..first + searches.len()).collect();
        self.tasks
            .extend(std::iter::repeat_with(Task::default).take(searches.len()));
        // Given later, they lie deeper, inside the part the task was searching: they come
        // before what it gave earlier.
        self.tasks[task].children.splice(0..0, ids.iter().copied());
        self.idle.extend(ids.into_iter().zip(searches));
    }
}

/// The board, its wake-ups, and the request for work.
struct Shared {
    board: Mutex<Board>,
    /// Wakes the driver: a summary arrived or a task ended (or anything helpers wait for).
    driver_wake: Condvar,
    /// Wakes the helpers: a task was given away or paused, or room freed up. They are not
    /// woken by every summary, which would wake a helper waiting for room at every execution.
    helpers_wake: Condvar,
    /// A worker found nothing to do: the next worker between executions gives part of its
    /// subtree away.
    wanted: AtomicBool,
}

impl Shared {
    fn board(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the driver, if it waits, after a change to `board` only it cares about.
    fn wake_driver(&self, board: &Board) {
        if board.driver_sleeps {
            self.driver_wake.notify_one();
        }
    }

    /// Wakes every waiting thread after a change to `board`.
    fn wake_all(&self, board: &Board) {
        self.wake_driver(board);
        if board.helpers_sleeping > 0 {
            self.helpers_wake.notify_all();
        }
    }

    /// Waits for a change, asking for work meanwhile when a new task could run (otherwise
    /// the tasks given away would only pile up, unpicked).
    fn wait<'b>(&'b self, mut board: MutexGuard<'b, Board>, driver: bool) -> MutexGuard<'b, Board> {
        if board.room() {
            self.wanted.store(true, Ordering::Relaxed);
        }
        if driver {
            board.driver_sleeps = true;
            let mut board = self
                .driver_wake
                .wait(board)
                .unwrap_or_else(|p| p.into_inner());
            board.driver_sleeps = false;
            board
        } else {
            board.helpers_sleeping += 1;
            let mut board = self
                .helpers_wake
                .wait(board)
                .unwrap_or_else(|p| p.into_inner());
            board.helpers_sleeping -= 1;
            board
        }
    }

    /// Runs the next execution of `held`; returns it while it has more to run now, and `None`
    /// once it is over, beyond the budget, paused, or the exploration stopped.
    fn step(&self, run: &Run<'_>, mut held: Held) -> Option<Held> {
        if self.wanted.load(Ordering::Relaxed) && self.wanted.swap(false, Ordering::AcqRel) {
            let given = held.1.give_away();
            if given.is_empty() {
                // Nothing to give here: the next worker may have some.
                self.wanted.store(true, Ordering::Relaxed);
            } else {
                let mut board = self.board();
                board.add_children(held.0, given);
                self.wake_all(&board);
            }
        }
        let Some(schedule) = held.1.plan() else {
            let mut board = self.board();
            board.tasks[held.0].finished = true;
            self.wake_driver(&board);
            return None;
        };
        let mut summary = run_one(run, 0, schedule, false);
        held.1.observe(&outcome_of(&summary));
        held.1.shrink(&mut summary.feedback);
        let mut board = self.board();
        if board.stopped {
            return None;
        }
        board.tasks[held.0].results.push_back(summary);
        board.waiting += 1;
        self.wake_driver(&board);
        if board.beyond_budget(held.0) {
            board.tasks[held.0].finished = true;
            return None;
        }
        if !board.may_run(held.0) {
            board.idle.push(held);
            self.wake_all(&board);
            return None;
        }
        Some(held)
    }

    /// Stops the workers.
    fn stop(&self) {
        let mut board = self.board();
        board.stopped = true;
        self.driver_wake.notify_all();
        self.helpers_wake.notify_all();
    }
}

/// Explores with `workers` workers (the calling thread, the driver, among them) the tree of
/// `search`, the whole search of `strategy`, adding each execution to `collector` in index
/// order. With `automatic` workers, see `rounds.rs`'s `explore_with`.
pub(super) fn explore(
    run: &Run<'_>,
    strategy: &mut dyn Strategy,
    search: SubtreeSearch,
    collector: &mut Collector<'_>,
    workers: usize,
    automatic: bool,
) -> Result<(), OutlivedObjects> {
    // The workers' executions skip what depends on the index; the driver redoes it.
    let unindexed = Run {
        f: run.f,
        site: run.site,
        limits: run.limits,
        spec: run.spec.clone(),
        seed: run.seed,
        check_determinism: false,
        count_states: run.count_states,
        monitor_atomic_sets: false,
        test: run.test.clone(),
    };
    let shared = Shared {
        board: Mutex::new(Board {
            tasks: vec![Task::default()],
            idle: Vec::new(),
            cursor: vec![(0, 0)],
            waiting: 0,
            read: 0,
            budget: collector.budget(),
            open: !automatic,
            stopped: false,
            driver_sleeps: false,
            helpers_sleeping: 0,
            escaped: None,
        }),
        driver_wake: Condvar::new(),
        helpers_wake: Condvar::new(),
        wanted: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(|| {
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| help(&shared, &unindexed))) {
                    let mut board = shared.board();
                    board.escaped = Some(payload);
                    board.stopped = true;
                    shared.driver_wake.notify_all();
                    shared.helpers_wake.notify_all();
                }
            });
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            drive(
                &shared, run, &unindexed, strategy, search, collector, automatic,
            )
        }));
        shared.stop();
        match result {
            Ok(result) => result,
            Err(payload) => resume_unwind(payload),
        }
    })
}

/// A helper's life: take the earliest task it may run, run it while it may, repeat.
fn help(shared: &Shared, run: &Run<'_>) {
    loop {
        let mut held = {
            let mut board = shared.board();
            loop {
                if board.stopped {
                    return;
                }
                if let Some(held) = board.pick() {
                    break held;
                }
                board = shared.wait(board, false);
            }
        };
        while let Some(next) = shared.step(run, held) {
            held = next;
        }
    }
}

/// The driver: plans and observes every execution in index order, taking each summary from
/// the tasks, and runs tasks itself while the next summary is not there.
fn drive(
    shared: &Shared,
    run: &Run<'_>,
    unindexed: &Run<'_>,
    strategy: &mut dyn Strategy,
    search: SubtreeSearch,
    collector: &mut Collector<'_>,
    automatic: bool,
) -> Result<(), OutlivedObjects> {
    let budget = collector.budget();
    let mut own: Option<Held> = Some((0, search));
    let mut planned: Option<Box<dyn Schedule + Send>> = None;
    let mut index = 0u64;
    // Set when a probe execution used an outlived object: the driver runs every plan itself.
    let mut alone = false;
    while index < budget {
        if planned.is_none() {
            planned = strategy.plan(index, execution_seed(run.seed, index));
            if planned.is_none() {
                break;
            }
        }
        let next = if alone {
            Next::Exhausted
        } else {
            let mut board = shared.board();
            if let Some(payload) = board.escaped.take() {
                resume_unwind(payload);
            }
            let next = board.next(index);
            // A summary read may free room under the cap for a helper.
            if board.helpers_sleeping > 0 && board.room() && !board.idle.is_empty() {
                shared.helpers_wake.notify_all();
            }
            next
        };
        let summary = match next {
            Next::Ready(summary) => {
                // What names or samples the index is done again under the driver's plan.
                let sampled = run.check_determinism && (index == 0 || index.is_power_of_two());
                let keep_trace = strategy.wants_trace(index);
                match planned.take() {
                    Some(schedule) if sampled || keep_trace || summary.failure.is_some() => {
                        run_one(run, index, schedule, keep_trace)
                    }
                    _ => Summary { index, ..*summary },
                }
            }
            Next::Exhausted => match planned.take() {
                Some(schedule) => run_one(run, index, schedule, strategy.wants_trace(index)),
                None => break,
            },
            Next::Pending => {
                own = match own.take() {
                    Some(held) => shared.step(unindexed, held),
                    None => {
                        let mut board = shared.board();
                        let picked = board.pick();
                        if picked.is_none() && !board.stopped {
                            // Woken by a summary, a task given away, or a panic.
                            drop(shared.wait(board, true));
                        }
                        picked
                    }
                };
                continue;
            }
        };
        if automatic && summary.outlived_objects {
            // An object an earlier execution registered: executions on several workers may
            // have shared it. Before the workers opened, the exploration stays on one.
            if shared.board().open {
                return Err(OutlivedObjects);
            }
            alone = true;
        }
        index += 1;
        if automatic && index == PROBE_EXECUTIONS && !alone {
            let mut board = shared.board();
            board.open = true;
            shared.wake_all(&board);
        }
        strategy.observe(summary.index, &outcome_of(&summary));
        if collector.add(strategy, summary) == Flow::Stop {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::{Dfs, Outcome};
    use crate::sync::atomic::{AtomicUsize, Ordering};
    use crate::sync::Arc;

    /// `WRITERS` threads that each store and load.
    fn writers<const WRITERS: usize>() {
        let shared = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..WRITERS)
            .map(|id| {
                let shared = shared.clone();
                crate::thread::spawn(move || {
                    shared.store(id, Ordering::SeqCst);
                    let _ = shared.load(Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    /// Runs the next execution of `search`, if any, and returns the threads of its steps.
    fn run_next(search: &mut SubtreeSearch, program: fn()) -> Option<Vec<usize>> {
        let schedule = search.plan()?;
        let site = std::panic::Location::caller();
        let mut ex = crate::runtime::run(&program, site, schedule, limits(&Config::default()));
        let threads = ex.events.iter().map(|e| e.thread as usize).collect();
        let feedback = ex.feedback.take();
        search.observe(&Outcome {
            steps: ex.steps(),
            threads: ex.threads.len(),
            failed: ex.failure.is_some(),
            abandoned: ex.abandoned,
            lock_acquisitions: ex.lock_acquisitions,
            trace: None,
            feedback: feedback.as_deref(),
            declarations: None,
            violations: 0,
        });
        Some(threads)
    }

    /// Searches `search` to its end, giving away its subtrees every `every` executions (each
    /// searched the same way), and returns every execution's threads in the order of the whole
    /// search: its own, then what it gave away, the last given first. Counts the subtrees given
    /// away in `given`.
    fn search_split(
        mut search: SubtreeSearch,
        program: fn(),
        every: usize,
        given: &mut usize,
    ) -> Vec<Vec<usize>> {
        let mut own = Vec::new();
        let mut children: Vec<SubtreeSearch> = Vec::new();
        while let Some(threads) = run_next(&mut search, program) {
            own.push(threads);
            if own.len() % every == 0 {
                let away = search.give_away();
                *given += away.len();
                children.splice(0..0, away);
            }
        }
        for child in children {
            own.extend(search_split(child, program, every, given));
        }
        own
    }

    #[test]
    fn subtrees_given_away_run_the_whole_search_in_its_order() {
        let searches: [(Dfs, fn()); 3] = [
            (Dfs::new(), writers::<2>),
            (Dfs::bounded(1), writers::<3>),
            (Dfs::bounded(2), writers::<3>),
        ];
        for (dfs, program) in searches {
            let whole_search = || dfs.subtree_search().expect("dfs splits");
            let mut whole = whole_search();
            let serial: Vec<Vec<usize>> =
                std::iter::from_fn(|| run_next(&mut whole, program)).collect();
            assert!(serial.len() > 50, "{} schedules", serial.len());
            for every in [1, 2, 5] {
                let mut given = 0;
                let split = search_split(whole_search(), program, every, &mut given);
                assert!(given >= 3, "only {given} subtrees given away");
                assert_eq!(split, serial, "giving away every {every} executions");
            }
        }
    }
}
