//! `Barrier`: `n` threads wait until all have arrived; the last to arrive is the leader.

use std::panic::Location;

use crate::runtime;
use crate::runtime::object::{ObjState, ObjectHandle};
use crate::runtime::op::ObjectKind;
use crate::runtime::op_on;

/// A barrier for `n` threads.
#[derive(Debug)]
pub struct Barrier {
    handle: ObjectHandle,
    parties: usize,
}

/// Whether this thread was the barrier's leader (the last to arrive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// True for exactly one thread per barrier generation.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier that releases its waiters when `n` threads have arrived.
    #[track_caller]
    pub const fn new(n: usize) -> Barrier {
        Barrier {
            handle: ObjectHandle::new(Location::caller()),
            parties: n,
        }
    }

    /// Blocks until `n` threads have called `wait`.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let site = Location::caller();
        let idx = runtime::switch_on(
            &self.handle,
            ObjectKind::Barrier,
            op_on!(BarrierArrive),
            site,
        )
        .index();
        let leader = runtime::with(|ex| {
            ex.release(idx);
            let me = ex.me();
            let ObjState::Barrier {
                parties,
                arrived,
                generation,
            } = &mut ex.objects[idx as usize].state
            else {
                unreachable!("a Barrier handle points at another kind of object");
            };
            *parties = self.parties;
            *arrived += 1;
            let this_generation = *generation;
            let leader = if *arrived >= self.parties {
                *arrived = 0;
                *generation += 1;
                true
            } else {
                ex.threads[me].barrier_generation = this_generation;
                false
            };
            ex.describe_barrier_step(this_generation as u32, leader);
            (leader, this_generation)
        });
        let (leader, generation) = leader;
        if !leader {
            runtime::switch_on(
                &self.handle,
                ObjectKind::Barrier,
                op_on!(BarrierLeave),
                site,
            );
            runtime::with(|ex| ex.describe_barrier_step(generation as u32, false));
        }
        runtime::with(|ex| ex.acquire(idx));
        BarrierWaitResult(leader)
    }
}
