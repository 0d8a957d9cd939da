//! The decoded form of one RISC-V instruction.

/// Every operation the emulator executes. Compressed instructions decode to
/// the same operations as their 32-bit expansions. (More than 256 of them:
/// `u16`, which still leaves [`Insn`] at 16 bytes.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
#[allow(missing_docs)]
#[rustfmt::skip]
pub enum Op {
    /// Not a valid or implemented encoding: raises illegal-instruction.
    Illegal,
    // RV64I
    Lui, Auipc, Jal, Jalr,
    Beq, Bne, Blt, Bge, Bltu, Bgeu,
    Lb, Lh, Lw, Ld, Lbu, Lhu, Lwu,
    Sb, Sh, Sw, Sd,
    Addi, Slti, Sltiu, Xori, Ori, Andi, Slli, Srli, Srai,
    Add, Sub, Sll, Slt, Sltu, Xor, Srl, Sra, Or, And,
    Addiw, Slliw, Srliw, Sraiw,
    Addw, Subw, Sllw, Srlw, Sraw,
    Fence, FenceI, Ecall, Ebreak,
    // Zicsr
    Csrrw, Csrrs, Csrrc, Csrrwi, Csrrsi, Csrrci,
    // M
    Mul, Mulh, Mulhsu, Mulhu, Div, Divu, Rem, Remu,
    Mulw, Divw, Divuw, Remw, Remuw,
    // A
    LrW, ScW, AmoswapW, AmoaddW, AmoxorW, AmoandW, AmoorW, AmominW, AmomaxW, AmominuW, AmomaxuW,
    LrD, ScD, AmoswapD, AmoaddD, AmoxorD, AmoandD, AmoorD, AmominD, AmomaxD, AmominuD, AmomaxuD,
    // F
    Flw, Fsw,
    FmaddS, FmsubS, FnmsubS, FnmaddS,
    FaddS, FsubS, FmulS, FdivS, FsqrtS,
    FsgnjS, FsgnjnS, FsgnjxS, FminS, FmaxS,
    FcvtWS, FcvtWuS, FcvtLS, FcvtLuS,
    FmvXW, FclassS, FeqS, FltS, FleS,
    FcvtSW, FcvtSWu, FcvtSL, FcvtSLu, FmvWX,
    // D
    Fld, Fsd,
    FmaddD, FmsubD, FnmsubD, FnmaddD,
    FaddD, FsubD, FmulD, FdivD, FsqrtD,
    FsgnjD, FsgnjnD, FsgnjxD, FminD, FmaxD,
    FcvtSD, FcvtDS,
    FcvtWD, FcvtWuD, FcvtLD, FcvtLuD,
    FmvXD, FclassD, FeqD, FltD, FleD,
    FcvtDW, FcvtDWu, FcvtDL, FcvtDLu, FmvDX,
    // Zfhmin (loads, stores, moves, conversions between formats) and Zfh
    Flh, Fsh,
    FmaddH, FmsubH, FnmsubH, FnmaddH,
    FaddH, FsubH, FmulH, FdivH, FsqrtH,
    FsgnjH, FsgnjnH, FsgnjxH, FminH, FmaxH,
    FcvtSH, FcvtHS, FcvtDH, FcvtHD,
    FcvtWH, FcvtWuH, FcvtLH, FcvtLuH,
    FmvXH, FclassH, FeqH, FltH, FleH,
    FcvtHW, FcvtHWu, FcvtHL, FcvtHLu, FmvHX,
    // Zfa
    FliH, FliS, FliD,
    FminmH, FmaxmH, FminmS, FmaxmS, FminmD, FmaxmD,
    FroundH, FroundnxH, FroundS, FroundnxS, FroundD, FroundnxD,
    FcvtmodWD,
    FleqH, FltqH, FleqS, FltqS, FleqD, FltqD,
    // Privileged
    Mret, Sret, Wfi, SfenceVma,
    // Cache control: SiFive CFLUSH.D.L1 (both encodings) and Zicbom / Zicboz.
    CflushDL1, CboClean, CboFlush, CboInval, CboZero,
    // Zba
    AddUw, Sh1add, Sh2add, Sh3add, Sh1addUw, Sh2addUw, Sh3addUw, SlliUw,
    // Zbb
    Andn, Orn, Xnor, Clz, Clzw, Ctz, Ctzw, Cpop, Cpopw, Max, Maxu, Min, Minu,
    SextB, SextH, ZextH, Rol, Rolw, Ror, Rori, Roriw, Rorw, OrcB, Rev8,
    // Zbc
    Clmul, Clmulh, Clmulr,
    // Zbs
    Bclr, Bclri, Bext, Bexti, Binv, Binvi, Bset, Bseti,
    // Zicond
    CzeroEqz, CzeroNez,
    // Hints: Zihintpause, Zihintntl, Zicbop (the offset in `imm`).
    Pause, NtlP1, NtlPall, NtlS1, NtlAll, PrefetchI, PrefetchR, PrefetchW,
    // Zimop / Zcmop: `imm` holds N.
    MopR, MopRr, CMop,
    // Zawrs
    WrsNto, WrsSto,
    // rvnvmm's region-of-interest marker (`slti x0, rs1, 0x7aN`, a custom
    // HINT; `crate::marker`): `imm` holds the immediate, `rs1` the argument.
    Marker,
}

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
