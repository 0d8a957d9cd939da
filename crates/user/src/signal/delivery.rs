//! Signal delivery to the process's threads: waking a waiting thread, the
//! default actions, the frame a handler runs on and rt_sigreturn.

use super::*;
use crate::abi::{GuestTime, SigFrame, StackT, Timespec};
use crate::errno::Errno;
use crate::process::{ExitKind, Process, ThreadState};

/// Bytes of the frame a handler runs on (`struct rt_sigframe`).
const FRAME_SIZE: u64 = std::mem::size_of::<SigFrame>() as u64;

impl Process {
    /// Queues a signal for the current thread and delivers it now: used for
    /// synchronous faults, which cannot be blocked or ignored usefully.
    pub(crate) fn force_signal(&mut self, signo: i32, code: i32, addr: u64) {
        let i = self.threads.current;
        let blocked = self.threads.all[i].sigmask & bit(signo) != 0;
        let ignored = self.signals.actions[signo as usize].handler == 1;
        if blocked || ignored {
            // Linux: a blocked or ignored synchronous fault kills the process.
            self.signals.actions[signo as usize].handler = 0;
            self.threads.all[i].sigmask &= !bit(signo);
        }
        self.threads.all[i]
            .pending
            .insert(0, SignalInfo::fault(signo, code, addr));
        self.deliver_pending();
    }

    /// Queues a signal to thread index `i`, sent at the current thread's
    /// simulated time.
    pub(crate) fn queue_signal(&mut self, i: usize, info: SignalInfo) {
        let now = self.now_ns();
        self.queue_signal_at(i, info, now);
    }

    /// Queues a signal to thread index `i`, sent at simulated time `now`
    /// (ns): a relative `nanosleep` or `clock_nanosleep` it interrupts is
    /// told the time left.
    pub(crate) fn queue_signal_at(&mut self, i: usize, info: SignalInfo, now: u64) {
        let t = &mut self.threads.all[i];
        if info.signo >= SIGRTMIN || !t.pending.iter().any(|p| p.signo == info.signo) {
            t.pending.push(info);
        }
        if t.sigmask & bit(info.signo) != 0 {
            // Blocked: it only wakes a sigtimedwait that waits for it.
            if let ThreadState::SigTimedWait { set, .. } = t.state {
                if set & bit(info.signo) != 0 {
                    t.state = ThreadState::Runnable; // the call restarts and finds it
                }
            }
            return;
        }
        // A deliverable signal interrupts a blocking wait.
        match t.state {
            ThreadState::Sleep {
                restart: false,
                until,
            } => {
                t.state = ThreadState::Runnable;
                t.hart.x[10] = (-crate::errno::EINTR) as u64;
                // The time left goes to `rem` (a relative sleep's).
                use crate::syscall::nr;
                let rem = match t.hart.x[17] {
                    nr::NANOSLEEP => t.hart.x[11],
                    nr::CLOCK_NANOSLEEP if t.hart.x[11] & 1 == 0 => t.hart.x[13],
                    _ => 0,
                };
                if rem != 0 {
                    let left = Timespec::from_ns(until.saturating_sub(now));
                    if self.write_obj(rem, &left).is_err() {
                        self.threads.all[i].hart.x[10] = (-crate::errno::EFAULT) as u64;
                    }
                }
            }
            ThreadState::Futex { .. } | ThreadState::SigWait => {
                t.state = ThreadState::Runnable;
                t.hart.x[10] = (-crate::errno::EINTR) as u64;
            }
            ThreadState::Sleep { restart: true, .. } | ThreadState::SigTimedWait { .. } => {
                // Interrupted before the call could complete: EINTR too,
                // after the ecall.
                t.state = ThreadState::Runnable;
                t.wait_deadline = None;
                t.hart.x[10] = (-crate::errno::EINTR) as u64;
                t.hart.pc += 4;
            }
            ThreadState::Io { restart, .. } => {
                let act = self.signals.actions[info.signo as usize];
                let restart = match act.handler {
                    0 => default_ignored(info.signo),
                    1 => true,
                    _ => restart && act.flags & SA_RESTART != 0,
                };
                crate::syscall::interrupt_io(t, restart);
            }
            _ => {}
        }
    }

    /// Delivers the current thread's first deliverable pending signal.
    pub(crate) fn deliver_pending(&mut self) {
        if self.exit.is_some() {
            return;
        }
        let i = self.threads.current;
        if self.threads.all[i].state == ThreadState::Exited {
            return;
        }
        loop {
            let mask = self.threads.all[i].sigmask;
            // Lowest-numbered deliverable signal first, FIFO within one.
            let Some(pos) = self.threads.all[i]
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    mask & bit(p.signo) == 0 || p.signo == SIGKILL || p.signo == SIGSTOP
                })
                .min_by_key(|&(k, p)| (p.signo, k))
                .map(|(k, _)| k)
            else {
                return;
            };
            let info = self.threads.all[i].pending.remove(pos);
            let act = self.signals.actions[info.signo as usize];
            match act.handler {
                0 if default_ignored(info.signo) => continue,
                0 => {
                    if dumps_core(info.signo) {
                        let line = self.fatal_signal_line(i, &info);
                        eprintln!("{line}");
                    }
                    self.exit = Some(ExitKind::Signal(info.signo));
                    return;
                }
                1 => continue,
                _ => {
                    self.threads.all[i].fault_note = None;
                    if self.setup_frame(i, info, act).is_err() {
                        self.exit = Some(ExitKind::Signal(SIGSEGV));
                    }
                    return;
                }
            }
        }
    }

    /// The line printed when signal `info` kills the process: the signal,
    /// where the thread was (PC, instruction word, disassembly) and why:
    /// for a fault the address and what was wrong with it, for a signal
    /// sent by a process who sent it.
    pub(crate) fn fatal_signal_line(&mut self, i: usize, info: &SignalInfo) -> String {
        let (name, text) = signal_name(info.signo);
        let mut pc = self.threads.all[i].hart.pc;
        // A signal a process sent arrives after a system call returned:
        // show the ecall, not the instruction after it.
        const ECALL: u32 = 0x73;
        if info.code <= 0 && self.read_u32(pc.wrapping_sub(4)).ok() == Some(ECALL) {
            pc -= 4;
        }
        let tid = self.threads.all[i].tid;
        let code = si_code_name(info.signo, info.code);
        let insn = self.instruction_at(pc);
        let why = match self.threads.all[i].fault_note.take() {
            Some(note) if info.code > 0 => note,
            _ if info.code <= 0 => {
                let sender = info.data[0] as u32;
                let how = match info.code {
                    SI_TKILL => "tgkill/tkill",
                    SI_QUEUE => "sigqueue",
                    _ => "kill",
                };
                if sender as i32 == self.pid {
                    format!("sent by the process itself ({how})")
                } else {
                    format!("sent by pid {sender} ({how})")
                }
            }
            _ => format!("address {:#x}", info.data[0]),
        };
        format!(
            "rvnvmm: guest (pid {}, thread {tid}) killed by {name} ({text}, {code}) at pc {pc:#x} {insn}: {why}",
            self.pid
        )
    }

    /// `[word] disassembly` of the instruction at `pc`, or why it cannot
    /// be read.
    fn instruction_at(&mut self, pc: u64) -> String {
        let mut half = [0u8; 2];
        if self.read_mem(pc, &mut half).is_err() {
            return "[instruction not readable]".into();
        }
        let lo = u16::from_le_bytes(half) as u32;
        let (word, shown) = if lo & 3 != 3 {
            (lo, format!("{lo:04x}"))
        } else {
            let mut hi = [0u8; 2];
            if self.read_mem(pc + 2, &mut hi).is_err() {
                return format!("[{lo:04x}...] (instruction not readable)");
            }
            let w = lo | (u16::from_le_bytes(hi) as u32) << 16;
            (w, format!("{w:08x}"))
        };
        let text = rvnvmm_isa::disasm(&rvnvmm_isa::decode(word), pc);
        format!("[{shown}] {text}")
    }

    fn setup_frame(&mut self, i: usize, info: SignalInfo, act: SigAction) -> Result<(), Errno> {
        let t = &self.threads.all[i];
        let (ss_sp, ss_size, ss_flags) = t.altstack;
        let sp_now = t.hart.x[2];
        let on_alt = ss_flags & SS_DISABLE == 0 && sp_now.wrapping_sub(ss_sp) < ss_size;
        let mut sp = if act.flags & SA_ONSTACK != 0 && ss_flags & SS_DISABLE == 0 && !on_alt {
            ss_sp + ss_size
        } else {
            sp_now
        };
        sp = (sp - FRAME_SIZE) & !15;
        let frame = sp;
        let mut f = SigFrame::zeroed();
        f.info = info.to_abi();
        f.uc.uc_stack = StackT {
            ss_sp,
            ss_flags: if on_alt { SS_ONSTACK } else { ss_flags },
            ss_size,
            ..StackT::default()
        };
        // sigsuspend: the handler's return restores the mask from before it.
        f.uc.uc_sigmask = t.saved_mask.unwrap_or(t.sigmask);
        let mc = &mut f.uc.uc_mcontext;
        mc.sc_regs = t.hart.x;
        mc.sc_regs[0] = t.hart.pc;
        mc.sc_fpregs.f = t.hart.f;
        mc.sc_fpregs.fcsr = (t.hart.frm as u32) << 5 | t.hart.fflags as u32;
        self.write_obj(frame, &f)?;
        let uc = std::mem::offset_of!(SigFrame, uc) as u64;
        let restorer = self.image.sigreturn_page;
        let t = &mut self.threads.all[i];
        t.hart.x[2] = frame;
        t.hart.x[1] = restorer;
        t.hart.x[10] = info.signo as u64;
        t.hart.x[11] = frame;
        t.hart.x[12] = frame + uc;
        t.hart.pc = act.handler;
        if let Some(m) = t.saved_mask.take() {
            t.sigmask = m;
        }
        t.sigmask |= act.mask;
        if act.flags & SA_NODEFER == 0 {
            t.sigmask |= bit(info.signo);
        }
        t.sigmask &= !(bit(SIGKILL) | bit(SIGSTOP));
        if act.flags & SA_RESETHAND != 0 {
            self.signals.actions[info.signo as usize] = SigAction::default();
        }
        Ok(())
    }

    /// rt_sigreturn: restores the registers and mask saved in the frame at sp.
    pub(crate) fn sigreturn(&mut self) -> Result<(), Errno> {
        let i = self.threads.current;
        let frame = self.threads.all[i].hart.x[2];
        let f: SigFrame = self.read_obj(frame)?;
        let mc = &f.uc.uc_mcontext;
        let t = &mut self.threads.all[i];
        t.hart.pc = mc.sc_regs[0];
        t.hart.x[1..].copy_from_slice(&mc.sc_regs[1..]);
        t.hart.f = mc.sc_fpregs.f;
        let fcsr = mc.sc_fpregs.fcsr;
        t.hart.fflags = (fcsr & 0x1f) as u8;
        t.hart.frm = ((fcsr >> 5) & 7) as u8;
        t.sigmask = f.uc.uc_sigmask & !(bit(SIGKILL) | bit(SIGSTOP));
        Ok(())
    }
}
