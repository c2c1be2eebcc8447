//! SVG charts of a benchmark run, drawn with plotters' SVG backend (no system fonts needed).
//!
//! - `first-bug.svg`: for every buggy program and every strategy that is not part of a sweep,
//!   the median executions to the first bug (dot) and the range over the seeds that found it
//!   (bar), on a log scale; a cross right of the budget line means no run found the bug, and a
//!   hollow square further right that the tool cannot run the program (a peer without the
//!   primitive it needs), which says nothing about the bug; the legend explains both marks.
//! - `sweep-N-STRATEGY-PARAMETER.svg`, one per `--sweep`: the fraction of executions exposing each program's bug
//!   against the swept parameter (the probability curves of seed 001's figures), log scale, with
//!   each other interleave strategy of the run (say PCT) as a dashed reference line in the
//!   program's colour.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use plotters::prelude::*;

use crate::plan::{Column, Sweep};
use crate::results::Results;
use crate::table::{buggy_cell, cells, Cell};

/// Height of one program's row in the first-bug chart, in pixels.
const ROW: u32 = 22;

fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];
    COLORS[i % COLORS.len()]
}

fn plot_error<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart failed: {e:?}")
}

/// Writes every chart into `dir` (created if needed); returns the files written.
pub fn write_all(results: &Results, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let sweeps = results
        .config
        .sweeps
        .iter()
        .map(|s| Sweep::parse(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut written = Vec::new();
    let swept: HashSet<&str> = sweeps
        .iter()
        .flat_map(|s| s.points.iter().map(|(_, spec)| spec.as_str()))
        .collect();
    let plain: Vec<&String> = results
        .config
        .strategies
        .iter()
        .filter(|s| !swept.contains(s.as_str()))
        .collect();
    if !plain.is_empty() {
        let path = dir.join("first-bug.svg");
        first_bug(results, &plain, &path)?;
        written.push(path);
    }
    for (i, sweep) in sweeps.iter().enumerate() {
        let strategy = results.config.sweeps[i]
            .split(':')
            .next()
            .unwrap_or("strategy");
        let path = dir.join(format!(
            "sweep-{}-{strategy}-{}.svg",
            i + 1,
            sweep.parameter
        ));
        let references: Vec<&String> = plain
            .iter()
            .copied()
            .filter(|spec| Column::parse(spec).is_ok_and(|c| c.tool() == "interleave"))
            .collect();
        sweep_chart(
            results,
            &results.config.sweeps[i],
            sweep,
            &references,
            &path,
        )?;
        written.push(path);
    }
    Ok(written)
}

/// Draws the legend at `position` and writes the file.
fn finish<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    position: SeriesLabelPosition,
) -> anyhow::Result<()>
where
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.5))
        .draw()
        .map_err(plot_error)?;
    root.present().map_err(plot_error)
}

fn first_bug(results: &Results, strategies: &[&String], path: &Path) -> anyhow::Result<()> {
    let cells = cells(&results.records);
    let buggy = |program: &str, strategy: &str| buggy_cell(&cells, program, strategy);
    let programs: Vec<&String> = results
        .config
        .programs
        .iter()
        .filter(|p| strategies.iter().any(|s| buggy(p, s).is_some()))
        .collect();
    if programs.is_empty() {
        return Ok(());
    }
    let budget = results.config.executions.max(1) as f64;
    let not_found_x = budget * 2.0;
    let not_runnable_x = budget * 8.0;
    let n = programs.len();
    let height = 110 + ROW * n as u32;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Executions to first bug: median (dot) and min..max over seeds (bar); x = not found in {} executions, square = not runnable",
                results.config.executions
            ),
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(230)
        .build_cartesian_2d((0.8f64..budget * 40.0).log_scale(), -0.5f64..n as f64 - 0.5)
        .map_err(plot_error)?;
    let label = |y: &f64| -> String {
        let row = y.round();
        if (y - row).abs() > 1e-6 || row < 0.0 || row as usize >= n {
            return String::new();
        }
        programs[n - 1 - row as usize].clone()
    };
    chart
        .configure_mesh()
        .y_labels(n)
        .y_label_formatter(&label)
        .x_desc("executions (log scale); the grey line is the budget")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .light_line_style(WHITE)
        .draw()
        .map_err(plot_error)?;
    chart
        .draw_series(LineSeries::new(
            [(budget, -0.5), (budget, n as f64 - 0.5)],
            BLACK.mix(0.4).stroke_width(1),
        ))
        .map_err(plot_error)?;
    let lanes = strategies.len() as f64;
    for (s, strategy) in strategies.iter().enumerate() {
        let color = palette(s);
        let offset = (s as f64 - (lanes - 1.0) / 2.0) * 0.7 / lanes;
        let mut bars = Vec::new();
        let mut dots = Vec::new();
        let mut crosses = Vec::new();
        let mut squares = Vec::new();
        for (i, program) in programs.iter().enumerate() {
            let Some(cell) = buggy(program, strategy) else {
                continue;
            };
            let y = (n - 1 - i) as f64 + offset;
            let firsts = cell.firsts();
            match cell.median() {
                Some(median) => {
                    bars.push([(firsts[0] as f64, y), (firsts[firsts.len() - 1] as f64, y)]);
                    dots.push((median, y));
                }
                None if cell.runnable() => crosses.push((not_found_x, y)),
                None => squares.push((not_runnable_x, y)),
            }
        }
        for bar in bars {
            chart
                .draw_series(LineSeries::new(bar, color.stroke_width(2)))
                .map_err(plot_error)?;
        }
        chart
            .draw_series(
                crosses
                    .into_iter()
                    .map(|p| Cross::new(p, 4, color.stroke_width(2))),
            )
            .map_err(plot_error)?;
        // A hollow square, in pixels around the point: not runnable is no measurement.
        chart
            .draw_series(squares.into_iter().map(|p| {
                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], color.stroke_width(2))
            }))
            .map_err(plot_error)?;
        chart
            .draw_series(dots.into_iter().map(|p| Circle::new(p, 4, color.filled())))
            .map_err(plot_error)?
            .label(strategy.as_str())
            .legend(move |(x, y)| Circle::new((x, y), 4, color.filled()));
    }
    // Legend entries for the two marks that are not measurements; their series draw nothing.
    let grey = BLACK.mix(0.6);
    chart
        .draw_series(std::iter::empty::<Cross<(f64, f64), i32>>())
        .map_err(plot_error)?
        .label(format!(
            "not found in {} executions",
            results.config.executions
        ))
        .legend(move |(x, y)| Cross::new((x, y), 4, grey.stroke_width(2)));
    chart
        .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
        .map_err(plot_error)?
        .label("not runnable: the tool cannot run the program")
        .legend(move |(x, y)| {
            Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], grey.stroke_width(2))
        });
    finish(&mut chart, &root, SeriesLabelPosition::UpperRight)
}

fn sweep_chart(
    results: &Results,
    text: &str,
    sweep: &Sweep,
    references: &[&String],
    path: &Path,
) -> anyhow::Result<()> {
    let cells = cells(&results.records);
    let floor = 0.5 / (results.config.executions.max(1) * results.config.seeds.max(1)) as f64;
    let exposed = |program: &str, spec: &str| {
        buggy_cell(&cells, program, spec)
            .and_then(Cell::exposed)
            .map(|f| f.max(floor))
    };
    let mut lines: Vec<(&String, Vec<(f64, f64)>)> = Vec::new();
    for program in &results.config.programs {
        let points: Vec<(f64, f64)> = sweep
            .points
            .iter()
            .filter_map(|(value, spec)| Some((*value as f64, exposed(program, spec)?)))
            .collect();
        if !points.is_empty() {
            lines.push((program, points));
        }
    }
    let lo = sweep.points.first().map_or(0.0, |p| p.0 as f64);
    let hi = sweep
        .points
        .last()
        .map_or(1.0, |p| p.0 as f64)
        .max(lo + 1.0);
    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Fraction of executions exposing the bug, --sweep {text}"),
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(lo..hi, (floor..1.0).log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc(sweep.parameter.as_str())
        .x_labels(sweep.points.len().min(12))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("probability per execution (log scale; never = the bottom line)")
        .draw()
        .map_err(plot_error)?;
    for (i, (program, points)) in lines.into_iter().enumerate() {
        let color = palette(i);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(plot_error)?
            .label(program.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .map_err(plot_error)?;
        for reference in references {
            if let Some(level) = exposed(program, reference) {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(lo, level), (hi, level)],
                        6,
                        4,
                        color.stroke_width(1),
                    ))
                    .map_err(plot_error)?;
            }
        }
    }
    finish(&mut chart, &root, SeriesLabelPosition::LowerRight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Config, Record, Shard, FORMAT};

    /// A run of `random` and a peer on one buggy program, neither finding the bug; the peer's
    /// records say `note` (`None`: it ran).
    fn results(peer_note: Option<&str>) -> Results {
        let record = |strategy: &str, tool: &str, note: Option<&str>| Record {
            program: "rpro-d1".into(),
            fixed: false,
            strategy: strategy.into(),
            tool: tool.into(),
            seed: 0,
            executions: if note.is_some() { 0 } else { 10 },
            first_failure: None,
            failures: 0,
            first_bug: None,
            bugs: 0,
            stops_at_first_failure: tool != "interleave",
            steps: None,
            seconds: 0.0,
            failure_kind: None,
            message: None,
            token: None,
            note: note.map(str::to_string),
            stats: None,
        };
        Results {
            format: FORMAT.into(),
            config: Config {
                programs: vec!["rpro-d1".into()],
                strategies: vec!["random".into(), "loom:b=2".into()],
                sweeps: vec![],
                variants: vec!["buggy".into()],
                executions: 10,
                seeds: 1,
                first_seed: 0,
                version: "0".into(),
            },
            shards: vec![Shard { index: 1, count: 1 }],
            partial: false,
            records: vec![
                record("random", "interleave", None),
                record("loom:b=2", "loom", peer_note),
            ],
        }
    }

    fn chart(results: &Results, name: &str) -> String {
        let dir =
            std::env::temp_dir().join(format!("interleave-chart-{}-{name}", std::process::id()));
        let written = write_all(results, &dir).unwrap();
        assert_eq!(written, vec![dir.join("first-bug.svg")]);
        std::fs::read_to_string(&written[0]).unwrap()
    }

    #[test]
    fn a_program_a_tool_cannot_run_is_drawn_apart_from_one_it_did_not_find() {
        let not_found = chart(&results(None), "not-found");
        let not_runnable = chart(
            &results(Some("unsupported: loom has no async runtime")),
            "not-runnable",
        );
        for svg in [&not_found, &not_runnable] {
            assert!(
                svg.contains("not runnable: the tool cannot run the program"),
                "{svg}"
            );
            assert!(svg.contains("not found in 10 executions"), "{svg}");
        }
        // The peer's mark changes from a cross (two lines) to a hollow square: one rectangle
        // more and one cross fewer; the legend is the same in both.
        let count = |svg: &str, element: &str| svg.matches(element).count();
        assert_eq!(
            count(&not_runnable, "<rect"),
            count(&not_found, "<rect") + 1
        );
        assert_eq!(
            count(&not_runnable, "<line"),
            count(&not_found, "<line") - 2
        );
    }
}
