//! Expansion of RV64C (compressed, 16-bit) instructions to their 32-bit
//! equivalents.
//!
//! [`expand_compressed`] returns the canonical 32-bit encoding of the
//! instruction a 16-bit parcel stands for, so the rest of the decoder only has
//! to understand 32-bit encodings. HINT encodings (e.g. `c.addi x0, imm`,
//! `c.slli` with `rd = 0`, shifts by 0) expand to their (architecturally
//! no-op) 32-bit forms; reserved encodings yield `None`. Zcb's additions
//! expand to the Zba/Zbb/M/base instructions they abbreviate; Zcmop's
//! `c.mop.N` has no 32-bit equivalent and is decoded apart.

use crate::ext::Ext;

/// Bits `hi..=lo` of `h`, shifted down to bit 0.
#[inline(always)]
const fn bits(h: u32, hi: u32, lo: u32) -> u32 {
    (h >> lo) & ((1 << (hi - lo + 1)) - 1)
}

/// Bit `b` of `h`.
#[inline(always)]
const fn bit(h: u32, b: u32) -> u32 {
    (h >> b) & 1
}

/// Sign-extends the low `width` bits of `v`.
#[inline(always)]
const fn sext(v: u32, width: u32) -> i32 {
    ((v << (32 - width)) as i32) >> (32 - width)
}

#[inline(always)]
const fn r_type(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

#[inline(always)]
const fn i_type(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    (((imm as u32) & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

#[inline(always)]
const fn s_type(imm: i32, rs2: u32, rs1: u32, f3: u32, opc: u32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 31) << 7) | opc
}

#[inline(always)]
const fn b_type(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    let imm = imm as u32;
    (bit(imm, 12) << 31)
        | (bits(imm, 10, 5) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (bits(imm, 4, 1) << 8)
        | (bit(imm, 11) << 7)
        | 0x63
}

#[inline(always)]
const fn j_type(imm: i32, rd: u32) -> u32 {
    let imm = imm as u32;
    (bit(imm, 20) << 31)
        | (bits(imm, 10, 1) << 21)
        | (bit(imm, 11) << 20)
        | (bits(imm, 19, 12) << 12)
        | (rd << 7)
        | 0x6f
}

const OP_LOAD: u32 = 0x03;
const OP_LOAD_FP: u32 = 0x07;
const OP_IMM: u32 = 0x13;
const OP_IMM_32: u32 = 0x1b;
const OP_STORE: u32 = 0x23;
const OP_STORE_FP: u32 = 0x27;
const OP: u32 = 0x33;
const OP_LUI: u32 = 0x37;
const OP_32: u32 = 0x3b;
const OP_JALR: u32 = 0x67;

/// The Zcb unary operations (`100 111 rd' 11 op 01`) on `r`.
fn zcb_unary(op: u32, r: u32) -> Option<u32> {
    match op {
        0 => Some(i_type(0xff, r, 7, r, OP_IMM)), // c.zext.b: andi r,r,255
        1 => Some(i_type(0x604, r, 1, r, OP_IMM)), // c.sext.b: sext.b
        2 => Some(r_type(0x04, 0, r, 4, r, OP_32)), // c.zext.h: zext.h
        3 => Some(i_type(0x605, r, 1, r, OP_IMM)), // c.sext.h: sext.h
        4 => Some(r_type(0x04, 0, r, 0, r, OP_32)), // c.zext.w: add.uw r,r,zero
        5 => Some(i_type(-1, r, 4, r, OP_IMM)),   // c.not: xori r,r,-1
        _ => None,
    }
}

/// The compressed extension a 16-bit parcel belongs to: Zcb for its
/// additions, Zcmop for `c.mop.N`, Zcd for the FP double loads and stores,
/// Zca for the rest. (What the expansion needs besides, e.g. Zbb for
/// `c.sext.b`, is the expanded operation's own extension.)
pub fn compressed_extension(half: u16) -> Ext {
    let h = half as u32;
    match (h & 3, bits(h, 15, 13)) {
        (0, 4) => Ext::Zcb,
        (1, 4) if bits(h, 12, 10) == 7 && bits(h, 6, 5) >= 2 => Ext::Zcb,
        (1, 3) if h & 0xf0ff == 0x6081 => Ext::Zcmop,
        (0 | 2, 1 | 5) => Ext::Zcd,
        _ => Ext::Zca,
    }
}

/// Expands the 16-bit RV64C instruction `half` to the equivalent 32-bit
/// encoding.
///
/// Returns `None` when `half` is not a compressed instruction (its low two
/// bits are `0b11`) or is a reserved encoding: the all-zero parcel,
/// `c.addi4spn` with a zero immediate, `c.addiw`/`c.lwsp`/`c.ldsp` with
/// `rd = 0`, `c.lui`/`c.addi16sp` with a zero immediate, `c.jr` with
/// `rs1 = 0`, and the unassigned opcode points. RV64C has no `c.flw`,
/// `c.fsw`, `c.flwsp`, `c.fswsp` or `c.jal`; those slots are `c.ld`,
/// `c.sd`, `c.ldsp`, `c.sdsp` and `c.addiw`.
pub fn expand_compressed(half: u16) -> Option<u32> {
    let h = half as u32;
    let funct3 = bits(h, 15, 13);
    // Registers x8..x15 named by the 3-bit fields.
    let rd_p = bits(h, 4, 2) + 8;
    let rs1_p = bits(h, 9, 7) + 8;
    // Full 5-bit register fields.
    let rd = bits(h, 11, 7);
    let rs2 = bits(h, 6, 2);
    // The common 6-bit signed immediate imm[5] = h[12], imm[4:0] = h[6:2].
    let imm6 = sext((bit(h, 12) << 5) | bits(h, 6, 2), 6);
    match h & 3 {
        0 => {
            // Quadrant 0.
            let uimm_d = (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6);
            let uimm_w = (bits(h, 12, 10) << 3) | (bit(h, 6) << 2) | (bit(h, 5) << 6);
            match funct3 {
                0 => {
                    // c.addi4spn
                    let imm = (bits(h, 12, 11) << 4)
                        | (bits(h, 10, 7) << 6)
                        | (bit(h, 6) << 2)
                        | (bit(h, 5) << 3);
                    if imm == 0 {
                        return None;
                    }
                    Some(i_type(imm as i32, 2, 0, rd_p, OP_IMM))
                }
                1 => Some(i_type(uimm_d as i32, rs1_p, 3, rd_p, OP_LOAD_FP)), // c.fld
                2 => Some(i_type(uimm_w as i32, rs1_p, 2, rd_p, OP_LOAD)),    // c.lw
                3 => Some(i_type(uimm_d as i32, rs1_p, 3, rd_p, OP_LOAD)),    // c.ld
                4 => {
                    // Zcb loads and stores: uimm[1] = h[5], uimm[0] = h[6]
                    // (byte forms) or h[6] selects the signed load
                    // (halfword forms).
                    let ub = (bit(h, 5) << 1) | bit(h, 6);
                    let uh = bit(h, 5) << 1;
                    match (bits(h, 12, 10), bit(h, 6)) {
                        (0, _) => Some(i_type(ub as i32, rs1_p, 4, rd_p, OP_LOAD)), // c.lbu
                        (1, 0) => Some(i_type(uh as i32, rs1_p, 5, rd_p, OP_LOAD)), // c.lhu
                        (1, _) => Some(i_type(uh as i32, rs1_p, 1, rd_p, OP_LOAD)), // c.lh
                        (2, _) => Some(s_type(ub as i32, rd_p, rs1_p, 0, OP_STORE)), // c.sb
                        (3, 0) => Some(s_type(uh as i32, rd_p, rs1_p, 1, OP_STORE)), // c.sh
                        _ => None,
                    }
                }
                5 => Some(s_type(uimm_d as i32, rd_p, rs1_p, 3, OP_STORE_FP)), // c.fsd
                6 => Some(s_type(uimm_w as i32, rd_p, rs1_p, 2, OP_STORE)),    // c.sw
                _ => Some(s_type(uimm_d as i32, rd_p, rs1_p, 3, OP_STORE)),    // c.sd
            }
        }
        1 => {
            // Quadrant 1.
            match funct3 {
                0 => Some(i_type(imm6, rd, 0, rd, OP_IMM)), // c.addi / c.nop
                1 => {
                    // c.addiw
                    if rd == 0 {
                        return None;
                    }
                    Some(i_type(imm6, rd, 0, rd, OP_IMM_32))
                }
                2 => Some(i_type(imm6, 0, 0, rd, OP_IMM)), // c.li
                3 => {
                    if rd == 2 {
                        // c.addi16sp
                        let imm = (bit(h, 12) << 9)
                            | (bit(h, 6) << 4)
                            | (bit(h, 5) << 6)
                            | (bits(h, 4, 3) << 7)
                            | (bit(h, 2) << 5);
                        if imm == 0 {
                            return None;
                        }
                        Some(i_type(sext(imm, 10), 2, 0, 2, OP_IMM))
                    } else {
                        // c.lui
                        if imm6 == 0 {
                            return None;
                        }
                        Some(((imm6 as u32) << 12) | (rd << 7) | OP_LUI)
                    }
                }
                4 => {
                    let shamt = (bit(h, 12) << 5) | bits(h, 6, 2);
                    match bits(h, 11, 10) {
                        0 => Some(i_type(shamt as i32, rs1_p, 5, rs1_p, OP_IMM)), // c.srli
                        1 => Some(i_type((0x400 | shamt) as i32, rs1_p, 5, rs1_p, OP_IMM)), // c.srai
                        2 => Some(i_type(imm6, rs1_p, 7, rs1_p, OP_IMM)), // c.andi
                        _ => {
                            let rs2_p = rd_p;
                            match (bit(h, 12), bits(h, 6, 5)) {
                                (0, 0) => Some(r_type(0x20, rs2_p, rs1_p, 0, rs1_p, OP)), // c.sub
                                (0, 1) => Some(r_type(0, rs2_p, rs1_p, 4, rs1_p, OP)),    // c.xor
                                (0, 2) => Some(r_type(0, rs2_p, rs1_p, 6, rs1_p, OP)),    // c.or
                                (0, 3) => Some(r_type(0, rs2_p, rs1_p, 7, rs1_p, OP)),    // c.and
                                (1, 0) => Some(r_type(0x20, rs2_p, rs1_p, 0, rs1_p, OP_32)), // c.subw
                                (1, 1) => Some(r_type(0, rs2_p, rs1_p, 0, rs1_p, OP_32)), // c.addw
                                (1, 2) => Some(r_type(1, rs2_p, rs1_p, 0, rs1_p, OP)),    // c.mul
                                _ => zcb_unary(bits(h, 4, 2), rs1_p),
                            }
                        }
                    }
                }
                5 => {
                    // c.j
                    let off = (bit(h, 12) << 11)
                        | (bit(h, 11) << 4)
                        | (bits(h, 10, 9) << 8)
                        | (bit(h, 8) << 10)
                        | (bit(h, 7) << 6)
                        | (bit(h, 6) << 7)
                        | (bits(h, 5, 3) << 1)
                        | (bit(h, 2) << 5);
                    Some(j_type(sext(off, 12), 0))
                }
                _ => {
                    // c.beqz / c.bnez
                    let off = (bit(h, 12) << 8)
                        | (bits(h, 11, 10) << 3)
                        | (bits(h, 6, 5) << 6)
                        | (bits(h, 4, 3) << 1)
                        | (bit(h, 2) << 5);
                    Some(b_type(sext(off, 9), 0, rs1_p, funct3 & 1))
                }
            }
        }
        2 => {
            // Quadrant 2.
            let uimm_dsp = (bit(h, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6);
            let uimm_sdsp = (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6);
            match funct3 {
                0 => {
                    // c.slli
                    let shamt = (bit(h, 12) << 5) | bits(h, 6, 2);
                    Some(i_type(shamt as i32, rd, 1, rd, OP_IMM))
                }
                1 => Some(i_type(uimm_dsp as i32, 2, 3, rd, OP_LOAD_FP)), // c.fldsp
                2 => {
                    // c.lwsp
                    if rd == 0 {
                        return None;
                    }
                    let uimm = (bit(h, 12) << 5) | (bits(h, 6, 4) << 2) | (bits(h, 3, 2) << 6);
                    Some(i_type(uimm as i32, 2, 2, rd, OP_LOAD))
                }
                3 => {
                    // c.ldsp
                    if rd == 0 {
                        return None;
                    }
                    Some(i_type(uimm_dsp as i32, 2, 3, rd, OP_LOAD))
                }
                4 => match (bit(h, 12), rd, rs2) {
                    (0, 0, 0) => None,                                // c.jr x0: reserved
                    (0, _, 0) => Some(i_type(0, rd, 0, 0, OP_JALR)),  // c.jr
                    (0, _, _) => Some(r_type(0, rs2, 0, 0, rd, OP)),  // c.mv
                    (_, 0, 0) => Some(0x0010_0073),                   // c.ebreak
                    (_, _, 0) => Some(i_type(0, rd, 0, 1, OP_JALR)),  // c.jalr
                    (_, _, _) => Some(r_type(0, rs2, rd, 0, rd, OP)), // c.add
                },
                5 => Some(s_type(uimm_sdsp as i32, rs2, 2, 3, OP_STORE_FP)), // c.fsdsp
                6 => {
                    // c.swsp
                    let uimm = (bits(h, 12, 9) << 2) | (bits(h, 8, 7) << 6);
                    Some(s_type(uimm as i32, rs2, 2, 2, OP_STORE))
                }
                _ => Some(s_type(uimm_sdsp as i32, rs2, 2, 3, OP_STORE)), // c.sdsp
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::RVC;

    #[test]
    fn table_expansions() {
        for &(h, w, _, text) in RVC {
            assert_eq!(expand_compressed(h), Some(w), "{h:#06x} -> {text}");
        }
    }

    #[test]
    fn examples() {
        let cases: &[(u16, u32)] = &[
            (0x0505, 0x00150513), // c.addi a0,1 -> addi a0,a0,1
            (0x60a2, 0x00813083), // c.ldsp ra,8(sp) -> ld ra,8(sp)
            (0x852e, 0x00b00533), // c.mv a0,a1 -> add a0,zero,a1
            (0x8082, 0x00008067), // c.jr ra -> jalr zero,0(ra)
            (0x0001, 0x00000013), // c.nop -> addi zero,zero,0
            (0x7139, 0xfc010113), // c.addi16sp sp,-64 -> addi sp,sp,-64
            (0x9002, 0x00100073), // c.ebreak -> ebreak
            (0x9502, 0x000500e7), // c.jalr a0 -> jalr ra,0(a0)
            (0x952e, 0x00b50533), // c.add a0,a1 -> add a0,a0,a1
            (0x2501, 0x0005051b), // c.addiw a0,0 (sext.w) -> addiw a0,a0,0
            (0xa001, 0x0000006f), // c.j .+0 -> jal zero,.+0
            (0xbffd, 0xfffff06f), // c.j .-2 -> jal zero,.-2
            (0x6505, 0x00001537), // c.lui a0,0x1
            (0x757d, 0xfffff537), // c.lui a0,0xfffff
            (0x2008, 0x00043507), // c.fld fa0,0(s0) -> fld fa0,0(s0)
        ];
        for &(h, w) in cases {
            assert_eq!(expand_compressed(h), Some(w), "{h:#06x}");
        }
    }

    #[test]
    fn reserved() {
        for h in [
            0x0000u16, 0x0004, 0x001c, 0x9000, 0x9c00, 0x8c40, 0x2001, 0x6101, 0x6501, 0x6001,
            0x6081, 0x9c79, 0x9c7d, 0x8002, 0x4002, 0x6002, 0x5002, 0x7002, 0x6022,
        ] {
            assert_eq!(expand_compressed(h), None, "{h:#06x}");
        }
    }

    #[test]
    fn not_compressed() {
        for h in (0..=u16::MAX).filter(|h| h & 3 == 3) {
            assert_eq!(expand_compressed(h), None, "{h:#06x}");
        }
    }

    #[test]
    fn expansions_are_32_bit() {
        let mut valid = 0;
        for h in 0..=u16::MAX {
            if let Some(w) = expand_compressed(h) {
                assert_eq!(w & 3, 3, "{h:#06x}");
                valid += 1;
            }
        }
        // 3 quadrants of 16384 parcels minus the reserved ones.
        assert!(valid > 45_000 && valid < 49_152, "{valid}");
    }
}
