//! `loom::alloc` (used by oneshot's loom build for its own `Box`): blocks from `alloc` and
//! values in a `Track` are leak-checked at the end of each execution as `Arc`s are, and freeing
//! them, from any thread, passes.

use loom::alloc::{alloc, alloc_zeroed, dealloc, Layout, Track};
use loom::thread;

/// Allocates a `u64` on the main thread and frees it on a spawned one, racing with nothing.
#[test]
fn a_block_freed_on_another_thread_passes() {
    loom::model(|| {
        let layout = Layout::new::<u64>();
        // SAFETY: the layout is non-zero-sized; the block is written before it is read.
        let ptr = unsafe { alloc(layout) } as *mut u64;
        assert!(!ptr.is_null());
        unsafe { ptr.write(7) };
        let address = ptr as usize;
        thread::spawn(move || {
            let ptr = address as *mut u64;
            // SAFETY: the block was allocated above with this layout and is freed once.
            unsafe {
                assert_eq!(ptr.read(), 7);
                dealloc(ptr as *mut u8, layout);
            }
        })
        .join()
        .unwrap();
    });
}

#[test]
#[should_panic(expected = "memory leak: 1 tracked allocation(s)")]
fn a_block_never_freed_is_a_leak() {
    loom::model(|| {
        // SAFETY: the layout is non-zero-sized.
        let ptr = unsafe { alloc_zeroed(Layout::new::<u32>()) };
        assert_eq!(unsafe { *ptr }, 0);
    });
}

#[test]
fn a_dropped_or_unwrapped_track_passes() {
    loom::model(|| {
        let mut tracked = Track::new(1);
        *tracked.get_mut() += 1;
        assert_eq!(*tracked.get_ref(), 2);
        drop(tracked);
        assert_eq!(Track::new(String::from("x")).into_inner(), "x");
    });
}

#[test]
#[should_panic(
    expected = "memory leak: 1 tracked allocation(s) still alive at the end of the execution: Track created at"
)]
fn a_forgotten_track_is_a_leak() {
    loom::model(|| std::mem::forget(Track::new(3)));
}
