//! Zimop and Zcmop (`insns/mop.rs`): the may-be-operations.

use crate::trap::Flow;
use crate::Hart;
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes a may-be-operation (`op`, of `ins`): `mop.r.N` and
    /// `mop.rr.N` write 0 to `rd` while no extension redefines them,
    /// `c.mop.N` does nothing.
    #[inline(always)]
    pub(super) fn exec_mop(&mut self, ins: &Insn, op: Op) -> Flow {
        if matches!(op, Op::MopR | Op::MopRr) {
            self.set_rd(ins, 0);
        }
        Flow::Next
    }
}
