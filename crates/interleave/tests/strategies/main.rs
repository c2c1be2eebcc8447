//! The strategies and analyses end to end: each finds its bug within a stated budget and
//! nothing in the fixed twin; the systematic ones agree with brute-force enumeration.

mod helpers;

mod async_dfs;
mod atom_fuzzer;
mod atomic_sets;
mod bounded_dpor;
mod condvar_waiters;
mod deadlock_prediction;
mod dfs_yield_limit;
mod exhaustion;
mod partial_order_sampling;
mod portfolio;
mod race_fuzzer;
mod reads_from_fuzzing;
mod selective_uniform;
mod spin_waits;
mod ssb;
mod systematic;
mod variable_bounding;
