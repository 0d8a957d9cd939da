//! Decoding and disassembly of the extensions beyond RV64GC: binutils'
//! encodings where binutils 2.40 knows the extension, the specification's
//! encodings where it does not (Zicond, Zihintntl, Zcb, Zimop, Zcmop).

use crate::decode::{decode, decode_for, op_extension};
use crate::disasm::{disasm, mnemonic};
use crate::ext::{Ext, ExtSet};
use crate::op::{Insn, Op};
use crate::testdata_ext::RV32_EXT;

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

fn c(i: Insn) -> Insn {
    Insn { len: 2, ..i }
}

#[test]
fn binutils_table_decodes_and_prints() {
    assert!(RV32_EXT.len() > 200);
    for &(pc, w, text) in RV32_EXT {
        let i = decode(w);
        assert_ne!(i.op, Op::Illegal, "{w:#010x} {text}");
        assert!(op_extension(i.op).is_some(), "{text}");
        assert_eq!(disasm(&i, pc), text, "{w:#010x}");
        assert_eq!(mnemonic(i.op), text.split(' ').next().unwrap());
    }
}

#[test]
fn specification_encodings() {
    // Zicond (the specification's encoding; LLVM's test: czero.eqz t0,a3,ra).
    assert_eq!(decode(0x0e16d2b3), ins(Op::CzeroEqz, 5, 13, 1, 0));
    assert_eq!(decode(0x0ec5d533), ins(Op::CzeroEqz, 10, 11, 12, 0));
    assert_eq!(decode(0x0ec5f533), ins(Op::CzeroNez, 10, 11, 12, 0));
    assert_eq!(decode(0x0ec5f533).to_string(), "czero.nez a0,a1,a2");
    // Zihintntl: add x0,x0,x2..x5, and c.add x0,x2..x5.
    assert_eq!(decode(0x00200033), ins(Op::NtlP1, 0, 0, 0, 0));
    assert_eq!(decode(0x00300033), ins(Op::NtlPall, 0, 0, 0, 0));
    assert_eq!(decode(0x00400033), ins(Op::NtlS1, 0, 0, 0, 0));
    assert_eq!(decode(0x00500033), ins(Op::NtlAll, 0, 0, 0, 0));
    assert_eq!(decode(0x00600033).op, Op::Add);
    assert_eq!(decode(0x00200533).op, Op::Add); // rd != 0
    assert_eq!(decode(0x900a), c(ins(Op::NtlP1, 0, 0, 0, 0)));
    assert_eq!(decode(0x9016), c(ins(Op::NtlAll, 0, 0, 0, 0)));
    assert_eq!(decode(0x900a).to_string(), "ntl.p1");
    // Zimop.
    assert_eq!(decode(0x81c5c573), ins(Op::MopR, 10, 11, 0, 0));
    assert_eq!(decode(0xcdf5c573), ins(Op::MopR, 10, 11, 0, 31));
    assert_eq!(decode(0x82c5c573), ins(Op::MopRr, 10, 11, 12, 0));
    assert_eq!(decode(0xcec5c573), ins(Op::MopRr, 10, 11, 12, 7));
    assert_eq!(decode(0xcdf5c573).to_string(), "mop.r.31 a0,a1");
    assert_eq!(decode(0xcec5c573).to_string(), "mop.rr.7 a0,a1,a2");
    // The neighbouring SYSTEM funct3 = 4 encodings stay illegal.
    for w in [
        0x01c5c573u32,
        0x91c5c573,
        0xa1c5c573,
        0x8185c573,
        0x8005c573,
    ] {
        assert_eq!(decode(w).op, Op::Illegal, "{w:#010x}");
    }
    // Zcmop: c.mop.1 .. c.mop.15.
    for n in (1..16u16).step_by(2) {
        let h = 0x6001 | n << 7;
        assert_eq!(decode(h as u32), c(ins(Op::CMop, 0, 0, 0, n as i64)));
        assert_eq!(decode(h as u32).to_string(), format!("c.mop.{n}"));
    }
    // Zawrs, Zihintpause.
    assert_eq!(decode(0x00d00073).op, Op::WrsNto);
    assert_eq!(decode(0x01d00073).op, Op::WrsSto);
    assert_eq!(decode(0x0100000f).op, Op::Pause);
    assert_eq!(decode(0x0100100f).op, Op::FenceI); // not a fence
    assert_eq!(decode(0x0110000f).op, Op::Fence); // fence w,w
}

#[test]
fn zcb_expansions() {
    // (parcel, the instruction it stands for)
    let cases: &[(u16, &str)] = &[
        (0x833c, "lbu a5,2(a4)"),
        (0x837c, "lbu a5,3(a4)"),
        (0x873c, "lhu a5,2(a4)"),
        (0x877c, "lh a5,2(a4)"),
        (0x8b5c, "sb a5,1(a4)"),
        (0x8f3c, "sh a5,2(a4)"),
        (0x9c61, "andi s0,s0,255"),
        (0x9c65, "sext.b s0,s0"),
        (0x9c69, "zext.h s0,s0"),
        (0x9c6d, "sext.h s0,s0"),
        (0x9c71, "add.uw s0,s0,zero"),
        (0x9c75, "xori s0,s0,-1"),
        (0x9c45, "mul s0,s0,s1"),
        (0x9fdd, "mul a5,a5,a5"),
    ];
    for &(h, text) in cases {
        let i = decode(h as u32);
        assert_eq!(i.len, 2, "{h:#06x}");
        assert_eq!(i.to_string(), text, "{h:#06x}");
    }
}

#[test]
fn disabled_extensions_are_illegal() {
    let gc = ExtSet::RV64GC;
    let all = ExtSet::ALL;
    // One instruction of each: (word, extension).
    let words: &[(u32, Ext)] = &[
        (0x08c5853b, Ext::Zba),    // add.uw
        (0x40c5f533, Ext::Zbb),    // andn
        (0x0805c53b, Ext::Zbb),    // zext.h
        (0x0ac5a533, Ext::Zbc),    // clmulr
        (0x4bf59513, Ext::Zbs),    // bclri
        (0x0ec5d533, Ext::Zicond), // czero.eqz
        (0x81c5c573, Ext::Zimop),  // mop.r.0
        (0x00d00073, Ext::Zawrs),  // wrs.nto
        (0x6081, Ext::Zcmop),      // c.mop.1
        (0x833c, Ext::Zcb),        // c.lbu
        (0x9c75, Ext::Zcb),        // c.not
    ];
    for &(w, e) in words {
        assert_eq!(decode_for(w, all), decode(w), "{w:#x}");
        let i = decode_for(w, gc);
        assert_eq!(i, Insn::illegal(decode(w).len), "{w:#x}");
        // With exactly that extension added it decodes again.
        assert_eq!(decode_for(w, gc.with(e)), decode(w), "{w:#x}");
    }
    // c.sext.b needs Zbb as well as Zcb; c.zext.w needs Zba; c.mul needs M.
    let zcb = gc.with(Ext::Zcb);
    assert_eq!(decode_for(0x9c65, zcb).op, Op::Illegal);
    assert_eq!(decode_for(0x9c65, zcb.with(Ext::Zbb)).op, Op::SextB);
    assert_eq!(decode_for(0x9c71, zcb).op, Op::Illegal);
    assert_eq!(decode_for(0x9c71, zcb.with(Ext::Zba)).op, Op::AddUw);
    assert_eq!(decode_for(0x9c45, zcb).op, Op::Mul);
    assert_eq!(decode_for(0x9c45, zcb.without(Ext::M)).op, Op::Illegal);
    // Without C no compressed instruction decodes; without D not c.fld.
    let i_only: ExtSet = "rv64i".parse().unwrap();
    assert_eq!(decode_for(0x0505, i_only), Insn::illegal(2)); // c.addi
    assert_eq!(decode_for(0x0505, gc).op, Op::Addi);
    assert_eq!(decode_for(0x2008, gc).op, Op::Fld); // c.fld
    let no_zcd: ExtSet = "rv64imafd_zca".parse().unwrap();
    assert_eq!(decode_for(0x2008, no_zcd), Insn::illegal(2));
    assert_eq!(decode_for(0x0505, no_zcd).op, Op::Addi);
    // M, A, F, D and the base.
    assert_eq!(decode_for(0x02c58533, i_only), Insn::illegal(4)); // mul
    assert_eq!(decode_for(0x02c58533, gc).op, Op::Mul);
    assert_eq!(decode_for(0x02b57553, i_only), Insn::illegal(4)); // fadd.d
    assert_eq!(decode_for(0x00c58533, i_only).op, Op::Add);
    assert_eq!(decode_for(0x0025200f, gc), Insn::illegal(4)); // cbo.flush
    assert_eq!(
        decode_for(0x0025200f, gc.with(Ext::Zicbom)).op,
        Op::CboFlush
    );
    // CFLUSH.D.L1 is governed by `cflush.allow_user`, not the ISA.
    assert_eq!(decode_for(0xfc050073, i_only).op, Op::CflushDL1);
}

#[test]
fn disabled_hints_are_their_base_instructions() {
    let gc = ExtSet::RV64GC;
    // pause -> fence w,0
    let p = decode_for(0x0100000f, gc);
    assert_eq!((p.op, p.rm, p.imm), (Op::Fence, 0x10, 0));
    assert_eq!(p.to_string(), "fence w,0");
    // ntl.all -> add zero,zero,t0; c.ntl.p1 -> c.add zero,sp
    assert_eq!(decode_for(0x00500033, gc), ins(Op::Add, 0, 0, 5, 0));
    assert_eq!(decode_for(0x900a, gc), c(ins(Op::Add, 0, 0, 2, 0)));
    // prefetch.r -64(a1) -> ori zero,a1,-63
    assert_eq!(decode_for(0xfc15e013, gc), ins(Op::Ori, 0, 11, 0, -63));
    assert_eq!(decode_for(0x7e306013, gc), ins(Op::Ori, 0, 0, 0, 2019));
    assert_eq!(decode_for(0x02056013, gc), ins(Op::Ori, 0, 10, 0, 32));
    // Enabled, they are the hints.
    assert_eq!(
        decode_for(0xfc15e013, gc.with(Ext::Zicbop)).op,
        Op::PrefetchR
    );
    assert_eq!(decode(0xfc15e013).imm, -64);
}
