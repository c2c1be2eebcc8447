//! Regression files: the replay tokens of failing schedules, saved next to the test crate so
//! that the next run of the test replays them before it explores (in the spirit of proptest's
//! regression files).
//!
//! A regression file is plain text: a header of `#` comment lines, then one entry per saved
//! failure, a `#` line saying what failed followed by the token on a line of its own. Blank
//! lines and `#` lines are ignored when the file is read; any other line must be a token. A
//! line that is not a token (or not UTF-8 text at all), or a token that no longer replays
//! because the program changed, is skipped with a note in the report, never an error: the
//! exploration goes on with the other lines. A saved schedule
//! that still makes the program fail is reported even if the program's operations moved since
//! (source locations are part of what a token records), because the failure is real either
//! way.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::report::token::Token;
use crate::report::{Failure, TokenError};
use crate::Error;

/// The directory, inside the test crate, where `#[interleave::test]` keeps regression files.
pub const REGRESSIONS_DIRECTORY: &str = "interleave-regressions";

/// Where one test's failing schedules are saved, and whether new ones are written.
///
/// The file is `<directory>/<test name>.txt`, with the `::` separators of the test name written
/// as `.` (so `my_crate::tests::transfer` is saved in `my_crate.tests.transfer.txt`). Tokens
/// saved there are replayed first on every run, whether or not [`Persistence::save`] is set.
///
/// ```
/// use interleave::Persistence;
///
/// let persistence = Persistence::in_crate("/src/bank", "bank::tests::transfer");
/// assert_eq!(
///     persistence.file(),
///     std::path::Path::new("/src/bank/interleave-regressions/bank.tests.transfer.txt")
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Persistence {
    /// The directory of regression files. For `#[interleave::test]`: the test crate's
    /// `CARGO_MANIFEST_DIR` joined with [`REGRESSIONS_DIRECTORY`]. Environment:
    /// `INTERLEAVE_PERSIST=<dir>` (relative to the directory the test runs in, which is the
    /// package's directory under `cargo test` and `cargo nextest`).
    pub directory: PathBuf,
    /// The test's name, its module path and function name (`my_crate::tests::transfer`).
    pub test_name: String,
    /// Whether the tokens of new failures are appended to the file. Default: true, but false
    /// when the environment variable `CI` is set (to anything but empty, `0` or `false`)
    /// unless `INTERLEAVE_PERSIST` is `on` or a directory.
    pub save: bool,
}

impl Persistence {
    /// Saves the failures of the test `test_name` in `directory`.
    pub fn new(directory: impl Into<PathBuf>, test_name: impl Into<String>) -> Persistence {
        Persistence {
            directory: directory.into(),
            test_name: test_name.into(),
            save: true,
        }
    }

    /// Saves the failures of the test `test_name` in the [`REGRESSIONS_DIRECTORY`] of the crate
    /// whose manifest directory is `manifest_dir` (pass `env!("CARGO_MANIFEST_DIR")` from the
    /// test crate, as `#[interleave::test]` does).
    pub fn in_crate(manifest_dir: impl AsRef<Path>, test_name: impl Into<String>) -> Persistence {
        Persistence::new(manifest_dir.as_ref().join(REGRESSIONS_DIRECTORY), test_name)
    }

    /// The regression file of the test.
    pub fn file(&self) -> PathBuf {
        self.directory
            .join(format!("{}.txt", file_stem(&self.test_name)))
    }
}

/// A file name for `test_name` that is valid on every platform and cannot leave the directory:
/// `::` becomes `.`, and any character other than a letter, a digit, `_`, `-` or `.` becomes
/// `_`.
fn file_stem(test_name: &str) -> String {
    let stem: String = test_name
        .trim()
        .replace("::", ".")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A leading dot would hide the file, and a name of dots alone would be `.` or `..`.
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "unnamed".to_string()
    } else {
        stem.to_string()
    }
}

/// One line of a regression file that is not blank and not a comment.
pub(crate) enum SavedLine {
    /// A token that decodes.
    Token {
        /// 1-based line number.
        line: usize,
        token: Token,
    },
    /// A line that is not a valid token.
    Malformed { line: usize, error: TokenError },
    /// A line that is not UTF-8 text, so it cannot be a token or a comment either.
    NotText { line: usize },
}

/// The entries of the regression file at `file`; none when it does not exist yet. The file is
/// read as bytes and split into lines first, so a line that is not UTF-8 costs that line only.
pub(crate) fn load(file: &Path) -> Result<Vec<SavedLine>, Error> {
    let contents = match fs::read(file) {
        Ok(contents) => contents,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::RegressionFile {
                operation: "read",
                path: file.to_path_buf(),
                source,
            })
        }
    };
    let mut saved = Vec::new();
    for (index, bytes) in contents.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let Ok(text) = std::str::from_utf8(bytes) else {
            saved.push(SavedLine::NotText { line });
            continue;
        };
        // `trim` also drops the `\r` of a file saved with Windows line endings.
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        saved.push(match Token::decode(text) {
            Ok(token) => SavedLine::Token { line, token },
            Err(error) => SavedLine::Malformed { line, error },
        });
    }
    Ok(saved)
}

/// The longest description of a failure written to a regression file's comment line.
const MAX_DESCRIPTION: usize = 160;

/// Appends `failure`'s token to the regression file of `persistence`, creating the directory
/// and the file (with its header) when needed.
pub(crate) fn append(persistence: &Persistence, failure: &Failure) -> Result<PathBuf, Error> {
    let file = persistence.file();
    let failed = |operation: &'static str| {
        let path = file.clone();
        move |source| Error::RegressionFile {
            operation,
            path,
            source,
        }
    };
    fs::create_dir_all(&persistence.directory).map_err(failed("create the directory of"))?;
    let mut writer = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(failed("open"))?;
    let is_new = writer.metadata().map_err(failed("inspect"))?.len() == 0;
    let mut text = String::new();
    if is_new {
        text.push_str(&header(&persistence.test_name));
    }
    text.push_str(&entry(failure));
    writer
        .write_all(text.as_bytes())
        .and_then(|()| writer.flush())
        .map_err(failed("write"))?;
    Ok(file)
}

fn header(test_name: &str) -> String {
    format!(
        "# Regression file of the interleave test `{test_name}`.\n\
         # Each token below is the schedule of a failing execution, after a comment saying what\n\
         # failed. Every run of the test replays them before it explores, so a bug found once\n\
         # stays checked; commit this file to share them. Keep a token after its bug is fixed,\n\
         # as a regression test. Delete it (with its comment) when a run reports that it no\n\
         # longer replays: the code it exercised has changed.\n"
    )
}

fn entry(failure: &Failure) -> String {
    let first_line = failure.message.lines().next().unwrap_or_default().trim();
    let mut description: String = first_line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_DESCRIPTION)
        .collect();
    if first_line.chars().count() > MAX_DESCRIPTION {
        description.push_str("...");
    }
    format!(
        "\n# {} in execution {} (strategy {}, seed {}): {description}\n{}\n",
        failure.kind, failure.execution, failure.strategy, failure.seed, failure.token
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_readable() {
        assert_eq!(
            file_stem("my_crate::tests::transfer"),
            "my_crate.tests.transfer"
        );
        assert_eq!(file_stem("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_stem("a test: with spaces"), "a_test__with_spaces");
        assert_eq!(file_stem("..."), "unnamed");
        assert_eq!(file_stem("données::été"), "données.été");
    }

    #[test]
    fn the_crate_directory_holds_the_regressions_directory() {
        let persistence = Persistence::in_crate("/src/bank", "bank::transfer");
        assert_eq!(
            persistence.file(),
            Path::new("/src/bank/interleave-regressions/bank.transfer.txt")
        );
        assert!(persistence.save);
    }
}
