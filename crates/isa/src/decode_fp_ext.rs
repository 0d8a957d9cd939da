//! The optional scalar floating-point extensions in the OP-FP major opcode,
//! Zfh/Zfhmin (half precision, `fmt` = 2) and Zfa: which of them an
//! operation needs, and whether a hart has it. (Their encodings are in the
//! instruction table, `insns/zfh.rs` and `insns/zfa.rs`.)
//!
//! Zfa's `fmvh.x.d` and `fmvp.d.x` exist on RV32 only; on RV64 their
//! encodings are reserved and decode to [`Op::Illegal`].

use crate::ext::{Ext, ExtSet};
use crate::op::Op;

/// Which optional extensions an operation decoded here requires. The
/// executor turns an operation whose extensions are disabled into an
/// illegal instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpExtension {
    /// Zfhmin (also provided by Zfh): `flh`, `fsh`, `fmv.x.h`, `fmv.h.x`
    /// and the conversions between half and single/double.
    Zfhmin,
    /// Zfh: the rest of the half-precision instructions.
    Zfh,
    /// Zfa on single or double precision.
    Zfa,
    /// Zfa's half-precision forms: Zfa and Zfh both.
    ZfaAndZfh,
}

/// The optional floating-point extension `op` belongs to, or `None` for
/// base-ISA and other operations (from the instruction table).
#[inline]
pub fn fp_extension(op: Op) -> Option<FpExtension> {
    op.info().fp
}

/// Whether a hart implementing `isa` has every extension `op` (one of this
/// module's operations) needs: Zfhmin's operations come with Zfhmin or
/// Zfh, Zfa's half forms need Zfh as well, and the forms that read or write
/// a double need D.
pub(crate) fn enabled(op: Op, isa: ExtSet) -> bool {
    let needs_d = op.info().needs_d;
    let base = match fp_extension(op) {
        None => return true,
        Some(FpExtension::Zfhmin) => isa.has(Ext::Zfhmin) || isa.has(Ext::Zfh),
        Some(FpExtension::Zfh) => isa.has(Ext::Zfh),
        Some(FpExtension::Zfa) => isa.has(Ext::Zfa),
        Some(FpExtension::ZfaAndZfh) => isa.has(Ext::Zfa) && isa.has(Ext::Zfh),
    };
    base && (!needs_d || isa.has(Ext::D))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;
    use crate::disasm::{disasm, mnemonic};
    use crate::op::Insn;
    use crate::testdata_zfh::RV32_ZFH;

    #[test]
    fn zfh_matches_objdump() {
        assert!(RV32_ZFH.len() > 200);
        let mut seen = std::collections::HashSet::new();
        for &(pc, w, text) in RV32_ZFH {
            let i = decode(w);
            assert!(
                matches!(
                    fp_extension(i.op),
                    Some(FpExtension::Zfh | FpExtension::Zfhmin)
                ),
                "{w:#010x} {text}: {:?}",
                i.op
            );
            assert_eq!(disasm(&i, pc), text, "{w:#010x}");
            seen.insert(mnemonic(i.op));
        }
        // Every Zfh/Zfhmin operation is in the table.
        assert_eq!(seen.len(), 34, "{seen:?}");
    }

    /// Zfa encodings (binutils 2.40 cannot assemble them) with their text
    /// in GNU objdump's `-M no-aliases` syntax (binutils >= 2.41: `fli`
    /// operands as `min`/`inf`/`nan` or C's `%a`, `fround` showing a
    /// non-dynamic rounding mode, `fcvtmod.w.d` always showing `rtz`).
    /// Words built from the specification's field layout.
    const ZFA: &[(u32, &str)] = &[
        (0xf0100553, "fli.s fa0,-0x1p+0"),
        (0xf01085d3, "fli.s fa1,min"),
        (0xf0110553, "fli.s fa0,0x1p-16"),
        (0xf0148553, "fli.s fa0,0x1.4p-2"),
        (0xf0180553, "fli.s fa0,0x1p+0"),
        (0xf01b0553, "fli.s fa0,0x1.8p+1"),
        (0xf01e8553, "fli.s fa0,0x1p+16"),
        (0xf01f0553, "fli.s fa0,inf"),
        (0xf01f8553, "fli.s fa0,nan"),
        (0xf2108553, "fli.d fa0,min"),
        (0xf21e0553, "fli.d fa0,0x1p+15"),
        (0xf41f8fd3, "fli.h ft11,nan"),
        (0xf4178553, "fli.h fa0,0x1.cp-1"),
        (0x28c5a553, "fminm.s fa0,fa1,fa2"),
        (0x28c5b553, "fmaxm.s fa0,fa1,fa2"),
        (0x2ac5a553, "fminm.d fa0,fa1,fa2"),
        (0x2cc5b553, "fmaxm.h fa0,fa1,fa2"),
        (0x4045f553, "fround.s fa0,fa1"),
        (0x40459553, "fround.s fa0,fa1,rtz"),
        (0x4055c553, "froundnx.s fa0,fa1,rmm"),
        (0x42458553, "fround.d fa0,fa1,rne"),
        (0x4255f553, "froundnx.d fa0,fa1"),
        (0x4445a553, "fround.h fa0,fa1,rdn"),
        (0x4455b553, "froundnx.h fa0,fa1,rup"),
        (0xc2859553, "fcvtmod.w.d a0,fa1,rtz"),
        (0xa0c5c553, "fleq.s a0,fa1,fa2"),
        (0xa0c5d553, "fltq.s a0,fa1,fa2"),
        (0xa2c5c553, "fleq.d a0,fa1,fa2"),
        (0xa4c5d553, "fltq.h a0,fa1,fa2"),
    ];

    #[test]
    fn zfa_decodes_and_prints_like_objdump() {
        for &(w, text) in ZFA {
            let i = decode(w);
            assert_ne!(i.op, Op::Illegal, "{w:#010x} {text}");
            assert!(fp_extension(i.op).is_some(), "{w:#010x}");
            assert_eq!(disasm(&i, 0), text, "{w:#010x}");
        }
        let fli = decode(0xf01e8553);
        assert_eq!((fli.op, fli.rd, fli.rs1), (Op::FliS, 10, 29));
        let fround = decode(0x40459553);
        assert_eq!((fround.op, fround.rs1, fround.rm), (Op::FroundS, 11, 1));
    }

    #[test]
    fn reserved_neighbours_are_illegal() {
        for w in [
            0xc2858553u32,        // fcvtmod.w.d with rne: reserved
            0xc285f553,           // ... with dyn
            0xe2158553,           // fmvh.x.d: RV32 only
            0xb2c58553,           // fmvp.d.x: RV32 only
            0xf0109553,           // fli.s with funct3 = 1
            0xf0200553,           // fmv.w.x with rs2 = 2
            0x4065f553,           // fcvt.s.* with rs2 = 6
            0x4235f553,           // fcvt.d.* with rs2 = 3 (quad)
            0x4435f553,           // fcvt.h.q
            0x4405f553 | 2 << 20, // fcvt.h.h
            0x2cc5c553,           // fmin.h funct3 = 4
            0xa4c5e553,           // fle.h funct3 = 6
            0x5c15f553,           // fsqrt.h with rs2 != 0
            0xc445f553,           // fcvt.w.h with rs2 = 4
            0xe4158553,           // fmv.x.h with rs2 != 0
            0xe405a553,           // fmv.x.h funct3 = 2
            0x26c58553,           // OP-FP fmt = 3 (quad): fsgnj.q
            0x06c5f543,           // fmadd.q
        ] {
            assert_eq!(decode(w), Insn::illegal(4), "{w:#010x}");
        }
    }

    #[test]
    fn disabled_extensions_make_their_instructions_illegal() {
        use crate::decode::decode_for;
        let isa = |s: &str| s.parse::<ExtSet>().unwrap();
        let fadd_h = 0x04c5_f553;
        let flh = 0x0005_1507;
        let fcvt_d_h = 0x4225_8553;
        let fli_s = 0xf010_0553;
        let fli_d = 0xf210_8553;
        let fround_h = 0x4445_a553;
        let gc = isa("rv64gc");
        for w in [fadd_h, flh, fcvt_d_h, fli_s, fli_d, fround_h] {
            assert_eq!(decode_for(w, gc), Insn::illegal(4), "{w:#010x}");
            assert_ne!(decode_for(w, ExtSet::ALL).op, Op::Illegal, "{w:#010x}");
        }
        // Zfhmin alone: loads, moves and format conversions, no arithmetic.
        let min = isa("rv64gc_zfhmin");
        assert_eq!(decode_for(flh, min).op, Op::Flh);
        assert_eq!(decode_for(fcvt_d_h, min).op, Op::FcvtDH);
        assert_eq!(decode_for(fadd_h, min).op, Op::Illegal);
        // Zfh includes Zfhmin.
        let zfh = isa("rv64gc_zfh");
        assert!(zfh.has(Ext::Zfhmin));
        assert_eq!(decode_for(flh, zfh).op, Op::Flh);
        assert_eq!(decode_for(fadd_h, zfh).op, Op::FaddH);
        assert_eq!(decode_for(fround_h, zfh).op, Op::Illegal);
        // Zfa's half forms need Zfh too; its double forms need D.
        let zfa = isa("rv64gc_zfa");
        assert_eq!(decode_for(fli_s, zfa).op, Op::FliS);
        assert_eq!(decode_for(fround_h, zfa).op, Op::Illegal);
        assert_eq!(decode_for(fround_h, isa("rv64gc_zfa_zfh")).op, Op::FroundH);
        let no_d = isa("rv64imafc_zfa_zfhmin");
        assert_eq!(decode_for(fli_s, no_d).op, Op::FliS);
        assert_eq!(decode_for(fli_d, no_d).op, Op::Illegal);
        assert_eq!(decode_for(fcvt_d_h, no_d).op, Op::Illegal);
        assert_eq!(decode_for(0x4025_8553, no_d).op, Op::FcvtSH);
    }

    #[test]
    fn extensions_of_ops() {
        assert_eq!(fp_extension(Op::Flh), Some(FpExtension::Zfhmin));
        assert_eq!(fp_extension(Op::FcvtHD), Some(FpExtension::Zfhmin));
        assert_eq!(fp_extension(Op::FaddH), Some(FpExtension::Zfh));
        assert_eq!(fp_extension(Op::FcvtmodWD), Some(FpExtension::Zfa));
        assert_eq!(fp_extension(Op::FroundH), Some(FpExtension::ZfaAndZfh));
        assert_eq!(fp_extension(Op::FaddD), None);
        assert_eq!(fp_extension(Op::Add), None);
        assert_eq!(crate::op_extension(Op::FroundH), Some(Ext::Zfa));
        assert_eq!(crate::op_extension(Op::FmvHX), Some(Ext::Zfhmin));
        assert_eq!(crate::op_extension(Op::FsqrtH), Some(Ext::Zfh));
    }

    #[test]
    fn advertised_to_guests() {
        let all = ExtSet::ALL;
        assert!(all.has(Ext::Zfh) && all.has(Ext::Zfhmin) && all.has(Ext::Zfa));
        let probe = all.hwprobe_ima_ext_0();
        // RISCV_HWPROBE_EXT_ZFH, _ZFHMIN, _ZFA.
        for bit in [27, 28, 32] {
            assert_ne!(probe & 1 << bit, 0, "bit {bit}");
        }
        assert_eq!(
            ExtSet::RV64GC.hwprobe_ima_ext_0() & (1 << 27 | 1 << 28 | 1 << 32),
            0
        );
        assert!(all.to_string().contains("_zfa_zfh_zfhmin_"), "{all}");
        let names = all.names();
        assert!(names.contains(&"zfa") && names.contains(&"zfh") && names.contains(&"zfhmin"));
        // Not in HWCAP: it has single letters only.
        assert_eq!(all.hwcap(), ExtSet::RV64GC.hwcap());
        assert_eq!(
            "rv64i_zfh".parse::<ExtSet>().unwrap_err().to_string(),
            "extension 'zfh' needs f"
        );
    }
}
