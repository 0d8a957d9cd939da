//! Sockets, epoll and eventfd: host descriptors, with the structures whose
//! layout differs between riscv64 and the host converted.

use crate::abi::{EpollEvent, Mmsghdr, Msghdr};
use crate::errno::*;
use crate::process::Process;
use crate::syscall::{host, nr};
use std::mem::{offset_of, size_of};

/// Largest socket address we copy (sockaddr_storage).
const SOCKADDR_MAX: usize = 128;

/// Whether `fd` is a stream socket (`MSG_WAITALL` waits for every byte
/// on one only).
fn is_stream(fd: i32) -> bool {
    let mut ty = 0i32;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: `ty` has room for the int SO_TYPE is.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut ty as *mut i32).cast(),
            &mut len,
        )
    };
    r == 0 && ty == libc::SOCK_STREAM
}

impl Process {
    /// Socket, epoll and eventfd system calls.
    /// `None` when the call blocked and will re-execute.
    pub(crate) fn net_syscall(&mut self, nr: u64, a: [u64; 6]) -> Option<i64> {
        let fd = a[0] as i32;
        let r = match nr {
            // SAFETY: eventfd takes integers only.
            nr::EVENTFD2 => host(unsafe { libc::eventfd(a[0] as u32, a[1] as i32) } as i64),
            // SAFETY: epoll_create1 takes an integer only.
            nr::EPOLL_CREATE1 => host(unsafe { libc::epoll_create1(a[0] as i32) } as i64),
            nr::EPOLL_CTL => self.epoll_ctl(fd, a[1] as i32, a[2] as i32, a[3]),
            nr::EPOLL_PWAIT => return self.epoll_pwait(fd, a[1], a[2] as i32, a[3] as i32),
            nr::SOCKET => {
                // SAFETY: socket takes integers only.
                host(unsafe { libc::socket(a[0] as i32, a[1] as i32, a[2] as i32) } as i64)
            }
            nr::SOCKETPAIR => self.socketpair(a),
            nr::BIND => self.read_sockaddr(a[1], a[2]).and_then(|addr| {
                let (h, _hold) = self.files.fs.host_sockaddr(&addr, true)?;
                let (p, len) = (h.as_ptr().cast(), h.len() as libc::socklen_t);
                // SAFETY: `p` points at `len` bytes of socket address alive for the call.
                host(unsafe { libc::bind(fd, p, len) } as i64)?;
                self.files.fs.note_socket_bound(&addr, &h);
                Ok(0)
            }),
            nr::CONNECT => self.read_sockaddr(a[1], a[2]).and_then(|addr| {
                let (h, _hold) = self.files.fs.host_sockaddr(&addr, false)?;
                self.connect(fd, &h)
            }),
            // SAFETY: listen takes integers only.
            nr::LISTEN => host(unsafe { libc::listen(fd, a[1] as i32) } as i64),
            nr::ACCEPT | nr::ACCEPT4 => {
                let flags = if nr == nr::ACCEPT4 { a[3] as i32 } else { 0 };
                self.io_ready(fd, libc::POLLIN).and_then(|()| {
                    // SAFETY: `p` and `l` are with_sockaddr_out's buffer and its length.
                    self.with_sockaddr_out(a[1], a[2], |p, l| unsafe {
                        libc::accept4(fd, p, l, flags)
                    } as i64)
                })
            }
            nr::GETSOCKNAME => self
                // SAFETY: `p` and `l` are with_sockaddr_out's buffer and its length.
                .with_sockaddr_out(a[1], a[2], |p, l| unsafe { libc::getsockname(fd, p, l) }
                    as i64),
            nr::GETPEERNAME => self
                // SAFETY: `p` and `l` are with_sockaddr_out's buffer and its length.
                .with_sockaddr_out(a[1], a[2], |p, l| unsafe { libc::getpeername(fd, p, l) }
                    as i64),
            nr::SENDTO => self.sendto(fd, a),
            nr::RECVFROM => self.recvfrom(fd, a),
            nr::SETSOCKOPT => {
                let n = (a[4] as usize).min(4096);
                let mut v = vec![0u8; n];
                self.read_mem(a[3], &mut v).and_then(|_| {
                    // SAFETY: `v` holds the `n` bytes of the option value.
                    host(unsafe {
                        libc::setsockopt(
                            fd,
                            a[1] as i32,
                            a[2] as i32,
                            v.as_ptr().cast(),
                            n as libc::socklen_t,
                        )
                    } as i64)
                })
            }
            nr::GETSOCKOPT => self.getsockopt(fd, a),
            // SAFETY: shutdown takes integers only.
            nr::SHUTDOWN => host(unsafe { libc::shutdown(fd, a[1] as i32) } as i64),
            nr::SENDMSG => self.msg(fd, a[1], a[2] as i32, true),
            nr::RECVMSG => self.msg(fd, a[1], a[2] as i32, false),
            nr::SENDMMSG => self.mmsg(fd, a[1], a[2] as u32, a[3] as i32, true),
            nr::RECVMMSG => self.mmsg(fd, a[1], a[2] as u32, a[3] as i32, false),
            _ => Err(ENOSYS),
        };
        match r {
            Ok(v) => Some(v),
            Err(BLOCKED) => None,
            Err(e) => Some(-e),
        }
    }

    fn socketpair(&mut self, a: [u64; 6]) -> SysResult {
        let mut sv = [0i32; 2];
        host(
            // SAFETY: `sv` has room for the two descriptors socketpair writes.
            unsafe { libc::socketpair(a[0] as i32, a[1] as i32, a[2] as i32, sv.as_mut_ptr()) }
                as i64,
        )?;
        if let Err(e) = self.write_obj(a[3], &sv) {
            // SAFETY: the descriptors were just created here and nothing else holds them.
            unsafe {
                libc::close(sv[0]);
                libc::close(sv[1]);
            }
            return Err(e);
        }
        Ok(0)
    }

    fn read_sockaddr(&mut self, addr: u64, len: u64) -> Result<Vec<u8>, Errno> {
        if len as usize > SOCKADDR_MAX {
            return Err(EINVAL);
        }
        let mut v = vec![0u8; len as usize];
        self.read_mem(addr, &mut v)?;
        Ok(v)
    }

    /// Calls `f` with a host sockaddr buffer and length, then copies the
    /// address back to the guest's (addr, *len) if it gave one.
    fn with_sockaddr_out(
        &mut self,
        addr: u64,
        lenp: u64,
        f: impl FnOnce(*mut libc::sockaddr, *mut libc::socklen_t) -> i64,
    ) -> SysResult {
        let mut buf = [0u8; SOCKADDR_MAX];
        let mut len: libc::socklen_t = SOCKADDR_MAX as libc::socklen_t;
        let want = addr != 0 && lenp != 0;
        let guest_len = if want { self.read_u32(lenp)? } else { 0 };
        let r = if want {
            host(f(buf.as_mut_ptr().cast(), &mut len))?
        } else {
            host(f(std::ptr::null_mut(), std::ptr::null_mut()))?
        };
        if want {
            let g = self
                .files
                .fs
                .guest_sockaddr(&buf[..(len as usize).min(SOCKADDR_MAX)]);
            let n = g.len().min(guest_len as usize);
            self.write_mem(addr, &g[..n])?;
            self.write_u32(lenp, g.len() as u32)?;
        }
        Ok(r)
    }

    /// sendto(2): a blocking stream socket sends every byte before it
    /// returns, waiting for room while other threads run.
    fn sendto(&mut self, fd: i32, a: [u64; 6]) -> SysResult {
        let n = (a[2] as usize).min(64 << 20);
        let mut data = vec![0u8; n];
        self.read_mem(a[1], &mut data)?;
        let (addr, _hold) = match a[4] {
            0 => (None, None),
            at => {
                let guest = self.read_sockaddr(at, a[5])?;
                let (h, hold) = self.files.fs.host_sockaddr(&guest, false)?;
                (Some(h), hold)
            }
        };
        let (p, l) = match &addr {
            Some(v) => (v.as_ptr().cast(), v.len() as libc::socklen_t),
            None => (std::ptr::null(), 0),
        };
        let flags = a[3] as i32;
        let dontwait = flags & libc::MSG_DONTWAIT != 0;
        self.io_call(fd, libc::POLLOUT, dontwait, Some(n), |skip, ready| {
            let fl = if ready {
                flags | libc::MSG_DONTWAIT
            } else {
                flags
            };
            let d = &data[skip.min(n)..];
            // SAFETY: `d` holds d.len() bytes; `p` is null or `l` bytes of address.
            host(unsafe { libc::sendto(fd, d.as_ptr().cast(), d.len(), fl, p, l) } as i64)
        })
    }

    /// recvfrom(2): waits for data while other threads run; with
    /// `MSG_WAITALL` on a stream socket, for all `len` bytes.
    fn recvfrom(&mut self, fd: i32, a: [u64; 6]) -> SysResult {
        let n = (a[2] as usize).min(64 << 20);
        let mut data = vec![0u8; n];
        let flags = a[3] as i32;
        let want = a[4] != 0 && a[5] != 0;
        let guest_len = if want { self.read_u32(a[5])? } else { 0 };
        let mut addr = [0u8; SOCKADDR_MAX];
        let mut alen = SOCKADDR_MAX as libc::socklen_t;
        let (ap, lp): (*mut libc::sockaddr, *mut libc::socklen_t) = if want {
            (addr.as_mut_ptr().cast(), &mut alen)
        } else {
            (std::ptr::null_mut(), std::ptr::null_mut())
        };
        let dp = data.as_mut_ptr();
        let all = (flags & libc::MSG_WAITALL != 0 && is_stream(fd)).then_some(n);
        let before = self.threads.current().io_done as usize;
        let dontwait = flags & libc::MSG_DONTWAIT != 0;
        let r = self.io_call(fd, libc::POLLIN, dontwait, all, |skip, ready| {
            let fl = if ready {
                flags | libc::MSG_DONTWAIT
            } else {
                flags
            };
            let skip = skip.min(n);
            // SAFETY: `dp` is `data`'s buffer of `n` bytes, from `skip` on;
            // `ap` and `lp` are null or `addr` and its length.
            host(unsafe { libc::recvfrom(fd, dp.add(skip).cast(), n - skip, fl, ap, lp) } as i64)
        });
        self.received(a[1], &data, before, r)?;
        let r = r?;
        if want {
            let g = self
                .files
                .fs
                .guest_sockaddr(&addr[..(alen as usize).min(SOCKADDR_MAX)]);
            let k = g.len().min(guest_len as usize);
            self.write_mem(a[4], &g[..k])?;
            self.write_u32(a[5], g.len() as u32)?;
        }
        Ok(r)
    }

    /// Copies to the guest's `buf` what a receive put in `data` from
    /// `before` on (the bytes of its earlier parts are there already): up
    /// to its result, or what it kept in `io_done` to wait for the rest. A
    /// copy that faults ends the wait with `EFAULT`.
    fn received(&mut self, buf: u64, data: &[u8], before: usize, r: SysResult) -> SysResult<()> {
        let upto = match r {
            Ok(r) => r as usize,
            Err(BLOCKED) => self.threads.current().io_done as usize,
            Err(_) => return Ok(()),
        };
        let upto = upto.min(data.len());
        if upto <= before {
            return Ok(());
        }
        let copied = self.write_mem(buf + before as u64, &data[before..upto]);
        if copied.is_err() && r == Err(BLOCKED) {
            self.cancel_wait();
        }
        copied
    }

    fn getsockopt(&mut self, fd: i32, a: [u64; 6]) -> SysResult {
        let guest_len = self.read_u32(a[4])?;
        let mut v = vec![0u8; (guest_len as usize).min(4096)];
        let mut len = v.len() as libc::socklen_t;
        // SAFETY: `v` has room for `len` bytes, which the call may lower.
        host(unsafe {
            libc::getsockopt(
                fd,
                a[1] as i32,
                a[2] as i32,
                v.as_mut_ptr().cast(),
                &mut len,
            )
        } as i64)?;
        self.write_mem(a[3], &v[..(len as usize).min(v.len())])?;
        self.write_u32(a[4], len)?;
        Ok(0)
    }

    /// sendmsg / recvmsg. The msghdr and iovec layouts are the same on
    /// riscv64 and x86-64; their pointers are guest addresses, so the data
    /// (gathered into one buffer), name and control buffers are staged on
    /// the host. A blocking stream socket sends every byte (and with
    /// `MSG_WAITALL` receives all of them) before it returns, waiting while
    /// other threads run; the name and control data are those of the last
    /// part.
    fn msg(&mut self, fd: i32, mh: u64, flags: i32, send: bool) -> SysResult {
        let Msghdr {
            msg_name: name,
            msg_namelen: namelen,
            msg_iov: iov,
            msg_iovlen: iovlen,
            msg_control: control,
            msg_controllen: controllen,
            ..
        } = self.read_obj(mh)?;
        if iovlen > 1024 || namelen as usize > SOCKADDR_MAX || controllen > 65536 {
            return Err(EINVAL);
        }
        let mut parts: Vec<(u64, usize)> = Vec::new();
        let mut total = 0usize;
        for (base, len) in self.read_iovecs(iov, iovlen)? {
            let len = (len as usize).min((64 << 20) - total);
            parts.push((base, len));
            total += len;
        }
        let mut data = vec![0u8; total];
        if send {
            let mut at = 0;
            for &(base, len) in &parts {
                self.read_mem(base, &mut data[at..at + len])?;
                at += len;
            }
        }
        let mut namebuf = vec![0u8; if name != 0 { SOCKADDR_MAX } else { 0 }];
        let mut namelen = namelen;
        let mut _hold = None;
        if send && name != 0 {
            let mut guest = vec![0u8; namelen as usize];
            self.read_mem(name, &mut guest)?;
            let (h, hold) = self.files.fs.host_sockaddr(&guest, false)?;
            namebuf[..h.len()].copy_from_slice(&h);
            namelen = h.len() as u32;
            _hold = hold;
        }
        let mut ctl = vec![0u8; controllen as usize];
        if send && controllen > 0 {
            self.read_mem(control, &mut ctl)?;
        }
        let dp = data.as_mut_ptr();
        let (np, cp) = (namebuf.as_mut_ptr(), ctl.as_mut_ptr());
        let namebuf_len = namebuf.len() as u32;
        // What recvmsg gives back: the name's and control data's lengths
        // and the message flags.
        let mut out = (0u32, 0usize, 0i32);
        let events = if send { libc::POLLOUT } else { libc::POLLIN };
        let all = if send {
            Some(total)
        } else {
            (flags & libc::MSG_WAITALL != 0 && is_stream(fd)).then_some(total)
        };
        let before = self.threads.current().io_done as usize;
        let dontwait = flags & libc::MSG_DONTWAIT != 0;
        let r = self.io_call(fd, events, dontwait, all, |skip, ready| {
            let skip = skip.min(total);
            let mut v = libc::iovec {
                // SAFETY: `skip` is within `data`'s buffer of `total` bytes.
                iov_base: unsafe { dp.add(skip) }.cast(),
                iov_len: total - skip,
            };
            // SAFETY: struct msghdr is plain data: all zeroes (null pointers, zero
            // lengths) is a valid value.
            let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
            if name != 0 {
                m.msg_name = np.cast();
                m.msg_namelen = if send { namelen } else { namebuf_len };
            }
            m.msg_iov = &mut v;
            m.msg_iovlen = 1;
            // Control data (descriptors passed, ...) goes with the first part
            // of a send only.
            if controllen > 0 && !(send && skip > 0) {
                m.msg_control = cp.cast();
                m.msg_controllen = controllen as usize;
            }
            let fl = if ready {
                flags | libc::MSG_DONTWAIT
            } else {
                flags
            };
            let r = host(if send {
                // SAFETY: `m` points only at the data, name and control
                // buffers, alive until the call returns, with their lengths.
                unsafe { libc::sendmsg(fd, &m, fl) }
            } else {
                // SAFETY: as for sendmsg.
                unsafe { libc::recvmsg(fd, &mut m, fl) }
            } as i64);
            out = (m.msg_namelen, m.msg_controllen, m.msg_flags);
            r
        });
        if send {
            return r;
        }
        // Scatter what this part received over the guest's buffers.
        let upto = match r {
            Ok(r) => r as usize,
            Err(BLOCKED) => self.threads.current().io_done as usize,
            Err(_) => before,
        }
        .min(total);
        let mut at = 0;
        for &(base, len) in &parts {
            let (lo, hi) = (at.max(before), (at + len).min(upto));
            if lo < hi {
                if let Err(e) = self.write_mem(base + (lo - at) as u64, &data[lo..hi]) {
                    if r == Err(BLOCKED) {
                        self.cancel_wait();
                    }
                    return Err(e);
                }
            }
            at += len;
        }
        let r = r?;
        let (got_namelen, got_controllen, got_flags) = out;
        if name != 0 {
            let g = self
                .files
                .fs
                .guest_sockaddr(&namebuf[..(got_namelen as usize).min(SOCKADDR_MAX)]);
            self.write_mem(name, &g[..g.len().min(namelen as usize)])?;
            self.write_obj(
                mh + offset_of!(Msghdr, msg_namelen) as u64,
                &(g.len() as u32),
            )?;
        }
        if controllen > 0 {
            self.write_mem(control, &ctl[..got_controllen.min(ctl.len())])?;
        }
        let controllen_at = mh + offset_of!(Msghdr, msg_controllen) as u64;
        self.write_obj(controllen_at, &(got_controllen as u64))?;
        self.write_obj(
            mh + offset_of!(Msghdr, msg_flags) as u64,
            &(got_flags as u32),
        )?;
        Ok(r)
    }

    /// sendmmsg / recvmmsg: one sendmsg or recvmsg per `struct mmsghdr`
    /// (a msghdr, then the u32 `msg_len` the call fills, 64 bytes on
    /// riscv64), at most `UIO_MAXIOV`. The first may wait as sendmsg and
    /// recvmsg do; the rest do not (`MSG_DONTWAIT`, as Linux's
    /// `MSG_WAITFORONE`), and the call returns how many went through once
    /// one would wait or fails. recvmmsg's timeout is not looked at (Linux
    /// looks at it only between messages).
    fn mmsg(&mut self, fd: i32, vec: u64, vlen: u32, flags: i32, send: bool) -> SysResult {
        const UIO_MAXIOV: u32 = 1024;
        const MMSGHDR: u64 = size_of::<Mmsghdr>() as u64;
        let mut done = 0;
        for k in 0..vlen.min(UIO_MAXIOV) {
            let mh = vec + MMSGHDR * k as u64;
            let flags = flags & !libc::MSG_WAITFORONE;
            let fl = if k == 0 {
                flags
            } else {
                flags | libc::MSG_DONTWAIT
            };
            match self.msg(fd, mh, fl, send) {
                Ok(n) => {
                    self.write_obj(mh + offset_of!(Mmsghdr, msg_len) as u64, &(n as u32))?;
                    done += 1;
                }
                Err(e) if e == BLOCKED || done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(done)
    }

    /// epoll_ctl: riscv64's `struct epoll_event` is 16 bytes (u32 events,
    /// padding, u64 data); x86-64's is packed into 12.
    fn epoll_ctl(&mut self, epfd: i32, op: i32, fd: i32, ev: u64) -> SysResult {
        let mut e = libc::epoll_event { events: 0, u64: 0 };
        if ev != 0 {
            let g: EpollEvent = self.read_obj(ev)?;
            (e.events, e.u64) = (g.events, g.data);
        }
        // SAFETY: the event pointer is null or `e`, alive for the call.
        host(unsafe {
            libc::epoll_ctl(
                epfd,
                op,
                fd,
                if ev != 0 {
                    &mut e
                } else {
                    std::ptr::null_mut()
                },
            )
        } as i64)
    }

    fn epoll_pwait(&mut self, epfd: i32, out: u64, max: i32, timeout_ms: i32) -> Option<i64> {
        if !(1..=65536).contains(&max) {
            return Some(-EINVAL);
        }
        self.sync_timerfds();
        let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; max as usize];
        let wait = |evs: &mut Vec<libc::epoll_event>, ms: i32| {
            // SAFETY: `evs` has room for `max` events.
            host(unsafe { libc::epoll_wait(epfd, evs.as_mut_ptr(), max, ms) } as i64)
        };
        let mut r = match wait(&mut evs, 0) {
            Ok(r) => r,
            Err(e) => return Some(-e),
        };
        if r == 0 && timeout_ms != 0 {
            let timeout = (timeout_ms > 0).then(|| timeout_ms as u64 * 1_000_000);
            match self.wait_or_restart(timeout, vec![(epfd, libc::POLLIN)]) {
                crate::syscall::Wait::Restarted => return None,
                crate::syscall::Wait::TimedOut => {}
                crate::syscall::Wait::Host(ms) => match wait(&mut evs, ms) {
                    Ok(v) => r = v,
                    Err(e) => return Some(-e),
                },
            }
        }
        self.threads.current_mut().wait_deadline = None;
        let ready: Vec<EpollEvent> = evs
            .iter()
            .take(r as usize)
            .map(|e| EpollEvent {
                events: e.events,
                data: e.u64,
                ..EpollEvent::default()
            })
            .collect();
        if let Err(err) = self.write_obj(out, ready.as_slice()) {
            return Some(-err);
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    const UNIX: u64 = libc::AF_UNIX as u64;
    const STREAM: u64 = libc::SOCK_STREAM as u64;

    fn call(p: &mut Process, nr: u64, a: [u64; 6]) -> i64 {
        p.net_syscall(nr, a).expect("a call that does not block")
    }

    #[test]
    fn socket_errors() {
        let mut p = process();
        assert_eq!(
            call(&mut p, nr::SOCKET, [12345, STREAM, 0, 0, 0, 0]),
            -EAFNOSUPPORT
        );
        assert_eq!(call(&mut p, nr::LISTEN, [u64::MAX, 1, 0, 0, 0, 0]), -EBADF);
        let fd = call(&mut p, nr::SOCKET, [UNIX, STREAM, 0, 0, 0, 0]);
        assert!(fd >= 0, "{fd}");
        let fd = fd as u64;
        assert_eq!(call(&mut p, nr::BIND, [fd, WILD, 16, 0, 0, 0]), -EFAULT);
        assert_eq!(call(&mut p, nr::BIND, [fd, WILD, 4096, 0, 0, 0]), -EINVAL);
        // sockaddr_un of a path that does not exist.
        let addr = scratch(&mut p, 110);
        p.write_mem(addr, &(libc::AF_UNIX as u16).to_le_bytes())
            .unwrap();
        p.write_mem(addr + 2, b"/nonexistent/rvnvmm.sock\0")
            .unwrap();
        assert_eq!(call(&mut p, nr::CONNECT, [fd, addr, 110, 0, 0, 0]), -ENOENT);
        assert_eq!(
            call(&mut p, nr::EPOLL_PWAIT, [fd, addr, 0, 0, 0, 0]),
            -EINVAL
        );
        assert_eq!(p.sys_close(fd as i32), Ok(0));
    }

    #[test]
    fn sendmmsg_and_recvmmsg_move_one_datagram_per_header() {
        let mut p = process();
        let buf = scratch(&mut p, 4096);
        let dgram = libc::SOCK_DGRAM as u64;
        assert_eq!(call(&mut p, nr::SOCKETPAIR, [UNIX, dgram, 0, buf, 0, 0]), 0);
        let sv = read(&mut p, buf, 8);
        let a = i32::from_le_bytes(sv[..4].try_into().unwrap()) as u64;
        let b = i32::from_le_bytes(sv[4..].try_into().unwrap()) as u64;
        // Three struct mmsghdr (64 bytes each) of one iovec each.
        let (vec, iovs, data) = (buf + 64, buf + 512, buf + 1024);
        let headers = |p: &mut Process, lens: [u64; 3]| {
            for k in 0..3u64 {
                let mh = vec + 64 * k;
                p.write_mem(mh, &[0u8; 64]).unwrap();
                p.write_u64(iovs + 16 * k, data + 64 * k).unwrap();
                p.write_u64(iovs + 16 * k + 8, lens[k as usize]).unwrap();
                p.write_u64(mh + 16, iovs + 16 * k).unwrap();
                p.write_u64(mh + 24, 1).unwrap();
            }
        };
        headers(&mut p, [1, 2, 3]);
        p.write_mem(data, b"a").unwrap();
        p.write_mem(data + 64, b"bb").unwrap();
        p.write_mem(data + 128, b"ccc").unwrap();
        assert_eq!(call(&mut p, nr::SENDMMSG, [a, vec, 3, 0, 0, 0]), 3);
        assert_eq!(p.read_u32(vec + 64 + 56), Ok(2), "msg_len");
        headers(&mut p, [16, 16, 16]);
        // MSG_WAITFORONE: the first may wait, the others do not.
        let r = call(&mut p, nr::RECVMMSG, [b, vec, 3, 0x10000, 0, 0]);
        assert_eq!(r, 3);
        let lens: Vec<u32> = (0..3)
            .map(|k| p.read_u32(vec + 64 * k + 56).unwrap())
            .collect();
        assert_eq!(lens, [1, 2, 3]);
        assert_eq!(read(&mut p, data + 128, 3), b"ccc");
        // Nothing left and a non-blocking first receive: EAGAIN.
        let dontwait = libc::MSG_DONTWAIT as u64;
        assert_eq!(
            call(&mut p, nr::RECVMMSG, [b, vec, 3, dontwait, 0, 0]),
            -EAGAIN
        );
        p.sys_close(a as i32).unwrap();
        p.sys_close(b as i32).unwrap();
    }

    #[test]
    fn a_socket_pair_carries_bytes() {
        let mut p = process();
        let buf = scratch(&mut p, 64);
        assert_eq!(
            call(&mut p, nr::SOCKETPAIR, [UNIX, STREAM, 0, buf, 0, 0]),
            0
        );
        let sv = read(&mut p, buf, 8);
        let a = i32::from_le_bytes(sv[..4].try_into().unwrap()) as u64;
        let b = i32::from_le_bytes(sv[4..].try_into().unwrap()) as u64;
        p.write_mem(buf + 16, b"ping").unwrap();
        assert_eq!(call(&mut p, nr::SENDTO, [a, buf + 16, 4, 0, 0, 0]), 4);
        assert_eq!(call(&mut p, nr::RECVFROM, [b, buf + 32, 16, 0, 0, 0]), 4);
        assert_eq!(read(&mut p, buf + 32, 4), b"ping");
        assert_eq!(call(&mut p, nr::SENDTO, [a, WILD, 4, 0, 0, 0]), -EFAULT);
        assert_eq!(
            call(&mut p, nr::SOCKETPAIR, [UNIX, STREAM, 0, WILD, 0, 0]),
            -EFAULT
        );
        p.sys_close(a as i32).unwrap();
        p.sys_close(b as i32).unwrap();
    }
}
