//! A small assembler: encoders for the instructions rvnvmm generates itself
//! (the built-in microbenchmarks' loops). Registers are numbers 0..=31.

fn i_type(op: u32, f3: u32, rd: u8, rs1: u8, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 as u32) << 15 | f3 << 12 | (rd as u32) << 7 | op
}

fn r_type(op: u32, f3: u32, f7: u32, rd: u8, rs1: u8, rs2: u8) -> u32 {
    f7 << 25 | (rs2 as u32) << 20 | (rs1 as u32) << 15 | f3 << 12 | (rd as u32) << 7 | op
}

/// `addi rd, rs1, imm` (imm in -2048..=2047).
pub fn addi(rd: u8, rs1: u8, imm: i32) -> u32 {
    debug_assert!((-2048..=2047).contains(&imm));
    i_type(0x13, 0, rd, rs1, imm)
}

/// `add rd, rs1, rs2`.
pub fn add(rd: u8, rs1: u8, rs2: u8) -> u32 {
    r_type(0x33, 0, 0, rd, rs1, rs2)
}

/// `lui rd, imm20` (loads `imm20 << 12`, sign-extended).
pub fn lui(rd: u8, imm20: u32) -> u32 {
    (imm20 & 0xf_ffff) << 12 | (rd as u32) << 7 | 0x37
}

/// `slli rd, rs1, shamt` (0..=63).
pub fn slli(rd: u8, rs1: u8, shamt: u32) -> u32 {
    i_type(0x13, 1, rd, rs1, (shamt & 63) as i32)
}

/// `ld rd, imm(rs1)`.
pub fn ld(rd: u8, rs1: u8, imm: i32) -> u32 {
    i_type(0x03, 3, rd, rs1, imm)
}

/// `lw rd, imm(rs1)`.
pub fn lw(rd: u8, rs1: u8, imm: i32) -> u32 {
    i_type(0x03, 2, rd, rs1, imm)
}

fn s_type(f3: u32, rs2: u8, rs1: u8, imm: i32) -> u32 {
    let imm = imm as u32;
    ((imm >> 5) & 0x7f) << 25
        | (rs2 as u32) << 20
        | (rs1 as u32) << 15
        | f3 << 12
        | (imm & 0x1f) << 7
        | 0x23
}

/// `sd rs2, imm(rs1)`.
pub fn sd(rs2: u8, rs1: u8, imm: i32) -> u32 {
    s_type(3, rs2, rs1, imm)
}

/// `sw rs2, imm(rs1)`.
pub fn sw(rs2: u8, rs1: u8, imm: i32) -> u32 {
    s_type(2, rs2, rs1, imm)
}

/// `bne rs1, rs2, offset` (even, within ±4 KiB).
pub fn bne(rs1: u8, rs2: u8, offset: i32) -> u32 {
    let o = offset as u32;
    ((o >> 12) & 1) << 31
        | ((o >> 5) & 0x3f) << 25
        | (rs2 as u32) << 20
        | (rs1 as u32) << 15
        | 1 << 12
        | ((o >> 1) & 0xf) << 8
        | ((o >> 11) & 1) << 7
        | 0x63
}

/// `csrrs rd, csr, x0` (read a CSR: `rdcycle`, `rdtime`, ...).
pub fn csrr(rd: u8, csr: u16) -> u32 {
    i_type(0x73, 2, rd, 0, csr as i32)
}

/// `ecall`.
pub const ECALL: u32 = 0x0000_0073;

/// Loads the 64-bit constant `value` into `rd` (lui/addi/slli sequence).
pub fn li(rd: u8, value: u64) -> Vec<u32> {
    let v = value as i64;
    if (-2048..=2047).contains(&v) {
        return vec![addi(rd, 0, v as i32)];
    }
    if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        let lo = ((v << 52) >> 52) as i32;
        let hi = ((v - lo as i64) >> 12) as u32;
        let mut out = vec![lui(rd, hi)];
        if lo != 0 {
            // addiw keeps the 32-bit sign extension lui gave.
            out.push(i_type(0x1b, 0, rd, rd, lo));
        }
        return out;
    }
    // Build the upper part, shift, then add the low 12 bits.
    let lo = ((v << 52) >> 52) as i32;
    let upper = (v - lo as i64) >> 12;
    let mut out = li(rd, upper as u64);
    out.push(slli(rd, rd, 12));
    if lo != 0 {
        out.push(addi(rd, rd, lo));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, Op};

    #[test]
    fn encodings_decode_back() {
        let a = decode(addi(10, 11, -5));
        assert_eq!((a.op, a.rd, a.rs1, a.imm), (Op::Addi, 10, 11, -5));
        let s = decode(sd(6, 7, -8));
        assert_eq!((s.op, s.rs2, s.rs1, s.imm), (Op::Sd, 6, 7, -8));
        let l = decode(ld(6, 7, 16));
        assert_eq!((l.op, l.rd, l.rs1, l.imm), (Op::Ld, 6, 7, 16));
        let s = decode(sw(6, 7, 40));
        assert_eq!((s.op, s.rs2, s.rs1, s.imm), (Op::Sw, 6, 7, 40));
        let l = decode(lw(6, 7, -16));
        assert_eq!((l.op, l.rd, l.rs1, l.imm), (Op::Lw, 6, 7, -16));
        let b = decode(bne(5, 0, -12));
        assert_eq!((b.op, b.rs1, b.rs2, b.imm), (Op::Bne, 5, 0, -12));
        let c = decode(csrr(5, 0xc00));
        assert_eq!((c.op, c.rd, c.imm), (Op::Csrrs, 5, 0xc00));
        assert_eq!(decode(add(1, 2, 3)).op, Op::Add);
    }

    /// Interprets a li sequence the simple way to check the constant.
    fn eval_li(words: &[u32]) -> u64 {
        let mut r: u64 = 0;
        for &w in words {
            let i = decode(w);
            r = match i.op {
                Op::Addi => r.wrapping_add(i.imm as u64),
                Op::Addiw => (r.wrapping_add(i.imm as u64) as i32) as i64 as u64,
                Op::Lui => i.imm as u64,
                Op::Slli => r << i.imm,
                op => panic!("unexpected {op:?}"),
            };
        }
        r
    }

    #[test]
    fn li_loads_any_constant() {
        for v in [
            0u64,
            1,
            2047,
            2048,
            u64::MAX,
            0x8000_0000,
            0xC000_0000,
            0x1_4000_0000,
            0x7fff_ffff,
            0x1234_5678_9abc_def0,
        ] {
            assert_eq!(eval_li(&li(5, v)), v, "{v:#x}");
        }
    }
}
