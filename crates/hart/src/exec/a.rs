//! A (`insns/a.rs`): load-reserved, store-conditional and the AMOs.

use crate::memory::{read_host, write_le};
use crate::trap::Flow;
use crate::{Env, Hart, TimingModel, Trap};
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes an A operation (`op`, of `ins`), `a` (the address) and `b`
    /// the values of `rs1` and `rs2`.
    #[inline(always)]
    pub(super) fn exec_a<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        op: Op,
        a: u64,
        b: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        macro_rules! amo_w {
            ($f:expr) => {{
                let (p, paddr) = self.rmw_ptr(env, a, 4, done_cycles)?;
                self.stats.atomics.amos += 1;
                // SAFETY: rmw_ptr returned an aligned, writable 4-byte location in RAM.
                let old = unsafe { read_host(p, 4) } as u32;
                let f: fn(u32, u32) -> u32 = $f;
                // SAFETY: as above.
                unsafe { write_le(p, 4, f(old, b as u32) as u64) };
                self.trace_store(env, paddr, 4);
                self.set_rd(ins, old as i32 as i64 as u64);
                Ok(self.after_store())
            }};
        }
        macro_rules! amo_d {
            ($f:expr) => {{
                let (p, paddr) = self.rmw_ptr(env, a, 8, done_cycles)?;
                self.stats.atomics.amos += 1;
                // SAFETY: rmw_ptr returned an aligned, writable 8-byte location in RAM.
                let old = unsafe { read_host(p, 8) };
                let f: fn(u64, u64) -> u64 = $f;
                // SAFETY: as above.
                unsafe { write_le(p, 8, f(old, b)) };
                self.trace_store(env, paddr, 8);
                self.set_rd(ins, old);
                Ok(self.after_store())
            }};
        }
        use Op::*;
        match op {
            LrW | LrD => {
                let size = if op == LrW { 4 } else { 8 };
                if a & (size - 1) != 0 {
                    return Err(Trap::new(Trap::LOAD_MISALIGNED, a));
                }
                let v = self.load_reserved(env, a, size, done_cycles)?;
                self.reservation = Some((a, v));
                self.stats.atomics.lr += 1;
                self.set_rd(ins, if size == 4 { v as i32 as i64 as u64 } else { v });
                Ok(Flow::Next)
            }
            ScW | ScD => {
                let size = if op == ScW { 4 } else { 8 };
                let (p, paddr) = self.rmw_ptr(env, a, size, done_cycles)?;
                // SAFETY: rmw_ptr returned an aligned, writable location in RAM.
                let cur = unsafe { read_host(p, size) };
                let ok = self.reservation.take() == Some((a, cur));
                self.stats.atomics.sc += 1;
                self.stats.atomics.sc_failures += !ok as u64;
                if ok {
                    // SAFETY: as above.
                    unsafe { write_le(p, size, b) };
                    self.trace_store(env, paddr, size);
                }
                self.set_rd(ins, !ok as u64);
                Ok(self.after_store())
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
            _ => unreachable!("not an A operation: {op:?}"),
        }
    }
}
