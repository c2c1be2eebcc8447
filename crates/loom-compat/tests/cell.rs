//! loom 0.7's `UnsafeCell::get`/`get_mut` guards: two unsynchronised writes through `MutPtr`
//! are a data race that fails the model, and the same writes ordered by a join pass.

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;

fn writes(joined_first: bool) {
    let cell = Arc::new(UnsafeCell::new(0_usize));
    let other = {
        let cell = cell.clone();
        thread::spawn(move || {
            let writer = cell.get_mut();
            // SAFETY: the test is about whether this write races; the value is a plain usize.
            unsafe { *writer.deref() += 1 };
        })
    };
    let mut other = Some(other);
    if joined_first {
        if let Some(handle) = other.take() {
            handle.join().unwrap();
        }
    }
    cell.get_mut().with(|value| unsafe { *value += 1 });
    if let Some(handle) = other {
        handle.join().unwrap();
    }
    let reader = cell.get();
    // SAFETY: both writers are done and their guards dropped.
    assert_eq!(unsafe { *reader.deref() }, 2);
}

#[test]
#[should_panic(expected = "race")]
fn unsynchronised_writes_through_mut_ptr_race() {
    loom::model(|| writes(false));
}

#[test]
fn writes_ordered_by_join_pass() {
    loom::model(|| writes(true));
}

#[test]
fn default_and_from_build_cells() {
    loom::model(|| {
        let cell: UnsafeCell<Vec<u8>> = UnsafeCell::default();
        assert!(cell.get().with(|value| unsafe { (*value).is_empty() }));
        let cell = UnsafeCell::from(3_u8);
        assert_eq!(cell.into_inner(), 3);
    });
}

/// A `Cell` shared behind an `unsafe impl Sync`, as event-listener's loom build shares one:
/// its uses from two threads are a data race unless something orders them.
struct Shared(loom::cell::Cell<u32>);

// SAFETY: the tests below share the cell only to see that its accesses are race-checked.
unsafe impl Sync for Shared {}

fn shared_cell(joined_first: bool) {
    let shared = Arc::new(Shared(loom::cell::Cell::new(1)));
    let other = {
        let shared = shared.clone();
        thread::spawn(move || shared.0.set(shared.0.get() + 1))
    };
    let mut other = Some(other);
    if joined_first {
        if let Some(handle) = other.take() {
            handle.join().unwrap();
        }
    }
    shared.0.set(shared.0.replace(0) + 10);
    if let Some(handle) = other {
        handle.join().unwrap();
    }
}

#[test]
#[should_panic(expected = "race")]
fn a_shared_cell_used_without_synchronisation_races() {
    loom::model(|| shared_cell(false));
}

#[test]
fn a_cell_has_std_cells_methods() {
    loom::model(|| {
        shared_cell(true);
        let a = loom::cell::Cell::new(vec![1]);
        let b = loom::cell::Cell::new(vec![2, 3]);
        a.swap(&b);
        assert_eq!(a.take(), [2, 3]);
        assert_eq!(b.replace(Vec::new()), [1]);
        assert!(a.into_inner().is_empty() && b.into_inner().is_empty());
        let c = loom::cell::Cell::<u8>::default();
        c.set(c.get() + 1);
        assert_eq!(c.into_inner(), 1);
    });
}
