//! Verdicts on the execution that ran: why it stopped, data races on tracked variables, and
//! atomic-set serializability violations.

pub(crate) mod deadlock;
pub(crate) mod race;
pub(crate) mod serializability;
