//! The threads of a process and the harts they run on: what a thread is
//! and waits for, the per-hart scheduling state, and the process's set of
//! them (which one runs, whose turn is next on a hart, the counts).

use crate::outcome::ThreadStats;
use crate::signal::SignalInfo;
use rvnvmm_hart::{Core, Hart};

/// What a thread is doing: running, waiting for something, or done.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ThreadState {
    /// Ready to run (or running) on its hart.
    Runnable,
    /// futex wait on an address with a bitset, optional deadline (ns).
    Futex {
        addr: u64,
        bitset: u32,
        deadline: Option<u64>,
    },
    /// Sleeping until a simulated time (ns). With `restart`, the pc still
    /// points at the ecall, which runs again on wake-up (polling calls).
    Sleep { until: u64, restart: bool },
    /// Waiting for any deliverable signal (pause, sigsuspend).
    SigWait,
    /// sigtimedwait: waiting for a signal of `set` (blocked ones); the pc
    /// points at the ecall, which runs again when one arrives.
    SigTimedWait { set: u64, deadline: Option<u64> },
    /// Blocked in a call until a descriptor of `fds` shows its poll events
    /// (a read, write, accept, connect, poll, select, ...;
    /// `syscall/blocking.rs`): the pc points at the ecall, which runs again
    /// when one does (a call of another thread made it ready: woken at that
    /// call's time), at `until` (the call's timeout, or the next look of a
    /// call that waits on no descriptor), or when a signal interrupts it;
    /// with `restart`, a handler with `SA_RESTART` runs the call again
    /// (not so poll, select and epoll_wait).
    Io {
        fds: Vec<(i32, i16)>,
        until: Option<u64>,
        restart: bool,
    },
    /// Exited; kept so that thread indices stay valid.
    Exited,
}

/// A guest thread: its hart state, what it waits for, its signal state.
pub(crate) struct Thread {
    /// The thread id (the process's pid for its first thread).
    pub tid: i32,
    /// The registers and translation state the thread runs with.
    pub hart: Hart,
    /// Running, waiting or exited.
    pub state: ThreadState,
    /// `CLONE_CHILD_CLEARTID`'s address (`set_tid_address`): zeroed and
    /// futex-woken when the thread exits; 0: none.
    pub clear_child_tid: u64,
    /// The blocked signals, bit `signo - 1`.
    pub sigmask: u64,
    /// Signals sent to the thread and not yet delivered.
    pub pending: Vec<SignalInfo>,
    /// The alternate signal stack (`sigaltstack`): base, size, flags.
    pub altstack: (u64, u64, i32),
    /// The thread's name (prctl PR_SET_NAME), NUL-padded.
    pub comm: [u8; 16],
    /// The mask to restore after the next handler (set by sigsuspend).
    pub saved_mask: Option<u64>,
    /// Deadline (ns) of a restarting wait (poll, select, sigtimedwait) in
    /// progress, kept across its re-executions.
    pub wait_deadline: Option<u64>,
    /// What a blocking call in progress has done before it waited again:
    /// the bytes a write (or a `MSG_WAITALL` receive) has moved, or
    /// `blocking::CONNECTING` for a connection under way; 0 otherwise.
    pub io_done: u64,
    /// The CPU (hart) the thread is placed on.
    pub cpu: usize,
    /// The CPUs the thread may run on (`sched_setaffinity`), bit per CPU.
    pub affinity: u64,
    /// Why the last synchronous fault was raised (for the line printed
    /// if it kills the process).
    pub fault_note: Option<String>,
    /// The thread's NUMA memory policy (`set_mempolicy`), which a new
    /// thread inherits and `execve` keeps.
    pub mempolicy: crate::numa::TaskPolicy,
}

impl Thread {
    /// A runnable thread `tid` on `hart`, placed on `cpu`, with nothing
    /// pending, no signal mask, no alternate stack, no name, any CPU
    /// allowed.
    pub(crate) fn new(tid: i32, hart: Hart, cpu: usize) -> Thread {
        Thread {
            tid,
            hart,
            state: ThreadState::Runnable,
            clear_child_tid: 0,
            sigmask: 0,
            pending: Vec::new(),
            altstack: (0, 0, crate::signal::SS_DISABLE),
            comm: [0; 16],
            saved_mask: None,
            wait_deadline: None,
            io_done: 0,
            cpu,
            affinity: u64::MAX,
            fault_note: None,
            mempolicy: None,
        }
    }

    /// When the thread's timed wait ends, in ns.
    pub(crate) fn wait_ends_ns(&self) -> Option<u64> {
        match self.state {
            ThreadState::Sleep { until, .. }
            | ThreadState::SigTimedWait {
                deadline: Some(until),
                ..
            }
            | ThreadState::Futex {
                deadline: Some(until),
                ..
            }
            | ThreadState::Io {
                until: Some(until), ..
            } => Some(until),
            _ => None,
        }
    }
}

/// A CPU (hart) threads are scheduled on.
pub(crate) struct Cpu {
    /// The core: local clock, costs, L1 slot and `mhartid`.
    pub core: Core,
    /// Instructions retired on this CPU, by any thread.
    pub instret: u64,
    /// Round-robin cursor over threads.
    pub cursor: usize,
    /// The thread whose time slice is running, and when it ends (cycles).
    pub holder: Option<usize>,
    /// The cycle the holder's time slice ends at.
    pub slice_end: u64,
}

/// The threads of a process on the harts they are scheduled on.
pub(crate) struct Threads {
    /// Every thread the process has had since its last exec, the exited
    /// ones too (in [`ThreadState::Exited`]): a thread's index here is its
    /// handle.
    pub(crate) all: Vec<Thread>,
    /// The harts (CPUs) threads run on, by `mhartid`.
    pub(crate) cpus: Vec<Cpu>,
    /// The index in `all` of the thread running (or last run).
    pub(crate) current: usize,
    /// The thread id the next new thread is given.
    pub(crate) next_tid: i32,
    /// Statistics of threads that have exited.
    pub(crate) exited: Vec<ThreadStats>,
    /// Instructions retired by all threads together, the exited ones too.
    pub(crate) total_insns: u64,
    /// The process's CPU time: the hart cycles its threads ran.
    pub(crate) cpu_cycles: u64,
}

impl Threads {
    /// The thread running (or last run).
    pub(crate) fn current(&self) -> &Thread {
        &self.all[self.current]
    }

    /// The thread running (or last run), to change.
    pub(crate) fn current_mut(&mut self) -> &mut Thread {
        &mut self.all[self.current]
    }

    /// The timed wait that ends first: (ns, thread), the lower thread on a
    /// tie.
    pub(crate) fn next_timed_wait(&self) -> Option<(u64, usize)> {
        self.all
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((t.wait_ends_ns()?, i)))
            .min()
    }

    /// Whether a thread other than `i` is runnable on `cpu`.
    pub(crate) fn others_runnable_on(&self, cpu: usize, i: usize) -> bool {
        self.all
            .iter()
            .enumerate()
            .any(|(k, t)| k != i && t.cpu == cpu && t.state == ThreadState::Runnable)
    }

    /// The next runnable thread on `cpu`, round-robin.
    pub(crate) fn rotate_on(&mut self, cpu: usize) -> Option<usize> {
        let n = self.all.len();
        let start = self.cpus[cpu].cursor;
        for k in 0..n {
            let i = (start + k) % n;
            if self.all[i].cpu == cpu && self.all[i].state == ThreadState::Runnable {
                self.cpus[cpu].cursor = i + 1;
                return Some(i);
            }
        }
        None
    }

    /// The latest hart clock, in cycles (the machine's time).
    pub(crate) fn latest_cycles(&self) -> u64 {
        self.cpus.iter().map(|c| c.core.cycles).max().unwrap_or(0)
    }

    /// After the page tables changed: drop every hart's cached translations.
    pub(crate) fn flush_tlbs(&mut self) {
        for t in &mut self.all {
            t.hart.translations_changed();
        }
    }
}

pub(crate) fn thread_stats(t: &Thread) -> ThreadStats {
    ThreadStats {
        tid: t.tid,
        hart: t.cpu,
        instructions: t.hart.instret,
        flush_insns: t.hart.stats.flush_insns,
        tlb_refills: t.hart.stats.tlb_refills,
        atomics: t.hart.stats.atomics,
        memory_stall_cycles: t.hart.stats.memory_stall_cycles,
        issue_wait_cycles: t.hart.stats.issue_wait_cycles,
        unit_wait_cycles: t.hart.stats.unit_wait_cycles,
    }
}
