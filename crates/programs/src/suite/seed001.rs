//! Seed 001 (Cai, Yang: *Radius-aware Probabilistic Testing of Deadlocks with Guarantees*):
//! the two deadlocks the paper uses to explain PCT and to motivate the bug radius, and small
//! rebuilds of the deadlocks of its evaluation.
//!
//! - [`d1`] and [`d2`]: the paper's illustrations (two locks in opposite orders; the JDBC-like
//!   deadlock that needs four ordering constraints).
//! - [`hawknl`], [`sqlite`], [`mysql`]: the lock structure of the HawkNL, SQLite and MySQL
//!   deadlocks of its Table 2, which the paper describes by one line each (`nlShutdown` vs
//!   `nlClose`; SQLite's recursive-mutex enter/leave; MySQL lock-order inversions hidden among
//!   many unrelated events, i.e. a small radius in a large `k`).
//! - [`dining_philosophers`]: the classic cyclic deadlock, four philosophers.
//!
//! The paper describes both programs as per-thread lists of lock events at numbered sites
//! (`sNN acq x` / `sNN rel x`). Each lock here is a `Mutex` holding a small piece of state that
//! the critical sections update, so the locks guard something, and every site of the paper is a
//! commented line (`// s01 acq m`). Releases are explicit `drop`s of the guards, in the order of
//! the paper's sites. A deadlock is reported by the runtime when every live thread is blocked.

use super::rt::cell::Var;
use super::rt::sync::{Arc, Condvar, Mutex};
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
        let (m, n) = (m.clone(), n.clone());
        thread::spawn(move || match variant {
            Variant::Buggy => {
                unrelated_work(D1_PREP);
                let mut gn = n.lock().unwrap(); // s05 acq n
                let mut gm = m.lock().unwrap(); // s06 acq m
                *gn -= 1;
                *gm += 1;
                drop(gm); // s07 rel m
                drop(gn); // s08 rel n
            }
            Variant::Fixed => {
                unrelated_work(D1_PREP);
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
            unrelated_work(D2_WORK);
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

/// Steps of unrelated work the shutting-down thread of [`hawknl`] does before `nlShutdown`.
pub const HAWKNL_PREP: u32 = 8;
/// Sockets open when [`hawknl`] starts.
const HAWKNL_SOCKETS: usize = 3;
/// The socket the application thread of [`hawknl`] closes itself.
const HAWKNL_CLOSED: usize = 1;

/// The driver-level state of one HawkNL socket, guarded by that socket's own lock.
struct NlSocket {
    /// The driver socket is still open.
    open: bool,
    /// How often the driver closed it; every socket must end up closed exactly once.
    closes: u32,
}

/// HawkNL's library state: the global lock over the socket table and one lock per socket.
struct HawkNl {
    /// The global socket-table lock; `table[s]` says slot `s` is allocated.
    table: Mutex<[bool; HAWKNL_SOCKETS]>,
    /// The per-socket locks (HawkNL locks a socket before reading, writing or closing it).
    sockets: Vec<Mutex<NlSocket>>,
}

impl HawkNl {
    fn new() -> HawkNl {
        HawkNl {
            table: Mutex::new([true; HAWKNL_SOCKETS]),
            sockets: (0..HAWKNL_SOCKETS)
                .map(|_| {
                    Mutex::new(NlSocket {
                        open: true,
                        closes: 0,
                    })
                })
                .collect(),
        }
    }

    /// `nlClose(socket)` as in the buggy library: lock the socket, close the driver socket,
    /// then, still holding the socket's lock, take the table lock to free the slot.
    fn close_buggy(&self, s: usize) {
        let mut sock = self.sockets[s].lock().unwrap(); // acq socket lock
        if !sock.open {
            return; // already closed by nlShutdown
        }
        sock.open = false;
        sock.closes += 1;
        let mut table = self.table.lock().unwrap(); // acq table lock (socket lock held)
        table[s] = false;
        drop(table); // rel table lock
        drop(sock); // rel socket lock
    }

    /// `nlClose(socket)` in the fixed twin: the table lock first, then the socket's lock, the
    /// order `nlShutdown` uses.
    fn close_fixed(&self, s: usize) {
        let mut table = self.table.lock().unwrap(); // acq table lock
        let mut sock = self.sockets[s].lock().unwrap(); // acq socket lock
        if sock.open {
            sock.open = false;
            sock.closes += 1;
            table[s] = false;
        }
        drop(sock); // rel socket lock
        drop(table); // rel table lock
    }

    /// `nlShutdown()`: with the table lock held, close every allocated socket, locking each.
    fn shutdown(&self) {
        let mut table = self.table.lock().unwrap(); // acq table lock
        for (s, allocated) in table.iter_mut().enumerate() {
            if *allocated {
                let mut sock = self.sockets[s].lock().unwrap(); // acq socket lock (table held)
                if sock.open {
                    sock.open = false;
                    sock.closes += 1;
                }
                *allocated = false;
                drop(sock); // rel socket lock
            }
        }
        drop(table); // rel table lock
    }
}

/// HawkNL 1.6b3: `nlShutdown` and `nlClose` take the library's two kinds of locks in opposite
/// orders.
///
/// Original: the paper's Table 2 lists this deadlock of the HawkNL network library only as
/// "nlShutdown and nlClose" (its runs produce few events) and gives no code; the lock
/// structure below is our reconstruction of that line. HawkNL keeps a global lock over its
/// socket table and a lock per socket. An application thread closing one socket
/// (`nlClose`) holds that socket's lock and then needs the table lock to release the socket's
/// slot; a thread shutting the library down (`nlShutdown`) holds the table lock while it closes
/// every remaining socket, taking each socket's lock in turn.
///
/// Rebuilt with three open sockets; the application thread closes socket 1, the other thread
/// calls `nlShutdown`. Each socket's lock guards its driver state (open flag and a close
/// counter), the table lock guards the allocation flags; the test checks that every socket was
/// closed exactly once and every slot freed. Choices left open: the socket the application
/// closes (1, so that `nlShutdown` first gets through socket 0), and [`HAWKNL_PREP`] steps of
/// unrelated work before `nlShutdown` (the application's own shutdown work), so that a random
/// walk usually lets the close finish first.
///
/// Bug: the application thread takes socket 1's lock, and before it gets the table lock the
/// other thread takes the table lock and reaches socket 1. Two ordering constraints (PCT depth
/// 2): either the closing thread outranks the other and is preempted right after taking the
/// socket's lock, or the shutting-down thread outranks it and is preempted between taking the
/// table lock and socket 1's lock. Fixed twin: `nlClose` takes the table lock before the
/// socket's lock, the order `nlShutdown` uses, so the lock order is acyclic.
pub fn hawknl(variant: Variant) {
    let nl = Arc::new(HawkNl::new());

    let app = {
        let nl = nl.clone();
        thread::spawn(move || match variant {
            Variant::Buggy => nl.close_buggy(HAWKNL_CLOSED),
            Variant::Fixed => nl.close_fixed(HAWKNL_CLOSED),
        })
    };
    let closer = {
        let nl = nl.clone();
        thread::spawn(move || {
            unrelated_work(HAWKNL_PREP);
            nl.shutdown();
        })
    };
    app.join().unwrap();
    closer.join().unwrap();

    for (s, sock) in nl.sockets.iter().enumerate() {
        let sock = sock.lock().unwrap();
        assert!(
            !sock.open && sock.closes == 1,
            "HawkNL: socket {s} must be closed exactly once (closed {} times)",
            sock.closes
        );
    }
    assert!(
        nl.table.lock().unwrap().iter().all(|allocated| !allocated),
        "HawkNL: every socket slot must be freed"
    );
}

/// Steps of unrelated work the second thread of [`sqlite`] does before its first call.
pub const SQLITE_PREP: u32 = 20;

/// Who holds SQLite's unix mutex and how deep (guarded by `mutexAux`).
#[derive(Default)]
struct Ownership {
    /// The holding thread (the program numbers its threads; SQLite compares `pthread_self()`).
    owner: Option<usize>,
    /// Recursion depth (`inMutex`).
    depth: u32,
}

/// SQLite's recursive unix mutex, built from two locks: `mutexAux`, which guards the owner and
/// the depth, and `mutexMain`, which is held from the outermost enter to the matching leave.
///
/// `mutexMain` is held across calls, so it is a lock built from a `Mutex<bool>` (held or not)
/// and a `Condvar` rather than a guard; `mutexAux` is an ordinary `Mutex`.
struct UnixMutex {
    /// `mutexAux`.
    aux: Mutex<Ownership>,
    /// `mutexMain`: `true` while some thread holds it.
    main: Mutex<bool>,
    /// Signalled when `mutexMain` is released.
    main_free: Condvar,
}

impl UnixMutex {
    fn new() -> UnixMutex {
        UnixMutex {
            aux: Mutex::new(Ownership::default()),
            main: Mutex::new(false),
            main_free: Condvar::new(),
        }
    }

    /// `pthread_mutex_lock(&mutexMain)`.
    fn lock_main(&self) {
        let mut held = self.main.lock().unwrap();
        while *held {
            held = self.main_free.wait(held).unwrap();
        }
        *held = true;
    }

    /// `pthread_mutex_unlock(&mutexMain)`.
    fn unlock_main(&self) {
        *self.main.lock().unwrap() = false;
        self.main_free.notify_all();
    }

    /// `sqlite3UnixEnterMutex()` as in the buggy version: with `mutexAux` held, a thread that
    /// does not own the mutex yet blocks on `mutexMain`.
    fn enter_buggy(&self, me: usize) {
        let mut aux = self.aux.lock().unwrap(); // acq aux
        if aux.owner != Some(me) {
            self.lock_main(); // acq main, aux still held
            aux.owner = Some(me);
        }
        aux.depth += 1;
        drop(aux); // rel aux
    }

    /// `sqlite3UnixEnterMutex()` in the fixed twin: `mutexAux` is released before waiting for
    /// `mutexMain` and taken again to record the new owner.
    fn enter_fixed(&self, me: usize) {
        let aux = self.aux.lock().unwrap(); // acq aux
        let mine = aux.owner == Some(me);
        drop(aux); // rel aux
        if !mine {
            self.lock_main(); // acq main, nothing else held
        }
        let mut aux = self.aux.lock().unwrap(); // acq aux
        if !mine {
            assert!(
                aux.owner.is_none() && aux.depth == 0,
                "SQLite: mutexMain was free, so nobody may own the unix mutex"
            );
            aux.owner = Some(me);
        }
        aux.depth += 1;
        drop(aux); // rel aux
    }

    /// `sqlite3UnixLeaveMutex()`: under `mutexAux`, one level less; the last leave releases
    /// `mutexMain`.
    fn leave(&self, me: usize) {
        let mut aux = self.aux.lock().unwrap(); // acq aux
        assert_eq!(
            aux.owner,
            Some(me),
            "SQLite: only the owner may leave the unix mutex"
        );
        aux.depth -= 1;
        if aux.depth == 0 {
            aux.owner = None;
            self.unlock_main(); // rel main
        }
        drop(aux); // rel aux
    }

    fn enter(&self, variant: Variant, me: usize) {
        match variant {
            Variant::Buggy => self.enter_buggy(me),
            Variant::Fixed => self.enter_fixed(me),
        }
    }
}

/// The state [`sqlite`]'s threads update inside the unix mutex.
struct SqliteState {
    mutex: UnixMutex,
    /// Shared library state (SQLite's global list of open files, say), written only while
    /// holding the unix mutex.
    counter: Var<u32>,
}

/// One thread's use of the unix mutex: an outer enter, a nested (recursive) enter from a
/// callee, two updates of the protected state, and the matching leaves.
fn sqlite_worker(st: &SqliteState, variant: Variant, me: usize) {
    st.mutex.enter(variant, me);
    st.counter.update(|c| c + 1);
    st.mutex.enter(variant, me); // a callee enters again: recursion
    st.counter.update(|c| c + 1);
    st.mutex.leave(me);
    st.mutex.leave(me);
}

/// SQLite 3.3.x: `sqlite3UnixEnterMutex` and `sqlite3UnixLeaveMutex` deadlock on the two locks
/// that implement SQLite's recursive mutex.
///
/// Original: the paper's Table 2 describes the deadlock only as "sqlite3UnixEnterMutex and
/// sqlite3UnixLeaveMutex" (its runs produce few events, fewer than RPro's radius) and gives
/// no code; the lock structure below is our reconstruction of that line. SQLite's unix layer
/// implemented a recursive mutex with two pthread mutexes: an auxiliary one guarding the owner
/// and the recursion depth, and a main one held for the whole outermost critical section. The
/// enter function kept the auxiliary mutex while blocking on the main one; the leave function
/// needs the auxiliary mutex to decrement the depth and release the main one. So a thread that
/// enters while another owns the mutex blocks holding the auxiliary mutex, and the owner then
/// blocks in its next enter or leave.
///
/// Rebuilt as `UnixMutex`: `mutexAux` is a `Mutex` around owner and depth, `mutexMain` a
/// held flag with a `Condvar` (it stays held across calls), and the owner is a thread number
/// passed by the caller (SQLite compares `pthread_self()`). Two threads each run
/// `sqlite_worker`: enter, update, enter again (recursion), update, leave, leave. Choice left
/// open: the second thread first does [`SQLITE_PREP`] steps of unrelated work, so a random
/// walk usually lets the first thread finish its critical section before the second enters.
///
/// Bug: the threads deadlock whenever their critical sections overlap, i.e. the thread that
/// comes second enters between the other's acquisition of `mutexMain` and its last `mutexAux`
/// acquisition (in the final leave). PCT depth 2: the thread that outranks the other is
/// preempted inside its critical section. Fixed twin: enter releases `mutexAux` before
/// blocking on `mutexMain` and takes it again to record the owner, so no thread ever waits
/// while holding `mutexAux`.
pub fn sqlite(variant: Variant) {
    let st = Arc::new(SqliteState {
        mutex: UnixMutex::new(),
        counter: Var::new(0),
    });

    let first = {
        let st = st.clone();
        thread::spawn(move || sqlite_worker(&st, variant, 1))
    };
    let second = {
        let st = st.clone();
        thread::spawn(move || {
            unrelated_work(SQLITE_PREP);
            sqlite_worker(&st, variant, 2);
        })
    };
    first.join().unwrap();
    second.join().unwrap();

    st.mutex.enter(variant, 0);
    assert_eq!(
        st.counter.get(),
        4,
        "SQLite: both threads update the state twice under the unix mutex"
    );
    st.mutex.leave(0);
}

/// Unrelated steps each thread of [`mysql`] does before its first statement.
pub const MYSQL_BEFORE: u32 = 250;
/// Unrelated steps between the two statements of each thread of [`mysql`].
pub const MYSQL_BETWEEN: u32 = 250;
/// Unrelated steps after the last statement of each thread of [`mysql`].
pub const MYSQL_AFTER: u32 = 100;

/// The MySQL server locks [`mysql`] uses; each guards a counter of the critical sections run
/// under it.
struct MySqlServer {
    /// `LOCK_index`: the binary log index.
    lock_index: Mutex<u32>,
    /// `LOCK_thread_count`: the list of client sessions.
    lock_thread_count: Mutex<u32>,
    /// `LOCK_open`: the table cache.
    lock_open: Mutex<u32>,
    /// `LOCK_thd_data`: one session's data (its current query and open tables).
    lock_thd_data: Mutex<u32>,
}

/// Takes `first`, then `second`, bumps both counters, and releases them in reverse order: one
/// critical section of a MySQL statement that needs two server locks.
fn nested(first: &Mutex<u32>, second: &Mutex<u32>) {
    let mut a = first.lock().unwrap(); // acq first
    let mut b = second.lock().unwrap(); // acq second
    *a += 1;
    *b += 1;
    drop(b); // rel second
    drop(a); // rel first
}

/// MySQL: lock-order inversions between statements that run hundreds of unrelated events
/// apart from the inversion itself (a small bug radius in a large number of events).
///
/// Original: the paper's four MySQL deadlocks (Table 2: ALTER on a temporary and a
/// non-temporary table; INSERT and TRUNCATE on one Falcon table; PURGE BINARY LOGS taking locks
/// in the wrong order; SHOW INNODB STATUS deadlocking when `LOCK_thd_data` points to
/// `LOCK_open`) occur in server runs with many threads and a very large number of events, yet
/// the deadlocking events lie within a small radius of each other; PCT never triggered two of
/// them while RPro did. The paper describes them by one line each.
///
/// Rebuilt from the last two lines as two server threads with two statements each. Thread t1
/// runs PURGE BINARY LOGS (takes `LOCK_index`, then `LOCK_thread_count` to check that no
/// session still reads a log about to be deleted) and then SHOW INNODB STATUS (takes
/// `LOCK_open`, then `LOCK_thd_data` to print each session's query). Thread t2 is a client
/// session that starts reading the binary log (holds `LOCK_thread_count` while it registers
/// its read position, then takes `LOCK_index` to look the log up) and then closes its tables
/// at the end of its query (holds `LOCK_thd_data`, then takes `LOCK_open`). The lock roles are
/// our reconstruction of the paper's one-line descriptions. Choices left open: every thread
/// does [`MYSQL_BEFORE`] unrelated steps before its first statement, [`MYSQL_BETWEEN`] between
/// the two and [`MYSQL_AFTER`] after them (about 1,200 steps in all), while each inversion
/// window is a single step.
///
/// Bug: either inversion deadlocks when one thread is preempted right after its first lock of
/// a statement and the other reaches the matching statement: PCT depth 2, with the one change
/// point restricted to a handful of the ~1,200 steps (radius about 2 events, k about 1,200).
/// A random walk keeps both threads at about the same pace, so the windows meet only when
/// their arrival times fluctuate into alignment. Fixed twin: the session takes `LOCK_index`
/// before `LOCK_thread_count` and `LOCK_open` before `LOCK_thd_data`, the server-wide order.
pub fn mysql(variant: Variant) {
    let server = Arc::new(MySqlServer {
        lock_index: Mutex::new(0),
        lock_thread_count: Mutex::new(0),
        lock_open: Mutex::new(0),
        lock_thd_data: Mutex::new(0),
    });

    let admin = {
        let s = server.clone();
        thread::spawn(move || {
            unrelated_work(MYSQL_BEFORE);
            nested(&s.lock_index, &s.lock_thread_count); // PURGE BINARY LOGS
            unrelated_work(MYSQL_BETWEEN);
            nested(&s.lock_open, &s.lock_thd_data); // SHOW INNODB STATUS
            unrelated_work(MYSQL_AFTER);
        })
    };
    let session = {
        let s = server.clone();
        thread::spawn(move || {
            unrelated_work(MYSQL_BEFORE);
            match variant {
                Variant::Buggy => nested(&s.lock_thread_count, &s.lock_index),
                Variant::Fixed => nested(&s.lock_index, &s.lock_thread_count),
            }
            unrelated_work(MYSQL_BETWEEN);
            match variant {
                Variant::Buggy => nested(&s.lock_thd_data, &s.lock_open),
                Variant::Fixed => nested(&s.lock_open, &s.lock_thd_data),
            }
            unrelated_work(MYSQL_AFTER);
        })
    };
    admin.join().unwrap();
    session.join().unwrap();

    for (name, lock) in [
        ("LOCK_index", &server.lock_index),
        ("LOCK_thread_count", &server.lock_thread_count),
        ("LOCK_open", &server.lock_open),
        ("LOCK_thd_data", &server.lock_thd_data),
    ] {
        assert_eq!(
            *lock.lock().unwrap(),
            2,
            "MySQL: {name} is taken once by each thread"
        );
    }
}

/// Philosophers (and forks) at the table of [`dining_philosophers`].
pub const PHILOSOPHERS: usize = 4;
/// Steps philosopher `i` thinks before picking up forks: `THINK * (i + 1)`.
pub const THINK: u32 = 1;

/// Dining philosophers: each philosopher picks up the left fork, then the right one.
///
/// Original: not one of the paper's benchmarks (its Table 2 has none); the classic deadlock
/// with a cyclic lock order of length n, a deadlock whose events lie close together (every
/// philosopher's two acquisitions are consecutive) but involve every thread.
///
/// Rebuilt with [`PHILOSOPHERS`] = 4 philosophers (loom models at most four spawned threads):
/// philosopher `i` thinks for `THINK * (i + 1)` steps of unrelated work, takes fork `i`, then
/// fork `(i + 1) % 4`, eats (each fork counts its uses) and puts both forks down. Choices left
/// open: four philosophers rather than five, one meal each, and the uneven thinking times,
/// which make a random walk rarely line all four up at the table.
///
/// Bug: every philosopher holds its left fork and waits for its right one. How many
/// preemptions that takes depends on the order in which the philosophers get to the table: if
/// each one arrives right after its right-hand neighbour (0, 3, 2, 1), one preemption suffices
/// (philosopher 0 is preempted right after taking fork 0, and each of the others takes its left
/// fork and blocks on its right one), so PCT depth 2 for the four priority orders of that shape
/// (one in six); in the worst order it takes three (PCT depth 4), and PCT with a larger depth
/// has more ways to line them up.
/// Fixed twin: resource ordering, every philosopher takes the lower-numbered of its two forks
/// first (philosopher 3 takes fork 0 before fork 3), so the wait-for graph has no cycle.
pub fn dining_philosophers(variant: Variant) {
    let forks: Arc<Vec<Mutex<u32>>> = Arc::new((0..PHILOSOPHERS).map(|_| Mutex::new(0)).collect());

    let philosophers: Vec<_> = (0..PHILOSOPHERS)
        .map(|i| {
            let forks = forks.clone();
            thread::spawn(move || {
                let (left, right) = (i, (i + 1) % PHILOSOPHERS);
                let (first, second) = match variant {
                    Variant::Buggy => (left, right),
                    Variant::Fixed => (left.min(right), left.max(right)),
                };
                unrelated_work(THINK * (i as u32 + 1));
                let mut f1 = forks[first].lock().unwrap(); // pick up the first fork
                let mut f2 = forks[second].lock().unwrap(); // pick up the second fork
                *f1 += 1;
                *f2 += 1;
                drop(f2);
                drop(f1);
            })
        })
        .collect();
    for p in philosophers {
        p.join().unwrap();
    }
    for (i, fork) in forks.iter().enumerate() {
        assert_eq!(
            *fork.lock().unwrap(),
            2,
            "dining philosophers: fork {i} is used by both of its neighbours"
        );
    }
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "rpro-d1",
        origin: "Cai, Yang (RPro), Fig 1 (deadlock d1)",
        bug: BugKind::Deadlock,
        summary: "two threads take locks m and n in opposite orders",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: d1,
    },
    Program {
        name: "rpro-d2",
        origin: "Cai, Yang (RPro), deadlock d2 (adapted from a JDBC connector deadlock)",
        bug: BugKind::Deadlock,
        summary: "locks p and n taken in opposite orders, reachable only if the second thread slips through lock s and the first releases n first",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 5_000,
        },
        long: false,
        needs_weak_memory: false,
        run: d2,
    },
    Program {
        name: "rpro-hawknl",
        origin: "Cai, Yang (RPro), Table 2 (HawkNL 1.6b3: nlShutdown and nlClose)",
        bug: BugKind::Deadlock,
        summary: "nlClose holds a socket's lock and wants the table lock; nlShutdown holds the table lock and wants the socket's",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: hawknl,
    },
    Program {
        name: "rpro-sqlite",
        origin: "Cai, Yang (RPro), Table 2 (SQLite 3.3.x: sqlite3UnixEnterMutex and sqlite3UnixLeaveMutex)",
        bug: BugKind::Deadlock,
        summary: "a recursive mutex's enter blocks on the main lock while holding the auxiliary lock the owner's leave needs",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: sqlite,
    },
    Program {
        name: "rpro-mysql",
        origin: "Cai, Yang (RPro), Table 2 (MySQL: PURGE BINARY LOGS and SHOW INNODB STATUS lock orders)",
        bug: BugKind::Deadlock,
        summary: "two lock-order inversions, each a one-step window among about 1,200 unrelated steps",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 5_000,
        },
        long: false,
        needs_weak_memory: false,
        run: mysql,
    },
    Program {
        name: "rpro-dining-philosophers",
        origin: "Cai, Yang (RPro), classic deadlock benchmark (dining philosophers, 4 philosophers)",
        bug: BugKind::Deadlock,
        summary: "every philosopher holds the left fork and waits for the right one",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 5_000,
        },
        long: false,
        needs_weak_memory: false,
        run: dining_philosophers,
    },
];
