//! The floating-point extensions (`insns/f.rs`, `d.rs`, `zfh.rs`,
//! `zfa.rs`): their loads and stores, and F and D's computational
//! instructions (Zfh/Zfhmin and Zfa's in `fp_ext.rs`).

use crate::trap::Flow;
use crate::{Env, Hart, TimingModel, Trap};
use rvnvmm_fpu as fpu;
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes an F, D, Zfh/Zfhmin or Zfa instruction (`op`, of `ins`),
    /// `a` the value of `rs1` (a load's or store's base address),
    /// `done_cycles` the block's cycles before it.
    #[inline(always)]
    pub(super) fn exec_fp_insn<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        op: Op,
        a: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        let addr = a.wrapping_add(ins.imm as u64);
        macro_rules! load {
            ($size:expr, $boxed:expr) => {{
                self.fp_dirty()?;
                let v = self.load(env, addr, $size, done_cycles)?;
                self.f[ins.rd as usize & 31] = $boxed(v);
                Ok(Flow::Next)
            }};
        }
        macro_rules! store {
            ($size:expr) => {{
                self.fp_dirty()?;
                let v = self.f[ins.rs2 as usize & 31];
                self.store(env, addr, $size, v, done_cycles)?;
                Ok(self.after_store())
            }};
        }
        match op {
            Op::Flh => load!(2, |v: u64| fpu::box_f16(v as u16)),
            Op::Flw => load!(4, |v: u64| fpu::box_f32(v as u32)),
            Op::Fld => load!(8, |v: u64| v),
            Op::Fsh => store!(2),
            Op::Fsw => store!(4),
            Op::Fsd => store!(8),
            _ => self.exec_fp_computation(ins, a),
        }
    }

    /// Executes an F, D, Zfh/Zfhmin or Zfa computational instruction, `a`
    /// the value of `rs1`. Out of line: the dispatch has an arm per
    /// operation, and so would a copy of this.
    #[inline(never)]
    fn exec_fp_computation(&mut self, ins: &Insn, a: u64) -> Result<Flow, Trap> {
        self.fp_dirty()?;
        if let Some(v) = self.exec_fp(ins, a)? {
            self.set_rd(ins, v);
        }
        Ok(Flow::Next)
    }

    /// Executes an F/D computational instruction. Returns the value for the
    /// integer destination register when the instruction writes one.
    pub(crate) fn exec_fp(&mut self, ins: &Insn, xa: u64) -> Result<Option<u64>, Trap> {
        self.fp_compute(ins, xa)
    }

    /// The body of [`exec_fp`](Self::exec_fp), also called by the
    /// translating engine's per-operation helpers with a constant `op`
    /// (inlined, so each helper keeps only its own arm). Changes nothing
    /// when it returns an error (the rounding mode is checked first).
    #[inline(always)]
    pub(crate) fn fp_compute(&mut self, ins: &Insn, xa: u64) -> Result<Option<u64>, Trap> {
        let rm = match ins.rounding_mode() {
            7 => self.frm,
            rm => rm,
        };
        let needs_rm = uses_rm(ins.op);
        if needs_rm && rm > 4 {
            return Err(Trap::new(Trap::ILLEGAL, 0));
        }
        let (r1, r2, r3) = (
            self.f[ins.rs1 as usize & 31],
            self.f[ins.rs2 as usize & 31],
            self.f[ins.rs3 as usize & 31],
        );
        let (s1, s2, s3) = (fpu::unbox_f32(r1), fpu::unbox_f32(r2), fpu::unbox_f32(r3));
        let fl = &mut self.fflags;
        let rd = ins.rd as usize & 31;
        use Op::*;
        let fres: u64 = match ins.op {
            FaddS => fpu::box_f32(fpu::f32_add(s1, s2, rm, fl)),
            FsubS => fpu::box_f32(fpu::f32_sub(s1, s2, rm, fl)),
            FmulS => fpu::box_f32(fpu::f32_mul(s1, s2, rm, fl)),
            FdivS => fpu::box_f32(fpu::f32_div(s1, s2, rm, fl)),
            FsqrtS => fpu::box_f32(fpu::f32_sqrt(s1, rm, fl)),
            FmaddS => fpu::box_f32(fpu::f32_fmadd(s1, s2, s3, rm, fl)),
            FmsubS => fpu::box_f32(fpu::f32_fmsub(s1, s2, s3, rm, fl)),
            FnmsubS => fpu::box_f32(fpu::f32_fnmsub(s1, s2, s3, rm, fl)),
            FnmaddS => fpu::box_f32(fpu::f32_fnmadd(s1, s2, s3, rm, fl)),
            FsgnjS => fpu::box_f32(fpu::f32_sgnj(s1, s2)),
            FsgnjnS => fpu::box_f32(fpu::f32_sgnjn(s1, s2)),
            FsgnjxS => fpu::box_f32(fpu::f32_sgnjx(s1, s2)),
            FminS => fpu::box_f32(fpu::f32_min(s1, s2, fl)),
            FmaxS => fpu::box_f32(fpu::f32_max(s1, s2, fl)),
            FcvtSW => fpu::box_f32(fpu::i32_to_f32(xa, rm, fl)),
            FcvtSWu => fpu::box_f32(fpu::u32_to_f32(xa, rm, fl)),
            FcvtSL => fpu::box_f32(fpu::i64_to_f32(xa, rm, fl)),
            FcvtSLu => fpu::box_f32(fpu::u64_to_f32(xa, rm, fl)),
            FmvWX => fpu::box_f32(xa as u32),
            FcvtSD => fpu::box_f32(fpu::f64_to_f32(r1, rm, fl)),
            FaddD => fpu::f64_add(r1, r2, rm, fl),
            FsubD => fpu::f64_sub(r1, r2, rm, fl),
            FmulD => fpu::f64_mul(r1, r2, rm, fl),
            FdivD => fpu::f64_div(r1, r2, rm, fl),
            FsqrtD => fpu::f64_sqrt(r1, rm, fl),
            FmaddD => fpu::f64_fmadd(r1, r2, r3, rm, fl),
            FmsubD => fpu::f64_fmsub(r1, r2, r3, rm, fl),
            FnmsubD => fpu::f64_fnmsub(r1, r2, r3, rm, fl),
            FnmaddD => fpu::f64_fnmadd(r1, r2, r3, rm, fl),
            FsgnjD => fpu::f64_sgnj(r1, r2),
            FsgnjnD => fpu::f64_sgnjn(r1, r2),
            FsgnjxD => fpu::f64_sgnjx(r1, r2),
            FminD => fpu::f64_min(r1, r2, fl),
            FmaxD => fpu::f64_max(r1, r2, fl),
            FcvtDS => fpu::f32_to_f64(s1, rm, fl),
            FcvtDW => fpu::i32_to_f64(xa, rm, fl),
            FcvtDWu => fpu::u32_to_f64(xa, rm, fl),
            FcvtDL => fpu::i64_to_f64(xa, rm, fl),
            FcvtDLu => fpu::u64_to_f64(xa, rm, fl),
            FmvDX => xa,
            // Results for the integer register file.
            FcvtWS => return Ok(Some(fpu::f32_to_i32(s1, rm, fl))),
            FcvtWuS => return Ok(Some(fpu::f32_to_u32(s1, rm, fl))),
            FcvtLS => return Ok(Some(fpu::f32_to_i64(s1, rm, fl))),
            FcvtLuS => return Ok(Some(fpu::f32_to_u64(s1, rm, fl))),
            FmvXW => return Ok(Some(r1 as u32 as i32 as i64 as u64)),
            FclassS => return Ok(Some(fpu::f32_class(s1))),
            FeqS => return Ok(Some(fpu::f32_eq(s1, s2, fl) as u64)),
            FltS => return Ok(Some(fpu::f32_lt(s1, s2, fl) as u64)),
            FleS => return Ok(Some(fpu::f32_le(s1, s2, fl) as u64)),
            FcvtWD => return Ok(Some(fpu::f64_to_i32(r1, rm, fl))),
            FcvtWuD => return Ok(Some(fpu::f64_to_u32(r1, rm, fl))),
            FcvtLD => return Ok(Some(fpu::f64_to_i64(r1, rm, fl))),
            FcvtLuD => return Ok(Some(fpu::f64_to_u64(r1, rm, fl))),
            FmvXD => return Ok(Some(r1)),
            FclassD => return Ok(Some(fpu::f64_class(r1))),
            FeqD => return Ok(Some(fpu::f64_eq(r1, r2, fl) as u64)),
            FltD => return Ok(Some(fpu::f64_lt(r1, r2, fl) as u64)),
            FleD => return Ok(Some(fpu::f64_le(r1, r2, fl) as u64)),
            _ => return self.exec_fp_ext(ins, xa, rm),
        };
        self.f[rd] = fres;
        Ok(None)
    }
}

/// Whether the operation has a rounding-mode field that must be valid.
fn uses_rm(op: Op) -> bool {
    use Op::*;
    !matches!(
        op,
        FsgnjS
            | FsgnjnS
            | FsgnjxS
            | FminS
            | FmaxS
            | FmvXW
            | FclassS
            | FeqS
            | FltS
            | FleS
            | FmvWX
            | FsgnjD
            | FsgnjnD
            | FsgnjxD
            | FminD
            | FmaxD
            | FmvXD
            | FclassD
            | FeqD
            | FltD
            | FleD
            | FmvDX
            | FsgnjH
            | FsgnjnH
            | FsgnjxH
            | FminH
            | FmaxH
            | FmvXH
            | FclassH
            | FeqH
            | FltH
            | FleH
            | FmvHX
            | FliH
            | FliS
            | FliD
            | FminmH
            | FmaxmH
            | FminmS
            | FmaxmS
            | FminmD
            | FmaxmD
            | FleqH
            | FltqH
            | FleqS
            | FltqS
            | FleqD
            | FltqD
    )
}
