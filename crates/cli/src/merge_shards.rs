//! `interleave merge-shards`: combines the summaries that the shards of sharded explorations
//! (`INTERLEAVE_SHARD=i/n`) print into one verdict per test.
//!
//! Each shard of a test prints one line starting with [`SHARD_SUMMARY_PREFIX`] (see
//! `interleave::ShardSummary`); the inputs are files that hold such lines anywhere, such as the
//! saved logs of CI jobs. Summaries of one exploration (the same test, strategy, seed, budget and
//! shard count) are combined: every shard must be there, the executions add up to those of one
//! unsharded run, and the earliest failure is the unsharded run's first failure: the one with
//! the smallest execution index when the shards share out executions, or, when they share out a
//! systematic search's subtrees, the one whose subtree the search reached first (its `order`),
//! then the smallest index within that shard.

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
    partition: Partition,
    executions: u64,
    learning_executions: u64,
    failure: Option<ShardFailure>,
    stopped_by: Option<u64>,
}

/// How the shards share out the executions (`interleave::ShardPartition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum Partition {
    /// By index: the indices are the unsharded run's.
    Executions,
    /// By subtree: each shard's indices are its own, and `order` orders the failures.
    Prefixes,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
struct ShardFailure {
    execution: u64,
    order: Option<u64>,
    kind: String,
    token: String,
}

impl ShardFailure {
    /// Where the failure comes in the unsharded run's order.
    fn position(&self) -> (u64, u64) {
        (self.order.unwrap_or(0), self.execution)
    }
}

/// What identifies one sharded exploration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Exploration {
    test: String,
    strategy: String,
    seed: u64,
    budget: u64,
    shards: u64,
    partition: Partition,
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
    /// How the shards shared out the executions: `executions` (the failure's index is the
    /// unsharded run's) or `prefixes` (it is the finding shard's own).
    partition: Partition,
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
                partition: summary.partition,
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
        .filter_map(|s| s.failure.as_ref().map(|f| (f.position(), s.shard, f)))
        .min_by_key(|(position, _, _)| *position);
    // A shard stops early only at a failure its owner reports; without any, a summary is
    // missing or comes from another build. Shards that share out subtrees number their
    // executions each their own way, so only a failure must be there.
    let stopped = shards.values().filter_map(|s| s.stopped_by).min();
    if let Some(stopped) = stopped {
        let reported = match key.partition {
            Partition::Executions => first.is_some_and(|(_, _, f)| f.execution <= stopped),
            Partition::Prefixes => first.is_some(),
        };
        if !reported {
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
        partition: key.partition,
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
            "{head}: FAILED: {} in execution {}{} (found by shard {shard}/{}); replay it with \
             INTERLEAVE_REPLAY={}",
            failure.kind,
            failure.execution,
            match verdict.partition {
                Partition::Executions => "",
                Partition::Prefixes => " of its shard",
            },
            verdict.shards,
            failure.token
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

    /// The summary line shard `shard` of 3 prints, as the library writes it, after a CI
    /// log's timestamp.
    fn summary_line(
        shard: u64,
        partition: interleave::ShardPartition,
        failure: Option<(u64, Option<u64>)>,
        stopped_by: Option<u64>,
    ) -> String {
        let summary = interleave::ShardSummary {
            shard: interleave::Shard::new(shard, 3).unwrap(),
            test: Some("t".to_string()),
            strategy: "random".to_string(),
            seed: 0,
            budget: 90,
            partition,
            executions: 30,
            learning_executions: 0,
            failure: failure.map(|(execution, order)| interleave::ShardFailure {
                execution,
                order,
                kind: "panic".to_string(),
                token: format!("il2-{execution}"),
            }),
            stopped_by,
        };
        format!("2026-01-01T00:00:00Z {}", summary.to_line())
    }

    fn line(shard: u64, failure: Option<u64>, stopped_by: Option<u64>) -> String {
        let failure = failure.map(|execution| (execution, None));
        summary_line(
            shard,
            interleave::ShardPartition::Executions,
            failure,
            stopped_by,
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
    fn subtrees_order_the_failures_of_a_split_search_before_indices() {
        let prefixes = interleave::ShardPartition::Prefixes;
        let (code, json) = merged(&[
            summary_line(1, prefixes, Some((3, Some(4))), None),
            summary_line(2, prefixes, Some((40, Some(1))), None),
            summary_line(3, prefixes, None, Some(12)),
        ])
        .unwrap();
        assert_eq!(code, ExitCode::FAILURE);
        let verdicts: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(verdicts[0]["first_failure"]["execution"], 40);
        assert_eq!(verdicts[0]["found_by_shard"], 2);
        assert_eq!(verdicts[0]["partition"], "prefixes");
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
