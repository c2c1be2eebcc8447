use interleave::sync::atomic::{AtomicUsize, Ordering};
use interleave::sync::Arc;
use interleave::thread;
fn main() {
    let r = interleave::Builder::new()
        .executions(300000)
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
    println!("{}", r.executions);
}
