//! Explains why the engine stopped an execution (deadlock, re-locking, the step bound, a
//! replayed schedule that became impossible), after the run, from the state the engine
//! recorded at the stop (`runtime::Stopped`).
//!
//! Precision: the engine reports a deadlock only when no thread can run while the main thread
//! is blocked, or after it returned while other threads are blocked, so every report is a real
//! deadlock of the explored schedule (no false positives); the second kind says so, since std
//! would let such a test return and leave the threads blocked. The explanation names each
//! blocked thread, what it waits for, who holds it (with the site where it was acquired), and
//! the wait-for cycle when the blocking forms one.

use std::fmt::Write;

use crate::analysis::thread_label;
use crate::runtime::object::{Holder, ObjState};
use crate::runtime::op::{OpKind, ShortSite, Site};
use crate::runtime::schedule::END_OF_RECORDING;
use crate::runtime::{Awaited, FailureInfo, Recording, Stop, Stopped};

/// The text of `failure`, a failure of the execution `recording` recorded: the engine's stops
/// put into words.
pub(crate) fn failure_text(recording: &Recording, failure: &FailureInfo) -> String {
    failure.text(&|stopped| explain_stop(&Scene { recording, stopped }))
}

/// A finished execution together with the state it stopped in.
struct Scene<'a> {
    recording: &'a Recording,
    stopped: &'a Stopped,
}

/// Puts the engine's stop into words.
fn explain_stop(ex: &Scene<'_>) -> String {
    match ex.stopped.stop {
        Stop::Deadlock => deadlock(ex),
        Stop::Relock { thread, since } => relock(ex, thread, since),
        Stop::StepBound => step_bound(ex),
        Stop::ScheduleImpossible { chosen } => not_enabled(ex, chosen),
    }
}

/// Thread `t` is blocked trying to take a lock it has held since `since`.
fn relock(ex: &Scene<'_>, t: usize, since: Site) -> String {
    let slot = &ex.stopped.threads[t];
    let op = slot.pending;
    let object = ex.recording.object_name(op.object);
    format!(
        "{} tries to {} {object} at {}, which it already holds since {}: std would deadlock \
         or panic here",
        thread_label(ex.recording, t),
        op.name(),
        ShortSite(slot.pending_site),
        ShortSite(since),
    )
}

/// The thread that thread `t` waits for, if exactly one thread can unblock it.
fn waits_for(ex: &Scene<'_>, t: usize) -> Option<usize> {
    wait_edge(ex, t).map(|edge| edge.thread)
}

/// What a blocked thread waits for: the thread it waits on and, when that thread holds a
/// lock it wants, the lock (object index) and where the holder acquired it.
struct WaitEdge {
    thread: usize,
    lock: Option<(usize, Site)>,
}

fn wait_edge(ex: &Scene<'_>, t: usize) -> Option<WaitEdge> {
    let op = ex.stopped.threads[t].pending;
    let object = op.object as usize;
    let state = ex.stopped.objects.get(object);
    let held = |lock: usize, h: &Holder| WaitEdge {
        thread: h.thread,
        lock: Some((lock, h.site)),
    };
    match (op.kind, state) {
        (OpKind::Lock, Some(ObjState::Mutex { holder })) => holder.map(|h| held(object, &h)),
        (OpKind::ReadLock, Some(ObjState::RwLock { writer: None, .. }))
            if ex.stopped.threads[t].behind_writer.is_some() =>
        {
            ex.stopped.threads[t]
                .behind_writer
                .map(|thread| WaitEdge { thread, lock: None })
        }
        (OpKind::ReadLock | OpKind::WriteLock, Some(ObjState::RwLock { writer, readers })) => {
            writer
                .or_else(|| readers.first().copied())
                .map(|h| held(object, &h))
        }
        (OpKind::Wake, _)
            if !ex.stopped.threads[t].waiting || ex.stopped.threads[t].deadline_passed =>
        {
            match &ex.stopped.objects[op.arg as usize] {
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
fn held_locks(ex: &Scene<'_>, t: usize) -> Vec<String> {
    let mut held = Vec::new();
    for (index, state) in ex.stopped.objects.iter().enumerate() {
        let holders: Vec<(&str, Holder)> = match state {
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
                held.push(format!(
                    "{mode}{} since {}",
                    ex.recording.object_name(index as u32),
                    ShortSite(h.site)
                ));
            }
        }
    }
    held
}

/// Explains why no thread can run.
fn deadlock(ex: &Scene<'_>) -> String {
    let mut out = if ex.stopped.at_end {
        String::from(
            "deadlock while dropping the tasks that were unfinished at the end of the execution: \
             no thread can run (a destructor waits for something nothing left can do)\n",
        )
    } else if ex.stopped.threads.first().is_some_and(|main| main.finished) {
        // std would let the test return with these threads blocked for good; an execution
        // ends only when every thread has, so they are reported.
        String::from(
            "deadlock: the main thread has returned, and no thread left can run, so the threads \
             below can never finish\n",
        )
    } else {
        String::from("deadlock: no thread can run\n")
    };
    let limits = &ex.recording.limits;
    if limits.spurious_wakeups || limits.spurious_park_wakeups {
        out.push_str(
            "  (a spurious wake-up could still end a wait below, but std never promises one, so \
             a program that needs one to go on is deadlocked)\n",
        );
    }
    for t in 0..ex.stopped.threads.len() {
        if ex.stopped.threads[t].finished {
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
            let wants = ShortSite(ex.stopped.threads[t].pending_site);
            match edge.lock {
                Some((lock, since)) => {
                    let _ = writeln!(
                        out,
                        "    thread {t} wants {} at {wants}; thread {} acquired it at {}",
                        ex.recording.object_name(lock as u32),
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

/// Thread `t`'s last step before the park it is blocked in, when that step did something the
/// program can name (an access, a lock): the check after which a hand-written future returned
/// `Pending` (or a thread decided to park), which is where a lost wake-up is decided. `None`
/// when the thread's last step was a park or its start, which says nothing more.
fn step_before_park(recording: &Recording, t: usize) -> Option<String> {
    let index = recording.last_shown_step(t)?;
    let event = &recording.events[index];
    if matches!(event.kind, OpKind::Park | OpKind::Start | OpKind::Poll) {
        return None;
    }
    let mut step = recording.step_operation(index);
    if recording.object(event.object).is_some() {
        let _ = write!(step, " {}", recording.object_name(event.object));
    }
    let _ = write!(step, " at {}", ShortSite(event.site));
    Some(step)
}

/// One line: what thread `t` is blocked on and who holds it.
fn blocked_line(ex: &Scene<'_>, t: usize) -> String {
    let slot = &ex.stopped.threads[t];
    let op = slot.pending;
    let object = op.object as usize;
    let state = ex.stopped.objects.get(object);
    // A thread parked in `sync::Notify::wait` is blocked in that wait, not in a park of its own;
    // one at a `Condvar`'s wake-up step is still in `Condvar::wait`, its call in the program.
    let operation = match slot.awaiting[..] {
        [Awaited::Notification { .. }] if op.kind == OpKind::Park => "wait",
        _ if op.kind == OpKind::Wake => "wait",
        _ => op.name(),
    };
    let mut line = format!(
        "{} blocked in {} at {}",
        thread_label(ex.recording, t),
        operation,
        ShortSite(slot.pending_site)
    );
    if ex.recording.object(op.object).is_some() {
        let _ = write!(line, " on {}", ex.recording.object_name(op.object));
    }
    let holder_text =
        |h: &Holder| format!("held by thread {} since {}", h.thread, ShortSite(h.site));
    let detail = match (op.kind, state) {
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
                    if op.kind == OpKind::ReadLock {
                        if readers.iter().any(|r| r.thread == t) {
                            detail.push_str(" (a recursive read: the thread already holds it)");
                        }
                        if let Some(w) = slot.behind_writer {
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
        (OpKind::Wake, _) if slot.waiting && !ex.stopped.threads[t].deadline_passed => {
            "waits for a notification".to_string()
        }
        (OpKind::Wake, _) => match &ex.stopped.objects[op.arg as usize] {
            ObjState::Mutex { holder: Some(h) } => format!(
                "{}; re-acquiring {}, {}",
                if slot.waiting {
                    "timed out"
                } else {
                    "notified"
                },
                ex.recording.object_name(op.arg),
                holder_text(h)
            ),
            _ => "notified".to_string(),
        },
        (OpKind::Join, _) => format!("waits for thread {} to finish", op.arg),
        (OpKind::Park, _) if matches!(slot.awaiting[..], [Awaited::Notification { .. }]) => {
            match slot.awaiting[0] {
                Awaited::Notification { object, .. } => format!(
                    "waits for a notification of {}",
                    ex.recording.object_name(object)
                ),
                _ => unreachable!("matched above"),
            }
        }
        (OpKind::Park, _) if !slot.awaiting.is_empty() => {
            let awaited: Vec<String> = slot
                .awaiting
                .iter()
                .map(|awaited| match *awaited {
                    Awaited::Primitive(what, Some(site)) => {
                        format!("{what} (awaited at {})", ShortSite(site))
                    }
                    Awaited::Primitive(what, None) => what.to_string(),
                    Awaited::Task { thread, site } => format!(
                        "the end of thread {thread}, the task spawned at {}",
                        ShortSite(site)
                    ),
                    Awaited::Notification { object, site } => format!(
                        "a notification of {} (wait at {})",
                        ex.recording.object_name(object),
                        ShortSite(site)
                    ),
                })
                .collect();
            format!(
                "the task waits to be woken: it awaits {}",
                awaited.join(" or ")
            )
        }
        (OpKind::Park, _) => match step_before_park(ex.recording, t) {
            Some(step) => format!("waits to be unparked; it parked after {step}"),
            None => "waits to be unparked".to_string(),
        },
        (OpKind::Sleep, _) => format!(
            "sleeps until {:?} of virtual time (now {:?})",
            slot.deadline, ex.stopped.now
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
fn cycle(ex: &Scene<'_>) -> Option<Vec<usize>> {
    for start in 0..ex.stopped.threads.len() {
        let mut path = vec![start];
        let mut t = start;
        while let Some(next) = waits_for(ex, t) {
            if ex.stopped.threads[next].finished {
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
fn step_bound(ex: &Scene<'_>) -> String {
    let mut out = if ex.stopped.at_end {
        format!(
            "the execution exceeded the step bound of {} steps while it was dropping the tasks \
             that were unfinished at the end of the execution: a destructor that spins, waits \
             by yielding for what never comes, or keeps spawning tasks\n",
            ex.recording.limits.max_steps
        )
    } else {
        format!(
            "the execution exceeded the step bound of {} steps: a livelock or an unbounded spin \
             loop\n",
            ex.recording.limits.max_steps
        )
    };
    for t in 0..ex.stopped.threads.len() {
        let slot = &ex.stopped.threads[t];
        if slot.finished {
            continue;
        }
        let _ = writeln!(
            out,
            "  {} is at {} ({}), {} yields so far",
            thread_label(ex.recording, t),
            ShortSite(slot.pending_site),
            slot.pending.name(),
            slot.yields
        );
    }
    let unfinished = || ex.stopped.threads.iter().filter(|slot| !slot.finished);
    if !ex.stopped.at_end && ex.stopped.threads[0].finished {
        // The advice below is for a thread that waits for another; these are past the test.
        out.push_str(
            "  the main thread has returned, and the threads above still run: under std the \
             process would end with them, but an execution ends only when every thread has, so \
             a thread that never stops (a background loop never joined) runs into the step \
             bound; give it a way to stop and join it before the test returns\n",
        );
    }
    if !ex.stopped.at_end && unfinished().all(|slot| slot.yields == 0) {
        // std's spin hint and yield are no scheduling points, so a loop that waits with them
        // counts no yield: the likeliest cause, said before the general advice.
        out.push_str(
            "  no thread has yielded: a wait loop that calls std::hint::spin_loop() or \
             std::thread::yield_now() yields nothing interleave sees; use \
             interleave::hint::spin_loop() or interleave::thread::yield_now() there\n",
        );
    }
    if !ex.stopped.at_end && !ex.recording.spurious_failures.is_empty() {
        // A weak exchange that failed spuriously is the likeliest cause when there was one:
        // code that takes its failure as proof that another thread changed the value, with no
        // retry loop, may leave every thread waiting for a store that nobody makes.
        let steps: Vec<String> = ex
            .recording
            .spurious_failures
            .iter()
            .map(|step| (step + 1).to_string())
            .collect();
        let _ = writeln!(
            out,
            "  a compare_exchange_weak failed spuriously (step {}, listed below), as std allows: \
             code that takes a weak exchange's failure as proof that another thread changed the \
             value, outside a retry loop, can leave the threads waiting for a store nobody \
             makes; retry the weak exchange in a loop, or use compare_exchange",
            steps.join(", ")
        );
    }
    let most_yields = unfinished().map(|slot| slot.yields).max().unwrap_or(0);
    if !ex.stopped.at_end && !ex.stopped.threads[0].finished && most_yields >= MANY_YIELDS {
        // A loop that yields this often is no loop the strategies favour: advice to yield
        // would not apply.
        let _ = write!(
            out,
            "  a thread has yielded {most_yields} times: its loop yields, and what it waits \
             for did not come in this schedule: another thread that should act is blocked or \
             finished (joining the spinner, say: a deadlock through a spin), an update it waits \
             for was lost, or the threads keep losing a race to each other (a spin lock taken \
             again and again in a loop), which a search with a bound on preemptions \
             (dfs:c=2, dpor:c=2) leaves out; if the program really needs more steps, raise \
             Builder::max_steps or INTERLEAVE_MAX_STEPS"
        );
        return out;
    }
    out.push_str(
        "  a thread that waits in a loop for another thread should call \
         interleave::thread::yield_now() (or interleave::hint::spin_loop()) in the loop, and a \
         task interleave::future::yield_now().await, so strategies stop favouring it; if the \
         program really needs more steps, raise Builder::max_steps or INTERLEAVE_MAX_STEPS",
    );
    out
}

/// The yields after which a thread at the step bound counts as one whose loop yields: a
/// strategy's yield rule lets the others run at each, so such a loop spins because what it
/// waits for does not come, not because it is favoured.
const MANY_YIELDS: u32 = 100;

/// Explains why the schedule's choice cannot run (a replay that diverged from its program).
/// Steps are numbered from 1, as in the interleaving.
fn not_enabled(ex: &Scene<'_>, chosen: usize) -> String {
    let steps = ex.stopped.steps;
    let step = steps + 1;
    let what = if chosen == END_OF_RECORDING {
        // The marker is no thread: say what the program still wanted to do instead.
        let going_on: Vec<String> = (0..ex.stopped.threads.len())
            .filter(|&t| !ex.stopped.threads[t].finished)
            .map(|t| {
                let slot = &ex.stopped.threads[t];
                format!(
                    "{} is at {} ({})",
                    thread_label(ex.recording, t),
                    ShortSite(slot.pending_site),
                    slot.pending.name()
                )
            })
            .collect();
        format!(
            "the recorded schedule ended after {steps} steps, but the program went on at \
             step {step}: {}",
            going_on.join("; ")
        )
    } else {
        let (who, why) = if chosen >= ex.stopped.threads.len() {
            (
                format!("thread {chosen}"),
                format!(
                    "thread {chosen} does not exist (the program created {} by then)",
                    plural(ex.stopped.threads.len(), "thread")
                ),
            )
        } else if ex.stopped.threads[chosen].finished {
            let label = thread_label(ex.recording, chosen);
            (label.clone(), format!("{label} has already finished"))
        } else {
            (thread_label(ex.recording, chosen), blocked_line(ex, chosen))
        };
        format!("the schedule became impossible at step {step}: it runs {who} next, but {why}")
    };
    format!(
        "{what}. The program no longer performs the operations recorded in the schedule (it \
         changed since the schedule was recorded, or it depends on something the scheduler \
         does not control: std::sync primitives, HashMap iteration order (iterate a BTreeMap \
         or a Vec instead), the clock, real I/O)"
    )
}

/// `count` and `noun`, with an `s` unless the count is one.
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
