//! Atomic sets and units of work end to end: the declarations a program makes, the monitor
//! that checks executions against the eleven patterns, and the replay of a violation.

use crate::helpers;
use interleave::atomic_set::{unit_of_work_on, SetId};
use interleave::cell::Var;
use interleave::sync::atomic::{AtomicU32, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::{thread, unit_of_work, Builder, Report};

/// Seed 003's account: every method locks the account's monitor, so there is no data race.
struct Account {
    monitor: Mutex<()>,
    checking: Var<i64>,
    savings: Var<i64>,
}

impl Account {
    fn new(checking: i64, savings: i64) -> Account {
        Account {
            monitor: Mutex::new(()),
            checking: Var::new(checking),
            savings: Var::new(savings),
        }
    }

    fn checking(&self) -> i64 {
        unit_of_work_on("checking", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.checking.get()
        })
    }

    fn savings(&self) -> i64 {
        unit_of_work_on("savings", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.savings.get()
        })
    }

    fn credit_interest(&self) {
        unit_of_work_on("credit_interest", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.checking.set(self.checking.get() * 105 / 100);
            self.savings.set(self.savings.get() * 105 / 100);
        })
    }
}

/// A copy of `x` taken while another thread credits interest to it: `fixed` reads both
/// balances in one critical section, the buggy copy in two.
fn copy_while_crediting(fixed: bool) {
    copy_while_crediting_after(fixed, 0);
}

/// The same, with `prep` steps of unrelated work before the credit (the paper's `s4..s6`),
/// which make a random walk rarely credit inside the copy.
fn copy_while_crediting_after(fixed: bool, prep: u32) {
    let x = Arc::new(Account::new(1000, 2000));
    let crediting = {
        let x = x.clone();
        thread::spawn(move || {
            let work = AtomicU32::new(0);
            for _ in 0..prep {
                work.fetch_add(1, Ordering::Relaxed);
            }
            x.credit_interest();
        })
    };
    let copy = unit_of_work("copy", || {
        if fixed {
            let _monitor = x.monitor.lock().unwrap();
            (x.checking.get(), x.savings.get())
        } else {
            (x.checking(), x.savings())
        }
    });
    crediting.join().unwrap();
    assert!(copy.0 * 2 == copy.1, "the copy mixes two states: {copy:?}");
}

fn monitored(fixed: bool) -> Report {
    Builder::new()
        .ignore_environment()
        .monitor_atomic_sets(true)
        .stop_on_first_failure(false)
        .executions(500)
        .explore(move || copy_while_crediting(fixed))
        .unwrap()
}

#[test]
fn the_monitor_reports_the_copy_that_straddles_the_credit() {
    let report = monitored(false);
    assert!(!report.violations.is_empty(), "{report}");
    let violation = &report.violations[0];
    // r_u(m1) w_u'(m) w_u'(m̄) r_u(m2): the copy reads checking, the credit writes both, the
    // copy reads savings.
    assert_eq!(violation.pattern, 9, "{violation}");
    assert_eq!(violation.atomic_set, "the objects of Account#0");
    assert!(violation.unit.contains("`copy`"), "{violation}");
    assert!(
        violation.interleaver.contains("`Account::credit_interest`"),
        "{violation}"
    );
    assert_eq!(violation.accesses.len(), 4);
    // Every violating execution is also a failing one here, and the other way round.
    assert_eq!(report.violating_executions, report.failures.len() as u64);
    assert!(report.violating_executions > 0);

    let replayed = Builder::new()
        .ignore_environment()
        .monitor_atomic_sets(true)
        .replay(&violation.token, || copy_while_crediting(false))
        .unwrap();
    assert_eq!(replayed.violations.len(), 1);
    assert_eq!(replayed.violations[0].pattern, 9);
}

#[test]
fn the_fixed_copy_is_serializable() {
    let report = monitored(true);
    assert!(report.violations.is_empty(), "{report}");
    assert_eq!(report.violating_executions, 0);
    assert!(report.failures.is_empty());
}

#[test]
fn objects_outside_every_declared_owner_are_sets_of_their_own() {
    let report = Builder::new()
        .ignore_environment()
        .custom_strategy(Traced)
        .executions(1)
        .explore(|| {
            let loose = Var::new(0);
            let account = Account::new(1, 2);
            unit_of_work("touch", || {
                loose.set(1);
                account.credit_interest();
            });
        })
        .unwrap();
    assert!(report.failures.is_empty());
}

/// A random walk that checks what `Outcome::declarations` says about the program above.
struct Traced;

impl interleave::strategy::Strategy for Traced {
    fn spec(&self) -> String {
        "traced".to_string()
    }

    fn plan(
        &mut self,
        execution: u64,
        seed: u64,
    ) -> Option<Box<dyn interleave::strategy::Schedule + Send>> {
        interleave::strategy::Random.plan(execution, seed)
    }

    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }

    fn observe(&mut self, _execution: u64, outcome: &interleave::strategy::Outcome) {
        let declarations = outcome.declarations.expect("the program declared a unit");
        // One outermost unit: `credit_interest` nests inside `touch`.
        assert_eq!(declarations.units.len(), 1);
        assert_eq!(declarations.units[0].name, "touch");
        assert_eq!(declarations.owners.len(), 1);
        let sets: Vec<SetId> = declarations.sets.iter().map(|(_, set)| *set).collect();
        // `loose` is alone; the account's mutex and both balances are the account's.
        assert_eq!(sets.iter().filter(|s| **s == SetId::Owner(0)).count(), 3);
        assert_eq!(
            sets.iter()
                .filter(|s| matches!(s, SetId::Single(_)))
                .count(),
            1
        );
    }
}

/// Two counters that must move together, with the attribute instead of closures.
struct Pair {
    monitor: Mutex<()>,
    low: Var<u32>,
    high: Var<u32>,
}

impl Pair {
    #[interleave::unit_of_work]
    fn low(&self) -> u32 {
        let _monitor = self.monitor.lock().unwrap();
        self.low.get()
    }

    #[interleave::unit_of_work]
    fn high(&self) -> u32 {
        let _monitor = self.monitor.lock().unwrap();
        self.high.get()
    }

    /// Moves both, each in its own critical section.
    #[interleave::unit_of_work("bump both")]
    fn bump(&self) {
        {
            let _monitor = self.monitor.lock().unwrap();
            self.low.set(self.low.get() + 1);
        }
        let _monitor = self.monitor.lock().unwrap();
        self.high.set(self.high.get() + 1);
    }

    /// A `&mut self` unit, with an early return.
    #[interleave::unit_of_work]
    fn reset(&mut self) {
        if self.low.get() == 0 {
            return;
        }
        self.low.set(0);
        self.high.set(0);
    }
}

#[interleave::unit_of_work]
fn read_both(pair: &Pair) -> (u32, u32) {
    (pair.low(), pair.high())
}

#[test]
fn the_attribute_declares_units_on_the_receiver() {
    let report = Builder::new()
        .ignore_environment()
        .monitor_atomic_sets(true)
        .stop_on_first_failure(false)
        .executions(300)
        .explore(|| {
            let mut pair = Pair {
                monitor: Mutex::new(()),
                low: Var::new(0),
                high: Var::new(0),
            };
            pair.reset();
            let pair = Arc::new(pair);
            let bumper = {
                let pair = pair.clone();
                thread::spawn(move || pair.bump())
            };
            let (low, high) = read_both(&pair);
            bumper.join().unwrap();
            assert!(low >= high, "a torn read: low {low}, high {high}");
        })
        .unwrap();
    let violation = report
        .violations
        .first()
        .unwrap_or_else(|| panic!("a torn read: {report}"));
    // Pair#0 is the value `reset` ran on, before it moved into the `Arc`; its objects
    // follow it to Pair#1.
    assert_eq!(violation.atomic_set, "the objects of Pair#1", "{violation}");
    assert_eq!(violation.pattern, 9, "{violation}");
    assert!(violation.unit.contains("`read_both`"), "{violation}");
    assert!(
        violation.interleaver.contains("`Pair::bump both`"),
        "{violation}"
    );
}

fn run(spec: &str, seed: u64, executions: u64, fixed: bool) -> Report {
    helpers::builder(spec)
        .seed(seed)
        .stop_on_first_failure(false)
        .executions(executions)
        .explore(move || copy_while_crediting_after(fixed, 12))
        .unwrap()
}

fn stat<'a>(report: &'a Report, key: &str) -> &'a str {
    let value = report.stat(key);
    value.unwrap_or_else(|| panic!("no statistic {key}: {report}"))
}

#[test]
fn assetfuzzer_produces_the_predicted_violation_and_its_failure() {
    for seed in 0..10 {
        let report = run("assetfuzzer", seed, 60, false);
        let violation = report
            .violations
            .first()
            .unwrap_or_else(|| panic!("seed {seed}: {report}"));
        assert_eq!(violation.pattern, 9, "{violation}");
        assert!(!report.failures.is_empty(), "seed {seed}: {report}");
        assert_ne!(stat(&report, "potential violations (phase I)"), "0");
    }
}

#[test]
fn assetfuzzer_predicts_nothing_on_the_fixed_copy() {
    let report = run("assetfuzzer", 0, 60, true);
    assert_eq!(stat(&report, "potential violations (phase I)"), "0");
    assert!(report.violations.is_empty(), "{report}");
    assert!(report.failures.is_empty());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn assetfuzzer_exposes_violations_far_more_often_than_the_runtime_monitor() {
    let (mut asset, mut monitor) = (0, 0);
    for seed in 0..5 {
        asset += run("assetfuzzer", seed, 200, false).violating_executions;
        monitor += run("rm", seed, 200, false).violating_executions;
    }
    println!("violating executions of 1,000: assetfuzzer {asset}, rm {monitor}");
    assert!(
        asset >= 3 * monitor.max(1),
        "assetfuzzer {asset}, rm {monitor}"
    );
}
