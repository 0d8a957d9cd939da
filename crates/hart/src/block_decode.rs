//! Block decoding: fetching a block's instructions through the fetch TLB,
//! decoding them (`rvnvmm_isa::decode_for`) and timing them (its cost
//! prefix sums and fetch lines), into the code cache. The one module that
//! knows how a block is formed; `code` only keeps blocks, and `memory` only
//! translates addresses.

use crate::code::{Block, CodeCache, FetchLines, MAX_BLOCK_INSNS, NO_NEXT_PAGE};
use crate::memory::read_le;
use crate::{CoreCosts, Env, Hart, TimingModel, Trap};
use rvnvmm_isa::{decode_for, Insn, Op};
use rvnvmm_mem::sv39::Access;
use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_SIZE};

impl Hart {
    /// Fetches the halfword at `vaddr`: its value and physical address.
    fn fetch_u16<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
    ) -> Result<(u16, u64), Trap> {
        let (p, paddr) = match self.tlb.exec.lookup_paddr(vaddr, 2) {
            Some(hit) => hit,
            None => self.refill(env, vaddr, 2, Access::Exec, 0)?,
        };
        // SAFETY: an aligned 2-byte read inside a RAM page.
        Ok((unsafe { read_le(p, 2) } as u16, paddr))
    }

    /// Decodes the block at `pc` into the code cache under `key` (the PC in
    /// user-mode emulation, its physical address in full-system mode).
    pub(crate) fn decode_block<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        key: u64,
    ) -> Result<u32, Trap> {
        let start = self.pc;
        if start & 1 != 0 {
            return Err(Trap::new(Trap::INSN_MISALIGNED, start));
        }
        // Not the hardware's walk: the fetches below go through the TLB.
        let ppage = self.translate(env.mem, start, Access::Exec)? & !0xfff;
        if !env.mem.is_ram(ppage, PAGE_SIZE) {
            return Err(Trap::new(Trap::INSN_ACCESS, start));
        }
        let mut insns = Vec::with_capacity(16);
        let mut raws = Vec::with_capacity(16);
        let mut next_ppage = None;
        let mut pc = start;
        loop {
            let lo = match self.fetch_u16(env, pc) {
                Ok((v, _)) => v,
                Err(t) if insns.is_empty() => return Err(t),
                Err(_) => break,
            };
            let raw = if lo & 3 == 3 {
                // Physically keyed blocks depend on one page only, except
                // one that starts with an instruction straddling two.
                if self.full_system && page_offset(pc) == PAGE_SIZE - 2 && !insns.is_empty() {
                    break;
                }
                match self.fetch_u16(env, pc + 2) {
                    Ok((hi, pa)) => {
                        if page_base(pa) != ppage {
                            next_ppage = Some(page_base(pa));
                        }
                        lo as u32 | (hi as u32) << 16
                    }
                    Err(t) if insns.is_empty() => return Err(Trap::new(t.cause, pc + 2)),
                    Err(_) => break,
                }
            } else {
                lo as u32
            };
            let insn = decode_for(raw, self.config.isa);
            let ends = ends_block(insn.op);
            insns.push(insn);
            raws.push(raw);
            let at = pc;
            pc += insn.len as u64;
            if insn.op == Op::Jal
                && insns.len() < MAX_BLOCK_INSNS
                && page_offset(pc) >= insn.len as u64
            {
                // A direct jump within the page: keep decoding at its target
                // (the interpreter follows it without leaving the block).
                let target = at.wrapping_add(insn.imm as u64);
                if page_base(target) == page_base(start) {
                    pc = target;
                    continue;
                }
            }
            // Stop at the page end (a 4-byte instruction straddling it is the
            // last one) so one exec check covers the block.
            if ends
                || insns.len() >= MAX_BLOCK_INSNS
                || page_offset(pc) < insn.len as u64
                || page_offset(pc) == 0
            {
                break;
            }
        }
        let (idx, new_page) = env.code.insert(
            key,
            Block {
                pc: start,
                cost: crate::cost::prefix(&self.core.costs, &insns),
                // Without a model nothing is fetched through a cache.
                fetch_lines: match env.timing.as_deref() {
                    Some(t) => fetch_lines(start, &insns, t.fetch_line_shift()),
                    None => FetchLines::default(),
                },
                insns: insns.into_boxed_slice(),
                raw: raws.into_boxed_slice(),
                next_ppage: next_ppage.unwrap_or(NO_NEXT_PAGE),
                runs: 0,
                translation: None,
                parked: None,
            },
            ppage,
        );
        let mut marked = new_page;
        if new_page {
            self.flush_write_ppage(ppage);
        }
        // The second half of a straddling instruction is code too: stores
        // to it must invalidate the block.
        if let Some(np) = next_ppage {
            if env.code.pages.mark(np) {
                self.flush_write_ppage(np);
                marked = true;
            }
        }
        if marked {
            self.code_generation = env.code.pages.generation;
        }
        Ok(idx)
    }
}

impl CodeCache {
    /// Re-times every block for a change of model within a run: its
    /// instructions' costs from `costs`, and its fetch lines for a timing
    /// model with `fetch_line_shift` (`None`: no model, nothing fetched
    /// through a cache). See [`CodeCache::retime_with`].
    pub fn retime(&mut self, costs: &CoreCosts, fetch_line_shift: Option<u32>) {
        self.retime_with((costs.clone(), fetch_line_shift), |b| {
            (
                crate::cost::prefix(costs, &b.insns),
                match fetch_line_shift {
                    Some(shift) => fetch_lines(b.pc, &b.insns, shift),
                    None => FetchLines::default(),
                },
            )
        });
    }

    /// [`retime`](Self::retime) for running under `model` (`None`:
    /// functional).
    pub fn retime_for<M: TimingModel + ?Sized>(&mut self, costs: &CoreCosts, model: Option<&M>) {
        self.retime(costs, model.map(|m| m.fetch_line_shift()));
    }
}

/// The distinct fetch lines of `1 << line_shift` bytes (as page offsets) a
/// block's instructions come from, in first-use order: what the
/// instruction cache sees per execution.
pub(crate) fn fetch_lines(start: u64, insns: &[Insn], line_shift: u32) -> FetchLines {
    let mut lines: Vec<u16> = Vec::new();
    let mut pc = start;
    let line_mask = (1u64 << line_shift.min(12)) - 1;
    for ins in insns {
        for a in [pc, pc + ins.len as u64 - 1] {
            let off = (page_offset(a) & !line_mask) as u16;
            if page_base(a) == page_base(start) && !lines.contains(&off) {
                lines.push(off);
            }
        }
        pc = if ins.op == Op::Jal {
            pc.wrapping_add(ins.imm as u64)
        } else {
            pc + ins.len as u64
        };
    }
    lines[..].into()
}

/// Whether an operation must be the last of its block. Conditional
/// branches are not: a block continues on their fall-through path (a
/// superblock), and a taken branch leaves it.
fn ends_block(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        Jal | Jalr
            | Ecall
            | Ebreak
            | FenceI
            | Mret
            | Sret
            | Wfi
            | Marker
            | SfenceVma
            | Illegal
            | Csrrw
            | Csrrs
            | Csrrc
            | Csrrwi
            | Csrrsi
            | Csrrci
    )
}
