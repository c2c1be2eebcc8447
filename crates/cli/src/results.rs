//! The measurements of a benchmark run and their files: JSON (the complete, mergeable record of
//! a run or shard) and CSV (one row per measurement, for spreadsheets and scripts).
//!
//! A results file holds the run's [`Config`], the [`Shard`] it covers and one [`Record`] per
//! (program, variant, strategy, seed). `merge` accepts shard files only if their configurations
//! are identical and their shards are distinct parts of the same split. A run stopped by Ctrl-C
//! writes the measurements that finished with `partial` set (JSON field, CSV column); merge
//! refuses such a file, because its shard is not complete.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

/// The value of the `format` field; files with another value are refused.
pub const FORMAT: &str = "interleave-bench/1";

/// Everything that determines which measurements a run makes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Program names, in table order.
    pub programs: Vec<String>,
    /// Strategy and peer specs, in column order (sweeps already expanded).
    pub strategies: Vec<String>,
    /// The `--sweep` arguments the strategies were expanded from, for the sweep charts.
    pub sweeps: Vec<String>,
    /// `buggy` and/or `fixed`.
    pub variants: Vec<String>,
    /// Executions per (program, variant, strategy, seed).
    pub executions: u64,
    /// How many seeds.
    pub seeds: u64,
    /// The first seed; the others follow it.
    pub first_seed: u64,
    /// The interleave version that made the measurements.
    pub version: String,
}

/// Which part of a split run a file covers: jobs whose index is `index - 1` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// The whole run.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Parses `i/n` with `1 <= i <= n`.
    pub fn parse(text: &str) -> anyhow::Result<Shard> {
        let malformed = || {
            anyhow::anyhow!("bad shard {text:?}: expected i/n with 1 <= i <= n, e.g. --shard 2/4")
        };
        let (index, count) = text.split_once('/').ok_or_else(malformed)?;
        let index: u64 = index.trim().parse().map_err(|_| malformed())?;
        let count: u64 = count.trim().parse().map_err(|_| malformed())?;
        if index == 0 || count == 0 || index > count {
            return Err(malformed());
        }
        Ok(Shard { index, count })
    }

    /// Whether job number `job` (0-based, in the run's job order) belongs to this shard.
    #[cfg(test)]
    pub fn contains(self, job: u64) -> bool {
        job % self.count == self.index - 1
    }

    /// How many of a run's `jobs` belong to this shard.
    pub fn len(self, jobs: u64) -> u64 {
        jobs.saturating_sub(self.index - 1).div_ceil(self.count)
    }

    /// The run's job number of this shard's `n`-th job (both 0-based).
    pub fn job(self, n: u64) -> u64 {
        self.index - 1 + n * self.count
    }
}

/// One measurement: a program's variant under one strategy and seed, for the whole budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The program's name.
    pub program: String,
    /// Whether this is the fixed twin.
    pub fixed: bool,
    /// The strategy or peer spec.
    pub strategy: String,
    /// `interleave`, `shuttle` or `loom`.
    pub tool: String,
    /// The seed.
    pub seed: u64,
    /// Executions run.
    pub executions: u64,
    /// Index (0-based) of the first failing execution, of any kind.
    pub first_failure: Option<u64>,
    /// Failing executions, of any kind.
    pub failures: u64,
    /// Index of the first execution that exposed the program's declared bug (buggy variant).
    pub first_bug: Option<u64>,
    /// Executions that exposed the declared bug.
    pub bugs: u64,
    /// The tool stops at its first failure (the peers), so `failures` is at most 1 and the
    /// fraction of exposing executions is not measured.
    pub stops_at_first_failure: bool,
    /// Scheduling decisions in all executions, when the tool reports them.
    pub steps: Option<u64>,
    /// Wall time of the measurement.
    pub seconds: f64,
    /// The first failure's kind (`panic`, `deadlock`, `data-race`, ...).
    pub failure_kind: Option<String>,
    /// The first failure's message, first line.
    pub message: Option<String>,
    /// The first failure's replay token (interleave only).
    pub token: Option<String>,
    /// Why the tool could not run the program, or how its search ended early.
    pub note: Option<String>,
    /// The strategy's own account of the run (estimates, guarantees, predictions), as
    /// `name: value` pairs joined by `; ` (interleave only).
    #[serde(default)]
    pub stats: Option<String>,
}

impl Record {
    /// Whether the tool could not run the program at all.
    pub fn unsupported(&self) -> bool {
        self.note
            .as_deref()
            .is_some_and(|n| n.starts_with("unsupported"))
    }
}

/// The contents of a results file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    /// Always [`FORMAT`].
    pub format: String,
    /// What was run.
    pub config: Config,
    /// Which shards these records cover (one entry per shard merged in).
    pub shards: Vec<Shard>,
    /// The run was interrupted: the records are the measurements that finished, not the
    /// shard's whole set. Files written before the field existed are complete.
    #[serde(default)]
    pub partial: bool,
    /// The measurements, in job order.
    pub records: Vec<Record>,
}

impl Results {
    /// Writes the results as pretty JSON.
    pub fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
    }

    /// Reads a results file, refusing anything that is not one.
    pub fn read_json(path: &Path) -> anyhow::Result<Results> {
        let text =
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let results: Results = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not an interleave bench results file (corrupt or truncated JSON)",
                path.display()
            )
        })?;
        if results.format != FORMAT {
            bail!(
                "{} has format {:?}; this interleave reads {FORMAT:?}",
                path.display(),
                results.format
            );
        }
        Ok(results)
    }

    /// Writes one CSV row per record, each ending with the run's `partial` flag, so a row read
    /// on its own still says whether its run was complete.
    pub fn write_csv(&self, path: &Path) -> anyhow::Result<()> {
        let mut writer =
            csv::Writer::from_path(path).with_context(|| format!("writing {}", path.display()))?;
        for record in &self.records {
            writer.serialize((
                record,
                PartialColumn {
                    partial: self.partial,
                },
            ))?;
        }
        writer.flush()?;
        Ok(())
    }

    /// Combines shard files of one run. Refuses files from different configurations, the same
    /// shard twice, and an incomplete set (naming the missing shards).
    pub fn merge(parts: Vec<(String, Results)>) -> anyhow::Result<Results> {
        let Some((first_name, first)) = parts.first() else {
            bail!("merge needs at least one results file");
        };
        let config = first.config.clone();
        let count = first.shards.first().map_or(1, |s| s.count);
        let mut seen = BTreeSet::new();
        let mut records = Vec::new();
        for (name, part) in &parts {
            if part.partial {
                bail!(
                    "{name} holds a partial run (interrupted after {} measurements); \
                     run its shard again to completion before merging",
                    part.records.len()
                );
            }
            if part.config != config {
                bail!(
                    "{name} comes from a different configuration than {first_name} ({}); \
                     only shards of the same `interleave bench` command can be merged",
                    describe_difference(&config, &part.config)
                );
            }
            for shard in &part.shards {
                if shard.count != count {
                    bail!(
                        "{name} is shard {}/{} but {first_name} belongs to a split into {count}",
                        shard.index,
                        shard.count
                    );
                }
                if !seen.insert(shard.index) {
                    bail!(
                        "shard {}/{count} appears twice (again in {name})",
                        shard.index
                    );
                }
            }
            records.extend(part.records.iter().cloned());
        }
        let missing: Vec<String> = (1..=count)
            .filter(|i| !seen.contains(i))
            .map(|i| format!("{i}/{count}"))
            .collect();
        if !missing.is_empty() {
            bail!("incomplete set of shards: missing {}", missing.join(", "));
        }
        Ok(Results {
            format: FORMAT.to_string(),
            config,
            partial: false,
            shards: seen
                .into_iter()
                .map(|index| Shard { index, count })
                .collect(),
            records,
        })
    }
}

/// The column a CSV row ends with: csv writes a tuple of structs as one row of their fields,
/// header included.
#[derive(Serialize)]
struct PartialColumn {
    partial: bool,
}

/// The first field in which two configurations differ, for merge's error message.
fn describe_difference(a: &Config, b: &Config) -> String {
    let fields = [
        ("programs", a.programs != b.programs),
        ("strategies", a.strategies != b.strategies),
        ("sweeps", a.sweeps != b.sweeps),
        ("variants", a.variants != b.variants),
        ("executions", a.executions != b.executions),
        ("seeds", a.seeds != b.seeds),
        ("first seed", a.first_seed != b.first_seed),
        ("interleave version", a.version != b.version),
    ];
    let differing: Vec<&str> = fields
        .iter()
        .filter(|(_, differs)| *differs)
        .map(|(name, _)| *name)
        .collect();
    format!("they differ in: {}", differing.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            programs: vec!["rpro-d1".into()],
            strategies: vec!["random".into()],
            sweeps: vec![],
            variants: vec!["buggy".into()],
            executions: 10,
            seeds: 2,
            first_seed: 0,
            version: "0".into(),
        }
    }

    fn part(index: u64, count: u64, config: Config) -> (String, Results) {
        (
            format!("shard{index}.json"),
            Results {
                format: FORMAT.into(),
                config,
                shards: vec![Shard { index, count }],
                partial: false,
                records: vec![],
            },
        )
    }

    #[test]
    fn shards_parse_and_partition_jobs() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["0/4", "5/4", "1/0", "x/2", "2", "1/2/3", ""] {
            let err = Shard::parse(bad).unwrap_err().to_string();
            assert!(err.contains("expected i/n"), "{bad}: {err}");
        }
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        for job in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.contains(job)).count(), 1);
        }
    }

    #[test]
    fn merge_checks_configurations_and_completeness() {
        let merged = Results::merge(vec![part(2, 2, config()), part(1, 2, config())]).unwrap();
        assert_eq!(merged.shards.len(), 2);

        let mut other = config();
        other.executions = 20;
        let err = Results::merge(vec![part(1, 2, config()), part(2, 2, other)]).unwrap_err();
        assert!(err.to_string().contains("differ in: executions"), "{err}");

        let err = Results::merge(vec![part(1, 3, config()), part(3, 3, config())]).unwrap_err();
        assert!(err.to_string().contains("missing 2/3"), "{err}");

        let err = Results::merge(vec![part(1, 2, config()), part(1, 2, config())]).unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");

        let err = Results::merge(vec![part(1, 2, config()), part(2, 3, config())]).unwrap_err();
        assert!(err.to_string().contains("split into 2"), "{err}");

        let mut interrupted = part(2, 2, config());
        interrupted.1.partial = true;
        let err = Results::merge(vec![part(1, 2, config()), interrupted]).unwrap_err();
        assert!(err.to_string().contains("partial run"), "{err}");
    }

    #[test]
    fn shards_count_and_number_their_jobs() {
        for count in 1..5 {
            for jobs in 0..12 {
                let mut all = Vec::new();
                for index in 1..=count {
                    let shard = Shard { index, count };
                    let mine: Vec<u64> = (0..shard.len(jobs)).map(|n| shard.job(n)).collect();
                    assert!(mine.iter().all(|&job| shard.contains(job) && job < jobs));
                    all.extend(mine);
                }
                all.sort();
                assert_eq!(all, (0..jobs).collect::<Vec<u64>>());
            }
        }
    }
}
