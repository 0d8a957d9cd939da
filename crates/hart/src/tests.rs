//! Whole-hart tests on hand-encoded programs in bare (untranslated) mode.

use crate::fake_model::FakeModel;
use crate::{CodeCache, Core, Env, Exit, Hart, HartConfig, TimingModel, Trap};
use rvnvmm_mem::PhysMem;

const BASE: u64 = 0x8000_0000;

fn i_type(op: u32, f3: u32, rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | rs1 << 15 | f3 << 12 | rd << 7 | op
}
fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i_type(0x13, 0, rd, rs1, imm)
}
fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    ((imm >> 5) & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | 2 << 12 | (imm & 0x1f) << 7 | 0x23
}
fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    let o = off as u32;
    ((o >> 12) & 1) << 31
        | ((o >> 5) & 0x3f) << 25
        | rs2 << 20
        | rs1 << 15
        | 1 << 12
        | ((o >> 1) & 0xf) << 8
        | ((o >> 11) & 1) << 7
        | 0x63
}
const ECALL: u32 = 0x73;

fn machine(code: &[u32]) -> (PhysMem, CodeCache, Hart, Core) {
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(BASE, &bytes));
    let config = HartConfig::default();
    let core = Core::new(0, 0, &config);
    let mut h = Hart::new(config);
    h.pc = BASE;
    (mem, CodeCache::default(), h, core)
}

#[test]
fn counted_loop_retires_exact_instruction_count() {
    // a0 = 0; a1 = 100; loop: a0 += 3; a1 -= 1; bne a1, zero, loop; ecall
    let (mut mem, mut code, mut h, mut core) = machine(&[
        addi(10, 0, 0),
        addi(11, 0, 100),
        addi(10, 10, 3),
        addi(11, 11, -1),
        bne(11, 0, -8),
        ECALL,
    ]);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 300);
    assert_eq!(h.instret, 2 + 300 + 1);
    assert_eq!(h.pc, BASE + 20);
    assert_eq!(
        core.cycles, h.instret,
        "one cycle per instruction without a timing model"
    );
}

#[test]
fn store_to_decoded_code_is_seen_next_time() {
    // Executes `addi a0, a0, 1` at BASE+16, then overwrites it with
    // `addi a0, a0, 100` and runs it again.
    let new_insn = addi(10, 10, 100) as i32;
    let lo = (new_insn << 20) >> 20;
    let hi = (new_insn - lo) as u32 & 0xffff_f000;
    let lui_a2 = hi | 12 << 7 | 0x37;
    let prog = [
        lui_a2,           // a2 = upper(new)
        addi(12, 12, lo), // a2 = new instruction word
        addi(13, 0, 2),   // a3 = 2 (iterations)
        0x0000_0297,      // auipc t0, 0 (t0 = BASE+12)
        addi(10, 10, 1),  // BASE+16: patched
        sw(12, 5, 4),     // store new word at t0+4 = BASE+16
        addi(13, 13, -1),
        bne(13, 0, -12), // back to BASE+16
        ECALL,
    ];
    let (mut mem, mut code, mut h, mut core) = machine(&prog);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 101);
    assert!(code.flushes >= 1);
}

#[test]
fn illegal_and_misaligned_amo_trap_without_retiring() {
    let (mut mem, mut code, mut h, mut core) = machine(&[addi(10, 0, 1), 0]);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)));
    assert_eq!(h.pc, BASE + 4);
    assert_eq!(h.instret, 1);
    // amoadd.w a0, a1, (a2) with a2 misaligned.
    let amoadd = 0x00b6_252f;
    let (mut mem, mut code, mut h, mut core) = machine(&[addi(12, 0, 2), amoadd]);
    h.x[12] = 0;
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::STORE_MISALIGNED, 2)));
}

#[test]
fn unmapped_fetch_is_an_access_fault() {
    let (mut mem, mut code, mut h, mut core) = machine(&[ECALL]);
    h.pc = 0x1000;
    let exit = h.run(&mut core, &mut Env::functional(&mut mem, &mut code), 10);
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::INSN_ACCESS, 0x1000)));
}

#[test]
fn any_pc_value_faults_cleanly() {
    // The code cache once used u64::MAX as its empty-slot marker, so a PC
    // of u64::MAX found a block that did not exist.
    for pc in [u64::MAX, u64::MAX - 1, 1 << 63, 0] {
        let (mut mem, mut code, mut h, mut core) = machine(&[ECALL]);
        h.pc = pc;
        let exit = h.run(&mut core, &mut Env::functional(&mut mem, &mut code), 10);
        assert_eq!(
            exit,
            Exit::Trap(Trap::new(Trap::INSN_ACCESS, pc & !1)),
            "pc {pc:#x}"
        );
    }
}

#[test]
fn odd_pc_from_the_kernel_starts_at_the_halfword_below() {
    // As an `sret` to an odd `sepc` does: sepc[0] is always zero.
    let (mut mem, mut code, mut h, mut core) = machine(&[addi(10, 0, 7), ECALL]);
    h.pc = BASE + 1;
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 7);
}

#[test]
fn cycle_csr_reads_exact_mid_block() {
    // addi; addi; csrrs a0, cycle, zero; ecall
    let rdcycle = 0xc000_2573;
    let (mut mem, mut code, mut h, mut core) =
        machine(&[addi(5, 0, 1), addi(5, 5, 1), rdcycle, ECALL]);
    h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(h.x[10], 2);
}

fn r_type(op: u32, f3: u32, f7: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}

/// Runs `code` (an `ecall` is appended) after `setup`, returning the hart.
fn run_with(code: &[u32], setup: impl FnOnce(&mut Hart)) -> (Hart, PhysMem) {
    let mut prog = code.to_vec();
    prog.push(ECALL);
    let (mut mem, mut code, mut h, mut core) = machine(&prog);
    setup(&mut h);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall, "program trapped");
    (h, mem)
}

#[test]
fn m_extension_edge_cases() {
    let (div, rem, divw, remuw, mulh, mulhsu) = (
        r_type(0x33, 4, 1, 10, 5, 6),
        r_type(0x33, 6, 1, 11, 5, 6),
        r_type(0x3b, 4, 1, 12, 5, 6),
        r_type(0x3b, 7, 1, 13, 5, 6),
        r_type(0x33, 1, 1, 14, 5, 7),
        r_type(0x33, 2, 1, 15, 5, 7),
    );
    // Division by zero: quotient all ones, remainder the dividend.
    let (h, _) = run_with(&[div, rem, divw, remuw], |h| {
        h.x[5] = 0x1234_5678_9abc_def0;
        h.x[6] = 0;
    });
    assert_eq!(h.x[10], u64::MAX);
    assert_eq!(h.x[11], 0x1234_5678_9abc_def0);
    assert_eq!(h.x[12], u64::MAX);
    assert_eq!(
        h.x[13], 0xffff_ffff_9abc_def0,
        "remuw sign-extends the 32-bit dividend"
    );
    // Signed overflow: MIN / -1 = MIN, remainder 0.
    let (h, _) = run_with(&[div, rem, divw, mulh, mulhsu], |h| {
        h.x[5] = i64::MIN as u64;
        h.x[6] = u64::MAX;
        h.x[7] = u64::MAX;
    });
    assert_eq!(h.x[10], i64::MIN as u64);
    assert_eq!(h.x[11], 0);
    assert_eq!(h.x[12], 0, "divw of low words 0 / -1");
    assert_eq!(h.x[14], 0, "mulh(MIN, -1) high half");
    // -2^63 * (2^64 - 1) = -2^127 + 2^63, whose high half is 0x8000...
    assert_eq!(
        h.x[15], 0x8000_0000_0000_0000,
        "mulhsu(MIN, 2^64-1) high half"
    );
}

#[test]
fn atomics_and_reservations() {
    const BUF: u64 = BASE + 0x8000;
    let amo = |f5: u32, f3: u32, rd: u32| r_type(0x2f, f3, f5 << 2, rd, 5, 6);
    let prog = [
        amo(0x00, 2, 10),                     // amoadd.w a0, t1, (t0)
        amo(0x10, 3, 11),                     // amomin.d a1, t1, (t0)
        r_type(0x2f, 3, 0x02 << 2, 12, 5, 0), // lr.d a2, (t0)
        amo(0x03, 3, 13),                     // sc.d a3, t1, (t0): succeeds
        amo(0x03, 3, 14),                     // sc.d a4, t1, (t0): no reservation, fails
    ];
    let (h, mem) = run_with(&prog, |h| {
        h.x[5] = BUF;
        h.x[6] = (-5i64) as u64;
    });
    assert_eq!(h.x[10], 0, "amoadd.w returns the old word");
    // After amoadd.w: low word = -5 (0xfffffffb), high word 0 -> d = 0x00000000_fffffffb.
    assert_eq!(
        h.x[11], 0x0000_0000_ffff_fffb,
        "amomin.d returns the old doubleword"
    );
    assert_eq!(h.x[12], (-5i64) as u64, "min(0xfffffffb, -5) = -5");
    assert_eq!(h.x[13], 0, "sc after lr succeeds");
    assert_eq!(h.x[14], 1, "sc without a reservation fails");
    assert_eq!(mem.read_u64(BUF), Some((-5i64) as u64));
}

#[test]
fn floating_point_rounding_nan_boxing_and_flags() {
    let fadd_d_dyn = r_type(0x53, 7, 0x01, 1, 2, 3);
    let fadd_s_rne = r_type(0x53, 0, 0x00, 4, 5, 6);
    let fcvt_w_d_rtz = r_type(0x53, 1, 0x61, 10, 7, 0);
    let fmin_d = r_type(0x53, 0, 0x15, 8, 9, 2);
    let csrr_fflags = 0x0010_25f3; // csrrs a1, fflags, zero
    let one = 1.0f64.to_bits();
    let run = |frm: u8| {
        run_with(
            &[fadd_d_dyn, fadd_s_rne, fcvt_w_d_rtz, fmin_d, csrr_fflags],
            |h| {
                h.frm = frm;
                h.f[2] = one;
                h.f[3] = (2.0f64.powi(-60)).to_bits(); // inexact when added to 1
                h.f[5] = 1.5f32.to_bits() as u64; // not NaN-boxed: reads as canonical NaN
                h.f[6] = rvnvmm_fpu::box_f32(1.0f32.to_bits());
                h.f[7] = 3e10f64.to_bits(); // out of i32 range
                h.f[9] = 0x7ff4_0000_0000_0000; // signalling NaN
            },
        )
        .0
    };
    let up = run(3); // RUP
    assert_eq!(
        up.f[1],
        f64::from_bits(one).next_up().to_bits(),
        "dynamic RUP rounds up"
    );
    let ne = run(0);
    assert_eq!(ne.f[1], one, "RNE rounds to 1");
    assert_eq!(
        ne.f[4], 0xffff_ffff_7fc0_0000,
        "unboxed operand gives a boxed canonical NaN"
    );
    assert_eq!(ne.x[10], i32::MAX as u64, "fcvt.w.d saturates");
    assert_eq!(
        ne.f[8], one,
        "fmin with a signalling NaN returns the other operand"
    );
    // NX from the additions, NV from fcvt and the sNaN.
    assert_eq!(ne.x[11] & 0x1f, 0x10 | 0x01);
    assert_eq!(ne.fflags, 0x11);
}

#[test]
fn fused_multiply_add_rounds_once() {
    // fmadd.d f1, f2, f3, f4 (dynamic rm): a*b + c with a = b = 1 + 2^-27,
    // c = -(1 + 2^-26): the exact result 2^-54 survives only without an
    // intermediate rounding of a*b.
    let fmadd_d = 4 << 27 | 1 << 25 | 3 << 20 | 2 << 15 | 7 << 12 | 1 << 7 | 0x43;
    let a = 1.0 + 2f64.powi(-27);
    let (h, _) = run_with(&[fmadd_d], |h| {
        h.f[2] = a.to_bits();
        h.f[3] = a.to_bits();
        h.f[4] = (-(1.0 + 2f64.powi(-26))).to_bits();
    });
    assert_eq!(f64::from_bits(h.f[1]), 2f64.powi(-54));
}

#[test]
fn half_precision_loads_stores_boxing_and_conversions() {
    const BUF: u64 = BASE + 0x8000;
    let flh = |rd: u32, imm: i32| i_type(0x07, 1, rd, 5, imm);
    let fsh = |rs2: u32, imm: i32| {
        let imm = imm as u32;
        ((imm >> 5) & 0x7f) << 25 | rs2 << 20 | 5 << 15 | 1 << 12 | (imm & 0x1f) << 7 | 0x27
    };
    let prog = [
        r_type(0x53, 0, 0x7a, 1, 28, 0),  // fmv.h.x f1, t3 (1.5)
        r_type(0x53, 0, 0x7a, 2, 29, 0),  // fmv.h.x f2, t4 (0.25)
        r_type(0x53, 7, 0x02, 3, 1, 2),   // fadd.h f3, f1, f2 (dyn)
        fsh(3, 4),                        // store 1.75
        flh(16, 4),                       // and load it back
        r_type(0x53, 0, 0x72, 10, 3, 0),  // fmv.x.h a0, f3
        r_type(0x53, 7, 0x20, 4, 3, 2),   // fcvt.s.h f4, f3
        r_type(0x53, 1, 0x62, 11, 6, 0),  // fcvt.w.h a1, f6, rtz
        r_type(0x53, 0, 0x02, 7, 8, 1),   // fadd.h f7, f8, f1 (f8 unboxed)
        r_type(0x53, 0, 0x72, 12, 9, 0),  // fmv.x.h a2, f9 (negative half)
        r_type(0x53, 0, 0x7a, 13, 6, 0),  // fmv.h.x f13, t1
        r_type(0x53, 7, 0x22, 14, 15, 1), // fcvt.h.d f14, f15
    ];
    let (h, mem) = run_with(&prog, |h| {
        h.x[5] = BUF;
        h.x[6] = 0xdead_beef_0000_c500; // -5.0 in the low half
        h.x[28] = 0x3e00;
        h.x[29] = 0x3400;
        h.f[6] = rvnvmm_fpu::box_f16(0xc0f0); // -2.46875
        h.f[8] = rvnvmm_fpu::box_f32(0x3c00); // a boxed single, not a half
        h.f[9] = 0x0123_4567_89ab_fc00; // -inf bits, improperly boxed
        h.f[15] = 65520f64.to_bits(); // rounds to +inf in RNE
    });
    assert_eq!(h.f[1], 0xffff_ffff_ffff_3e00);
    assert_eq!(mem.read_u64(BUF + 4).map(|v| v as u16), Some(0x3f00));
    assert_eq!(h.f[16], rvnvmm_fpu::box_f16(0x3f00));
    assert_eq!(h.f[3], rvnvmm_fpu::box_f16(0x3f00), "1.5 + 0.25 = 1.75");
    assert_eq!(h.x[10], 0x3f00);
    assert_eq!(h.f[4], rvnvmm_fpu::box_f32(1.75f32.to_bits()));
    assert_eq!(h.x[11], (-2i64) as u64, "fcvt.w.h rounds towards zero");
    assert_eq!(
        h.f[7],
        rvnvmm_fpu::box_f16(0x7e00),
        "unboxed operand: canonical NaN"
    );
    assert_eq!(
        h.x[12], 0xffff_ffff_ffff_fc00,
        "fmv.x.h sign-extends, unchecked"
    );
    assert_eq!(
        h.f[13], 0xffff_ffff_ffff_c500,
        "fmv.h.x takes the low 16 bits"
    );
    assert_eq!(h.f[14], rvnvmm_fpu::box_f16(0x7c00));
    assert_eq!(
        h.fflags,
        0x04 | 0x01,
        "OF and NX from fcvt.h.d; NX from fcvt.w.h"
    );
}

#[test]
fn half_store_and_load_round_trip_through_memory() {
    const BUF: u64 = BASE + 0x8000;
    let fsh = 0x0012_9027; // fsh f1, 0(t0)
    let flh = 0x0002_9107; // flh f2, 0(t0)
    let (h, mem) = run_with(&[fsh, flh], |h| {
        h.x[5] = BUF;
        h.f[1] = 0x1111_2222_3333_abcd; // only the low 16 bits are stored
    });
    assert_eq!(mem.read_u64(BUF).map(|v| v & 0xffff_ffff), Some(0xabcd));
    assert_eq!(h.f[2], rvnvmm_fpu::box_f16(0xabcd));
}

#[test]
fn zfa_instructions() {
    let prog = [
        0xf01e_8053 | 1 << 7,              // fli.s f1, 0x1p+16
        0xf210_8053 | 2 << 7,              // fli.d f2, min
        0xf41e_8053 | 3 << 7,              // fli.h f3, entry 29 (+inf)
        r_type(0x53, 2, 0x15, 4, 5, 6),    // fminm.d f4, f5, f6
        r_type(0x53, 1, 0x21, 7, 8, 4),    // fround.d f7, f8, rtz
        r_type(0x53, 3, 0x21, 9, 8, 5),    // froundnx.d f9, f8, rup
        r_type(0x53, 1, 0x61, 10, 11, 8),  // fcvtmod.w.d a0, f11, rtz
        r_type(0x53, 5, 0x51, 11, 5, 12),  // fltq.d a1, f5, f12
        r_type(0x53, 4, 0x50, 12, 13, 13), // fleq.s a2, f13, f13
    ];
    let (h, _) = run_with(&prog, |h| {
        h.f[5] = 1.0f64.to_bits();
        h.f[6] = 0x7ff8_0000_0000_0001; // quiet NaN with a payload
        h.f[8] = (-2.5f64).to_bits();
        h.f[11] = (4294967296.0f64 * 3.0 + 7.0).to_bits();
        h.f[12] = 0x7ff8_0000_0000_0000;
        h.f[13] = rvnvmm_fpu::box_f32(2.0f32.to_bits());
    });
    assert_eq!(h.f[1], rvnvmm_fpu::box_f32(65536f32.to_bits()));
    assert_eq!(h.f[2], 0x0010_0000_0000_0000);
    assert_eq!(h.f[3], rvnvmm_fpu::box_f16(0x7c00));
    assert_eq!(
        h.f[4], 0x7ff8_0000_0000_0000,
        "fminm: NaN in, canonical NaN out"
    );
    assert_eq!(h.f[7], (-2.0f64).to_bits());
    assert_eq!(h.f[9], (-2.0f64).to_bits());
    assert_eq!(h.x[10], 7, "fcvtmod keeps the low 32 bits");
    assert_eq!(h.x[11], 0, "fltq with a quiet NaN: false, no NV");
    assert_eq!(h.x[12], 1);
    assert_eq!(
        h.fflags,
        0x10 | 0x01,
        "NV from fcvtmod, NX from froundnx only"
    );
}

#[test]
fn machine_isa_gates_zfh_zfhmin_and_zfa() {
    let fadd_h = r_type(0x53, 7, 0x02, 1, 2, 3);
    let fcvt_s_h = r_type(0x53, 7, 0x20, 1, 2, 2);
    let fli_d = 0xf210_8053 | 1 << 7;
    let run = |isa: &str, w: u32| {
        let (mut mem, mut code, _, mut core) = machine(&[w, ECALL]);
        let mut h = Hart::new(HartConfig {
            isa: isa.parse().unwrap(),
            ..HartConfig::default()
        });
        h.pc = BASE;
        h.run(
            &mut core,
            &mut Env::functional(&mut mem, &mut code),
            u64::MAX,
        )
    };
    let illegal = Exit::Trap(Trap::new(Trap::ILLEGAL, 0));
    for w in [fadd_h, fcvt_s_h, fli_d] {
        assert_eq!(run("rv64gc", w), illegal, "{w:#010x}");
    }
    assert_eq!(run("rv64gc_zfhmin", fcvt_s_h), Exit::Ecall);
    assert_eq!(run("rv64gc_zfhmin", fadd_h), illegal);
    assert_eq!(run("rv64gc_zfh", fadd_h), Exit::Ecall);
    assert_eq!(run("rv64gc_zfa", fli_d), Exit::Ecall);
    assert_eq!(run("rv64imafc_zfa", fli_d), illegal);
}

#[test]
fn zfa_reserved_rounding_mode_traps() {
    // fround.s with rm = 6 is illegal; fcvtmod.w.d with rm = 0 does not
    // decode.
    for w in [
        r_type(0x53, 6, 0x20, 1, 2, 4),
        r_type(0x53, 0, 0x61, 10, 11, 8),
    ] {
        let (mut mem, mut code, mut h, mut core) = machine(&[w]);
        let exit = h.run(
            &mut core,
            &mut Env::functional(&mut mem, &mut code),
            u64::MAX,
        );
        assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)), "{w:#010x}");
    }
}

#[test]
fn illegal_rounding_mode_and_csr_traps() {
    // fadd.d with rm = 5 (reserved) is illegal; so is a write to `cycle`.
    let (mut mem, mut code, mut h, mut core) = machine(&[r_type(0x53, 5, 0x01, 1, 2, 3)]);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)));
    let csrw_cycle = 0xc002_9073; // csrrw zero, cycle, t0
    let (mut mem, mut code, mut h, mut core) = machine(&[csrw_cycle]);
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)));
}

/// A hart ahead of the others stops before an access that would leave its
/// L1 (nothing of the instruction done), runs it once the limit allows,
/// and never stops for an L1 hit.
#[test]
fn sync_limit_stops_before_an_access_past_the_l1_and_never_for_a_hit() {
    let mut ms = FakeModel::new(6, 6);
    ms.remember = true;
    ms.stall = 60;
    let data = BASE + 0x8000;
    // lw a0, 0(t0); ecall
    let (mut mem, mut code, mut h, mut core) = machine(&[i_type(0x03, 2, 10, 5, 0), ECALL]);
    assert!(mem.write(data, &42u32.to_le_bytes()));
    h.x[5] = data;
    core.cycles = 1000;

    // Ahead of the limit, the block's fetch would miss: stop at once.
    core.set_sync_limit(500);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.instret, h.pc), (Exit::Budget, 0, BASE));
    assert!(ms.calls.is_empty(), "the fetch did not happen");

    // The code line is in the L1I now; the load would miss the L1D.
    ms.fetch_lines.insert(BASE >> 6);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.instret, h.pc, h.x[10]), (Exit::Budget, 0, BASE, 0));
    assert!(ms.calls.is_empty(), "the load did not happen");

    // Allowed: it runs, pays the miss, and reaches the ecall.
    core.set_sync_limit(u64::MAX);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.x[10]), (Exit::Ecall, 42));
    assert_eq!(ms.data().len(), 1);
    assert!(
        core.cycles >= 1000 + 60,
        "a miss costs {}",
        core.cycles - 1000
    );

    // Far ahead again, but the line is in the L1D now: no stop.
    h.pc = BASE;
    h.x[10] = 0;
    core.set_sync_limit(0);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.x[10]), (Exit::Ecall, 42));
    assert_eq!(ms.data().len(), 1);
}

/// Atomics hand lines between harts: `lr`, `sc` and AMOs on a line the
/// core does not hold privately stop at the sync limit without the
/// tolerance a plain access has; on a private line they run on however far
/// ahead the hart is. They reach the model as what they are.
#[test]
fn atomics_on_a_shared_line_wait_for_the_other_harts() {
    let mut ms = FakeModel::new(6, 6);
    let data = BASE + 0x8000;
    // lr.d a2, (t0); amoadd.d a0, t1, (t0); ecall
    let prog = [
        r_type(0x2f, 3, 0x02 << 2, 12, 5, 0),
        r_type(0x2f, 3, 0, 10, 5, 6),
        ECALL,
    ];
    let (mut mem, mut code, mut h, mut core) = machine(&prog);
    h.x[5] = data;
    h.x[6] = 1;
    ms.fetch_lines.insert(BASE >> 6);
    core.cycles = 1000;

    // Another hart is at 999 (limit = its clock + the tolerance): a plain
    // access that leaves the L1 would go on within the tolerance; the lr
    // waits.
    core.set_sync_limit(999 + crate::SYNC_TOLERANCE);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.instret, h.pc), (Exit::Budget, 0, BASE));
    assert!(ms.calls.is_empty());

    // At the others' time: both run, each reaching the model as what it is.
    core.set_sync_limit(u64::MAX);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 0);
    assert_eq!(
        ms.data().iter().map(|a| a.kind).collect::<Vec<_>>(),
        [crate::DataKind::LoadReserved, crate::DataKind::Amo]
    );
    assert_eq!(h.stats.atomics.lr, 1);
    assert_eq!(h.stats.atomics.amos, 1);

    // A private line (resident in the fake model): ahead of the other
    // harts, but by less than the run-ahead, the atomics go on.
    ms.calls.clear();
    ms.data_lines.insert(data >> 6);
    h.pc = BASE;
    let others = core.cycles - 1;
    core.set_sync_limit(others + crate::SYNC_TOLERANCE);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.x[10]), (Exit::Ecall, 1));
    assert!(ms.data().is_empty(), "filter hits");

    // More than the run-ahead past them: even on a private line, it waits.
    h.pc = BASE;
    core.set_sync_limit(core.cycles - crate::ATOMIC_RUN_AHEAD - 1 + crate::SYNC_TOLERANCE);
    let instret = h.instret;
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.instret, h.pc), (Exit::Budget, instret, BASE));
}

fn timed<'a, T: TimingModel>(
    mem: &'a mut PhysMem,
    code: &'a mut CodeCache,
    ms: &'a mut T,
) -> Env<'a, T> {
    Env {
        mem,
        code,
        timing: Some(ms),
        mmio: None,
    }
}

fn sd(rs2: u32, rs1: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    ((imm >> 5) & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | 3 << 12 | (imm & 0x1f) << 7 | 0x23
}

/// A block is fetched once per line of the model's size: with 32-byte lines
/// (zc706's L1I) an 80-byte block is three lines, not the two 64-byte lines
/// it would span.
#[test]
fn fetch_presents_every_line_of_the_models_size() {
    let mut prog = vec![addi(10, 10, 1); 19];
    prog.push(ECALL);
    for (shift, lines) in [
        (5, vec![BASE, BASE + 32, BASE + 64]),
        (6, vec![BASE, BASE + 64]),
    ] {
        let (mut mem, mut code, mut h, mut core) = machine(&prog);
        let mut ms = FakeModel::new(6, shift);
        let exit = h.run(
            &mut core,
            &mut timed(&mut mem, &mut code, &mut ms),
            u64::MAX,
        );
        assert_eq!((exit, h.x[10]), (Exit::Ecall, 19));
        assert_eq!(ms.fetches(), lines, "{}-byte lines", 1 << shift);
    }
}

/// A misaligned access that crosses a data line is presented once per line,
/// each piece with its own size; one that crosses a page too.
#[test]
fn a_line_crossing_access_is_presented_once_per_line() {
    use crate::{DataAccess, DataKind};
    let data = BASE + 0x8000;
    // ld a0, 60(t0); sd a0, 28(t0) (32-byte lines); ld a1, 0(t1); ecall
    let prog = [
        i_type(0x03, 3, 10, 5, 60),
        sd(10, 5, 28),
        i_type(0x03, 3, 11, 6, 0),
        ECALL,
    ];
    let (mut mem, mut code, mut h, mut core) = machine(&prog);
    assert!(mem.write(data + 60, &0x1122_3344_5566_7788u64.to_le_bytes()));
    h.x[5] = data;
    h.x[6] = data + 4094; // the last two bytes of a page
    let mut ms = FakeModel::new(5, 6);
    let exit = h.run(
        &mut core,
        &mut timed(&mut mem, &mut code, &mut ms),
        u64::MAX,
    );
    assert_eq!((exit, h.x[10]), (Exit::Ecall, 0x1122_3344_5566_7788));
    let piece = |paddr, size, kind| DataAccess { paddr, size, kind };
    use DataKind::{Load, Store};
    assert_eq!(
        ms.data(),
        [
            piece(data + 60, 4, Load),
            piece(data + 64, 4, Load),
            piece(data + 28, 4, Store),
            piece(data + 32, 4, Store),
            piece(data + 4094, 2, Load),
            piece(data + 4096, 6, Load),
        ]
    );
}

/// With `exact_budget` a run stops at exactly its budget, mid-block too,
/// and goes on from there as if never stopped.
#[test]
fn exact_budget_stops_at_the_instruction() {
    let prog = [
        addi(10, 0, 0),
        addi(11, 0, 100),
        addi(10, 10, 3),
        addi(11, 11, -1),
        bne(11, 0, -8),
        ECALL,
    ];
    for budget in [1, 2, 3, 7, 64, 65, 200, 302] {
        let (mut mem, mut code, mut h, mut core) = machine(&prog);
        h.exact_budget = true;
        let mut env = Env::functional(&mut mem, &mut code);
        assert_eq!(h.run(&mut core, &mut env, budget), Exit::Budget);
        assert_eq!(h.instret, budget, "budget {budget}");
        assert_eq!(core.cycles, budget);
        assert_eq!(h.run(&mut core, &mut env, u64::MAX), Exit::Ecall);
        assert_eq!((h.x[10], h.instret), (300, 303));
    }
}

/// Flushes of NVMM lines and the fences after them reach the memory's
/// persistence domain, at the instruction counts they retire at.
#[test]
fn flushes_and_fences_reach_the_persistence_domain() {
    use rvnvmm_mem::persist::{crash, Domain, DomainKind, Event, EventKind};
    const NVMM: u64 = 0x1_0000_0000;
    let cbo_flush = |rs1| i_type(0x0f, 2, 0, rs1, 2);
    let fence_rw_rw = 0x0330_000f;
    let fence_r_r = 0x0220_000f;
    // a1 = NVMM; sd a1 -> [a1]; cbo.flush (a1); fence r,r; fence rw,rw;
    // sd a1 -> [a1 + 64]; ecall
    let lui = |rd: u32, imm: u32| imm << 12 | rd << 7 | 0x37;
    let slli = |rd, rs1, sh| i_type(0x13, 1, rd, rs1, sh);
    let (mut mem, mut code, mut h, mut core) = machine(&[
        lui(11, 1),
        slli(11, 11, 20), // a1 = 1 << 32
        sd(11, 11, 0),
        cbo_flush(11),
        fence_r_r,
        fence_rw_rw,
        sd(11, 11, 64),
        ECALL,
    ]);
    mem.add_region(NVMM, 0x10000).unwrap();
    let mut domain = Domain::new(DomainKind::Adr, NVMM, 0x10000, 64);
    domain.record_events();
    mem.set_domain(domain);
    mem.set_insn_base(1000);
    h.config.cflush_user = true;
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    let d = mem.domain().unwrap();
    assert_eq!(
        d.events(),
        [
            Event {
                insn: 1003,
                kind: EventKind::Flush
            },
            Event {
                insn: 1005,
                kind: EventKind::Fence(1)
            }
        ]
    );
    let r = crash(&mut mem, None, 0).unwrap();
    assert_eq!(r.lost_lines, vec![NVMM + 64]);
}

/// A hart configuration with Rocket's costs (freedom-u500's `[core]`).
fn rocket() -> HartConfig {
    HartConfig {
        costs: crate::CoreCosts::default(),
        ..HartConfig::default()
    }
}

/// Runs `prog` alone on a core with Rocket's costs, `setup` applied to the
/// hart first; returns the core's clock at its `ecall`.
fn run_alone(prog: &[u32], setup: impl FnOnce(&mut Hart)) -> u64 {
    let (mut mem, mut code, _, _) = machine(prog);
    let mut h = Hart::new(rocket());
    h.pc = BASE;
    setup(&mut h);
    let mut core = Core::new(0, 0, &rocket());
    let exit = h.run(
        &mut core,
        &mut Env::functional(&mut mem, &mut code),
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    core.cycles
}

/// A counted loop of `body` (a1 counts down from `n`), then `ecall`.
fn loop_program(body: &[u32], n: i32) -> Vec<u32> {
    let mut p = vec![addi(11, 0, n)];
    p.extend_from_slice(body);
    p.push(addi(11, 11, -1));
    let back = -4 * (body.len() as i32 + 1);
    p.push(bne(11, 0, back));
    p.push(ECALL);
    p
}

/// Runs the harts of one SMT core as the scheduler does: the one furthest
/// behind next, until `window` cycles past its sibling, until both reach
/// their `ecall`. Returns each thread's clock at its end.
fn run_smt_core(programs: &[Vec<u32>], window: u64) -> Vec<u64> {
    run_smt_threads(programs, window, u64::MAX, false)
        .iter()
        .map(|t| t[0])
        .collect()
}

/// [`run_smt_core`] with turns of at most `budget` instructions, each
/// turn a call of `Hart::run` or (`together`) the siblings' turns run back
/// to back by `Hart::run_siblings` until one reaches its `ecall`. Returns
/// each thread's clock, instructions and issue and unit waits.
fn run_smt_threads(
    programs: &[Vec<u32>],
    window: u64,
    budget: u64,
    together: bool,
) -> Vec<[u64; 4]> {
    let config = rocket();
    let calendar = crate::smt::IssueCalendar::shared(1, rvnvmm_config::SmtPolicy::RoundRobin);
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let mut code = CodeCache::default();
    let mut harts = Vec::new();
    let mut cores = Vec::new();
    for (k, prog) in programs.iter().enumerate() {
        let at = BASE + 0x1000 * k as u64;
        let bytes: Vec<u8> = prog.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(mem.write(at, &bytes));
        let mut h = Hart::new(config.clone());
        h.pc = at;
        harts.push(h);
        cores.push(Core::new(0, k as u64, &config).with_smt(&calendar, k));
    }
    let mut done = vec![false; harts.len()];
    while let Some(k) = (0..harts.len())
        .filter(|&k| !done[k])
        .min_by_key(|&k| cores[k].cycles)
    {
        let mut earliest = u64::MAX;
        for j in 0..harts.len() {
            let ready = (j != k && !done[j]).then_some(cores[j].cycles);
            cores[k].set_sibling_ready(j, ready);
            if let Some(c) = ready {
                earliest = earliest.min(c);
            }
        }
        cores[k].set_turn_end(earliest.saturating_add(window));
        cores[k].set_sync_limit(earliest.saturating_add(crate::SYNC_TOLERANCE));
        let mut env = Env::functional(&mut mem, &mut code);
        if !together {
            if harts[k].run(&mut cores[k], &mut env, budget) == Exit::Ecall {
                done[k] = true;
            }
            continue;
        }
        let live: Vec<usize> = (0..harts.len()).filter(|&j| !done[j]).collect();
        let mut siblings: Vec<crate::Sibling<'_>> = harts
            .iter_mut()
            .zip(cores.iter_mut())
            .zip(&done)
            .filter(|(_, &d)| !d)
            .map(|((hart, core), _)| crate::Sibling {
                hart,
                core,
                turns_before: u64::MAX,
                retired: 0,
            })
            .collect();
        let first = live.iter().position(|&j| j == k).unwrap();
        let plan = crate::SiblingPlan {
            budget,
            pick_before: u64::MAX,
            others_reach: u64::MAX,
            tolerance: crate::SYNC_TOLERANCE,
            insn_room: u64::MAX,
        };
        let (last, exit) = Hart::run_siblings(&mut siblings, first, &mut env, budget, &plan);
        if exit == Exit::Ecall {
            done[live[last]] = true;
        }
    }
    harts
        .iter()
        .zip(&cores)
        .map(|(h, c)| {
            [
                c.cycles,
                h.instret,
                h.stats.issue_wait_cycles,
                h.stats.unit_wait_cycles,
            ]
        })
        .collect()
}

/// The siblings' turns run back to back give what the same turns run one
/// call at a time give: the clocks, instructions and waits of every
/// thread, with turns ended by the window and by the budget.
#[test]
fn siblings_run_together_as_turn_by_turn() {
    let mul = r_type(0x33, 0, 1, 12, 12, 13);
    let div = r_type(0x33, 4, 1, 14, 12, 13);
    let divs = loop_program(&[mul, addi(12, 12, 7), div, addi(13, 13, 1)], 60);
    let alu = loop_program(&[addi(12, 12, 1); 5], 150);
    let short = loop_program(&[div, addi(12, 12, 3)], 10);
    for programs in [
        vec![divs.clone(), alu.clone()],
        vec![alu.clone(), divs.clone(), short],
        vec![divs.clone(), divs],
    ] {
        for budget in [u64::MAX, 7] {
            let apart = run_smt_threads(&programs, 32, budget, false);
            let together = run_smt_threads(&programs, 32, budget, true);
            assert_eq!(apart, together, "budget {budget}");
            assert!(apart.iter().any(|t| t[2] + t[3] > 0), "{apart:?}");
        }
    }
}

/// Alone on an SMT core, a thread takes exactly the cycles it takes on a
/// core of its own: its own long operations never block it twice.
#[test]
fn a_lone_smt_thread_times_as_a_core_of_its_own() {
    let mul = r_type(0x33, 0, 1, 12, 12, 13);
    let div = r_type(0x33, 4, 1, 14, 12, 13);
    let prog = loop_program(&[mul, addi(12, 12, 7), div, addi(13, 13, 1), mul], 50);
    let lone = run_alone(&prog, |_| {});
    assert!(lone > 50 * 66, "{lone}");
    let smt = run_smt_core(&[prog], 32);
    assert_eq!(smt, [lone]);
}

/// Two ALU-bound threads share one issue slot: each takes about twice as
/// long as alone (less: each fills the other's bubbles). A divide-bound thread beside an ALU-bound one loses little:
/// it leaves the slot while its divides run.
#[test]
fn smt_threads_share_the_issue_slot() {
    let alu = loop_program(&[addi(12, 12, 1); 8], 200);
    let alone = run_alone(&alu, |_| {});
    let both = run_smt_core(&[alu.clone(), alu.clone()], 32);
    // One slot a cycle for the 2 x 2000 instructions; the taken-branch
    // bubbles (200 cycles of each thread alone) go to the sibling.
    assert_eq!(alone, 2000 + 200 + 1);
    for &c in &both {
        assert!((3900..4000 + 32).contains(&c), "{both:?} vs {alone}");
    }
    assert!(both.iter().max() >= Some(&4000), "{both:?}");
    let div = r_type(0x33, 4, 1, 14, 12, 13);
    let divs = loop_program(&[div, addi(12, 12, 1)], 40);
    let div_alone = run_alone(&divs, |_| {});
    let mixed = run_smt_core(&[divs, alu], 32);
    assert!(
        (mixed[0] as f64) < div_alone as f64 * 1.1,
        "divide thread {mixed:?} vs {div_alone} alone"
    );
    assert!(
        (mixed[1] as f64) < alone as f64 * 1.2,
        "ALU thread {mixed:?} vs {alone} alone"
    );
}

#[test]
fn a_marker_ends_its_block_and_exits_past_itself() {
    use rvnvmm_isa::{encode_marker, MarkerOp};
    // a0 = 3; marker `exit` (argument a0); a0 = 4; ecall.
    let (mut mem, mut code, mut h, mut core) = machine(&[
        addi(10, 0, 3),
        encode_marker(MarkerOp::Exit, 10),
        addi(10, 0, 4),
        ECALL,
    ]);
    let mut env = Env::functional(&mut mem, &mut code);
    let exit = h.run(&mut core, &mut env, u64::MAX);
    assert_eq!(
        exit,
        Exit::Marker {
            op: MarkerOp::Exit,
            arg: 3
        }
    );
    // The marker retired and wrote nothing; it is the block's last one.
    assert_eq!((h.pc, h.instret, h.x[0], h.x[10]), (BASE + 8, 2, 0, 3));
    assert_eq!(env.code.block(0).insns.len(), 2);
    // Run on: architecturally it was a no-op.
    assert_eq!(h.run(&mut core, &mut env, u64::MAX), Exit::Ecall);
    assert_eq!((h.instret, h.x[10]), (4, 4));
}
