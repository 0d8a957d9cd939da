//! The translating engine against the interpreter: random blocks of the
//! operations it translates (and of some it hands to the helper), run
//! under both engines until they are hot, must leave the same registers,
//! PC, instruction count, clock and memory after every run.

use crate::{CodeCache, Core, Engine, Env, Exit, Hart, HartConfig};
use proptest::prelude::*;
use rvnvmm_isa::Op;
use rvnvmm_mem::PhysMem;

const BASE: u64 = 0x8000_0000;
const DATA: u64 = BASE + 0x8000;
/// The register holding the data area's address.
const BASE_REG: u32 = 31;
const ECALL: u32 = 0x73;

fn r_type(f7: u32, f3: u32, op: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op
}
fn i_type(f3: u32, op: u32, rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | rs1 << 15 | f3 << 12 | rd << 7 | op
}
fn s_type(f3: u32, rs1: u32, rs2: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    ((imm >> 5) & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (imm & 0x1f) << 7 | 0x23
}
/// An FP store (STORE-FP, opcode 0x27).
fn fs_type(f3: u32, rs1: u32, rs2: u32, imm: i32) -> u32 {
    s_type(f3, rs1, rs2, imm) ^ 0x23 ^ 0x27
}
fn b_type(f3: u32, rs1: u32, rs2: u32, off: u32) -> u32 {
    ((off >> 12) & 1) << 31
        | ((off >> 5) & 0x3f) << 25
        | rs2 << 20
        | rs1 << 15
        | f3 << 12
        | ((off >> 1) & 0xf) << 8
        | ((off >> 11) & 1) << 7
        | 0x63
}
fn jal(rd: u32, off: u32) -> u32 {
    ((off >> 20) & 1) << 31
        | ((off >> 1) & 0x3ff) << 21
        | ((off >> 11) & 1) << 20
        | ((off >> 12) & 0xff) << 12
        | rd << 7
        | 0x6f
}

/// One instruction at index `at` of a program of `len` instructions (an
/// `ecall` follows): `kind` picks the form, the other numbers its fields.
#[allow(clippy::too_many_arguments)] // the fields of a random instruction
fn instruction(
    kind: u8,
    sel: u32,
    rd: u32,
    rs1: u32,
    rs2: u32,
    imm: i32,
    at: u32,
    len: u32,
) -> u32 {
    // Sources and destinations among x0-x15 (x0 included: a write to it
    // is dropped); memory through x31.
    let (rd, rs1, rs2) = (rd % 16, rs1 % 16, rs2 % 16);
    match kind % 9 {
        0 => {
            const F: [(u32, u32); 18] = [
                (0, 0),
                (0x20, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (0, 4),
                (0, 5),
                (0x20, 5),
                (0, 6),
                (0, 7),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3),
                (1, 4),
                (1, 5),
                (1, 6),
                (1, 7),
            ];
            let (f7, f3) = F[sel as usize % F.len()];
            r_type(f7, f3, 0x33, rd, rs1, rs2)
        }
        1 => {
            const F: [(u32, u32); 9] = [
                (0, 0),
                (0x20, 0),
                (0, 1),
                (0, 5),
                (0x20, 5),
                (1, 0),
                (1, 4),
                (1, 5),
                (1, 7),
            ];
            let (f7, f3) = F[sel as usize % F.len()];
            r_type(f7, f3, 0x3b, rd, rs1, rs2)
        }
        2 => {
            let f3 = [0, 2, 3, 4, 6, 7][sel as usize % 6];
            i_type(f3, 0x13, rd, rs1, imm)
        }
        3 => {
            // Shifts by an immediate: slli, srli, srai, then the word forms.
            let shamt = imm as u32 & 63;
            match sel % 6 {
                0 => i_type(1, 0x13, rd, rs1, shamt as i32),
                1 => i_type(5, 0x13, rd, rs1, shamt as i32),
                2 => i_type(5, 0x13, rd, rs1, (0x400 | shamt) as i32),
                3 => i_type(1, 0x1b, rd, rs1, (shamt & 31) as i32),
                4 => i_type(5, 0x1b, rd, rs1, (shamt & 31) as i32),
                _ => i_type(5, 0x1b, rd, rs1, (0x400 | (shamt & 31)) as i32),
            }
        }
        4 => i_type(0, 0x1b, rd, rs1, imm),
        5 => (imm as u32 & 0xffff_f000) | rd << 7 | if sel.is_multiple_of(2) { 0x37 } else { 0x17 },
        6 => {
            // A load or store in the data area (misaligned ones too).
            let off = imm & 0xff;
            if sel.is_multiple_of(2) {
                i_type(sel / 2 % 7, 0x03, rd, BASE_REG, off)
            } else {
                s_type(sel / 2 % 4, BASE_REG, rs2, off)
            }
        }
        7 => {
            // A forward branch, at most to the ecall.
            let f3 = [0, 1, 4, 5, 6, 7][sel as usize % 6];
            let off = 4 * (1 + imm as u32 % (len - at));
            b_type(f3, rs1, rs2, off)
        }
        _ => jal(rd, 4 * (1 + imm as u32 % (len - at))),
    }
}

fn program() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u32>(),
            0..32u32,
            0..32u32,
            0..32u32,
            any::<i32>(),
        ),
        1..48,
    )
    .prop_map(|fields| {
        let len = fields.len() as u32;
        let mut code: Vec<u32> = fields
            .iter()
            .enumerate()
            .map(|(at, &(kind, sel, rd, rs1, rs2, imm))| {
                instruction(kind, sel, rd, rs1, rs2, imm, at as u32, len)
            })
            .collect();
        code.push(ECALL);
        code
    })
}

fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(1 << 63),
        Just(0xffff_ffff_8000_0000),
        Just(0x7fff_ffff),
        Just(0xffff_ffff),
        0..64u64,
        any::<u64>(),
    ]
}

/// Everything the two engines must agree on after a run.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    exit: Exit,
    x: [u64; 32],
    pc: u64,
    instret: u64,
    cycles: u64,
    data: Vec<u8>,
    f: [u64; 32],
    fflags: u8,
    mstatus: u64,
}

/// The FP state a run starts from: registers, `frm`, `mstatus.FS`.
#[derive(Clone, Copy)]
struct FpStart {
    f: [u64; 32],
    frm: u8,
    fs: u64,
}

impl Default for FpStart {
    fn default() -> Self {
        FpStart {
            f: [0; 32],
            frm: 0,
            fs: crate::privileged::mstatus::FS_DIRTY,
        }
    }
}

/// Runs `code` `runs` times from the same registers (`x`, and x31 the
/// data area unless `wild`), on `engine`; the outcome of each run, and
/// whether the first block ended up translated.
fn run(
    code: &[u32],
    x: &[u64; 16],
    wild: bool,
    engine: Engine,
    runs: usize,
) -> (Vec<Outcome>, bool) {
    run_with(code, x, &FpStart::default(), wild, engine, runs)
}

/// As [`run`], each run also from the FP state `fp` (and `fflags` 0).
fn run_with(
    code: &[u32],
    x: &[u64; 16],
    fp: &FpStart,
    wild: bool,
    engine: Engine,
    runs: usize,
) -> (Vec<Outcome>, bool) {
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(BASE, &bytes));
    // Data with high bits set, so that extension matters.
    let data: Vec<u8> = (0..0x120u32).map(|i| (i * 0x9d + 0x80) as u8).collect();
    assert!(mem.write(DATA, &data));
    let config = HartConfig {
        engine,
        ..HartConfig::default()
    };
    let mut core = Core::new(0, 0, &config);
    let mut h = Hart::new(config);
    let mut cache = CodeCache::default();
    let outcomes = (0..runs)
        .map(|_| {
            h.x[..16].copy_from_slice(x);
            h.x[0] = 0;
            h.x[BASE_REG as usize] = if wild { 0x10 } else { DATA };
            h.pc = BASE;
            h.f = fp.f;
            h.frm = fp.frm;
            h.fflags = 0;
            h.csrs.mstatus = h.csrs.mstatus & !crate::privileged::mstatus::FS | fp.fs;
            let exit = h.run(
                &mut core,
                &mut Env::functional(&mut mem, &mut cache),
                u64::MAX,
            );
            let mut data = vec![0; 0x120];
            assert!(mem.read(DATA, &mut data));
            Outcome {
                exit,
                x: h.x,
                pc: h.pc,
                instret: h.instret,
                cycles: core.cycles,
                data,
                f: h.f,
                fflags: h.fflags,
                mstatus: h.csrs.mstatus,
            }
        })
        .collect();
    let translated = cache
        .lookup(BASE)
        .is_some_and(|idx| cache.block(idx).translation.is_some());
    (outcomes, translated)
}

proptest! {
    // A fixed seed: the suite is deterministic like the emulator.
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0019),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn translated_blocks_match_the_interpreter(
        code in program(),
        x in prop::array::uniform16(value()),
        wild in prop::bool::weighted(0.1),
    ) {
        // Past the threshold, so the later runs are translated.
        let runs = 2 * super::HOT_THRESHOLD as usize + 4;
        let (interp, _) = run(&code, &x, wild, Engine::Interp, runs);
        let (jit, translated) = run(&code, &x, wild, Engine::Jit, runs);
        prop_assert!(translated || wild, "the first block was translated");
        for (n, (a, b)) in interp.iter().zip(&jit).enumerate() {
            prop_assert_eq!(a, b, "run {}", n);
        }
    }
}

#[test]
fn a_hot_loop_is_translated_and_exact() {
    // a0 = 0; a1 = 1000; loop: a0 += a1; a1 -= 1; bne a1, zero, loop; ecall
    let code = [
        i_type(0, 0x13, 10, 0, 0),
        i_type(0, 0x13, 11, 0, 1000),
        r_type(0, 0, 0x33, 10, 10, 11),
        i_type(0, 0x13, 11, 11, -1),
        b_type(1, 11, 0, (-8i32) as u32),
        ECALL,
    ];
    let x = [0; 16];
    let (interp, translated) = run(&code, &x, false, Engine::Interp, 1);
    assert!(!translated, "the interpreter translates nothing");
    let (jit, _) = run(&code, &x, false, Engine::Jit, 1);
    assert_eq!(jit[0].x[10], 500_500);
    assert_eq!(interp, jit);
}

#[test]
fn every_load_and_store_width_hits_inline() {
    // Each load of the data area into x1-x7, then each store of x8 over
    // what they read (so the next run loads x8's bytes, 0x87654321 at
    // offset 16 for `lw`); looped so the block is translated and the TLB
    // holds the page.
    let mut code: Vec<u32> = (0..7)
        .map(|f3| i_type(f3, 0x03, 1 + f3, BASE_REG, 8 * f3 as i32))
        .collect();
    code.extend((0..4).map(|f3| s_type(f3, BASE_REG, 8, 8 * f3 as i32)));
    code.push(ECALL);
    let mut x = [0; 16];
    x[8] = 0xfedc_ba98_8765_4321;
    let (interp, _) = run(&code, &x, false, Engine::Interp, 40);
    let (jit, translated) = run(&code, &x, false, Engine::Jit, 40);
    assert!(translated);
    assert_eq!(interp, jit);
}

#[test]
fn block_pcs_follow_direct_jumps() {
    let insns = [
        rvnvmm_isa::decode(i_type(0, 0x13, 1, 0, 1)),
        rvnvmm_isa::decode(jal(0, 16)),
        rvnvmm_isa::decode(i_type(0, 0x13, 1, 0, 1)),
    ];
    assert_eq!(
        &*super::block_pcs(0x1000, &insns),
        &[0x1000, 0x1004, 0x1014, 0x1018]
    );
}

#[test]
fn a_marker_ends_a_translated_block_as_in_the_interpreter() {
    // a0 = 5; a1 = a0 + 1; marker `dump` (argument a1); a0 = 9; ecall.
    let code = [
        i_type(0, 0x13, 10, 0, 5),
        i_type(0, 0x13, 11, 10, 1),
        rvnvmm_isa::encode_marker(rvnvmm_isa::MarkerOp::DumpStats, 11),
        i_type(0, 0x13, 10, 0, 9),
        ECALL,
    ];
    let x = [0; 16];
    let runs = 2 * super::HOT_THRESHOLD as usize + 4;
    let (interp, _) = run(&code, &x, false, Engine::Interp, runs);
    let (jit, translated) = run(&code, &x, false, Engine::Jit, runs);
    assert!(translated, "the block up to the marker was translated");
    let marker = Exit::Marker {
        op: rvnvmm_isa::MarkerOp::DumpStats,
        arg: 6,
    };
    assert_eq!(
        (jit[0].exit, jit[0].pc, jit[0].x[10]),
        (marker, BASE + 12, 5)
    );
    assert_eq!(interp, jit);
}

fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    i_type(0, 0x67, rd, rs1, imm)
}

/// A hart's state after one `run` call of [`run_in_slices`].
#[derive(Debug, PartialEq, Eq)]
struct Slice {
    exit: Exit,
    x: [u64; 32],
    pc: u64,
    instret: u64,
    cycles: u64,
}

/// Runs `code` from its start on `engine` in `run` calls of `budget`
/// instructions, each also ending at the first block boundary `turn`
/// cycles on, until it leaves by other than the budget (or `limit`
/// calls). The hart after every call, and the code cache.
fn run_in_slices(
    code: &[u32],
    engine: Engine,
    budget: u64,
    turn: u64,
    limit: usize,
) -> (Vec<Slice>, CodeCache) {
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(BASE, &bytes));
    let config = HartConfig {
        engine,
        ..HartConfig::default()
    };
    let mut core = Core::new(0, 0, &config);
    let mut h = Hart::new(config);
    h.x[BASE_REG as usize] = DATA;
    h.pc = BASE;
    let mut cache = CodeCache::default();
    let mut slices = Vec::new();
    for _ in 0..limit {
        core.set_turn_end(core.cycles.saturating_add(turn));
        let exit = h.run(
            &mut core,
            &mut Env::functional(&mut mem, &mut cache),
            budget,
        );
        slices.push(Slice {
            exit,
            x: h.x,
            pc: h.pc,
            instret: h.instret,
            cycles: core.cycles,
        });
        if exit != Exit::Budget {
            break;
        }
    }
    (slices, cache)
}

/// Whether any exit of any translated block of `cache` is linked.
fn any_linked(cache: &mut CodeCache) -> bool {
    (0..cache.blocks_decoded as u32).any(|idx| {
        cache
            .block(idx)
            .translation
            .as_ref()
            .is_some_and(|t| t.links.iter().any(|l| l.pc.get() != super::UNLINKED))
    })
}

/// A loop that calls a function (`jal` there, `jalr` back), so blocks
/// chain by a taken branch, a direct jump across pages and a return.
fn call_loop(iterations: i32) -> Vec<u32> {
    // 0: a1 = n; a0 = 0
    // 8: loop: jal ra, f (at 0x1000, another page: ends the block)
    // 12: a1 -= 1; bne a1, zero, loop; ecall
    // 0x1000: f: a0 += a1; a0 ^= 0x55; ret
    let mut code = vec![
        i_type(0, 0x13, 11, 0, iterations),
        i_type(0, 0x13, 10, 0, 0),
        jal(1, 0x1000 - 8),
        i_type(0, 0x13, 11, 11, -1),
        b_type(1, 11, 0, (-8i32) as u32),
        ECALL,
    ];
    code.resize(0x1000 / 4, 0);
    code.extend([
        r_type(0, 0, 0x33, 10, 10, 11),
        i_type(4, 0x13, 10, 10, 0x55),
        jalr(0, 1, 0),
    ]);
    code
}

#[test]
fn chained_blocks_stop_where_the_interpreter_does() {
    let code = call_loop(500);
    // Whole runs, then budgets and turn ends that fall inside blocks,
    // chains and the translation threshold.
    for (budget, turn) in [(u64::MAX, u64::MAX), (7, u64::MAX), (1000, 13), (61, 200)] {
        let (interp, _) = run_in_slices(&code, Engine::Interp, budget, turn, 10_000);
        let (jit, mut cache) = run_in_slices(&code, Engine::Jit, budget, turn, 10_000);
        assert_eq!(interp.last().map(|s| s.exit), Some(Exit::Ecall));
        assert_eq!(interp, jit, "budget {budget}, turn {turn}");
        assert!(any_linked(&mut cache), "blocks were chained");
    }
}

#[test]
fn a_store_to_a_chained_block_is_seen_at_once() {
    // The loop calls f, which it rewrites on iteration 100 from
    // `a0 += a1` to `a0 -= a1` (x5 holds the new instruction, x6 f's
    // address): by then f is translated and linked from the loop (and
    // its return from the jump table), and after the store the new code
    // runs at the next call.
    let sub = r_type(0x20, 0, 0x33, 10, 10, 11);
    let mut code = call_loop(300);
    let body = vec![
        i_type(0, 0x13, 11, 0, 300),
        i_type(0, 0x13, 10, 0, 0),
        // x5 = sub, built by lui + addi(w)
        (sub.wrapping_add(0x800) & 0xffff_f000) | 5 << 7 | 0x37,
        i_type(0, 0x1b, 5, 5, ((sub & 0xfff) as i32) << 20 >> 20),
        // x6 = f = BASE + 0x1000
        0x1000 | 6 << 7 | 0x17, // auipc x6, 1 (at 0x10: f = 0x1010)
        i_type(0, 0x13, 6, 6, -0x10),
        // loop (0x18): jal ra, f
        jal(1, 0x1000 - 0x18),
        i_type(0, 0x13, 11, 11, -1),
        // if a1 != 200 skip the store
        i_type(0, 0x13, 7, 0, 200),
        b_type(1, 11, 7, 8),
        s_type(2, 6, 5, 0),
        // 0x2c: bne a1, zero, loop
        b_type(1, 11, 0, (-0x14i32) as u32 & 0x1fff),
        ECALL,
    ];
    code[..body.len()].copy_from_slice(&body);
    let (interp, _) = run_in_slices(&code, Engine::Interp, u64::MAX, u64::MAX, 10);
    let (jit, cache) = run_in_slices(&code, Engine::Jit, u64::MAX, u64::MAX, 10);
    assert_eq!(interp.last().map(|s| s.exit), Some(Exit::Ecall));
    // 100 calls adding, then 200 subtracting the counts 300..1 (and the
    // xor after each): the value both engines must reach.
    let expected = (1..=300u64).rev().fold(0u64, |a0, a1| {
        let a0 = if a1 > 200 {
            a0.wrapping_add(a1)
        } else {
            a0.wrapping_sub(a1)
        };
        a0 ^ 0x55
    });
    assert_eq!(interp.last().map(|s| s.x[10]), Some(expected));
    assert_eq!(interp, jit);
    assert!(cache.flushes >= 1, "the store flushed the code cache");
}

/// Runs `code` as [`run_in_slices`] does, with a timing model that keeps
/// the lines it saw (filter hits from then on) and stalls 7 cycles per
/// full-model call, each slice allowed `ahead` cycles past its start
/// before an access that misses must wait (the sync limit) and ending at
/// a block boundary 2000 cycles on, the fetched lines forgotten between
/// slices. The slices, the model's calls and the hits counted through its
/// filter tables by translated code (loads, stores, fetches).
fn run_timed(
    code: &[u32],
    engine: Engine,
    ahead: u64,
) -> (Vec<Slice>, Vec<crate::fake_model::Call>, [u64; 3]) {
    let mut mem = PhysMem::new(&[(BASE, 0x10000)]).unwrap();
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(BASE, &bytes));
    let config = HartConfig {
        engine,
        ..HartConfig::default()
    };
    let mut core = Core::new(0, 0, &config);
    let mut h = Hart::new(config);
    h.x[BASE_REG as usize] = DATA;
    h.pc = BASE;
    let mut cache = CodeCache::default();
    let mut ms = crate::fake_model::FakeModel::new(6, 6);
    ms.remember = true;
    ms.stall = 7;
    let mut slices = Vec::new();
    for _ in 0..100_000 {
        core.set_sync_limit(core.cycles.saturating_add(ahead));
        core.set_turn_end(core.cycles + 2000);
        // The L1I forgets between turns, so chained blocks fetch again.
        ms.forget_fetches();
        let mut env = Env {
            mem: &mut mem,
            code: &mut cache,
            timing: Some(&mut ms),
            mmio: None,
        };
        let exit = h.run(&mut core, &mut env, u64::MAX);
        slices.push(Slice {
            exit,
            x: h.x,
            pc: h.pc,
            instret: h.instret,
            cycles: core.cycles,
        });
        if exit != Exit::Budget {
            break;
        }
    }
    let table_hits = ms.table_hits.each_ref().map(|h| h.get());
    (slices, ms.calls, table_hits)
}

#[test]
fn timed_translations_make_the_interpreters_model_calls() {
    // Walks 4 KiB of data in 24-byte steps, loading, adding and storing
    // back each doubleword (lines first missed, then hit; a store after a
    // load of the same line), twice, with a call per step.
    let mut code = vec![
        i_type(0, 0x13, 12, 0, 2),                    // 0x00: a2 = 2 (passes)
        i_type(0, 0x13, 13, BASE_REG, 0),             // 0x04: pass: a3 = data
        i_type(0, 0x13, 11, 0, 170),                  // 0x08: a1 = steps
        i_type(3, 0x03, 14, 13, 0),                   // 0x0c: step: ld a4, 0(a3)
        r_type(0, 0, 0x33, 14, 14, 11),               // 0x10: a4 += a1
        s_type(3, 13, 14, 0),                         // 0x14: sd a4, 0(a3)
        jal(1, 0x1000 - 0x18),                        // 0x18: call f
        i_type(0, 0x13, 13, 13, 24),                  // 0x1c: a3 += 24
        i_type(0, 0x13, 11, 11, -1),                  // 0x20: a1 -= 1
        b_type(1, 11, 0, (-0x18i32) as u32 & 0x1fff), // 0x24: bne a1, zero, step
        i_type(0, 0x13, 12, 12, -1),                  // 0x28: a2 -= 1
        b_type(1, 12, 0, (-0x28i32) as u32 & 0x1fff), // 0x2c: bne a2, zero, pass
        ECALL,
    ];
    code.resize(0x1000 / 4, 0);
    code.extend([
        r_type(0, 0, 0x33, 10, 10, 14), // f: a0 += a4
        i_type(4, 0x03, 15, 13, 4),     // lbu a5, 4(a3)
        r_type(0, 0, 0x33, 10, 10, 15), // a0 += a5
        jalr(0, 1, 0),
    ]);
    for ahead in [u64::MAX, 300, 40] {
        let (interp, interp_calls, interp_hits) = run_timed(&code, Engine::Interp, ahead);
        let (jit, jit_calls, jit_hits) = run_timed(&code, Engine::Jit, ahead);
        assert_eq!(interp_hits, [0; 3], "the interpreter asks the model");
        // Loads, stores and chained fetches hit inline.
        assert!(jit_hits.iter().all(|&h| h > 0), "{jit_hits:?}");
        assert_eq!(interp.last().map(|s| s.exit), Some(Exit::Ecall));
        assert_eq!(interp, jit, "ahead {ahead}");
        assert_eq!(interp_calls, jit_calls, "ahead {ahead}");
    }
}

#[test]
fn multiplies_and_divides_match_the_interpreter_at_their_edges() {
    // Every M-extension operation, rd = x3.., rs1 = x1, rs2 = x2: the
    // translated forms (x86 mul/imul/div/idiv behind RISC-V's by-zero and
    // overflow results) against the interpreter.
    let ops: [(u32, u32); 13] = [
        (0x33, 0), // mul
        (0x33, 1), // mulh
        (0x33, 2), // mulhsu
        (0x33, 3), // mulhu
        (0x33, 4), // div
        (0x33, 5), // divu
        (0x33, 6), // rem
        (0x33, 7), // remu
        (0x3b, 0), // mulw
        (0x3b, 4), // divw
        (0x3b, 5), // divuw
        (0x3b, 6), // remw
        (0x3b, 7), // remuw
    ];
    let mut code: Vec<u32> = ops
        .iter()
        .enumerate()
        .map(|(k, &(op, f3))| r_type(1, f3, op, 3 + k as u32, 1, 2))
        .collect();
    code.push(ECALL);
    let edges = [
        0u64,
        1,
        2,
        7,
        u64::MAX,
        1 << 63,
        (1 << 63) - 1,
        0xffff_ffff_8000_0000,
        0x8000_0000,
        0x7fff_ffff,
        0xffff_ffff,
        0x1234_5678_9abc_def1,
        0xfedc_ba98_7654_3210,
    ];
    same_at_edges(&code, &edges);
}

/// Runs `code` (one block) under both engines until it is translated, with
/// x1 and x2 every pair of `edges`: the outcomes must be the same.
fn same_at_edges(code: &[u32], edges: &[u64]) {
    let runs = 2 * super::HOT_THRESHOLD as usize + 2;
    for &a in edges {
        for &b in edges {
            let mut x = [0u64; 16];
            x[1] = a;
            x[2] = b;
            let (interp, _) = run(code, &x, false, Engine::Interp, runs);
            let (jit, translated) = run(code, &x, false, Engine::Jit, runs);
            assert!(translated);
            assert_eq!(interp, jit, "rs1 {a:#x}, rs2 {b:#x}");
        }
    }
}

/// An instruction's encoding with destination `rd`.
type Encoder = Box<dyn Fn(u32) -> u32>;

#[test]
fn bit_manipulations_match_the_interpreter_at_their_edges() {
    // Every Zba, Zbb (but cpop), Zbs and Zicond operation, and the fences
    // and hints translated to nothing, with rs1 = x1, rs2 = x2 and rd =
    // x3.. (one block): the translated forms (bsf/bsr behind their
    // zero case, SSE2 for orc.b, lea, cmov, bt*) against the interpreter.
    let r = |f7: u32, f3: u32, op: u32| move |rd: u32| r_type(f7, f3, op, rd, 1, 2);
    let i = |f3: u32, op: u32, imm: i32| move |rd: u32| i_type(f3, op, rd, 1, imm);
    let mut ops: Vec<(Op, Encoder)> = vec![
        (Op::Sh1add, Box::new(r(0x10, 2, 0x33))),
        (Op::Sh2add, Box::new(r(0x10, 4, 0x33))),
        (Op::Sh3add, Box::new(r(0x10, 6, 0x33))),
        (Op::AddUw, Box::new(r(0x04, 0, 0x3b))),
        (Op::Sh1addUw, Box::new(r(0x10, 2, 0x3b))),
        (Op::Sh2addUw, Box::new(r(0x10, 4, 0x3b))),
        (Op::Sh3addUw, Box::new(r(0x10, 6, 0x3b))),
        (Op::Andn, Box::new(r(0x20, 7, 0x33))),
        (Op::Orn, Box::new(r(0x20, 6, 0x33))),
        (Op::Xnor, Box::new(r(0x20, 4, 0x33))),
        (Op::Clz, Box::new(i(1, 0x13, 0x600))),
        (Op::Ctz, Box::new(i(1, 0x13, 0x601))),
        (Op::SextB, Box::new(i(1, 0x13, 0x604))),
        (Op::SextH, Box::new(i(1, 0x13, 0x605))),
        (Op::Clzw, Box::new(i(1, 0x1b, 0x600))),
        (Op::Ctzw, Box::new(i(1, 0x1b, 0x601))),
        (Op::Max, Box::new(r(0x05, 6, 0x33))),
        (Op::Maxu, Box::new(r(0x05, 7, 0x33))),
        (Op::Min, Box::new(r(0x05, 4, 0x33))),
        (Op::Minu, Box::new(r(0x05, 5, 0x33))),
        (Op::ZextH, Box::new(|rd| r_type(0x04, 4, 0x3b, rd, 1, 0))),
        (Op::Rol, Box::new(r(0x30, 1, 0x33))),
        (Op::Ror, Box::new(r(0x30, 5, 0x33))),
        (Op::Rolw, Box::new(r(0x30, 1, 0x3b))),
        (Op::Rorw, Box::new(r(0x30, 5, 0x3b))),
        (Op::OrcB, Box::new(i(5, 0x13, 0x287))),
        (Op::Rev8, Box::new(i(5, 0x13, 0x6b8))),
        (Op::Bclr, Box::new(r(0x24, 1, 0x33))),
        (Op::Bext, Box::new(r(0x24, 5, 0x33))),
        (Op::Binv, Box::new(r(0x34, 1, 0x33))),
        (Op::Bset, Box::new(r(0x14, 1, 0x33))),
        (Op::CzeroEqz, Box::new(r(0x07, 5, 0x33))),
        (Op::CzeroNez, Box::new(r(0x07, 7, 0x33))),
        (Op::Fence, Box::new(|_| 0x0ff0_000f)),
        (Op::Fence, Box::new(|_| 0x0220_000f)),
        (Op::Pause, Box::new(|_| 0x0100_000f)),
    ];
    // The immediate forms at the edges of their shift amounts.
    for shamt in [0, 1, 31, 32, 63] {
        ops.push((Op::SlliUw, Box::new(i(1, 0x1b, 0x080 | shamt))));
        ops.push((Op::Rori, Box::new(i(5, 0x13, 0x600 | shamt))));
        ops.push((Op::Bclri, Box::new(i(1, 0x13, 0x480 | shamt))));
        ops.push((Op::Bexti, Box::new(i(5, 0x13, 0x480 | shamt))));
        ops.push((Op::Binvi, Box::new(i(1, 0x13, 0x680 | shamt))));
        ops.push((Op::Bseti, Box::new(i(1, 0x13, 0x280 | shamt))));
        if shamt < 32 {
            ops.push((Op::Roriw, Box::new(i(5, 0x1b, 0x600 | shamt))));
        }
    }
    // Destinations x3-x15 in rounds (a round's results are all kept).
    let rounds: Vec<Vec<u32>> = ops
        .chunks(13)
        .map(|round| {
            let mut code: Vec<u32> = round
                .iter()
                .enumerate()
                .map(|(k, (op, encode))| {
                    let raw = encode(3 + k as u32);
                    assert_eq!(rvnvmm_isa::decode(raw).op, *op, "{raw:#010x}");
                    raw
                })
                .collect();
            code.push(ECALL);
            code
        })
        .collect();
    let edges = [
        0u64,
        1,
        2,
        31,
        32,
        63,
        64,
        u64::MAX,
        1 << 63,
        (1 << 63) - 1,
        0xffff_ffff_8000_0000,
        0x8000_0000,
        0x7fff_ffff,
        0xffff_ffff,
        0x0000_0001_0000_0000,
        0x00ff_0000_0000_ff00,
        0x1234_5678_9abc_def1,
        0xfedc_ba98_7654_3210,
        0x8000,
        0x80,
    ];
    for code in &rounds {
        same_at_edges(code, &edges);
    }
}

/// An F or D operation of [`fp_operations_match_the_interpreter_at_their_edges`].
#[derive(Clone, Copy)]
struct FpCase {
    /// `funct7` of OP-FP (its low bits the format), or the format (0 `.s`,
    /// 1 `.d`) of a fused multiply-add.
    f7: u32,
    /// The fused multiply-add's opcode, or OP-FP (0x53).
    opcode: u32,
    /// A fixed `funct3`, or `None`: the rounding mode.
    f3: Option<u32>,
    /// A fixed `rs2` field, or `None`: the second operand.
    rs2: Option<u32>,
    /// The result goes to an integer register.
    int_dest: bool,
    /// The source is an integer register.
    int_src: bool,
}

impl FpCase {
    /// The instruction with destination `rd` and rounding mode `rm`:
    /// sources f1-f3 (`.d`), f4-f6 (`.s`) or x1.
    fn encode(&self, rd: u32, rm: u32) -> u32 {
        let single = self.f7 & 3 == 0;
        // fcvt.s.d reads a double, fcvt.d.s a single.
        let reads_single = match self.f7 {
            0x20 => false,
            0x21 => true,
            _ => single,
        };
        let (rs1, rs2, rs3) = match (self.int_src, reads_single) {
            (true, _) => (1, 2, 3),
            (false, true) => (4, 5, 6),
            (false, false) => (1, 2, 3),
        };
        let f3 = self.f3.unwrap_or(rm);
        let rs2 = self.rs2.unwrap_or(rs2);
        if self.opcode == 0x53 {
            r_type(self.f7, f3, 0x53, rd, rs1, rs2)
        } else {
            rs3 << 27 | self.f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | self.opcode
        }
    }
}

/// Every F and D computational operation, each rounding-mode one with
/// every static mode and `dyn`.
fn fp_cases() -> Vec<(FpCase, u32)> {
    let op = |f7, f3, rs2, int_dest, int_src| FpCase {
        f7,
        opcode: 0x53,
        f3,
        rs2,
        int_dest,
        int_src,
    };
    let mut cases = Vec::new();
    for fmt in 0..2 {
        for f7 in [0x00, 0x04, 0x08, 0x0c] {
            cases.push(op(f7 | fmt, None, None, false, false));
        }
        cases.push(op(0x2c | fmt, None, Some(0), false, false)); // fsqrt
        for opcode in [0x43, 0x47, 0x4b, 0x4f] {
            cases.push(FpCase {
                f7: fmt,
                opcode,
                ..op(0, None, None, false, false)
            });
        }
        for f3 in 0..3 {
            cases.push(op(0x10 | fmt, Some(f3), None, false, false)); // fsgnj*
            cases.push(op(0x50 | fmt, Some(f3), None, true, false)); // fle, flt, feq
        }
        for f3 in 0..2 {
            cases.push(op(0x14 | fmt, Some(f3), None, false, false)); // fmin, fmax
        }
        cases.push(op(0x70 | fmt, Some(1), Some(0), true, false)); // fclass
        cases.push(op(0x70 | fmt, Some(0), Some(0), true, false)); // fmv.x.*
        cases.push(op(0x78 | fmt, Some(0), Some(0), false, true)); // fmv.*.x
        for kind in 0..4 {
            cases.push(op(0x60 | fmt, None, Some(kind), true, false)); // fcvt.{w,wu,l,lu}.*
            cases.push(op(0x68 | fmt, None, Some(kind), false, true)); // fcvt.*.{w,wu,l,lu}
        }
    }
    cases.push(op(0x20, None, Some(1), false, false)); // fcvt.s.d
    cases.push(op(0x21, None, Some(0), false, false)); // fcvt.d.s
    let mut out = Vec::new();
    for case in cases {
        if case.f3.is_some() {
            out.push((case, 0));
        } else {
            out.extend([0, 1, 2, 3, 4, 7].map(|rm| (case, rm)));
        }
    }
    out
}

#[test]
fn fp_operations_match_the_interpreter_at_their_edges() {
    // Programs of up to six operations, each followed by `csrrw xk,
    // fflags, x0` (so each operation's flags are seen apart), with
    // results in f8-f13 or x9-x14, under every `frm` (5-7 make `dyn`
    // trap), from operands at the edges: zeros of both signs, infinities,
    // quiet and signalling NaNs, subnormals, the largest values, ones that
    // round, and singles not properly NaN-boxed.
    const DOUBLES: [u64; 17] = [
        0,
        1 << 63,
        0x3ff0_0000_0000_0000,
        0xbff8_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7ff0_0000_0000_0001,
        0xfff8_0000_0000_0001,
        1,
        0x000f_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0x3fd5_5555_5555_5555,
        0x43e0_0000_0000_0000,
        0xc1e0_0000_0010_0000,
        0x4330_0000_0000_0001,
    ];
    const SINGLES: [u32; 17] = [
        0,
        1 << 31,
        0x3f80_0000,
        0xbfc0_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0xffc0_0001,
        1,
        0x007f_ffff,
        0x0080_0000,
        0x7f7f_ffff,
        0x3eaa_aaab,
        0x5f00_0000,
        0xcf00_0001,
        0x4b80_0001,
    ];
    const INTS: [u64; 9] = [
        0,
        1,
        u64::MAX,
        0xffff_ffff_8000_0000,
        1 << 63,
        0x7fff_ffff,
        (1 << 53) + 1,
        0xffff_ffff,
        0xffff_ffff_ffff_fff9,
    ];
    const FFLAGS: i32 = 0x001;
    let ops = fp_cases();
    let mut programs: Vec<Vec<u32>> = ops
        .chunks(6)
        .map(|chunk| {
            let mut code = Vec::new();
            for (k, (case, rm)) in chunk.iter().enumerate() {
                let k = k as u32;
                let rd = if case.int_dest { 9 + k } else { 8 + k };
                code.push(case.encode(rd, *rm));
                code.push(i_type(1, 0x73, 3 + k, 0, FFLAGS));
            }
            code.push(ECALL);
            code
        })
        .collect();
    // Rounding modes 5 and 6 are reserved: the operation traps.
    programs.push(vec![ops[0].0.encode(8, 5), ECALL]);
    programs.push(vec![ops[0].0.encode(8, 6), ECALL]);
    let runs = 2 * super::HOT_THRESHOLD as usize + 2;
    let mut combination = 0;
    for (i, &a) in DOUBLES.iter().enumerate() {
        for (j, &b) in DOUBLES.iter().enumerate() {
            combination += 1;
            let c = (i + j) % DOUBLES.len();
            let mut fp = FpStart {
                frm: (combination % 8) as u8,
                ..FpStart::default()
            };
            fp.f[1..4].copy_from_slice(&[a, b, DOUBLES[c]]);
            let box32 = rvnvmm_fpu::box_f32;
            fp.f[4] = box32(SINGLES[i]);
            fp.f[5] = box32(SINGLES[j]);
            // Every third combination, f6 is a double: not a NaN-boxed
            // single, which reads as the canonical NaN.
            fp.f[6] = if combination % 3 == 0 {
                DOUBLES[c]
            } else {
                box32(SINGLES[c])
            };
            let mut x = [0u64; 16];
            x[1] = if i % 2 == 0 { a } else { INTS[j % INTS.len()] };
            for code in &programs {
                let (interp, _) = run_with(code, &x, &fp, false, Engine::Interp, runs);
                let (jit, translated) = run_with(code, &x, &fp, false, Engine::Jit, runs);
                assert!(translated);
                assert_eq!(
                    interp,
                    jit,
                    "f1-f6 {:x?}, x1 {:#x}, frm {}, program {:08x?}",
                    &fp.f[1..7],
                    x[1],
                    fp.frm,
                    code
                );
            }
        }
    }
}

#[test]
fn fp_loads_and_stores_match_the_interpreter() {
    // flw/fld/flh from the data area into f8-f10 (NaN-boxed), fsw/fsd/fsh
    // of f1-f3 over it, c.fld/c.fsd through x8 and c.fldsp/c.fsdsp
    // through sp (both the data area), fld/fsd misaligned, and an FP
    // operation; under each `mstatus.FS` (Off traps, Initial and Clean
    // become Dirty), and through a wild base.
    let code = [
        i_type(2, 0x07, 8, BASE_REG, 0),    // flw f8, 0(x31)
        i_type(3, 0x07, 9, BASE_REG, 8),    // fld f9, 8(x31)
        i_type(1, 0x07, 10, BASE_REG, 16),  // flh f10, 16(x31)
        fs_type(2, BASE_REG, 1, 24),        // fsw f1, 24(x31)
        fs_type(3, BASE_REG, 2, 32),        // fsd f2, 32(x31)
        fs_type(1, BASE_REG, 3, 48),        // fsh f3, 48(x31)
        0xa42c_202c,                        // c.fld f11, 64(x8); c.fsd f11, 72(x8)
        0xacb2_2646,                        // c.fldsp f12, 80(sp); c.fsdsp f12, 88(sp)
        i_type(3, 0x07, 13, BASE_REG, 100), // fld f13, 100(x31)
        fs_type(3, BASE_REG, 13, 108),      // fsd f13, 108(x31)
        r_type(1, 7, 0x53, 14, 8, 9),       // fadd.d f14, f8, f9 (dyn)
        r_type(0x11, 1, 0x53, 15, 2, 1),    // fsgnjn.d f15, f2, f1
        r_type(0x71, 0, 0x53, 5, 2, 0),     // fmv.x.d x5, f2
        r_type(0x79, 0, 0x53, 16, 2, 0),    // fmv.d.x f16, x2
        r_type(0x70, 0, 0x53, 6, 1, 0),     // fmv.x.w x6, f1
        ECALL,
    ];
    let mut x = [0u64; 16];
    x[2] = DATA;
    x[8] = DATA;
    let mut fp = FpStart::default();
    fp.f[1] = 0x1122_3344_5566_7788;
    fp.f[2] = 0x8877_6655_4433_2211;
    fp.f[3] = 0xffff_ffff_ffff_abcd;
    let runs = 2 * super::HOT_THRESHOLD as usize + 4;
    use crate::privileged::mstatus::FS_DIRTY;
    for fs in [FS_DIRTY, 0, 1 << 13, 2 << 13] {
        fp.fs = fs;
        for wild in [false, true] {
            let (interp, _) = run_with(&code, &x, &fp, wild, Engine::Interp, runs);
            let (jit, translated) = run_with(&code, &x, &fp, wild, Engine::Jit, runs);
            assert!(translated || wild);
            assert_eq!(interp, jit, "mstatus.FS {fs:#x}, wild {wild}");
            if fs == 0 {
                assert_eq!(
                    jit[0].exit,
                    Exit::Trap(crate::Trap::new(crate::Trap::ILLEGAL, 0))
                );
            }
            if fs == FS_DIRTY && !wild {
                let out = jit.last().unwrap();
                let word = |at: usize| u64::from_le_bytes(out.data[at..at + 8].try_into().unwrap());
                let first = &interp[0].data;
                let first_word =
                    |at: usize| u64::from_le_bytes(first[at..at + 8].try_into().unwrap());
                assert_eq!(
                    out.f[8],
                    0xffff_ffff_0000_0000 | first_word(0) & 0xffff_ffff
                );
                assert_eq!(out.f[10] >> 16, 0xffff_ffff_ffff);
                assert_eq!(word(24) as u32, 0x5566_7788);
                assert_eq!(word(32), fp.f[2]);
                assert_eq!(out.f[11], first_word(64));
                assert_eq!(word(72), first_word(64));
                assert_eq!(out.f[12], first_word(80));
                assert_eq!(word(88), first_word(80));
            }
        }
    }
}

/// Full-system mode: the translating engine against the interpreter on
/// hand-assembled M/S programs (the fixtures of `priv_tests`).
mod full_system {
    use super::{b_type, i_type, jal, jalr, r_type};
    use crate::priv_tests::{
        csr_insn, csrr, csrs, csrw, enter, pmp_all, set_csr, vectors, Machine, BASE, M_HANDLER,
        S_HANDLER, T0, WFI,
    };
    use crate::privileged::{envcfg, mstatus};
    use crate::{irq, Engine, Exit, Priv};
    use rvnvmm_isa::csr::*;
    use rvnvmm_isa::encode::li;
    use rvnvmm_mem::sv39::Pte;

    const A0: u32 = 10;
    const A1: u32 = 11;
    const A2: u32 = 12;
    const A3: u32 = 13;
    const A4: u32 = 14;
    const A5: u32 = 15;
    const RA: u32 = 1;
    const T2: u32 = 7;
    const STIMECMP: u16 = 0x14D;

    /// Virtual pages of the tests, all in the 2 MiB at 0x4000_0000.
    const VDRIVER: u64 = 0x4000_0000;
    const VDATA: u64 = 0x4000_1000;
    const VLOOP: u64 = 0x4000_2000;
    const VALIAS: u64 = 0x4000_3000;
    /// Physical pages.
    const PDRIVER: u64 = BASE + 0x20_0000;
    const PDATA: u64 = BASE + 0x20_1000;
    const PLOOP: u64 = BASE + 0x20_2000;
    const PLOOP2: u64 = BASE + 0x20_3000;
    /// Two page-table roots, each with its level-1 and level-0 tables
    /// after it.
    const ROOT_A: u64 = BASE + 0x10_0000;
    const ROOT_B: u64 = BASE + 0x10_4000;

    fn satp(root: u64) -> u64 {
        8 << 60 | root >> 12
    }

    /// Page tables at `root` mapping `pages` (virtual, physical, flags:
    /// accessed, dirty and valid added) for S-mode, and the RAM at
    /// `BASE` as a 1 GiB identity superpage (the trap handlers).
    fn page_tables(m: &mut Machine, root: u64, pages: &[(u64, u64, u64)]) {
        let (l1, l0) = (root + 0x1000, root + 0x2000);
        let table = |pa: u64| Pte::leaf(pa, 0).0 & !(Pte::R | Pte::W | Pte::X);
        m.mem.write_u64(root + 8 * (VDRIVER >> 30), table(l1));
        m.mem
            .write_u64(l1 + 8 * ((VDRIVER >> 21) & 0x1ff), table(l0));
        for &(va, pa, flags) in pages {
            let leaf = Pte::leaf(pa, flags | Pte::A | Pte::D).0;
            m.mem.write_u64(l0 + 8 * ((va >> 12) & 0x1ff), leaf);
        }
        m.mem.write_u64(
            root + 8 * (BASE >> 30),
            Pte::leaf(BASE, Pte::R | Pte::W | Pte::X | Pte::A | Pte::D).0,
        );
    }

    /// M-mode set-up: vectors, PMP, `satp` = `root`, loads and stores
    /// faults delegated, then S-mode at `VDRIVER`.
    fn to_supervisor(root: u64) -> Vec<u32> {
        let mut p = vectors();
        p.extend(pmp_all());
        p.extend(set_csr(SATP, satp(root)));
        p.extend(set_csr(MEDELEG, 1 << 13 | 1 << 15));
        p.extend(enter(Priv::Supervisor, VDRIVER));
        p
    }

    /// What a run leaves that the engines must agree on.
    #[derive(Debug, PartialEq, Eq)]
    struct State {
        exit: Exit,
        x: [u64; 32],
        pc: u64,
        instret: u64,
        cycles: u64,
        traps: [u64; 6],
    }

    /// Builds a machine with `build` on `engine` and runs it until it
    /// stops other than at the end of a budget.
    fn run_on(engine: Engine, build: &dyn Fn(Engine) -> Machine) -> (State, Machine) {
        let mut m = build(engine);
        let mut exit = Exit::Budget;
        for _ in 0..1000 {
            exit = m.run(100_000);
            if exit != Exit::Budget {
                break;
            }
        }
        let state = State {
            exit,
            x: m.hart.x,
            pc: m.hart.pc,
            instret: m.hart.instret,
            cycles: m.core.cycles,
            traps: [MCAUSE, MEPC, MTVAL, SCAUSE, SEPC, STVAL].map(|c| m.csr(c)),
        };
        (state, m)
    }

    /// Runs under both engines: the translating engine's state, checked
    /// equal to the interpreter's, and whether it chained blocks.
    fn both(build: &dyn Fn(Engine) -> Machine) -> (State, bool) {
        let (interp, _) = run_on(Engine::Interp, build);
        let (jit, mut m) = run_on(Engine::Jit, build);
        assert_eq!(interp, jit);
        (jit, super::any_linked(&mut m.code))
    }

    #[test]
    fn a_block_at_two_virtual_addresses_runs_as_its_own_pc_says() {
        // The loop's page is mapped at VLOOP and VALIAS; `auipc` gives
        // the PC it runs at. The driver calls it at both.
        let build = |engine| {
            let mut m = Machine::with_engine(&to_supervisor(ROOT_A), engine);
            let x = Pte::R | Pte::X;
            let pages = [(VDRIVER, PDRIVER, x), (VLOOP, PLOOP, x), (VALIAS, PLOOP, x)];
            page_tables(&mut m, ROOT_A, &pages);
            let mut driver = li(T0, VLOOP);
            driver.push(jalr(RA, T0 as u32, 0));
            driver.extend(li(T0, VALIAS));
            driver.push(jalr(RA, T0 as u32, 0));
            driver.push(WFI);
            m.put(PDRIVER, &driver);
            m.put(
                PLOOP,
                &[
                    i_type(0, 0x13, A1, 0, 50),
                    6 << 7 | 0x17, // auipc t1, 0
                    r_type(0, 0, 0x33, A0, A0, 6),
                    i_type(0, 0x13, A1, A1, -1),
                    b_type(1, A1, 0, (-12i32) as u32),
                    jalr(0, RA, 0),
                ],
            );
            m
        };
        let (state, linked) = both(&build);
        assert_eq!(state.exit, Exit::Wfi);
        assert_eq!(state.x[A0 as usize], 50 * (VLOOP + 4) + 50 * (VALIAS + 4));
        assert!(linked, "the loop chained to itself");
    }

    #[test]
    fn a_satp_switch_between_chained_blocks_is_seen() {
        // The driver calls VLOOP 80 times; after 40 it switches to tables
        // that map VLOOP to other code, the call's link filled before.
        let build = |engine| {
            let mut m = Machine::with_engine(&to_supervisor(ROOT_A), engine);
            let x = Pte::R | Pte::X;
            page_tables(&mut m, ROOT_A, &[(VDRIVER, PDRIVER, x), (VLOOP, PLOOP, x)]);
            page_tables(&mut m, ROOT_B, &[(VDRIVER, PDRIVER, x), (VLOOP, PLOOP2, x)]);
            m.put(
                PDRIVER,
                &[
                    i_type(0, 0x13, A1, 0, 80),
                    jal(RA, (VLOOP - VDRIVER - 4) as u32), // loop:
                    i_type(0, 0x13, A1, A1, -1),
                    b_type(0, A1, 0, 16), // beq a1, zero, done
                    b_type(1, A1, A2, (-12i32) as u32),
                    csrw(SATP, T2 as u8),
                    jal(0, (-20i32) as u32),
                    WFI, // done:
                ],
            );
            m.put(PLOOP, &[i_type(0, 0x13, A0, A0, 1), jalr(0, RA, 0)]);
            m.put(PLOOP2, &[i_type(0, 0x13, A0, A0, 100), jalr(0, RA, 0)]);
            m.hart.x[A2 as usize] = 40;
            m.hart.x[T2 as usize] = satp(ROOT_B);
            m
        };
        let (state, linked) = both(&build);
        assert_eq!(state.exit, Exit::Wfi);
        assert_eq!(state.x[A0 as usize], 40 + 40 * 100);
        assert!(linked);
    }

    #[test]
    fn an_interrupt_due_between_chained_blocks_is_taken_there() {
        // M-mode: a Sstc timer armed, then a hot loop the interrupt
        // stops; the handler records where.
        let build = |engine| {
            let mut p = vectors();
            p.extend(set_csr(MENVCFG, envcfg::STCE));
            p.extend(set_csr(MIE, irq::STIP));
            p.extend(li(T0, mstatus::MIE));
            p.push(csrs(MSTATUS, T0));
            p.push(csrr(A0 as u8, TIME));
            p.push(i_type(0, 0x13, A0, A0, 1500));
            p.push(csrw(STIMECMP, A0 as u8));
            p.push(i_type(0, 0x13, A1, 0, 2000));
            p.extend([
                i_type(0, 0x13, A2, A2, 1), // loop:
                r_type(0, 4, 0x33, A3, A3, A2),
                i_type(0, 0x13, A1, A1, -1),
                b_type(1, A1, 0, (-12i32) as u32),
                WFI,
            ]);
            let mut m = Machine::with_engine(&p, engine);
            m.put(M_HANDLER, &[csrr(A4 as u8, MEPC), csrw(MIE, 0), WFI]);
            m
        };
        let (state, linked) = both(&build);
        assert_eq!(state.exit, Exit::Wfi);
        assert_eq!(state.traps[0], 1 << 63 | 5, "the timer interrupt");
        let left = state.x[A1 as usize];
        assert!(left > 0 && left < 2000, "taken in the loop ({left} left)");
        assert!(linked);
    }

    #[test]
    fn an_illegal_instruction_in_a_translated_block_traps_with_its_bits() {
        // A hot loop falls through, at its end, to an instruction no
        // extension defines, in the same (translated) block: the trap's
        // tval is its bits, which `exec_blocks` reads of the block once
        // the helper has left it.
        const BITS: u32 = 0x1234_500b; // custom-0
        assert_eq!(rvnvmm_isa::decode(BITS).op, rvnvmm_isa::Op::Illegal);
        let build = |engine| {
            let mut m = Machine::with_engine(&to_supervisor(ROOT_A), engine);
            page_tables(&mut m, ROOT_A, &[(VDRIVER, PDRIVER, Pte::R | Pte::X)]);
            m.put(
                PDRIVER,
                &[
                    i_type(0, 0x13, A1, A1, -1), // loop: addi a1, a1, -1
                    b_type(1, A1, 0, (-4i32) as u32),
                    BITS,
                    WFI,
                ],
            );
            m.put(M_HANDLER, &[WFI]);
            m.hart.x[A1 as usize] = 100;
            m
        };
        let (state, linked) = both(&build);
        assert_eq!(state.exit, Exit::Wfi);
        assert_eq!(state.traps[0], 2, "an illegal instruction, taken in M");
        assert_eq!(state.traps[1], VDRIVER + 8, "at it");
        assert_eq!(state.traps[2], u64::from(BITS));
        assert!(linked, "the loop ran translated");
    }

    #[test]
    fn a_page_fault_in_a_translated_load_is_taken_in_s_mode() {
        // S-mode sums the data page until its load runs off its end
        // into an unmapped page: a load page fault, delegated to S.
        let build = |engine| {
            let mut m = Machine::with_engine(&to_supervisor(ROOT_A), engine);
            let pages = [
                (VDRIVER, PDRIVER, Pte::R | Pte::X),
                (VDATA, PDATA, Pte::R | Pte::W),
            ];
            page_tables(&mut m, ROOT_A, &pages);
            m.put(
                PDRIVER,
                &[
                    i_type(3, 0x03, A1, A5, 0), // loop: ld a1, 0(a5)
                    r_type(0, 0, 0x33, A0, A0, A1),
                    i_type(0, 0x13, A5, A5, 8),
                    b_type(1, A5, 0, (-12i32) as u32),
                    WFI,
                ],
            );
            let data: Vec<u32> = (0..1024).map(|i| i * 3 + 1).collect();
            m.put(PDATA, &data);
            m.put(S_HANDLER, &[csr_insn(2, A4 as u8, SCAUSE, 0), WFI]);
            m.hart.x[A5 as usize] = VDATA;
            m
        };
        let (state, linked) = both(&build);
        assert_eq!(state.exit, Exit::Wfi);
        assert_eq!(state.x[A4 as usize], 13, "a load page fault");
        assert_eq!(state.traps[4], VDRIVER, "at the load");
        assert_eq!(state.traps[5], VDATA + 0x1000);
        assert!(linked);
    }
}
