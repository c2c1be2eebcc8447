//! The determinism check: an execution re-run under its own schedule must do the same
//! operations and end the same way; otherwise the program depends on something the scheduler
//! does not control.

use super::*;

pub(super) fn describe_event(ex: &Execution, event: &Event) -> String {
    let mut text = format!("thread {} {}", event.thread, event.kind.name());
    if let Some(object) = ex.objects.get(event.object as usize) {
        text.push_str(&format!(" {}", object.id));
    }
    format!("{text} at {}", ShortSite(event.site))
}

/// Re-runs `first`'s schedule and describes the first difference, if any.
pub(super) fn rerun_difference(run: &Run<'_>, first: &Execution) -> Option<String> {
    let schedule = ReplaySchedule::new(
        first.events.iter().map(|e| e.thread).collect(),
        first.values.clone(),
    );
    let second = runtime::run(run.f, run.site, Box::new(schedule), run.limits);
    let kind = |ex: &Execution| ex.failure.as_ref().map(|f| f.kind);
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
        None if kind(first) != kind(&second) => Some(format!(
            "the first run ended with {} and the second with {}",
            kind(first).map_or("success".to_string(), |k| k.to_string()),
            kind(&second).map_or("success".to_string(), |k| k.to_string()),
        )),
        None => None,
    };
    // What the second run failed with is often the clue (an assertion on a counter kept in a
    // std static), so it is shown unless the first run failed the same way.
    let second_failure = second
        .failure
        .as_ref()
        .filter(|f| first.failure.as_ref().map(|g| &g.message) != Some(&f.message))
        .map(|f| format!("\nThe second run failed with {}: {}", f.kind, f.message))
        .unwrap_or_default();
    second.recycle();
    difference.map(|difference| {
        format!(
            "the program behaved differently when re-run under the same schedule: \
             {difference}.{second_failure}\n\
             It depends on something interleave does not control: std::sync or std::thread used \
             directly, HashMap/HashSet iteration order (RandomState), the clock, randomness \
             outside interleave::rand, or state kept in statics between executions. \
             interleave re-runs executions 0, 1, 2, 4, 8, ... and every failing one to check \
             this; a test that deliberately keeps state across executions (a std static counting \
             runs) can turn the check off with `Builder::check_determinism(false)`."
        )
    })
}
