//! rvnvmm's region-of-interest marker (`insns/marker.rs`).

use crate::trap::Flow;
use crate::{Exit, Hart};
use rvnvmm_isa::Insn;

impl Hart {
    /// Executes a marker, `a` the value of `rs1` (its argument): a no-op
    /// to the architecture; the caller acts on it.
    #[inline(always)]
    pub(super) fn exec_marker(&mut self, ins: &Insn, a: u64) -> Flow {
        let op = rvnvmm_isa::MarkerOp::from_code((ins.imm & 15) as u8);
        Flow::Exit(Exit::Marker { op, arg: a })
    }
}
