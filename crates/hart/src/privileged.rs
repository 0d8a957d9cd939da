//! Machine- and supervisor-mode state (privileged spec 1.12): `mstatus` and
//! the trap CSRs, taking a trap, `mret`/`sret`, and the translation context
//! the TLB is keyed by.

use crate::{Hart, Priv, Trap};

/// `mstatus` fields.
pub mod mstatus {
    #![allow(missing_docs)]
    pub const SIE: u64 = 1 << 1;
    pub const MIE: u64 = 1 << 3;
    pub const SPIE: u64 = 1 << 5;
    pub const MPIE: u64 = 1 << 7;
    pub const SPP: u64 = 1 << 8;
    pub const MPP_SHIFT: u32 = 11;
    pub const MPP: u64 = 3 << MPP_SHIFT;
    pub const FS: u64 = 3 << 13;
    pub const FS_DIRTY: u64 = 3 << 13;
    pub const MPRV: u64 = 1 << 17;
    pub const SUM: u64 = 1 << 18;
    pub const MXR: u64 = 1 << 19;
    pub const TVM: u64 = 1 << 20;
    pub const TW: u64 = 1 << 21;
    pub const TSR: u64 = 1 << 22;
    /// UXL = SXL = 2 (64-bit), read-only.
    pub const XLEN: u64 = 2 << 32 | 2 << 34;
    pub const SD: u64 = 1 << 63;
    /// Bits M-mode may write.
    pub const WRITABLE: u64 =
        SIE | MIE | SPIE | MPIE | SPP | MPP | FS | MPRV | SUM | MXR | TVM | TW | TSR;
    /// Bits `sstatus` shows.
    pub const SSTATUS: u64 = SIE | SPIE | SPP | FS | SUM | MXR | 3 << 32 | SD;
    /// Bits S-mode may write through `sstatus`.
    pub const SSTATUS_WRITABLE: u64 = SIE | SPIE | SPP | FS | SUM | MXR;
}

/// `menvcfg`/`senvcfg` fields.
pub mod envcfg {
    #![allow(missing_docs)]
    pub const FIOM: u64 = 1 << 0;
    pub const CBIE_SHIFT: u32 = 4;
    pub const CBIE: u64 = 3 << CBIE_SHIFT;
    pub const CBCFE: u64 = 1 << 6;
    pub const CBZE: u64 = 1 << 7;
    /// Sstc: `stimecmp` is enabled for S-mode and drives STIP.
    pub const STCE: u64 = 1 << 63;
}

/// `misa`'s MXL field for RV64; the extension bits come from the hart's
/// [`rvnvmm_isa::ExtSet`] (with S and U).
pub const MISA_MXL_64: u64 = 2 << 62;

/// Exceptions `medeleg` can delegate: all but ecall from M (11) and the
/// reserved codes.
pub const DELEGABLE_EXCEPTIONS: u64 = 0xb3ff;

/// The privileged CSRs that are plain state. Derived values (`mip`'s device
/// bits, the counters, PMP) live elsewhere.
#[derive(Clone, Debug, Default)]
pub(crate) struct PrivState {
    /// The writable bits of `mstatus`; XLEN fields and SD are added on read.
    pub mstatus: u64,
    pub medeleg: u64,
    pub mideleg: u64,
    pub mie: u64,
    /// Software-written `mip` bits: SSIP, STIP (without Sstc) and SEIP.
    pub mip: u64,
    pub mtvec: u64,
    pub stvec: u64,
    pub mepc: u64,
    pub sepc: u64,
    pub mcause: u64,
    pub scause: u64,
    pub mtval: u64,
    pub stval: u64,
    pub mscratch: u64,
    pub sscratch: u64,
    pub satp: u64,
    pub mcounteren: u64,
    pub scounteren: u64,
    pub menvcfg: u64,
    pub senvcfg: u64,
    pub stimecmp: u64,
    /// `mcycle` minus the hart's cycle clock (writes to `mcycle` must not
    /// move simulated time).
    pub mcycle_offset: u64,
    /// `minstret` minus the hart's retired-instruction count.
    pub minstret_offset: u64,
}

impl PrivState {
    /// State at reset for full-system mode: M-mode conventions of the spec,
    /// everything off.
    pub fn reset() -> PrivState {
        PrivState {
            stimecmp: u64::MAX,
            ..PrivState::default()
        }
    }

    /// State for user-mode emulation: the FPU is on (and always dirty, so
    /// FP instructions never take the slow path) and U-mode may read
    /// `cycle`, `time` and `instret`.
    pub fn user_mode() -> PrivState {
        PrivState {
            mstatus: mstatus::FS_DIRTY,
            mcounteren: 7,
            scounteren: 7,
            stimecmp: u64::MAX,
            ..PrivState::default()
        }
    }

    /// `mstatus` as read.
    pub fn mstatus(&self) -> u64 {
        let sd = if self.mstatus & mstatus::FS == mstatus::FS_DIRTY {
            mstatus::SD
        } else {
            0
        };
        self.mstatus | mstatus::XLEN | sd
    }
}

/// A trap-vector register value with a reserved mode made legal (direct).
pub(crate) fn legal_tvec(v: u64) -> u64 {
    if v & 3 >= 2 {
        v & !3
    } else {
        v
    }
}

fn from_bits(p: u64) -> Priv {
    match p {
        0 => Priv::User,
        1 => Priv::Supervisor,
        _ => Priv::Machine,
    }
}

impl Hart {
    /// The privilege loads and stores are checked and translated with:
    /// MPP when M-mode sets MPRV.
    #[inline]
    pub(crate) fn data_prv(&self) -> Priv {
        if self.prv == Priv::Machine && self.csrs.mstatus & mstatus::MPRV != 0 {
            from_bits((self.csrs.mstatus & mstatus::MPP) >> mstatus::MPP_SHIFT)
        } else {
            self.prv
        }
    }

    /// Everything besides the page tables that decides a translation:
    /// fetch privilege, data privilege, and SUM/MXR where they matter.
    fn tlb_key(&self) -> u8 {
        let data = self.data_prv();
        let mut key = self.prv as u8 | (data as u8) << 2;
        if data != Priv::Machine {
            let ms = self.csrs.mstatus;
            key |= ((ms & mstatus::SUM != 0) as u8) << 4 | ((ms & mstatus::MXR != 0) as u8) << 5;
        }
        key
    }

    /// Brings the active TLB in line with the current privilege and
    /// `mstatus` (after a trap, a return or an `mstatus` write).
    pub(crate) fn sync_tlb_context(&mut self) {
        let key = self.tlb_key();
        if key != self.tlb_contexts.active {
            self.tlb_contexts.switch(&mut self.tlb, key);
        }
    }

    /// Changes privilege, switching the TLB context with it.
    pub(crate) fn set_prv(&mut self, prv: Priv) {
        self.prv = prv;
        self.sync_tlb_context();
    }

    /// Takes a trap at `self.pc` (the faulting instruction, or the next one
    /// to run for an interrupt): to S-mode if it comes from S or U and is
    /// delegated, else to M-mode.
    #[inline(never)]
    pub(crate) fn take_trap(&mut self, cause: u64, tval: u64, interrupt: bool) {
        let s = &mut self.csrs;
        let delegated = if interrupt { s.mideleg } else { s.medeleg };
        let code = cause | (interrupt as u64) << 63;
        let from = self.prv;
        let vector = |tvec: u64| {
            let base = tvec & !3;
            if interrupt && tvec & 3 == 1 {
                base.wrapping_add(4 * cause)
            } else {
                base
            }
        };
        let to = if from != Priv::Machine && delegated >> cause & 1 != 0 {
            s.scause = code;
            s.sepc = self.pc;
            s.stval = tval;
            let spie = if s.mstatus & mstatus::SIE != 0 {
                mstatus::SPIE
            } else {
                0
            };
            let spp = if from == Priv::Supervisor {
                mstatus::SPP
            } else {
                0
            };
            s.mstatus = s.mstatus & !(mstatus::SIE | mstatus::SPIE | mstatus::SPP) | spie | spp;
            self.pc = vector(s.stvec);
            Priv::Supervisor
        } else {
            s.mcause = code;
            s.mepc = self.pc;
            s.mtval = tval;
            let mpie = if s.mstatus & mstatus::MIE != 0 {
                mstatus::MPIE
            } else {
                0
            };
            s.mstatus = s.mstatus & !(mstatus::MIE | mstatus::MPIE | mstatus::MPP)
                | mpie
                | (from as u64) << mstatus::MPP_SHIFT;
            self.pc = vector(s.mtvec);
            Priv::Machine
        };
        // An SC after a trap handler ran must not pair with an earlier LR.
        self.reservation = None;
        self.last_trap = Trap::new(code, tval);
        if interrupt {
            self.stats.interrupts += 1;
        } else {
            self.stats.exceptions += 1;
            if cause == Trap::ECALL_S && to == Priv::Machine {
                self.stats.sbi_calls.count(self.x[17]);
            }
        }
        self.set_prv(to);
    }

    /// `mret`: returns the target PC.
    #[inline(never)]
    pub(crate) fn mret(&mut self) -> Result<u64, Trap> {
        if self.prv != Priv::Machine {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        let s = &mut self.csrs;
        let to = from_bits((s.mstatus & mstatus::MPP) >> mstatus::MPP_SHIFT);
        let mie = if s.mstatus & mstatus::MPIE != 0 {
            mstatus::MIE
        } else {
            0
        };
        let mut ms = s.mstatus & !(mstatus::MIE | mstatus::MPP) | mie | mstatus::MPIE;
        if to != Priv::Machine {
            ms &= !mstatus::MPRV;
        }
        s.mstatus = ms;
        let target = s.mepc;
        self.set_prv(to);
        self.event_at = 0;
        Ok(target)
    }

    /// `sret` (illegal in U-mode, and in S-mode under TSR): returns the
    /// target PC.
    #[inline(never)]
    pub(crate) fn sret(&mut self) -> Result<u64, Trap> {
        let tsr = self.csrs.mstatus & mstatus::TSR != 0;
        if self.prv == Priv::User || (self.prv == Priv::Supervisor && tsr) {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        let s = &mut self.csrs;
        let to = if s.mstatus & mstatus::SPP != 0 {
            Priv::Supervisor
        } else {
            Priv::User
        };
        let sie = if s.mstatus & mstatus::SPIE != 0 {
            mstatus::SIE
        } else {
            0
        };
        s.mstatus =
            s.mstatus & !(mstatus::SIE | mstatus::SPP | mstatus::MPRV) | sie | mstatus::SPIE;
        let target = s.sepc;
        self.set_prv(to);
        self.event_at = 0;
        Ok(target)
    }

    /// `sfence.vma`: illegal in U-mode and in S-mode under TVM. With
    /// `rs1 != x0` only the page of `vaddr` is dropped (in every context);
    /// the ASID is ignored, which only flushes more than asked.
    #[inline(never)]
    pub(crate) fn sfence_vma(&mut self, one_page: bool, vaddr: u64) -> Result<(), Trap> {
        let tvm = self.csrs.mstatus & mstatus::TVM != 0;
        if self.prv == Priv::User || (self.prv == Priv::Supervisor && tvm) {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        if one_page {
            self.tlb.flush_page(vaddr);
            for t in self.tlb_contexts.saved_mut() {
                t.flush_page(vaddr);
            }
        } else {
            self.flush_tlb();
        }
        Ok(())
    }

    /// Marks the FP state dirty before an FP instruction or FP CSR write;
    /// illegal while `mstatus.FS` is Off.
    #[inline(always)]
    pub(crate) fn fp_dirty(&mut self) -> Result<(), Trap> {
        if self.csrs.mstatus & mstatus::FS == mstatus::FS_DIRTY {
            return Ok(());
        }
        self.fp_dirty_slow()
    }

    #[cold]
    fn fp_dirty_slow(&mut self) -> Result<(), Trap> {
        if self.csrs.mstatus & mstatus::FS == 0 {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        self.csrs.mstatus |= mstatus::FS_DIRTY;
        Ok(())
    }
}
