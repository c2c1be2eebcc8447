//! Executions to exhaust (scratch).

use crate::helpers;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use interleave::sync::mpsc;
use interleave::sync::{Arc, Barrier};
use interleave::{future, thread, Report};

fn exhaust(spec: &str, limit: u64, body: impl Fn() + Sync) -> Report {
    helpers::builder(spec).executions(limit).explore(body).unwrap()
}

fn barrier(threads: usize, rounds: usize) {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (1..threads)
        .map(|_| {
            let barrier = barrier.clone();
            thread::spawn(move || {
                for _ in 0..rounds {
                    barrier.wait();
                }
            })
        })
        .collect();
    for _ in 0..rounds {
        barrier.wait();
    }
    for h in handles {
        h.join().unwrap();
    }
}

fn senders(n: usize) {
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let tx = tx.clone();
            thread::spawn(move || tx.send(i).unwrap())
        })
        .collect();
    drop(tx);
    let mut got = 0;
    while rx.recv().is_ok() {
        got += 1;
    }
    assert_eq!(got, n);
    for h in handles {
        h.join().unwrap();
    }
}

struct WakeSelf(usize);

impl Future for WakeSelf {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn self_waking(tasks: usize, wakes: usize) {
    future::block_on(async move {
        let handles: Vec<_> = (0..tasks)
            .map(|_| future::spawn(WakeSelf(wakes)))
            .collect();
        for h in handles {
            h.await.unwrap();
        }
    });
}

#[test]
fn scratch_counts() {
    let cases: Vec<(String, Box<dyn Fn() + Sync>)> = vec![
        ("barrier 2x1".into(), Box::new(|| barrier(2, 1))),
        ("barrier 3x1".into(), Box::new(|| barrier(3, 1))),
        ("barrier 2x2".into(), Box::new(|| barrier(2, 2))),
        ("barrier 3x2".into(), Box::new(|| barrier(3, 2))),
        ("barrier 4x1".into(), Box::new(|| barrier(4, 1))),
        ("senders 2".into(), Box::new(|| senders(2))),
        ("senders 3".into(), Box::new(|| senders(3))),
        ("senders 4".into(), Box::new(|| senders(4))),
        ("wake self 1x2".into(), Box::new(|| self_waking(1, 2))),
        ("wake self 2x1".into(), Box::new(|| self_waking(2, 1))),
        ("wake self 2x2".into(), Box::new(|| self_waking(2, 2))),
    ];
    for (name, body) in &cases {
        for spec in ["dfs", "dpor"] {
            let report = exhaust(spec, 200_000, body);
            println!(
                "{name} {spec}: {} executions, {:?}, failure {:?}",
                report.executions,
                report.stat("covered"),
                report.first_failure().map(|f| f.message.clone())
            );
        }
    }
}

struct Printing {
    inner: Box<dyn interleave::strategy::Strategy>,
    left: usize,
}

impl interleave::strategy::Strategy for Printing {
    fn spec(&self) -> String {
        self.inner.spec()
    }
    fn plan(
        &mut self,
        execution: u64,
        seed: u64,
    ) -> Option<Box<dyn interleave::strategy::Schedule + Send>> {
        self.inner.plan(execution, seed)
    }
    fn wants_trace(&self, _execution: u64) -> bool {
        true
    }
    fn round_size(&self) -> usize {
        1
    }
    fn observe(&mut self, execution: u64, outcome: &interleave::strategy::Outcome) {
        if self.left > 0 {
            self.left -= 1;
            let t: Vec<String> = outcome
                .trace
                .unwrap()
                .iter()
                .map(|e| {
                    format!(
                        "{}:{}{}",
                        e.thread,
                        e.kind.name(),
                        e.object.map(|o| format!("@{}", o.site.line())).unwrap_or_default()
                    )
                })
                .collect();
            println!("{}", t.join(" "));
        }
        self.inner.observe(execution, outcome);
    }
    fn stats(&self) -> Vec<(String, String)> {
        self.inner.stats()
    }
}

#[test]
fn scratch_traces() {
    let spec = std::env::var("SPEC").unwrap_or("dpor".into());
    let which = std::env::var("PROG").unwrap_or("senders".into());
    let n: usize = std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let report = interleave::Builder::new()
        .ignore_environment()
        .custom_strategy(Printing {
            inner: spec.parse::<interleave::strategy::StrategySpec>().unwrap().build(),
            left: 40,
        })
        .executions(100_000)
        .explore(move || match which.as_str() {
            "senders" => senders(n),
            "barrier" => barrier(n, 1),
            _ => self_waking(n, 1),
        })
        .unwrap();
    println!("{} executions", report.executions);
}
