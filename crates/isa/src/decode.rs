//! Decoding of 32-bit and compressed RV64GC instructions into [`Insn`].
//!
//! The decoder is driven by the instruction table (`insns/`): built once,
//! it files every 32-bit encoding under each value of the opcode, `funct3`
//! and `funct7` bits it allows, so a lookup reads one bucket of a few
//! candidates, most specific first (a hint before the instruction whose
//! encoding it borrows), and takes the operands the candidate's format has.
//! Compressed instructions are expanded to their 32-bit forms
//! (`compressed.rs`). Every encoding that is reserved or belongs to an
//! extension the emulator does not implement decodes to [`Op::Illegal`].

use crate::compressed::{compressed_extension, expand_compressed};
use crate::decode_fp_ext;
use crate::ext::{Ext, ExtSet};
use crate::op::{Insn, Op};

/// Builds an [`Insn`] of length 4 with `rs3 = 0` and `rm = 0`.
#[inline(always)]
pub(crate) const fn mk(op: Op, rd: u32, rs1: u32, rs2: u32, imm: i64) -> Insn {
    Insn {
        op,
        rd: rd as u8,
        rs1: rs1 as u8,
        rs2: rs2 as u8,
        rs3: 0,
        rm: 0,
        len: 4,
        imm,
    }
}

const ILLEGAL: Insn = Insn::illegal(4);

/// Decodes the instruction whose first parcel is in the low bits of `raw`.
///
/// If `raw & 3 != 3` the instruction is compressed: only the low 16 bits are
/// looked at, it is expanded with [`expand_compressed`] and the result has
/// `len = 2`. Otherwise all 32 bits form the instruction and `len = 4`.
///
/// Reserved, unimplemented or malformed encodings decode to [`Op::Illegal`]
/// (with the corresponding `len`); this function never panics.
///
/// Field conventions (see [`Insn`]): branch and `jal` offsets are relative to
/// the instruction's own PC; loads, stores and `jalr` keep their offset in
/// `imm`; `lui`/`auipc` hold the sign-extended `imm20 << 12`; shifts hold the
/// shift amount; Zicsr holds the CSR number (0..=4095) in `imm` and the source
/// register or 5-bit immediate in `rs1`; F/D keep the rounding-mode field in
/// `rm` (7 = dynamic) and A keeps `aq << 1 | rl` there. `fence` keeps
/// `pred << 4 | succ` in `rm` and its `fm` field in `imm`. Fields an operation
/// does not use are zero.
#[inline]
pub fn decode(raw: u32) -> Insn {
    if raw & 3 != 3 {
        match expand_compressed(raw as u16) {
            Some(w) => Insn {
                len: 2,
                ..decode32(w)
            },
            None => decode_c_mop(raw as u16),
        }
    } else {
        decode32(raw)
    }
}

/// Decodes as [`decode`] does, for a hart implementing only the extensions
/// in `isa`: an instruction of an extension outside it is illegal, and a
/// hint outside it (`pause`, `ntl.*`, `prefetch.*`) is the base
/// instruction whose encoding it borrows (a `fence`, an `add` or an `ori`
/// to `x0`), as on a hart that never heard of the hint.
#[inline]
pub fn decode_for(raw: u32, isa: ExtSet) -> Insn {
    let insn = decode(raw);
    if isa == ExtSet::ALL || insn.op == Op::Illegal {
        return insn;
    }
    let compressed_ok = insn.len == 4 || isa.has(compressed_extension(raw as u16));
    let op_ok = if decode_fp_ext::fp_extension(insn.op).is_some() {
        decode_fp_ext::enabled(insn.op, isa)
    } else {
        op_extension(insn.op).is_none_or(|e| isa.has(e))
    };
    if compressed_ok && op_ok {
        return insn;
    }
    if !compressed_ok {
        return Insn::illegal(insn.len);
    }
    match insn.op {
        Op::Pause => Insn {
            rm: 0x10,
            ..mk(Op::Fence, 0, 0, 0, 0)
        },
        // `add x0, x0, x2..x5`.
        Op::NtlP1 | Op::NtlPall | Op::NtlS1 | Op::NtlAll => {
            let rs2 = match insn.op {
                Op::NtlP1 => 2,
                Op::NtlPall => 3,
                Op::NtlS1 => 4,
                _ => 5,
            };
            Insn {
                len: insn.len,
                ..mk(Op::Add, 0, 0, rs2, 0)
            }
        }
        Op::PrefetchI | Op::PrefetchR | Op::PrefetchW => {
            let low = match insn.op {
                Op::PrefetchI => 0,
                Op::PrefetchR => 1,
                _ => 3,
            };
            mk(Op::Ori, 0, insn.rs1 as u32, 0, insn.imm | low)
        }
        _ => Insn::illegal(insn.len),
    }
}

/// The extension a (32-bit or expanded) operation belongs to; `None` for
/// the base ISA and for what another setting governs (`cflush.d.l1`). Some
/// floating-point operations need more than this one (Zfa's half forms
/// need Zfh too, the double forms D): `decode_for` checks all of it. From
/// the instruction table (`insns`).
#[inline]
pub fn op_extension(op: Op) -> Option<Ext> {
    op.extension()
}

/// `c.mop.N` (Zcmop): the reserved `c.lui xN, 0` encodings for odd N below
/// 16. Anything else that does not expand is illegal.
fn decode_c_mop(h: u16) -> Insn {
    // 011 0 0nnn1 00000 01
    if h & 0xf0ff == 0x6081 {
        let n = (h >> 7) & 31;
        Insn {
            len: 2,
            ..mk(Op::CMop, 0, 0, 0, n as i64)
        }
    } else {
        Insn::illegal(2)
    }
}

/// Decodes a 32-bit encoding (the low two bits must be `0b11`) from the
/// instruction table: the candidates of its opcode, `funct3` and `funct7`
/// bits, most specific first, then the operands its format has.
#[inline]
fn decode32(raw: u32) -> Insn {
    let table = &*TABLE;
    let bucket = table.buckets[bucket_key(raw)];
    let (start, len) = ((bucket >> 8) as usize, (bucket & 0xff) as usize);
    for &(mask, bits, op) in &table.entries[start..start + len] {
        if raw & mask == bits {
            return operands(op, raw);
        }
    }
    ILLEGAL
}

/// The bits every lookup reads: opcode[6:2], funct3 and funct7 (15 bits).
#[inline(always)]
const fn bucket_key(raw: u32) -> usize {
    ((raw >> 2) & 0x1f | ((raw >> 12) & 7) << 5 | (raw >> 25) << 8) as usize
}

const BUCKETS: usize = 1 << 15;

/// The 32-bit encodings of the table, bucketed by [`bucket_key`].
struct DecodeTable {
    /// Per key: `start << 8 | count` into `entries`.
    buckets: Box<[u32]>,
    /// `(mask, match, op)`, each bucket's run most specific mask first.
    entries: Box<[(u32, u32, Op)]>,
}

static TABLE: std::sync::LazyLock<DecodeTable> = std::sync::LazyLock::new(build_table);

/// The table's 32-bit encodings: `(mask, match, op)`.
fn encodings32() -> impl Iterator<Item = (u32, u32, Op)> {
    Op::ALL.iter().flat_map(|&op| {
        op.encodings()
            .iter()
            .filter(|&&(_, bits)| bits & 3 == 3)
            .map(move |&(mask, bits)| (mask, bits, op))
    })
}

fn build_table() -> DecodeTable {
    let mut lists: Vec<Vec<(u32, u32, Op)>> = vec![Vec::new(); BUCKETS];
    for (mask, bits, op) in encodings32() {
        // Every key whose fixed bits agree with the pattern: the key bits
        // the mask leaves free take every value.
        let (fixed, value) = (bucket_key(mask), bucket_key(bits) & bucket_key(mask));
        let free = !fixed & (BUCKETS - 1);
        let mut sub = free;
        loop {
            lists[value | sub].push((mask, bits, op));
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & free;
        }
    }
    let mut buckets = vec![0u32; BUCKETS];
    let mut entries = Vec::new();
    for (key, mut list) in lists.into_iter().enumerate() {
        // A hint or special form (its mask a superset) before the
        // instruction whose encoding it borrows.
        list.sort_by_key(|&(mask, _, _)| core::cmp::Reverse(mask.count_ones()));
        assert!(list.len() < 256 && entries.len() < 1 << 24);
        buckets[key] = (entries.len() as u32) << 8 | list.len() as u32;
        entries.extend(list);
    }
    DecodeTable {
        buckets: buckets.into(),
        entries: entries.into(),
    }
}

/// The operands of `op` from `raw`, as its format lays them out (see
/// [`Insn`] for the conventions); fields the format has not are zero.
#[inline]
fn operands(op: Op, raw: u32) -> Insn {
    use crate::insns::Format::*;
    let rd = (raw >> 7) & 31;
    let rs1 = (raw >> 15) & 31;
    let rs2 = (raw >> 20) & 31;
    let rm = (raw >> 12) & 7;
    let imm_i = ((raw as i32) >> 20) as i64;
    match op.format() {
        Bare | CMop => mk(op, 0, 0, 0, 0),
        U => mk(op, rd, 0, 0, (raw & 0xffff_f000) as i32 as i64),
        J => {
            let imm = (((raw as i32) >> 11) as u32 & !0xf_ffff) // imm[20] and sign
                | (raw & 0x000f_f000) // imm[19:12]
                | ((raw >> 9) & 0x800) // imm[11]
                | ((raw >> 20) & 0x7fe); // imm[10:1]
            mk(op, rd, 0, 0, imm as i32 as i64)
        }
        Jalr | LoadX | LoadF | Imm => mk(op, rd, rs1, 0, imm_i),
        B => {
            let imm = (((raw as i32) >> 19) as u32 & !0xfff) // imm[12] and sign
                | ((raw << 4) & 0x800) // imm[11]
                | ((raw >> 20) & 0x7e0) // imm[10:5]
                | ((raw >> 7) & 0x1e); // imm[4:1]
            mk(op, 0, rs1, rs2, imm as i32 as i64)
        }
        StoreX | StoreF => {
            let imm = (((raw as i32) >> 20) & !31) | rd as i32;
            mk(op, 0, rs1, rs2, imm as i64)
        }
        // The W forms' encodings fix shamt[5] at zero.
        Shamt => mk(op, rd, rs1, 0, ((raw >> 20) & 63) as i64),
        Rrr => mk(op, rd, rs1, rs2, 0),
        Rr => mk(op, rd, rs1, 0, 0),
        // The offset's low five bits select the prefetch.
        Prefetch => mk(op, 0, rs1, 0, imm_i & !31),
        // mop.r.N: 1 n4 00 n3 n2 0111 n1 n0 rs1 100 rd; mop.rr.N:
        // 1 n2 00 n1 n0 1 rs2 rs1 100 rd.
        MopR => {
            let n = ((raw >> 30) & 1) << 4 | ((raw >> 26) & 3) << 2 | (raw >> 20) & 3;
            mk(op, rd, rs1, 0, n as i64)
        }
        MopRr => {
            let n = ((raw >> 30) & 1) << 2 | ((raw >> 26) & 3);
            mk(op, rd, rs1, rs2, n as i64)
        }
        // rd, rs1 and unknown fm values are reserved for future
        // (stronger-or-equal) fences and ignored.
        Fence => Insn {
            rm: ((raw >> 20) & 0xff) as u8,
            ..mk(op, 0, 0, 0, (raw >> 28) as i64)
        },
        Csr | CsrI => mk(op, rd, rs1, 0, (raw >> 20) as i64),
        Lr => with_rm(mk(op, rd, rs1, 0, 0), (raw >> 25) & 3),
        Amo => with_rm(mk(op, rd, rs1, rs2, 0), (raw >> 25) & 3),
        F4 => Insn {
            rs3: (raw >> 27) as u8,
            ..with_rm(mk(op, rd, rs1, rs2, 0), rm)
        },
        F3Rm => with_rm(mk(op, rd, rs1, rs2, 0), rm),
        F2Rm | F2Exact | XFRm | FXRm | FXExact => with_rm(mk(op, rd, rs1, 0, 0), rm),
        F3 | XFF => mk(op, rd, rs1, rs2, 0),
        XF | FX | Fli => mk(op, rd, rs1, 0, 0),
        Sfence => mk(op, 0, rs1, rs2, 0),
        Cflush | Cbo => mk(op, 0, rs1, 0, 0),
    }
}

/// `insn` with its rounding-mode (or `aq`/`rl`) field.
#[inline(always)]
const fn with_rm(insn: Insn, rm: u32) -> Insn {
    Insn {
        rm: rm as u8,
        ..insn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disasm::mnemonic;
    use crate::testdata::{RV32, RVC};

    /// The decoded op's mnemonic must match objdump's (modulo `.aq`/`.rl`
    /// suffixes and the two special spellings objdump uses).
    fn objdump_mnemonic_matches(insn: &Insn, text: &str) -> bool {
        let mn = text.split(' ').next().unwrap();
        let mn = mn
            .trim_end_matches(".aqrl")
            .trim_end_matches(".aq")
            .trim_end_matches(".rl");
        match mn {
            "unimp" => insn.op == Op::Csrrw,
            "fence.tso" => insn.op == Op::Fence,
            _ => mnemonic(insn.op) == mn,
        }
    }

    #[test]
    fn rv32_table_decodes() {
        assert!(RV32.len() > 500);
        for &(_, w, text) in RV32 {
            let i = decode(w);
            assert_ne!(i.op, Op::Illegal, "{w:#010x} {text}");
            assert_eq!(i.len, 4, "{w:#010x} {text}");
            assert!(
                objdump_mnemonic_matches(&i, text),
                "{w:#010x}: {:?} vs {text}",
                i.op
            );
        }
    }

    #[test]
    fn rvc_table_decodes_like_expansion() {
        assert!(RVC.len() > 100);
        for &(h, w, _, text) in RVC {
            assert_eq!(expand_compressed(h), Some(w), "{h:#06x} {text}");
            let c = decode(h as u32);
            assert_eq!(c.len, 2, "{h:#06x} {text}");
            assert_eq!(
                c,
                Insn {
                    len: 2,
                    ..decode(w)
                },
                "{h:#06x} {text}"
            );
            // The upper half (the next parcel) must not matter.
            assert_eq!(decode(0xdead_0000 | h as u32), c);
            assert!(
                objdump_mnemonic_matches(&c, text),
                "{h:#06x}: {:?} vs {text}",
                c.op
            );
        }
    }

    fn ins(op: Op, rd: u8, rs1: u8, rs2: u8, imm: i64) -> Insn {
        Insn {
            op,
            rd,
            rs1,
            rs2,
            rs3: 0,
            rm: 0,
            len: 4,
            imm,
        }
    }

    #[test]
    fn field_conventions() {
        // addi a0,a0,1
        assert_eq!(decode(0x00150513), ins(Op::Addi, 10, 10, 0, 1));
        // addi a0,zero,-1
        assert_eq!(decode(0xfff00513), ins(Op::Addi, 10, 0, 0, -1));
        // lui a0,0xfffff -> imm is the sign-extended value
        assert_eq!(decode(0xfffff537), ins(Op::Lui, 10, 0, 0, -4096));
        // lui s6,0x80000
        assert_eq!(decode(0x80000b37), ins(Op::Lui, 22, 0, 0, -0x8000_0000));
        // auipc a0,0x12
        assert_eq!(decode(0x00012517), ins(Op::Auipc, 10, 0, 0, 0x12000));
        // jal ra,.-4
        assert_eq!(decode(0xffdff0ef), ins(Op::Jal, 1, 0, 0, -4));
        // jal zero,.+0xffffe / .-0x100000
        assert_eq!(decode(0x7ffff06f), ins(Op::Jal, 0, 0, 0, 0xffffe));
        assert_eq!(decode(0x8000006f), ins(Op::Jal, 0, 0, 0, -0x100000));
        // jalr ra,8(a0); jalr ra,-2048(a0)
        assert_eq!(decode(0x008500e7), ins(Op::Jalr, 1, 10, 0, 8));
        assert_eq!(decode(0x800500e7), ins(Op::Jalr, 1, 10, 0, -2048));
        // beq a0,a1,.+124 ; bne at extremes
        assert_eq!(decode(0x06b50e63), ins(Op::Beq, 0, 10, 11, 124));
        assert_eq!(decode(0x80b51063), ins(Op::Bne, 0, 10, 11, -4096));
        assert_eq!(decode(0x7eb51fe3), ins(Op::Bne, 0, 10, 11, 4094));
        // ld ra,8(sp); sd ra,-8(sp); fsw ft11,2047(t6)
        assert_eq!(decode(0x00813083), ins(Op::Ld, 1, 2, 0, 8));
        assert_eq!(decode(0xfe113c23), ins(Op::Sd, 0, 2, 1, -8));
        assert_eq!(decode(0x7fffafa7), ins(Op::Fsw, 0, 31, 31, 2047));
        // slli a0,a0,63; srai a0,a0,63; sraiw a0,a0,31
        assert_eq!(decode(0x03f51513), ins(Op::Slli, 10, 10, 0, 63));
        assert_eq!(decode(0x43f55513), ins(Op::Srai, 10, 10, 0, 63));
        assert_eq!(decode(0x41f5551b), ins(Op::Sraiw, 10, 10, 0, 31));
        // add a0,a1,a2; mulw a0,a1,a2
        assert_eq!(decode(0x00c58533), ins(Op::Add, 10, 11, 12, 0));
        assert_eq!(decode(0x02c5853b), ins(Op::Mulw, 10, 11, 12, 0));
        // csrrs a0,cycle,zero; csrrw a0,0x345,a1; csrrwi a0,0x7c0,5; csrrc on 0xfff
        assert_eq!(decode(0xc0002573), ins(Op::Csrrs, 10, 0, 0, 0xc00));
        assert_eq!(decode(0x34559573), ins(Op::Csrrw, 10, 11, 0, 0x345));
        assert_eq!(decode(0x7c02d573), ins(Op::Csrrwi, 10, 5, 0, 0x7c0));
        assert_eq!(decode(0xfff03573), ins(Op::Csrrc, 10, 0, 0, 0xfff));
        // lr.w.aqrl a0,(a1); sc.d.aq a0,a2,(a1); amoadd.w.rl a0,a2,(a1)
        assert_eq!(
            decode(0x1605a52f),
            Insn {
                rm: 3,
                ..ins(Op::LrW, 10, 11, 0, 0)
            }
        );
        assert_eq!(
            decode(0x1cc5b52f),
            Insn {
                rm: 2,
                ..ins(Op::ScD, 10, 11, 12, 0)
            }
        );
        assert_eq!(
            decode(0x02c5a52f),
            Insn {
                rm: 1,
                ..ins(Op::AmoaddW, 10, 11, 12, 0)
            }
        );
        // fadd.d fa0,fa0,fa1,rne; fadd.d fa0,fa0,fa1 (dyn)
        assert_eq!(
            decode(0x02b50553),
            Insn {
                rm: 0,
                ..ins(Op::FaddD, 10, 10, 11, 0)
            }
        );
        assert_eq!(
            decode(0x02b57553),
            Insn {
                rm: 7,
                ..ins(Op::FaddD, 10, 10, 11, 0)
            }
        );
        // rm 5 and 6 are stored as-is; validation is the executor's job.
        assert_eq!(decode(0x02b55553).rm, 5);
        assert_eq!(decode(0x02b56553).rm, 6);
        // fmadd.d fa0,fa1,fa2,fa3 (dyn)
        assert_eq!(
            decode(0x6ac5f543),
            Insn {
                rs3: 13,
                rm: 7,
                ..ins(Op::FmaddD, 10, 11, 12, 0)
            }
        );
        // fcvt.w.d a0,fa0,rtz: rs2 selects the op and reads back as 0
        assert_eq!(
            decode(0xc2051553),
            Insn {
                rm: 1,
                ..ins(Op::FcvtWD, 10, 10, 0, 0)
            }
        );
        // fcvt.s.d fa0,fa1 (rs2 = 1 in the encoding)
        assert_eq!(
            decode(0x4015f553),
            Insn {
                rm: 7,
                ..ins(Op::FcvtSD, 10, 11, 0, 0)
            }
        );
        // fmv.x.d a0,fa0; feq.d a0,fa0,fa1: no rounding mode
        assert_eq!(decode(0xe2050553), ins(Op::FmvXD, 10, 10, 0, 0));
        assert_eq!(decode(0xa2b52553), ins(Op::FeqD, 10, 10, 11, 0));
        // fsgnj.d fa0,fa1,fa1
        assert_eq!(decode(0x22b58553), ins(Op::FsgnjD, 10, 11, 11, 0));
        // fence iorw,iorw; fence r,w; fence.tso; fence.i
        assert_eq!(
            decode(0x0ff0000f),
            Insn {
                rm: 0xff,
                ..ins(Op::Fence, 0, 0, 0, 0)
            }
        );
        assert_eq!(
            decode(0x0210000f),
            Insn {
                rm: 0x21,
                ..ins(Op::Fence, 0, 0, 0, 0)
            }
        );
        assert_eq!(
            decode(0x8330000f),
            Insn {
                rm: 0x33,
                ..ins(Op::Fence, 0, 0, 0, 8)
            }
        );
        assert_eq!(decode(0x0000100f), ins(Op::FenceI, 0, 0, 0, 0));
        // Reserved fence/fence.i fields are ignored.
        assert_eq!(decode(0x0ff5050f), decode(0x0ff0000f));
        assert_eq!(decode(0x0005100f), decode(0x0000100f));
        assert_eq!(decode(0x0000000f).op, Op::Fence);
        // System.
        assert_eq!(decode(0x00000073), ins(Op::Ecall, 0, 0, 0, 0));
        assert_eq!(decode(0x00100073), ins(Op::Ebreak, 0, 0, 0, 0));
        assert_eq!(decode(0x30200073), ins(Op::Mret, 0, 0, 0, 0));
        assert_eq!(decode(0x10200073), ins(Op::Sret, 0, 0, 0, 0));
        assert_eq!(decode(0x10500073), ins(Op::Wfi, 0, 0, 0, 0));
        assert_eq!(decode(0x12b50073), ins(Op::SfenceVma, 0, 10, 11, 0));
        assert_eq!(decode(0x12000073), ins(Op::SfenceVma, 0, 0, 0, 0));
        // Zicbom / Zicboz.
        assert_eq!(decode(0x0005200f), ins(Op::CboInval, 0, 10, 0, 0));
        assert_eq!(decode(0x0015200f), ins(Op::CboClean, 0, 10, 0, 0));
        assert_eq!(decode(0x0025200f), ins(Op::CboFlush, 0, 10, 0, 0));
        assert_eq!(decode(0x0045a00f), ins(Op::CboZero, 0, 11, 0, 0));
    }

    #[test]
    fn cflush_both_encodings() {
        for rs1 in 0..32u32 {
            let sifive = 0xFC00_0073 | (rs1 << 15);
            // .insn i 0x73, 0, x0, rs1, -0x340
            let paper = 0xCC00_0073 | (rs1 << 15);
            let want = ins(Op::CflushDL1, 0, rs1 as u8, 0, 0);
            assert_eq!(decode(sifive), want);
            assert_eq!(decode(paper), want);
        }
        // Exactly as assembled by `.insn i 0x73, 0, x0, a0, -0x340`.
        assert_eq!(decode(0xcc050073), ins(Op::CflushDL1, 0, 10, 0, 0));
        // rd must be zero.
        assert_eq!(decode(0xfc0500f3).op, Op::Illegal);
        assert_eq!(decode(0xcc0500f3).op, Op::Illegal);
        // Neighbouring immediates are not CFLUSH.
        assert_eq!(decode(0xfc150073).op, Op::Illegal);
        assert_eq!(decode(0xcc150073).op, Op::Illegal);
    }

    #[test]
    fn illegal_words() {
        let words: &[u32] = &[
            0x0000_0000,                           // all zero (compressed, reserved)
            0xffff_ffff,                           // all ones (>32-bit encoding space)
            0x0000_001f,                           // 48-bit encoding
            0x0000_003f,                           // 64-bit encoding
            0x0200_151b,                           // slliw with shamt[5] set
            0x0200_551b,                           // srliw with shamt[5] set
            0x4200_551b,                           // sraiw with shamt[5] set
            0x0000_251b,                           // OP-IMM-32 funct3 = 2
            0x2005_1513,                           // slli with funct6 != 0
            0x8005_5513,                           // srli/srai with a bad funct6
            0x0000_1067,                           // jalr with funct3 = 1
            0x00b5_2063,                           // branch funct3 = 2
            0x00b5_3063,                           // branch funct3 = 3
            0x0000_7503,                           // load funct3 = 7
            0x00a0_4023,                           // store funct3 = 4
            0x0000_4007,                           // FP load funct3 = 4 (quad)
            0x04c5_8533,                           // OP funct7 = 2
            0x40c5_9533,                           // sll with funct7 = 0x20
            0x02c5_953b,                           // OP-32 funct7 = 1, funct3 = 1
            0x40c5_a53b,                           // OP-32 funct7 = 0x20, funct3 = 2
            0x00c5_953b & 0xffff_8fff | 0x2000,    // OP-32 funct3 = 2
            0x06c5_f543,                           // fmadd with fmt = 3 (quad)
            0x06c5_f54f,                           // fnmadd with fmt = 3
            0x5a15_f553,                           // fsqrt.d with rs2 != 0
            0x4005_f553,                           // fcvt.s.s (rs2 = 0)
            0x4035_f553,                           // fcvt.s.d with rs2 = 3 (quad)
            0x4215_8553,                           // fcvt.d.s with rs2 = 1
            0x22b5_b553,                           // fsgnj.d funct3 = 3
            0x2ab5_4553,                           // fmin.d funct3 = 4
            0xa2b5_3553,                           // feq.d funct3 = 3
            0xc245_1553,                           // fcvt.w.d rs2 = 4
            0xe205_2553,                           // fmv.x.d funct3 = 2
            0xe215_0553,                           // fmv.x.d rs2 != 0
            0xf205_1553,                           // fmv.d.x funct3 = 1
            0xfe00_0053,                           // unknown OP-FP funct7
            0x1005_a52f & 0xfe0f_ffff | (1 << 20), // lr.w with rs2 != 0
            0x1015_352f,                           // lr.d with rs2 != 0
            0x00c5_c52f,                           // AMO funct3 = 4
            0x28c5_a52f,                           // AMO funct5 = 5 (amocas)
            0x00c5_852f,                           // AMO funct3 = 0
            0x0025_250f,                           // cbo.flush with rd != 0
            0x0035_200f,                           // cbo imm = 3
            0x0055_200f,                           // cbo imm = 5
            0x0005_300f,                           // MISC-MEM funct3 = 3
            0x0000_4073,                           // SYSTEM funct3 = 4
            0x7b20_0073,                           // dret
            0x0000_00f3,                           // ecall with rd != 0
            0x0008_0073,                           // ecall with rs1 != 0
            0x0020_0073,                           // imm12 = 2 (uret)
            0x1020_0173,                           // sret with rd != 0
            0x3020_8073,                           // mret with rs1 != 0
            0x1050_0073 | (1 << 7),                // wfi with rd != 0
            0x12b5_00f3,                           // sfence.vma with rd != 0
            0x22b5_0073,                           // hfence.vvma
            0x6200_0073,                           // hfence.gvma
            0x0000_0057,                           // OP-V
            0x0000_000b,                           // custom-0
            0x0000_005b,                           // custom-2
            0x0000_0077,                           // reserved opcode
        ];
        for &w in words {
            let i = decode(w);
            assert_eq!(
                i,
                Insn::illegal(if w & 3 == 3 { 4 } else { 2 }),
                "{w:#010x}"
            );
        }
    }

    #[test]
    fn compressed_reserved_is_illegal() {
        for h in [
            0x0000u16, // all zero
            0x0004,    // c.addi4spn with nzuimm = 0
            0x001c,    // c.addi4spn with nzuimm = 0, rd' = x15
            0x9000,    // quadrant 0, funct3 = 100, funct6 = 100100
            0x9c00,    // quadrant 0, funct3 = 100, funct6 = 100111
            0x8c40,    // c.sh with bit 6 set
            0x2001,    // c.addiw with rd = 0
            0x6101,    // c.addi16sp with nzimm = 0
            0x6501,    // c.lui a0,0
            0x6001,    // c.lui x0,0
            0x9c79,    // quadrant 1 reserved (funct6 100111, funct2 11, op 110)
            0x9c7d,    // quadrant 1 reserved (funct6 100111, funct2 11, op 111)
            0x8002,    // c.jr with rs1 = 0
            0x4002,    // c.lwsp with rd = 0
            0x6002,    // c.ldsp with rd = 0
            0x5002,    // c.lwsp with rd = 0, uimm != 0
            0x7002,    // c.ldsp with rd = 0, uimm != 0
            0x6022,    // c.ldsp with rd = 0, uimm != 0
        ] {
            assert_eq!(decode(h as u32), Insn::illegal(2), "{h:#06x}");
            assert_eq!(decode(0xffff_0000 | h as u32), Insn::illegal(2), "{h:#06x}");
        }
    }

    #[test]
    fn compressed_examples() {
        let c = |h: u16| decode(h as u32);
        let c2 = |i: Insn| Insn { len: 2, ..i };
        // c.addi a0,1
        assert_eq!(c(0x0505), c2(ins(Op::Addi, 10, 10, 0, 1)));
        // c.ldsp ra,8(sp)
        assert_eq!(c(0x60a2), c2(ins(Op::Ld, 1, 2, 0, 8)));
        // c.mv a0,a1 -> add a0,zero,a1
        assert_eq!(c(0x852e), c2(ins(Op::Add, 10, 0, 11, 0)));
        // c.jr ra -> jalr zero,0(ra)
        assert_eq!(c(0x8082), c2(ins(Op::Jalr, 0, 1, 0, 0)));
        // c.nop
        assert_eq!(c(0x0001), c2(ins(Op::Addi, 0, 0, 0, 0)));
        // c.addi16sp sp,-64
        assert_eq!(c(0x7139), c2(ins(Op::Addi, 2, 2, 0, -64)));
        // c.ebreak
        assert_eq!(c(0x9002), c2(ins(Op::Ebreak, 0, 0, 0, 0)));
        // HINTs decode to their (no-op) base instructions.
        assert_eq!(c(0x0011), c2(ins(Op::Addi, 0, 0, 0, 4))); // c.addi x0,4
        assert_eq!(c(0x0502), c2(ins(Op::Slli, 10, 10, 0, 0))); // c.slli a0,0
        assert_eq!(c(0x8101), c2(ins(Op::Srli, 10, 10, 0, 0))); // c.srli a0,0
        assert_eq!(c(0x6005), c2(ins(Op::Lui, 0, 0, 0, 0x1000))); // c.lui x0,1
    }

    /// xorshift64 pseudo-random generator.
    fn xorshift(state: &mut u64) -> u64 {
        let mut x = *state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *state = x;
        x
    }

    #[test]
    fn random_words_never_panic() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut legal = 0usize;
        for _ in 0..2_000_000 {
            let r = xorshift(&mut s);
            let w = (r >> 16) as u32;
            let i = decode(w);
            assert_eq!(i.len, if w & 3 == 3 { 4 } else { 2 });
            assert!(
                i.rd < 32 && i.rs1 < 32 && i.rs2 < 32 && i.rs3 < 32 && i.rm < 8 || {
                    // fence keeps pred/succ in rm
                    i.op == Op::Fence
                }
            );
            if i.op == Op::Illegal {
                assert_eq!(i, Insn::illegal(i.len));
            } else {
                legal += 1;
            }
            // Forcing the 32-bit path must not panic either.
            let _ = decode(w | 3);
        }
        // Sanity: a reasonable share of random words is legal.
        assert!(legal > 100_000, "{legal}");
    }

    #[test]
    fn all_halfwords_agree_with_expansion() {
        for h in 0..=u16::MAX {
            let i = decode(h as u32);
            if h & 3 == 3 {
                // Not compressed: the low half of a 32-bit instruction.
                assert_eq!(i.len, 4);
                continue;
            }
            assert_eq!(i.len, 2);
            match expand_compressed(h) {
                Some(w) => {
                    assert_eq!(w & 3, 3, "{h:#06x}");
                    let full = decode(w);
                    assert_ne!(full.op, Op::Illegal, "{h:#06x} -> {w:#010x}");
                    assert_eq!(i, Insn { len: 2, ..full }, "{h:#06x}");
                }
                None if h & 0xf0ff == 0x6081 => {
                    assert_eq!(i.op, Op::CMop, "{h:#06x}");
                    assert_eq!(i.imm, (h as i64 >> 7) & 31);
                }
                None => assert_eq!(i, Insn::illegal(2), "{h:#06x}"),
            }
        }
    }

    #[test]
    fn equivalent_encodings_compare_equal() {
        // c.add a0,a1 and add a0,a0,a1
        assert_eq!(
            decode(0x952e),
            Insn {
                len: 2,
                ..decode(0x00b50533)
            }
        );
        // fence with garbage in reserved rd/rs1 equals the clean fence.
        assert_eq!(
            decode(0x0ff0000f | (5 << 7) | (7 << 15)),
            decode(0x0ff0000f)
        );
    }
}
