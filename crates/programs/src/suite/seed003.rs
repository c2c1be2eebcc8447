//! Seed 003 (Lai, Cheung, Chan: *Detecting Atomic-Set Serializability Violations in
//! Multithreaded Programs through Active Randomized Testing*): the `Account` motivating
//! example ([`account`]) and two bugs of its evaluation subjects: the JDK's
//! `StringBuffer.append(StringBuffer)` ([`string_buffer`]) and Jigsaw's high-level data race on
//! `raw` and `rlen` ([`jigsaw`]).
//!
//! An atomic-set serializability violation needs no data race: every access to the fields is
//! correctly locked, yet a unit of work that reads several fields of an atomic set (here
//! `checking` and `savings` of one account; a buffer's characters and length; `raw` and `rlen`)
//! does so in separate critical sections, and another unit of work on the same atomic set slips
//! in between. The result differs from every serial order of the two units of work, which is
//! what the assertion checks.

use super::rt;
use super::rt::atomic_set::unit_of_work_on;
use super::rt::cell::Var;
use super::rt::sync::atomic::{AtomicU64, Ordering};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// An account's balances (in cents), as the test reads them at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Balances {
    checking: i64,
    savings: i64,
}

/// The paper's `Account`: every `synchronized` method runs holding the instance's monitor, and
/// each field is a tracked variable of its own, so the atomic-set monitor sees every access.
/// Every method is a unit of work on the account's atomic set `{checking, savings}`.
struct Account {
    monitor: Mutex<()>,
    checking: Var<i64>,
    savings: Var<i64>,
}

impl Account {
    /// `Account(double c, double s)`, as field initialisers: the new value is not shared yet,
    /// and initialising a variable is not an access, so there is no unit of work to declare.
    fn new(checking: i64, savings: i64) -> Account {
        Account {
            monitor: Mutex::new(()),
            checking: Var::new(checking),
            savings: Var::new(savings),
        }
    }

    /// `Account(Account acc)`, the buggy copy constructor: `setEqChk(acc); setEqSav(acc);`,
    /// two separate critical sections on `acc`, with no promise of atomicity. A unit of work
    /// on the new account; the reads of `acc` belong to it (it is the outermost unit).
    fn copy_of_buggy(acc: &Account) -> Account {
        let y = Account::new(0, 0);
        unit_of_work_on("copy_of_buggy", &y, || {
            y.set_eq_chk(acc);
            y.set_eq_sav(acc);
        });
        y
    }

    /// The fixed copy constructor: one critical section on `acc` reads the whole atomic set,
    /// then the new account takes both balances.
    fn copy_of_fixed(acc: &Account) -> Account {
        let y = Account::new(0, 0);
        unit_of_work_on("copy_of_fixed", &y, || {
            let (checking, savings) = {
                let _monitor = acc.monitor.lock().unwrap();
                (acc.checking.get(), acc.savings.get())
            };
            let _monitor = y.monitor.lock().unwrap();
            y.checking.set(checking);
            y.savings.set(savings);
        });
        y
    }

    /// `synchronized double getChk()`.
    fn get_chk(&self) -> i64 {
        unit_of_work_on("get_chk", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.checking.get()
        })
    }

    /// `synchronized double getSav()`.
    fn get_sav(&self) -> i64 {
        unit_of_work_on("get_sav", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.savings.get()
        })
    }

    /// `synchronized void setEqChk(Account acc) { setChk(acc.getChk()); }`: holds this
    /// account's monitor, takes `acc`'s inside `getChk` (Java monitors are reentrant, so the
    /// nested `setChk` is a plain write here).
    fn set_eq_chk(&self, acc: &Account) {
        unit_of_work_on("set_eq_chk", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.checking.set(acc.get_chk());
        })
    }

    /// `synchronized void setEqSav(Account acc) { setSav(acc.getSav()); }`.
    fn set_eq_sav(&self, acc: &Account) {
        unit_of_work_on("set_eq_sav", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.savings.set(acc.get_sav());
        })
    }

    /// `boolean isLegal() { return getChk() >= 0 && getSav() >= 0; }` (two critical sections,
    /// harmless here: nothing runs concurrently with it in the test).
    fn is_legal(&self) -> bool {
        unit_of_work_on("is_legal", self, || {
            self.get_chk() >= 0 && self.get_sav() >= 0
        })
    }

    /// `synchronized void creditInterest(double rate)`: both fields grow by `rate_pct` percent
    /// in one critical section (a read and a write of each).
    fn credit_interest(&self, rate_pct: i64) {
        unit_of_work_on("credit_interest", self, || {
            let _monitor = self.monitor.lock().unwrap();
            let checking = self.checking.get();
            self.checking.set(checking + checking * rate_pct / 100);
            let savings = self.savings.get();
            self.savings.set(savings + savings * rate_pct / 100);
        })
    }

    /// Both balances in one critical section (the test's final check).
    fn balances(&self) -> Balances {
        unit_of_work_on("balances", self, || {
            let _monitor = self.monitor.lock().unwrap();
            Balances {
                checking: self.checking.get(),
                savings: self.savings.get(),
            }
        })
    }
}

/// Initial balances of `x` and the interest rate credited by `t2`.
const CHECKING: i64 = 100_000; // 1000.00
const SAVINGS: i64 = 200_000; // 2000.00
const RATE_PCT: i64 = 5;

/// Steps of each of the statements `s1`..`s6`.
pub const STATEMENT_STEPS: u32 = 7;

/// One of the statements `s1`..`s6` of the test "that do not access the fields of x and y":
/// [`STATEMENT_STEPS`] updates of a statistics counter the test keeps.
fn other_statement(stats: &AtomicU64) {
    for _ in 0..STATEMENT_STEPS {
        stats.fetch_add(1, Ordering::Relaxed);
    }
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
/// Each field is a `Var` and every `synchronized` method takes the account's `monitor` (a
/// `Mutex<()>`), as in the Java code, so there is no data race. As in the paper's evaluation,
/// every method, the copy constructor included, is a unit of work on its account's atomic set
/// (the account's fields, `{checking, savings}`), so the atomic-set monitor reports the bug as
/// pattern 9, `r(x.c) w'(x.c) w'(x.s) r(x.s)`, on `x`'s set (`Account#0`: `isLegal` declares
/// it first): `u` is the copy constructor (`copy_of_buggy`, a unit on `y` in which `setEqChk`,
/// `setEqSav` and the getters nest) and `u'` is `credit_interest`. t1 joins t2 and hands `y`
/// to the test body, which asserts that `y` equals `x` before the interest or `x` after it.
///
/// Choices left open: the value constructor is plain field initialisation, not a unit of work
/// (nothing shares the value yet); each unrelated statement `s1..s6` is [`STATEMENT_STEPS`]
/// updates of a statistics counter (an atomic in no account, so an atomic set of its own that
/// only steps outside every unit of work touch). The window is the few steps between the two
/// critical sections on `x` in the copy constructor, and t2 must run all of `s4..s6` and
/// `creditInterest` inside it; since t1 enters the window right after starting t2, a random
/// walk rarely keeps it open through t2's statements (the paper notes that random schedules
/// hit this violation with low probability; with 7 steps per statement, a random walk exposes
/// the bug in about 0.25 % of its executions). PCT depth 2: t1 above t2, one change point
/// inside the window. Fixed twin: the copy constructor reads both fields in one critical
/// section on `x`.
pub fn account(variant: Variant) {
    let x = Arc::new(Account::new(CHECKING, SAVINGS));
    let stats = Arc::new(AtomicU64::new(0));

    let t1 = {
        let (x, stats) = (x.clone(), stats.clone());
        thread::spawn(move || {
            if !rt::branch(x.is_legal()) {
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
    let y = t1.join().unwrap().expect("x is legal").balances();

    let before = Balances {
        checking: CHECKING,
        savings: SAVINGS,
    };
    let after = Balances {
        checking: CHECKING + CHECKING * RATE_PCT / 100,
        savings: SAVINGS + SAVINGS * RATE_PCT / 100,
    };
    // Which serial order the copy matches is schedule sensitive (both are correct); the
    // assertion as a whole is schedule sensitive only through the bug.
    assert!(
        rt::branch(y == before) || rt::branch(y == after),
        "Account: the copy y must equal x either before or after creditInterest (atomic set {{checking, savings}}), got {y:?}; serial outcomes are {before:?} and {after:?}"
    );
    let x_after = x.balances();
    assert!(
        rt::branch(x_after == after),
        "Account: x must have been credited exactly once, got {x_after:?}"
    );
    let statements = stats.load(Ordering::Relaxed);
    assert!(
        rt::branch(statements == 6 * u64::from(STATEMENT_STEPS)),
        "Account: s1..s6 each ran once, counted {statements} steps"
    );
}

/// Steps of unrelated work the truncating thread of [`string_buffer`] does first.
pub const SB_PREP: u32 = 13;

/// Java's `StringBuffer` (JDK 1.4): every method is `synchronized`, i.e. runs holding the
/// buffer's `monitor`, and reads and writes the two fields of its atomic set `{value, count}`,
/// each a tracked variable of its own. Every method is a unit of work on that set.
struct StringBuffer {
    monitor: Mutex<()>,
    /// `char[] value`: the characters; its length is the buffer's capacity.
    value: Var<Vec<u8>>,
    /// `int count`: how many of `value`'s characters are in use.
    count: Var<usize>,
}

impl StringBuffer {
    /// `StringBuffer(String str)`, as field initialisers: the capacity is `str.length() + 16`,
    /// as in Java.
    fn new(s: &str) -> StringBuffer {
        let mut value = s.as_bytes().to_vec();
        value.resize(s.len() + 16, 0);
        StringBuffer {
            monitor: Mutex::new(()),
            value: Var::new(value),
            count: Var::new(s.len()),
        }
    }

    /// `synchronized int length()`.
    fn length(&self) -> usize {
        unit_of_work_on("length", self, || {
            let _monitor = self.monitor.lock().unwrap();
            self.count.get()
        })
    }

    /// `synchronized void getChars(int srcBegin, int srcEnd, char[] dst, int dstBegin)`, which
    /// throws `StringIndexOutOfBoundsException` if `srcEnd` is beyond `count`. `dst` is the
    /// caller's character array (`append` passes its own `value`, which its monitor guards).
    fn get_chars(&self, src_begin: usize, src_end: usize, dst: &Var<Vec<u8>>, dst_begin: usize) {
        unit_of_work_on("get_chars", self, || {
            let _monitor = self.monitor.lock().unwrap();
            let count = self.count.get();
            // Java's `if (srcEnd > count) throw new StringIndexOutOfBoundsException(srcEnd)`.
            assert!(
                rt::branch(src_end <= count),
                "StringBuffer.getChars: srcEnd {src_end} exceeds the length {count} (StringIndexOutOfBoundsException): append read the other buffer's length and characters in separate critical sections"
            );
            let chars = self.value.with(|value| value[src_begin..src_end].to_vec());
            dst.with_mut(|dst| dst[dst_begin..dst_begin + chars.len()].copy_from_slice(&chars));
        })
    }

    /// `synchronized void setLength(int newLength)`: grows the capacity if needed, pads with
    /// `'\0'` when growing, and sets `count`.
    fn set_length(&self, new_length: usize) {
        unit_of_work_on("set_length", self, || {
            let _monitor = self.monitor.lock().unwrap();
            if rt::branch(new_length > self.value.with(Vec::len)) {
                self.expand_capacity(new_length);
            }
            let count = self.count.get();
            if rt::branch(count < new_length) {
                self.value
                    .with_mut(|value| value[count..new_length].fill(0));
            }
            self.count.set(new_length);
        })
    }

    /// `void expandCapacity(int minimumCapacity)`, called holding the monitor: the capacity
    /// becomes `(capacity + 1) * 2`, or `minimum` if that is more.
    fn expand_capacity(&self, minimum: usize) {
        self.value.with_mut(|value| {
            let capacity = ((value.len() + 1) * 2).max(minimum);
            value.resize(capacity, 0);
        });
    }

    /// `synchronized StringBuffer append(StringBuffer sb)` as in the buggy JDK: holding this
    /// buffer's monitor, it asks `sb` for its length (one critical section on `sb`), grows this
    /// buffer if needed, then copies the characters with `sb.getChars` (another critical
    /// section on `sb`).
    fn append_buggy(&self, sb: &StringBuffer) {
        unit_of_work_on("append_buggy", self, || {
            let _monitor = self.monitor.lock().unwrap();
            let len = sb.length();
            let count = self.count.get();
            let new_count = count + len;
            // `if (newcount > value.length) expandCapacity(newcount)`.
            if rt::branch(new_count > self.value.with(Vec::len)) {
                self.expand_capacity(new_count);
            }
            sb.get_chars(0, len, &self.value, count);
            self.count.set(new_count);
        })
    }

    /// The fixed `append`: the other buffer's length and characters are read in one critical
    /// section on it.
    fn append_fixed(&self, sb: &StringBuffer) {
        unit_of_work_on("append_fixed", self, || {
            let _monitor = self.monitor.lock().unwrap();
            let chars = {
                let _other = sb.monitor.lock().unwrap();
                let len = sb.count.get();
                sb.value.with(|value| value[..len].to_vec())
            };
            let count = self.count.get();
            let new_count = count + chars.len();
            if rt::branch(new_count > self.value.with(Vec::len)) {
                self.expand_capacity(new_count);
            }
            self.value
                .with_mut(|value| value[count..new_count].copy_from_slice(&chars));
            self.count.set(new_count);
        })
    }

    /// `synchronized String toString()`: the characters in use.
    fn contents(&self) -> Vec<u8> {
        unit_of_work_on("contents", self, || {
            let _monitor = self.monitor.lock().unwrap();
            let count = self.count.get();
            self.value.with(|value| value[..count].to_vec())
        })
    }
}

/// The classic `StringBuffer.append(StringBuffer)` atomicity bug of the JDK (the paper's
/// `StringBuffer` subject, one of its six JDK library subjects).
///
/// Original (Java): `sb1.append(sb2)` is `synchronized` on `sb1` only. It calls `sb2.length()`
/// and later `sb2.getChars(0, len, value, count)`, each `synchronized` on `sb2`, so the atomic
/// set of `sb2` (`value` and `count`) is read by one unit of work in two critical sections. A
/// thread that shrinks `sb2` in between (`setLength`, `delete`) makes `getChars` throw
/// `StringIndexOutOfBoundsException`; the paper reports that its subject raises uncaught
/// exceptions under the testers. No access is unlocked, so a race detector sees nothing.
///
/// Rebuilt with byte strings: `sb1 = "log: "`, `sb2 = "abcdef"`; thread t1 runs
/// `sb1.append(sb2)`, thread t2 runs `sb2.setLength(3)`. `value` (the character array, its
/// length the capacity) and `count` are two `Var`s under the buffer's `monitor`, and, as in
/// the paper's evaluation, every method is a unit of work on its buffer's atomic set
/// `{value, count}`. `getChars` checks its bounds as Java's does, so the exception is an
/// assertion naming the violated atomic set. The atomic-set monitor reports the bug as pattern
/// 2, `r(count) w'(count) r(count)`, on `sb2`'s set (`StringBuffer#1`: `append` declares `sb1`
/// first, then `sb2` through `length()`, before `setLength` can interleave): `u` is
/// `append_buggy` (a unit on `sb1` in which `length` and `getChars` nest) and `u'` is
/// `set_length`. At the end `sb1` must be `"log: abcdef"` or `"log: abc"` (the two serial
/// orders).
///
/// Choices left open: the constructor is plain field initialisation with Java's capacity
/// (`length + 16`, so `append` needs no `expandCapacity` here), and t2 first does [`SB_PREP`]
/// steps of unrelated work (it builds the buffer's next use), so a random walk usually lets
/// the short `append` finish first (13 steps: it exposes the bug in about 4 % of its
/// executions).
///
/// Bug: t2's `setLength` must run between t1's `length()` and `getChars()`: PCT depth 2 (t1
/// above t2, one change point right after `length()`). Fixed twin: `append` reads the other
/// buffer's length and characters in one critical section on it (`sb1`'s monitor, then
/// `sb2`'s; t2 only ever takes `sb2`'s, so no deadlock).
pub fn string_buffer(variant: Variant) {
    let sb1 = Arc::new(StringBuffer::new("log: "));
    let sb2 = Arc::new(StringBuffer::new("abcdef"));
    let t1 = {
        let (sb1, sb2) = (sb1.clone(), sb2.clone());
        thread::spawn(move || match variant {
            Variant::Buggy => sb1.append_buggy(&sb2),
            Variant::Fixed => sb1.append_fixed(&sb2),
        })
    };
    let t2 = {
        let sb2 = sb2.clone();
        thread::spawn(move || {
            unrelated_work(SB_PREP);
            sb2.set_length(3);
        })
    };
    t1.join().unwrap();
    t2.join().unwrap();

    let result = sb1.contents();
    // As in `account`: which serial order `append` matches is schedule sensitive and correct.
    assert!(
        rt::branch(result == b"log: abcdef") || rt::branch(result == b"log: abc"),
        "StringBuffer: sb1.append(sb2) must copy sb2 either before or after setLength, got {:?}",
        String::from_utf8_lossy(&result)
    );
    let truncated = sb2.contents();
    assert!(
        rt::branch(truncated == b"abc"),
        "StringBuffer: sb2 was truncated to {:?}, not to \"abc\"",
        String::from_utf8_lossy(&truncated)
    );
}

/// Steps of unrelated work the parsing thread of [`jigsaw`] does before it stores its bytes.
pub const JIGSAW_PREP: u32 = 11;

/// The bytes t1 of [`jigsaw`] produces from the parsed value (`updateByteValue`).
const JIGSAW_T1_BYTES: &[u8] = b"65536";
/// The bytes t2 of [`jigsaw`] copies from the incoming buffer (`buf.getByteCopy()`).
const JIGSAW_T2_BYTES: &[u8] = b"1024";

/// A header value object (`BasicValue` / `HttpInteger`) with the correlated fields `raw`, the
/// value's bytes on the wire, and `rlen`, how many bytes of `raw` are valid: their atomic set
/// is `{raw, rlen}`. Each field is a tracked variable, every access to it holds the value's
/// `monitor`, and every method is a unit of work on the set.
struct HeaderValue {
    monitor: Mutex<()>,
    raw: Var<Option<Vec<u8>>>,
    rlen: Var<usize>,
}

impl HeaderValue {
    /// A value with no bytes yet (`raw == null`, `rlen == 0`).
    fn new() -> HeaderValue {
        HeaderValue {
            monitor: Mutex::new(()),
            raw: Var::new(None),
            rlen: Var::new(0),
        }
    }

    /// `BasicValue` (thread t1): if the value has no bytes yet, compute them and set the
    /// length. Buggy: `s1: if (raw == null)`, `s2: raw = updateByteValue()`,
    /// `s3: rlen = raw.length` (of the bytes t1 produced) are three critical sections.
    fn emit_bytes(&self, variant: Variant) {
        unit_of_work_on("emit_bytes", self, || match variant {
            Variant::Buggy => {
                let missing = {
                    let _monitor = self.monitor.lock().unwrap();
                    self.raw.with(Option::is_none) // s1
                };
                if missing {
                    let bytes = JIGSAW_T1_BYTES.to_vec(); // updateByteValue()
                    let len = bytes.len();
                    {
                        let _monitor = self.monitor.lock().unwrap();
                        self.raw.set(Some(bytes)); // s2
                    }
                    let _monitor = self.monitor.lock().unwrap();
                    self.rlen.set(len); // s3
                }
            }
            Variant::Fixed => {
                let _monitor = self.monitor.lock().unwrap();
                if self.raw.with(Option::is_none) {
                    let bytes = JIGSAW_T1_BYTES.to_vec();
                    let len = bytes.len();
                    self.raw.set(Some(bytes));
                    self.rlen.set(len);
                }
            }
        })
    }

    /// `HttpInteger` (thread t2): store a copy of the incoming bytes. Buggy:
    /// `s4: raw = buf.getByteCopy()` and `s5: rlen = raw.length` (a read of `raw` and a write
    /// of `rlen`) are two critical sections.
    fn set_bytes(&self, variant: Variant) {
        unit_of_work_on("set_bytes", self, || {
            unrelated_work(JIGSAW_PREP); // parse the incoming header
            let copy = JIGSAW_T2_BYTES.to_vec(); // buf.getByteCopy()
            match variant {
                Variant::Buggy => {
                    {
                        let _monitor = self.monitor.lock().unwrap();
                        self.raw.set(Some(copy)); // s4
                    }
                    let _monitor = self.monitor.lock().unwrap();
                    let len = self.raw.with(|raw| raw.as_ref().map_or(0, Vec::len)); // s5
                    self.rlen.set(len);
                }
                Variant::Fixed => {
                    let _monitor = self.monitor.lock().unwrap();
                    let len = copy.len();
                    self.raw.set(Some(copy));
                    self.rlen.set(len);
                }
            }
        })
    }

    /// `raw` and `rlen` in one critical section, as Jigsaw reads them to emit the header.
    fn raw_and_rlen(&self) -> (Option<Vec<u8>>, usize) {
        unit_of_work_on("raw_and_rlen", self, || {
            let _monitor = self.monitor.lock().unwrap();
            (self.raw.get(), self.rlen.get())
        })
    }
}

/// Jigsaw: the high-level data race on `raw` and `rlen` (the paper's figure of a Jigsaw bug).
///
/// Original (Java, W3C's Jigsaw web server): `raw` is a header value's byte buffer and `rlen`
/// its length. Thread t1 (`BasicValue.java`) runs `s1: if (raw == null)`,
/// `s2: raw = updateByteValue()`, `s3: rlen = raw.length`; thread t2 (`HttpInteger.java`)
/// runs `s4: raw = buf.getByteCopy()`, `s5: rlen = raw.length`. The fields are correlated but
/// never updated atomically: when t1 writes `raw`, t2 overwrites `raw` and sets `rlen`, and t1
/// then sets `rlen` from the buffer it produced, `raw` and `rlen` disagree. RaceFuzzer reports
/// s2/s4 and s3/s5 as two separate races; AssetFuzzer reports the atomic set `{raw, rlen}`.
///
/// Rebuilt with each access to the two fields locked (the value's `monitor`, taken separately
/// for each of s1..s5, and the fields two `Var`s), so the bug is purely the high-level race,
/// and with the header then emitted by the test body (Jigsaw writes `raw[0..rlen]`), which
/// first checks that `rlen` is `raw`'s length. As in the paper's evaluation, each thread's
/// code is a method of the value (in Jigsaw `HttpInteger` extends `BasicValue`, which declares
/// both fields) and so a unit of work on its atomic set `{raw, rlen}` (`HeaderValue#0`). The
/// atomic-set monitor reports the bug as pattern 6, `w(raw) w'(raw) w'(rlen) w(rlen)`, with
/// `u` = `emit_bytes` and `u'` = `set_bytes`.
///
/// The monitor also reports executions the assertion accepts: when s4 falls between s1 and
/// s2, t1 overwrites t2's bytes (pattern 1, `r(raw) w'(raw) w(raw)`, a lost update), and if s5
/// comes after s2, t2 computes `rlen` from t1's bytes (pattern 4, with `u` = `set_bytes`:
/// `w(raw) w'(raw) r(raw)`). Both leave `raw` and `rlen` consistent, with t1's bytes: an
/// outcome no serial order gives (both give t2's bytes), but not the bug this program stands
/// for, an `rlen` that describes the wrong buffer; the assertion keeps accepting either
/// thread's bytes.
///
/// Choices left open: t1 produces `"65536"` and t2 copies `"1024"` (different lengths, so the
/// mix is visible: emitting would read past the 4-byte buffer), t1 computes `rlen` from its
/// own bytes (the paper: it "sets rlen according to the ... original buffer"), and t2 first
/// does [`JIGSAW_PREP`] steps of unrelated work (parsing the incoming header), so a random
/// walk usually lets t1 finish first (11 steps: it exposes the bug in about 3 % of its
/// executions).
///
/// Bug: both of t2's writes must fall between t1's s2 and s3, after t1's s1 (otherwise t1
/// keeps t2's bytes): PCT depth 2 (t1 above t2, one change point right after s2). Fixed twin:
/// t1's check and both writes form one critical section, and so do t2's two writes.
pub fn jigsaw(variant: Variant) {
    let value = Arc::new(HeaderValue::new());

    let t1 = {
        let value = value.clone();
        thread::spawn(move || value.emit_bytes(variant))
    };
    let t2 = {
        let value = value.clone();
        thread::spawn(move || value.set_bytes(variant))
    };
    t1.join().unwrap();
    t2.join().unwrap();

    let (raw, rlen) = value.raw_and_rlen();
    let raw = raw.expect("Jigsaw: raw is set by both threads");
    assert_eq!(
        rlen,
        raw.len(),
        "Jigsaw: rlen must be the length of raw (atomic set {{raw, rlen}}), raw is {:?}",
        String::from_utf8_lossy(&raw)
    );
    let emitted = &raw[..rlen];
    assert!(
        emitted == JIGSAW_T1_BYTES || emitted == JIGSAW_T2_BYTES,
        "Jigsaw: the emitted header is one thread's bytes"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "assetfuzzer-account",
        origin: "Lai et al. (AssetFuzzer), motivating example (class Account and its test case)",
        bug: BugKind::AtomicSetViolation,
        summary: "the copy constructor reads checking and savings in two critical sections; creditInterest between them yields a mixed copy",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: account,
    },
    Program {
        name: "assetfuzzer-string-buffer",
        origin: "Lai et al. (AssetFuzzer), StringBuffer subject (JDK StringBuffer.append(StringBuffer))",
        bug: BugKind::AtomicSetViolation,
        summary: "append reads the other buffer's length and characters in two critical sections; a setLength between them makes getChars throw",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: string_buffer,
    },
    Program {
        name: "assetfuzzer-jigsaw",
        origin: "Lai et al. (AssetFuzzer), Jigsaw subject (high-level data race on raw and rlen)",
        bug: BugKind::AtomicSetViolation,
        summary: "raw and rlen are updated in separate critical sections; the other thread's update between them leaves rlen describing the wrong buffer",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        long: false,
        needs_weak_memory: false,
        run: jigsaw,
    },
];
