//! Stack overflow reports. Every coroutine stack has an inaccessible guard page below it
//! (`stacks.rs`), so a thread of the program that recurses too deeply faults there. The fault
//! handler installed here recognises a fault in the guard page of a coroutine of the execution
//! running on the faulting OS thread, prints which thread overflowed (its index, name and spawn
//! site), the size of its stack and how to raise it, and aborts the process, as std does for
//! its own threads. Every other fault goes to the handler that was installed before (std's,
//! which reports overflows of OS thread stacks) or to the default action.
//!
//! Why abort and not a failure report: a stack overflow can happen anywhere, in the middle of
//! `malloc` or of the runtime's own bookkeeping; resuming the process after one would leave
//! those in whatever state the fault caught them. corosensei's trap support can switch out of
//! the faulting coroutine, but only for coroutines that touch nothing outside their own stack,
//! which a thread of a test never is.
//!
//! Signal-safety: the handler runs on an alternate signal stack (a stack that just overflowed
//! has no room left), reads only data published before the coroutine that faulted was resumed,
//! and calls only `write`, `sigaction`, `raise` and `abort`.
//!
//! The scheduler loop publishes the guards of the execution's coroutines whenever it adopts new
//! ones, which happens on the scheduler's own stack between two coroutine switches, so a switch
//! costs nothing here.

use std::sync::Arc;

use super::op::Site;

/// What the fault handler needs to know about one coroutine's stack.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
pub(crate) struct Guarded {
    /// The lowest address of the stack's guard page.
    pub guard: usize,
    /// The bytes the thread could use.
    pub usable: usize,
    pub index: usize,
    pub name: Option<Arc<str>>,
    pub site: Site,
}

pub(crate) use imp::prepare;
use imp::{publish, withdraw};

/// The guards of one execution's coroutines, published to the fault handler of this OS thread
/// from the first push until dropped (also when the scheduler loop unwinds).
#[derive(Default)]
pub(crate) struct Guards(Vec<Guarded>);

impl Guards {
    /// No guards yet, kept in `buffer` (empty; the last execution's, to spare an allocation).
    pub(crate) fn with_buffer(buffer: Vec<Guarded>) -> Guards {
        debug_assert!(buffer.is_empty());
        Guards(buffer)
    }

    /// Withdraws the guards, as dropping does, and hands back their buffer, emptied. Inlined,
    /// as `push`: called once per execution and per thread, out of line they cost an empty
    /// execution about 50 instructions more.
    #[inline]
    pub(crate) fn into_buffer(mut self) -> Vec<Guarded> {
        let mut buffer = std::mem::take(&mut self.0);
        drop(self);
        buffer.clear();
        buffer
    }

    /// Adds the guard of a coroutine the scheduler loop adopted. Called between coroutine
    /// switches, on the scheduler's stack, so no coroutine fault can see the list half-changed.
    #[inline]
    pub(crate) fn push(&mut self, guarded: Guarded) {
        // Only a push that moves the list must withdraw it first; otherwise the published
        // entries stay where they are while the new one is written after them, and the
        // handler sees the old length or the new one (one thread-local write per thread
        // fewer).
        if self.0.len() == self.0.capacity() {
            withdraw();
        }
        self.0.push(guarded);
        publish(&self.0);
    }
}

impl Drop for Guards {
    fn drop(&mut self) {
        withdraw();
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    //! Elsewhere a stack overflow still faults in the guard page, but without a report.
    pub(crate) fn prepare() {}
    pub(crate) fn publish(_guards: &[super::Guarded]) {}
    pub(crate) fn withdraw() {}
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use std::cell::Cell;
    use std::sync::OnceLock;

    use super::super::signal_text::{write_stderr, Text};
    use super::super::stacks::page_size;
    use super::Guarded;

    /// Builds the report for an overflow of `guarded`'s stack.
    fn report(guarded: &Guarded, text: &mut Text<1536>) {
        text.push("\nthread '");
        match (&guarded.name, guarded.index) {
            (Some(name), _) => text.push(name),
            (None, 0) => text.push("main"),
            (None, _) => text.push("<unnamed>"),
        };
        text.push("' (thread ")
            .number(guarded.index as u64)
            .push(" of the interleave execution, ");
        if guarded.index == 0 {
            text.push("the test closure started at ");
        } else {
            text.push("spawned at ");
        }
        text.site(guarded.site)
            .push(") has overflowed its stack of ")
            .number(guarded.usable as u64)
            .push(" bytes.\n")
            .push(
                "interleave runs every thread of the test on a coroutine stack of a fixed size. Raise \
                 it for this thread with interleave::thread::Builder::stack_size, or for every \
                 thread with interleave::Builder::stack_size (Config::stack_size) or the \
                 environment variable INTERLEAVE_STACK_SIZE=<bytes>.\n",
            )
            .push("fatal runtime error: stack overflow, aborting\n");
    }

    /// The signals a guard page fault can raise.
    const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

    /// The handlers that were installed before ours, by position in `SIGNALS`.
    static PREVIOUS: [OnceLock<libc::sigaction>; 2] = [OnceLock::new(), OnceLock::new()];

    /// The size of the alternate signal stack this module installs where a thread has none, or
    /// one too small for the report and a chained handler.
    const ALT_STACK: usize = 64 * 1024;

    thread_local! {
        /// The guards of the coroutines of the execution running on this OS thread.
        static PUBLISHED: Cell<(*const Guarded, usize)> =
            const { Cell::new((std::ptr::null(), 0)) };
        /// Whether this OS thread has an alternate signal stack large enough.
        static ALT_READY: Cell<bool> = const { Cell::new(false) };
        /// The alternate signal stack this module mapped for this OS thread, if any.
        static ALT_OWNED: AltStack = const { AltStack(Cell::new(std::ptr::null_mut())) };
    }

    /// Installs the fault handler (once per process) and makes sure this OS thread has an
    /// alternate signal stack. Called at the start of every execution; after the first one on
    /// an OS thread it costs two thread-local reads.
    pub(crate) fn prepare() {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(install);
        if !ALT_READY.get() {
            ensure_alt_stack();
            ALT_READY.set(true);
        }
    }

    /// Makes `guards` the coroutines whose guard pages the handler recognises on this OS
    /// thread. Called by the scheduler loop, never from a coroutine.
    pub(crate) fn publish(guards: &[Guarded]) {
        PUBLISHED.set((guards.as_ptr(), guards.len()));
    }

    /// Forgets the published guards (before they are dropped).
    pub(crate) fn withdraw() {
        PUBLISHED.set((std::ptr::null(), 0));
    }

    fn install() {
        for (signal, previous) in SIGNALS.iter().zip(&PREVIOUS) {
            // SAFETY: plain `sigaction` calls on valid, zero-initialised structures; the handler
            // is a valid `extern "C"` function of the signature `SA_SIGINFO` asks for.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(*signal, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                // The previous handler is recorded before ours can run.
                let _ = previous.set(old);
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(*signal, &action, std::ptr::null_mut());
            }
        }
    }

    /// An alternate signal stack this module mapped; unmapped when its OS thread exits.
    struct AltStack(Cell<*mut libc::c_void>);

    impl Drop for AltStack {
        fn drop(&mut self) {
            let mapping = self.0.get();
            if mapping.is_null() {
                return;
            }
            let page = page_size();
            // SAFETY: the mapping is ours; it is disabled first if it is still the thread's
            // alternate stack, so no signal can land on it once it is unmapped.
            unsafe {
                let mut current: libc::stack_t = std::mem::zeroed();
                if libc::sigaltstack(std::ptr::null(), &mut current) == 0
                    && current.ss_sp == mapping.cast::<u8>().add(page).cast()
                {
                    let disable = libc::stack_t {
                        ss_sp: std::ptr::null_mut(),
                        ss_flags: libc::SS_DISABLE,
                        ss_size: ALT_STACK,
                    };
                    libc::sigaltstack(&disable, std::ptr::null_mut());
                }
                libc::munmap(mapping, ALT_STACK + page);
            }
        }
    }

    /// Gives this OS thread an alternate signal stack unless it has one of `ALT_STACK` bytes
    /// already (std gives its threads one of a few KiB, too small for a chained handler after
    /// ours in a debug build).
    fn ensure_alt_stack() {
        let page = page_size();
        // SAFETY: `sigaltstack` and `mmap` on valid arguments; the new stack stays mapped
        // while it is installed (see `AltStack::drop`).
        unsafe {
            let mut current: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(std::ptr::null(), &mut current) != 0 {
                return;
            }
            if current.ss_flags & libc::SS_DISABLE == 0 && current.ss_size >= ALT_STACK {
                return;
            }
            let mapping = libc::mmap(
                std::ptr::null_mut(),
                ALT_STACK + page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if mapping == libc::MAP_FAILED {
                return;
            }
            // A guard page under the signal stack too.
            libc::mprotect(mapping, page, libc::PROT_NONE);
            let stack = libc::stack_t {
                ss_sp: mapping.cast::<u8>().add(page).cast(),
                ss_flags: 0,
                ss_size: ALT_STACK,
            };
            if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
                libc::munmap(mapping, ALT_STACK + page);
                return;
            }
            ALT_OWNED.with(|owned| owned.0.set(mapping));
        }
    }

    /// The guard of the published coroutine whose guard page holds `address`. The newest
    /// thread comes first: a stack is reused only after its previous thread finished.
    fn guard_at(address: usize) -> Option<&'static Guarded> {
        let (guards, len) = PUBLISHED.get();
        if guards.is_null() {
            return None;
        }
        let page = page_size();
        // SAFETY: the scheduler loop publishes a live slice and withdraws it before changing or
        // dropping it, always outside any coroutine; the handler runs while it is published.
        let guards = unsafe { std::slice::from_raw_parts(guards, len) };
        guards
            .iter()
            .rev()
            .find(|g| (g.guard..g.guard + page).contains(&address))
    }

    extern "C" fn on_fault(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
        let address = unsafe { (*info).si_addr() } as usize;
        if let Some(guarded) = guard_at(address) {
            let mut text = Text::<1536>::new();
            report(guarded, &mut text);
            write_stderr(text.as_bytes());
            // SAFETY: `abort` is async-signal-safe and does not return.
            unsafe { libc::abort() };
        }
        chain(signal, info, context);
    }

    /// Hands a fault that is not ours to the handler installed before, or to the default
    /// action.
    fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        let position = SIGNALS.iter().position(|s| *s == signal);
        let previous = position.and_then(|p| PREVIOUS[p].get());
        match previous.map(|p| (p.sa_sigaction, p.sa_flags)) {
            Some((libc::SIG_IGN, _)) => {}
            Some((libc::SIG_DFL, _)) | None => {
                // The default action, taken once this handler returns: the signal is blocked
                // while it runs.
                // SAFETY: async-signal-safe calls on a zero-initialised structure.
                unsafe {
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigemptyset(&mut default.sa_mask);
                    libc::sigaction(signal, &default, std::ptr::null_mut());
                    libc::raise(signal);
                }
            }
            Some((handler, flags)) => {
                // SAFETY: `handler` is the address of a handler that was installed for this
                // signal, with the signature its flags declare.
                unsafe {
                    if flags & libc::SA_SIGINFO != 0 {
                        let handler: extern "C" fn(
                            libc::c_int,
                            *mut libc::siginfo_t,
                            *mut libc::c_void,
                        ) = std::mem::transmute(handler);
                        handler(signal, info, context);
                    } else {
                        let handler: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                        handler(signal);
                    }
                }
            }
        }
    }
}
