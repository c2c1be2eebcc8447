//! Verdicts on the execution while it runs: data races on tracked variables, and atomic-set
//! serializability violations.

pub(crate) mod race;
pub(crate) mod serializability;
