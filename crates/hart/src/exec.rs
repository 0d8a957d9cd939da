//! The interpreter: executes one decoded block.

use crate::memory::{read_host, write_le};
use crate::privileged::{envcfg, mstatus};
use crate::trap::Flow;
use crate::{Env, Exit, Hart, Priv, Trap};
use crate::{FlushKind, TimingModel, TlbFlush};
use rvnvmm_isa::bits::sext32;
use rvnvmm_isa::{FenceSets, Insn, Op};
use rvnvmm_mem::sv39::Access;
use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_SIZE};

/// Where an instruction of an SMT thread issues, between finding the slot
/// and taking it.
#[derive(Clone, Copy, Default)]
struct SmtIssue {
    found: Option<crate::smt::Issue>,
    delay: u64,
    unit: crate::smt::Unit,
    class: u64,
    thread: usize,
}

/// How an instruction the SMT calendar placed ended (`Hart::smt_settle`).
#[derive(Clone, Copy)]
enum Settle {
    /// It issued.
    Issued,
    /// It stopped before an access to wait for the other cores.
    Waits,
    /// It trapped.
    Trapped,
}

impl Hart {
    /// Executes block `idx` and the blocks after it while they are decoded
    /// and the budget lasts. Returns `None` when the caller must look up,
    /// decode or flush before going on (the PC names the next block), or the
    /// exit that stopped execution. `FULL`: full-system mode, where traps are
    /// taken here, the chain stops when an event is due, and blocks are
    /// found by physical PC.
    #[inline(never)]
    pub(crate) fn exec_blocks<
        T: TimingModel + ?Sized,
        const TRACE: bool,
        const FULL: bool,
        const SMT: bool,
    >(
        &mut self,
        env: &mut Env<'_, T>,
        mut idx: u32,
        stop_at: u64,
    ) -> Option<Exit> {
        // A link of the last translation to fill with the next block's.
        let mut pending_link: Option<*const crate::jit::Link> = None;
        // Full-system mode: the physical page the block was found at (a
        // link records it; see `jit::Link`).
        let mut ppage = 0;
        loop {
            if env.timing.is_some() {
                if let Err(exit) = self.fetch_block::<T, FULL>(env, idx) {
                    return exit;
                }
            }
            // The translating engine where it applies (see `jit`): a hot
            // block runs its translation; the bookkeeping below is shared.
            let timed = env.timing.is_some();
            let translated = !TRACE
                && !SMT
                && self.config.engine == crate::Engine::Jit
                && env.code.note_run(idx, timed, FULL);
            let block = env.code.block(idx);
            let link = pending_link.take();
            let translation = match &block.translation {
                // In full-system mode a block is found by physical address
                // but its translation holds the virtual PCs it was made
                // at: elsewhere it is interpreted.
                // (`block.pc` is where it was translated, and sits beside
                // the translation's entry: `t.pcs` is another allocation,
                // another host cache miss.)
                Some(t) if translated && (!FULL || block.pc == self.pc) => {
                    // The block the previous translation stopped before
                    // (with nothing in between that could drop blocks):
                    // link its exit here.
                    if let Some(link) = link {
                        // SAFETY: the link is in that block's translation
                        // (or the jump table) of this cache, still alive.
                        unsafe { (*link).fill(self.pc, t, ppage) };
                    }
                    Some(t.entry())
                }
                _ => None,
            };
            // Where the run goes on after the block: set on a taken branch
            // or jump (retired and charged), else after its last
            // instruction.
            let mut next = None;
            if let Some(entry) = translation {
                let hart: *mut Hart = self;
                let mut ctx = crate::jit::JitCtx::new::<T, FULL>(hart, env, idx, stop_at);
                // SAFETY: `entry` is this block's translation, whose arena
                // lives while the block does (and so do the translations it
                // chains to: the cache drops blocks only all at once, never
                // from here); the register pointer and the context are valid
                // for the call, and nothing else touches the hart or the
                // environment meanwhile (the helper reaches them only
                // through the context).
                let outcome = unsafe { entry(std::ptr::addr_of_mut!((*hart).x).cast(), &mut ctx) };
                if outcome == crate::jit::FETCH_STOP {
                    // The block chained to did not start: as if
                    // `exec_blocks` had looked it up and fetched it (the
                    // helper set the PC, and a fetch fault taken in
                    // full-system mode moved it to the trap vector).
                    return ctx.fetch_exit;
                } else if outcome == crate::jit::CHAINED {
                    // Retired and charged by the translation; the checks
                    // below are the ones it made (and failed, or it found no
                    // link to follow).
                    next = Some(ctx.next_pc);
                    pending_link = (!ctx.link.is_null()).then_some(ctx.link);
                } else {
                    // A helper left the block it was in, which may be one
                    // chained to: the helper kept what the bookkeeping needs
                    // of the instruction (the block's arrays are often out
                    // of the host's caches), the instruction bits aside.
                    let i = (outcome & 0xffff) as usize;
                    let (result, left) = ctx
                        .result
                        .take()
                        .unwrap_or_else(|| unreachable!("the helper left a result"));
                    let block = ctx.block;
                    let raw = || env.code.block(block).raw[i];
                    match self.after_insn::<FULL>(result, i, left.pc, &left.insn, left.cycles, raw)
                    {
                        After::Next(_) => unreachable!("a translation stops at a block end"),
                        After::Jumped(target) => next = Some(target),
                        After::Leave(exit) => return exit,
                    }
                }
            } else {
                // The block's arrays, read only here: a translated run
                // needs none of them (they are separate host allocations).
                let block = env.code.block(idx);
                let insns: *const [Insn] = &*block.insns;
                let cost: *const [u32] = &*block.cost;
                let raw: *const [u32] = &*block.raw;
                // SAFETY: blocks are never freed or moved while they
                // execute: the arena only grows in `decode_block` and is
                // cleared in `settle`, neither of which is reachable from
                // here.
                let (insns, cost, raw) = unsafe { (&*insns, &*cost, &*raw) };
                let mut pc = self.pc;
                for (i, ins) in insns.iter().enumerate() {
                    if TRACE && self.exact_budget && self.instret + i as u64 >= stop_at {
                        // An exact stop (`exact_budget`) before this instruction.
                        self.retire(i, cost);
                        self.pc = pc;
                        return None;
                    }
                    if TRACE && self.debug.is_some() && self.debug_stops_before(ins, pc, i) {
                        // A debugger's stop before this instruction.
                        self.retire(i, cost);
                        self.pc = pc;
                        return Some(Exit::Budget);
                    }
                    let issue = if SMT {
                        Some(self.smt_issue(ins, i, cost))
                    } else {
                        None
                    };
                    let result = self.step::<_, FULL>(env, ins, pc, i as u64, cost[i] as u64);
                    if let Some(issue) = issue {
                        let settled = match &result {
                            Ok(_) => Settle::Issued,
                            Err(trap) if trap.cause == Trap::SYNC_STOP => Settle::Waits,
                            Err(_) => Settle::Trapped,
                        };
                        self.smt_settle(ins, issue, settled);
                    }
                    if TRACE && self.trace && result.is_ok() {
                        // One line per retired instruction (a faulting one is
                        // printed when it completes after the fault is handled).
                        eprintln!(
                            "{} {:016x} {}",
                            self.core.hart_id,
                            pc,
                            rvnvmm_isa::disasm(ins, pc)
                        );
                    }
                    let cycles = [cost[i], cost[i + 1]];
                    match self.after_insn::<FULL>(result, i, pc, ins, cycles, || raw[i]) {
                        After::Next(at) => pc = at,
                        After::Jumped(target) => {
                            next = Some(target);
                            break;
                        }
                        After::Leave(exit) => return exit,
                    }
                }
                if next.is_none() {
                    // It ran to its end.
                    self.retire(insns.len(), cost);
                    next = Some(pc);
                }
            }
            if let Some(target) = next {
                self.pc = target;
            }
            if self.instret >= stop_at
                || env.code.pages.flush_pending
                || (FULL && self.core.cycles >= self.event_at)
                || self.core.cycles >= self.core.turn_end
            {
                return None;
            }
            let key = if FULL {
                // A fetch-TLB hit gives the physical PC; anything else (and a
                // block that may straddle pages) goes back to `run`.
                match self.tlb.exec.lookup_paddr(self.pc, 2) {
                    Some((_, pa)) if page_offset(pa) != PAGE_SIZE - 2 => {
                        ppage = page_base(pa);
                        pa
                    }
                    _ => return None,
                }
            } else {
                self.pc
            };
            idx = env.code.lookup(key)?;
        }
    }

    /// A timed run's fetch of block `idx` at the PC: its lines through the
    /// model's L1I, stopping before a miss when ahead of the other harts
    /// (the sync limit). `Err` holds what `exec_blocks` returns instead of
    /// running the block. Shared by `exec_blocks` and translations that
    /// chain under a timing model.
    #[inline]
    pub(crate) fn fetch_block<T: TimingModel + ?Sized, const FULL: bool>(
        &mut self,
        env: &mut Env<'_, T>,
        idx: u32,
    ) -> Result<(), Option<Exit>> {
        // The physical address of the block's fetch, for a timed run
        // only. With a TLB model the fetch must hit the ITLB: a page the
        // software TLB dropped (the model's ITLB gave it up) is looked
        // up again, which may walk.
        let lookup = match env.timing {
            Some(_) => self.tlb.exec.lookup_paddr(self.pc, 2),
            None => None,
        };
        let fetch_pa = match lookup {
            Some((_, pa)) => Some(pa),
            None if env.timing.as_deref().is_some_and(|t| t.has_tlb()) => {
                match self.fetch_paddr(env, self.pc) {
                    Ok(pa) => Some(pa),
                    Err(trap) if FULL => {
                        self.take_trap(trap.cause, trap.tval, false);
                        return Err(None);
                    }
                    Err(trap) => return Err(Some(Exit::Trap(trap))),
                }
            }
            None => None,
        };
        if let Some(t) = env.timing.as_deref_mut() {
            // Instruction fetch: the block's lines through the L1I.
            let core = self.core.id;
            if let Some(pa) = fetch_pa {
                let page = page_base(pa);
                for &off in env.code.block(idx).fetch_lines.iter() {
                    let line = page | off as u64;
                    if !t.fetch_filter_hit(core, line) {
                        if self.core.cycles > self.core.sync_limit
                            && !t.fetch_private_hit(core, line)
                        {
                            // Ahead of the other harts: let them catch
                            // up before this fetch reaches memory.
                            if FULL {
                                self.stop_before(env, pa, idx);
                            }
                            return Err(Some(Exit::Budget));
                        }
                        let stall = t.fetch(core, line, self.core.cycles);
                        self.core.cycles += stall;
                        self.stats.memory_stall_cycles += stall;
                    }
                }
            }
        }
        Ok(())
    }

    /// Remembers that the run stopped before fetching block `idx`, found
    /// at physical address `pa` (see [`Hart::stopped_before`]). A block
    /// that may straddle into the next page is not kept: the cache may
    /// decode another for the same address when that page maps elsewhere,
    /// whereas one that ends in its page is what a lookup of its address
    /// gives until the cache drops every block.
    #[inline]
    fn stop_before<T: TimingModel + ?Sized>(&mut self, env: &Env<'_, T>, pa: u64, idx: u32) {
        if env.code.block(idx).next_ppage == crate::code::NO_NEXT_PAGE {
            self.stopped_before = Some((pa, idx, env.code.epoch()));
        }
    }

    /// SMT: finds where instruction `i` of the block (`ins`) issues in the
    /// core's calendar and delays the thread's clock to it. Its ready time
    /// is the thread's clock after the instructions before it and its own
    /// load-use stall; its class cost then runs from the issue cycle.
    #[inline(never)]
    fn smt_issue(&mut self, ins: &Insn, i: usize, cost: &[u32]) -> SmtIssue {
        let (unit, class) = crate::cost::smt_unit(&self.core.costs, ins);
        let own = u64::from(cost[i + 1] - cost[i]);
        let ready = self.core.cycles + u64::from(cost[i]) + own.saturating_sub(class);
        let thread = self.core.smt.as_ref().map_or(0, |s| s.thread);
        let Some(cal) = self.calendar.as_mut() else {
            return SmtIssue::default();
        };
        let found = cal.find(thread, ready, unit, class);
        let delay = found.cycle - ready;
        self.core.cycles += delay;
        SmtIssue {
            found: Some(found),
            delay,
            unit,
            class,
            thread,
        }
    }

    /// SMT: the instruction issued: its slot and unit are taken and its
    /// wait counted. It stopped before an access, to re-execute once the
    /// other cores caught up: it cannot issue before the cycle it found, so
    /// the thread's clock stays there and the wait is counted (rolled back,
    /// the thread would stay the scheduler's earliest and find the same
    /// late slot every turn while its siblings, which hold the slots, never
    /// run). It trapped: it never issued, the thread's clock goes back.
    #[inline(never)]
    fn smt_settle(&mut self, _ins: &Insn, issue: SmtIssue, settled: Settle) {
        let (Some(found), Some(cal)) = (issue.found, self.calendar.as_mut()) else {
            return;
        };
        match settled {
            Settle::Issued => {
                cal.commit(issue.thread, &found, issue.unit, issue.class);
                self.stats.unit_wait_cycles += found.unit_wait;
                self.stats.issue_wait_cycles += issue.delay - found.unit_wait;
            }
            Settle::Waits => {
                self.stats.unit_wait_cycles += found.unit_wait;
                self.stats.issue_wait_cycles += issue.delay - found.unit_wait;
            }
            Settle::Trapped => self.core.cycles -= issue.delay,
        }
    }

    /// What follows instruction `i` of a block (at `pc`) that gave
    /// `result`, `cycles` the block's `cost[i]` and `cost[i + 1]`, `raw`
    /// its bits (for the `tval` of an illegal instruction): the
    /// interpreter's bookkeeping, shared with the translating engine so
    /// that both retire and charge alike.
    #[inline(always)]
    fn after_insn<const FULL: bool>(
        &mut self,
        result: Result<Flow, Trap>,
        i: usize,
        pc: u64,
        ins: &Insn,
        cycles: [u32; 2],
        raw: impl FnOnce() -> u32,
    ) -> After {
        let [before, with] = cycles;
        match result {
            Ok(Flow::Next) => After::Next(pc.wrapping_add(ins.len as u64)),
            Ok(Flow::Goto(target)) => After::Next(target),
            Ok(Flow::Jump(target)) => {
                self.retire_charging(i + 1, with);
                self.core.cycles += self.core.costs.branch_taken as u64;
                After::Jumped(target)
            }
            Ok(Flow::Stop) => {
                // Code was modified: end here so the cache is
                // flushed before anything else runs.
                self.stop_block = false;
                self.retire_charging(i + 1, with);
                self.pc = pc.wrapping_add(ins.len as u64);
                After::Leave(None)
            }
            Ok(Flow::Exit(exit)) => {
                // ecall, wfi: the instruction counts as executed.
                self.retire_charging(i + 1, with);
                self.pc = if matches!(exit, Exit::Wfi | Exit::Yield | Exit::Marker { .. }) {
                    pc + ins.len as u64
                } else {
                    pc
                };
                After::Leave(Some(exit))
            }
            Err(trap) => {
                self.retire_charging(i, before);
                self.pc = pc;
                self.stop_block = false;
                if trap.cause == Trap::SYNC_STOP {
                    return After::Leave(Some(Exit::Budget));
                }
                if FULL {
                    let tval = if trap.cause == Trap::ILLEGAL {
                        raw() as u64
                    } else {
                        trap.tval
                    };
                    self.take_trap(trap.cause, tval, false);
                    return After::Leave(None);
                }
                After::Leave(Some(Exit::Trap(trap)))
            }
        }
    }

    #[inline(always)]
    fn retire(&mut self, n: usize, cost: &[u32]) {
        self.retire_charging(n, cost[n]);
    }

    /// Retires `n` instructions of a block costing `cycles` (its `cost[n]`).
    #[inline(always)]
    fn retire_charging(&mut self, n: usize, cycles: u32) {
        self.instret += n as u64;
        self.core.cycles += cycles as u64;
    }

    #[inline(always)]
    pub(crate) fn step<T: TimingModel + ?Sized, const FULL: bool>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        pc: u64,
        done: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        // Read at each use rather than kept in a register across the match:
        // the interpreter loop is short of registers.
        let rd = || ins.rd as usize & 31;
        let a = self.x[ins.rs1 as usize & 31];
        let b = self.x[ins.rs2 as usize & 31];
        let imm = ins.imm as u64;
        macro_rules! set {
            ($v:expr) => {{
                let v: u64 = $v;
                self.x[rd()] = v;
                self.x[0] = 0;
            }};
        }
        macro_rules! branch {
            ($c:expr) => {{
                if $c {
                    return Ok(Flow::Jump(pc.wrapping_add(imm)));
                }
            }};
        }
        macro_rules! load {
            ($size:expr, $conv:expr) => {{
                let v = self.load(env, a.wrapping_add(imm), $size, done_cycles)?;
                set!($conv(v))
            }};
        }
        macro_rules! store {
            ($size:expr) => {{
                self.store(env, a.wrapping_add(imm), $size, b, done_cycles)?;
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }};
        }
        macro_rules! amo_w {
            ($f:expr) => {{
                let p = self.rmw_ptr(env, a, 4, done_cycles)?;
                self.stats.atomics.amos += 1;
                // SAFETY: rmw_ptr returned an aligned, writable 4-byte location in RAM.
                let old = unsafe { read_host(p, 4) } as u32;
                let f: fn(u32, u32) -> u32 = $f;
                // SAFETY: as above.
                unsafe { write_le(p, 4, f(old, b as u32) as u64) };
                set!(old as i32 as i64 as u64);
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }};
        }
        macro_rules! amo_d {
            ($f:expr) => {{
                let p = self.rmw_ptr(env, a, 8, done_cycles)?;
                self.stats.atomics.amos += 1;
                // SAFETY: rmw_ptr returned an aligned, writable 8-byte location in RAM.
                let old = unsafe { read_host(p, 8) };
                let f: fn(u64, u64) -> u64 = $f;
                // SAFETY: as above.
                unsafe { write_le(p, 8, f(old, b)) };
                set!(old);
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }};
        }
        use Op::*;
        match ins.op {
            Lui => set!(imm),
            Auipc => set!(pc.wrapping_add(imm)),
            Jal => {
                set!(pc + ins.len as u64);
                // The block continues at the target when decoding followed
                // the jump; otherwise the jal is its last instruction.
                return Ok(Flow::Goto(pc.wrapping_add(imm)));
            }
            Jalr => {
                let target = a.wrapping_add(imm) & !1;
                set!(pc + ins.len as u64);
                return Ok(Flow::Jump(target));
            }
            Beq => branch!(a == b),
            Bne => branch!(a != b),
            Blt => branch!((a as i64) < (b as i64)),
            Bge => branch!((a as i64) >= (b as i64)),
            Bltu => branch!(a < b),
            Bgeu => branch!(a >= b),
            Lb => load!(1, |v: u64| v as i8 as i64 as u64),
            Lh => load!(2, |v: u64| v as i16 as i64 as u64),
            Lw => load!(4, |v: u64| v as i32 as i64 as u64),
            Ld => load!(8, |v: u64| v),
            Lbu => load!(1, |v: u64| v),
            Lhu => load!(2, |v: u64| v),
            Lwu => load!(4, |v: u64| v),
            Sb => store!(1),
            Sh => store!(2),
            Sw => store!(4),
            Sd => store!(8),
            Addi => set!(a.wrapping_add(imm)),
            Slti => set!(((a as i64) < ins.imm) as u64),
            Sltiu => set!((a < imm) as u64),
            Xori => set!(a ^ imm),
            Ori => set!(a | imm),
            Andi => set!(a & imm),
            Slli => set!(a << (imm & 63)),
            Srli => set!(a >> (imm & 63)),
            Srai => set!(((a as i64) >> (imm & 63)) as u64),
            Add => set!(a.wrapping_add(b)),
            Sub => set!(a.wrapping_sub(b)),
            Sll => set!(a << (b & 63)),
            Slt => set!(((a as i64) < (b as i64)) as u64),
            Sltu => set!((a < b) as u64),
            Xor => set!(a ^ b),
            Srl => set!(a >> (b & 63)),
            Sra => set!(((a as i64) >> (b & 63)) as u64),
            Or => set!(a | b),
            And => set!(a & b),
            Addiw => set!(sext32(a.wrapping_add(imm))),
            Slliw => set!(sext32(((a as u32) << (imm & 31)) as u64)),
            Srliw => set!(sext32(((a as u32) >> (imm & 31)) as u64)),
            Sraiw => set!(((a as i32) >> (imm & 31)) as i64 as u64),
            Addw => set!(sext32(a.wrapping_add(b))),
            Subw => set!(sext32(a.wrapping_sub(b))),
            Sllw => set!(sext32(((a as u32) << (b & 31)) as u64)),
            Srlw => set!(sext32(((a as u32) >> (b & 31)) as u64)),
            Sraw => set!(((a as i32) >> (b & 31)) as i64 as u64),
            // A fence whose predecessor set has W orders the hart's earlier
            // flushes (Zicbom orders cbo.clean/flush as stores): they reach
            // the persistence domain.
            Fence if ins.fence().pred & FenceSets::W != 0 && env.mem.tracks_persistence() => {
                env.mem
                    .persist_fence(self.core.hart_id, self.instret + done);
            }
            Fence => {}
            FenceI => {
                // In the full system decoded blocks are keyed by physical
                // address and every write to a code page (a store, DMA, a
                // debugger's) drops them already: the cache is coherent
                // with memory and `fence.i` has nothing to flush (Linux
                // runs one on every hart whenever it maps an executable
                // page). In user-mode emulation blocks are keyed by
                // virtual PC: it flushes.
                if !FULL {
                    env.code.pages.flush_pending = true;
                }
                return Ok(Flow::Stop);
            }
            Ecall if FULL => return Err(Trap::new(Trap::ECALL_U + self.prv as u64, 0)),
            Ecall => return Ok(Flow::Exit(Exit::Ecall)),
            Ebreak => return Err(Trap::new(Trap::BREAKPOINT, pc)),
            Csrrw | Csrrs | Csrrc | Csrrwi | Csrrsi | Csrrci => {
                let v = self.csr_op(ins, done, done_cycles)?;
                if ins.csr() == rvnvmm_isa::csr::SATP
                    && (matches!(ins.op, Csrrw | Csrrwi) || ins.rs1 != 0)
                {
                    if let Some(t) = env.timing.as_deref_mut() {
                        t.satp_write(self.core.id, self.csrs.satp);
                    }
                }
                set!(v)
            }
            Mul => set!(a.wrapping_mul(b)),
            Mulh => set!(((a as i64 as i128 * b as i64 as i128) >> 64) as u64),
            Mulhsu => set!(((a as i64 as i128 * b as i128) >> 64) as u64),
            Mulhu => set!(((a as u128 * b as u128) >> 64) as u64),
            Div => set!(if b == 0 {
                u64::MAX
            } else {
                (a as i64).wrapping_div(b as i64) as u64
            }),
            Divu => set!(a.checked_div(b).unwrap_or(u64::MAX)),
            Rem => set!(if b == 0 {
                a
            } else {
                (a as i64).wrapping_rem(b as i64) as u64
            }),
            Remu => set!(if b == 0 { a } else { a % b }),
            Mulw => set!(sext32(a.wrapping_mul(b))),
            Divw => {
                let (x, y) = (a as i32, b as i32);
                set!(if y == 0 {
                    u64::MAX
                } else {
                    x.wrapping_div(y) as i64 as u64
                })
            }
            Divuw => {
                let (x, y) = (a as u32, b as u32);
                set!(x
                    .checked_div(y)
                    .map_or(u64::MAX, |q| q as i32 as i64 as u64))
            }
            Remw => {
                let (x, y) = (a as i32, b as i32);
                set!(if y == 0 {
                    x as i64 as u64
                } else {
                    x.wrapping_rem(y) as i64 as u64
                })
            }
            Remuw => {
                let (x, y) = (a as u32, b as u32);
                set!(if y == 0 {
                    x as i32 as i64 as u64
                } else {
                    (x % y) as i32 as i64 as u64
                })
            }
            LrW | LrD => {
                let size = if ins.op == LrW { 4 } else { 8 };
                if a & (size - 1) != 0 {
                    return Err(Trap::new(Trap::LOAD_MISALIGNED, a));
                }
                let v = self.load_reserved(env, a, size, done_cycles)?;
                self.reservation = Some((a, v));
                self.stats.atomics.lr += 1;
                set!(if size == 4 { v as i32 as i64 as u64 } else { v })
            }
            ScW | ScD => {
                let size = if ins.op == ScW { 4 } else { 8 };
                let p = self.rmw_ptr(env, a, size, done_cycles)?;
                // SAFETY: rmw_ptr returned an aligned, writable location in RAM.
                let cur = unsafe { read_host(p, size) };
                let ok = self.reservation.take() == Some((a, cur));
                self.stats.atomics.sc += 1;
                self.stats.atomics.sc_failures += !ok as u64;
                if ok {
                    // SAFETY: as above.
                    unsafe { write_le(p, size, b) };
                }
                set!(!ok as u64);
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }
            AmoswapW => amo_w!(|_, y| y),
            AmoaddW => amo_w!(|x, y| x.wrapping_add(y)),
            AmoxorW => amo_w!(|x, y| x ^ y),
            AmoandW => amo_w!(|x, y| x & y),
            AmoorW => amo_w!(|x, y| x | y),
            AmominW => amo_w!(|x, y| (x as i32).min(y as i32) as u32),
            AmomaxW => amo_w!(|x, y| (x as i32).max(y as i32) as u32),
            AmominuW => amo_w!(|x, y| x.min(y)),
            AmomaxuW => amo_w!(|x, y| x.max(y)),
            AmoswapD => amo_d!(|_, y| y),
            AmoaddD => amo_d!(|x, y| x.wrapping_add(y)),
            AmoxorD => amo_d!(|x, y| x ^ y),
            AmoandD => amo_d!(|x, y| x & y),
            AmoorD => amo_d!(|x, y| x | y),
            AmominD => amo_d!(|x, y| (x as i64).min(y as i64) as u64),
            AmomaxD => amo_d!(|x, y| (x as i64).max(y as i64) as u64),
            AmominuD => amo_d!(|x, y| x.min(y)),
            AmomaxuD => amo_d!(|x, y| x.max(y)),
            Flh => {
                self.fp_dirty()?;
                let v = self.load(env, a.wrapping_add(imm), 2, done_cycles)?;
                self.f[rd()] = rvnvmm_fpu::box_f16(v as u16);
            }
            Flw => {
                self.fp_dirty()?;
                let v = self.load(env, a.wrapping_add(imm), 4, done_cycles)?;
                self.f[rd()] = rvnvmm_fpu::box_f32(v as u32);
            }
            Fld => {
                self.fp_dirty()?;
                let v = self.load(env, a.wrapping_add(imm), 8, done_cycles)?;
                self.f[rd()] = v;
            }
            Fsh => {
                self.fp_dirty()?;
                let v = self.f[ins.rs2 as usize & 31];
                self.store(env, a.wrapping_add(imm), 2, v, done_cycles)?;
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }
            Fsw => {
                self.fp_dirty()?;
                let v = self.f[ins.rs2 as usize & 31];
                self.store(env, a.wrapping_add(imm), 4, v, done_cycles)?;
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }
            Fsd => {
                self.fp_dirty()?;
                let v = self.f[ins.rs2 as usize & 31];
                self.store(env, a.wrapping_add(imm), 8, v, done_cycles)?;
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }
            Mret => return self.mret().map(Flow::Jump),
            Sret => return self.sret().map(Flow::Jump),
            SfenceVma => {
                self.sfence_vma(ins.rs1 != 0, a)?;
                if let Some(t) = env.timing.as_deref_mut() {
                    let flush = TlbFlush {
                        vaddr: (ins.rs1 != 0).then_some(a),
                        asid: (ins.rs2 != 0).then_some(b as u16),
                    };
                    t.tlb_flush(self.core.id, flush);
                    // The software TLB was flushed at least as widely.
                    self.tlb_sync = Some((self.core.id, t.tlb_epoch(self.core.id)));
                }
            }
            Wfi => return self.wfi::<FULL>(done_cycles),
            CflushDL1 | CboClean | CboFlush | CboInval | CboZero => {
                self.cache_op(env, ins, a, done, done_cycles)?;
                if self.stop_block {
                    return Ok(Flow::Stop);
                }
            }
            // Hints: no architectural effect. (A prefetch does not reach the
            // memory-system model: it would need a non-blocking fill.)
            Pause | NtlP1 | NtlPall | NtlS1 | NtlAll | PrefetchI | PrefetchR | PrefetchW | CMop => {
            }
            // Zimop: rd = 0 while no extension redefines them.
            MopR | MopRr => set!(0),
            // Zawrs: the wait may end at once for any reason, so it does;
            // in user mode the hart is offered to the other threads first,
            // as a spinning waiter would want.
            WrsNto | WrsSto if FULL => {}
            WrsNto | WrsSto => return Ok(Flow::Exit(Exit::Yield)),
            // A no-op to the architecture; the caller acts on it.
            Marker => {
                let op = rvnvmm_isa::MarkerOp::from_code((ins.imm & 15) as u8);
                return Ok(Flow::Exit(Exit::Marker { op, arg: a }));
            }
            Illegal => return Err(Trap::new(Trap::ILLEGAL, 0)),
            // The register operations whose semantics the instruction table
            // declares (`exec`: the bit-manipulation extensions, Zicond,
            // ...), each an arm of this `match`.
            rvnvmm_isa::executed_ops!() => {
                if let Some(v) = rvnvmm_isa::execute(ins.op, a, b, ins.imm) {
                    set!(v)
                }
            }
            _ => {
                self.fp_dirty()?;
                let v = self.exec_fp(ins, a)?;
                if let Some(v) = v {
                    set!(v)
                }
            }
        }
        Ok(Flow::Next)
    }

    /// `wfi`: illegal in U-mode, and in S-mode under TW. In user-mode
    /// emulation it always exits; in full-system mode only when no enabled
    /// interrupt is pending (else it completes at once).
    #[inline(never)]
    fn wfi<const FULL: bool>(&mut self, now: u64) -> Result<Flow, Trap> {
        let tw = self.csrs.mstatus & mstatus::TW != 0;
        if self.prv == Priv::User || (FULL && self.prv == Priv::Supervisor && tw) {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        if FULL && self.mip_at(self.core.cycles + now) & self.csrs.mie != 0 {
            return Ok(Flow::Next);
        }
        Ok(Flow::Exit(Exit::Wfi))
    }

    /// Cache-control instructions. Without a cache model they only check
    /// permissions and count; `cbo.zero` zeroes its 64-byte block.
    fn cache_op<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        addr: u64,
        done: u64,
        now: u64,
    ) -> Result<(), Trap> {
        let inval_as_flush = self.cache_op_allowed(ins.op)?;
        if ins.op == Op::CboZero {
            let block = rvnvmm_isa::CBOZ_BLOCK_BYTES as u64;
            let base = addr & !(block - 1);
            for off in (0..block).step_by(8) {
                self.store(env, base + off, 8, 0, now)?;
            }
            return Ok(());
        }
        self.stats.flush_insns += 1;
        let hart = self.core.id;
        if ins.op == Op::CflushDL1 && ins.rs1 == 0 {
            // The whole L1D.
            if let Some(t) = env.timing.as_deref_mut() {
                let stall = t.flush_l1d(hart, self.core.cycles + now);
                self.core.cycles += stall;
                self.stats.memory_stall_cycles += stall;
                // Its write-backs are those of evictions: persistent at once.
            } else if env.mem.tracks_persistence() {
                // Without caches every line may be in the L1D.
                env.mem
                    .persist_flush_all(self.core.hart_id, self.instret + done);
            }
            return Ok(());
        }
        // A flush may touch any line a load or store could.
        let paddr = self
            .walk_timed(env, addr, Access::Read, now)
            .map(|(pa, _)| pa)
            .map_err(|t| {
                let cause = if t.is_page_fault() {
                    Trap::STORE_PAGE_FAULT
                } else {
                    Trap::STORE_ACCESS
                };
                Trap::new(cause, addr)
            })?;
        if !self.pmp_allows(paddr & !63, 64, Access::Read) {
            return Err(Trap::new(Trap::STORE_ACCESS, addr));
        }
        if let Some(t) = env.timing.as_deref_mut() {
            let kind = match ins.op {
                Op::CboClean => FlushKind::Clean,
                Op::CboInval if inval_as_flush => FlushKind::Flush,
                Op::CboInval => FlushKind::Inval,
                Op::CboFlush => FlushKind::Flush,
                _ => FlushKind::L1,
            };
            if env.mem.tracks_persistence() {
                // Earlier evictions first: they are persistent already.
                t.take_write_backs(&mut |a| env.mem.persist_write_back(a));
            }
            let stall = t.flush_line(hart, paddr, kind, self.core.cycles + now);
            self.core.cycles += stall;
            self.stats.memory_stall_cycles += stall;
            if env.mem.tracks_persistence() {
                // The flush's own write-back is in flight until a fence
                // (`persist_flush`), not persistent at once.
                let shift = t.data_line_shift();
                t.take_write_backs(&mut |a| {
                    if a >> shift != paddr >> shift {
                        env.mem.persist_write_back(a);
                    }
                });
            }
        }
        // A plain cbo.inval discards the line: nothing is written back.
        let writes_back = ins.op != Op::CboInval || inval_as_flush;
        if writes_back && env.mem.tracks_persistence() {
            let l1_only = ins.op == Op::CflushDL1;
            env.mem
                .persist_flush(self.core.hart_id, paddr, self.instret + done, l1_only);
        }
        Ok(())
    }
}

impl Hart {
    /// Whether a cache-control instruction may run here: M-mode always;
    /// below, `cflush_user` must allow it and, in full-system mode, the
    /// Zicbom/Zicboz enables of `menvcfg` (and `senvcfg` for U-mode). Returns
    /// whether `cbo.inval` is to run as a flush (CBIE = 01).
    #[inline(never)]
    fn cache_op_allowed(&self, op: Op) -> Result<bool, Trap> {
        let illegal = Err(Trap::new(Trap::ILLEGAL, 0));
        if self.prv == Priv::Machine {
            return Ok(false);
        }
        if !self.config.cflush_user {
            return illegal;
        }
        if !self.full_system || op == Op::CflushDL1 {
            return Ok(false);
        }
        let (m, s) = (self.csrs.menvcfg, self.csrs.senvcfg);
        // The enables that apply: menvcfg's, and senvcfg's too from U-mode.
        let both = |bit: u64| m & bit != 0 && (self.prv != Priv::User || s & bit != 0);
        match op {
            Op::CboClean | Op::CboFlush if both(envcfg::CBCFE) => Ok(false),
            Op::CboZero if both(envcfg::CBZE) => Ok(false),
            Op::CboInval => {
                let cbie = |v: u64| (v & envcfg::CBIE) >> envcfg::CBIE_SHIFT;
                let (mi, si) = (cbie(m), cbie(s));
                if mi == 0 || (self.prv == Priv::User && si == 0) {
                    return illegal;
                }
                Ok(mi == 1 || (self.prv == Priv::User && si == 1))
            }
            _ => illegal,
        }
    }
}

/// Where a block goes after one of its instructions.
enum After {
    /// On to the next instruction, at this PC.
    Next(u64),
    /// A taken branch or jump (retired, penalty charged) to this PC: the
    /// block ends.
    Jumped(u64),
    /// Leave `exec_blocks` with this value (the hart is settled).
    Leave(Option<Exit>),
}
