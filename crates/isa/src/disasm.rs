//! GNU-objdump-style disassembly of decoded instructions (for `--trace`).
//!
//! The output follows `objdump -d -M no-aliases`: ABI register names, no
//! pseudo-instructions (`addi a0,zero,1`, not `li a0,1`), decimal offsets and
//! immediates, hexadecimal shift amounts and `lui`/`auipc` immediates, CSR
//! names where known, and the rounding mode only when it is not dynamic
//! (reserved modes 5 and 6 print as `unknown`, as objdump does).
//! Compressed instructions print as their 32-bit expansions.
//!
//! [`disasm`] prints branch and jump targets as absolute hexadecimal
//! addresses (like objdump, without the `0x` prefix and without the
//! `<symbol>` annotation); the [`Display`](core::fmt::Display) impl for
//! [`Insn`] has no PC and prints them relative to the instruction as `.+N` /
//! `.-N` (decimal bytes).

use core::fmt::{self, Write};

use crate::csr::csr_name;
use crate::insns::Format;
use crate::op::{FenceSets, Insn, Op, Ordering};

/// ABI names of the integer registers.
pub const XREG_NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// ABI names of the floating-point registers.
pub const FREG_NAMES: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];

#[inline]
fn x(r: u8) -> &'static str {
    XREG_NAMES[(r & 31) as usize]
}

#[inline]
fn f(r: u8) -> &'static str {
    FREG_NAMES[(r & 31) as usize]
}

/// The assembler mnemonic of `op` (without `.aq`/`.rl` suffixes), from
/// the instruction table.
pub fn mnemonic(op: Op) -> &'static str {
    op.mnemonic()
}

/// How to print branch and jump targets.
#[derive(Clone, Copy)]
enum Target {
    /// `.+N` / `.-N` relative to the instruction.
    Relative,
    /// Absolute address (hex, no prefix) given the instruction's PC.
    Absolute(u64),
}

/// A rounding-mode operand (`,rne` ...), empty for dynamic.
struct Rm(u8);

impl fmt::Display for Rm {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => out.write_str(",rne"),
            1 => out.write_str(",rtz"),
            2 => out.write_str(",rdn"),
            3 => out.write_str(",rup"),
            4 => out.write_str(",rmm"),
            7 => Ok(()),
            // Reserved rounding modes 5 and 6, spelled like objdump.
            _ => out.write_str(",unknown"),
        }
    }
}

/// The rounding-mode operand of a conversion that is always exact
/// (`fcvt.d.s`, `fcvt.d.w`, `fcvt.d.wu`): GNU tools encode these with
/// `rm = 0` and omit it when printing, so only a non-zero field is shown.
struct ExactRm(u8);

impl fmt::Display for ExactRm {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => Ok(()),
            7 => out.write_str(",dyn"),
            n => Rm(n).fmt(out),
        }
    }
}

/// The operand of `fli.{h,s,d}` by index, as GNU objdump prints it: `min`,
/// `inf`, `nan`, or the value in C's `%a` notation (the same text for every
/// format).
const FLI_OPERANDS: [&str; 32] = [
    "-0x1p+0", "min", "0x1p-16", "0x1p-15", "0x1p-8", "0x1p-7", "0x1p-4", "0x1p-3", "0x1p-2",
    "0x1.4p-2", "0x1.8p-2", "0x1.cp-2", "0x1p-1", "0x1.4p-1", "0x1.8p-1", "0x1.cp-1", "0x1p+0",
    "0x1.4p+0", "0x1.8p+0", "0x1.cp+0", "0x1p+1", "0x1.4p+1", "0x1.8p+1", "0x1p+2", "0x1p+3",
    "0x1p+4", "0x1p+7", "0x1p+8", "0x1p+15", "0x1p+16", "inf", "nan",
];

/// A CSR operand: its name if known, else `0x...`.
struct CsrName(i64);

impl fmt::Display for CsrName {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match csr_name(self.0 as u16) {
            Some(name) if (0..4096).contains(&self.0) => out.write_str(name),
            _ => write!(out, "{:#x}", self.0),
        }
    }
}

/// The `.aq`/`.rl` suffix of an atomic.
fn aqrl(insn: &Insn) -> &'static str {
    match insn.ordering() {
        Ordering {
            aq: false,
            rl: false,
        } => "",
        Ordering {
            aq: false,
            rl: true,
        } => ".rl",
        Ordering {
            aq: true,
            rl: false,
        } => ".aq",
        Ordering { aq: true, rl: true } => ".aqrl",
    }
}

/// A fence predecessor/successor set (`iorw` subset, `0` if empty).
struct FenceSet(u8);

impl fmt::Display for FenceSet {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 & 15 == 0 {
            return out.write_str("0");
        }
        for (bit, c) in [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')] {
            if self.0 & bit != 0 {
                out.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// Writes the disassembly of `insn` to `out`, in the operand format the
/// instruction table gives its operation.
fn write_insn<W: Write>(out: &mut W, insn: &Insn, target: Target) -> fmt::Result {
    use Format::*;
    let m = insn.op.mnemonic();
    let (rd, rs1, rs2, rs3, rm, imm) = (insn.rd, insn.rs1, insn.rs2, insn.rs3, insn.rm, insn.imm);
    let tgt = |out: &mut W| match target {
        Target::Relative if imm < 0 => write!(out, ".-{}", imm.unsigned_abs()),
        Target::Relative => write!(out, ".+{imm}"),
        Target::Absolute(pc) => write!(out, "{:x}", pc.wrapping_add(imm as u64)),
    };
    match insn.op.format() {
        Bare => out.write_str(m),
        U => write!(out, "{m} {},{:#x}", x(rd), (imm >> 12) & 0xf_ffff),
        J => {
            write!(out, "{m} {},", x(rd))?;
            tgt(out)
        }
        Jalr | LoadX => write!(out, "{m} {},{imm}({})", x(rd), x(rs1)),
        B => {
            write!(out, "{m} {},{},", x(rs1), x(rs2))?;
            tgt(out)
        }
        LoadF => write!(out, "{m} {},{imm}({})", f(rd), x(rs1)),
        StoreX => write!(out, "{m} {},{imm}({})", x(rs2), x(rs1)),
        StoreF => write!(out, "{m} {},{imm}({})", f(rs2), x(rs1)),
        Imm => write!(out, "{m} {},{},{imm}", x(rd), x(rs1)),
        Shamt => write!(out, "{m} {},{},{imm:#x}", x(rd), x(rs1)),
        Rrr => write!(out, "{m} {},{},{}", x(rd), x(rs1), x(rs2)),
        Rr => write!(out, "{m} {},{}", x(rd), x(rs1)),
        Prefetch => write!(out, "{m} {imm}({})", x(rs1)),
        MopR => write!(out, "{m}.{imm} {},{}", x(rd), x(rs1)),
        MopRr => write!(out, "{m}.{imm} {},{},{}", x(rd), x(rs1), x(rs2)),
        CMop => write!(out, "{m}.{imm}"),
        Fence => match insn.fence() {
            FenceSets {
                pred: 3,
                succ: 3,
                fm: 8,
            } => out.write_str("fence.tso"),
            f => write!(out, "{m} {},{}", FenceSet(f.pred), FenceSet(f.succ)),
        },
        Csr if insn.op == Op::Csrrw && rd == 0 && rs1 == 0 && imm == 0xc00 => {
            out.write_str("unimp")
        }
        Csr => write!(out, "{m} {},{},{}", x(rd), CsrName(imm), x(rs1)),
        CsrI => write!(out, "{m} {},{},{rs1}", x(rd), CsrName(imm)),
        Lr => write!(out, "{m}{} {},({})", aqrl(insn), x(rd), x(rs1)),
        Amo => write!(out, "{m}{} {},{},({})", aqrl(insn), x(rd), x(rs2), x(rs1)),
        F4 => write!(
            out,
            "{m} {},{},{},{}{}",
            f(rd),
            f(rs1),
            f(rs2),
            f(rs3),
            Rm(rm)
        ),
        F3Rm => write!(out, "{m} {},{},{}{}", f(rd), f(rs1), f(rs2), Rm(rm)),
        F2Rm => write!(out, "{m} {},{}{}", f(rd), f(rs1), Rm(rm)),
        F2Exact => write!(out, "{m} {},{}{}", f(rd), f(rs1), ExactRm(rm)),
        F3 => write!(out, "{m} {},{},{}", f(rd), f(rs1), f(rs2)),
        XFRm => write!(out, "{m} {},{}{}", x(rd), f(rs1), Rm(rm)),
        FXRm => write!(out, "{m} {},{}{}", f(rd), x(rs1), Rm(rm)),
        FXExact => write!(out, "{m} {},{}{}", f(rd), x(rs1), ExactRm(rm)),
        XF => write!(out, "{m} {},{}", x(rd), f(rs1)),
        XFF => write!(out, "{m} {},{},{}", x(rd), f(rs1), f(rs2)),
        FX => write!(out, "{m} {},{}", f(rd), x(rs1)),
        Fli => write!(out, "{m} {},{}", f(rd), FLI_OPERANDS[rs1 as usize & 31]),
        Sfence => write!(out, "{m} {},{}", x(rs1), x(rs2)),
        Cflush => write!(out, "{m} {}", x(rs1)),
        Cbo => write!(out, "{m} ({})", x(rs1)),
    }
}

/// Disassembles `insn`, located at `pc`, in GNU objdump (`-M no-aliases`)
/// style; branch and jump targets are printed as absolute hex addresses.
pub fn disasm(insn: &Insn, pc: u64) -> String {
    let mut s = String::with_capacity(32);
    // Writing to a String cannot fail.
    let _ = write_insn(&mut s, insn, Target::Absolute(pc));
    s
}

impl fmt::Display for Insn {
    /// objdump-style text with branch/jump targets relative to the
    /// instruction (`.+16`, `.-8`).
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_insn(out, self, Target::Relative)
    }
}

#[cfg(test)]
mod tests {
    //! Texts are compared with `objdump -d -M no-aliases` (binutils 2.40)
    //! output rather than objdump's default alias spelling (`li`, `mv`, `ret`,
    //! ...): the no-aliases form is a fixed function of the encoding, which is
    //! what the emulator's trace should show.

    use super::*;
    use crate::decode::decode;
    use crate::testdata::{RV32, RVC};

    #[test]
    fn matches_objdump_rv32() {
        for &(pc, w, text) in RV32 {
            assert_eq!(disasm(&decode(w), pc), text, "{w:#010x} at {pc:#x}");
        }
    }

    #[test]
    fn matches_objdump_rvc() {
        // Compressed instructions print as their 32-bit expansions.
        for &(h, w, pc, text) in RVC {
            assert_eq!(disasm(&decode(h as u32), pc), text, "{h:#06x} ({w:#010x})");
        }
    }

    #[test]
    fn display_examples() {
        let d = |w: u32| decode(w).to_string();
        assert_eq!(d(0x00150513), "addi a0,a0,1");
        assert_eq!(d(0x00813083), "ld ra,8(sp)");
        assert_eq!(d(0x02b57553), "fadd.d fa0,fa0,fa1");
        assert_eq!(d(0xc2051553), "fcvt.w.d a0,fa0,rtz");
        assert_eq!(d(0xc0002573), "csrrs a0,cycle,zero");
        assert_eq!(d(0x7c02d573), "csrrwi a0,0x7c0,5");
        assert_eq!(d(0xfc050073), "cflush.d.l1 a0");
        assert_eq!(d(0xcc050073), "cflush.d.l1 a0");
        assert_eq!(d(0x0025200f), "cbo.flush (a0)");
        assert_eq!(d(0x0005200f), "cbo.inval (a0)");
        assert_eq!(d(0x0015200f), "cbo.clean (a0)");
        assert_eq!(d(0x0045a00f), "cbo.zero (a1)");
        assert_eq!(d(0x00000000), "illegal");
        assert_eq!(d(0xffffffff), "illegal");
        assert_eq!(d(0xc0001073), "unimp");
        assert_eq!(d(0x0ff0000f), "fence iorw,iorw");
        assert_eq!(d(0x8330000f), "fence.tso");
        assert_eq!(d(0x0000000f), "fence 0,0");
        assert_eq!(d(0x1605a52f), "lr.w.aqrl a0,(a1)");
        // Relative targets in Display.
        assert_eq!(d(0x06b50e63), "beq a0,a1,.+124");
        assert_eq!(d(0xffdff0ef), "jal ra,.-4");
        assert_eq!(d(0x0000006f), "jal zero,.+0");
        // Compressed: c.addi a0,1 / c.jr ra / c.j .-2
        assert_eq!(d(0x0505), "addi a0,a0,1");
        assert_eq!(d(0x8082), "jalr zero,0(ra)");
        assert_eq!(d(0xbffd), "jal zero,.-2");
        // Reserved rounding modes are shown numerically.
        assert_eq!(d(0x02b55553), "fadd.d fa0,fa0,fa1,unknown");
        // Exact conversions omit rm = 0 (what GNU as emits) but show others.
        assert_eq!(d(0xd2050553), "fcvt.d.w fa0,a0");
        assert_eq!(d(0xd2057553), "fcvt.d.w fa0,a0,dyn");
        assert_eq!(d(0x42059553), "fcvt.d.s fa0,fa1,rtz");
    }

    #[test]
    fn absolute_targets() {
        let i = decode(0x06b50e63); // beq a0,a1,.+124
        assert_eq!(disasm(&i, 0), "beq a0,a1,7c");
        assert_eq!(disasm(&i, 0x8000_0000), "beq a0,a1,8000007c");
        let j = decode(0xffdff0ef); // jal ra,.-4
        assert_eq!(disasm(&j, 0x1000), "jal ra,ffc");
        assert_eq!(disasm(&j, 0), "jal ra,fffffffffffffffc");
    }

    #[test]
    fn every_op_prints() {
        // Pseudo-random words through decode + both printers: no panics and
        // never an empty string.
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let i = decode((s >> 32) as u32);
            assert!(!disasm(&i, s).is_empty());
            assert!(!i.to_string().is_empty());
        }
    }
}
