//! Systematic strategies against a brute-force enumeration. Iterative context bounding with
//! variable and thread bounding (seed 000, Algorithm 1) finds bugs at the `(c, v, t)` they need,
//! runs exactly the schedules its rules allow, and its happens-before pruning loses no graph;
//! `dfs` runs every schedule; `dpor` reaches every happens-before graph with fewer; delay
//! bounding runs each schedule with at most `d` delays once.

use crate::helpers;

use helpers::{corner_variable, happens_before};
use std::any::Any;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use interleave::cell::Var;
use interleave::strategy::{OpKind, Outcome, Schedule, Strategy, StrategySpec, TraceEvent, View};
use interleave::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, MemoryModel, RaceMode, Report};

/// Three threads wait at a gate and then log their number; the bug is the log `[1, 3, 2]`,
/// an order of three threads that neither the forward nor the reverse order gives (t = 3).
fn three_thread_order() {
    let gate = Arc::new(Mutex::new(()));
    let log = Arc::new(Mutex::new(Vec::new()));
    let closed = gate.lock().unwrap();
    let threads: Vec<_> = (1..=3)
        .map(|id| {
            let (gate, log) = (gate.clone(), log.clone());
            thread::spawn(move || {
                drop(gate.lock().unwrap());
                log.lock().unwrap().push(id);
            })
        })
        .collect();
    drop(closed);
    for t in threads {
        t.join().unwrap();
    }
    assert_ne!(
        *log.lock().unwrap(),
        [1, 3, 2],
        "thread 3 overtook thread 2"
    );
}

/// Three threads over three atomics: small enough to enumerate every schedule.
fn three_variables() {
    let x = Arc::new(AtomicU64::new(0));
    let y = Arc::new(AtomicU64::new(0));
    let z = Arc::new(AtomicU64::new(0));
    let first = {
        let (x, y, z) = (x.clone(), y.clone(), z.clone());
        thread::spawn(move || {
            x.store(1, Ordering::SeqCst);
            let seen = y.load(Ordering::SeqCst);
            z.store(seen, Ordering::SeqCst);
        })
    };
    let second = {
        let (x, y, z) = (x.clone(), y.clone(), z.clone());
        thread::spawn(move || {
            y.store(1, Ordering::SeqCst);
            let seen = x.load(Ordering::SeqCst);
            z.fetch_add(seen, Ordering::SeqCst);
        })
    };
    first.join().unwrap();
    second.join().unwrap();
}

/// Three threads increment one counter under a lock and a second one without.
fn locked_and_unlocked_counters() {
    let locked = Arc::new(Mutex::new(0));
    let unlocked = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (locked, unlocked) = (locked.clone(), unlocked.clone());
            thread::spawn(move || {
                *locked.lock().unwrap() += 1;
                unlocked.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    *locked.lock().unwrap() += 1;
    for t in threads {
        t.join().unwrap();
    }
}

/// Two threads increment a counter inside one lock's critical sections (their read and write
/// are ordered by the lock, which lockset pruning relies on) while the main thread reads it
/// without the lock.
fn guarded_counter() {
    let lock = Arc::new(Mutex::new(()));
    let counter = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (lock, counter) = (lock.clone(), counter.clone());
            thread::spawn(move || {
                let _guard = lock.lock().unwrap();
                let seen = counter.load(Ordering::SeqCst);
                counter.store(seen + 1, Ordering::SeqCst);
            })
        })
        .collect();
    let _ = counter.load(Ordering::SeqCst);
    for t in threads {
        t.join().unwrap();
    }
}

fn explore(spec: &str, body: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(100_000)
        .explore(body)
        .unwrap()
}

fn stat<'a>(report: &'a Report, key: &str) -> &'a str {
    let value = report.stat(key);
    value.unwrap_or_else(|| panic!("no statistic {key:?}: {report}"))
}

#[test]
fn finds_the_corner_variable_bug_at_its_bounds_and_covers_the_fixed_twin() {
    for spec in ["icb:c=2,v=1", "icb:c=2,v=2", "icb:c=2,v=all"] {
        let report = explore(spec, || corner_variable(20, false));
        let failure = report.first_failure().expect("the bug is found");
        assert!(failure.message.contains("the two reads of a must agree"));
        assert_eq!(stat(&report, "(c, v, t)"), "(1, 1, 2)", "{spec}");

        let report = explore(spec, || corner_variable(20, true));
        assert!(report.first_failure().is_none(), "{spec}");
        assert!(
            stat(&report, "covered").starts_with("all schedules with c <= 2 preemptions"),
            "{spec}: {:?}",
            report.strategy_stats
        );
    }
    // Variable bounding ranks the rarely accessed `a` before the benign `b`, and reaches the
    // bug sooner than plain preemption bounding, which preempts at every access in order.
    let bounded = explore("icb:c=2,v=1", || corner_variable(20, false));
    let plain = explore("icb:c=2,v=all", || corner_variable(200, false));
    assert!(bounded.executions < plain.executions);
}

#[test]
fn a_three_thread_order_needs_random_orders() {
    let two = explore("icb:c=0,v=0", three_thread_order);
    assert!(two.first_failure().is_none());
    assert_eq!(two.executions, 2, "forward and reverse");

    let three = explore("icb:c=0,v=0,t=3", three_thread_order);
    assert!(three.first_failure().is_some());
    assert_eq!(stat(&three, "(c, v, t)"), "(0, 0, 3)");
}

/// A brute-force enumeration of every schedule: depth-first over the enabled threads at every
/// step, recording each step's enabled set and trace.
#[derive(Default)]
struct Exhaustive {
    /// The choice (index into the enabled set) at each step of the next execution's prefix.
    prefix: Vec<usize>,
    done: bool,
    runs: std::sync::Arc<StdMutex<Vec<Run>>>,
}

/// One brute-force execution.
#[derive(Clone, Debug)]
struct Run {
    enabled: Vec<Vec<usize>>,
    choices: Vec<usize>,
    trace: Vec<TraceEvent>,
}

struct ExhaustiveSchedule {
    prefix: Vec<usize>,
    enabled: Vec<Vec<usize>>,
    choices: Vec<usize>,
}

impl Schedule for ExhaustiveSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let step = self.enabled.len();
        let choice = self.prefix.get(step).copied().unwrap_or(0);
        self.enabled.push(view.enabled().to_vec());
        self.choices.push(choice);
        view.enabled()[choice]
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new((
            std::mem::take(&mut self.enabled),
            std::mem::take(&mut self.choices),
        )))
    }
}

impl Strategy for Exhaustive {
    fn spec(&self) -> String {
        "exhaustive".into()
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        (!self.done).then(|| {
            Box::new(ExhaustiveSchedule {
                prefix: self.prefix.clone(),
                enabled: Vec::new(),
                choices: Vec::new(),
            }) as Box<dyn Schedule + Send>
        })
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }

    fn round_size(&self) -> usize {
        1
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        let (enabled, choices) = outcome
            .feedback
            .and_then(|f| f.downcast_ref::<(Vec<Vec<usize>>, Vec<usize>)>())
            .cloned()
            .expect("feedback");
        // Backtrack: the deepest step with an untried alternative.
        self.done = true;
        for step in (0..choices.len()).rev() {
            if choices[step] + 1 < enabled[step].len() {
                self.prefix = choices[..step].to_vec();
                self.prefix.push(choices[step] + 1);
                self.done = false;
                break;
            }
        }
        self.runs.lock().unwrap().push(Run {
            enabled,
            choices,
            trace: outcome.trace.expect("trace").to_vec(),
        });
    }
}

fn traces(spec: &str, body: fn()) -> (Vec<Vec<TraceEvent>>, Report) {
    let traces = std::sync::Arc::new(StdMutex::new(Vec::new()));
    let strategy = helpers::TraceRecorder {
        inner: spec.parse::<StrategySpec>().unwrap().build(),
        record: {
            let traces = traces.clone();
            move |trace: Option<&[TraceEvent]>| {
                traces.lock().unwrap().extend(trace.map(<[_]>::to_vec))
            }
        },
    };
    let report = Builder::new()
        .ignore_environment()
        .custom_strategy(strategy)
        .executions(1_000_000)
        .explore(body)
        .unwrap();
    let covered = stat(&report, "covered");
    assert!(
        covered.starts_with("all schedules")
            || covered.starts_with("every schedule of at most")
            || covered == "the whole search space"
            || covered == "every value schedule of the known access pairs",
        "{covered}"
    );
    let traces = traces.lock().unwrap().clone();
    (traces, report)
}

fn exhaustive_runs(body: fn()) -> Vec<Run> {
    let runs = std::sync::Arc::new(StdMutex::new(Vec::new()));
    let report = Builder::new()
        .ignore_environment()
        .custom_strategy(Exhaustive {
            runs: runs.clone(),
            ..Exhaustive::default()
        })
        .executions(1_000_000)
        .explore(body)
        .unwrap();
    assert!(report.failures.is_empty());
    let runs = runs.lock().unwrap().clone();
    runs
}

fn threads_of(trace: &[TraceEvent]) -> Vec<usize> {
    trace.iter().map(|e| e.thread).collect()
}

/// Whether strict priority scheduling under `order` with at most `c` preemptions, each right
/// after a thread's first step or an access of a variable, at most `v` distinct variables,
/// produces `run`: the rules of seed 000's Algorithm 1 and section 5, checked step by step.
fn allowed(run: &Run, reverse: bool, c: usize, v: usize) -> bool {
    let mut priority: Vec<i64> = (0..16)
        .map(|t| if reverse { t as i64 } else { -(t as i64) } + 1000)
        .collect();
    let (mut lowest, mut preemptions) = (0, 0);
    let mut variables = BTreeSet::new();
    for step in 0..run.choices.len() {
        let enabled = &run.enabled[step];
        let chosen = enabled[run.choices[step]];
        let best = |priority: &[i64]| *enabled.iter().max_by_key(|&&t| priority[t]).unwrap();
        if best(&priority) == chosen {
            continue;
        }
        let Some(previous) = step.checked_sub(1).map(|s| &run.trace[s]) else {
            return false;
        };
        let point =
            previous.kind == interleave::strategy::OpKind::Start || previous.object.is_some();
        if previous.thread != best(&priority) || !point || preemptions == c {
            return false;
        }
        preemptions += 1;
        if let Some(object) = previous.object {
            variables.insert(object.to_string());
        }
        if variables.len() > v {
            return false;
        }
        lowest -= 1;
        priority[previous.thread] = lowest;
        if best(&priority) != chosen {
            return false;
        }
    }
    true
}

#[test]
fn runs_exactly_the_schedules_the_bounds_allow() {
    let all = exhaustive_runs(three_variables);
    assert!(all.len() > 100, "{} schedules", all.len());
    for (c, v) in [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2)] {
        let expected: BTreeSet<Vec<usize>> = all
            .iter()
            .filter(|run| allowed(run, false, c, v) || allowed(run, true, c, v))
            .map(|run| threads_of(&run.trace))
            .collect();
        let (traces, _) = traces(&format!("icb:c={c},v={v},prune=0"), three_variables);
        let ran: BTreeSet<Vec<usize>> = traces.iter().map(|t| threads_of(t)).collect();
        println!("c={c}, v={v}: {} of {} schedules", ran.len(), all.len());
        assert_eq!(ran, expected, "c={c}, v={v}");
        assert!(expected.len() < all.len());
    }
}

#[test]
fn pruning_never_drops_a_happens_before_graph() {
    let mut pruned_somewhere = false;
    for body in [three_variables as fn(), locked_and_unlocked_counters] {
        for spec in ["icb:c=2,v=1", "icb:c=2,v=all"] {
            let graphs = |spec: &str| -> (BTreeSet<BTreeSet<String>>, usize, Report) {
                let (traces, report) = traces(spec, body);
                let graphs = traces.iter().map(|t| happens_before(t)).collect();
                (graphs, traces.len(), report)
            };
            let (with, runs_with, report) = graphs(spec);
            let (without, runs_without, _) = graphs(&format!("{spec},prune=0"));
            assert_eq!(with, without, "{spec}");
            assert!(runs_with <= runs_without);
            let pruned: u64 = stat(&report, "pruned").parse().unwrap();
            assert_eq!(runs_without - runs_with, pruned as usize, "{spec}");
            println!("{spec}: {runs_with} runs, {pruned} pruned");
            pruned_somewhere |= pruned > 0;
        }
    }
    assert!(pruned_somewhere, "pruning never fired");
}

/// A waiter and a notifier on a condition variable, with a flag under the mutex.
fn condvar_handshake() {
    let pair = Arc::new((Mutex::new(false), interleave::sync::Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        thread::spawn(move || {
            *pair.0.lock().unwrap() = true;
            pair.1.notify_one();
        })
    };
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    drop(ready);
    notifier.join().unwrap();
}

#[test]
fn dfs_runs_every_schedule() {
    let all: BTreeSet<Vec<usize>> = exhaustive_runs(three_variables)
        .iter()
        .map(|run| threads_of(&run.trace))
        .collect();
    let (traces, report) = traces("dfs", three_variables);
    let ran: BTreeSet<Vec<usize>> = traces.iter().map(|t| threads_of(t)).collect();
    assert_eq!(ran, all);
    assert_eq!(report.executions as usize, all.len(), "each schedule once");
}

/// The delays the round-robin scheduler of `delay` needs to produce `run`, computed from the
/// definition: at each step, the enabled threads it passes over on its way, cyclically in
/// creation order, from the thread that ran last (or the first enabled one after it, when that
/// one cannot run) to the one chosen. The program must not yield.
fn delays(run: &Run) -> usize {
    let mut total = 0;
    let mut last = 0;
    for (enabled, &choice) in run.enabled.iter().zip(&run.choices) {
        let start = enabled.iter().position(|&t| t >= last).unwrap_or(0);
        total += (choice + enabled.len() - start) % enabled.len();
        last = enabled[choice];
    }
    total
}

#[test]
fn delay_bounding_runs_exactly_the_schedules_with_at_most_d_delays() {
    for body in [three_variables as fn(), locked_and_unlocked_counters] {
        let all = exhaustive_runs(body);
        for d in 0..=4 {
            let expected: BTreeSet<Vec<usize>> = all
                .iter()
                .filter(|run| delays(run) <= d)
                .map(|run| threads_of(&run.trace))
                .collect();
            let (traces, report) = traces(&format!("delay:d={d}"), body);
            let ran: BTreeSet<Vec<usize>> = traces.iter().map(|t| threads_of(t)).collect();
            println!("d={d}: {} of {} schedules", ran.len(), all.len());
            assert_eq!(ran, expected, "d={d}");
            assert_eq!(report.executions as usize, ran.len(), "each schedule once");
        }
        // Enough delays reach every schedule, each once.
        let (traces, _) = traces("delay:d=1000", body);
        let ran: BTreeSet<Vec<usize>> = traces.iter().map(|t| threads_of(t)).collect();
        let every: BTreeSet<Vec<usize>> = all.iter().map(|run| threads_of(&run.trace)).collect();
        assert_eq!(ran, every);
        assert_eq!(traces.len(), all.len());
    }
}

#[test]
fn delay_bounding_finds_the_corner_variable_bug_with_one_delay_and_covers_the_fixed_twin() {
    let report = explore("delay:d=2", || corner_variable(20, false));
    let failure = report.first_failure().expect("the bug is found");
    assert!(failure.message.contains("the two reads of a must agree"));
    assert_eq!(stat(&report, "bug found with delays"), "1");
    println!(
        "found in schedule {}",
        stat(&report, "schedules explored until the bug")
    );

    let report = explore("delay:d=2", || corner_variable(20, true));
    assert!(report.first_failure().is_none());
    assert_eq!(
        stat(&report, "covered"),
        "all schedules with at most 2 delays (under the yield rule, every draw 0)"
    );
    println!("fixed twin: {} schedules", report.executions);
}

#[test]
fn dpor_reaches_every_happens_before_graph_with_fewer_schedules() {
    for body in [
        three_variables as fn(),
        locked_and_unlocked_counters,
        condvar_handshake,
    ] {
        let all: Vec<Run> = exhaustive_runs(body);
        let expected: BTreeSet<BTreeSet<String>> =
            all.iter().map(|run| happens_before(&run.trace)).collect();
        let (traces, _) = traces("dpor", body);
        let reached: BTreeSet<BTreeSet<String>> =
            traces.iter().map(|t| happens_before(t)).collect();
        assert_eq!(reached, expected);
        println!(
            "dpor: {} schedules for {} graphs; all schedules: {}",
            traces.len(),
            expected.len(),
            all.len()
        );
        assert!(traces.len() < all.len());
    }
}

#[test]
fn dfs_and_dpor_find_the_bug_and_exhaust_the_fixed_twin() {
    for spec in ["dfs", "dpor"] {
        let report = explore(spec, || corner_variable(2, false));
        assert!(report.first_failure().is_some(), "{spec}");
        let report = explore(spec, || corner_variable(2, true));
        assert!(report.first_failure().is_none(), "{spec}");
        assert_eq!(stat(&report, "covered"), "the whole search space", "{spec}");
    }
}

#[test]
fn the_state_count_is_the_number_of_distinct_happens_before_prefixes() {
    let expected: BTreeSet<BTreeSet<String>> = exhaustive_runs(three_variables)
        .iter()
        .flat_map(|run| (0..=run.trace.len()).map(|n| happens_before(&run.trace[..n])))
        .collect();
    let count = |spec: &str| {
        helpers::builder(spec)
            .executions(100_000)
            .count_states(true)
            .explore(three_variables)
            .unwrap()
            .states
            .expect("counted")
    };
    assert_eq!(count("dfs"), expected.len() as u64);
    // DPOR runs fewer schedules, and so passes through fewer intermediate states.
    assert!(count("dpor") < count("dfs"));
    let report = Builder::new()
        .ignore_environment()
        .executions(10)
        .explore(three_variables)
        .unwrap();
    assert_eq!(report.states, None, "off unless asked");
}

/// The value schedule of a run (seed 002, Definition 5.1): each thread's accesses, and the
/// order of every two conflicting accesses of different threads: a read or write and a write
/// of one variable, two acquisitions of one lock (a woken waiter re-acquires its mutex), a wait
/// and a notify of one condition variable.
fn value_schedule(trace: &[TraceEvent]) -> BTreeSet<String> {
    use interleave::strategy::{OpKind, TraceTarget};
    let mut schedule = BTreeSet::new();
    let mut position = [0usize; 16];
    let accesses: Vec<(usize, usize, String, char)> = trace
        .iter()
        .filter_map(|e| {
            let at = position[e.thread];
            position[e.thread] += 1;
            let (object, class) = match (e.kind, e.target) {
                (OpKind::Wake, Some(TraceTarget::Object(mutex))) => (mutex, 'L'),
                (OpKind::Lock | OpKind::WriteLock | OpKind::ReadLock, _) => (e.object?, 'L'),
                (OpKind::Wait, _) => (e.object?, 'W'),
                (OpKind::NotifyOne | OpKind::NotifyAll, _) => (e.object?, 'N'),
                (OpKind::AtomicLoad | OpKind::Read, _) => (e.object?, 'r'),
                (OpKind::AtomicStore | OpKind::AtomicRmw | OpKind::Write | OpKind::Update, _) => {
                    (e.object?, 'w')
                }
                _ => return None,
            };
            schedule.insert(format!("{}.{at}: {class} {object}", e.thread));
            Some((e.thread, at, object.to_string(), class))
        })
        .collect();
    let conflict = |a: char, b: char| {
        matches!(
            (a, b),
            ('r', 'w') | ('w', 'r') | ('w', 'w') | ('L', 'L') | ('W', 'N') | ('N', 'W')
        )
    };
    for (i, a) in accesses.iter().enumerate() {
        for b in &accesses[i + 1..] {
            if a.0 != b.0 && a.2 == b.2 && conflict(a.3, b.3) {
                schedule.insert(format!("{}.{} -> {}.{}", a.0, a.1, b.0, b.1));
            }
        }
    }
    schedule
}

/// A lost notification: the notifier may signal before the waiter waits (it waits without
/// checking a flag), and the waiter then waits forever. Small enough for brute force.
fn lost_notify() {
    let pair = Arc::new((Mutex::new(()), interleave::sync::Condvar::new()));
    let notifier = {
        let pair = pair.clone();
        thread::spawn(move || {
            let _guard = pair.0.lock().unwrap();
            pair.1.notify_one();
        })
    };
    let guard = pair.0.lock().unwrap();
    drop(pair.1.wait(guard).unwrap());
    notifier.join().unwrap();
}

#[test]
fn value_schedules_reach_every_value_schedule_of_exhaustive_search() {
    for body in [
        three_variables as fn(),
        locked_and_unlocked_counters,
        condvar_handshake,
        guarded_counter,
    ] {
        let all = exhaustive_runs(body);
        let expected: BTreeSet<BTreeSet<String>> =
            all.iter().map(|run| value_schedule(&run.trace)).collect();
        let (traces, report) = traces("vs:profile=0", body);
        assert!(traces.len() < 5_000, "{} schedules", traces.len());
        let reached: BTreeSet<BTreeSet<String>> = traces
            .iter()
            .filter(|t| t.last().is_some_and(|e| e.thread == 0))
            .map(|t| value_schedule(t))
            .collect();
        let missing: Vec<_> = expected.difference(&reached).collect();
        assert!(
            missing.is_empty(),
            "{} missing: {missing:#?}",
            missing.len()
        );
        println!(
            "vs: {} schedules for {} value schedules; exhaustive {}; {:?}",
            traces.len(),
            expected.len(),
            all.len(),
            report.strategy_stats
        );
    }
}

#[test]
fn value_schedules_find_a_lost_notification_and_count_abandoned_interleavings() {
    let report = explore("vs:profile=0", lost_notify);
    let failure = report.first_failure().expect("the lost notification");
    assert_eq!(failure.kind, interleave::FailureKind::Deadlock);

    // The writer of `b` only writes when it reads `a` before the main thread's write; the
    // ordered pair "the write of b before the read of b" then cannot be fulfilled.
    let report = explore("vs:profile=0", || {
        let a = Arc::new(AtomicU64::new(0));
        let b = Arc::new(AtomicU64::new(0));
        let writer = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                if a.load(Ordering::SeqCst) == 0 {
                    b.store(1, Ordering::SeqCst);
                }
            })
        };
        a.store(1, Ordering::SeqCst);
        let _ = b.load(Ordering::SeqCst);
        writer.join().unwrap();
    });
    assert!(report.first_failure().is_none());
    let abandoned: u64 = stat(&report, "abandoned").parse().unwrap();
    assert!(abandoned >= 1, "{:?}", report.strategy_stats);
    assert_eq!(
        stat(&report, "covered"),
        "every value schedule of the known access pairs"
    );
}

/// A spin-wait of `spinners` threads (the main thread and `spinners - 1` spawned ones, so
/// `spinners + 1` threads in all) for a flag that a releaser, spawned last, raises once it has
/// published a value; each spinner then reads the value. With `buggy` the releaser raises the
/// flag first, so a spinner can read the value before it is published. `spin_loop` spins with
/// `hint::spin_loop` instead of `thread::yield_now`.
fn spin_wait(spinners: usize, buggy: bool, spin_loop: bool) {
    let ready = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicU64::new(0));
    let spin = move |ready: &AtomicBool, data: &AtomicU64| {
        while !ready.load(Ordering::Acquire) {
            if spin_loop {
                interleave::hint::spin_loop();
            } else {
                thread::yield_now();
            }
        }
        assert_eq!(
            data.load(Ordering::Relaxed),
            1,
            "read before it was published"
        );
    };
    let mut threads: Vec<_> = (1..spinners)
        .map(|_| {
            let (ready, data) = (ready.clone(), data.clone());
            thread::spawn(move || spin(&ready, &data))
        })
        .collect();
    threads.push({
        let (ready, data) = (ready.clone(), data.clone());
        thread::spawn(move || {
            if buggy {
                ready.store(true, Ordering::Release);
                data.store(1, Ordering::Relaxed);
            } else {
                data.store(1, Ordering::Relaxed);
                ready.store(true, Ordering::Release);
            }
        })
    });
    spin(&ready, &data);
    for t in threads {
        t.join()
            .unwrap_or_else(|_| panic!("a spinner read before it was published"));
    }
}

/// Explores with a step bound far below the default, so a spin loop the search lets run on is
/// reported at once rather than after 100,000 steps.
fn explore_spinning(spec: &str, memory: MemoryModel, body: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .memory(memory)
        .executions(100_000)
        .max_steps(500)
        .explore(body)
        .unwrap()
}

/// Under the yield rule a spinning thread waits until the threads it yielded to have taken a
/// step, so the search tree of a correct spin-wait is finite: both searches finish and report
/// nothing, and still find the buggy twin. The execution counts are upper bounds with a little
/// room over the measured ones. Sequentially consistent (2 and 3 threads): dfs 16 and 10,020,
/// dpor 6 and 250, the same with `spin_loop` (since a thread's start step ends no wait under
/// the searches' yield rule; before that, dfs 21 and 22,154, dpor 12 and 1,695, and 21 and
/// 8,611 before source and sleep sets); before the rule neither finished, and with 3 threads
/// the first execution already ran into the step bound. Under the weak memory model, where a
/// spinner's load may also read the flag's older store, 2 threads take dfs 26 and dpor 10
/// executions (before the start-step change 34 and 20; 3 threads are too slow for the suite,
/// see the peers crate's exhaustion table).
#[test]
fn dfs_and_dpor_exhaust_spin_waits_and_find_the_buggy_twin() {
    use MemoryModel::{SequentiallyConsistent, Weak};
    let cases = [
        ("dfs", SequentiallyConsistent, [20, 12_000]),
        ("dpor", SequentiallyConsistent, [8, 300]),
        ("dfs", Weak, [30, 0]),
        ("dpor", Weak, [12, 0]),
    ];
    for (spec, memory, bounds) in cases {
        for (spinners, bound) in [(1, bounds[0]), (2, bounds[1])] {
            if bound == 0 {
                continue;
            }
            for spin_loop in [false, true] {
                let what = format!(
                    "{spec} ({memory:?}), {} threads, spin_loop {spin_loop}",
                    spinners + 1
                );
                let report =
                    explore_spinning(spec, memory, || spin_wait(spinners, false, spin_loop));
                assert!(report.first_failure().is_none(), "{what}: {report}");
                assert_eq!(stat(&report, "covered"), "the whole search space", "{what}");
                println!("{what}: {} executions", report.executions);
                assert!(report.executions <= bound, "{what}: {}", report.executions);

                let report =
                    explore_spinning(spec, memory, || spin_wait(spinners, true, spin_loop));
                let failure = report.first_failure().expect("the buggy twin fails");
                assert!(
                    failure.message.contains("read before it was published"),
                    "{what}: {failure}"
                );
            }
        }
    }
}

/// Two threads take a test-and-set spin lock (yielding while it is taken) to add to a counter.
fn spin_lock() {
    let locked = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let worker = {
        let (locked, count) = (locked.clone(), count.clone());
        thread::spawn(move || {
            while locked.swap(true, Ordering::Acquire) {
                thread::yield_now();
            }
            count.fetch_add(1, Ordering::Relaxed);
            locked.store(false, Ordering::Release);
        })
    };
    while locked.swap(true, Ordering::Acquire) {
        thread::yield_now();
    }
    count.fetch_add(1, Ordering::Relaxed);
    locked.store(false, Ordering::Release);
    worker.join().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 2);
}

/// The main thread retries `try_lock` with a yield until it gets the mutex a worker also takes.
fn try_lock_retry() {
    let data = Arc::new(Mutex::new(0));
    let worker = {
        let data = data.clone();
        thread::spawn(move || *data.lock().unwrap() += 1)
    };
    loop {
        if let Ok(mut guard) = data.try_lock() {
            *guard += 1;
            break;
        }
        thread::yield_now();
    }
    worker.join().unwrap();
    assert_eq!(*data.lock().unwrap(), 2);
}

/// DPOR under the yield rule reaches every happens-before graph that plain depth-first search
/// under the same rule reaches. A yield is ordered against the other threads' adjacent steps
/// (which step ends the yielding thread's wait depends on that order); without that, DPOR
/// missed the graphs with the most spin iterations.
#[test]
fn dpor_reaches_every_graph_of_dfs_on_spin_waits() {
    let programs: [(&str, fn()); 4] = [
        ("spin_wait, 2 threads", || spin_wait(1, false, false)),
        ("spin_wait, 3 threads", || spin_wait(2, false, false)),
        ("spin_lock", spin_lock),
        ("try_lock_retry", try_lock_retry),
    ];
    for (name, body) in programs {
        let graphs = |spec: &str| {
            let (traces, _) = traces(spec, body);
            let graphs: BTreeSet<BTreeSet<String>> =
                traces.iter().map(|t| happens_before(t)).collect();
            (graphs, traces.len())
        };
        let (all, dfs) = graphs("dfs");
        let (reached, dpor) = graphs("dpor");
        assert_eq!(reached, all, "{name}");
        println!(
            "{name}: {} graphs, dfs {dfs} executions, dpor {dpor}",
            all.len()
        );
    }
}

/// A worker adds 1 under a mutex, takes one more step, then adds 2 if `try_lock` gets the mutex
/// and 6 if not, then adds 3 under the mutex; another thread doubles the value under the mutex
/// after a `yield_now`. The value lives in a std mutex, so the yield is the doubler's only
/// scheduling point between its lock and its unlock. The results: 6, 7, 9 and 12 when the
/// doubling falls before, between or after the additions with `try_lock` succeeding, 11 and 17
/// when it holds the mutex at the `try_lock`.
fn double_between_additions() -> usize {
    let lock = Arc::new(Mutex::new(()));
    let step = Arc::new(AtomicBool::new(false));
    let value = Arc::new(StdMutex::new(0usize));
    let adder = {
        let (lock, step, value) = (lock.clone(), step.clone(), value.clone());
        thread::spawn(move || {
            {
                let _held = lock.lock().unwrap();
                *value.lock().unwrap() += 1;
            }
            step.store(true, Ordering::SeqCst);
            let add = if lock.try_lock().is_ok() { 2 } else { 6 };
            *value.lock().unwrap() += add;
            let _held = lock.lock().unwrap();
            *value.lock().unwrap() += 3;
        })
    };
    let doubler = {
        let (lock, value) = (lock.clone(), value.clone());
        thread::spawn(move || {
            let _held = lock.lock().unwrap();
            thread::yield_now();
            *value.lock().unwrap() *= 2;
        })
    };
    adder.join().unwrap();
    doubler.join().unwrap();
    let result = *value.lock().unwrap();
    result
}

/// The yield rule lets a yielder go on once the threads that could run have stepped, whatever
/// the threads blocked at the yield (here the main thread, in a `join`) do: `dfs` and `dpor`
/// reach the 7, which needs the doubler to unlock after the adder's one step and before its
/// `try_lock`. (The rule used to wait for the blocked main thread too, and both missed it.)
#[test]
fn a_thread_blocked_at_a_yield_does_not_hold_the_yielder_back() {
    for spec in ["dfs", "dpor"] {
        let seen = StdMutex::new(BTreeSet::new());
        let report = helpers::builder(spec)
            .executions(10_000)
            .explore(|| {
                let result = double_between_additions();
                seen.lock().unwrap().insert(result);
            })
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(stat(&report, "covered"), "the whole search space", "{spec}");
        assert_eq!(
            seen.into_inner().unwrap(),
            BTreeSet::from([6, 7, 9, 11, 12, 17]),
            "{spec}"
        );
    }
}

/// A worker adds one to a total, with a racy load and store when `rand` picks slot 2 of 4 and
/// the draw of a bool says true (with `buggy`), and with `fetch_add` otherwise; the main
/// thread adds one too.
fn value_dependent(buggy: bool) {
    let slot = interleave::rand::random_range(0..4);
    let racy = interleave::rand::random_bool();
    let total = Arc::new(AtomicU64::new(0));
    let worker = {
        let total = total.clone();
        thread::spawn(move || {
            if buggy && slot == 2 && racy {
                let seen = total.load(Ordering::SeqCst);
                total.store(seen + 1, Ordering::SeqCst);
            } else {
                total.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    total.fetch_add(1, Ordering::SeqCst);
    worker.join().unwrap();
    assert_eq!(total.load(Ordering::SeqCst), 2, "an addition was lost");
}

/// Systematic search enumerates `interleave::rand` values: a bug that needs slot 2 and `true`
/// is found, its token replays the values, and the fixed twin is covered exhaustively.
#[test]
fn dfs_and_dpor_enumerate_random_values() {
    for spec in ["dfs", "dpor"] {
        let report = explore(spec, || value_dependent(true));
        let failure = report.first_failure().expect("the value-dependent bug");
        assert!(failure.message.contains("an addition was lost"), "{spec}");
        println!("{spec}: bug found in execution {}", failure.execution);
        let replayed = Builder::new()
            .ignore_environment()
            .replay(&failure.token, || value_dependent(true))
            .unwrap();
        let again = replayed
            .first_failure()
            .expect("the token replays the values");
        assert_eq!(again.token, failure.token, "{spec}");

        let report = explore(spec, || value_dependent(false));
        assert!(report.first_failure().is_none(), "{spec}");
        assert_eq!(stat(&report, "covered"), "the whole search space", "{spec}");
        assert!(report.warnings.is_empty(), "{spec}: {:?}", report.warnings);
        println!("{spec}: fixed twin in {} executions", report.executions);
        // Eight value combinations, each with at least the one schedule.
        assert!(report.executions >= 8, "{spec}");
    }
}

/// A draw wider than the enumeration cap tries its smallest and largest values: a bug at the
/// top of the range is found, and a clean run says the search was not exhaustive.
#[test]
fn wide_draws_are_sampled_at_both_ends_and_said_to_be() {
    for spec in ["dfs", "dpor"] {
        let report = explore(spec, || {
            assert_ne!(interleave::rand::random_range(0..1000), 999, "the largest");
        });
        let failure = report
            .first_failure()
            .expect("the top of the range is tried");
        assert!(failure.message.contains("the largest"), "{spec}");

        let report = explore(spec, || {
            let _ = interleave::rand::random_range(0..1000);
        });
        assert!(report.first_failure().is_none());
        assert_eq!(report.executions, 32, "{spec}");
        assert!(
            stat(&report, "covered").ends_with("not exhaustive"),
            "{spec}: {:?}",
            report.strategy_stats
        );
        assert_eq!(report.warnings.len(), 1, "{spec}: {:?}", report.warnings);
    }
}

/// Everything a report says that could depend on how the workers split the search.
fn everything(report: &Report) -> String {
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("#{} {}\n{f}", f.execution, f.token))
        .collect();
    format!(
        "executions {} steps {} states {:?}\nstats {:?}\nwarnings {:?}\n{}",
        report.executions,
        report.steps,
        report.states,
        report.strategy_stats,
        report.warnings,
        failures.join("\n")
    )
}

/// A search of a program: its spec, the program, the budget, and whether it stops at the first
/// failure.
type Case = (&'static str, fn(), u64, bool);

#[test]
fn dfs_split_among_workers_reports_what_one_worker_reports() {
    // Exhaustive searches, exhaustive to the first failure, and budgets far below the tree.
    let cases: [Case; 8] = [
        ("dfs", three_variables, 1_000_000, false),
        ("dfs:yields=2", spin_lock, 1_000_000, false),
        ("dfs:c=1", three_variables, 1_000_000, false),
        ("dfs", three_variables, 40, false),
        ("dfs:c=1", three_thread_order, 1_000_000, false),
        ("dfs:c=2", three_thread_order, 1_000_000, true),
        ("dfs", three_thread_order, 300, false),
        ("dfs", three_thread_order, 3_000, true),
    ];
    let mut failing = 0;
    for (spec, body, budget, stop) in cases {
        let reports: Vec<(usize, Report)> = [1, 2, 3, 7]
            .into_iter()
            .map(|workers| {
                let report = helpers::first_exploration(|| {
                    helpers::builder(spec)
                        .workers(workers)
                        .executions(budget)
                        .stop_on_first_failure(stop)
                        .count_states(true)
                        .explore(body)
                        .unwrap()
                });
                (workers, report)
            })
            .collect();
        let one = everything(&reports[0].1);
        for (workers, report) in &reports[1..] {
            assert_eq!(
                one,
                everything(report),
                "{spec} with a budget of {budget}: {workers} workers differ from 1"
            );
        }
        failing += usize::from(!reports[0].1.failures.is_empty());
    }
    // Not vacuous: the three-thread order fails in every search of it.
    assert!(failing >= 4, "only {failing} explorations failed");
}

/// Two threads take two locks; in the buggy version in opposite orders. Round robin switches
/// threads after every step, so each thread holds its first lock when the other asks for it.
fn two_locks(same_order: bool) {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let other = {
        let (a, b) = (a.clone(), b.clone());
        thread::spawn(move || {
            if same_order {
                let _a = a.lock().unwrap();
                *b.lock().unwrap() += 1;
            } else {
                let _b = b.lock().unwrap();
                *a.lock().unwrap() += 1;
            }
        })
    };
    {
        let _a = a.lock().unwrap();
        *b.lock().unwrap() += 1;
    }
    other.join().unwrap();
}

#[test]
fn round_robin_deadlocks_a_lock_order_inversion_in_its_first_execution_only_if_there_is_one() {
    let report = helpers::builder("rr")
        .executions(10)
        .explore(|| two_locks(false))
        .unwrap();
    let failure = report.first_failure().expect("round robin deadlocks");
    assert_eq!(failure.kind, interleave::FailureKind::Deadlock);
    assert_eq!(failure.execution, 0);
    // Depth-first search's first schedule runs each thread until it blocks: no deadlock.
    let first_dfs = helpers::builder("dfs")
        .executions(1)
        .explore(|| two_locks(false))
        .unwrap();
    assert!(first_dfs.is_ok(), "{first_dfs}");
    let fixed = helpers::builder("rr")
        .executions(100)
        .explore(|| two_locks(true))
        .unwrap();
    assert!(fixed.is_ok(), "{fixed}");
}

/// The yield rule keeps a spin loop's tree finite: a thread that yields waits until the others
/// have stepped. So a bug that needs the yielder to run on first (here: a worker that has not
/// started by the time the main thread, after one yield, looks) is outside what `dfs` and
/// `dpor` search, and their reports say so next to their coverage; `dfs:yields=2`, which lets a
/// thread run on past one yield, finds it. Without a yield, no such line.
#[test]
fn a_search_says_when_the_yield_rule_left_schedules_out() {
    let looks_after = |yields: bool| {
        move || {
            let flag = Arc::new(AtomicBool::new(false));
            let setter = {
                let flag = flag.clone();
                thread::spawn(move || flag.store(true, Ordering::SeqCst))
            };
            if yields {
                thread::yield_now();
            }
            let seen = flag.load(Ordering::SeqCst);
            setter.join().unwrap();
            seen
        }
    };
    let explore = |spec: &str, yields: bool| {
        helpers::builder(spec)
            .executions(1_000)
            .explore(move || assert!(looks_after(yields)(), "the worker has not run"))
            .unwrap()
    };
    for spec in ["dfs", "dpor"] {
        let report = explore(spec, true);
        assert!(report.is_ok(), "{spec}: {report}");
        assert_eq!(report.stat("covered"), Some("the whole search space"));
        let rule = report.stat("yield rule").unwrap_or_default();
        assert!(rule.contains("were not searched"), "{spec}: {report}");
        let unyielding = explore(spec, false);
        assert!(!unyielding.is_ok(), "{spec}: {unyielding}");
        assert_eq!(unyielding.stat("yield rule"), None, "{spec}: {unyielding}");
    }
    assert!(!explore("dfs:yields=2", true).is_ok());
}

/// Counters a destructor checks: every slot claimed has been filled. Between the two steps a
/// thread holds its reference, so no real run drops the last one between them; only a thread
/// unwound in the middle of its operation would.
struct Slots {
    claimed: AtomicU64,
    filled: AtomicU64,
}

/// Set when a `Slots` was dropped with a slot claimed but not filled.
static TORN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Drop for Slots {
    fn drop(&mut self) {
        if self.claimed.get_mut() != self.filled.get_mut() {
            TORN.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Three threads each claim a slot, look at it and fill it.
fn claim_then_fill() {
    let slots = Arc::new(Slots {
        claimed: AtomicU64::new(0),
        filled: AtomicU64::new(0),
    });
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let slots = slots.clone();
            thread::spawn(move || {
                slots.claimed.fetch_add(1, Ordering::Relaxed);
                slots.filled.load(Ordering::Relaxed);
                slots.filled.fetch_add(1, Ordering::Release);
            })
        })
        .collect();
    drop(slots);
    for worker in workers {
        worker.join().unwrap();
    }
}

/// Runs the main thread while it can and then the newest enabled thread, and gives the
/// execution up (`ABANDON`) at step `at`.
struct AbandonAt {
    at: u64,
}

impl Schedule for AbandonAt {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        if view.step() == self.at {
            return interleave::strategy::ABANDON;
        }
        match view.enabled() {
            [0, ..] => 0,
            enabled => *enabled.last().expect("a thread can run"),
        }
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }
}

/// One execution under [`AbandonAt`]; remembers whether the strategy saw it abandoned and
/// how many steps it was shown.
struct AbandonOnce {
    at: u64,
    planned: bool,
    seen: std::sync::Arc<StdMutex<Option<(bool, u64)>>>,
}

impl Strategy for AbandonOnce {
    fn spec(&self) -> String {
        "abandon-once".into()
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        let first = !std::mem::replace(&mut self.planned, true);
        first.then(|| Box::new(AbandonAt { at: self.at }) as Box<dyn Schedule + Send>)
    }

    fn observe(&mut self, _execution: u64, outcome: &Outcome) {
        *self.seen.lock().unwrap() = Some((outcome.abandoned, outcome.steps));
    }
}

#[test]
fn an_abandoned_execution_runs_to_its_end_instead_of_unwinding_threads_mid_operation() {
    // Steps 0-3: the main thread starts, spawns the workers and drops its reference; step 4:
    // it waits to join the first one, and the last one starts; step 5: it claims its slot.
    // The schedule gives up before the worker looks at the slot. Unwound there, the workers
    // dropped the last reference with a slot claimed and not filled.
    let seen = std::sync::Arc::new(StdMutex::new(None));
    let report = Builder::new()
        .ignore_environment()
        .custom_strategy(AbandonOnce {
            at: 6,
            planned: false,
            seen: seen.clone(),
        })
        .explore(claim_then_fill)
        .unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(
        *seen.lock().unwrap(),
        Some((true, 6)),
        "the strategy sees the execution abandoned, with the steps before it gave up only"
    );
    assert!(
        !TORN.load(std::sync::atomic::Ordering::Relaxed),
        "the worker was unwound between its claim and its fill"
    );
}

/// Two threads each add one to a counter kept in a `Var`, under a lock; with `split`, each
/// releases the lock between its read and its write, so an addition can be lost. Every access
/// is under the lock, so neither twin has a data race.
fn var_counter(split: bool) {
    let lock = Arc::new(Mutex::new(()));
    let counter = Arc::new(Var::new(0u64));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (lock, counter) = (lock.clone(), counter.clone());
            thread::spawn(move || {
                let mut guard = lock.lock().unwrap();
                let seen = counter.get();
                if split {
                    drop(guard);
                    guard = lock.lock().unwrap();
                }
                counter.set(seen + 1);
                drop(guard);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(counter.get(), 2, "an addition was lost");
}

#[test]
fn exhaustive_searches_never_switch_just_before_a_plain_access_yet_reach_every_graph() {
    let body: fn() = || var_counter(false);
    let all = exhaustive_runs(body);
    let graphs: BTreeSet<BTreeSet<String>> =
        all.iter().map(|run| happens_before(&run.trace)).collect();
    let mut dfs_schedules = 0;
    for spec in ["dfs", "dpor", "dfs:c=1", "dpor:c=1"] {
        let (traces, _) = traces(spec, body);
        if spec == "dfs" {
            dfs_schedules = traces.len();
        }
        let reached: BTreeSet<BTreeSet<String>> =
            traces.iter().map(|t| happens_before(t)).collect();
        assert_eq!(reached, graphs, "{spec}");
        // No schedule that switches away from a thread just before its access runs.
        for trace in &traces {
            for pair in trace.windows(2) {
                let plain = matches!(pair[1].kind, OpKind::Read | OpKind::Write);
                assert!(
                    !plain || pair[0].thread == pair[1].thread,
                    "{spec} switched just before a plain access: {trace:?}"
                );
            }
        }
        println!("{spec}: {} schedules of {}", traces.len(), all.len());
    }
    assert!(dfs_schedules < all.len());

    // A race that only warns leaves the accesses as scheduling points: `dfs` runs every
    // schedule.
    let report = helpers::builder("dfs")
        .data_races(RaceMode::Warn)
        .executions(100_000)
        .explore(body)
        .unwrap();
    assert_eq!(report.executions as usize, all.len());

    // The twin that loses an addition fails within one preemption, and the correct one passes
    // every schedule of the bound.
    for spec in ["dfs:c=1", "dpor:c=1"] {
        let report = explore(spec, || var_counter(true));
        let failure = report.first_failure().expect("the lost addition is found");
        assert!(failure.message.contains("an addition was lost"), "{spec}");
        let report = explore(spec, || var_counter(false));
        assert!(report.first_failure().is_none(), "{spec}");
        assert_eq!(
            stat(&report, "covered"),
            "every schedule of at most 1 preemption",
            "{spec}"
        );
    }
}

/// The main thread spins on a flag, yielding or not (then the step bound stops every schedule
/// that runs it first), while a worker raises the flag.
fn spin_on_a_flag(yielding: bool) {
    let flag = Arc::new(AtomicBool::new(false));
    let worker = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(true, Ordering::Release))
    };
    while !flag.load(Ordering::Acquire) {
        if yielding {
            thread::yield_now();
        }
    }
    worker.join().unwrap();
}

/// An execution that a failure stops before every thread has finished shows `dpor` none of
/// the steps those threads had left, so it reverses none of their races: going on after such
/// failures, it must not claim to have covered the search space (it used to, after the one
/// execution that spun into the step bound, whose worker never ran). The same program with a
/// yield in its loop is covered.
#[test]
fn dpor_claims_no_coverage_after_an_execution_a_failure_cut_short() {
    for spec in ["dpor", "dpor:c=2"] {
        let explore = |yielding| {
            helpers::builder(spec)
                .executions(1_000)
                .max_steps(100)
                .stop_on_first_failure(false)
                .explore(move || spin_on_a_flag(yielding))
                .unwrap()
        };
        let report = explore(false);
        let covered = stat(&report, "covered");
        assert!(
            covered.starts_with("not exhaustive: a failure stopped execution 0"),
            "{spec}: {report}"
        );
        let report = explore(true);
        assert!(report.is_ok(), "{spec}: {report}");
        assert!(
            !stat(&report, "covered").starts_with("not exhaustive"),
            "{spec}: {report}"
        );
    }
}
