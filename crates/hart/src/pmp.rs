//! Physical memory protection (privileged spec §3.7): 64 entries with
//! 4-byte granularity, OFF/TOR/NA4/NAPOT matching and the L bit.
//!
//! Checks run only on the hart's slow paths: a TLB entry is filled only when
//! one decision covers its whole 4 KiB page, so a hit needs no check.

use crate::Priv;
use rvnvmm_mem::sv39::Access;

/// Number of entries.
pub const PMP_ENTRIES: usize = 64;

const R: u8 = 1 << 0;
const W: u8 = 1 << 1;
const X: u8 = 1 << 2;
const A_SHIFT: u32 = 3;
const L: u8 = 1 << 7;
const A_OFF: u8 = 0;
const A_TOR: u8 = 1;
const A_NA4: u8 = 2;
const A_NAPOT: u8 = 3;
/// Writable bits of `pmpaddr`: physical address bits 55..2.
const ADDR_MASK: u64 = (1 << 54) - 1;

/// The PMP registers.
#[derive(Clone, Debug)]
pub struct Pmp {
    cfg: [u8; PMP_ENTRIES],
    addr: [u64; PMP_ENTRIES],
    /// One past the last entry that is not OFF: later ones never match.
    active: usize,
    /// Whether any entry is locked (only then are M-mode accesses checked).
    locked: bool,
    /// The entries that match anything, in priority order, decoded:
    /// `(lo, hi, cfg)` of the byte range `[lo, hi)`; the first `matching`
    /// count. Rebuilt on every register write, so a check decodes nothing.
    ranges: [(u64, u64, u8); PMP_ENTRIES],
    matching: usize,
}

impl Default for Pmp {
    fn default() -> Self {
        Pmp {
            cfg: [0; PMP_ENTRIES],
            addr: [0; PMP_ENTRIES],
            active: 0,
            locked: false,
            ranges: [(0, 0, 0); PMP_ENTRIES],
            matching: 0,
        }
    }
}

impl Pmp {
    /// `pmpcfg{2n}` packs entries `8n..8n+8` (RV64 has only the even ones).
    pub fn cfg_reg(&self, reg: usize) -> u64 {
        (0..8).fold(0, |v, j| v | (self.cfg[reg * 4 + j] as u64) << (8 * j))
    }

    /// Writes the even-numbered `pmpcfg{reg}`; locked entries keep their
    /// value.
    pub fn write_cfg_reg(&mut self, reg: usize, value: u64) {
        for j in 0..8 {
            let i = reg * 4 + j;
            if self.cfg[i] & L != 0 {
                continue;
            }
            let mut c = (value >> (8 * j)) as u8 & (L | 0x18 | X | W | R);
            // R=0 W=1 is reserved: keep such a region unwritable.
            if c & R == 0 {
                c &= !W;
            }
            self.cfg[i] = c;
        }
        self.update();
    }

    /// `pmpaddr{i}`.
    pub fn addr(&self, i: usize) -> u64 {
        self.addr[i]
    }

    /// Writes `pmpaddr{i}` unless its entry is locked, or the next entry is
    /// a locked TOR range that uses it as its base.
    pub fn write_addr(&mut self, i: usize, value: u64) {
        let next_locks = self
            .cfg
            .get(i + 1)
            .is_some_and(|&c| c & L != 0 && mode(c) == A_TOR);
        if self.cfg[i] & L != 0 || next_locks {
            return;
        }
        self.addr[i] = value & ADDR_MASK;
        self.update();
    }

    /// The configuration bytes of every entry (checkpoints).
    pub(crate) fn raw_cfg(&self) -> [u8; PMP_ENTRIES] {
        self.cfg
    }

    /// The address registers (checkpoints).
    pub(crate) fn raw_addr(&self) -> [u64; PMP_ENTRIES] {
        self.addr
    }

    /// Sets every entry as saved, locks notwithstanding (a restore).
    pub(crate) fn set_raw(&mut self, cfg: [u8; PMP_ENTRIES], addr: [u64; PMP_ENTRIES]) {
        self.cfg = cfg;
        self.addr = addr;
        self.update();
    }

    fn update(&mut self) {
        self.active = self
            .cfg
            .iter()
            .rposition(|&c| mode(c) != A_OFF)
            .map_or(0, |i| i + 1);
        self.locked = self.cfg.iter().any(|&c| c & L != 0);
        self.matching = 0;
        for i in 0..self.active {
            if let Some((lo, hi)) = self.range(i) {
                self.ranges[self.matching] = (lo, hi, self.cfg[i]);
                self.matching += 1;
            }
        }
    }

    /// The byte range `[lo, hi)` entry `i` matches, if any.
    fn range(&self, i: usize) -> Option<(u64, u64)> {
        let a = self.addr[i];
        match mode(self.cfg[i]) {
            A_TOR => {
                let lo = if i == 0 { 0 } else { self.addr[i - 1] << 2 };
                let hi = a << 2;
                (lo < hi).then_some((lo, hi))
            }
            A_NA4 => Some((a << 2, (a << 2) + 4)),
            A_NAPOT => {
                let ones = a.trailing_ones();
                let base = (a & !((1u64 << ones) - 1)) << 2;
                Some((base, base + (1u64 << (ones + 3))))
            }
            _ => None,
        }
    }

    /// Whether an access of `len` bytes at `paddr` by privilege `prv` is
    /// allowed: the first entry that matches any byte must match all of them
    /// and grant `access`; with no match only M-mode may access.
    pub fn check(&self, paddr: u64, len: u64, access: Access, prv: Priv) -> bool {
        if prv == Priv::Machine && !self.locked {
            return true;
        }
        let end = paddr.saturating_add(len);
        for &(lo, hi, c) in &self.ranges[..self.matching] {
            if paddr < hi && lo < end {
                if paddr < lo || end > hi {
                    return false;
                }
                if prv == Priv::Machine && c & L == 0 {
                    return true;
                }
                let bit = match access {
                    Access::Read => R,
                    Access::Write => W,
                    Access::Exec => X,
                };
                return c & bit != 0;
            }
        }
        prv == Priv::Machine
    }
}

fn mode(cfg: u8) -> u8 {
    (cfg >> A_SHIFT) & 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(i: usize, c: u8) -> (usize, u64) {
        (i / 8 * 2, (c as u64) << (8 * (i % 8)))
    }

    #[test]
    fn napot_tor_na4_and_priority() {
        let mut p = Pmp::default();
        let sup = Priv::Supervisor;
        assert!(
            !p.check(0x8000_0000, 8, Access::Read, sup),
            "no entry: S denied"
        );
        assert!(p.check(0x8000_0000, 8, Access::Read, Priv::Machine));
        // 0: NAPOT 0x8000_0000 + 256 KiB, no permissions (firmware).
        p.write_addr(0, (0x8000_0000 >> 2) | ((256 << 10) / 8 - 1));
        // 1: NA4 at 0x1000, read only.
        p.write_addr(1, 0x1000 >> 2);
        // 3: TOR 0x2000..0x3000 (base in pmpaddr2), read/write.
        p.write_addr(2, 0x2000 >> 2);
        p.write_addr(3, 0x3000 >> 2);
        // 4: NAPOT everything, RWX.
        p.write_addr(4, ADDR_MASK);
        let (reg, v0) = cfg(0, A_NAPOT << A_SHIFT);
        let v = v0
            | cfg(1, A_NA4 << A_SHIFT | R).1
            | cfg(3, A_TOR << A_SHIFT | R | W).1
            | cfg(4, A_NAPOT << A_SHIFT | R | W | X).1;
        p.write_cfg_reg(reg, v);
        assert_eq!(p.cfg_reg(0), v);
        assert!(!p.check(0x8000_1000, 4, Access::Read, sup));
        assert!(p.check(0x8000_1000, 4, Access::Read, Priv::Machine));
        assert!(
            p.check(0x8004_0000, 8, Access::Write, sup),
            "past the firmware"
        );
        assert!(
            !p.check(0x8003_fffc, 8, Access::Read, sup),
            "straddles the firmware's end"
        );
        assert!(p.check(0x1000, 4, Access::Read, sup));
        assert!(!p.check(0x1000, 4, Access::Write, sup));
        assert!(!p.check(0x1000, 4096, Access::Read, sup), "partial page");
        assert!(p.check(0x2ff8, 8, Access::Write, sup));
        assert!(!p.check(0x2ff8, 8, Access::Exec, sup));
        assert!(
            p.check(0x2000, 4096, Access::Read, sup),
            "whole page in TOR"
        );
    }

    #[test]
    fn an_address_written_after_its_config_moves_the_range() {
        let mut p = Pmp::default();
        let sup = Priv::Supervisor;
        // 1: TOR [pmpaddr0, pmpaddr1), read only; configured first.
        p.write_cfg_reg(0, cfg(1, A_TOR << A_SHIFT | R).1);
        assert!(!p.check(0x1800, 8, Access::Read, sup), "empty range");
        p.write_addr(1, 0x2000 >> 2);
        assert!(p.check(0x1800, 8, Access::Read, sup), "[0, 0x2000)");
        p.write_addr(0, 0x1000 >> 2);
        assert!(!p.check(0x0800, 8, Access::Read, sup), "base moved up");
        assert!(p.check(0x1800, 8, Access::Read, sup));
        assert!(!p.check(0x1800, 8, Access::Write, sup));
    }

    #[test]
    fn lock_applies_to_machine_and_freezes_entries() {
        let mut p = Pmp::default();
        p.write_addr(0, 0x1000 >> 2);
        p.write_addr(1, 0x2000 >> 2);
        p.write_cfg_reg(0, cfg(1, L | A_TOR << A_SHIFT | R).1);
        assert!(!p.check(0x1800, 8, Access::Write, Priv::Machine));
        assert!(p.check(0x1800, 8, Access::Read, Priv::Machine));
        assert!(p.check(0x3000, 8, Access::Write, Priv::Machine));
        p.write_addr(0, 0);
        p.write_addr(1, 0);
        assert_eq!((p.addr(0), p.addr(1)), (0x1000 >> 2, 0x2000 >> 2));
        p.write_cfg_reg(0, 0);
        assert_eq!(p.cfg_reg(0) >> 8, (L | A_TOR << A_SHIFT | R) as u64);
        // W without R is reserved.
        p.write_cfg_reg(0, cfg(0, A_NA4 << A_SHIFT | W).1);
        assert_eq!(p.cfg_reg(0) & 0xff, (A_NA4 << A_SHIFT) as u64);
    }
}
