//! Replaying tokens: one given by the user (`interleave::replay`, `INTERLEAVE_REPLAY`), and
//! the saved tokens of a regression file, with divergence located and explained.

use super::*;

/// Replays the tokens saved in the regression file of `persistence` and returns the report of
/// the first that fails again. Lines that are not tokens, tokens that no longer replay, and a
/// file that cannot be read become `notes`.
pub(super) fn replay_saved(
    config: &Config,
    persistence: &Persistence,
    monitor_atomic_sets: bool,
    f: &(dyn Fn() + Sync),
    site: Site,
    notes: &mut Vec<String>,
) -> Option<Report> {
    let file = persistence.file();
    let lines = match regressions::load(&file) {
        Ok(lines) => lines,
        Err(error) => {
            notes.push(format!("{error}; exploring without its saved schedules"));
            return None;
        }
    };
    // Every malformed line is noted, even those after a token that fails again.
    let mut tokens = Vec::new();
    for saved in lines {
        match saved {
            SavedLine::Token { line, token } => tokens.push((line, token)),
            SavedLine::Malformed { line, error } => notes.push(format!(
                "skipped line {line} of the regression file {}: {error}; delete that line",
                file.display()
            )),
            SavedLine::NotText { line } => notes.push(format!(
                "skipped line {line} of the regression file {}: it is not UTF-8 text, so it \
                 is neither a token nor a comment; delete that line",
                file.display()
            )),
        }
    }
    for (line, token) in tokens {
        let mut report = replay_token(
            config,
            monitor_atomic_sets,
            &token,
            f,
            site,
            ReplayMode::Regression,
        );
        let Some(failure) = report.failures.first_mut() else {
            // The saved failure does not happen any more: the bug is fixed, and the token
            // stays in the file as a regression test.
            continue;
        };
        if failure.kind == FailureKind::Divergence {
            notes.push(format!(
                "skipped the token on line {line} of the regression file {}: it no longer \
                 replays, because the program performs different operations than when it was \
                 saved; delete that token and the comment above it",
                file.display()
            ));
            continue;
        }
        failure.persisted = Some(Persisted::ReplayedFrom {
            file: file.clone(),
            line,
        });
        report.notes = std::mem::take(notes);
        return Some(report);
    }
    None
}

/// Appends the tokens of `failures` to the regression file of `persistence` (unless saving is
/// off), and records in each failure what happened to its token.
pub(super) fn save_failures(persistence: &Persistence, failures: &mut [Failure]) {
    let file = persistence.file();
    for failure in failures {
        let not_saved = |reason: &str| Persisted::NotSaved {
            file: file.clone(),
            reason: reason.to_string(),
        };
        let replayable = !matches!(
            failure.kind,
            FailureKind::Nondeterminism | FailureKind::Divergence
        );
        failure.persisted = Some(if !replayable {
            not_saved("an execution that behaved differently when re-run cannot be replayed")
        } else if !persistence.save {
            not_saved(
                "saving is off (it is by default when the environment variable CI is set; \
                 INTERLEAVE_PERSIST=on turns it on)",
            )
        } else {
            match regressions::append(persistence, failure) {
                Ok(file) => Persisted::SavedTo { file },
                Err(error) => not_saved(&error.to_string()),
            }
        });
    }
}

pub(super) fn replay_with(
    config: &Config,
    monitor_atomic_sets: bool,
    text: &str,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Result<Report, Error> {
    let token = Token::decode(text)?;
    let mut report = replay_token(
        config,
        monitor_atomic_sets,
        &token,
        f,
        site,
        ReplayMode::Exact,
    );
    if report.is_ok() {
        if let Some(kind) = token.failure {
            report.warnings.push(format!(
                "the recorded {kind} did not happen again, although the program performed \
                 the same operations: the failure depends on data the scheduler does not see"
            ));
        }
    }
    Ok(report)
}

/// When `text` is a token that another test recorded, the note that says this test explored
/// as usual instead of replaying it. `INTERLEAVE_REPLAY` reaches every test of a run, and the
/// token fits only the one that recorded it. Tokens recorded outside a test, unreadable ones
/// (whose error the replay reports) and runs outside a test replay as before.
pub(super) fn recorded_by_another_test(text: &str) -> Option<String> {
    let recorded = Token::decode(text).ok()?.test?;
    let current = current_exploration()?;
    if recorded == current {
        return None;
    }
    let (recorded_test, recorded_number) = test_and_number(&recorded);
    let (current_test, current_number) = test_and_number(&current);
    Some(if recorded_test == current_test {
        format!(
            "{ENV_REPLAY} holds a token recorded by exploration {recorded_number} of this test, \
             so this exploration (number {current_number}) ignored it and explored as usual"
        )
    } else {
        format!(
            "{ENV_REPLAY} holds a token recorded by the test `{recorded}`, so this test \
             (`{current}`) ignored it and explored as usual; run only that test to replay it"
        )
    })
}

/// The test and the exploration number of an exploration's label: the test, then `#k` for its
/// `k`-th exploration after the first (`report::current_exploration`).
fn test_and_number(label: &str) -> (&str, &str) {
    label.split_once('#').unwrap_or((label, "1"))
}

/// How a replay treats a program that no longer performs the operations it recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ReplayMode {
    /// Any difference is a divergence (`interleave::replay`, `INTERLEAVE_REPLAY`): the point is
    /// to see the recorded execution again.
    Exact,
    /// A failure counts even when the operations differ (tokens of a regression file): it is a
    /// failure of the program as it is now, and its report carries a token of its own, so an
    /// edit that changes the operations before the failure keeps a saved token useful.
    Regression,
}

/// Runs the one execution `token` records, with the token's settings.
/// The limits a replay of `token` runs with: the token's settings, not the caller's, because
/// they are part of what the execution did.
pub(super) fn token_limits(config: &Config, token: &Token) -> Limits {
    Limits {
        max_steps: token.max_steps,
        races: token.races,
        spurious_wakeups: token.spurious_wakeups,
        spurious_park_wakeups: token.spurious_park_wakeups,
        spurious_cas_failures: token.spurious_cas_failures,
        memory: token.memory,
        yield_visibility: token.yield_visibility,
        panic_stops_execution: token.panic_stops_execution,
        spawned_panics_fail: token.spawned_panics_fail,
        ..limits(config)
    }
}

/// Runs the one execution `token` records.
pub(crate) fn run_token(
    config: &Config,
    token: &Token,
    f: &(dyn Fn() + Sync),
    site: Site,
) -> Finished {
    let schedule = ReplaySchedule::from_runs(token.runs.clone(), token.values.clone());
    runtime::run(f, site, Box::new(schedule), token_limits(config, token))
}

pub(super) fn replay_token(
    config: &Config,
    monitor_atomic_sets: bool,
    token: &Token,
    f: &(dyn Fn() + Sync),
    site: Site,
    mode: ReplayMode,
) -> Report {
    let run = Run {
        f,
        site,
        limits: token_limits(config, token),
        spec: crate::report::REPLAY_SPEC.to_string(),
        seed: config.seed,
        check_determinism: false,
        count_states: false,
        monitor_atomic_sets,
        test: token.test.clone(),
        stop: None,
    };
    let ex = run_token(config, token, f, site);
    let mut report = Report::new(run.spec.clone(), config.seed);
    report.executions = 1;
    report.steps = ex.steps();
    report.warnings = ex.warnings.clone();
    if run.monitor_atomic_sets {
        if let Some(declarations) = Declarations::of(&ex) {
            report.violations = atomicity_violations(&ex, 0, &ex.trace_events(), &declarations);
            report.violating_executions = u64::from(!report.violations.is_empty());
        }
    }
    let info = match &ex.failure {
        // The runtime saw the step where the recorded schedule became impossible; the report
        // also says where the operations first differed, which may be much earlier.
        Some(failure) if failure.kind == FailureKind::Divergence => Some(FailureInfo::new(
            FailureKind::Divergence,
            locate_divergence(&ex, token, Some(&failure_text(&ex, failure))),
            failure.thread,
        )),
        Some(failure) if mode == ReplayMode::Regression => Some(failure.clone()),
        _ if fingerprint(&ex) != token.fingerprint => Some(FailureInfo::new(
            FailureKind::Divergence,
            locate_divergence(&ex, token, None),
            None,
        )),
        failure => failure.clone(),
    };
    if let Some(info) = info {
        report.failures.push(failure_of(&run, 0, &ex, &info));
    }
    report
}

/// The steps (numbered from 1, as in the interleaving) within which the replayed operations
/// first differed from the recorded ones. The token keeps one fingerprint per [`BLOCK`] steps,
/// so the answer is the first block whose fingerprints differ; when every block both runs
/// completed matches, it is the steps after them up to the first step only one run has.
pub(super) fn first_difference(ex: &Recording, token: &Token) -> (u64, u64) {
    let replayed = ex.events.len() as u64;
    let recorded = token.steps();
    let block = BLOCK as u64;
    let mut matched = 0;
    for (index, (now, then)) in block_fingerprints(ex).iter().zip(&token.blocks).enumerate() {
        let begin = index as u64 * block;
        let end = (begin + block).min(replayed);
        // A block that one run has only part of has a fingerprint over other steps.
        if end != (begin + block).min(recorded) {
            break;
        }
        if now != then {
            return (begin + 1, end);
        }
        matched = end;
    }
    if matched == replayed && replayed == recorded {
        // Every block matched and the runs are as long, yet the whole fingerprints differ: two
        // blocks collided in their 16 bits, so any step may be the one.
        return (1, replayed.max(1));
    }
    (matched + 1, replayed.min(recorded) + 1)
}

/// `at step 3` or `between steps 1 and 64`.
pub(super) fn steps_text((first, last): (u64, u64)) -> String {
    if first == last {
        format!("at step {first}")
    } else {
        format!("between steps {first} and {last}")
    }
}

/// Explains a replay divergence: where the operations first differed from the recording and,
/// when the runtime stopped the replay, the step where the recorded schedule became impossible
/// (`impossible`, the runtime's explanation).
pub(super) fn locate_divergence(ex: &Recording, token: &Token, impossible: Option<&str>) -> String {
    let range = first_difference(ex, token);
    let next = ex.events.len() as u64 + 1;
    if let (Some(impossible), true) = (impossible, range == (next, next)) {
        // Every step before the impossible one matched: the runtime's account says it all.
        return impossible.to_string();
    }
    let precision = if range.0 == range.1 {
        String::new()
    } else {
        format!(" (a token keeps one fingerprint per {BLOCK} steps, so it tells no closer)")
    };
    let differed = format!(
        "the replayed execution's operations first differed from the recording {}{precision}",
        steps_text(range)
    );
    let account = match impossible {
        Some(impossible) => format!("{differed}; then {impossible}"),
        None => format!(
            "{differed}: the recording has {} steps, this run {}. The program changed since the \
             token was recorded, or it depends on something the scheduler does not control",
            token.steps(),
            ex.events.len()
        ),
    };
    format!("{account}{}", recorded_failure(token))
}

/// What the recorded execution found, for a divergence report: the failure is what the user
/// was looking for, and the replay no longer shows it.
fn recorded_failure(token: &Token) -> String {
    let Some(kind) = token.failure else {
        return String::new();
    };
    let test = token
        .test
        .as_deref()
        .map(|test| format!(" in the test `{test}`"))
        .unwrap_or_default();
    match &token.message {
        Some(message) => format!("\nThe recorded execution{test} failed ({kind}): {message}"),
        None => format!("\nThe recorded execution{test} failed ({kind})"),
    }
}
