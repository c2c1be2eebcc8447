//! Atomic sets and units of work: what must stay consistent, and the code that must keep it
//! so (Vaziri, Tip and Dolby's atomic-set serializability, as seed 003 uses it).
//!
//! An *atomic set* is a group of tracked objects (`cell::Var`s, atomics, ...) bound by a
//! consistency property, such as the `checking` and `savings` balances of one account. A *unit
//! of work* is code expected to keep that property: an execution is correct when, on every
//! atomic set, the units of work that touched it are conflict-serializable. Eleven problematic
//! access patterns characterise the violations exactly, and the `rm` and `assetfuzzer`
//! strategies report executions that match one.
//!
//! # The defaults: declare (almost) nothing
//!
//! - **Units of work** are explicit: wrap code in [`unit_of_work`], or put the
//!   `#[interleave::unit_of_work]` attribute on a function. A unit nested in another belongs
//!   to the outermost one, as the paper defines. Steps outside every unit are units of their
//!   own (one step each): they can interleave a unit, never be interleaved.
//! - **Atomic sets** follow ownership: a method unit of work (`#[unit_of_work]` on a method
//!   taking `&self` or `&mut self`, or [`unit_of_work_on`]) declares its receiver an *owner*,
//!   and every tracked object stored inside the owner's memory (the fields of one struct value,
//!   the way Java tools group an instance's fields) forms one atomic set. Objects inside no
//!   declared owner are atomic sets of their own, so single-variable patterns (a stale read, a
//!   lost update) are still seen.
//!
//! # Overriding them
//!
//! - [`declare`] makes any value an owner without a unit of work, for example in a
//!   constructor.
//! - A smaller owner inside a bigger one wins, so declaring a field that is itself a struct
//!   splits that field's objects into an atomic set of their own.
//! - Objects that live outside the owner's memory (behind a `Box` or in a `Vec`'s buffer) are
//!   not in its set. Declare the boxed value itself as the owner to group them.
//!
//! Outside an interleave execution (a plain `cargo test` run, or another checker) the functions
//! here only run their closure.
//!
//! ```
//! use interleave::cell::Var;
//! use interleave::sync::Mutex;
//!
//! struct Account {
//!     monitor: Mutex<()>,
//!     checking: Var<i64>,
//!     savings: Var<i64>,
//! }
//!
//! impl Account {
//!     // One unit of work on the account's atomic set {checking, savings}.
//!     fn credit_interest(&self, percent: i64) {
//!         interleave::atomic_set::unit_of_work_on("credit_interest", self, || {
//!             let _monitor = self.monitor.lock().unwrap();
//!             self.checking.set(self.checking.get() * (100 + percent) / 100);
//!             self.savings.set(self.savings.get() * (100 + percent) / 100);
//!         })
//!     }
//! }
//! # interleave::check(|| {
//! #     let account = Account { monitor: Mutex::new(()), checking: Var::new(100), savings: Var::new(200) };
//! #     account.credit_interest(5);
//! # });
//! ```

use std::panic::Location;

use crate::runtime;
use crate::runtime::op::ObjectId;

/// A value declared as the owner of an atomic set, made by [`Owner::of`].
#[derive(Clone, Copy, Debug)]
pub struct Owner {
    address: usize,
    size: usize,
    type_name: &'static str,
}

impl Owner {
    /// The owner `value`: its memory (`size_of_val` bytes from its address) holds the set.
    pub fn of<T: ?Sized>(value: &T) -> Owner {
        Owner {
            address: value as *const T as *const u8 as usize,
            size: std::mem::size_of_val(value),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Runs `f` as a unit of work named `name`.
#[track_caller]
pub fn unit_of_work<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    run_unit(name, None, Location::caller(), f)
}

/// Runs `f` as a unit of work named `name`, declared on `owner`'s atomic set (see
/// [`declare`]).
#[track_caller]
pub fn unit_of_work_on<T: ?Sized, R>(name: &'static str, owner: &T, f: impl FnOnce() -> R) -> R {
    run_unit(name, Some(Owner::of(owner)), Location::caller(), f)
}

/// Like [`unit_of_work_on`], with the owner taken beforehand (what the attribute macro uses,
/// so a `&mut self` method can hand `self` to `f`).
#[track_caller]
pub fn unit_of_work_in<R>(name: &'static str, owner: Option<Owner>, f: impl FnOnce() -> R) -> R {
    run_unit(name, owner, Location::caller(), f)
}

/// Declares `owner` the owner of an atomic set: the tracked objects stored in its memory.
pub fn declare<T: ?Sized>(owner: &T) {
    if runtime::in_execution() {
        let owner = Owner::of(owner);
        runtime::with(|ex| ex.declare_owner(owner.address, owner.size, owner.type_name));
    }
}

#[track_caller]
fn run_unit<R>(
    name: &'static str,
    owner: Option<Owner>,
    site: &'static Location<'static>,
    f: impl FnOnce() -> R,
) -> R {
    if !runtime::in_execution() {
        return f();
    }
    runtime::with(|ex| {
        let owner = owner.map(|o| ex.declare_owner(o.address, o.size, o.type_name));
        ex.enter_unit(name, site, owner);
    });
    // Leaves the unit even when `f` panics, so the record stays well formed for the report.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            if runtime::in_execution() {
                runtime::with(|ex| ex.leave_unit());
            }
        }
    }
    let _leave = Leave;
    f()
}

/// What one execution declared, as analyses and strategies see it ([`Outcome::declarations`](
/// crate::strategy::Outcome::declarations)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    /// The outermost units of work, in the order they were entered.
    pub units: Vec<UnitInfo>,
    /// The declared owners, in declaration order.
    pub owners: Vec<OwnerInfo>,
    /// The atomic set of every object the execution registered.
    pub sets: Vec<(ObjectId, SetId)>,
}

pub use crate::runtime::annotations::{OwnerInfo, UnitInfo};

/// An atomic set: the objects of one owner, or one object on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetId {
    /// The objects inside owner `n` (an index into [`Declarations::owners`]).
    Owner(usize),
    /// An object in no declared owner.
    Single(ObjectId),
}

impl Declarations {
    /// The declarations of `ex`, or `None` when it declared no unit of work.
    pub(crate) fn of(ex: &runtime::Recording) -> Option<Declarations> {
        let annotations = &ex.annotations;
        if annotations.units.is_empty() {
            return None;
        }
        let owners = &annotations.owners;
        let sets = ex
            .objects
            .iter()
            .map(|object| {
                // The smallest owner whose memory holds the object's handle where it was last
                // used (the latest declared among equals: a value moved into its final place).
                let owner = owners
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| {
                        o.address <= object.address && object.address < o.address + o.size
                    })
                    .min_by_key(|(i, o)| (o.size, std::cmp::Reverse(*i)))
                    .map(|(i, _)| i);
                (
                    object.id,
                    owner.map_or(SetId::Single(object.id), SetId::Owner),
                )
            })
            .collect();
        Some(Declarations {
            units: annotations.units.clone(),
            owners: owners.iter().map(|o| o.info.clone()).collect(),
            sets,
        })
    }

    /// The atomic set of `object`.
    pub fn set_of(&self, object: ObjectId) -> SetId {
        self.sets
            .iter()
            .find(|(id, _)| *id == object)
            .map_or(SetId::Single(object), |(_, set)| *set)
    }
}
