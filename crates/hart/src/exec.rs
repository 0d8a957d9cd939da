//! The interpreter: executes one decoded block. Each instruction goes
//! through `Hart::step`'s one dispatch to its extension's execute file
//! (`exec/NAME.rs` for the table's `insns/NAME.rs`, registered by a rule
//! of `step`'s `arm!`).

mod a;
mod cache;
mod fp;
mod fp_ext;
mod hints;
mod m;
mod marker;
mod mop;
mod privileged;
mod rv64i;
mod zawrs;
mod zicsr;

use crate::trap::Flow;
use crate::TimingModel;
use crate::{Env, Exit, Hart, Trap};
use rvnvmm_isa::{Insn, Op};
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

    /// Executes one instruction: the interpreter's one dispatch,
    /// `rvnvmm_isa::dispatch_ops!`, a `match` with an arm per operation
    /// that sends it to its extension's execute function
    /// (`exec/NAME.rs` for the table's `insns/NAME.rs`), inlined with the
    /// operation a constant: each arm keeps that operation's code alone,
    /// and the `match` is one jump table.
    #[inline(always)]
    pub(crate) fn step<T: TimingModel + ?Sized, const FULL: bool>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        pc: u64,
        done: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        let a = self.x[ins.rs1 as usize & 31];
        let b = self.x[ins.rs2 as usize & 31];
        // The arm of each extension file's operations.
        macro_rules! arm {
            (rv64i, $op:ident) => {
                self.exec_rv64i::<T, FULL>(env, ins, Op::$op, pc, a, b, done, done_cycles)
            };
            (zicsr, $op:ident) => {
                self.exec_zicsr(env, ins, Op::$op, done, done_cycles)
            };
            (m, $op:ident) => {
                self.exec_m(ins, Op::$op, a, b)
            };
            (a, $op:ident) => {{
                self.insn_at = (pc, done);
                self.exec_a(env, ins, Op::$op, a, b, done_cycles)
            }};
            (f, $op:ident) => {{
                if matches!(Op::$op, Op::Fsh | Op::Fsw | Op::Fsd) {
                    self.insn_at = (pc, done);
                }
                self.exec_fp_insn(env, ins, Op::$op, a, done_cycles)
            }};
            (d, $op:ident) => {
                arm!(f, $op)
            };
            (zfh, $op:ident) => {
                arm!(f, $op)
            };
            (zfa, $op:ident) => {
                arm!(f, $op)
            };
            (privileged, $op:ident) => {
                self.exec_privileged::<T, FULL>(env, ins, Op::$op, a, b, done_cycles)
            };
            (cache, $op:ident) => {{
                self.insn_at = (pc, done);
                self.exec_cache(env, ins, a, done, done_cycles)
            }};
            // The register operations whose semantics the instruction
            // table declares (`exec`: the bit-manipulation extensions,
            // Zicond, ...), whatever their file.
            (exec, $op:ident) => {{
                if let Some(v) = rvnvmm_isa::execute(Op::$op, a, b, ins.imm) {
                    self.set_rd(ins, v);
                }
                Ok(Flow::Next)
            }};
            (hints, $op:ident) => {
                Ok(self.exec_hints())
            };
            (mop, $op:ident) => {
                Ok(self.exec_mop(ins, Op::$op))
            };
            (zawrs, $op:ident) => {
                Ok(self.exec_zawrs::<FULL>())
            };
            (marker, $op:ident) => {
                Ok(self.exec_marker(ins, a))
            };
            (illegal, $op:ident) => {
                Err(Trap::new(Trap::ILLEGAL, 0))
            };
        }
        rvnvmm_isa::dispatch_ops!(ins.op, arm)
    }

    /// Writes `v` to the instruction's `rd` (`x0` stays 0). Shared by the
    /// execute files. (It reads `rd` at the write rather than keeping it
    /// in a register across the dispatch: the interpreter loop is short of
    /// registers.)
    #[inline(always)]
    fn set_rd(&mut self, ins: &Insn, v: u64) {
        self.x[ins.rd as usize & 31] = v;
        self.x[0] = 0;
    }

    /// How an instruction that stored goes on: it stops the block when the
    /// store modified code (`stop_block`). Shared by the execute files.
    #[inline(always)]
    fn after_store(&self) -> Flow {
        if self.stop_block {
            Flow::Stop
        } else {
            Flow::Next
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
