//! Trace partitions (TAME, seed 004, section 3.4): which slices of a long trace the analysis
//! solves one at a time.
//!
//! A chunk is one window of items per thread (steps and branch events), items `start..end` of
//! each thread, on top of a *cut*: the items before the windows, which a confirming execution
//! replays exactly as observed. A cut must be replayable, so it is closed under the trace's
//! dependences (`Trace::close_cut`); a window whose start the closure passes shrinks or empties.
//! Within a chunk the initial state of every object is what the cut leaves in it, read off the
//! logged values.
//!
//! - **Distributed** (TAME's contribution): each thread's items, the main thread's from its first
//!   spawn on, are cut into consecutive windows of `window` items, and a chunk combines one
//!   window of every thread; there are `m_1 * ... * m_k` of them for `m_i` windows of thread
//!   `i`. The combinations aligned in time (for the start of every window, the window of each
//!   thread that holds that moment) come first, the rest in lexicographic order, at most
//!   `max_chunks` in all; chunks that closure makes identical are analysed once.
//! - **Global**: consecutive windows of `window` steps of the whole trace (the race-detection
//!   segmentation TAME compares against); the cut is the trace before the window.
//! - **Whole**: one chunk holding the whole trace after the main thread's first spawn.
//!
//! A smaller chunk misses the reorderings across its edges, never adds a false one: every
//! prediction is confirmed by running it.

use rustc_hash::FxHashSet;

use super::model::{Item, Trace};

/// How the analysis slices the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// One chunk: the whole trace.
    Whole,
    /// TAME's distributed partition: per-thread windows of `window` events, every combination
    /// of one window per thread a chunk, at most `max_chunks` combinations examined.
    Distributed {
        /// Events (steps and branch events) per window.
        window: usize,
        /// How many combinations to examine at most, in lexicographic order.
        max_chunks: u64,
    },
    /// Consecutive windows of `window` steps of the global trace.
    Global {
        /// Steps per window.
        window: usize,
    },
}

impl Partition {
    /// The distributed partition with windows of `window` events, at most 10,000 combinations.
    pub fn distributed(window: usize) -> Partition {
        Partition::Distributed {
            window,
            max_chunks: 10_000,
        }
    }
}

/// One chunk: thread `t`'s window is its items `cut[t]..end[t]`; its items before `cut[t]`
/// replay as observed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Chunk {
    pub cut: Vec<u32>,
    pub end: Vec<u32>,
}

impl Chunk {
    /// Whether at least two threads have something to reorder.
    fn is_worth_solving(&self) -> bool {
        self.cut
            .iter()
            .zip(&self.end)
            .filter(|(c, e)| c < e)
            .count()
            >= 2
    }
}

/// The chunks of `trace` under `partition`, and how many combinations the partition has (for
/// the distributed partition, possibly more than were examined).
pub(crate) fn chunks(trace: &Trace, partition: Partition) -> (Vec<Chunk>, u128) {
    let lengths: Vec<u32> = trace.items.iter().map(|i| i.len() as u32).collect();
    let mut starts = vec![0; trace.threads];
    if let Some(main) = starts.first_mut() {
        *main = trace.first_spawn();
    }
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    let mut keep = |mut chunk: Chunk| {
        trace.close_cut(&mut chunk.cut);
        for (end, cut) in chunk.end.iter_mut().zip(&chunk.cut) {
            *end = (*end).max(*cut);
        }
        if chunk.is_worth_solving() && seen.insert(chunk.clone()) {
            out.push(chunk);
        }
    };
    let total = match partition {
        Partition::Whole => {
            keep(Chunk {
                cut: starts.clone(),
                end: lengths.clone(),
            });
            1
        }
        Partition::Global { window } => {
            let window = window.max(1);
            let steps = trace.steps.len();
            let mut count = 0u128;
            let mut begin = 0;
            while begin < steps {
                let finish = (begin + window).min(steps);
                let cut = (0..trace.threads)
                    .map(|t| items_before(trace, t, begin).max(starts[t]))
                    .collect();
                let end = (0..trace.threads)
                    .map(|t| items_before(trace, t, finish).max(starts[t]))
                    .collect();
                keep(Chunk { cut, end });
                count += 1;
                begin = finish;
            }
            count
        }
        Partition::Distributed { window, max_chunks } => {
            let window = window.max(1) as u32;
            let windows: Vec<u32> = (0..trace.threads)
                .map(|t| lengths[t].saturating_sub(starts[t]).div_ceil(window).max(1))
                .collect();
            let total = windows.iter().map(|&m| u128::from(m)).product();
            let mut examined = 0u64;
            let mut examine = |choice: &[u32]| {
                let cut: Vec<u32> = (0..trace.threads)
                    .map(|t| (starts[t] + choice[t] * window).min(lengths[t]))
                    .collect();
                let end = (0..trace.threads)
                    .map(|t| (cut[t] + window).min(lengths[t]))
                    .collect();
                keep(Chunk { cut, end });
                examined += 1;
                examined < max_chunks
            };
            // Time-aligned combinations first: for the start of every window, the window of
            // each thread that holds that moment of the trace.
            let starts_in_time: Vec<Vec<u32>> = (0..trace.threads)
                .map(|t| {
                    (0..windows[t])
                        .map(|j| time_of(trace, t, starts[t] + j * window))
                        .collect()
                })
                .collect();
            let mut anchors: Vec<u32> = starts_in_time.iter().flatten().copied().collect();
            anchors.sort_unstable();
            anchors.dedup();
            let aligned = anchors.iter().all(|&moment| {
                let choice: Vec<u32> = starts_in_time
                    .iter()
                    .map(|times| times.partition_point(|&s| s <= moment).saturating_sub(1) as u32)
                    .collect();
                examine(&choice)
            });
            if aligned {
                let mut choice = vec![0u32; trace.threads];
                while examine(&choice) && advance(&mut choice, &windows) {}
            }
            total
        }
    };
    (out, total)
}

/// The next combination in lexicographic order (the last thread varies fastest).
fn advance(choice: &mut [u32], windows: &[u32]) -> bool {
    for t in (0..choice.len()).rev() {
        choice[t] += 1;
        if choice[t] < windows[t] {
            return true;
        }
        choice[t] = 0;
    }
    false
}

/// When (the index of the first step at or after it) item `position` of `thread` happened.
fn time_of(trace: &Trace, thread: usize, position: u32) -> u32 {
    trace.items[thread][position.min(trace.items[thread].len() as u32) as usize..]
        .iter()
        .find_map(|item| match item {
            Item::Step(s) => Some(*s),
            Item::Branch(_) => None,
        })
        .unwrap_or(trace.steps.len() as u32)
}

/// How many of `thread`'s items come before global step `step`: its earlier steps and the
/// branch events recorded before that step.
fn items_before(trace: &Trace, thread: usize, step: usize) -> u32 {
    let items = &trace.items[thread];
    items.partition_point(|item| match *item {
        Item::Step(s) => (s as usize) < step,
        Item::Branch(b) => {
            let branch = &trace.branches[b as usize];
            // A branch sits right after its thread's previous step.
            trace
                .last_step_before(thread, branch.position)
                .is_none_or(|s| (s as usize) < step)
        }
    }) as u32
}
