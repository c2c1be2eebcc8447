//! The terminal report of a benchmark run: one row per (program, strategy) on the buggy
//! programs, a per-strategy summary, and the fixed twins' results, where any failure is a false
//! positive and is listed loudly.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::plan::Sweep;
use crate::results::{Record, Results};

/// What one (program, variant, strategy) cell measured over its seeds.
#[derive(Clone, Debug, Default)]
pub struct Cell<'a> {
    /// The records of the cell, one per seed.
    pub records: Vec<&'a Record>,
}

impl Cell<'_> {
    /// Executions to the first bug (1-based) of every seed that found it.
    pub fn firsts(&self) -> Vec<u64> {
        let mut firsts: Vec<u64> = self
            .records
            .iter()
            .filter_map(|r| r.first_bug.map(|i| i + 1))
            .collect();
        firsts.sort_unstable();
        firsts
    }

    /// Whether some record ran the program: a cell without one is "not runnable" (the tool
    /// cannot run the program, or every run ended in an error), which is no "not found".
    pub fn runnable(&self) -> bool {
        self.ran().next().is_some()
    }

    /// Records that ran the program (not unsupported, no error).
    fn ran(&self) -> impl Iterator<Item = &&Record> {
        self.records
            .iter()
            .filter(|r| !r.unsupported() && !is_error(r))
    }

    /// Fraction of executions that exposed the bug, if the tool measures it.
    pub fn exposed(&self) -> Option<f64> {
        if self.records.iter().any(|r| r.stops_at_first_failure) {
            return None;
        }
        let executions: u64 = self.ran().map(|r| r.executions).sum();
        let bugs: u64 = self.ran().map(|r| r.bugs).sum();
        (executions > 0).then(|| bugs as f64 / executions as f64)
    }

    /// Median executions to first bug over the seeds that found it.
    pub fn median(&self) -> Option<f64> {
        let f = self.firsts();
        match f.len() {
            0 => None,
            n if n % 2 == 1 => Some(f[n / 2] as f64),
            n => Some((f[n / 2 - 1] + f[n / 2]) as f64 / 2.0),
        }
    }
}

fn is_error(r: &Record) -> bool {
    r.note.as_deref().is_some_and(|n| n.starts_with("error"))
}

/// Groups records by (program, fixed, strategy), in first-appearance order.
pub fn cells(records: &[Record]) -> Vec<((String, bool, String), Cell<'_>)> {
    let mut order: Vec<(String, bool, String)> = Vec::new();
    let mut map: HashMap<(String, bool, String), Cell<'_>> = HashMap::new();
    for r in records {
        let key = (r.program.clone(), r.fixed, r.strategy.clone());
        map.entry(key.clone())
            .or_insert_with(|| {
                order.push(key);
                Cell::default()
            })
            .records
            .push(r);
    }
    order
        .into_iter()
        .map(|key| {
            let cell = map.remove(&key).expect("inserted above");
            (key, cell)
        })
        .collect()
}

/// The cell of `program`'s buggy variant under `strategy`.
pub fn buggy_cell<'c, 'r>(
    cells: &'c [((String, bool, String), Cell<'r>)],
    program: &str,
    strategy: &str,
) -> Option<&'c Cell<'r>> {
    cells
        .iter()
        .find(|((p, fixed, s), _)| p == program && !fixed && s == strategy)
        .map(|(_, cell)| cell)
}

fn seconds(cell: &Cell<'_>) -> f64 {
    cell.records.iter().map(|r| r.seconds).sum()
}

fn notes(cell: &Cell<'_>) -> String {
    let mut notes = Vec::new();
    if let Some(r) = cell.records.iter().find(|r| r.unsupported() || is_error(r)) {
        notes.push(r.note.clone().unwrap_or_default());
    } else if let Some(r) = cell.records.iter().find(|r| r.note.is_some()) {
        notes.push(r.note.clone().unwrap_or_default());
    }
    // Systematic search (icb) says at which bounds it found the bug.
    let bounds = cell
        .records
        .iter()
        .filter_map(|r| r.stats.as_deref())
        .find_map(|stats| {
            stats
                .split("; ")
                .find_map(|stat| stat.strip_prefix("bug found at (c, v, t): "))
        });
    if let Some(bounds) = bounds {
        notes.push(format!("found at (c, v, t) = {bounds}"));
    }
    let other: u64 = cell.records.iter().map(|r| r.failures - r.bugs).sum();
    if other > 0 {
        let example = cell
            .records
            .iter()
            .find(|r| r.failures > r.bugs)
            .and_then(|r| r.failure_kind.clone())
            .unwrap_or_default();
        notes.push(format!("{other} other failures (e.g. {example})"));
    }
    notes.join("; ")
}

/// What the buggy table's columns mean, printed under it.
const LEGEND: &str = "
A run is one program under one strategy with one random seed. exposed: the share of all the
runs' executions that exposed the bug (a peer stops at its first failure, so it has none);
mean, median, min..max: over the runs that found the bug, the execution (from 1) that first
exposed it; found: the runs that found it, of those that ran; time: wall time of all the runs.
";

/// Renders the whole report.
pub fn render(results: &Results) -> (String, usize) {
    let config = &results.config;
    let mut out = String::new();
    let has_loom = config.strategies.iter().any(|s| s.starts_with("loom"));
    let _ = writeln!(
        out,
        "{} executions per run, random seeds {}..={}{}, {} strategies, {} programs",
        config.executions,
        config.first_seed,
        config.first_seed + config.seeds.saturating_sub(1),
        if has_loom {
            " (loom is deterministic: one run)"
        } else {
            ""
        },
        config.strategies.len(),
        config.programs.len()
    );
    if results.partial {
        let _ = writeln!(
            out,
            "partial run: interrupted after {} measurements",
            results.records.len()
        );
    }
    let cells = cells(&results.records);
    let buggy: Vec<_> = cells.iter().filter(|((_, fixed, _), _)| !fixed).collect();
    if !buggy.is_empty() {
        let _ = writeln!(
            out,
            "\n{:<30} {:<16} {:>9} {:>9} {:>8} {:>13} {:>6} {:>8}  notes",
            "buggy program", "strategy", "exposed", "mean", "median", "min..max", "found", "time"
        );
        let _ = writeln!(
            out,
            "{:<30} {:<16} {:>9} {:>9} {:>8} {:>13} {:>6} {:>8}",
            "", "", "(of execs)", "", "", "", "(runs)", ""
        );
        let mut last_program = "";
        for ((program, _, strategy), cell) in &buggy {
            if !last_program.is_empty() && last_program != program {
                out.push('\n');
            }
            let shown_program = if last_program == program { "" } else { program };
            last_program = program;
            let firsts = cell.firsts();
            let exposed = match cell.exposed() {
                Some(f) => format!("{:.3}%", 100.0 * f),
                None => "-".to_string(),
            };
            let (mean, median, range) = if firsts.is_empty() {
                ("-".to_string(), "-".to_string(), "-".to_string())
            } else {
                let mean = firsts.iter().sum::<u64>() as f64 / firsts.len() as f64;
                (
                    format!("{mean:.0}"),
                    format!("{:.0}", cell.median().unwrap_or(0.0)),
                    format!("{}..{}", firsts[0], firsts[firsts.len() - 1]),
                )
            };
            let runs = cell.ran().count();
            let _ = writeln!(
                out,
                "{:<30} {:<16} {:>9} {:>9} {:>8} {:>13} {:>6} {:>7.2}s  {}",
                shown_program,
                strategy,
                exposed,
                mean,
                median,
                range,
                format!("{}/{}", firsts.len(), runs),
                seconds(cell),
                notes(cell)
            );
        }
        out.push_str(LEGEND);
        out.push_str(&summary(&buggy));
    }
    for sweep in &config.sweeps {
        out.push_str(&sweep_table(sweep, &cells));
    }
    let (fixed_text, false_positives) = fixed_twins(&cells);
    out.push_str(&fixed_text);
    (out, false_positives)
}

/// The fraction of executions exposing each buggy program's bug against the swept parameter:
/// one row per program, one column per value.
fn sweep_table(text: &str, cells: &[((String, bool, String), Cell<'_>)]) -> String {
    let Ok(sweep) = Sweep::parse(text) else {
        return String::new();
    };
    let mut out = format!(
        "\n--sweep {text}: % of executions exposing the bug, by {}\n{:<30}",
        sweep.parameter, "buggy program"
    );
    for (value, _) in &sweep.points {
        let _ = write!(out, " {:>8}", format!("{}={value}", sweep.parameter));
    }
    out.push('\n');
    let mut programs: Vec<&str> = Vec::new();
    for ((program, fixed, _), _) in cells {
        if !fixed && !programs.contains(&program.as_str()) {
            programs.push(program);
        }
    }
    for program in programs {
        let _ = write!(out, "{program:<30}");
        for (_, spec) in &sweep.points {
            let exposed = buggy_cell(cells, program, spec).and_then(Cell::exposed);
            match exposed {
                Some(f) => {
                    let _ = write!(out, " {:>7.3}%", 100.0 * f);
                }
                None => {
                    let _ = write!(out, " {:>8}", "-");
                }
            }
        }
        out.push('\n');
    }
    out
}

/// Per strategy: on how many programs it found the bug in every run, in some, in none.
fn summary(buggy: &[&((String, bool, String), Cell<'_>)]) -> String {
    let mut order: Vec<&str> = Vec::new();
    let mut counts: HashMap<&str, [usize; 4]> = HashMap::new();
    for ((_, _, strategy), cell) in buggy {
        let entry = counts.entry(strategy.as_str()).or_insert_with(|| {
            order.push(strategy);
            [0; 4]
        });
        let runs = cell.ran().count();
        let found = cell.firsts().len();
        let slot = if !cell.runnable() {
            3
        } else if found == runs {
            0
        } else if found > 0 {
            1
        } else {
            2
        };
        entry[slot] += 1;
    }
    let mut out = String::from("\nper strategy: programs whose bug was found in every run / in some runs / in none / not runnable\n");
    for strategy in order {
        let [all, some, none, unsupported] = counts[strategy];
        let _ = writeln!(
            out,
            "  {strategy:<16} {all:>3} / {some:>3} / {none:>3} / {unsupported:>3}"
        );
    }
    out
}

/// The fixed-twin section and the number of false positives in it.
fn fixed_twins(cells: &[((String, bool, String), Cell<'_>)]) -> (String, usize) {
    let fixed: Vec<&Record> = cells
        .iter()
        .filter(|((_, fixed, _), _)| *fixed)
        .flat_map(|(_, cell)| cell.records.iter().copied())
        .collect();
    if fixed.is_empty() {
        return (String::new(), 0);
    }
    let mut out = String::new();
    let executions: u64 = fixed.iter().map(|r| r.executions).sum();
    let bad: Vec<&&Record> = fixed
        .iter()
        .filter(|r| r.failures > 0 || r.note.as_deref().is_some_and(|n| n.starts_with("warnings")))
        .collect();
    let errors: Vec<&&Record> = fixed.iter().filter(|r| is_error(r)).collect();
    if bad.is_empty() {
        let _ = writeln!(
            out,
            "\nfixed twins: no failures in {executions} executions over {} runs",
            fixed.len()
        );
    } else {
        let _ = writeln!(
            out,
            "\n!!! FALSE POSITIVES: {} runs on fixed twins failed; a fixed twin is correct, so each is a bug in the tool or the program !!!",
            bad.len()
        );
        for r in &bad {
            let _ = writeln!(
                out,
                "  {} (fixed) {} seed {}: execution {} {}: {}",
                r.program,
                r.strategy,
                r.seed,
                r.first_failure.map_or("-".to_string(), |i| i.to_string()),
                r.failure_kind.as_deref().unwrap_or("warning"),
                r.message.as_deref().or(r.note.as_deref()).unwrap_or("")
            );
            if let Some(token) = &r.token {
                let _ = writeln!(
                    out,
                    "    replay: interleave replay {} {token} --variant fixed",
                    r.program
                );
            }
        }
    }
    for r in &errors {
        let _ = writeln!(
            out,
            "  error in {} (fixed) {} seed {}: {}",
            r.program,
            r.strategy,
            r.seed,
            r.note.as_deref().unwrap_or("")
        );
    }
    (out, bad.len())
}
