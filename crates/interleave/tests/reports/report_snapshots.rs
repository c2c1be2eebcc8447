//! The failure reports users read, as snapshots: a deadlock, a data race, a replay that
//! diverges, an uncontrolled-nondeterminism verdict, an atomic-set serializability violation
//! and a lost update between async tasks. A change to any of them shows up as a diff of this
//! file; review it, then accept it with `UPDATE_EXPECT=1 cargo test -p interleave --test
//! reports report_snapshots`.
//!
//! The programs come first and the snapshots last, so rewriting a snapshot never moves the
//! source sites the reports name.

use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use crate::helpers;
use expect_test::{expect, Expect};
use interleave::atomic_set::unit_of_work_on;
use interleave::cell::Var;
use interleave::future::sync::Mutex as AsyncMutex;
use interleave::sync::{Arc, Mutex};
use interleave::{thread, unit_of_work, Builder, Report};

/// Two threads take two locks in opposite orders.
pub(crate) fn lock_order_inversion() {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let (a2, b2) = (a.clone(), b.clone());
    let other = thread::spawn(move || {
        let _b = b2.lock().unwrap();
        let _a = a2.lock().unwrap();
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    other.join().unwrap();
}

/// Two threads write a tracked variable without synchronisation.
fn unsynchronised_writes() {
    let shared = Arc::new(Var::new(0));
    let writer = {
        let shared = shared.clone();
        thread::spawn(move || shared.set(1))
    };
    shared.set(2);
    writer.join().unwrap();
}

/// What the divergence snapshot replays a deadlock's token against: its operations differ.
fn two_locks() {
    let m = Mutex::new(0);
    *m.lock().unwrap() += 1;
    *m.lock().unwrap() += 1;
}

static RUNS: StdAtomicUsize = StdAtomicUsize::new(0);

/// Takes a lock only on every other run: it depends on state kept between executions.
fn depends_on_a_static() {
    let m = Mutex::new(0);
    if RUNS
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .is_multiple_of(2)
    {
        drop(m.lock().unwrap());
    }
}

/// Seed 003's account, reduced: a copy that reads the two balances in two units of work while
/// another thread credits interest to both.
struct Account {
    monitor: Mutex<()>,
    checking: Var<i64>,
    savings: Var<i64>,
}

impl Account {
    fn read(&self, field: &Var<i64>) -> i64 {
        unit_of_work_on("read", self, || {
            let _monitor = self.monitor.lock().unwrap();
            field.get()
        })
    }

    fn credit_interest(&self) {
        unit_of_work_on("credit_interest", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.checking.set(self.checking.get() * 2);
            self.savings.set(self.savings.get() * 2);
        })
    }
}

fn copy_while_crediting() {
    let account = Arc::new(Account {
        monitor: Mutex::new(()),
        checking: Var::new(1),
        savings: Var::new(2),
    });
    let crediting = {
        let account = account.clone();
        thread::spawn(move || account.credit_interest())
    };
    let copy = unit_of_work("copy", || {
        (
            account.read(&account.checking),
            account.read(&account.savings),
        )
    });
    crediting.join().unwrap();
    std::hint::black_box(copy);
}

/// Two tasks increment a counter behind an async mutex in two critical sections each.
fn async_lost_update() {
    interleave::future::block_on(async {
        let counter = std::sync::Arc::new(AsyncMutex::new(0));
        let task = {
            let counter = counter.clone();
            interleave::future::spawn(async move {
                let seen = *counter.lock().await;
                *counter.lock().await = seen + 1;
            })
        };
        let seen = *counter.lock().await;
        *counter.lock().await = seen + 1;
        task.await.unwrap();
        assert_eq!(*counter.lock().await, 2);
    })
}

fn explore(spec: &str, f: impl Fn() + Sync) -> Report {
    helpers::builder(spec)
        .executions(2000)
        .explore(f)
        .expect("a valid configuration")
}

/// The token of a deadlock of `lock_order_inversion`, replayed against `two_locks`.
fn replay_against_a_changed_program() -> Report {
    let token = {
        let failing = explore("dfs", lock_order_inversion);
        failing.first_failure().expect("a deadlock").token.clone()
    };
    Builder::new()
        .ignore_environment()
        .replay(&token, two_locks)
        .expect("a valid token")
}

/// `copy_while_crediting` under dfs with the atomic-set monitor on.
fn monitored_copy() -> Report {
    Builder::new()
        .ignore_environment()
        .monitor_atomic_sets(true)
        .strategy("dfs".parse().expect("a valid spec"))
        .executions(2000)
        .explore(copy_while_crediting)
        .expect("a valid configuration")
}

fn first_failure(report: &Report, snapshot: Expect) {
    let failure = report.first_failure().expect("the program fails");
    snapshot.assert_eq(&failure.to_string());
}

#[test]
fn a_deadlock_report() {
    first_failure(
        &explore("dfs", lock_order_inversion),
        expect![[r#"
            interleave found a deadlock in execution 5 (strategy dfs, seed 0):

              deadlock: no thread can run
                thread 0 (main) blocked in lock at reports/report_snapshots.rs:31:20 on Mutex2: held by thread 1 since reports/report_snapshots.rs:26:21; holds Mutex1 since reports/report_snapshots.rs:30:20
                thread 1 (spawned at reports/report_snapshots.rs:25:17) blocked in lock at reports/report_snapshots.rs:27:21 on Mutex1: held by thread 0 since reports/report_snapshots.rs:30:20; holds Mutex2 since reports/report_snapshots.rs:26:21
                wait-for cycle: thread 0 -> thread 1 -> thread 0
                  thread 0 wants Mutex2 at reports/report_snapshots.rs:31:20; thread 1 acquired it at reports/report_snapshots.rs:26:21
                  thread 1 wants Mutex1 at reports/report_snapshots.rs:27:21; thread 0 acquired it at reports/report_snapshots.rs:30:20

            interleaving (5 steps):
              T0 = thread 0 (main)
              T1 = thread 1 (spawned at reports/report_snapshots.rs:25:17)
              Mutex1 = Mutex created at reports/report_snapshots.rs:22:22
              Mutex2 = Mutex created at reports/report_snapshots.rs:23:22
                step | T0                                             | T1
                   1 | start @reports/report_snapshots.rs:133:10      |
                   2 | spawn @reports/report_snapshots.rs:25:17       |
                   3 | lock Mutex1 @reports/report_snapshots.rs:30:20 |
                   4 |                                                | start @reports/report_snapshots.rs:25:17
                   5 |                                                | lock Mutex2 @reports/report_snapshots.rs:26:21
                next | lock Mutex2 @reports/report_snapshots.rs:31:20 | lock Mutex1 @reports/report_snapshots.rs:27:21

            To reproduce this execution exactly, run the same test with
                INTERLEAVE_REPLAY=il2-AgADAQIARKCNBgIUxMg52Q-AfAGAfCNyZXBvcnRfc25hcHNob3RzOjphX2RlYWRsb2NrX3JlcG9ydBtkZWFkbG9jazogbm8gdGhyZWFkIGNhbiBydW4l8-aj
            or replace the call with
                interleave::replay("il2-AgADAQIARKCNBgIUxMg52Q-AfAGAfCNyZXBvcnRfc25hcHNob3RzOjphX2RlYWRsb2NrX3JlcG9ydBtkZWFkbG9jazogbm8gdGhyZWFkIGNhbiBydW4l8-aj", || ...)"#]],
    );
}

#[test]
fn a_data_race_report() {
    first_failure(
        &explore("dfs", unsynchronised_writes),
        expect![[r#"
            interleave found a data race in execution 0 (strategy dfs, seed 0):

              data race on Var1: thread 0 (main) write at reports/report_snapshots.rs:43:12 and thread 1 (spawned at reports/report_snapshots.rs:41:9) write at reports/report_snapshots.rs:41:38 are not ordered by happens-before
                no synchronisation that interleave sees orders them: if the program orders them through something it does not see (a std::sync atomic or lock, or the reference count of interleave::sync::Arc, which is std's, as in Arc::try_unwrap, get_mut or into_inner), use interleave's types, join the thread, or hand its history over with interleave::sync::Causality

            interleaving (5 steps):
              T0 = thread 0 (main)
              T1 = thread 1 (spawned at reports/report_snapshots.rs:41:9)
              Var1 = Var created at reports/report_snapshots.rs:38:27
                step | T0                                            | T1
                   1 | start @reports/report_snapshots.rs:133:10     |
                   2 | spawn @reports/report_snapshots.rs:41:9       |
                   3 | write Var1 @reports/report_snapshots.rs:43:12 |
                   4 |                                               | start @reports/report_snapshots.rs:41:9
                   5 |                                               | write Var1 @reports/report_snapshots.rs:41:38
                next | join @reports/report_snapshots.rs:44:12       |

            To reproduce this execution exactly, run the same test with
                INTERLEAVE_REPLAY=il2-AgADAQIARKCNBgX1rfK0baz0zQH0zSRyZXBvcnRfc25hcHNob3RzOjphX2RhdGFfcmFjZV9yZXBvcnRQZGF0YSByYWNlIG9uIFZhcjE6IHRocmVhZCAwIChtYWluKSB3cml0ZSBhdCByZXBvcnRzL3JlcG9ydF9zbmFwc2hvdHMucnM6NDM6MTIgYW4ooM_7
            or replace the call with
                interleave::replay("il2-AgADAQIARKCNBgX1rfK0baz0zQH0zSRyZXBvcnRfc25hcHNob3RzOjphX2RhdGFfcmFjZV9yZXBvcnRQZGF0YSByYWNlIG9uIFZhcjE6IHRocmVhZCAwIChtYWluKSB3cml0ZSBhdCByZXBvcnRzL3JlcG9ydF9zbmFwc2hvdHMucnM6NDM6MTIgYW4ooM_7", || ...)"#]],
    );
}

#[test]
fn a_divergence_report() {
    let report = replay_against_a_changed_program();
    first_failure(
        &report,
        expect![[r#"
            interleave replayed a token and found a replay divergence:

              the replayed execution's operations first differed from the recording between steps 1 and 4 (a token keeps one fingerprint per 64 steps, so it tells no closer); then the schedule became impossible at step 4: it runs thread 1 next, but thread 1 does not exist (the program created 1 thread by then). The program no longer performs the operations recorded in the schedule (it changed since the schedule was recorded, or it depends on something the scheduler does not control: std::sync primitives, HashMap iteration order (iterate a BTreeMap or a Vec instead), the clock, real I/O)
              The recorded execution in the test `report_snapshots::a_divergence_report` failed (deadlock): deadlock: no thread can run

            interleaving (3 steps):
              T0 = thread 0 (main)
              Mutex1 = Mutex created at reports/report_snapshots.rs:49:13
                step | T0
                   1 | start @reports/report_snapshots.rs:145:10
                   2 | lock Mutex1 @reports/report_snapshots.rs:50:8
                   3 | unlock Mutex1 @reports/report_snapshots.rs:50:8
                next | lock Mutex1 @reports/report_snapshots.rs:51:8

            The token no longer fits the program: run the exploration again for a fresh one."#]],
    );
}

#[test]
fn a_nondeterminism_report() {
    first_failure(
        &explore("random", depends_on_a_static),
        expect![[r#"
            interleave found an uncontrolled nondeterminism in execution 0 (strategy random, seed 0):

              the program behaved differently when re-run under the same schedule: the first run took 3 steps and the second 1.
              It depends on something interleave does not control: std::sync or std::thread used directly, HashMap/HashSet iteration order (RandomState: iterate a BTreeMap, a Vec, or a HashMap built with a fixed hasher such as `BuildHasherDefault<DefaultHasher>` instead), memory addresses (comparing or hashing pointers, as when two locks are taken in address order), the clock, randomness outside interleave::rand, or state kept in statics between executions. interleave re-runs executions 0, 1, 2, 4, 8, ... and every failing one to check this; a test that depends on one of these on purpose (a std static counting runs, locks ordered by address) can turn the check off with `Builder::check_determinism(false)`, and its replay tokens may then not reproduce what they recorded; `dfs` and `dpor` replay the start of each schedule, so they need the program to be deterministic even then.

            interleaving (3 steps):
              T0 = thread 0 (main)
              Mutex1 = Mutex created at reports/report_snapshots.rs:58:13
                step | T0
                   1 | start @reports/report_snapshots.rs:133:10
                   2 | lock Mutex1 @reports/report_snapshots.rs:63:16
                   3 | unlock Mutex1 @reports/report_snapshots.rs:63:16

            To reproduce this execution exactly, run the same test with
                INTERLEAVE_REPLAY=il2-AQADAGSgjQYH8eXv3-fmRxcBRxcpcmVwb3J0X3NuYXBzaG90czo6YV9ub25kZXRlcm1pbmlzbV9yZXBvcnRQdGhlIHByb2dyYW0gYmVoYXZlZCBkaWZmZXJlbnRseSB3aGVuIHJlLXJ1biB1bmRlciB0aGUgc2FtZSBzY2hlZHVsZTogdGhlIGZpcnN0IHLX1cpD
            or replace the call with
                interleave::replay("il2-AQADAGSgjQYH8eXv3-fmRxcBRxcpcmVwb3J0X3NuYXBzaG90czo6YV9ub25kZXRlcm1pbmlzbV9yZXBvcnRQdGhlIHByb2dyYW0gYmVoYXZlZCBkaWZmZXJlbnRseSB3aGVuIHJlLXJ1biB1bmRlciB0aGUgc2FtZSBzY2hlZHVsZTogdGhlIGZpcnN0IHLX1cpD", || ...)"#]],
    );
}

#[test]
fn an_atomicity_violation_report() {
    let report = monitored_copy();
    let violation = report
        .violations
        .first()
        .expect("the copy straddles the credit");
    expect![[r#"
        atomic-set serializability violation in execution 2: pattern 9 `r_u(m1) w_u'(m) w_u'(m̄) r_u(m2)` (u observes an inconsistent state of the atomic set) on the objects of Account#0
          u  = unit of work `copy` of thread 0 (main) (entered at reports/report_snapshots.rs:102:16)
          u' = unit of work `Account::credit_interest` of thread 1 (spawned at reports/report_snapshots.rs:100:9) (entered at reports/report_snapshots.rs:84:9)
            copy reads Var1 at reports/report_snapshots.rs:79:19
            Account::credit_interest writes Var1 at reports/report_snapshots.rs:86:27
            Account::credit_interest writes Var2 at reports/report_snapshots.rs:87:26
            copy reads Var2 at reports/report_snapshots.rs:79:19

        interleaving (16 steps):
          T0 = thread 0 (main)
          T1 = thread 1 (spawned at reports/report_snapshots.rs:100:9)
          Var1 = Var created at reports/report_snapshots.rs:95:19
          Var2 = Var created at reports/report_snapshots.rs:96:18
          Mutex1 = Mutex created at reports/report_snapshots.rs:94:18
            step | T0                                               | T1
               1 | start @reports/report_snapshots.rs:156:10        |
               2 | spawn @reports/report_snapshots.rs:100:9         |
               3 | lock Mutex1 @reports/report_snapshots.rs:78:41   |
               4 | read Var1 @reports/report_snapshots.rs:79:19     |
               5 | unlock Mutex1 @reports/report_snapshots.rs:78:41 |
               6 |                                                  | start @reports/report_snapshots.rs:100:9
               7 |                                                  | lock Mutex1 @reports/report_snapshots.rs:85:41
               8 |                                                  | read Var1 @reports/report_snapshots.rs:86:45
               9 |                                                  | write Var1 @reports/report_snapshots.rs:86:27
              10 |                                                  | read Var2 @reports/report_snapshots.rs:87:43
              11 |                                                  | write Var2 @reports/report_snapshots.rs:87:26
              12 |                                                  | unlock Mutex1 @reports/report_snapshots.rs:85:41
              13 | lock Mutex1 @reports/report_snapshots.rs:78:41   |
              14 | read Var2 @reports/report_snapshots.rs:79:19     |
              15 | unlock Mutex1 @reports/report_snapshots.rs:78:41 |
              16 | join @reports/report_snapshots.rs:108:15         |

        To reproduce this execution, run the same test (monitored: strategy `rm` or `assetfuzzer`, or Builder::monitor_atomic_sets) with
            INTERLEAVE_REPLAY=il2-AwAFAQcABABEoI0GAPJn3xHymHmFAXmFAACotjCh"#]].assert_eq(&violation.to_string());
}

#[test]
fn an_async_report() {
    first_failure(
        &explore("dfs", async_lost_update),
        expect![[r#"
            interleave found a panic in execution 57 (strategy dfs, seed 0):

              thread 0 (main) panicked at crates/interleave/tests/reports/report_snapshots.rs:126:9:
                assertion `left == right` failed
                  left: 1
                 right: 2

            interleaving (23 steps):
              T0 = thread 0 (main)
              T1 = thread 1 (spawned at reports/report_snapshots.rs:118:13)
              AsyncMutex1 = AsyncMutex created at reports/report_snapshots.rs:115:43
                step | T0                                                     | T1
                   1 | start @reports/report_snapshots.rs:133:10              |
                   2 | spawn @reports/report_snapshots.rs:118:13              |
                   3 | lock AsyncMutex1 @reports/report_snapshots.rs:123:29   |
                   5 | unlock AsyncMutex1 @reports/report_snapshots.rs:123:29 |
                   7 |                                                        | park @reports/report_snapshots.rs:118:13
                   8 |                                                        | lock AsyncMutex1 @reports/report_snapshots.rs:119:37
                  10 |                                                        | unlock AsyncMutex1 @reports/report_snapshots.rs:119:37
                  12 |                                                        | lock AsyncMutex1 @reports/report_snapshots.rs:120:26
                  14 |                                                        | unlock AsyncMutex1 @reports/report_snapshots.rs:120:26
                  16 | lock AsyncMutex1 @reports/report_snapshots.rs:124:18   |
                  18 | unlock AsyncMutex1 @reports/report_snapshots.rs:124:18 |
                  20 | lock AsyncMutex1 @reports/report_snapshots.rs:126:29   |
                  22 | unlock AsyncMutex1 @reports/report_snapshots.rs:126:29 |

            To reproduce this execution exactly, run the same test with
                INTERLEAVE_REPLAY=il2-AwAGAQkACABEoI0GAYS1Z-vUUV5QAV5QIXJlcG9ydF9zbmFwc2hvdHM6OmFuX2FzeW5jX3JlcG9ydCBhc3NlcnRpb24gYGxlZnQgPT0gcmlnaHRgIGZhaWxlZKvesc0
            or replace the call with
                interleave::replay("il2-AwAGAQkACABEoI0GAYS1Z-vUUV5QAV5QIXJlcG9ydF9zbmFwc2hvdHM6OmFuX2FzeW5jX3JlcG9ydCBhc3NlcnRpb24gYGxlZnQgPT0gcmlnaHRgIGZhaWxlZKvesc0", || ...)"#]],
    );
}
