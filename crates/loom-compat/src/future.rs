//! `loom::future`: `block_on` and `AtomicWaker`.
//!
//! loom's `block_on` may poll its future again without a wake-up (a spurious poll), once per
//! wait, and its suite checks that models see such polls. This `block_on` does the same: when
//! the future is pending the first time, interleave chooses (an explored choice,
//! `interleave::rand`) whether to poll again at once or to park until the waker is woken; later
//! pending polls park. One spurious poll per call keeps every model finite.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

pub use interleave::future::AtomicWaker;

/// Wakes the thread that runs `block_on` by unparking it.
struct Unpark(interleave::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on the current thread of the model.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(interleave::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut spurious_poll_left = true;
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        let spurious = spurious_poll_left && interleave::rand::random_bool();
        spurious_poll_left = false;
        if !spurious {
            interleave::thread::park();
        }
    }
}
