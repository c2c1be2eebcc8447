//! The async [`Semaphore`].

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{wake_all, Standing, StateLock, Ticket, WaitQueue};
use crate::runtime::op::Site;

/// A counting semaphore, as tokio's: `acquire().await` waits for a permit, waiters are served
/// first come first served, and dropping the permit returns it (forgetting it leaks it).
pub struct Semaphore {
    state: StateLock<SemaphoreState>,
}

struct SemaphoreState {
    /// Permits nobody holds and nobody has been granted.
    permits: usize,
    closed: bool,
    waiters: WaitQueue,
}

impl SemaphoreState {
    /// Hands free permits to waiters at the head, one each.
    fn dispatch(&mut self) -> Vec<Waker> {
        let mut woken = Vec::new();
        while self.permits > 0 {
            let Some(waker) = self.waiters.grant_front() else {
                break;
            };
            self.permits -= 1;
            woken.push(waker);
        }
        woken
    }
}

/// The semaphore was closed.
#[derive(Debug, PartialEq, Eq)]
pub struct AcquireError(());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the semaphore is closed")
    }
}

impl std::error::Error for AcquireError {}

impl Semaphore {
    /// A semaphore with `permits` permits.
    #[track_caller]
    pub fn new(permits: usize) -> Semaphore {
        Semaphore {
            state: StateLock::state_of(
                "Semaphore",
                SemaphoreState {
                    permits,
                    closed: false,
                    waiters: WaitQueue::new(),
                },
            ),
        }
    }

    /// Waits for a permit and takes it. The steps are recorded at the caller's line, and so
    /// is the permit's return when it drops.
    #[track_caller]
    pub fn acquire(&self) -> impl Future<Output = Result<SemaphorePermit<'_>, AcquireError>> {
        Acquire {
            semaphore: self,
            ticket: None,
            site: Location::caller(),
        }
    }

    /// The permits available now.
    #[track_caller]
    pub fn available_permits(&self) -> usize {
        self.state
            .lock_as(Location::caller(), "available_permits")
            .permits
    }

    /// Adds `permits` permits, handing them to as many waiters.
    #[track_caller]
    pub fn add_permits(&self, permits: usize) {
        self.add_permits_at(permits, Location::caller(), "add_permits");
    }

    #[track_caller]
    fn add_permits_at(&self, permits: usize, site: Site, operation: &'static str) {
        let woken = {
            let mut state = self.state.lock_as(site, operation);
            state.permits += permits;
            state.dispatch()
        };
        wake_all(woken);
    }

    /// Closes the semaphore: every waiter, and every later `acquire`, gets an error.
    #[track_caller]
    pub fn close(&self) {
        let woken = {
            let mut state = self.state.lock_as(Location::caller(), "close");
            state.closed = true;
            state.waiters.release_all()
        };
        wake_all(woken);
    }
}

/// The future of [`Semaphore::acquire`].
struct Acquire<'a> {
    semaphore: &'a Semaphore,
    ticket: Option<Ticket>,
    site: Site,
}

impl<'a> Future for Acquire<'a> {
    type Output = Result<SemaphorePermit<'a>, AcquireError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let (semaphore, site) = (self.semaphore, self.site);
        let mut state = semaphore.state.lock_as(site, "acquire");
        if let Some(ticket) = self.ticket {
            match state.waiters.check(ticket, context.waker()) {
                Standing::Granted => {
                    self.ticket = None;
                    return Poll::Ready(Ok(SemaphorePermit { semaphore, site }));
                }
                Standing::Waiting => {
                    crate::future::awaiting("a Semaphore permit", Some(site));
                    return Poll::Pending;
                }
                Standing::Released => self.ticket = None,
            }
        }
        if state.closed {
            return Poll::Ready(Err(AcquireError(())));
        }
        if state.permits > 0 && state.waiters.is_empty() {
            state.permits -= 1;
            return Poll::Ready(Ok(SemaphorePermit { semaphore, site }));
        }
        self.ticket = Some(state.waiters.enqueue((), context.waker()));
        crate::future::awaiting("a Semaphore permit", Some(site));
        Poll::Pending
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else {
            return;
        };
        let woken = {
            let mut state = self.semaphore.state.lock_as(self.site, "cancel acquire");
            if state.waiters.withdraw(ticket) == Standing::Granted {
                state.permits += 1;
            }
            state.dispatch()
        };
        wake_all(woken);
    }
}

/// A permit of a [`Semaphore`]; dropping it returns the permit.
pub struct SemaphorePermit<'a> {
    semaphore: &'a Semaphore,
    /// Where it was acquired: its return is recorded there too.
    site: Site,
}

impl SemaphorePermit<'_> {
    /// Keeps the permit out of the semaphore for good.
    pub fn forget(self) {
        std::mem::forget(self);
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.semaphore.add_permits_at(1, self.site, "release");
    }
}
