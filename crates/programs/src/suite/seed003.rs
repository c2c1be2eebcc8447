//! Seed 003 (Lai, Cheung, Chan: *Detecting Atomic-Set Serializability Violations in
//! Multithreaded Programs through Active Randomized Testing*): the `Account` motivating
//! example.
//!
//! An atomic-set serializability violation needs no data race: every access to the fields is
//! correctly locked, yet a unit of work that reads several fields of an atomic set (here
//! `checking` and `savings` of one account) does so in separate critical sections, and another
//! unit of work on the same atomic set slips in between. The result differs from every serial
//! order of the two units of work, which is what the assertion checks.

use super::rt::sync::atomic::{AtomicU64, Ordering};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// The fields of an account (amounts in cents). Their atomic set is {checking, savings}.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fields {
    checking: i64,
    savings: i64,
}

/// The paper's `Account`: every method is `synchronized`, i.e. runs holding the instance's
/// monitor, modelled by a `Mutex` around the fields.
struct Account {
    fields: Mutex<Fields>,
}

impl Account {
    /// `Account(double c, double s)`.
    fn new(checking: i64, savings: i64) -> Account {
        Account {
            fields: Mutex::new(Fields { checking, savings }),
        }
    }

    /// `Account(Account acc)`, the buggy copy constructor: `setEqChk(acc); setEqSav(acc);`,
    /// two separate critical sections on `acc`, with no promise of atomicity.
    fn copy_of_buggy(acc: &Account) -> Account {
        let y = Account::new(0, 0);
        y.set_eq_chk(acc);
        y.set_eq_sav(acc);
        y
    }

    /// The fixed copy constructor: one critical section on `acc` reads the whole atomic set.
    fn copy_of_fixed(acc: &Account) -> Account {
        let f = *acc.fields.lock().unwrap();
        Account::new(f.checking, f.savings)
    }

    /// `synchronized double getChk()`.
    fn get_chk(&self) -> i64 {
        self.fields.lock().unwrap().checking
    }

    /// `synchronized double getSav()`.
    fn get_sav(&self) -> i64 {
        self.fields.lock().unwrap().savings
    }

    /// `synchronized void setEqChk(Account acc) { setChk(acc.getChk()); }`: holds this
    /// account's monitor, takes `acc`'s inside `getChk` (Java monitors are reentrant, so the
    /// nested `setChk` is a plain write here).
    fn set_eq_chk(&self, acc: &Account) {
        let mut me = self.fields.lock().unwrap();
        me.checking = acc.get_chk();
    }

    /// `synchronized void setEqSav(Account acc) { setSav(acc.getSav()); }`.
    fn set_eq_sav(&self, acc: &Account) {
        let mut me = self.fields.lock().unwrap();
        me.savings = acc.get_sav();
    }

    /// `boolean isLegal() { return getChk() >= 0 && getSav() >= 0; }` (two critical sections,
    /// harmless here: nothing runs concurrently with it in the test).
    fn is_legal(&self) -> bool {
        self.get_chk() >= 0 && self.get_sav() >= 0
    }

    /// `synchronized void creditInterest(double rate)`: both fields grow by `rate_pct` percent
    /// in one critical section.
    fn credit_interest(&self, rate_pct: i64) {
        let mut f = self.fields.lock().unwrap();
        f.checking += f.checking * rate_pct / 100;
        f.savings += f.savings * rate_pct / 100;
    }

    fn snapshot(&self) -> Fields {
        *self.fields.lock().unwrap()
    }
}

/// Initial balances of `x` and the interest rate credited by `t2`.
const CHECKING: i64 = 100_000; // 1000.00
const SAVINGS: i64 = 200_000; // 2000.00
const RATE_PCT: i64 = 5;

/// Steps of each of the statements `s1`..`s6`.
pub const STATEMENT_STEPS: u32 = 6;

/// One of the statements `s1`..`s6` of the test "that do not access the fields of x and y":
/// [`STATEMENT_STEPS`] updates of a statistics counter the test keeps.
fn other_statement(stats: &AtomicU64) {
    unrelated_work(stats, STATEMENT_STEPS);
}

/// The `Account` test case: thread t1 copies account `x` while thread t2 credits interest to it.
///
/// Original (Java): the test creates account `x` and starts t1. t1 checks `x.isLegal()`; if
/// so it starts t2, creates `y = new Account(x)` and runs statements `s1; s2; s3` that touch
/// neither account. t2 runs `s4; s5; s6` (likewise unrelated), then `x.creditInterest(rate)`.
/// The copy constructor calls `setEqChk(x)` then `setEqSav(x)`, each locking `x` separately, so
/// `creditInterest` can run between them: `y` then has the old checking balance and the new
/// savings balance, a state no serial order of the two units of work produces (problematic
/// access pattern `r(x.c) w(x.c) w(x.s) r(x.s)`). No access is unlocked, so race detectors and
/// lock-based atomicity checkers see nothing.
///
/// Rebuilt with integer cents instead of `double`, `x = (1000.00, 2000.00)` and a 5 % rate.
/// t1 joins t2 and hands `y` to the test body, which asserts that `y` equals `x` before the
/// interest or `x` after it. Choice left open: each unrelated statement `s1..s6` is
/// [`STATEMENT_STEPS`] updates of a statistics counter. The window is the few steps between the
/// two critical sections on `x` in the copy constructor, and t2 must run all of `s4..s6` and
/// `creditInterest` inside it; since t1 enters the window right after starting t2, a random
/// walk rarely keeps it open through t2's statements (the paper notes that random schedules
/// hit this violation with low probability). PCT depth 2: t1 above t2, one change point inside
/// the window. Fixed twin: the copy constructor reads both fields in one critical section on
/// `x`.
pub fn account(variant: Variant) {
    let x = Arc::new(Account::new(CHECKING, SAVINGS));
    let stats = Arc::new(AtomicU64::new(0));

    let t1 = {
        let (x, stats) = (x.clone(), stats.clone());
        thread::spawn(move || {
            if !x.is_legal() {
                return None;
            }
            let t2 = {
                let (x, stats) = (x.clone(), stats.clone());
                thread::spawn(move || {
                    other_statement(&stats); // s4
                    other_statement(&stats); // s5
                    other_statement(&stats); // s6
                    x.credit_interest(RATE_PCT);
                })
            };
            let y = match variant {
                Variant::Buggy => Account::copy_of_buggy(&x),
                Variant::Fixed => Account::copy_of_fixed(&x),
            };
            other_statement(&stats); // s1
            other_statement(&stats); // s2
            other_statement(&stats); // s3
            t2.join().unwrap();
            Some(y)
        })
    };
    let y = t1.join().unwrap().expect("x is legal").snapshot();

    let before = Fields {
        checking: CHECKING,
        savings: SAVINGS,
    };
    let after = Fields {
        checking: CHECKING + CHECKING * RATE_PCT / 100,
        savings: SAVINGS + SAVINGS * RATE_PCT / 100,
    };
    assert!(
        y == before || y == after,
        "Account: the copy y must equal x either before or after creditInterest (atomic set {{checking, savings}}), got {y:?}; serial outcomes are {before:?} and {after:?}"
    );
    assert_eq!(
        x.snapshot(),
        after,
        "Account: x must have been credited exactly once"
    );
    assert_eq!(
        stats.load(Ordering::Relaxed),
        6 * u64::from(STATEMENT_STEPS),
        "Account: s1..s6 each ran once"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "seed003-account",
        origin: "seed 003, motivating example (class Account and its test case)",
        bug: BugKind::AtomicSetViolation,
        summary: "the copy constructor reads checking and savings in two critical sections; creditInterest between them yields a mixed copy",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        run: account,
    },
];
