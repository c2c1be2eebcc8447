//! `interleave merge-shards`: combines the summaries that the shards of sharded explorations
//! (`INTERLEAVE_SHARD=i/n`) print into one verdict per test.
//!
//! Each shard of a test prints one line starting with [`SHARD_SUMMARY_PREFIX`] (see
//! `interleave::ShardSummary`); the inputs are files that hold such lines anywhere, such as the
//! saved logs of CI jobs. Summaries of one exploration (the same test, strategy, seed, budget and
//! shard count) are combined: every shard must be there, the executions add up to those of one
//! unsharded run, and the failure with the smallest execution index is the unsharded run's
//! first failure.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use interleave::SHARD_SUMMARY_PREFIX;
use serde::{Deserialize, Serialize};

/// One shard's summary as printed (`ShardSummary::to_line`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
struct Summary {
    version: u32,
    test: Option<String>,
    shard: u64,
    shards: u64,
    strategy: String,
    seed: u64,
    budget: u64,
    executions: u64,
    learning_executions: u64,
    failure: Option<ShardFailure>,
    stopped_by: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
struct ShardFailure {
    execution: u64,
    kind: String,
    token: String,
}

/// What identifies one sharded exploration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Exploration {
    test: String,
    strategy: String,
    seed: u64,
    budget: u64,
    shards: u64,
}

/// The combined verdict of one exploration, also written with `--json`.
#[derive(Debug, Serialize)]
struct Verdict {
    test: String,
    strategy: String,
    seed: u64,
    budget: u64,
    shards: u64,
    /// Executions the shards ran and own: those of one unsharded run (when the exploration
    /// failed, the shards that did not find the first failure may have run past it).
    executions: u64,
    /// Executions run only to learn from, over all shards.
    learning_executions: u64,
    first_failure: Option<ShardFailure>,
    /// The shard (counted from 1) that found the first failure.
    found_by_shard: Option<u64>,
}

/// Reads the summaries in `inputs`, prints one verdict per exploration, writes them as JSON to
/// `json` if asked, and exits 0 when every exploration passed, 1 when one failed; an
/// incomplete or inconsistent set of shards is an error.
pub fn merge_shards(inputs: &[PathBuf], json: Option<&PathBuf>) -> anyhow::Result<ExitCode> {
    let mut groups: BTreeMap<Exploration, BTreeMap<u64, Summary>> = BTreeMap::new();
    for path in inputs {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (number, line) in text.lines().enumerate() {
            let Some(start) = line.find(SHARD_SUMMARY_PREFIX) else {
                continue;
            };
            let body = &line[start + SHARD_SUMMARY_PREFIX.len()..];
            let summary: Summary = serde_json::from_str(body.trim()).with_context(|| {
                format!(
                    "{}:{}: not a shard summary written by this version",
                    path.display(),
                    number + 1
                )
            })?;
            if summary.version != 1 {
                bail!(
                    "{}:{}: shard summary version {} is not supported (expected 1)",
                    path.display(),
                    number + 1,
                    summary.version
                );
            }
            let key = Exploration {
                test: summary
                    .test
                    .clone()
                    .unwrap_or_else(|| "(no test)".to_string()),
                strategy: summary.strategy.clone(),
                seed: summary.seed,
                budget: summary.budget,
                shards: summary.shards,
            };
            let shards = groups.entry(key.clone()).or_default();
            if let Some(earlier) = shards.get(&summary.shard) {
                if *earlier != summary {
                    bail!(
                        "{}: shard {}/{} of {} appears twice with different results",
                        path.display(),
                        summary.shard,
                        summary.shards,
                        key.test
                    );
                }
            }
            shards.insert(summary.shard, summary);
        }
    }
    if groups.is_empty() {
        bail!(
            "no shard summaries (lines starting with {SHARD_SUMMARY_PREFIX:?}) in {}",
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let verdicts = groups
        .into_iter()
        .map(|(key, shards)| combine(key, &shards))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for verdict in &verdicts {
        println!("{}", describe(verdict));
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&verdicts)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if verdicts.iter().any(|v| v.first_failure.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The verdict of one exploration from its shards' summaries, by shard number.
fn combine(key: Exploration, shards: &BTreeMap<u64, Summary>) -> anyhow::Result<Verdict> {
    let missing: Vec<String> = (1..=key.shards)
        .filter(|number| !shards.contains_key(number))
        .map(|number| format!("{number}/{}", key.shards))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} ({}, seed {}): shard {} missing; every shard's summary is needed for a verdict",
            key.test,
            key.strategy,
            key.seed,
            missing.join(", ")
        );
    }
    let first = shards
        .values()
        .filter_map(|s| s.failure.as_ref().map(|f| (f.execution, s.shard, f)))
        .min_by_key(|(execution, _, _)| *execution);
    // A shard stops early only at a failure its owner reports; without any, a summary is
    // missing or comes from another build.
    let stopped = shards.values().filter_map(|s| s.stopped_by).min();
    if let Some(stopped) = stopped {
        if first.is_none_or(|(execution, _, _)| execution > stopped) {
            bail!(
                "{} ({}, seed {}): a shard stopped at the failure of execution {stopped}, which \
                 no shard reports; are the summaries from one build and one run?",
                key.test,
                key.strategy,
                key.seed
            );
        }
    }
    Ok(Verdict {
        executions: shards.values().map(|s| s.executions).sum(),
        learning_executions: shards.values().map(|s| s.learning_executions).sum(),
        first_failure: first.map(|(_, _, failure)| failure.clone()),
        found_by_shard: first.map(|(_, shard, _)| shard),
        test: key.test,
        strategy: key.strategy,
        seed: key.seed,
        budget: key.budget,
        shards: key.shards,
    })
}

/// The verdict in words.
fn describe(verdict: &Verdict) -> String {
    let head = format!(
        "{} ({}, seed {}, {} shards)",
        verdict.test, verdict.strategy, verdict.seed, verdict.shards
    );
    match (&verdict.first_failure, verdict.found_by_shard) {
        (Some(failure), Some(shard)) => format!(
            "{head}: FAILED: {} in execution {} (found by shard {shard}/{}); replay it with \
             INTERLEAVE_REPLAY={}",
            failure.kind, failure.execution, verdict.shards, failure.token
        ),
        _ => format!(
            "{head}: passed {} executions ({} more run on several shards to learn from)",
            verdict.executions, verdict.learning_executions
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(shard: u64, failure: Option<u64>, stopped_by: Option<u64>) -> String {
        let failure = failure.map_or("null".to_string(), |execution| {
            format!(
                "{{\"execution\":{execution},\"kind\":\"panic\",\"token\":\"il2-{execution}\"}}"
            )
        });
        let stopped = stopped_by.map_or("null".to_string(), |e| e.to_string());
        format!(
            "2026-01-01T00:00:00Z {SHARD_SUMMARY_PREFIX}{{\"version\":1,\"test\":\"t\",\
             \"shard\":{shard},\"shards\":3,\"strategy\":\"random\",\"seed\":0,\"budget\":90,\
             \"executions\":30,\"learning_executions\":0,\"failure\":{failure},\
             \"stopped_by\":{stopped}}}"
        )
    }

    fn merged(lines: &[String]) -> anyhow::Result<(ExitCode, String)> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // The tests run in parallel; each call gets its own directory.
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("merge-shards-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("shards.log");
        std::fs::write(&path, lines.join("\nunrelated output\n"))?;
        let json = dir.join("verdict.json");
        let code = merge_shards(&[path], Some(&json))?;
        Ok((code, std::fs::read_to_string(json)?))
    }

    #[test]
    fn the_smallest_failing_index_over_the_shards_is_the_verdict() {
        let (code, json) = merged(&[
            line(1, Some(45), None),
            line(2, Some(7), None),
            line(3, None, Some(7)),
        ])
        .unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        let verdicts: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(verdicts[0]["first_failure"]["execution"], 7);
        assert_eq!(verdicts[0]["found_by_shard"], 2);
        assert_eq!(verdicts[0]["executions"], 90);
    }

    #[test]
    fn passing_shards_add_up() {
        let (code, json) = merged(&[
            line(1, None, None),
            line(2, None, None),
            line(3, None, None),
        ])
        .unwrap();
        assert_eq!(code, ExitCode::SUCCESS);
        assert!(json.contains("\"executions\": 90"), "{json}");
    }

    #[test]
    fn a_missing_or_inconsistent_shard_is_an_error() {
        let missing = merged(&[line(1, None, None), line(3, None, None)]).unwrap_err();
        assert!(
            missing.to_string().contains("shard 2/3 missing"),
            "{missing}"
        );
        let unreported = merged(&[
            line(1, None, None),
            line(2, None, None),
            line(3, None, Some(4)),
        ])
        .unwrap_err();
        assert!(
            unreported.to_string().contains("no shard reports"),
            "{unreported}"
        );
    }
}
