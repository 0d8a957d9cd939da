//! The process as a member of a process tree: its parent's pid, forks and
//! exits told to the tree, and waits for its children.

use super::*;
use crate::process::{ExitKind, Process, ThreadState};
use crate::signal::SignalInfo;
use rvnvmm_sched::{Cores, Status};

/// `si_code` of a `SIGCHLD` for a child that exited.
const CLD_EXITED: i32 = 1;

impl Process {
    /// The guest's parent pid ([`FIRST_PARENT_PID`] for the first
    /// process: its parent is outside the guest's world).
    pub(crate) fn guest_ppid(&self) -> i32 {
        self.family
            .as_ref()
            .map_or(FIRST_PARENT_PID, Family::parent_pid)
    }

    /// Whether another process of the tree is alive.
    pub(crate) fn tree_has_others(&self) -> bool {
        self.family.as_ref().is_some_and(Family::others_live)
    }

    /// The simulated time (ns) this process can next run from: its
    /// earliest ready hart's clock or its next timed wake-up; `None` if
    /// every thread waits without a timeout.
    fn tree_time_ns(&self) -> Option<u64> {
        let ready = (0..self.threads.cpus.len())
            .filter(|&c| self.status(c) == Status::Ready)
            .map(|c| self.threads.cpus[c].core.cycles)
            .min();
        let at = match (ready, self.next_wakeup()) {
            (Some(r), Some(w)) => Some(r.min(w)),
            (r, w) => r.or(w),
        };
        at.map(|c| self.cycles_to_ns(c))
    }

    /// The simulated end of the turn (cycles) the tree allows this process.
    pub(crate) fn tree_turn_end(&self) -> Option<u64> {
        let f = self.family.as_ref().filter(|f| f.others_live())?;
        Some(self.ns_to_cycles(f.horizon_ns()))
    }

    /// Between turns: takes the signals members sent, and gives the turn up
    /// once this process is a quantum past the earliest other one.
    pub(crate) fn tree_check(&mut self) {
        if self.family.is_none() {
            return;
        }
        if self.tree_has_others() {
            let horizon = self.family.as_ref().map_or(u64::MAX, Family::horizon_ns);
            if let Some(t) = self.tree_time_ns().filter(|&t| t >= horizon) {
                if let Some(f) = self.family.as_mut() {
                    f.yield_ready(t);
                }
                self.after_turn_back(None);
                return;
            }
        }
        self.take_member_signals(None);
    }

    /// After a system call: if another process waits for a descriptor, the
    /// call may have readied it, so it looks again now.
    pub(crate) fn tree_after_syscall(&mut self) {
        if !self.tree_has_others() || self.exit.is_some() {
            return;
        }
        let now = self.now_ns();
        if !self.family.as_ref().is_some_and(|f| f.wake_io_waiters(now)) {
            return;
        }
        let t = self.tree_time_ns().unwrap_or(now);
        if let Some(f) = self.family.as_mut() {
            f.yield_ready(t);
        }
        self.after_turn_back(None);
    }

    /// Nothing of this process can run: while other processes of the tree
    /// live, gives the turn up until something may have woken one of its
    /// threads (`true`); `false` leaves the wait to the process alone.
    pub(crate) fn tree_idle(&mut self) -> bool {
        if !self.tree_has_others() {
            return false;
        }
        let since = self.cycles_to_ns(self.threads.latest_cycles());
        let mut what = 0;
        for t in &self.threads.all {
            match &t.state {
                // A wait for a child (or select with nothing to wait on,
                // which only a signal ends).
                ThreadState::Io {
                    fds, until: None, ..
                } if fds.is_empty() => what |= waits::CHILD,
                ThreadState::Exited | ThreadState::Runnable => {}
                _ => what |= waits::IO,
            }
        }
        let Some(mut f) = self.family.take() else {
            return false;
        };
        let woken = f.yield_blocked(since, what, |ms| self.poll_while_stuck(ms));
        self.family = Some(f);
        self.after_turn_back(woken);
        true
    }

    /// The whole tree is blocked: polls this process's descriptors for up
    /// to `ms` (host time); whether a thread can run.
    fn poll_while_stuck(&mut self, ms: i32) -> bool {
        if !self.poll_io_waiters(ms, None) {
            // No descriptor to wait on: a host signal may still come.
            // SAFETY: a poll of no descriptors only sleeps.
            unsafe { libc::poll(std::ptr::null_mut(), 0, ms) };
        }
        self.take_host_signals();
        self.threads
            .all
            .iter()
            .any(|t| t.state == ThreadState::Runnable)
    }

    /// This process holds the turn again, woken at `woken_ns` (if it was
    /// blocked and something may have ended the wait): the signals members
    /// sent are queued, and the threads waiting for a child or a
    /// descriptor look again; those that can run go on from `woken_ns`.
    fn after_turn_back(&mut self, woken_ns: Option<u64>) {
        let was_runnable: Vec<bool> = self
            .threads
            .all
            .iter()
            .map(|t| t.state == ThreadState::Runnable)
            .collect();
        self.take_member_signals(woken_ns);
        self.poll_io_waiters(0, None);
        if let Some(ns) = woken_ns {
            let at = self.ns_to_cycles(ns);
            for (i, was) in was_runnable.into_iter().enumerate() {
                let t = &self.threads.all[i];
                if !was && t.state == ThreadState::Runnable {
                    let c = &mut self.threads.cpus[t.cpu].core;
                    c.cycles = c.cycles.max(at);
                }
            }
        }
    }

    /// Queues the signals members sent (`SIGCHLD` for a child's exit,
    /// which also makes the threads waiting for a child look again; they
    /// are reaped at once if `SIGCHLD` is ignored).
    fn take_member_signals(&mut self, at_ns: Option<u64>) {
        let Some(f) = self.family.as_ref() else {
            return;
        };
        let (bits, sender) = f.take_signals();
        if bits & (1 << (libc::SIGCHLD - 1)) != 0 {
            let a = self.signals.actions[libc::SIGCHLD as usize];
            const SA_NOCLDWAIT: u64 = 2;
            if a.handler == 1 || a.flags & SA_NOCLDWAIT != 0 {
                f.reap_all_children();
            }
            for t in &mut self.threads.all {
                if matches!(&t.state, ThreadState::Io { fds, until: None, .. } if fds.is_empty()) {
                    t.state = ThreadState::Runnable;
                }
            }
        }
        if bits == 0 {
            return;
        }
        let now = at_ns.unwrap_or_else(|| self.now_ns());
        for sig in 1..=64 {
            if bits & (1 << (sig - 1)) == 0 {
                continue;
            }
            let code = if sig == libc::SIGCHLD {
                CLD_EXITED
            } else {
                crate::signal::SI_USER
            };
            let target = self.signal_target(sig);
            self.queue_signal_at(target, SignalInfo::sent(sig, code, sender), now);
        }
    }

    /// Joins the tree before the first fork (as its root).
    pub(crate) fn join_tree(&mut self) -> Result<&mut Family, crate::errno::Errno> {
        if self.family.is_none() {
            let now = self.now_ns();
            let name = self.comm_name();
            let f = Family::create(self.pid, self.threads.next_tid, now, &name)
                .map_err(crate::errno::Errno::from)?;
            self.family = Some(f);
        }
        Ok(self.family.as_mut().expect("just made"))
    }

    /// Closes the guest's descriptors that another process could notice
    /// closing (pipes, FIFOs, sockets, terminals' peers): all but a
    /// standard error that is a file or a terminal, kept for the
    /// emulator's last words.
    fn close_guest_fds(&mut self) {
        for fd in self.guest_fds() {
            if fd == 2 {
                let mut st = crate::fs::unsafe_zeroed_stat();
                // SAFETY: `st` is a struct stat the call fills.
                let r = unsafe { libc::fstat(fd, &mut st) };
                if r == 0 && matches!(st.st_mode & libc::S_IFMT, libc::S_IFREG | libc::S_IFCHR) {
                    continue;
                }
            }
            // SAFETY: close takes an integer; the emulator's own descriptors
            // are skipped above.
            unsafe { libc::close(fd) };
        }
    }

    /// The program's name (the first thread's `comm`).
    fn comm_name(&self) -> String {
        let comm = self.threads.all.first().map_or([0; 16], |t| t.comm);
        let n = comm.iter().position(|&c| c == 0).unwrap_or(comm.len());
        String::from_utf8_lossy(&comm[..n]).into_owned()
    }

    /// The guest has ended: this process leaves the tree with its wait
    /// status; the root then waits for the others and keeps their figures.
    pub(crate) fn leave_tree(&mut self, failed: bool) {
        let Some(mut f) = self.family.take() else {
            return;
        };
        let status = match self.exit {
            _ if failed => exit_status(1),
            Some(ExitKind::Code(c)) => exit_status(c),
            Some(ExitKind::Signal(s)) => killed_status(s),
            Some(ExitKind::InsnLimit) => exit_status(124),
            Some(ExitKind::Crash | ExitKind::Checkpoint) | None => killed_status(libc::SIGKILL),
        };
        let end = self.threads.latest_cycles();
        let (end_ns, cpu_ns) = (
            self.cycles_to_ns(end),
            self.cycles_to_ns(self.threads.cpu_cycles),
        );
        let name = self.comm_name();
        if !self.is_child && self.exit == Some(ExitKind::Crash) {
            // The power fails: every process of the machine ends with it.
            f.kill_others(end_ns);
        }
        // As Linux's exit: the descriptors close before the parent hears
        // of it (a reader sees the end of a pipe then, not when the host
        // process is gone).
        self.close_guest_fds();
        let insns = self.threads.total_insns - self.insns_at_fork;
        f.leave(status, end_ns, insns, cpu_ns, &name);
        if !self.is_child {
            f.wait_all();
            // Orphans of the tree were reparented to the root: reap them.
            // SAFETY: waitpid with a null status pointer.
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), 0) } > 0 {}
            self.members = Some(f.summary());
        }
    }
}
