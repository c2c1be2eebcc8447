//! Seed 002 (Jun Chen, PhD thesis: *Guided Testing of Concurrent Programs Using Value
//! Schedules*): the two Java example programs the thesis uses to motivate value schedules.
//!
//! Java objects with fields are modelled as structs of [`Var`]s (one tracked variable per
//! field, so each field access is one scheduling point and is race-checked), object references
//! that a thread can reassign as a `Var<usize>` indexing a fixed heap of objects, and
//! `synchronized (o) { .. }` blocks as critical sections of a `Mutex<()>` standing for `o`'s
//! monitor. Java's compound assignment `x.val += amt` is a separate read and write.

use super::rt::cell::Var;
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work thread 1 of [`fig1_1`] does before its first statement.
pub const FIG1_1_PREP: u32 = 16;
/// Steps of unrelated work thread 2 of [`fig5_1`] does before its first statement.
pub const FIG5_1_PREP: u32 = 8;

/// An object with one `int val` field.
struct Obj {
    val: Var<i32>,
}

/// The heap of Fig 1.1: objects `A` (initially referenced by `a`), `B` (by `b`) and `C` (by
/// `c`), and the reassignable reference `a`.
struct Heap {
    objs: [Obj; 3],
    /// The reference `a`, as an index into `objs`.
    a: Var<usize>,
    /// The fixed twin's lock (the thesis's program has none).
    lock: Mutex<()>,
}

const OBJ_A: usize = 0;
const OBJ_B: usize = 1;
const OBJ_C: usize = 2;

impl Heap {
    /// `a.val = v`: read the reference `a`, then write the field of the object it names.
    fn set_a_val(&self, v: i32) {
        let obj = self.a.get();
        self.objs[obj].val.set(v);
    }

    /// `a.val`: read the reference, then the field.
    fn a_val(&self) -> i32 {
        let obj = self.a.get();
        self.objs[obj].val.get()
    }
}

/// Fig 1.1, the thesis's introductory example: thread 2 divides by a field it has just set to
/// a non-zero value.
///
/// Original (Java): thread 1 runs `a.val = 0; c.val = 3; a = b; a.val = 0;`, thread 2 runs
/// `a.val = 1; s = a.val; d = 3 / s;`. If thread 1's first write lands between thread 2's
/// write and read, `s` is 0 and thread 2 throws `ArithmeticException` (division by zero). The
/// thesis uses it to show that only three of the 35 interleavings of the seven statements
/// matter (the order of the conflicting accesses to `a.val`), the others being equivalent.
///
/// Rebuilt with `a` a real shared reference (the thesis stresses that `a.val` in thread 1's
/// line 4 is another object because of `a = b`), so thread 2 also divides by zero when it
/// reads `a` after `a = b`: it then reads `b.val`, zeroed by thread 1's line 4. Either way the
/// bug needs thread 2 preempted between its write and its read (PCT depth 2: thread 2 above
/// thread 1, one change point after one of thread 2's first three accesses); a schedule running either
/// thread to completion first never fails. The panic is Rust's own `attempt to divide by
/// zero`, the counterpart of the Java exception (bug kind `Panic`). Choices left open: initial
/// field values are 1 (any non-zero value works), and thread 1 first does [`FIG1_1_PREP`] steps
/// of unrelated work, so a random walk rarely finds thread 2 still inside its short window when
/// thread 1 writes. Fixed twin: each thread runs its statements as one critical section of a
/// lock, so thread 2 always reads back its own 1.
pub fn fig1_1(variant: Variant) {
    let heap = Arc::new(Heap {
        objs: [
            Obj { val: Var::new(1) },
            Obj { val: Var::new(1) },
            Obj { val: Var::new(1) },
        ],
        a: Var::new(OBJ_A),
        lock: Mutex::new(()),
    });
    let fixed = variant == Variant::Fixed;

    let t1 = {
        let h = heap.clone();
        thread::spawn(move || {
            unrelated_work(FIG1_1_PREP);
            let guard = fixed.then(|| h.lock.lock().unwrap());
            h.set_a_val(0); // 1: a.val = 0
            h.objs[OBJ_C].val.set(3); // 2: c.val = 3
            h.a.set(OBJ_B); // 3: a = b
            h.set_a_val(0); // 4: a.val = 0
            drop(guard);
        })
    };
    let t2 = {
        let h = heap.clone();
        thread::spawn(move || {
            let guard = fixed.then(|| h.lock.lock().unwrap());
            h.set_a_val(1); // 1: a.val = 1
            let s = h.a_val(); // 2: s = a.val
            drop(guard);
            let _d = 3 / s; // 3: d = 3 / s (panics with "attempt to divide by zero")
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
}

/// A bank account of Fig 5.1: `val` plus the account's monitor.
struct Account {
    val: Var<i32>,
    monitor: Mutex<()>,
}

/// `Account.amt`, the amount every deposit and withdrawal moves.
const AMT: i32 = 10;

/// Fig 5.1, the thesis's running example: two accounts, a deposit thread and a withdrawal thread
/// that locks the wrong monitor.
///
/// Original (Java): `accX` and `accY` start at 0. Thread 1 runs `synchronized(accX) { accX.val
/// += amt }` then `synchronized(accY) { accY.val += amt }`. Thread 2 runs `synchronized(accY) {
/// accX.val -= amt; if (accY.val < 0) accX.val = 0; }` then `synchronized(accY) { accY.val -=
/// amt }`: its first block should hold `accX`'s monitor (the thesis's comment says "should be
/// accX & accY"). The main thread joins both and asserts `accX.val == accY.val` (both 0 in any
/// serial run). Thread 2's update of `accX.val` races with thread 1's: if both read the old
/// value before either writes, one update is lost and the assertion fails. The branch `accY.val
/// < 0` is never taken (the thesis uses it to show an infeasible conflicting access).
///
/// Rebuilt as is: `+=`/`-=` are a read and a write, so the lost update needs one preemption
/// between a thread's read and write of `accX.val` (PCT depth 2: thread 1 above thread 2, a
/// change point right after thread 1 reads `accX.val`). Choice left open: thread 2 first does
/// [`FIG5_1_PREP`] steps of unrelated work, so a random walk usually lets thread 1 finish its
/// deposit first. Fixed twin: thread 2's first block holds `accX`'s monitor and then `accY`'s
/// (nested, accX first; thread 1 never holds both, so no lock-order cycle), so every access to
/// `accX.val` holds `accX`'s monitor.
pub fn fig5_1(variant: Variant) {
    let acc_x = Arc::new(Account {
        val: Var::new(0),
        monitor: Mutex::new(()),
    });
    let acc_y = Arc::new(Account {
        val: Var::new(0),
        monitor: Mutex::new(()),
    });

    let t1 = {
        let (x, y) = (acc_x.clone(), acc_y.clone());
        thread::spawn(move || {
            {
                let _x = x.monitor.lock().unwrap(); // 2: synchronized(accX)
                let v = x.val.get(); // 3: accX.val += amt
                x.val.set(v + AMT);
            }
            {
                let _y = y.monitor.lock().unwrap(); // 5: synchronized(accY)
                let v = y.val.get(); // 6: accY.val += amt
                y.val.set(v + AMT);
            }
        })
    };
    let t2 = {
        let (x, y) = (acc_x.clone(), acc_y.clone());
        thread::spawn(move || {
            unrelated_work(FIG5_1_PREP);
            {
                // 2: synchronized(accY) -- should be accX & accY
                let _x = (variant == Variant::Fixed).then(|| x.monitor.lock().unwrap());
                let _y = y.monitor.lock().unwrap();
                let v = x.val.get(); // 3: accX.val -= amt
                x.val.set(v - AMT);
                if y.val.get() < 0 {
                    // 4: never true: accY.val >= 0 here
                    x.val.set(0); // 5
                }
            }
            {
                let _y = y.monitor.lock().unwrap(); // 8: synchronized(accY)
                let v = y.val.get(); // 9: accY.val -= amt
                y.val.set(v - AMT);
            }
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    let (x, y) = (acc_x.val.get(), acc_y.val.get());
    assert!(
        x == y,
        "Fig 5.1: after one deposit and one withdrawal on each account, accX.val == accY.val (accX.val = {x}, accY.val = {y})"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "valsched-fig1-1",
        origin: "Chen (value schedules), Fig 1.1 (simple Java example)",
        bug: BugKind::Panic,
        summary: "thread 2 divides by a field it just set to 1, but thread 1 may zero it in between",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: fig1_1,
    },
    Program {
        name: "valsched-fig5-1",
        origin: "Chen (value schedules), Fig 5.1 (sample program, two accounts)",
        bug: BugKind::Assertion,
        summary: "thread 2 updates accX under the monitor of accY, so a concurrent deposit to accX can be lost",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: fig5_1,
    },
];
