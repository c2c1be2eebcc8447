//! Runs an exploration as the first of a test, for tests that compare explorations token for
//! token: a token names the exploration that recorded it, its test and, for a test's second and
//! later explorations, their number (`tests::table#2`), so only explorations that are each the
//! first of their test on a thread named after it record the same tokens.

/// Runs `explore` on a fresh thread named after the running test, where it is the first
/// exploration, and returns what it returns; a panic in it is raised again here.
pub fn first_exploration<R: Send>(explore: impl FnOnce() -> R + Send) -> R {
    let name = std::thread::current().name().map(str::to_string);
    std::thread::scope(|scope| {
        let mut thread = std::thread::Builder::new();
        if let Some(name) = name {
            thread = thread.name(name);
        }
        let handle = thread
            .spawn_scoped(scope, explore)
            .expect("a thread for the exploration");
        handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
