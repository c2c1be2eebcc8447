//! Seed 001 (Cai, Yang: *Radius-aware Probabilistic Testing of Deadlocks with Guarantees*):
//! the two deadlocks the paper uses to explain PCT and to motivate the bug radius.
//!
//! The paper describes both programs as per-thread lists of lock events at numbered sites
//! (`sNN acq x` / `sNN rel x`). Each lock here is a `Mutex` holding a small piece of state that
//! the critical sections update, so the locks guard something, and every site of the paper is a
//! commented line (`// s01 acq m`). Releases are explicit `drop`s of the guards, in the order of
//! the paper's sites. A deadlock is reported by the runtime when every live thread is blocked.

use super::rt::sync::atomic::AtomicU64;
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work t2 of d1 does before its first acquisition (see [`d1`]).
pub const D1_PREP: u32 = 8;
/// Steps of unrelated work t1 of d2 does between releasing `n` (s05) and taking `p` (s06).
pub const D2_WORK: u32 = 4;

/// Deadlock d1: two threads, two locks `m` and `n`, taken in opposite orders.
///
/// Original (sites s01-s08): thread t1 runs `s01 acq m, s02 acq n, s03 rel n, s04 rel m`;
/// thread t2 runs `s05 acq n, s06 acq m, s07 rel m, s08 rel n`. The deadlock needs two ordering
/// constraints (s01 before s06 and s05 before s02), so PCT needs depth 2: the thread with the
/// higher priority must be preempted right after its first acquisition (the paper shows both
/// symmetric ways).
///
/// Rebuilt with the locks guarding two counters (t1 moves one unit from `m`'s counter to
/// `n`'s, t2 moves one back; the test body checks the total). Choice left open: t2 first does
/// [`D1_PREP`] steps of unrelated work (the paper's program has "other" events besides the lock
/// events). A random walk then usually lets t1 take both locks before t2 arrives, while PCT
/// still deadlocks with t1 above t2 and one change point right after s01 (the other symmetric
/// way, t2 above t1 with a change point after s05, also remains). Fixed twin: t2 takes the
/// locks in t1's order (m, then n), so the lock order is acyclic and no schedule deadlocks.
pub fn d1(variant: Variant) {
    let m = Arc::new(Mutex::new(10i64));
    let n = Arc::new(Mutex::new(10i64));
    let progress = Arc::new(AtomicU64::new(0));

    let t1 = {
        let (m, n) = (m.clone(), n.clone());
        thread::spawn(move || {
            let mut gm = m.lock().unwrap(); // s01 acq m
            let mut gn = n.lock().unwrap(); // s02 acq n
            *gm -= 1;
            *gn += 1;
            drop(gn); // s03 rel n
            drop(gm); // s04 rel m
        })
    };
    let t2 = {
        let (m, n, progress) = (m.clone(), n.clone(), progress.clone());
        thread::spawn(move || match variant {
            Variant::Buggy => {
                unrelated_work(&progress, D1_PREP);
                let mut gn = n.lock().unwrap(); // s05 acq n
                let mut gm = m.lock().unwrap(); // s06 acq m
                *gn -= 1;
                *gm += 1;
                drop(gm); // s07 rel m
                drop(gn); // s08 rel n
            }
            Variant::Fixed => {
                unrelated_work(&progress, D1_PREP);
                let mut gm = m.lock().unwrap(); // s06 acq m, moved first
                let mut gn = n.lock().unwrap(); // s05 acq n
                *gn -= 1;
                *gm += 1;
                drop(gn); // s08 rel n
                drop(gm); // s07 rel m
            }
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    let total = *m.lock().unwrap() + *n.lock().unwrap();
    assert_eq!(
        total, 20,
        "d1: transfers between m and n must preserve the total"
    );
}

/// State guarded by the locks of deadlock d2 (the lock names are the paper's).
struct Jdbc {
    /// `k`: a short-lived lock taken first by t1 (in the connector: the statement's own lock).
    k: Mutex<u32>,
    /// `s`: the session/connection lock; t1 holds it for its whole operation.
    s: Mutex<u32>,
    /// `n`: the network I/O lock.
    n: Mutex<u32>,
    /// `p`: the prepared-statement / protocol lock.
    p: Mutex<u32>,
    /// `m`: the metadata lock, taken by t1 between `p` and `n`.
    m: Mutex<u32>,
    /// Counts t1's unrelated work between s05 and s06.
    progress: AtomicU64,
}

/// Deadlock d2, adapted by the paper from a JDBC connector deadlock: locks `k, s, n, p, m`.
///
/// Original (sites s01-s18): t1 runs `s01 acq k, s02 rel k, s03 acq s, s04 acq n, s05 rel n,
/// s06 acq p, s07 acq m, s08 acq n, s09 rel n, s10 rel m, s11 rel p, s12 rel s`; t2 runs
/// `s13 acq s, s14 rel s, s15 acq n, s16 acq p, s17 rel p, s18 rel n`. The deadlock is on `p`
/// and `n` (t1 holds p from s06 and wants n at s08; t2 holds n from s15 and wants p at s16),
/// but it needs four ordering constraints: s06 before s16 and s15 before s08 (the deadlock
/// itself), plus s14 before s03 (t2 must get through `s` before t1 takes it for its whole
/// operation) and s05 before s15 (t1 must be done with its first use of `n`). With PCT it
/// needs depth 3 (the paper's point: depth 2, set up from the two deadlock edges alone, never
/// triggers it): t2 above t1, a change point right after s14, a lower one after s06 or s07;
/// t2 then takes `n` and blocks on `p`, and t1 blocks on `n`.
///
/// Rebuilt as is, keeping all eighteen sites; each critical section updates the counter its
/// lock guards. Choice left open: t1 does [`D2_WORK`] steps of unrelated work between s05 and
/// s06 (the connector does work between its uses of the locks; the paper notes the real program
/// has many events unrelated to the deadlock). That widens the stretch in which a random walk
/// lets t2 take `n` and `p` early, while PCT's change points are unchanged. Fixed twin: t2 takes
/// `p` before `n` (s16 moved before s15), matching t1's order p -> n; the lock-order graph
/// (s -> n, s -> p -> m -> n, p -> n) is then acyclic, so no schedule deadlocks.
pub fn d2(variant: Variant) {
    let j = Arc::new(Jdbc {
        k: Mutex::new(0),
        s: Mutex::new(0),
        n: Mutex::new(0),
        p: Mutex::new(0),
        m: Mutex::new(0),
        progress: AtomicU64::new(0),
    });

    let t1 = {
        let j = j.clone();
        thread::spawn(move || {
            let mut gk = j.k.lock().unwrap(); // s01 acq k
            *gk += 1;
            drop(gk); // s02 rel k
            let mut gs = j.s.lock().unwrap(); // s03 acq s
            *gs += 1;
            let mut gn = j.n.lock().unwrap(); // s04 acq n
            *gn += 1;
            drop(gn); // s05 rel n
            unrelated_work(&j.progress, D2_WORK);
            let mut gp = j.p.lock().unwrap(); // s06 acq p
            *gp += 1;
            let mut gm = j.m.lock().unwrap(); // s07 acq m
            *gm += 1;
            let mut gn = j.n.lock().unwrap(); // s08 acq n
            *gn += 1;
            drop(gn); // s09 rel n
            drop(gm); // s10 rel m
            drop(gp); // s11 rel p
            drop(gs); // s12 rel s
        })
    };
    let t2 = {
        let j = j.clone();
        thread::spawn(move || {
            let mut gs = j.s.lock().unwrap(); // s13 acq s
            *gs += 1;
            drop(gs); // s14 rel s
            match variant {
                Variant::Buggy => {
                    let mut gn = j.n.lock().unwrap(); // s15 acq n
                    *gn += 1;
                    let mut gp = j.p.lock().unwrap(); // s16 acq p
                    *gp += 1;
                    drop(gp); // s17 rel p
                    drop(gn); // s18 rel n
                }
                Variant::Fixed => {
                    let mut gp = j.p.lock().unwrap(); // s16 acq p, moved first
                    *gp += 1;
                    let mut gn = j.n.lock().unwrap(); // s15 acq n
                    *gn += 1;
                    drop(gn); // s18 rel n
                    drop(gp); // s17 rel p
                }
            }
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();
    assert_eq!(
        *j.n.lock().unwrap(),
        3,
        "d2: n is taken twice by t1 and once by t2"
    );
    assert_eq!(
        *j.p.lock().unwrap(),
        2,
        "d2: p is taken once by each thread"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "seed001-d1",
        origin: "seed 001, Fig 1 (deadlock d1)",
        bug: BugKind::Deadlock,
        summary: "two threads take locks m and n in opposite orders",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        run: d1,
    },
    Program {
        name: "seed001-d2",
        origin: "seed 001, deadlock d2 (adapted from a JDBC connector deadlock)",
        bug: BugKind::Deadlock,
        summary: "locks p and n taken in opposite orders, reachable only if the second thread slips through lock s and the first releases n first",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 5_000,
        },
        run: d2,
    },
];
