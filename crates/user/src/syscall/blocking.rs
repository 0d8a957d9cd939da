//! Calls that block until a descriptor is ready (read and write on pipes,
//! sockets, FIFOs and terminals, accept, connect, recv, send; poll, select
//! and epoll_wait through `Process::wait_or_restart`) or a child changes
//! (wait4, waitid), while other guest threads run.
//!
//! Guest descriptors are host descriptors, and the host's blocking call
//! would stop the whole emulator: no other guest thread could run, not even
//! the one that would make the descriptor ready. So while another thread
//! could run, a call on a descriptor that may block first asks the host
//! whether it is ready (a poll that does not wait). If it is, the call is
//! made without blocking; if not, and the descriptor is not non-blocking
//! (`O_NONBLOCK`, `MSG_DONTWAIT`), the thread waits (`ThreadState::Io`)
//! and re-executes its `ecall` once the descriptor is ready:
//!
//! * after every system call of any thread, the waiters' descriptors are
//!   polled and a ready one's thread is woken at that call's simulated time
//!   (the write that filled a pipe wakes its reader then), so runs are
//!   deterministic;
//! * before each turn, for readiness that comes from outside the process
//!   (a child, a terminal, a peer elsewhere), and when nothing else can run,
//!   in a host poll that blocks on all of them;
//! * at the call's timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO`, simulated time);
//! * by a signal: `EINTR`, or, for a handler with `SA_RESTART` (and no
//!   socket timeout, as Linux's `sock_intr_errno`), the call runs again
//!   after the handler; an ignored signal does not interrupt it. A write
//!   interrupted after some bytes returns their count.
//!
//! A thread that is alone (no other could run) makes the host's blocking
//! call, as it always did. A write or `MSG_WAITALL` receive that moved part
//! of its bytes keeps the count in `Thread::io_done` and waits for the rest.
//! Regular files are always ready.

use super::host;
use crate::errno::*;
use crate::process::{Process, Thread, ThreadState};

/// `Thread::io_done` of a `connect` that started a connection and waits
/// for it.
pub(crate) const CONNECTING: u64 = u64::MAX;

/// How long a call that waits on no descriptor (wait4, waitid) sleeps
/// between its looks (simulated ns).
const RETRY_NS: u64 = 100_000;

/// What a call on a descriptor that may block does ([`Process::io_gate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Gate {
    /// No other thread could run: the host's call, blocking as it does.
    Alone,
    /// The descriptor is ready: the call is made without blocking.
    Ready,
    /// The descriptor or the call does not block: the call as it is.
    NonBlocking,
}

/// Whether `fd` shows one of `events` now (an error, a hang-up or a
/// descriptor that is not open count: the call reports them).
pub(super) fn ready(fd: i32, events: i16) -> bool {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: `p` is one struct pollfd alive for the call.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r != 0
}

/// The type of the file `fd` has open (`S_IFREG`, ...).
fn file_type(fd: i32) -> Option<libc::mode_t> {
    let mut st = crate::fs::unsafe_zeroed_stat();
    // SAFETY: `st` is a struct stat the call fills.
    let r = unsafe { libc::fstat(fd, &mut st) };
    (r == 0).then_some(st.st_mode & libc::S_IFMT)
}

/// Whether the open file of `fd` is non-blocking (`O_NONBLOCK`).
fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL takes no argument.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK != 0
}

/// The socket timeout for a wait on `events` (`SO_SNDTIMEO` for output,
/// else `SO_RCVTIMEO`), in ns; `None` for none or a descriptor that is not
/// a socket.
fn socket_timeout(fd: i32, events: i16) -> Option<u64> {
    let opt = if events & libc::POLLOUT != 0 {
        libc::SO_SNDTIMEO
    } else {
        libc::SO_RCVTIMEO
    };
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: `tv` has room for the struct timeval the option is.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    let ns = (tv.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(tv.tv_usec as u64 * 1000);
    (r == 0 && ns > 0).then_some(ns)
}

/// Writes `data` to `fd`, which polled writable, without blocking: a socket
/// with `MSG_DONTWAIT`; a pipe, FIFO or terminal as it is when `data` fits
/// in one atomic pipe write (a writable pipe has room for it), else through
/// a non-blocking open file of its own (`/proc/self/fd`), leaving the
/// guest's flags alone.
pub(super) fn write_ready(fd: i32, data: &[u8]) -> i64 {
    // SAFETY: `data` holds data.len() bytes alive for the call.
    let r = unsafe { libc::send(fd, data.as_ptr().cast(), data.len(), libc::MSG_DONTWAIT) };
    if r >= 0 || Errno::last_host() != ENOTSOCK {
        return r as i64;
    }
    let plain = || {
        // SAFETY: `data` holds data.len() bytes alive for the call.
        unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) as i64 }
    };
    if data.len() <= libc::PIPE_BUF || file_type(fd) != Some(libc::S_IFIFO) {
        return plain();
    }
    let path = format!("/proc/self/fd/{fd}\0");
    // SAFETY: `path` is NUL-terminated and outlives the call.
    let own = unsafe {
        libc::open(
            path.as_ptr().cast(),
            libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if own < 0 {
        return plain();
    }
    // SAFETY: `data` holds data.len() bytes; `own` was opened here.
    let r = unsafe { libc::write(own, data.as_ptr().cast(), data.len()) as i64 };
    let e = std::io::Error::last_os_error();
    // SAFETY: `own` was opened here and nothing else holds it.
    unsafe { libc::close(own) };
    if r < 0 {
        // The write's errno, not the close's.
        // SAFETY: errno is the calling thread's.
        unsafe { *libc::__errno_location() = e.raw_os_error().unwrap_or(libc::EIO) };
    }
    r
}

/// Ends the blocking call of thread `t` for a signal (`Process::queue_signal`):
/// a call that moved bytes returns their count; else one that `restart`s
/// (`SA_RESTART` and no timeout, or an ignored signal) runs again from its
/// `ecall`, and any other returns `EINTR`.
pub(crate) fn interrupt_io(t: &mut Thread, restart: bool) {
    t.state = ThreadState::Runnable;
    let done = std::mem::take(&mut t.io_done);
    if done != 0 && done != CONNECTING {
        t.hart.x[10] = done;
    } else if restart && t.wait_deadline.is_none() {
        // A connect under way runs again too, and returns EALREADY (or
        // EISCONN), as on Linux.
        return;
    } else {
        t.hart.x[10] = (-EINTR) as u64;
    }
    t.wait_deadline = None;
    t.hart.pc += 4;
}

impl Process {
    /// Whether a thread other than the current one could run: one that is
    /// runnable, or waits for a time or for a descriptor.
    pub(crate) fn others_can_run(&self) -> bool {
        // Another process of the tree runs only while this one waits.
        self.tree_has_others()
            || self.threads.all.iter().enumerate().any(|(k, t)| {
                k != self.threads.current
                    && matches!(
                        t.state,
                        ThreadState::Runnable
                            | ThreadState::Sleep { .. }
                            | ThreadState::Io { .. }
                            | ThreadState::SigTimedWait {
                                deadline: Some(_),
                                ..
                            }
                            | ThreadState::Futex {
                                deadline: Some(_),
                                ..
                            }
                    )
            })
    }

    /// Decides how a call on `fd` that waits for `events` goes on (see the
    /// module's documentation). `Err(BLOCKED)`: the thread waits and the
    /// call will run again; `Err(EAGAIN)`: its timeout has passed.
    pub(super) fn io_gate(&mut self, fd: i32, events: i16, dontwait: bool) -> SysResult<Gate> {
        if dontwait {
            return Ok(Gate::NonBlocking);
        }
        if !self.others_can_run() {
            return Ok(Gate::Alone);
        }
        let never_blocks = matches!(
            file_type(fd),
            Some(libc::S_IFREG | libc::S_IFDIR | libc::S_IFBLK)
        );
        if never_blocks || nonblocking(fd) {
            return Ok(Gate::NonBlocking);
        }
        if ready(fd, events) {
            return Ok(Gate::Ready);
        }
        Err(self.io_wait(fd, events))
    }

    /// The current thread waits for `events` on `fd` and will run its call
    /// again: `BLOCKED`, or `EAGAIN` if the call's timeout has passed.
    pub(super) fn io_wait(&mut self, fd: i32, events: i16) -> Errno {
        let now = self.now_ns();
        let t = self.threads.current_mut();
        let deadline = t
            .wait_deadline
            .or_else(|| socket_timeout(fd, events).map(|ns| now.saturating_add(ns)));
        if deadline.is_some_and(|d| now >= d) {
            return EAGAIN;
        }
        t.wait_deadline = deadline;
        t.state = ThreadState::Io {
            fds: vec![(fd, events)],
            until: deadline,
            restart: true,
        };
        t.hart.pc -= 4;
        BLOCKED
    }

    /// A call on `fd` that waits for `events` and then completes at once
    /// (accept): `Ok` when it is to be made now, `Err(BLOCKED)` when the
    /// thread waits, `Err(EAGAIN)` past its timeout.
    pub(super) fn io_ready(&mut self, fd: i32, events: i16) -> SysResult<()> {
        let r = self.io_gate(fd, events, false);
        if r != Err(BLOCKED) {
            self.threads.current_mut().wait_deadline = None;
        }
        r.map(|_| ())
    }

    /// Undoes the wait the current call set up (the call fails after all).
    pub(super) fn cancel_wait(&mut self) {
        let t = self.threads.current_mut();
        t.state = ThreadState::Runnable;
        t.io_done = 0;
        t.wait_deadline = None;
        t.hart.pc += 4;
    }

    /// The current thread sleeps a short simulated interval and runs its
    /// call again (a wait on something no descriptor shows: a child).
    pub(super) fn retry_later(&mut self) -> Errno {
        let until = self.now_ns().saturating_add(RETRY_NS);
        let t = self.threads.current_mut();
        t.state = ThreadState::Io {
            fds: Vec::new(),
            until: Some(until),
            restart: true,
        };
        t.hart.pc -= 4;
        BLOCKED
    }

    /// Ends a blocking call: its result with the bytes moved before (a
    /// failure after some is their count), and no progress or deadline
    /// kept.
    fn io_end(&mut self, r: SysResult) -> SysResult {
        let t = self.threads.current_mut();
        let done = std::mem::take(&mut t.io_done);
        t.wait_deadline = None;
        match r {
            Ok(n) => Ok(n + done as i64),
            Err(_) if done > 0 => Ok(done as i64),
            Err(e) => Err(e),
        }
    }

    /// A call on `fd` that may wait for `events`: `call(skip, ready)` is
    /// the host's call on what is left after `skip` bytes, not blocking
    /// when `ready` (the descriptor polled ready while other threads could
    /// run). `all`: the bytes the call moves before it returns (a write,
    /// a send, a `MSG_WAITALL` receive), `None` for a call any amount ends.
    /// `dontwait`: the call itself does not block (`MSG_DONTWAIT`).
    pub(super) fn io_call(
        &mut self,
        fd: i32,
        events: i16,
        dontwait: bool,
        all: Option<usize>,
        call: impl FnOnce(usize, bool) -> SysResult,
    ) -> SysResult {
        let done = self.threads.current().io_done as usize;
        let gate = match self.io_gate(fd, events, dontwait) {
            Ok(g) => g,
            Err(BLOCKED) => return Err(BLOCKED),
            Err(e) => return self.io_end(Err(e)),
        };
        let r = call(done, gate == Gate::Ready);
        if gate == Gate::Ready {
            let more = match r {
                Ok(n) => n > 0 && all.is_some_and(|all| done + (n as usize) < all),
                Err(e) => e == EAGAIN,
            };
            if more {
                if let Ok(n) = r {
                    self.threads.current_mut().io_done += n as u64;
                }
                // Past its timeout, the call returns what it moved, or EAGAIN.
                return match self.io_wait(fd, events) {
                    BLOCKED => Err(BLOCKED),
                    e => self.io_end(Err(e)),
                };
            }
        }
        self.io_end(r)
    }

    /// After a system call or before a turn: the threads waiting for a
    /// descriptor that is now ready become runnable, their hart's clock no
    /// earlier than `now` (cycles), and run their call again.
    pub(crate) fn wake_ready_io(&mut self, now: Option<u64>) {
        self.poll_io_waiters(0, now);
    }

    /// Nothing else can run: blocks on the host until a waiter's descriptor
    /// is ready or a host signal arrives. `false` if no thread waits for a
    /// descriptor.
    pub(crate) fn wait_for_io(&mut self) -> bool {
        self.poll_io_waiters(-1, None)
    }

    /// Polls the descriptors of every thread in `ThreadState::Io` for up to
    /// `ms` and wakes the ready ones; `false` if there are none.
    pub(crate) fn poll_io_waiters(&mut self, ms: i32, now: Option<u64>) -> bool {
        let mut fds = Vec::new();
        let mut owners = Vec::new();
        for (i, t) in self.threads.all.iter().enumerate() {
            if let ThreadState::Io { fds: f, .. } = &t.state {
                for &(fd, events) in f {
                    fds.push(libc::pollfd {
                        fd,
                        events,
                        revents: 0,
                    });
                    owners.push(i);
                }
            }
        }
        if fds.is_empty() {
            return false;
        }
        // SAFETY: `fds` holds fds.len() struct pollfd alive for the call.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r <= 0 {
            return true;
        }
        for (p, &i) in fds.iter().zip(&owners) {
            if p.revents == 0 || !matches!(self.threads.all[i].state, ThreadState::Io { .. }) {
                continue;
            }
            let t = &mut self.threads.all[i];
            t.state = ThreadState::Runnable;
            if let Some(now) = now {
                let c = &mut self.threads.cpus[t.cpu].core;
                c.cycles = c.cycles.max(now);
            }
        }
        true
    }

    /// connect(2) on a blocking socket while other threads could run: the
    /// connection is started without blocking (the open file is made
    /// non-blocking for the call), then the thread waits until the socket
    /// is writable and returns its `SO_ERROR`. Its timeout (`SO_SNDTIMEO`)
    /// returns `EINPROGRESS`, as Linux's.
    pub(super) fn connect(&mut self, fd: i32, addr: &[u8]) -> SysResult {
        let plain = || {
            // SAFETY: `addr` holds addr.len() bytes of socket address alive for the call.
            host(
                unsafe { libc::connect(fd, addr.as_ptr().cast(), addr.len() as libc::socklen_t) }
                    as i64,
            )
        };
        let i = self.threads.current;
        if self.threads.all[i].io_done != CONNECTING {
            if !self.others_can_run() || nonblocking(fd) {
                return plain();
            }
            // SAFETY: F_GETFL takes no argument.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if fl < 0 {
                return plain();
            }
            // SAFETY: F_SETFL takes an integer.
            unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) };
            let r = plain();
            // SAFETY: F_SETFL takes an integer.
            unsafe { libc::fcntl(fd, libc::F_SETFL, fl) };
            match r {
                Err(e) if e == EINPROGRESS => {}
                // A local socket's listener with a full backlog: try again.
                Err(e) if e == EAGAIN => return Err(self.retry_later()),
                r => return r,
            }
            self.threads.all[i].io_done = CONNECTING;
        }
        if !ready(fd, libc::POLLOUT) {
            if self.others_can_run() {
                match self.io_wait(fd, libc::POLLOUT) {
                    BLOCKED => return Err(BLOCKED),
                    _ => {
                        let t = &mut self.threads.all[i];
                        t.io_done = 0;
                        t.wait_deadline = None;
                        return Err(EINPROGRESS);
                    }
                }
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: `p` is one struct pollfd alive for the call.
            unsafe { libc::poll(&mut p, 1, -1) };
        }
        let t = &mut self.threads.all[i];
        t.io_done = 0;
        t.wait_deadline = None;
        let mut err = 0i32;
        let mut len = 4 as libc::socklen_t;
        // SAFETY: `err` has room for the int SO_ERROR is.
        host(unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut err as *mut i32).cast(),
                &mut len,
            )
        } as i64)?;
        match Errno::from_raw(err) {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests;
