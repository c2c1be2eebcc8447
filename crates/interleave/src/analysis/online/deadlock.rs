//! Deadlock, re-locking and step-bound detection.
//!
//! Precision: a deadlock is reported only when no thread can run while the main thread is
//! blocked, so every report is a real deadlock of the explored schedule (no false positives).
//! The report names each blocked thread, what it waits for, who holds it (with the site where
//! it was acquired), and the wait-for cycle when the blocking forms one.

use std::fmt::Write;

use crate::analysis::thread_label;
use crate::runtime::object::{Holder, ObjState};
use crate::runtime::op::{OpKind, ShortSite, Site};
use crate::runtime::schedule::END_OF_RECORDING;
use crate::runtime::{Awaited, Execution, Stop};

/// Puts the engine's stop into words.
pub(crate) fn narrate(ex: &Execution, stop: Stop) -> String {
    match stop {
        Stop::Deadlock => explain(ex),
        Stop::Relock { thread, since } => relock(ex, thread, since),
        Stop::StepBound => step_bound(ex),
        Stop::ScheduleImpossible { chosen } => not_enabled(ex, chosen),
    }
}

/// Thread `t` is blocked trying to take a lock it has held since `since`.
fn relock(ex: &Execution, t: usize, since: Site) -> String {
    let slot = &ex.threads[t];
    let op = slot.pending;
    let object = ex.objects[op.object as usize].id;
    format!(
        "{} tries to {} {object} at {}, which it already holds since {}: std would deadlock \
         or panic here",
        thread_label(ex, t),
        op.kind.name(),
        ShortSite(slot.pending_site),
        ShortSite(since),
    )
}

/// The thread that thread `t` waits for, if exactly one thread can unblock it.
fn waits_for(ex: &Execution, t: usize) -> Option<usize> {
    wait_edge(ex, t).map(|edge| edge.thread)
}

/// What a blocked thread waits for: the thread it waits on and, when that thread holds a
/// lock it wants, the lock (object index) and where the holder acquired it.
struct WaitEdge {
    thread: usize,
    lock: Option<(usize, Site)>,
}

fn wait_edge(ex: &Execution, t: usize) -> Option<WaitEdge> {
    let op = ex.threads[t].pending;
    let object = op.object as usize;
    let state = ex.objects.get(object).map(|o| &o.state);
    let held = |lock: usize, h: &Holder| WaitEdge {
        thread: h.thread,
        lock: Some((lock, h.site)),
    };
    match (op.kind, state) {
        (OpKind::Lock, Some(ObjState::Mutex { holder })) => holder.map(|h| held(object, &h)),
        (OpKind::ReadLock, Some(ObjState::RwLock { writer: None, .. }))
            if ex.threads[t].read_defers == Some(true) =>
        {
            ex.writer_waits(op.object, t)
                .map(|thread| WaitEdge { thread, lock: None })
        }
        (OpKind::ReadLock | OpKind::WriteLock, Some(ObjState::RwLock { writer, readers })) => {
            writer
                .or_else(|| readers.first().copied())
                .map(|h| held(object, &h))
        }
        (OpKind::Wake, _) if !ex.threads[t].waiting || ex.deadline_passed(t) => {
            match &ex.objects[op.arg as usize].state {
                ObjState::Mutex { holder } => holder.map(|h| held(op.arg as usize, &h)),
                _ => None,
            }
        }
        (OpKind::Join, _) => Some(WaitEdge {
            thread: op.arg as usize,
            lock: None,
        }),
        (OpKind::OnceEnter, Some(ObjState::Once { runner, .. })) => runner.map(|h| WaitEdge {
            thread: h.thread,
            lock: None,
        }),
        _ => None,
    }
}

/// The locks thread `t` holds, each with where it acquired it.
fn held_locks(ex: &Execution, t: usize) -> Vec<String> {
    let mut held = Vec::new();
    for object in &ex.objects {
        let holders: Vec<(&str, Holder)> = match &object.state {
            ObjState::Mutex { holder: Some(h) } => vec![("", *h)],
            ObjState::RwLock { writer, readers } => writer
                .iter()
                .map(|h| ("write ", *h))
                .chain(readers.iter().map(|h| ("read ", *h)))
                .collect(),
            _ => Vec::new(),
        };
        for (mode, h) in holders {
            if h.thread == t {
                held.push(format!("{mode}{} since {}", object.id, ShortSite(h.site)));
            }
        }
    }
    held
}

/// Explains why no thread can run.
fn explain(ex: &Execution) -> String {
    let mut out = String::from("deadlock: no thread can run\n");
    for t in 0..ex.threads.len() {
        if ex.threads[t].finished {
            continue;
        }
        let _ = writeln!(out, "  {}", blocked_line(ex, t));
    }
    if let Some(cycle) = cycle(ex) {
        let names: Vec<String> = cycle.iter().map(|t| format!("thread {t}")).collect();
        let _ = writeln!(
            out,
            "  wait-for cycle: {} -> thread {}",
            names.join(" -> "),
            cycle[0]
        );
        for &t in &cycle {
            let Some(edge) = wait_edge(ex, t) else {
                continue;
            };
            let wants = ShortSite(ex.threads[t].pending_site);
            match edge.lock {
                Some((lock, since)) => {
                    let _ = writeln!(
                        out,
                        "    thread {t} wants {} at {wants}; thread {} acquired it at {}",
                        ex.objects[lock].id,
                        edge.thread,
                        ShortSite(since)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "    thread {t} waits at {wants} for thread {}",
                        edge.thread
                    );
                }
            }
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// One line: what thread `t` is blocked on and who holds it.
fn blocked_line(ex: &Execution, t: usize) -> String {
    let slot = &ex.threads[t];
    let op = slot.pending;
    let object = ex.objects.get(op.object as usize);
    let mut line = format!(
        "{} blocked in {} at {}",
        thread_label(ex, t),
        op.kind.name(),
        ShortSite(slot.pending_site)
    );
    if let Some(object) = object {
        let _ = write!(line, " on {}", object.id);
    }
    let holder_text =
        |h: &Holder| format!("held by thread {} since {}", h.thread, ShortSite(h.site));
    let detail = match (op.kind, object.map(|o| &o.state)) {
        (OpKind::Lock, Some(ObjState::Mutex { holder: Some(h) })) => holder_text(h),
        (OpKind::ReadLock | OpKind::WriteLock, Some(ObjState::RwLock { writer, readers })) => {
            match writer {
                Some(h) => format!("write-{}", holder_text(h)),
                None => {
                    let holders: Vec<String> = readers
                        .iter()
                        .map(|r| format!("thread {} since {}", r.thread, ShortSite(r.site)))
                        .collect();
                    let mut detail = format!("read-held by {}", holders.join(", "));
                    if op.kind == OpKind::ReadLock && slot.read_defers == Some(true) {
                        if let Some(w) = ex.writer_waits(op.object, t) {
                            let _ = write!(
                                detail,
                                "; waits behind thread {w}, which waits to write it (std \
                                 lets a writer-preferring lock do that)"
                            );
                        }
                    }
                    detail
                }
            }
        }
        (OpKind::Wake, _) if slot.waiting && !ex.deadline_passed(t) => {
            "waits for a notification".to_string()
        }
        (OpKind::Wake, _) => match &ex.objects[op.arg as usize].state {
            ObjState::Mutex { holder: Some(h) } => format!(
                "{}; re-acquiring {}, {}",
                if slot.waiting {
                    "timed out"
                } else {
                    "notified"
                },
                ex.objects[op.arg as usize].id,
                holder_text(h)
            ),
            _ => "notified".to_string(),
        },
        (OpKind::Join, _) => format!("waits for thread {} to finish", op.arg),
        (OpKind::Park, _) if !slot.awaiting.is_empty() => {
            let awaited: Vec<String> = slot
                .awaiting
                .iter()
                .map(|awaited| match *awaited {
                    Awaited::Primitive(what, Some(site)) => {
                        format!("{what} (awaited at {})", ShortSite(site))
                    }
                    Awaited::Primitive(what, None) => what.to_string(),
                    Awaited::Task(site) => {
                        format!("the end of the task spawned at {}", ShortSite(site))
                    }
                })
                .collect();
            format!(
                "the task waits to be woken: it awaits {}",
                awaited.join(" or ")
            )
        }
        (OpKind::Park, _) => "waits to be unparked".to_string(),
        (OpKind::Sleep, _) => format!(
            "sleeps until {:?} of virtual time (now {:?})",
            slot.deadline, ex.now
        ),
        (OpKind::Recv, Some(ObjState::Channel { senders, .. })) => {
            format!("channel is empty and {senders} sender(s) are still alive")
        }
        (OpKind::Send | OpKind::SendWait, Some(ObjState::Channel { .. })) => {
            "channel is full and its receiver is alive".to_string()
        }
        (
            OpKind::BarrierLeave,
            Some(ObjState::Barrier {
                parties, arrived, ..
            }),
        ) => {
            format!("{arrived} of {parties} parties have arrived")
        }
        (
            OpKind::OnceEnter,
            Some(ObjState::Once {
                runner: Some(h), ..
            }),
        ) => {
            format!(
                "initialiser running in thread {} since {}",
                h.thread,
                ShortSite(h.site)
            )
        }
        _ => String::new(),
    };
    if !detail.is_empty() {
        let _ = write!(line, ": {detail}");
    }
    let held = held_locks(ex, t);
    if !held.is_empty() {
        let _ = write!(line, "; holds {}", held.join(", "));
    }
    line
}

/// A cycle in the wait-for graph, as the list of threads in order.
fn cycle(ex: &Execution) -> Option<Vec<usize>> {
    for start in 0..ex.threads.len() {
        let mut path = vec![start];
        let mut t = start;
        while let Some(next) = waits_for(ex, t) {
            if ex.threads[next].finished {
                break;
            }
            if let Some(position) = path.iter().position(|&p| p == next) {
                return Some(path[position..].to_vec());
            }
            path.push(next);
            t = next;
        }
    }
    None
}

/// Explains a step-bound failure: which threads were still running, and what to do.
fn step_bound(ex: &Execution) -> String {
    let mut out = format!(
        "the execution exceeded the step bound of {} steps: a livelock or an unbounded spin loop\n",
        ex.limits.max_steps
    );
    for t in 0..ex.threads.len() {
        let slot = &ex.threads[t];
        if slot.finished {
            continue;
        }
        let _ = writeln!(
            out,
            "  {} is at {} ({}), {} yields so far",
            thread_label(ex, t),
            ShortSite(slot.pending_site),
            slot.pending.kind.name(),
            slot.yields
        );
    }
    out.push_str(
        "  a thread that waits in a loop for another thread should call \
         interleave::thread::yield_now() (or hint::spin_loop()) in the loop, so strategies stop \
         favouring it; if the program really needs more steps, raise Builder::max_steps or \
         INTERLEAVE_MAX_STEPS",
    );
    out
}

/// Explains why the schedule's choice cannot run (a replay that diverged from its program).
/// Steps are numbered from 1, as in the interleaving.
fn not_enabled(ex: &Execution, chosen: usize) -> String {
    let steps = ex.steps();
    let step = steps + 1;
    let what = if chosen == END_OF_RECORDING {
        // The marker is no thread: say what the program still wanted to do instead.
        let going_on: Vec<String> = (0..ex.threads.len())
            .filter(|&t| !ex.threads[t].finished)
            .map(|t| {
                let slot = &ex.threads[t];
                format!(
                    "{} is at {} ({})",
                    thread_label(ex, t),
                    ShortSite(slot.pending_site),
                    slot.pending.kind.name()
                )
            })
            .collect();
        format!(
            "the recorded schedule ended after {steps} steps, but the program went on at \
             step {step}: {}",
            going_on.join("; ")
        )
    } else {
        let (who, why) = if chosen >= ex.threads.len() {
            (
                format!("thread {chosen}"),
                format!(
                    "thread {chosen} does not exist (the program created {} by then)",
                    plural(ex.threads.len(), "thread")
                ),
            )
        } else if ex.threads[chosen].finished {
            let label = thread_label(ex, chosen);
            (label.clone(), format!("{label} has already finished"))
        } else {
            (thread_label(ex, chosen), blocked_line(ex, chosen))
        };
        format!("the schedule became impossible at step {step}: it runs {who} next, but {why}")
    };
    format!(
        "{what}. The program no longer performs the operations recorded in the schedule (it \
         changed, or it depends on something the scheduler does not control: std::sync \
         primitives, HashMap iteration order, the clock, real I/O)"
    )
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
