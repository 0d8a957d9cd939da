//! The Linux system calls of riscv64 (asm-generic numbering).
//!
//! Safety: the `unsafe` blocks in this module are calls of host system calls
//! through libc. Each passes integers, NUL-terminated strings owned by the
//! caller, or pointers to buffers the caller owns for at least the length
//! passed; none keeps a pointer past the call. That one argument covers them
//! all, so they do not repeat it.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::errno::*;
use crate::fs::{guest_stat, unsafe_zeroed_stat, AT_FDCWD};
use crate::process::{ExitKind, Process, Thread, ThreadState};
use crate::signal::*;
use crate::vm::{Backing, PROT_EXEC, PROT_WRITE};
use std::os::fd::FromRawFd;
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

/// What a polling call that found nothing ready does next.
pub(crate) enum Wait {
    /// Block on the host for up to this many ms (-1: forever).
    Host(i32),
    /// The thread sleeps and re-executes the call.
    Restarted,
    /// The call's deadline has passed.
    TimedOut,
}

const MAX_IO: usize = 64 << 20;

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

    /// Queues signals the host delivered to the emulator.
    pub(crate) fn take_host_signals(&mut self) {
        let bits = HOST_PENDING.swap(0, Ordering::SeqCst);
        if bits == 0 {
            return;
        }
        for s in 1..64 {
            if bits & (1 << (s - 1)) != 0 {
                // The sender is unknown to us; report the parent as Linux
                // would for a terminal or shell signal.
                let target = self.signal_target(s);
                let ppid = unsafe { libc::getppid() };
                self.queue_signal(target, SignalInfo::sent(s, SI_USER, ppid));
            }
        }
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

    fn is_internal_fd(&self, fd: i32) -> bool {
        self.fs.internal_fd() == Some(fd)
    }

    // ---- files ----------------------------------------------------------------

    fn path_op(
        &mut self,
        dirfd: u64,
        path: u64,
        follow: bool,
        f: impl FnOnce(i32, *const libc::c_char) -> i64,
    ) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        let n = self.fs.resolve(dirfd as i32, &p, follow)?;
        host(f(n.dirfd, n.name.as_ptr()))
    }

    fn path_buf_op(
        &mut self,
        dirfd: u64,
        path: u64,
        out: u64,
        size: usize,
        follow: bool,
        f: impl FnOnce(i32, &std::ffi::CStr, *mut u8) -> i64,
    ) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        let n = self.fs.resolve(dirfd as i32, &p, follow)?;
        let mut buf = vec![0u8; size];
        let r = host(f(n.dirfd, &n.name, buf.as_mut_ptr()))?;
        self.write_mem(out, &buf)?;
        Ok(r)
    }

    fn fd_out(
        &mut self,
        out: u64,
        size: usize,
        f: impl FnOnce(*mut u8) -> i64,
    ) -> Result<i64, i64> {
        let mut buf = vec![0u8; size];
        let r = host(f(buf.as_mut_ptr()))?;
        self.write_mem(out, &buf)?;
        Ok(r)
    }

    fn fd_read_like(
        &mut self,
        buf: u64,
        len: u64,
        f: impl FnOnce(*mut u8, usize) -> i64,
    ) -> Result<i64, i64> {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        let r = host(f(tmp.as_mut_ptr(), n))?;
        self.write_mem(buf, &tmp[..r as usize])?;
        Ok(r)
    }

    fn fd_write_like(
        &mut self,
        buf: u64,
        len: u64,
        f: impl FnOnce(*const u8, usize) -> i64,
    ) -> Result<i64, i64> {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        self.read_mem(buf, &mut tmp)?;
        host(f(tmp.as_ptr(), n))
    }

    fn read_iovecs(&mut self, iov: u64, cnt: u64) -> Result<Vec<(u64, u64)>, i64> {
        if cnt > 1024 {
            return Err(EINVAL);
        }
        (0..cnt)
            .map(|k| {
                Ok((
                    self.read_u64(iov + k * 16)?,
                    self.read_u64(iov + k * 16 + 8)?,
                ))
            })
            .collect()
    }

    fn sys_readv(&mut self, fd: i32, iov: u64, cnt: u64, off: Option<i64>) -> Result<i64, i64> {
        let v = self.read_iovecs(iov, cnt)?;
        let total: u64 = v.iter().map(|x| x.1).sum::<u64>().min(MAX_IO as u64);
        let mut tmp = vec![0u8; total as usize];
        let r = host(match off {
            Some(o) => unsafe { libc::pread(fd, tmp.as_mut_ptr().cast(), tmp.len(), o) },
            None => unsafe { libc::read(fd, tmp.as_mut_ptr().cast(), tmp.len()) },
        } as i64)?;
        let mut done = 0usize;
        for (base, len) in v {
            if done >= r as usize {
                break;
            }
            let n = (len as usize).min(r as usize - done);
            self.write_mem(base, &tmp[done..done + n])?;
            done += n;
        }
        Ok(r)
    }

    fn sys_writev(&mut self, fd: i32, iov: u64, cnt: u64, off: Option<i64>) -> Result<i64, i64> {
        let v = self.read_iovecs(iov, cnt)?;
        let mut tmp = Vec::new();
        for (base, len) in v {
            let start = tmp.len();
            tmp.resize(start + (len as usize).min(MAX_IO), 0);
            self.read_mem(base, &mut tmp[start..])?;
        }
        host(match off {
            Some(o) => unsafe { libc::pwrite(fd, tmp.as_ptr().cast(), tmp.len(), o) },
            None => unsafe { libc::write(fd, tmp.as_ptr().cast(), tmp.len()) },
        } as i64)
    }

    fn sys_getcwd(&mut self, buf: u64, size: u64) -> Result<i64, i64> {
        let mut cwd = self.fs.getcwd()?;
        cwd.push(0);
        if cwd.len() as u64 > size {
            return Err(ERANGE);
        }
        self.write_mem(buf, &cwd)?;
        Ok(cwd.len() as i64)
    }

    fn sys_openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        if let Some(dev) = crate::devices::Device::by_path(&p) {
            return self.open_device(dev, flags as i32);
        }
        if let Some(f) = self.emulated_file(dirfd as i32, &p) {
            return self.open_emulated(f, flags as i32);
        }
        self.fs
            .open(dirfd as i32, &p, flags as i32, mode as u32)
            .map(|f| f as i64)
    }

    fn sys_close(&mut self, fd: i32) -> Result<i64, i64> {
        if self.is_internal_fd(fd) {
            return Err(EBADF);
        }
        host(unsafe { libc::close(fd) } as i64)
    }

    fn sys_pipe2(&mut self, out: u64, flags: u64) -> Result<i64, i64> {
        let mut fds = [0i32; 2];
        host(unsafe { libc::pipe2(fds.as_mut_ptr(), flags as i32) } as i64)?;
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&fds[0].to_le_bytes());
        b[4..].copy_from_slice(&fds[1].to_le_bytes());
        if let Err(e) = self.write_mem(out, &b) {
            unsafe { libc::close(fds[0]) };
            unsafe { libc::close(fds[1]) };
            return Err(e);
        }
        Ok(0)
    }

    fn sys_fcntl(&mut self, fd: i32, cmd: i32, arg: u64) -> Result<i64, i64> {
        match cmd {
            libc::F_GETLK
            | libc::F_SETLK
            | libc::F_SETLKW
            | libc::F_OFD_GETLK
            | libc::F_OFD_SETLK
            | libc::F_OFD_SETLKW => {
                let mut b = [0u8; 32];
                self.read_mem(arg, &mut b)?;
                let r = host(unsafe { libc::fcntl(fd, cmd, b.as_mut_ptr()) } as i64)?;
                self.write_mem(arg, &b)?;
                Ok(r)
            }
            _ => host(unsafe { libc::fcntl(fd, cmd, arg as libc::c_long) } as i64),
        }
    }

    fn sys_ioctl(&mut self, fd: i32, req: u64, arg: u64) -> Result<i64, i64> {
        let size = match req {
            0x5401 => 36,                           // TCGETS
            0x5402..=0x5404 => 36,                  // TCSETS*
            0x5413 | 0x5414 => 8,                   // TIOCGWINSZ, TIOCSWINSZ
            0x540F | 0x5410 | 0x541B | 0x5429 => 4, // TIOCGPGRP, TIOCSPGRP, FIONREAD, TIOCGSID
            0x5421 => 4,                            // FIONBIO
            0x5451 | 0x5450 => 0,                   // FIOCLEX, FIONCLEX
            _ => {
                self.warn_once(
                    1 << 32 | req,
                    &format!("unsupported ioctl {req:#x} returns ENOTTY"),
                );
                return Err(ENOTTY);
            }
        };
        let mut b = vec![0u8; size.max(1)];
        if size > 0 {
            self.read_mem(arg, &mut b)?;
        }
        let r = host(unsafe { libc::ioctl(fd, req as libc::c_ulong, b.as_mut_ptr()) } as i64)?;
        if size > 0 && matches!(req, 0x5401 | 0x5413 | 0x540F | 0x541B | 0x5429) {
            self.write_mem(arg, &b[..size])?;
        }
        Ok(r)
    }

    fn sys_linkat(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let (p1, p2) = (self.read_cstr(a[1])?, self.read_cstr(a[3])?);
        let follow = a[4] & libc::AT_SYMLINK_FOLLOW as u64 != 0;
        let n1 = self.fs.resolve(a[0] as i32, &p1, follow)?;
        let n2 = self.fs.resolve(a[2] as i32, &p2, false)?;
        let flags = if follow { libc::AT_SYMLINK_FOLLOW } else { 0 };
        host(unsafe {
            libc::linkat(
                n1.dirfd,
                n1.name.as_ptr(),
                n2.dirfd,
                n2.name.as_ptr(),
                flags,
            )
        } as i64)
    }

    fn sys_renameat2(
        &mut self,
        od: u64,
        op: u64,
        nd: u64,
        np: u64,
        flags: u64,
    ) -> Result<i64, i64> {
        let (p1, p2) = (self.read_cstr(op)?, self.read_cstr(np)?);
        let n1 = self.fs.resolve(od as i32, &p1, false)?;
        let n2 = self.fs.resolve(nd as i32, &p2, false)?;
        host(unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                n1.dirfd,
                n1.name.as_ptr(),
                n2.dirfd,
                n2.name.as_ptr(),
                flags as u32,
            )
        })
    }

    fn sys_faccessat(&mut self, dirfd: u64, path: u64, mode: u64, flags: u64) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        let follow = flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
        let n = self.fs.resolve(dirfd as i32, &p, follow)?;
        let fl = nofollow_flag(follow) | (flags as i32 & libc::AT_EACCESS);
        host(unsafe {
            libc::syscall(
                libc::SYS_faccessat2,
                n.dirfd,
                n.name.as_ptr(),
                mode as i32,
                fl,
            )
        })
    }

    fn sys_readlinkat(&mut self, dirfd: u64, path: u64, buf: u64, size: u64) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        let target = self.fs.readlink(dirfd as i32, &p)?;
        let n = target.len().min(size as usize);
        self.write_mem(buf, &target[..n])?;
        Ok(n as i64)
    }

    fn sys_newfstatat(&mut self, dirfd: u64, path: u64, out: u64, flags: u64) -> Result<i64, i64> {
        let p = self.read_cstr(path)?;
        let mut st = unsafe_zeroed_stat();
        if p.is_empty() && flags & libc::AT_EMPTY_PATH as u64 != 0 {
            host(unsafe { libc::fstat(dirfd as i32, &mut st) } as i64)?;
        } else {
            let follow = flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
            let n = self.fs.resolve(dirfd as i32, &p, follow)?;
            let fl = nofollow_flag(follow);
            host(unsafe { libc::fstatat(n.dirfd, n.name.as_ptr(), &mut st, fl) } as i64)?;
        }
        self.write_mem(out, &guest_stat(&st))?;
        Ok(0)
    }

    fn sys_fstat(&mut self, fd: i32, out: u64) -> Result<i64, i64> {
        let mut st = unsafe_zeroed_stat();
        host(unsafe { libc::fstat(fd, &mut st) } as i64)?;
        self.write_mem(out, &guest_stat(&st))?;
        Ok(0)
    }

    fn sys_statx(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let p = self.read_cstr(a[1])?;
        let flags = a[2] as i32;
        let mut buf = [0u8; 256];
        if p.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
            host(unsafe {
                libc::syscall(
                    libc::SYS_statx,
                    a[0] as i32,
                    c"".as_ptr(),
                    flags,
                    a[3] as u32,
                    buf.as_mut_ptr(),
                )
            })?;
        } else {
            let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
            let n = self.fs.resolve(a[0] as i32, &p, follow)?;
            let fl = (flags & !libc::AT_SYMLINK_NOFOLLOW) | nofollow_flag(follow);
            host(unsafe {
                libc::syscall(
                    libc::SYS_statx,
                    n.dirfd,
                    n.name.as_ptr(),
                    fl,
                    a[3] as u32,
                    buf.as_mut_ptr(),
                )
            })?;
        }
        self.write_mem(a[4], &buf)?;
        Ok(0)
    }

    fn sys_utimensat(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let mut ts = [0u8; 32];
        let tp = if a[2] != 0 {
            self.read_mem(a[2], &mut ts)?;
            ts.as_ptr()
        } else {
            std::ptr::null()
        };
        if a[1] == 0 {
            return host(unsafe {
                libc::syscall(
                    libc::SYS_utimensat,
                    a[0] as i32,
                    std::ptr::null::<u8>(),
                    tp,
                    a[3] as i32,
                )
            });
        }
        let p = self.read_cstr(a[1])?;
        let follow = a[3] & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
        let n = self.fs.resolve(a[0] as i32, &p, follow)?;
        let fl = nofollow_flag(follow);
        host(unsafe { libc::syscall(libc::SYS_utimensat, n.dirfd, n.name.as_ptr(), tp, fl) })
    }

    fn sys_sendfile(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let mut off: i64 = 0;
        let offp = if a[2] != 0 {
            off = self.read_u64(a[2])? as i64;
            &mut off as *mut i64
        } else {
            std::ptr::null_mut()
        };
        let r =
            host(unsafe { libc::sendfile(a[0] as i32, a[1] as i32, offp, a[3] as usize) } as i64)?;
        if a[2] != 0 {
            self.write_u64(a[2], off as u64)?;
        }
        Ok(r)
    }

    /// Reads an optional timespec as nanoseconds.
    fn read_timeout(&mut self, addr: u64) -> Result<Option<u64>, i64> {
        if addr == 0 {
            return Ok(None);
        }
        let s = self.read_u64(addr)?;
        let ns = self.read_u64(addr + 8)?;
        if s as i64 <= -1 || ns >= 1_000_000_000 {
            return Err(EINVAL);
        }
        Ok(Some(s.saturating_mul(1_000_000_000).saturating_add(ns)))
    }

    /// A polling call found nothing ready. With other guest threads able to
    /// run, the thread sleeps for a short simulated interval and re-executes
    /// the call (so the others progress, deterministically); alone, it
    /// blocks on the host.
    pub(crate) fn wait_or_restart(&mut self, timeout_ns: Option<u64>) -> Wait {
        const POLL_INTERVAL_NS: u64 = 100_000;
        let i = self.current;
        let now = self.now_ns();
        let deadline = self.threads[i]
            .wait_deadline
            .unwrap_or_else(|| timeout_ns.map_or(u64::MAX, |t| now.saturating_add(t)));
        if now >= deadline {
            self.threads[i].wait_deadline = None;
            return Wait::TimedOut;
        }
        let others = self.threads.iter().enumerate().any(|(k, t)| {
            k != i
                && matches!(
                    t.state,
                    ThreadState::Runnable
                        | ThreadState::Sleep { .. }
                        | ThreadState::SigTimedWait {
                            deadline: Some(_),
                            ..
                        }
                )
        });
        if !others {
            self.threads[i].wait_deadline = None;
            let ms = match timeout_ns {
                None => -1,
                Some(t) => {
                    (deadline.saturating_sub(now).min(t) / 1_000_000).min(i32::MAX as u64) as i32
                }
            };
            return Wait::Host(ms);
        }
        let t = &mut self.threads[i];
        t.wait_deadline = Some(deadline);
        t.state = ThreadState::Sleep {
            until: now.saturating_add(POLL_INTERVAL_NS).min(deadline),
            restart: true,
        };
        t.hart.pc -= 4;
        Wait::Restarted
    }

    fn sys_ppoll(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, i64> {
            let n = a[1] as usize;
            if n > 4096 {
                return Err(EINVAL);
            }
            let timeout = self.read_timeout(a[2])?;
            if n == 0 {
                // pause(), or a plain sleep.
                let i = self.current;
                self.threads[i].state = match timeout {
                    None => ThreadState::SigWait,
                    Some(t) => ThreadState::Sleep {
                        until: self.now_ns().saturating_add(t),
                        restart: false,
                    },
                };
                self.threads[i].hart.x[10] = if timeout.is_some() {
                    0
                } else {
                    (-EINTR) as u64
                };
                return Ok(None);
            }
            let mut fds = vec![0u8; n * 8];
            self.read_mem(a[0], &mut fds)?;
            let poll = |fds: &mut Vec<u8>, ms: i32| {
                host(unsafe { libc::poll(fds.as_mut_ptr().cast(), n as libc::nfds_t, ms) } as i64)
            };
            let mut r = poll(&mut fds, 0)?;
            if r == 0 && timeout != Some(0) {
                match self.wait_or_restart(timeout) {
                    Wait::Restarted => return Ok(None),
                    Wait::TimedOut => {}
                    Wait::Host(ms) => r = poll(&mut fds, ms)?,
                }
            }
            self.threads[self.current].wait_deadline = None;
            self.write_mem(a[0], &fds)?;
            Ok(Some(r))
        })();
        match r {
            Ok(v) => v,
            Err(e) => Some(-e),
        }
    }

    fn sys_pselect6(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, i64> {
            let n = a[0] as usize;
            if n > 1024 {
                return Err(EINVAL);
            }
            let timeout = self.read_timeout(a[4])?;
            let bytes = n.div_ceil(64) * 8;
            let mut orig = [[0u8; 128]; 3];
            for (k, s) in orig.iter_mut().enumerate() {
                if a[1 + k] != 0 {
                    self.read_mem(a[1 + k], &mut s[..bytes])?;
                }
            }
            let select = |sets: &mut [[u8; 128]; 3], ms: i64| {
                let mut tv = libc::timeval {
                    tv_sec: ms.max(0) / 1000,
                    tv_usec: (ms.max(0) % 1000) * 1000,
                };
                let tvp = if ms < 0 {
                    std::ptr::null_mut()
                } else {
                    &mut tv as *mut libc::timeval
                };
                let [s0, s1, s2] = sets;
                let p = |k: usize, s: &mut [u8; 128]| {
                    if a[1 + k] != 0 {
                        s.as_mut_ptr().cast::<libc::fd_set>()
                    } else {
                        std::ptr::null_mut()
                    }
                };
                host(unsafe { libc::select(n as i32, p(0, s0), p(1, s1), p(2, s2), tvp) } as i64)
            };
            let mut sets = orig;
            let mut r = select(&mut sets, 0)?;
            if r == 0 && timeout != Some(0) {
                match self.wait_or_restart(timeout) {
                    Wait::Restarted => return Ok(None),
                    Wait::TimedOut => {}
                    Wait::Host(ms) => {
                        sets = orig;
                        r = select(&mut sets, ms as i64)?;
                    }
                }
            }
            self.threads[self.current].wait_deadline = None;
            for (k, s) in sets.iter().enumerate() {
                if a[1 + k] != 0 {
                    self.write_mem(a[1 + k], &s[..bytes])?;
                }
            }
            Ok(Some(r))
        })();
        match r {
            Ok(v) => v,
            Err(e) => Some(-e),
        }
    }

    // ---- memory ---------------------------------------------------------------

    fn sys_mmap(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let (addr, len, prot, flags, fd, off) =
            (a[0], a[1], a[2] as u32, a[3] as u32, a[4] as i32, a[5]);
        const MAP_SHARED: u32 = 1;
        const MAP_FIXED: u32 = 0x10;
        const MAP_ANON: u32 = 0x20;
        const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;
        const MAP_TYPE: u32 = 0x0f;
        const MAP_SHARED_VALIDATE: u32 = 3;
        const MAP_SYNC: u32 = 0x8_0000;
        // Linux's map types: 1 shared, 2 private, 3 shared with the flags
        // validated; MAP_SYNC (only there) promises a DAX mapping, which
        // only the physical-memory devices give: a host file's pages are
        // page cache, so refusing it is what tells a program so.
        let kind = flags & MAP_TYPE;
        if !(1..=3).contains(&kind) {
            return Err(EINVAL);
        }
        let sync = kind == MAP_SHARED_VALIDATE && flags & MAP_SYNC != 0;
        if len == 0
            || off & 0xfff != 0
            || (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 && addr & 0xfff != 0)
        {
            return Err(EINVAL);
        }
        let len = len.checked_add(0xfff).ok_or(ENOMEM)? & !0xfff;
        if len >= crate::vm::USER_TOP {
            return Err(ENOMEM);
        }
        let start = self.aspace.place(
            addr,
            len,
            flags & MAP_FIXED != 0,
            flags & MAP_FIXED_NOREPLACE != 0,
        )?;
        let anon = flags & MAP_ANON != 0;
        let shared = flags & MAP_SHARED != 0;
        let device = if anon {
            None
        } else {
            crate::devices::Device::of_fd(fd)
        };
        // Linux accounts private writable and shared anonymous memory
        // (unless MAP_NORESERVE) and refuses a request larger than RAM.
        const MAP_NORESERVE: u32 = 0x4000;
        let accounted = anon || (!shared && prot & PROT_WRITE != 0);
        let pool = if anon && !shared {
            self.aspace.heap_pool
        } else {
            0
        };
        if accounted
            && device.is_none()
            && flags & MAP_NORESERVE == 0
            && !self.aspace.may_commit(len, pool)
        {
            return Err(ENOMEM);
        }
        if sync && device.is_none() {
            return Err(EOPNOTSUPP);
        }
        if !anon {
            if let Some(dev) = device {
                // A window on physical memory (/dev/nvmm, /dev/nvmm-ctl).
                let base = self.device_window(dev, off, len)?;
                self.aspace.frames.claim(base, base + len)?;
                if !self.aspace.is_free(start, start + len) {
                    let exec = self.aspace.unmap(&mut self.mem, start, start + len);
                    self.after_unmap(exec);
                }
                self.aspace.add(
                    start,
                    start + len,
                    prot,
                    Backing::Physical { base },
                    dev.path(),
                );
                return Ok(start as i64);
            }
        }
        let file = if anon && !shared {
            None
        } else {
            // The file behind the mapping: a duplicate of the guest's
            // descriptor, or for shared anonymous memory a memfd (so forked
            // children share it too). Pages come in on first touch.
            let raw = if anon {
                let fd = unsafe { libc::memfd_create(c"rvnvmm-shm".as_ptr(), libc::MFD_CLOEXEC) };
                if fd < 0 || unsafe { libc::ftruncate(fd, len as i64) } < 0 {
                    return Err(-host_errno());
                }
                fd
            } else {
                let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                if fl < 0 {
                    return Err(EBADF);
                }
                let acc = fl & libc::O_ACCMODE;
                if acc == libc::O_WRONLY
                    || (shared && prot & PROT_WRITE != 0 && acc == libc::O_RDONLY)
                {
                    return Err(EACCES);
                }
                let mut st = unsafe_zeroed_stat();
                if unsafe { libc::fstat(fd, &mut st) } < 0
                    || st.st_mode & libc::S_IFMT == libc::S_IFDIR
                {
                    return Err(ENODEV);
                }
                let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 1000) };
                if dup < 0 {
                    return Err(-host_errno());
                }
                dup
            };
            let writable = anon
                || unsafe { libc::fcntl(raw, libc::F_GETFL) } & libc::O_ACCMODE == libc::O_RDWR;
            // SAFETY: `raw` is a descriptor created above and owned from here on.
            let fd = std::rc::Rc::new(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) });
            Some(crate::vm::FileMap {
                fd,
                offset: if anon { 0 } else { off },
                shared,
                writable,
            })
        };
        if !self.aspace.is_free(start, start + len) {
            let exec = self.aspace.unmap(&mut self.mem, start, start + len);
            self.after_unmap(exec);
        }
        // The guest's name of the file, for /proc/self/maps.
        let name = if anon {
            "[anon]".to_string()
        } else {
            self.fs.guest_path_of_open_fd(fd).unwrap_or_default()
        };
        let backing = if file.is_none() {
            Backing::Heap
        } else {
            Backing::Populated
        };
        self.aspace.add(start, start + len, prot, backing, &name);
        if let Some(v) = self.aspace.vmas.get_mut(&start) {
            v.file = file;
        }
        self.aspace.merge_around(start, start + len);
        Ok(start as i64)
    }

    /// After pages were unmapped or their protection changed: cached
    /// translations go when the call returns (`translations_stale`), and
    /// decoded code now if any of them was executable.
    fn after_unmap(&mut self, exec: bool) {
        if exec {
            self.code.pages.flush_pending = true;
        }
    }

    fn sys_munmap(&mut self, addr: u64, len: u64) -> Result<i64, i64> {
        let end = page_end(addr, len).ok_or(EINVAL)?;
        if addr & 0xfff != 0 || len == 0 {
            return Err(EINVAL);
        }
        let exec = self.aspace.unmap(&mut self.mem, addr, end);
        self.after_unmap(exec);
        Ok(0)
    }

    fn sys_mprotect(&mut self, addr: u64, len: u64, prot: u32) -> Result<i64, i64> {
        const PROT_GROWSDOWN: u32 = 0x0100_0000;
        const PROT_GROWSUP: u32 = 0x0200_0000;
        if addr & 0xfff != 0 || prot & !(7 | PROT_GROWSDOWN | PROT_GROWSUP) != 0 {
            return Err(EINVAL);
        }
        let end = page_end(addr, len).ok_or(ENOMEM)?;
        let was_exec = self
            .aspace
            .vmas
            .range(..end)
            .any(|(&s, v)| v.end > addr && s < end && v.prot & PROT_EXEC != 0);
        let r = self.aspace.protect(&mut self.mem, addr, end, prot & 7);
        self.after_unmap(was_exec || prot & PROT_EXEC != 0);
        r.map(|_| 0)
    }

    fn sys_mremap(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        const MREMAP_MAYMOVE: u64 = 1;
        const MREMAP_FIXED: u64 = 2;
        const MREMAP_DONTUNMAP: u64 = 4;
        let (old, flags) = (a[0], a[3]);
        let may_move = flags & MREMAP_MAYMOVE != 0;
        let fixed = flags & MREMAP_FIXED != 0;
        let dont_unmap = flags & MREMAP_DONTUNMAP != 0;
        if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) != 0
            || ((fixed || dont_unmap) && !may_move)
            || old & 0xfff != 0
        {
            return Err(EINVAL);
        }
        let old_len = page_end(0, a[1]).ok_or(EINVAL)?;
        let new_len = page_end(0, a[2]).ok_or(EINVAL)?;
        // old_len 0 duplicates a shared mapping, which nothing here needs.
        if new_len == 0 || old_len == 0 || (dont_unmap && old_len != new_len) {
            return Err(EINVAL);
        }
        let exec = self
            .aspace
            .find(old)
            .is_some_and(|(_, v)| v.prot & PROT_EXEC != 0);
        let r = self.aspace.remap(
            &mut self.mem,
            old,
            old_len,
            new_len,
            crate::vm::RemapFlags {
                may_move,
                fixed: fixed.then_some(a[4]),
                dont_unmap,
            },
        );
        self.after_unmap(exec);
        r.map(|new| new as i64)
    }

    fn sys_msync(&mut self, addr: u64, len: u64) -> Result<i64, i64> {
        // Shared mappings are the host file's own pages: nothing to copy.
        if addr & 0xfff != 0 {
            return Err(EINVAL);
        }
        let mut a = addr;
        while a < addr.saturating_add(len) {
            let (_, v) = self.aspace.find(a).ok_or(ENOMEM)?;
            a = v.end;
        }
        Ok(0)
    }

    fn sys_madvise(&mut self, addr: u64, len: u64, advice: u64) -> Result<i64, i64> {
        const MADV_DONTNEED: u64 = 4;
        if advice == MADV_DONTNEED {
            let end = (addr + len + 0xfff) & !0xfff;
            self.aspace.discard(&mut self.mem, addr, end);
            self.flush_all_tlbs();
        }
        Ok(0)
    }

    // ---- processes and threads ---------------------------------------------------

    fn sys_exit(&mut self, status: i32) {
        let i = self.current;
        self.exit_thread(i);
        if self.threads.iter().all(|t| t.state == ThreadState::Exited) {
            self.exit = Some(ExitKind::Code(status & 0xff));
        }
    }

    fn sys_clone3(&mut self, args: u64, size: u64) -> Result<i64, i64> {
        if size < 64 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 64];
        self.read_mem(args, &mut b)?;
        let w = |k: usize| u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap());
        let (flags, child_tid, parent_tid, exit_signal, stack, stack_size, tls) =
            (w(0), w(2), w(3), w(4), w(5), w(6), w(7));
        let sp = if stack != 0 { stack + stack_size } else { 0 };
        match self.sys_clone(flags | (exit_signal & 0xff), sp, parent_tid, tls, child_tid) {
            Some(r) => {
                if r < 0 {
                    Err(-r)
                } else {
                    Ok(r)
                }
            }
            None => Ok(0),
        }
    }

    fn sys_clone(&mut self, flags: u64, sp: u64, ptid: u64, tls: u64, ctid: u64) -> Option<i64> {
        const CLONE_VM: u64 = 0x100;
        const CLONE_THREAD: u64 = 0x10000;
        const CLONE_SETTLS: u64 = 0x80000;
        const CLONE_PARENT_SETTID: u64 = 0x10_0000;
        const CLONE_CHILD_CLEARTID: u64 = 0x20_0000;
        const CLONE_CHILD_SETTID: u64 = 0x100_0000;
        let i = self.current;
        if flags & CLONE_THREAD != 0 {
            if flags & CLONE_VM == 0 {
                return Some(-EINVAL);
            }
            // RLIMIT_NPROC counts threads too, but guest threads are not host
            // tasks: as Linux's copy_process, refuse one beyond the limit
            // unless the real user is root (this process's threads are
            // counted; its other processes are the host's to count).
            let live = self
                .threads
                .iter()
                .filter(|t| t.state != ThreadState::Exited)
                .count() as u64;
            // SAFETY: getuid has no preconditions.
            if live + 1 > self.rlimits[6].0 && unsafe { libc::getuid() } != 0 {
                return Some(-EAGAIN);
            }
            let tid = self.next_tid;
            self.next_tid += 1;
            let mut hart = self.threads[i].hart.clone_registers();
            hart.trace = self.opts.trace;
            hart.x[10] = 0;
            if sp != 0 {
                hart.x[2] = sp;
            }
            if flags & CLONE_SETTLS != 0 {
                hart.x[4] = tls;
            }
            let affinity = self.threads[i].affinity;
            let cpu = self.least_loaded_cpu(affinity);
            if self.cpus[cpu].core.cycles < self.cpus[self.threads[i].cpu].core.cycles {
                self.cpus[cpu].core.cycles = self.cpus[self.threads[i].cpu].core.cycles;
            }
            self.threads.push(Thread {
                tid,
                hart,
                state: ThreadState::Runnable,
                clear_child_tid: if flags & CLONE_CHILD_CLEARTID != 0 {
                    ctid
                } else {
                    0
                },
                sigmask: self.threads[i].sigmask,
                pending: Vec::new(),
                altstack: (0, 0, SS_DISABLE),
                saved_mask: None,
                wait_deadline: None,
                comm: self.threads[i].comm,
                cpu,
                affinity,
                fault_note: None,
            });
            if flags & CLONE_PARENT_SETTID != 0 {
                let _ = self.write_u32(ptid, tid as u32);
            }
            if flags & CLONE_CHILD_SETTID != 0 {
                let _ = self.write_u32(ctid, tid as u32);
            }
            return Some(tid as i64);
        }
        // A new process: fork the emulator. (CLONE_VM without CLONE_THREAD,
        // i.e. vfork, gets fork semantics: correct for programs that only
        // exec or _exit in the child.)
        let r = unsafe { libc::fork() };
        if r < 0 {
            return Some(host_errno());
        }
        if r == 0 {
            self.is_child = true;
            self.pid = unsafe { libc::getpid() };
            self.next_tid = self.pid + 1;
            let keep = self.threads.swap_remove(i);
            self.threads.clear();
            self.threads.push(keep);
            self.current = 0;
            self.exited.clear();
            let t = &mut self.threads[0];
            t.tid = self.pid;
            t.hart.x[10] = 0;
            if sp != 0 {
                t.hart.x[2] = sp;
            }
            if flags & CLONE_SETTLS != 0 {
                t.hart.x[4] = tls;
            }
            if flags & CLONE_CHILD_CLEARTID != 0 {
                t.clear_child_tid = ctid;
            }
            if flags & CLONE_CHILD_SETTID != 0 {
                let pid = self.pid as u32;
                let _ = self.write_u32(ctid, pid);
            }
            return None;
        }
        if flags & CLONE_PARENT_SETTID != 0 {
            let _ = self.write_u32(ptid, r as u32);
        }
        Some(r as i64)
    }

    fn least_loaded_cpu(&self, affinity: u64) -> usize {
        (0..self.cpus.len())
            .filter(|&c| c >= 64 || affinity & (1 << c) != 0)
            .min_by_key(|&c| {
                self.threads
                    .iter()
                    .filter(|t| t.cpu == c && t.state != ThreadState::Exited)
                    .count()
            })
            .unwrap_or(0)
    }

    fn sys_execve(&mut self, path: u64, argv: u64, envp: u64) -> Option<i64> {
        let r = (|| -> Result<(), i64> {
            let mut path = String::from_utf8_lossy(&self.read_cstr(path)?).into_owned();
            let mut args = self.read_str_array(argv)?;
            let env = self.read_str_array(envp)?;
            // `#!` scripts, up to four levels.
            for _ in 0..4 {
                let host = self.fs.host_path(AT_FDCWD, path.as_bytes())?;
                // Linux: only regular files with execute permission run.
                let meta = std::fs::metadata(&host)
                    .map_err(|e| e.raw_os_error().unwrap_or(ENOENT as i32) as i64)?;
                let c = std::ffi::CString::new(host.as_os_str().as_encoded_bytes())
                    .map_err(|_| EINVAL)?;
                if !meta.is_file() || unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
                    return Err(EACCES);
                }
                let mut head = [0u8; 256];
                let n = std::fs::File::open(&host)
                    .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                    .map_err(|e| e.raw_os_error().unwrap_or(EIO as i32) as i64)?;
                if n >= 2 && &head[..2] == b"#!" {
                    let line = head[2..n].split(|&c| c == b'\n').next().unwrap_or(&[]);
                    let line = String::from_utf8_lossy(line).trim().to_string();
                    let mut parts = line.splitn(2, [' ', '\t']);
                    let interp = parts.next().unwrap_or("").to_string();
                    if interp.is_empty() {
                        return Err(ENOEXEC);
                    }
                    let mut new_args = vec![interp.clone()];
                    if let Some(arg) = parts.next().map(str::trim).filter(|s| !s.is_empty()) {
                        new_args.push(arg.to_string());
                    }
                    new_args.push(path.clone());
                    new_args.extend(args.iter().skip(1).cloned());
                    args = new_args;
                    path = interp;
                    continue;
                }
                break;
            }
            // Check it loads before destroying the current image.
            let host = self.fs.host_path(AT_FDCWD, path.as_bytes())?;
            let f = crate::elf::ElfFile::open(&host, &path).map_err(|e| e.errno())?;
            drop(f);
            self.exec(&path, &args, &env, false).map_err(|e| {
                eprintln!("rvnvmm: execve {path}: {e}");
                e.errno()
            })?;
            self.close_on_exec();
            Ok(())
        })();
        match r {
            Ok(()) => None,
            Err(e) => Some(-e),
        }
    }

    fn close_on_exec(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
            return;
        };
        let fds: Vec<i32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        for fd in fds {
            if self.is_internal_fd(fd) {
                continue;
            }
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            if fl >= 0 && fl & libc::FD_CLOEXEC != 0 {
                unsafe { libc::close(fd) };
            }
        }
    }

    fn sys_wait4(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let mut status = 0i32;
        let mut ru = [0u8; 144];
        let r = host(unsafe {
            libc::wait4(
                a[0] as i32,
                &mut status,
                a[2] as i32,
                ru.as_mut_ptr().cast(),
            )
        } as i64)?;
        if a[1] != 0 && r > 0 {
            self.write_u32(a[1], status as u32)?;
        }
        if a[3] != 0 {
            self.write_mem(a[3], &ru)?;
        }
        Ok(r)
    }

    fn sys_waitid(&mut self, a: [u64; 6]) -> Result<i64, i64> {
        let mut info = [0u8; 128];
        let r = host(unsafe {
            libc::syscall(
                libc::SYS_waitid,
                a[0] as i32,
                a[1] as i32,
                info.as_mut_ptr(),
                a[3] as i32,
                std::ptr::null_mut::<u8>(),
            )
        })?;
        if a[2] != 0 {
            self.write_mem(a[2], &info)?;
        }
        Ok(r)
    }

    // ---- futex and time --------------------------------------------------------

    fn sys_futex(&mut self, a: [u64; 6]) -> Option<i64> {
        let (uaddr, op, val) = (a[0], a[1] as u32 & 0x7f, a[2] as u32);
        let realtime = a[1] & 256 != 0;
        let i = self.current;
        let block = |p: &mut Process, bitset: u32, deadline: Option<u64>| -> Option<i64> {
            match p.read_u32(uaddr) {
                Err(e) => Some(-e),
                Ok(cur) if cur != val => Some(-EAGAIN),
                Ok(_) => {
                    if bitset == 0 {
                        return Some(-EINVAL);
                    }
                    p.threads[i].state = ThreadState::Futex {
                        addr: uaddr,
                        bitset,
                        deadline,
                    };
                    p.threads[i].hart.x[10] = 0;
                    None
                }
            }
        };
        match op {
            0 | 9 => {
                let deadline = if a[3] != 0 {
                    let s = match self.read_u64(a[3]) {
                        Ok(v) => v,
                        Err(e) => return Some(-e),
                    };
                    let ns = self.read_u64(a[3] + 8).unwrap_or(0);
                    let t = s.saturating_mul(1_000_000_000).saturating_add(ns);
                    Some(if op == 0 {
                        self.now_ns() + t
                    } else if realtime {
                        t.saturating_sub(self.opts.epoch_secs * 1_000_000_000)
                    } else {
                        t
                    })
                } else {
                    None
                };
                let bitset = if op == 9 { a[5] as u32 } else { u32::MAX };
                block(self, bitset, deadline)
            }
            1 => Some(self.futex_wake(uaddr, val as u64, u32::MAX) as i64),
            10 => Some(self.futex_wake(uaddr, val as u64, a[5] as u32) as i64),
            3 | 4 => {
                if op == 4 {
                    match self.read_u32(uaddr) {
                        Err(e) => return Some(-e),
                        Ok(cur) if cur != a[5] as u32 => return Some(-EAGAIN),
                        _ => {}
                    }
                }
                let woken = self.futex_wake(uaddr, val as u64, u32::MAX);
                let mut moved = 0;
                for t in self.threads.iter_mut() {
                    if moved >= a[3] {
                        break;
                    }
                    if let ThreadState::Futex { addr, .. } = &mut t.state {
                        if *addr == uaddr {
                            *addr = a[4];
                            moved += 1;
                        }
                    }
                }
                Some((woken + moved) as i64)
            }
            5 => {
                // FUTEX_WAKE_OP
                let (uaddr2, encoded) = (a[4], a[5] as u32);
                let old = match self.read_u32(uaddr2) {
                    Ok(v) => v,
                    Err(e) => return Some(-e),
                };
                let opnum = (encoded >> 28) & 7;
                let cmp = (encoded >> 24) & 15;
                let mut oparg = (encoded >> 12) & 0xfff;
                let cmparg = encoded & 0xfff;
                if encoded & (8 << 28) != 0 {
                    oparg = 1 << (oparg & 31);
                }
                let new = match opnum {
                    0 => oparg,
                    1 => old.wrapping_add(oparg),
                    2 => old | oparg,
                    3 => old & !oparg,
                    _ => old ^ oparg,
                };
                if let Err(e) = self.write_u32(uaddr2, new) {
                    return Some(-e);
                }
                let mut n = self.futex_wake(uaddr, val as u64, u32::MAX);
                let (o, c) = (old as i32, sign_extend12(cmparg));
                let hit = match cmp {
                    0 => o == c,
                    1 => o != c,
                    2 => o < c,
                    3 => o <= c,
                    4 => o > c,
                    _ => o >= c,
                };
                if hit {
                    n += self.futex_wake(uaddr2, a[3], u32::MAX);
                }
                Some(n as i64)
            }
            _ => {
                self.warn_once(
                    2 << 32 | op as u64,
                    &format!("unsupported futex operation {op} returns ENOSYS"),
                );
                Some(-ENOSYS)
            }
        }
    }

    fn sys_nanosleep(&mut self, clock: u64, flags: u64, req: u64) -> Option<i64> {
        let s = match self.read_u64(req) {
            Ok(v) => v,
            Err(e) => return Some(-e),
        };
        let ns = self.read_u64(req + 8).unwrap_or(0);
        let t = s.saturating_mul(1_000_000_000).saturating_add(ns);
        let until = if flags & 1 != 0 {
            if clock == 0 {
                t.saturating_sub(self.opts.epoch_secs * 1_000_000_000)
            } else {
                t
            }
        } else {
            self.now_ns() + t
        };
        let i = self.current;
        self.threads[i].state = ThreadState::Sleep {
            until,
            restart: false,
        };
        self.threads[i].hart.x[10] = 0;
        None
    }

    fn write_timespec(&mut self, addr: u64, ns: u64) -> Result<i64, i64> {
        self.write_u64(addr, ns / 1_000_000_000)?;
        self.write_u64(addr + 8, ns % 1_000_000_000)?;
        Ok(0)
    }

    fn sys_clock_gettime(&mut self, clock: u64, tp: u64) -> Result<i64, i64> {
        let ns = match clock {
            0 | 5 | 8 | 11 => self.realtime_ns(),
            1 | 4 | 6 | 7 | 9 => self.now_ns(),
            2 | 3 => self.now_ns(),
            _ => return Err(EINVAL),
        };
        self.write_timespec(tp, ns)
    }

    fn sys_gettimeofday(&mut self, tv: u64) -> Result<i64, i64> {
        if tv != 0 {
            let ns = self.realtime_ns();
            self.write_u64(tv, ns / 1_000_000_000)?;
            self.write_u64(tv + 8, (ns % 1_000_000_000) / 1000)?;
        }
        Ok(0)
    }

    fn sys_times(&mut self, buf: u64) -> Result<i64, i64> {
        let ticks = self.now_ns() / 10_000_000;
        if buf != 0 {
            self.write_u64(buf, ticks)?;
            self.write_u64(buf + 8, 0)?;
            self.write_u64(buf + 16, 0)?;
            self.write_u64(buf + 24, 0)?;
        }
        Ok(ticks as i64)
    }

    fn sys_getrusage(&mut self, buf: u64) -> Result<i64, i64> {
        let ns = self.now_ns();
        let mut b = [0u8; 144];
        b[0..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        b[8..16].copy_from_slice(&((ns % 1_000_000_000) / 1000).to_le_bytes());
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    fn sys_sysinfo(&mut self, buf: u64) -> Result<i64, i64> {
        let mut b = [0u8; 112];
        let ram = self.opts.ram.1;
        let used = self.aspace.frames.used * 4096;
        b[0..8].copy_from_slice(&(self.now_ns() / 1_000_000_000).to_le_bytes());
        b[32..40].copy_from_slice(&ram.to_le_bytes());
        b[40..48].copy_from_slice(&(ram.saturating_sub(used)).to_le_bytes());
        b[80..82].copy_from_slice(&(1u16).to_le_bytes());
        b[104..108].copy_from_slice(&1u32.to_le_bytes());
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    fn sys_uname(&mut self, buf: u64) -> Result<i64, i64> {
        let mut b = [0u8; 390];
        for (k, s) in [
            "Linux",
            "rvnvmm",
            "6.12.0-rvnvmm",
            "#1 SMP",
            "riscv64",
            "(none)",
        ]
        .iter()
        .enumerate()
        {
            b[k * 65..k * 65 + s.len()].copy_from_slice(s.as_bytes());
        }
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    fn sys_getrandom(&mut self, buf: u64, len: u64) -> Result<i64, i64> {
        // Deterministic: the same run gets the same bytes.
        let n = (len as usize).min(1 << 20);
        let mut out = vec![0u8; n];
        for b in out.iter_mut() {
            self.rng_state ^= self.rng_state << 13;
            self.rng_state ^= self.rng_state >> 7;
            self.rng_state ^= self.rng_state << 17;
            *b = self.rng_state as u8;
        }
        self.write_mem(buf, &out)?;
        Ok(n as i64)
    }

    fn sys_rlimit(&mut self, nr: u64, a: [u64; 6]) -> Result<i64, i64> {
        // getrlimit(res, old) / setrlimit(res, new) / prlimit64(pid, res, new, old)
        let (pid, res, new, old) = match nr {
            163 => (0, a[0], 0, a[1]),
            164 => (0, a[0], a[1], 0),
            _ => (a[0] as i32, a[1], a[2], a[3]),
        };
        if pid != 0 && pid != self.pid {
            return Err(ESRCH);
        }
        let r = self.rlimits.get(res as usize).copied().ok_or(EINVAL)?;
        if new != 0 {
            let (cur, max) = (self.read_u64(new)?, self.read_u64(new + 8)?);
            if cur > max {
                return Err(EINVAL);
            }
            if res == 6 {
                // RLIMIT_NPROC: guest processes are host processes, so the
                // host kernel enforces it on fork as Linux does (the user's
                // processes counted, root exempt); threads are checked in
                // `sys_clone`.
                let l = libc::rlimit {
                    rlim_cur: cur,
                    rlim_max: max,
                };
                // SAFETY: `l` is a valid rlimit for the call's duration.
                host(unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &l) } as i64)?;
            }
            if res == 7 {
                // RLIMIT_NOFILE: descriptors are the host's, so the soft
                // limit follows (within the host's hard limit).
                let mut l = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                host(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } as i64)?;
                l.rlim_cur = cur.min(l.rlim_max);
                host(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) } as i64)?;
            }
            self.rlimits[res as usize] = (cur, max);
        }
        if old != 0 {
            self.write_u64(old, r.0)?;
            self.write_u64(old + 8, r.1)?;
        }
        Ok(0)
    }

    /// mincore: one byte per page of `[addr, addr + len)`, 1 if the page
    /// has a frame; `ENOMEM` if a page is not mapped (which libsigsegv's
    /// stack probing relies on).
    fn sys_mincore(&mut self, addr: u64, len: u64, vec: u64) -> Result<i64, i64> {
        const PAGE: u64 = 4096;
        if !addr.is_multiple_of(PAGE) {
            return Err(EINVAL);
        }
        let end = addr.checked_add(len).ok_or(ENOMEM)?.next_multiple_of(PAGE);
        let mut flags = Vec::with_capacity(((end - addr) / PAGE) as usize);
        for page in (addr..end).step_by(PAGE as usize) {
            if self.aspace.find(page).is_none() {
                return Err(ENOMEM);
            }
            let resident = rvnvmm_mem::sv39::find_leaf(&self.mem, self.aspace.root, page).is_some();
            flags.push(u8::from(resident));
        }
        self.write_mem(vec, &flags)?;
        Ok(0)
    }

    fn sys_prctl(&mut self, op: u64, arg: u64) -> Result<i64, i64> {
        const PR_SET_NAME: u64 = 15;
        const PR_GET_NAME: u64 = 16;
        const PR_SET_NO_NEW_PRIVS: u64 = 38;
        const PR_GET_NO_NEW_PRIVS: u64 = 39;
        let i = self.current;
        match op {
            // The emulator grants no privileges, so the one-way flag only
            // needs remembering.
            PR_SET_NO_NEW_PRIVS if arg == 1 => {
                self.no_new_privs = true;
                Ok(0)
            }
            PR_SET_NO_NEW_PRIVS => Err(EINVAL),
            PR_GET_NO_NEW_PRIVS => Ok(i64::from(self.no_new_privs)),
            PR_SET_NAME => {
                let mut name = self.read_cstr(arg)?;
                name.truncate(15);
                let mut comm = [0u8; 16];
                comm[..name.len()].copy_from_slice(&name);
                self.threads[i].comm = comm;
                Ok(0)
            }
            PR_GET_NAME => {
                let comm = self.threads[i].comm;
                self.write_mem(arg, &comm)?;
                Ok(0)
            }
            _ => {
                self.warn_once(
                    3 << 32 | op,
                    &format!("unsupported prctl option {op} returns EINVAL"),
                );
                Err(EINVAL)
            }
        }
    }

    fn sys_ids(&mut self, nr: u64, a: [u64; 6]) -> Result<i64, i64> {
        match nr {
            148 | 150 => {
                let ids = if nr == 148 {
                    unsafe { [libc::getuid(), libc::geteuid(), libc::geteuid()] }
                } else {
                    unsafe { [libc::getgid(), libc::getegid(), libc::getegid()] }
                };
                for (k, id) in ids.iter().enumerate() {
                    self.write_u32(a[k], *id)?;
                }
                Ok(0)
            }
            // setuid and friends: succeed only as no-ops for the current ids.
            _ => Ok(0),
        }
    }

    fn sys_getgroups(&mut self, size: u64, list: u64) -> Result<i64, i64> {
        let mut g = vec![0u32; 256];
        let n = host(unsafe { libc::getgroups(256, g.as_mut_ptr()) } as i64)? as usize;
        if size == 0 {
            return Ok(n as i64);
        }
        if (size as usize) < n {
            return Err(EINVAL);
        }
        let bytes: Vec<u8> = g[..n].iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_mem(list, &bytes)?;
        Ok(n as i64)
    }

    fn sys_setaffinity(&mut self, pid: u64, len: u64, mask: u64) -> Result<i64, i64> {
        let mut b = [0u8; 8];
        let n = (len as usize).min(8);
        self.read_mem(mask, &mut b[..n])?;
        let m = u64::from_le_bytes(b);
        let valid = if self.cpus.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.cpus.len()) - 1
        };
        if m & valid == 0 {
            return Err(EINVAL);
        }
        let i = self.thread_index(pid as i32).ok_or(ESRCH)?;
        self.threads[i].affinity = m;
        if m & (1 << self.threads[i].cpu) == 0 {
            let cpu = self.least_loaded_cpu(m);
            let from = self.threads[i].cpu;
            if self.cpus[cpu].core.cycles < self.cpus[from].core.cycles {
                self.cpus[cpu].core.cycles = self.cpus[from].core.cycles;
            }
            self.threads[i].cpu = cpu;
        }
        Ok(0)
    }

    fn sys_getaffinity(&mut self, pid: u64, len: u64, mask: u64) -> Result<i64, i64> {
        if len < 8 {
            return Err(EINVAL);
        }
        let i = self.thread_index(pid as i32).ok_or(ESRCH)?;
        let valid = if self.cpus.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.cpus.len()) - 1
        };
        self.write_u64(mask, self.threads[i].affinity & valid)?;
        Ok(8)
    }

    fn thread_index(&self, tid: i32) -> Option<usize> {
        if tid == 0 {
            return Some(self.current);
        }
        self.threads
            .iter()
            .position(|t| t.tid == tid && t.state != ThreadState::Exited)
    }

    // ---- signals -----------------------------------------------------------------

    fn sys_sigaction(&mut self, sig: i32, act: u64, oact: u64) -> Result<i64, i64> {
        if !(1..=64).contains(&sig) || (act != 0 && (sig == SIGKILL || sig == SIGSTOP)) {
            return Err(EINVAL);
        }
        let old = self.actions[sig as usize];
        if act != 0 {
            let h = self.read_u64(act)?;
            let f = self.read_u64(act + 8)?;
            let m = self.read_u64(act + 16)?;
            self.actions[sig as usize] = SigAction {
                handler: h,
                flags: f,
                mask: m,
            };
            mirror_to_host(sig, h);
        }
        if oact != 0 {
            self.write_u64(oact, old.handler)?;
            self.write_u64(oact + 8, old.flags)?;
            self.write_u64(oact + 16, old.mask)?;
        }
        Ok(0)
    }

    fn sys_sigprocmask(&mut self, how: i32, set: u64, oset: u64) -> Result<i64, i64> {
        let i = self.current;
        let old = self.threads[i].sigmask;
        if set != 0 {
            let s = self.read_u64(set)?;
            let new = match how {
                0 => old | s,
                1 => old & !s,
                2 => s,
                _ => return Err(EINVAL),
            };
            self.threads[i].sigmask = new & !((1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1)));
        }
        if oset != 0 {
            self.write_u64(oset, old)?;
        }
        Ok(0)
    }

    fn sys_sigsuspend(&mut self, mask: u64) -> Option<i64> {
        let m = match self.read_u64(mask) {
            Ok(m) => m,
            Err(e) => return Some(-e),
        };
        let i = self.current;
        let t = &mut self.threads[i];
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

    fn sys_sigtimedwait(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, i64> {
            let set = self.read_u64(a[0])?;
            let timeout = self.read_timeout(a[2])?;
            let i = self.current;
            let found = self.threads[i]
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| set & (1 << (p.signo - 1)) != 0)
                .min_by_key(|&(k, p)| (p.signo, k))
                .map(|(k, _)| k);
            if let Some(k) = found {
                let info = self.threads[i].pending.remove(k);
                self.threads[i].wait_deadline = None;
                if a[1] != 0 {
                    self.write_mem(a[1], &info.to_bytes())?;
                }
                return Ok(Some(info.signo as i64));
            }
            let now = self.now_ns();
            let deadline = match self.threads[i].wait_deadline {
                Some(d) => d,
                None => timeout.map_or(u64::MAX, |t| now.saturating_add(t)),
            };
            if now >= deadline {
                self.threads[i].wait_deadline = None;
                return Err(EAGAIN);
            }
            let t = &mut self.threads[i];
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
    fn sys_sigqueueinfo(
        &mut self,
        tgid: i32,
        tid: Option<i32>,
        sig: i32,
        uinfo: u64,
    ) -> Result<i64, i64> {
        let mut b = [0u8; 48];
        self.read_mem(uinfo, &mut b)?;
        if !(1..=64).contains(&sig) {
            return Err(EINVAL);
        }
        if tgid != self.pid {
            // Another process: the host carries the signal, not the value.
            return host(unsafe { libc::kill(tgid, sig) } as i64);
        }
        let code = i32::from_le_bytes(b[8..12].try_into().unwrap());
        let mut data = [0u64; 4];
        for (k, w) in data.iter_mut().enumerate() {
            *w = u64::from_le_bytes(b[16 + 8 * k..24 + 8 * k].try_into().unwrap());
        }
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

    /// The thread a process-directed signal goes to: the current one unless
    /// it blocks the signal, then the first that does not.
    fn signal_target(&self, sig: i32) -> usize {
        let bit = 1u64 << (sig - 1);
        let cur = self.current;
        if self.threads[cur].sigmask & bit == 0 {
            return cur;
        }
        self.threads
            .iter()
            .position(|t| t.state != ThreadState::Exited && t.sigmask & bit == 0)
            .unwrap_or(cur)
    }

    fn sys_kill(&mut self, pid: i32, sig: i32) -> Result<i64, i64> {
        if pid == self.pid {
            if sig == 0 {
                return Ok(0);
            }
            if !(1..=64).contains(&sig) {
                return Err(EINVAL);
            }
            let i = self.signal_target(sig);
            self.queue_signal(i, SignalInfo::sent(sig, SI_USER, self.pid));
            return Ok(0);
        }
        host(unsafe { libc::kill(pid, sig) } as i64)
    }

    fn sys_tgkill(&mut self, tgid: i32, tid: i32, sig: i32) -> Result<i64, i64> {
        if tgid != self.pid {
            return host(unsafe { libc::kill(tgid, sig) } as i64);
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

    fn sys_sigaltstack(&mut self, ss: u64, old: u64) -> Result<i64, i64> {
        let i = self.current;
        let cur = self.threads[i].altstack;
        let sp = self.threads[i].hart.x[2];
        let on_stack = cur.2 & SS_DISABLE == 0 && sp.wrapping_sub(cur.0) < cur.1;
        if old != 0 {
            let flags = if on_stack { SS_ONSTACK } else { cur.2 };
            let mut b = [0u8; 24];
            b[0..8].copy_from_slice(&cur.0.to_le_bytes());
            b[8..12].copy_from_slice(&flags.to_le_bytes());
            b[16..24].copy_from_slice(&cur.1.to_le_bytes());
            self.write_mem(old, &b)?;
        }
        if ss != 0 {
            if on_stack {
                return Err(EPERM);
            }
            let sp = self.read_u64(ss)?;
            let flags = self.read_u32(ss + 8)? as i32;
            let size = self.read_u64(ss + 16)?;
            if flags & SS_DISABLE != 0 {
                self.threads[i].altstack = (0, 0, SS_DISABLE);
            } else {
                if size < 2048 {
                    return Err(libc::ENOMEM as i64);
                }
                self.threads[i].altstack = (sp, size, 0);
            }
        }
        Ok(0)
    }
}

/// The page-aligned end of `[addr, addr + len)`, if it lies in the user
/// address space.
fn page_end(addr: u64, len: u64) -> Option<u64> {
    addr.checked_add(len)?
        .checked_next_multiple_of(4096)
        .filter(|&e| e <= crate::vm::USER_TOP)
}

fn sign_extend12(v: u32) -> i32 {
    ((v << 20) as i32) >> 20
}

/// Makes the host's disposition of an asynchronous signal follow the
/// guest's: ignored stays ignored (so a write to a closed pipe returns EPIPE),
/// a guest handler gets the signal forwarded, default stays default.
fn mirror_to_host(sig: i32, handler: u64) {
    if matches!(
        sig,
        SIGSEGV | SIGBUS | SIGILL | SIGFPE | SIGTRAP | SIGKILL | SIGSTOP
    ) {
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

/// The `*at` flag for a name resolved with or without following its last
/// symlink.
fn nofollow_flag(follow: bool) -> i32 {
    if follow {
        0
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    }
}
