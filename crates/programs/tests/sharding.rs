//! Sharding (`INTERLEAVE_SHARD=i/n`, `Builder::shard`) on programs of the suite: `n` shards
//! together run exactly the executions of one unsharded run (the same indices, the same
//! schedules: the same steps and the same failures with the same replay tokens), and the
//! earliest failure over the shards is the unsharded run's first failure. Checked for samplers
//! that split evenly (random, POS), for `auto` (which also runs its PCT member's executions on
//! every shard, because PCT learns from each), and for systematic DFS, whose search tree the
//! shards split by prefixes: they run exactly the unsharded search's schedules (under indices
//! of their own), and the failure of the earliest prefix is its first failure.

use interleave::{Builder, Report, ShardSummary};
use interleave_programs::{find, Variant};

#[path = "../../interleave/tests/common/first_exploration.rs"]
mod first_exploration;
use first_exploration::first_exploration;

const EXECUTIONS: u64 = 240;

/// Buggy programs the checked strategies expose within the budget, and a fixed twin.
const PROGRAMS: [(&str, Variant); 4] = [
    ("bounding-fig3", Variant::Buggy),
    ("rpro-sqlite", Variant::Buggy),
    ("bounding-producer-consumer", Variant::Buggy),
    ("bounding-fig3", Variant::Fixed),
];

/// Programs whose whole DFS tree takes fewer than [`DFS_BUDGET`] executions, some with failing
/// and some with passing leaves, and fixed twins.
const SEARCHED: [(&str, Variant); 6] = [
    ("bounding-merge-sort", Variant::Buggy),
    ("bounding-merge-sort", Variant::Fixed),
    ("valsched-losenotify", Variant::Buggy),
    ("async-lost-wakeup", Variant::Buggy),
    ("async-permit-leak", Variant::Buggy),
    ("async-permit-leak", Variant::Fixed),
];
const DFS_BUDGET: u64 = 3_000;

fn explore(
    name: &str,
    variant: Variant,
    spec: &str,
    shard: Option<(u64, u64)>,
    stop_on_first_failure: bool,
) -> Report {
    explore_within(
        EXECUTIONS,
        name,
        variant,
        spec,
        shard,
        stop_on_first_failure,
    )
}

fn explore_within(
    budget: u64,
    name: &str,
    variant: Variant,
    spec: &str,
    shard: Option<(u64, u64)>,
    stop_on_first_failure: bool,
) -> Report {
    explore_on(1, budget, name, variant, spec, shard, stop_on_first_failure)
}

fn explore_on(
    workers: usize,
    budget: u64,
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
        .workers(workers)
        .executions(budget)
        .seed(3)
        .stop_on_first_failure(stop_on_first_failure);
    if let Some((number, count)) = shard {
        builder = builder.shard(number, count);
    }
    // Each as the first exploration of this test, as each shard's is in its own process: a
    // token names its test's exploration by number after the first.
    first_exploration(|| {
        builder
            .explore(move || (program.run)(variant))
            .expect("explores")
    })
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

/// Asserts that the shards together ran the executions and the steps of the unsharded run,
/// so their schedules agree.
fn assert_shards_add_up(shards: &[Report], whole: &Report, context: &str) {
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
            assert_shards_add_up(&shards, &whole, &context);
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

/// The failure tokens of `reports`, sorted: the schedules, whatever their indices.
fn tokens<'a>(reports: impl IntoIterator<Item = &'a Report>) -> Vec<String> {
    let mut tokens: Vec<String> = failures(reports).into_iter().map(|(_, t)| t).collect();
    tokens.sort();
    tokens
}

#[test]
fn dfs_shards_split_the_tree_and_run_exactly_the_schedules_of_one_search() {
    check_tree_split("dfs");
}

#[test]
fn delay_bounded_shards_split_the_tree_and_run_exactly_the_schedules_of_one_search() {
    check_tree_split("delay");
}

fn check_tree_split(spec: &str) {
    let mut split = false;
    for (name, variant) in SEARCHED {
        let search = |shard, stop| explore_within(DFS_BUDGET, name, variant, spec, shard, stop);
        let whole = search(None, false);
        assert!(whole.executions < DFS_BUDGET, "{name}: the search ends");
        let first = search(None, true);
        for count in [2, 3] {
            let context = format!("{spec} on {name} ({variant:?}) in {count} shards");
            let shards: Vec<Report> = (1..=count)
                .map(|number| search(Some((number, count)), false))
                .collect();
            assert_shards_add_up(&shards, &whole, &context);
            assert_eq!(
                tokens(&shards),
                tokens([&whole]),
                "{context}: failing schedules"
            );
            for report in &shards {
                let summary = summary(report);
                assert_eq!(summary.partition, interleave::ShardPartition::Prefixes);
                // A shard enters another's subtree only to leave it at once.
                split |= summary.executions + summary.learning_executions < whole.executions;
            }
            let earliest = (1..=count)
                .map(|number| search(Some((number, count)), true))
                .filter_map(|report| {
                    let failure = summary(&report).failure.clone()?;
                    Some((
                        failure.order.expect("ordered by prefix"),
                        failure.execution,
                        failure.token,
                    ))
                })
                .min()
                .map(|(_, _, token)| token);
            assert_eq!(
                earliest,
                first.first_failure().map(|f| f.token.clone()),
                "{context}: the first failure"
            );
        }
    }
    assert!(
        split,
        "the shards split the search rather than each running all of it"
    );
}

/// A shard's share and summary do not depend on how many workers run its executions.
#[test]
fn a_shard_runs_the_same_executions_on_two_workers() {
    for (spec, name, variant) in [
        ("auto", "rpro-sqlite", Variant::Buggy),
        ("delay", "bounding-merge-sort", Variant::Fixed),
    ] {
        for number in 1..=2 {
            let run = |workers| {
                explore_on(
                    workers,
                    DFS_BUDGET,
                    name,
                    variant,
                    spec,
                    Some((number, 2)),
                    false,
                )
            };
            let (one, two) = (run(1), run(2));
            assert_eq!(
                (one.executions, one.steps, tokens([&one])),
                (two.executions, two.steps, tokens([&two])),
                "{spec} on {name}, shard {number}/2"
            );
            assert_eq!(one.shard, two.shard, "{spec} on {name}, shard {number}/2");
        }
    }
}
