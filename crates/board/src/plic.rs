//! The platform-level interrupt controller (RISC-V PLIC spec 1.0.0, QEMU
//! `virt`'s layout and widths).
//!
//! | offset | register |
//! |---|---|
//! | 0x000000 + 4·s | priority of source s (s ≥ 1; 3 bits, WARL) |
//! | 0x001000 + 4·w | pending bits of sources 32w..32w+31 (read-only) |
//! | 0x002000 + 0x80·c + 4·w | enable bits of context c |
//! | 0x200000 + 0x1000·c | priority threshold of context c |
//! | 0x200004 + 0x1000·c | claim (read) / complete (write) of context c |
//!
//! Context 2h is hart h's M-mode, 2h+1 its S-mode. Every source is level
//! triggered: the board sets each line's level, the gateway keeps a source
//! pending while its line is high and it is not being serviced (claimed and
//! not yet completed). Only 32-bit accesses exist.

/// Interrupt sources, as QEMU `virt` (`riscv,ndev`): 1..=95.
pub const PLIC_SOURCES: u32 = 95;
/// Highest priority (3 priority bits).
pub const PLIC_MAX_PRIORITY: u32 = 7;
const PENDING: u64 = 0x1000;
const ENABLE: u64 = 0x2000;
const CONTEXT: u64 = 0x20_0000;

/// Bytes of the register window for `contexts` contexts.
pub fn plic_size(contexts: usize) -> u64 {
    CONTEXT + 0x1000 * contexts as u64
}

use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};

/// A PLIC with sources 1..=`sources` and `contexts` targets.
#[derive(Clone, Debug)]
pub struct Plic {
    sources: u32,
    /// Indexed by source; entry 0 unused.
    priority: Vec<u32>,
    level: Vec<bool>,
    claimed: Vec<bool>,
    /// `level && !claimed` per source, 32 to a word: what `best` scans,
    /// since every hart asks after every slice.
    pending: Vec<u32>,
    enable: Vec<Vec<u32>>,
    threshold: Vec<u32>,
}

impl Plic {
    /// A PLIC in its reset state: all priorities, enables and thresholds 0.
    pub fn new(sources: u32, contexts: usize) -> Plic {
        assert!(sources < 1024, "the PLIC has at most 1023 sources");
        let n = sources as usize + 1;
        Plic {
            sources,
            priority: vec![0; n],
            level: vec![false; n],
            claimed: vec![false; n],
            pending: vec![0; n.div_ceil(32)],
            enable: vec![vec![0; n.div_ceil(32)]; contexts],
            threshold: vec![0; contexts],
        }
    }

    /// Number of contexts (targets).
    pub fn contexts(&self) -> usize {
        self.threshold.len()
    }

    /// Number of sources.
    pub fn sources(&self) -> u32 {
        self.sources
    }

    /// Back to the reset state; line levels are kept (devices drive them).
    pub fn reset(&mut self) {
        let level = std::mem::take(&mut self.level);
        *self = Plic::new(self.sources, self.contexts());
        self.level = level;
        for s in 1..=self.sources {
            self.refresh(s);
        }
    }

    /// Recomputes source `s`'s pending bit.
    fn refresh(&mut self, s: u32) {
        let (w, b) = (s as usize / 32, s % 32);
        let on = self.level[s as usize] && !self.claimed[s as usize];
        self.pending[w] = self.pending[w] & !(1 << b) | u32::from(on) << b;
    }

    /// Drives source `source`'s interrupt line; true if its level changed
    /// (otherwise nothing did: pending follows the level and claims).
    pub fn set_level(&mut self, source: u32, high: bool) -> bool {
        if !(1..=self.sources).contains(&source) {
            return false;
        }
        let changed = self.level[source as usize] != high;
        self.level[source as usize] = high;
        self.refresh(source);
        changed
    }

    /// Whether source `s` is pending at the gateway.
    pub fn is_pending(&self, s: u32) -> bool {
        let s = s as usize;
        s > 0 && s < self.level.len() && self.level[s] && !self.claimed[s]
    }

    fn enabled(&self, ctx: usize, s: u32) -> bool {
        self.enable[ctx][s as usize / 32] >> (s % 32) & 1 != 0
    }

    /// The source a claim by context `ctx` would return (highest priority
    /// above the threshold, lowest ID among equals), or 0.
    fn best(&self, ctx: usize) -> u32 {
        let mut best = (0, 0);
        for (w, (&pend, &en)) in self.pending.iter().zip(&self.enable[ctx]).enumerate() {
            let mut m = pend & en;
            while m != 0 {
                let s = w as u32 * 32 + m.trailing_zeros();
                m &= m - 1;
                let p = self.priority[s as usize];
                // Sources in increasing order: a tie keeps the lower ID.
                if p > best.1 && p > self.threshold[ctx] {
                    best = (s, p);
                }
            }
        }
        best.0
    }

    /// Whether context `ctx` has an interrupt to take (its MEIP or SEIP).
    pub fn irq_pending(&self, ctx: usize) -> bool {
        ctx < self.contexts() && self.best(ctx) != 0
    }

    /// Claims the best interrupt of context `ctx`: 0 if none.
    pub fn claim(&mut self, ctx: usize) -> u32 {
        let s = self.best(ctx);
        if s != 0 {
            self.claimed[s as usize] = true;
            self.refresh(s);
        }
        s
    }

    /// Completes source `s` for context `ctx`; ignored unless `s` is enabled
    /// for `ctx` (spec §8).
    pub fn complete(&mut self, ctx: usize, s: u32) {
        if (1..=self.sources).contains(&s) && self.enabled(ctx, s) {
            self.claimed[s as usize] = false;
            self.refresh(s);
        }
    }

    /// A load at `offset`; `None` for an access fault.
    pub fn load(&mut self, offset: u64, size: u64) -> Option<u64> {
        if size != 4 || !offset.is_multiple_of(4) {
            return None;
        }
        let words = self.sources as usize / 32 + 1;
        let v = match offset {
            o if o < PENDING => {
                let s = (o / 4) as usize;
                self.priority.get(s).copied().unwrap_or(0)
            }
            o if o < ENABLE => {
                let w = ((o - PENDING) / 4) as usize;
                (0..32)
                    .filter(|b| self.is_pending((w * 32 + b) as u32))
                    .fold(0, |acc, b| acc | 1 << b)
            }
            o if o < CONTEXT => {
                let ctx = ((o - ENABLE) / 0x80) as usize;
                let w = ((o - ENABLE) % 0x80 / 4) as usize;
                if ctx >= self.contexts() {
                    return None;
                }
                if w < words {
                    self.enable[ctx][w]
                } else {
                    0
                }
            }
            o => {
                let ctx = ((o - CONTEXT) / 0x1000) as usize;
                if ctx >= self.contexts() {
                    return None;
                }
                match (o - CONTEXT) % 0x1000 {
                    0 => self.threshold[ctx],
                    4 => self.claim(ctx),
                    _ => 0,
                }
            }
        };
        Some(u64::from(v))
    }

    /// A store at `offset`; `false` for an access fault.
    pub fn store(&mut self, offset: u64, size: u64, value: u64) -> bool {
        if size != 4 || !offset.is_multiple_of(4) {
            return false;
        }
        let value = value as u32;
        match offset {
            o if o < PENDING => {
                let s = (o / 4) as usize;
                if s > 0 && s < self.priority.len() {
                    self.priority[s] = value & PLIC_MAX_PRIORITY;
                }
            }
            // Pending bits are read-only.
            o if o < ENABLE => {}
            o if o < CONTEXT => {
                let ctx = ((o - ENABLE) / 0x80) as usize;
                let w = ((o - ENABLE) % 0x80 / 4) as usize;
                if ctx >= self.contexts() {
                    return false;
                }
                let mask = self.valid_mask(w);
                if let Some(word) = self.enable[ctx].get_mut(w) {
                    *word = value & mask;
                }
            }
            o => {
                let ctx = ((o - CONTEXT) / 0x1000) as usize;
                if ctx >= self.contexts() {
                    return false;
                }
                match (o - CONTEXT) % 0x1000 {
                    0 => self.threshold[ctx] = value & PLIC_MAX_PRIORITY,
                    4 => self.complete(ctx, value),
                    _ => {}
                }
            }
        }
        true
    }

    /// The bits of enable word `w` that name real sources (source 0 is not
    /// one).
    fn valid_mask(&self, w: usize) -> u32 {
        (0..32u32)
            .filter(|b| {
                let s = w as u32 * 32 + b;
                s >= 1 && s <= self.sources
            })
            .fold(0, |acc, b| acc | 1 << b)
    }
}

/// Priorities, line levels, claims, enables and thresholds; the pending
/// bits follow from levels and claims.
impl Checkpointable for Plic {
    fn save(&self, w: &mut StateWriter) {
        let bools = |v: &[bool]| v.iter().map(|&b| u8::from(b)).collect::<Vec<_>>();
        w.u64s(
            &self
                .priority
                .iter()
                .map(|&p| u64::from(p))
                .collect::<Vec<_>>(),
        );
        w.bytes(&bools(&self.level));
        w.bytes(&bools(&self.claimed));
        for e in &self.enable {
            w.u64s(&e.iter().map(|&p| u64::from(p)).collect::<Vec<_>>());
        }
        w.u64s(
            &self
                .threshold
                .iter()
                .map(|&p| u64::from(p))
                .collect::<Vec<_>>(),
        );
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let words = |r: &mut StateReader<'_>, out: &mut [u32], what: &str| {
            let mut v = vec![0u64; out.len()];
            r.u64s_into(&mut v, what)?;
            for (o, x) in out.iter_mut().zip(v) {
                *o = u32::try_from(x).map_err(|_| r.malformed(format!("{what}: {x:#x}")))?;
            }
            Ok::<(), CheckpointError>(())
        };
        let bools = |r: &mut StateReader<'_>, out: &mut [bool]| {
            let b = r.bytes(out.len())?;
            if b.len() != out.len() || b.iter().any(|&x| x > 1) {
                return Err(r.malformed("PLIC lines of another source count"));
            }
            out.iter_mut().zip(b).for_each(|(o, &x)| *o = x == 1);
            Ok(())
        };
        words(r, &mut self.priority, "PLIC priorities")?;
        bools(r, &mut self.level)?;
        bools(r, &mut self.claimed)?;
        for e in &mut self.enable {
            words(r, e, "PLIC enables")?;
        }
        words(r, &mut self.threshold, "PLIC thresholds")?;
        for s in 1..=self.sources {
            self.refresh(s);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prio(p: &mut Plic, s: u32, v: u64) {
        assert!(p.store(4 * u64::from(s), 4, v));
    }
    fn enable(p: &mut Plic, ctx: u64, word: u64, v: u64) {
        assert!(p.store(ENABLE + 0x80 * ctx + 4 * word, 4, v));
    }
    fn claim(p: &mut Plic, ctx: u64) -> u64 {
        p.load(CONTEXT + 0x1000 * ctx + 4, 4).unwrap()
    }
    fn complete(p: &mut Plic, ctx: u64, s: u64) {
        assert!(p.store(CONTEXT + 0x1000 * ctx + 4, 4, s));
    }

    #[test]
    fn claim_complete_follows_the_level() {
        let mut p = Plic::new(PLIC_SOURCES, 4);
        prio(&mut p, 10, 1);
        enable(&mut p, 1, 0, 1 << 10);
        assert!(!p.irq_pending(1));
        p.set_level(10, true);
        assert_eq!(p.load(PENDING, 4), Some(1 << 10));
        assert!(p.irq_pending(1));
        assert!(!p.irq_pending(0), "context 0 has nothing enabled");
        assert_eq!(claim(&mut p, 1), 10);
        // Claimed: no longer pending, even though the line is still high.
        assert_eq!(p.load(PENDING, 4), Some(0));
        assert!(!p.irq_pending(1));
        assert_eq!(claim(&mut p, 1), 0);
        complete(&mut p, 1, 10);
        assert!(p.irq_pending(1), "line still high: pending again");
        p.set_level(10, false);
        assert!(!p.irq_pending(1));
    }

    #[test]
    fn priority_and_threshold_decide() {
        let mut p = Plic::new(PLIC_SOURCES, 2);
        for s in [3, 5, 40] {
            p.set_level(s, true);
        }
        enable(&mut p, 0, 0, (1 << 3) | (1 << 5));
        enable(&mut p, 0, 1, 1 << 8);
        assert!(!p.irq_pending(0), "priority 0 never interrupts");
        prio(&mut p, 3, 2);
        prio(&mut p, 5, 2);
        prio(&mut p, 40, 0xff);
        assert_eq!(p.load(4 * 40, 4), Some(7), "three priority bits");
        // The threshold masks priorities at or below it.
        assert!(p.store(CONTEXT, 4, 7));
        assert!(!p.irq_pending(0));
        assert!(p.store(CONTEXT, 4, 2));
        assert_eq!(p.load(CONTEXT, 4), Some(2));
        assert_eq!(claim(&mut p, 0), 40);
        assert!(!p.irq_pending(0));
        assert!(p.store(CONTEXT, 4, 1));
        // Equal priorities: the lower ID first.
        assert_eq!(claim(&mut p, 0), 3);
        assert_eq!(claim(&mut p, 0), 5);
        assert_eq!(claim(&mut p, 0), 0);
    }

    #[test]
    fn complete_needs_the_source_enabled_for_the_context() {
        let mut p = Plic::new(PLIC_SOURCES, 2);
        prio(&mut p, 1, 1);
        p.set_level(1, true);
        enable(&mut p, 0, 0, 1 << 1);
        assert_eq!(claim(&mut p, 0), 1);
        complete(&mut p, 1, 1);
        assert!(!p.is_pending(1), "context 1 cannot complete it");
        complete(&mut p, 0, 1);
        assert!(p.is_pending(1));
    }

    #[test]
    fn registers_are_warl_and_bounded() {
        let mut p = Plic::new(PLIC_SOURCES, 2);
        // Source 0 does not exist; its priority and enable bit stay 0.
        prio(&mut p, 0, 5);
        assert_eq!(p.load(0, 4), Some(0));
        enable(&mut p, 0, 0, u64::from(u32::MAX));
        assert_eq!(p.load(ENABLE, 4), Some(0xffff_fffe));
        enable(&mut p, 0, 2, u64::from(u32::MAX));
        assert_eq!(p.load(ENABLE + 8, 4), Some(0xffff_ffff), "sources 64..=95");
        enable(&mut p, 0, 3, u64::from(u32::MAX));
        assert_eq!(p.load(ENABLE + 12, 4), Some(0), "no source 96");
        // Pending is read-only.
        assert!(p.store(PENDING, 4, 0xffff));
        assert_eq!(p.load(PENDING, 4), Some(0));
        // Contexts beyond the last and non-word accesses fault.
        assert_eq!(p.load(CONTEXT + 0x2000, 4), None);
        assert!(!p.store(ENABLE + 0x100, 4, 1));
        assert_eq!(p.load(0, 8), None);
        assert_eq!(p.load(2, 4), None);
        assert_eq!(plic_size(2), 0x20_2000);
    }

    #[test]
    fn a_checkpoint_restores_priorities_enables_and_claims() {
        use rvnvmm_checkpoint::Sections;
        let mut p = Plic::new(31, 4);
        p.priority[3] = 5;
        p.priority[7] = 2;
        p.enable[1][0] = 1 << 3 | 1 << 7;
        p.threshold[1] = 1;
        p.set_level(3, true);
        p.set_level(7, true);
        assert_eq!(p.claim(1), 3);
        let mut s = Sections::new();
        s.save("plic", &p);
        let mut back = Plic::new(31, 4);
        s.restore("plic", &mut back).unwrap();
        assert_eq!(format!("{back:?}"), format!("{p:?}"));
        assert!(back.irq_pending(1));
        assert_eq!(back.claim(1), 7);
        assert!(s.restore("plic", &mut Plic::new(31, 2)).is_err());
    }
}
