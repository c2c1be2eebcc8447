use interleave::sync::{Arc, Condvar, Mutex};
use interleave::thread;

fn main() {
    let report = interleave::Builder::new()
        .strategy("pct:d=2".parse().unwrap())
        .executions(2000)
        .explore(|| {
            let a = Arc::new(Mutex::new(0));
            let b = Arc::new(Mutex::new(0));
            let (a2, b2) = (a.clone(), b.clone());
            let t = thread::spawn(move || {
                let _x = b2.lock().unwrap();
                let _y = a2.lock().unwrap();
            });
            {
                let _x = a.lock().unwrap();
                let _y = b.lock().unwrap();
            }
            t.join().unwrap();
        })
        .unwrap();
    println!("{report}");
    let pair = (Mutex::new(false), Condvar::new());
    let r = interleave::Builder::new()
        .executions(100)
        .explore(|| {
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let p2 = pair.clone();
            let t = thread::spawn(move || {
                *p2.0.lock().unwrap() = true;
                p2.1.notify_one();
            });
            let mut g = pair.0.lock().unwrap();
            while !*g {
                g = pair.1.wait(g).unwrap();
            }
            drop(g);
            t.join().unwrap();
        })
        .unwrap();
    println!("{r}");
    drop(pair);
}
