//! The paper's microbenchmarks as loops rvnvmm generates itself and runs on
//! one hart in user mode, timed with the guest's own `cycle` counter: seed
//! 000 Fig. 9 (stride over the NVMM region) and Fig. 10 (round-robin over
//! NBANK banks), seed 001 Fig. 4 (bandwidth).
//!
//! The papers ran them as Linux processes on a mapping of the NVMM region
//! (`/dev/mem`-style, every page mapped up front with 4 KiB pages), so the
//! loop runs translated, on an Sv39 page table in DRAM laid out as Linux
//! would lay it out ([`map_like_linux`]). With `tlb.enabled` every TLB miss
//! walks it through the L1D, as the hardware's walker does; without,
//! translation costs nothing and the figures are those of physical
//! addresses.

use rvnvmm_config::Config;
use rvnvmm_hart::{CodeCache, Core, Env, Exit, Hart, HartConfig, Priv};
use rvnvmm_isa::encode::*;
use rvnvmm_mem::sv39::{self, Pte, PAGE_SIZE};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;

/// Why a microbenchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum MicrobenchError {
    /// Guest RAM could not be set up.
    #[error(transparent)]
    Mem(#[from] rvnvmm_mem::MemError),
    /// The memory-system model could not be built.
    #[error(transparent)]
    Memsys(#[from] rvnvmm_memsys::MemsysError),
    /// The machine has no DRAM region for the loop's code.
    #[error("the machine has no DRAM region for the benchmark's code")]
    NoDram,
    /// The code does not fit at the start of DRAM.
    #[error("cannot place the benchmark code at {0:#x}")]
    CodePlacement(u64),
    /// The pattern reaches outside guest RAM.
    #[error("the benchmark's accesses ({first:#x}..={last:#x}) leave guest RAM")]
    OutsideRam {
        /// The first address touched.
        first: u64,
        /// The last address touched.
        last: u64,
    },
    /// The page table does not fit in the DRAM region.
    #[error("the benchmark's page table does not fit in DRAM at {0:#x}")]
    PageTable(u64),
    /// The loop ended other than by its `ecall`.
    #[error("the benchmark loop stopped with {0:?}")]
    Stopped(Exit),
}

/// A read or a write loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `ld` in the loop.
    Read,
    /// `sd` in the loop.
    Write,
}

impl Op {
    /// "read" / "write".
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }
}

/// The access pattern: `rows` rounds; in each, one access to each of
/// `nbank` places `bank_stride` apart; the next round starts `step`
/// further on. Fig. 9 is `nbank = 1, step = STRIDE`; Fig. 10 is
/// `bank_stride = SZBANK, step = row size`.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Physical address of the first access.
    pub base: u64,
    /// Distance between the banks of one round.
    pub bank_stride: u64,
    /// Accesses per round.
    pub nbank: u64,
    /// Distance between rounds.
    pub step: u64,
    /// Rounds.
    pub rounds: u64,
    /// Load or store.
    pub op: Op,
    /// Times the loop runs back to back (at least once). Only the last
    /// pass is measured, with the caches as the earlier ones left them
    /// (the state a sweep of runs on one machine leaves behind).
    pub passes: u64,
}

/// What one loop measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Accesses made.
    pub accesses: u64,
    /// Guest cycles between the two `rdcycle`s.
    pub cycles: u64,
    /// Average time per access in ns (the paper's `(end - start) / iterations`).
    pub avg_latency_ns: f64,
    /// The memory system's statistics after the loop.
    pub stats: serde_json::Value,
}

// Registers of the generated loop.
const T0: u8 = 5;
const T1: u8 = 6;
const T2: u8 = 7;
const S0: u8 = 8;
const S1: u8 = 9;
const S2: u8 = 18;
const S3: u8 = 19;
const S4: u8 = 20;
const A3: u8 = 13;
const A4: u8 = 14;
const A5: u8 = 15;

/// The loop as machine code:
/// ```text
///   s0 = base; s1 = bank_stride; s2 = nbank; s3 = step; s4 = rounds
///   rdcycle t0;  a3 = 0
/// outer: a4 = s0 + a3; a5 = s2
/// inner: ld/sd (lw/sw below 8-byte strides) t1, 0(a4); a4 += s1; a5 -= 1; bnez a5, inner
///        a3 += s3; s4 -= 1; bnez s4, outer
///   rdcycle t2; ecall
/// ```
pub fn generate(p: &Pattern) -> Vec<u32> {
    let mut code = Vec::new();
    for (reg, v) in [
        (S0, p.base),
        (S1, p.bank_stride),
        (S2, p.nbank),
        (S3, p.step),
        (S4, p.rounds),
    ] {
        code.extend(li(reg, v));
    }
    code.push(addi(T1, 0, 0x5a));
    code.push(csrr(T0, 0xc00));
    code.push(addi(A3, 0, 0));
    let outer = code.len();
    code.push(add(A4, S0, A3));
    code.push(addi(A5, S2, 0));
    let inner = code.len();
    // Word accesses when the stride is shorter than a doubleword (seed 001
    // Fig. 4's STRIDE 4, whose `unsigned long` is 4 bytes on its ARMv7), so
    // no access is misaligned.
    let narrow = p.step < 8 || (p.nbank > 1 && p.bank_stride < 8);
    code.push(match (p.op, narrow) {
        (Op::Read, false) => ld(T1, A4, 0),
        (Op::Write, false) => sd(T1, A4, 0),
        (Op::Read, true) => lw(T1, A4, 0),
        (Op::Write, true) => sw(T1, A4, 0),
    });
    code.push(add(A4, A4, S1));
    code.push(addi(A5, A5, -1));
    code.push(bne(A5, 0, -4 * (code.len() - inner) as i32));
    code.push(add(A3, A3, S3));
    code.push(addi(S4, S4, -1));
    code.push(bne(S4, 0, -4 * (code.len() - outer) as i32));
    code.push(csrr(T2, 0xc00));
    code.push(ECALL);
    code
}

/// Runs `pattern` on hart 0 of the machine `cfg` with its full timing
/// model, in user mode on the address space [`map_like_linux`] builds. The
/// code sits at the start of the first DRAM region.
pub fn run(cfg: &Config, pattern: &Pattern) -> Result<Measurement, MicrobenchError> {
    let mut mem = guest_ram(cfg)?;
    let (_, dram) = cfg
        .memory
        .regions_of_kind(rvnvmm_config::RegionKind::Dram)
        .next()
        .ok_or(MicrobenchError::NoDram)?;
    let space = map_like_linux(&mut mem, cfg, dram, pattern)?;
    let code = generate(&Pattern {
        base: space.base,
        ..*pattern
    });
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    // The loop is a few dozen instructions: one code page holds it.
    if bytes.len() as u64 > PAGE_SIZE || !mem.write(dram.base, &bytes) {
        return Err(MicrobenchError::CodePlacement(dram.base));
    }
    let last = pattern.base
        + (pattern.rounds.max(1) - 1) * pattern.step
        + (pattern.nbank.max(1) - 1) * pattern.bank_stride;
    if !mem.is_ram(pattern.base, 8) || !mem.is_ram(last, 8) {
        return Err(MicrobenchError::OutsideRam {
            first: pattern.base,
            last,
        });
    }
    let mut memsys = MemorySystem::new(cfg, 1)?;
    let hart_cfg = HartConfig {
        clock_hz: cfg.machine.clock_hz,
        costs: cfg.core_costs(),
        ..HartConfig::default()
    };
    let mut core = Core::new(0, 0, &hart_cfg);
    let mut hart = Hart::new(hart_cfg);
    hart.prv = Priv::User;
    // The loop reads `cycle` from user mode, as the papers' `clock()` did.
    use rvnvmm_isa::csr::{MCOUNTEREN, SATP, SCOUNTEREN};
    let mapped = hart.write_csr(SATP, (SATP_SV39 << 60) | (space.root >> 12))
        && hart.write_csr(MCOUNTEREN, 1)
        && hart.write_csr(SCOUNTEREN, 1);
    debug_assert!(mapped && hart.page_table == Some(space.root));
    hart.pc = CODE_VADDR;
    let mut cache = CodeCache::default();
    let mut env = Env {
        mem: &mut mem,
        code: &mut cache,
        timing: Some(&mut memsys),
        mmio: None,
    };
    // Start of the measured pass, for the statistics' time base.
    let mut measured_from = 0;
    for pass in 0..pattern.passes.max(1) {
        if pass > 0 {
            // The next pass starts from the top with the caches warm; only
            // the measured (last) pass is counted.
            hart.pc = CODE_VADDR;
            if let Some(m) = env.timing.as_deref_mut() {
                m.reset_stats();
            }
            measured_from = core.cycles;
        }
        match hart.run(&mut core, &mut env, u64::MAX) {
            Exit::Ecall => {}
            other => return Err(MicrobenchError::Stopped(other)),
        }
    }
    let cycles = hart.x[T2 as usize] - hart.x[T0 as usize];
    let accesses = pattern.rounds * pattern.nbank;
    let ns = cycles as f64 * 1e9 / cfg.machine.clock_hz as f64;
    memsys.finish(core.cycles);
    let sim_ns = ((core.cycles - measured_from) as u128 * 1_000_000_000
        / cfg.machine.clock_hz as u128) as u64;
    Ok(Measurement {
        accesses,
        cycles,
        avg_latency_ns: ns / accesses as f64,
        stats: memsys.stats_json(sim_ns),
    })
}

/// `satp.MODE` for Sv39.
const SATP_SV39: u64 = 8;
/// Where the page-table frames start in DRAM: past the loop's code page.
const PAGE_TABLE_OFFSET: u64 = 1 << 20;
/// The loop's code address: a non-PIE executable's text.
const CODE_VADDR: u64 = 0x1_0000;

/// The loop's address space, as a Linux process that maps the memory the
/// pattern runs over has it.
struct AddressSpace {
    /// Physical address of the Sv39 root.
    root: u64,
    /// Virtual address of the pattern's first access.
    base: u64,
}

/// The machine's RAM, every region of it.
fn guest_ram(cfg: &Config) -> Result<PhysMem, rvnvmm_mem::MemError> {
    let ranges: Vec<(u64, u64)> = cfg
        .memory
        .regions
        .values()
        .map(|r| (r.base, r.size))
        .collect();
    PhysMem::new(&ranges)
}

/// Builds the loop's page table in DRAM from `PAGE_TABLE_OFFSET` on, frames
/// taken in order (the root, then each table as the mapping first needs
/// it): the code page at [`CODE_VADDR`], and the memory from the pattern's first
/// address to the end of its region (the papers' `p`, the head of the NVMM
/// region, and all of it) mapped in one piece where Linux's `mmap(NULL,
/// len)` puts it in a fresh process, top-down below the stack, every page
/// present (as a `/dev/mem`-style mapping populates them all), accessed and
/// dirty already (no walk writes a PTE). Where the area lies decides which
/// L1D sets the page-table lines share with the data, so it is Linux's
/// placement rather than the physical address.
fn map_like_linux(
    mem: &mut PhysMem,
    cfg: &Config,
    dram: &rvnvmm_config::Region,
    p: &Pattern,
) -> Result<AddressSpace, MicrobenchError> {
    let first = dram.base + PAGE_TABLE_OFFSET;
    let dram_end = dram.base + dram.size;
    let next = std::cell::Cell::new(first);
    let mut alloc = |_: &mut PhysMem| {
        let frame = next.get();
        next.set(frame + PAGE_SIZE);
        (frame < dram_end).then_some(frame)
    };
    let root = alloc(mem).ok_or(MicrobenchError::PageTable(first))?;
    let user = Pte::U | Pte::A | Pte::D;
    let mut map = |mem: &mut PhysMem, vaddr: u64, paddr: u64, flags: u64| {
        sv39::map_page(mem, root, vaddr, Pte::leaf(paddr, flags | user), &mut alloc)
            .map(|_| ())
            .ok_or(MicrobenchError::PageTable(first))
    };
    map(mem, CODE_VADDR, dram.base, Pte::R | Pte::X)?;
    let area_pa = p.base & !(PAGE_SIZE - 1);
    let area_end = cfg
        .memory
        .region_at(p.base)
        .map_or(area_pa + PAGE_SIZE, |(_, r)| r.base + r.size);
    let len = area_end - area_pa;
    let area_va = rvnvmm_user::vm::mmap_top_for_stack(cfg.user.stack_size)
        .checked_sub(len)
        .ok_or(MicrobenchError::PageTable(first))?;
    for off in (0..len).step_by(PAGE_SIZE as usize) {
        map(mem, area_va + off, area_pa + off, Pte::R | Pte::W)?;
    }
    // The loop's stores must not reach the table it runs on.
    if area_pa < next.get() && first < area_end {
        return Err(MicrobenchError::PageTable(first));
    }
    Ok(AddressSpace {
        root,
        base: area_va + (p.base - area_pa),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_runs_translated_and_pays_for_its_walks_only_with_tlbs() {
        let load = |tlb: &str| Config::load(None, &[format!("tlb.enabled={tlb}")]).unwrap();
        let (on, off) = (load("true"), load("false"));
        let (_, nvmm) = on
            .memory
            .regions_of_kind(rvnvmm_config::RegionKind::Nvmm)
            .next()
            .unwrap();
        // A new page at every access: 64 DTLB misses, whose leaf PTEs
        // share 8 lines (8 entries a line).
        let p = Pattern {
            base: nvmm.base,
            bank_stride: 0,
            nbank: 1,
            step: 4096,
            rounds: 64,
            op: Op::Read,
            passes: 1,
        };
        let (t, f) = (run(&on, &p).unwrap(), run(&off, &p).unwrap());
        assert_eq!(t.stats["tlb"]["dtlb"]["misses"], 64);
        // Three levels a walk, the code page's included, counted either way.
        assert_eq!(t.stats["page_walks"]["pte_reads"], 3 * 65);
        assert_eq!(f.stats["page_walks"]["pte_reads"], 3 * 65);
        assert!(f.stats.get("tlb").is_none());
        assert!(t.cycles > f.cycles, "{} vs {}", t.cycles, f.cycles);
        // The same NVMM traffic: walks read DRAM only.
        assert_eq!(
            t.stats["regions"]["nvmm"]["reads"],
            f.stats["regions"]["nvmm"]["reads"]
        );
    }

    #[test]
    fn the_region_is_mapped_where_linux_mmap_would_put_it() {
        let cfg = Config::load(None, &[]).unwrap();
        let (_, dram) = cfg
            .memory
            .regions_of_kind(rvnvmm_config::RegionKind::Dram)
            .next()
            .unwrap();
        let (_, nvmm) = cfg
            .memory
            .regions_of_kind(rvnvmm_config::RegionKind::Nvmm)
            .next()
            .unwrap();
        let mut mem = guest_ram(&cfg).unwrap();
        let p = Pattern {
            base: nvmm.base + 8192,
            bank_stride: 0,
            nbank: 1,
            step: 8192,
            rounds: 4,
            op: Op::Write,
            passes: 1,
        };
        let space = map_like_linux(&mut mem, &cfg, dram, &p).unwrap();
        let top = rvnvmm_user::vm::mmap_top_for_stack(cfg.user.stack_size);
        assert_eq!(space.base, top - nvmm.size + 8192);
        let user = rvnvmm_mem::sv39::Requester {
            user: true,
            sum: false,
            mxr: false,
        };
        let mut walk = |va| {
            sv39::translate(
                &mut mem,
                space.root,
                va,
                rvnvmm_mem::sv39::Access::Write,
                user,
            )
            .map(|t| t.paddr)
        };
        assert_eq!(walk(space.base + 5), Ok(nvmm.base + 8192 + 5));
        assert_eq!(walk(top - 1), Ok(nvmm.base + nvmm.size - 1));
        assert!(walk(top).is_err());
        assert!(walk(CODE_VADDR).is_err(), "code is not writable");
    }

    #[test]
    fn loop_makes_the_requested_accesses() {
        let cfg = Config::load(None, &["machine.model=functional".to_string()]).unwrap();
        let nvmm = cfg
            .memory
            .regions_of_kind(rvnvmm_config::RegionKind::Nvmm)
            .next()
            .unwrap()
            .1
            .base;
        let p = Pattern {
            base: nvmm,
            bank_stride: 1 << 20,
            nbank: 3,
            step: 8192,
            rounds: 10,
            op: Op::Write,
            passes: 1,
        };
        let m = run(&cfg, &p).unwrap();
        assert_eq!(m.accesses, 30);
        // A warm-up pass: the statistics and the time are the last pass's.
        let timed = Config::load(None, &[]).unwrap();
        let one = run(&timed, &Pattern { passes: 1, ..p }).unwrap();
        let two = run(&timed, &Pattern { passes: 2, ..p }).unwrap();
        let reqs = |m: &Measurement| {
            let r = &m.stats["regions"]["nvmm"];
            r["reads"].as_u64().unwrap() + r["writes"].as_u64().unwrap()
        };
        // All 30 lines fall in one 4-way L1D set. Cold: 30 fills and 26
        // write-backs; warm (the first pass not counted): 30 of each.
        assert_eq!((reqs(&one), reqs(&two)), (56, 60));
        // The request rate is over the measured pass's time only.
        let rate = two.stats["regions"]["nvmm"]["req_per_sec"]
            .as_f64()
            .unwrap();
        let secs = two.cycles as f64 / timed.machine.clock_hz as f64;
        assert!(
            (rate * secs / 60.0 - 1.0).abs() < 0.05,
            "{rate} requests/s over {secs} s"
        );
        // Three instructions per inner iteration, three more per round.
        assert!(m.cycles >= 30 * 4 + 10 * 3, "{} cycles", m.cycles);
    }
}
