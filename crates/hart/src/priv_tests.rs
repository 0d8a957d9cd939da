//! Full-system tests: hand-assembled M/S/U programs on a bare hart.

use crate::fake_model::{Call, FakeModel};
use crate::privileged::{envcfg, mstatus};
use crate::{irq, CodeCache, Core, Env, Exit, Hart, HartConfig, Priv, TlbFlush, Trap};
use rvnvmm_isa::csr::*;
use rvnvmm_isa::encode::{addi, ld, li, sd};
use rvnvmm_mem::sv39::Pte;
use rvnvmm_mem::PhysMem;

pub(crate) const BASE: u64 = 0x8000_0000;
/// Where the M-mode trap handler lives in most tests: it halts.
pub(crate) const M_HANDLER: u64 = BASE + 0x800;
pub(crate) const S_HANDLER: u64 = BASE + 0xc00;

pub(crate) const T0: u8 = 5;
const T1: u8 = 6;
const A0: u8 = 10;
const A1: u8 = 11;
const A2: u8 = 12;
const A3: u8 = 13;
const A4: u8 = 14;
const A5: u8 = 15;
const A6: u8 = 16;
const A7: u8 = 17;

const MRET: u32 = 0x3020_0073;
const SRET: u32 = 0x1020_0073;
pub(crate) const WFI: u32 = 0x1050_0073;
const ECALL: u32 = 0x0000_0073;
const SFENCE_VMA: u32 = 0x1200_0073;
const STIMECMP: u16 = 0x14D;
const MHPMCOUNTER3: u16 = 0xB03;

pub(crate) fn csr_insn(f3: u32, rd: u8, csr: u16, rs1: u8) -> u32 {
    (csr as u32) << 20 | (rs1 as u32) << 15 | f3 << 12 | (rd as u32) << 7 | 0x73
}
pub(crate) fn csrw(csr: u16, rs: u8) -> u32 {
    csr_insn(1, 0, csr, rs)
}
pub(crate) fn csrr(rd: u8, csr: u16) -> u32 {
    csr_insn(2, rd, csr, 0)
}
pub(crate) fn csrs(csr: u16, rs: u8) -> u32 {
    csr_insn(2, 0, csr, rs)
}
/// `csrsi csr, imm` (imm < 32).
fn csrsi(csr: u16, imm: u8) -> u32 {
    csr_insn(6, 0, csr, imm)
}
/// `jal x0, 0`: spins.
const SPIN: u32 = 0x0000_006f;

/// `li t0, v; csrw csr, t0`.
pub(crate) fn set_csr(csr: u16, v: u64) -> Vec<u32> {
    let mut w = li(T0, v);
    w.push(csrw(csr, T0));
    w
}

pub(crate) struct Machine {
    pub(crate) mem: PhysMem,
    pub(crate) code: CodeCache,
    pub(crate) hart: Hart,
    pub(crate) core: Core,
}

impl Machine {
    /// A full-system hart in M-mode at `BASE` over 4 MiB of RAM, with a
    /// halting (`wfi`) handler at `M_HANDLER` and `S_HANDLER`.
    pub(crate) fn new(prog: &[u32]) -> Machine {
        Machine::with_engine(prog, crate::Engine::Interp)
    }

    /// As [`Machine::new`], running on `engine`.
    pub(crate) fn with_engine(prog: &[u32], engine: crate::Engine) -> Machine {
        let mem = PhysMem::new(&[(BASE, 0x40_0000)]).unwrap();
        let config = HartConfig {
            engine,
            ..HartConfig::default()
        };
        let core = Core::new(0, 0, &config);
        let mut hart = Hart::new(config);
        hart.set_full_system(true);
        hart.pc = BASE;
        let mut m = Machine {
            mem,
            code: CodeCache::default(),
            hart,
            core,
        };
        m.put(BASE, prog);
        m.put(M_HANDLER, &[WFI, SPIN]);
        m.put(S_HANDLER, &[WFI, SPIN]);
        m
    }

    pub(crate) fn put(&mut self, addr: u64, words: &[u32]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(self.mem.write(addr, &bytes));
    }

    pub(crate) fn run(&mut self, budget: u64) -> Exit {
        self.hart.run(
            &mut self.core,
            &mut Env::functional(&mut self.mem, &mut self.code),
            budget,
        )
    }

    /// As [`Machine::run`] with a timing model.
    fn run_timed(&mut self, model: &mut FakeModel, budget: u64) -> Exit {
        let mut env = Env {
            mem: &mut self.mem,
            code: &mut self.code,
            timing: Some(model),
            mmio: None,
        };
        self.hart.run(&mut self.core, &mut env, budget)
    }

    pub(crate) fn csr(&self, n: u16) -> u64 {
        self.hart.read_csr(n).unwrap()
    }

    /// Runs to the halting `wfi` of a handler, checking where it stopped.
    fn run_to_halt(&mut self, handler: u64) {
        assert_eq!(self.run(10_000), Exit::Wfi);
        assert_eq!(self.hart.pc, handler + 4, "stopped in the wrong place");
    }
}

/// Program prologue: trap vectors set.
pub(crate) fn vectors() -> Vec<u32> {
    let mut p = set_csr(MTVEC, M_HANDLER);
    p.extend(set_csr(STVEC, S_HANDLER));
    p
}

/// Enters `mode` at `target` through `mret`.
pub(crate) fn enter(mode: Priv, target: u64) -> Vec<u32> {
    let mut p = set_csr(MEPC, target);
    p.extend(li(T0, mstatus::MPP));
    p.push(csr_insn(3, 0, MSTATUS, T0)); // csrc mstatus, t0
    p.extend(li(T0, (mode as u64) << mstatus::MPP_SHIFT));
    p.push(csrs(MSTATUS, T0));
    p.push(MRET);
    p
}

/// PMP entry 0: all of memory, RWX for S and U.
pub(crate) fn pmp_all() -> Vec<u32> {
    let mut p = set_csr(PMPADDR0, (1 << 54) - 1);
    p.extend(set_csr(PMPCFG0, 0x1f));
    p
}

#[test]
fn csr_semantics() {
    let mut p = set_csr(MSCRATCH, 0x1234);
    p.push(csrr(A0, MSCRATCH));
    p.push(csrw(MISA, 0)); // read-only WARL: ignored
    p.push(csrr(A1, MISA));
    p.extend(set_csr(MSTATUS, 2 << mstatus::MPP_SHIFT | mstatus::SUM)); // MPP=2 reserved
    p.push(csrr(A2, MSTATUS));
    p.extend(set_csr(MEDELEG, !0));
    p.push(csrr(A3, MEDELEG));
    p.extend(set_csr(MIDELEG, !0));
    p.push(csrr(A4, MIDELEG));
    p.extend(set_csr(SATP, 9 << 60 | 5)); // Sv48: ignored
    p.push(csrr(A5, SATP));
    p.extend(set_csr(MTVEC, BASE + 0x702)); // mode 2 reserved: direct
    p.push(csrr(A6, MTVEC));
    p.extend(set_csr(MHPMCOUNTER3, 5));
    p.push(csrr(A7, MHPMCOUNTER3));
    p.extend(set_csr(SIE, !0)); // only delegated bits
    p.extend(set_csr(MCYCLE, 1_000_000));
    p.extend(set_csr(MTVEC, M_HANDLER));
    p.push(WFI);
    let mut m = Machine::new(&p);
    m.core.hart_id = 3;
    assert_eq!(m.run(1000), Exit::Wfi);
    let x = |r: u8| m.hart.x[r as usize];
    assert_eq!(x(A0), 0x1234);
    assert_eq!(x(A1), 0x8000_0000_0014_112d, "RV64 ACDFIMSU");
    assert_eq!(x(A2), mstatus::XLEN | mstatus::SUM, "MPP kept, UXL/SXL = 2");
    assert_eq!(x(A3), 0xb3ff, "ecall from M is not delegable");
    assert_eq!(x(A4), irq::SSIP | irq::STIP | irq::SEIP);
    assert_eq!(x(A5), 0);
    assert_eq!(x(A6), BASE + 0x700);
    assert_eq!(x(A7), 0, "hpm counters read zero");
    assert_eq!(m.csr(MIE), irq::SSIP | irq::STIP | irq::SEIP);
    assert_eq!(m.csr(SIE), m.csr(MIE));
    assert_eq!(m.csr(MHARTID), 3);
    let mcycle = m.csr(MCYCLE);
    assert!((1_000_000..1_000_010).contains(&mcycle), "{mcycle}");
    assert!(m.core.cycles < 1000, "writing mcycle leaves simulated time");
    assert_eq!(m.csr(SSTATUS), mstatus::SUM | 2 << 32);
}

#[test]
fn illegal_csr_accesses_trap_with_the_instruction_bits() {
    // M-mode: an odd pmpcfg (absent on RV64), then a write to a read-only CSR.
    let bad = csrr(A0, PMPCFG0 + 1);
    let mut p = vectors();
    let at = BASE + 4 * p.len() as u64;
    p.push(bad);
    let mut m = Machine::new(&p);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MCAUSE), Trap::ILLEGAL);
    assert_eq!(m.csr(MTVAL), bad as u64);
    assert_eq!(m.csr(MEPC), at);
    assert_eq!(m.hart.stats.exceptions, 1);

    let ro = csrw(MVENDORID, A0);
    let mut p = vectors();
    p.push(ro);
    let mut m = Machine::new(&p);
    m.run_to_halt(M_HANDLER);
    assert_eq!((m.csr(MCAUSE), m.csr(MTVAL)), (Trap::ILLEGAL, ro as u64));

    // U-mode: mstatus, then the cycle counter without mcounteren.
    const U: u64 = BASE + 0x2000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(enter(Priv::User, U));
    let mut m = Machine::new(&p);
    m.put(U, &[csrr(A0, MSTATUS)]);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MCAUSE), Trap::ILLEGAL);
    assert_eq!(m.csr(MTVAL), csrr(A0, MSTATUS) as u64);
    assert_eq!(m.csr(MEPC), U);
    assert_eq!(m.csr(MSTATUS) & mstatus::MPP, 0, "came from U");
    m.put(U, &[csrr(A0, CYCLE)]);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    m.code = CodeCache::default();
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MTVAL), csrr(A0, CYCLE) as u64, "mcounteren.CY = 0");
    // A compressed illegal instruction (c.addi4spn with a zero immediate)
    // reports its 16 bits.
    m.put(U, &[0x0000_0004]);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    m.code = CodeCache::default();
    m.run_to_halt(M_HANDLER);
    assert_eq!((m.csr(MCAUSE), m.csr(MTVAL)), (Trap::ILLEGAL, 4));
}

#[test]
fn counters_readable_from_u_when_enabled() {
    const U: u64 = BASE + 0x2000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(MCOUNTEREN, 7));
    p.extend(set_csr(SCOUNTEREN, 2)); // time only
    p.extend(enter(Priv::User, U));
    let mut m = Machine::new(&p);
    m.put(U, &[csrr(A0, TIME), csrr(A1, INSTRET)]);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MEPC), U + 4, "time read, instret refused");
    assert_eq!(m.csr(MCAUSE), Trap::ILLEGAL);
}

#[test]
fn ecall_traps_from_u_to_m_then_delegated_to_s() {
    const U: u64 = BASE + 0x2000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(enter(Priv::User, U));
    let mut m = Machine::new(&p);
    m.put(U, &[addi(A0, 0, 1), ECALL, addi(A0, 0, 2), ECALL]);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MCAUSE), Trap::ECALL_U);
    assert_eq!(m.csr(MEPC), U + 4);
    assert_eq!(m.csr(MTVAL), 0);
    assert_eq!(m.hart.prv, Priv::Machine);
    // Resume after the ecall with ecalls from U delegated.
    m.put(
        M_HANDLER,
        &[
            csrr(T0, MEPC),
            addi(T0, T0, 4),
            csrw(MEPC, T0),
            addi(T1, 0, 1 << 8),
            csrw(MEDELEG, T1),
            MRET,
        ],
    );
    m.code = CodeCache::default();
    m.hart.pc = M_HANDLER;
    m.run_to_halt(S_HANDLER);
    assert_eq!(m.hart.prv, Priv::Supervisor);
    assert_eq!(m.hart.x[A0 as usize], 2);
    assert_eq!(m.csr(SCAUSE), Trap::ECALL_U);
    assert_eq!(m.csr(SEPC), U + 12);
    assert_eq!(m.csr(MSTATUS) & mstatus::SPP, 0, "came from U");
    assert_eq!(m.csr(MCAUSE), Trap::ECALL_U, "M saw only the first");
    // ecall from S and M: causes 9 and 11 (not delegated).
    m.put(S_HANDLER, &[ECALL]);
    m.put(M_HANDLER, &[csrr(A1, MCAUSE), WFI]);
    m.code = CodeCache::default();
    m.hart.pc = S_HANDLER;
    m.run_to_halt(M_HANDLER + 4);
    assert_eq!(m.hart.x[A1 as usize], Trap::ECALL_S);
    assert_eq!(m.csr(MEPC), S_HANDLER);
    const M_CODE: u64 = BASE + 0x5000;
    m.put(M_CODE, &[ECALL]);
    m.hart.pc = M_CODE;
    m.run_to_halt(M_HANDLER + 4);
    assert_eq!(m.hart.x[A1 as usize], Trap::ECALL_M);
    assert_eq!(m.csr(MEPC), M_CODE);
}

/// Supervisor ecalls reaching M-mode (the SBI firmware) are counted by
/// extension (`a7`); an M-mode ecall is not an SBI call.
#[test]
fn sbi_calls_are_counted_by_extension() {
    const S: u64 = BASE + 0x2000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(enter(Priv::Supervisor, S));
    let mut m = Machine::new(&p);
    // The M handler returns past the ecall.
    m.put(
        M_HANDLER,
        &[csrr(T0, MEPC), addi(T0, T0, 4), csrw(MEPC, T0), MRET],
    );
    let mut s_code = Vec::new();
    for eid in [
        0x73_5049u64,
        0x04,
        0x5246_4E43,
        0x06,
        0x5449_4D45,
        0x48_534D,
        0x10,
    ] {
        s_code.extend(li(A7, eid));
        s_code.push(ECALL);
    }
    s_code.push(WFI);
    m.put(S, &s_code);
    assert_eq!(m.run(10_000), Exit::Wfi);
    assert_eq!(m.hart.prv, Priv::Supervisor);
    let c = m.hart.stats.sbi_calls;
    assert_eq!((c.ipi, c.rfence, c.timer, c.hsm, c.other), (2, 2, 1, 1, 1));
    // From M-mode: an exception like any other, not an SBI call.
    const M_CODE: u64 = BASE + 0x5000;
    m.put(M_HANDLER, &[WFI]);
    m.put(M_CODE, &[ECALL]);
    m.code = CodeCache::default();
    m.hart.pc = M_CODE;
    m.hart.prv = Priv::Machine;
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.hart.stats.sbi_calls, c);
}

#[test]
fn mret_and_sret_move_between_modes() {
    const S: u64 = BASE + 0x2000;
    const U: u64 = BASE + 0x3000;
    let mut p = vectors();
    p.extend(pmp_all());
    // MPIE = 1 so mret sets MIE (no interrupt is enabled in mie).
    p.extend(li(T0, mstatus::MPIE));
    p.push(csrs(MSTATUS, T0));
    p.extend(enter(Priv::Supervisor, S));
    let mut m = Machine::new(&p);
    let mut s = set_csr(SEPC, U);
    s.extend(li(T0, mstatus::SPIE));
    s.push(csrs(SSTATUS, T0)); // SPP = U (0), SPIE = 1
    s.push(csrr(A0, SSTATUS));
    s.push(SRET);
    m.put(S, &s);
    m.put(U, &[csrr(A1, TIME)]);
    m.run_to_halt(M_HANDLER);
    let ms = m.csr(MSTATUS);
    assert_ne!(ms & mstatus::MPIE, 0, "trap saved MIE = 1 into MPIE");
    assert_eq!(ms & mstatus::MIE, 0);
    assert_ne!(ms & mstatus::SIE, 0, "sret set SIE from SPIE");
    assert_ne!(ms & mstatus::SPIE, 0);
    assert_eq!(m.hart.x[A0 as usize] & mstatus::SPP, 0);
    assert_eq!(m.csr(MCAUSE), Trap::ILLEGAL, "time without mcounteren");
    assert_eq!(m.csr(MEPC), U);
    // sret from U is illegal; mret from S too.
    m.put(U, &[SRET]);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    m.code = CodeCache::default();
    m.run_to_halt(M_HANDLER);
    assert_eq!((m.csr(MCAUSE), m.csr(MEPC)), (Trap::ILLEGAL, U));
}

#[test]
fn tsr_tw_and_tvm_trap_s_mode() {
    const S: u64 = BASE + 0x2000;
    for (bit, insn) in [
        (mstatus::TSR, SRET),
        (mstatus::TW, WFI),
        (mstatus::TVM, SFENCE_VMA),
        (mstatus::TVM, csrr(A0, SATP)),
    ] {
        let mut p = vectors();
        p.extend(pmp_all());
        p.extend(li(T1, bit));
        p.push(csrs(MSTATUS, T1));
        p.extend(enter(Priv::Supervisor, S));
        let mut m = Machine::new(&p);
        m.put(S, &[insn]);
        m.run_to_halt(M_HANDLER);
        assert_eq!(m.csr(MCAUSE), Trap::ILLEGAL, "{insn:#x}");
        assert_eq!(m.csr(MTVAL), insn as u64);
    }
}

#[test]
fn interrupts_priority_masking_and_delegation() {
    // Vectored mtvec: cause 3 (MSI) lands at base + 12.
    const VEC: u64 = BASE + 0x1000;
    let mut p = set_csr(MTVEC, VEC | 1);
    p.extend(set_csr(MIE, irq::MSIP | irq::MTIP | irq::SSIP));
    p.push(addi(A0, 0, 1)); // mstatus.MIE = 0: nothing taken yet
    p.push(csrsi(MSTATUS, mstatus::MIE as u8));
    p.push(addi(A0, 0, 2));
    let mut m = Machine::new(&p);
    // The handlers spin: a wfi would complete at once (MTIP still pends).
    m.put(VEC + 4 * 3, &[SPIN]);
    m.put(VEC + 4 * 7, &[SPIN]);
    m.hart.set_interrupt(irq::MTIP | irq::MSIP, true);
    assert!(
        !m.hart.interrupt_pending(&m.core),
        "nothing enabled in mie yet"
    );
    assert_eq!(m.run(1000), Exit::Budget);
    assert!(m.hart.interrupt_pending(&m.core));
    assert_eq!(m.hart.pc, VEC + 4 * 3);
    assert_eq!(m.csr(MCAUSE), 1 << 63 | 3, "MSI before MTI");
    assert_eq!(m.hart.x[A0 as usize], 1, "taken right after csrsi");
    assert_eq!(m.hart.stats.interrupts, 1);
    let ret = m.csr(MEPC);
    assert_eq!(ret, BASE + 4 * (p.len() as u64 - 1));
    assert_eq!(
        m.csr(MSTATUS) & mstatus::MIE,
        0,
        "handler runs with MIE = 0"
    );
    assert_ne!(m.csr(MSTATUS) & mstatus::MPIE, 0);

    // Delegated S interrupts: SEI > SSI > STI; masked in M, taken in U.
    const U: u64 = BASE + 0x3000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(MIDELEG, irq::SSIP | irq::STIP | irq::SEIP));
    p.extend(set_csr(MIE, irq::SSIP | irq::STIP | irq::SEIP));
    p.extend(set_csr(MIP, irq::SSIP | irq::STIP));
    p.push(addi(A0, 0, 7)); // still M: S interrupts wait
    p.extend(enter(Priv::User, U));
    let mut m = Machine::new(&p);
    m.put(U, &[addi(A1, 0, 1), SPIN]);
    m.put(S_HANDLER, &[SPIN]);
    assert_eq!(m.run(1000), Exit::Budget);
    assert_eq!(m.hart.pc, S_HANDLER);
    assert_eq!(m.csr(SCAUSE), 1 << 63 | 1, "SSI before STI");
    assert_eq!(m.csr(SEPC), U, "taken before the first U instruction");
    assert_eq!(m.hart.x[A0 as usize], 7);
    assert_eq!(m.csr(SIP), irq::SSIP | irq::STIP);
    // With SEIP from a device it wins; the handler's SIE = 0 masks it in S
    // until sret returns to U.
    m.hart.set_interrupt(irq::SEIP, true);
    m.put(S_HANDLER, &[SRET]);
    m.code = CodeCache::default();
    m.hart.pc = S_HANDLER;
    let _ = m.run(2);
    assert_eq!(m.csr(SCAUSE), 1 << 63 | 9);
    assert_eq!(m.hart.stats.interrupts, 2);
    // Not delegated, MTIP is taken from S even with MIE = 0.
    m.put(S_HANDLER, &[SPIN]);
    m.put(M_HANDLER, &[csrr(A1, TIME), SPIN]);
    m.code = CodeCache::default();
    m.hart.set_interrupt(irq::SEIP, false);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(MIE, irq::MTIP));
    p.extend(enter(Priv::Supervisor, BASE + 0x2000));
    m.put(BASE, &p);
    m.put(BASE + 0x2000, &[SPIN]);
    let cmp = m.core.time_csr() + 50;
    m.hart.interrupt_lines().set_mtimecmp(cmp);
    assert_eq!(m.run(100_000), Exit::Budget);
    assert_eq!(m.csr(MCAUSE), 1 << 63 | 7);
    assert_eq!(m.hart.pc, M_HANDLER + 4);
    // Checked at block boundaries: the spin loop's block is 64 jumps long.
    let t = m.hart.x[A1 as usize];
    assert!((cmp..cmp + 14).contains(&t), "taken at {t}, mtimecmp {cmp}");
}

#[test]
fn wfi_exits_until_the_timer_fires() {
    let mut p = set_csr(MIE, irq::MTIP);
    let wfi_at = BASE + 4 * p.len() as u64;
    p.push(WFI);
    p.push(addi(A0, 0, 1));
    p.push(WFI);
    let mut m = Machine::new(&p);
    let lines = m.hart.interrupt_lines();
    lines.set_mtimecmp(1000);
    assert_eq!(m.run(100), Exit::Wfi);
    assert_eq!(m.hart.pc, wfi_at + 4);
    assert!(!m.hart.interrupt_pending(&m.core));
    // The board skips to the deadline: MTIP pends, wfi is done (MIE = 0:
    // no trap) and the next wfi falls through.
    let deadline = m.hart.timer_deadline(&m.core).unwrap();
    assert_eq!(deadline, 1000 * 5, "50 MHz clock, 10 MHz timebase");
    m.core.cycles = deadline;
    assert!(m.hart.interrupt_pending(&m.core));
    let _ = m.run(2);
    assert_eq!(m.hart.x[A0 as usize], 1);
    assert_eq!(m.hart.pc, wfi_at + 12);
    assert_eq!(m.csr(MIP) & irq::MTIP, irq::MTIP);
    assert_eq!(lines.time(), 1000, "devices see the hart's time");
    lines.set_mtimecmp(u64::MAX);
    assert_eq!(m.csr(MIP) & irq::MTIP, 0);
}

#[test]
fn sstc_stimecmp_raises_stip() {
    const S: u64 = BASE + 0x2000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(MENVCFG, envcfg::STCE));
    p.extend(set_csr(MCOUNTEREN, 2));
    p.extend(set_csr(MIDELEG, irq::STIP));
    p.extend(set_csr(MIE, irq::STIP));
    p.extend(li(T0, mstatus::SIE));
    p.push(csrs(MSTATUS, T0));
    p.extend(enter(Priv::Supervisor, S));
    let mut m = Machine::new(&p);
    // S: stimecmp = time + 100, then spin until the interrupt.
    m.put(
        S,
        &[csrr(A0, TIME), addi(A0, A0, 100), csrw(STIMECMP, A0), SPIN],
    );
    // The handler reads stimecmp and sip, disarms the timer, halts.
    m.put(
        S_HANDLER,
        &[
            csrr(A1, TIME),
            csrr(A2, SIP),
            addi(T0, 0, -1),
            csrw(STIMECMP, T0),
            csrr(A3, SIP),
            WFI,
        ],
    );
    assert_eq!(m.run(1_000_000), Exit::Wfi);
    assert_eq!(m.csr(SCAUSE), 1 << 63 | 5);
    let (cmp, at) = (m.hart.x[A0 as usize], m.hart.x[A1 as usize]);
    assert!(at >= cmp && at < cmp + 14, "fired at {at}, stimecmp {cmp}");
    assert_eq!(m.hart.x[A2 as usize], irq::STIP);
    assert_eq!(m.hart.x[A3 as usize], 0, "a later stimecmp clears STIP");
    // STIP is read-only in mip under Sstc.
    assert_eq!(m.csr(STIMECMP), u64::MAX);
}

/// Page-table layout for the Sv39 tests: a root at `PT`, a level-1 table
/// and a level-0 table for the 2 MiB at 0x4000_0000.
const PT: u64 = BASE + 0x10_0000;
const VCODE: u64 = 0x4000_0000;
const VDATA: u64 = 0x4000_1000;
const VRO: u64 = 0x4000_2000;
const PCODE: u64 = BASE + 0x20_0000;
const PDATA: u64 = BASE + 0x20_1000;

fn page_tables(m: &mut Machine, user: u64) {
    let (l1, l0) = (PT + 0x1000, PT + 0x2000);
    let table = |pa: u64| Pte::leaf(pa, 0).0 & !(Pte::R | Pte::W | Pte::X);
    m.mem.write_u64(PT + 8 * (VCODE >> 30), table(l1));
    m.mem.write_u64(l1 + 8 * ((VCODE >> 21) & 0x1ff), table(l0));
    let leaf = |pa, f| Pte::leaf(pa, f | user).0;
    m.mem.write_u64(
        l0 + 8 * ((VCODE >> 12) & 0x1ff),
        leaf(PCODE, Pte::R | Pte::X),
    );
    m.mem.write_u64(
        l0 + 8 * ((VDATA >> 12) & 0x1ff),
        leaf(PDATA, Pte::R | Pte::W),
    );
    m.mem
        .write_u64(l0 + 8 * ((VRO >> 12) & 0x1ff), leaf(PDATA, Pte::R));
    // A 1 GiB identity superpage for the kernel at 0x8000_0000 (S only).
    m.mem.write_u64(
        PT + 8 * (BASE >> 30),
        Pte::leaf(BASE, Pte::R | Pte::W | Pte::X | Pte::A | Pte::D).0,
    );
}

fn satp() -> u64 {
    8 << 60 | PT >> 12
}

#[test]
fn sv39_translation_sets_a_and_d_and_faults() {
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(enter(Priv::User, VCODE));
    let mut m = Machine::new(&p);
    page_tables(&mut m, Pte::U);
    m.mem.write_u64(PDATA + 16, 0x55);
    let mut u = li(T0, VDATA);
    u.push(ld(A0, T0, 16));
    u.push(sd(A0, T0, 24));
    u.extend(li(T1, VRO));
    u.push(ld(A1, T1, 16)); // same frame, read-only mapping
    u.push(sd(A1, T1, 32)); // store page fault
    m.put(PCODE, &u);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.hart.x[A0 as usize], 0x55);
    assert_eq!(m.hart.x[A1 as usize], 0x55);
    assert_eq!(m.mem.read_u64(PDATA + 24), Some(0x55));
    assert_eq!(m.csr(MCAUSE), Trap::STORE_PAGE_FAULT);
    assert_eq!(m.csr(MTVAL), VRO + 32);
    assert_eq!(m.csr(MEPC), VCODE + 4 * (u.len() as u64 - 1));
    let pte = |va: u64| {
        m.mem
            .read_u64(PT + 0x2000 + 8 * ((va >> 12) & 0x1ff))
            .unwrap()
    };
    assert_eq!(pte(VCODE) & (Pte::A | Pte::D), Pte::A, "fetch sets A");
    assert_eq!(
        pte(VDATA) & (Pte::A | Pte::D),
        Pte::A | Pte::D,
        "store sets D"
    );
    assert_eq!(pte(VRO) & (Pte::A | Pte::D), Pte::A);
    // A load from an unmapped page, and a fetch from a non-executable one.
    for (code, cause, tval) in [
        (vec![ld(A0, 0, 0x100)], Trap::LOAD_PAGE_FAULT, 0x100),
        (
            li(T0, VDATA).into_iter().chain([0x0002_8067]).collect(),
            Trap::INSN_PAGE_FAULT,
            VDATA,
        ),
    ] {
        m.put(PCODE, &code);
        m.hart.set_full_system(true);
        m.hart.pc = BASE;
        m.code = CodeCache::default();
        m.run_to_halt(M_HANDLER);
        assert_eq!((m.csr(MCAUSE), m.csr(MTVAL)), (cause, tval));
    }
}

#[test]
fn page_faults_delegate_and_sum_mxr_mprv_change_permissions() {
    // S-mode kernel on the identity superpage touches a U page: faults
    // without SUM (delegated to S), works with it.
    const K: u64 = BASE + 0x4000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(set_csr(MEDELEG, 1 << Trap::LOAD_PAGE_FAULT));
    p.extend(enter(Priv::Supervisor, K));
    let mut m = Machine::new(&p);
    page_tables(&mut m, Pte::U);
    // VCODE becomes execute-only.
    let l0 = PT + 0x2000;
    m.mem.write_u64(
        l0 + 8 * ((VCODE >> 12) & 0x1ff),
        Pte::leaf(PCODE, Pte::X | Pte::U).0,
    );
    m.mem.write_u64(PCODE, 0x1357);
    m.mem.write_u64(PDATA, 0x77);
    let mut k = li(T0, VDATA);
    k.push(ld(A0, T0, 0)); // faults: U page, SUM = 0
    m.put(K, &k);
    m.run_to_halt(S_HANDLER);
    assert_eq!(m.csr(SCAUSE), Trap::LOAD_PAGE_FAULT);
    assert_eq!(m.csr(STVAL), VDATA);
    assert_eq!(m.csr(MCAUSE), 0, "M saw nothing");
    // Same, with SUM set first; MXR lets it read the execute-only page.
    let mut k = li(T0, mstatus::SUM | mstatus::MXR);
    k.push(csrs(SSTATUS, T0));
    k.extend(li(T0, VDATA));
    k.push(ld(A0, T0, 0));
    k.extend(li(T0, VCODE));
    k.push(ld(A1, T0, 0));
    k.push(ECALL);
    m.put(K, &k);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    m.code = CodeCache::default();
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MCAUSE), Trap::ECALL_S);
    assert_eq!(m.hart.x[A0 as usize], 0x77);
    assert_eq!(m.hart.x[A1 as usize], 0x1357);

    // M-mode with MPRV and MPP = U loads through the page table.
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(li(T0, mstatus::MPRV));
    p.push(csrs(MSTATUS, T0)); // MPP = U (0)
    p.extend(li(T0, VDATA));
    p.push(ld(A2, T0, 0));
    p.push(WFI);
    let mut m = Machine::new(&p);
    page_tables(&mut m, Pte::U);
    m.mem.write_u64(PDATA, 0x99);
    assert_eq!(m.run(1000), Exit::Wfi);
    assert_eq!(m.hart.x[A2 as usize], 0x99);
}

#[test]
fn sfence_vma_drops_stale_translations() {
    // S maps VDATA, reads it, remaps it to another frame, reads again
    // before and after sfence.vma.
    const K: u64 = BASE + 0x4000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(enter(Priv::Supervisor, K));
    let mut m = Machine::new(&p);
    page_tables(&mut m, 0);
    m.mem.write_u64(PDATA, 1);
    m.mem.write_u64(PDATA + 0x1000, 2);
    let pte_addr = PT + 0x2000 + 8 * ((VDATA >> 12) & 0x1ff);
    let new_pte = Pte::leaf(PDATA + 0x1000, Pte::R | Pte::W | Pte::A | Pte::D).0;
    let mut k = li(T0, VDATA);
    k.push(ld(A0, T0, 0));
    k.extend(li(T1, pte_addr));
    k.extend(li(A3, new_pte));
    k.push(sd(A3, T1, 0));
    k.push(ld(A1, T0, 0)); // stale translation allowed
    k.push(0x1202_8073); // sfence.vma t0, zero
    k.push(ld(A2, T0, 0));
    k.push(ECALL);
    m.put(K, &k);
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.hart.x[A0 as usize], 1);
    assert_eq!(m.hart.x[A1 as usize], 1, "the TLB kept the old frame");
    assert_eq!(m.hart.x[A2 as usize], 2);
}

#[test]
fn pmp_denies_s_mode_and_locked_entries_bind_m() {
    // Entry 0: NAPOT BASE..BASE+4 KiB, no access; entry 1: everything.
    const K: u64 = BASE + 0x4000;
    let mut p = vectors();
    p.extend(set_csr(PMPADDR0, (BASE >> 2) | 0x1ff));
    p.extend(set_csr(PMPADDR0 + 1, (1 << 54) - 1));
    p.extend(set_csr(PMPCFG0, 0x1f << 8 | 0x18));
    p.extend(li(A4, BASE + 0x100));
    p.push(ld(A5, A4, 0)); // M: allowed (not locked)
    p.extend(enter(Priv::Supervisor, K));
    let mut m = Machine::new(&p);
    m.mem.write_u64(BASE + 0x100, 0xabc);
    m.put(K, &[ld(A0, A4, 0)]);
    // The handler lies in the denied 4 KiB: M-mode is not checked without L.
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.hart.x[A5 as usize], 0xabc);
    assert_eq!(m.csr(MCAUSE), Trap::LOAD_ACCESS);
    assert_eq!(m.csr(MTVAL), BASE + 0x100);
    assert_eq!(m.csr(MEPC), K);

    // Locked: M-mode is denied too.
    let mut p = set_csr(MTVEC, BASE + 0x2000);
    p.extend(set_csr(PMPADDR0, ((BASE + 0x1000) >> 2) | 0x1ff));
    p.extend(set_csr(PMPCFG0, 0x80 | 0x18 | 0x1)); // L, NAPOT, R
    p.extend(li(A4, BASE + 0x1100));
    p.push(ld(A0, A4, 0)); // allowed: R
    p.push(sd(A0, A4, 0)); // denied: no W
    let mut m = Machine::new(&p);
    m.put(BASE + 0x2000, &[WFI]);
    assert_eq!(m.run(1000), Exit::Wfi);
    assert_eq!(m.csr(MCAUSE), Trap::STORE_ACCESS);
    assert_eq!(m.csr(MTVAL), BASE + 0x1100);
    assert_eq!(m.csr(PMPCFG0) & 0xff, 0x99);
}

#[test]
fn fp_off_is_illegal_and_use_sets_dirty() {
    let fmv_d_x = 0xf200_0053 | (A0 as u32) << 15 | 1 << 7; // fmv.d.x f1, a0
    let mut p = vectors();
    let at = BASE + 4 * p.len() as u64;
    p.push(fmv_d_x);
    let mut m = Machine::new(&p);
    m.run_to_halt(M_HANDLER);
    assert_eq!((m.csr(MCAUSE), m.csr(MEPC)), (Trap::ILLEGAL, at));
    // FS = Initial: the instruction runs and FS becomes Dirty (SD set).
    let mut p = set_csr(MSTATUS, 1 << 13);
    p.push(fmv_d_x);
    p.push(WFI);
    let mut m = Machine::new(&p);
    assert_eq!(m.run(100), Exit::Wfi);
    let ms = m.csr(MSTATUS);
    assert_eq!(ms & mstatus::FS, mstatus::FS_DIRTY);
    assert_ne!(ms & mstatus::SD, 0);
}

#[test]
fn misaligned_accesses_are_done_in_hardware() {
    let mut p = li(A4, BASE + 0x3ffd);
    p.extend(li(A0, 0x1122_3344_5566_7788));
    p.push(sd(A0, A4, 0)); // crosses a page
    p.push(ld(A1, A4, 0));
    p.push(WFI);
    let mut m = Machine::new(&p);
    assert_eq!(m.run(100), Exit::Wfi);
    assert_eq!(m.hart.x[A1 as usize], 0x1122_3344_5566_7788);
}

#[test]
fn a_trap_vector_that_faults_stops_the_run() {
    let mut p = set_csr(MTVEC, 0x1000); // not RAM
    p.push(ECALL);
    let mut m = Machine::new(&p);
    match m.run(1000) {
        Exit::Trap(t) => assert_eq!(t, Trap::new(Trap::INSN_ACCESS, 0x1000)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn user_mode_emulation_keeps_exiting() {
    // The same hart out of full-system mode: ecall exits, traps exit.
    let mut m = Machine::new(&[ECALL]);
    m.hart.set_full_system(false);
    m.hart.pc = BASE;
    assert_eq!(m.run(10), Exit::Ecall);
    assert_eq!(m.hart.prv, Priv::User);
    assert_eq!(m.hart.stats.exceptions, 0);
}

#[test]
fn straddling_block_follows_the_second_page_mapping() {
    // S runs a 4-byte `addi` split across VCODE's last halfword and the
    // next virtual page, whose frame is then swapped for one holding a
    // different upper half: the physically keyed block must not be reused.
    const PX1: u64 = BASE + 0x20_2000;
    const PX2: u64 = BASE + 0x20_3000;
    let mut p = vectors();
    p.push(addi(A0, 0, 0));
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(enter(Priv::Supervisor, VCODE + 0xffe));
    let mut m = Machine::new(&p);
    page_tables(&mut m, 0);
    let next_pte = PT + 0x2000 + 8 * (((VCODE + 0x1000) >> 12) & 0x1ff);
    m.mem.write_u64(next_pte, Pte::leaf(PX1, Pte::R | Pte::X).0);
    let (one, sixteen) = (addi(A0, A0, 1), addi(A0, A0, 0x10));
    assert_eq!(one & 0xffff, sixteen & 0xffff);
    let half = |w: u32, hi: bool| (if hi { w >> 16 } else { w & 0xffff }) as u16;
    assert!(m.mem.write(PCODE + 0xffe, &half(one, false).to_le_bytes()));
    for (frame, insn) in [(PX1, one), (PX2, sixteen)] {
        assert!(m.mem.write(frame, &half(insn, true).to_le_bytes()));
        assert!(m.mem.write(frame + 2, &ECALL.to_le_bytes()));
    }
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.csr(MCAUSE), Trap::ECALL_S);
    assert_eq!(m.hart.x[A0 as usize], 1);
    m.mem.write_u64(next_pte, Pte::leaf(PX2, Pte::R | Pte::X).0);
    m.hart.set_full_system(true);
    m.hart.pc = BASE;
    m.run_to_halt(M_HANDLER);
    assert_eq!(m.hart.x[A0 as usize], 0x10);
}

/// The timing model sees the `satp` write, the PTE reads of each Sv39 walk
/// (the kernel's fetch through its gigapage: one; a load of a 4 KiB page:
/// three, root first) and the `sfence.vma` with its address.
#[test]
fn the_timing_model_sees_walks_satp_writes_and_sfence_vma() {
    const K: u64 = BASE + 0x4000;
    let mut p = vectors();
    p.extend(pmp_all());
    p.extend(set_csr(SATP, satp()));
    p.extend(enter(Priv::Supervisor, K));
    let mut m = Machine::new(&p);
    page_tables(&mut m, 0);
    let mut k = li(T0, VDATA);
    k.push(ld(A0, T0, 0));
    k.push(0x1202_8073); // sfence.vma t0, zero
    k.push(ECALL);
    m.put(K, &k);
    let mut model = FakeModel::new(6, 6);
    assert_eq!(m.run_timed(&mut model, 10_000), Exit::Wfi);
    assert_eq!(m.hart.pc, M_HANDLER + 4);
    let (l1, l0) = (PT + 0x1000, PT + 0x2000);
    assert_eq!(
        model.page_walks(),
        [
            PT + 8 * (K >> 30),
            PT + 8 * (VDATA >> 30),
            l1 + 8 * ((VDATA >> 21) & 0x1ff),
            l0 + 8 * ((VDATA >> 12) & 0x1ff),
        ]
    );
    let satp_at = model.calls.iter().position(|c| *c == Call::Satp(0, satp()));
    let fence = TlbFlush {
        vaddr: Some(VDATA),
        asid: None,
    };
    let sfence_at = model
        .calls
        .iter()
        .position(|c| *c == Call::TlbFlush(0, fence));
    assert!(
        satp_at.is_some() && sfence_at.is_some() && satp_at < sfence_at,
        "{:?}",
        model.calls
    );
}

/// A hart's `mhartid` and L1 slot are those of the core it runs on: the
/// same hart moved from core 0 to core 1 reads another `mhartid`, and its
/// accesses reach the timing model as core 1's.
#[test]
fn mhartid_and_l1_slot_come_from_the_core() {
    let mut p = vec![csrr(A0, MHARTID)];
    p.extend(li(T0, BASE + 0x8000));
    p.push(ld(A1, T0, 0));
    p.push(WFI);
    let mut m = Machine::new(&p);
    let mut model = FakeModel::new(6, 6);
    let other = Core::new(1, 7, &HartConfig::default());
    for (core, hart_id) in [(0, 0), (1, 7)] {
        if core == 1 {
            m.core = other.clone();
        }
        m.hart.pc = BASE;
        model.calls.clear();
        assert_eq!(m.run_timed(&mut model, 100), Exit::Wfi);
        assert_eq!(m.hart.x[A0 as usize], hart_id);
        assert!(!model.calls.is_empty());
        assert!(
            model.calls.iter().all(|c| match c {
                Call::Data(id, _) | Call::Fetch(id, _) => *id == core,
                _ => true,
            }),
            "{:?}",
            model.calls
        );
    }
}

#[test]
fn fence_i_keeps_the_physically_keyed_cache_and_stores_to_code_are_seen() {
    // M-mode calls f twice, rewrites f's first instruction, runs
    // `fence.i`, calls f again: the store alone drops the decoded code.
    const F: u64 = BASE + 0x400;
    const FENCE_I: u32 = 0x0000_100f;
    const RA: u8 = 1;
    let call = (T0 as u32) << 15 | (RA as u32) << 7 | 0x67; // jalr ra, 0(t0)
    let mut p = li(T0, F);
    p.extend([call, call]);
    p.extend(li(T1, addi(A0, A0, 100) as u64));
    p.push(rvnvmm_isa::encode::sw(T1, T0, 0));
    p.push(FENCE_I);
    p.push(call);
    p.push(WFI);
    let mut m = Machine::new(&p);
    m.put(F, &[addi(A0, A0, 1), (RA as u32) << 15 | 0x67]); // ret
    assert_eq!(m.run(1000), Exit::Wfi);
    assert_eq!(m.hart.x[A0 as usize], 102);
    assert_eq!(m.code.flushes, 1, "the store flushed, fence.i did not");
}

/// `jal zero, offset`.
fn j(offset: i32) -> u32 {
    let o = offset as u32;
    (o >> 20 & 1) << 31
        | (o >> 1 & 0x3ff) << 21
        | (o >> 11 & 1) << 20
        | (o >> 12 & 0xff) << 12
        | 0x6f
}

/// Turns that end at a fetch's sync stop start the next turn at the block
/// kept then (`Hart::stopped_before`) rather than looking it up again:
/// every turn runs as it does when the block is looked up, under both
/// engines, also when the code cache was flushed in between (the kept
/// index then names no block of the new cache).
#[test]
fn a_turn_resumes_at_the_block_its_fetch_stopped_before_as_a_lookup_finds_it() {
    // Three blocks in three fetch lines, jumping round a loop.
    let mut p = vec![addi(A0, A0, 1), j(0x100)];
    p.resize(0x40, addi(0, 0, 0));
    p.extend([addi(A1, A1, 1), j(0x100)]);
    p.resize(0x80, addi(0, 0, 0));
    p.extend([addi(A2, A2, 1), j(-0x200)]);
    for engine in [crate::Engine::Interp, crate::Engine::Jit] {
        // (pc, instret, cycles, registers, model calls) after each turn.
        let turns = |keep: bool| {
            let mut m = Machine::with_engine(&p, engine);
            let mut model = FakeModel::new(6, 6);
            let (mut log, mut kept) = (Vec::new(), 0);
            for turn in 0..400u64 {
                if turn % 97 == 96 {
                    m.code.flush();
                }
                if !keep {
                    m.hart.stopped_before = None;
                }
                kept += u32::from(m.hart.stopped_before.is_some());
                // No fetch line is ever private: a turn stops before the
                // first block fetched past the limit.
                m.core.set_sync_limit(m.core.cycles + turn % 5);
                model.calls.clear();
                let exit = m.run_timed(&mut model, 1_000);
                log.push((
                    exit,
                    m.hart.pc,
                    m.hart.instret,
                    m.core.cycles,
                    m.hart.x,
                    model.calls.clone(),
                ));
            }
            (log, kept)
        };
        let (kept, used) = turns(true);
        let (looked_up, _) = turns(false);
        assert!(
            used > 300,
            "{engine:?}: {used} turns started at a kept block"
        );
        assert_eq!(kept, looked_up, "{engine:?}");
    }
}
