//! `var_shim!`: the `Var<T>` of `interleave::cell` rebuilt over a peer's primitives.

/// Defines `Var<T>` with the API of `interleave::cell::Var` over a peer's atomic type (used as a
/// scheduling point before every access) and a cell type, given how to read and how to write
/// through the cell.
///
/// The scheduling point is a relaxed `swap` on an atomic private to the variable: an atomic
/// operation, so both peers may switch threads there; a read-modify-write, so every access
/// conflicts with every other access to the same variable (loom's partial-order reduction
/// explores both orders of conflicting operations only, and a load would also make loom branch
/// on which earlier store it reads); relaxed, so it adds no happens-before edge that could hide
/// a race.
#[doc(hidden)]
#[macro_export]
macro_rules! var_shim {
    (
        atomic: $Atomic:ident, ordering: $Ordering:ident, cell: $Cell:ident,
        read: |$rc:ident, $rf:ident| $read:expr,
        write: |$wc:ident, $wf:ident| $write:expr $(,)?
    ) => {
        /// A shared variable; every access is a scheduling point of the peer.
        pub struct Var<T> {
            point: $Atomic,
            value: $Cell<T>,
        }

        // SAFETY: the peer runs one thread of an execution at a time, and the closures passed to
        // `read` and `write` never re-enter the variable, so accesses never overlap.
        unsafe impl<T: Send> Sync for Var<T> {}

        impl<T> Var<T> {
            /// A new variable holding `value`.
            pub fn new(value: T) -> Self {
                Var {
                    point: $Atomic::new(false),
                    value: $Cell::new(value),
                }
            }

            fn read<R>(&self, $rf: impl FnOnce(&T) -> R) -> R {
                self.point.swap(true, $Ordering::Relaxed);
                let $rc = &self.value;
                $read
            }

            fn write<R>(&self, $wf: impl FnOnce(&mut T) -> R) -> R {
                self.point.swap(true, $Ordering::Relaxed);
                let $wc = &self.value;
                $write
            }

            /// Reads the value.
            pub fn get(&self) -> T
            where
                T: Clone,
            {
                self.read(T::clone)
            }

            /// Writes `value`.
            pub fn set(&self, value: T) {
                self.write(|slot| *slot = value);
            }

            /// Replaces the value with `f(value)` in one step.
            pub fn update(&self, f: impl FnOnce(T) -> T)
            where
                T: Clone,
            {
                self.write(|slot| *slot = f(slot.clone()));
            }

            /// Writes `value` and returns the previous value, in one step.
            pub fn replace(&self, value: T) -> T {
                self.write(|slot| std::mem::replace(slot, value))
            }

            /// Runs `f` with a shared reference to the value.
            pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
                self.read(f)
            }

            /// Runs `f` with a mutable reference to the value.
            pub fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
                self.write(f)
            }
        }

        impl<T: Default> Default for Var<T> {
            fn default() -> Self {
                Var::new(T::default())
            }
        }
    };
}
