//! Seed 000 (Bindal, Bansal, Lal: *Variable and Thread Bounding for Systematic Testing of
//! Multithreaded Programs*): the short programs the paper uses to define its bug measures.
//!
//! The paper characterises a bug by **c**, the number of preemptive context switches it needs,
//! **v**, the number of distinct shared variables at which those preemptions happen, and **t**,
//! the number of threads whose relative order matters (threads that must *not* run in a window
//! count too). Figs 1-4 are two-thread programs with (c, v) = (0, 0), (1, 1), (2, 1), (2, 2);
//! Figs 8-10 are three-thread programs with (c, v, t) = (0, 0, 3), (1, 1, 3), (2, 2, 3). Each
//! figure is a handful of statements on globals `a` and `b` (initially 0) and one `ASSERT`.
//!
//! How they were rebuilt: the globals are [`Var`]s (plain racy C-style variables, every access
//! a scheduling point), the figure's threads are spawned by the test body in figure order
//! (except Fig 8, see [`fig8`]) and joined at the end, and `ASSERT` is an `assert!` whose message names the invariant. `a++` is
//! written as a separate read and write (`a.set(a.get() + 1)`), as a C compiler would emit it.
//! The buggy versions race on `a`/`b` by design (run them with `RaceMode::Warn`); their bug kind
//! is the assertion.
//!
//! How the fixed twins differ: the c >= 1 figures state an atomicity assumption (consecutive
//! reads by the checking thread see one value), so the twin runs the checking thread's reads
//! as one critical section of a mutex that also guards every write. The c = 0 figures (1, 8)
//! state an order assumption (the check happens before the updates), which no lock can give,
//! so the twin makes the updating threads wait on a `Gate` that the checking thread opens
//! after its check (plus the mutex for the increments, which race with each other in Fig 8).
//!
//! Choice left open by the paper, made to keep the bugs rare: the figures show only the
//! statements involved in the bug. Here the thread(s) whose access must arrive while the
//! checking thread is inside its window (the writer or the incrementers) first do [`PREP`]
//! steps of unrelated work (increments of a counter of the thread's own), while the
//! checking thread needs only a few steps. A random walk then rarely keeps the window open
//! long enough (its chance shrinks roughly exponentially with `PREP`), whereas PCT needs the
//! same change points as without the work and only pays for the larger step count.
//!
//! PCT depth: in the two-thread figures and in Fig 9 a bug needing c preemptions needs c
//! change points, so depth c + 1 (depth 1, i.e. just the right initial priorities, for c = 0);
//! Fig 10 needs depth 4 (see [`fig10`]).

use super::rt::cell::Var;
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::{unrelated_work, Gate};
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work the late thread(s) do before their first access of `a` or `b`
/// (all figures but Fig 10).
pub const PREP: u32 = 8;

/// The globals of the figures, plus what the fixed twins synchronise with.
struct Globals {
    a: Var<i32>,
    b: Var<i32>,
    /// Guards `a` and `b` in the fixed twins.
    lock: Mutex<()>,
    /// Orders updates after the check in the fixed twins of the c = 0 figures.
    checked: Gate,
}

impl Globals {
    fn new() -> Arc<Self> {
        Arc::new(Globals {
            a: Var::new(0),
            b: Var::new(0),
            lock: Mutex::new(()),
            checked: Gate::new(),
        })
    }

    /// [`PREP`] steps of work that touch neither `a` nor `b`.
    fn prep(&self) {
        unrelated_work(PREP);
    }

    /// `a++` as two accesses (a read, then a write), racy unless the caller holds `lock`.
    fn inc_a(&self) {
        let v = self.a.get();
        self.a.set(v + 1);
    }

    /// `b++`, likewise.
    fn inc_b(&self) {
        let v = self.b.get();
        self.b.set(v + 1);
    }

    /// Runs `f` under `lock` in the fixed twin, unprotected in the buggy version.
    fn guarded<R>(&self, variant: Variant, f: impl FnOnce() -> R) -> R {
        match variant {
            Variant::Buggy => f(),
            Variant::Fixed => {
                let _guard = self.lock.lock().unwrap();
                f()
            }
        }
    }
}

/// Spawns one thread per closure, in order, then joins them all (propagating panics).
///
/// `#[track_caller]`, so the runtime reports the figure function's call as the spawn site.
#[track_caller]
fn run_threads(threads: Vec<Box<dyn FnOnce() + Send + 'static>>) {
    let mut handles = Vec::with_capacity(threads.len());
    for t in threads {
        handles.push(thread::spawn(t));
    }
    for h in handles {
        h.join().unwrap();
    }
}

/// Fig 1, a (c=0, v=0) bug: thread 1 asserts `a == 0`, thread 2 executes `a++`.
///
/// Original: the assertion fails whenever thread 2's increment simply runs before thread 1's
/// check; no preemption is needed. Rebuilt as is, with thread 2 first doing [`PREP`] steps of
/// unrelated work: a random walk then rarely lets thread 2 finish before thread 1's single
/// read, while PCT exposes the bug whenever thread 2's priority is above thread 1's (depth 1
/// suffices; any depth finds it within a few executions). Fixed twin: thread 2 waits for a
/// gate that thread 1 opens after its check.
pub fn fig1(variant: Variant) {
    let g = Globals::new();
    let (g1, g2) = (g.clone(), g.clone());
    run_threads(vec![
        Box::new(move || {
            let a = g1.a.get();
            assert!(
                a == 0,
                "Fig 1: the checker must see the initial value a == 0, saw a == {a}"
            );
            if variant == Variant::Fixed {
                g1.checked.open();
            }
        }),
        Box::new(move || {
            g2.prep();
            if variant == Variant::Fixed {
                g2.checked.wait();
            }
            g2.inc_a();
        }),
    ]);
}

/// Thread 1 of Figs 2 and 3: reads `a` twice (in one critical section in the fixed twin) and
/// asserts both reads agree.
fn reads_of_a_agree(
    g: Arc<Globals>,
    variant: Variant,
    figure: &'static str,
) -> Box<dyn FnOnce() + Send> {
    Box::new(move || {
        let (t1, t2) = g.guarded(variant, || (g.a.get(), g.a.get()));
        assert!(
            t1 == t2,
            "{figure}: two consecutive reads of a must agree, saw {t1} then {t2}"
        );
    })
}

/// Fig 2, a (c=1, v=1) bug: thread 1 reads `a` twice and asserts both reads agree; thread 2
/// executes `a++`.
///
/// Original: one preemption of thread 1 between its two reads, during which thread 2 runs its
/// increment. Rebuilt as is, with thread 2 doing [`PREP`] steps of unrelated work first, so the
/// window must stay open while thread 2 works. PCT depth 2: thread 1 above thread 2, one change
/// point right after thread 1's first read. Fixed twin: thread 1's two reads form one critical
/// section of the mutex that also guards thread 2's increment.
pub fn fig2(variant: Variant) {
    let g = Globals::new();
    let (g1, g2) = (g.clone(), g.clone());
    run_threads(vec![
        reads_of_a_agree(g1, variant, "Fig 2"),
        Box::new(move || {
            g2.prep();
            g2.guarded(variant, || g2.inc_a());
        }),
    ]);
}

/// Fig 3, a (c=2, v=1) bug: thread 1 reads `a` twice and asserts both reads agree; thread 2
/// writes `a = 1` and then `a = 0`.
///
/// Original: thread 2's writes restore the initial value, so one preemption cannot break the
/// assertion: thread 1's first read must fall between the two writes (seeing the transient 1)
/// and its second read after them, i.e. two preemptions, both at accesses of `a`. Rebuilt as
/// is, with thread 2 doing [`PREP`] steps of unrelated work before `a = 1`. PCT depth 3: thread
/// 2 above thread 1, a change point right after `a = 1`, another right after thread 1's first
/// read, the later one giving the lower priority. Fixed twin: thread 1's reads are one critical
/// section; thread 2's writes each take the mutex.
pub fn fig3(variant: Variant) {
    let g = Globals::new();
    let (g1, g2) = (g.clone(), g.clone());
    run_threads(vec![
        reads_of_a_agree(g1, variant, "Fig 3"),
        Box::new(move || {
            g2.prep();
            g2.guarded(variant, || g2.a.set(1));
            g2.guarded(variant, || g2.a.set(0));
        }),
    ]);
}

/// Fig 4, a (c=2, v=2) bug: thread 1 reads `a` twice and `b` once and asserts
/// `t1 == t2 || t3 != 1`; thread 2 writes `a = 1`, `b = 1`, `b = 0`.
///
/// Original: thread 1 must read `a` before and after `a = 1` and read `b` while it holds the
/// transient 1: preempt thread 1 after its first read of `a`, let thread 2 run `a = 1; b = 1`,
/// preempt thread 2 there and let thread 1 finish. Two preemptions, at accesses of two
/// variables. Rebuilt as is, with thread 2 doing [`PREP`] steps of unrelated work before
/// `a = 1`. PCT depth 3: thread 1 above thread 2, change points right after thread 1's first
/// read and right after `b = 1`, the later one giving the lower priority. Fixed twin: thread 1's
/// three reads are one critical section; each of thread 2's writes takes the mutex.
pub fn fig4(variant: Variant) {
    let g = Globals::new();
    let (g1, g2) = (g.clone(), g.clone());
    run_threads(vec![
        Box::new(move || {
            let (t1, t2, t3) = g1.guarded(variant, || (g1.a.get(), g1.a.get(), g1.b.get()));
            assert!(
                t1 == t2 || t3 != 1,
                "Fig 4: if a changed between the two reads of a, b must not be seen at its transient value 1 (a: {t1} then {t2}, b: {t3})"
            );
        }),
        Box::new(move || {
            g2.prep();
            g2.guarded(variant, || g2.a.set(1));
            g2.guarded(variant, || g2.b.set(1));
            g2.guarded(variant, || g2.b.set(0));
        }),
    ]);
}

/// Fig 8, a (c=0, v=0, t=3) bug: threads 1 and 2 each execute `a++`; thread 3 asserts `a != 2`.
///
/// Original: no preemption is needed, but the order of three threads matters: both
/// incrementers must finish before the checker reads. Rebuilt with the checker (thread 3 of
/// the figure) spawned *first* (the paper leaves creation order open; spawned last, running
/// threads in spawn order would expose the bug) and each incrementer doing [`PREP`] steps of
/// unrelated work first, so a random walk must keep the checker waiting through both threads'
/// work. PCT finds it whenever the checker gets the lowest of the three initial priorities
/// (depth 1 suffices). Fixed twin: the incrementers wait for a gate the checker opens after
/// its check, and increment under the mutex (they would race with each other otherwise).
pub fn fig8(variant: Variant) {
    let g = Globals::new();
    let (g1, g2, g3) = (g.clone(), g.clone(), g.clone());
    let incrementer = move |g: Arc<Globals>| {
        g.prep();
        if variant == Variant::Fixed {
            g.checked.wait();
        }
        g.guarded(variant, || g.inc_a());
    };
    run_threads(vec![
        Box::new(move || {
            // Thread 3 of the figure: the checker.
            let a = g3.a.get();
            assert!(
                a != 2,
                "Fig 8: the checker must not observe both increments (a == 2)"
            );
            if variant == Variant::Fixed {
                g3.checked.open();
            }
        }),
        Box::new(move || incrementer(g1)),
        Box::new(move || incrementer(g2)),
    ]);
}

/// Fig 9, a (c=1, v=1, t=3) bug: thread 1 reads `a` twice; threads 2 and 3 each execute `a++`.
///
/// Original: the extracted text of the assertion is garbled (`t1 <= t2 + 1`, which always
/// holds since `a` only grows); the evident intent, and the only reading that gives a (c=1,
/// t=3) bug, is `t2 <= t1 + 1`: "`a` grows by at most one between two reads", broken when
/// thread 1 is preempted once between its reads and *both* other threads increment in that
/// window. Rebuilt with that assertion, and with threads 2 and 3 each doing [`PREP`] steps of
/// unrelated work before their increment. PCT depth 2: thread 1 highest, one change point
/// right after its first read. Fixed twin: thread 1's reads are one critical section; the
/// increments take the mutex.
pub fn fig9(variant: Variant) {
    let g = Globals::new();
    let (g1, g2, g3) = (g.clone(), g.clone(), g.clone());
    run_threads(vec![
        Box::new(move || {
            let (t1, t2) = g1.guarded(variant, || (g1.a.get(), g1.a.get()));
            assert!(
                t2 <= t1 + 1,
                "Fig 9: a must grow by at most one between two consecutive reads, saw {t1} then {t2}"
            );
        }),
        Box::new(move || {
            g2.prep();
            g2.guarded(variant, || g2.inc_a());
        }),
        Box::new(move || {
            g3.prep();
            g3.guarded(variant, || g3.inc_a());
        }),
    ]);
}

/// Fig 10, a (c=2, v=2, t=3) bug: thread 1 reads `a` twice then `b` twice and asserts
/// `t1 == t2 || t3 == t4`; thread 2 executes `a++`, thread 3 `b++`.
///
/// Original: thread 1 is preempted between its reads of `a` (thread 2 increments) and again
/// between its reads of `b` (thread 3 increments); thread 3 must *not* run in the first window,
/// which makes it a three-thread bug. Rebuilt as is, without unrelated work: this bug is
/// already the hardest of the suite for PCT. Although c = 2, PCT needs three change points
/// (depth 4), not two: once thread 1 is demoted after its first read of `a`, both other threads
/// outrank it, so thread 3 would write `b` in the first window unless it is demoted too (at
/// its start or between its read and write of `b`), before thread 1 is demoted a second time
/// after its first read of `b`. The paper's c counts preemptions; PCT's depth counts
/// priority changes, and a thread that must stay out of a window costs one. Verified: depth 3
/// finds nothing in 10 x 20,000 executions. Fixed twin: thread 1's four reads are one critical
/// section; the increments take the mutex.
pub fn fig10(variant: Variant) {
    let g = Globals::new();
    let (g1, g2, g3) = (g.clone(), g.clone(), g.clone());
    run_threads(vec![
        Box::new(move || {
            let (t1, t2, t3, t4) =
                g1.guarded(variant, || (g1.a.get(), g1.a.get(), g1.b.get(), g1.b.get()));
            assert!(
                t1 == t2 || t3 == t4,
                "Fig 10: a and b must not both change within thread 1's read pairs (a: {t1} then {t2}, b: {t3} then {t4})"
            );
        }),
        Box::new(move || g2.guarded(variant, || g2.inc_a())),
        Box::new(move || g3.guarded(variant, || g3.inc_b())),
    ]);
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "bounding-fig1",
        origin: "Bindal et al., Fig 1 (c=0, v=0)",
        bug: BugKind::Assertion,
        summary: "the checker asserts the initial value of `a`, but the worker may increment it first",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: fig1,
    },
    Program {
        name: "bounding-fig2",
        origin: "Bindal et al., Fig 2 (c=1, v=1)",
        bug: BugKind::Assertion,
        summary: "two reads of `a` differ when the other thread's `a++` lands between them",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: fig2,
    },
    Program {
        name: "bounding-fig3",
        origin: "Bindal et al., Fig 3 (c=2, v=1)",
        bug: BugKind::Assertion,
        summary: "two reads of `a` differ when they see the writer's transient `a = 1` and then its `a = 0`",
        found_by: Finding {
            strategy: "icb:c=2,v=1",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: fig3,
    },
    Program {
        name: "bounding-fig4",
        origin: "Bindal et al., Fig 4 (c=2, v=2)",
        bug: BugKind::Assertion,
        summary: "the reads of `a` straddle `a = 1` while the read of `b` sees the transient `b = 1`",
        found_by: Finding {
            strategy: "icb:c=2,v=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: fig4,
    },
    Program {
        name: "bounding-fig8",
        origin: "Bindal et al., Fig 8 (c=0, v=0, t=3)",
        bug: BugKind::Assertion,
        summary: "the checker sees `a == 2` when both incrementing threads run before it",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: fig8,
    },
    Program {
        name: "bounding-fig9",
        origin: "Bindal et al., Fig 9 (c=1, v=1, t=3)",
        bug: BugKind::Assertion,
        summary: "`a` grows by 2 between two reads when both other threads' `a++` land between them",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: fig9,
    },
    Program {
        name: "bounding-fig10",
        origin: "Bindal et al., Fig 10 (c=2, v=2, t=3)",
        bug: BugKind::Assertion,
        summary: "both pairs of reads (of `a`, then of `b`) differ when each is split by another thread's increment",
        found_by: Finding {
            strategy: "icb:c=2,v=2,t=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: fig10,
    },
];
