//! Where a test's failing schedules are saved ([`Persistence`]) and whether new ones are
//! written. Reading and appending the regression files is in `regressions.rs`.

use std::path::{Path, PathBuf};

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
