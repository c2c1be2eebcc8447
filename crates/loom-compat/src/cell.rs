//! `loom::cell`: `UnsafeCell` whose accesses are scheduling points and are checked for data
//! races, as loom's are.

pub use interleave::cell::UnsafeCell;
