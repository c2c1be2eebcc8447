//! Checks, before anything runs, that every requested output can be written: a run of hours
//! must not end in "No such file or directory". Each check does what writing will do (open
//! the file for writing, create a file in the chart directory) and undoes it, so an existing
//! file keeps its contents and no directory is left behind.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Checks that the file `path`, given with `flag`, can be written.
pub fn check_file(flag: &str, path: &Path) -> anyhow::Result<()> {
    let context = || format!("cannot write {flag} {}", path.display());
    if path.is_dir() {
        bail!("cannot write {flag} {}: it is a directory", path.display());
    }
    let existed = path.exists();
    // Without `truncate`, opening an existing file for writing leaves its contents alone.
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(context)?;
    if !existed {
        fs::remove_file(path).with_context(context)?;
    }
    Ok(())
}

/// Checks that files can be written in the directory `dir`, given with `flag`, creating it
/// (and its missing parents) the way writing would, then removing what the check created.
pub fn check_directory(flag: &str, dir: &Path) -> anyhow::Result<()> {
    let context = || format!("cannot write {flag} {}", dir.display());
    // `create_dir_all` on an existing file says only "File exists".
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "cannot write {flag} {}: it is a file, and {flag} takes a directory",
            dir.display()
        );
    }
    // The directories the check creates, outermost last, to remove them afterwards.
    let created: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir).with_context(context)?;
    let probe = dir.join(format!(".interleave-write-check-{}", std::process::id()));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map(drop);
    if written.is_ok() {
        fs::remove_file(&probe).with_context(context)?;
    }
    for directory in &created {
        // Only empty directories the check made itself; a failure leaves an empty directory.
        let _ = fs::remove_dir(directory);
    }
    written.with_context(context)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "interleave-output-test-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn checks_leave_nothing_behind() {
        let dir = scratch("clean");
        let file = dir.join("run.json");
        check_file("--json", &file).unwrap();
        assert!(!file.exists());
        fs::write(&file, "kept").unwrap();
        check_file("--json", &file).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "kept");
        let charts = dir.join("a/b/charts");
        check_directory("--svg", &charts).unwrap();
        assert!(!dir.join("a").exists());
        fs::create_dir_all(&charts).unwrap();
        check_directory("--svg", &charts).unwrap();
        assert_eq!(fs::read_dir(&charts).unwrap().count(), 0);

        let error = check_file("--csv", &dir.join("missing/run.csv")).unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.starts_with("cannot write --csv") && message.contains("missing/run.csv"),
            "{message}"
        );
        let error = check_file("--json", &dir).unwrap_err().to_string();
        assert!(error.contains("is a directory"), "{error}");
        let error = check_directory("--svg", &file).unwrap_err().to_string();
        assert!(
            error.contains("it is a file, and --svg takes a directory"),
            "{error}"
        );
        let error = check_directory("--svg", &file.join("charts")).unwrap_err();
        assert!(
            format!("{error:#}").contains("run.json/charts"),
            "{error:#}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
