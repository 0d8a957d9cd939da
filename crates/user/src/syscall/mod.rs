//! The Linux system calls of riscv64: `dispatch` routes a call by its
//! number (`nr`) to its handler in the file of its area. Handlers return a
//! [`SysResult`]; most pass a guest descriptor or a resolved path on to the
//! host's call of the same name, copying guest memory in and out.

use crate::errno::*;
use crate::pmem::FileOp;
use crate::process::{ExitKind, Process};
use crate::signal::*;

mod blocking;
mod files;
mod futex;
mod memory;
mod net;
pub(crate) mod nr;
mod numa;
mod processes;
mod signals;
mod system;
#[cfg(test)]
pub(crate) mod testing;
mod time;

pub(crate) use blocking::interrupt_io;
#[cfg(test)]
pub(crate) use blocking::CONNECTING;
pub(crate) use files::Wait;

fn ret(r: SysResult) -> i64 {
    match r {
        Ok(v) => v,
        Err(e) => e.to_return(),
    }
}

/// A host call's return value as a syscall result: negative means the
/// call failed with the host's errno.
pub(crate) fn host(r: i64) -> SysResult {
    if r < 0 {
        Err(Errno::last_host())
    } else {
        Ok(r)
    }
}

impl Process {
    /// Handles the `ecall` of the current thread.
    pub(crate) fn syscall(&mut self) {
        let i = self.threads.current;
        let x = self.threads.all[i].hart.x;
        let (nr, a) = (x[17], [x[10], x[11], x[12], x[13], x[14], x[15]]);
        let pc = self.threads.all[i].hart.pc;
        if self.memory.phys.tracks_persistence() {
            // What the call writes to NVMM is charged to its ecall.
            let hart = self.threads.all[i].hart.hart_id();
            self.memory.phys.set_persist_context(hart, pc);
        }
        // Default: resume after the ecall. Calls that redirect (sigreturn,
        // execve) or block set the pc themselves.
        self.threads.all[i].hart.pc = pc + 4;
        let r = match nr {
            nr::RT_SIGRETURN => match self.sigreturn() {
                Ok(()) => return,
                Err(_) => {
                    self.exit = Some(ExitKind::Signal(SIGSEGV));
                    return;
                }
            },
            _ => self.dispatch(nr, a),
        };
        if let Some(r) = r {
            let t = self.threads.current_mut();
            t.hart.x[10] = r as u64;
            if r == -EPIPE && raises_sigpipe(nr, a) {
                // As Linux's pipe and socket writes: the emulator's own
                // SIGPIPE is ignored, so the guest's is raised here, at the
                // call's simulated time.
                let pid = self.pid;
                self.queue_signal(
                    self.threads.current,
                    SignalInfo::sent(SIGPIPE, crate::signal::SI_USER, pid),
                );
            }
        }
        if std::mem::take(&mut self.memory.aspace.translations_stale) {
            self.threads.flush_tlbs();
        }
        // What the call made ready wakes its waiters at this time.
        let now = self.threads.cpus[self.threads.current().cpu].core.cycles;
        self.wake_ready_io(Some(now));
        self.take_host_signals();
    }

    /// Runs syscall `nr`; `None` when the call already set up the thread's
    /// registers (exec, exit, blocking waits).
    fn dispatch(&mut self, nr: u64, a: [u64; 6]) -> Option<i64> {
        let fd = a[0] as i32;
        // The NVMM-backed directory is a layer over the host's file system:
        // it sees each file call before the host runs it (and may refuse it)
        // and after it succeeded.
        let layered = self.files.pmem.as_ref().and_then(|_| file_op(nr, a));
        if let Some(op) = &layered {
            if let Err(e) = self.pmem_before(op) {
                return Some(ret(Err(e)));
            }
        }
        let r = match nr {
            // Files and descriptors.
            nr::GETCWD => self.sys_getcwd(a[0], a[1]),
            nr::DUP => self.sys_dup(fd),
            nr::DUP3 => self.sys_dup3(fd, a[1] as i32, a[2] as i32),
            nr::FCNTL => self.sys_fcntl(fd, a[1] as i32, a[2]),
            nr::IOCTL => self.sys_ioctl(fd, a[1], a[2]),
            nr::MKDIRAT => self.sys_mkdirat(a[0], a[1], a[2] as u32),
            nr::MKNODAT => self.sys_mknodat(a[0], a[1], a[2] as u32, a[3]),
            nr::UNLINKAT => self.sys_unlinkat(a[0], a[1], a[2] as i32),
            nr::SYMLINKAT => self.sys_symlinkat(a[0], a[1], a[2]),
            nr::LINKAT => self.sys_linkat(a),
            nr::RENAMEAT2 => self.sys_renameat2(a[0], a[1], a[2], a[3], a[4]),
            nr::STATFS => self.sys_statfs(a[0], a[1]),
            nr::FSTATFS => self.sys_fstatfs(fd, a[1]),
            nr::TRUNCATE => self.sys_truncate(a[0], a[1] as i64),
            nr::FTRUNCATE => self.sys_ftruncate(fd, a[1] as i64),
            nr::FALLOCATE => self.sys_fallocate(fd, a[1] as i32, a[2] as i64, a[3] as i64),
            nr::FACCESSAT => self.sys_faccessat(a[0], a[1], a[2], 0),
            nr::FACCESSAT2 => self.sys_faccessat(a[0], a[1], a[2], a[3]),
            nr::CHDIR => self.sys_chdir(a[0]),
            nr::FCHDIR => self.files.fs.fchdir(fd).map(|_| 0),
            nr::FCHMOD => self.sys_fchmod(fd, a[1] as u32),
            nr::FCHMODAT => self.sys_fchmodat(a[0], a[1], a[2] as u32),
            nr::FCHOWNAT => self.sys_fchownat(a),
            nr::FCHOWN => self.sys_fchown(fd, a[1] as u32, a[2] as u32),
            nr::OPENAT => self.sys_openat(a[0], a[1], a[2], a[3]),
            nr::CLOSE => self.sys_close(fd),
            nr::CLOSE_RANGE => self.sys_close_range(a[0] as u32, a[1] as u32),
            nr::PIPE2 => self.sys_pipe2(a[0], a[1]),
            nr::GETDENTS64 => self.sys_getdents64(fd, a[1], a[2]),
            nr::LSEEK => self.sys_lseek(fd, a[1] as i64, a[2] as i32),
            nr::READ if self.files.timerfds.get(fd).is_some() => {
                return self.timerfd_read(fd, a[1], a[2])
            }
            nr::READ => self.sys_read(fd, a[1], a[2]),
            // A timerfd cannot be written.
            nr::WRITE | nr::WRITEV if self.files.timerfds.get(fd).is_some() => Err(EINVAL),
            nr::WRITE => self.sys_write(fd, a[1], a[2]),
            nr::READV => self.sys_readv(fd, a[1], a[2], None),
            nr::WRITEV => self.sys_writev(fd, a[1], a[2], None),
            nr::PREAD64 => self.sys_pread64(fd, a[1], a[2], a[3] as i64),
            nr::PWRITE64 => self.sys_pwrite64(fd, a[1], a[2], a[3] as i64),
            nr::PREADV => self.sys_readv(fd, a[1], a[2], Some(a[3] as i64)),
            nr::PWRITEV => self.sys_writev(fd, a[1], a[2], Some(a[3] as i64)),
            nr::SENDFILE => self.sys_sendfile(a),
            nr::COPY_FILE_RANGE => self.sys_copy_file_range(a),
            nr::PSELECT6 => return self.sys_pselect6(a),
            nr::PPOLL => return self.sys_ppoll(a),
            nr::READLINKAT => self.sys_readlinkat(a[0], a[1], a[2], a[3]),
            nr::NEWFSTATAT => self.sys_newfstatat(a[0], a[1], a[2], a[3]),
            nr::FSTAT => self.sys_fstat(fd, a[1]),
            nr::STATX => self.sys_statx(a),
            // Every write reaches the host file at once: nothing to flush.
            nr::SYNC => Ok(0),
            nr::FLOCK => self.sys_flock(fd, a[1] as i32),
            nr::FSYNC => self.sys_fsync(fd),
            nr::FDATASYNC => self.sys_fdatasync(fd),
            nr::UTIMENSAT => self.sys_utimensat(a),
            nr::MEMFD_CREATE => self.sys_memfd_create(a[0], a[1] as u32),
            // Memory.
            nr::BRK => Ok(self.memory.aspace.set_brk(&mut self.memory.phys, a[0]) as i64),
            nr::MUNMAP => self.sys_munmap(a[0], a[1]),
            nr::MREMAP => self.sys_mremap(a),
            nr::MMAP => self.sys_mmap(a),
            nr::FADVISE64 => Ok(0),
            nr::MPROTECT => self.sys_mprotect(a[0], a[1], a[2] as u32),
            nr::MSYNC => self.sys_msync(a[0], a[1]),
            // Every page stays put.
            nr::MLOCK | nr::MUNLOCK | nr::MLOCKALL | nr::MUNLOCKALL => Ok(0),
            nr::MINCORE => self.sys_mincore(a[0], a[1], a[2]),
            nr::MADVISE => self.sys_madvise(a[0], a[1], a[2]),
            nr::RISCV_FLUSH_ICACHE => self.sys_riscv_flush_icache(),
            nr::MEMBARRIER => Ok(0),
            nr::SET_MEMPOLICY => self.sys_set_mempolicy(a[0], a[1], a[2]),
            nr::GET_MEMPOLICY => self.sys_get_mempolicy(a),
            nr::MBIND => self.sys_mbind(a),
            nr::MOVE_PAGES => self.sys_move_pages(a),
            nr::MIGRATE_PAGES => self.sys_migrate_pages(a),
            nr::SET_MEMPOLICY_HOME_NODE => self.sys_set_mempolicy_home_node(a),
            // Processes and threads.
            nr::EXIT => {
                self.sys_exit(a[0] as i32);
                return None;
            }
            nr::EXIT_GROUP => {
                self.sys_exit_group(a[0] as i32);
                return None;
            }
            nr::WAITID => self.sys_waitid(a),
            nr::WAIT4 => self.sys_wait4(a),
            nr::SET_TID_ADDRESS => self.sys_set_tid_address(a[0]),
            nr::SET_ROBUST_LIST => Ok(0),
            nr::FUTEX => return self.sys_futex(a),
            nr::CLONE => return self.sys_clone(a[0], a[1], a[2], a[3], a[4]),
            nr::CLONE3 => self.sys_clone3(a[0], a[1]),
            nr::EXECVE => return self.sys_execve(a[0], a[1], a[2]),
            nr::SCHED_SETAFFINITY => self.sys_setaffinity(a[0], a[1], a[2]),
            nr::SCHED_GETAFFINITY => self.sys_getaffinity(a[0], a[1], a[2]),
            nr::SCHED_YIELD => Ok(0),
            nr::SETPRIORITY => Ok(0),
            // Nice 0, in getpriority's 40 - nice form.
            nr::GETPRIORITY => Ok(20),
            nr::SETREGID..=nr::SETFSUID => self.sys_ids(nr, a),
            nr::SETPGID => self.sys_setpgid(a[0] as i32, a[1] as i32),
            nr::GETPGID => self.sys_getpgid(a[0] as i32),
            nr::GETSID => self.sys_getsid(a[0] as i32),
            nr::SETSID => self.sys_setsid(),
            nr::GETGROUPS => self.sys_getgroups(a[0], a[1]),
            nr::SETGROUPS => self.sys_setgroups(a[0], a[1]),
            nr::GETRLIMIT | nr::SETRLIMIT | nr::PRLIMIT64 => self.sys_rlimit(nr, a),
            nr::UMASK => self.sys_umask(a[0] as u32),
            nr::GETCPU => self.sys_getcpu(a[0], a[1]),
            nr::GETPID => Ok(self.pid as i64),
            nr::GETPPID => Ok(i64::from(self.guest_ppid())),
            nr::GETUID | nr::GETEUID | nr::GETGID | nr::GETEGID => self.sys_getid(nr),
            nr::GETTID => Ok(self.threads.current().tid as i64),
            // Signals.
            nr::KILL => self.sys_kill(a[0] as i32, a[1] as i32),
            nr::TKILL => self.sys_tgkill(self.pid, a[0] as i32, a[1] as i32),
            nr::TGKILL => self.sys_tgkill(a[0] as i32, a[1] as i32, a[2] as i32),
            nr::SIGALTSTACK => self.sys_sigaltstack(a[0], a[1]),
            nr::RT_SIGSUSPEND => return self.sys_sigsuspend(a[0]),
            nr::RT_SIGACTION => self.sys_sigaction(a[0] as i32, a[1], a[2]),
            nr::RT_SIGPROCMASK => self.sys_sigprocmask(a[0] as i32, a[1], a[2]),
            nr::RT_SIGPENDING => self.sys_sigpending(a[0]),
            nr::RT_SIGTIMEDWAIT => return self.sys_sigtimedwait(a),
            nr::RT_SIGQUEUEINFO => self.sys_sigqueueinfo(a[0] as i32, None, a[1] as i32, a[2]),
            nr::RT_TGSIGQUEUEINFO => {
                self.sys_sigqueueinfo(a[0] as i32, Some(a[1] as i32), a[2] as i32, a[3])
            }
            // Time.
            nr::NANOSLEEP => return self.sys_nanosleep(1, 0, a[0]),
            nr::CLOCK_NANOSLEEP => return self.sys_nanosleep(a[0], a[1], a[2]),
            nr::CLOCK_GETTIME => self.sys_clock_gettime(a[0], a[1]),
            nr::CLOCK_GETRES => self.sys_clock_getres(a[0], a[1]),
            nr::GETITIMER => self.sys_getitimer(a[0], a[1]),
            nr::SETITIMER => self.sys_setitimer(a[0], a[1], a[2]),
            nr::TIMERFD_CREATE => self.sys_timerfd_create(a[0], a[1]),
            nr::TIMERFD_SETTIME => self.sys_timerfd_settime(fd, a[1], a[2], a[3]),
            nr::TIMERFD_GETTIME => self.sys_timerfd_gettime(fd, a[1]),
            nr::GETTIMEOFDAY => self.sys_gettimeofday(a[0]),
            nr::TIMES => self.sys_times(a[0]),
            nr::GETRUSAGE => self.sys_getrusage(a[1]),
            // System information.
            nr::UNAME => self.sys_uname(a[0]),
            nr::SYSINFO => self.sys_sysinfo(a[0]),
            nr::PRCTL => self.sys_prctl(a[0], a[1]),
            nr::GETRANDOM => self.sys_getrandom(a[0], a[1]),
            nr::RISCV_HWPROBE => self.sys_riscv_hwprobe(a[0], a[1], a[2], a[3], a[4]),
            // rseq is optional for glibc, which falls back without it; a
            // kernel without Landlock answers its calls so (xz's sandbox).
            nr::RSEQ
            | nr::LANDLOCK_CREATE_RULESET
            | nr::LANDLOCK_ADD_RULE
            | nr::LANDLOCK_RESTRICT_SELF => Err(ENOSYS),
            // Sockets, epoll, eventfd.
            nr::EVENTFD2
            | nr::EPOLL_CREATE1
            | nr::EPOLL_CTL
            | nr::EPOLL_PWAIT
            | nr::SOCKET..=nr::RECVMSG
            | nr::ACCEPT4
            | nr::RECVMMSG
            | nr::SENDMMSG => return self.net_syscall(nr, a),
            _ => {
                let name = nr::name(nr).unwrap_or("unknown");
                self.warn_once(
                    nr,
                    &format!("unimplemented syscall {nr} ({name}) returns ENOSYS"),
                );
                Err(ENOSYS)
            }
        };
        let r = match &layered {
            Some(op) => r.and_then(|r| self.pmem_after(op, r)),
            None => r,
        };
        match r {
            Err(BLOCKED) => None,
            r => Some(ret(r)),
        }
    }
}

/// What call `nr` with arguments `a` does to the file system, for the
/// layers over the host's (the NVMM-backed directory); `None` for a call
/// that does not touch it.
fn file_op(nr: u64, a: [u64; 6]) -> Option<FileOp> {
    let fd = a[0] as i32;
    Some(match nr {
        nr::MKDIRAT => FileOp::MakeDir {
            dirfd: fd,
            path: a[1],
        },
        nr::MKNODAT => FileOp::MakeNode {
            dirfd: fd,
            path: a[1],
            mode: a[2] as u32,
        },
        nr::UNLINKAT | nr::RENAMEAT2 | nr::TRUNCATE => FileOp::Names,
        nr::OPENAT => FileOp::Opened,
        nr::FTRUNCATE | nr::FALLOCATE | nr::WRITE | nr::WRITEV | nr::PWRITE64 | nr::PWRITEV => {
            FileOp::Wrote(fd)
        }
        nr::COPY_FILE_RANGE => FileOp::Wrote(a[2] as i32),
        nr::FSYNC | nr::FDATASYNC => FileOp::Synced(fd),
        _ => return None,
    })
}

/// Whether call `nr` with arguments `a`, failing with `EPIPE`, raises
/// `SIGPIPE` (a write to a pipe or stream socket with no reader; not a
/// send with `MSG_NOSIGNAL`).
fn raises_sigpipe(nr: u64, a: [u64; 6]) -> bool {
    const MSG_NOSIGNAL: u64 = 0x4000;
    match nr {
        nr::WRITE
        | nr::WRITEV
        | nr::PWRITEV
        | nr::PWRITEV2
        | nr::SENDFILE
        | nr::SPLICE
        | nr::VMSPLICE
        | nr::TEE => true,
        nr::SENDTO | nr::SENDMMSG => a[3] & MSG_NOSIGNAL == 0,
        nr::SENDMSG => a[2] & MSG_NOSIGNAL == 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn an_ecall_returns_in_a0_and_resumes_after_it() {
        let mut p = process();
        let t = &mut p.threads.all[0];
        t.hart.pc = 0x1000;
        t.hart.x[17] = nr::GETPID;
        p.syscall();
        assert_eq!(p.threads.all[0].hart.x[10], p.pid as u64);
        assert_eq!(p.threads.all[0].hart.pc, 0x1004);
    }

    #[test]
    fn unknown_and_refused_calls_return_enosys() {
        let mut p = process();
        for unknown in [nr::INOTIFY_INIT1, 1000, u64::MAX] {
            assert_eq!(p.dispatch(unknown, [0; 6]), Some(-ENOSYS), "{unknown}");
        }
        assert!(p.warned.contains(&nr::INOTIFY_INIT1), "told once");
        assert_eq!(p.dispatch(nr::RSEQ, [0; 6]), Some(-ENOSYS));
        assert!(!p.warned.contains(&nr::RSEQ), "rseq is refused quietly");
        assert_eq!(
            p.dispatch(38, [0; 6]),
            Some(-ENOSYS),
            "no renameat on riscv64"
        );
    }

    #[test]
    fn errors_reach_the_guest_negated() {
        let mut p = process();
        assert_eq!(
            p.dispatch(nr::CLOSE, [u64::MAX, 0, 0, 0, 0, 0]),
            Some(-EBADF)
        );
        assert_eq!(p.dispatch(nr::UNAME, [WILD, 0, 0, 0, 0, 0]), Some(-EFAULT));
    }
}
