//! Seed 002's kernel programs twostage, wronglock and reorder with 10, 20, 50 and 100 threads
//! (issue 17), as SCTBench scales them (Thomson, Donaldson, Betts: *Concurrency Testing Using
//! Schedule Bounding: an Empirical Study*, PPoPP 2014; its `CS.reorder_X_bad`,
//! `CS.twostage_X_bad` and `CS.wronglock_X_bad`, from the CHESS test suite, where X counts the
//! threads).
//!
//! The programs are the thesis's, in [`super::seed002_kernel`], with the thread count as a const
//! generic parameter; their doc comments say which thread plays which part and how the bug's
//! window shrinks as threads are added. Each bug still needs one preemption, but every added
//! thread is one more that can close the window, so PCT's chance per execution falls with the
//! thread count and a random walk stops finding the bug at all.
//!
//! The bugs of `valsched-reorder-50` and `valsched-reorder-100` are beyond the priority and walk
//! samplers: none of `pos`, `random`, `pct:d=3`, `pctvb` and `icb:c=2,v=1` found either in
//! 10,000 executions with any of the seeds 0..10, nor `dpor`, `vs`, `delay:d=2`, `pct:d=2` and
//! `tb:t=2,c=1` the 50-thread one in 10,000 executions with seed 0. SURW, which makes the
//! interleavings of a few shared objects' accesses uniform whatever the other threads do, finds
//! both on every seed, and so does `auto`, of which it is a member (measured with seeds 0..10:
//! `auto`'s median 35 and worst 173 at 50 threads, 84 and 353 at 100).
//!
//! The 50- and 100-thread programs are [`Program::long`]: thousands of steps per execution with
//! a hundred-wide vector clock on every synchronising step make them too slow for the runs that
//! go through the whole suite; they run when named (`interleave bench -p valsched-reorder-100`).
//! Loom models at most five threads, so its columns report all of them unsupported.

use super::seed002_kernel::{reorder, twostage, wronglock};
use super::{BugKind, Finding, Program, Variant};

/// What goes wrong in the scaled twostage programs.
const TWOSTAGE_SUMMARY: &str =
    "the reader's two critical sections fall between one writer's two stages before any writer finishes";
/// What goes wrong in the scaled wronglock programs.
const WRONGLOCK_SUMMARY: &str =
    "the incrementing threads hold a different lock from the checking thread, so one of their updates lands inside its window";
/// What goes wrong in the scaled reorder programs.
const REORDER_SUMMARY: &str =
    "among many setters, the checker reads a and b on either side of one setter's writes and sees a mix";

/// A scaled program's entry: every one is an assertion of the thesis's kernel program, and
/// none needs a weak memory model.
const fn scaled(
    name: &'static str,
    origin: &'static str,
    summary: &'static str,
    found_by: Finding,
    long: bool,
    run: fn(Variant),
) -> Program {
    Program {
        name,
        origin,
        bug: BugKind::Assertion,
        summary,
        found_by,
        long,
        needs_weak_memory: false,
        run,
    }
}

/// A strategy and its budget, for the table below.
const fn finding(strategy: &'static str, within: u64) -> Finding {
    Finding { strategy, within }
}

/// The programs of this module: twostage, wronglock and reorder, each with 10, 20, 50 and 100
/// threads.
pub static PROGRAMS: &[Program] = &[
    scaled(
        "valsched-twostage-10",
        "SCTBench CS.twostage_10 (seed 002 kernel: twostage)",
        TWOSTAGE_SUMMARY,
        finding("icb:c=2,v=1", 100),
        false,
        twostage::<10>,
    ),
    scaled(
        "valsched-twostage-20",
        "SCTBench CS.twostage_20 (seed 002 kernel: twostage)",
        TWOSTAGE_SUMMARY,
        finding("icb:c=2,v=1", 200),
        false,
        twostage::<20>,
    ),
    scaled(
        "valsched-twostage-50",
        "SCTBench CS.twostage_50 (seed 002 kernel: twostage)",
        TWOSTAGE_SUMMARY,
        finding("icb:c=2,v=1", 500),
        true,
        twostage::<50>,
    ),
    scaled(
        "valsched-twostage-100",
        "SCTBench CS.twostage_100 (seed 002 kernel: twostage)",
        TWOSTAGE_SUMMARY,
        finding("icb:c=2,v=1", 1000),
        true,
        twostage::<100>,
    ),
    scaled(
        "valsched-wronglock-10",
        "SCTBench CS.wronglock_10 (seed 002 kernel: wronglock)",
        WRONGLOCK_SUMMARY,
        finding("pos", 20),
        false,
        wronglock::<10>,
    ),
    scaled(
        "valsched-wronglock-20",
        "SCTBench CS.wronglock_20 (seed 002 kernel: wronglock)",
        WRONGLOCK_SUMMARY,
        finding("pos", 20),
        false,
        wronglock::<20>,
    ),
    scaled(
        "valsched-wronglock-50",
        "SCTBench CS.wronglock_50 (seed 002 kernel: wronglock)",
        WRONGLOCK_SUMMARY,
        finding("pos", 20),
        true,
        wronglock::<50>,
    ),
    scaled(
        "valsched-wronglock-100",
        "SCTBench CS.wronglock_100 (seed 002 kernel: wronglock)",
        WRONGLOCK_SUMMARY,
        finding("pos", 20),
        true,
        wronglock::<100>,
    ),
    scaled(
        "valsched-reorder-10",
        "SCTBench CS.reorder_10 (seed 002 kernel: reorder)",
        REORDER_SUMMARY,
        finding("pos", 100),
        false,
        reorder::<10>,
    ),
    scaled(
        "valsched-reorder-20",
        "SCTBench CS.reorder_20 (seed 002 kernel: reorder)",
        REORDER_SUMMARY,
        finding("pos", 2500),
        false,
        reorder::<20>,
    ),
    scaled(
        "valsched-reorder-50",
        "SCTBench CS.reorder_50 (seed 002 kernel: reorder)",
        REORDER_SUMMARY,
        finding("auto", 200),
        true,
        reorder::<50>,
    ),
    scaled(
        "valsched-reorder-100",
        "SCTBench CS.reorder_100 (seed 002 kernel: reorder)",
        REORDER_SUMMARY,
        finding("auto", 400),
        true,
        reorder::<100>,
    ),
];
