//! One RISC-V hart (RV64IMAFDC + Zicsr, Zifencei, Zicntr, Zicbom) for rvnvmm.
//!
//! The hart interprets decoded basic blocks from a [`CodeCache`] shared by all
//! harts of an address space, translates addresses through a software
//! [`tlb::Tlb`] backed by Sv39 page tables in guest memory, and stops with an
//! [`Exit`] whenever something outside the hart must act (a system call, a
//! trap, the end of its time slice).
//!
//! The interpreter is the first of two execution engines the design allows:
//! blocks are already the unit of decode and of time accounting, so a later
//! dynamic translator can replace the per-block body of `exec_blocks` without touching the
//! TLB, the code-invalidation protocol or the callers.

mod code;
mod cost;
mod csr;
mod exec;
mod fp;
mod memory;
pub mod tlb;
mod trap;

pub use code::{Block, CodeCache, CodePages, MAX_BLOCK_INSNS};
pub use cost::CoreCosts;
pub use trap::{Exit, Trap};

use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;

/// Privilege levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priv {
    /// U-mode.
    User = 0,
    /// S-mode.
    Supervisor = 1,
    /// M-mode.
    Machine = 3,
}

/// What the hart needs from the rest of the machine while it runs.
pub struct Env<'a> {
    /// Guest physical memory.
    pub mem: &'a mut PhysMem,
    /// Decoded code of the address space being run.
    pub code: &'a mut CodeCache,
    /// The memory-system timing model (`None`: functional, no stalls).
    pub timing: Option<&'a mut MemorySystem>,
    /// Devices behind physical addresses that are not RAM.
    pub mmio: Option<&'a mut dyn Mmio>,
}

impl<'a> Env<'a> {
    /// An environment with memory and code only: functional, no devices.
    pub fn functional(mem: &'a mut PhysMem, code: &'a mut CodeCache) -> Env<'a> {
        Env {
            mem,
            code,
            timing: None,
            mmio: None,
        }
    }
}

/// A device reached by loads and stores to physical addresses outside RAM.
/// It is handed the memory-system model too (the control page reads and
/// sets it).
pub trait Mmio {
    /// A load of `size` bytes (1, 2, 4, 8) at `paddr`; `None` is an access
    /// fault (nothing there).
    fn load(&mut self, paddr: u64, size: u64, timing: Option<&mut MemorySystem>) -> Option<u64>;
    /// A store; `false` is an access fault.
    fn store(
        &mut self,
        paddr: u64,
        size: u64,
        value: u64,
        timing: Option<&mut MemorySystem>,
    ) -> bool;
}

/// Static properties of a hart set by the machine configuration.
#[derive(Clone, Debug)]
pub struct HartConfig {
    /// Core clock in Hz: one cycle is `1e9 / clock_hz` ns of simulated time.
    pub clock_hz: u64,
    /// Frequency of the `time` CSR in Hz.
    pub timebase_hz: u64,
    /// Whether U- and S-mode may execute the cache-flush instructions
    /// (`cflush.d.l1`, `cbo.*`); otherwise they are illegal there, as on stock
    /// Rocket.
    pub cflush_user: bool,
    /// The in-order core's cycle costs.
    pub costs: CoreCosts,
}

impl Default for HartConfig {
    fn default() -> Self {
        HartConfig {
            clock_hz: 50_000_000,
            timebase_hz: 10_000_000,
            cflush_user: true,
            costs: CoreCosts::FUNCTIONAL,
        }
    }
}

/// Per-hart event counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HartStats {
    /// Cache-flush instructions executed (`cflush.d.l1`, `cbo.clean/flush/inval`).
    pub flush_insns: u64,
    /// Software-TLB refills (page walks) for loads, stores and fetches.
    pub tlb_refills: u64,
}

/// The architectural state of one hart plus its private caches of decoded
/// and translated state.
pub struct Hart {
    /// Integer registers; `x[0]` is kept zero.
    pub x: [u64; 32],
    /// Floating-point registers as raw bits (single values NaN-boxed).
    pub f: [u64; 32],
    /// Program counter.
    pub pc: u64,
    /// Accrued floating-point exception flags (`fflags`).
    pub fflags: u8,
    /// Dynamic rounding mode (`frm`).
    pub frm: u8,
    /// Instructions retired.
    pub instret: u64,
    /// Simulated cycles elapsed on this hart, including stalls.
    pub cycles: u64,
    /// Current privilege level.
    pub prv: Priv,
    /// Physical address of the Sv39 root table, or `None` for bare
    /// (untranslated) addressing.
    pub page_table: Option<u64>,
    /// `mhartid`.
    pub hart_id: u64,
    /// Configuration.
    pub config: HartConfig,
    /// Event counters.
    pub stats: HartStats,
    /// Load reservation: address and the value loaded by `lr`.
    pub(crate) reservation: Option<(u64, u64)>,
    /// The software TLB.
    pub tlb: tlb::Tlb,
    /// Code-page generation the write TLB was filled under.
    code_generation: u64,
    /// Set by a store that modified decoded code: end the current block.
    stop_block: bool,
    /// Print each retired instruction to stderr.
    pub trace: bool,
}

impl Hart {
    /// A hart in U-mode with all registers zero.
    pub fn new(hart_id: u64, config: HartConfig) -> Hart {
        Hart {
            x: [0; 32],
            f: [0; 32],
            pc: 0,
            fflags: 0,
            frm: 0,
            instret: 0,
            cycles: 0,
            prv: Priv::User,
            page_table: None,
            hart_id,
            config,
            stats: HartStats::default(),
            reservation: None,
            tlb: tlb::Tlb::default(),
            code_generation: 0,
            stop_block: false,
            trace: false,
        }
    }

    /// Copies the architectural register state of `other` (for a new thread
    /// or a forked process), leaving counters and caches fresh.
    pub fn clone_registers(&self, hart_id: u64) -> Hart {
        let mut h = Hart::new(hart_id, self.config.clone());
        h.x = self.x;
        h.f = self.f;
        h.pc = self.pc;
        h.fflags = self.fflags;
        h.frm = self.frm;
        h.prv = self.prv;
        h.page_table = self.page_table;
        h
    }

    /// Simulated time of this hart in nanoseconds.
    pub fn time_ns(&self) -> u64 {
        (self.cycles as u128 * 1_000_000_000 / self.config.clock_hz.max(1) as u128) as u64
    }

    /// The `time` CSR value.
    pub fn time_csr(&self) -> u64 {
        self.time_at(self.cycles)
    }

    /// The `time` CSR value after `cycles` cycles.
    pub(crate) fn time_at(&self, cycles: u64) -> u64 {
        (cycles as u128 * self.config.timebase_hz as u128 / self.config.clock_hz.max(1) as u128)
            as u64
    }

    /// Drops the cached translations (after the page tables changed).
    pub fn flush_tlb(&mut self) {
        self.tlb.flush();
    }

    /// Drops the reservation of `lr` (a context switch does this on Linux).
    pub fn clear_reservation(&mut self) {
        self.reservation = None;
    }

    /// Runs until an exit, executing at most about `budget` instructions
    /// (whole blocks: it may overshoot by less than one block).
    pub fn run(&mut self, env: &mut Env<'_>, budget: u64) -> Exit {
        if self.code_generation != env.code.pages.generation {
            self.tlb.write.flush();
            self.code_generation = env.code.pages.generation;
        }
        let stop_at = self.instret.saturating_add(budget);
        loop {
            env.code.settle();
            if self.instret >= stop_at {
                return Exit::Budget;
            }
            let idx = match env.code.lookup(self.pc) {
                Some(i) => i,
                None => match self.decode_block(env) {
                    Ok(i) => i,
                    Err(t) => return Exit::Trap(t),
                },
            };
            let exit = if self.trace {
                self.exec_blocks::<true>(env, idx, stop_at)
            } else {
                self.exec_blocks::<false>(env, idx, stop_at)
            };
            if let Some(exit) = exit {
                return exit;
            }
        }
    }
}

#[cfg(test)]
mod tests;
