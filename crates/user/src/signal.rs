//! Guest signals: dispositions, masks, the riscv64 signal frame, delivery
//! and `rt_sigreturn`.

use crate::abi::SigInfo;

mod delivery;
pub(crate) mod host;

#[allow(missing_docs, dead_code)]
pub(crate) mod consts {
    pub const SIGHUP: i32 = 1;
    pub const SIGINT: i32 = 2;
    pub const SIGQUIT: i32 = 3;
    pub const SIGILL: i32 = 4;
    pub const SIGTRAP: i32 = 5;
    pub const SIGABRT: i32 = 6;
    pub const SIGBUS: i32 = 7;
    pub const SIGFPE: i32 = 8;
    pub const SIGKILL: i32 = 9;
    pub const SIGUSR1: i32 = 10;
    pub const SIGSEGV: i32 = 11;
    pub const SIGPIPE: i32 = 13;
    pub const SIGTERM: i32 = 15;
    pub const SIGCHLD: i32 = 17;
    pub const SIGCONT: i32 = 18;
    pub const SIGSTOP: i32 = 19;
    pub const SIGTSTP: i32 = 20;
    pub const SIGTTIN: i32 = 21;
    pub const SIGTTOU: i32 = 22;
    pub const SIGURG: i32 = 23;
    pub const SIGWINCH: i32 = 28;

    pub const SEGV_MAPERR: i32 = 1;
    pub const SEGV_ACCERR: i32 = 2;
    pub const BUS_ADRALN: i32 = 1;
    pub const BUS_ADRERR: i32 = 2;
    pub const ILL_ILLOPC: i32 = 1;
    pub const TRAP_BRKPT: i32 = 1;
    pub const SI_USER: i32 = 0;
    pub const SI_KERNEL: i32 = 0x80;
    pub const SI_QUEUE: i32 = -1;
    pub const SI_TKILL: i32 = -6;
    pub const SIGXCPU: i32 = 24;
    pub const SIGXFSZ: i32 = 25;
    pub const SIGSYS: i32 = 31;

    pub const SA_SIGINFO: u64 = 4;
    pub const SA_ONSTACK: u64 = 0x0800_0000;
    pub const SA_RESTART: u64 = 0x1000_0000;
    pub const SA_NODEFER: u64 = 0x4000_0000;
    pub const SA_RESETHAND: u64 = 0x8000_0000;
    pub const SS_ONSTACK: i32 = 1;
    pub const SS_DISABLE: i32 = 2;
}
pub(crate) use consts::*;

/// One signal's disposition (the kernel's `struct sigaction` on riscv64).
pub(crate) use crate::abi::SigAction;

/// A process's signal state shared by its threads (each thread's mask and
/// pending signals are its own: `process::Thread`).
pub(crate) struct Signals {
    /// The dispositions (`sigaction`), by signal number (1 to 64).
    pub(crate) actions: Vec<SigAction>,
    /// `setitimer`'s timers (`timers.rs`), which send `SIGALRM`,
    /// `SIGVTALRM` and `SIGPROF`: `ITIMER_REAL` in simulated ns, the
    /// CPU-time ones in ns of [`Process::cpu_ns`].
    ///
    /// [`Process::cpu_ns`]: crate::process::Process::cpu_ns
    pub(crate) itimers: [crate::timers::Schedule; 3],
}

/// A signal waiting for delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SignalInfo {
    pub signo: i32,
    pub code: i32,
    /// Bytes 16..48 of the siginfo: si_addr for faults; si_pid, si_uid and
    /// si_value for signals sent by a process.
    pub data: [u64; 4],
}

impl SignalInfo {
    /// A synchronous fault at `addr`.
    pub fn fault(signo: i32, code: i32, addr: u64) -> SignalInfo {
        SignalInfo {
            signo,
            code,
            data: [addr, 0, 0, 0],
        }
    }

    /// The guest's siginfo: the first 48 bytes, the rest zero.
    pub fn to_abi(self) -> SigInfo {
        let mut fields = [0u64; 14];
        fields[..4].copy_from_slice(&self.data);
        SigInfo {
            si_signo: self.signo,
            si_code: self.code,
            fields,
            ..SigInfo::default()
        }
    }

    /// A signal sent by process `pid` (kill, tgkill, or the host).
    pub fn sent(signo: i32, code: i32, pid: i32) -> SignalInfo {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() } as u64;
        SignalInfo {
            signo,
            code,
            data: [pid as u32 as u64 | uid << 32, 0, 0, 0],
        }
    }
}

/// First real-time signal: these queue, standard signals merge.
pub(crate) const SIGRTMIN: i32 = 32;

fn bit(sig: i32) -> u64 {
    1u64 << (sig - 1)
}

/// Whether the default action of `sig` dumps core: the signals a shell
/// reports as a crash, and qemu-user announces.
fn dumps_core(sig: i32) -> bool {
    matches!(
        sig,
        SIGQUIT
            | SIGILL
            | SIGTRAP
            | SIGABRT
            | SIGBUS
            | SIGFPE
            | SIGSEGV
            | SIGXCPU
            | SIGXFSZ
            | SIGSYS
    )
}

/// The kernel's name of a signal and its description.
pub(crate) fn signal_name(sig: i32) -> (&'static str, &'static str) {
    match sig {
        SIGQUIT => ("SIGQUIT", "Quit"),
        SIGILL => ("SIGILL", "Illegal instruction"),
        SIGTRAP => ("SIGTRAP", "Trace/breakpoint trap"),
        SIGABRT => ("SIGABRT", "Aborted"),
        SIGBUS => ("SIGBUS", "Bus error"),
        SIGFPE => ("SIGFPE", "Floating point exception"),
        SIGKILL => ("SIGKILL", "Killed"),
        SIGSEGV => ("SIGSEGV", "Segmentation fault"),
        SIGXCPU => ("SIGXCPU", "CPU time limit exceeded"),
        SIGXFSZ => ("SIGXFSZ", "File size limit exceeded"),
        SIGSYS => ("SIGSYS", "Bad system call"),
        _ => ("signal", "Unknown signal"),
    }
}

/// The name of a siginfo `si_code` for signal `sig`, as <asm/siginfo.h>.
fn si_code_name(sig: i32, code: i32) -> String {
    let named = match (sig, code) {
        (_, SI_USER) => Some("SI_USER"),
        (_, SI_KERNEL) => Some("SI_KERNEL"),
        (_, SI_QUEUE) => Some("SI_QUEUE"),
        (_, SI_TKILL) => Some("SI_TKILL"),
        (SIGSEGV, SEGV_MAPERR) => Some("SEGV_MAPERR"),
        (SIGSEGV, SEGV_ACCERR) => Some("SEGV_ACCERR"),
        (SIGBUS, BUS_ADRALN) => Some("BUS_ADRALN"),
        (SIGBUS, BUS_ADRERR) => Some("BUS_ADRERR"),
        (SIGILL, ILL_ILLOPC) => Some("ILL_ILLOPC"),
        (SIGTRAP, TRAP_BRKPT) => Some("TRAP_BRKPT"),
        _ => None,
    };
    named.map_or_else(|| format!("si_code {code}"), str::to_string)
}

/// Whether the default action of `sig` is to ignore it.
fn default_ignored(sig: i32) -> bool {
    matches!(sig, SIGCHLD | SIGURG | SIGWINCH | SIGCONT)
}
