//! Whole-hart tests on hand-encoded programs in bare (untranslated) mode.

use crate::{CodeCache, Env, Exit, Hart, HartConfig, Trap};
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

fn machine(code: &[u32]) -> (PhysMem, CodeCache, Hart) {
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(BASE, &bytes));
    let mut h = Hart::new(0, HartConfig::default());
    h.pc = BASE;
    (mem, CodeCache::default(), h)
}

#[test]
fn counted_loop_retires_exact_instruction_count() {
    // a0 = 0; a1 = 100; loop: a0 += 3; a1 -= 1; bne a1, zero, loop; ecall
    let (mut mem, mut code, mut h) = machine(&[
        addi(10, 0, 0),
        addi(11, 0, 100),
        addi(10, 10, 3),
        addi(11, 11, -1),
        bne(11, 0, -8),
        ECALL,
    ]);
    let exit = h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 300);
    assert_eq!(h.instret, 2 + 300 + 1);
    assert_eq!(h.pc, BASE + 20);
    assert_eq!(
        h.cycles, h.instret,
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
    let (mut mem, mut code, mut h) = machine(&prog);
    let exit = h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        u64::MAX,
    );
    assert_eq!(exit, Exit::Ecall);
    assert_eq!(h.x[10], 101);
    assert!(code.flushes >= 1);
}

#[test]
fn illegal_and_misaligned_amo_trap_without_retiring() {
    let (mut mem, mut code, mut h) = machine(&[addi(10, 0, 1), 0]);
    let exit = h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::ILLEGAL, 0)));
    assert_eq!(h.pc, BASE + 4);
    assert_eq!(h.instret, 1);
    // amoadd.w a0, a1, (a2) with a2 misaligned.
    let amoadd = 0x00b6_252f;
    let (mut mem, mut code, mut h) = machine(&[addi(12, 0, 2), amoadd]);
    h.x[12] = 0;
    let exit = h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        u64::MAX,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::STORE_MISALIGNED, 2)));
}

#[test]
fn unmapped_fetch_is_an_access_fault() {
    let (mut mem, mut code, mut h) = machine(&[ECALL]);
    h.pc = 0x1000;
    let exit = h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        10,
    );
    assert_eq!(exit, Exit::Trap(Trap::new(Trap::INSN_ACCESS, 0x1000)));
}

#[test]
fn cycle_csr_reads_exact_mid_block() {
    // addi; addi; csrrs a0, cycle, zero; ecall
    let rdcycle = 0xc000_2573;
    let (mut mem, mut code, mut h) = machine(&[addi(5, 0, 1), addi(5, 5, 1), rdcycle, ECALL]);
    h.run(
        &mut Env {
            mem: &mut mem,
            code: &mut code,
        },
        u64::MAX,
    );
    assert_eq!(h.x[10], 2);
}
