//! `shuttle::future::batch_semaphore`: shuttle's counting semaphore whose requests take several
//! permits at once, built here over interleave's primitives since interleave's own semaphore
//! grants one permit per request.
//!
//! Every operation that reads or changes the semaphore (each poll of an `Acquire`, `try_acquire`,
//! `release`, `close`, `available_permits`) first takes a `Relaxed` read-modify-write step on an
//! interleave atomic that belongs to the semaphore: that step is the scheduling point and orders
//! the operation against every other one on the same semaphore in every search (DPOR included),
//! without ordering them by happens-before. Happens-before is the permits' own, as shuttle's:
//! released permits carry their releaser's history ([`interleave::sync::Causality`]), a request
//! that takes permits learns the history of those it took (the oldest first), and a request
//! that finds too few learns of the requests that took them. The state itself sits in a `std`
//! mutex that is never contended, since all tasks of an execution run on one OS thread. A task
//! waiting for permits returns `Pending` from its `Acquire`, so interleave parks it until a
//! release or close wakes it; a wait nobody can end is reported as a deadlock. A waiter whose
//! task has finished without resolving or dropping its `Acquire` (kept alive somewhere else) is
//! passed over by releases, and its reservation is dropped, so it keeps no permits from anyone;
//! polling that `Acquire` again from a live task still works.
//!
//! Differences from shuttle: every poll is a scheduling point except the repeated polls of a
//! waiter of a fair semaphore (shuttle also skips the first poll of an unfair request that
//! blocks), and waking a parked waiter orders the waker before it, as any unpark does. A
//! semaphore's [`ResourceSignature`] is its creation site, the task that created it and how
//! many that task had created there before: the same semaphore has the same signature in every
//! execution.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool as StdAtomicBool;
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::sync::atomic::Ordering as StdOrdering;
use std::sync::{Arc, Mutex as StdMutex, MutexGuard as StdMutexGuard};
use std::task::{Context, Poll, Waker};

use interleave::sync::atomic::{AtomicUsize, Ordering};
use interleave::sync::Causality;

use crate::labels;
use crate::sync::ResourceSignature;

/// The task of a waiter that no task has queued yet.
const NO_TASK: usize = usize::MAX;

/// Which waiters a release serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fairness {
    /// Waiters are served in the order they asked, except those that opted into
    /// [`BatchSemaphore::acquire_bypassable`]; a request is never served before an earlier one
    /// that is still waiting.
    StrictlyFair,
    /// Any waiter whose request fits may take the released permits; a waiter can starve.
    Unfair,
}

/// Where a request waits relative to the waiters already queued on a fair semaphore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Priority {
    /// Behind every waiter.
    Back,
    /// Behind every waiter, but later requests may pass it while it cannot be served.
    Bypassable,
    /// In front of every waiter: for a holder that asks for more permits (`upgrade`), which
    /// the waiters behind it, holding none, could never release to it.
    Front,
}

/// Why [`BatchSemaphore::try_acquire`] got no permits.
#[derive(Debug, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore is closed.
    Closed,
    /// Not enough permits are available now.
    NoPermits,
}

/// The semaphore was closed before the request was served.
#[derive(Debug)]
pub struct AcquireError(());

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// A request that waits on the semaphore.
#[derive(Debug)]
struct Waiter {
    num_permits: usize,
    /// The fewest available permits that let it progress: `num_permits`, or fewer for a
    /// reserving request.
    min_permits: usize,
    priority: Priority,
    /// A release handed it its permits.
    granted: StdAtomicBool,
    /// The history of the permits a release handed it, which it learns when it sees them.
    granted_history: StdMutex<Option<Causality>>,
    /// It is in the queue.
    queued: StdAtomicBool,
    /// It was woken and has not polled since: a second wake would tell it nothing new.
    woken: StdAtomicBool,
    /// The task that queued it or holds the reservation with it, `NO_TASK` before that.
    task: StdAtomicUsize,
    waker: StdMutex<Option<Waker>>,
}

impl Waiter {
    fn set_waker(&self, waker: &Waker) {
        *lock(&self.waker) = Some(waker.clone());
    }

    /// Records the running task as the one waiting with this request.
    fn set_task(&self) {
        self.task
            .store(crate::current::me().into(), StdOrdering::SeqCst);
    }

    /// Whether the task that waits with this request has finished without resolving it.
    fn abandoned(&self) -> bool {
        let task = self.task.load(StdOrdering::SeqCst);
        task != NO_TASK && labels::has_finished(task)
    }

    /// Hands the request its permits, with their history.
    fn grant(&self, history: Causality) {
        *lock(&self.granted_history) = Some(history);
        self.queued.store(false, StdOrdering::SeqCst);
        self.granted.store(true, StdOrdering::SeqCst);
    }

    /// Wakes the task waiting on this request, with the waker lock released: the wake can be a
    /// scheduling point, and the woken task sets its waker when it polls.
    fn wake(&self) {
        self.woken.store(true, StdOrdering::SeqCst);
        let waker = lock(&self.waker).clone();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

#[derive(Debug)]
struct State {
    available: usize,
    /// How many of the semaphore's initial permits are still available: they are the oldest,
    /// and carry no history.
    initial: usize,
    /// The released permits that are available, in release order, each batch with the history
    /// of its release; with `initial` their counts add up to `available`.
    permits: VecDeque<(usize, Causality)>,
    /// The history of every request that took permits, which a request that finds too few
    /// learns (`None` until the first, so that `const_new` can build the state).
    takers: Option<Causality>,
    closed: bool,
    waiters: VecDeque<Arc<Waiter>>,
    /// The request that holds the semaphore's reservation: until it has its permits, nobody
    /// else can take one (unfair semaphores only).
    reservation: Option<Arc<Waiter>>,
}

impl State {
    /// Makes `count` permits available, released with `history`.
    fn give(&mut self, count: usize, history: Causality) {
        if count > 0 {
            self.available += count;
            self.permits.push_back((count, history));
        }
    }

    /// Takes `count` available permits, the oldest first, and returns their history.
    fn take(&mut self, count: usize) -> Causality {
        self.available -= count;
        let mut history = Causality::new();
        let from_initial = count.min(self.initial);
        self.initial -= from_initial;
        let mut left = count - from_initial;
        while left > 0 {
            let Some((batch, batch_history)) = self.permits.front_mut() else {
                break;
            };
            history.merge(batch_history);
            if *batch > left {
                *batch -= left;
                left = 0;
            } else {
                left -= *batch;
                self.permits.pop_front();
            }
        }
        history
    }

    /// The running task takes `count` permits: it learns their history, and requests that
    /// later find too few learn of it.
    fn take_for_running_task(&mut self, count: usize) {
        self.take(count).acquire();
        self.release_into_takers();
    }

    /// The running task's history joins that of the requests that took permits.
    fn release_into_takers(&mut self) {
        self.takers
            .get_or_insert_with(Causality::new)
            .release_into();
    }

    /// The running task, which finds too few permits, learns of the requests that took them.
    fn learn_of_takers(&self) {
        if let Some(takers) = &self.takers {
            takers.acquire();
        }
    }

    /// The permits that another request than the reservation's holder can take now.
    fn takeable(&self) -> usize {
        if self.reservation.is_some() {
            0
        } else {
            self.available
        }
    }

    fn is_reserved_by(&self, waiter: &Arc<Waiter>) -> bool {
        self.reservation
            .as_ref()
            .is_some_and(|holder| Arc::ptr_eq(holder, waiter))
    }

    /// Takes `num_permits` for a request that is not queued (or is retrying on an unfair
    /// semaphore), if the fairness rules let it.
    fn acquire_permits(
        &mut self,
        num_permits: usize,
        fairness: Fairness,
        priority: Priority,
    ) -> Result<(), TryAcquireError> {
        if self.closed {
            return Err(TryAcquireError::Closed);
        }
        let may_take = fairness == Fairness::Unfair
            || priority == Priority::Front
            || self
                .waiters
                .iter()
                .all(|waiter| waiter.priority == Priority::Bypassable);
        if may_take && self.takeable() >= num_permits {
            self.take_for_running_task(num_permits);
            Ok(())
        } else {
            self.learn_of_takers();
            Err(TryAcquireError::NoPermits)
        }
    }

    /// Serves the queue of a fair semaphore from its front, passing bypassable waiters that
    /// do not fit; returns the served waiters, to wake once the state is unlocked.
    #[must_use]
    fn serve_from_front(&mut self) -> Vec<Arc<Waiter>> {
        let mut served = Vec::new();
        let mut index = 0;
        while let Some(waiter) = self.waiters.get(index) {
            if waiter.abandoned() {
                let waiter = self
                    .waiters
                    .remove(index)
                    .expect("the waiter was just read");
                waiter.queued.store(false, StdOrdering::SeqCst);
            } else if waiter.num_permits <= self.available {
                let waiter = self
                    .waiters
                    .remove(index)
                    .expect("the waiter was just read");
                let history = self.take(waiter.num_permits);
                waiter.grant(history);
                served.push(waiter);
            } else if waiter.priority == Priority::Bypassable {
                index += 1;
            } else {
                break;
            }
        }
        served
    }

    /// The waiters of an unfair semaphore that could now progress and were not woken since
    /// they last polled, to wake once the state is unlocked; they retry when polled. Waiters
    /// and a reservation of finished tasks are dropped first.
    #[must_use]
    fn unfair_waiters_to_wake(&mut self) -> Vec<Arc<Waiter>> {
        if self
            .reservation
            .as_ref()
            .is_some_and(|holder| holder.abandoned())
        {
            self.reservation = None;
        }
        self.waiters.retain(|waiter| {
            let abandoned = waiter.abandoned();
            if abandoned {
                waiter.queued.store(false, StdOrdering::SeqCst);
            }
            !abandoned
        });
        let unwoken = |waiter: &&Arc<Waiter>| !waiter.woken.load(StdOrdering::SeqCst);
        if let Some(holder) = &self.reservation {
            if holder.num_permits <= self.available {
                return std::iter::once(holder).filter(unwoken).cloned().collect();
            }
            return Vec::new();
        }
        self.waiters
            .iter()
            .filter(|waiter| waiter.min_permits <= self.available)
            .filter(unwoken)
            .cloned()
            .collect()
    }
}

/// Wakes `waiters`. Waking can be a scheduling point, where another task may run and use the
/// semaphore, so it is never done while the state is locked.
fn wake(waiters: Vec<Arc<Waiter>>) {
    for waiter in waiters {
        waiter.wake();
    }
}

/// A counting semaphore whose requests take any number of permits at once, as shuttle's.
pub struct BatchSemaphore {
    /// The scheduling point of every operation on the semaphore.
    step: AtomicUsize,
    state: StdMutex<State>,
    fairness: Fairness,
    signature: ResourceSignature,
}

impl fmt::Debug for BatchSemaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchSemaphore")
            .field("state", &*lock(&self.state))
            .field("fairness", &self.fairness)
            .finish()
    }
}

impl Default for BatchSemaphore {
    #[track_caller]
    fn default() -> Self {
        BatchSemaphore::new(0, Fairness::StrictlyFair)
    }
}

fn lock<T>(mutex: &StdMutex<T>) -> StdMutexGuard<'_, T> {
    // Never contended (one OS thread per execution); a panic while it is held leaves the
    // state as consistent as the panicking operation left it, as shuttle's `RefCell` does.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl BatchSemaphore {
    /// A semaphore with `num_permits` permits.
    ///
    /// # Panics
    /// Outside an execution, as shuttle's (use [`BatchSemaphore::const_new`] there).
    #[track_caller]
    pub fn new(num_permits: usize, fairness: Fairness) -> Self {
        let site = std::panic::Location::caller();
        let (task, index) = crate::labels::creation_index(site);
        BatchSemaphore {
            signature: ResourceSignature::new(site, Some(task), index),
            ..BatchSemaphore::const_new(num_permits, fairness)
        }
    }

    /// A semaphore with `num_permits` permits, usable in a `static`; its signature is its
    /// creation site alone.
    #[track_caller]
    pub const fn const_new(num_permits: usize, fairness: Fairness) -> Self {
        BatchSemaphore {
            step: AtomicUsize::new(0),
            state: StdMutex::new(State {
                available: num_permits,
                initial: num_permits,
                permits: VecDeque::new(),
                takers: None,
                closed: false,
                waiters: VecDeque::new(),
                reservation: None,
            }),
            fairness,
            signature: ResourceSignature::new(std::panic::Location::caller(), None, 0),
        }
    }

    /// What identifies this semaphore across executions.
    pub fn signature(&self) -> &ResourceSignature {
        &self.signature
    }

    /// Takes the operation's scheduling point. While a thread unwinds (a task dropped at the
    /// end of an execution) there is no step to take, so the operation runs without one.
    #[track_caller]
    fn step(&self) {
        if !interleave::thread::panicking() {
            self.step.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn state(&self) -> StdMutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The permits a request could take now (none while a reservation holds the semaphore).
    #[track_caller]
    pub fn available_permits(&self) -> usize {
        self.step();
        self.state().takeable()
    }

    /// Closes the semaphore: waiting and later requests fail, held permits stay valid.
    #[track_caller]
    pub fn close(&self) {
        self.step();
        self.close_no_scheduling_point();
    }

    /// Closes the semaphore without a scheduling point.
    pub fn close_no_scheduling_point(&self) {
        let mut state = self.state();
        if state.closed {
            return;
        }
        state.closed = true;
        let holder = state.reservation.take();
        let waiters: Vec<_> = state.waiters.drain(..).chain(holder).collect();
        drop(state);
        for waiter in waiters {
            waiter.queued.store(false, StdOrdering::SeqCst);
            waiter.wake();
        }
    }

    /// Whether the semaphore is closed.
    pub fn is_closed(&self) -> bool {
        self.state().closed
    }

    /// Takes `num_permits` now if the fairness rules let this request have them.
    ///
    /// # Errors
    /// [`TryAcquireError::Closed`] on a closed semaphore, [`TryAcquireError::NoPermits`] when
    /// the permits are not available to it.
    #[track_caller]
    pub fn try_acquire(&self, num_permits: usize) -> Result<(), TryAcquireError> {
        self.step();
        self.state()
            .acquire_permits(num_permits, self.fairness, Priority::Back)
    }

    /// Waits for `num_permits` permits.
    pub fn acquire(&self, num_permits: usize) -> Acquire<'_> {
        Acquire::new(self, num_permits, num_permits, Priority::Back, false)
    }

    /// Waits for `num_permits` permits, letting later requests of a fair semaphore pass while
    /// this one cannot be served.
    pub fn acquire_bypassable(&self, num_permits: usize) -> Acquire<'_> {
        Acquire::new(self, num_permits, num_permits, Priority::Bypassable, false)
    }

    /// Blocks the running thread until it has `num_permits` permits.
    ///
    /// # Errors
    /// When the semaphore is closed first.
    #[track_caller]
    pub fn acquire_blocking(&self, num_permits: usize) -> Result<(), AcquireError> {
        interleave::future::block_on(self.acquire(num_permits))
    }

    /// Waits for `num_permits` permits of an unfair semaphore, reserving it as soon as
    /// `min_permits` are available: from then on nobody else can take a permit until this
    /// request has all of its own.
    ///
    /// # Panics
    /// On a fair semaphore, when `num_permits` is 0 or below `min_permits`.
    pub fn acquire_reserving(&self, min_permits: usize, num_permits: usize) -> Acquire<'_> {
        assert_eq!(
            self.fairness,
            Fairness::Unfair,
            "only an unfair semaphore supports reservations"
        );
        assert!(num_permits > 0, "a reservation is for at least one permit");
        assert!(
            min_permits <= num_permits,
            "a reservation starts at no more permits than it asks for"
        );
        Acquire::new(self, num_permits, min_permits, Priority::Back, true)
    }

    /// Returns `num_permits` permits and serves the waiters they let progress.
    #[track_caller]
    pub fn release(&self, num_permits: usize) {
        self.step();
        if num_permits == 0 {
            return;
        }
        let mut state = self.state();
        state.give(num_permits, Causality::release());
        let to_wake = match self.fairness {
            Fairness::StrictlyFair => state.serve_from_front(),
            Fairness::Unfair => state.unfair_waiters_to_wake(),
        };
        drop(state);
        wake(to_wake);
    }

    /// Waits until the holder of `permits_currently_held` permits holds `permits_to_be_held`:
    /// ahead of every waiter of a fair semaphore, by reserving an unfair one.
    ///
    /// # Panics
    /// Unless `0 < permits_currently_held < permits_to_be_held`.
    pub fn upgrade(&self, permits_currently_held: usize, permits_to_be_held: usize) -> Acquire<'_> {
        let num_permits = upgrade_size(permits_currently_held, permits_to_be_held);
        match self.fairness {
            Fairness::StrictlyFair => {
                Acquire::new(self, num_permits, num_permits, Priority::Front, false)
            }
            Fairness::Unfair => Acquire::new(self, num_permits, 0, Priority::Back, true),
        }
    }

    /// Takes the extra permits of an upgrade now, ahead of every waiter, if they are available.
    ///
    /// # Errors
    /// As [`BatchSemaphore::try_acquire`].
    ///
    /// # Panics
    /// Unless `0 < permits_currently_held < permits_to_be_held`.
    #[track_caller]
    pub fn try_upgrade(
        &self,
        permits_currently_held: usize,
        permits_to_be_held: usize,
    ) -> Result<(), TryAcquireError> {
        let num_permits = upgrade_size(permits_currently_held, permits_to_be_held);
        self.step();
        self.state()
            .acquire_permits(num_permits, self.fairness, Priority::Front)
    }

    /// Takes `waiter` out of the queue; on a fair semaphore the waiters behind it may now be
    /// served.
    fn remove_waiter(&self, waiter: &Arc<Waiter>) {
        let mut state = self.state();
        let Some(index) = state
            .waiters
            .iter()
            .position(|queued| Arc::ptr_eq(queued, waiter))
        else {
            return;
        };
        state.waiters.remove(index);
        waiter.queued.store(false, StdOrdering::SeqCst);
        let front_is_bypassable = state
            .waiters
            .front()
            .is_some_and(|front| front.priority == Priority::Bypassable);
        if self.fairness == Fairness::StrictlyFair && (index == 0 || front_is_bypassable) {
            let served = state.serve_from_front();
            drop(state);
            wake(served);
        }
    }
}

fn upgrade_size(permits_currently_held: usize, permits_to_be_held: usize) -> usize {
    assert!(
        permits_currently_held > 0,
        "only a holder of permits can upgrade"
    );
    assert!(
        permits_to_be_held > permits_currently_held,
        "an upgrade asks for more permits than are held"
    );
    permits_to_be_held - permits_currently_held
}

/// The future of an `acquire*` call: awaiting it gives the permits, or an error if the
/// semaphore is closed first. Dropping it before it completes gives up the request (and
/// returns permits it was already handed).
pub struct Acquire<'a> {
    semaphore: &'a BatchSemaphore,
    waiter: Arc<Waiter>,
    reserving: bool,
    /// It was polled before.
    polled: bool,
    completed: bool,
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("waiter", &self.waiter)
            .field("reserving", &self.reserving)
            .field("completed", &self.completed)
            .finish()
    }
}

impl<'a> Acquire<'a> {
    fn new(
        semaphore: &'a BatchSemaphore,
        num_permits: usize,
        min_permits: usize,
        priority: Priority,
        reserving: bool,
    ) -> Acquire<'a> {
        Acquire {
            semaphore,
            waiter: Arc::new(Waiter {
                num_permits,
                min_permits,
                priority,
                granted: StdAtomicBool::new(false),
                granted_history: StdMutex::new(None),
                queued: StdAtomicBool::new(false),
                woken: StdAtomicBool::new(false),
                task: StdAtomicUsize::new(NO_TASK),
                waker: StdMutex::new(None),
            }),
            reserving,
            polled: false,
            completed: false,
        }
    }

    fn is_queued(&self) -> bool {
        self.waiter.queued.load(StdOrdering::SeqCst)
    }

    fn finish(&mut self, result: Result<(), AcquireError>) -> Poll<Result<(), AcquireError>> {
        self.completed = true;
        Poll::Ready(result)
    }

    /// Waits, queued at the place the request's priority gives it.
    fn wait(&self, context: &Context<'_>, state: &mut State) -> Poll<Result<(), AcquireError>> {
        self.waiter.set_waker(context.waker());
        self.waiter.set_task();
        if !self.is_queued() {
            match self.waiter.priority {
                Priority::Front => state.waiters.push_front(self.waiter.clone()),
                Priority::Back | Priority::Bypassable => {
                    state.waiters.push_back(self.waiter.clone())
                }
            }
            self.waiter.queued.store(true, StdOrdering::SeqCst);
        }
        Poll::Pending
    }

    fn poll_reserving(&mut self, context: &Context<'_>) -> Poll<Result<(), AcquireError>> {
        let semaphore = self.semaphore;
        let num_permits = self.waiter.num_permits;
        let mut state = semaphore.state();
        if state.is_reserved_by(&self.waiter) {
            if state.available < num_permits {
                self.waiter.set_waker(context.waker());
                return Poll::Pending;
            }
            state.reservation = None;
            state.take_for_running_task(num_permits);
            let to_wake = state.unfair_waiters_to_wake();
            drop(state);
            wake(to_wake);
            return self.finish(Ok(()));
        }
        if state.reservation.is_some() || state.available < self.waiter.min_permits {
            state.learn_of_takers();
            return self.wait(context, &mut state);
        }
        if state.available >= num_permits {
            state.take_for_running_task(num_permits);
            drop(state);
            if self.is_queued() {
                semaphore.remove_waiter(&self.waiter);
            }
            return self.finish(Ok(()));
        }
        // Reserve the semaphore and wait for the rest of the permits.
        self.waiter.set_waker(context.waker());
        if let Some(index) = state
            .waiters
            .iter()
            .position(|queued| Arc::ptr_eq(queued, &self.waiter))
        {
            state.waiters.remove(index);
            self.waiter.queued.store(false, StdOrdering::SeqCst);
        }
        self.waiter.set_task();
        state.reservation = Some(self.waiter.clone());
        Poll::Pending
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.completed, "an Acquire polled after it completed");
        // A waiter of a fair semaphore that polls again only learns what a release or a close
        // decided for it at their steps, which also woke it, so it needs no step of its own;
        // every other poll reads or changes the semaphore and takes one.
        if !(self.polled && self.semaphore.fairness == Fairness::StrictlyFair) {
            self.semaphore.step();
        }
        self.polled = true;
        self.waiter.woken.store(false, StdOrdering::SeqCst);
        if self.waiter.granted.load(StdOrdering::SeqCst) {
            if let Some(history) = lock(&self.waiter.granted_history).take() {
                history.acquire();
                self.semaphore.state().release_into_takers();
            }
            return self.finish(Ok(()));
        }
        if self.semaphore.is_closed() {
            return self.finish(Err(AcquireError(())));
        }
        if self.reserving {
            return self.poll_reserving(context);
        }
        let semaphore = self.semaphore;
        let queued = self.is_queued();
        // A queued waiter of a fair semaphore is served by releases, in queue order.
        if semaphore.fairness == Fairness::StrictlyFair && queued {
            self.waiter.set_waker(context.waker());
            return Poll::Pending;
        }
        let mut state = semaphore.state();
        let result = state.acquire_permits(
            self.waiter.num_permits,
            semaphore.fairness,
            self.waiter.priority,
        );
        match result {
            Ok(()) => {
                drop(state);
                if queued {
                    semaphore.remove_waiter(&self.waiter);
                }
                self.finish(Ok(()))
            }
            Err(TryAcquireError::NoPermits) => self.wait(context, &mut state),
            Err(TryAcquireError::Closed) => {
                unreachable!("a closed semaphore was handled before")
            }
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        if self.is_queued() {
            self.semaphore.remove_waiter(&self.waiter);
        } else if self.semaphore.state().is_reserved_by(&self.waiter) {
            let mut state = self.semaphore.state();
            state.reservation = None;
            let to_wake = state.unfair_waiters_to_wake();
            drop(state);
            wake(to_wake);
        } else if self.waiter.granted.load(StdOrdering::SeqCst) && !self.completed {
            self.semaphore.release(self.waiter.num_permits);
        }
    }
}
