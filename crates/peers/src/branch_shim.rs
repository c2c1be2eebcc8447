//! `branch`: the function form of `interleave::branch` for the peers' `rt` modules.
//!
//! The programs wrap the conditions of the branches that matter in `rt::branch(condition)` so
//! that interleave records each outcome for its schedule-sensitive-branch analysis. Neither
//! shuttle nor loom looks for schedule-sensitive branches, so here the call only returns the
//! condition. Interleave's recording is not a scheduling point either, so the peers run the
//! same schedules of the same programs as before the annotations.

/// Returns `condition`; interleave would also record the branch's site and outcome.
pub fn branch(condition: bool) -> bool {
    condition
}
