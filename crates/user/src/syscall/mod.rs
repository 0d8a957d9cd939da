//! The Linux system calls of riscv64 (asm-generic numbering).
//!
//! Safety: the `unsafe` blocks in this module are calls of host system calls
//! through libc. Each passes integers, NUL-terminated strings owned by the
//! caller, or pointers to buffers the caller owns for at least the length
//! passed; none keeps a pointer past the call. That one argument covers them
//! all, so they do not repeat it.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::errno::*;
use crate::fs::AT_FDCWD;
use crate::process::{ExitKind, Process};
use crate::signal::*;
use files::nofollow_flag;

mod files;
mod futex;
mod memory;
mod net;
mod processes;
mod signals;
mod system;
mod time;

pub(crate) use files::Wait;
pub(crate) use signals::wait_for_host_signal;

fn ret(r: Result<i64, i64>) -> i64 {
    match r {
        Ok(v) => v,
        Err(e) => -e.abs(),
    }
}

/// A host call's return value as a syscall result: negative means the
/// call failed with the host's errno.
pub(crate) fn host(r: i64) -> Result<i64, i64> {
    if r < 0 {
        Err(-host_errno())
    } else {
        Ok(r)
    }
}

impl Process {
    /// Handles the `ecall` of the current thread.
    pub(crate) fn syscall(&mut self) {
        let i = self.current;
        let x = self.threads[i].hart.x;
        let (nr, a) = (x[17], [x[10], x[11], x[12], x[13], x[14], x[15]]);
        let pc = self.threads[i].hart.pc;
        // Default: resume after the ecall. Calls that redirect (sigreturn,
        // execve) or block set the pc themselves.
        self.threads[i].hart.pc = pc + 4;
        let r = match nr {
            139 => match self.sigreturn() {
                Ok(()) => return,
                Err(_) => {
                    self.exit = Some(ExitKind::Signal(SIGSEGV));
                    return;
                }
            },
            _ => self.dispatch(nr, a),
        };
        if let Some(r) = r {
            let t = &mut self.threads[self.current];
            t.hart.x[10] = r as u64;
        }
        if std::mem::take(&mut self.aspace.translations_stale) {
            self.flush_all_tlbs();
        }
        self.take_host_signals();
    }

    /// Runs syscall `nr`; `None` when the call already set up the thread's
    /// registers (exec, exit, blocking waits).
    fn dispatch(&mut self, nr: u64, a: [u64; 6]) -> Option<i64> {
        let fd = a[0] as i32;
        Some(ret(match nr {
            17 => self.sys_getcwd(a[0], a[1]),
            23 => host(unsafe { libc::dup(fd) } as i64),
            24 => {
                if a[0] == a[1] {
                    Err(EINVAL)
                } else {
                    host(unsafe { libc::dup3(fd, a[1] as i32, a[2] as i32) } as i64)
                }
            }
            25 => self.sys_fcntl(fd, a[1] as i32, a[2]),
            29 => self.sys_ioctl(fd, a[1], a[2]),
            34 => self.path_op(
                a[0],
                a[1],
                false,
                |d, n| unsafe { libc::mkdirat(d, n, a[2] as u32) } as i64,
            ),
            35 => {
                self.path_op(
                    a[0],
                    a[1],
                    false,
                    |d, n| unsafe { libc::unlinkat(d, n, a[2] as i32) } as i64,
                )
            }
            36 => {
                let target = self.read_cstr(a[0]);
                match target.and_then(|t| std::ffi::CString::new(t).map_err(|_| EINVAL)) {
                    Ok(t) => self.path_op(a[1], a[2], false, |d, n| unsafe {
                        libc::symlinkat(t.as_ptr(), d, n)
                    } as i64),
                    Err(e) => Err(e),
                }
            }
            37 => self.sys_linkat(a),
            38 | 276 => {
                self.sys_renameat2(a[0], a[1], a[2], a[3], if nr == 276 { a[4] } else { 0 })
            }
            43 => self.path_buf_op(AT_FDCWD as u64, a[0], a[1], 120, true, |d, n, b| {
                if n.to_bytes().is_empty() {
                    unsafe { libc::fstatfs(d, b.cast()) as i64 }
                } else {
                    unsafe { libc::statfs(n.as_ptr(), b.cast()) as i64 }
                }
            }),
            44 => self.fd_out(a[1], 120, |b| unsafe { libc::fstatfs(fd, b.cast()) } as i64),
            45 => self.path_op(AT_FDCWD as u64, a[0], true, |d, n| {
                // SAFETY: n is NUL-terminated; an empty name means d is an
                // O_PATH descriptor of the file itself, reopened through /proc.
                unsafe {
                    let f = if *n == 0 {
                        let p = std::ffi::CString::new(format!("/proc/self/fd/{d}")).unwrap();
                        libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC)
                    } else {
                        libc::openat(d, n, libc::O_WRONLY | libc::O_CLOEXEC)
                    };
                    if f < 0 {
                        return -1;
                    }
                    let r = libc::ftruncate(f, a[1] as i64);
                    libc::close(f);
                    r as i64
                }
            }),
            46 => host(unsafe { libc::ftruncate(fd, a[1] as i64) } as i64),
            47 => {
                host(unsafe { libc::fallocate(fd, a[1] as i32, a[2] as i64, a[3] as i64) } as i64)
            }
            48 | 439 => self.sys_faccessat(a[0], a[1], a[2], if nr == 439 { a[3] } else { 0 }),
            49 => self
                .read_cstr(a[0])
                .and_then(|p| self.fs.chdir(&p).map(|_| 0)),
            50 => self.fs.fchdir(fd).map(|_| 0),
            52 => host(unsafe { libc::fchmod(fd, a[1] as u32) } as i64),
            53 => self.path_op(a[0], a[1], true, |d, n| unsafe {
                libc::fchmodat(d, n, a[2] as u32, 0)
            } as i64),
            54 => {
                let follow = a[4] & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
                self.path_op(a[0], a[1], follow, |d, n| unsafe {
                    libc::fchownat(d, n, a[2] as u32, a[3] as u32, nofollow_flag(follow))
                } as i64)
            }
            55 => host(unsafe { libc::fchown(fd, a[1] as u32, a[2] as u32) } as i64),
            56 => self.sys_openat(a[0], a[1], a[2], a[3]),
            57 => self.sys_close(fd),
            59 => self.sys_pipe2(a[0], a[1]),
            61 => self.fd_read_like(a[1], a[2], |b, n| unsafe {
                libc::syscall(libc::SYS_getdents64, fd, b, n)
            }),
            62 => host(unsafe { libc::lseek(fd, a[1] as i64, a[2] as i32) }),
            63 => self.fd_read_like(a[1], a[2], |b, n| unsafe { libc::read(fd, b.cast(), n) }
                as i64),
            64 => self.fd_write_like(a[1], a[2], |b, n| unsafe { libc::write(fd, b.cast(), n) }
                as i64),
            65 => self.sys_readv(fd, a[1], a[2], None),
            66 => self.sys_writev(fd, a[1], a[2], None),
            67 => self.fd_read_like(a[1], a[2], |b, n| unsafe {
                libc::pread(fd, b.cast(), n, a[3] as i64)
            } as i64),
            68 => self.fd_write_like(a[1], a[2], |b, n| unsafe {
                libc::pwrite(fd, b.cast(), n, a[3] as i64)
            } as i64),
            69 => self.sys_readv(fd, a[1], a[2], Some(a[3] as i64)),
            70 => self.sys_writev(fd, a[1], a[2], Some(a[3] as i64)),
            71 => self.sys_sendfile(a),
            72 => return self.sys_pselect6(a),
            73 => return self.sys_ppoll(a),
            78 => self.sys_readlinkat(a[0], a[1], a[2], a[3]),
            79 => self.sys_newfstatat(a[0], a[1], a[2], a[3]),
            80 => self.sys_fstat(fd, a[1]),
            81 => Ok(0),
            82 => host(unsafe { libc::fsync(fd) } as i64),
            83 => host(unsafe { libc::fdatasync(fd) } as i64),
            88 => self.sys_utimensat(a),
            93 => {
                self.sys_exit(a[0] as i32);
                return None;
            }
            94 => {
                self.exit = Some(ExitKind::Code(a[0] as i32 & 0xff));
                return None;
            }
            95 => self.sys_waitid(a),
            96 => {
                self.threads[self.current].clear_child_tid = a[0];
                Ok(self.threads[self.current].tid as i64)
            }
            98 => return self.sys_futex(a),
            99 => Ok(0),
            101 => return self.sys_nanosleep(1, 0, a[0]),
            113 => self.sys_clock_gettime(a[0], a[1]),
            114 => {
                if a[1] != 0 {
                    self.write_u64(a[1], 0)
                        .and_then(|_| self.write_u64(a[1] + 8, 1))
                        .map(|_| 0)
                } else {
                    Ok(0)
                }
            }
            115 => return self.sys_nanosleep(a[0], a[1], a[2]),
            122 => self.sys_setaffinity(a[0], a[1], a[2]),
            123 => self.sys_getaffinity(a[0], a[1], a[2]),
            124 => Ok(0),
            129 => self.sys_kill(a[0] as i32, a[1] as i32),
            130 => self.sys_tgkill(self.pid, a[0] as i32, a[1] as i32),
            131 => self.sys_tgkill(a[0] as i32, a[1] as i32, a[2] as i32),
            132 => self.sys_sigaltstack(a[0], a[1]),
            133 => return self.sys_sigsuspend(a[0]),
            137 => return self.sys_sigtimedwait(a),
            138 => self.sys_sigqueueinfo(a[0] as i32, None, a[1] as i32, a[2]),
            240 => self.sys_sigqueueinfo(a[0] as i32, Some(a[1] as i32), a[2] as i32, a[3]),
            134 => self.sys_sigaction(a[0] as i32, a[1], a[2]),
            135 => self.sys_sigprocmask(a[0] as i32, a[1], a[2]),
            136 => {
                let t = &self.threads[self.current];
                let m = t.pending.iter().fold(0u64, |m, p| m | 1 << (p.signo - 1));
                self.write_u64(a[0], m).map(|_| 0)
            }
            140 | 141 => Ok(if nr == 141 { 20 } else { 0 }),
            143..=151 => self.sys_ids(nr, a),
            153 => self.sys_times(a[0]),
            154 => host(unsafe { libc::setpgid(a[0] as i32, a[1] as i32) } as i64),
            155 => host(unsafe { libc::getpgid(a[0] as i32) } as i64),
            156 => host(unsafe { libc::getsid(a[0] as i32) } as i64),
            157 => host(unsafe { libc::setsid() } as i64),
            158 => self.sys_getgroups(a[0], a[1]),
            160 => self.sys_uname(a[0]),
            163 | 164 | 261 => self.sys_rlimit(nr, a),
            165 => self.sys_getrusage(a[1]),
            166 => {
                let old = self.umask;
                self.umask = a[0] as u32 & 0o777;
                unsafe { libc::umask(self.umask) };
                Ok(old as i64)
            }
            167 => self.sys_prctl(a[0], a[1]),
            168 => {
                let cpu = self.threads[self.current].cpu as u32;
                if a[0] != 0 {
                    let _ = self.write_u32(a[0], cpu);
                }
                if a[1] != 0 {
                    let _ = self.write_u32(a[1], 0);
                }
                Ok(0)
            }
            169 => self.sys_gettimeofday(a[0]),
            172 => Ok(self.pid as i64),
            173 => Ok(unsafe { libc::getppid() } as i64),
            174 => Ok(unsafe { libc::getuid() } as i64),
            175 => Ok(unsafe { libc::geteuid() } as i64),
            176 => Ok(unsafe { libc::getgid() } as i64),
            177 => Ok(unsafe { libc::getegid() } as i64),
            178 => Ok(self.threads[self.current].tid as i64),
            179 => self.sys_sysinfo(a[0]),
            214 => Ok(self.aspace.set_brk(&mut self.mem, a[0]) as i64),
            215 => self.sys_munmap(a[0], a[1]),
            216 => self.sys_mremap(a),
            220 => return self.sys_clone(a[0], a[1], a[2], a[3], a[4]),
            221 => return self.sys_execve(a[0], a[1], a[2]),
            222 => self.sys_mmap(a),
            223 => Ok(0),
            226 => self.sys_mprotect(a[0], a[1], a[2] as u32),
            227 => self.sys_msync(a[0], a[1]),
            // mlock, munlock, mlockall, munlockall: every page stays put.
            228..=231 => Ok(0),
            232 => self.sys_mincore(a[0], a[1], a[2]),
            233 => self.sys_madvise(a[0], a[1], a[2]),
            258 => self.sys_riscv_hwprobe(a[0], a[1], a[2], a[3], a[4]),
            // rseq is optional for glibc, which falls back without it; a
            // kernel without Landlock answers its calls so (xz's sandbox).
            293 | 444..=446 => Err(ENOSYS),
            259 => {
                self.code.pages.flush_pending = true;
                Ok(0)
            }
            260 => self.sys_wait4(a),
            278 => self.sys_getrandom(a[0], a[1]),
            279 => self.read_cstr(a[0]).and_then(|n| {
                let c = std::ffi::CString::new(n).map_err(|_| EINVAL)?;
                host(unsafe { libc::memfd_create(c.as_ptr(), a[1] as u32) } as i64)
            }),
            283 => Ok(0),
            291 => self.sys_statx(a),
            435 => self.sys_clone3(a[0], a[1]),
            436 => {
                let (lo, hi) = (a[0] as u32, a[1] as u32);
                for f in lo..=hi.min(1 << 20) {
                    if !self.is_internal_fd(f as i32) {
                        unsafe { libc::close(f as i32) };
                    }
                }
                Ok(0)
            }
            19..=22 | 198..=212 | 242 => return self.net_syscall(nr, a),
            _ => {
                let name = syscall_name(nr);
                self.warn_once(
                    nr,
                    &format!("unimplemented syscall {nr} ({name}) returns ENOSYS"),
                );
                Err(ENOSYS)
            }
        }))
    }
}

/// Names of common syscalls, for the one-time ENOSYS notice.
fn syscall_name(nr: u64) -> &'static str {
    match nr {
        19 => "eventfd2",
        20 => "epoll_create1",
        21 => "epoll_ctl",
        22 => "epoll_pwait",
        26 => "inotify_init1",
        74 => "signalfd4",
        85 => "timerfd_create",
        102 => "getitimer",
        103 => "setitimer",
        107 => "timer_create",
        137 => "rt_sigtimedwait",
        198 => "socket",
        199 => "socketpair",
        200 => "bind",
        203 => "connect",
        258 => "riscv_hwprobe",
        293 => "rseq",
        424 => "pidfd_send_signal",
        434 => "pidfd_open",
        _ => "unknown",
    }
}
