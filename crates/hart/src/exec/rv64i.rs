//! RV64I (`insns/rv64i.rs`): jumps, branches, loads, stores, the integer
//! register operations, `fence`, `fence.i` (Zifencei), `ecall` and
//! `ebreak`.

use crate::trap::Flow;
use crate::{Env, Exit, Hart, TimingModel, Trap};
use rvnvmm_isa::bits::sext32;
use rvnvmm_isa::{FenceSets, Insn, Op};

impl Hart {
    /// Executes an RV64I operation (`op`, of `ins`), `a` and `b` the values
    /// of `rs1` and `rs2`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_rv64i<T: TimingModel + ?Sized, const FULL: bool>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        op: Op,
        pc: u64,
        a: u64,
        b: u64,
        done: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        let imm = ins.imm as u64;
        macro_rules! set {
            ($v:expr) => {
                self.set_rd(ins, $v)
            };
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
                self.insn_at = (pc, done);
                self.store(env, a.wrapping_add(imm), $size, b, done_cycles)?;
                return Ok(self.after_store());
            }};
        }
        use Op::*;
        match op {
            Lui => set!(imm),
            Auipc => set!(pc.wrapping_add(imm)),
            Jal => {
                set!(pc + ins.len as u64);
                if let Some(calls) = self.calls.as_deref_mut() {
                    if crate::calls::is_link(ins.rd) {
                        calls.call(pc + ins.len as u64);
                    }
                }
                // The block continues at the target when decoding followed
                // the jump; otherwise the jal is its last instruction.
                return Ok(Flow::Goto(pc.wrapping_add(imm)));
            }
            Jalr => {
                let target = a.wrapping_add(imm) & !1;
                set!(pc + ins.len as u64);
                if let Some(calls) = self.calls.as_deref_mut() {
                    if crate::calls::is_link(ins.rd) {
                        calls.call(pc + ins.len as u64);
                    } else if crate::calls::is_link(ins.rs1) {
                        calls.ret(target);
                    }
                }
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
                self.note_calls(env);
                env.mem
                    .persist_fence(self.core.hart_id, pc, self.instret + done);
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
            _ => unreachable!("not an RV64I operation: {op:?}"),
        }
        Ok(Flow::Next)
    }
}
