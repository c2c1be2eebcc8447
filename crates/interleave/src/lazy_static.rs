//! Statics with one value per execution: `interleave::lazy_static!` and [`Lazy`].
//!
//! A plain `static` holding an interleave primitive outlives every execution: its data carries
//! over from one execution to the next, and two explorations that run at the same time (cargo
//! runs tests on parallel OS threads) would share it, which the runtime refuses (see
//! `runtime/live.rs`). A `lazy_static!` value instead lives in the execution: the first access
//! in an execution runs the initialiser (once, like `std::sync::LazyLock`: a thread that
//! arrives while another initialises waits for it), every later access of that execution sees
//! the same value, and at the end of the execution the values are dropped, the latest
//! initialised first, each while the others are still there to use. Each execution, on
//! whatever OS thread it runs, starts from a fresh value.
//!
//! A reference to the value is valid until the end of the execution that created it. Threads of
//! the test cannot outlive it, so only a reference smuggled out of the execution (into a std
//! global, to a std thread) could dangle; keeping one is a bug in the test.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::panic::Location;

use crate::runtime;
use crate::runtime::op::Site;
use crate::sync::Once;

/// Declares statics whose value is created anew in every execution, shaped like the
/// `lazy_static` crate's macro.
///
/// ```
/// use interleave::sync::Mutex;
///
/// interleave::lazy_static! {
///     static ref TOTAL: Mutex<u64> = Mutex::new(0);
/// }
///
/// interleave::check(|| {
///     let worker = interleave::thread::spawn(|| *TOTAL.lock().unwrap() += 1);
///     *TOTAL.lock().unwrap() += 1;
///     worker.join().unwrap();
///     // Every execution starts from 0, so the total is 2 in each of them.
///     assert_eq!(*TOTAL.lock().unwrap(), 2);
/// });
/// ```
#[macro_export]
macro_rules! lazy_static {
    () => {};
    ($(#[$attr:meta])* $vis:vis static ref $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::lazy_static::Lazy<$t> =
            $crate::lazy_static::Lazy::new(|| $init);
        $crate::lazy_static!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static ref $name:ident: $t:ty = $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::lazy_static::Lazy<$t> =
            $crate::lazy_static::Lazy::new(|| $init);
    };
}

/// A value created on first use in each execution and dropped at the execution's end; what
/// [`lazy_static!`](crate::lazy_static!) declares.
pub struct Lazy<T: 'static> {
    init: fn() -> T,
    site: Site,
}

// SAFETY: the value lives in the execution, and all threads of an execution run on one OS
// thread, one at a time; `T: Sync` because the test's threads share it as they would a static.
unsafe impl<T: Sync + 'static> Sync for Lazy<T> {}

impl<T: 'static> Lazy<T> {
    /// A static that `init` initialises in every execution.
    #[track_caller]
    pub const fn new(init: fn() -> T) -> Lazy<T> {
        Lazy {
            init,
            site: Location::caller(),
        }
    }

    /// This static's key in the execution: its address, which a `static` keeps for ever.
    fn key(&self) -> usize {
        self as *const Lazy<T> as usize
    }

    /// The value of the running execution, initialised on its first use there.
    ///
    /// # Panics
    /// Outside an execution, or if the initialiser panicked (as `std::sync::LazyLock` does).
    fn get(&self) -> &T {
        let key = self.key();
        let once = runtime::with(|ex| {
            let (guard, value) = ex
                .lazy_statics
                .guard_and_value(key, || Box::new(Once::at(self.site)));
            // SAFETY: as below.
            let once = unsafe { &*guard }
                .downcast_ref::<Once>()
                .expect("a lazy_static! guard is a Once");
            // A value whose initialiser completed is used at once, after acquiring what the
            // initialiser released, as std's `LazyLock` acquires the completion: without that,
            // the weak memory model let another thread read the value's atomics as they were
            // before the initialiser stored to them (crossbeam-epoch's collector, whose stale
            // pointers crashed its loom tests). A value stored by an initialiser that has not
            // completed yet is waited for through the `Once`.
            match value {
                Some(value) if once.acquire_completion(ex) => Err(value),
                _ => Ok(guard),
            }
        });
        let value = match once {
            Err(value) => value,
            Ok(once) => {
                // SAFETY: the `Once` is boxed in the execution's table, which keeps it until the
                // execution ends; nothing of this execution runs after that.
                let once = unsafe { &*once }
                    .downcast_ref::<Once>()
                    .expect("a lazy_static! guard is a Once");
                once.call_once(|| {
                    let value: Box<dyn Any> = Box::new((self.init)());
                    runtime::with(|ex| ex.lazy_statics.initialised(key, value));
                });
                runtime::with(|ex| ex.lazy_statics.value(key))
                    .expect("a completed lazy_static! initialiser stored its value")
            }
        };
        // SAFETY: the value is boxed in the execution's table until the execution ends (see the
        // module docs), and it was stored as a `T` under this static's key.
        unsafe { &*value }
            .downcast_ref::<T>()
            .expect("a lazy_static! value has its static's type")
    }
}

/// Initialises `lazy` for the running execution now, if it was not yet (the `lazy_static`
/// crate's `initialize`).
pub fn initialize<T: 'static>(lazy: &Lazy<T>) {
    let _ = lazy.get();
}

impl<T: 'static> Deref for Lazy<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.get()
    }
}

impl<T: 'static> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lazy")
            .field("site", &format_args!("{}", self.site))
            .finish_non_exhaustive()
    }
}
