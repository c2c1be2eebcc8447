use interleave::sync::atomic::{AtomicUsize, Ordering};
use interleave::sync::{Arc, Mutex};
use interleave::thread;
use std::time::Instant;

fn main() {
    for spec in ["random", "pct:d=3"] {
        let t = Instant::now();
        let n = 20000;
        let r = interleave::Builder::new()
            .strategy(spec.parse().unwrap())
            .executions(n)
            .explore(|| {
                let c = Arc::new(Mutex::new(0u64));
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let c = c.clone();
                        thread::spawn(move || {
                            for _ in 0..50 {
                                *c.lock().unwrap() += 1;
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(*c.lock().unwrap(), 100);
            })
            .unwrap();
        let e = t.elapsed();
        println!(
            "mutex {spec}: {:.0} exec/s, {:.1} ns/step, {} steps/exec",
            n as f64 / e.as_secs_f64(),
            e.as_nanos() as f64 / r.steps as f64,
            r.steps / n
        );
        let t = Instant::now();
        let r = interleave::Builder::new()
            .strategy(spec.parse().unwrap())
            .executions(n)
            .explore(|| {
                let c = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..3)
                    .map(|_| {
                        let c = c.clone();
                        thread::spawn(move || {
                            for _ in 0..20 {
                                c.fetch_add(1, Ordering::SeqCst);
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(c.load(Ordering::SeqCst), 60);
            })
            .unwrap();
        let e = t.elapsed();
        println!(
            "atomic {spec}: {:.0} exec/s, {:.1} ns/step, {} steps/exec",
            n as f64 / e.as_secs_f64(),
            e.as_nanos() as f64 / r.steps as f64,
            r.steps / n
        );
    }
}
