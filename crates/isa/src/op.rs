//! The decoded form of one RISC-V instruction.

pub use crate::insns::Op;

/// One decoded instruction. Fields an operation does not use are zero.
///
/// * `imm`: the sign-extended immediate (branch/jump offsets relative to the
///   instruction's PC, shift amounts for shifts, the CSR number for Zicsr, the
///   zero-extended 5-bit value in `rs1` for the `*i` CSR forms, the bit
///   index of the `b*i` forms, the offset of `prefetch.*`, N of `mop.r.N`,
///   `mop.rr.N` and `c.mop.N`, the `slti` immediate of a marker).
/// * `rm`: the rounding-mode field of F/D operations (7 = dynamic); for
///   atomics bit 1 is `aq` and bit 0 is `rl`; for `fence` the pred/succ bits
///   (`pred << 4 | succ`, each `i o r w` from bit 3 down), with the `fm`
///   field in `imm` (8 = `fence.tso`).
/// * `rs1` of `fli.{h,s,d}` is the constant's index (0..=31), not a
///   register.
/// * `len`: 2 for a compressed encoding, 4 otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// The operation.
    pub op: Op,
    /// Destination register (integer or FP, depending on `op`).
    pub rd: u8,
    /// First source register (or the 5-bit immediate of `csrr*i`).
    pub rs1: u8,
    /// Second source register.
    pub rs2: u8,
    /// Third source register (fused multiply-add only).
    pub rs3: u8,
    /// Rounding mode / `aq`-`rl` bits / fence sets; see above.
    pub rm: u8,
    /// Encoding length in bytes: 2 or 4.
    pub len: u8,
    /// Immediate; see above.
    pub imm: i64,
}

const _: () = assert!(core::mem::size_of::<Insn>() == 16);

impl Insn {
    /// An illegal instruction of the given length.
    pub const fn illegal(len: u8) -> Insn {
        Insn {
            op: Op::Illegal,
            rd: 0,
            rs1: 0,
            rs2: 0,
            rs3: 0,
            rm: 0,
            len,
            imm: 0,
        }
    }
}
