//! Process and thread system calls: clone, execve, exit, wait, ids,
//! resource limits, CPU affinity.

use super::{host, nr};
use crate::abi::{CloneArgs, GuestTime, Rlimit, Rusage, SigInfo, Timeval};
use crate::errno::*;
use crate::fs::AT_FDCWD;
use crate::process::{ExitKind, Process, Thread, ThreadState};
use zerocopy::IntoBytes;

impl Process {
    pub(super) fn sys_exit(&mut self, status: i32) {
        let i = self.threads.current;
        self.exit_thread(i);
        if self
            .threads
            .all
            .iter()
            .all(|t| t.state == ThreadState::Exited)
        {
            self.exit = Some(ExitKind::Code(status & 0xff));
        }
    }

    pub(super) fn sys_clone3(&mut self, args: u64, size: u64) -> SysResult {
        if size < 64 {
            return Err(EINVAL);
        }
        let CloneArgs {
            flags,
            child_tid,
            parent_tid,
            exit_signal,
            stack,
            stack_size,
            tls,
            ..
        } = self.read_obj(args)?;
        let sp = if stack != 0 { stack + stack_size } else { 0 };
        match self.sys_clone(flags | (exit_signal & 0xff), sp, parent_tid, tls, child_tid) {
            Some(r) => match Errno::from_raw(-r as i32) {
                Some(e) if r < 0 => Err(e),
                _ => Ok(r),
            },
            None => Ok(0),
        }
    }

    pub(super) fn sys_clone(
        &mut self,
        flags: u64,
        sp: u64,
        ptid: u64,
        tls: u64,
        ctid: u64,
    ) -> Option<i64> {
        const CLONE_VM: u64 = 0x100;
        const CLONE_THREAD: u64 = 0x10000;
        const CLONE_SETTLS: u64 = 0x80000;
        const CLONE_PARENT_SETTID: u64 = 0x10_0000;
        const CLONE_CHILD_CLEARTID: u64 = 0x20_0000;
        const CLONE_CHILD_SETTID: u64 = 0x100_0000;
        let i = self.threads.current;
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
                .all
                .iter()
                .filter(|t| t.state != ThreadState::Exited)
                .count() as u64;
            // SAFETY: getuid has no preconditions.
            if live + 1 > self.rlimits[6].0 && unsafe { libc::getuid() } != 0 {
                return Some(-EAGAIN);
            }
            let tid = self.new_tid();
            let mut hart = self.threads.all[i].hart.clone_registers();
            hart.trace = self.opts.trace;
            hart.x[10] = 0;
            if sp != 0 {
                hart.x[2] = sp;
            }
            if flags & CLONE_SETTLS != 0 {
                hart.x[4] = tls;
            }
            let affinity = self.threads.all[i].affinity;
            let cpu = self.least_loaded_cpu(affinity);
            if self.threads.cpus[cpu].core.cycles
                < self.threads.cpus[self.threads.all[i].cpu].core.cycles
            {
                self.threads.cpus[cpu].core.cycles =
                    self.threads.cpus[self.threads.all[i].cpu].core.cycles;
            }
            self.threads.all.push(Thread {
                clear_child_tid: if flags & CLONE_CHILD_CLEARTID != 0 {
                    ctid
                } else {
                    0
                },
                sigmask: self.threads.all[i].sigmask,
                comm: self.threads.all[i].comm,
                affinity,
                mempolicy: self.threads.all[i].mempolicy,
                ..Thread::new(tid, hart, cpu)
            });
            if flags & CLONE_PARENT_SETTID != 0 {
                let _ = self.write_u32(ptid, tid as u32);
            }
            if flags & CLONE_CHILD_SETTID != 0 {
                let _ = self.write_u32(ctid, tid as u32);
            }
            return Some(tid as i64);
        }
        // A new process: fork the emulator, in the process tree that runs
        // them in turn (`family.rs`). (CLONE_VM without CLONE_THREAD, i.e.
        // vfork, gets fork semantics, correct for programs that only exec
        // or _exit in the child; the parent waits for that, as Linux's.)
        const CLONE_VFORK: u64 = 0x4000;
        let now = self.now_ns();
        let (slot, child_pid) = match self.join_tree() {
            Ok(f) => match f.add_child(now) {
                Some(k) => k,
                None => return Some(-EAGAIN),
            },
            Err(e) => return Some(-e),
        };
        // SAFETY: the emulator is single-threaded, so the child may go on running
        // it (no lock can be held by a thread that does not exist there).
        let r = unsafe { libc::fork() };
        if r < 0 {
            let e = Errno::last_host();
            if let Some(f) = self.family.as_ref() {
                f.drop_child(slot);
            }
            return Some(-e);
        }
        if r == 0 {
            if let Some(f) = self.family.as_mut() {
                f.become_child(slot);
            }
            self.is_child = true;
            self.drop_page_heat_in_child();
            // The persistence trace is the initial process's.
            if let Some(d) = self.memory.phys.domain_mut() {
                d.abandon_trace();
            }
            self.insns_at_fork = self.threads.total_insns;
            // As Linux, a child does not inherit the interval timers.
            self.signals.itimers = Default::default();
            self.threads.cpu_cycles = 0;
            // The translated code lives in memory shared across `fork`.
            self.memory.code.unshare_after_fork();
            // The debugger follows the parent only.
            self.gdb = None;
            self.pid = child_pid;
            self.files.fs.pid = child_pid;
            self.threads.next_tid = self.pid + 1;
            let keep = self.threads.all.swap_remove(i);
            self.threads.all.clear();
            self.threads.all.push(keep);
            self.threads.current = 0;
            self.threads.exited.clear();
            let t = &mut self.threads.all[0];
            t.hart.debug = None;
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
        if let Some(f) = self.family.as_mut() {
            f.set_child_pid(slot, r);
        }
        if flags & CLONE_PARENT_SETTID != 0 {
            let _ = self.write_u32(ptid, child_pid as u32);
        }
        if flags & CLONE_VFORK != 0 {
            self.wait_vfork_child(slot);
        }
        Some(child_pid as i64)
    }

    /// The parent of a `vfork` waits until its child execs or exits, and
    /// goes on from then.
    fn wait_vfork_child(&mut self, slot: u32) {
        let now = self.now_ns();
        let Some(f) = self.family.as_mut() else {
            return;
        };
        let at = f.wait_vfork(slot, now);
        let at = self.ns_to_cycles(at);
        let cpu = self.threads.current().cpu;
        let c = &mut self.threads.cpus[cpu].core;
        c.cycles = c.cycles.max(at);
    }

    /// A tid for a new thread: the process's next, or the tree's once it
    /// forked (processes and threads share the numbers, as on Linux).
    fn new_tid(&mut self) -> i32 {
        match self.family.as_ref() {
            Some(f) => f.alloc_pid(),
            None => {
                let tid = self.threads.next_tid;
                self.threads.next_tid += 1;
                tid
            }
        }
    }

    pub(super) fn least_loaded_cpu(&self, affinity: u64) -> usize {
        (0..self.threads.cpus.len())
            .filter(|&c| c >= 64 || affinity & (1 << c) != 0)
            .min_by_key(|&c| {
                self.threads
                    .all
                    .iter()
                    .filter(|t| t.cpu == c && t.state != ThreadState::Exited)
                    .count()
            })
            .unwrap_or(0)
    }

    pub(super) fn sys_execve(&mut self, path: u64, argv: u64, envp: u64) -> Option<i64> {
        let r = (|| -> Result<(), Errno> {
            let mut path = String::from_utf8_lossy(&self.read_cstr(path)?).into_owned();
            let mut args = self.read_str_array(argv)?;
            let env = self.read_str_array(envp)?;
            // `#!` scripts, up to four levels.
            for _ in 0..4 {
                let host = self.files.fs.host_path(AT_FDCWD, path.as_bytes())?;
                // Linux: only regular files with execute permission run.
                let meta = std::fs::metadata(&host)
                    .map_err(|e| e.raw_os_error().and_then(Errno::from_raw).unwrap_or(ENOENT))?;
                let c = std::ffi::CString::new(host.as_os_str().as_encoded_bytes())
                    .map_err(|_| EINVAL)?;
                // SAFETY: `c` is a NUL-terminated path that outlives the call.
                if !meta.is_file() || unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
                    return Err(EACCES);
                }
                let mut head = [0u8; 256];
                let n = std::fs::File::open(&host)
                    .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                    .map_err(Errno::from)?;
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
            let host = self.files.fs.host_path(AT_FDCWD, path.as_bytes())?;
            let f = crate::elf::ElfFile::open(&host, &path).map_err(|e| e.errno())?;
            drop(f);
            self.exec(&path, &args, &env, false).map_err(|e| {
                eprintln!("rvnvmm: execve {path}: {e}");
                e.errno()
            })?;
            self.close_on_exec();
            if let Some(f) = self.family.as_ref() {
                f.exec_done(self.now_ns());
            }
            Ok(())
        })();
        match r {
            Ok(()) => None,
            Err(e) => Some(-e),
        }
    }

    /// The guest's open descriptors (the host's, less the emulator's own).
    pub(crate) fn guest_fds(&self) -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&fd| !self.is_internal_fd(fd))
            .collect()
    }

    pub(super) fn close_on_exec(&mut self) {
        for fd in self.guest_fds() {
            // SAFETY: F_GETFD takes no argument.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            if fl >= 0 && fl & libc::FD_CLOEXEC != 0 {
                // SAFETY: close takes an integer; the emulator's own descriptors are skipped
                // above.
                unsafe { libc::close(fd) };
            }
        }
        self.files.timerfds.prune_closed();
    }

    /// Whether a wait for a child (`options` without `WNOHANG`) is to look
    /// without blocking and, finding nothing, wait while the other threads
    /// run (`blocking.rs`): children are host processes.
    fn child_wait_polls(&self, options: i32) -> bool {
        options & libc::WNOHANG == 0 && self.others_can_run()
    }

    pub(super) fn sys_wait4(&mut self, a: [u64; 6]) -> SysResult {
        if self.family.is_some() {
            return self.tree_wait4(a);
        }
        let mut status = 0i32;
        let mut ru = Rusage::default();
        let polls = self.child_wait_polls(a[2] as i32);
        let options = a[2] as i32 | if polls { libc::WNOHANG } else { 0 };
        let rp = ru.as_mut_bytes().as_mut_ptr().cast();
        // SAFETY: `status` and `ru` (a struct rusage, the host's layout too)
        // outlive the call.
        let r = host(unsafe { libc::wait4(a[0] as i32, &mut status, options, rp) } as i64)?;
        if polls && r == 0 {
            return Err(self.retry_later());
        }
        if a[1] != 0 && r > 0 {
            self.write_u32(a[1], status as u32)?;
        }
        if a[3] != 0 {
            self.write_obj(a[3], &ru)?;
        }
        Ok(r)
    }

    pub(super) fn sys_waitid(&mut self, a: [u64; 6]) -> SysResult {
        if self.family.is_some() {
            return self.tree_waitid(a);
        }
        let mut info = SigInfo::default();
        let polls = self.child_wait_polls(a[3] as i32);
        let options = a[3] as i32 | if polls { libc::WNOHANG } else { 0 };
        let ip = info.as_mut_bytes().as_mut_ptr();
        // SAFETY: `info` is a siginfo_t (128 bytes, the host's size too); the
        // rusage pointer is null.
        let r = host(unsafe {
            libc::syscall(
                libc::SYS_waitid,
                a[0] as i32,
                a[1] as i32,
                ip,
                options,
                std::ptr::null_mut::<u8>(),
            )
        })?;
        // With WNOHANG and no child ready, si_pid (the low half of the
        // union's first word) stays 0.
        if polls && info.fields[0] as u32 == 0 {
            return Err(self.retry_later());
        }
        if a[2] != 0 {
            self.write_obj(a[2], &info)?;
        }
        Ok(r)
    }

    /// wait4 in a process tree: children are looked for in the tree's
    /// table (their exits are told at their simulated times); the rusage
    /// is the child's simulated CPU time.
    fn tree_wait4(&mut self, a: [u64; 6]) -> SysResult {
        let (pid, options) = (a[0] as i32, a[2] as i32);
        // WNOHANG, WUNTRACED, WCONTINUED, __WNOTHREAD, __WCLONE, __WALL.
        if options as u32 & !0xe000_000b != 0 {
            return Err(EINVAL);
        }
        let child = match self.tree_child(pid, options, true)? {
            Some(c) => c,
            None => return Ok(0),
        };
        if a[1] != 0 {
            self.write_u32(a[1], child.status as u32)?;
        }
        if a[3] != 0 {
            let ru = Rusage {
                ru_utime: Timeval::from_ns(child.cpu_ns),
                ..Rusage::default()
            };
            self.write_obj(a[3], &ru)?;
        }
        Ok(child.pid as i64)
    }

    /// waitid in a process tree (`P_ALL`, `P_PID`, `P_PGID` as `P_ALL`).
    fn tree_waitid(&mut self, a: [u64; 6]) -> SysResult {
        const WNOWAIT: i32 = 0x0100_0000;
        let (idtype, id, options) = (a[0] as i32, a[1] as i32, a[3] as i32);
        let pid = match idtype {
            0 | 2 => -1,
            1 if id > 0 => id,
            _ => return Err(EINVAL),
        };
        if options & (libc::WEXITED | libc::WSTOPPED | libc::WCONTINUED) == 0 {
            return Err(EINVAL);
        }
        let found = if options & libc::WEXITED != 0 {
            self.tree_child(pid, options, options & WNOWAIT == 0)?
        } else if options & libc::WNOHANG != 0 {
            None
        } else {
            // Only stops or continues, which the tree does not tell.
            return Err(ECHILD);
        };
        let mut info = SigInfo::default();
        if let Some(c) = found {
            let (code, status) = if c.status & 0x7f == 0 {
                (1i32, (c.status >> 8) & 0xff) // CLD_EXITED
            } else {
                (2, c.status & 0x7f) // CLD_KILLED
            };
            // SAFETY: getuid has no preconditions.
            let uid = unsafe { libc::getuid() } as u64;
            info.si_signo = libc::SIGCHLD;
            info.si_code = code;
            // si_pid, si_uid; si_status.
            info.fields[0] = c.pid as u32 as u64 | uid << 32;
            info.fields[1] = status as u32 as u64;
        }
        if a[2] != 0 {
            self.write_obj(a[2], &info)?;
        }
        Ok(0)
    }

    /// A child of the tree matching `pid` that has exited (reaped with
    /// `reap`); `None` with `WNOHANG` while they all run; else the thread
    /// waits for one (`BLOCKED`: the call runs again when a child exits).
    fn tree_child(
        &mut self,
        pid: i32,
        options: i32,
        reap: bool,
    ) -> SysResult<Option<crate::family::ExitedChild>> {
        use crate::family::ChildWait;
        let Some(f) = self.family.as_ref() else {
            return Err(ECHILD);
        };
        match f.exited_child(pid, reap) {
            ChildWait::Exited(c) => Ok(Some(c)),
            ChildWait::NoChild => Err(ECHILD),
            ChildWait::Running if options & libc::WNOHANG != 0 => Ok(None),
            ChildWait::Running => {
                let t = self.threads.current_mut();
                t.state = ThreadState::Io {
                    fds: Vec::new(),
                    until: None,
                    restart: true,
                };
                t.hart.pc -= 4;
                Err(BLOCKED)
            }
        }
    }

    pub(super) fn sys_rlimit(&mut self, nr: u64, a: [u64; 6]) -> SysResult {
        // getrlimit(res, old) / setrlimit(res, new) / prlimit64(pid, res, new, old)
        let (pid, res, new, old) = match nr {
            nr::GETRLIMIT => (0, a[0], 0, a[1]),
            nr::SETRLIMIT => (0, a[0], a[1], 0),
            _ => (a[0] as i32, a[1], a[2], a[3]),
        };
        if pid != 0 && pid != self.pid {
            return Err(ESRCH);
        }
        let r = self.rlimits.get(res as usize).copied().ok_or(EINVAL)?;
        if new != 0 {
            let Rlimit {
                rlim_cur: cur,
                rlim_max: max,
            } = self.read_obj(new)?;
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
                // SAFETY: `l` is a struct rlimit the call fills.
                host(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } as i64)?;
                l.rlim_cur = cur.min(l.rlim_max);
                // SAFETY: `l` is a struct rlimit alive for the call.
                host(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) } as i64)?;
            }
            self.rlimits[res as usize] = (cur, max);
            if res as usize == crate::process::RLIMIT_DATA {
                self.memory.aspace.data_rlimit = (cur, max);
            }
        }
        if old != 0 {
            let (rlim_cur, rlim_max) = r;
            self.write_obj(old, &Rlimit { rlim_cur, rlim_max })?;
        }
        Ok(0)
    }

    pub(super) fn sys_ids(&mut self, nr: u64, a: [u64; 6]) -> SysResult {
        match nr {
            nr::GETRESUID | nr::GETRESGID => {
                let ids = if nr == nr::GETRESUID {
                    // SAFETY: the id getters take no arguments and cannot fail.
                    unsafe { [libc::getuid(), libc::geteuid(), libc::geteuid()] }
                } else {
                    // SAFETY: the id getters take no arguments and cannot fail.
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

    pub(super) fn sys_getgroups(&mut self, size: u64, list: u64) -> SysResult {
        let mut g = vec![0u32; 256];
        // SAFETY: `g` has room for the 256 groups asked for.
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

    /// As the `set*id` calls: the ids stay the host's, so the call checks
    /// its arguments and permission as Linux does (`EINVAL` beyond
    /// `NGROUPS_MAX`, `EFAULT` for an unreadable list, `EPERM` without
    /// root) and changes nothing. Daemons that drop privileges
    /// (memcached's `-u`) call it with an empty list.
    pub(super) fn sys_setgroups(&mut self, size: u64, list: u64) -> SysResult {
        const NGROUPS_MAX: u64 = 65536;
        if size > NGROUPS_MAX {
            return Err(EINVAL);
        }
        let mut groups = vec![0u8; size as usize * 4];
        self.read_mem(list, &mut groups)?;
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(EPERM);
        }
        Ok(0)
    }

    pub(super) fn sys_setaffinity(&mut self, pid: u64, len: u64, mask: u64) -> SysResult {
        let mut b = [0u8; 8];
        let n = (len as usize).min(8);
        self.read_mem(mask, &mut b[..n])?;
        let m = u64::from_le_bytes(b);
        let valid = if self.threads.cpus.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.threads.cpus.len()) - 1
        };
        if m & valid == 0 {
            return Err(EINVAL);
        }
        let i = self.thread_index(pid as i32).ok_or(ESRCH)?;
        self.threads.all[i].affinity = m;
        if m & (1 << self.threads.all[i].cpu) == 0 {
            let cpu = self.least_loaded_cpu(m);
            let from = self.threads.all[i].cpu;
            if self.threads.cpus[cpu].core.cycles < self.threads.cpus[from].core.cycles {
                self.threads.cpus[cpu].core.cycles = self.threads.cpus[from].core.cycles;
            }
            self.threads.all[i].cpu = cpu;
        }
        Ok(0)
    }

    pub(super) fn sys_getaffinity(&mut self, pid: u64, len: u64, mask: u64) -> SysResult {
        if len < 8 {
            return Err(EINVAL);
        }
        let i = self.thread_index(pid as i32).ok_or(ESRCH)?;
        let valid = if self.threads.cpus.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.threads.cpus.len()) - 1
        };
        self.write_u64(mask, self.threads.all[i].affinity & valid)?;
        Ok(8)
    }

    pub(super) fn thread_index(&self, tid: i32) -> Option<usize> {
        if tid == 0 {
            return Some(self.threads.current);
        }
        self.threads
            .all
            .iter()
            .position(|t| t.tid == tid && t.state != ThreadState::Exited)
    }

    pub(super) fn sys_exit_group(&mut self, status: i32) {
        self.exit = Some(ExitKind::Code(status & 0xff));
    }

    pub(super) fn sys_set_tid_address(&mut self, tidptr: u64) -> SysResult {
        let t = self.threads.current_mut();
        t.clear_child_tid = tidptr;
        Ok(t.tid as i64)
    }

    pub(super) fn sys_getid(&mut self, nr: u64) -> SysResult {
        // SAFETY: the id getters take no arguments and cannot fail.
        let id = unsafe {
            match nr {
                nr::GETUID => libc::getuid(),
                nr::GETEUID => libc::geteuid(),
                nr::GETGID => libc::getgid(),
                _ => libc::getegid(),
            }
        };
        Ok(id as i64)
    }

    pub(super) fn sys_setpgid(&mut self, pid: i32, pgid: i32) -> SysResult {
        let pid = self.host_pid_for(pid)?;
        let pgid = self.host_pid_for(pgid)?;
        // SAFETY: setpgid takes integers only.
        host(unsafe { libc::setpgid(pid, pgid) } as i64)
    }

    pub(super) fn sys_getpgid(&mut self, pid: i32) -> SysResult {
        let pid = self.host_pid_for(pid)?;
        // SAFETY: getpgid takes an integer only.
        let g = host(unsafe { libc::getpgid(pid) } as i64)?;
        Ok(self.guest_group_id(g as i32) as i64)
    }

    pub(super) fn sys_getsid(&mut self, pid: i32) -> SysResult {
        let pid = self.host_pid_for(pid)?;
        // SAFETY: getsid takes an integer only.
        let g = host(unsafe { libc::getsid(pid) } as i64)?;
        Ok(self.guest_group_id(g as i32) as i64)
    }

    pub(super) fn sys_setsid(&mut self) -> SysResult {
        // SAFETY: setsid takes no arguments.
        let g = host(unsafe { libc::setsid() } as i64)?;
        Ok(self.guest_group_id(g as i32) as i64)
    }

    /// The host pid for guest pid `pid` (0 stays 0: the caller): this
    /// process's or a live member's of its tree; `ESRCH` for any other.
    pub(crate) fn host_pid_for(&self, pid: i32) -> SysResult<i32> {
        if pid == 0 {
            return Ok(0);
        }
        if pid == self.pid {
            // SAFETY: getpid has no preconditions.
            return Ok(unsafe { libc::getpid() });
        }
        self.family
            .as_ref()
            .and_then(|f| f.host_pid_of(pid))
            .ok_or(ESRCH)
    }

    /// The guest's number for host process group or session `g`: the
    /// guest pid of the member leading it, or, for one the run started in
    /// (the host's), the first process's pid.
    pub(crate) fn guest_group_id(&self, g: i32) -> i32 {
        // SAFETY: getpid has no preconditions.
        if g == unsafe { libc::getpid() } {
            return self.pid;
        }
        self.family
            .as_ref()
            .and_then(|f| f.guest_pid_of(g))
            .unwrap_or(crate::family::FIRST_PID)
    }

    /// umask: the guest's mask, which the host's follows so that files are
    /// created with it.
    pub(super) fn sys_umask(&mut self, mask: u32) -> SysResult {
        let old = self.files.umask;
        self.files.umask = mask & 0o777;
        // SAFETY: umask takes an integer and cannot fail.
        unsafe { libc::umask(self.files.umask) };
        Ok(old as i64)
    }

    /// getcpu: the thread's hart; one NUMA node. Unwritable pointers are
    /// ignored, as before.
    pub(super) fn sys_getcpu(&mut self, cpu: u64, node: u64) -> SysResult {
        let c = self.threads.current().cpu as u32;
        if cpu != 0 {
            let _ = self.write_u32(cpu, c);
        }
        if node != 0 {
            let _ = self.write_u32(node, 0);
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    const CLONE_VM: u64 = 0x100;
    const CLONE_THREAD: u64 = 0x10000;
    const CLONE_SETTLS: u64 = 0x80000;
    const CLONE_PARENT_SETTID: u64 = 0x10_0000;

    #[test]
    fn setgroups_checks_its_arguments_and_permission() {
        let mut p = process();
        assert_eq!(err(p.sys_setgroups(65537, 0)), EINVAL);
        assert_eq!(err(p.sys_setgroups(2, WILD)), EFAULT);
        let list = scratch(&mut p, 4096);
        // SAFETY: geteuid takes no arguments and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        for (size, at) in [(0, 0), (2, list)] {
            let got = p.sys_setgroups(size, at);
            assert_eq!(got, if root { Ok(0) } else { Err(EPERM) });
        }
    }

    #[test]
    fn ids_of_the_process_and_its_first_thread() {
        let mut p = process();
        // The guest's own numbers, the same on every run.
        let pid = crate::family::FIRST_PID as i64;
        assert_eq!(p.dispatch(nr::GETPID, [0; 6]), Some(pid));
        assert_eq!(p.dispatch(nr::GETTID, [0; 6]), Some(pid));
        assert_eq!(p.dispatch(nr::GETPPID, [0; 6]), Some(pid - 1));
        // Its process group and session are the host's it started in.
        assert_eq!(p.dispatch(nr::GETPGID, [0; 6]), Some(pid));
        assert_eq!(p.dispatch(nr::GETSID, [0; 6]), Some(pid));
        assert_eq!(
            p.dispatch(nr::GETPGID, [pid as u64 + 7, 0, 0, 0, 0, 0]),
            Some(-ESRCH)
        );
        assert_eq!(p.dispatch(nr::KILL, [1, 0, 0, 0, 0, 0]), Some(-ESRCH));
        // SAFETY: getuid takes no arguments and cannot fail.
        let uid = unsafe { libc::getuid() } as i64;
        assert_eq!(p.sys_getid(nr::GETUID), Ok(uid));
        let out = scratch(&mut p, 12);
        assert_eq!(
            p.sys_ids(nr::GETRESUID, [out, out + 4, out + 8, 0, 0, 0]),
            Ok(0)
        );
        assert_eq!(p.read_u32(out), Ok(uid as u32));
        assert_eq!(err(p.sys_ids(nr::GETRESUID, [WILD, 0, 0, 0, 0, 0])), EFAULT);
    }

    #[test]
    fn rlimits_round_trip_and_are_checked() {
        let mut p = process();
        let (new, old) = (scratch(&mut p, 16), scratch(&mut p, 16));
        const STACK: u64 = 3;
        let prlimit = |p: &mut Process, pid: u64, res: u64, new: u64, old: u64| {
            p.sys_rlimit(nr::PRLIMIT64, [pid, res, new, old, 0, 0])
        };
        assert_eq!(prlimit(&mut p, 0, STACK, 0, old), Ok(0));
        assert_eq!(p.read_u64(old), Ok(8 << 20));
        assert_eq!(p.read_u64(old + 8), Ok(u64::MAX));
        p.write_u64(new, 1 << 20).unwrap();
        p.write_u64(new + 8, 4 << 20).unwrap();
        assert_eq!(p.sys_rlimit(nr::SETRLIMIT, [STACK, new, 0, 0, 0, 0]), Ok(0));
        assert_eq!(p.sys_rlimit(nr::GETRLIMIT, [STACK, old, 0, 0, 0, 0]), Ok(0));
        assert_eq!(
            (p.read_u64(old), p.read_u64(old + 8)),
            (Ok(1 << 20), Ok(4 << 20))
        );
        p.write_u64(new, 5 << 20).unwrap();
        assert_eq!(
            err(prlimit(&mut p, 0, STACK, new, 0)),
            EINVAL,
            "soft above hard"
        );
        assert_eq!(
            err(prlimit(&mut p, 0, 16, 0, old)),
            EINVAL,
            "no such resource"
        );
        assert_eq!(
            err(prlimit(&mut p, 1, STACK, 0, old)),
            ESRCH,
            "another process"
        );
        assert_eq!(err(prlimit(&mut p, 0, STACK, WILD, 0)), EFAULT);
        let own = p.pid as u64;
        assert_eq!(prlimit(&mut p, own, STACK, 0, old), Ok(0));
    }

    #[test]
    fn affinity_masks_cover_the_harts() {
        let mut p = process();
        let mask = scratch(&mut p, 8);
        assert_eq!(p.sys_getaffinity(0, 8, mask), Ok(8));
        assert_eq!(p.read_u64(mask), Ok(0b11), "two harts");
        assert_eq!(err(p.sys_getaffinity(0, 4, mask)), EINVAL);
        assert_eq!(err(p.sys_getaffinity(12345678, 8, mask)), ESRCH);
        p.write_u64(mask, 0b10).unwrap();
        assert_eq!(p.sys_setaffinity(0, 8, mask), Ok(0));
        assert_eq!(p.threads.all[0].cpu, 1, "moved off hart 0");
        p.write_u64(mask, 0b100).unwrap();
        assert_eq!(err(p.sys_setaffinity(0, 8, mask)), EINVAL, "no such hart");
        assert_eq!(err(p.sys_setaffinity(0, 8, WILD)), EFAULT);
    }

    #[test]
    fn a_thread_gets_a_new_tid_the_idle_hart_and_its_tls() {
        let mut p = process();
        let ptid = scratch(&mut p, 8);
        assert_eq!(
            p.sys_clone(CLONE_THREAD, 0, 0, 0, 0),
            Some(-EINVAL),
            "without VM"
        );
        let flags = CLONE_VM | CLONE_THREAD | CLONE_SETTLS | CLONE_PARENT_SETTID;
        let tid = p.sys_clone(flags, 0x7000, ptid, 0x1234, 0).unwrap();
        assert_eq!(tid, p.pid as i64 + 1);
        assert_eq!(p.read_u32(ptid), Ok(tid as u32));
        let child = &p.threads.all[1];
        assert_eq!(child.tid as i64, tid);
        assert_eq!(child.cpu, 1);
        assert_eq!(child.state, ThreadState::Runnable);
        assert_eq!(
            (child.hart.x[2], child.hart.x[4], child.hart.x[10]),
            (0x7000, 0x1234, 0)
        );
        assert_eq!(p.sys_set_tid_address(0x5000), Ok(p.pid as i64));
        assert_eq!(p.threads.all[0].clear_child_tid, 0x5000);
        p.sys_exit_group(0x1ff);
        assert_eq!(p.exit, Some(ExitKind::Code(0xff)));
    }
}
