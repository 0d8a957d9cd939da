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
///
/// The storage is shared so that an `Insn` stays 16 bytes (four to a host
/// cache line in a decoded block); read the shared fields through the
/// typed views below ([`Insn::csr`], [`Insn::rounding_mode`],
/// [`Insn::ordering`], [`Insn::fence`], [`Insn::vector`]) rather than by
/// their bits. A view costs nothing: it is a mask or a shift of a byte
/// the interpreter loads anyway.
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

/// The memory-ordering bits of an atomic (`lr`, `sc`, AMOs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ordering {
    /// Acquire.
    pub aq: bool,
    /// Release.
    pub rl: bool,
}

/// The sets a `fence` orders (each `i o r w`, bit 3 down to 0) and its
/// `fm` field (8 = `fence.tso`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FenceSets {
    /// Predecessor set.
    pub pred: u8,
    /// Successor set.
    pub succ: u8,
    /// The fence mode.
    pub fm: u8,
}

impl FenceSets {
    /// Memory writes (`w`) in a set.
    pub const W: u8 = 1;
    /// Memory reads (`r`) in a set.
    pub const R: u8 = 2;
}

/// The fields of a vector (RVV) instruction besides its registers: kept
/// in `rm` (bit 0 `vm`, bits 3:1 `nf`, bits 6:4 the width code of the
/// element width), with `vtype`'s immediate (`vsetvli`, `vsetivli`) in
/// `imm`. Decoded by a vector operand format; read by the vector unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorFields {
    /// Unmasked (`vm` = 1): every element is active.
    pub vm: bool,
    /// Fields minus one of a segment load or store (0..=7).
    pub nf: u8,
    /// The `width` code of a vector load or store (0, 5, 6, 7 for 8, 16,
    /// 32, 64-bit elements).
    pub width: u8,
}

impl VectorFields {
    /// Packed as `Insn::rm` keeps them.
    pub const fn pack(self) -> u8 {
        self.vm as u8 | (self.nf & 7) << 1 | (self.width & 7) << 4
    }

    /// Unpacked from `Insn::rm`.
    pub const fn unpack(rm: u8) -> VectorFields {
        VectorFields {
            vm: rm & 1 != 0,
            nf: (rm >> 1) & 7,
            width: (rm >> 4) & 7,
        }
    }
}

impl Insn {
    /// The CSR number of a Zicsr instruction (0..=4095).
    #[inline(always)]
    pub const fn csr(&self) -> u16 {
        self.imm as u16 & 0xfff
    }

    /// The rounding-mode field of an F/D/Zfh/Zfa operation (7: dynamic,
    /// the `frm` CSR's).
    #[inline(always)]
    pub const fn rounding_mode(&self) -> u8 {
        self.rm & 7
    }

    /// The `aq`/`rl` bits of an atomic.
    #[inline(always)]
    pub const fn ordering(&self) -> Ordering {
        Ordering {
            aq: self.rm & 2 != 0,
            rl: self.rm & 1 != 0,
        }
    }

    /// The sets and mode of a `fence`.
    #[inline(always)]
    pub const fn fence(&self) -> FenceSets {
        FenceSets {
            pred: self.rm >> 4,
            succ: self.rm & 15,
            fm: self.imm as u8 & 15,
        }
    }

    /// The vector fields of an RVV instruction.
    #[inline(always)]
    pub const fn vector(&self) -> VectorFields {
        VectorFields::unpack(self.rm)
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn typed_views_read_the_shared_fields() {
        // csrrs a0, mstatus, a1
        assert_eq!(decode(0x3005_a573).csr(), 0x300);
        // fadd.d fa0, fa1, fa2, rtz
        assert_eq!(decode(0x02c5_9553).rounding_mode(), 1);
        // amoswap.w.aq a0, a2, (a1)
        let o = decode(0x0cc5_a52f).ordering();
        assert!(o.aq && !o.rl);
        // fence rw, w and fence.tso
        let f = decode(0x0310_000f).fence();
        assert_eq!(
            (f.pred, f.succ, f.fm),
            (FenceSets::R | FenceSets::W, FenceSets::W, 0)
        );
        assert_eq!(decode(0x8330_000f).fence().fm, 8);
    }

    #[test]
    fn vector_fields_round_trip_through_the_shared_byte() {
        for rm in 0..128u8 {
            let v = VectorFields::unpack(rm);
            assert_eq!(v.pack(), rm);
        }
        let v = VectorFields {
            vm: true,
            nf: 7,
            width: 6,
        };
        let insn = Insn {
            rm: v.pack(),
            ..Insn::illegal(4)
        };
        assert_eq!(insn.vector(), v);
        assert_eq!(core::mem::size_of::<Insn>(), 16);
    }
}
