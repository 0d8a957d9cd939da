//! Helpers for the F and D computational instructions: one small
//! `extern "C"` function per operation, called directly from translated
//! code, which runs the interpreter's own [`Hart::fp_compute`] for that
//! constant operation (so fflags, NaNs and rounding modes, the dynamic
//! `frm` included, are the interpreter's bit for bit) without the block
//! lookup and decode dispatch of the generic helper.

use crate::privileged::mstatus;
use crate::Hart;
use rvnvmm_isa::{Insn, Op};

/// A helper: `(hart, operands) -> 0` when the instruction is done, `1`
/// when it changed nothing and must go through the generic helper (the FP
/// state not Dirty, or a rounding mode that traps).
pub(crate) type FpHelper = unsafe extern "C" fn(*mut Hart, u32) -> u64;

/// An operation a helper is made for.
trait FpOp {
    const OP: Op;
}

/// Packs the register and rounding-mode fields of `ins` for a helper.
pub(crate) fn operands(ins: &Insn) -> u32 {
    u32::from(ins.rd & 31)
        | u32::from(ins.rs1 & 31) << 5
        | u32::from(ins.rs2 & 31) << 10
        | u32::from(ins.rs3 & 31) << 15
        | u32::from(ins.rounding_mode()) << 20
}

/// Runs operation `O::OP` with the packed `operands` on `hart`, as the
/// interpreter's `step` does (`fp_dirty`, then `exec_fp`, then the integer
/// result to `rd`), except that it refuses (returns 1, having changed
/// nothing) where the interpreter would change `mstatus` or trap.
///
/// # Safety
/// `hart` is the live hart the translated code runs, not otherwise
/// borrowed.
unsafe extern "C" fn fp_call<O: FpOp>(hart: *mut Hart, operands: u32) -> u64 {
    // SAFETY: the caller's contract.
    let hart = unsafe { &mut *hart };
    if hart.csrs.mstatus & mstatus::FS != mstatus::FS_DIRTY {
        return 1;
    }
    let field = |at: u32| (operands >> at) as u8 & 31;
    let ins = Insn {
        op: O::OP,
        rd: field(0),
        rs1: field(5),
        rs2: field(10),
        rs3: field(15),
        rm: (operands >> 20) as u8 & 7,
        len: 4,
        imm: 0,
    };
    let xa = hart.x[ins.rs1 as usize];
    match hart.fp_compute(&ins, xa) {
        Ok(None) => 0,
        Ok(Some(v)) => {
            hart.x[ins.rd as usize] = v;
            hart.x[0] = 0;
            0
        }
        Err(_) => 1,
    }
}

macro_rules! fp_helpers {
    ($($op:ident)*) => {
        /// The helper of an F or D computational operation, if it has one.
        pub(crate) fn helper(op: Op) -> Option<FpHelper> {
            match op {
                $(Op::$op => {
                    struct Made;
                    impl FpOp for Made {
                        const OP: Op = Op::$op;
                    }
                    Some(fp_call::<Made>)
                })*
                _ => None,
            }
        }
    };
}

fp_helpers! {
    FaddS FsubS FmulS FdivS FsqrtS FmaddS FmsubS FnmsubS FnmaddS
    FsgnjS FsgnjnS FsgnjxS FminS FmaxS
    FcvtSW FcvtSWu FcvtSL FcvtSLu FmvWX FcvtSD
    FaddD FsubD FmulD FdivD FsqrtD FmaddD FmsubD FnmsubD FnmaddD
    FsgnjD FsgnjnD FsgnjxD FminD FmaxD
    FcvtDS FcvtDW FcvtDWu FcvtDL FcvtDLu FmvDX
    FcvtWS FcvtWuS FcvtLS FcvtLuS FmvXW FclassS FeqS FltS FleS
    FcvtWD FcvtWuD FcvtLD FcvtLuD FmvXD FclassD FeqD FltD FleD
}
