// Code under test, written once against a module `rt` that names either std or interleave: the
// cfg-switch pattern of the crate documentation. Included with `include!` by `std_switch.rs`.

use rt::sync::{Arc, Mutex};
use rt::thread;

/// Transfers money between two accounts from two threads, always locking in the same order.
pub fn transfers() -> (i64, i64) {
    let accounts = Arc::new((Mutex::new(100i64), Mutex::new(100i64)));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let accounts = accounts.clone();
            thread::spawn(move || {
                let (from, to) = (&accounts.0, &accounts.1);
                let mut a = from.lock().unwrap();
                let mut b = to.lock().unwrap();
                let amount = 10 * (i + 1);
                *a -= amount;
                *b += amount;
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let a = *accounts.0.lock().unwrap();
    let b = *accounts.1.lock().unwrap();
    (a, b)
}
