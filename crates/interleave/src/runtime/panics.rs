//! Captures the message and location of panics raised inside executions, so the failure report
//! can show them, and keeps the default hook from printing them: an exploration may pass
//! through panicking executions and only the final report should speak.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Installs (once per process) a hook that records panics raised inside executions and
/// forwards every other panic to the hook that was installed before.
pub(crate) fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if super::in_execution() {
                let site = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                let message = payload_message(info.payload());
                LAST_PANIC.with(|last| *last.borrow_mut() = Some((message, site)));
            } else {
                previous(info);
            }
        }));
    });
}

/// The message and location of the panic whose payload is `payload`.
pub(crate) fn describe(payload: Box<dyn Any + Send>) -> (String, Option<String>) {
    let captured = LAST_PANIC.with(|last| last.borrow_mut().take());
    match captured {
        Some((message, site)) => (message, Some(site)),
        None => (payload_message(payload.as_ref()), None),
    }
}

fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}
