//! Programs shared by the integration tests and the variable-bounding benchmark.

#[path = "../common/first_exploration.rs"]
mod first_exploration;
pub use first_exploration::first_exploration;

use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{thread, FailureKind, Report};

/// Seed 000's Figure 6 program: thread 1 reads the rarely accessed `a` twice and asserts the
/// reads agree; thread 2 writes `a` once; both also access the benign `b` `benign` times. The
/// bug is (c=1, v=1, t=2): one preemption, right after thread 1's first read of `a`. With
/// `fixed`, thread 1 reads under a lock that thread 2's write takes too.
pub fn corner_variable(benign: u32, fixed: bool) {
    let a = Arc::new(AtomicU64::new(0));
    let b = Arc::new(AtomicU64::new(0));
    let lock = Arc::new(Mutex::new(()));
    let writer = {
        let (a, b, lock) = (a.clone(), b.clone(), lock.clone());
        thread::spawn(move || {
            for _ in 0..benign {
                b.fetch_add(1, Ordering::SeqCst);
            }
            let _guard = fixed.then(|| lock.lock().unwrap());
            a.store(1, Ordering::SeqCst);
        })
    };
    for _ in 0..benign {
        b.fetch_add(1, Ordering::SeqCst);
    }
    let (first, second) = {
        let _guard = fixed.then(|| lock.lock().unwrap());
        (a.load(Ordering::SeqCst), a.load(Ordering::SeqCst))
    };
    assert_eq!(first, second, "the two reads of a must agree");
    writer.join().unwrap();
}

/// The main thread reads `a` twice and asserts the reads agree; the writer counts on an atomic
/// of its own `steps` times and then writes `a`. The fixed twin reads and writes under a lock.
pub fn late_interference(steps: u32, fixed: bool) {
    let a = Arc::new(AtomicU64::new(0));
    let lock = Arc::new(Mutex::new(()));
    let writer = {
        let (a, lock) = (a.clone(), lock.clone());
        thread::spawn(move || {
            let own = AtomicU64::new(0);
            for _ in 0..steps {
                own.fetch_add(1, Ordering::SeqCst);
            }
            let _guard = fixed.then(|| lock.lock().unwrap());
            a.store(1, Ordering::SeqCst);
        })
    };
    let (first, second) = {
        let _guard = fixed.then(|| lock.lock().unwrap());
        (a.load(Ordering::SeqCst), a.load(Ordering::SeqCst))
    };
    assert_eq!(first, second, "the two reads of a must agree");
    writer.join().unwrap();
}

/// A builder that ignores the environment (so `INTERLEAVE_*` variables set for a whole test
/// run cannot change what a test asserts) and runs the strategy `spec`.
pub fn builder(spec: &str) -> interleave::Builder {
    interleave::Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a valid strategy spec"))
}

/// [`late_interference`] with a given number of the writer's own steps, explored as the tests
/// of the samplers that target it (`surw`, `rff`) do.
pub struct LateInterference {
    /// Steps the writer takes before its write.
    pub steps: u32,
}

impl LateInterference {
    /// Explores the program (the fixed twin with `fixed`) under `spec`.
    pub fn explore(
        &self,
        spec: &str,
        seed: u64,
        executions: u64,
        workers: usize,
        fixed: bool,
    ) -> Report {
        let steps = self.steps;
        builder(spec)
            .seed(seed)
            .executions(executions)
            .workers(workers)
            .explore(move || late_interference(steps, fixed))
            .unwrap()
    }

    /// The execution (from 1) at which `spec` first fails with seed `seed`, if within `budget`.
    pub fn executions_to_bug(&self, spec: &str, seed: u64, budget: u64) -> Option<u64> {
        let report = self.explore(spec, seed, budget, 1, false);
        report.first_failure().map(|failure| {
            assert_eq!(failure.kind, FailureKind::Panic, "{spec}: {failure}");
            assert!(failure.message.contains("the two reads of a must agree"));
            failure.execution + 1
        })
    }
}

/// Wraps a strategy and hands every execution's trace to `record` before the wrapped strategy
/// observes it: `None` for an execution it abandoned (`dpor` abandons one whose every runnable
/// thread sleeps, as redundant).
pub struct TraceRecorder<F> {
    pub inner: Box<dyn interleave::strategy::Strategy>,
    pub record: F,
}

impl<F: FnMut(Option<&[interleave::strategy::TraceEvent]>) + Send + 'static>
    interleave::strategy::Strategy for TraceRecorder<F>
{
    fn spec(&self) -> String {
        self.inner.spec()
    }

    fn plan(
        &mut self,
        execution: u64,
        seed: u64,
    ) -> Option<Box<dyn interleave::strategy::Schedule + Send>> {
        self.inner.plan(execution, seed)
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }

    fn round_size(&self) -> usize {
        self.inner.round_size()
    }

    fn observe(&mut self, execution: u64, outcome: &interleave::strategy::Outcome) {
        (self.record)((!outcome.abandoned).then(|| outcome.trace.expect("a trace")));
        self.inner.observe(execution, outcome);
    }

    fn stats(&self) -> Vec<(String, String)> {
        self.inner.stats()
    }
}

/// The happens-before graph of a trace, written independently of the library: each thread's
/// steps, and every ordered pair of steps of different threads on the same object (or both
/// spawning) that are not both loads.
pub fn happens_before(
    trace: &[interleave::strategy::TraceEvent],
) -> std::collections::BTreeSet<String> {
    let mut graph = std::collections::BTreeSet::new();
    let mut position = [0usize; 16];
    let named: Vec<(usize, usize, Option<String>, bool)> = trace
        .iter()
        .map(|e| {
            let at = position[e.thread];
            position[e.thread] += 1;
            let object = e.object.map(|o| o.to_string()).or_else(|| {
                (e.kind == interleave::strategy::OpKind::Spawn).then(|| "spawn".into())
            });
            let read = matches!(
                e.kind,
                interleave::strategy::OpKind::AtomicLoad | interleave::strategy::OpKind::Read
            );
            graph.insert(format!("{}.{at}: {:?} {object:?}", e.thread, e.kind));
            (e.thread, at, object, read)
        })
        .collect();
    for (i, a) in named.iter().enumerate() {
        for b in &named[i + 1..] {
            if a.0 != b.0 && a.2.is_some() && a.2 == b.2 && !(a.3 && b.3) {
                graph.insert(format!("{}.{} -> {}.{}", a.0, a.1, b.0, b.1));
            }
        }
    }
    graph
}

/// Explores `body` with the systematic search `spec` until it has exhausted it, and returns
/// the report, which must be clean.
pub fn exhaust(spec: &str, body: impl Fn() + Sync) -> Report {
    let report = builder(spec).executions(2_000_000).explore(body).unwrap();
    assert!(report.is_ok(), "{spec}: {report}");
    assert_eq!(
        report.stat("covered"),
        Some("the whole search space"),
        "{spec}: {report}"
    );
    report
}

/// The outcomes `spec` reaches on `body`, which returns what it observed, when it exhausts it,
/// and the report.
pub fn outcomes<T: Ord + Send>(
    spec: &str,
    body: impl Fn() -> T + Sync,
) -> (std::collections::BTreeSet<T>, Report) {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let report = exhaust(spec, || {
        let outcome = body();
        seen.lock().unwrap().insert(outcome);
    });
    (seen.into_inner().unwrap(), report)
}
