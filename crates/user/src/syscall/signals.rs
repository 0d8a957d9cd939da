//! Signal system calls, and host signals forwarded to the guest.

use super::host;
use crate::abi::{SigInfo, StackT};
use crate::errno::*;
use crate::process::{Process, ThreadState};
use crate::signal::host::take_host_pending;
use crate::signal::*;
use zerocopy::{FromZeros, IntoBytes};

impl Process {
    /// Queues signals the host delivered to the emulator.
    pub(crate) fn take_host_signals(&mut self) {
        let bits = take_host_pending();
        if bits == 0 {
            return;
        }
        for s in 1..64 {
            if bits & (1 << (s - 1)) != 0 {
                // The sender is unknown to us; report the parent as Linux
                // would for a terminal or shell signal.
                let target = self.signal_target(s);
                let ppid = self.guest_ppid();
                self.queue_signal(target, SignalInfo::sent(s, SI_USER, ppid));
            }
        }
    }

    pub(super) fn sys_sigaction(&mut self, sig: i32, act: u64, oact: u64) -> SysResult {
        if !(1..=64).contains(&sig) || (act != 0 && (sig == SIGKILL || sig == SIGSTOP)) {
            return Err(EINVAL);
        }
        let old = self.signals.actions[sig as usize];
        if act != 0 {
            let new: SigAction = self.read_obj(act)?;
            self.signals.actions[sig as usize] = new;
            crate::signal::host::mirror_to_host(sig, new.handler);
        }
        if oact != 0 {
            self.write_obj(oact, &old)?;
        }
        Ok(0)
    }

    pub(super) fn sys_sigprocmask(&mut self, how: i32, set: u64, oset: u64) -> SysResult {
        let i = self.threads.current;
        let old = self.threads.all[i].sigmask;
        if set != 0 {
            let s = self.read_u64(set)?;
            let new = match how {
                0 => old | s,
                1 => old & !s,
                2 => s,
                _ => return Err(EINVAL),
            };
            self.threads.all[i].sigmask = new & !((1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1)));
        }
        if oset != 0 {
            self.write_u64(oset, old)?;
        }
        Ok(0)
    }

    pub(super) fn sys_sigsuspend(&mut self, mask: u64) -> Option<i64> {
        let m = match self.read_u64(mask) {
            Ok(m) => m,
            Err(e) => return Some(-e),
        };
        let i = self.threads.current;
        let t = &mut self.threads.all[i];
        // Wait with the temporary mask; the handler's sigreturn restores
        // the old one, and the call returns -EINTR.
        t.saved_mask = Some(t.sigmask);
        t.sigmask = m & !((1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1)));
        t.hart.x[10] = (-EINTR) as u64;
        let deliverable = t
            .pending
            .iter()
            .any(|p| t.sigmask & (1 << (p.signo - 1)) == 0);
        if !deliverable {
            t.state = ThreadState::SigWait;
        }
        None
    }

    pub(super) fn sys_sigtimedwait(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, Errno> {
            let set = self.read_u64(a[0])?;
            let timeout = self.read_timeout(a[2])?;
            let i = self.threads.current;
            let found = self.threads.all[i]
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| set & (1 << (p.signo - 1)) != 0)
                .min_by_key(|&(k, p)| (p.signo, k))
                .map(|(k, _)| k);
            if let Some(k) = found {
                let info = self.threads.all[i].pending.remove(k);
                self.threads.all[i].wait_deadline = None;
                if a[1] != 0 {
                    self.write_obj(a[1], &info.to_abi())?;
                }
                return Ok(Some(info.signo as i64));
            }
            let now = self.now_ns();
            let deadline = match self.threads.all[i].wait_deadline {
                Some(d) => d,
                None => timeout.map_or(u64::MAX, |t| now.saturating_add(t)),
            };
            if now >= deadline {
                self.threads.all[i].wait_deadline = None;
                return Err(EAGAIN);
            }
            let t = &mut self.threads.all[i];
            t.wait_deadline = Some(deadline);
            t.state = ThreadState::SigTimedWait {
                set,
                deadline: (deadline != u64::MAX).then_some(deadline),
            };
            t.hart.pc -= 4;
            Ok(None)
        })();
        match r {
            Ok(v) => v,
            Err(e) => Some(-e),
        }
    }

    /// rt_sigqueueinfo / rt_tgsigqueueinfo: a signal with the sender's
    /// siginfo (sigqueue's value).
    pub(super) fn sys_sigqueueinfo(
        &mut self,
        tgid: i32,
        tid: Option<i32>,
        sig: i32,
        uinfo: u64,
    ) -> SysResult {
        // The kernel reads `struct kernel_siginfo`, the first 48 bytes.
        let mut head = SigInfo::new_zeroed();
        self.read_mem(uinfo, &mut head.as_mut_bytes()[..48])?;
        if !(1..=64).contains(&sig) {
            return Err(EINVAL);
        }
        if tgid != self.pid {
            // Another process: the host carries the signal, not the value.
            // SAFETY: kill takes integers only.
            return host(unsafe { libc::kill(tgid, sig) } as i64);
        }
        let code = head.si_code;
        let mut data = [0u64; 4];
        data.copy_from_slice(&head.fields[..4]);
        let i = match tid {
            Some(t) => self.thread_index(t).ok_or(ESRCH)?,
            None => self.signal_target(sig),
        };
        self.queue_signal(
            i,
            SignalInfo {
                signo: sig,
                code,
                data,
            },
        );
        Ok(0)
    }

    /// The thread a process-directed signal goes to: as Linux, the main
    /// thread (tid = pid) unless it blocks the signal or has exited; else
    /// the current one under the same conditions, else the first live one
    /// that does not block it (the first live one if all do: it stays
    /// pending there).
    pub(crate) fn signal_target(&self, sig: i32) -> usize {
        let bit = 1u64 << (sig - 1);
        let cur = self.threads.current;
        let takes =
            |t: &crate::process::Thread| t.state != ThreadState::Exited && t.sigmask & bit == 0;
        if let Some(main) = self.threads.all.iter().position(|t| t.tid == self.pid) {
            if takes(&self.threads.all[main]) {
                return main;
            }
        }
        if takes(&self.threads.all[cur]) {
            return cur;
        }
        self.threads
            .all
            .iter()
            .position(takes)
            .or_else(|| {
                self.threads
                    .all
                    .iter()
                    .position(|t| t.state != ThreadState::Exited)
            })
            .unwrap_or(cur)
    }

    /// kill: guest pids are the tree's, so a signal reaches this process
    /// or a member of its tree (through the tree's table, taken when the
    /// member next runs), never a host process; `-1` reaches the tree's
    /// other processes, `0` and `-PGID` its members in the group.
    pub(super) fn sys_kill(&mut self, pid: i32, sig: i32) -> SysResult {
        if !(0..=64).contains(&sig) {
            return Err(EINVAL);
        }
        if pid == self.pid {
            if sig != 0 {
                let i = self.signal_target(sig);
                self.queue_signal(i, SignalInfo::sent(sig, SI_USER, self.pid));
            }
            return Ok(0);
        }
        let now = self.now_ns();
        let targets = match pid {
            -1 => self
                .family
                .as_ref()
                .map_or(Vec::new(), |f| f.group_pids(None)),
            // SAFETY: getpgid takes an integer.
            0 => self.group_members(self.guest_group_id(unsafe { libc::getpgid(0) })),
            p if p < 0 => self.group_members(p.checked_neg().ok_or(ESRCH)?),
            p => {
                use crate::family::MemberState;
                let Some(f) = self.family.as_ref() else {
                    return Err(ESRCH);
                };
                return match f.lookup(p) {
                    Some(MemberState::Live) => {
                        f.signal(p, sig, self.pid, now);
                        Ok(0)
                    }
                    // A zombie takes signals and ignores them, as on Linux.
                    Some(MemberState::Zombie) => Ok(0),
                    Some(MemberState::Gone) | None => Err(ESRCH),
                };
            }
        };
        if targets.is_empty() {
            return Err(ESRCH);
        }
        let mut to_self = false;
        for t in targets {
            if t == self.pid {
                to_self = pid != -1;
            } else if let Some(f) = self.family.as_ref() {
                f.signal(t, sig, self.pid, now);
            }
        }
        if to_self && sig != 0 {
            let i = self.signal_target(sig);
            self.queue_signal(i, SignalInfo::sent(sig, SI_USER, self.pid));
        }
        Ok(0)
    }

    /// The guest pids of the live processes (this one and its tree's) in
    /// the process group the guest calls `pgid`.
    fn group_members(&self, pgid: i32) -> Vec<i32> {
        // SAFETY: getpgid takes an integer.
        let own = self.guest_group_id(unsafe { libc::getpgid(0) });
        let mut v = match self.family.as_ref() {
            Some(f) => f
                .group_pids(None)
                .into_iter()
                .filter(|&p| {
                    p != self.pid
                        && f.host_pid_of(p).is_some_and(|h| {
                            // SAFETY: getpgid takes an integer.
                            self.guest_group_id(unsafe { libc::getpgid(h) }) == pgid
                        })
                })
                .collect(),
            None => Vec::new(),
        };
        if own == pgid {
            v.push(self.pid);
        }
        v
    }

    pub(super) fn sys_tgkill(&mut self, tgid: i32, tid: i32, sig: i32) -> SysResult {
        if tgid != self.pid {
            // Another process of the tree (its thread not told apart).
            return if tgid > 0 {
                self.sys_kill(tgid, sig)
            } else {
                Err(EINVAL)
            };
        }
        let i = self.thread_index(tid).ok_or(ESRCH)?;
        if sig != 0 {
            if !(1..=64).contains(&sig) {
                return Err(EINVAL);
            }
            self.queue_signal(i, SignalInfo::sent(sig, SI_TKILL, self.pid));
        }
        Ok(0)
    }

    pub(super) fn sys_sigaltstack(&mut self, ss: u64, old: u64) -> SysResult {
        let i = self.threads.current;
        let cur = self.threads.all[i].altstack;
        let sp = self.threads.all[i].hart.x[2];
        let on_stack = cur.2 & SS_DISABLE == 0 && sp.wrapping_sub(cur.0) < cur.1;
        if old != 0 {
            let flags = if on_stack { SS_ONSTACK } else { cur.2 };
            let st = StackT {
                ss_sp: cur.0,
                ss_flags: flags,
                ss_size: cur.1,
                ..StackT::default()
            };
            self.write_obj(old, &st)?;
        }
        if ss != 0 {
            if on_stack {
                return Err(EPERM);
            }
            let StackT {
                ss_sp: sp,
                ss_flags: flags,
                ss_size: size,
                ..
            } = self.read_obj(ss)?;
            if flags & SS_DISABLE != 0 {
                self.threads.all[i].altstack = (0, 0, SS_DISABLE);
            } else {
                if size < 2048 {
                    return Err(ENOMEM);
                }
                self.threads.all[i].altstack = (sp, size, 0);
            }
        }
        Ok(0)
    }

    /// rt_sigpending: the signals pending for the calling thread.
    pub(super) fn sys_sigpending(&mut self, set: u64) -> SysResult {
        let t = self.threads.current();
        let m = t.pending.iter().fold(0u64, |m, p| m | 1 << (p.signo - 1));
        self.write_u64(set, m).map(|_| 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    #[test]
    fn sigaction_round_trips() {
        let mut p = process();
        let (act, old) = (scratch(&mut p, 24), scratch(&mut p, 24));
        for (k, v) in [0x1234u64, 0x0400_0000, 0b1010].iter().enumerate() {
            p.write_u64(act + 8 * k as u64, *v).unwrap();
        }
        // SIGSEGV: a synchronous signal, which is not mirrored to the host.
        assert_eq!(p.sys_sigaction(SIGSEGV, act, old), Ok(0));
        assert_eq!(read(&mut p, old, 24), [0; 24], "the default before");
        assert_eq!(p.sys_sigaction(SIGSEGV, 0, old), Ok(0));
        assert_eq!(p.read_u64(old), Ok(0x1234));
        assert_eq!(p.read_u64(old + 8), Ok(0x0400_0000));
        assert_eq!(p.read_u64(old + 16), Ok(0b1010));
        assert_eq!(err(p.sys_sigaction(SIGSEGV, WILD, 0)), EFAULT);
    }

    #[test]
    fn bad_signal_numbers() {
        let mut p = process();
        let act = scratch(&mut p, 24);
        assert_eq!(err(p.sys_sigaction(0, 0, act)), EINVAL);
        assert_eq!(err(p.sys_sigaction(65, 0, act)), EINVAL);
        assert_eq!(err(p.sys_sigaction(SIGKILL, act, 0)), EINVAL);
        assert_eq!(err(p.sys_sigaction(SIGSTOP, act, 0)), EINVAL);
        assert_eq!(
            p.sys_sigaction(SIGKILL, 0, act),
            Ok(0),
            "reading it is fine"
        );
        let pid = p.pid;
        assert_eq!(err(p.sys_kill(pid, 65)), EINVAL);
        assert_eq!(err(p.sys_tgkill(pid, pid, -1)), EINVAL);
        assert_eq!(err(p.sys_tgkill(pid, 12345678, SIGSEGV)), ESRCH);
        assert_eq!(err(p.sys_sigqueueinfo(pid, None, 0, act)), EINVAL);
    }

    #[test]
    fn sigprocmask_blocks_unblocks_and_sets() {
        let mut p = process();
        let (set, old) = (scratch(&mut p, 8), scratch(&mut p, 8));
        let bit = |s: i32| 1u64 << (s - 1);
        p.write_u64(set, bit(SIGSEGV) | bit(SIGKILL)).unwrap();
        assert_eq!(p.sys_sigprocmask(0, set, old), Ok(0), "SIG_BLOCK");
        assert_eq!(p.read_u64(old), Ok(0));
        assert_eq!(
            p.threads.all[0].sigmask,
            bit(SIGSEGV),
            "SIGKILL cannot be blocked"
        );
        p.write_u64(set, bit(SIGBUS)).unwrap();
        assert_eq!(p.sys_sigprocmask(2, set, old), Ok(0), "SIG_SETMASK");
        assert_eq!(p.read_u64(old), Ok(bit(SIGSEGV)));
        assert_eq!(p.sys_sigprocmask(1, set, 0), Ok(0), "SIG_UNBLOCK");
        assert_eq!(p.threads.all[0].sigmask, 0);
        assert_eq!(err(p.sys_sigprocmask(3, set, 0)), EINVAL);
        assert_eq!(err(p.sys_sigprocmask(0, WILD, 0)), EFAULT);
    }

    #[test]
    fn a_signal_to_itself_is_pending() {
        let mut p = process();
        let set = scratch(&mut p, 8);
        let pid = p.pid;
        assert_eq!(p.sys_kill(pid, 0), Ok(0), "existence check");
        assert_eq!(p.sys_kill(pid, SIGUSR1), Ok(0));
        assert_eq!(p.sys_sigpending(set), Ok(0));
        assert_eq!(p.read_u64(set), Ok(1 << (SIGUSR1 - 1)));
        assert_eq!(p.threads.all[0].pending[0].code, SI_USER);
    }

    #[test]
    fn sigaltstack_checks_the_size() {
        let mut p = process();
        let (ss, old) = (scratch(&mut p, 24), scratch(&mut p, 24));
        p.write_u64(ss, 0x9000).unwrap();
        p.write_u64(ss + 16, 1024).unwrap();
        assert_eq!(err(p.sys_sigaltstack(ss, 0)), ENOMEM, "below MINSIGSTKSZ");
        p.write_u64(ss + 16, 8192).unwrap();
        assert_eq!(p.sys_sigaltstack(ss, old), Ok(0));
        assert_eq!(p.read_u32(old + 8), Ok(SS_DISABLE as u32), "none before");
        assert_eq!(p.sys_sigaltstack(0, old), Ok(0));
        assert_eq!(p.read_u64(old), Ok(0x9000));
        assert_eq!(p.read_u64(old + 16), Ok(8192));
    }
}
