//! Cache control (`insns/cache.rs`): SiFive `cflush.d.l1`, Zicbom's
//! `cbo.clean/flush/inval` and Zicboz's `cbo.zero`.

use crate::privileged::envcfg;
use crate::trap::Flow;
use crate::{Env, FlushKind, Hart, Priv, TimingModel, Trap};
use rvnvmm_isa::{Insn, Op};
use rvnvmm_mem::sv39::Access;

impl Hart {
    /// Executes a cache-control instruction (`ins`), `a` the value of
    /// `rs1` (the address), `done` and `done_cycles` the block's
    /// instructions and cycles before it.
    #[inline(always)]
    pub(super) fn exec_cache<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        ins: &Insn,
        a: u64,
        done: u64,
        done_cycles: u64,
    ) -> Result<Flow, Trap> {
        self.cache_op(env, ins, a, done, done_cycles)?;
        Ok(self.after_store())
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
                    .persist_flush_all(self.core.hart_id, self.insn_at.0, self.instret + done);
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
            self.note_calls(env);
            let l1_only = ins.op == Op::CflushDL1;
            env.mem.persist_flush(
                self.core.hart_id,
                self.insn_at.0,
                paddr,
                self.instret + done,
                l1_only,
            );
        }
        Ok(())
    }
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
