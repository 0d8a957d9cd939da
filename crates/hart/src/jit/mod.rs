//! The translating engine (`Engine::Jit`): hot blocks become x86-64 code.
//!
//! A translation is attached to its decoded [`Block`](crate::Block) and
//! goes when the code cache is flushed. It runs the block's instructions
//! in order: integer ALU operations, `lui`/`auipc`/`jal` and conditional
//! branches inline on the hart's registers; every other instruction through
//! a helper that runs the interpreter's `step` for that one instruction,
//! with the same arguments the interpreter passes. The translation neither
//! counts instructions nor cycles: it returns where the block ended and
//! why, and the interpreter's own bookkeeping (`Hart::exec_blocks`) retires
//! and charges exactly as it would have. So both engines agree at every
//! exit by construction.
//!
//! Used in the functional model in user-mode emulation, outside tracing,
//! exact stops and SMT cores; everything else runs on the interpreter.

mod arena;
mod x86;

pub use arena::{ArenaError, ExecArena};

use crate::exec::Flow;
use crate::tlb::TlbEntry;
use crate::{Env, Hart, TimingModel, Trap};
use rvnvmm_isa::{Insn, Op};
use x86::{Alu, Asm, Cond, Reg, Shift};

/// Executions of a block before it is translated: cold code costs nothing.
pub const HOT_THRESHOLD: u32 = 16;

/// A translation's result: the block ran to its end.
pub(crate) const END: u32 = 0;
/// A conditional branch at the index in the low 16 bits was taken.
pub(crate) const TAKEN: u32 = 1 << 16;
/// The helper at the index in the low 16 bits left the block; its result
/// is in [`JitCtx::result`].
pub(crate) const HELPER: u32 = 2 << 16;

/// The entry point of a translation: `(registers, context) -> outcome`.
pub(crate) type Entry = unsafe extern "C" fn(*mut u64, *mut JitCtx) -> u32;

/// A block's host code.
pub struct Translation {
    entry: Entry,
    /// `pcs[i]`: the PC of instruction `i`; `pcs[len]`: where the block
    /// goes on after its last instruction.
    pub(crate) pcs: Box<[u64]>,
}

impl std::fmt::Debug for Translation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Translation")
            .field("entry", &(self.entry as *const u8))
            .finish()
    }
}

impl Translation {
    /// The entry point.
    pub(crate) fn entry(&self) -> Entry {
        self.entry
    }
}

/// What translated code and its helper share during one block. `repr(C)`:
/// the code calls the helper through the first field.
#[repr(C)]
pub(crate) struct JitCtx {
    step: unsafe extern "C" fn(*mut JitCtx, u32) -> u64,
    /// The hart's load and store TLB tables, read by the inline lookups
    /// (refreshed after every helper call).
    read_tlb: *const TlbEntry,
    write_tlb: *const TlbEntry,
    hart: *mut Hart,
    /// An `Env<'_, T>` of the `T` `step` was instantiated for.
    env: *mut (),
    insns: *const [Insn],
    cost: *const [u32],
    pcs: *const [u64],
    /// The result of the instruction that made the helper leave the block.
    pub(crate) result: Option<Result<Flow, Trap>>,
}

impl JitCtx {
    /// A context for running a translation of the block with `insns`,
    /// `cost` and `pcs` on `hart` in `env`.
    pub(crate) fn new<T: TimingModel>(
        hart: *mut Hart,
        env: *mut Env<'_, T>,
        insns: *const [Insn],
        cost: *const [u32],
        pcs: *const [u64],
    ) -> JitCtx {
        // SAFETY: the caller passes the live hart.
        let tlb = unsafe { &(*hart).tlb };
        JitCtx {
            step: step_helper::<T>,
            read_tlb: tlb.read.entries_ptr(),
            write_tlb: tlb.write.entries_ptr(),
            hart,
            env: env.cast(),
            insns,
            cost,
            pcs,
            result: None,
        }
    }
}

/// Runs instruction `i` of the block through the interpreter. Returns 0 to
/// go on with the next instruction, 1 when the block ends here (the result
/// is left in the context).
///
/// # Safety
/// `ctx` points to a live `JitCtx` made by [`JitCtx::new`] with this `T`,
/// whose pointers are valid and not otherwise borrowed, and `i` is an index
/// of its block.
unsafe extern "C" fn step_helper<T: TimingModel>(ctx: *mut JitCtx, i: u32) -> u64 {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: as above; `env` was an `Env<'_, T>`.
    let (hart, env) = unsafe { (&mut *ctx.hart, &mut *ctx.env.cast::<Env<'_, T>>()) };
    let i = i as usize;
    // SAFETY: the block's arrays outlive the translation's run.
    let (ins, cost, pc) = unsafe { (&(*ctx.insns)[i], (*ctx.cost)[i], (*ctx.pcs)[i]) };
    let result = hart.step::<T, false>(env, ins, pc, i as u64, cost as u64);
    ctx.read_tlb = hart.tlb.read.entries_ptr();
    ctx.write_tlb = hart.tlb.write.entries_ptr();
    match result {
        Ok(Flow::Next) | Ok(Flow::Goto(_)) => 0,
        other => {
            ctx.result = Some(other);
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

/// Translates the block at `start` with `insns`, placing the code in
/// `arena`.
pub(crate) fn translate(
    arena: &mut ExecArena,
    start: u64,
    insns: &[Insn],
) -> Result<Translation, ArenaError> {
    let pcs = block_pcs(start, insns);
    let mut asm = Asm::default();
    asm.prologue();
    for (i, ins) in insns.iter().enumerate() {
        emit(&mut asm, ins, i as u32, pcs[i]);
    }
    asm.exit(END);
    let code = asm.finish();
    let at = arena.place(&code)?;
    // SAFETY: `at` is the start of the code just placed, a function with
    // the System V signature of `Entry` (prologue, body, epilogue).
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(at) };
    Ok(Translation { entry, pcs })
}

/// Where the context holds the load TLB table.
const READ_TLB: u8 = std::mem::offset_of!(JitCtx, read_tlb) as u8;
/// Where the context holds the store TLB table.
const WRITE_TLB: u8 = std::mem::offset_of!(JitCtx, write_tlb) as u8;

/// How an inline operation gets its second operand.
enum Src {
    Reg,
    Imm,
}

/// Emits instruction `i` at `pc`.
fn emit(asm: &mut Asm, ins: &Insn, i: u32, pc: u64) {
    use Op::*;
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
        asm.exit_if(cond, TAKEN | i);
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
    let sh32 = |op: Shift| {
        move |asm: &mut Asm| {
            asm.shift(op, false);
            asm.sext32();
        }
    };
    // Loads and stores: the software-TLB hit inline (as `Hart::load` and
    // `Hart::store` without a timing model), anything else through the
    // helper, which takes the interpreter's slow path.
    let load = |asm: &mut Asm, size: u64, signed: bool| {
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, READ_TLB, size);
        asm.load_host(size, signed);
        if ins.rd & 31 != 0 {
            asm.store_guest(ins.rd);
        }
        let done = asm.jump();
        asm.here(miss);
        asm.call_helper(i, HELPER | i);
        asm.here(done);
    };
    let store = |asm: &mut Asm, size: u64| {
        let miss = asm.tlb_lookup(ins.rs1, ins.imm as i32, WRITE_TLB, size);
        asm.load_guest(Reg::Rcx, ins.rs2);
        asm.store_host(size);
        let done = asm.jump();
        asm.here(miss);
        asm.call_helper(i, HELPER | i);
        asm.here(done);
    };
    match ins.op {
        Lui => constant(asm, imm),
        Auipc => constant(asm, pc.wrapping_add(imm)),
        Jal => constant(asm, pc.wrapping_add(ins.len as u64)),
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
        _ => asm.call_helper(i, HELPER | i),
    }
}

#[cfg(test)]
mod tests;
