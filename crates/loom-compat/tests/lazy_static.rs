//! `loom::lazy_static!` and the `loom::lazy_static` module: a static declared with the macro
//! starts from its initial value in every execution, and the module names what loom's does
//! (tokio's loom build imports `loom::lazy_static::AccessError`).

use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

loom::lazy_static! {
    static ref HITS: AtomicUsize = AtomicUsize::new(0);
}

/// Two threads count into the static; were its value kept from one execution to the next, the
/// total would grow past 2.
#[test]
fn a_lazy_static_starts_afresh_in_every_execution() {
    static EXECUTIONS: StdAtomicUsize = StdAtomicUsize::new(0);
    loom::model(|| {
        EXECUTIONS.fetch_add(1, Ordering::Relaxed);
        let other = thread::spawn(|| HITS.fetch_add(1, Ordering::SeqCst));
        HITS.fetch_add(1, Ordering::SeqCst);
        other.join().unwrap();
        assert_eq!(HITS.load(Ordering::SeqCst), 2);
    });
    assert!(
        EXECUTIONS.load(Ordering::Relaxed) > 1,
        "the model explored one schedule only"
    );
}

/// `loom::lazy_static::AccessError` is the error of `LocalKey::try_with`, as in loom.
#[test]
fn the_module_names_the_thread_local_access_error() {
    assert_eq!(
        std::any::type_name::<loom::lazy_static::AccessError>(),
        std::any::type_name::<loom::thread::AccessError>()
    );
}
