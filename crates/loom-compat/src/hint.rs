//! `loom::hint`: a spin-loop hint is a scheduling point, as in loom.

pub use interleave::hint::spin_loop;
