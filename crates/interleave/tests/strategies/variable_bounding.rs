//! Variable and thread bounding (seed 000): PCTVB's advantage over PCT grows as the buggy
//! variable becomes rarer next to a frequently accessed benign one (the paper's Figure 6
//! experiment), and thread bounding finds the paper's three-thread bugs.

use crate::helpers;

use helpers::corner_variable;
use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::Arc;
use interleave::{thread, Builder, FailureKind};

fn failing_executions(
    spec: &str,
    executions: u64,
    body: impl Fn() + Sync + Send + 'static,
) -> usize {
    let report = helpers::builder(spec)
        .executions(executions)
        .seed(7)
        .stop_on_first_failure(false)
        .explore(body)
        .unwrap();
    assert!(
        report.failures.iter().all(|f| f.kind == FailureKind::Panic),
        "{spec}: {}",
        report.failures[0]
    );
    report.failures.len()
}

#[test]
fn pctvb_gains_on_pct_as_the_buggy_variable_gets_rarer() {
    let mut ratios = Vec::new();
    for benign in [5, 50, 400] {
        let pct = failing_executions("pct:d=2", 2_000, move || corner_variable(benign, false));
        let vb = failing_executions("pctvb:d=2,v=1", 2_000, move || {
            corner_variable(benign, false)
        });
        println!("benign accesses {benign}: pct:d=2 {pct}, pctvb:d=2,v=1 {vb} of 2000");
        assert!(vb >= pct, "benign {benign}: PCTVB {vb} < PCT {pct}");
        ratios.push(vb as f64 / pct.max(1) as f64);
        for spec in ["pct:d=2", "pctvb:d=2,v=1"] {
            assert_eq!(
                failing_executions(spec, 500, move || corner_variable(benign, true)),
                0
            );
        }
    }
    assert!(
        ratios[2] > ratios[0] && ratios[2] >= 4.0,
        "advantage must grow: {ratios:?}"
    );
}

/// Seed 000 Fig 8: two increments and a check of a == 2 in three threads (c=0, t=3).
fn fig8() {
    let a = Arc::new(AtomicU64::new(0));
    let incrementers: Vec<_> = (0..2)
        .map(|_| {
            let a = a.clone();
            thread::spawn(move || {
                a.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    let checker = {
        let a = a.clone();
        thread::spawn(move || assert_ne!(a.load(Ordering::SeqCst), 2, "Fig 8: a == 2"))
    };
    for t in incrementers {
        t.join().unwrap();
    }
    checker.join().unwrap();
}

#[test]
fn thread_bounding_finds_a_three_thread_bug_and_reports_its_coverage() {
    let report = Builder::new()
        .ignore_environment()
        .strategy("tb:t=3,c=0".parse().unwrap())
        .executions(200)
        .seed(1)
        .explore(fig8)
        .unwrap();
    assert!(report.first_failure().is_some(), "tb:t=3,c=0 finds Fig 8");
    let coverage = report
        .strategy_stats
        .iter()
        .find(|(k, _)| k.contains("Lemma 4.1"))
        .expect("the coverage statement");
    // n = 4 threads, t + c = 3: 4! * (ln 12 + ln 100) = 24 * 7.09 = 171 executions.
    assert_eq!(coverage.1, "171", "{:?}", report.strategy_stats);
}
