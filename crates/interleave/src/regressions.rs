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

use crate::persistence::Persistence;
use crate::report::token::Token;
use crate::report::{Failure, TokenError};
use crate::Error;

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
