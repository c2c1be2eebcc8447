//! The lock-order predictor and DeadlockFuzzer's directed confirmation (spec
//! `deadlock-fuzzer`): real inversions are predicted from one execution and realised; inversions
//! that a guard lock or a join makes impossible are not predicted at all.

use interleave::sync::{Arc, Condvar, Mutex};
use interleave::{thread, Builder, FailureKind, Report};

fn fuzz(body: impl Fn() + Sync + Send + 'static) -> Report {
    Builder::new()
        .ignore_environment()
        .strategy("deadlock-fuzzer:tries=10".parse().unwrap())
        .executions(100)
        .seed(3)
        .explore(body)
        .unwrap()
}

fn stat(report: &Report, key: &str) -> String {
    let value = report.stat(key);
    value
        .unwrap_or_else(|| panic!("no statistic {key}: {report}"))
        .to_string()
}

/// Two threads take `a` and `b` in opposite orders; `guard`, if given, is taken first by both.
fn inversion(guarded: bool) {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let guard = Arc::new(Mutex::new(()));
    let t = {
        let (a, b, guard) = (a.clone(), b.clone(), guard.clone());
        thread::spawn(move || {
            let _g = guarded.then(|| guard.lock().unwrap());
            let _a = a.lock().unwrap();
            *b.lock().unwrap() += 1;
        })
    };
    {
        let _g = guarded.then(|| guard.lock().unwrap());
        let _b = b.lock().unwrap();
        *a.lock().unwrap() += 1;
    }
    t.join().unwrap();
}

#[test]
fn an_inversion_is_predicted_and_realised() {
    let report = fuzz(|| inversion(false));
    assert_eq!(stat(&report, "predicted"), "1");
    assert_eq!(stat(&report, "confirmed"), "1");
    let failure = report.first_failure().expect("realised");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(failure.message.contains("wait-for cycle"), "{failure}");
    // One profiling execution, then directed ones until the deadlock.
    assert!(report.executions <= 11, "{} executions", report.executions);
}

#[test]
fn a_guard_lock_rules_the_inversion_out() {
    let report = fuzz(|| inversion(true));
    assert_eq!(stat(&report, "predicted"), "0");
    assert!(report.failures.is_empty() && report.warnings.is_empty());
    assert_eq!(report.executions, 1, "nothing to direct after the profile");
}

#[test]
fn a_join_between_the_acquisitions_rules_it_out() {
    let report = fuzz(|| {
        let a = Arc::new(Mutex::new(0));
        let b = Arc::new(Mutex::new(0));
        let t = {
            let (a, b) = (a.clone(), b.clone());
            thread::spawn(move || {
                let _a = a.lock().unwrap();
                *b.lock().unwrap() += 1;
            })
        };
        t.join().unwrap();
        let _b = b.lock().unwrap();
        *a.lock().unwrap() += 1;
    });
    assert_eq!(stat(&report, "predicted"), "0");
    assert!(report.failures.is_empty() && report.warnings.is_empty());
}

#[test]
fn an_unrealisable_prediction_is_only_a_warning() {
    // The inversion is in the lock graph, but the main thread only takes its locks after the
    // other thread has signalled through a condition variable that it is done with them. The
    // predictor orders nothing by notifications, so it predicts the cycle; no schedule can
    // realise it, so it ends up as an unconfirmed warning, never as a deadlock.
    let report = fuzz(|| {
        let a = Arc::new(Mutex::new(0));
        let b = Arc::new(Mutex::new(0));
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let t = {
            let (a, b, done) = (a.clone(), b.clone(), done.clone());
            thread::spawn(move || {
                {
                    let _a = a.lock().unwrap();
                    *b.lock().unwrap() += 1;
                }
                *done.0.lock().unwrap() = true;
                done.1.notify_all();
            })
        };
        let mut finished = done.0.lock().unwrap();
        while !*finished {
            finished = done.1.wait(finished).unwrap();
        }
        drop(finished);
        {
            let _b = b.lock().unwrap();
            *a.lock().unwrap() += 1;
        }
        t.join().unwrap();
    });
    assert!(report.failures.is_empty(), "{}", report.failures[0]);
    assert_eq!(stat(&report, "predicted"), "1");
    assert_eq!(stat(&report, "confirmed"), "0");
    assert_eq!(
        report.executions, 11,
        "one profile and 10 directed executions"
    );
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(
        warning.contains("unconfirmed") && warning.contains("deadlock_prediction.rs"),
        "names the sites: {warning}"
    );
}
