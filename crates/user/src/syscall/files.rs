//! File system calls: open/read/write, stat, directories, fcntl, ioctl, pipes,
//! poll and select.

use super::blocking::write_ready;
use super::host;
use crate::abi::{GuestTime, Iovec, Pollfd, Stat, Timespec};
use crate::errno::*;
use crate::fs::{unsafe_zeroed_stat, AT_FDCWD};
use crate::process::{Process, ThreadState};

/// What a polling call that found nothing ready does next.
pub(crate) enum Wait {
    /// Block on the host for up to this many ms (-1: forever).
    Host(i32),
    /// The thread waits for its descriptors and re-executes the call.
    Restarted,
    /// The call's deadline has passed.
    TimedOut,
}

const MAX_IO: usize = 64 << 20;

/// The `*at` flag for a name resolved with or without following its last
/// symlink.
pub(super) fn nofollow_flag(follow: bool) -> i32 {
    if follow {
        0
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    }
}

impl Process {
    /// Whether `fd` is one the emulator keeps for itself: the root, the
    /// hold on the emulated tree, or the file behind a mapping.
    pub(crate) fn is_internal_fd(&self, fd: i32) -> bool {
        use std::os::fd::AsRawFd;
        self.files.fs.is_internal(fd)
            || self.files.kept_fds.contains(&fd)
            || self.gdb.as_ref().is_some_and(|g| g.fd() == fd)
            || self
                .memory
                .aspace
                .vmas
                .values()
                .any(|v| v.file.as_ref().is_some_and(|f| f.fd.as_raw_fd() == fd))
    }

    /// A call that changes `path` (or what it names).
    pub(super) fn path_op(
        &mut self,
        dirfd: u64,
        path: u64,
        follow: bool,
        f: impl FnOnce(i32, *const libc::c_char) -> i64,
    ) -> SysResult {
        let p = self.read_cstr(path)?;
        let n = self.files.fs.resolve_to_change(dirfd as i32, &p, follow)?;
        host(f(n.dirfd, n.name.as_ptr()))
    }

    pub(super) fn path_buf_op(
        &mut self,
        dirfd: u64,
        path: u64,
        out: u64,
        size: usize,
        follow: bool,
        f: impl FnOnce(i32, &std::ffi::CStr, *mut u8) -> i64,
    ) -> SysResult {
        let p = self.read_cstr(path)?;
        let n = self.files.fs.resolve(dirfd as i32, &p, follow)?;
        let mut buf = vec![0u8; size];
        let r = host(f(n.dirfd, &n.name, buf.as_mut_ptr()))?;
        self.write_mem(out, &buf)?;
        Ok(r)
    }

    pub(super) fn fd_out(
        &mut self,
        out: u64,
        size: usize,
        f: impl FnOnce(*mut u8) -> i64,
    ) -> SysResult {
        let mut buf = vec![0u8; size];
        let r = host(f(buf.as_mut_ptr()))?;
        self.write_mem(out, &buf)?;
        Ok(r)
    }

    pub(super) fn fd_read_like(
        &mut self,
        buf: u64,
        len: u64,
        f: impl FnOnce(*mut u8, usize) -> i64,
    ) -> SysResult {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        let r = host(f(tmp.as_mut_ptr(), n))?;
        self.write_mem(buf, &tmp[..r as usize])?;
        Ok(r)
    }

    pub(super) fn fd_write_like(
        &mut self,
        buf: u64,
        len: u64,
        f: impl FnOnce(*const u8, usize) -> i64,
    ) -> SysResult {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        self.read_mem(buf, &mut tmp)?;
        host(f(tmp.as_ptr(), n))
    }

    pub(super) fn read_iovecs(&mut self, iov: u64, cnt: u64) -> Result<Vec<(u64, u64)>, Errno> {
        if cnt > 1024 {
            return Err(EINVAL);
        }
        let v: Vec<Iovec> = self.read_objs(iov, cnt as usize)?;
        Ok(v.iter().map(|v| (v.iov_base, v.iov_len)).collect())
    }

    pub(super) fn sys_readv(&mut self, fd: i32, iov: u64, cnt: u64, off: Option<i64>) -> SysResult {
        let v = self.read_iovecs(iov, cnt)?;
        let total: u64 = v.iter().map(|x| x.1).sum::<u64>().min(MAX_IO as u64);
        let mut tmp = vec![0u8; total as usize];
        let (p, n) = (tmp.as_mut_ptr(), tmp.len());
        let r = match off {
            // SAFETY: `p` is `tmp`'s buffer of `n` bytes, alive for the call.
            Some(o) => host(unsafe { libc::pread(fd, p.cast(), n, o) } as i64)?,
            None => self.io_call(fd, libc::POLLIN, false, None, |_, _| {
                // SAFETY: `p` is `tmp`'s buffer of `n` bytes, alive for the call.
                host(unsafe { libc::read(fd, p.cast(), n) } as i64)
            })?,
        };
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

    pub(super) fn sys_writev(
        &mut self,
        fd: i32,
        iov: u64,
        cnt: u64,
        off: Option<i64>,
    ) -> SysResult {
        let v = self.read_iovecs(iov, cnt)?;
        let mut tmp = Vec::new();
        for (base, len) in v {
            let start = tmp.len();
            tmp.resize(start + (len as usize).min(MAX_IO), 0);
            self.read_mem(base, &mut tmp[start..])?;
        }
        match off {
            // SAFETY: `tmp` holds tmp.len() bytes alive for the call.
            Some(o) => host(unsafe { libc::pwrite(fd, tmp.as_ptr().cast(), tmp.len(), o) } as i64),
            None => self.write_all(fd, &tmp),
        }
    }

    pub(super) fn sys_getcwd(&mut self, buf: u64, size: u64) -> SysResult {
        let mut cwd = self.files.fs.getcwd()?;
        cwd.push(0);
        if cwd.len() as u64 > size {
            return Err(ERANGE);
        }
        self.write_mem(buf, &cwd)?;
        Ok(cwd.len() as i64)
    }

    pub(super) fn sys_openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> SysResult {
        let p = self.read_cstr(path)?;
        if let Some(dev) = crate::devices::Device::by_path(&p) {
            return self.open_device(dev, flags as i32);
        }
        if let Some(f) = self.emulated_file(dirfd as i32, &p) {
            return self.open_emulated(f, flags as i32);
        }
        self.files
            .fs
            .open(dirfd as i32, &p, flags as i32, mode as u32)
            .map(|f| f as i64)
    }

    pub(crate) fn sys_close(&mut self, fd: i32) -> SysResult {
        if self.is_internal_fd(fd) {
            return Err(EBADF);
        }
        // SAFETY: close takes an integer; the emulator's own descriptor is refused above.
        let r = host(unsafe { libc::close(fd) } as i64)?;
        self.files.timerfds.forget(fd);
        Ok(r)
    }

    pub(super) fn sys_pipe2(&mut self, out: u64, flags: u64) -> SysResult {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        host(unsafe { libc::pipe2(fds.as_mut_ptr(), flags as i32) } as i64)?;
        if let Err(e) = self.write_obj(out, &fds) {
            // SAFETY: the descriptors were just created here and nothing else holds them.
            unsafe { libc::close(fds[0]) };
            // SAFETY: the descriptors were just created here and nothing else holds them.
            unsafe { libc::close(fds[1]) };
            return Err(e);
        }
        Ok(0)
    }

    pub(super) fn sys_fcntl(&mut self, fd: i32, cmd: i32, arg: u64) -> SysResult {
        if self.is_internal_fd(fd) {
            return Err(EBADF);
        }
        // Linux's numbers (include/uapi/asm-generic/fcntl.h, linux/fcntl.h).
        const F_SETSIG: i32 = 10;
        const F_GETSIG: i32 = 11;
        const F_SETOWN_EX: i32 = 15;
        const F_GETOWN_EX: i32 = 16;
        const F_GET_RW_HINT: i32 = 1035;
        const F_SET_RW_HINT: i32 = 1036;
        const F_GET_FILE_RW_HINT: i32 = 1037;
        const F_SET_FILE_RW_HINT: i32 = 1038;
        match cmd {
            libc::F_GETLK
            | libc::F_SETLK
            | libc::F_SETLKW
            | libc::F_OFD_GETLK
            | libc::F_OFD_SETLK
            | libc::F_OFD_SETLKW => {
                let mut b = [0u8; 32];
                self.read_mem(arg, &mut b)?;
                // SAFETY: the lock commands read and write a struct flock,
                // 32 bytes on riscv64 and the host alike, which `b` holds.
                let r = host(unsafe { libc::fcntl(fd, cmd, b.as_mut_ptr()) } as i64)?;
                self.write_mem(arg, &b)?;
                Ok(r)
            }
            F_SETOWN_EX | F_GETOWN_EX | F_GET_RW_HINT | F_SET_RW_HINT | F_GET_FILE_RW_HINT
            | F_SET_FILE_RW_HINT => {
                let mut b = [0u8; 8];
                self.read_mem(arg, &mut b)?;
                // SAFETY: these commands read or write 8 bytes (a struct
                // f_owner_ex, a u64 hint), the same on riscv64 and the host,
                // which `b` holds.
                let r = host(unsafe { libc::fcntl(fd, cmd, b.as_mut_ptr()) } as i64)?;
                self.write_mem(arg, &b)?;
                Ok(r)
            }
            libc::F_DUPFD
            | libc::F_DUPFD_CLOEXEC
            | libc::F_GETFD
            | libc::F_SETFD
            | libc::F_GETFL
            | libc::F_SETFL
            | libc::F_GETOWN
            | libc::F_SETOWN
            | F_GETSIG
            | F_SETSIG
            | libc::F_GETLEASE
            | libc::F_SETLEASE
            | libc::F_NOTIFY
            | libc::F_GETPIPE_SZ
            | libc::F_SETPIPE_SZ
            | libc::F_GET_SEALS
            | libc::F_ADD_SEALS => {
                // SAFETY: these commands take an integer argument or none.
                let r = host(unsafe { libc::fcntl(fd, cmd, arg as libc::c_long) } as i64)?;
                if matches!(cmd, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) {
                    self.files.timerfds.duplicated(fd, r as i32);
                }
                Ok(r)
            }
            // A command the host may know with a pointer argument must not
            // get a guest address.
            _ => {
                self.warn_once(
                    4 << 32 | cmd as u32 as u64,
                    &format!("unsupported fcntl command {cmd} returns EINVAL"),
                );
                Err(EINVAL)
            }
        }
    }

    pub(super) fn sys_ioctl(&mut self, fd: i32, req: u64, arg: u64) -> SysResult {
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
        // SAFETY: `b` holds at least the argument size of each request accepted above
        // (the terminal structures are the same on riscv64 and the host).
        let r = host(unsafe { libc::ioctl(fd, req as libc::c_ulong, b.as_mut_ptr()) } as i64)?;
        if size > 0 && matches!(req, 0x5401 | 0x5413 | 0x540F | 0x541B | 0x5429) {
            self.write_mem(arg, &b[..size])?;
        }
        Ok(r)
    }

    pub(super) fn sys_linkat(&mut self, a: [u64; 6]) -> SysResult {
        let (p1, p2) = (self.read_cstr(a[1])?, self.read_cstr(a[3])?);
        let follow = a[4] & libc::AT_SYMLINK_FOLLOW as u64 != 0;
        let n1 = self.files.fs.resolve_to_change(a[0] as i32, &p1, follow)?;
        let n2 = self.files.fs.resolve_to_change(a[2] as i32, &p2, false)?;
        let flags = if follow { libc::AT_SYMLINK_FOLLOW } else { 0 };
        // SAFETY: both names are NUL-terminated and outlive the call.
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

    pub(super) fn sys_renameat2(
        &mut self,
        od: u64,
        op: u64,
        nd: u64,
        np: u64,
        flags: u64,
    ) -> SysResult {
        let (p1, p2) = (self.read_cstr(op)?, self.read_cstr(np)?);
        let n1 = self.files.fs.resolve_to_change(od as i32, &p1, false)?;
        let n2 = self.files.fs.resolve_to_change(nd as i32, &p2, false)?;
        // SAFETY: both names are NUL-terminated and outlive the call.
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

    pub(super) fn sys_faccessat(
        &mut self,
        dirfd: u64,
        path: u64,
        mode: u64,
        flags: u64,
    ) -> SysResult {
        let p = self.read_cstr(path)?;
        let follow = flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
        let n = self.files.fs.resolve(dirfd as i32, &p, follow)?;
        let fl = nofollow_flag(follow) | (flags as i32 & libc::AT_EACCESS);
        // SAFETY: the name is NUL-terminated and outlives the call.
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

    pub(super) fn sys_readlinkat(
        &mut self,
        dirfd: u64,
        path: u64,
        buf: u64,
        size: u64,
    ) -> SysResult {
        let p = self.read_cstr(path)?;
        let target = self.files.fs.readlink(dirfd as i32, &p)?;
        let n = target.len().min(size as usize);
        self.write_mem(buf, &target[..n])?;
        Ok(n as i64)
    }

    pub(super) fn sys_newfstatat(
        &mut self,
        dirfd: u64,
        path: u64,
        out: u64,
        flags: u64,
    ) -> SysResult {
        let p = self.read_cstr(path)?;
        let mut st = unsafe_zeroed_stat();
        if p.is_empty() && flags & libc::AT_EMPTY_PATH as u64 != 0 {
            // SAFETY: `st` is a struct stat the call fills.
            host(unsafe { libc::fstat(dirfd as i32, &mut st) } as i64)?;
        } else {
            let follow = flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
            let n = self.files.fs.resolve(dirfd as i32, &p, follow)?;
            let fl = nofollow_flag(follow);
            // SAFETY: the name is NUL-terminated; `st` is a struct stat the call fills.
            host(unsafe { libc::fstatat(n.dirfd, n.name.as_ptr(), &mut st, fl) } as i64)?;
        }
        self.write_obj(out, &Stat::from_host(&st))?;
        Ok(0)
    }

    pub(super) fn sys_fstat(&mut self, fd: i32, out: u64) -> SysResult {
        let mut st = unsafe_zeroed_stat();
        // SAFETY: `st` is a struct stat the call fills.
        host(unsafe { libc::fstat(fd, &mut st) } as i64)?;
        self.write_obj(out, &Stat::from_host(&st))?;
        Ok(0)
    }

    pub(super) fn sys_statx(&mut self, a: [u64; 6]) -> SysResult {
        let p = self.read_cstr(a[1])?;
        let flags = a[2] as i32;
        let mut buf = [0u8; 256];
        if p.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
            // SAFETY: the empty name is NUL-terminated; `buf` has the 256 bytes of a
            // struct statx.
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
            let n = self.files.fs.resolve(a[0] as i32, &p, follow)?;
            let fl = (flags & !libc::AT_SYMLINK_NOFOLLOW) | nofollow_flag(follow);
            // SAFETY: the name is NUL-terminated; `buf` has the 256 bytes of a struct
            // statx.
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

    pub(super) fn sys_utimensat(&mut self, a: [u64; 6]) -> SysResult {
        let ts: Option<[Timespec; 2]> = match a[2] {
            0 => None,
            at => Some(self.read_obj(at)?),
        };
        let tp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t.as_ptr().cast::<u8>());
        if a[1] == 0 {
            // SAFETY: `tp` is null or two struct timespec (32 bytes, as on riscv64) alive
            // for the call; a null name means the descriptor itself.
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
        let n = self.files.fs.resolve_to_change(a[0] as i32, &p, follow)?;
        let fl = nofollow_flag(follow);
        // SAFETY: the name is NUL-terminated; `tp` is null or two struct timespec
        // alive for the call.
        host(unsafe { libc::syscall(libc::SYS_utimensat, n.dirfd, n.name.as_ptr(), tp, fl) })
    }

    pub(super) fn sys_sendfile(&mut self, a: [u64; 6]) -> SysResult {
        let mut off: i64 = 0;
        let offp = if a[2] != 0 {
            off = self.read_u64(a[2])? as i64;
            &mut off as *mut i64
        } else {
            std::ptr::null_mut()
        };
        let r =
            // SAFETY: `offp` is null or points at `off`, alive for the call.
            host(unsafe { libc::sendfile(a[0] as i32, a[1] as i32, offp, a[3] as usize) } as i64)?;
        if a[2] != 0 {
            self.write_u64(a[2], off as u64)?;
        }
        Ok(r)
    }

    /// copy_file_range(2): the host copies; the offsets, if given, are
    /// read from guest memory and written back.
    pub(super) fn sys_copy_file_range(&mut self, a: [u64; 6]) -> SysResult {
        let (fd_in, fd_out) = (a[0] as i32, a[2] as i32);
        if self.is_internal_fd(fd_in) || self.is_internal_fd(fd_out) {
            return Err(EBADF);
        }
        let mut offs = [0i64; 2];
        for (k, &at) in [a[1], a[3]].iter().enumerate() {
            if at != 0 {
                offs[k] = self.read_u64(at)? as i64;
            }
        }
        let [off_in, off_out] = &mut offs;
        let ptr = |at: u64, off: &mut i64| {
            if at != 0 {
                off as *mut i64
            } else {
                std::ptr::null_mut()
            }
        };
        // SAFETY: the offset pointers are null or point at `offs`, alive
        // for the call; the rest are integers (a bad flag is the host's
        // EINVAL, as Linux's).
        let r = host(unsafe {
            libc::syscall(
                libc::SYS_copy_file_range,
                fd_in,
                ptr(a[1], off_in),
                fd_out,
                ptr(a[3], off_out),
                a[4] as usize,
                a[5] as u32,
            )
        })?;
        for (k, &at) in [a[1], a[3]].iter().enumerate() {
            if at != 0 {
                self.write_u64(at, offs[k] as u64)?;
            }
        }
        Ok(r)
    }

    /// Reads an optional timespec as nanoseconds.
    pub(super) fn read_timeout(&mut self, addr: u64) -> Result<Option<u64>, Errno> {
        if addr == 0 {
            return Ok(None);
        }
        let t: Timespec = self.read_obj(addr)?;
        t.to_ns().map(Some).ok_or(EINVAL)
    }

    /// A polling call found none of `fds` (descriptor, poll events) ready.
    /// With other guest threads able to run, or a timerfd armed, the thread
    /// waits until one is ready (woken at the time of the call that made it
    /// ready, as a blocking read is: `blocking.rs`), the timer's next expiry
    /// (the call then sees the timerfd readable if it watches it) or its
    /// timeout, and re-executes the call; else it blocks on the host.
    pub(crate) fn wait_or_restart(
        &mut self,
        timeout_ns: Option<u64>,
        fds: Vec<(i32, i16)>,
    ) -> Wait {
        let i = self.threads.current;
        let now = self.now_ns();
        let deadline = self.threads.all[i]
            .wait_deadline
            .unwrap_or_else(|| timeout_ns.map_or(u64::MAX, |t| now.saturating_add(t)));
        if now >= deadline {
            self.threads.all[i].wait_deadline = None;
            return Wait::TimedOut;
        }
        let timer = self.files.timerfds.next_expiry_after(now);
        if !self.others_can_run() && timer.is_none() {
            self.threads.all[i].wait_deadline = None;
            let ms = match timeout_ns {
                None => -1,
                Some(t) => {
                    (deadline.saturating_sub(now).min(t) / 1_000_000).min(i32::MAX as u64) as i32
                }
            };
            return Wait::Host(ms);
        }
        let own = (deadline != u64::MAX).then_some(deadline);
        let t = &mut self.threads.all[i];
        t.wait_deadline = own;
        // A handler's SA_RESTART does not run these calls again (Linux's
        // ERESTARTNOHAND): EINTR.
        t.state = ThreadState::Io {
            fds,
            until: [own, timer].into_iter().flatten().min(),
            restart: false,
        };
        t.hart.pc -= 4;
        Wait::Restarted
    }

    pub(super) fn sys_ppoll(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, Errno> {
            let n = a[1] as usize;
            if n > 4096 {
                return Err(EINVAL);
            }
            let timeout = self.read_timeout(a[2])?;
            if n == 0 {
                // pause(), or a plain sleep.
                let i = self.threads.current;
                self.threads.all[i].state = match timeout {
                    None => ThreadState::SigWait,
                    Some(t) => ThreadState::Sleep {
                        until: self.now_ns().saturating_add(t),
                        restart: false,
                    },
                };
                self.threads.all[i].hart.x[10] = if timeout.is_some() {
                    0
                } else {
                    (-EINTR) as u64
                };
                return Ok(None);
            }
            let mut fds: Vec<Pollfd> = self.read_objs(a[0], n)?;
            self.sync_timerfds();
            let poll = |fds: &mut Vec<Pollfd>, ms: i32| {
                // SAFETY: `fds` holds `n` struct pollfd (the host's layout too).
                host(unsafe { libc::poll(fds.as_mut_ptr().cast(), n as libc::nfds_t, ms) } as i64)
            };
            let mut r = poll(&mut fds, 0)?;
            if r == 0 && timeout != Some(0) {
                let wanted = fds.iter().map(|p| (p.fd, p.events)).collect();
                match self.wait_or_restart(timeout, wanted) {
                    Wait::Restarted => return Ok(None),
                    Wait::TimedOut => {}
                    Wait::Host(ms) => r = poll(&mut fds, ms)?,
                }
            }
            self.threads.current_mut().wait_deadline = None;
            self.write_obj(a[0], fds.as_slice())?;
            Ok(Some(r))
        })();
        match r {
            Ok(v) => v,
            Err(e) => Some(-e),
        }
    }

    pub(super) fn sys_pselect6(&mut self, a: [u64; 6]) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, Errno> {
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
                // SAFETY: each set is null or a 128-byte fd_set (1024 descriptors, `n` is at
                // most that); `tvp` is null or points at `tv`.
                host(unsafe { libc::select(n as i32, p(0, s0), p(1, s1), p(2, s2), tvp) } as i64)
            };
            self.sync_timerfds();
            let mut sets = orig;
            let mut r = select(&mut sets, 0)?;
            if r == 0 && timeout != Some(0) {
                // The descriptors of the three sets, as poll events.
                let mut wanted = Vec::new();
                for fd in 0..n {
                    let has = |k: usize| a[1 + k] != 0 && orig[k][fd / 8] & (1 << (fd % 8)) != 0;
                    let events = [libc::POLLIN, libc::POLLOUT, libc::POLLPRI]
                        .iter()
                        .enumerate()
                        .filter(|&(k, _)| has(k))
                        .fold(0, |e, (_, &ev)| e | ev);
                    if events != 0 {
                        wanted.push((fd as i32, events));
                    }
                }
                match self.wait_or_restart(timeout, wanted) {
                    Wait::Restarted => return Ok(None),
                    Wait::TimedOut => {}
                    Wait::Host(ms) => {
                        sets = orig;
                        r = select(&mut sets, ms as i64)?;
                    }
                }
            }
            self.threads.current_mut().wait_deadline = None;
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

    pub(super) fn sys_dup(&mut self, fd: i32) -> SysResult {
        if self.is_internal_fd(fd) {
            return Err(EBADF);
        }
        // SAFETY: dup takes and returns integers only.
        let r = host(unsafe { libc::dup(fd) } as i64)?;
        self.files.timerfds.duplicated(fd, r as i32);
        Ok(r)
    }

    pub(super) fn sys_dup3(&mut self, old: i32, new: i32, flags: i32) -> SysResult {
        if old == new {
            return Err(EINVAL);
        }
        // The emulator's own descriptors are not the guest's: one cannot be
        // duplicated, and one is not replaced (Linux would close what is at
        // `new`; here that would take a mapping's file or the root away).
        if self.is_internal_fd(old) || self.is_internal_fd(new) {
            return Err(EBADF);
        }
        // SAFETY: dup3 takes and returns integers only.
        let r = host(unsafe { libc::dup3(old, new, flags) } as i64)?;
        self.files.timerfds.duplicated(old, new);
        Ok(r)
    }

    pub(super) fn sys_mkdirat(&mut self, dirfd: u64, path: u64, mode: u32) -> SysResult {
        // SAFETY: `n` is a NUL-terminated name that outlives the call.
        self.path_op(
            dirfd,
            path,
            false,
            |d, n| unsafe { libc::mkdirat(d, n, mode) } as i64,
        )
    }

    /// mknodat(2): a FIFO, a socket's name, a regular file (or a device
    /// node, where the host lets the user make one), named inside the root
    /// as every path.
    pub(super) fn sys_mknodat(&mut self, dirfd: u64, path: u64, mode: u32, dev: u64) -> SysResult {
        // SAFETY: `n` is a NUL-terminated name that outlives the call.
        self.path_op(
            dirfd,
            path,
            false,
            |d, n| unsafe { libc::mknodat(d, n, mode, dev) } as i64,
        )
    }

    pub(super) fn sys_unlinkat(&mut self, dirfd: u64, path: u64, flags: i32) -> SysResult {
        // SAFETY: `n` is a NUL-terminated name that outlives the call.
        self.path_op(
            dirfd,
            path,
            false,
            |d, n| unsafe { libc::unlinkat(d, n, flags) } as i64,
        )
    }

    pub(super) fn sys_symlinkat(&mut self, target: u64, dirfd: u64, path: u64) -> SysResult {
        let target = self.read_cstr(target)?;
        let t = std::ffi::CString::new(target).map_err(|_| EINVAL)?;
        // SAFETY: `t` and `n` are NUL-terminated strings that outlive the call.
        self.path_op(
            dirfd,
            path,
            false,
            |d, n| unsafe { libc::symlinkat(t.as_ptr(), d, n) } as i64,
        )
    }

    /// statfs: the struct is the same 120 bytes on riscv64 and the host.
    pub(super) fn sys_statfs(&mut self, path: u64, out: u64) -> SysResult {
        self.path_buf_op(AT_FDCWD as u64, path, out, 120, true, |d, n, b| {
            // SAFETY: `n` is NUL-terminated and `b` is a buffer of 120
            // bytes, the size of struct statfs, both alive for the call.
            if n.to_bytes().is_empty() {
                // SAFETY: `b` is a buffer of 120 bytes, the size of struct statfs.
                unsafe { libc::fstatfs(d, b.cast()) as i64 }
            } else {
                // SAFETY: `n` is NUL-terminated; `b` is a buffer of 120 bytes, the size of
                // struct statfs.
                unsafe { libc::statfs(n.as_ptr(), b.cast()) as i64 }
            }
        })
    }

    pub(super) fn sys_fstatfs(&mut self, fd: i32, out: u64) -> SysResult {
        // SAFETY: `b` is a buffer of 120 bytes, the size of struct statfs.
        self.fd_out(out, 120, |b| unsafe { libc::fstatfs(fd, b.cast()) } as i64)
    }

    pub(super) fn sys_truncate(&mut self, path: u64, len: i64) -> SysResult {
        self.path_op(AT_FDCWD as u64, path, true, |d, n| {
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
                let r = libc::ftruncate(f, len);
                libc::close(f);
                r as i64
            }
        })
    }

    pub(super) fn sys_ftruncate(&mut self, fd: i32, len: i64) -> SysResult {
        // SAFETY: ftruncate takes integers only.
        host(unsafe { libc::ftruncate(fd, len) } as i64)
    }

    pub(super) fn sys_fallocate(&mut self, fd: i32, mode: i32, off: i64, len: i64) -> SysResult {
        // SAFETY: fallocate takes integers only.
        host(unsafe { libc::fallocate(fd, mode, off, len) } as i64)
    }

    pub(super) fn sys_chdir(&mut self, path: u64) -> SysResult {
        let p = self.read_cstr(path)?;
        self.files.fs.chdir(&p).map(|_| 0)
    }

    pub(super) fn sys_fchmod(&mut self, fd: i32, mode: u32) -> SysResult {
        // SAFETY: fchmod takes integers only.
        host(unsafe { libc::fchmod(fd, mode) } as i64)
    }

    pub(super) fn sys_fchmodat(&mut self, dirfd: u64, path: u64, mode: u32) -> SysResult {
        // SAFETY: `n` is a NUL-terminated name that outlives the call.
        self.path_op(
            dirfd,
            path,
            true,
            |d, n| unsafe { libc::fchmodat(d, n, mode, 0) } as i64,
        )
    }

    pub(super) fn sys_fchownat(&mut self, a: [u64; 6]) -> SysResult {
        let follow = a[4] & libc::AT_SYMLINK_NOFOLLOW as u64 == 0;
        // SAFETY: `n` is a NUL-terminated name that outlives the call.
        self.path_op(a[0], a[1], follow, |d, n| unsafe {
            libc::fchownat(d, n, a[2] as u32, a[3] as u32, nofollow_flag(follow))
        } as i64)
    }

    pub(super) fn sys_fchown(&mut self, fd: i32, uid: u32, gid: u32) -> SysResult {
        // SAFETY: fchown takes integers only.
        host(unsafe { libc::fchown(fd, uid, gid) } as i64)
    }

    pub(super) fn sys_close_range(&mut self, lo: u32, hi: u32) -> SysResult {
        for f in lo..=hi.min(1 << 20) {
            if !self.is_internal_fd(f as i32) {
                // SAFETY: close takes an integer; the emulator's own
                // descriptors are skipped above.
                unsafe { libc::close(f as i32) };
            }
        }
        self.files.timerfds.prune_closed();
        Ok(0)
    }

    pub(super) fn sys_getdents64(&mut self, fd: i32, buf: u64, len: u64) -> SysResult {
        if !self.lists_host_descriptors(fd) {
            // SAFETY: `b` is a buffer of `n` bytes alive for the call;
            // struct linux_dirent64 is the same on riscv64 and the host.
            return self.fd_read_like(buf, len, |b, n| unsafe {
                libc::syscall(libc::SYS_getdents64, fd, b, n)
            });
        }
        // The host's fd/ or fdinfo/: the emulator's own descriptors are
        // left out, as opening them is ENOENT. A batch of only those is
        // skipped, so an empty answer still means the end.
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        loop {
            // SAFETY: as above.
            let r = host(unsafe { libc::syscall(libc::SYS_getdents64, fd, tmp.as_mut_ptr(), n) })?
                as usize;
            if r == 0 {
                return Ok(0);
            }
            let mut kept = 0;
            let mut at = 0;
            while at + 19 <= r {
                // d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
                let reclen = u16::from_ne_bytes([tmp[at + 16], tmp[at + 17]]) as usize;
                if reclen == 0 || at + reclen > r {
                    break;
                }
                let name = &tmp[at + 19..at + reclen];
                let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
                let internal = std::str::from_utf8(name)
                    .ok()
                    .and_then(|s| s.parse::<i32>().ok())
                    .is_some_and(|d| self.is_internal_fd(d));
                if !internal {
                    tmp.copy_within(at..at + reclen, kept);
                    kept += reclen;
                }
                at += reclen;
            }
            if kept > 0 {
                self.write_mem(buf, &tmp[..kept])?;
                return Ok(kept as i64);
            }
        }
    }

    /// Whether `fd` is a directory of the host's own `/proc/<pid>/fd` or
    /// `fdinfo` (the guest's `/proc/self/fd` leads there).
    fn lists_host_descriptors(&self, fd: i32) -> bool {
        let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else {
            return false;
        };
        let own = format!("/proc/{}", std::process::id());
        target == std::path::Path::new(&own).join("fd")
            || target == std::path::Path::new(&own).join("fdinfo")
    }

    pub(super) fn sys_lseek(&mut self, fd: i32, off: i64, whence: i32) -> SysResult {
        // SAFETY: lseek takes integers only.
        host(unsafe { libc::lseek(fd, off, whence) })
    }

    /// read(2); it may wait while other threads run (`blocking.rs`).
    pub(super) fn sys_read(&mut self, fd: i32, buf: u64, len: u64) -> SysResult {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        let p = tmp.as_mut_ptr();
        let r = self.io_call(fd, libc::POLLIN, false, None, |_, _| {
            // SAFETY: `p` is `tmp`'s buffer of `n` bytes, alive for the call.
            host(unsafe { libc::read(fd, p.cast(), n) } as i64)
        })?;
        self.write_mem(buf, &tmp[..r as usize])?;
        Ok(r)
    }

    /// write(2); it may wait while other threads run (`blocking.rs`).
    pub(super) fn sys_write(&mut self, fd: i32, buf: u64, len: u64) -> SysResult {
        let n = (len as usize).min(MAX_IO);
        let mut tmp = vec![0u8; n];
        self.read_mem(buf, &mut tmp)?;
        self.write_all(fd, &tmp)
    }

    /// Writes `data` to `fd` as write(2) does, waiting for room while
    /// other threads run; a call that ran again after a wait goes on from
    /// the bytes it already wrote.
    fn write_all(&mut self, fd: i32, data: &[u8]) -> SysResult {
        self.io_call(fd, libc::POLLOUT, false, Some(data.len()), |skip, ready| {
            let d = &data[skip.min(data.len())..];
            host(if ready {
                write_ready(fd, d)
            } else {
                // SAFETY: `d` holds d.len() bytes alive for the call.
                unsafe { libc::write(fd, d.as_ptr().cast(), d.len()) as i64 }
            })
        })
    }

    pub(super) fn sys_pread64(&mut self, fd: i32, buf: u64, len: u64, off: i64) -> SysResult {
        // SAFETY: `b` is a buffer of `n` bytes alive for the call.
        self.fd_read_like(
            buf,
            len,
            |b, n| unsafe { libc::pread(fd, b.cast(), n, off) } as i64,
        )
    }

    pub(super) fn sys_pwrite64(&mut self, fd: i32, buf: u64, len: u64, off: i64) -> SysResult {
        // SAFETY: `b` is a buffer of `n` bytes alive for the call.
        self.fd_write_like(
            buf,
            len,
            |b, n| unsafe { libc::pwrite(fd, b.cast(), n, off) } as i64,
        )
    }

    pub(super) fn sys_fsync(&mut self, fd: i32) -> SysResult {
        // SAFETY: fsync takes an integer only.
        host(unsafe { libc::fsync(fd) } as i64)
    }

    pub(super) fn sys_fdatasync(&mut self, fd: i32) -> SysResult {
        // SAFETY: fdatasync takes an integer only.
        host(unsafe { libc::fdatasync(fd) } as i64)
    }

    /// flock(2): the host's lock on the open file description (a blocking
    /// request waits on the host, as no guest thread of this process can
    /// hold a conflicting lock on the same description).
    pub(super) fn sys_flock(&mut self, fd: i32, op: i32) -> SysResult {
        if self.is_internal_fd(fd) {
            return Err(EBADF);
        }
        // SAFETY: flock takes integers only.
        host(unsafe { libc::flock(fd, op) } as i64)
    }

    pub(super) fn sys_memfd_create(&mut self, name: u64, flags: u32) -> SysResult {
        let n = self.read_cstr(name)?;
        let c = std::ffi::CString::new(n).map_err(|_| EINVAL)?;
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        host(unsafe { libc::memfd_create(c.as_ptr(), flags) } as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    const CWD: u64 = AT_FDCWD as u64;

    /// Every name `getdents64` gives for the directory open at `dir`.
    fn list(p: &mut Process, dir: i32) -> Vec<String> {
        let buf = scratch(p, 512);
        let mut names = Vec::new();
        loop {
            // A small buffer, so the listing takes many calls.
            let n = p.sys_getdents64(dir, buf, 512).unwrap() as usize;
            if n == 0 {
                return names;
            }
            let b = read(p, buf, n);
            let mut at = 0;
            while at < n {
                let reclen = u16::from_ne_bytes([b[at + 16], b[at + 17]]) as usize;
                let name = &b[at + 19..at + reclen];
                let end = name.iter().position(|&c| c == 0).unwrap();
                names.push(String::from_utf8(name[..end].to_vec()).unwrap());
                at += reclen;
            }
        }
    }

    #[test]
    fn proc_self_fd_lists_the_guests_descriptors_only() {
        use std::os::fd::AsRawFd;
        let f = TempFile::new("fdlist", &[7u8; 4096]);
        let mut p = process();
        let path = guest_str(&mut p, f.path());
        let file = p.sys_openat(CWD, path, libc::O_RDWR as u64, 0).unwrap();
        // A private and a shared mapping of it, and shared anonymous memory:
        // the emulator keeps a descriptor for each.
        for (flags, fd) in [(2, file), (1, file), (0x21, -1)] {
            p.sys_mmap([0, 4096, 3, flags, fd as u64, 0]).unwrap();
        }
        let mut internal: Vec<i32> = p
            .memory
            .aspace
            .vmas
            .values()
            .filter_map(|v| v.file.as_ref().map(|m| m.fd.as_raw_fd()))
            .collect();
        internal.extend(p.files.fs.tree.as_ref().and_then(|t| t.hold_fd()));
        assert_eq!(internal.len(), 4, "{internal:?}");
        assert!(internal.iter().all(|&fd| fd >= 900), "{internal:?}");
        for dir in ["/proc/self/fd", "/proc/self/fdinfo"] {
            let at = guest_str(&mut p, dir);
            let d = p
                .sys_openat(CWD, at, (libc::O_RDONLY | libc::O_DIRECTORY) as u64, 0)
                .unwrap();
            let names = list(&mut p, d as i32);
            assert!(names.contains(&file.to_string()), "{dir}: {names:?}");
            assert!(names.contains(&d.to_string()), "{dir}: {names:?}");
            for fd in &internal {
                assert!(!names.contains(&fd.to_string()), "{dir} lists {fd}");
            }
            p.sys_close(d as i32).unwrap();
        }
        // Nor may the guest close them.
        for fd in internal {
            assert_eq!(err(p.sys_close(fd)), EBADF);
        }
        p.sys_close(file as i32).unwrap();
    }

    #[test]
    fn open_read_seek_close() {
        let f = TempFile::new("read", b"hello, world");
        let mut p = process();
        let path = guest_str(&mut p, f.path());
        let buf = scratch(&mut p, 64);
        let fd = p.sys_openat(CWD, path, libc::O_RDONLY as u64, 0).unwrap() as i32;
        assert_eq!(p.sys_read(fd, buf, 5), Ok(5));
        assert_eq!(read(&mut p, buf, 5), b"hello");
        assert_eq!(p.sys_lseek(fd, 7, libc::SEEK_SET), Ok(7));
        assert_eq!(p.sys_read(fd, buf, 64), Ok(5), "a short read at the end");
        assert_eq!(read(&mut p, buf, 5), b"world");
        assert_eq!(p.sys_read(fd, buf, 64), Ok(0), "end of file");
        assert_eq!(p.sys_pread64(fd, buf, 4, 2), Ok(4));
        assert_eq!(read(&mut p, buf, 4), b"llo,");
        assert_eq!(p.sys_close(fd), Ok(0));
        assert_eq!(err(p.sys_close(fd)), EBADF);
        assert_eq!(err(p.sys_read(fd, buf, 1)), EBADF);
        assert_eq!(err(p.sys_lseek(fd, 0, libc::SEEK_SET)), EBADF);
    }

    #[test]
    fn dup3_shares_the_offset_and_refuses_the_same_number() {
        let f = TempFile::new("dup3", b"abcdef");
        let mut p = process();
        let path = guest_str(&mut p, f.path());
        let buf = scratch(&mut p, 8);
        let fd = p.sys_openat(CWD, path, libc::O_RDONLY as u64, 0).unwrap() as i32;
        assert_eq!(err(p.sys_dup3(fd, fd, 0)), EINVAL);
        assert_eq!(err(p.sys_dup3(fd, 1501, 0x1234_5678)), EINVAL, "bad flags");
        assert_eq!(p.sys_dup3(fd, 1501, libc::O_CLOEXEC), Ok(1501));
        assert_eq!(p.sys_read(fd, buf, 2), Ok(2));
        assert_eq!(p.sys_read(1501, buf, 2), Ok(2));
        assert_eq!(read(&mut p, buf, 2), b"cd", "one open file, one offset");
        let d = p.sys_dup(fd).unwrap() as i32;
        assert_eq!(p.sys_lseek(d, 0, libc::SEEK_CUR), Ok(4));
        for x in [fd, d, 1501] {
            assert_eq!(p.sys_close(x), Ok(0));
        }
        assert_eq!(err(p.sys_dup(fd)), EBADF);
    }

    #[test]
    fn the_emulators_own_descriptors_cannot_be_duplicated_or_replaced() {
        let f = TempFile::new("dup-internal", b"abc");
        let mut p = process();
        // Shared anonymous memory keeps a memfd of the emulator's.
        let flags = (libc::MAP_SHARED | libc::MAP_ANONYMOUS) as u64;
        let prot = (libc::PROT_READ | libc::PROT_WRITE) as u64;
        let addr = p.sys_mmap([0, 4096, prot, flags, u64::MAX, 0]).unwrap() as u64;
        let internal = (0..4096)
            .find(|&fd| p.is_internal_fd(fd))
            .expect("the mapping's memfd");
        let path = guest_str(&mut p, f.path());
        let fd = p.sys_openat(CWD, path, libc::O_RDONLY as u64, 0).unwrap() as i32;
        assert_eq!(err(p.sys_dup3(fd, internal, 0)), EBADF);
        assert_eq!(err(p.sys_dup3(internal, 1502, 0)), EBADF);
        assert_eq!(err(p.sys_dup(internal)), EBADF);
        assert_eq!(err(p.sys_fcntl(internal, libc::F_DUPFD, 0)), EBADF);
        // The mapping still has its memory.
        assert!(p.write_mem(addr, b"kept").is_ok());
        let mut b = [0u8; 4];
        p.read_mem(addr, &mut b).unwrap();
        assert_eq!(&b, b"kept");
        assert_eq!(p.sys_close(fd), Ok(0));
    }

    #[test]
    fn bad_paths_and_wild_pointers() {
        let f = TempFile::new("efault", b"x");
        let mut p = process();
        let missing = guest_str(&mut p, "/nonexistent/rvnvmm/file");
        assert_eq!(err(p.sys_openat(CWD, missing, 0, 0)), ENOENT);
        assert_eq!(err(p.sys_openat(CWD, WILD, 0, 0)), EFAULT);
        assert_eq!(err(p.sys_newfstatat(CWD, missing, WILD, 0)), ENOENT);
        let path = guest_str(&mut p, f.path());
        let fd = p.sys_openat(CWD, path, libc::O_RDONLY as u64, 0).unwrap() as i32;
        assert_eq!(err(p.sys_read(fd, WILD, 1)), EFAULT);
        assert_eq!(err(p.sys_fstat(fd, WILD)), EFAULT);
        assert_eq!(err(p.sys_readv(fd, WILD, 1, None)), EFAULT);
        assert_eq!(err(p.sys_readv(fd, WILD, 1025, None)), EINVAL);
        p.sys_close(fd).unwrap();
        let out = scratch(&mut p, 4);
        assert_eq!(err(p.sys_getcwd(out, 1)), ERANGE);
        assert_eq!(err(p.sys_ioctl(0, 0x1234, 0)), ENOTTY);
    }

    #[test]
    fn fcntl_passes_integers_and_copies_structures() {
        let f = TempFile::new("fcntl", b"x");
        let mut p = process();
        let path = guest_str(&mut p, f.path());
        let fd = p.sys_openat(CWD, path, libc::O_RDWR as u64, 0).unwrap() as i32;
        assert_eq!(p.sys_fcntl(fd, libc::F_GETFD, 0), Ok(0));
        assert_eq!(
            p.sys_fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC as u64),
            Ok(0)
        );
        assert_eq!(
            p.sys_fcntl(fd, libc::F_GETFD, 0),
            Ok(libc::FD_CLOEXEC as i64)
        );
        // F_GETOWN_EX writes a struct f_owner_ex to guest memory.
        let owner = scratch(&mut p, 8);
        p.write_u64(owner, u64::MAX).unwrap();
        assert_eq!(p.sys_fcntl(fd, 16, owner), Ok(0));
        assert_eq!(p.read_u64(owner), Ok(0), "no owner");
        assert_eq!(err(p.sys_fcntl(fd, 16, WILD)), EFAULT);
        // F_GETLK of a file nobody locks answers F_UNLCK in l_type.
        let lock = scratch(&mut p, 32);
        p.write_mem(lock, &(libc::F_WRLCK as u16).to_le_bytes())
            .unwrap();
        assert_eq!(p.sys_fcntl(fd, libc::F_GETLK, lock), Ok(0));
        assert_eq!(read(&mut p, lock, 2), (libc::F_UNLCK as u16).to_le_bytes());
        assert_eq!(err(p.sys_fcntl(fd, 0x7777, 0)), EINVAL);
        p.sys_close(fd).unwrap();
        assert_eq!(err(p.sys_fcntl(fd, libc::F_GETFD, 0)), EBADF);
    }

    #[test]
    fn stat_reports_the_size_in_the_riscv64_layout() {
        let f = TempFile::new("stat", &[7u8; 1000]);
        let mut p = process();
        let path = guest_str(&mut p, f.path());
        let out = scratch(&mut p, 128);
        assert_eq!(p.sys_newfstatat(CWD, path, out, 0), Ok(0));
        // struct stat of riscv64 (asm-generic): st_size at offset 48.
        let size = u64::from_le_bytes(read(&mut p, out + 48, 8).try_into().unwrap());
        assert_eq!(size, 1000);
        let mode = u32::from_le_bytes(read(&mut p, out + 16, 4).try_into().unwrap());
        assert_eq!(mode & libc::S_IFMT, libc::S_IFREG);
    }

    #[test]
    fn a_pipe_carries_bytes_through_writev_and_read() {
        let mut p = process();
        let fds = scratch(&mut p, 4096);
        assert_eq!(p.sys_pipe2(fds, libc::O_CLOEXEC as u64), Ok(0));
        let b = read(&mut p, fds, 8);
        let (r, w) = (
            i32::from_le_bytes(b[..4].try_into().unwrap()),
            i32::from_le_bytes(b[4..].try_into().unwrap()),
        );
        let (iov, data) = (fds + 64, fds + 128);
        p.write_mem(data, b"abcdef").unwrap();
        for (k, (base, len)) in [(data, 2u64), (data + 4, 2)].into_iter().enumerate() {
            p.write_u64(iov + 16 * k as u64, base).unwrap();
            p.write_u64(iov + 16 * k as u64 + 8, len).unwrap();
        }
        assert_eq!(p.sys_writev(w, iov, 2, None), Ok(4));
        let into = fds + 256;
        assert_eq!(p.sys_read(r, into, 16), Ok(4));
        assert_eq!(read(&mut p, into, 4), b"abef");
        assert_eq!(err(p.sys_pipe2(WILD, 0)), EFAULT);
        p.sys_close(r).unwrap();
        p.sys_close(w).unwrap();
    }

    #[test]
    fn copy_file_range_moves_the_offsets_in_guest_memory() {
        let src = TempFile::new("cfr-in", b"0123456789");
        let dst = TempFile::new("cfr-out", b"");
        let mut p = process();
        let (a, b) = (guest_str(&mut p, src.path()), guest_str(&mut p, dst.path()));
        let rw = libc::O_RDWR as u64;
        let fin = p.sys_openat(CWD, a, rw, 0).unwrap() as u64;
        let fout = p.sys_openat(CWD, b, rw, 0).unwrap() as u64;
        let offs = scratch(&mut p, 16);
        p.write_u64(offs, 3).unwrap();
        p.write_u64(offs + 8, 1).unwrap();
        assert_eq!(
            p.sys_copy_file_range([fin, offs, fout, offs + 8, 4, 0]),
            Ok(4)
        );
        assert_eq!((p.read_u64(offs), p.read_u64(offs + 8)), (Ok(7), Ok(5)));
        assert_eq!(std::fs::read(&dst.0).unwrap(), b"\x003456");
        assert_eq!(p.sys_lseek(fin as i32, 0, libc::SEEK_CUR), Ok(0), "unmoved");
        assert_eq!(err(p.sys_copy_file_range([fin, 0, fout, 0, 4, 1])), EINVAL);
        assert_eq!(
            err(p.sys_copy_file_range([fin, WILD, fout, 0, 4, 0])),
            EFAULT
        );
        assert_eq!(p.sys_copy_file_range([fin, 0, fout, 0, 100, 0]), Ok(10));
        assert_eq!(p.sys_lseek(fout as i32, 0, libc::SEEK_CUR), Ok(10), "moved");
        p.sys_close(fin as i32).unwrap();
        assert_eq!(err(p.sys_copy_file_range([fin, 0, fout, 0, 4, 0])), EBADF);
        p.sys_close(fout as i32).unwrap();
    }

    #[test]
    fn getcwd_is_the_hosts_without_a_root() {
        let mut p = process();
        let out = scratch(&mut p, 4096);
        let n = p.sys_getcwd(out, 4096).unwrap() as usize;
        let cwd = std::env::current_dir().unwrap();
        let mut want = cwd.as_os_str().as_encoded_bytes().to_vec();
        want.push(0);
        assert_eq!(read(&mut p, out, n), want);
    }
}
