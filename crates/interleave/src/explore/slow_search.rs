//! The slow-search notice: an exploration that is still running after
//! [`Config::slow_search_notice`] says so once on the standard error, with what it has seen, so
//! that a test which would run for minutes or hours does not look hung. A sampler's run is
//! bounded by its budget, and its notice says how far it got and how long the rest should take
//! (a newcomer's hundred threads ran 89 s in a debug build without a word); an exhaustive
//! search (`dfs`, `dpor`, `icb`) may never end, and its notice says why.
//!
//! The case of the exhaustive searches: a thread that waits in a loop for a race it can lose again and again (a
//! spin lock taken in a loop, a flag polled under a spin lock, a spin barrier) gives the
//! depth-first searches an infinite tree. Every schedule is fair, since both threads keep
//! stepping, so no yield rule cuts it; each execution backtracks to the deepest race and loses
//! it once more, so executions grow by a step or so each and the search never ends and never
//! fails (a newcomer's ten-line flag under a spin lock: 20,912 `dpor` executions in 30 s, the
//! later ones thousands of steps long). loom fails such a model with its branch limit; here
//! the notice names the pattern when the executions have grown tenfold, and the bound that makes
//! the search finite.
//!
//! The notice goes to the process's standard error directly, not through `eprintln!`, which the
//! test harness captures and shows only when the test ends. It changes nothing in the report:
//! the same seed and program give the same report whether or not it was printed.

use std::io::Write;
use std::time::{Duration, Instant};

/// How many executions the notice waits between two looks at the clock.
const CLOCK_EVERY: u64 = 64;

/// Executions have grown the way a spin that keeps losing its race makes them grow when the
/// longest is at least this many times the longest of the first [`CLOCK_EVERY`]: a search that
/// backtracks to the deepest race first has run its long and short branches by then, unless
/// each execution only adds to the last one's spin. (Comparing with the shortest execution
/// would count executions cut short, by a failure or by every thread sleeping, as growth.)
const GROWTH: u64 = 10;

/// And at least this many steps longer.
const GROWN_BY: u64 = 500;

/// Watches one exploration's executions for the notice.
pub(super) struct SlowSearch {
    /// When to print the notice; `None` when the notice is off.
    after: Option<Duration>,
    /// The strategy searches exhaustively, and may never end.
    exhaustive: bool,
    search: SearchNamed,
    started: Instant,
    /// Whether the notice was printed.
    noticed: bool,
    /// Whether there is nothing more to say: a sampler's notice was printed, or an exhaustive
    /// search's notice said that the executions grew (a notice printed before they had is
    /// followed by that explanation once they have: at most two texts in all).
    done: bool,
    /// The longest of the first [`CLOCK_EVERY`] executions, once they have run.
    first_longest: Option<u64>,
    longest: u64,
}

impl SlowSearch {
    /// Watches the exploration `search`, started now; `after` is `None` when it should never
    /// print.
    pub(super) fn new(
        after: Option<Duration>,
        exhaustive: bool,
        search: SearchNamed,
    ) -> SlowSearch {
        SlowSearch {
            after,
            exhaustive,
            search,
            started: Instant::now(),
            noticed: false,
            done: false,
            first_longest: None,
            longest: 0,
        }
    }

    /// Notes an execution of `steps` steps, the `executions`-th observed, and prints the notice
    /// once the search has run for longer than its threshold (and its follow-up once the
    /// executions are seen to have grown).
    pub(super) fn observe(&mut self, steps: u64, executions: u64) {
        if let Some(text) = self.notice_due(steps, executions) {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }

    /// [`SlowSearch::observe`]'s text, when one is due.
    fn notice_due(&mut self, steps: u64, executions: u64) -> Option<String> {
        let after = self.after?;
        if self.done {
            return None;
        }
        self.longest = self.longest.max(steps);
        if !executions.is_multiple_of(CLOCK_EVERY) {
            return None;
        }
        let first_longest = *self.first_longest.get_or_insert(self.longest);
        if self.noticed {
            return self.grown(first_longest).then(|| {
                self.done = true;
                let mut text = format!(
                    "\ninterleave: the {} search{} is still not finished after {} executions.\n",
                    self.search.spec,
                    self.search.in_test(),
                    thousands(executions),
                );
                self.explain_growth(first_longest, &mut text);
                text
            });
        }
        let elapsed = self.started.elapsed();
        if elapsed < after {
            return None;
        }
        self.noticed = true;
        if !self.exhaustive {
            self.done = true;
            return Some(sampler_notice(elapsed, executions, &self.search));
        }
        let mut text = format!(
            "\ninterleave: the {} search{} has run for {} s ({} executions of a budget of {}) \
             and is not finished.\n",
            self.search.spec,
            self.search.in_test(),
            elapsed.as_secs(),
            thousands(executions),
            thousands(self.search.budget),
        );
        if self.grown(first_longest) {
            self.done = true;
            self.explain_growth(first_longest, &mut text);
        } else {
            text.push_str(
                "  Its search space may be far larger than the budget: the number of schedules \
                 grows exponentially with the threads' steps.\n",
            );
            text.push_str(ADVICE);
        }
        Some(text)
    }

    /// Whether the executions have grown the way a spin that keeps losing its race makes them.
    fn grown(&self, first_longest: u64) -> bool {
        self.longest >= first_longest.saturating_mul(GROWTH)
            && self.longest - first_longest >= GROWN_BY
    }

    fn explain_growth(&self, first_longest: u64, text: &mut String) {
        text.push_str(&format!(
            "  Its executions have grown from at most {} steps in the first {CLOCK_EVERY} to {} \
             steps: most likely a thread waits in a \
             loop for a race it can lose every time (a spin lock taken in a loop, a flag polled \
             under a spin lock, a spin barrier: the other thread takes the lock again between \
             the waiter's look and its compare-and-swap). Every such schedule is fair, so the \
             search tree is infinite: it never ends and never fails, where loom stops with \
             \"Model exceeded maximum number of branches\".\n",
            thousands(first_longest),
            thousands(self.longest),
        ));
        text.push_str(ADVICE);
    }
}

/// What every notice of an exhaustive search ends with.
const ADVICE: &str = "  A preemption bound makes the search finite (`dpor:c=2`, or \
    LOOM_MAX_PREEMPTIONS=2 under interleave-loom), and the samplers (`auto`) find most bugs in \
    far fewer executions. INTERLEAVE_SLOW_NOTICE=<seconds> moves this notice, 0 turns it off.\n";

/// The notice of a sampler that has run `executions` of its budget in `elapsed`.
fn sampler_notice(elapsed: Duration, executions: u64, search: &SearchNamed) -> String {
    let left = search.budget.saturating_sub(executions);
    let per_execution = elapsed.as_secs_f64() / executions.max(1) as f64;
    let mut text = format!(
        "\ninterleave: the {} exploration{} has run {} of its {} executions in {} s; at this \
         pace the rest takes about {}.\n",
        search.spec,
        search.in_test(),
        thousands(executions),
        thousands(search.budget),
        elapsed.as_secs(),
        about(per_execution * left as f64),
    );
    if cfg!(debug_assertions) {
        text.push_str(
            "  This is a debug build: `cargo test --release` runs executions several times \
             faster.\n",
        );
    }
    text.push_str(
        "  INTERLEAVE_EXECUTIONS sets the budget; INTERLEAVE_SLOW_NOTICE=<seconds> moves this \
         notice, 0 turns it off.\n",
    );
    text
}

/// `seconds` rounded for a person: `40 s`, `7 min`, `3 h`.
fn about(seconds: f64) -> String {
    let seconds = seconds.round() as u64;
    match seconds {
        0..=119 => format!("{seconds} s"),
        120..=7_199 => format!("{} min", (seconds + 30) / 60),
        _ => format!("{} h", (seconds + 1_800) / 3_600),
    }
}

/// What the notice names: the strategy, the test and the budget.
pub(super) struct SearchNamed {
    pub(super) spec: String,
    pub(super) test: Option<String>,
    pub(super) budget: u64,
}

impl SearchNamed {
    /// " in `test`", or nothing outside a test.
    fn in_test(&self) -> String {
        self.test
            .as_ref()
            .map_or_else(String::new, |test| format!(" in `{test}`"))
    }
}

/// `n` with a comma between groups of three digits.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named() -> SearchNamed {
        SearchNamed {
            spec: "dpor".to_string(),
            test: Some("spin::flag".to_string()),
            budget: 1 << 40,
        }
    }

    /// The texts printed for executions of these lengths, the notice due at once.
    fn texts(lengths: impl IntoIterator<Item = u64>) -> Vec<String> {
        let mut watch = SlowSearch::new(Some(Duration::ZERO), true, named());
        (1..)
            .zip(lengths)
            .filter_map(|(executions, steps)| watch.notice_due(steps, executions))
            .collect()
    }

    #[test]
    fn a_search_whose_executions_grew_tenfold_is_told_about_spins() {
        let mut watch = SlowSearch::new(Some(Duration::from_secs(3600)), true, named());
        for executions in 1..=CLOCK_EVERY {
            assert_eq!(watch.notice_due(31 + executions % 7, executions), None);
        }
        // The threshold passes while the executions grow.
        watch.after = Some(Duration::ZERO);
        let texts: Vec<String> = (CLOCK_EVERY + 1..=2 * CLOCK_EVERY)
            .filter_map(|executions| watch.notice_due(100 * executions, executions))
            .collect();
        assert_eq!(texts.len(), 1, "{texts:?}");
        let text = &texts[0];
        assert!(text.contains("the dpor search in `spin::flag` has run for 0 s (128 executions of a budget of 1,099,511,627,776) and is not finished"), "{text}");
        assert!(
            text.contains("grown from at most 37 steps in the first 64 to 12,800 steps"),
            "{text}"
        );
        assert!(text.contains("a spin lock taken in a loop"), "{text}");
        assert!(text.contains("dpor:c=2"), "{text}");
        assert_eq!(
            watch.notice_due(100_000, 3 * CLOCK_EVERY),
            None,
            "told twice"
        );
    }

    #[test]
    fn a_search_of_even_executions_is_only_told_it_is_large() {
        let texts = texts((0..10 * CLOCK_EVERY).map(|i| 4_000 + i % 100));
        assert_eq!(texts.len(), 1, "{texts:?}");
        assert!(!texts[0].contains("grown"), "{texts:?}");
        assert!(texts[0].contains("far larger than the budget"), "{texts:?}");
    }

    #[test]
    fn executions_that_grow_after_the_notice_get_a_follow_up_once() {
        let texts = texts((0..100 * CLOCK_EVERY).map(|i| 31 + i / 2));
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].contains("far larger than the budget"), "{texts:?}");
        assert!(
            texts[1].contains(
                "the dpor search in `spin::flag` is still not finished after 1,216 executions"
            ),
            "{texts:?}"
        );
        assert!(
            texts[1].contains("grown from at most 62 steps in the first 64 to 638 steps"),
            "{texts:?}"
        );
    }

    #[test]
    fn the_notice_waits_for_its_threshold() {
        let mut watch = SlowSearch::new(Some(Duration::from_secs(3600)), true, named());
        for executions in 1..=2 * CLOCK_EVERY {
            assert_eq!(watch.notice_due(10 * executions, executions), None);
        }
        let mut off = SlowSearch::new(None, true, named());
        assert_eq!(off.notice_due(10, CLOCK_EVERY), None);
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(123_456_789), "123,456,789");
    }

    #[test]
    fn a_sampler_is_told_how_far_it_got_and_how_long_the_rest_takes() {
        let search = || SearchNamed {
            spec: "auto".to_string(),
            test: Some("big::hundred_threads".to_string()),
            budget: 10_000,
        };
        let mut watch = SlowSearch::new(Some(Duration::ZERO), false, search());
        let texts: Vec<String> = (1..=10 * CLOCK_EVERY)
            .filter_map(|executions| watch.notice_due(100 * executions, executions))
            .collect();
        assert_eq!(texts.len(), 1, "once, and no growth explained: {texts:?}");
        assert!(texts[0].contains("the auto exploration in `big::hundred_threads` has run 64 of its 10,000 executions in 0 s; at this pace the rest takes about"), "{texts:?}");
        assert!(!texts[0].contains("grown"), "{texts:?}");
        let text = sampler_notice(Duration::from_secs(20), 2_000, &search());
        assert!(text.contains("the rest takes about 80 s."), "{text}");
        assert_eq!(about(7_199.0), "120 min");
        assert_eq!(about(10_000.0), "3 h");
    }
}
