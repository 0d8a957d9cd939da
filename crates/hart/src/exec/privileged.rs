//! The privileged instructions (`insns/privileged.rs`): `mret`, `sret`,
//! `wfi` and `sfence.vma` (the privileged state itself is
//! `privileged.rs`'s).

use crate::privileged::mstatus;
use crate::trap::Flow;
use crate::{Env, Exit, Hart, Priv, TimingModel, TlbFlush, Trap};
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes a privileged instruction (`op`, of `ins`), `a` and `b` the
    /// values of `rs1` and `rs2`, `done_cycles` the block's cycles before
    /// it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_privileged<T: TimingModel + ?Sized, const FULL: bool>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        op: Op,
        a: u64,
        b: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        match op {
            Op::Mret => self.mret().map(Flow::Jump),
            Op::Sret => self.sret().map(Flow::Jump),
            Op::SfenceVma => {
                self.sfence_vma(ins.rs1 != 0, a)?;
                if let Some(t) = env.timing.as_deref_mut() {
                    let flush = TlbFlush {
                        vaddr: (ins.rs1 != 0).then_some(a),
                        asid: (ins.rs2 != 0).then_some(b as u16),
                    };
                    t.tlb_flush(self.core.id, flush);
                    // The software TLB was flushed at least as widely.
                    self.tlb_sync = Some((self.core.id, t.tlb_epoch(self.core.id)));
                }
                Ok(Flow::Next)
            }
            Op::Wfi => self.wfi::<FULL>(done_cycles),
            _ => unreachable!("not a privileged instruction: {op:?}"),
        }
    }

    /// `wfi`: illegal in U-mode, and in S-mode under TW. In user-mode
    /// emulation it always exits; in full-system mode only when no enabled
    /// interrupt is pending (else it completes at once).
    #[inline(never)]
    fn wfi<const FULL: bool>(&mut self, now: u64) -> Result<Flow, Trap> {
        let tw = self.csrs.mstatus & mstatus::TW != 0;
        if self.prv == Priv::User || (FULL && self.prv == Priv::Supervisor && tw) {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        if FULL && self.mip_at(self.core.cycles + now) & self.csrs.mie != 0 {
            return Ok(Flow::Next);
        }
        Ok(Flow::Exit(Exit::Wfi))
    }
}
