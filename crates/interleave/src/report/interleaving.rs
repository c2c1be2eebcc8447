//! Renders an execution's steps as per-thread columns of (operation, object, site).
//!
//! Every object goes by the one name the whole report uses (`Recording::object_name`, as
//! `Mutex2`), and a legend says where each was created. A step on the internal state lock of a
//! primitive built on one (the async primitives) shows as the user operation the primitive
//! named (`lock AsyncMutex1`); the lock's release right after is not a row, so one user
//! operation is one row.
//!
//! Long executions are shortened to what usually matters: the last [`MAX_ROWS`] rows, with long
//! runs of one thread collapsed to their first and last steps. The steps a failure is about are
//! never left out: the failing thread's last step, the steps the failure names (both accesses
//! of a data race), the acquisitions of the locks that unfinished threads still hold (a
//! deadlock's), and the loads that read a stale value. `Config::full_interleaving` prints every
//! step. A row marks each move of the virtual clock, before the step that came next. Loads that
//! read a stale value under the weak memory model are listed after the table with the store
//! they read and the one they missed.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::analysis::online::race::unordered_sides;
use crate::analysis::stops::plural;
use crate::analysis::thread_label;
use crate::config::ENV_FULL_REPORT;
use crate::runtime::memory::{StaleRead, INITIAL_VALUE};
use crate::runtime::op::{ObjIdx, ObjectKind, OpKind, ShortSite, Site, FAILED_EXCHANGE, NO_OBJECT};

use crate::runtime::{Awaited, ChannelStep, FailureKind, Handover, Recording};

/// Rows kept from the end of a long interleaving (rows of steps the failure is about come on
/// top).
const MAX_ROWS: usize = 48;
/// Cells longer than this have the path of their site cut from the left.
const MAX_CELL: usize = 64;
/// Runs of one thread longer than this are collapsed.
const RUN_KEEP: usize = 2;
/// An interleaving of at most this many steps is shown whole: collapsing its runs saves a few
/// rows and can hide a step the report's explanation names.
const SHOWN_WHOLE: usize = 24;
/// What a cut path starts with.
const ELLIPSIS: char = '…';

enum Row {
    Step(usize),
    /// The virtual clock moved to this time before the next step.
    Clock(std::time::Duration),
    /// Steps of one thread's run left out of the middle of the run.
    Elided {
        thread: usize,
        count: usize,
    },
    /// Steps of every thread left out before the rows that follow.
    Omitted {
        steps: usize,
    },
    /// What every unfinished thread was about to do when the execution stopped.
    Pending,
}

/// The interleaving of the execution `ex` recorded, as the report prints it.
pub(crate) fn render(ex: &Recording) -> String {
    render_keeping(ex, &[])
}

/// [`render`], never leaving out the steps `also_kept` (the accesses of an atomicity
/// violation).
pub(crate) fn render_keeping(ex: &Recording, also_kept: &[usize]) -> String {
    let events = &ex.events;
    let full = ex.limits.full_interleaving;
    let mut kept = kept_steps(ex);
    kept.extend(also_kept.iter().copied());
    let shown: Vec<usize> = (0..events.len())
        .filter(|&step| !ex.is_folded(step))
        .collect();
    let mut rows = Vec::new();
    let mut advances = ex.clock_advances.iter().peekable();
    let mut start = 0;
    while start < shown.len() {
        while let Some(&(_, time)) = advances.next_if(|(step, _)| *step <= shown[start]) {
            rows.push(Row::Clock(time));
        }
        // A run of one thread ends where the clock moves, so the move shows where it happened.
        let run_end = advances.peek().map_or(usize::MAX, |(step, _)| *step);
        let thread = events[shown[start]].thread;
        let mut end = start;
        while end < shown.len() && shown[end] < run_end && events[shown[end]].thread == thread {
            end += 1;
        }
        let run = &shown[start..end];
        let mut left_out = 0;
        for (position, &step) in run.iter().enumerate() {
            let show = full
                || shown.len() <= SHOWN_WHOLE
                || run.len() <= 2 * RUN_KEEP + 1
                || position < RUN_KEEP
                || position >= run.len() - RUN_KEEP
                || kept.contains(&step);
            if show {
                if left_out > 0 {
                    rows.push(Row::Elided {
                        thread: thread as usize,
                        count: left_out,
                    });
                    left_out = 0;
                }
                rows.push(Row::Step(step));
            } else {
                left_out += 1;
            }
        }
        start = end;
    }
    // The clock can move and still leave every thread blocked (a timed-out waiter whose mutex
    // a deadlocked thread holds): that move ends the interleaving.
    rows.extend(advances.map(|&(_, time)| Row::Clock(time)));
    if !full {
        rows = keep_last_rows(rows, &kept);
    }
    // A data race is found in the access the racing thread's last step made, and the execution
    // stops before that thread announces anything else: its pending operation is that step,
    // which the next row would show a second time. A thread whose panic is the failure and that
    // has not finished is unwinding (the report printed just before an abort, or a stack left
    // mid-unwind): its pending operation is its last step too, and it has no next one.
    let performed_last = match ex.failure.as_ref() {
        Some(failure) if failure.kind == FailureKind::DataRace => {
            events.last().map(|e| e.thread as usize)
        }
        Some(failure) if failure.kind == FailureKind::Panic => failure.thread,
        _ => None,
    };
    let waits_next = |t: usize| !ex.threads[t].finished && Some(t) != performed_last;
    if (0..ex.threads.len()).any(waits_next) {
        rows.push(Row::Pending);
    }
    let rows = &rows[..];

    let row_objects = |row: &Row| -> Vec<ObjIdx> {
        match row {
            Row::Step(i) => vec![events[*i].object],
            Row::Pending => (0..ex.threads.len())
                .filter(|&t| waits_next(t))
                .map(|t| ex.threads[t].pending.object)
                .collect(),
            Row::Elided { .. } | Row::Omitted { .. } | Row::Clock(_) => Vec::new(),
        }
    };
    let mut legend: BTreeSet<ObjIdx> = rows
        .iter()
        .flat_map(row_objects)
        .filter(|&object| object != NO_OBJECT)
        .collect();
    for stale in &ex.stale_reads {
        legend.insert(events[stale.load as usize].object);
    }
    for &step in &ex.spurious_failures {
        legend.insert(events[step as usize].object);
    }
    let names: Vec<(ObjIdx, String)> = legend
        .iter()
        .map(|&object| (object, ex.object_name(object)))
        .collect();
    let name = |object: ObjIdx| -> String {
        names
            .iter()
            .find(|(o, _)| *o == object)
            .map_or_else(|| ex.object_name(object), |(_, name)| name.clone())
    };
    let threads = ex.threads.len();
    let describe = |operation: &str, object: ObjIdx, site: Site| {
        let mut text = operation.to_string();
        if object != NO_OBJECT {
            let _ = write!(text, " {}", name(object));
        }
        text.push_str(" @");
        fit_site(text, site)
    };
    let cell = |row: &Row, t: usize| -> String {
        match *row {
            Row::Step(i) if events[i].thread as usize == t => {
                let e = &events[i];
                match channel_operation(ex, i) {
                    Some((drop, false)) => format!("{drop} {}", name(e.object)),
                    Some((operation, true)) => describe(operation, e.object, e.site),
                    None => describe(&ex.step_operation(i), e.object, e.site),
                }
            }
            Row::Pending if waits_next(t) => {
                let slot = &ex.threads[t];
                if let Some(notify) = waits_for_notification(ex, t) {
                    return describe("wait (waits)", notify, slot.pending_site);
                }
                let operation = if ex.is_internal(slot.pending.object) {
                    "poll"
                } else {
                    slot.pending.name()
                };
                describe(operation, slot.pending.object, slot.pending_site)
            }
            Row::Elided { thread, count } if thread == t => {
                format!("... {}", plural(count, "more step"))
            }
            _ => String::new(),
        }
    };
    let mut width = vec![10usize; threads];
    for row in rows {
        for (t, w) in width.iter_mut().enumerate() {
            *w = (*w).max(cell(row, t).chars().count());
        }
    }
    let not_shown: usize = rows
        .iter()
        .map(|row| match *row {
            Row::Elided { count, .. } => count,
            Row::Omitted { steps } => steps,
            _ => 0,
        })
        .sum();
    let mut out = format!("interleaving ({}", plural(events.len(), "step"));
    if not_shown > 0 {
        let _ = write!(
            out,
            "; {} not shown: Builder::full_interleaving(true) or {ENV_FULL_REPORT}=1 shows \
             every step",
            plural(not_shown, "step")
        );
    }
    out.push_str("):\n");
    for t in 0..threads {
        let _ = writeln!(out, "  T{t} = {}", thread_label(ex, t));
    }
    for (object, name) in &names {
        let _ = writeln!(out, "  {name} = {}", ex.object_origin(*object));
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
            Row::Omitted { steps } => {
                let _ = writeln!(
                    out,
                    "  {:>6} | ... {} of every thread",
                    "",
                    plural(*steps, "step")
                );
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
            let _ = write!(out, "| {:<w$} ", cell(row, t));
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
            name(load.object),
            ShortSite(load.site),
            store(stale.read),
            store(stale.latest),
        );
        if let Some(reason) = stale_read_reason(ex, stale) {
            let _ = writeln!(out, "    {reason}");
        }
    }
    if !ex.spurious_failures.is_empty() {
        out.push_str(
            "spurious failures (compare_exchange_weak failed although the atomic held the \
             expected value, as std allows; Builder::spurious_cas_failures(false) turns them \
             off):\n",
        );
    }
    for &step in &ex.spurious_failures {
        let exchange = &events[step as usize];
        let _ = writeln!(
            out,
            "  step {}: T{} on {} @{}",
            step + 1,
            exchange.thread,
            name(exchange.object),
            ShortSite(exchange.site),
        );
    }
    out
}

/// The `sync::Notify` or `Condvar` that thread `t` was waiting for a notification of when the
/// engine stopped the execution, if it was: the row shows that wait, not the park or the wake
/// it is made of.
fn waits_for_notification(ex: &Recording, t: usize) -> Option<ObjIdx> {
    let stopped = ex.failure.as_ref()?.stopped.as_ref()?;
    let thread = stopped.threads.get(t)?;
    // A `Condvar` waiter not yet notified: its pending step is the wake that never came,
    // which, shown as `wake`, read as if the thread were about to wake.
    if thread.pending.kind == OpKind::Wake && thread.waiting {
        return Some(thread.pending.object);
    }
    match thread.awaiting[..] {
        [Awaited::Notification { object, .. }] if thread.pending.kind == OpKind::Park => {
            Some(object)
        }
        _ => None,
    }
}

/// What step `step` did when it is one of a channel's steps that are not a blocking send or
/// receive (recorded as polls), and whether its recorded site is its own: a `try_send` or a
/// `try_recv` at the caller's line, or the drop of the last sender or of the receiver, whose
/// site is the channel's (a drop has none of its own), which the legend gives; `None` for
/// every other step.
fn channel_operation(ex: &Recording, step: usize) -> Option<(&'static str, bool)> {
    let event = &ex.events[step];
    if event.kind != OpKind::Poll || ex.object(event.object)?.kind != ObjectKind::Channel {
        return None;
    }
    Some(match ChannelStep::decode(event.arg) {
        Some(ChannelStep::Received { .. } | ChannelStep::FoundNone { .. }) => ("try_recv", true),
        Some(ChannelStep::SenderDropped) => ("drop sender", false),
        Some(ChannelStep::ReceiverDropped) => ("drop receiver", false),
        // A message sent or offered, or a `try_send` that found the channel full or
        // disconnected, which the channel does not describe.
        Some(ChannelStep::Sent { .. } | ChannelStep::Offered { .. }) | None => ("try_send", true),
    })
}

/// For a stale read, the reader's latest atomic load (or read-modify-write) after the missed
/// store that read a later store of the missed store's thread, as `(load, store)`: the handover
/// that looked as if it made the missed store visible. `None` when the reader read nothing that
/// thread stored after it.
fn stale_read_handover(ex: &Recording, stale: &StaleRead) -> Option<(u64, u64)> {
    let events = &ex.events;
    let missed = stale.latest;
    let writer = events.get(missed as usize)?.thread;
    let reader = events.get(stale.load as usize)?.thread;
    (missed + 1..stale.load).rev().find_map(|load| {
        let event = &events[load as usize];
        let reads = matches!(event.kind, OpKind::AtomicLoad | OpKind::AtomicRmw);
        if event.thread != reader || !reads {
            return None;
        }
        let store = store_read_by(ex, load)?;
        (events[store as usize].thread == writer && store > missed).then_some((load, store))
    })
}

/// The store the atomic access at step `load` read: the one its stale-read entry names, or
/// else the latest store to its object before it (a read-modify-write that wrote, or a
/// store); `None` for the initial value.
fn store_read_by(ex: &Recording, load: u64) -> Option<u64> {
    if let Some(stale) = ex.stale_reads.iter().find(|stale| stale.load == load) {
        return (stale.read != INITIAL_VALUE).then_some(stale.read);
    }
    let object = ex.events[load as usize].object;
    (0..load).rev().find(|&step| {
        let event = &ex.events[step as usize];
        event.object == object
            && (event.kind == OpKind::AtomicStore
                || (event.kind == OpKind::AtomicRmw && event.arg & FAILED_EXCHANGE == 0))
    })
}

/// Why a stale read could miss the store it missed: the handover that did not make the store
/// visible, and which of its sides lacks an ordering (a fence of the right kind on that side
/// would do), or that the reader read nothing the store's thread stored after it.
fn stale_read_reason(ex: &Recording, stale: &StaleRead) -> Option<String> {
    let events = &ex.events;
    let missed = events.get(stale.latest as usize)?;
    let reader = events.get(stale.load as usize)?.thread;
    let Some((load, store)) = stale_read_handover(ex, stale) else {
        return Some(format!(
            "why: T{reader} read nothing T{} stored after step {}, so nothing made that store \
             visible to it",
            missed.thread,
            stale.latest + 1
        ));
    };
    let handover = Handover::of(events, stale.latest, store, load, stale.load);
    if handover.releases && handover.acquires {
        return None;
    }
    let why = unordered_sides(&handover, "missed store", "stale load");
    Some(format!(
        "why: step {} read the store of step {}, made after the missed one, but {why}",
        load + 1,
        store + 1
    ))
}

/// The steps a shortened interleaving still shows: the failing thread's last step, the steps
/// the failure names, the acquisitions of the locks that unfinished threads hold when the
/// engine stopped the execution (a deadlock's, a livelock's), the loads that read a stale
/// value with the stores their lines name, and the weak exchanges that failed spuriously.
fn kept_steps(ex: &Recording) -> BTreeSet<usize> {
    let events = &ex.events;
    let mut kept: BTreeSet<usize> = ex.failure_steps.iter().map(|&s| s as usize).collect();
    kept.extend(
        ex.stale_reads
            .iter()
            .flat_map(|stale| {
                let (load, store) = stale_read_handover(ex, stale).unzip();
                [stale.load, stale.read, stale.latest]
                    .into_iter()
                    .chain(load)
                    .chain(store)
            })
            .filter(|&step| step != INITIAL_VALUE)
            .map(|step| step as usize),
    );
    kept.extend(ex.spurious_failures.iter().map(|&step| step as usize));
    let Some(failure) = &ex.failure else {
        return kept;
    };
    if let Some(thread) = failure.thread {
        kept.extend(ex.last_shown_step(thread));
    }
    if failure.stopped.is_some() {
        // (thread, lock, step that acquired it), in the order the locks were taken.
        let mut held: Vec<(u32, ObjIdx, usize)> = Vec::new();
        for (step, event) in events.iter().enumerate() {
            let (thread, object) = (event.thread, event.object);
            let release = |held: &mut Vec<(u32, ObjIdx, usize)>, lock: Option<ObjIdx>| {
                let found = held
                    .iter()
                    .rposition(|&(t, o, _)| t == thread && lock.is_none_or(|lock| lock == o));
                if let Some(position) = found {
                    held.remove(position);
                }
            };
            match event.kind {
                OpKind::Lock | OpKind::ReadLock | OpKind::WriteLock => {
                    held.push((thread, object, step));
                }
                OpKind::Wake => held.push((thread, event.arg, step)),
                OpKind::Unlock | OpKind::RwUnlock => release(&mut held, Some(object)),
                // The event names the condition variable, not the mutex it releases: that is
                // the lock its thread took last.
                OpKind::Wait => release(&mut held, None),
                _ => {}
            }
        }
        kept.extend(
            held.iter()
                .filter(|&&(thread, _, _)| !ex.threads[thread as usize].finished)
                .map(|&(_, _, step)| step),
        );
    }
    kept
}

/// The last [`MAX_ROWS`] rows, and before them the rows of kept steps, with a row saying how
/// many steps were left out in between.
fn keep_last_rows(rows: Vec<Row>, kept: &BTreeSet<usize>) -> Vec<Row> {
    let cut = rows.len().saturating_sub(MAX_ROWS);
    let mut out = Vec::with_capacity(rows.len().min(MAX_ROWS * 2));
    let mut left_out = 0;
    for (index, row) in rows.into_iter().enumerate() {
        let show = index >= cut || matches!(row, Row::Step(step) if kept.contains(&step));
        if show {
            if left_out > 0 {
                out.push(Row::Omitted { steps: left_out });
                left_out = 0;
            }
            out.push(row);
        } else {
            left_out += match row {
                Row::Step(_) => 1,
                Row::Elided { count, .. } => count,
                Row::Omitted { steps } => steps,
                Row::Clock(_) | Row::Pending => 0,
            };
        }
    }
    out
}

/// `text` followed by `site`, with the site's path cut from the left (`…ts/file.rs:28:20`) if
/// the whole would be longer than [`MAX_CELL`], so line and column always show. A cell whose
/// text leaves too little room is widened instead.
fn fit_site(mut text: String, site: Site) -> String {
    let site = ShortSite(site).to_string();
    let room = MAX_CELL.saturating_sub(text.chars().count());
    let (line, column) = site_line(&site);
    // Room for the line and column and a few characters of the file name, or no cut at all.
    let least = line.len() + column.len() + 10;
    let site_chars = site.chars().count();
    if site_chars <= room || room < least {
        text.push_str(&site);
    } else {
        text.push(ELLIPSIS);
        let skip = site_chars - (room - 1);
        text.extend(site.chars().skip(skip));
    }
    text
}

/// The line and column at the end of a `file:line:column` site.
fn site_line(site: &str) -> (&str, &str) {
    let mut parts = site.rsplitn(3, ':');
    let column = parts.next().unwrap_or("");
    let line = parts.next().unwrap_or("");
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn here() -> Site {
        std::panic::Location::caller()
    }

    #[test]
    fn a_long_site_loses_the_start_of_its_path_not_its_line_and_column() {
        let site = here();
        let whole = ShortSite(site).to_string();
        let text = fit_site("x".repeat(MAX_CELL - 20), site);
        assert_eq!(text.chars().count(), MAX_CELL, "{text}");
        assert!(text.contains(ELLIPSIS), "{text}");
        let (line, column) = site_line(&whole);
        assert!(text.ends_with(&format!(":{line}:{column}")), "{text}");
        assert_eq!(fit_site("lock".to_string(), site), format!("lock{whole}"));
    }
}
