use std::time::Instant;
fn main() {
    let n = 200000;
    let t = Instant::now();
    let r = interleave::Builder::new()
        .executions(n)
        .explore(|| {})
        .unwrap();
    let e = t.elapsed();
    println!(
        "empty: {:.0} ns/exec ({} steps/exec)",
        e.as_nanos() as f64 / n as f64,
        r.steps / n
    );
    let t = Instant::now();
    let r = interleave::Builder::new()
        .executions(n)
        .explore(|| {
            let h = interleave::thread::spawn(|| {});
            h.join().unwrap();
        })
        .unwrap();
    let e = t.elapsed();
    println!(
        "spawn+join: {:.0} ns/exec ({} steps/exec)",
        e.as_nanos() as f64 / n as f64,
        r.steps / n
    );
    let n = 2000;
    let t = Instant::now();
    let r = interleave::Builder::new()
        .executions(n)
        .explore(|| {
            for _ in 0..1000 {
                interleave::thread::yield_now();
            }
        })
        .unwrap();
    let e = t.elapsed();
    println!(
        "yield x1000 one thread: {:.1} ns/step",
        e.as_nanos() as f64 / r.steps as f64
    );
    let t = Instant::now();
    let r = interleave::Builder::new()
        .executions(n)
        .explore(|| {
            let h = interleave::thread::spawn(|| {
                for _ in 0..500 {
                    interleave::thread::yield_now();
                }
            });
            for _ in 0..500 {
                interleave::thread::yield_now();
            }
            h.join().unwrap();
        })
        .unwrap();
    let e = t.elapsed();
    println!(
        "yield x500 two threads: {:.1} ns/step",
        e.as_nanos() as f64 / r.steps as f64
    );
}
