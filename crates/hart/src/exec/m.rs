//! M (`insns/m.rs`): integer multiply and divide.

use crate::trap::Flow;
use crate::{Hart, Trap};
use rvnvmm_isa::bits::sext32;
use rvnvmm_isa::{Insn, Op};

impl Hart {
    /// Executes an M operation (`op`, of `ins`), `a` and `b` the values of
    /// `rs1` and `rs2`.
    #[inline(always)]
    pub(super) fn exec_m(&mut self, ins: &Insn, op: Op, a: u64, b: u64) -> Result<Flow, Trap> {
        use Op::*;
        let v = match op {
            Mul => a.wrapping_mul(b),
            Mulh => ((a as i64 as i128 * b as i64 as i128) >> 64) as u64,
            Mulhsu => ((a as i64 as i128 * b as i128) >> 64) as u64,
            Mulhu => ((a as u128 * b as u128) >> 64) as u64,
            Div => {
                if b == 0 {
                    u64::MAX
                } else {
                    (a as i64).wrapping_div(b as i64) as u64
                }
            }
            Divu => a.checked_div(b).unwrap_or(u64::MAX),
            Rem => {
                if b == 0 {
                    a
                } else {
                    (a as i64).wrapping_rem(b as i64) as u64
                }
            }
            Remu => {
                if b == 0 {
                    a
                } else {
                    a % b
                }
            }
            Mulw => sext32(a.wrapping_mul(b)),
            Divw => {
                let (x, y) = (a as i32, b as i32);
                if y == 0 {
                    u64::MAX
                } else {
                    x.wrapping_div(y) as i64 as u64
                }
            }
            Divuw => {
                let (x, y) = (a as u32, b as u32);
                x.checked_div(y)
                    .map_or(u64::MAX, |q| q as i32 as i64 as u64)
            }
            Remw => {
                let (x, y) = (a as i32, b as i32);
                if y == 0 {
                    x as i64 as u64
                } else {
                    x.wrapping_rem(y) as i64 as u64
                }
            }
            Remuw => {
                let (x, y) = (a as u32, b as u32);
                if y == 0 {
                    x as i32 as i64 as u64
                } else {
                    (x % y) as i32 as i64 as u64
                }
            }
            _ => unreachable!("not an M operation: {op:?}"),
        };
        self.set_rd(ins, v);
        Ok(Flow::Next)
    }
}
