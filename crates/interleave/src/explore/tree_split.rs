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
//! Each execution is observed once, by the task that ran it. The driver reads the executions
//! in index order and adds them to the report; the strategy neither plans nor observes them,
//! and learns at the end what the split search ran ([`SplitTally`], counted in index order), so
//! its statistics are those of the one-worker search. While the task the driver reads next is
//! its own, the driver runs it knowing each execution's index, exactly as one worker does (the
//! determinism check, the failure's index). An execution a worker ran without knowing its index
//! keeps the choices its schedule followed; what depends on the index is redone by the driver
//! under that schedule: an execution that failed (its report names its index) or that the
//! determinism check samples (0, 1, 2, 4, ...).
//!
//! Costs: a worker hands its executions to the board in blocks of [`BLOCK`], so the board's
//! lock is taken once per block, not per execution, and the driver takes the lock once per
//! block it reads and once per [`DIRECT_BETWEEN_VISITS`] executions it runs in index order. What
//! a worker keeps of an execution is its counters and two ranges into its block's buffers (the
//! choices followed, the states' fingerprints); everything an execution allocates is freed by
//! the thread that ran it (but for the text of a warning, which is rare), and a block's buffers,
//! once read, go back to a pool for the next block, so no memory crosses threads per execution
//! (glibc frees memory allocated by another thread at a cost, see `rounds.rs`'s `Planner`).
//!
//! Speculation is bounded three times. A task whose next execution is known to come at or
//! after the execution budget (the executions read so far and those waiting before it reach
//! it) stops. A task whose next execution likely comes at or after the budget pauses: each task
//! publishes an estimate of the executions its own part still holds
//! ([`SubtreeSearch::remaining_estimate`]), and the executions read, waiting, and estimated for
//! the unfinished tasks before it reach the budget; the helper then asks for work again and gets
//! a deeper piece, which comes sooner. With a budget smaller than the tree, a worker therefore
//! searches the part the report will read instead of a subtree far beyond it. And executions
//! waiting to be read are capped ([`WAITING_CAP`]): above it, only the task the driver reads
//! next runs, so memory stays bounded when a worker's subtree lies far behind a large one.
//!
//! Why DPOR does not split this way: its backtracking points come from races seen anywhere in
//! the tree (a race deep in one subtree adds options at a shallow node), and its sleep sets
//! carry what one subtree explored into the next, so a subtree's search depends on the others
//! (see ARCHITECTURE.md).

use std::collections::VecDeque;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, MutexGuard};

use super::*;
use crate::strategy::{Observed, SplitTally, SubtreeSearch};

/// Executions that may wait to be read before workers pause every task but the one read next.
/// A kept execution is small (counters and the choices its schedule followed), about a hundred
/// bytes for the exhaustion programs, so this is a few MiB at most.
const WAITING_CAP: usize = 1 << 16;

/// Executions a worker runs before it hands them to the board. Larger blocks touch the lock
/// less often; smaller ones let the driver read sooner and overshoot the budget less.
const BLOCK: usize = 32;

/// Executions the driver runs in index order between two visits to the board, where it says how
/// far it has read (for the budget checks) and sees a helper's panic.
const DIRECT_BETWEEN_VISITS: u64 = 64;

/// Executions automatic workers run on the driver alone before helpers may take part of the
/// tree (at least the probe executions, see `rounds.rs`): a tree of a few dozen executions is
/// searched in a fraction of a millisecond, less than handing a subtree to a helper can gain,
/// and on a busy machine a helper that holds the subtree read next but waits for a core made
/// the search of such a tree 2 to 10 times slower.
const AUTOMATIC_SPLIT_AFTER: u64 = 64;

/// A task's identity: its position in [`Board::tasks`].
type TaskId = usize;

/// A task a worker holds: its identity and its subtree's search.
type Held = (TaskId, SubtreeSearch);

/// What a worker keeps of an execution it ran without knowing its index.
struct Done {
    steps: u64,
    failed: bool,
    outlived_objects: bool,
    warnings: Vec<String>,
    /// Where the choices its schedule followed lie in its block's `prefixes`.
    prefix: Range<usize>,
    /// Where the fingerprints of its states lie in its block's `states`.
    states: Range<usize>,
    observed: Observed,
}

/// Consecutive executions of one task, handed to the board at once. Once read, its emptied
/// buffers go back to [`Board::spare`], so they are allocated once per exploration.
#[derive(Default)]
struct Block {
    done: Vec<Done>,
    prefixes: Vec<usize>,
    states: Vec<u128>,
}

impl Block {
    fn clear(&mut self) {
        self.done.clear();
        self.prefixes.clear();
        self.states.clear();
    }
}

/// One task's part of the order of the whole search.
#[derive(Default)]
struct Task {
    /// Blocks of its own executions, not yet read, in order.
    blocks: VecDeque<Block>,
    /// Its own part will produce no more executions: its search is over, or the rest lies
    /// beyond the budget.
    finished: bool,
    /// The tasks it gave away, in the order of the whole search.
    children: Vec<TaskId>,
    /// The number of choices of its root.
    root_depth: usize,
    /// The estimated executions of its own part not handed in yet (see
    /// [`SubtreeSearch::remaining_estimate`]), as its holder last said.
    remaining: u64,
}

/// Where the driver reads next.
enum Next {
    /// A block of the task read next.
    Ready(TaskId, Block),
    /// The task read next is the driver's own, and none of its executions wait: the driver
    /// runs it in index order.
    Own,
    /// The next execution is not there yet.
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
    /// Executions handed in and not read yet.
    waiting: usize,
    /// The index of the next execution the driver reads (at its last visit).
    read: u64,
    budget: u64,
    /// Helpers may take tasks (false during automatic workers' first [`AUTOMATIC_SPLIT_AFTER`]
    /// executions).
    open: bool,
    stopped: bool,
    /// Whether the driver waits for a change.
    driver_sleeps: bool,
    /// Helpers waiting for a change.
    helpers_sleeping: usize,
    /// A panic that escaped a worker, which the driver raises again.
    escaped: Option<Box<dyn Any + Send>>,
    /// Emptied blocks, for the next blocks handed in.
    spare: Vec<Block>,
}

impl Board {
    /// Moves the cursor past the tasks that are over and read, so it rests on the task read
    /// next; `None` when there is none.
    fn settle(&mut self) -> Option<TaskId> {
        loop {
            let &(task, child) = self.cursor.last()?;
            let task_ref = &self.tasks[task];
            if !task_ref.blocks.is_empty() || !task_ref.finished {
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

    /// What the driver, which holds `own` (if any), reads next.
    fn next(&mut self, own: Option<TaskId>) -> Next {
        let Some(task) = self.settle() else {
            return Next::Exhausted;
        };
        match self.tasks[task].blocks.pop_front() {
            Some(block) => {
                self.waiting -= block.done.len();
                Next::Ready(task, block)
            }
            None if own == Some(task) => Next::Own,
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

    /// The task after `task` in the order of the whole search, once `task` is over (its
    /// children are then final, and tasks given away later by others come before it).
    fn successor(&self, task: TaskId) -> Option<TaskId> {
        let order = self.preorder();
        let at = order.iter().position(|&t| t == task)?;
        order.get(at + 1).copied()
    }

    /// Whether `task` may run now: it is the task the driver reads next, or the executions
    /// waiting are under the cap and neither they nor the estimated executions of the tasks
    /// before it reach the budget (past it they may never be read, so workers wait for the
    /// driver, or for a piece that comes sooner, instead of speculating further).
    fn may_run(&mut self, task: TaskId) -> bool {
        self.settle() == Some(task) || (self.room() && !self.likely_beyond(task))
    }

    /// Whether the next execution of `task` likely comes at or after the budget: the
    /// executions read, those waiting, and the estimated rest of the tasks before it reach it.
    /// Only a guess (the sizes of subtrees not searched yet are estimated from their siblings),
    /// so it pauses a task rather than ending it.
    fn likely_beyond(&self, task: TaskId) -> bool {
        let mut before = self.read;
        for earlier in self.preorder() {
            let earlier_ref = &self.tasks[earlier];
            let waiting: u64 = earlier_ref
                .blocks
                .iter()
                .map(|block| block.done.len() as u64)
                .sum();
            before = before.saturating_add(waiting);
            if earlier == task {
                break;
            }
            if !earlier_ref.finished {
                before = before.saturating_add(earlier_ref.remaining);
            }
        }
        before >= self.budget
    }

    /// The position in `idle` of the earliest idle task in the order of the whole search.
    fn earliest_idle(&self) -> Option<usize> {
        let order = self.preorder();
        let (at, _) = self
            .idle
            .iter()
            .enumerate()
            .min_by_key(|(_, (task, _))| order.iter().position(|t| t == task))?;
        Some(at)
    }

    /// Whether a helper could take an idle task now.
    fn helper_could_pick(&mut self) -> bool {
        if !self.open {
            return false;
        }
        match self.earliest_idle() {
            Some(at) => {
                let task = self.idle[at].0;
                self.may_run(task)
            }
            None => false,
        }
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
            before += self.tasks[earlier]
                .blocks
                .iter()
                .map(|block| block.done.len() as u64)
                .sum::<u64>();
            if earlier == task {
                break;
            }
        }
        before >= self.budget
    }

    /// The earliest idle task in the order of the whole search that may run; helpers take
    /// none before the board opens.
    fn pick(&mut self, driver: bool) -> Option<Held> {
        if !(self.open || driver) {
            return None;
        }
        let at = self.earliest_idle()?;
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
        self.tasks.extend(searches.iter().map(|search| Task {
            root_depth: search.root_depth(),
            remaining: search.estimated_size(),
            ..Task::default()
        }));
        // Given later, they lie deeper, inside the part the task was searching: they come
        // before what it gave earlier.
        self.tasks[task].children.splice(0..0, ids.iter().copied());
        self.idle.extend(ids.into_iter().zip(searches));
    }

    /// Adds the executions of `block`, which `task` ran, to the task's queue, and leaves an
    /// empty block from the pool in its place.
    fn hand_in(&mut self, task: TaskId, block: &mut Block) {
        if block.done.is_empty() {
            return;
        }
        let full = std::mem::replace(block, self.spare.pop().unwrap_or_default());
        self.waiting += full.done.len();
        self.tasks[task].blocks.push_back(full);
    }
}

/// The board, its wake-ups, and the request for work.
struct Shared {
    board: Mutex<Board>,
    /// Wakes the driver: executions were handed in or a task ended (or anything helpers wait
    /// for).
    driver_wake: Condvar,
    /// Wakes the helpers: a task was given away or paused, or room freed up.
    helpers_wake: Condvar,
    /// A worker found nothing to do: the next worker between executions gives part of its
    /// subtree away.
    wanted: AtomicBool,
    /// The exploration is over (the board's `stopped`, readable without the lock).
    stopped: AtomicBool,
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
        if board.open && board.room() {
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

    /// Gives part of `held`'s subtree away when a worker asked for work.
    fn answer_request(&self, held: &mut Held) {
        if self.wanted.load(Ordering::Relaxed) && self.wanted.swap(false, Ordering::AcqRel) {
            let given = held.1.give_away();
            if given.is_empty() {
                // Nothing to give here: the next worker may have some.
                self.wanted.store(true, Ordering::Relaxed);
            } else {
                let mut board = self.board();
                board.add_children(held.0, given);
                board.tasks[held.0].remaining = held.1.remaining_estimate();
                self.wake_all(&board);
            }
        }
    }

    /// Runs up to [`BLOCK`] executions of `held` without their indices, into `block`, and
    /// hands them to the board; returns the task while it may go on, and `None` once it is
    /// over, beyond the budget, paused, or the exploration stopped.
    fn run_block(&self, run: &Run<'_>, mut held: Held, block: &mut Block) -> Option<Held> {
        let mut over = false;
        while block.done.len() < BLOCK {
            if self.stopped.load(Ordering::Relaxed) {
                block.clear();
                return None;
            }
            if run.stop_requested() {
                // The driver ends the exploration at its next look; what this task ran ahead
                // is never read.
                block.clear();
                self.wake_driver(&self.board());
                return None;
            }
            self.answer_request(&mut held);
            let Some(schedule) = held.1.plan() else {
                over = true;
                break;
            };
            let prefix_start = block.prefixes.len();
            held.1.planned_prefix(&mut block.prefixes);
            let mut summary = run_one(run, 0, schedule, false);
            if summary.stopped {
                block.clear();
                self.wake_driver(&self.board());
                return None;
            }
            let observed = held.1.observe(&outcome_of(&summary));
            let states_start = block.states.len();
            block.states.extend_from_slice(summary.states());
            block.done.push(Done {
                steps: summary.steps,
                failed: summary.failed(),
                outlived_objects: summary.outlived_objects,
                warnings: summary.take_warnings(),
                prefix: prefix_start..block.prefixes.len(),
                states: states_start..block.states.len(),
                observed,
            });
            if observed.next_depth.is_none() {
                over = true;
                break;
            }
        }
        let mut board = self.board();
        if board.stopped {
            block.clear();
            return None;
        }
        board.hand_in(held.0, block);
        board.tasks[held.0].remaining = held.1.remaining_estimate();
        self.wake_driver(&board);
        if over || board.beyond_budget(held.0) {
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
        self.stopped.store(true, Ordering::Relaxed);
        self.driver_wake.notify_all();
        self.helpers_wake.notify_all();
    }
}

/// Explores with `workers` workers (the calling thread, the driver, among them) the tree of
/// `search`, the whole search of `strategy`, adding each execution to `collector` in index
/// order, and tells `strategy` what ran. With `automatic` workers, see `rounds.rs`'s
/// `explore_with`.
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
        stop: run.stop.clone(),
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
            spare: Vec::new(),
        }),
        driver_wake: Condvar::new(),
        helpers_wake: Condvar::new(),
        wanted: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
    };
    let tally = std::thread::scope(|scope| {
        let start_helpers = || {
            for _ in 1..workers {
                scope.spawn(|| {
                    if let Err(payload) =
                        catch_unwind(AssertUnwindSafe(|| help(&shared, &unindexed)))
                    {
                        let mut board = shared.board();
                        board.escaped = Some(payload);
                        board.stopped = true;
                        shared.stopped.store(true, Ordering::Relaxed);
                        shared.driver_wake.notify_all();
                        shared.helpers_wake.notify_all();
                    }
                });
            }
        };
        // Automatic workers start their helpers when the board opens: a search that ends
        // before then costs no thread.
        if !automatic {
            start_helpers();
        }
        let mut driver = Driver {
            start_helpers: &start_helpers,
            shared: &shared,
            run,
            unindexed: &unindexed,
            collector,
            automatic,
            index: 0,
            tally: SplitTally::default(),
            last_task: 0,
            alone: false,
        };
        let result = catch_unwind(AssertUnwindSafe(|| {
            driver.drive(strategy, search)?;
            Ok(driver.tally)
        }));
        shared.stop();
        match result {
            Ok(result) => result,
            Err(payload) => resume_unwind(payload),
        }
    })?;
    strategy.searched_elsewhere(tally);
    Ok(())
}

/// A helper's life: take the earliest task it may run, run it while it may, repeat.
fn help(shared: &Shared, run: &Run<'_>) {
    let mut block = Block::default();
    loop {
        let mut held = {
            let mut board = shared.board();
            loop {
                if board.stopped {
                    return;
                }
                if let Some(held) = board.pick(false) {
                    break held;
                }
                board = shared.wait(board, false);
            }
        };
        while let Some(next) = shared.run_block(run, held, &mut block) {
            held = next;
        }
    }
}

/// Whether the driver goes on after an execution.
enum Read {
    More,
    Done,
}

/// The driver's state: it reads the executions in index order and adds them to the report.
struct Driver<'d, 'r, 'c> {
    shared: &'d Shared,
    /// Starts the helpers (automatic workers, once the board opens).
    start_helpers: &'d dyn Fn(),
    run: &'d Run<'r>,
    unindexed: &'d Run<'r>,
    collector: &'d mut Collector<'c>,
    automatic: bool,
    /// The index of the next execution to read.
    index: u64,
    tally: SplitTally,
    /// The task of the execution read last.
    last_task: TaskId,
    /// A probe execution used an outlived object: the helpers never start.
    alone: bool,
}

impl Driver<'_, '_, '_> {
    /// Reads every execution up to the budget, running tasks itself while the next execution is
    /// not there, and finishes the tally.
    fn drive(
        &mut self,
        strategy: &mut dyn Strategy,
        search: SubtreeSearch,
    ) -> Result<(), OutlivedObjects> {
        let shared = self.shared;
        let budget = self.collector.budget();
        // Builds the schedules of executions run again in index order.
        let template = strategy.subtree_search();
        let mut own: Option<Held> = Some((0, search));
        // The driver's executions of a task it runs before its turn to be read.
        let mut ahead = Block::default();
        // The block read last, returned to the pool at the next visit.
        let mut read: Option<Block> = None;
        'reading: while self.index < budget {
            if self.run.stop_requested() {
                // As in the rounds: the executions read so far are the report.
                self.collector.stopped();
                break 'reading;
            }
            let next = {
                let mut board = shared.board();
                if let Some(payload) = board.escaped.take() {
                    resume_unwind(payload);
                }
                if let Some(mut block) = read.take() {
                    block.clear();
                    board.spare.push(block);
                }
                board.read = self.index;
                if let Some((task, search)) = &own {
                    board.tasks[*task].remaining = search.remaining_estimate();
                }
                let next = board.next(own.as_ref().map(|held| held.0));
                // What was read (and the new estimate) may let a helper take an idle task.
                if board.helpers_sleeping > 0 && board.helper_could_pick() {
                    shared.helpers_wake.notify_all();
                }
                if matches!(next, Next::Pending) && own.is_none() {
                    own = board.pick(true);
                    if own.is_none() && !board.stopped {
                        // Woken by executions handed in, a task given away, or a panic.
                        drop(shared.wait(board, true));
                    }
                    continue 'reading;
                }
                next
            };
            match next {
                Next::Ready(task, mut block) => {
                    let outcome = self.read_block(strategy, template.as_ref(), task, &mut block);
                    read = Some(block);
                    if let Read::Done = outcome? {
                        break 'reading;
                    }
                }
                Next::Own => {
                    let Some(held) = own.as_mut() else {
                        unreachable!("the driver reads its own task only while it holds it")
                    };
                    for _ in 0..DIRECT_BETWEEN_VISITS {
                        match self.run_in_order(strategy, held)? {
                            (Read::More, true) => {}
                            (Read::More, false) => {
                                own = None;
                                break;
                            }
                            (Read::Done, _) => break 'reading,
                        }
                        if self.index >= budget {
                            break 'reading;
                        }
                    }
                }
                Next::Pending => {
                    if let Some(held) = own.take() {
                        own = shared.run_block(self.unindexed, held, &mut ahead);
                    }
                }
                Next::Exhausted => break 'reading,
            }
        }
        if self.tally.ended_a_subtree() {
            let board = shared.board();
            let next = board.successor(self.last_task);
            self.tally
                .next_subtree(next.map(|task| board.tasks[task].root_depth));
        }
        Ok(())
    }

    /// Runs the next execution of `held`, the task read next, knowing its index, as one worker
    /// does, and reads it; also says whether the task goes on.
    fn run_in_order(
        &mut self,
        strategy: &mut dyn Strategy,
        held: &mut Held,
    ) -> Result<(Read, bool), OutlivedObjects> {
        self.shared.answer_request(held);
        let Some(schedule) = held.1.plan() else {
            self.end_own(held.0);
            return Ok((Read::More, false));
        };
        let keep_trace = strategy.wants_trace(self.index);
        let mut summary = run_one(self.run, self.index, schedule, keep_trace);
        if summary.stopped {
            // A stopped execution is no outcome (see `rounds.rs`).
            self.collector.stopped();
            return Ok((Read::Done, false));
        }
        let observed = held.1.observe(&outcome_of(&summary));
        summary.drop_feedback();
        let outcome = self.read(strategy, held.0, observed, summary)?;
        let goes_on = observed.next_depth.is_some();
        if !goes_on {
            self.end_own(held.0);
        }
        Ok((outcome, goes_on))
    }

    /// Marks the driver's own task `task` over.
    fn end_own(&self, task: TaskId) {
        let mut board = self.shared.board();
        board.tasks[task].finished = true;
    }

    /// Reads the executions of `block`, which a worker ran for `task`, in index order; runs
    /// again under the same schedule those whose report depends on the index.
    fn read_block(
        &mut self,
        strategy: &mut dyn Strategy,
        template: Option<&SubtreeSearch>,
        task: TaskId,
        block: &mut Block,
    ) -> Result<Read, OutlivedObjects> {
        let budget = self.collector.budget();
        for done in block.done.iter_mut() {
            if self.index >= budget {
                return Ok(Read::Done);
            }
            let index = self.index;
            let sampled = self.run.check_determinism && sampled_for_determinism(index);
            let keep_trace = strategy.wants_trace(index);
            let summary = match template {
                Some(template) if sampled || keep_trace || done.failed => {
                    let prefix = block.prefixes[done.prefix.clone()].to_vec();
                    let mut summary =
                        run_one(self.run, index, template.following(prefix), keep_trace);
                    if summary.stopped {
                        self.collector.stopped();
                        return Ok(Read::Done);
                    }
                    summary.drop_feedback();
                    summary
                }
                _ => {
                    self.collector
                        .add_states(&block.states[done.states.clone()]);
                    Summary::new(
                        index,
                        done.steps,
                        done.outlived_objects,
                        Findings {
                            warnings: std::mem::take(&mut done.warnings),
                            ..Findings::default()
                        },
                    )
                }
            };
            if let Read::Done = self.read(strategy, task, done.observed, summary)? {
                return Ok(Read::Done);
            }
        }
        Ok(Read::More)
    }

    /// Reads execution `self.index`, which `task` ran and which told it `observed`.
    fn read(
        &mut self,
        strategy: &mut dyn Strategy,
        task: TaskId,
        observed: Observed,
        summary: Summary,
    ) -> Result<Read, OutlivedObjects> {
        if self.automatic && summary.outlived_objects {
            // An object an earlier execution registered: executions on several workers may
            // have shared it. Before the helpers started (the probe executions and the
            // warm-up), the exploration stays on one.
            if self.shared.board().open {
                return Err(OutlivedObjects);
            }
            self.alone = true;
        }
        self.tally.count(observed);
        self.last_task = task;
        self.index += 1;
        if self.automatic
            && self.index == AUTOMATIC_SPLIT_AFTER.max(PROBE_EXECUTIONS)
            && !self.alone
        {
            self.shared.board().open = true;
            (self.start_helpers)();
        }
        Ok(match self.collector.add(strategy, summary) {
            Flow::Continue => Read::More,
            Flow::Stop => Read::Done,
        })
    }
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

    /// A draw from a range wider than the search enumerates, then two threads that store
    /// what was drawn and a draw of two values.
    fn wide_drawer() {
        let drawn = crate::rand::random_range(0..100) as usize;
        let shared = Arc::new(AtomicUsize::new(0));
        let other = {
            let shared = shared.clone();
            crate::thread::spawn(move || shared.store(drawn, Ordering::SeqCst))
        };
        shared.store(
            drawn + usize::from(crate::rand::random_bool()),
            Ordering::SeqCst,
        );
        other.join().unwrap();
    }

    /// One execution of a subtree's search: the threads of its steps, what its observation
    /// told the search, and, when it ended its subtree's own part, the root depth of the
    /// subtree that comes next in the order of the whole search (`None`: no subtree).
    struct Ran {
        threads: Vec<usize>,
        observed: Observed,
        next_subtree: Option<Option<usize>>,
    }

    /// Runs `program` once under `schedule`, keeping apart the feedback its observer reads.
    fn run_program(
        program: fn(),
        schedule: Box<dyn crate::runtime::schedule::Schedule + Send>,
    ) -> (
        crate::runtime::Finished,
        Option<Box<dyn std::any::Any + Send>>,
    ) {
        let site = std::panic::Location::caller();
        let mut ex = crate::runtime::run(&program, site, schedule, limits(&Config::default()));
        let feedback = ex.feedback.take();
        (ex, feedback)
    }

    /// What a search observes of the execution `ex`, whose feedback is `feedback`.
    fn outcome_of_run<'a>(
        ex: &'a crate::runtime::Finished,
        feedback: Option<&'a (dyn std::any::Any + Send)>,
    ) -> Outcome<'a> {
        Outcome {
            steps: ex.steps(),
            threads: ex.threads.len(),
            failed: ex.failure.is_some(),
            abandoned: ex.is_abandoned(),
            lock_acquisitions: ex.lock_acquisitions,
            trace: None,
            feedback,
            declarations: None,
            violations: 0,
            cut_short: ex.cut_short(),
        }
    }

    /// Runs the next execution of `search`, if any.
    fn run_next(search: &mut SubtreeSearch, program: fn()) -> Option<Ran> {
        let (ex, feedback) = run_program(program, search.plan()?);
        let threads = ex.events.iter().map(|e| e.thread as usize).collect();
        let observed = search.observe(&outcome_of_run(&ex, feedback.as_deref()));
        Some(Ran {
            threads,
            observed,
            next_subtree: None,
        })
    }

    /// Searches `search` to its end, giving away its subtrees every `every` executions (each
    /// searched the same way), and returns every execution in the order of the whole search:
    /// its own, then what it gave away, the last given first. `after` is the root depth of the
    /// subtree that follows this one in the whole search. Counts the subtrees given away in
    /// `given`.
    fn search_split(
        mut search: SubtreeSearch,
        program: fn(),
        every: usize,
        after: Option<usize>,
        given: &mut usize,
    ) -> Vec<Ran> {
        let mut own = Vec::new();
        let mut children: Vec<SubtreeSearch> = Vec::new();
        while let Some(ran) = run_next(&mut search, program) {
            own.push(ran);
            if own.len() % every == 0 {
                let away = search.give_away();
                *given += away.len();
                children.splice(0..0, away);
            }
        }
        let depths: Vec<usize> = children.iter().map(SubtreeSearch::root_depth).collect();
        if let Some(last) = own.last_mut() {
            last.next_subtree = Some(depths.first().copied().or(after));
        }
        for (at, child) in children.into_iter().enumerate() {
            let after = depths.get(at + 1).copied().or(after);
            own.extend(search_split(child, program, every, after, given));
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
            let serial: Vec<Vec<usize>> = std::iter::from_fn(|| run_next(&mut whole, program))
                .map(|ran| ran.threads)
                .collect();
            assert!(serial.len() > 50, "{} schedules", serial.len());
            for every in [1, 2, 5] {
                let mut given = 0;
                let split = search_split(whole_search(), program, every, None, &mut given);
                assert!(given >= 3, "only {given} subtrees given away");
                let split: Vec<Vec<usize>> = split.into_iter().map(|ran| ran.threads).collect();
                assert_eq!(split, serial, "giving away every {every} executions");
            }
        }
    }

    /// The statistics and warnings of `dfs` after each of the executions of `program` it
    /// plans and observes itself, to the end of its search.
    fn serial_reports(dfs: &Dfs, program: fn()) -> Vec<String> {
        let mut dfs = dfs.clone();
        let mut reports = Vec::new();
        for index in 0.. {
            let Some(schedule) = dfs.plan(index, 0) else {
                break;
            };
            let (ex, feedback) = run_program(program, schedule);
            dfs.observe(index, &outcome_of_run(&ex, feedback.as_deref()));
            reports.push(format!("{:?} {:?}", dfs.stats(), dfs.warnings()));
        }
        reports
    }

    #[test]
    fn the_tally_of_a_split_search_gives_the_statistics_of_the_search_in_one_piece() {
        let searches: [(Dfs, fn()); 3] = [
            (Dfs::new(), writers::<2>),
            (Dfs::bounded(1), writers::<3>),
            (Dfs::new(), wide_drawer),
        ];
        let mut subtree_ends = 0;
        for (dfs, program) in searches {
            let serial = serial_reports(&dfs, program);
            let mut given = 0;
            let split = search_split(dfs.subtree_search().unwrap(), program, 2, None, &mut given);
            assert!(given >= 3, "only {given} subtrees given away");
            assert_eq!(split.len(), serial.len());
            // Every budget: each execution in turn is the last one read.
            let mut tally = SplitTally::default();
            for (ran, serial) in split.iter().zip(&serial) {
                tally.count(ran.observed);
                let mut ended = tally;
                if let Some(next) = ran.next_subtree {
                    ended.next_subtree(next);
                    subtree_ends += usize::from(next.is_some());
                }
                let mut absorbed = dfs.clone();
                absorbed.searched_elsewhere(ended);
                assert_eq!(
                    &format!("{:?} {:?}", absorbed.stats(), absorbed.warnings()),
                    serial,
                    "{}",
                    dfs.spec()
                );
            }
        }
        // Not vacuous: budgets that end a subtree with another one after it, and wide draws.
        assert!(subtree_ends >= 3, "{subtree_ends} budgets end a subtree");
        let wide = serial_reports(&Dfs::new(), wide_drawer);
        assert!(wide.last().unwrap().contains("interleave::rand"));
    }
}
