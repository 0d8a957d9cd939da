//! One RISC-V hart (RV64IMAFDC + Zicsr, Zifencei, Zicntr, Zicbom, Zicboz,
//! Zicbop, the RVA23U64 scalar integer extensions, Sstc, Svnapot; M, S and
//! U modes with Sv39 and PMP) for rvnvmm. [`HartConfig::isa`] turns
//! extensions off.
//!
//! The hart interprets decoded basic blocks from a [`CodeCache`], translates
//! addresses through a software [`tlb::Tlb`] backed by Sv39 page tables in
//! guest memory, and stops with an [`Exit`] whenever something outside the
//! hart must act.
//!
//! It runs in one of two modes:
//!
//! * **User-mode emulation** (the default, [`Hart::new`]): the caller is the
//!   kernel. `ecall` and every exception exit to it ([`Exit::Ecall`],
//!   [`Exit::Trap`]); blocks are keyed by virtual PC.
//! * **Full system** ([`Hart::set_full_system`]): the hart starts in M-mode
//!   and takes exceptions and interrupts architecturally through
//!   `mtvec`/`stvec` (delegation, `mret`/`sret`, PMP, Sstc). Only the end of
//!   the budget and a `wfi` with nothing pending exit; the board drives the
//!   interrupt lines through [`InterruptLines`]. Blocks are keyed by
//!   physical PC, so one code cache serves every address space.
//!
//! Two execution engines run the blocks ([`Engine`]): the interpreter, the
//! reference, and a translator of hot blocks to x86-64 code ([`jit`]) that
//! shares the interpreter's bookkeeping, the TLB, the code-invalidation
//! protocol and the `Exit` contract, so both give the same results.

mod block_decode;
pub mod calls;
mod code;
mod core;
mod cost;
mod csr;
pub mod debug;
mod exec;
mod interrupt;
pub mod jit;
mod memory;
mod pmp;
pub mod privileged;
mod siblings;
pub mod smt;
mod snapshot;
pub mod tlb;
mod trap;

pub use code::{Block, CodeCache, CodePages, FetchLines, MAX_BLOCK_INSNS};
pub use core::{Core, SmtSeat};
pub use cost::CoreCosts;
pub use interrupt::{irq, InterruptLines};
pub use siblings::{Sibling, SiblingPlan};
pub use trap::{Exit, Trap};

use privileged::PrivState;
use std::sync::Arc;

use rvnvmm_isa::ExtSet;
use rvnvmm_mem::PhysMem;
pub use rvnvmm_timing::{
    ControlPort, CoreId, CoreMap, DataAccess, DataKind, FlushKind, HeatWindow, MemoryModel,
    NoModel, PageCounts, TimingModel, TlbFlush,
};

/// How many cycles a hart may run ahead of the other harts before an
/// access past its private L1 makes it wait for them
/// ([`Core::set_sync_limit`]): well below a miss to memory, so requests
/// from different harts reach the bus and the controllers nearly in
/// simulated-time order, while a few cycles of slack spare the scheduler
/// a switch for every near-tie.
pub const SYNC_TOLERANCE: u64 = 16;

/// How many cycles past a ready sibling hardware thread of its core a
/// thread of an SMT core runs before the sibling's turn: short, so their
/// contention for issue slots is decided nearly cycle by cycle (slots the
/// sibling may want are reserved for it, `smt::IssueCalendar`), long
/// enough that a turn is more than a handful of instructions.
pub const SMT_WINDOW: u64 = 32;

/// How many cycles past the other harts a hart may run before an atomic
/// (`lr`, `sc`, an AMO) on a line private to its core waits for them. An
/// atomic on a line other harts hold or have written waits as soon as the
/// hart is ahead at all. The bound keeps the first contended atomics in
/// near time order (before the line has moved between cores, nothing marks
/// it contended), while a hart's atomics on its own data (per-CPU counters,
/// uncontended locks) rarely end its turn.
pub const ATOMIC_RUN_AHEAD: u64 = 1000;

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
///
/// The timing model is a type parameter, so the calls the hart makes on
/// every access are static (and inlined), not dynamic dispatch.
pub struct Env<'a, T: TimingModel + ?Sized = NoModel> {
    /// Guest physical memory.
    pub mem: &'a mut PhysMem,
    /// Decoded code of the address space being run. One code cache is used
    /// with one timing model: its blocks hold the model's fetch lines.
    pub code: &'a mut CodeCache,
    /// The memory-system timing model (`None`: functional, no stalls).
    pub timing: Option<&'a mut T>,
    /// Devices behind physical addresses that are not RAM.
    pub mmio: Option<&'a mut dyn Mmio>,
}

impl<'a> Env<'a, NoModel> {
    /// An environment with memory and code only: functional, no devices.
    pub fn functional(mem: &'a mut PhysMem, code: &'a mut CodeCache) -> Env<'a, NoModel> {
        Env {
            mem,
            code,
            timing: None,
            mmio: None,
        }
    }
}

/// A device reached by loads and stores to physical addresses outside RAM.
/// It is handed the timing model's [`ControlPort`], if it has one (the
/// control page reads and sets the memory system through it).
pub trait Mmio {
    /// A load of `size` bytes (1, 2, 4, 8) at `paddr`; `None` is an access
    /// fault (nothing there).
    fn load(&mut self, paddr: u64, size: u64, port: Option<&mut dyn ControlPort>) -> Option<u64>;
    /// A store; `false` is an access fault.
    fn store(
        &mut self,
        paddr: u64,
        size: u64,
        value: u64,
        port: Option<&mut dyn ControlPort>,
    ) -> bool;
}

/// Static properties of a hart, and of the cores it runs on
/// ([`Core::new`]), set by the machine configuration.
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
    /// The extensions implemented: an instruction outside them decodes as
    /// illegal, and `misa` shows their letters.
    pub isa: ExtSet,
    /// Whether software is told misaligned scalar accesses are fast
    /// (`riscv_hwprobe`); otherwise they are reported as emulated.
    pub misaligned_fast: bool,
    /// The execution engine.
    pub engine: Engine,
    /// Keep a shadow call stack ([`calls`]) that the persistence trace
    /// names each record's call site by (user mode; interpreter only: the
    /// translating engine does not keep it).
    pub call_stacks: bool,
}

/// How a hart executes its blocks. Both engines give the same results,
/// instruction counts, simulated times and statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The interpreter, the reference.
    #[default]
    Interp,
    /// Hot blocks translated to host code ([`jit`]) where the host is
    /// x86-64 and the run allows it (user-mode emulation or the full
    /// system, functional or timing model, no tracing, exact stop or SMT
    /// core); the interpreter everywhere else.
    Jit,
}

impl std::str::FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "interp" => Ok(Engine::Interp),
            "jit" => Ok(Engine::Jit),
            _ => Err(format!("unknown engine '{s}' (interp, jit)")),
        }
    }
}

impl Default for HartConfig {
    fn default() -> Self {
        HartConfig {
            clock_hz: 50_000_000,
            timebase_hz: 10_000_000,
            cflush_user: true,
            costs: CoreCosts::FUNCTIONAL,
            isa: ExtSet::DEFAULT,
            misaligned_fast: true,
            engine: Engine::Interp,
            call_stacks: false,
        }
    }
}

/// A hart's atomic instructions: what synchronising with the other harts
/// costs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicStats {
    /// AMOs executed.
    pub amos: u64,
    /// `lr` executed.
    pub lr: u64,
    /// `sc` executed.
    pub sc: u64,
    /// `sc` that failed (the reservation was lost or never made).
    pub sc_failures: u64,
    /// Cycles the memory system stalled the hart on them (fetching the
    /// line exclusive, from memory or another core), timed runs only.
    pub stall_cycles: u64,
}

/// Supervisor calls to the SBI firmware (`ecall` from S-mode trapping to
/// M-mode), by extension: what the kernel asks of the other harts and of
/// the timer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SbiCalls {
    /// IPI extension (`sPI`) and legacy `send_ipi`: interrupts to other harts.
    pub ipi: u64,
    /// RFENCE extension (`RFNC`) and legacy remote fences: `fence.i` or
    /// `sfence.vma` on other harts, which the firmware sends as IPIs.
    pub rfence: u64,
    /// TIME extension and legacy `set_timer`.
    pub timer: u64,
    /// HSM extension: starting, stopping and suspending harts.
    pub hsm: u64,
    /// Every other extension (base, console, system reset, ...).
    pub other: u64,
}

impl SbiCalls {
    /// Counts a call of extension `eid` (register `a7`).
    pub fn count(&mut self, eid: u64) {
        // Extension IDs of the SBI specification (v2.0, chapters 3-9):
        // legacy 0x00-0x08, then ASCII names.
        const TIME: u64 = 0x5449_4D45;
        const IPI: u64 = 0x0073_5049;
        const RFENCE: u64 = 0x5246_4E43;
        const HSM: u64 = 0x0048_534D;
        match eid {
            IPI | 0x04 => self.ipi += 1,
            RFENCE | 0x05..=0x07 => self.rfence += 1,
            TIME | 0x00 => self.timer += 1,
            HSM => self.hsm += 1,
            _ => self.other += 1,
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
    /// Exceptions taken architecturally (full-system mode).
    pub exceptions: u64,
    /// Interrupts taken (full-system mode).
    pub interrupts: u64,
    /// `lr`, `sc` and AMOs.
    pub atomics: AtomicStats,
    /// Calls to the SBI firmware (full-system mode).
    pub sbi_calls: SbiCalls,
    /// Cycles the memory system stalled the hart (data accesses, fetches,
    /// page-walk reads, cache maintenance past the L1 hit), timed runs only.
    pub memory_stall_cycles: u64,
    /// On an SMT core: cycles instructions waited for issue slots their
    /// sibling threads took.
    pub issue_wait_cycles: u64,
    /// On an SMT core: cycles instructions waited for a shared unit (the
    /// multiplier/divider, the FP divider, the load/store port) a sibling
    /// thread held.
    pub unit_wait_cycles: u64,
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
    /// Current privilege level.
    pub prv: Priv,
    /// Physical address of the Sv39 root table, or `None` for bare
    /// (untranslated) addressing. Set by the user-mode kernel, or by `satp`
    /// writes in full-system mode.
    pub page_table: Option<u64>,
    /// The core the hart runs on: during [`Hart::run`], the core's state
    /// (its clock advancing here); between runs, as the last run left it.
    core: Core,
    /// Configuration.
    pub config: HartConfig,
    /// Event counters.
    pub stats: HartStats,
    /// Load reservation: address and the value loaded by `lr`.
    pub(crate) reservation: Option<(u64, u64)>,
    /// The software TLB of the current translation context.
    pub tlb: tlb::Tlb,
    /// The TLBs of the other translation contexts.
    tlb_contexts: tlb::TlbContexts,
    /// Code-page generation the write TLB was filled under.
    code_generation: u64,
    /// The core and its TLB epoch the software TLB agrees with (a model
    /// with TLBs only): while they match, every page the software TLB
    /// holds is in that core's L1 TLBs.
    tlb_sync: Option<(usize, u64)>,
    /// The user-mode kernel changed the page tables: the model's TLBs of
    /// the next core the hart runs on are flushed, as Linux's
    /// `flush_tlb_*` would.
    model_flush_pending: bool,
    /// Set by a store that modified decoded code: end the current block.
    stop_block: bool,
    /// The PC and block index of the memory instruction executing, set by
    /// the store and cache operations for the persistence trace (which
    /// names the instruction behind every store to NVMM).
    pub(crate) insn_at: (u64, u64),
    /// The shadow call stack, with [`HartConfig::call_stacks`].
    pub(crate) calls: Option<Box<calls::CallStack>>,
    /// Print each retired instruction to stderr.
    pub trace: bool,
    /// A debugger's breakpoints, watchpoints and step ([`debug`]): while
    /// set, blocks run step by step.
    pub debug: Option<Box<debug::Debug>>,
    /// Stop exactly at the end of the budget, never after it (a crash
    /// injected at an instruction count). Runs the last block of a budget
    /// instruction by instruction.
    pub exact_budget: bool,
    /// Full-system mode: traps are taken architecturally.
    full_system: bool,
    /// The privileged CSRs.
    pub(crate) csrs: PrivState,
    /// Physical memory protection.
    pub(crate) pmp: pmp::Pmp,
    /// Interrupt inputs shared with the devices.
    lines: Arc<InterruptLines>,
    /// The clock value at which to look at interrupts and timers next (full
    /// system); 0 means at the next block boundary.
    pub(crate) event_at: u64,
    /// Full system: the block a timed fetch stopped before for the sync
    /// limit, as (physical address, block index, code-cache epoch). The
    /// next turn starts there, and the block's place in the code cache was
    /// out of the host's caches by then (the other harts ran between):
    /// [`Hart::lookup_physical`] takes it from here when the PC still maps
    /// to that address.
    pub(crate) stopped_before: Option<(u64, u32, u64)>,
    /// The last trap taken (cause with the interrupt bit, and tval).
    pub(crate) last_trap: Trap,
    /// During a run on an SMT core: the core's issue calendar, taken from
    /// its shared home for the run (no sibling runs meanwhile).
    calendar: Option<Box<smt::IssueCalendar>>,
    /// What stands in the calendar's home while the hart holds it: an
    /// empty calendar, kept to spare an allocation per run.
    calendar_placeholder: Option<Box<smt::IssueCalendar>>,
}

impl Hart {
    /// A hart for user-mode emulation, in U-mode with all registers zero.
    pub fn new(config: HartConfig) -> Hart {
        let calls = config.call_stacks.then(Default::default);
        Hart {
            x: [0; 32],
            f: [0; 32],
            pc: 0,
            fflags: 0,
            frm: 0,
            instret: 0,
            prv: Priv::User,
            page_table: None,
            core: Core::new(0, 0, &config),
            config,
            stats: HartStats::default(),
            reservation: None,
            tlb: tlb::Tlb::default(),
            tlb_contexts: tlb::TlbContexts::default(),
            code_generation: 0,
            tlb_sync: None,
            model_flush_pending: false,
            stop_block: false,
            insn_at: (0, 0),
            calls,
            trace: false,
            debug: None,
            exact_budget: false,
            full_system: false,
            csrs: PrivState::user_mode(),
            pmp: pmp::Pmp::default(),
            lines: Arc::default(),
            event_at: 0,
            stopped_before: None,
            last_trap: Trap::new(0, 0),
            calendar: None,
            calendar_placeholder: None,
        }
    }

    /// The `mhartid` of the hart this thread runs on now.
    pub fn hart_id(&self) -> u64 {
        self.core.hart_id
    }

    /// Switches between user-mode emulation and full-system mode. Either
    /// way the privileged state is reset; full-system mode starts in M-mode
    /// with interrupts off, paging Bare, PMP off and the FPU off, as at
    /// reset. The PC and registers are left for the board to set.
    pub fn set_full_system(&mut self, on: bool) {
        self.full_system = on;
        self.csrs = if on {
            PrivState::reset()
        } else {
            PrivState::user_mode()
        };
        self.pmp = pmp::Pmp::default();
        self.page_table = None;
        self.reservation = None;
        self.prv = if on { Priv::Machine } else { Priv::User };
        self.flush_tlb();
        self.sync_tlb_context();
        self.event_at = 0;
    }

    /// Whether the hart is in full-system mode.
    pub fn full_system(&self) -> bool {
        self.full_system
    }

    /// Copies the architectural register state of `other` (for a new thread
    /// or a forked process), leaving counters and caches fresh.
    pub fn clone_registers(&self) -> Hart {
        let mut h = Hart::new(self.config.clone());
        h.x = self.x;
        h.f = self.f;
        h.pc = self.pc;
        h.fflags = self.fflags;
        h.frm = self.frm;
        h.prv = self.prv;
        h.page_table = self.page_table;
        h
    }

    /// The `time` CSR value after `cycles` cycles of the core it runs on.
    pub(crate) fn time_at(&self, cycles: u64) -> u64 {
        self.core.time_at(cycles)
    }

    /// Drops the cached translations of every context (after the page
    /// tables changed).
    pub fn flush_tlb(&mut self) {
        self.tlb.flush();
        for t in self.tlb_contexts.saved_mut() {
            t.flush();
        }
    }

    /// The kernel changed the page tables (user-mode emulation): drops the
    /// cached translations, and flushes the timing model's TLBs before the
    /// hart next runs, as Linux's `sfence.vma` after such a change would.
    pub fn translations_changed(&mut self) {
        self.flush_tlb();
        self.model_flush_pending = true;
    }

    /// Keeps the software TLB a subset of the model's L1 TLBs of the core
    /// the hart is about to run on: flushes the model for a pending change
    /// of page tables, and drops the software TLB if the core is another
    /// or its TLBs lost entries since the hart last looked.
    fn sync_model_tlb<T: TimingModel + ?Sized>(&mut self, env: &mut Env<'_, T>) {
        let Some(t) = env.timing.as_deref_mut() else {
            return;
        };
        if !t.has_tlb() {
            return;
        }
        let core = self.core.id;
        if std::mem::take(&mut self.model_flush_pending) {
            t.tlb_flush(
                core,
                TlbFlush {
                    vaddr: None,
                    asid: None,
                },
            );
        }
        let seen = Some((core, t.tlb_epoch(core)));
        if self.tlb_sync != seen {
            self.flush_tlb();
            self.tlb_sync = seen;
        }
    }

    /// Drops the reservation of `lr` (a context switch does this on Linux).
    pub fn clear_reservation(&mut self) {
        self.reservation = None;
    }

    /// Runs on `core` until an exit, executing at most about `budget`
    /// instructions (whole blocks: it may overshoot by less than one block).
    /// The core's clock advances by the time taken; its L1 slot is where
    /// the timing model keeps this hart's accesses, and its `mhartid` is
    /// the hart's.
    pub fn run<T: TimingModel + ?Sized>(
        &mut self,
        core: &mut Core,
        env: &mut Env<'_, T>,
        budget: u64,
    ) -> Exit {
        self.core.clone_from(core);
        // The seat is borrowed from the caller's core (the same seat as
        // `self.core`'s now), not cloned: no reference-count traffic on a
        // sibling's turn, which may be a few instructions long.
        let exit = match core.smt.as_ref() {
            None => self.run_on_core(env, budget),
            Some(seat) => {
                let mut home = seat
                    .calendar
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // Boxes change places (the calendar itself stays put): the
                // hart keeps the placeholder between runs.
                let placeholder = self.calendar_placeholder.take().unwrap_or_default();
                for (thread, ready) in core.sibling_ready.iter_mut().enumerate() {
                    if let Some(clock) = ready.take() {
                        home.set_ready(thread, clock);
                    }
                }
                self.calendar = Some(std::mem::replace(&mut *home, placeholder));
                let exit = self.run_on_core(env, budget);
                if let Some(calendar) = self.calendar.take() {
                    self.calendar_placeholder = Some(std::mem::replace(&mut *home, calendar));
                }
                exit
            }
        };
        core.cycles = self.core.cycles;
        exit
    }

    fn run_on_core<T: TimingModel + ?Sized>(&mut self, env: &mut Env<'_, T>, budget: u64) -> Exit {
        if self.code_generation != env.code.pages.generation {
            self.tlb.write.flush();
            for t in self.tlb_contexts.saved_mut() {
                t.write.flush();
            }
            self.code_generation = env.code.pages.generation;
        }
        // The caller may have changed `prv`.
        self.sync_tlb_context();
        self.sync_model_tlb(env);
        let stop_at = self.instret.saturating_add(budget);
        if self.full_system {
            return self.run_full_system(env, stop_at);
        }
        // In user-mode emulation every call returns to U-mode from the
        // emulated kernel, which is an `sret` to `sepc`, and `sepc[0]` is
        // always zero (privileged spec, 4.1.7): an odd PC the kernel set (an
        // ELF entry point, a signal handler, a sigreturn frame) starts at the
        // halfword below it on Linux, with no fault.
        self.pc &= !1;
        loop {
            env.code.settle();
            if self.instret >= stop_at {
                return Exit::Budget;
            }
            let idx = match env.code.lookup(self.pc) {
                Some(i) => i,
                None => match self.decode_block(env, self.pc) {
                    Ok(i) => i,
                    Err(t) => return Exit::Trap(t),
                },
            };
            let exit = match (self.step_by_step(stop_at), self.calendar.is_some()) {
                (true, false) => self.exec_blocks::<_, true, false, false>(env, idx, stop_at),
                (true, true) => self.exec_blocks::<_, true, false, true>(env, idx, stop_at),
                (false, false) => {
                    self.exec_blocks::<_, false, false, false>(env, idx, self.block_stop(stop_at))
                }
                (false, true) => {
                    self.exec_blocks::<_, false, false, true>(env, idx, self.block_stop(stop_at))
                }
            };
            if let Some(exit) = exit {
                return exit;
            }
            if self.core.cycles >= self.core.turn_end {
                return Exit::Budget;
            }
        }
    }

    /// Whether blocks run with a look at every instruction: to trace, for
    /// a debugger, or for an exact stop within the next block.
    #[inline]
    fn step_by_step(&self, stop_at: u64) -> bool {
        self.trace
            || self.debug.is_some()
            || (self.exact_budget && stop_at - self.instret <= MAX_BLOCK_INSNS as u64)
    }

    /// Where whole blocks stop: for an exact stop, a block short of it, so
    /// that the last block runs step by step (a run may overshoot its stop
    /// by less than a block).
    #[inline]
    fn block_stop(&self, stop_at: u64) -> u64 {
        if self.exact_budget {
            stop_at
                .saturating_sub(MAX_BLOCK_INSNS as u64)
                .max(self.instret + 1)
        } else {
            stop_at
        }
    }

    /// [`run`](Self::run) in full-system mode: exits only at the end of the
    /// budget, at a `wfi` with nothing pending, or with [`Exit::Trap`] (the
    /// last trap taken) when traps repeat without an instruction retiring
    /// (e.g. a trap vector that itself faults).
    fn run_full_system<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        stop_at: u64,
    ) -> Exit {
        /// Traps in a row without progress before giving up.
        const STUCK: u32 = 64;
        // Lines and comparators may have changed since the last run.
        self.event_at = 0;
        let mut stuck = 0;
        let exit = loop {
            env.code.settle();
            if self.instret >= stop_at {
                break Exit::Budget;
            }
            if self.core.cycles >= self.event_at {
                self.service_events();
            }
            let before = self.instret;
            let idx = match self.lookup_physical(env) {
                Ok(i) => i,
                Err(t) => {
                    self.take_trap(t.cause, t.tval, false);
                    stuck += 1;
                    if stuck > STUCK {
                        break Exit::Trap(self.last_trap);
                    }
                    continue;
                }
            };
            let exit = match (self.step_by_step(stop_at), self.calendar.is_some()) {
                (true, false) => self.exec_blocks::<_, true, true, false>(env, idx, stop_at),
                (true, true) => self.exec_blocks::<_, true, true, true>(env, idx, stop_at),
                (false, false) => {
                    self.exec_blocks::<_, false, true, false>(env, idx, self.block_stop(stop_at))
                }
                (false, true) => {
                    self.exec_blocks::<_, false, true, true>(env, idx, self.block_stop(stop_at))
                }
            };
            if let Some(exit) = exit {
                break exit;
            }
            if self.core.cycles >= self.core.turn_end {
                break Exit::Budget;
            }
            if self.instret == before {
                stuck += 1;
                if stuck > STUCK {
                    break Exit::Trap(self.last_trap);
                }
            } else {
                stuck = 0;
            }
        };
        self.publish_time(self.core.cycles);
        exit
    }

    /// The code-cache index of the block at the PC, found by physical
    /// address, decoding it if needed.
    fn lookup_physical<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
    ) -> Result<u32, Trap> {
        let pc = self.pc;
        let key = self.fetch_paddr(env, pc)?;
        if let Some((at, idx, epoch)) = self.stopped_before.take() {
            // Only a block that ends in its page is kept there: the block
            // the cache holds for its address then stays the same until
            // the cache drops every block (see `stop_before`).
            if at == key && epoch == env.code.epoch() {
                return Ok(idx);
            }
        }
        if let Some(idx) = env.code.lookup(key) {
            // A block starting at a page's last halfword may straddle into
            // the next page; it holds only while that page maps to the frame
            // it was decoded from.
            match env.code.block(idx).next_ppage {
                crate::code::NO_NEXT_PAGE => return Ok(idx),
                np => {
                    let next = self
                        .fetch_paddr(env, pc + 2)
                        .map_err(|t| Trap::new(t.cause, pc + 2))?;
                    if next & !0xfff == np {
                        return Ok(idx);
                    }
                }
            }
        }
        self.decode_block(env, key)
    }
}

#[cfg(test)]
mod ext_tests;
#[cfg(test)]
mod fake_model;
#[cfg(test)]
mod priv_tests;
#[cfg(test)]
mod tests;
