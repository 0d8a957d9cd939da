//! Zicsr (`insns/zicsr.rs`): the CSR instructions (the registers
//! themselves are `csr.rs`'s).

use crate::trap::Flow;
use crate::{Env, Hart, TimingModel, Trap};
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes a CSR instruction (`op`, of `ins`), `done` and
    /// `done_cycles` the block's instructions and cycles before it.
    #[inline(always)]
    pub(super) fn exec_zicsr<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        op: Op,
        done: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        let v = self.csr_op(ins, done, done_cycles)?;
        if ins.csr() == rvnvmm_isa::csr::SATP
            && (matches!(op, Op::Csrrw | Op::Csrrwi) || ins.rs1 != 0)
        {
            if let Some(t) = env.timing.as_deref_mut() {
                t.satp_write(self.core.id, self.csrs.satp);
            }
        }
        self.set_rd(ins, v);
        Ok(Flow::Next)
    }
}
