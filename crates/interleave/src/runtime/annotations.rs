//! What a program declares about itself while it runs: units of work (spans of a thread's
//! steps), atomic-set owners (values whose memory holds the objects of one atomic set), and
//! branch events (`interleave::branch!`). `crate::atomic_set` and `crate::branch` are the
//! user-facing side; the analyses read the record after the execution. When an analysis asks
//! for it, the values atomics held around each access are logged here too.

use super::op::Site;
use super::Execution;

/// One outermost unit of work of an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitInfo {
    /// The thread that ran it.
    pub thread: usize,
    /// Its name.
    pub name: &'static str,
    /// Where it was entered.
    pub site: Site,
    /// The owner it was declared on (an index into `atomic_set::Declarations::owners`).
    pub owner: Option<usize>,
    /// Its steps: the thread's steps from `begin` (inclusive) to `end` (exclusive).
    pub begin: usize,
    /// See `begin`; `usize::MAX` when the execution ended inside the unit.
    pub end: usize,
}

/// A declared owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerInfo {
    /// Its type.
    pub type_name: &'static str,
    /// How many owners of this type were declared before it in the execution.
    pub instance: u32,
}

/// A value declared as the owner of an atomic set: every tracked object whose handle lies in
/// its `size` bytes from `address` belongs to the set (the smallest such owner wins).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerDecl {
    pub address: usize,
    pub size: usize,
    /// What analyses see of it.
    pub info: OwnerInfo,
}

/// The declarations of one execution. Units are recorded as analyses see them (`UnitInfo`,
/// with `end` at `usize::MAX` while a unit is open).
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    pub units: Vec<UnitInfo>,
    pub owners: Vec<OwnerDecl>,
    pub branches: Vec<BranchRecord>,
    /// Filled only when `Limits::log_values` is set.
    pub values: Vec<ValueRecord>,
}

/// One evaluated branch condition (`interleave::branch!`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchRecord {
    pub thread: usize,
    /// The number of steps recorded before it: the branch sits between step `at - 1` and
    /// step `at`.
    pub at: usize,
    pub site: Site,
    pub taken: bool,
}

/// The value an atomic held before and after the access recorded as step `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueRecord {
    pub step: usize,
    pub before: u64,
    pub after: u64,
}

impl Annotations {
    pub fn clear(&mut self) {
        self.units.clear();
        self.owners.clear();
        self.branches.clear();
        self.values.clear();
    }
}

impl Execution {
    /// Declares the value at `address` (`size` bytes, of type `type_name`) an atomic-set owner;
    /// declaring the same value again returns its first declaration.
    pub fn declare_owner(&mut self, address: usize, size: usize, type_name: &'static str) -> usize {
        let owners = &mut self.annotations.owners;
        if let Some(known) = owners
            .iter()
            .position(|o| o.address == address && o.size == size && o.info.type_name == type_name)
        {
            return known;
        }
        let instance = owners
            .iter()
            .filter(|o| o.info.type_name == type_name)
            .count() as u32;
        owners.push(OwnerDecl {
            address,
            size,
            info: OwnerInfo {
                type_name,
                instance,
            },
        });
        owners.len() - 1
    }

    /// The running thread enters a unit of work; nested units belong to the outermost one.
    pub fn enter_unit(&mut self, name: &'static str, site: Site, owner: Option<usize>) {
        let me = self.current;
        let begin = self.events.len();
        let slot = &mut self.threads[me];
        slot.unit_depth += 1;
        if slot.unit_depth == 1 {
            slot.unit = Some(self.annotations.units.len());
            self.annotations.units.push(UnitInfo {
                thread: me,
                name,
                site,
                owner,
                begin,
                end: usize::MAX,
            });
        }
    }

    /// The running thread evaluated a branch condition at `site`.
    pub fn record_branch(&mut self, site: Site, taken: bool) {
        self.annotations.branches.push(BranchRecord {
            thread: self.current,
            at: self.events.len(),
            site,
            taken,
        });
    }

    /// The running thread's last step, an atomic access, changed the value from `before` to
    /// `after` (equal for a load).
    pub fn record_value(&mut self, before: u64, after: u64) {
        self.annotations.values.push(ValueRecord {
            step: self.events.len().saturating_sub(1),
            before,
            after,
        });
    }

    /// The running thread leaves the unit of work it entered last.
    pub fn leave_unit(&mut self) {
        let me = self.current;
        let end = self.events.len();
        let slot = &mut self.threads[me];
        slot.unit_depth = slot.unit_depth.saturating_sub(1);
        if slot.unit_depth == 0 {
            if let Some(unit) = slot.unit.take() {
                self.annotations.units[unit].end = end;
            }
        }
    }
}
