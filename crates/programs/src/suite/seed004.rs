//! Seed 004 (Huang, Rauchwerger: *Finding Schedule-Sensitive Branches*): the Apache Derby
//! example of the paper's Fig 2.
//!
//! A schedule-sensitive branch (SSB) is a branch whose outcome, for the same input, depends on
//! the thread schedule. The paper finds most SSBs in real programs are caused by concurrency
//! bugs; its Fig 2 shows one in Derby where the unexpected side of the branch leads to a
//! `NullPointerException`.

use super::rt::cell::Var;
use super::rt::sync::atomic::AtomicU64;
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// Steps of unrelated work t2 does before it releases the map (see [`derby`]).
pub const PREP: u32 = 16;

/// Derby's `FormatableBitSet`, as a bit mask over a table's columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ColumnMap(u64);

impl ColumnMap {
    fn is_set(self, column: u32) -> bool {
        self.0 & (1 << column) != 0
    }
}

/// Columns of the table the statement refers to.
const COLUMNS: u32 = 3;
/// Columns 0 and 2 are referenced by the statement.
const REFERENCED: ColumnMap = ColumnMap(0b0101);

/// The shared descriptor: the field `referencedColumnMap` (`None` is Java's `null`, meaning
/// "all columns are referenced") plus the fixed twin's lock.
struct Descriptor {
    referenced_column_map: Var<Option<ColumnMap>>,
    lock: Mutex<()>,
    /// Counts t2's unrelated work.
    progress: AtomicU64,
}

/// Fig 2: Derby's `referencedColumnMap` null check (a schedule-sensitive branch).
///
/// Original (Java, Apache Derby): thread t1 checks `if (referencedColumnMap == null)` and, if
/// the map is not null, takes the other branch `else if (referencedColumnMap.isSet(..))`, which
/// reads the field again to dereference it. Thread t2 may concurrently set
/// `referencedColumnMap = null`. The null check is schedule sensitive (that by itself is
/// expected: `null` means "every column"), but if t2 runs right after t1's check and before the
/// dereference, t1 dereferences `null` and throws `NullPointerException`.
///
/// Rebuilt with the map as a bit mask behind a `Var<Option<..>>`: t1 runs the check once per
/// column of a three-column table (the loop that decides which columns to read, counting the
/// referenced ones), each iteration reading the field for the check and again for the
/// dereference; t2 releases the map (sets it to `None`). The observable consequence of the
/// unexpected branch is expressed as an assertion at the dereference: the value just checked
/// to be non-null must still be non-null. Choice left open: t2 first does [`PREP`] steps of
/// unrelated work (the invalidation does more than clear the field), so a random walk usually
/// lets t1 finish its short loop first. Needs t1 above t2 and one preemption between a check
/// and its dereference (PCT depth 2: one change point right after one of the three checks); if
/// t2 runs first every check takes the null side, and if it runs after t1's loop nothing is
/// dereferenced late. At the end, t1 must have counted at least the two referenced columns
/// (3 if the map was null for some checks). Fixed twin: each iteration reads the field once,
/// under a lock that t2's write also takes, and branches on that snapshot, so check and
/// dereference see the same value.
pub fn derby(variant: Variant) {
    let d = Arc::new(Descriptor {
        referenced_column_map: Var::new(Some(REFERENCED)),
        lock: Mutex::new(()),
        progress: AtomicU64::new(0),
    });

    let t1 = {
        let d = d.clone();
        thread::spawn(move || {
            let mut columns_to_read = 0;
            for column in 0..COLUMNS {
                let referenced = match variant {
                    Variant::Buggy => {
                        if d.referenced_column_map.get().is_none() {
                            true // null: every column is referenced
                        } else {
                            // `referencedColumnMap.isSet(column)`: reads the field again.
                            let map = d.referenced_column_map.get();
                            assert!(
                                map.is_some(),
                                "Derby: referencedColumnMap was checked non-null but is null at its dereference (NullPointerException in Derby)"
                            );
                            map.unwrap().is_set(column)
                        }
                    }
                    Variant::Fixed => {
                        let map = {
                            let _guard = d.lock.lock().unwrap();
                            d.referenced_column_map.get()
                        };
                        match map {
                            None => true,
                            Some(map) => map.is_set(column),
                        }
                    }
                };
                if referenced {
                    columns_to_read += 1;
                }
            }
            columns_to_read
        })
    };
    let t2 = {
        let d = d.clone();
        thread::spawn(move || {
            unrelated_work(&d.progress, PREP);
            match variant {
                Variant::Buggy => d.referenced_column_map.set(None),
                Variant::Fixed => {
                    let _guard = d.lock.lock().unwrap();
                    d.referenced_column_map.set(None);
                }
            }
        })
    };
    let columns_to_read = t1.join().unwrap();
    t2.join().unwrap();
    assert!(
        (2..=COLUMNS).contains(&columns_to_read),
        "Derby: t1 must read at least the referenced columns, counted {columns_to_read}"
    );
}

/// The programs of this module, in the order of the paper.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "seed004-derby",
        origin: "seed 004, Fig 2 (Apache Derby referencedColumnMap)",
        bug: BugKind::ScheduleSensitiveBranch,
        summary: "a non-null check of a shared field is followed by a second read that another thread may have nulled",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 500,
        },
        run: derby,
    },
];
