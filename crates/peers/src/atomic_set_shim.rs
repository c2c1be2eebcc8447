//! `atomic_set`: the function forms of `interleave::atomic_set` for the peers' `rt` modules.
//!
//! The programs declare units of work (and, through a method's receiver, atomic sets) so that
//! interleave's atomic-set monitor can check their executions. Neither shuttle nor loom checks
//! atomic-set serializability, so here the declarations mean nothing and every function only
//! runs its closure. That adds no scheduling point (interleave's declarations are not steps
//! either), so the peers run the same programs as before. The signatures are interleave's, so
//! the same program sources compile against every runtime. Only the function forms exist: the
//! `#[interleave::unit_of_work]` attribute expands to paths into `interleave` itself, so the
//! programs do not use it.

/// Runs `f`; interleave would record it as a unit of work named `name`.
pub fn unit_of_work<R>(_name: &'static str, f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `f`; interleave would record it as a unit of work named `name` on `owner`'s atomic
/// set.
pub fn unit_of_work_on<T: ?Sized, R>(_name: &'static str, _owner: &T, f: impl FnOnce() -> R) -> R {
    f()
}

/// Does nothing; interleave would declare `owner` the owner of an atomic set.
pub fn declare<T: ?Sized>(_owner: &T) {}
