//! End-to-end: the `interleave` binary's bench, shard and merge commands.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../interleave/tests/common/first_exploration.rs"]
mod first_exploration;
use first_exploration::first_exploration;

fn interleave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_interleave"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("interleave-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            // Wall time is the one field that differs between runs.
            r.as_object_mut().unwrap().remove("seconds");
            r
        })
        .collect()
}

/// The strategies of the run: a peer column too when the build has them.
#[cfg(feature = "peers")]
const STRATEGIES: &str = "random,pct:d=2,loom:b=2";
#[cfg(not(feature = "peers"))]
const STRATEGIES: &str = "random,pct:d=2";

const RUN: [&str; 12] = [
    "bench",
    "-p",
    "rpro-d1,bounding-fig1",
    "-s",
    STRATEGIES,
    "--sweep",
    "pct:d=1..3",
    "-n",
    "60",
    "--seeds",
    "3",
    "-j2",
];

/// A run split into shards and merged gives exactly the records of the unsplit run, and the
/// outputs (JSON, CSV, the first-bug chart and the sweep chart) are written.
#[test]
fn shards_merge_into_the_whole_run() {
    let dir = scratch("shards");
    let path = |name: &str| dir.join(name).display().to_string();
    let whole = interleave(&[&RUN[..], &["--json", &path("whole.json")]].concat());
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let table = String::from_utf8_lossy(&whole.stdout);
    assert!(
        table.contains("rpro-d1") && table.contains("fixed twins: no failures"),
        "{table}"
    );
    assert!(
        table.contains("exposed: the share of all the"),
        "the table has a legend: {table}"
    );
    let log = String::from_utf8_lossy(&whole.stderr);
    assert!(
        log.contains("progress: ") && log.contains(" runs after "),
        "a piped run prints progress lines: {log}"
    );
    for shard in ["1/2", "2/2"] {
        let name = format!("shard{}.json", &shard[..1]);
        let out = interleave(&[&RUN[..], &["--shard", shard, "--json", &path(&name)]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let merged = interleave(&[
        "merge",
        &path("shard2.json"),
        &path("shard1.json"),
        "--json",
        &path("merged.json"),
        "--csv",
        &path("merged.csv"),
        "--svg",
        &path("charts"),
    ]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert_eq!(
        records(&dir.join("whole.json")),
        records(&dir.join("merged.json"))
    );
    assert!(dir.join("charts/first-bug.svg").exists());
    assert!(dir.join("charts/sweep-1-pct-d.svg").exists());
    let csv = std::fs::read_to_string(dir.join("merged.csv")).unwrap();
    assert!(csv.starts_with("program,fixed,strategy,tool,seed,executions,first_failure,failures"));

    let incomplete = interleave(&["merge", &path("shard1.json")]);
    assert!(!incomplete.status.success());
    assert!(String::from_utf8_lossy(&incomplete.stderr).contains("missing 2/2"));
}

/// Bad input gets a one-line error naming the valid choices; merge refuses foreign files.
#[test]
fn malformed_input_is_refused_in_one_line() {
    let dir = scratch("errors");
    let corrupt = dir.join("corrupt.json");
    std::fs::write(&corrupt, "{\"format\": \"interleave-bench/1\", \"conf").unwrap();
    let other = dir.join("other.json");
    let ok = interleave(
        &[
            &RUN[..],
            &["--shard", "1/2", "--json", other.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(ok.status.success());
    let different = dir.join("different.json");
    let ok = interleave(&[
        "bench",
        "-p",
        "rpro-d1",
        "-s",
        "random",
        "-n",
        "10",
        "--seeds",
        "1",
        "--shard",
        "2/2",
        "--json",
        different.to_str().unwrap(),
    ]);
    assert!(ok.status.success());
    let cases: [(Vec<&str>, &str); 6] = [
        (vec!["bench", "-p", "no-such-program"], "the programs are:"),
        (vec!["bench", "-s", "pct:x=3"], "has no parameter"),
        (vec!["bench", "--shard", "0/3"], "expected i/n"),
        (
            vec!["merge", corrupt.to_str().unwrap()],
            "corrupt or truncated",
        ),
        (
            vec![
                "merge",
                other.to_str().unwrap(),
                different.to_str().unwrap(),
            ],
            "different configuration",
        ),
        #[cfg(feature = "peers")]
        (vec!["bench", "-s", "shuttle-pct:d=0"], "at least 1"),
        #[cfg(not(feature = "peers"))]
        (vec!["bench", "-s", "shuttle-pct:d=3"], "--features peers"),
    ];
    for (args, expected) in cases {
        let out = interleave(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}

/// A directory nobody may write to: a fresh one without write permission, or, for root (whom
/// permissions do not stop), `/sys`.
fn read_only_directory(dir: &Path) -> PathBuf {
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(locked.join("probe"), "").is_ok() {
            return PathBuf::from("/sys");
        }
    }
    locked
}

/// An output that cannot be written is an error before any measurement runs, naming the path:
/// a bench that ran for hours must not end without its results.
#[test]
fn outputs_are_checked_before_the_run() {
    let dir = scratch("outputs");
    let missing = dir.join("no-such-directory");
    let read_only = read_only_directory(&dir);
    let a_file = dir.join("a-file");
    std::fs::write(&a_file, "").unwrap();
    let cases: [(&str, PathBuf); 5] = [
        ("--json", missing.join("run.json")),
        ("--csv", missing.join("run.csv")),
        ("--json", read_only.join("run.json")),
        ("--csv", read_only.join("run.csv")),
        ("--svg", a_file.join("charts")),
    ];
    for (flag, path) in &cases {
        let path = path.to_str().unwrap();
        let out = interleave(&[
            "bench", "-p", "rpro-d1", "-s", "random", "-n", "2", "--seeds", "1", flag, path,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} {path}: {stderr}");
        assert!(stderr.contains(path) && stderr.contains(flag), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "nothing ran: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let svg = read_only.join("charts");
    let out = interleave(&[
        "bench",
        "-p",
        "rpro-d1",
        "-s",
        "random",
        "-n",
        "2",
        "--seeds",
        "1",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(!out.status.success() && out.stdout.is_empty());
    // Merge checks its outputs before reading its inputs, too.
    let out = interleave(&[
        "merge",
        dir.join("absent.json").to_str().unwrap(),
        "--csv",
        missing.join("merged.csv").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("merged.csv"), "{stderr}");
    // A file that already exists is left as it was by the check.
    let existing = dir.join("existing.json");
    std::fs::write(&existing, "keep").unwrap();
    let out = interleave(&["bench", "-p", "nope", "--json", existing.to_str().unwrap()]);
    assert!(!out.status.success());
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    assert!(!dir.join("no-such-directory").exists());
}

/// Ctrl-C stops a run early: the measurements that finished are written, marked partial,
/// with the table of what finished, and the exit code is 130; merge refuses a partial file.
/// The run has a billion seeds, which also shows the job list is never built whole.
#[cfg(unix)]
#[test]
fn ctrl_c_writes_the_finished_measurements_marked_partial() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let dir = scratch("interrupt");
    let json = dir.join("partial.json");
    let csv = dir.join("partial.csv");
    let child = Command::new(env!("CARGO_BIN_EXE_interleave"))
        .args([
            "bench",
            "-p",
            "rpro-d1",
            "-s",
            "random",
            "-n",
            "1",
            "--seeds",
            "1000000000",
            "--variant",
            "buggy",
            "-j1",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for the binary to start and finish some measurements.
    std::thread::sleep(Duration::from_secs(3));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(stdout.contains("rpro-d1"), "the table: {stdout}");
    let text = std::fs::read_to_string(&json).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["partial"], serde_json::Value::Bool(true), "{text}");
    let records = value["records"].as_array().unwrap();
    assert!(!records.is_empty(), "{text}");
    let seeds: Vec<u64> = records
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (0..seeds.len() as u64).collect();
    assert_eq!(seeds, expected, "the finished jobs, in order");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), records.len() + 1, "{rows}");
    assert!(rows.lines().next().unwrap().ends_with(",partial"), "{rows}");
    assert!(rows.lines().nth(1).unwrap().ends_with(",true"), "{rows}");

    let merged = interleave(&["merge", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(!merged.status.success());
    assert!(stderr.contains("partial"), "{stderr}");
}

/// A reader that stops early (`interleave list | head -1`) ends the command quietly, by the
/// default action of SIGPIPE, not with a panic on the failed write. The pipe holds one page,
/// less than the list, so the command is still writing when the reader goes away: with a
/// larger one the whole list could fit before the reader closed it (and a process another test
/// forks at that moment briefly holds the reading end too).
#[cfg(target_os = "linux")]
#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;

    let mut ends = [0; 2];
    // SAFETY: `ends` has room for the two descriptors `pipe2` writes.
    assert_eq!(
        unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) },
        0
    );
    // SAFETY: the descriptors were just created and nothing else owns them.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: `ends[0]` is an open pipe descriptor, owned by `read`.
    let size = unsafe { libc::fcntl(ends[0], libc::F_SETPIPE_SZ, 4096) };
    assert!(size >= 4096, "the pipe could not be shrunk");
    let child = Command::new(env!("CARGO_BIN_EXE_interleave"))
        .arg("list")
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(std::fs::File::from(read));
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("program"), "{first}");
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        out.status
    );
}

/// `interleave replay` tells by its exit code what happened: 1 when the failure reproduced,
/// 3 when the program diverged from the token, 2 for a token that is not one.
#[test]
fn replay_exit_codes_say_what_happened() {
    let dir = scratch("replay");
    let json = dir.join("run.json");
    let out = interleave(&[
        "bench",
        "-p",
        "rpro-d1",
        "-s",
        "random",
        "-n",
        "200",
        "--seeds",
        "1",
        "--variant",
        "buggy",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let token = value["records"][0]["token"]
        .as_str()
        .expect("random finds the bug in 200 executions")
        .to_string();

    let reproduced = interleave(&["replay", "rpro-d1", &token]);
    assert_eq!(
        reproduced.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&reproduced.stdout)
    );
    let diverged = interleave(&["replay", "bounding-fig1", &token]);
    let stdout = String::from_utf8_lossy(&diverged.stdout);
    assert_eq!(diverged.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("replay divergence"), "{stdout}");
    let malformed = interleave(&["replay", "rpro-d1", "il01-AAAA"]);
    assert_eq!(malformed.status.code(), Some(2));
    let help = interleave(&["replay", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("Exit status"), "{help}");
}

/// The summaries of the shards of a real sharded exploration, combined by `merge-shards`,
/// give the verdict of the unsharded run; each exit code says what happened: 1 when a test
/// failed (the first failure of the unsharded run), 0 when all passed, 2 when a shard is
/// missing.
#[test]
fn merge_shards_combines_the_shards_of_an_exploration_into_its_verdict() {
    let program = interleave_programs::find("bounding-fig3").expect("a suite program");
    let explore = |variant, shard: Option<u64>| {
        let mut builder = interleave::Builder::new()
            .ignore_environment()
            .strategy("random".parse().unwrap())
            .executions(300)
            .seed(1);
        if let Some(number) = shard {
            builder = builder.shard(number, 3);
        }
        // Each as the first exploration of this test, as each shard's is in its own process:
        // a summary names its test's exploration by number after the first.
        first_exploration(|| {
            builder
                .explore(move || (program.run)(variant))
                .expect("explores")
        })
    };
    let dir = scratch("merge-shards");
    let write = |variant, name: &str| {
        let paths: Vec<PathBuf> = (1..=3)
            .map(|number| {
                let report = explore(variant, Some(number));
                let path = dir.join(format!("{name}-{number}.log"));
                let line = report.shard.expect("a summary").to_line();
                std::fs::write(&path, format!("running 1 test\n{line}\ntest result: ok\n"))
                    .unwrap();
                path
            })
            .collect();
        paths
    };
    let failing = write(interleave_programs::Variant::Buggy, "buggy");
    let whole = explore(interleave_programs::Variant::Buggy, None);
    let first = whole.first_failure().expect("random finds the race");
    let json = dir.join("verdict.json");
    let mut args: Vec<&str> = vec!["merge-shards", "--json", json.to_str().unwrap()];
    args.extend(failing.iter().map(|p| p.to_str().unwrap()));
    let out = interleave(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&first.token), "{stdout}");
    let verdict: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(verdict[0]["first_failure"]["execution"], first.execution);

    let passing = write(interleave_programs::Variant::Fixed, "fixed");
    let mut args = vec!["merge-shards"];
    args.extend(passing.iter().map(|p| p.to_str().unwrap()));
    let out = interleave(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("passed 300 executions"), "{stdout}");

    let out = interleave(&["merge-shards", passing[0].to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("shard 2/3, 3/3 missing"), "{stderr}");
}
