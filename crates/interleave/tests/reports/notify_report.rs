//! The blocking `sync::Notify` in a report, as a snapshot: it is one `Notify` object in the
//! legend with its own operations (`notify`, `wait`), not the lock and condition variable a
//! notification could be built from. Accept a reviewed change with `UPDATE_EXPECT=1 cargo test
//! -p interleave --test reports notify_report`.
//!
//! The program comes first and the snapshot last, so rewriting the snapshot never moves the
//! source sites the report names.

use crate::helpers;
use expect_test::expect;
use interleave::cell::Var;
use interleave::sync::{Arc, Notify};
use interleave::thread;

/// A thread waits for a notification and then reads a variable that the notifier writes only
/// after notifying: the write and the read race.
fn notify_before_publishing() {
    let ready = Arc::new(Notify::new());
    let data = Arc::new(Var::new(0));
    let reader = {
        let (ready, data) = (ready.clone(), data.clone());
        thread::spawn(move || {
            ready.wait();
            data.get()
        })
    };
    ready.notify();
    data.set(1);
    reader.join().unwrap();
}

/// Two threads each wait for the other's notification before giving their own.
fn waiting_for_each_other() {
    let (first, second) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let other = {
        let (first, second) = (first.clone(), second.clone());
        thread::spawn(move || {
            first.wait();
            second.notify();
        })
    };
    second.wait();
    first.notify();
    other.join().unwrap();
}

#[test]
fn a_notify_deadlock_names_the_notify() {
    let report = helpers::builder("dfs")
        .executions(200)
        .explore(waiting_for_each_other)
        .expect("a valid configuration");
    let failure = report.first_failure().expect("both threads wait forever");
    let text = failure.to_string();
    let body = text
        .split("\n\nTo reproduce")
        .next()
        .expect("the report has a body");
    expect![[r#"
        interleave found a deadlock in execution 0 (strategy dfs, seed 0):

          deadlock: no thread can run
            thread 0 (main) blocked in wait at reports/notify_report.rs:42:12: waits for a notification of Notify1
            thread 1 (spawned at reports/notify_report.rs:37:9) blocked in wait at reports/notify_report.rs:38:19: waits for a notification of Notify2

        interleaving (7 steps):
          T0 = thread 0 (main)
          T1 = thread 1 (spawned at reports/notify_report.rs:37:9)
          Notify1 = Notify created at reports/notify_report.rs:34:62
          Notify2 = Notify created at reports/notify_report.rs:34:37
            step | T0                                                   | T1
               1 | start @reports/notify_report.rs:51:10                |
               2 | spawn @reports/notify_report.rs:37:9                 |
               3 | wait (waits) Notify1 @reports/notify_report.rs:42:12 |
               5 |                                                      | start @reports/notify_report.rs:37:9
               6 |                                                      | wait (waits) Notify2 @reports/notify_report.rs:38:19
            next | wait (waits) Notify1 @reports/notify_report.rs:42:12 | wait (waits) Notify2 @reports/notify_report.rs:38:19"#]]
    .assert_eq(body);
}

#[test]
fn a_blocking_notify_is_one_object_with_its_own_operations() {
    let report = helpers::builder("dfs")
        .executions(200)
        .full_interleaving(true)
        .explore(notify_before_publishing)
        .expect("a valid configuration");
    let failure = report
        .first_failure()
        .expect("the write races with the read");
    let text = failure.to_string();
    let interleaving = text
        .split("\n\nTo reproduce")
        .next()
        .expect("the report has a body");
    expect![[r#"
        interleave found a data race in execution 0 (strategy dfs, seed 0):

          data race on Var1: thread 0 (main) write at reports/notify_report.rs:28:10 and thread 1 (spawned at reports/notify_report.rs:22:9) read at reports/notify_report.rs:24:18 are not ordered by happens-before
            no synchronisation that interleave sees orders them: if the program orders them through something it does not see (a std::sync atomic or lock, or the reference count of interleave::sync::Arc, which is std's, as in Arc::try_unwrap, get_mut or into_inner), use interleave's types, join the thread, or hand its history over with interleave::sync::Causality

        interleaving (9 steps):
          T0 = thread 0 (main)
          T1 = thread 1 (spawned at reports/notify_report.rs:22:9)
          Var1 = Var created at reports/notify_report.rs:19:25
          Notify1 = Notify created at reports/notify_report.rs:18:26
            step | T0                                             | T1
               1 | start @reports/notify_report.rs:86:10          |
               2 | spawn @reports/notify_report.rs:22:9           |
               3 | notify Notify1 @reports/notify_report.rs:27:11 |
               5 | write Var1 @reports/notify_report.rs:28:10     |
               6 |                                                | start @reports/notify_report.rs:22:9
               7 |                                                | wait Notify1 @reports/notify_report.rs:23:19
               9 |                                                | read Var1 @reports/notify_report.rs:24:18
            next | join @reports/notify_report.rs:29:12           |"#]]
    .assert_eq(interleaving);
}
