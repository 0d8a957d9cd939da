//! Synchronous faults: a hart's trap becomes a page fault served or the
//! signal Linux sends for it, with the line that says why.

use super::Process;
use crate::errno::*;
use crate::vm::{PROT_EXEC, PROT_READ, PROT_WRITE};
use rvnvmm_hart::Trap;

impl Process {
    pub(super) fn handle_trap(&mut self, trap: Trap) {
        let i = self.threads.current;
        let pc = self.threads.all[i].hart.pc;
        use crate::signal::*;
        let access = match trap.cause {
            Trap::STORE_PAGE_FAULT | Trap::STORE_MISALIGNED | Trap::STORE_ACCESS => "store to",
            Trap::INSN_PAGE_FAULT | Trap::INSN_MISALIGNED | Trap::INSN_ACCESS => {
                "instruction fetch from"
            }
            _ => "load from",
        };
        let addr = trap.tval;
        let (signo, code, at, note) = match trap.cause {
            Trap::LOAD_PAGE_FAULT | Trap::STORE_PAGE_FAULT | Trap::INSN_PAGE_FAULT => {
                let write = trap.cause == Trap::STORE_PAGE_FAULT;
                let exec = trap.cause == Trap::INSN_PAGE_FAULT;
                let task = self.threads.current().mempolicy;
                match self.memory.aspace.handle_fault_for(
                    &mut self.memory.phys,
                    addr,
                    write,
                    exec,
                    task.as_ref(),
                ) {
                    Ok(true) => return,
                    Ok(false) => match self.memory.aspace.find(addr) {
                        None => (
                            SIGSEGV,
                            SEGV_MAPERR,
                            addr,
                            format!("{access} {addr:#x}: nothing is mapped there"),
                        ),
                        Some((start, v)) => (
                            SIGSEGV,
                            SEGV_ACCERR,
                            addr,
                            format!(
                                "{access} {addr:#x}: the area {start:#x}-{:#x} ({}) is {}",
                                v.end,
                                area_label(&v.name),
                                prot_string(v.prot)
                            ),
                        ),
                    },
                    Err(ENOMEM) => {
                        self.out_of_memory(addr);
                        return;
                    }
                    Err(_) => (
                        SIGBUS,
                        BUS_ADRERR,
                        addr,
                        format!("{access} {addr:#x}: past the end of the file mapped there"),
                    ),
                }
            }
            Trap::ILLEGAL => (SIGILL, ILL_ILLOPC, pc, "illegal instruction".to_string()),
            Trap::BREAKPOINT => (SIGTRAP, TRAP_BRKPT, pc, "breakpoint".to_string()),
            Trap::LOAD_MISALIGNED | Trap::STORE_MISALIGNED | Trap::INSN_MISALIGNED => (
                SIGBUS,
                BUS_ADRALN,
                addr,
                format!(
                    "{access} {addr:#x}: misaligned (atomics and LR/SC need natural alignment)"
                ),
            ),
            _ => (
                SIGSEGV,
                SEGV_ACCERR,
                addr,
                format!("{access} {addr:#x}: access fault"),
            ),
        };
        self.threads.all[i].fault_note = Some(note);
        self.force_signal(signo, code, at);
    }
}

/// An area's name as the fatal-signal line shows it.
fn area_label(name: &str) -> &str {
    if name.is_empty() || name == "[anon]" {
        "anonymous"
    } else {
        name
    }
}

/// `rwx` as /proc/PID/maps writes protections.
pub(crate) fn prot_string(prot: u32) -> String {
    let bit = |b: u32, c: char| if prot & b != 0 { c } else { '-' };
    [
        bit(PROT_READ, 'r'),
        bit(PROT_WRITE, 'w'),
        bit(PROT_EXEC, 'x'),
    ]
    .iter()
    .collect()
}
