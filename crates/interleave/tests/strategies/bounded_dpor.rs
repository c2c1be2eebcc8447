//! Preemption-bounded DPOR (`dpor:c=N`, Coons, Musuvathi and McKinley, OOPSLA 2013) against a
//! brute-force enumeration written here: on small programs of two to four threads with locks,
//! atomics and channels, it reaches exactly the outcomes and happens-before graphs of the
//! schedules with at most `N` preemptions, for N = 0, 1, 2; it finds a bug that needs two
//! preemptions with `c=2` and not with `c=1`; and it exhausts the bounded space in far fewer
//! executions than bounded depth-first search (`dfs:c=N`).

use crate::helpers::{self, happens_before};
use std::any::Any;
use std::collections::BTreeSet;
use std::sync::{Arc as StdArc, Mutex as StdMutex};

use interleave::strategy::{Outcome, Schedule, Strategy, StrategySpec, TraceEvent, View};
use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::{mpsc, Arc, Mutex};
use interleave::{thread, Builder, MemoryModel, Report};

/// What one execution left behind: its trace and the outcome the program returned.
type Observed = (Vec<TraceEvent>, String);

/// The slot a program's outcome is passed through, from the body to the strategy's `observe`.
type Slot = StdArc<StdMutex<Option<String>>>;

/// Every schedule, depth first over the enabled threads (the programs here never yield, so the
/// yield rule of the library's searches never applies), recording each execution's trace,
/// outcome and number of preemptions: switches away from the thread that took the previous
/// step while it was still enabled.
#[derive(Default)]
struct Enumeration {
    prefix: Vec<usize>,
    done: bool,
    slot: Slot,
    runs: StdArc<StdMutex<Vec<(u32, Observed)>>>,
}

/// One execution of [`Enumeration`]: the prefix's choices, then always the first enabled thread.
struct EnumerationSchedule {
    prefix: Vec<usize>,
    /// Per step: the number of enabled threads and the index chosen.
    choices: Vec<(usize, usize)>,
    preemptions: u32,
}

impl Schedule for EnumerationSchedule {
    fn next_thread(&mut self, view: &View<'_>) -> usize {
        let enabled = view.enabled();
        let index = self.prefix.get(self.choices.len()).copied().unwrap_or(0);
        let chosen = enabled[index];
        if let Some(last) = view.last_thread() {
            if last != chosen && enabled.contains(&last) {
                self.preemptions += 1;
            }
        }
        self.choices.push((enabled.len(), index));
        chosen
    }

    fn next_value(&mut self, _bound: u64) -> u64 {
        0
    }

    fn feedback(&mut self) -> Option<Box<dyn Any + Send>> {
        Some(Box::new((
            std::mem::take(&mut self.choices),
            self.preemptions,
        )))
    }
}

impl Strategy for Enumeration {
    fn spec(&self) -> String {
        "enumeration".into()
    }

    fn plan(&mut self, _execution: u64, _seed: u64) -> Option<Box<dyn Schedule + Send>> {
        (!self.done).then(|| {
            Box::new(EnumerationSchedule {
                prefix: self.prefix.clone(),
                choices: Vec::new(),
                preemptions: 0,
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
        let (choices, preemptions) = outcome
            .feedback
            .and_then(|f| f.downcast_ref::<(Vec<(usize, usize)>, u32)>())
            .cloned()
            .expect("the enumeration's feedback");
        self.done = true;
        for step in (0..choices.len()).rev() {
            let (enabled, index) = choices[step];
            if index + 1 < enabled {
                self.prefix = choices[..step].iter().map(|&(_, i)| i).collect();
                self.prefix.push(index + 1);
                self.done = false;
                break;
            }
        }
        let program_outcome = self.slot.lock().unwrap().take().expect("an outcome");
        let trace = outcome.trace.expect("a trace").to_vec();
        self.runs
            .lock()
            .unwrap()
            .push((preemptions, (trace, program_outcome)));
    }
}

/// Explores `body` under sequential consistency (every execution is a schedule) with one
/// worker, passing each execution's outcome to `strategy` through `slot`.
fn explore(strategy: impl Strategy + 'static, slot: &Slot, body: fn() -> String) -> Report {
    let slot = slot.clone();
    Builder::new()
        .ignore_environment()
        .custom_strategy(strategy)
        .memory(MemoryModel::SequentiallyConsistent)
        .workers(1)
        .executions(2_000_000)
        .explore(move || {
            let outcome = body();
            *slot.lock().unwrap() = Some(outcome);
        })
        .unwrap()
}

/// Every schedule of `body`, with its preemptions.
fn enumerate(body: fn() -> String) -> Vec<(u32, Observed)> {
    let slot = Slot::default();
    let runs = StdArc::default();
    let strategy = Enumeration {
        slot: slot.clone(),
        runs: StdArc::clone(&runs),
        ..Enumeration::default()
    };
    let report = explore(strategy, &slot, body);
    assert!(report.is_ok(), "{report}");
    let runs = runs.lock().unwrap().clone();
    runs
}

/// The executions `spec` ran on `body` to exhaust it, and the report.
fn run(spec: &str, body: fn() -> String) -> (Vec<Observed>, Report) {
    let slot = Slot::default();
    let runs: StdArc<StdMutex<Vec<Observed>>> = StdArc::default();
    let strategy = helpers::TraceRecorder {
        inner: spec.parse::<StrategySpec>().expect("a spec").build(),
        record: {
            let (slot, runs) = (slot.clone(), StdArc::clone(&runs));
            move |trace: Option<&[TraceEvent]>| {
                let program_outcome = slot.lock().unwrap().take();
                if let (Some(trace), Some(program_outcome)) = (trace, program_outcome) {
                    runs.lock().unwrap().push((trace.to_vec(), program_outcome));
                }
            }
        },
    };
    let report = explore(strategy, &slot, body);
    let covered = report.stat("covered").unwrap_or_default();
    assert!(
        covered == "the whole search space" || covered.starts_with("every schedule of at most"),
        "{spec}: {covered}"
    );
    let runs = runs.lock().unwrap().clone();
    (runs, report)
}

/// Three threads: two store to `x` and load `y`, the third stores to `y` and loads `x`; the
/// outcome is what each load saw.
fn stores_and_loads() -> String {
    let x = Arc::new(AtomicU64::new(0));
    let y = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (1..=2)
        .map(|id| {
            let (x, y) = (x.clone(), y.clone());
            thread::spawn(move || {
                x.store(id, Ordering::SeqCst);
                y.load(Ordering::SeqCst)
            })
        })
        .collect();
    y.store(1, Ordering::SeqCst);
    let seen_x = x.load(Ordering::SeqCst);
    let seen: Vec<u64> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    format!("{seen_x} {seen:?}")
}

/// Two threads each add twice to a counter and read it; the main thread reads it between
/// the spawns: what every read saw.
fn counter_reads() -> String {
    let counter = Arc::new(AtomicU64::new(0));
    let first = {
        let counter = counter.clone();
        thread::spawn(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            counter.fetch_add(1, Ordering::SeqCst);
            counter.load(Ordering::SeqCst)
        })
    };
    let early = counter.load(Ordering::SeqCst);
    let second = {
        let counter = counter.clone();
        thread::spawn(move || {
            counter.fetch_add(10, Ordering::SeqCst);
            counter.load(Ordering::SeqCst)
        })
    };
    let (a, b) = (first.join().unwrap(), second.join().unwrap());
    format!("{early} {a} {b}")
}

/// Three threads append their number to a locked log, and one of them also stores to a flag
/// outside the lock that the main thread reads: the log's order and the flag seen.
fn locked_log_and_a_flag() -> String {
    let log = Arc::new(Mutex::new(Vec::new()));
    let flag = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (1..=3)
        .map(|id| {
            let (log, flag) = (log.clone(), flag.clone());
            thread::spawn(move || {
                log.lock().unwrap().push(id);
                if id == 2 {
                    flag.store(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let seen = flag.load(Ordering::SeqCst);
    for handle in handles {
        handle.join().unwrap();
    }
    let log = log.lock().unwrap().clone();
    format!("{log:?} {seen}")
}

/// Two senders send a number each and bump a counter; the main thread receives one
/// message, reads the counter, and receives the other: the order of messages and the count
/// seen.
fn channel_and_a_counter() -> String {
    let (tx, rx) = mpsc::channel();
    let sent = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..2)
        .map(|s| {
            let (tx, sent) = (tx.clone(), sent.clone());
            thread::spawn(move || {
                tx.send(s).unwrap();
                sent.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let first = rx.recv().unwrap();
    let seen = sent.load(Ordering::SeqCst);
    let rest = [first, rx.recv().unwrap()];
    for handle in handles {
        handle.join().unwrap();
    }
    format!("{rest:?} {seen}")
}

/// The main thread and one other take a lock to move a value between two atomics while a
/// third reads both atomics without the lock: what everyone saw.
fn lock_and_unlocked_reader() -> String {
    let lock = Arc::new(Mutex::new(()));
    let a = Arc::new(AtomicU64::new(1));
    let b = Arc::new(AtomicU64::new(0));
    let mover = |lock: &Mutex<()>, a: &AtomicU64, b: &AtomicU64| {
        let _guard = lock.lock().unwrap();
        let value = a.swap(0, Ordering::SeqCst);
        b.fetch_add(value, Ordering::SeqCst);
    };
    let other = {
        let (lock, a, b) = (lock.clone(), a.clone(), b.clone());
        thread::spawn(move || mover(&lock, &a, &b))
    };
    let reader = {
        let (a, b) = (a.clone(), b.clone());
        thread::spawn(move || (a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)))
    };
    mover(&lock, &a, &b);
    other.join().unwrap();
    format!("{:?}", reader.join().unwrap())
}

/// A program of the comparison: its name, its body, and whether it uses channels (whose
/// messages `dpor` orders more finely than the same-object graph of [`happens_before`](helpers::happens_before), so
/// only outcomes are compared there).
type Program = (&'static str, fn() -> String, bool);

/// The programs of the comparison.
const PROGRAMS: [Program; 5] = [
    ("stores and loads, 3 threads", stores_and_loads, false),
    ("counter reads, 3 threads", counter_reads, false),
    (
        "locked log and a flag, 4 threads",
        locked_log_and_a_flag,
        false,
    ),
    (
        "channel and a counter, 3 threads",
        channel_and_a_counter,
        true,
    ),
    (
        "lock and an unlocked reader, 3 threads",
        lock_and_unlocked_reader,
        false,
    ),
];

/// `dpor:c=N` reaches exactly the outcomes and happens-before graphs of the schedules with at
/// most `N` preemptions, for N = 0, 1, 2, on programs of three and four threads with atomics,
/// a lock and a channel; and the bound matters on each (N = 0 reaches fewer outcomes than all).
#[test]
fn bounded_dpor_reaches_exactly_what_the_bounded_schedules_reach() {
    for (name, body, channels) in PROGRAMS {
        let all = enumerate(body);
        let everything: BTreeSet<&String> = all.iter().map(|(_, (_, o))| o).collect();
        for bound in 0..=2 {
            let within: Vec<&Observed> = all
                .iter()
                .filter(|(preemptions, _)| *preemptions <= bound)
                .map(|(_, observed)| observed)
                .collect();
            let expected: BTreeSet<&String> = within.iter().map(|(_, o)| o).collect();
            let spec = format!("dpor:c={bound}");
            let (runs, report) = run(&spec, body);
            let reached: BTreeSet<&String> = runs.iter().map(|(_, o)| o).collect();
            println!(
                "{name}, c={bound}: {} of {} outcomes; {} of {} schedules within the bound; \
                 dpor:c={bound} {} executions",
                expected.len(),
                everything.len(),
                within.len(),
                all.len(),
                report.executions
            );
            assert_eq!(reached, expected, "{name}, c={bound}: outcomes");
            if !channels {
                let expected: BTreeSet<_> = within.iter().map(|(t, _)| happens_before(t)).collect();
                let reached: BTreeSet<_> = runs.iter().map(|(t, _)| happens_before(t)).collect();
                assert_eq!(reached, expected, "{name}, c={bound}: graphs");
            }
            if bound == 0 {
                assert!(expected.len() < everything.len(), "{name}: c=0 is no bound");
            }
        }
    }
}

/// One thread stores 1 then 2 to `x`; another reads `x` twice and fails when it sees 1 then
/// 2, which needs the writer preempted between its stores and the reader between its reads.
fn two_preemption_bug() {
    let x = Arc::new(AtomicU64::new(0));
    let writer = {
        let x = x.clone();
        thread::spawn(move || {
            x.store(1, Ordering::SeqCst);
            x.store(2, Ordering::SeqCst);
        })
    };
    let reader = {
        let x = x.clone();
        thread::spawn(move || (x.load(Ordering::SeqCst), x.load(Ordering::SeqCst)))
    };
    writer.join().unwrap();
    let seen = reader.join().unwrap();
    assert_ne!(seen, (1, 2), "saw both stores one by one");
}

/// The bug needing exactly two preemptions: `dpor:c=1` exhausts its bound without it,
/// `dpor:c=2` and unbounded `dpor` find it; `dfs:c=1` agrees that one preemption is not
/// enough.
#[test]
fn bounded_dpor_finds_a_two_preemption_bug_with_two_and_not_one() {
    let explore = |spec: &str| {
        crate::helpers::builder(spec)
            .memory(MemoryModel::SequentiallyConsistent)
            .executions(100_000)
            .explore(two_preemption_bug)
            .unwrap()
    };
    for spec in ["dpor:c=0", "dpor:c=1", "dfs:c=1"] {
        let report = explore(spec);
        assert!(report.is_ok(), "{spec}: {report}");
        let covered = report.stat("covered").unwrap_or_default();
        assert!(covered.starts_with("every schedule of at most"), "{spec}");
    }
    for spec in ["dpor:c=2", "dpor:c=3", "dpor", "dfs:c=2"] {
        let report = explore(spec);
        let failure = report.first_failure().expect("the bug is found");
        assert!(
            failure.message.contains("saw both stores one by one"),
            "{spec}: {failure}"
        );
        println!("{spec}: found at execution {}", failure.execution + 1);
    }
}

/// `n` threads each store to their own atomic and then read the next thread's, a ring of
/// races: many schedules, few traces.
fn ring(n: usize) {
    let cells: Vec<_> = (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (mine, next) = (cells[i].clone(), cells[(i + 1) % n].clone());
            thread::spawn(move || {
                mine.store(1, Ordering::SeqCst);
                next.load(Ordering::SeqCst)
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Executions to exhaust the bounded space: `dpor:c=N` needs far fewer than `dfs:c=N` (at most
/// a third) on rings of 3 and 4 threads and the locked log, for N = 1, 2, 3.
#[test]
fn bounded_dpor_exhausts_in_far_fewer_executions_than_bounded_dfs() {
    let exhaust = |spec: &str, body: fn()| {
        let report = crate::helpers::builder(spec)
            .memory(MemoryModel::SequentiallyConsistent)
            .executions(2_000_000)
            .explore(body)
            .unwrap();
        assert!(report.is_ok(), "{spec}: {report}");
        let covered = report.stat("covered").unwrap_or_default();
        assert!(covered.starts_with("every schedule of at most"), "{spec}");
        report.executions
    };
    let programs: [(&str, fn()); 3] = [
        ("ring of 3", || ring(3)),
        ("ring of 4", || ring(4)),
        ("locked log, 4 threads", || {
            locked_log_and_a_flag();
        }),
    ];
    for (name, body) in programs {
        for bound in 1..=3 {
            let dpor = exhaust(&format!("dpor:c={bound}"), body);
            let dfs = exhaust(&format!("dfs:c={bound}"), body);
            // For the record: unbounded `dpor` (sleep sets make it cheaper on programs this
            // small) and `icb`, exact only for two-thread orders.
            let others = ["dpor".to_string(), format!("icb:c={bound},v=all")].map(|spec| {
                crate::helpers::builder(&spec)
                    .memory(MemoryModel::SequentiallyConsistent)
                    .executions(2_000_000)
                    .explore(body)
                    .unwrap()
                    .executions
            });
            println!(
                "{name}, c={bound}: dpor:c={bound} {dpor}, dfs:c={bound} {dfs}, dpor {}, \
                 icb:c={bound},v=all {}",
                others[0], others[1]
            );
            assert!(dpor * 3 <= dfs, "{name}, c={bound}: dpor {dpor}, dfs {dfs}");
        }
    }
}

/// `spinners` threads (the main thread among them) spin with `yield_now` on a flag that one
/// more thread raises after publishing a value; the outcome is what each spinner read.
fn spin_wait(spinners: usize) -> String {
    use interleave::sync::atomic::AtomicBool;
    let ready = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicU64::new(0));
    let spin = |ready: &AtomicBool, data: &AtomicU64| {
        while !ready.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        data.load(Ordering::SeqCst)
    };
    let mut spinners: Vec<_> = (1..spinners)
        .map(|_| {
            let (ready, data) = (ready.clone(), data.clone());
            thread::spawn(move || spin(&ready, &data))
        })
        .collect();
    let publisher = {
        let (ready, data) = (ready.clone(), data.clone());
        thread::spawn(move || {
            data.store(1, Ordering::SeqCst);
            ready.store(true, Ordering::SeqCst);
            0
        })
    };
    let mine = spin(&ready, &data);
    spinners.push(publisher);
    let theirs: Vec<u64> = spinners.into_iter().map(|h| h.join().unwrap()).collect();
    format!("{mine} {theirs:?}")
}

/// Two threads take a test-and-set spin lock, yielding while it is taken, to append to a log:
/// the log's order.
fn spin_lock() -> String {
    use interleave::sync::atomic::AtomicBool;
    let locked = Arc::new(AtomicBool::new(false));
    let log = Arc::new(AtomicU64::new(0));
    let append = |id: u64, locked: &AtomicBool, log: &AtomicU64| {
        while locked.swap(true, Ordering::SeqCst) {
            thread::yield_now();
        }
        let before = log.load(Ordering::SeqCst);
        log.store(before * 10 + id, Ordering::SeqCst);
        locked.store(false, Ordering::SeqCst);
    };
    let worker = {
        let (locked, log) = (locked.clone(), log.clone());
        thread::spawn(move || append(2, &locked, &log))
    };
    append(1, &locked, &log);
    worker.join().unwrap();
    format!("{}", log.load(Ordering::SeqCst))
}

/// A program and its name.
type Named = (&'static str, fn() -> String);

/// With yields, where the enumeration of this file does not apply (the yield rule decides
/// which threads may run), `dpor:c=N` reaches exactly the outcomes and happens-before graphs
/// of `dfs:c=N`, which runs every schedule of at most `N` preemptions that the rule allows,
/// for N = 0, 1, 2.
#[test]
fn bounded_dpor_reaches_what_bounded_dfs_reaches_on_spin_loops() {
    let programs: [Named; 3] = [
        ("spin-wait, 2 threads", || spin_wait(1)),
        ("spin-wait, 3 threads", || spin_wait(2)),
        ("spin lock, 2 threads", spin_lock),
    ];
    for (name, body) in programs {
        for bound in 0..=2 {
            let (dfs, _) = run(&format!("dfs:c={bound}"), body);
            let (dpor, _) = run(&format!("dpor:c={bound}"), body);
            let outcomes = |runs: &[Observed]| -> BTreeSet<String> {
                runs.iter().map(|(_, o)| o.clone()).collect()
            };
            let graphs = |runs: &[Observed]| -> BTreeSet<BTreeSet<String>> {
                runs.iter().map(|(t, _)| happens_before(t)).collect()
            };
            println!(
                "{name}, c={bound}: dfs {} executions, {} graphs; dpor {} executions",
                dfs.len(),
                graphs(&dfs).len(),
                dpor.len()
            );
            assert_eq!(outcomes(&dpor), outcomes(&dfs), "{name}, c={bound}");
            assert_eq!(graphs(&dpor), graphs(&dfs), "{name}, c={bound}");
        }
    }
}
