//! End-to-end: the `interleave` binary's bench, shard and merge commands.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

const RUN: [&str; 12] = [
    "bench",
    "-p",
    "seed001-d1,seed000-fig1",
    "-s",
    "random,pct:d=2,loom:b=2",
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
        table.contains("seed001-d1") && table.contains("fixed twins: no failures"),
        "{table}"
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
        "seed001-d1",
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
        (vec!["bench", "-s", "shuttle-pct:d=0"], "at least 1"),
    ];
    for (args, expected) in cases {
        let out = interleave(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}
