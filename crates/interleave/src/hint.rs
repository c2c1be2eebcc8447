//! Hints shaped like `std::hint`.

/// A spin-loop hint: a yield, so a thread spinning on a condition lets the thread it waits
/// for run, and strategies lower its priority if it keeps spinning.
#[track_caller]
pub fn spin_loop() {
    crate::thread::yield_now();
}
