//! Execution of the extensions beyond RV64GC (Zba, Zbb, Zbc, Zbs, Zicond,
//! Zcb, the hints, Zimop/Zcmop, Zawrs): the specifications' definitions
//! and edge cases, one instruction at a time.

use crate::{CodeCache, Core, Env, Exit, Hart, HartConfig, Trap};
use rvnvmm_isa::ExtSet;
use rvnvmm_mem::PhysMem;

const BASE: u64 = 0x8000_0000;
const ECALL: u32 = 0x73;

/// Runs the encodings in `code` (32-bit words or 16-bit parcels, each in
/// the low bits of its entry) with a1 = `a`, a2 = `b`, then an `ecall`;
/// returns the hart.
fn run_with(isa: ExtSet, code: &[u32], a: u64, b: u64) -> (Hart, Exit) {
    let mut bytes = Vec::new();
    for &w in code.iter().chain([ECALL].iter()) {
        if w & 3 == 3 {
            bytes.extend_from_slice(&w.to_le_bytes());
        } else {
            bytes.extend_from_slice(&(w as u16).to_le_bytes());
        }
    }
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    assert!(mem.write(BASE, &bytes));
    let mut code = CodeCache::default();
    let config = HartConfig {
        isa,
        ..HartConfig::default()
    };
    let mut core = Core::new(0, 0, &config);
    let mut h = Hart::new(config);
    h.pc = BASE;
    h.x[11] = a;
    h.x[12] = b;
    h.x[10] = 0xdead;
    let exit = h.run(&mut core, &mut Env::functional(&mut mem, &mut code), 1000);
    (h, exit)
}

/// a0 after `word` with a1 = `a`, a2 = `b`.
fn exec(word: u32, a: u64, b: u64) -> u64 {
    let (h, exit) = run_with(ExtSet::ALL, &[word], a, b);
    assert_eq!(exit, Exit::Ecall, "{word:#010x}");
    h.x[10]
}

/// R-type `op a0, a1, a2` in OP (0x33) or OP-32 (0x3b).
fn r(opcode: u32, f7: u32, f3: u32) -> u32 {
    f7 << 25 | 12 << 20 | 11 << 15 | f3 << 12 | 10 << 7 | opcode
}

/// I-type `op a0, a1, imm12` in OP-IMM (0x13) or OP-IMM-32 (0x1b).
fn i(opcode: u32, imm12: u32, f3: u32) -> u32 {
    imm12 << 20 | 11 << 15 | f3 << 12 | 10 << 7 | opcode
}

/// The 128-bit carry-less product, bit by bit.
fn clmul_ref(a: u64, b: u64) -> u128 {
    (0..64)
        .filter(|k| b >> k & 1 == 1)
        .fold(0, |acc, k| acc ^ (a as u128) << k)
}

#[test]
fn zba() {
    let hi = 0xffff_ffff_8000_0001u64;
    assert_eq!(exec(r(0x3b, 0x04, 0), hi, 1), 0x8000_0002); // add.uw
    assert_eq!(exec(r(0x33, 0x10, 2), 5, 3), 13); // sh1add
    assert_eq!(exec(r(0x33, 0x10, 4), 5, 3), 23); // sh2add
    assert_eq!(exec(r(0x33, 0x10, 6), 5, 3), 43); // sh3add
    assert_eq!(exec(r(0x3b, 0x10, 2), hi, 0), 0x1_0000_0002); // sh1add.uw
    assert_eq!(exec(r(0x3b, 0x10, 4), hi, 0), 0x2_0000_0004); // sh2add.uw
    assert_eq!(exec(r(0x3b, 0x10, 6), hi, 7), 0x4_0000_000f); // sh3add.uw
    assert_eq!(exec(i(0x1b, 0x080 | 32, 1), hi, 0), 0x8000_0001 << 32); // slli.uw 32
    assert_eq!(exec(i(0x1b, 0x080 | 63, 1), hi, 0), 1 << 63); // slli.uw 63
    assert_eq!(exec(r(0x33, 0x10, 6), u64::MAX, 1), u64::MAX - 6); // wraps
}

#[test]
fn zbb() {
    let x = 0x0102_0304_0506_0708u64;
    assert_eq!(exec(r(0x33, 0x20, 7), 0b1100, 0b1010), 0b0100); // andn
    assert_eq!(exec(r(0x33, 0x20, 6), 0, 0), u64::MAX); // orn
    assert_eq!(exec(r(0x33, 0x20, 4), 0b1100, 0b1010), !0b0110); // xnor
    for (v, clz, ctz, cpop) in [
        (0u64, 64, 64, 0),
        (1, 63, 0, 1),
        (1 << 63, 0, 63, 1),
        (x, 7, 3, 13),
    ] {
        assert_eq!(exec(i(0x13, 0x600, 1), v, 0), clz, "clz {v:#x}");
        assert_eq!(exec(i(0x13, 0x601, 1), v, 0), ctz, "ctz {v:#x}");
        assert_eq!(exec(i(0x13, 0x602, 1), v, 0), cpop, "cpop {v:#x}");
    }
    let w = 0xffff_ffff_0000_0000u64;
    assert_eq!(exec(i(0x1b, 0x600, 1), w, 0), 32); // clzw ignores the upper half
    assert_eq!(exec(i(0x1b, 0x601, 1), w, 0), 32); // ctzw
    assert_eq!(exec(i(0x1b, 0x601, 1), 1 << 63, 0), 32); // (qemu 7.2 says 63)
    assert_eq!(exec(i(0x1b, 0x602, 1), w | 0x8001, 0), 2); // cpopw
    let (m1, one) = (u64::MAX, 1u64);
    assert_eq!(exec(r(0x33, 0x05, 6), m1, one), 1); // max: -1 < 1
    assert_eq!(exec(r(0x33, 0x05, 7), m1, one), m1); // maxu
    assert_eq!(exec(r(0x33, 0x05, 4), m1, one), m1); // min
    assert_eq!(exec(r(0x33, 0x05, 5), m1, one), 1); // minu
    assert_eq!(exec(i(0x13, 0x604, 1), 0x180, 0), 0xffff_ffff_ffff_ff80); // sext.b
    assert_eq!(exec(i(0x13, 0x605, 1), 0x1_8000, 0), 0xffff_ffff_ffff_8000); // sext.h
    assert_eq!(exec(r(0x3b, 0x04, 4) & !(31 << 20), m1, 0), 0xffff); // zext.h
    assert_eq!(exec(r(0x33, 0x30, 1), 1 << 63 | 1, 65), 0b11); // rol by 65 & 63
    assert_eq!(exec(r(0x33, 0x30, 5), 1, 1), 1 << 63); // ror
    assert_eq!(exec(i(0x13, 0x600 | 4, 5), 0xf, 0), 0xf000_0000_0000_0000); // rori 4
    assert_eq!(exec(r(0x3b, 0x30, 1), 0x8000_0001, 1), 3); // rolw
    assert_eq!(exec(r(0x3b, 0x30, 5), 1, 33), 0xffff_ffff_8000_0000); // rorw by 33 & 31
    assert_eq!(exec(i(0x1b, 0x600 | 1, 5), 1, 0), 0xffff_ffff_8000_0000); // roriw 1
    assert_eq!(
        exec(i(0x13, 0x287, 5), 0x0000_0100_0080_0012, 0),
        0x0000_ff00_00ff_00ff
    ); // orc.b
    assert_eq!(exec(i(0x13, 0x287, 5), 0, 0), 0);
    assert_eq!(exec(i(0x13, 0x6b8, 5), x, 0), 0x0807_0605_0403_0201); // rev8
}

#[test]
fn zbc() {
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut cases = vec![(u64::MAX, u64::MAX), (0, 5), (3, 3), (1 << 63, 1 << 63)];
    cases.extend((0..64).map(|_| (next(), next())));
    for (a, b) in cases {
        let p = clmul_ref(a, b);
        assert_eq!(
            exec(r(0x33, 0x05, 1), a, b),
            p as u64,
            "clmul {a:#x} {b:#x}"
        );
        assert_eq!(exec(r(0x33, 0x05, 3), a, b), (p >> 64) as u64, "clmulh");
        assert_eq!(exec(r(0x33, 0x05, 2), a, b), (p >> 63) as u64, "clmulr");
    }
    assert_eq!(exec(r(0x33, 0x05, 1), 3, 3), 5);
    assert_eq!(
        exec(r(0x33, 0x05, 3), u64::MAX, u64::MAX),
        0x5555_5555_5555_5555
    );
}

#[test]
fn zbs() {
    let v = 0xf0u64;
    assert_eq!(exec(r(0x33, 0x24, 1), v, 4), 0xe0); // bclr
    assert_eq!(exec(r(0x33, 0x24, 1), v, 64 + 4), 0xe0); // index & 63
    assert_eq!(exec(r(0x33, 0x24, 5), v, 4), 1); // bext
    assert_eq!(exec(r(0x33, 0x24, 5), v, 3), 0);
    assert_eq!(exec(r(0x33, 0x34, 1), v, 63), v | 1 << 63); // binv
    assert_eq!(exec(r(0x33, 0x14, 1), v, 0), 0xf1); // bset
    assert_eq!(exec(i(0x13, 0x480 | 63, 1), u64::MAX, 0), u64::MAX >> 1); // bclri 63
    assert_eq!(exec(i(0x13, 0x480 | 7, 5), v, 0), 1); // bexti 7
    assert_eq!(exec(i(0x13, 0x680 | 4, 1), v, 0), 0xe0); // binvi 4
    assert_eq!(exec(i(0x13, 0x280 | 40, 1), 0, 0), 1 << 40); // bseti 40
}

#[test]
fn zicond() {
    assert_eq!(exec(r(0x33, 0x07, 5), 42, 0), 0); // czero.eqz: rs2 == 0
    assert_eq!(exec(r(0x33, 0x07, 5), 42, 7), 42);
    assert_eq!(exec(r(0x33, 0x07, 7), 42, 0), 42); // czero.nez
    assert_eq!(exec(r(0x33, 0x07, 7), 42, 1 << 63), 0);
}

#[test]
fn zcb() {
    // s0 = a2, s1 = a1 (c.mv), then the instruction under test on s0.
    let on_s0 = |h: u16, v: u64, s1: u64| {
        let (hart, exit) = run_with(ExtSet::ALL, &[0x8432, 0x84ae, h as u32], s1, v);
        assert_eq!(exit, Exit::Ecall, "{h:#06x}");
        hart.x[8]
    };
    let v = 0x8765_4321_f0e1_d2c3u64;
    assert_eq!(on_s0(0x9c61, v, 0), 0xc3); // c.zext.b
    assert_eq!(on_s0(0x9c65, v, 0), 0xffff_ffff_ffff_ffc3); // c.sext.b
    assert_eq!(on_s0(0x9c69, v, 0), 0xd2c3); // c.zext.h
    assert_eq!(on_s0(0x9c6d, v, 0), 0xffff_ffff_ffff_d2c3); // c.sext.h
    assert_eq!(on_s0(0x9c71, v, 0), 0xf0e1_d2c3); // c.zext.w
    assert_eq!(on_s0(0x9c75, v, 0), !v); // c.not
    assert_eq!(on_s0(0x9c45, 6, 7), 42); // c.mul s0,s1
}

#[test]
fn zcb_loads_and_stores() {
    // Encoders for the Zcb memory forms (registers x8..x15).
    let c_lbu = |rd: u16, rs1: u16, off: u16| {
        0x8000 | (rs1 - 8) << 7 | (off & 1) << 6 | (off >> 1 & 1) << 5 | (rd - 8) << 2
    };
    let c_lh = |rd: u16, rs1: u16, off: u16, signed: u16| {
        0x8400 | (rs1 - 8) << 7 | signed << 6 | (off >> 1 & 1) << 5 | (rd - 8) << 2
    };
    let c_sb = |rs2: u16, rs1: u16, off: u16| {
        0x8800 | (rs1 - 8) << 7 | (off & 1) << 6 | (off >> 1 & 1) << 5 | (rs2 - 8) << 2
    };
    let c_sh = |rs2: u16, rs1: u16, off: u16| {
        0x8c00 | (rs1 - 8) << 7 | (off >> 1 & 1) << 5 | (rs2 - 8) << 2
    };
    // The specification's layouts, as in the decoder's table.
    assert_eq!(c_sb(15, 14, 1), 0x8b5c);
    assert_eq!(c_sh(15, 14, 2), 0x8f3c);
    assert_eq!(c_lbu(15, 14, 3), 0x837c);
    assert_eq!(c_lh(15, 14, 2, 1), 0x877c);
    let code = [
        0x0000_0717,               // auipc a4,0
        0x4007_0713,               // addi a4,a4,1024
        0x87ae,                    // c.mv a5,a1
        c_sb(15, 14, 1) as u32,    // byte at a4+1
        c_sh(15, 14, 2) as u32,    // halfword at a4+2
        c_lbu(13, 14, 1) as u32,   // a3
        c_lh(12, 14, 2, 0) as u32, // a2: c.lhu
        c_lh(8, 14, 2, 1) as u32,  // s0: c.lh
        c_lbu(9, 14, 3) as u32,    // s1: the halfword's upper byte
    ];
    let (h, exit) = run_with(ExtSet::ALL, &code, 0x1234_8281, 0);
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[13], 0x81);
    assert_eq!(h.x[12], 0x8281);
    assert_eq!(h.x[8], 0xffff_ffff_ffff_8281);
    assert_eq!(h.x[9], 0x82);
}

#[test]
fn hints_and_may_be_operations() {
    // prefetch.r 0(a1) with a1 unmapped: a hint never faults.
    let (h, exit) = run_with(ExtSet::ALL, &[0x0015_e013], 0x10, 0);
    assert_eq!((exit, h.x[10]), (Exit::Ecall, 0xdead));
    // pause, ntl.all, c.ntl.p1, c.mop.7: nothing changes.
    let (h, exit) = run_with(
        ExtSet::ALL,
        &[0x0100_000f, 0x0050_0033, 0x900a, 0x6381],
        1,
        2,
    );
    assert_eq!(
        (exit, h.x[10], h.x[11], h.x[12]),
        (Exit::Ecall, 0xdead, 1, 2)
    );
    // mop.r.0 a0,a1 and mop.rr.7 a0,a1,a2 write 0.
    assert_eq!(exec(0x81c5_c573, 5, 6), 0);
    assert_eq!(exec(0xcec5_c573, 5, 6), 0);
}

#[test]
fn wrs_offers_the_hart_and_goes_on() {
    let (h, exit) = run_with(ExtSet::ALL, &[0x00d0_0073], 0, 0);
    assert_eq!(exit, Exit::Yield);
    assert_eq!(h.pc, BASE + 4);
    assert_eq!(h.instret, 1);
}

#[test]
fn disabled_extensions_trap() {
    let gc = ExtSet::RV64GC;
    for word in [
        r(0x33, 0x10, 2), // sh1add
        r(0x33, 0x05, 1), // clmul
        r(0x33, 0x07, 5), // czero.eqz
        0x81c5_c573,      // mop.r.0
        0x00d0_0073,      // wrs.nto
        0x9c65,           // c.sext.b
        0x6081,           // c.mop.1
    ] {
        let (h, exit) = run_with(gc, &[word], 1, 2);
        assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)), "{word:#x}");
        assert_eq!(h.pc, BASE);
        assert_eq!(h.x[10], 0xdead);
    }
    // A disabled hint is its base instruction: pause is a fence.
    let (h, exit) = run_with(gc, &[0x0100_000f], 0, 0);
    assert_eq!((exit, h.instret), (Exit::Ecall, 2));
}

/// The made-up extension declared only in `rvnvmm-isa`'s table
/// (`insns/xdemo.rs`): the interpreter runs it from its declaration, the
/// cost model prices it by its class, and a hart without it traps.
#[test]
fn table_only_extension_runs() {
    use rvnvmm_isa::{decode, Ext, Op};
    let word = r(0x0b, 0x05, 1); // xdemo.mulxor a0, a1, a2
    assert_eq!(decode(word).op, Op::XdemoMulxor);
    assert_eq!(exec(word, 7, 6), (7 * 6) ^ 7);
    assert_eq!(exec(word, u64::MAX, 3), u64::MAX.wrapping_mul(3) ^ u64::MAX);
    let costs = crate::CoreCosts {
        mul: 9,
        ..Default::default()
    };
    assert_eq!(crate::cost::cost(&costs, &decode(word), None), 9);
    let (h, exit) = run_with(ExtSet::ALL.without(Ext::Xdemo), &[word], 7, 6);
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)), "{exit:?}");
    assert_eq!(h.x[10], 0xdead);
}
