//! SURW (`surw`, Zhao, Wolff, Mathur, Roychoudhury, ASPLOS 2025) on a check that a late writer
//! interferes with: the main thread reads `a` twice at once, the writer takes many steps of its
//! own before writing `a`, and the bug is the write between the two reads. `a` is the only
//! shared object, so it is always interesting, and SURW makes the three accesses'
//! interleavings uniform: the bug has probability 1/3 per execution however many steps the
//! writer takes first. A random walk must run all the writer's steps inside the main thread's
//! one-step window.

use std::collections::BTreeMap;
use std::sync::Mutex as StdMutex;

use crate::helpers;
use interleave::sync::atomic::{AtomicU64, Ordering};
use interleave::sync::Arc;
use interleave::thread;

/// The program, with the steps the writer takes before its write.
const PROGRAM: helpers::LateInterference = helpers::LateInterference { steps: 30 };

#[test]
fn surw_finds_the_late_interference_on_every_seed_and_random_walk_does_not() {
    for seed in 0..10 {
        // One profiling execution, then three SURW executions per find on average.
        let surw = PROGRAM
            .executions_to_bug("surw", seed, 20)
            .unwrap_or_else(|| panic!("surw, seed {seed}: not found in 20 executions"));
        println!("seed {seed}: surw {surw}");
        assert!(
            PROGRAM.executions_to_bug("random", seed, 1_000).is_none(),
            "random, seed {seed}: found in 1,000 executions"
        );
    }
    let fixed = PROGRAM.explore("surw", 0, 1_000, 1, true);
    assert!(fixed.first_failure().is_none(), "{fixed}");
    assert_eq!(fixed.executions, 1_000);
}

#[test]
fn surw_finds_the_same_failure_for_a_seed_whatever_the_worker_count() {
    let first = |workers| {
        helpers::first_exploration(|| PROGRAM.explore("surw", 3, 20, workers, false))
            .first_failure()
            .cloned()
            .expect("found within 20 executions")
    };
    let (one, three) = (first(1), first(3));
    assert_eq!(one.execution, three.execution);
    assert_eq!(one.token, three.token);
}

/// Two threads add to one shared counter twice each, so their four additions have
/// `C(4, 2) = 6` interleavings; each thread's two returned values tell how many of the other's
/// additions came first, which names the interleaving.
fn interleavings_seen(spec: &str, executions: u64) -> BTreeMap<(u64, u64), u64> {
    let seen = StdMutex::new(BTreeMap::new());
    let report = helpers::builder(spec)
        .seed(7)
        .executions(executions)
        .explore(|| {
            let counter = Arc::new(AtomicU64::new(0));
            let adder = |step: u64| {
                let counter = counter.clone();
                thread::spawn(move || {
                    let before = [
                        counter.fetch_add(step, Ordering::SeqCst),
                        counter.fetch_add(step, Ordering::SeqCst),
                    ];
                    // The other thread adds 100 where this one adds 1, and the reverse.
                    before.map(|value| if step == 1 { value / 100 } else { value % 100 })
                })
            };
            let (ones, hundreds) = (adder(1), adder(100));
            let ones = ones.join().unwrap();
            hundreds.join().unwrap();
            *seen.lock().unwrap().entry((ones[0], ones[1])).or_insert(0) += 1;
        })
        .unwrap();
    assert!(report.first_failure().is_none(), "{report}");
    seen.into_inner().unwrap()
}

#[test]
fn surw_samples_the_interleavings_of_the_shared_accesses_uniformly() {
    // The profiling execution is a random walk; the 6,000 after it are SURW's.
    let seen = interleavings_seen("surw", 6_001);
    println!("surw: {seen:?}");
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(
        seen.values().all(|&count| (850..=1150).contains(&count)),
        "every interleaving near 1,000 of 6,000: {seen:?}"
    );
    // A random walk favours the interleavings in which a thread, once running, keeps going.
    let random = interleavings_seen("random", 6_001);
    println!("random: {random:?}");
    assert!(
        random.values().any(|&count| !(850..=1150).contains(&count)),
        "{random:?}"
    );
}
