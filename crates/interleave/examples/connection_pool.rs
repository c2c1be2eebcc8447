//! A small tokio-style service with a real bug, tested with interleave: a connection pool
//! that opens connections on demand up to a limit.
//!
//! The pool is written against one runtime module, `rt`, as a crate written against tokio
//! would be (the pattern of tokio's own `src/loom/mod.rs`). In such a crate `rt` switches on
//! a cfg:
//!
//! ```ignore
//! #[cfg(interleave)]
//! pub use interleave::future::{spawn, sync::Mutex, yield_now};
//! #[cfg(not(interleave))]
//! pub use tokio::{spawn, sync::Mutex, task::yield_now};
//! ```
//!
//! and `RUSTFLAGS="--cfg interleave" cargo test` tests it under interleave. This example only
//! has the interleave side.
//!
//! The bug: `get` checks that the pool may open another connection, then awaits the
//! connection's handshake, then counts it. Two requests that both find the pool empty both
//! pass the check before either counts, and the pool opens one connection more than its
//! limit. `--fixed` reserves the slot before the handshake.
//!
//! Run: `cargo run -p interleave --example connection_pool [-- --fixed]`.

mod rt {
    pub use interleave::future::sync::Mutex;
    pub use interleave::future::{block_on, spawn, yield_now};
    pub use interleave::sync::atomic::{AtomicUsize, Ordering};
    pub use interleave::sync::Arc;
}

/// The service: a pool of connections to one backend.
pub mod pool {
    use super::rt::{yield_now, AtomicUsize, Mutex, Ordering};

    /// A connection to the backend.
    #[derive(Debug)]
    pub struct Connection {
        pub id: usize,
    }

    /// Opens connections on demand, at most `limit` at a time, and keeps idle ones for reuse.
    pub struct Pool {
        idle: Mutex<Vec<Connection>>,
        open: AtomicUsize,
        limit: usize,
        /// Reserve the slot before the handshake (the fix).
        reserve_first: bool,
    }

    impl Pool {
        pub fn new(limit: usize, reserve_first: bool) -> Pool {
            Pool {
                idle: Mutex::new(Vec::new()),
                open: AtomicUsize::new(0),
                limit,
                reserve_first,
            }
        }

        /// A connection: an idle one, or a new one if the limit allows.
        pub async fn get(&self) -> Option<Connection> {
            if let Some(connection) = self.idle.lock().await.pop() {
                return Some(connection);
            }
            if self.reserve_first {
                let reserved = self
                    .open
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                        (open < self.limit).then_some(open + 1)
                    });
                let id = reserved.ok()?;
                handshake().await;
                return Some(Connection { id });
            }
            let open = self.open.load(Ordering::SeqCst);
            if open >= self.limit {
                return None;
            }
            handshake().await;
            let id = self.open.fetch_add(1, Ordering::SeqCst);
            assert!(
                id < self.limit,
                "the pool opened connection #{} but its limit is {}",
                id + 1,
                self.limit
            );
            Some(Connection { id })
        }

        /// Returns a connection for reuse.
        pub async fn put(&self, connection: Connection) {
            self.idle.lock().await.push(connection);
        }
    }

    /// The backend's handshake: the request waits for it.
    async fn handshake() {
        yield_now().await;
    }
}

/// Two requests served at once by a pool of one connection.
pub fn two_requests(fixed: bool) {
    use rt::*;
    block_on(async {
        let pool = Arc::new(pool::Pool::new(1, fixed));
        let request = |pool: Arc<pool::Pool>| async move {
            if let Some(connection) = pool.get().await {
                pool.put(connection).await;
            }
        };
        let other = spawn(request(pool.clone()));
        request(pool).await;
        other.await.expect("the request task");
    })
}

fn main() {
    let fixed = std::env::args().any(|a| a == "--fixed");
    let report = interleave::Builder::new()
        .strategy("pct:d=3".parse().expect("a built-in strategy"))
        .executions(1000)
        .explore(move || two_requests(fixed))
        .expect("a valid configuration");
    println!("{report}");
    if let Some(failure) = report.first_failure() {
        let replayed = interleave::Builder::new()
            .replay(&failure.token, move || two_requests(fixed))
            .expect("a valid token");
        let again = replayed.first_failure().map(|f| f.message.clone());
        println!(
            "\nreplaying the token: {}",
            if again.as_ref() == Some(&failure.message) {
                "the same failure"
            } else {
                "a different outcome"
            }
        );
    }
}
