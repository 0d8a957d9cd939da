//! Debugger hooks: breakpoints, watchpoints and single steps, checked at
//! instruction granularity.
//!
//! A hart with [`Hart::debug`] set runs its blocks step by step (the path
//! `trace` and exact budgets take) and looks before each instruction
//! whether it must stop there; a hart without it runs as fast as ever.
//! A stop ends [`Hart::run`] with [`crate::Exit::Budget`] before the
//! instruction, leaving the reason in [`Debug::stop`] for the debugger.

use crate::{Hart, Priv};
use rvnvmm_isa::{Insn, Op};
use rvnvmm_mem::sv39::{self, Pte};
use rvnvmm_mem::PhysMem;

/// Which accesses a watchpoint catches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchKind {
    /// Stores (and the store half of AMOs and `sc`).
    Write,
    /// Loads (and the load half of AMOs and `lr`).
    Read,
    /// Both.
    Access,
}

/// A watched range of virtual addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watchpoint {
    /// First byte watched.
    pub addr: u64,
    /// Bytes watched (at least 1).
    pub len: u64,
    /// Accesses that trigger it.
    pub kind: WatchKind,
}

/// Why a hart stopped for the debugger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugStop {
    /// At a breakpoint, before the instruction there.
    Breakpoint,
    /// One instruction retired since the step began (or a trap moved the
    /// PC to its handler).
    Step,
    /// Before an access a watchpoint catches: the watchpoint.
    Watch(Watchpoint),
}

/// The debugger's hold on a hart.
#[derive(Clone, Debug, Default)]
pub struct Debug {
    /// Virtual addresses of breakpoints.
    pub breakpoints: Vec<u64>,
    /// Watchpoints.
    pub watchpoints: Vec<Watchpoint>,
    /// Single-stepping: the instruction count at which the step began.
    pub step_from: Option<u64>,
    /// The instruction count and PC the hart resumed at: a breakpoint or
    /// watchpoint there does not stop it again before it moves on.
    pub resumed_at: Option<(u64, u64)>,
    /// Why the hart stopped, once it has.
    pub stop: Option<DebugStop>,
}

impl Debug {
    /// Whether the hart must stop before `ins` at `pc`, `retired`
    /// instructions into its life; records why.
    fn stops_before(&mut self, ins: &Insn, pc: u64, retired: u64, x: &[u64; 32]) -> bool {
        if self.stop.is_some() {
            return true;
        }
        // One instruction retired, or a trap or interrupt moved the PC to
        // its handler without one: the step is done.
        let moved = self.resumed_at.is_some_and(|(_, at)| at != pc);
        if self.step_from.is_some_and(|from| retired > from || moved) {
            self.stop = Some(DebugStop::Step);
            return true;
        }
        if self.resumed_at == Some((retired, pc)) {
            return false;
        }
        if self.breakpoints.contains(&pc) {
            self.stop = Some(DebugStop::Breakpoint);
            return true;
        }
        if self.watchpoints.is_empty() {
            return false;
        }
        let Some((addr, len, reads, writes)) = data_access(ins, x) else {
            return false;
        };
        let hit = self.watchpoints.iter().find(|w| {
            let kind = match w.kind {
                WatchKind::Write => writes,
                WatchKind::Read => reads,
                WatchKind::Access => reads || writes,
            };
            kind && addr < w.addr.wrapping_add(w.len) && w.addr < addr.wrapping_add(len)
        });
        match hit {
            Some(&w) => {
                self.stop = Some(DebugStop::Watch(w));
                true
            }
            None => false,
        }
    }
}

/// The data access `ins` would make with registers `x`: virtual address,
/// size, whether it reads and whether it writes. `None` for instructions
/// that access no data (cache-block operations included).
fn data_access(ins: &Insn, x: &[u64; 32]) -> Option<(u64, u64, bool, bool)> {
    use Op::*;
    let base = x[ins.rs1 as usize & 31];
    let at = base.wrapping_add(ins.imm as u64);
    let (size, reads, writes) = match ins.op {
        Lb | Lbu => (1, true, false),
        Lh | Lhu | Flh => (2, true, false),
        Lw | Lwu | Flw => (4, true, false),
        Ld | Fld => (8, true, false),
        Sb => (1, false, true),
        Sh | Fsh => (2, false, true),
        Sw | Fsw => (4, false, true),
        Sd | Fsd => (8, false, true),
        LrW => return Some((base, 4, true, false)),
        LrD => return Some((base, 8, true, false)),
        ScW => return Some((base, 4, false, true)),
        ScD => return Some((base, 8, false, true)),
        AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW | AmominuW
        | AmomaxuW => return Some((base, 4, true, true)),
        AmoswapD | AmoaddD | AmoxorD | AmoandD | AmoorD | AmominD | AmomaxD | AmominuD
        | AmomaxuD => return Some((base, 8, true, true)),
        _ => return None,
    };
    Some((at, size, reads, writes))
}

impl Hart {
    /// The physical address `vaddr` maps to in the hart's current address
    /// space, for a debugger: the page tables are only read (no accessed
    /// bits set, no TLB filled, no timing), and any valid leaf counts,
    /// whatever its permissions. M-mode and Bare are untranslated. `None`
    /// if nothing maps it.
    pub fn debug_translate(&self, mem: &PhysMem, vaddr: u64) -> Option<u64> {
        let root = match self.page_table {
            Some(root) if self.prv != Priv::Machine => root,
            _ => return Some(vaddr),
        };
        if !sv39::canonical(vaddr) {
            return None;
        }
        let (_, pte, level) = sv39::find_leaf(mem, root, vaddr)?;
        // A 64 KiB (Svnapot) page, or a 4 KiB, 2 MiB or 1 GiB one.
        let offset_mask = if pte.0 & Pte::N != 0 {
            0xffff
        } else {
            (1u64 << (12 + 9 * level)) - 1
        };
        Some((pte.paddr() & !offset_mask) | (vaddr & offset_mask))
    }

    /// Whether the debugger stops the hart before `ins` at `pc`, the
    /// `i`-th instruction of the block being run.
    #[cold]
    #[inline(never)]
    pub(crate) fn debug_stops_before(&mut self, ins: &Insn, pc: u64, i: usize) -> bool {
        let retired = self.instret + i as u64;
        let x = self.x;
        self.debug
            .as_mut()
            .is_some_and(|d| d.stops_before(ins, pc, retired, &x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvnvmm_isa::decode;
    use rvnvmm_isa::encode::{addi, ld, sd};

    #[test]
    fn debug_translation_reads_the_page_tables_only() {
        use crate::HartConfig;
        let mut mem = PhysMem::new(&[(0x8000_0000, 1 << 20)]).unwrap();
        let root = 0x8000_0000;
        let (l1, l0) = (root + 0x1000, root + 0x2000);
        let table = |pa: u64| (pa >> 12) << 10 | Pte::V;
        // vaddr 0x40_0000 -> frame 0x8001_0000, a 4 KiB user page.
        assert!(mem.write(root, &table(l1).to_le_bytes()));
        assert!(mem.write(l1 + 2 * 8, &table(l0).to_le_bytes()));
        let leaf = Pte::leaf(0x8001_0000, Pte::V | Pte::R | Pte::U).0;
        assert!(mem.write(l0, &leaf.to_le_bytes()));
        let mut h = Hart::new(HartConfig::default());
        h.page_table = Some(root);
        assert_eq!(h.debug_translate(&mem, 0x40_0123), Some(0x8001_0123));
        assert_eq!(h.debug_translate(&mem, 0x40_1000), None);
        // The accessed bit stays clear.
        assert_eq!(mem.read_u64(l0), Some(leaf));
        h.prv = Priv::Machine;
        assert_eq!(h.debug_translate(&mem, 0x40_0123), Some(0x40_0123));
    }

    #[test]
    fn breakpoint_stops_unless_just_resumed_there() {
        let mut d = Debug {
            breakpoints: vec![0x1000],
            ..Debug::default()
        };
        let nop = decode(addi(0, 0, 0));
        let x = [0; 32];
        assert!(!d.stops_before(&nop, 0xffc, 5, &x));
        d.resumed_at = Some((6, 0x1000));
        assert!(!d.stops_before(&nop, 0x1000, 6, &x));
        assert!(d.stops_before(&nop, 0x1000, 9, &x));
        assert_eq!(d.stop, Some(DebugStop::Breakpoint));
    }

    #[test]
    fn step_stops_after_one_instruction() {
        let mut d = Debug {
            step_from: Some(10),
            resumed_at: Some((10, 0x40)),
            ..Debug::default()
        };
        let nop = decode(addi(0, 0, 0));
        let x = [0; 32];
        assert!(!d.stops_before(&nop, 0x40, 10, &x));
        assert!(d.stops_before(&nop, 0x44, 11, &x));
        assert_eq!(d.stop, Some(DebugStop::Step));
    }

    #[test]
    fn watchpoints_match_overlapping_accesses_of_their_kind() {
        let w = Watchpoint {
            addr: 0x2004,
            len: 4,
            kind: WatchKind::Write,
        };
        let mut d = Debug {
            watchpoints: vec![w],
            ..Debug::default()
        };
        let mut x = [0; 32];
        x[10] = 0x2000;
        // A load of the doubleword over it is not a write.
        assert!(!d.stops_before(&decode(ld(5, 10, 0)), 0, 0, &x));
        // A store to the doubleword before it misses.
        assert!(!d.stops_before(&decode(sd(5, 10, -8)), 0, 0, &x));
        assert!(d.stops_before(&decode(sd(5, 10, 0)), 0, 0, &x));
        assert_eq!(d.stop, Some(DebugStop::Watch(w)));
    }
}
