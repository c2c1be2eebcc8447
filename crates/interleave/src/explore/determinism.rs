//! The determinism check: an execution re-run under its own schedule must do the same
//! operations and end the same way; otherwise the program depends on something the scheduler
//! does not control.

use super::*;

/// A step as the determinism check's message names it: its thread, its operation, and its
/// object by the one name the report's interleaving gives it (`Mutex1`, with where it was
/// created, since the second run may have named its objects in another order).
pub(super) fn describe_event(ex: &Recording, event: &Event) -> String {
    let mut text = format!("thread {} {}", event.thread, event.kind.name());
    if let Some(object) = ex.object(event.object) {
        text.push_str(&format!(
            " {} (created at {})",
            ex.object_name(event.object),
            ShortSite(object.site)
        ));
    }
    format!("{text} at {}", ShortSite(event.site))
}

/// Re-runs `first`'s schedule and describes the first difference, if any.
pub(super) fn rerun_difference(run: &Run<'_>, first: &Recording) -> Option<String> {
    let schedule = ReplaySchedule::new(
        first.events.iter().map(|e| e.thread).collect(),
        first.values.clone(),
    );
    let second = runtime::run_stoppable(
        run.f,
        run.site,
        Box::new(schedule),
        run.limits,
        run.stop.as_ref(),
    );
    // A re-run cut short by a stop says nothing about the program.
    if second.stopped {
        return None;
    }
    let kind = |ex: &Recording| ex.failure.as_ref().map(|f| f.kind);
    let differing = first
        .events
        .iter()
        .zip(&second.events)
        .position(|(a, b)| first.step_identity(a) != second.step_identity(b));
    let difference = match differing {
        Some(step) => Some(format!(
            "at step {}, the first run did `{}` and the second did `{}`",
            step + 1,
            describe_event(first, &first.events[step]),
            describe_event(&second, &second.events[step]),
        )),
        None if first.events.len() != second.events.len() => Some(format!(
            "the first run took {} steps and the second {}",
            first.events.len(),
            second.events.len()
        )),
        None if first.value_steps != second.value_steps => {
            let longer = first.value_steps.len().max(second.value_steps.len());
            let index = (0..longer)
                .find(|&i| first.value_steps.get(i) != second.value_steps.get(i))
                .unwrap_or_default();
            let when = |steps: &[u64]| {
                steps
                    .get(index)
                    .map_or("never".to_string(), |step| format!("after step {step}"))
            };
            Some(format!(
                "the first run drew its random value #{} {} and the second {} (interleave::rand \
                 and the choices the runtime records are made at the same points of a \
                 deterministic program)",
                index + 1,
                when(&first.value_steps),
                when(&second.value_steps),
            ))
        }
        None if kind(first) != kind(&second) => Some(format!(
            "the first run ended with {} and the second with {}",
            kind(first).map_or("success".to_string(), |k| k.to_string()),
            kind(&second).map_or("success".to_string(), |k| k.to_string()),
        )),
        None => None,
    };
    // What the second run failed with is often the clue (an assertion on a counter kept in a
    // std static), so it is shown unless the first run failed the same way.
    let text = |ex: &Recording| ex.failure.as_ref().map(|f| (f.kind, failure_text(ex, f)));
    let second_failure = text(&second)
        .filter(|f| text(first).as_ref() != Some(f))
        .map(|(kind, text)| format!("\nThe second run failed with {kind}: {text}"))
        .unwrap_or_default();
    // An object that outlives executions starts the re-run with what the first run left in
    // it: the usual cause, and the one with a fix to name.
    let kept = first
        .objects
        .iter()
        .chain(&second.objects)
        .find(|object| object.outlived)
        .map(|object| {
            format!(
                "\nThe {} created at {} is used by more than one execution: it lives in a \
                 `static` (or was leaked), so each execution starts with what the one before \
                 left in it (a `LazyLock` made once, a pointer stored, a count). Give each \
                 execution its own with `interleave::lazy_static!`.",
                object.name,
                ShortSite(object.id.site)
            )
        })
        .unwrap_or_default();
    difference.map(|difference| {
        format!(
            "the program behaved differently when re-run under the same schedule: \
             {difference}.{second_failure}{kept}\n\
             It depends on something interleave does not control: std::sync or std::thread used \
             directly, HashMap/HashSet iteration order (RandomState: iterate a BTreeMap, a Vec, \
             or a HashMap built with a fixed hasher such as \
             `BuildHasherDefault<DefaultHasher>` instead), memory addresses (comparing or \
             hashing pointers, as when two locks are taken in address order), the clock, \
             randomness outside interleave::rand, or state kept in statics between executions. \
             interleave re-runs executions 0, 1, 2, 4, 8, ... and every failing one to check \
             this; a test that depends on one of these on purpose (a std static counting runs, \
             locks ordered by address) can turn the check off with \
             `Builder::check_determinism(false)`, and its replay tokens may then not reproduce \
             what they recorded; `dfs` and `dpor` replay the start of each schedule, so they \
             need the program to be deterministic even then."
        )
    })
}
