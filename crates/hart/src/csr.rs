//! Control and status registers visible to U-mode: the floating-point CSRs
//! and the Zicntr counters, which follow simulated time.

use crate::{Hart, Trap};
use rvnvmm_isa::{Insn, Op};

const FFLAGS: u16 = 0x001;
const FRM: u16 = 0x002;
const FCSR: u16 = 0x003;
const CYCLE: u16 = 0xC00;
const TIME: u16 = 0xC01;
const INSTRET: u16 = 0xC02;

impl Hart {
    /// Executes a Zicsr instruction; `done` and `done_cycles` are the
    /// instructions and cycles of the current block before it (so counters
    /// read exactly).
    pub(crate) fn csr_op(&mut self, ins: &Insn, done: u64, done_cycles: u64) -> Result<u64, Trap> {
        let csr = ins.imm as u16 & 0xfff;
        let illegal = Trap::new(Trap::ILLEGAL, 0);
        let src = match ins.op {
            Op::Csrrw | Op::Csrrs | Op::Csrrc => self.x[ins.rs1 as usize & 31],
            _ => ins.rs1 as u64,
        };
        let writes = matches!(ins.op, Op::Csrrw | Op::Csrrwi) || ins.rs1 != 0;
        let old = match csr {
            FFLAGS => self.fflags as u64,
            FRM => self.frm as u64,
            FCSR => (self.frm as u64) << 5 | self.fflags as u64,
            CYCLE => self.cycles + done_cycles,
            INSTRET => self.instret + done,
            TIME => self.time_at(self.cycles + done_cycles),
            _ => return Err(illegal),
        };
        if !writes {
            return Ok(old);
        }
        if csr >> 10 == 3 {
            return Err(illegal); // read-only
        }
        let new = match ins.op {
            Op::Csrrw | Op::Csrrwi => src,
            Op::Csrrs | Op::Csrrsi => old | src,
            _ => old & !src,
        };
        match csr {
            FFLAGS => self.fflags = (new & 0x1f) as u8,
            FRM => self.frm = (new & 7) as u8,
            FCSR => {
                self.fflags = (new & 0x1f) as u8;
                self.frm = ((new >> 5) & 7) as u8;
            }
            _ => unreachable!("read-only counters rejected above"),
        }
        Ok(old)
    }
}
