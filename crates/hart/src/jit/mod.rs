//! The translating engine (`Engine::Jit`): hot blocks become x86-64 code.
//!
//! A translation is attached to its decoded [`Block`](crate::Block) and
//! goes when the code cache is flushed. It runs the block's instructions
//! in order: integer ALU operations, `lui`/`auipc`/`jal`, conditional
//! branches, loads and stores (FP ones too) and FP moves inline on the
//! hart's registers; F and D computations through one helper per operation
//! running the interpreter's `fp_compute` (`exec/fp.rs`); every other
//! instruction through a helper that runs the interpreter's `step` for that
//! one instruction, with the same arguments the interpreter passes. The
//! translation neither counts instructions nor cycles: it returns where the block ended and
//! why, and the interpreter's own bookkeeping (`Hart::exec_blocks`) retires
//! and charges exactly as it would have. So both engines agree at every
//! exit by construction.
//!
//! Translated blocks chain: a direct exit (or a `jalr` through the code
//! cache's jump table) jumps straight into the next translation after the
//! between-block checks of `exec_blocks`, made inline. Under a timing model
//! loads and stores test the model's filter tables inline, and a
//! chained jump enters the next block at its fetch through the model.
//!
//! Used in user-mode emulation and in the full system, outside tracing,
//! debugging, exact stops and SMT cores; everything else runs on the
//! interpreter. In the full system, where blocks are found by physical
//! address, a translation runs only at the virtual PC it was made at, and
//! a chained jump checks the fetch TLB as `exec_blocks` would (see
//! [`Link`]).

mod arena;
mod fp;
mod x86;

pub use arena::{ArenaError, ExecArena};

use crate::privileged::mstatus::{FS, FS_DIRTY};
use crate::tlb::TlbEntry;
use crate::trap::Flow;
use crate::{Env, Exit, Hart, TimingModel, Trap};
use rvnvmm_isa::{FenceSets, Insn, Op};
use rvnvmm_timing::{FilterTables, FILTER_ENTRIES};
use std::cell::Cell;
use x86::{Alu, Asm, BitOp, Cond, MulHigh, Reg, Shift, SignFrom, Unary};

/// Executions of a block before it is translated: cold code costs nothing.
pub const HOT_THRESHOLD: u32 = 16;

/// A translation's result: the block (or a chain of blocks) ended at a
/// direct branch, a jump or its end, with the instructions retired and
/// charged; the next PC is in [`JitCtx::next_pc`], and [`JitCtx::link`]
/// is the empty link to fill with the next block's entry, if any.
pub(crate) const CHAINED: u32 = 1 << 16;
/// The helper at the index in the low 16 bits left the block
/// [`JitCtx::block`]; its result is in [`JitCtx::result`] (nothing of that
/// block is retired yet).
pub(crate) const HELPER: u32 = 2 << 16;

/// A chained jump under a timing model reached a block whose fetch
/// stopped the run (the sync limit, or a fetch fault): the previous block
/// is retired, [`JitCtx::next_pc`] is this block's PC and
/// [`JitCtx::fetch_exit`] what `exec_blocks` returns.
pub(crate) const FETCH_STOP: u32 = 3 << 16;

/// Slots of the code cache's table of indirect-jump targets.
pub(crate) const JUMP_SLOTS: usize = 4096;

/// The entry point of a translation: `(registers, context) -> outcome`.
pub(crate) type Entry = unsafe extern "C" fn(*mut u64, *mut JitCtx) -> u32;

/// The generic helper: `(context, index, pc, cycles before, instruction
/// words)` (see [`step_helper`]).
type StepHelper = unsafe extern "C" fn(*mut JitCtx, u32, u64, u64, u64, u64) -> u64;

/// An instruction as two 64-bit words, which a translation passes to
/// [`step_helper`] as immediates.
fn insn_words(ins: &Insn) -> [u64; 2] {
    // SAFETY: `Insn` is 16 bytes without padding (checked below), so
    // every byte is initialised and any 16 bytes fit a `[u64; 2]`.
    unsafe { std::mem::transmute::<Insn, [u64; 2]>(*ins) }
}

// `Insn` has no padding: its fields fill its 16 bytes.
const _: () = assert!(
    std::mem::size_of::<Insn>() == 16
        && std::mem::size_of::<Op>() + 6 + std::mem::size_of::<i64>() == 16
);

/// The instruction [`insn_words`] made `words` of.
///
/// # Safety
/// `words` came from [`insn_words`].
unsafe fn insn_from_words(words: [u64; 2]) -> Insn {
    // SAFETY: the caller's contract: the bytes of a valid `Insn`.
    unsafe { std::mem::transmute::<[u64; 2], Insn>(words) }
}

/// A chain link: the guest PC it leads to and the host code that runs the
/// block there (its translation past the prologue). An empty link has PC
/// [`UNLINKED`], which no block starts at (block PCs are even), so it
/// never matches.
///
/// Links need no invalidation of their own: a link lives in a translation
/// (or in the code cache's jump table) and leads to a translation of the
/// same cache, and the cache drops blocks only all at once (`flush`:
/// stores to code, `fence.i`, `mmap` changes), the links with them; within
/// one generation of the cache a PC always names the same block.
///
/// In full-system mode blocks are found by physical address, and the same
/// guest PC may name another block once the address space changes (`satp`,
/// `sfence.vma`, a privilege or MPRV change, a page-table entry the fetch
/// TLB refilled): a link also holds the physical page its block was found
/// at, and is followed only while the fetch TLB maps the PC there, the
/// lookup `exec_blocks` makes between blocks.
#[repr(C)]
#[derive(Debug)]
pub struct Link {
    pc: Cell<u64>,
    entry: Cell<usize>,
    /// Full-system mode: the physical page of the block at `pc`.
    ppage: Cell<u64>,
}

const _: () = assert!(std::mem::size_of::<Link>() == x86::LINK_BYTES as usize);

/// The PC of an empty [`Link`].
const UNLINKED: u64 = 1;

impl Default for Link {
    fn default() -> Self {
        Link {
            pc: Cell::new(UNLINKED),
            entry: Cell::new(0),
            ppage: Cell::new(0),
        }
    }
}

impl Link {
    /// Empties the link.
    pub(crate) fn clear(&self) {
        self.pc.set(UNLINKED);
        self.entry.set(0);
    }

    /// Points the link at the block at `pc` translated as `to`, found at
    /// physical page `ppage` (full-system mode; ignored otherwise).
    pub(crate) fn fill(&self, pc: u64, to: &Translation, ppage: u64) {
        self.entry.set(to.chain_entry());
        self.ppage.set(ppage);
        self.pc.set(pc);
    }
}

/// A block's host code. `repr(C)` and 32 bytes: it sits in the block's
/// first host cache line (see [`Block`](crate::Block)).
#[repr(C)]
pub struct Translation {
    entry: Entry,
    /// Where a chained jump enters, from `entry`.
    chain_offset: u32,
    /// Made for a run with a timing model.
    pub(crate) timed: bool,
    /// Made for full-system mode (links check the fetch TLB, helpers
    /// run the full system's `step`).
    pub(crate) full: bool,
    /// `links[i]`: the link of the taken branch at instruction `i`;
    /// `links[len]`: of the block's end. Referred to by the code (boxed,
    /// so they stay put when the block moves).
    links: Box<[Link]>,
}

const _: () = assert!(std::mem::size_of::<Option<Translation>>() == 32);

impl std::fmt::Debug for Translation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Translation")
            .field("entry", &(self.entry as *const u8))
            .field("links", &self.links.len())
            .finish()
    }
}

impl Translation {
    /// The entry point.
    pub(crate) fn entry(&self) -> Entry {
        self.entry
    }

    /// Where a chained jump enters: past the prologue, which only a call
    /// from `exec_blocks` needs (and onto the block's fetch under a timing
    /// model, which `exec_blocks` made before calling).
    fn chain_entry(&self) -> usize {
        self.entry as usize + self.chain_offset as usize
    }
}

/// What translated code and its helper share while a chain of blocks runs.
/// `repr(C)`: the code calls the helper through the first field, and
/// reaches the others at fixed offsets (checked below to fit a `disp8`).
#[repr(C)]
pub(crate) struct JitCtx {
    step: StepHelper,
    /// The hart's load and store TLB tables, read by the inline lookups
    /// (refreshed after every helper call).
    read_tlb: *const TlbEntry,
    write_tlb: *const TlbEntry,
    /// The hart's fetch TLB table, read by a timed block's inline fetch.
    exec_tlb: *const TlbEntry,
    /// Chaining stops once `instret` reaches this (`exec_blocks`'s stop);
    /// zero once the code cache owes a flush.
    stop_at: u64,
    /// Chaining stops once the clock reaches this (the core's turn end;
    /// in full-system mode the next event's time if earlier).
    turn_end: u64,
    /// The cost model's cycles of a taken branch or jump.
    branch_taken: u64,
    /// The code cache's table of indirect-jump targets ([`JUMP_SLOTS`]
    /// links, by the PC's halfword index).
    jumps: *const Link,
    /// After [`CHAINED`]: the PC to go on at.
    pub(crate) next_pc: u64,
    /// After [`CHAINED`]: the empty (or other-PC) link the exit found, to
    /// be filled with the next block, or null.
    pub(crate) link: *const Link,
    /// The code-cache index of the block running: set by each block's
    /// code on entry.
    pub(crate) block: u32,
    /// Whether the memory tracks a persistence domain (`PhysMem::tracks_persistence`),
    /// which a fence with W in its predecessor set reaches (refreshed
    /// after every helper call).
    persistence: bool,
    /// A timed run's fetch of the block chained to (`Hart::fetch_block`).
    fetch: unsafe extern "C" fn(*mut JitCtx, u32) -> u64,
    /// The timing model's filter tables of the hart's core, which a
    /// translation for a timed run tests inline for a load or store that
    /// hit the software TLB and for its fetch when chained to
    /// ([`NEVER_HITS`] when the model has none).
    filter: FilterTables,
    /// After [`FETCH_STOP`]: what `exec_blocks` returns.
    pub(crate) fetch_exit: Option<Exit>,
    hart: *mut Hart,
    /// An `Env<'_, T>` of the `T` `step` was instantiated for.
    env: *mut (),
    /// The result of the instruction that made the helper leave the
    /// block, and that instruction.
    pub(crate) result: Option<(Result<Flow, Trap>, LeftAt)>,
}

/// The instruction at which the generic helper left a block: what
/// `exec_blocks`'s bookkeeping needs of it, kept by the helper from the
/// translation's constants.
pub(crate) struct LeftAt {
    /// Its PC.
    pub(crate) pc: u64,
    /// It.
    pub(crate) insn: Insn,
    /// The block's `cost[i]` and `cost[i + 1]` for it, instruction `i`.
    pub(crate) cycles: [u32; 2],
}

impl JitCtx {
    /// A context for running the translation of block `block` on `hart`
    /// in `env`, chaining while `instret < stop_at`; `FULL`: in
    /// full-system mode.
    pub(crate) fn new<T: TimingModel + ?Sized, const FULL: bool>(
        hart: *mut Hart,
        env: *mut Env<'_, T>,
        block: u32,
        stop_at: u64,
    ) -> JitCtx {
        // SAFETY: the caller passes the live hart and environment.
        let (h, e) = unsafe { (&*hart, &*env) };
        JitCtx {
            step: step_helper::<T, FULL>,
            read_tlb: h.tlb.read.entries_ptr(),
            write_tlb: h.tlb.write.entries_ptr(),
            exec_tlb: h.tlb.exec.entries_ptr(),
            stop_at,
            turn_end: chain_end::<FULL>(h),
            branch_taken: h.core.costs.branch_taken as u64,
            jumps: e.code.jumps_ptr(),
            next_pc: 0,
            link: std::ptr::null(),
            block,
            persistence: e.mem.tracks_persistence(),
            fetch: fetch_helper::<T, FULL>,
            filter: e
                .timing
                .as_deref()
                .and_then(|t| t.filter_tables(h.core.id))
                .unwrap_or(NEVER_HITS),
            fetch_exit: None,
            hart,
            env: env.cast(),
            result: None,
        }
    }
}

/// The clock at which chaining stops: the core's turn end and, in
/// full-system mode, the next event (an interrupt, a timer), which
/// `exec_blocks` takes between blocks.
#[inline(always)]
fn chain_end<const FULL: bool>(hart: &Hart) -> u64 {
    if FULL {
        hart.core.turn_end.min(hart.event_at)
    } else {
        hart.core.turn_end
    }
}

/// Runs instruction `i` of the running block through the interpreter:
/// `pc`, `cycles` (the block's `cost[i]` in the low half, `cost[i + 1]` in
/// the high) and the instruction (as [`insn_words`]) are the
/// translation's constants, so the helper reads
/// nothing of the block (its arrays are often out of the host's caches).
/// Returns 0 to go on with the next instruction, 1 when the block ends
/// here (the result is left in the context).
///
/// # Safety
/// `ctx` points to a live `JitCtx` made by [`JitCtx::new`] with this `T`,
/// whose pointers are valid and not otherwise borrowed, and `i`, `pc`,
/// `cycles` and the words are those of an instruction of its
/// (translated) block.
unsafe extern "C" fn step_helper<T: TimingModel + ?Sized, const FULL: bool>(
    ctx: *mut JitCtx,
    i: u32,
    pc: u64,
    cycles: u64,
    insn_low: u64,
    insn_high: u64,
) -> u64 {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as above; `env` was an `Env<'_, T>`.
    let (hart, env) = unsafe { (&mut *ctx.hart, &mut *ctx.env.cast::<Env<'_, T>>()) };
    // SAFETY: the words of one of the block's instructions.
    let ins = unsafe { insn_from_words([insn_low, insn_high]) };
    let done_cycles = cycles as u32;
    let result = hart.step::<T, FULL>(env, &ins, pc, i as u64, u64::from(done_cycles));
    ctx.read_tlb = hart.tlb.read.entries_ptr();
    ctx.write_tlb = hart.tlb.write.entries_ptr();
    ctx.exec_tlb = hart.tlb.exec.entries_ptr();
    ctx.persistence = env.mem.tracks_persistence();
    // What `exec_blocks` checks between blocks may have moved (a CSR
    // write or a device access makes an event due at once).
    ctx.turn_end = chain_end::<FULL>(hart);
    if env.code.pages.flush_pending {
        ctx.stop_at = 0;
    }
    match result {
        Ok(Flow::Next) | Ok(Flow::Goto(_)) => 0,
        other => {
            let left = LeftAt {
                pc,
                insn: ins,
                cycles: [done_cycles, (cycles >> 32) as u32],
            };
            ctx.result = Some((other, left));
            1
        }
    }
}

/// A filter table with no line in it.
static EMPTY_TABLE: [u64; FILTER_ENTRIES] = [u64::MAX; FILTER_ENTRIES];

/// The tables of a model that keeps none: every inline test misses (no
/// line number is `u64::MAX`: physical addresses have at most 56 bits), so
/// every access goes to the interpreter's `step` and the model's
/// `data_filter_hit`, every chained fetch to `Hart::fetch_block`; the
/// counters are never reached.
const NEVER_HITS: FilterTables = FilterTables {
    read: EMPTY_TABLE.as_ptr(),
    write: EMPTY_TABLE.as_ptr(),
    read_hits: std::ptr::null_mut(),
    write_hits: std::ptr::null_mut(),
    data_shift: 0,
    fetch: EMPTY_TABLE.as_ptr(),
    fetch_hits: std::ptr::null_mut(),
    fetch_shift: 0,
};

/// Fetches block `idx` at [`JitCtx::next_pc`] through the timing model
/// before a chained jump runs it, as `exec_blocks` would have. Returns 0 to
/// run it, 1 when the run stops here instead (the exit left in the
/// context).
///
/// # Safety
/// As [`step_helper`].
unsafe extern "C" fn fetch_helper<T: TimingModel + ?Sized, const FULL: bool>(
    ctx: *mut JitCtx,
    idx: u32,
) -> u64 {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as above; `env` was an `Env<'_, T>`.
    let (hart, env) = unsafe { (&mut *ctx.hart, &mut *ctx.env.cast::<Env<'_, T>>()) };
    hart.pc = ctx.next_pc;
    // A fetch fault in full-system mode is taken there (the PC moves to
    // the trap vector).
    let result = hart.fetch_block::<T, FULL>(env, idx);
    // A fetch may walk the page table (with a TLB model) and so refill.
    ctx.read_tlb = hart.tlb.read.entries_ptr();
    ctx.write_tlb = hart.tlb.write.entries_ptr();
    ctx.exec_tlb = hart.tlb.exec.entries_ptr();
    match result {
        Ok(()) => 0,
        Err(exit) => {
            ctx.fetch_exit = exit;
            1
        }
    }
}

/// The PCs of a block's instructions, and the one after it: a `jal` the
/// block follows continues at its target, as the interpreter's `Goto`.
pub(crate) fn block_pcs(start: u64, insns: &[Insn]) -> Box<[u64]> {
    let mut pcs = Vec::with_capacity(insns.len() + 1);
    let mut pc = start;
    pcs.push(pc);
    for ins in insns {
        pc = if ins.op == Op::Jal {
            pc.wrapping_add(ins.imm as u64)
        } else {
            pc.wrapping_add(ins.len as u64)
        };
        pcs.push(pc);
    }
    pcs.into_boxed_slice()
}

/// Translates block `idx` of the code cache, at `start` with `insns` and
/// `cost`, placing the code in `arena`; for a run with a timing model if
/// `timed` (loads and stores test its filter caches, and a chained jump
/// fetches `fetch_lines`, the block's page offsets of its fetch lines);
/// for full-system mode if `full` (a chained jump checks the fetch TLB,
/// see [`Link`]). Cold (once per hot block): kept out of the run loops it
/// is called from.
#[cold]
#[inline(never)]
pub(crate) fn translate(
    arena: &mut ExecArena,
    idx: u32,
    start: u64,
    insns: &[Insn],
    cost: &[u32],
    timed: Option<&[u16]>,
    full: bool,
) -> Result<Translation, ArenaError> {
    let pcs = block_pcs(start, insns);
    let links: Box<[Link]> = (0..=insns.len()).map(|_| Link::default()).collect();
    let mut asm = Asm::default();
    asm.prologue();
    debug_assert_eq!(asm.code.len(), Asm::PROLOGUE_LEN);
    let chain_offset = if let Some(fetch_lines) = timed {
        // A call from `exec_blocks` has fetched the block; a chained jump
        // enters at the fetch: inline when the fetch TLB and the fetch
        // filter hit, otherwise `Hart::fetch_block` through the helper.
        let fetched = asm.jump();
        let chain_offset = asm.code.len();
        let misses = asm.fetch_test(
            start,
            fetch_lines,
            EXEC_TLB,
            (FILTER_FETCH_SHIFT, FILTER_FETCH, FILTER_FETCH_HITS),
        );
        let hit = asm.jump();
        for miss in misses {
            asm.here(miss);
        }
        asm.call_ctx(FETCH, idx, FETCH_STOP);
        asm.here(fetched);
        asm.here(hit);
        chain_offset
    } else {
        asm.code.len()
    };
    // The context learns which block runs.
    asm.store_ctx_u32(BLOCK, idx);
    for (i, ins) in insns.iter().enumerate() {
        let kind = Kind {
            timed: timed.is_some(),
            full,
        };
        emit(&mut asm, ins, i as u32, &pcs, cost, &links, kind);
    }
    let len = insns.len();
    chain_exit(
        &mut asm,
        len,
        cost[len],
        false,
        Some(pcs[len]),
        Some(&links[len]),
        full,
    );
    let code = asm.finish();
    let at = arena.place(&code)?;
    // SAFETY: `at` is the start of the code just placed, a function with
    // the System V signature of `Entry` (prologue, body, epilogue).
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(at) };
    Ok(Translation {
        entry,
        links,
        timed: timed.is_some(),
        full,
        chain_offset: chain_offset as u32,
    })
}

/// Where the context holds the load TLB table.
const READ_TLB: u8 = offset(std::mem::offset_of!(JitCtx, read_tlb));
/// Where the context holds the store TLB table.
const WRITE_TLB: u8 = offset(std::mem::offset_of!(JitCtx, write_tlb));
const STOP_AT: u8 = offset(std::mem::offset_of!(JitCtx, stop_at));
const TURN_END: u8 = offset(std::mem::offset_of!(JitCtx, turn_end));
const BRANCH_TAKEN: u8 = offset(std::mem::offset_of!(JitCtx, branch_taken));
const JUMPS: u8 = offset(std::mem::offset_of!(JitCtx, jumps));
const NEXT_PC: u8 = offset(std::mem::offset_of!(JitCtx, next_pc));
const LINK: u8 = offset(std::mem::offset_of!(JitCtx, link));
const BLOCK: u8 = offset(std::mem::offset_of!(JitCtx, block));
const PERSISTENCE: u8 = offset(std::mem::offset_of!(JitCtx, persistence));
/// Where the context holds the fetch TLB table.
const EXEC_TLB: u8 = offset(std::mem::offset_of!(JitCtx, exec_tlb));
/// The context's filter tables: the load, store and fetch tables, their
/// hit counters, the line shifts (`disp32`s).
const FILTER_READ: u32 = filter_offset(std::mem::offset_of!(FilterTables, read));
const FILTER_WRITE: u32 = filter_offset(std::mem::offset_of!(FilterTables, write));
const FILTER_READ_HITS: u32 = filter_offset(std::mem::offset_of!(FilterTables, read_hits));
const FILTER_WRITE_HITS: u32 = filter_offset(std::mem::offset_of!(FilterTables, write_hits));
const FILTER_DATA_SHIFT: u32 = filter_offset(std::mem::offset_of!(FilterTables, data_shift));
const FILTER_FETCH: u32 = filter_offset(std::mem::offset_of!(FilterTables, fetch));
const FILTER_FETCH_HITS: u32 = filter_offset(std::mem::offset_of!(FilterTables, fetch_hits));
const FILTER_FETCH_SHIFT: u32 = filter_offset(std::mem::offset_of!(FilterTables, fetch_shift));
const FETCH: u8 = offset(std::mem::offset_of!(JitCtx, fetch));
/// The context's hart pointer, the first argument of the FP helpers.
const HART: u32 = std::mem::offset_of!(JitCtx, hart) as u32;
/// The hart's FP registers, from its integer registers.
const F_REGS: i32 = from_registers(std::mem::offset_of!(Hart, f));
/// The hart's `mstatus`, from its registers.
const MSTATUS: i32 = from_registers(std::mem::offset_of!(Hart, csrs.mstatus));
/// The hart's instruction count, from its registers (`rbx`).
const INSTRET: i32 = from_registers(std::mem::offset_of!(Hart, instret));
/// The hart's core clock, from its registers.
const CYCLES: i32 = from_registers(std::mem::offset_of!(Hart, core.cycles));

/// A context field's offset as a `disp8`.
const fn offset(at: usize) -> u8 {
    assert!(at < 128, "a context field beyond a disp8");
    at as u8
}

/// A field of the context's filter tables as a `disp32`.
const fn filter_offset(at: usize) -> u32 {
    (std::mem::offset_of!(JitCtx, filter) + at) as u32
}

/// A hart field's displacement from its registers.
const fn from_registers(at: usize) -> i32 {
    (at as i64 - std::mem::offset_of!(Hart, x) as i64) as i32
}

/// Emits a block exit to `target` (a constant, or `None`: already in
/// [`JitCtx::next_pc`]) after `n` instructions costing `cycles` (plus a
/// taken branch's if `taken`): retires them as `Hart::retire` does, then,
/// unless `exec_blocks` would stop here (`instret >= stop_at`, a flush
/// owed, `cycles >= turn_end`), jumps to the next block through `link`
/// (`None`: the slot of the code cache's jump table) when it matches (in
/// full-system mode if `full`: and the fetch TLB maps the PC to the link's
/// page), or returns [`CHAINED`].
fn chain_exit(
    asm: &mut Asm,
    n: usize,
    cycles: u32,
    taken: bool,
    target: Option<u64>,
    link: Option<&Link>,
    full: bool,
) {
    asm.mov_imm(Reg::Rax, cycles as u64);
    if taken {
        asm.add_ctx(BRANCH_TAKEN);
    }
    asm.add_to_hart(CYCLES);
    asm.mov_imm(Reg::Rax, n as u64);
    asm.add_to_hart(INSTRET);
    if let Some(pc) = target {
        asm.mov_imm(Reg::Rax, pc);
        asm.store_ctx(NEXT_PC, Reg::Rax);
    }
    asm.load_hart(INSTRET);
    asm.cmp_ctx(STOP_AT);
    let stop = asm.jump_if(Cond::AboveEq);
    asm.load_hart(CYCLES);
    asm.cmp_ctx(TURN_END);
    let turn_over = asm.jump_if(Cond::AboveEq);
    asm.load_ctx(NEXT_PC);
    match link {
        Some(link) => asm.mov_imm(Reg::Rcx, link as *const Link as u64),
        None => asm.table_slot(JUMPS, JUMP_SLOTS as u32),
    }
    if full {
        asm.follow_link_mapped(EXEC_TLB);
    } else {
        asm.follow_link();
    }
    asm.store_ctx(LINK, Reg::Rcx);
    asm.here(stop);
    asm.here(turn_over);
    asm.exit(CHAINED);
}

/// How an inline operation gets its second operand.
enum Src {
    Reg,
    Imm,
    /// It has none.
    None,
}

/// What kind of run a translation is made for.
#[derive(Clone, Copy)]
struct Kind {
    /// With a timing model.
    timed: bool,
    /// In full-system mode.
    full: bool,
}

/// Emits instruction `i` of the block with `pcs`, `cost` and `links`.
fn emit(asm: &mut Asm, ins: &Insn, i: u32, pcs: &[u64], cost: &[u32], links: &[Link], kind: Kind) {
    use Op::*;
    let Kind { timed, full } = kind;
    let pc = pcs[i as usize];
    let n = i as usize + 1;
    // The generic helper's constant arguments (see `step_helper`).
    let [insn_low, insn_high] = insn_words(ins);
    let cycles = u64::from(cost[i as usize]) | u64::from(cost[n]) << 32;
    let helper_words = [pc, cycles, insn_low, insn_high];
    let imm = ins.imm as u64;
    // An operation whose only effect is writing rd: with rd = x0 it does
    // nothing at all.
    let alu = |asm: &mut Asm, src: Src, body: &dyn Fn(&mut Asm)| {
        if ins.rd & 31 == 0 {
            return;
        }
        asm.load_guest(Reg::Rax, ins.rs1);
        match src {
            Src::Reg => asm.load_guest(Reg::Rcx, ins.rs2),
            Src::Imm => asm.mov_imm(Reg::Rcx, imm),
            Src::None => {}
        }
        body(asm);
        asm.store_guest(ins.rd);
    };
    let constant = |asm: &mut Asm, v: u64| {
        if ins.rd & 31 != 0 {
            asm.mov_imm(Reg::Rax, v);
            asm.store_guest(ins.rd);
        }
    };
    let branch = |asm: &mut Asm, cond: Cond| {
        asm.load_guest(Reg::Rax, ins.rs1);
        asm.load_guest(Reg::Rcx, ins.rs2);
        asm.alu(Alu::Cmp, true);
        let not_taken = asm.jump_if(cond.inverse());
        let target = pc.wrapping_add(imm);
        chain_exit(
            asm,
            n,
            cost[n],
            true,
            Some(target),
            Some(&links[i as usize]),
            full,
        );
        asm.here(not_taken);
        // Reached only by the jump, with rs1 still loaded.
        asm.assume_rax_holds(ins.rs1);
    };
    let set_if = |cond: Cond| {
        move |asm: &mut Asm| {
            asm.alu(Alu::Cmp, true);
            asm.set_cond(cond);
        }
    };
    let op64 = |op: Alu| move |asm: &mut Asm| asm.alu(op, true);
    let op32 = |op: Alu| {
        move |asm: &mut Asm| {
            asm.alu(op, false);
            asm.sext32();
        }
    };
    let sh64 = |op: Shift| move |asm: &mut Asm| asm.shift(op, true);
    let unary = |op: Unary| move |asm: &mut Asm| asm.unary(op);
    let shift_add = |shift: u8, word: bool| {
        move |asm: &mut Asm| {
            if word {
                asm.zext32();
            }
            asm.shift_add(shift);
        }
    };
    // rax = rax op !rcx (Zbb `andn`, `orn`).
    let inverted = |op: Alu| {
        move |asm: &mut Asm| {
            asm.not_rcx();
            asm.alu(op, true);
        }
    };
    // The smaller or larger: rcx replaces rax when the comparison says.
    let pick = |cond: Cond| {
        move |asm: &mut Asm| {
            asm.alu(Alu::Cmp, true);
            asm.cmov(cond);
        }
    };
    let bit = |op: BitOp| move |asm: &mut Asm| asm.bit(op);
    let bit_extract = |asm: &mut Asm| {
        asm.shift(Shift::RightLogical, true);
        asm.low_bit();
    };
    let sh32 = |op: Shift| {
        move |asm: &mut Asm| {
            asm.shift(op, false);
            asm.sext32();
        }
    };
    // Loads and stores: the software-TLB hit inline (as `Hart::load` and
    // `Hart::store` without a timing model), anything else through the
    // helper, which takes the interpreter's slow path: every test that
    // missed (`None`: a test not emitted) jumps to its call.
    let slow_path = |asm: &mut Asm, misses: &[Option<usize>]| {
        for &miss in misses.iter().flatten() {
            asm.here(miss);
        }
        asm.call_helper(i, helper_words, HELPER | i);
    };
    let load = |asm: &mut Asm, size: u64, signed: bool| {
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, READ_TLB, size);
        let filter_miss =
            timed.then(|| asm.filter_test(FILTER_DATA_SHIFT, FILTER_READ, FILTER_READ_HITS));
        asm.load_host(size, signed);
        if ins.rd & 31 != 0 {
            asm.store_guest(ins.rd);
        }
        let done = asm.jump();
        slow_path(asm, &[Some(miss), filter_miss]);
        // Both paths join with rd in rax (the next instruction often
        // reads it).
        if ins.rd & 31 != 0 {
            asm.load_guest(Reg::Rax, ins.rd);
        }
        asm.here(done);
        asm.assume_rax_holds(ins.rd);
    };
    let store = |asm: &mut Asm, size: u64| {
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, WRITE_TLB, size);
        let filter_miss =
            timed.then(|| asm.filter_test(FILTER_DATA_SHIFT, FILTER_WRITE, FILTER_WRITE_HITS));
        asm.load_guest(Reg::Rcx, ins.rs2);
        asm.store_host(size);
        let done = asm.jump();
        slow_path(asm, &[Some(miss), filter_miss]);
        asm.here(done);
    };
    // An FP register's displacement from the integer registers.
    let f_reg = |r: u8| F_REGS + 8 * i32::from(r & 31);
    // FP loads and stores: as the integer ones, behind an inline test
    // that the FP state is Dirty (`Hart::fp_dirty` would change or trap
    // otherwise: the helper does it); a load NaN-boxes to 64 bits with
    // `boxing` (`rvnvmm_fpu::box_f32`, `box_f16`).
    let fp_load = |asm: &mut Asm, size: u64, boxing: u64| {
        let fs_off = asm.field_test(MSTATUS, FS as u32, FS_DIRTY as u32);
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, READ_TLB, size);
        let filter_miss =
            timed.then(|| asm.filter_test(FILTER_DATA_SHIFT, FILTER_READ, FILTER_READ_HITS));
        asm.load_host(size, false);
        if boxing != 0 {
            asm.mov_imm(Reg::Rcx, boxing);
            asm.alu(Alu::Or, true);
        }
        asm.store_hart(f_reg(ins.rd));
        let done = asm.jump();
        slow_path(asm, &[Some(fs_off), Some(miss), filter_miss]);
        asm.here(done);
    };
    let fp_store = |asm: &mut Asm, size: u64| {
        let fs_off = asm.field_test(MSTATUS, FS as u32, FS_DIRTY as u32);
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, WRITE_TLB, size);
        let filter_miss =
            timed.then(|| asm.filter_test(FILTER_DATA_SHIFT, FILTER_WRITE, FILTER_WRITE_HITS));
        asm.load_hart_to(Reg::Rcx, f_reg(ins.rs2));
        asm.store_host(size);
        let done = asm.jump();
        slow_path(asm, &[Some(fs_off), Some(miss), filter_miss]);
        asm.here(done);
    };
    // FP moves and sign injections of doubles: inline behind the same
    // test (no flags, no rounding, no NaN-boxing to check).
    let fp_inline = |asm: &mut Asm, body: &dyn Fn(&mut Asm)| {
        let fs_off = asm.field_test(MSTATUS, FS as u32, FS_DIRTY as u32);
        body(asm);
        let done = asm.jump();
        asm.here(fs_off);
        asm.call_helper(i, helper_words, HELPER | i);
        asm.here(done);
    };
    let sign_inject = |kind: SignFrom| {
        move |asm: &mut Asm| {
            asm.load_hart_to(Reg::Rax, f_reg(ins.rs1));
            asm.load_hart_to(Reg::Rcx, f_reg(ins.rs2));
            asm.sign_inject(kind);
            asm.store_hart(f_reg(ins.rd));
        }
    };
    let to_x = |asm: &mut Asm, sign_extend_word: bool| {
        if ins.rd & 31 != 0 {
            asm.load_hart_to(Reg::Rax, f_reg(ins.rs1));
            if sign_extend_word {
                asm.sext32();
            }
            asm.store_guest(ins.rd);
        }
    };
    match ins.op {
        FsgnjD => return fp_inline(asm, &sign_inject(SignFrom::Second)),
        FsgnjnD => return fp_inline(asm, &sign_inject(SignFrom::NotSecond)),
        FsgnjxD => return fp_inline(asm, &sign_inject(SignFrom::Xor)),
        FmvXD => return fp_inline(asm, &|asm: &mut Asm| to_x(asm, false)),
        FmvXW => return fp_inline(asm, &|asm: &mut Asm| to_x(asm, true)),
        FmvDX | FmvWX => {
            return fp_inline(asm, &|asm: &mut Asm| {
                asm.load_guest(Reg::Rax, ins.rs1);
                if ins.op == FmvWX {
                    asm.zext32();
                    asm.mov_imm(Reg::Rcx, rvnvmm_fpu::box_f32(0));
                    asm.alu(Alu::Or, true);
                }
                asm.store_hart(f_reg(ins.rd));
            })
        }
        _ => {}
    }
    if let Some(helper) = fp::helper(ins.op) {
        // An F or D computation: its own helper, and the generic one
        // only where that refuses (FP state not Dirty, a trapping `rm`).
        let done = asm.call_abs(HART, fp::operands(ins), helper as usize as u64);
        asm.call_helper(i, helper_words, HELPER | i);
        asm.here(done);
        return;
    }
    match ins.op {
        // No effect in the interpreter, so no code: hints, a full
        // system's `wrs` (its wait may end at once, and does), and a fence
        // unless its predecessor set has W and a persistence domain is
        // tracked (then the flushes it orders reach the domain: the
        // helper).
        Pause | NtlP1 | NtlPall | NtlS1 | NtlAll | PrefetchI | PrefetchR | PrefetchW | CMop => {}
        WrsNto | WrsSto if full => {}
        Fence if ins.fence().pred & FenceSets::W == 0 => {}
        Fence => {
            let tracked = asm.ctx_flag_set(PERSISTENCE);
            let done = asm.jump();
            asm.here(tracked);
            asm.call_helper(i, helper_words, HELPER | i);
            asm.here(done);
        }
        Flw => fp_load(asm, 4, rvnvmm_fpu::box_f32(0)),
        Fld => fp_load(asm, 8, 0),
        Flh => fp_load(asm, 2, rvnvmm_fpu::box_f16(0)),
        Fsw => fp_store(asm, 4),
        Fsd => fp_store(asm, 8),
        Fsh => fp_store(asm, 2),
        Lui => constant(asm, imm),
        Auipc => constant(asm, pc.wrapping_add(imm)),
        Jal => constant(asm, pc.wrapping_add(ins.len as u64)),
        Jalr => {
            // The target first: rd may be rs1. It always ends the block.
            asm.load_guest(Reg::Rax, ins.rs1);
            asm.mov_imm(Reg::Rcx, imm);
            asm.alu(Alu::Add, true);
            asm.clear_bit0();
            asm.store_ctx(NEXT_PC, Reg::Rax);
            constant(asm, pc.wrapping_add(ins.len as u64));
            chain_exit(asm, n, cost[n], true, None, None, full);
        }
        Beq => branch(asm, Cond::Eq),
        Bne => branch(asm, Cond::Ne),
        Blt => branch(asm, Cond::Less),
        Bge => branch(asm, Cond::GreaterEq),
        Bltu => branch(asm, Cond::Below),
        Bgeu => branch(asm, Cond::AboveEq),
        Addi => alu(asm, Src::Imm, &op64(Alu::Add)),
        Slti => alu(asm, Src::Imm, &set_if(Cond::Less)),
        Sltiu => alu(asm, Src::Imm, &set_if(Cond::Below)),
        Xori => alu(asm, Src::Imm, &op64(Alu::Xor)),
        Ori => alu(asm, Src::Imm, &op64(Alu::Or)),
        Andi => alu(asm, Src::Imm, &op64(Alu::And)),
        Slli => alu(asm, Src::Imm, &sh64(Shift::Left)),
        Srli => alu(asm, Src::Imm, &sh64(Shift::RightLogical)),
        Srai => alu(asm, Src::Imm, &sh64(Shift::RightArith)),
        Add => alu(asm, Src::Reg, &op64(Alu::Add)),
        Sub => alu(asm, Src::Reg, &op64(Alu::Sub)),
        Sll => alu(asm, Src::Reg, &sh64(Shift::Left)),
        Slt => alu(asm, Src::Reg, &set_if(Cond::Less)),
        Sltu => alu(asm, Src::Reg, &set_if(Cond::Below)),
        Xor => alu(asm, Src::Reg, &op64(Alu::Xor)),
        Srl => alu(asm, Src::Reg, &sh64(Shift::RightLogical)),
        Sra => alu(asm, Src::Reg, &sh64(Shift::RightArith)),
        Or => alu(asm, Src::Reg, &op64(Alu::Or)),
        And => alu(asm, Src::Reg, &op64(Alu::And)),
        Addiw => alu(asm, Src::Imm, &op32(Alu::Add)),
        Slliw => alu(asm, Src::Imm, &sh32(Shift::Left)),
        Srliw => alu(asm, Src::Imm, &sh32(Shift::RightLogical)),
        Sraiw => alu(asm, Src::Imm, &sh32(Shift::RightArith)),
        Addw => alu(asm, Src::Reg, &op32(Alu::Add)),
        Subw => alu(asm, Src::Reg, &op32(Alu::Sub)),
        Sllw => alu(asm, Src::Reg, &sh32(Shift::Left)),
        Srlw => alu(asm, Src::Reg, &sh32(Shift::RightLogical)),
        Sraw => alu(asm, Src::Reg, &sh32(Shift::RightArith)),
        Mul => alu(asm, Src::Reg, &|asm: &mut Asm| asm.imul(true)),
        Mulw => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.imul(false);
            asm.sext32();
        }),
        Mulh => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.mul_high(MulHigh::Signed)
        }),
        Mulhu => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.mul_high(MulHigh::Unsigned)
        }),
        Mulhsu => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.mul_high(MulHigh::SignedUnsigned)
        }),
        Div => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.divide(true, false, true)
        }),
        Divu => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.divide(false, false, true)
        }),
        Rem => alu(asm, Src::Reg, &|asm: &mut Asm| asm.divide(true, true, true)),
        Remu => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.divide(false, true, true)
        }),
        Divw | Divuw | Remw | Remuw => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.divide(
                matches!(ins.op, Divw | Remw),
                matches!(ins.op, Remw | Remuw),
                false,
            );
            asm.sext32();
        }),
        // Zba
        Sh1add => alu(asm, Src::Reg, &shift_add(1, false)),
        Sh2add => alu(asm, Src::Reg, &shift_add(2, false)),
        Sh3add => alu(asm, Src::Reg, &shift_add(3, false)),
        Sh1addUw => alu(asm, Src::Reg, &shift_add(1, true)),
        Sh2addUw => alu(asm, Src::Reg, &shift_add(2, true)),
        Sh3addUw => alu(asm, Src::Reg, &shift_add(3, true)),
        AddUw => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.zext32();
            asm.alu(Alu::Add, true);
        }),
        SlliUw => alu(asm, Src::Imm, &|asm: &mut Asm| {
            asm.zext32();
            asm.shift(Shift::Left, true);
        }),
        // Zbb
        Andn => alu(asm, Src::Reg, &inverted(Alu::And)),
        Orn => alu(asm, Src::Reg, &inverted(Alu::Or)),
        Xnor => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.alu(Alu::Xor, true);
            asm.unary(Unary::Not);
        }),
        Clz => alu(asm, Src::None, &unary(Unary::Clz { wide: true })),
        Clzw => alu(asm, Src::None, &unary(Unary::Clz { wide: false })),
        Ctz => alu(asm, Src::None, &unary(Unary::Ctz { wide: true })),
        Ctzw => alu(asm, Src::None, &unary(Unary::Ctz { wide: false })),
        Max => alu(asm, Src::Reg, &pick(Cond::Less)),
        Maxu => alu(asm, Src::Reg, &pick(Cond::Below)),
        Min => alu(asm, Src::Reg, &pick(Cond::GreaterEq)),
        Minu => alu(asm, Src::Reg, &pick(Cond::AboveEq)),
        SextB => alu(asm, Src::None, &unary(Unary::SextB)),
        SextH => alu(asm, Src::None, &unary(Unary::SextH)),
        ZextH => alu(asm, Src::None, &unary(Unary::ZextH)),
        Rol => alu(asm, Src::Reg, &sh64(Shift::RotateLeft)),
        Ror => alu(asm, Src::Reg, &sh64(Shift::RotateRight)),
        Rori => alu(asm, Src::Imm, &sh64(Shift::RotateRight)),
        Rolw => alu(asm, Src::Reg, &sh32(Shift::RotateLeft)),
        Rorw => alu(asm, Src::Reg, &sh32(Shift::RotateRight)),
        Roriw => alu(asm, Src::Imm, &sh32(Shift::RotateRight)),
        OrcB => alu(asm, Src::None, &unary(Unary::OrcB)),
        Rev8 => alu(asm, Src::None, &unary(Unary::Rev8)),
        // Zbs
        Bset => alu(asm, Src::Reg, &bit(BitOp::Set)),
        Bseti => alu(asm, Src::Imm, &bit(BitOp::Set)),
        Bclr => alu(asm, Src::Reg, &bit(BitOp::Clear)),
        Bclri => alu(asm, Src::Imm, &bit(BitOp::Clear)),
        Binv => alu(asm, Src::Reg, &bit(BitOp::Invert)),
        Binvi => alu(asm, Src::Imm, &bit(BitOp::Invert)),
        Bext => alu(asm, Src::Reg, &bit_extract),
        Bexti => alu(asm, Src::Imm, &bit_extract),
        // Zicond: rcx (zero, or cleared) replaces rax.
        CzeroEqz => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.test_rcx();
            asm.cmov(Cond::Eq);
        }),
        CzeroNez => alu(asm, Src::Reg, &|asm: &mut Asm| {
            asm.test_rcx();
            asm.clear_rcx_keeping_flags();
            asm.cmov(Cond::Ne);
        }),
        Lb => load(asm, 1, true),
        Lh => load(asm, 2, true),
        Lw => load(asm, 4, true),
        Ld => load(asm, 8, true),
        Lbu => load(asm, 1, false),
        Lhu => load(asm, 2, false),
        Lwu => load(asm, 4, false),
        Sb => store(asm, 1),
        Sh => store(asm, 2),
        Sw => store(asm, 4),
        Sd => store(asm, 8),
        _ => asm.call_helper(i, helper_words, HELPER | i),
    }
}

#[cfg(test)]
mod tests;
