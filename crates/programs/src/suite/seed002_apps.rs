//! Seed 002 (Jun Chen, thesis: *Guided Testing of Concurrent Programs Using Value Schedules*),
//! Table 3.2: the real (R) and benchmark (B) programs.

use super::{BugKind, Finding, Program, Variant};

/// The programs of this module, in the order of the thesis's Table 3.2.
pub static PROGRAMS: &[Program] = &[];
