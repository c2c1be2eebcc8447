//! Seed 000 (Bindal, Bansal, Lal: *Variable and Thread Bounding for Systematic Testing of
//! Multithreaded Programs*), Table 1: the ConTest benchmark programs.

use super::{BugKind, Finding, Program, Variant};

/// The programs of this module, in the order of the paper's Table 1.
pub static PROGRAMS: &[Program] = &[];
