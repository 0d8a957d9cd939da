//! One gdb connection: stop replies, the commands of a stopped machine,
//! resuming it.

use crate::command::{self, hex, Action, Command, Point, ThreadRef};
use crate::packet::{frame, Decoder, Incoming};
use crate::{regs, GdbError, Target};
use rvnvmm_hart::debug::{Debug, DebugStop, WatchKind, Watchpoint};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The largest packet gdb may send (`qSupported`'s `PacketSize`).
const PACKET_SIZE: usize = 0x4000;

/// How many polls between two looks at the socket for Ctrl-C while the
/// machine runs.
const INTERRUPT_POLL_PERIOD: u32 = 64;

/// What the machine does after [`GdbStub::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run on.
    Run,
    /// gdb killed the program: end the run.
    Kill,
    /// gdb detached or went away: run on without the stub.
    Detach,
}

/// A gdb connection.
pub struct GdbStub {
    stream: TcpStream,
    decoder: Decoder,
    ack: bool,
    breakpoints: Vec<u64>,
    watchpoints: Vec<Watchpoint>,
    /// The thread `g`, `p`, `m` and friends act on.
    selected: Option<u64>,
    /// The stop reply of the last stop (for `?`).
    last_stop: String,
    /// The thread that stopped last.
    stop_thread: u64,
    /// Whether a thread is being stepped.
    stepping: bool,
    /// The machine has not stopped yet for gdb's first look.
    first_stop: bool,
    polls: u32,
    /// Threads not yet listed by `qsThreadInfo`.
    listing: Vec<u64>,
}

impl GdbStub {
    /// Listens on 127.0.0.1:`port` and waits for gdb to connect; calls
    /// `listening` with the address once it listens (port 0: any free port).
    pub fn accept(port: u16, listening: impl FnOnce(u16)) -> Result<GdbStub, GdbError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .map_err(|source| GdbError::Listen { port, source })?;
        listening(listener.local_addr()?.port());
        let (stream, _) = listener.accept()?;
        stream.set_nodelay(true)?;
        let stream = move_out_of_the_way(stream)?;
        Ok(GdbStub {
            stream,
            decoder: Decoder::default(),
            ack: true,
            breakpoints: Vec::new(),
            watchpoints: Vec::new(),
            selected: None,
            last_stop: "S05".into(),
            stop_thread: 1,
            stepping: false,
            first_stop: true,
            polls: 0,
            listing: Vec::new(),
        })
    }

    /// The connection's host descriptor (a user-mode guest must not reach it).
    pub fn fd(&self) -> i32 {
        self.stream.as_raw_fd()
    }

    /// Called by the machine between turns (`last`: the thread that ran
    /// last): if a hart stopped for the debugger, or gdb asked for a stop,
    /// serves gdb until it resumes the machine.
    pub fn poll(&mut self, target: &mut dyn Target, last: u64) -> Verdict {
        if std::mem::take(&mut self.first_stop) {
            // gdb asks with `?` why the machine is stopped once it has
            // connected: no stop reply goes out unasked.
            return self.stopped(target, last, format!("T05thread:{last:x};"), false);
        }
        let stop = { self.hart_stop(target) };
        let stop = match stop {
            Some(s) => Some(s),
            None => {
                self.polls = self.polls.wrapping_add(1);
                if !self.polls.is_multiple_of(INTERRUPT_POLL_PERIOD) {
                    return Verdict::Run;
                }
                match self.interrupted() {
                    Ok(true) => Some((last, format!("T02thread:{last:x};"))),
                    Ok(false) => None,
                    Err(_) => return self.detach(target),
                }
            }
        };
        match stop {
            Some((thread, reply)) => self.stopped(target, thread, reply, true),
            None => Verdict::Run,
        }
    }

    /// Tells gdb the program exited with `code`.
    pub fn exited(&mut self, code: i32) {
        // gdb may be gone already; nothing is left to tell it then.
        let _ = self.send(format!("W{:02x}", code & 0xff).as_bytes());
    }

    /// Tells gdb the program was killed by signal `signal`.
    pub fn killed(&mut self, signal: i32) {
        let _ = self.send(format!("X{:02x}", signal & 0xff).as_bytes());
    }

    /// The first hart with a debugger stop, as a stop reply; installs the
    /// points on harts that have none yet (threads created since).
    fn hart_stop(&mut self, target: &mut dyn Target) -> Option<(u64, String)> {
        if !self.stepping && self.breakpoints.is_empty() && self.watchpoints.is_empty() {
            return None;
        }
        let mut found = None;
        for t in target.threads() {
            let Some(hart) = target.hart_mut(t) else {
                continue;
            };
            let Some(debug) = hart.debug.as_mut() else {
                hart.debug = Some(self.points(None, hart.instret, hart.pc));
                continue;
            };
            if found.is_none() {
                if let Some(stop) = debug.stop {
                    found = Some((t, stop_reply(t, stop)));
                }
            }
        }
        found
    }

    /// The debugger state of a hart that resumes at `pc` after `instret`
    /// instructions, stepping if `step_from` is set.
    fn points(&self, step_from: Option<u64>, instret: u64, pc: u64) -> Box<Debug> {
        Box::new(Debug {
            breakpoints: self.breakpoints.clone(),
            watchpoints: self.watchpoints.clone(),
            step_from,
            resumed_at: Some((instret, pc)),
            stop: None,
        })
    }

    /// Whether gdb sent Ctrl-C.
    fn interrupted(&mut self) -> Result<bool, GdbError> {
        self.stream.set_nonblocking(true)?;
        let mut buf = [0u8; 256];
        let read = self.stream.read(&mut buf);
        self.stream.set_nonblocking(false)?;
        match read {
            Ok(0) => Err(GdbError::Io(ErrorKind::UnexpectedEof.into())),
            Ok(n) => {
                self.decoder.push(&buf[..n]);
                Ok(self.decoder.take_interrupt())
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The machine stopped: reports it (if `announce`: gdb waits for the
    /// reply of a resume) and serves gdb until it resumes.
    fn stopped(
        &mut self,
        target: &mut dyn Target,
        thread: u64,
        reply: String,
        announce: bool,
    ) -> Verdict {
        for t in target.threads() {
            if let Some(d) = target.hart_mut(t).and_then(|h| h.debug.as_mut()) {
                d.stop = None;
                d.step_from = None;
            }
        }
        self.stepping = false;
        self.stop_thread = thread;
        self.selected = Some(thread);
        self.last_stop = reply.clone();
        if announce && self.send(reply.as_bytes()).is_err() {
            return self.detach(target);
        }
        loop {
            let packet = match self.receive() {
                Ok(p) => p,
                Err(_) => return self.detach(target),
            };
            let Some(packet) = packet else {
                // Ctrl-C while already stopped.
                continue;
            };
            let command = command::parse(&packet);
            let answer = match command {
                Some(Command::Resume(actions)) => {
                    self.resume(target, &actions);
                    return Verdict::Run;
                }
                Some(Command::Kill) => {
                    // `vKill` wants an answer; `k` none, but gdb reads one.
                    let _ = self.send(b"OK");
                    return Verdict::Kill;
                }
                Some(Command::Detach) => {
                    let _ = self.send(b"OK");
                    return self.detach(target);
                }
                Some(c) => self.answer(target, c),
                None => "E01".to_string(),
            };
            if self.send(answer.as_bytes()).is_err() {
                return self.detach(target);
            }
        }
    }

    /// The answer to a command that leaves the machine stopped.
    fn answer(&mut self, target: &mut dyn Target, command: Command) -> String {
        let full = target.full_system();
        let thread = self
            .selected
            .filter(|t| target.hart(*t).is_some())
            .unwrap_or(self.stop_thread);
        match command {
            Command::Supported => format!(
                "PacketSize={PACKET_SIZE:x};qXfer:features:read+;vContSupported+;QStartNoAckMode+"
            ),
            Command::NoAck => {
                self.ack = false;
                "OK".into()
            }
            Command::StopReason => self.last_stop.clone(),
            Command::ReadRegisters => match target.hart(thread) {
                Some(h) => (0..regs::G_PACKET)
                    .filter_map(|n| regs::read(h, n, full))
                    .map(|b| hex(&b))
                    .collect(),
                None => "E01".into(),
            },
            Command::WriteRegisters(bytes) => match target.hart_mut(thread) {
                Some(h) => {
                    for (n, value) in bytes
                        .chunks_exact(8)
                        .take(regs::G_PACKET as usize)
                        .enumerate()
                    {
                        regs::write(h, n as u32, value, full);
                    }
                    "OK".into()
                }
                None => "E01".into(),
            },
            Command::ReadRegister(n) => {
                match target.hart(thread).and_then(|h| regs::read(h, n, full)) {
                    Some(b) => hex(&b),
                    None => "E01".into(),
                }
            }
            Command::WriteRegister(n, bytes) => {
                match target
                    .hart_mut(thread)
                    .map(|h| regs::write(h, n, &bytes, full))
                {
                    Some(true) => "OK".into(),
                    _ => "E01".into(),
                }
            }
            Command::ReadMemory(addr, len) => {
                let mut buf = vec![0u8; (len as usize).min(PACKET_SIZE / 2)];
                if target.read_memory(thread, addr, &mut buf) {
                    hex(&buf)
                } else {
                    "E14".into()
                }
            }
            Command::WriteMemory(addr, data) => {
                if target.write_memory(thread, addr, &data) {
                    "OK".into()
                } else {
                    "E14".into()
                }
            }
            Command::ResumeActions => "vCont;c;C;s;S;t".into(),
            Command::Insert(point, addr, len) => {
                match point {
                    Point::Break if !self.breakpoints.contains(&addr) => {
                        self.breakpoints.push(addr)
                    }
                    Point::Break => {}
                    Point::Watch(kind) => self.watchpoints.push(Watchpoint {
                        addr,
                        len: len.max(1),
                        kind,
                    }),
                }
                "OK".into()
            }
            Command::Remove(point, addr, len) => {
                match point {
                    Point::Break => self.breakpoints.retain(|&b| b != addr),
                    Point::Watch(kind) => {
                        let w = Watchpoint {
                            addr,
                            len: len.max(1),
                            kind,
                        };
                        if let Some(i) = self.watchpoints.iter().position(|&x| x == w) {
                            self.watchpoints.remove(i);
                        }
                    }
                }
                "OK".into()
            }
            Command::FirstThreads => {
                self.listing = target.threads();
                self.listing.reverse();
                self.more_threads()
            }
            Command::MoreThreads => self.more_threads(),
            Command::SetThread(op, t) => match t {
                ThreadRef::Id(id) if target.hart(id).is_none() => "E01".into(),
                ThreadRef::Id(id) => {
                    if op == b'g' {
                        self.selected = Some(id);
                    }
                    "OK".into()
                }
                _ => "OK".into(),
            },
            Command::ThreadAlive(t) => {
                if target.hart(t).is_some() {
                    "OK".into()
                } else {
                    "E01".into()
                }
            }
            Command::CurrentThread => format!("QC{:x}", self.stop_thread),
            Command::Attached => "1".into(),
            Command::Features(annex, offset, len) => {
                if annex != "target.xml" {
                    return "E00".into();
                }
                let xml = match target.hart(thread) {
                    Some(h) => regs::target_xml(h, full),
                    None => return "E01".into(),
                };
                let start = (offset as usize).min(xml.len());
                let end = start.saturating_add(len as usize).min(xml.len());
                let more = if end < xml.len() { 'm' } else { 'l' };
                format!("{more}{}", &xml[start..end])
            }
            Command::Resume(_) | Command::Kill | Command::Detach | Command::Unsupported => {
                String::new()
            }
        }
    }

    /// The next chunk of the thread list.
    fn more_threads(&mut self) -> String {
        let mut chunk = Vec::new();
        while let Some(t) = self.listing.pop() {
            chunk.push(format!("{t:x}"));
            if chunk.len() == 64 {
                break;
            }
        }
        if chunk.is_empty() {
            "l".into()
        } else {
            format!("m{}", chunk.join(","))
        }
    }

    /// Resumes the machine: every thread continues; the ones `actions`
    /// step stop after one instruction.
    fn resume(&mut self, target: &mut dyn Target, actions: &[(Action, Option<u64>)]) {
        let step_default = actions
            .iter()
            .any(|&(a, t)| a == Action::Step && t.is_none());
        let stepped = |t: u64| {
            actions
                .iter()
                .any(|&(a, at)| a == Action::Step && at == Some(t))
        };
        // A plain `s` steps the selected thread.
        let default_step_thread = self.selected.unwrap_or(self.stop_thread);
        let any_points = !self.breakpoints.is_empty() || !self.watchpoints.is_empty();
        self.stepping = false;
        for t in target.threads() {
            let step = stepped(t) || (step_default && t == default_step_thread);
            let Some(hart) = target.hart_mut(t) else {
                continue;
            };
            hart.debug = (step || any_points)
                .then(|| self.points(step.then_some(hart.instret), hart.instret, hart.pc));
            self.stepping |= step;
        }
    }

    /// Lets go of every hart: the machine runs on alone.
    fn detach(&mut self, target: &mut dyn Target) -> Verdict {
        for t in target.threads() {
            if let Some(h) = target.hart_mut(t) {
                h.debug = None;
            }
        }
        self.breakpoints.clear();
        self.watchpoints.clear();
        self.stepping = false;
        Verdict::Detach
    }

    /// Sends a packet. gdb's acknowledgement is skipped with the noise
    /// before its next packet; a packet gdb refuses is not sent again (on
    /// a TCP connection it never is).
    fn send(&mut self, data: &[u8]) -> Result<(), GdbError> {
        self.stream.write_all(&frame(data))?;
        self.stream.flush()?;
        Ok(())
    }

    /// The next packet from gdb (`None`: an interrupt byte), acknowledging
    /// it; a corrupt packet is refused and the next one waited for.
    fn receive(&mut self) -> Result<Option<Vec<u8>>, GdbError> {
        loop {
            while let Some(item) = self.decoder.next_item() {
                match item {
                    Incoming::Packet(p) => {
                        if self.ack {
                            self.stream.write_all(b"+")?;
                        }
                        return Ok(Some(p));
                    }
                    Incoming::Corrupt => {
                        if self.ack {
                            self.stream.write_all(b"-")?;
                        }
                    }
                    Incoming::Interrupt => return Ok(None),
                }
            }
            let mut buf = [0u8; 4096];
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(GdbError::Io(ErrorKind::UnexpectedEof.into()));
            }
            self.decoder.push(&buf[..n]);
        }
    }
}

/// The lowest descriptor the connection may take: a user-mode guest sees
/// the emulator's descriptor numbers, and the ones it would get first must
/// stay free for it, as they are without a debugger.
const FIRST_PRIVATE_FD: i32 = 950;

/// `stream` on a descriptor at or above [`FIRST_PRIVATE_FD`], closed on exec.
fn move_out_of_the_way(stream: TcpStream) -> Result<TcpStream, GdbError> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor `stream` owns; it takes an
    // integer argument and creates a new descriptor.
    let high = unsafe { libc::fcntl(stream.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_PRIVATE_FD) };
    if high < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: `high` is a new descriptor nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(high) };
    Ok(TcpStream::from(owned))
}

/// The stop reply for `thread` stopped by `stop`: SIGTRAP, naming the
/// address for a watchpoint.
fn stop_reply(thread: u64, stop: DebugStop) -> String {
    match stop {
        DebugStop::Watch(w) => {
            let kind = match w.kind {
                WatchKind::Write => "watch",
                WatchKind::Read => "rwatch",
                WatchKind::Access => "awatch",
            };
            format!("T05{kind}:{:x};thread:{thread:x};", w.addr)
        }
        DebugStop::Breakpoint | DebugStop::Step => format!("T05thread:{thread:x};"),
    }
}
