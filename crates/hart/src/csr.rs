//! Zicsr: every CSR the hart implements, with the privilege, read-only and
//! enable checks that make an access illegal. The counters follow
//! simulated time.

use crate::interrupt::{irq, DELEGABLE_INTERRUPTS, MIE_WRITABLE};
use crate::privileged::{envcfg, legal_tvec, mstatus, DELEGABLE_EXCEPTIONS, MISA_MXL_64};
use crate::{Hart, Priv, Trap};
use rvnvmm_isa::csr::*;
use rvnvmm_isa::{Insn, Op};

const HPMCOUNTER3: u16 = 0xC03;
const HPMCOUNTER31: u16 = 0xC1F;
const STIMECMP: u16 = 0x14D;
const MHPMEVENT3: u16 = 0x323;
const MHPMEVENT31: u16 = 0x33F;
const PMPCFG15: u16 = 0x3AF;
const PMPADDR63: u16 = 0x3EF;
const MSECCFG: u16 = 0x747;
const MHPMCOUNTER3: u16 = 0xB03;
const MHPMCOUNTER31: u16 = 0xB1F;
const MCONFIGPTR: u16 = 0xF15;

/// Where in the current block a CSR instruction is: the instructions and
/// cycles before it, so counters read exactly.
#[derive(Clone, Copy)]
struct Now {
    insns: u64,
    cycles: u64,
}

impl Hart {
    /// Executes a Zicsr instruction; `done` and `done_cycles` are the
    /// instructions and cycles of the current block before it.
    #[inline(never)]
    pub(crate) fn csr_op(&mut self, ins: &Insn, done: u64, done_cycles: u64) -> Result<u64, Trap> {
        let csr = ins.csr();
        let illegal = Trap::new(Trap::ILLEGAL, 0);
        let src = match ins.op {
            Op::Csrrw | Op::Csrrs | Op::Csrrc => self.x[ins.rs1 as usize & 31],
            _ => ins.rs1 as u64,
        };
        let writes = matches!(ins.op, Op::Csrrw | Op::Csrrwi) || ins.rs1 != 0;
        // Bits 9..8 name the lowest privilege that may access it.
        if (csr >> 8) & 3 > self.prv as u16 {
            return Err(illegal);
        }
        let now = Now {
            insns: done,
            cycles: done_cycles,
        };
        let old = self.csr_read(csr, now, self.prv).ok_or(illegal)?;
        if !writes {
            return Ok(old);
        }
        if csr >> 10 == 3 {
            return Err(illegal); // read-only
        }
        // A read-modify-write of mip works on the software SEIP bit, not on
        // its OR with the device line.
        let base = if csr == MIP {
            old & !irq::SEIP | self.csrs.mip & irq::SEIP
        } else {
            old
        };
        let new = match ins.op {
            Op::Csrrw | Op::Csrrwi => src,
            Op::Csrrs | Op::Csrrsi => base | src,
            _ => base & !src,
        };
        self.csr_write(csr, new, now).ok_or(illegal)?;
        Ok(old)
    }

    /// Reads CSR `csr` as M-mode would, without side effects (`None` if the
    /// hart does not implement it): for boards, debuggers and tests.
    pub fn read_csr(&self, csr: u16) -> Option<u64> {
        let now = Now {
            insns: 0,
            cycles: 0,
        };
        self.csr_read(csr, now, Priv::Machine)
    }

    /// Writes CSR `csr` as M-mode would (for debuggers); `false` if the
    /// hart does not implement it or the write is illegal.
    pub fn write_csr(&mut self, csr: u16, value: u64) -> bool {
        let now = Now {
            insns: 0,
            cycles: 0,
        };
        self.csr_read(csr, now, Priv::Machine).is_some()
            && self.csr_write(csr, value, now).is_some()
    }

    fn counter_enabled(&self, index: u16, prv: Priv) -> bool {
        let bit = 1u64 << index;
        match prv {
            Priv::Machine => true,
            Priv::Supervisor => self.csrs.mcounteren & bit != 0,
            Priv::User => self.csrs.mcounteren & self.csrs.scounteren & bit != 0,
        }
    }

    fn fp_enabled(&self) -> bool {
        self.csrs.mstatus & mstatus::FS != 0
    }

    /// Reads `csr` for an access from `prv`; `None` if that is illegal.
    fn csr_read(&self, csr: u16, now: Now, prv: Priv) -> Option<u64> {
        let s = &self.csrs;
        Some(match csr {
            FFLAGS | FRM | FCSR if !self.fp_enabled() => return None,
            FFLAGS => self.fflags as u64,
            FRM => self.frm as u64,
            FCSR => (self.frm as u64) << 5 | self.fflags as u64,
            CYCLE..=HPMCOUNTER31 if !self.counter_enabled(csr - CYCLE, prv) => return None,
            CYCLE | MCYCLE => (self.core.cycles + now.cycles).wrapping_add(s.mcycle_offset),
            TIME => self.time_at(self.core.cycles + now.cycles),
            INSTRET | MINSTRET => (self.instret + now.insns).wrapping_add(s.minstret_offset),
            HPMCOUNTER3..=HPMCOUNTER31 | MHPMCOUNTER3..=MHPMCOUNTER31 => 0,
            SSTATUS => s.mstatus() & mstatus::SSTATUS,
            SIE => s.mie & s.mideleg,
            STVEC => s.stvec,
            SCOUNTEREN => s.scounteren,
            SENVCFG => s.senvcfg,
            SSCRATCH => s.sscratch,
            SEPC => s.sepc,
            SCAUSE => s.scause,
            STVAL => s.stval,
            SIP => self.mip_at(self.core.cycles + now.cycles) & s.mideleg,
            STIMECMP => {
                let enabled = s.menvcfg & envcfg::STCE != 0 && s.mcounteren & 2 != 0;
                if prv != Priv::Machine && !enabled {
                    return None;
                }
                s.stimecmp
            }
            SATP => {
                if prv == Priv::Supervisor && s.mstatus & mstatus::TVM != 0 {
                    return None;
                }
                s.satp
            }
            MSTATUS => s.mstatus(),
            MISA => MISA_MXL_64 | self.config.isa.misa_letters(),
            MEDELEG => s.medeleg,
            MIDELEG => s.mideleg,
            MIE => s.mie,
            MTVEC => s.mtvec,
            MCOUNTEREN => s.mcounteren,
            MENVCFG => s.menvcfg,
            MCOUNTINHIBIT | MHPMEVENT3..=MHPMEVENT31 | MSECCFG => 0,
            MSCRATCH => s.mscratch,
            MEPC => s.mepc,
            MCAUSE => s.mcause,
            MTVAL => s.mtval,
            MIP => self.mip_at(self.core.cycles + now.cycles),
            PMPCFG0..=PMPCFG15 if csr & 1 == 0 => self.pmp.cfg_reg((csr - PMPCFG0) as usize),
            PMPADDR0..=PMPADDR63 => self.pmp.addr((csr - PMPADDR0) as usize),
            MVENDORID | MARCHID | MIMPID | MCONFIGPTR => 0,
            MHARTID => self.core.hart_id,
            _ => return None,
        })
    }

    /// Writes a CSR that `csr_read` accepted; `None` if the write itself is
    /// illegal.
    fn csr_write(&mut self, csr: u16, v: u64, now: Now) -> Option<()> {
        let s = &mut self.csrs;
        match csr {
            FFLAGS | FRM | FCSR => {
                s.mstatus |= mstatus::FS_DIRTY;
                match csr {
                    FFLAGS => self.fflags = (v & 0x1f) as u8,
                    FRM => self.frm = (v & 7) as u8,
                    _ => {
                        self.fflags = (v & 0x1f) as u8;
                        self.frm = ((v >> 5) & 7) as u8;
                    }
                }
            }
            SSTATUS => {
                let w = mstatus::SSTATUS_WRITABLE;
                s.mstatus = s.mstatus & !w | v & w;
                self.status_changed();
            }
            SIE => {
                let w = s.mideleg & MIE_WRITABLE;
                s.mie = s.mie & !w | v & w;
                self.event_at = 0;
            }
            STVEC => s.stvec = legal_tvec(v),
            SCOUNTEREN => s.scounteren = v & 7,
            SENVCFG => {
                let w = envcfg::FIOM | envcfg::CBIE | envcfg::CBCFE | envcfg::CBZE;
                s.senvcfg = legal_cbie(v & w);
            }
            SSCRATCH => s.sscratch = v,
            SEPC => s.sepc = v & !1,
            SCAUSE => s.scause = v,
            STVAL => s.stval = v,
            SIP => {
                let w = s.mideleg & irq::SSIP;
                s.mip = s.mip & !w | v & w;
                self.event_at = 0;
            }
            STIMECMP => {
                s.stimecmp = v;
                self.event_at = 0;
            }
            SATP => {
                // Only Bare and Sv39: a write of another mode has no effect.
                let mode = v >> 60;
                if mode != 0 && mode != 8 {
                    return Some(());
                }
                s.satp = v;
                self.page_table = (mode == 8).then_some((v & ((1 << 44) - 1)) << 12);
                self.flush_tlb();
            }
            MSTATUS => {
                let mut v = v & mstatus::WRITABLE;
                if v & mstatus::MPP == 2 << mstatus::MPP_SHIFT {
                    v = v & !mstatus::MPP | s.mstatus & mstatus::MPP; // reserved: keep
                }
                s.mstatus = v;
                self.status_changed();
            }
            MISA | MCOUNTINHIBIT | MHPMEVENT3..=MHPMEVENT31 | MSECCFG => {}
            MHPMCOUNTER3..=MHPMCOUNTER31 => {}
            MEDELEG => s.medeleg = v & DELEGABLE_EXCEPTIONS,
            MIDELEG => {
                s.mideleg = v & DELEGABLE_INTERRUPTS;
                self.event_at = 0;
            }
            MIE => {
                s.mie = v & MIE_WRITABLE;
                self.event_at = 0;
            }
            MTVEC => s.mtvec = legal_tvec(v),
            MCOUNTEREN => s.mcounteren = v & 7,
            MENVCFG => {
                let w = envcfg::FIOM | envcfg::CBIE | envcfg::CBCFE | envcfg::CBZE | envcfg::STCE;
                s.menvcfg = legal_cbie(v & w);
                self.event_at = 0;
            }
            MSCRATCH => s.mscratch = v,
            MEPC => s.mepc = v & !1,
            MCAUSE => s.mcause = v,
            MTVAL => s.mtval = v,
            MIP => {
                let mut w = irq::SSIP | irq::SEIP;
                if s.menvcfg & envcfg::STCE == 0 {
                    w |= irq::STIP;
                }
                s.mip = s.mip & !w | v & w;
                self.event_at = 0;
            }
            PMPCFG0..=PMPCFG15 => {
                self.pmp.write_cfg_reg((csr - PMPCFG0) as usize, v);
                self.flush_tlb();
            }
            PMPADDR0..=PMPADDR63 => {
                self.pmp.write_addr((csr - PMPADDR0) as usize, v);
                self.flush_tlb();
            }
            // The writing instruction itself must not count.
            MCYCLE => s.mcycle_offset = v.wrapping_sub(self.core.cycles + now.cycles),
            MINSTRET => s.minstret_offset = v.wrapping_sub(self.instret + now.insns + 1),
            _ => return None,
        }
        Some(())
    }

    /// After `mstatus` changed: privilege-dependent translation and the
    /// interrupt enables may have too.
    fn status_changed(&mut self) {
        self.sync_tlb_context();
        self.event_at = 0;
    }
}

/// CBIE = 2 is reserved: treat it as 0 (illegal).
fn legal_cbie(v: u64) -> u64 {
    if v & envcfg::CBIE == 2 << envcfg::CBIE_SHIFT {
        v & !envcfg::CBIE
    } else {
        v
    }
}
