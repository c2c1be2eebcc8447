fn main() {
    let r = interleave::Builder::new()
        .executions(20)
        .explore(|| {
            let h = interleave::thread::spawn(|| {
                for _ in 0..5000 {
                    interleave::thread::yield_now();
                }
            });
            for _ in 0..5000 {
                interleave::thread::yield_now();
            }
            h.join().unwrap();
        })
        .unwrap();
    println!("{}", r.steps);
}
