use super::*;
use crate::syscall::nr;
use crate::syscall::testing::*;

/// The pc of the calls made here: as if the `ecall` at 0x1000 ran
/// (`Process::syscall` moves it past the ecall first).
const AFTER_ECALL: u64 = 0x1004;

/// The bare process with a second, runnable thread on the second hart, so
/// a call that would block waits instead.
fn two_threads() -> Process {
    let mut p = process();
    p.threads.all[0].hart.pc = AFTER_ECALL;
    let hart = rvnvmm_hart::Hart::new(p.opts.hart.clone());
    p.threads.all.push(Thread::new(p.pid + 1, hart, 1));
    p
}

fn pipe(p: &mut Process, flags: i32) -> (i32, i32) {
    let at = scratch(p, 8);
    p.sys_pipe2(at, flags as u64).unwrap();
    let b = read(p, at, 8);
    (
        i32::from_le_bytes(b[..4].try_into().unwrap()),
        i32::from_le_bytes(b[4..].try_into().unwrap()),
    )
}

/// The thread ran its call again: back at the ecall and runnable.
fn rerun(p: &mut Process) {
    p.threads.all[0].state = ThreadState::Runnable;
    p.threads.all[0].hart.pc = AFTER_ECALL;
}

#[test]
fn a_read_on_an_empty_pipe_waits_and_the_write_wakes_it_at_its_time() {
    let mut p = two_threads();
    let (r, w) = pipe(&mut p, 0);
    let buf = scratch(&mut p, 64);
    assert_eq!(p.sys_read(r, buf, 64), Err(BLOCKED));
    assert_eq!(
        p.threads.all[0].state,
        ThreadState::Io {
            fds: vec![(r, libc::POLLIN)],
            until: None,
            restart: true,
        }
    );
    assert_eq!(
        p.threads.all[0].hart.pc,
        AFTER_ECALL - 4,
        "at the ecall again"
    );
    // Nothing made it ready yet.
    p.wake_ready_io(Some(5_000));
    assert!(matches!(p.threads.all[0].state, ThreadState::Io { .. }));
    // The other thread writes at cycle 7000.
    p.write_mem(buf, b"hello").unwrap();
    p.threads.current = 1;
    assert_eq!(p.sys_write(w, buf, 5), Ok(5));
    p.threads.current = 0;
    p.wake_ready_io(Some(7_000));
    assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
    assert_eq!(
        p.threads.cpus[0].core.cycles, 7_000,
        "woken at the write's time"
    );
    p.threads.all[0].hart.pc = AFTER_ECALL;
    assert_eq!(p.sys_read(r, buf + 8, 64), Ok(5));
    assert_eq!(read(&mut p, buf + 8, 5), b"hello");
    p.sys_close(r).unwrap();
    p.sys_close(w).unwrap();
}

#[test]
fn non_blocking_descriptors_and_a_lone_thread_never_wait() {
    let mut p = two_threads();
    let (r, w) = pipe(&mut p, libc::O_NONBLOCK);
    let buf = scratch(&mut p, 64);
    assert_eq!(p.sys_read(r, buf, 64), Err(EAGAIN));
    p.threads.all[1].state = ThreadState::Exited;
    assert_eq!(p.sys_read(r, buf, 64), Err(EAGAIN), "alone");
    assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
    // A regular file is always ready.
    p.threads.all[1].state = ThreadState::Runnable;
    let f = TempFile::new("blocking-file", b"data");
    let path = guest_str(&mut p, f.path());
    let fd = p.sys_openat(libc::AT_FDCWD as u64, path, 0, 0).unwrap() as i32;
    assert_eq!(p.sys_read(fd, buf, 64), Ok(4));
    for fd in [r, w, fd] {
        p.sys_close(fd).unwrap();
    }
}

#[test]
fn a_write_larger_than_the_pipe_waits_for_room_and_returns_every_byte() {
    let mut p = two_threads();
    let (r, w) = pipe(&mut p, 0);
    const LEN: u64 = 200_000;
    let buf = scratch(&mut p, LEN);
    assert_eq!(p.sys_write(w, buf, LEN), Err(BLOCKED));
    let done = p.threads.all[0].io_done;
    assert!(done > 0 && done < LEN, "{done}");
    let sink = scratch(&mut p, LEN);
    let mut drained = 0;
    loop {
        // The other thread drains the pipe; the writer goes on.
        p.threads.current = 1;
        while drained < p.threads.all[0].io_done {
            drained += p.sys_read(r, sink, LEN).unwrap() as u64;
        }
        p.threads.current = 0;
        p.wake_ready_io(Some(0));
        assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
        rerun(&mut p);
        match p.sys_write(w, buf, LEN) {
            Err(BLOCKED) => continue,
            r => {
                assert_eq!(r, Ok(LEN as i64), "every byte, once");
                break;
            }
        }
    }
    assert_eq!(p.threads.all[0].io_done, 0);
    p.threads.current = 1;
    while drained < LEN {
        drained += p.sys_read(r, sink, LEN).unwrap() as u64;
    }
    p.sys_close(r).unwrap();
    p.sys_close(w).unwrap();
}

#[test]
fn a_signal_ends_a_wait_as_linux_does() {
    let mut p = two_threads();
    let t = &mut p.threads.all[0];
    let wait = |t: &mut Thread, done: u64, deadline: Option<u64>| {
        t.state = ThreadState::Io {
            fds: vec![(0, libc::POLLIN)],
            until: deadline,
            restart: true,
        };
        t.io_done = done;
        t.wait_deadline = deadline;
        t.hart.pc = 0x1000;
    };
    // SA_RESTART, no timeout: the call runs again.
    wait(t, 0, None);
    interrupt_io(t, true);
    assert_eq!(
        (t.hart.pc, t.state.clone()),
        (0x1000, ThreadState::Runnable)
    );
    // A socket timeout, or no SA_RESTART: EINTR.
    for (restart, deadline) in [(true, Some(5)), (false, None)] {
        wait(t, 0, deadline);
        interrupt_io(t, restart);
        assert_eq!(t.hart.pc, 0x1004);
        assert_eq!(t.hart.x[10], (-EINTR) as u64);
        assert_eq!(t.wait_deadline, None);
    }
    // Bytes already written: their count.
    wait(t, 300, None);
    interrupt_io(t, false);
    assert_eq!((t.hart.pc, t.hart.x[10], t.io_done), (0x1004, 300, 0));
}

#[test]
fn a_socket_timeout_runs_in_simulated_time() {
    let mut p = two_threads();
    let sv = scratch(&mut p, 64);
    let a = [libc::AF_UNIX as u64, libc::SOCK_STREAM as u64, 0, sv, 0, 0];
    assert_eq!(p.net_syscall(nr::SOCKETPAIR, a), Some(0));
    let s = i32::from_le_bytes(read(&mut p, sv, 4).try_into().unwrap());
    // SO_RCVTIMEO of 20 ms (a whole number of the host's ticks: it keeps
    // the timeout in them).
    let tv = sv + 16;
    p.write_u64(tv, 0).unwrap();
    p.write_u64(tv + 8, 20_000).unwrap();
    let set = [s as u64, 1, libc::SO_RCVTIMEO as u64, tv, 16, 0];
    assert_eq!(p.net_syscall(nr::SETSOCKOPT, set), Some(0));
    let now = p.now_ns();
    let recv = [s as u64, sv + 32, 8, 0, 0, 0];
    assert_eq!(p.net_syscall(nr::RECVFROM, recv), None, "waits");
    let deadline = now + 20_000_000;
    assert_eq!(
        p.threads.all[0].state,
        ThreadState::Io {
            fds: vec![(s, libc::POLLIN)],
            until: Some(deadline),
            restart: true,
        }
    );
    // Before the deadline, the call waits again; at it, it times out.
    rerun(&mut p);
    assert_eq!(p.net_syscall(nr::RECVFROM, recv), None);
    assert_eq!(
        p.threads.all[0].wait_deadline,
        Some(deadline),
        "the same one"
    );
    p.threads.cpus[0].core.cycles = p.ns_to_cycles(deadline);
    rerun(&mut p);
    assert_eq!(p.net_syscall(nr::RECVFROM, recv), Some(-EAGAIN));
    assert_eq!(p.threads.all[0].wait_deadline, None);
}

#[test]
fn accept_waits_for_a_connection_and_connect_completes_on_loopback() {
    let mut p = two_threads();
    let call = |p: &mut Process, nr: u64, a: [u64; 6]| p.net_syscall(nr, a);
    let inet = libc::AF_INET as u64;
    let stream = libc::SOCK_STREAM as u64;
    let l = call(&mut p, nr::SOCKET, [inet, stream, 0, 0, 0, 0]).unwrap() as u64;
    // 127.0.0.1, port 0.
    let addr = scratch(&mut p, 64);
    let mut sin = [0u8; 16];
    sin[..2].copy_from_slice(&(libc::AF_INET as u16).to_le_bytes());
    sin[4..8].copy_from_slice(&[127, 0, 0, 1]);
    p.write_mem(addr, &sin).unwrap();
    assert_eq!(call(&mut p, nr::BIND, [l, addr, 16, 0, 0, 0]), Some(0));
    assert_eq!(call(&mut p, nr::LISTEN, [l, 4, 0, 0, 0, 0]), Some(0));
    let lenp = addr + 32;
    p.write_u32(lenp, 16).unwrap();
    assert_eq!(
        call(&mut p, nr::GETSOCKNAME, [l, addr, lenp, 0, 0, 0]),
        Some(0)
    );
    assert_eq!(call(&mut p, nr::ACCEPT, [l, 0, 0, 0, 0, 0]), None, "waits");
    rerun(&mut p);
    let c = call(&mut p, nr::SOCKET, [inet, stream, 0, 0, 0, 0]).unwrap() as u64;
    let mut r = call(&mut p, nr::CONNECT, [c, addr, 16, 0, 0, 0]);
    while r.is_none() {
        rerun(&mut p);
        r = call(&mut p, nr::CONNECT, [c, addr, 16, 0, 0, 0]);
    }
    assert_eq!(r, Some(0));
    assert_eq!(p.threads.all[0].io_done, 0);
    let fl = p.sys_fcntl(c as i32, libc::F_GETFL, 0).unwrap();
    assert_eq!(fl & libc::O_NONBLOCK as i64, 0, "the guest's flags kept");
    let s = call(&mut p, nr::ACCEPT, [l, 0, 0, 0, 0, 0]).unwrap();
    assert!(s >= 0, "{s}");
    for fd in [l as i32, c as i32, s as i32] {
        p.sys_close(fd).unwrap();
    }
}

#[test]
fn poll_waits_on_its_descriptors_and_a_handler_ends_it_with_eintr() {
    let mut p = two_threads();
    let (r, w) = pipe(&mut p, 0);
    let fds = scratch(&mut p, 64);
    p.write_mem(fds, &r.to_le_bytes()).unwrap();
    p.write_mem(fds + 4, &libc::POLLIN.to_le_bytes()).unwrap();
    // 5 ms.
    let ts = fds + 16;
    p.write_u64(ts, 0).unwrap();
    p.write_u64(ts + 8, 5_000_000).unwrap();
    let now = p.now_ns();
    assert_eq!(p.sys_ppoll([fds, 1, ts, 0, 0, 0]), None, "waits");
    assert_eq!(
        p.threads.all[0].state,
        ThreadState::Io {
            fds: vec![(r, libc::POLLIN)],
            until: Some(now + 5_000_000),
            restart: false,
        }
    );
    // A write of the other thread wakes it at its time.
    let buf = scratch(&mut p, 8);
    p.threads.current = 1;
    assert_eq!(p.sys_write(w, buf, 1), Ok(1));
    p.threads.current = 0;
    p.wake_ready_io(Some(9_000));
    assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
    assert_eq!(p.threads.cpus[0].core.cycles, 9_000);
    rerun(&mut p);
    assert_eq!(p.sys_ppoll([fds, 1, ts, 0, 0, 0]), Some(1));
    assert_eq!(p.threads.all[0].wait_deadline, None);
    // Drained again, a wait that a handler with SA_RESTART interrupts:
    // EINTR all the same, and no deadline left for the next call.
    p.sys_read(r, buf, 8).unwrap();
    assert_eq!(p.sys_ppoll([fds, 1, ts, 0, 0, 0]), None);
    p.signals.actions[crate::signal::consts::SIGUSR1 as usize] = crate::signal::SigAction {
        handler: 0x5000,
        flags: crate::signal::consts::SA_RESTART,
        mask: 0,
    };
    let info = crate::signal::SignalInfo::sent(crate::signal::consts::SIGUSR1, 0, 1);
    p.queue_signal(0, info);
    let t = &p.threads.all[0];
    assert_eq!((t.hart.pc, t.hart.x[10]), (AFTER_ECALL, (-EINTR) as u64));
    assert_eq!(t.wait_deadline, None);
    p.sys_close(r).unwrap();
    p.sys_close(w).unwrap();
}

#[test]
fn wait4_for_a_running_child_looks_again_later_while_others_run() {
    let mut p = two_threads();
    let mut child = std::process::Command::new("sleep")
        .arg("0.05")
        .spawn()
        .unwrap();
    let pid = child.id() as u64;
    let status = scratch(&mut p, 8);
    let now = p.now_ns();
    assert_eq!(p.sys_wait4([pid, status, 0, 0, 0, 0]), Err(BLOCKED));
    assert_eq!(
        p.threads.all[0].state,
        ThreadState::Io {
            fds: Vec::new(),
            until: Some(now + RETRY_NS),
            restart: true,
        }
    );
    let r = loop {
        std::thread::sleep(std::time::Duration::from_millis(10));
        rerun(&mut p);
        match p.sys_wait4([pid, status, 0, 0, 0, 0]) {
            Err(BLOCKED) => continue,
            r => break r,
        }
    };
    assert_eq!(r, Ok(pid as i64));
    assert_eq!(p.read_u32(status), Ok(0), "exited with status 0");
    // No child left to wait for: ECHILD at once.
    assert_eq!(p.sys_wait4([pid, status, 0, 0, 0, 0]), Err(ECHILD));
    // Reaped above already.
    assert!(child.wait().is_err());
}
