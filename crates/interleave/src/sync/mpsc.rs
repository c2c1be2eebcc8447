//! Multi-producer single-consumer channels, shaped like `std::sync::mpsc`.
//!
//! `recv` blocks while the channel is empty and a sender is alive; `send` on a bounded channel
//! blocks while it is full; a rendezvous channel (`sync_channel(0)`) blocks the sender until
//! the receiver takes the message. `recv_timeout` may time out at any scheduling point after it
//! started (the execution's virtual clock, see [`crate::time`], then moves to its deadline); a
//! message already there when the receiver runs is received.
//!
//! Happens-before is std's: a message's send happens before its receipt (the message carries
//! the sender's clock, not every earlier send's), the receipt that frees a slot of a bounded
//! channel happens before the send that takes the slot (the `k`-th send of a channel of
//! capacity `c` after the `(k - c)`-th receipt; for a rendezvous channel, the `k`-th send ends
//! after the `k`-th receipt). Finding the channel disconnected orders nothing, as in shuttle: no
//! message passed. So only the drop of the last sender is a scheduling point, and only while the
//! receiver lives; dropping one of several senders, or an endpoint whose other side is gone,
//! cannot be observed (see `Channel::drop_unobserved`).

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

use crate::runtime::clock::VectorClock;
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::{ObjIdx, ObjectKind, Op, OpKind, Site};
use crate::runtime::{self, ChannelStep, Execution};

/// The argument of a pending send on an unbounded channel and of a pending sender's drop: a
/// step that commutes with a receive the receiver can take at the same time (see
/// `strategy::hb::may_depend`), and with other such steps.
pub(crate) const COMMUTES: u32 = 1;

/// The argument of a pending `try_send` on a rendezvous channel: a step that may depend on
/// every other thread's pending step, since any of them may be the last before that thread's
/// receive (see `strategy::hb::may_depend`).
pub(crate) const OFFERS: u32 = 2;

struct Channel<T> {
    handle: ObjectHandle,
    /// The messages, each with its sender's clock at the send.
    queue: UnsafeCell<VecDeque<(T, VectorClock)>>,
    /// `None` for an unbounded channel.
    capacity: Option<usize>,
    /// Of a bounded channel: the receiver's clock at each receipt, by ticket, until the send
    /// that the receipt made room for takes it.
    receipts: UnsafeCell<VecDeque<(u64, VectorClock)>>,
}

// SAFETY: all threads of an execution are coroutines on one OS thread and only one runs at a
// time; the queue is only touched between two scheduling points, never across one.
unsafe impl<T: Send> Send for Channel<T> {}
unsafe impl<T: Send> Sync for Channel<T> {}

impl<T> Channel<T> {
    #[track_caller]
    fn new(capacity: Option<usize>, site: Site) -> Arc<Channel<T>> {
        let channel = Arc::new(Channel {
            handle: ObjectHandle::new(site),
            queue: UnsafeCell::new(VecDeque::new()),
            capacity,
            receipts: UnsafeCell::new(VecDeque::new()),
        });
        runtime::with(|ex| {
            let idx = ex.object(&channel.handle, ObjectKind::Channel);
            if let ObjState::Channel {
                capacity: cap,
                senders,
                ..
            } = &mut ex.objects[idx as usize].state
            {
                *cap = capacity;
                *senders = 1;
            }
        });
        channel
    }

    #[track_caller]
    fn schedule(&self, kind: OpKind, timed: bool, site: Site) -> ObjIdx {
        self.schedule_with(kind, 0, timed, site)
    }

    /// Schedules a step whose pending operation carries `arg` ([`COMMUTES`] or 0).
    #[track_caller]
    fn schedule_with(&self, kind: OpKind, arg: u32, timed: bool, site: Site) -> ObjIdx {
        runtime::switch_on(
            &self.handle,
            ObjectKind::Channel,
            |idx| Op::with(kind, idx, arg, timed),
            site,
        )
        .index()
    }

    #[allow(clippy::mut_from_ref)]
    fn queue(&self) -> &mut VecDeque<(T, VectorClock)> {
        // SAFETY: see the `Sync` impl; callers never hold the reference across a switch.
        unsafe { &mut *self.queue.get() }
    }

    #[allow(clippy::mut_from_ref)]
    fn receipts(&self) -> &mut VecDeque<(u64, VectorClock)> {
        // SAFETY: as for `queue`.
        unsafe { &mut *self.receipts.get() }
    }

    /// The running thread learns of the receipt with `ticket`, which it waited for.
    fn learn_of_receipt(&self, ex: &mut Execution, ticket: u64) {
        let receipts = self.receipts();
        if let Some(position) = receipts.iter().position(|(taken, _)| *taken == ticket) {
            if let Some((_, clock)) = receipts.remove(position) {
                let me = ex.me();
                ex.threads[me].clock.join(&clock);
            }
        }
    }

    /// Enqueues `value` unless the receiver is gone; returns the message's ticket.
    fn push(&self, ex: &mut Execution, idx: ObjIdx, value: T) -> Result<u64, T> {
        let ObjState::Channel {
            len,
            receiver_alive,
            sent,
            ..
        } = &mut ex.objects[idx as usize].state
        else {
            unreachable!("a channel handle points at another kind of object");
        };
        if !*receiver_alive {
            return Err(value);
        }
        *len += 1;
        *sent += 1;
        let ticket = *sent;
        // A rendezvous send waits for its receiver too: its steps keep the coarse relation.
        let described = (self.capacity != Some(0)).then_some(ChannelStep::Sent {
            ticket: ticket as u32,
            bounded: self.capacity.is_some(),
        });
        // The slot this send takes was freed by the receipt `capacity` tickets earlier.
        if let Some(freed_by) = self
            .capacity
            .filter(|&capacity| capacity > 0)
            .and_then(|capacity| ticket.checked_sub(capacity as u64))
            .filter(|&freed_by| freed_by > 0)
        {
            self.learn_of_receipt(ex, freed_by);
        }
        let clock = ex.release_snapshot();
        self.queue().push_back((value, clock));
        if let Some(step) = described {
            ex.describe_channel_step(step);
        }
        Ok(ticket)
    }

    /// Dequeues a message, or says whether the channel is disconnected.
    fn pop(&self, ex: &mut Execution, idx: ObjIdx) -> Result<T, bool> {
        let ObjState::Channel {
            len,
            senders,
            received,
            ..
        } = &mut ex.objects[idx as usize].state
        else {
            unreachable!("a channel handle points at another kind of object");
        };
        let ticket = (*received + 1) as u32;
        match self.queue().pop_front() {
            Some((value, sent_at)) => {
                *len -= 1;
                *received += 1;
                let me = ex.me();
                ex.threads[me].clock.join(&sent_at);
                if self.capacity.is_some() {
                    let clock = ex.release_snapshot();
                    self.receipts().push_back((u64::from(ticket), clock));
                }
                ex.describe_channel_step(ChannelStep::Received { ticket });
                Ok(value)
            }
            None => {
                let disconnected = *senders == 0;
                ex.describe_channel_step(ChannelStep::FoundNone { ticket });
                Err(disconnected)
            }
        }
    }

    #[track_caller]
    fn send_blocking(&self, value: T, site: Site) -> Result<(), SendError<T>> {
        let commutes = if self.capacity.is_none() { COMMUTES } else { 0 };
        let idx = self.schedule_with(OpKind::Send, commutes, false, site);
        let rendezvous = self.capacity == Some(0);
        let pushed =
            runtime::with(|ex| self.push(ex, idx, value).map(|ticket| (ticket, rendezvous)));
        match pushed {
            Err(value) => Err(SendError(value)),
            Ok((ticket, true)) => {
                runtime::with(|ex| {
                    let me = ex.me();
                    ex.threads[me].ticket = ticket;
                });
                self.schedule(OpKind::SendWait, false, site);
                runtime::with(|ex| self.learn_of_receipt(ex, ticket));
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }

    /// Counts out an endpoint whose drop no thread can observe, without a scheduling point,
    /// and says whether it did. A sender that is not the last one changes nothing any thread
    /// can observe: only the last sender's drop disconnects the channel, and a disconnection
    /// orders nothing. Which of two senders turns out to be the last still varies, because
    /// the steps that bring their threads to the drop are ordered both ways. A scheduling
    /// point here would only multiply the schedules of every program that clones a sender per
    /// thread (by 19 on shuttle's barrier test of three threads under `dfs`). Likewise the
    /// last sender once the receiver is gone (only the receiver sees senders disconnect) and
    /// the receiver once every sender is gone (only a sender sees the receiver disconnect, and
    /// no sender can be made again): each drop then ends a channel that nobody can use any
    /// more, so its place among the other threads' steps changes no state another thread can
    /// read. An async task that sends its waker and finishes with its sender dropped after the
    /// receiver is one such drop per task, and `dfs` branched at each.
    fn drop_unobserved(&self, sender: bool) -> bool {
        runtime::with(|ex| {
            let idx = ex.object(&self.handle, ObjectKind::Channel);
            match &mut ex.objects[idx as usize].state {
                ObjState::Channel {
                    senders,
                    receiver_alive,
                    ..
                } if sender && (*senders > 1 || !*receiver_alive) => {
                    *senders = senders.saturating_sub(1);
                    true
                }
                ObjState::Channel {
                    senders,
                    receiver_alive,
                    ..
                } if !sender && *senders == 0 => {
                    *receiver_alive = false;
                    true
                }
                _ => false,
            }
        })
    }

    fn add_sender(&self) {
        runtime::with(|ex| {
            let idx = ex.object(&self.handle, ObjectKind::Channel);
            if let ObjState::Channel { senders, .. } = &mut ex.objects[idx as usize].state {
                *senders += 1;
            }
        });
    }

    fn drop_endpoint(&self, sender: bool) {
        if !runtime::in_execution() {
            return;
        }
        if self.drop_unobserved(sender) {
            return;
        }
        let commutes = if sender { COMMUTES } else { 0 };
        let idx = self.schedule_with(OpKind::Poll, commutes, false, self.handle.site());
        runtime::with(|ex| {
            if let ObjState::Channel {
                senders,
                receiver_alive,
                ..
            } = &mut ex.objects[idx as usize].state
            {
                if sender {
                    *senders = senders.saturating_sub(1);
                } else {
                    *receiver_alive = false;
                }
            }
            ex.describe_channel_step(if sender {
                ChannelStep::SenderDropped
            } else {
                ChannelStep::ReceiverDropped
            });
            ex.release(idx);
        });
    }
}

/// Creates an unbounded channel.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let channel = Channel::new(None, Location::caller());
    (
        Sender {
            channel: channel.clone(),
        },
        Receiver { channel },
    )
}

/// Creates a channel holding at most `bound` messages; `bound == 0` makes a rendezvous
/// channel.
#[track_caller]
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let channel = Channel::new(Some(bound), Location::caller());
    (
        SyncSender {
            channel: channel.clone(),
        },
        Receiver { channel },
    )
}

/// The sending half of an unbounded channel.
pub struct Sender<T> {
    channel: Arc<Channel<T>>,
}

impl<T> Sender<T> {
    /// Sends `value`; fails only if the receiver is gone.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.channel.send_blocking(value, Location::caller())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        self.channel.add_sender();
        Sender {
            channel: self.channel.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.channel.drop_endpoint(true);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

/// The sending half of a bounded channel.
pub struct SyncSender<T> {
    channel: Arc<Channel<T>>,
}

impl<T> SyncSender<T> {
    /// Sends `value`, blocking while the channel is full (or, for a rendezvous channel, until
    /// the receiver takes it).
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.channel.send_blocking(value, Location::caller())
    }

    /// Sends `value` if there is room now (for a rendezvous channel: if the receiver is
    /// waiting).
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        let rendezvous = self.channel.capacity == Some(0);
        let idx = self.channel.schedule_with(
            OpKind::Poll,
            if rendezvous { OFFERS } else { 0 },
            false,
            Location::caller(),
        );
        runtime::with(|ex| {
            let sent = self.offer(ex, idx, value);
            if rendezvous {
                let taken = sent.is_ok();
                ex.describe_channel_step(ChannelStep::Offered { taken });
            }
            sent
        })
    }

    /// `try_send`'s effect once scheduled: sends `value` on the channel, object `idx`, if there
    /// is room now.
    fn offer(&self, ex: &mut Execution, idx: ObjIdx, value: T) -> Result<(), TrySendError<T>> {
        let ObjState::Channel {
            len,
            capacity,
            receiver_alive,
            ..
        } = &ex.objects[idx as usize].state
        else {
            unreachable!("a channel handle points at another kind of object");
        };
        if !*receiver_alive {
            return Err(TrySendError::Disconnected(value));
        }
        let room = match *capacity {
            Some(0) => {
                *len == 0
                    && ex.threads.iter().any(|t| {
                        !t.finished && t.pending.kind == OpKind::Recv && t.pending.object == idx
                    })
            }
            Some(capacity) => *len < capacity,
            None => true,
        };
        if !room {
            return Err(TrySendError::Full(value));
        }
        self.channel
            .push(ex, idx, value)
            .map(|_| ())
            .map_err(TrySendError::Disconnected)
    }
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> SyncSender<T> {
        self.channel.add_sender();
        SyncSender {
            channel: self.channel.clone(),
        }
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        self.channel.drop_endpoint(true);
    }
}

impl<T> fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncSender").finish_non_exhaustive()
    }
}

/// The receiving half of a channel.
pub struct Receiver<T> {
    channel: Arc<Channel<T>>,
}

// SAFETY: see `Channel`; like std's, the receiver may move between threads.
unsafe impl<T: Send> Send for Receiver<T> {}

impl<T> Receiver<T> {
    /// Blocks until a message arrives; fails when the channel is empty and every sender is
    /// gone.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.recv_at(Location::caller())
    }

    /// [`Receiver::recv`] as called at `site`.
    #[track_caller]
    fn recv_at(&self, site: Site) -> Result<T, RecvError> {
        let idx = self.channel.schedule(OpKind::Recv, false, site);
        runtime::with(|ex| self.channel.pop(ex, idx)).map_err(|_| RecvError)
    }

    /// Takes a message if one is waiting.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.try_recv_at(Location::caller())
    }

    /// [`Receiver::try_recv`] as called at `site`.
    #[track_caller]
    fn try_recv_at(&self, site: Site) -> Result<T, TryRecvError> {
        let idx = self.channel.schedule(OpKind::Poll, false, site);
        runtime::with(|ex| self.channel.pop(ex, idx)).map_err(|disconnected| {
            if disconnected {
                TryRecvError::Disconnected
            } else {
                TryRecvError::Empty
            }
        })
    }

    /// Like [`Receiver::recv`], but may also give up at any point after it started, the virtual
    /// clock then moving to `timeout` after the call (see [`crate::time`]); a timeout the clock
    /// cannot reach (`Duration::MAX`) never ends the wait.
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        let timed = runtime::with(|ex| {
            let deadline = ex.reachable_deadline_after(timeout);
            if let Some(deadline) = deadline {
                ex.set_deadline(deadline);
            }
            deadline.is_some()
        });
        let idx = self
            .channel
            .schedule(OpKind::Recv, timed, Location::caller());
        runtime::with(|ex| self.channel.pop(ex, idx)).map_err(|disconnected| {
            if disconnected {
                RecvTimeoutError::Disconnected
            } else {
                RecvTimeoutError::Timeout
            }
        })
    }

    /// Iterates over messages until the channel disconnects. Each receive is reported at the
    /// call of `iter` (`Iterator::next` cannot know its caller), in the program's loop rather
    /// than inside this module.
    #[track_caller]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            receiver: self,
            site: Location::caller(),
        }
    }

    /// Iterates over the messages waiting now, each reported at the call of `try_iter`.
    #[track_caller]
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter {
            receiver: self,
            site: Location::caller(),
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.channel.drop_endpoint(false);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// Blocking iterator over a receiver's messages.
#[derive(Debug)]
pub struct Iter<'a, T> {
    receiver: &'a Receiver<T>,
    site: Site,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.recv_at(self.site).ok()
    }
}

/// Non-blocking iterator over the messages waiting now.
#[derive(Debug)]
pub struct TryIter<'a, T> {
    receiver: &'a Receiver<T>,
    site: Site,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.try_recv_at(self.site).ok()
    }
}

/// Owning blocking iterator over a receiver's messages.
#[derive(Debug)]
pub struct IntoIter<T> {
    receiver: Receiver<T>,
    site: Site,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.receiver.recv_at(self.site).ok()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    #[track_caller]
    fn into_iter(self) -> IntoIter<T> {
        IntoIter {
            receiver: self,
            site: Location::caller(),
        }
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    #[track_caller]
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}
