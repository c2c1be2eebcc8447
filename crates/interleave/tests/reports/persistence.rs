//! Regression files: a failure's token is saved, the next run replays it before exploring,
//! malformed and stale lines are skipped with a note, nothing is written in CI, and a file that
//! cannot be written costs a note, never the failure.
//!
//! Every test works in a directory of its own under the system's temporary directory and
//! ignores the process environment (`CI`, `INTERLEAVE_*`); the environment a test needs is
//! passed to `Config::apply_vars`.

use std::fs;
use std::path::PathBuf;

use interleave::sync::{Arc, Mutex};
use interleave::{thread, Builder, Config, FailureKind, Persisted, Persistence, Report};

/// A fresh, empty directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "interleave-persistence-{}-{test}",
            std::process::id()
        ));
        // A directory left behind by an earlier, interrupted run with the same process id.
        let _ = fs::remove_dir_all(&path);
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A withdrawal that reads and writes the balance in two critical sections.
fn lost_withdrawal() {
    let balance = Arc::new(Mutex::new(100));
    let withdraw = |balance: &Mutex<i32>| {
        let current = *balance.lock().unwrap();
        *balance.lock().unwrap() = current - 10;
    };
    let other = balance.clone();
    let t = thread::spawn(move || withdraw(&other));
    withdraw(&balance);
    t.join().unwrap();
    assert_eq!(*balance.lock().unwrap(), 80, "a withdrawal was lost");
}

/// The same withdrawals, each in one critical section: no bug, and other operations than
/// `lost_withdrawal`'s, so its tokens no longer replay.
fn atomic_withdrawal() {
    let balance = Arc::new(Mutex::new(100));
    let other = balance.clone();
    let t = thread::spawn(move || *other.lock().unwrap() -= 10);
    *balance.lock().unwrap() -= 10;
    t.join().unwrap();
    assert_eq!(*balance.lock().unwrap(), 80);
}

const TEST_NAME: &str = "persistence::lost_withdrawal";

/// Random exploration from seed 11, which first loses a withdrawal in execution 5, so a
/// failure in execution 0 shows that a saved schedule was replayed.
fn builder(config: Config) -> Builder {
    Builder::from_config(config)
        .ignore_environment()
        .strategy("random".parse().unwrap())
        .seed(11)
        .executions(1000)
}

/// Settings with regression files in `directory`, under the environment `vars`.
fn config(directory: &TempDir, vars: &[(&str, &str)]) -> Config {
    let mut config = Config {
        persistence: Some(Persistence::new(&directory.0, TEST_NAME)),
        ..Config::default()
    };
    config
        .apply_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, value)| value.to_string())
        })
        .unwrap();
    config
}

fn explore(config: Config, f: impl Fn() + Sync) -> Report {
    builder(config).explore(f).unwrap()
}

fn regression_file(directory: &TempDir) -> PathBuf {
    Persistence::new(&directory.0, TEST_NAME).file()
}

#[test]
fn a_failure_is_saved_with_a_comment() {
    let directory = TempDir::new("saved");
    let report = explore(config(&directory, &[]), lost_withdrawal);
    let failure = report
        .first_failure()
        .expect("the lost withdrawal is found");
    let file = regression_file(&directory);
    assert_eq!(
        failure.persisted,
        Some(Persisted::SavedTo { file: file.clone() })
    );
    assert!(
        failure
            .to_string()
            .contains(&format!("saved to the regression file {}", file.display())),
        "{failure}"
    );
    let text = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let token_line = lines
        .iter()
        .position(|line| *line == failure.token)
        .expect("the token has a line of its own");
    let comment = lines[token_line - 1];
    assert!(
        comment.starts_with("# panic in execution") && comment.contains("a withdrawal was lost"),
        "{comment}"
    );
    assert!(
        text.contains(TEST_NAME) && text.contains("Delete it"),
        "{text}"
    );
    let tokens = lines
        .iter()
        .filter(|line| !line.is_empty() && !line.starts_with('#'));
    assert_eq!(tokens.count(), 1, "{text}");
}

#[test]
fn the_saved_token_is_replayed_first() {
    let directory = TempDir::new("replayed");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    let found = first.first_failure().expect("the lost withdrawal is found");
    assert!(
        found.execution > 0,
        "the exploration needs a few executions"
    );
    let saved = fs::read_to_string(regression_file(&directory)).unwrap();

    let second = explore(config(&directory, &[]), lost_withdrawal);
    let again = second
        .first_failure()
        .expect("the saved schedule fails again");
    assert_eq!(second.executions, 1, "nothing was explored");
    assert_eq!(again.execution, 0);
    assert_eq!(again.token, found.token);
    let line = saved.lines().position(|l| l == found.token).unwrap() + 1;
    assert_eq!(
        again.persisted,
        Some(Persisted::ReplayedFrom {
            file: regression_file(&directory),
            line
        })
    );
    assert!(
        again.to_string().contains("comes from the regression file"),
        "{again}"
    );
    assert_eq!(
        fs::read_to_string(regression_file(&directory)).unwrap(),
        saved,
        "a replayed failure is not saved twice"
    );
}

#[test]
fn check_panics_with_the_failure_and_where_it_was_saved() {
    let directory = TempDir::new("check");
    let config = config(&directory, &[]);
    let panic = std::panic::catch_unwind(|| builder(config).check(lost_withdrawal)).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("a withdrawal was lost"), "{message}");
    assert!(
        message.contains("saved to the regression file"),
        "{message}"
    );
    assert!(regression_file(&directory).exists());
}

#[test]
fn a_line_that_is_not_a_token_is_skipped_with_a_note() {
    let directory = TempDir::new("garbage");
    let file = regression_file(&directory);
    fs::create_dir_all(&directory.0).unwrap();
    fs::write(&file, "# a comment\n\nnot a token\n").unwrap();

    let passing = explore(config(&directory, &[]), atomic_withdrawal);
    assert!(passing.is_ok());
    assert_eq!(passing.notes.len(), 1, "{:?}", passing.notes);
    assert!(
        passing.notes[0].contains("skipped line 3")
            && passing.notes[0].contains("not an interleave replay token"),
        "{}",
        passing.notes[0]
    );

    // The exploration still runs, finds the bug and saves it after the bad line.
    let failing = explore(config(&directory, &[]), lost_withdrawal);
    let failure = failing.first_failure().expect("exploration goes on");
    assert!(failure.execution > 0);
    assert_eq!(failing.notes.len(), 1);
    let replayed = explore(config(&directory, &[]), lost_withdrawal);
    let again = replayed.first_failure().unwrap();
    assert!(matches!(
        again.persisted,
        Some(Persisted::ReplayedFrom { .. })
    ));
    assert!(replayed.notes[0].contains("skipped line 3"));
}

#[test]
fn a_token_that_no_longer_replays_is_skipped_with_a_note() {
    let directory = TempDir::new("stale");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    assert!(first.first_failure().is_some());

    // The program changed: the saved schedule is of other operations.
    let changed = explore(config(&directory, &[]), atomic_withdrawal);
    assert!(changed.is_ok(), "{changed}");
    assert!(
        changed.executions > 1,
        "the exploration ran after the replay"
    );
    assert_eq!(changed.notes.len(), 1, "{:?}", changed.notes);
    assert!(
        changed.notes[0].contains("no longer replays"),
        "{}",
        changed.notes[0]
    );
    assert!(changed.to_string().contains("note: skipped the token"));
}

/// `lost_withdrawal` after an edit that moved its code: the same operations at other lines.
fn lost_withdrawal_moved() {
    let balance = Arc::new(Mutex::new(100));

    let withdraw = |balance: &Mutex<i32>| {
        let current = *balance.lock().unwrap();

        *balance.lock().unwrap() = current - 10;
    };
    let other = balance.clone();
    let t = thread::spawn(move || withdraw(&other));
    withdraw(&balance);
    t.join().unwrap();
    assert_eq!(*balance.lock().unwrap(), 80, "a withdrawal was lost");
}

#[test]
fn a_token_still_finds_its_bug_after_the_code_moved() {
    let directory = TempDir::new("moved");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    let found = first.first_failure().unwrap();
    let moved = explore(config(&directory, &[]), lost_withdrawal_moved);
    let again = moved
        .first_failure()
        .expect("the saved schedule still fails");
    assert_eq!(again.execution, 0);
    assert!(matches!(
        again.persisted,
        Some(Persisted::ReplayedFrom { .. })
    ));
    let exact = Builder::new()
        .ignore_environment()
        .replay(&found.token, lost_withdrawal_moved)
        .unwrap();
    assert_eq!(
        exact.first_failure().map(|failure| failure.kind),
        Some(FailureKind::Panic),
        "a token fingerprints operations, not lines, so moved code replays exactly"
    );
}

#[test]
fn nothing_is_written_in_ci() {
    let directory = TempDir::new("ci");
    let report = explore(config(&directory, &[("CI", "true")]), lost_withdrawal);
    let failure = report
        .first_failure()
        .expect("the failure is still reported");
    match &failure.persisted {
        Some(Persisted::NotSaved { reason, .. }) => assert!(reason.contains("CI"), "{reason}"),
        other => panic!("expected NotSaved, got {other:?}"),
    }
    assert!(!directory.0.exists(), "nothing was written");
    assert!(failure.to_string().contains("was not saved"), "{failure}");

    let asked = explore(
        config(&directory, &[("CI", "true"), ("INTERLEAVE_PERSIST", "on")]),
        lost_withdrawal,
    );
    let failure = asked.first_failure().unwrap();
    assert!(matches!(failure.persisted, Some(Persisted::SavedTo { .. })));
}

#[test]
fn saved_tokens_are_replayed_in_ci() {
    let directory = TempDir::new("ci-replay");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    let found = first.first_failure().unwrap();
    let in_ci = explore(config(&directory, &[("CI", "true")]), lost_withdrawal);
    let again = in_ci.first_failure().unwrap();
    assert_eq!((again.execution, &again.token), (0, &found.token));
}

#[test]
fn persistence_off_neither_replays_nor_saves() {
    let directory = TempDir::new("off");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    let found = first.first_failure().unwrap();
    let saved = fs::read_to_string(regression_file(&directory)).unwrap();
    let off = explore(
        config(&directory, &[("INTERLEAVE_PERSIST", "off")]),
        lost_withdrawal,
    );
    let failure = off.first_failure().unwrap();
    assert_eq!(failure.execution, found.execution, "explored, not replayed");
    assert_eq!(failure.persisted, None);
    assert_eq!(
        fs::read_to_string(regression_file(&directory)).unwrap(),
        saved
    );
}

#[test]
fn the_persist_variable_can_name_the_directory() {
    let directory = TempDir::new("configured");
    let elsewhere = TempDir::new("elsewhere");
    let elsewhere_path = elsewhere.0.to_str().unwrap().to_string();
    let vars = [("INTERLEAVE_PERSIST", elsewhere_path.as_str())];
    let report = explore(config(&directory, &vars), lost_withdrawal);
    let expected = Persistence::new(&elsewhere.0, TEST_NAME).file();
    assert_eq!(
        report.first_failure().unwrap().persisted,
        Some(Persisted::SavedTo {
            file: expected.clone()
        })
    );
    assert!(expected.exists() && !directory.0.exists());
}

#[test]
fn a_file_that_cannot_be_written_costs_a_note_not_the_failure() {
    let directory = TempDir::new("unwritable");
    // A file where the directory should be: neither can be created.
    fs::write(&directory.0, "not a directory").unwrap();
    let report = explore(config(&directory, &[]), lost_withdrawal);
    let failure = report.first_failure().expect("the failure is reported");
    assert_eq!(failure.kind, FailureKind::Panic);
    match &failure.persisted {
        Some(Persisted::NotSaved { reason, .. }) => {
            assert!(reason.contains("could not"), "{reason}")
        }
        other => panic!("expected NotSaved, got {other:?}"),
    }
    // Reading the file fails too (its directory is a file): a note, where the operating system
    // says so rather than calling the file missing.
    if cfg!(unix) {
        assert!(
            report
                .notes
                .iter()
                .any(|note| note.contains("could not read")),
            "{:?}",
            report.notes
        );
    }
    fs::remove_file(&directory.0).unwrap();
}

#[test]
fn explorations_without_persistence_touch_no_file() {
    let report = Builder::new()
        .ignore_environment()
        .strategy("random".parse().unwrap())
        .seed(1)
        .explore(lost_withdrawal)
        .unwrap();
    assert_eq!(report.first_failure().unwrap().persisted, None);
    assert!(report.notes.is_empty());
}

/// One line that is not UTF-8 costs that line only: the tokens around it still replay, and the
/// note naming the line is shown when the test fails too.
#[test]
fn a_line_that_is_not_utf8_is_skipped_alone() {
    let directory = TempDir::new("not-utf8");
    let first = explore(config(&directory, &[]), lost_withdrawal);
    let found = first.first_failure().expect("the lost withdrawal is found");
    let file = regression_file(&directory);
    let saved = fs::read_to_string(&file).unwrap();
    // A stray byte sequence (a pasted binary, a file saved in another encoding) above the token.
    let mut bytes = b"# header\n\xff\xfe not text \xc3\n".to_vec();
    bytes.extend_from_slice(saved.as_bytes());
    fs::write(&file, bytes).unwrap();

    let replayed = explore(config(&directory, &[]), lost_withdrawal);
    let again = replayed
        .first_failure()
        .expect("the saved token still replays");
    assert_eq!(again.execution, 0, "replayed, not explored");
    assert_eq!(again.token, found.token);
    assert_eq!(replayed.notes.len(), 1, "{:?}", replayed.notes);
    assert!(
        replayed.notes[0].contains("skipped line 2") && replayed.notes[0].contains("not UTF-8"),
        "{}",
        replayed.notes[0]
    );

    let config = config(&directory, &[]);
    let panic = std::panic::catch_unwind(|| builder(config).check(lost_withdrawal)).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("a withdrawal was lost") && message.contains("note: skipped line 2"),
        "{message}"
    );
}

/// Every shard of a sharded run replays the saved tokens first, and a shard whose replay fails
/// summarises it as the first failure (execution 0), so the merged verdict is that failure.
#[test]
fn a_sharded_run_summarises_a_saved_failure_on_every_shard() {
    let directory = TempDir::new("sharded");
    let saved = explore(config(&directory, &[]), lost_withdrawal);
    let token = saved
        .first_failure()
        .expect("found and saved")
        .token
        .clone();
    for number in 1..=2 {
        let report = builder(config(&directory, &[]))
            .shard(number, 2)
            .explore(lost_withdrawal)
            .unwrap();
        let summary = report.shard.as_ref().expect("a sharded run has a summary");
        let failure = summary
            .failure
            .as_ref()
            .expect("the saved token fails again");
        assert_eq!((failure.execution, &failure.token), (0, &token));
    }
}
