//! loom's `Arc` orders what the holders of its other references did before they dropped them
//! before what the holder of the last reference does with the value (its destructor, or
//! `get_mut`), as std's does; counting the references with `strong_count` orders nothing.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

/// A value whose destructor reads the cell.
struct ReadOnDrop(UnsafeCell<usize>);

impl Drop for ReadOnDrop {
    fn drop(&mut self) {
        // SAFETY: the test is about whether this read races with the worker's write.
        assert_eq!(self.0.with(|value| unsafe { *value }), 1);
    }
}

/// How the main thread uses the value once the worker, which wrote the cell, has dropped its
/// reference.
#[derive(Clone, Copy)]
enum Then {
    /// Drops the last reference, which runs the destructor.
    Drop,
    /// Writes through `Arc::get_mut`.
    GetMut,
    /// Reads through the shared reference: ordered by nothing.
    ReadShared,
}

fn after_the_worker_dropped(then: Then) {
    let mut shared = Arc::new(ReadOnDrop(UnsafeCell::new(0)));
    let worker = {
        let other = shared.clone();
        thread::spawn(move || {
            // SAFETY: nothing else accesses the cell until this reference is dropped.
            other.0.with_mut(|value| unsafe { *value = 1 });
        })
    };
    while Arc::strong_count(&shared) > 1 {
        thread::yield_now();
    }
    match then {
        Then::Drop => drop(shared),
        Then::GetMut => {
            let value = Arc::get_mut(&mut shared).expect("the only reference");
            // SAFETY: as for the destructor's read.
            value.0.with_mut(|value| unsafe { *value += 0 });
        }
        // SAFETY: as for the destructor's read.
        Then::ReadShared => assert_eq!(shared.0.with(|value| unsafe { *value }), 1),
    }
    worker.join().unwrap();
}

#[test]
fn the_last_drop_happens_after_the_other_references_drops() {
    loom::model(|| after_the_worker_dropped(Then::Drop));
}

#[test]
fn get_mut_happens_after_the_other_references_drops() {
    loom::model(|| after_the_worker_dropped(Then::GetMut));
}

#[test]
#[should_panic(expected = "race")]
fn a_read_through_a_shared_reference_after_strong_count_is_one_races() {
    loom::model(|| after_the_worker_dropped(Then::ReadShared));
}
