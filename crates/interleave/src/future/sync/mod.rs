//! Async synchronisation primitives in tokio's shapes: [`Mutex`], [`RwLock`], [`Semaphore`],
//! [`Notify`], [`oneshot`], [`mpsc`] and [`watch`].
//!
//! Each keeps its state behind one of the crate's own (blocking) mutexes, held only for the
//! few instructions of a poll, never across an `.await`: so every poll is a scheduling point
//! on an object the strategies and the race detector know, and a waiter that cannot proceed
//! stores its task's waker and returns `Pending`. Whoever releases wakes a waiter, after the
//! state lock is released.
//!
//! The locks, the semaphore and the bounded channel's senders queue their waiters first come
//! first served and hand what they release straight to the waiter at the head, as tokio's
//! fair queues do; a waiter keeps a ticket, so a spurious poll or a cancelled (dropped)
//! future never takes a wakeup meant for another task.

mod mutex;
mod notify;
mod rwlock;
mod semaphore;

pub mod mpsc;
pub mod oneshot;
pub mod watch;

pub use mutex::{Mutex, MutexGuard};
pub use notify::{Notified, Notify};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use semaphore::{AcquireError, Semaphore, SemaphorePermit};

use std::collections::VecDeque;
use std::fmt;
use std::panic::Location;
use std::task::Waker;

use crate::runtime::op::Site;
use crate::sync::Mutex as StateLock;

/// A lock ([`Mutex`] or [`RwLock`]) was not available at once.
#[derive(Debug, PartialEq, Eq)]
pub struct TryLockError(());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the lock is held or already awaited")
    }
}

impl std::error::Error for TryLockError {}

/// Wakes every waker in `wakers` (after the state lock is released, so a woken task that
/// runs at once finds the state free).
fn wake_all(wakers: impl IntoIterator<Item = Waker>) {
    for waker in wakers {
        waker.wake();
    }
}

/// Locks a primitive's state for the user's `operation`. The step is recorded at the caller's
/// line when that is the user's (a public method with `#[track_caller]` all the way), and
/// otherwise at the line of the user's code that created the primitive: a future's `poll` and
/// a destructor have no caller's location, and a line of this crate means nothing to a user.
#[track_caller]
fn state<'a, T>(lock: &'a StateLock<T>, operation: &'static str) -> crate::sync::MutexGuard<'a, T> {
    let caller = Location::caller();
    let site = if in_this_crate(caller) {
        lock.site()
    } else {
        caller
    };
    lock.lock_as(site, operation)
}

/// Whether `site` is a line of this crate's sources.
fn in_this_crate(site: Site) -> bool {
    // `file!()` and `Location::file` name this crate's files the same way, so the directory
    // of this file's crate is a prefix of every one of them.
    let this_file = file!();
    let crate_sources = this_file
        .strip_suffix("future/sync/mod.rs")
        .or_else(|| this_file.strip_suffix("future\\sync\\mod.rs"))
        .unwrap_or(this_file);
    site.file().starts_with(crate_sources)
}

/// One waiting future's place in a [`WaitQueue`].
type Ticket = u64;

/// Where a ticket stands in its [`WaitQueue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// Still queued.
    Waiting,
    /// Handed what it waited for; the grant is now the caller's.
    Granted,
    /// Neither: the queue let it go without a grant (a closed semaphore or channel, a watch
    /// change), so the future looks at the state afresh.
    Released,
}

/// The futures waiting on one primitive, first come first served.
///
/// Granting takes the head out of the queue and records that it now holds what it waited
/// for (the primitive has updated its own state on the waiter's behalf); the waiter finds the
/// grant at its next poll. A future that is dropped withdraws its ticket and, if it had been
/// granted, gives back what it was given, so nothing is lost to a cancelled task.
struct WaitQueue<K = ()> {
    next_ticket: Ticket,
    waiting: VecDeque<Waiter<K>>,
    granted: Vec<Ticket>,
}

struct Waiter<K> {
    ticket: Ticket,
    kind: K,
    waker: Waker,
}

impl<K> WaitQueue<K> {
    fn new() -> WaitQueue<K> {
        WaitQueue {
            next_ticket: 0,
            waiting: VecDeque::new(),
            granted: Vec::new(),
        }
    }

    /// Whether no future waits (granted ones do not count: they no longer wait).
    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// What the waiter at the head waits for.
    fn front(&self) -> Option<&K> {
        self.waiting.front().map(|waiter| &waiter.kind)
    }

    /// Queues a waiter for `kind` at the back.
    fn enqueue(&mut self, kind: K, waker: &Waker) -> Ticket {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.waiting.push_back(Waiter {
            ticket,
            kind,
            waker: waker.clone(),
        });
        ticket
    }

    /// Where `ticket` stands now, taking its grant if it has one; a waiter that is still
    /// queued keeps its place and is woken through `waker` from now on.
    fn check(&mut self, ticket: Ticket, waker: &Waker) -> Standing {
        if let Some(i) = self.granted.iter().position(|&t| t == ticket) {
            self.granted.swap_remove(i);
            return Standing::Granted;
        }
        match self
            .waiting
            .iter_mut()
            .find(|waiter| waiter.ticket == ticket)
        {
            Some(waiter) => {
                if !waiter.waker.will_wake(waker) {
                    waiter.waker = waker.clone();
                }
                Standing::Waiting
            }
            None => Standing::Released,
        }
    }

    /// Grants the head what it waits for: it leaves the queue, and its waker is returned.
    fn grant_front(&mut self) -> Option<Waker> {
        let waiter = self.waiting.pop_front()?;
        self.granted.push(waiter.ticket);
        Some(waiter.waker)
    }

    /// Takes `ticket` out of the queue for a future that is dropped; if it stood
    /// [`Standing::Granted`], the caller gives back what it had been granted.
    fn withdraw(&mut self, ticket: Ticket) -> Standing {
        if let Some(i) = self.granted.iter().position(|&t| t == ticket) {
            self.granted.swap_remove(i);
            return Standing::Granted;
        }
        match self
            .waiting
            .iter()
            .position(|waiter| waiter.ticket == ticket)
        {
            Some(i) => {
                self.waiting.remove(i);
                Standing::Waiting
            }
            None => Standing::Released,
        }
    }

    /// Lets every queued waiter go without a grant and returns their wakers.
    fn release_all(&mut self) -> Vec<Waker> {
        self.waiting.drain(..).map(|waiter| waiter.waker).collect()
    }
}
