//! Renders an execution's steps as per-thread columns of (operation, object, site).
//!
//! Long executions are shortened to what usually matters: the last [`MAX_ROWS`] rows, with long
//! runs of one thread collapsed to their first and last steps. A row marks each move of the
//! virtual clock, before the step that came next. Loads that read a stale value under the weak
//! memory model are listed after the table with the store they read and the one they missed.

use std::fmt::Write;

use crate::analysis::thread_label;
use crate::runtime::memory::INITIAL_VALUE;
use crate::runtime::op::{ShortSite, NO_OBJECT};
use crate::runtime::Recording;

const MAX_ROWS: usize = 48;
const MAX_CELL: usize = 46;
/// Runs of one thread longer than this are collapsed.
const RUN_KEEP: usize = 2;

enum Row {
    Step(usize),
    /// The virtual clock moved to this time before the next step.
    Clock(std::time::Duration),
    Elided {
        thread: usize,
        count: usize,
    },
    /// What every unfinished thread was about to do when the execution stopped.
    Pending,
}

pub(crate) fn render(ex: &Recording) -> String {
    let events = &ex.events;
    let mut rows = Vec::new();
    let mut advances = ex.clock_advances.iter().peekable();
    let mut start = 0;
    while start < events.len() {
        while let Some(&(_, time)) = advances.next_if(|(step, _)| *step <= start) {
            rows.push(Row::Clock(time));
        }
        // A run of one thread ends where the clock moves, so the move shows where it happened.
        let run_end = advances.peek().map_or(events.len(), |(step, _)| *step);
        let thread = events[start].thread;
        let mut end = start;
        while end < run_end && events[end].thread == thread {
            end += 1;
        }
        if end - start > 2 * RUN_KEEP + 1 {
            rows.extend((start..start + RUN_KEEP).map(Row::Step));
            rows.push(Row::Elided {
                thread: thread as usize,
                count: end - start - 2 * RUN_KEEP,
            });
            rows.extend((end - RUN_KEEP..end).map(Row::Step));
        } else {
            rows.extend((start..end).map(Row::Step));
        }
        start = end;
    }
    // The clock can move and still leave every thread blocked (a timed-out waiter whose mutex
    // a deadlocked thread holds): that move ends the interleaving.
    rows.extend(advances.map(|&(_, time)| Row::Clock(time)));
    let skipped_rows = rows.len().saturating_sub(MAX_ROWS);
    rows.drain(..skipped_rows);
    if ex.threads.iter().any(|t| !t.finished) {
        rows.push(Row::Pending);
    }
    let rows = &rows[..];

    // Short labels (`Mutex1`, `Mutex2`, ...) in order of first appearance, with a legend, keep
    // the columns narrow and tell apart objects that share an instance number.
    let mut labels: Vec<(u32, String)> = Vec::new();
    let row_objects = |row: &Row| -> Vec<u32> {
        match row {
            Row::Step(i) => vec![events[*i].object],
            Row::Pending => ex
                .threads
                .iter()
                .filter(|t| !t.finished)
                .map(|t| t.pending.object)
                .collect(),
            Row::Elided { .. } | Row::Clock(_) => Vec::new(),
        }
    };
    for row in rows {
        for object in row_objects(row) {
            if object != NO_OBJECT && !labels.iter().any(|(o, _)| *o == object) {
                let kind = ex.objects[object as usize].id.kind;
                let same_kind = labels
                    .iter()
                    .filter(|(o, _)| ex.objects[*o as usize].id.kind == kind)
                    .count();
                labels.push((object, format!("{kind:?}{}", same_kind + 1)));
            }
        }
    }
    // An object without a label (one only the elided rows show) goes by its identity.
    let label = |object: u32| {
        labels.iter().find(|(o, _)| *o == object).map_or_else(
            || ex.objects[object as usize].id.to_string(),
            |(_, l)| l.clone(),
        )
    };
    let threads = ex.threads.len();
    let describe = |kind: crate::runtime::op::OpKind, object: u32, site| {
        let mut text = kind.name().to_string();
        if object != NO_OBJECT {
            let _ = write!(text, " {}", label(object));
        }
        let _ = write!(text, " @{}", ShortSite(site));
        text
    };
    let cell = |row: &Row, t: usize| -> String {
        match *row {
            Row::Step(i) if events[i].thread as usize == t => {
                let e = &events[i];
                describe(e.kind, e.object, e.site)
            }
            Row::Pending if !ex.threads[t].finished => {
                let slot = &ex.threads[t];
                describe(slot.pending.kind, slot.pending.object, slot.pending_site)
            }
            Row::Elided { thread, count } if thread == t => format!("... {count} more steps"),
            _ => String::new(),
        }
    };
    let mut width = vec![10usize; threads];
    for row in rows {
        for (t, w) in width.iter_mut().enumerate() {
            *w = (*w).max(cell(row, t).chars().count().min(MAX_CELL));
        }
    }
    let mut out = format!("interleaving ({} steps", events.len());
    if skipped_rows > 0 {
        let _ = write!(out, "; earliest {skipped_rows} rows omitted");
    }
    out.push_str("):\n");
    for t in 0..threads {
        let _ = writeln!(out, "  T{t} = {}", thread_label(ex, t));
    }
    for (object, text) in &labels {
        let _ = writeln!(out, "  {text} = {}", ex.objects[*object as usize].id);
    }
    let _ = write!(out, "  {:>6} ", "step");
    for (t, w) in width.iter().enumerate() {
        let _ = write!(out, "| {:<w$} ", format!("T{t}"));
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    for row in rows {
        match row {
            Row::Clock(time) => {
                let _ = writeln!(out, "  {:>6} | virtual clock moves to {time:?}", "time");
                continue;
            }
            Row::Step(i) => {
                let _ = write!(out, "  {:>6} ", i + 1);
            }
            Row::Elided { .. } => out.push_str("         "),
            Row::Pending => {
                let _ = write!(out, "  {:>6} ", "next");
            }
        }
        for (t, w) in width.iter().enumerate() {
            let text: String = cell(row, t).chars().take(MAX_CELL).collect();
            let _ = write!(out, "| {text:<w$} ");
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    if !ex.stale_reads.is_empty() {
        out.push_str("stale reads (weak memory: loads that did not see the latest store):\n");
    }
    for stale in &ex.stale_reads {
        let load = &events[stale.load as usize];
        let store = |step: u64| {
            if step == INITIAL_VALUE {
                "the initial value".to_string()
            } else {
                let e = &events[step as usize];
                format!(
                    "the store of step {} (T{} @{})",
                    step + 1,
                    e.thread,
                    ShortSite(e.site)
                )
            }
        };
        let _ = writeln!(
            out,
            "  step {}: T{} loaded {} @{} and read a stale value: {}, not {}",
            stale.load + 1,
            load.thread,
            label(load.object),
            ShortSite(load.site),
            store(stale.read),
            store(stale.latest),
        );
    }
    out
}
