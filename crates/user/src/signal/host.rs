//! Host signals relayed to the guest: the emulator's handler records them,
//! and the guest's dispositions decide which the host delivers at all.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Host signals received for the guest, as a bit mask (bit n-1 = signal n).
static HOST_PENDING: AtomicU64 = AtomicU64::new(0);

extern "C" fn host_signal(sig: libc::c_int) {
    HOST_PENDING.fetch_or(1 << (sig - 1), Ordering::SeqCst);
}

/// Blocks the emulator until the host delivers a signal (every guest thread
/// is waiting for one).
pub(crate) fn wait_for_host_signal() {
    // SAFETY: sigsuspend with an empty mask returns after any handler ran.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        if HOST_PENDING.load(Ordering::SeqCst) == 0 {
            libc::sigsuspend(&empty);
        }
    }
}

/// The host signals received since the last call (bit n-1 = signal n).
pub(crate) fn take_host_pending() -> u64 {
    // A load first: it is checked before every turn, and on most of them
    // nothing is pending (a swap is a locked operation).
    if HOST_PENDING.load(Ordering::SeqCst) == 0 {
        return 0;
    }
    HOST_PENDING.swap(0, Ordering::SeqCst)
}

/// Makes the host's disposition of an asynchronous signal follow the
/// guest's: ignored stays ignored (so a write to a closed pipe returns EPIPE),
/// a guest handler gets the signal forwarded, default stays default.
pub(crate) fn mirror_to_host(sig: i32, handler: u64) {
    if matches!(
        sig,
        SIGSEGV | SIGBUS | SIGILL | SIGFPE | SIGTRAP | SIGKILL | SIGSTOP | SIGCHLD | SIGPIPE
    ) {
        // SIGCHLD: the tree tells a child's exit at its simulated time
        // (`family.rs`), not the host at its own. SIGPIPE: the emulator
        // ignores its own and raises the guest's (`syscall/mod.rs`).
        return;
    }
    let h = match handler {
        0 => libc::SIG_DFL,
        1 => libc::SIG_IGN,
        _ => host_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
    };
    // SAFETY: installing a handler that only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = h;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}
