//! Sharding (`INTERLEAVE_SHARD=i/n`, `Builder::shard`) on programs of the suite: `n` shards
//! together run exactly the executions of one unsharded run (the same indices, the same
//! schedules: the same steps and the same failures with the same replay tokens), and the
//! earliest failure over the shards is the unsharded run's first failure. Checked for samplers
//! that split evenly (random, POS), for `auto` (which also runs its PCT member's executions on
//! every shard, because PCT learns from each), and for systematic DFS (which learns from every
//! execution, so every shard runs the whole tree and reports only its share).

use interleave::{Builder, Report, ShardSummary};
use interleave_programs::{find, Variant};

const EXECUTIONS: u64 = 240;

/// Buggy programs the checked strategies expose within the budget, and a fixed twin.
const PROGRAMS: [(&str, Variant); 4] = [
    ("seed000-fig3", Variant::Buggy),
    ("seed001-sqlite", Variant::Buggy),
    ("seed000-producer-consumer", Variant::Buggy),
    ("seed000-fig3", Variant::Fixed),
];

fn explore(
    name: &str,
    variant: Variant,
    spec: &str,
    shard: Option<(u64, u64)>,
    stop_on_first_failure: bool,
) -> Report {
    let program = find(name).expect("a suite program");
    let mut builder = Builder::new()
        .ignore_environment()
        .strategy(spec.parse().expect("a valid spec"))
        .executions(EXECUTIONS)
        .seed(3)
        .stop_on_first_failure(stop_on_first_failure);
    if let Some((number, count)) = shard {
        builder = builder.shard(number, count);
    }
    builder
        .explore(move || (program.run)(variant))
        .expect("explores")
}

/// The failures of `reports`, as (execution, replay token), in execution order.
fn failures<'a>(reports: impl IntoIterator<Item = &'a Report>) -> Vec<(u64, String)> {
    let mut all: Vec<(u64, String)> = reports
        .into_iter()
        .flat_map(|report| &report.failures)
        .map(|failure| (failure.execution, failure.token.clone()))
        .collect();
    all.sort();
    all
}

fn summary(report: &Report) -> &ShardSummary {
    report
        .shard
        .as_ref()
        .expect("a sharded run summarises itself")
}

/// Checks that 2 and 3 shards of `spec` partition the unsharded run of every program, and
/// returns each shard's summary with the number of executions of the unsharded run.
fn check_partition(spec: &str) -> Vec<(ShardSummary, u64)> {
    let mut summaries = Vec::new();
    let mut found = 0;
    for (name, variant) in PROGRAMS {
        let whole = explore(name, variant, spec, None, false);
        assert!(
            whole.shard.is_none(),
            "an unsharded run has no shard summary"
        );
        for count in [2, 3] {
            let shards: Vec<Report> = (1..=count)
                .map(|number| explore(name, variant, spec, Some((number, count)), false))
                .collect();
            let context = format!("{spec} on {name} ({variant:?}) in {count} shards");
            assert_eq!(
                shards.iter().map(|r| r.executions).sum::<u64>(),
                whole.executions,
                "{context}: executions"
            );
            assert_eq!(
                shards.iter().map(|r| r.steps).sum::<u64>(),
                whole.steps,
                "{context}: steps, so the schedules agree"
            );
            assert_eq!(failures(&shards), failures([&whole]), "{context}: failures");
            for (number, report) in (1..=count).zip(&shards) {
                let summary = summary(report);
                assert_eq!(
                    (summary.shard.number(), summary.shard.count()),
                    (number, count)
                );
                assert!(
                    report
                        .failures
                        .iter()
                        .all(|failure| failure.execution % count == number - 1),
                    "{context}: shard {number} reports only executions it owns"
                );
                summaries.push((summary.clone(), whole.executions));
            }
        }
        found += usize::from(!whole.failures.is_empty());
    }
    assert!(
        found >= 2,
        "{spec} finds bugs, so the failures compared are not all empty"
    );
    summaries
}

fn check_first_failure(spec: &str) {
    for (name, variant) in PROGRAMS {
        let whole = explore(name, variant, spec, None, true);
        for count in [2, 3] {
            let shards: Vec<Report> = (1..=count)
                .map(|number| explore(name, variant, spec, Some((number, count)), true))
                .collect();
            let earliest = failures(&shards).into_iter().next();
            assert_eq!(
                earliest,
                failures([&whole]).into_iter().next(),
                "{spec} on {name} ({variant:?}) in {count} shards: the first failure"
            );
        }
    }
}

#[test]
fn random_shards_split_the_executions_of_one_run_evenly() {
    for (summary, _) in check_partition("random") {
        assert_eq!(summary.learning_executions, 0, "random learns nothing");
    }
    check_first_failure("random");
}

#[test]
fn pos_shards_split_the_executions_of_one_run_evenly() {
    for (summary, _) in check_partition("pos") {
        assert_eq!(summary.learning_executions, 0, "POS learns nothing");
    }
    check_first_failure("pos");
}

#[test]
fn auto_shards_run_exactly_the_executions_of_one_run() {
    let summaries = check_partition("auto");
    for (summary, whole) in &summaries {
        // Besides its own share, each shard runs the PCT member's executions (one in six) and
        // SURW's profiling execution that it does not own, to learn from, and no others.
        let share = whole.div_ceil(summary.shard.count());
        assert!(
            summary.learning_executions <= whole.div_ceil(6) + 1
                && summary.executions <= share
                && summary.learning_executions + summary.executions < *whole,
            "{summary:?}"
        );
    }
    assert!(
        summaries
            .iter()
            .any(|(summary, _)| summary.learning_executions > 0),
        "some shard runs executions it does not own, to learn from"
    );
    check_first_failure("auto");
}

#[test]
fn dfs_shards_report_exactly_the_executions_of_one_run() {
    for (summary, whole) in check_partition("dfs") {
        // DFS plans each execution from the one before, so every shard runs them all.
        assert_eq!(
            summary.learning_executions + summary.executions,
            whole,
            "{summary:?}"
        );
    }
    check_first_failure("dfs");
}
