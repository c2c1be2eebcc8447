//! The watchdog: notices an execution that stopped making progress because a thread of the
//! test blocks or spins on something interleave does not control (a `std::sync::Mutex` held
//! across a scheduling point, a loop on a std atomic, I/O), says what happened and where, and
//! ends the process. Such a thread never reaches the choke point again, so the scheduler cannot
//! run the thread it waits for: without the watchdog the test hangs for ever.
//!
//! Cost: every OS thread that runs executions has a [`Heartbeat`]; the scheduler loop stores a
//! counter into it (one relaxed store) at every coroutine switch, and nothing happens per step.
//! One watchdog OS thread per process, started by the first execution that asks for it, looks
//! at every heartbeat a few times a second. A heartbeat whose execution has not switched
//! coroutines for the timeout (`Config::watchdog`, `INTERLEAVE_WATCHDOG`) is reported.
//!
//! The report: the watchdog names the OS thread and the time without progress, then asks the
//! hung OS thread itself (with `SIGURG`, on Linux) to describe its execution: the handler runs
//! on that thread, reads the execution it interrupted (only when the runtime was not in the
//! middle of changing it) and writes the running thread, its last visible operation and site
//! with async-signal-safe calls only. The watchdog then says whether the thread was blocked in
//! the kernel or running, which tells a std lock from a spin, and exits with status 101.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use super::signal_text::{write_stderr, Text};

/// How often the watchdog looks at the heartbeats.
const TICK: Duration = Duration::from_millis(100);
/// How long the watchdog waits for the hung thread to describe itself.
const ANSWER_WAIT: Duration = Duration::from_secs(2);
/// The exit status of a process the watchdog ends: that of a failed test.
const EXIT_STATUS: i32 = 101;

/// The progress of the executions of one OS thread.
pub(crate) struct Heartbeat {
    /// Counts coroutine switches and execution starts; written by its OS thread only.
    progress: AtomicU64,
    /// Milliseconds without progress after which the watchdog reports; 0 while the OS thread
    /// runs no execution that asked for the watchdog.
    timeout_ms: AtomicU64,
    /// The progress the watchdog saw last and when it changed (the watchdog's own state).
    seen: Mutex<Option<(u64, Instant)>>,
    os_thread: String,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pthread: libc::pthread_t,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    tid: libc::c_long,
}

/// Every heartbeat of the process. The watchdog holds the lock while it reports, so a hung OS
/// thread cannot exit (and its `pthread_t` go stale) while the watchdog signals it.
static REGISTRY: Mutex<Vec<Arc<Heartbeat>>> = Mutex::new(Vec::new());

/// This OS thread's heartbeat, registered on first use and removed when the thread exits.
struct Registration(Arc<Heartbeat>);

impl Registration {
    fn new() -> Registration {
        let heartbeat = Arc::new(Heartbeat {
            progress: AtomicU64::new(0),
            timeout_ms: AtomicU64::new(0),
            seen: Mutex::new(None),
            os_thread: std::thread::current()
                .name()
                .unwrap_or("<unnamed>")
                .to_string(),
            #[cfg(any(target_os = "linux", target_os = "android"))]
            // SAFETY: `pthread_self` has no preconditions.
            pthread: unsafe { libc::pthread_self() },
            #[cfg(any(target_os = "linux", target_os = "android"))]
            // SAFETY: `gettid` has no preconditions.
            tid: unsafe { libc::syscall(libc::SYS_gettid) },
        });
        lock_registry().push(heartbeat.clone());
        Registration(heartbeat)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock_registry().retain(|beat| !Arc::ptr_eq(beat, &self.0));
    }
}

fn lock_registry() -> std::sync::MutexGuard<'static, Vec<Arc<Heartbeat>>> {
    // The registry is a list of handles; a panic elsewhere leaves it consistent.
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

thread_local! {
    static REGISTRATION: Registration = Registration::new();
}

/// Marks progress of the execution running on this OS thread while it waits for something
/// that will come without any coroutine switch (its turn at an object another exploration
/// uses, `live.rs`), so that the wait is not taken for a hang.
pub(crate) fn beat_this_thread() {
    let _ = REGISTRATION.try_with(|r| r.0.progress.fetch_add(1, Ordering::Relaxed));
}

/// The watchdog's view of one execution: alive from the execution's start to its end.
pub(crate) struct Watch(Option<Arc<Heartbeat>>);

impl Watch {
    /// Starts watching the execution about to run on this OS thread, if `timeout` is set.
    pub(crate) fn start(timeout: Option<Duration>) -> Watch {
        let Some(timeout) = timeout.filter(|t| !t.is_zero()) else {
            return Watch(None);
        };
        static START: Once = Once::new();
        START.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("interleave-watchdog".to_string())
                .spawn(watch_forever);
            // Without a watchdog thread, executions still run; a hang stays a hang.
            drop(spawned);
        });
        let Ok(heartbeat) = REGISTRATION.try_with(|r| r.0.clone()) else {
            return Watch(None);
        };
        heartbeat.progress.fetch_add(1, Ordering::Relaxed);
        let millis = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        heartbeat.timeout_ms.store(millis, Ordering::Release);
        Watch(Some(heartbeat))
    }

    /// Marks progress: called by the scheduler loop at every coroutine switch.
    #[inline(always)]
    pub(crate) fn beat(&self) {
        if let Some(heartbeat) = &self.0 {
            // Only this OS thread writes the counter, so a load and a store make an increment.
            let progress = heartbeat.progress.load(Ordering::Relaxed);
            heartbeat.progress.store(progress + 1, Ordering::Relaxed);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(heartbeat) = &self.0 {
            heartbeat.timeout_ms.store(0, Ordering::Release);
        }
    }
}

/// The watchdog thread's loop.
fn watch_forever() {
    loop {
        std::thread::sleep(TICK);
        let registry = lock_registry();
        let now = Instant::now();
        for heartbeat in registry.iter() {
            let timeout = heartbeat.timeout_ms.load(Ordering::Acquire);
            let progress = heartbeat.progress.load(Ordering::Relaxed);
            let mut seen = heartbeat
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match *seen {
                Some((last, since)) if timeout != 0 && last == progress => {
                    let stalled = now.duration_since(since);
                    if stalled >= Duration::from_millis(timeout) {
                        report(heartbeat, stalled);
                    }
                }
                _ => *seen = Some((progress, now)),
            }
        }
    }
}

/// Reports the stalled execution of `heartbeat` and ends the process.
fn report(heartbeat: &Heartbeat, stalled: Duration) -> ! {
    let mut text = Text::<1024>::new();
    text.push("\ninterleave watchdog: the execution running on OS thread '")
        .push(&heartbeat.os_thread)
        .push("' has made no progress for ")
        .number(stalled.as_secs())
        .push(
            " s: the thread of the test that runs has not reached a scheduling point, so no \
               other thread of the test can run.\n",
        );
    write_stderr(text.as_bytes());
    let answered = ask_hung_thread(heartbeat);
    if !answered {
        write_stderr(b"  (the hung thread did not describe itself)\n");
    }
    let cause = match thread_state(heartbeat) {
        Some('R') => RUNNING,
        Some('S' | 'D') => BLOCKED,
        _ => UNKNOWN,
    };
    write_stderr(cause.as_bytes());
    write_stderr(ADVICE.as_bytes());
    std::process::exit(EXIT_STATUS)
}

const RUNNING: &str =
    "  It is running: most likely it spins in a loop that waits for another thread of \
    the test without a scheduling point, for instance on a std atomic or a plain variable. Use \
    interleave::sync::atomic, and call interleave::hint::spin_loop or \
    interleave::thread::yield_now in such loops.\n";
const BLOCKED: &str = "  It is blocked in the operating system: most likely it waits on something \
    interleave does not control, such as a std::sync lock, condvar or channel held or fed by \
    another thread of the test (which cannot run until this one reaches a scheduling point), \
    std::thread::sleep, joining an OS thread, or I/O.\n";
const UNKNOWN: &str = "  It either waits on something interleave does not control (a std::sync \
    lock, condvar or channel, std::thread::sleep, I/O) or spins in a loop without a \
    scheduling point (on a std atomic, say).\n";
const ADVICE: &str = "  Use interleave's primitives (interleave::sync, interleave::thread, \
    interleave::time) for everything the threads of a test share. The watchdog's timeout is \
    Config::watchdog, or INTERLEAVE_WATCHDOG=<seconds> (0 turns it off).\n";

/// Whether the hung thread answered the watchdog's signal.
#[cfg(any(target_os = "linux", target_os = "android"))]
static ANSWERED: AtomicBool = AtomicBool::new(false);
/// Set just before the watchdog signals the hung thread, so a stray signal does nothing.
#[cfg(any(target_os = "linux", target_os = "android"))]
static ASKED: AtomicBool = AtomicBool::new(false);

/// Has the hung thread describe what it runs (see the module documentation); false when it
/// could not be asked or did not answer in time.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn ask_hung_thread(heartbeat: &Heartbeat) -> bool {
    // SAFETY: `sigaction` on a zero-initialised structure with a valid `SA_SIGINFO` handler;
    // `pthread_kill` on a thread that cannot exit while the registry is locked by the caller.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_request as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGURG, &action, std::ptr::null_mut()) != 0 {
            return false;
        }
        ASKED.store(true, Ordering::SeqCst);
        if libc::pthread_kill(heartbeat.pthread, libc::SIGURG) != 0 {
            return false;
        }
    }
    let asked = Instant::now();
    while asked.elapsed() < ANSWER_WAIT {
        if ANSWERED.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn ask_hung_thread(_heartbeat: &Heartbeat) -> bool {
    false
}

/// The scheduler state letter of the hung thread (`R` running, `S` sleeping, `D` in
/// uninterruptible I/O), from `/proc`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn thread_state(heartbeat: &Heartbeat) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", heartbeat.tid)).ok()?;
    // The state follows the command name, which is in parentheses and may contain anything.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn thread_state(_heartbeat: &Heartbeat) -> Option<char> {
    None
}

/// The hung thread's side: describe the execution this OS thread runs.
#[cfg(any(target_os = "linux", target_os = "android"))]
extern "C" fn on_request(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if !ASKED.load(Ordering::SeqCst) || ANSWERED.load(Ordering::SeqCst) {
        return;
    }
    let mut text = Text::<1024>::new();
    describe_interrupted(&mut text);
    write_stderr(text.as_bytes());
    ANSWERED.store(true, Ordering::SeqCst);
}

/// What the execution on this OS thread was doing when the signal interrupted it.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn describe_interrupted(text: &mut Text<1024>) {
    let (execution, borrowed) = super::CURRENT.with(|c| (c.execution.get(), c.borrowed.get()));
    if execution.is_null() {
        text.push("  No execution is running on it: it hangs in interleave's own code.\n");
        return;
    }
    if borrowed {
        text.push(
            "  It hangs inside interleave's runtime (a strategy or a detector), not in the \
             test.\n",
        );
        return;
    }
    // SAFETY: the execution is alive while `CURRENT` points to it, and no borrow of it is live
    // (the flag is clear), so the interrupted code was not changing it; this only reads.
    let ex = unsafe { &*execution };
    let Some(slot) = ex.threads.get(ex.current) else {
        return;
    };
    text.push("  The running thread is thread ")
        .number(ex.current as u64)
        .push(" ('");
    match (&slot.name, ex.current) {
        (Some(name), _) => text.push(name),
        (None, 0) => text.push("main"),
        (None, _) => text.push("<unnamed>"),
    };
    text.push("', ")
        .push(if ex.current == 0 {
            "the test closure started at "
        } else {
            "spawned at "
        })
        .site(slot.spawn_site)
        .push("); its last visible operation was `")
        .push(slot.pending.name())
        .push("` at ")
        .site(slot.pending_site)
        .push(", step ")
        .number(ex.recording.events.len() as u64)
        .push(" of the execution. It has not reached a scheduling point since.\n");
}
