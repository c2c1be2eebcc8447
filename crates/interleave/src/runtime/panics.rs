//! Captures the message and location of panics raised inside executions, so the failure report
//! can show them, and keeps the default hook from printing them: an exploration may pass
//! through panicking executions and only the final report should speak.
//!
//! One exception: a panic that Rust will not unwind (a destructor that panicked while its
//! thread was already unwinding) is followed by an abort of the process, so `explore` never
//! returns its report. The hook then prints the report itself, with both panics' messages,
//! before letting the default hook speak.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::Once;

/// A panic seen by the hook: its message and where it was raised.
struct Captured {
    message: String,
    site: String,
}

thread_local! {
    /// The last two panics raised on this OS thread inside an execution, oldest first: the
    /// last one is normally the panic a thread ends with; the one before it is what was
    /// unwinding when a destructor panicked.
    static RECENT: RefCell<Vec<Captured>> = const { RefCell::new(Vec::new()) };
    /// `RECENT` may hold panics: a destructor-free flag, so the reset at every execution's
    /// start and end costs one load where the look at `RECENT` itself (registered for its
    /// destructor, borrowed) cost about 36 instructions each time (callgrind, `fixed_costs`).
    static ANY_RECENT: Cell<bool> = const { Cell::new(false) };
}

/// How many panics `RECENT` keeps.
const KEPT: usize = 2;

/// The messages of the panics Rust raises when a panic cannot unwind: a destructor panicked
/// during unwinding, or a panic reached a function that cannot unwind. The process aborts
/// right after the hook returns.
const NON_UNWINDING: [&str; 2] = [
    "panic in a destructor during cleanup",
    "panic in a function that cannot unwind",
];

/// Installs (once per process) a hook that records panics raised inside executions and
/// forwards every other panic to the hook that was installed before.
pub(crate) fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic while the runtime is borrowed comes from the runtime or a strategy, not
            // from the test: it escapes `explore`, and its message must be printed.
            if !super::in_execution() || super::runtime_borrowed() {
                previous(info);
                return;
            }
            let site = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            let message = payload_message(info.payload());
            if NON_UNWINDING.contains(&message.as_str()) {
                let (unwinding, destructor) = RECENT.with(|recent| {
                    let mut recent = recent.borrow_mut();
                    let destructor = recent.pop();
                    (recent.pop(), destructor)
                });
                let describe = |captured: Option<Captured>| {
                    captured.map(|c| (c.message, c.site)).unwrap_or_default()
                };
                super::report_before_abort(describe(unwinding), describe(destructor));
                previous(info);
                return;
            }
            let static_message = info.payload().downcast_ref::<&'static str>().copied();
            super::note_panic(&message, &site, static_message);
            RECENT.with(|recent| {
                let mut recent = recent.borrow_mut();
                if recent.len() == KEPT {
                    recent.remove(0);
                }
                recent.push(Captured { message, site });
            });
            ANY_RECENT.set(true);
        }));
    });
}

/// The message and location of the panic whose payload is `payload`, the panic a thread ended
/// with. The location is the hook's record of the last panic when that panic carried the same
/// message; otherwise the payload was raised without the hook (`resume_unwind`) and only its
/// own message is known, not an earlier caught panic's.
pub(crate) fn describe(payload: &(dyn Any + Send)) -> (String, Option<String>) {
    let message = payload_message(payload);
    let last = RECENT.with(|recent| recent.borrow_mut().drain(..).next_back());
    match last {
        Some(captured) if captured.message == message => (message, Some(captured.site)),
        _ => (message, None),
    }
}

/// Forgets the panics of an earlier execution on this OS thread.
pub(crate) fn reset() {
    if ANY_RECENT.replace(false) {
        RECENT.with(|recent| recent.borrow_mut().clear());
    }
}

pub(crate) fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}
