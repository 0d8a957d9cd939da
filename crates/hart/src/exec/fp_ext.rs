//! Zfh/Zfhmin and Zfa computational instructions: the execute file of the
//! optional floating-point extensions, reached from `fp.rs` for what the F
//! and D match leaves.

use crate::{Hart, Trap};
use rvnvmm_fpu as fpu;
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes a Zfh/Zfhmin or Zfa computational instruction (kept apart so
    /// the F and D path above stays as it was). `rm` is the resolved and
    /// validated rounding mode.
    #[inline(never)]
    pub(crate) fn exec_fp_ext(&mut self, ins: &Insn, xa: u64, rm: u8) -> Result<Option<u64>, Trap> {
        let (r1, r2, r3) = (
            self.f[ins.rs1 as usize & 31],
            self.f[ins.rs2 as usize & 31],
            self.f[ins.rs3 as usize & 31],
        );
        let (h1, h2, h3) = (fpu::unbox_f16(r1), fpu::unbox_f16(r2), fpu::unbox_f16(r3));
        let (s1, s2) = (fpu::unbox_f32(r1), fpu::unbox_f32(r2));
        let fl = &mut self.fflags;
        let rd = ins.rd as usize & 31;
        let h = fpu::box_f16;
        let s = fpu::box_f32;
        use Op::*;
        let fres: u64 = match ins.op {
            FaddH => h(fpu::f16_add(h1, h2, rm, fl)),
            FsubH => h(fpu::f16_sub(h1, h2, rm, fl)),
            FmulH => h(fpu::f16_mul(h1, h2, rm, fl)),
            FdivH => h(fpu::f16_div(h1, h2, rm, fl)),
            FsqrtH => h(fpu::f16_sqrt(h1, rm, fl)),
            FmaddH => h(fpu::f16_fmadd(h1, h2, h3, rm, fl)),
            FmsubH => h(fpu::f16_fmsub(h1, h2, h3, rm, fl)),
            FnmsubH => h(fpu::f16_fnmsub(h1, h2, h3, rm, fl)),
            FnmaddH => h(fpu::f16_fnmadd(h1, h2, h3, rm, fl)),
            FsgnjH => h(fpu::f16_sgnj(h1, h2)),
            FsgnjnH => h(fpu::f16_sgnjn(h1, h2)),
            FsgnjxH => h(fpu::f16_sgnjx(h1, h2)),
            FminH => h(fpu::f16_min(h1, h2, fl)),
            FmaxH => h(fpu::f16_max(h1, h2, fl)),
            FcvtHS => h(fpu::f32_to_f16(s1, rm, fl)),
            FcvtHD => h(fpu::f64_to_f16(r1, rm, fl)),
            FcvtSH => s(fpu::f16_to_f32(h1, rm, fl)),
            FcvtDH => fpu::f16_to_f64(h1, rm, fl),
            FcvtHW => h(fpu::i32_to_f16(xa, rm, fl)),
            FcvtHWu => h(fpu::u32_to_f16(xa, rm, fl)),
            FcvtHL => h(fpu::i64_to_f16(xa, rm, fl)),
            FcvtHLu => h(fpu::u64_to_f16(xa, rm, fl)),
            // A transfer: the bits move unchecked, as for fmv.w.x.
            FmvHX => h(xa as u16),
            FliH => h(fpu::fli_f16(ins.rs1)),
            FliS => s(fpu::fli_f32(ins.rs1)),
            FliD => fpu::fli_f64(ins.rs1),
            FminmH => h(fpu::f16_minm(h1, h2, fl)),
            FmaxmH => h(fpu::f16_maxm(h1, h2, fl)),
            FminmS => s(fpu::f32_minm(s1, s2, fl)),
            FmaxmS => s(fpu::f32_maxm(s1, s2, fl)),
            FminmD => fpu::f64_minm(r1, r2, fl),
            FmaxmD => fpu::f64_maxm(r1, r2, fl),
            FroundH => h(fpu::f16_round(h1, rm, fl)),
            FroundnxH => h(fpu::f16_roundnx(h1, rm, fl)),
            FroundS => s(fpu::f32_round(s1, rm, fl)),
            FroundnxS => s(fpu::f32_roundnx(s1, rm, fl)),
            FroundD => fpu::f64_round(r1, rm, fl),
            FroundnxD => fpu::f64_roundnx(r1, rm, fl),
            // Results for the integer register file.
            FcvtWH => return Ok(Some(fpu::f16_to_i32(h1, rm, fl))),
            FcvtWuH => return Ok(Some(fpu::f16_to_u32(h1, rm, fl))),
            FcvtLH => return Ok(Some(fpu::f16_to_i64(h1, rm, fl))),
            FcvtLuH => return Ok(Some(fpu::f16_to_u64(h1, rm, fl))),
            FmvXH => return Ok(Some(r1 as u16 as i16 as i64 as u64)),
            FclassH => return Ok(Some(fpu::f16_class(h1))),
            FeqH => return Ok(Some(fpu::f16_eq(h1, h2, fl) as u64)),
            FltH => return Ok(Some(fpu::f16_lt(h1, h2, fl) as u64)),
            FleH => return Ok(Some(fpu::f16_le(h1, h2, fl) as u64)),
            FltqH => return Ok(Some(fpu::f16_lt_quiet(h1, h2, fl) as u64)),
            FleqH => return Ok(Some(fpu::f16_le_quiet(h1, h2, fl) as u64)),
            FltqS => return Ok(Some(fpu::f32_lt_quiet(s1, s2, fl) as u64)),
            FleqS => return Ok(Some(fpu::f32_le_quiet(s1, s2, fl) as u64)),
            FltqD => return Ok(Some(fpu::f64_lt_quiet(r1, r2, fl) as u64)),
            FleqD => return Ok(Some(fpu::f64_le_quiet(r1, r2, fl) as u64)),
            FcvtmodWD => return Ok(Some(fpu::f64_to_i32_mod(r1, fl))),
            _ => return Err(Trap::new(Trap::ILLEGAL, 0)),
        };
        self.f[rd] = fres;
        Ok(None)
    }
}
