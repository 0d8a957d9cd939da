//! TLBs and the page-table walker's PTE cache of one core.
//!
//! An L1 ITLB and DTLB hold pages of every size; an optional L2 TLB holds
//! 4 KiB pages. Entries are tagged with their ASID (or global), and
//! `sfence.vma` removes them as the privileged spec says. The walker's PTE
//! cache keeps non-leaf PTEs by their physical address, as Rocket's does.
//!
//! The hart's software TLB hits never reach these arrays (that is what keeps
//! the common case at host speed), so an L1 TLB cannot learn of its hits:
//! its replacement must not depend on them. The L1s replace first-in
//! first-out; the L2 TLB and PTE cache, reached only on L1 misses, are LRU.

use rvnvmm_timing::{PageRange, TlbFlush};

/// The page sizes of Sv39 (with Svnapot), as log2 of their bytes, smallest
/// first: the order lookups probe them in.
pub(crate) const PAGE_SHIFTS: [u32; 4] = [12, 16, 21, 30];

/// Names of the page sizes in the statistics, in [`PAGE_SHIFTS`] order.
pub(crate) const PAGE_NAMES: [&str; 4] = ["4k", "64k", "2m", "1g"];

/// The index of a page size in [`PAGE_SHIFTS`].
pub(crate) fn size_index(page_shift: u32) -> usize {
    PAGE_SHIFTS
        .iter()
        .position(|&s| s == page_shift)
        .unwrap_or(0)
}

/// Which entry a set gives up for a new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// The oldest fill (hits change nothing).
    Fifo,
    /// The least recently filled or hit.
    Lru,
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    valid: bool,
    global: bool,
    page_shift: u8,
    asid: u16,
    /// Virtual page number at the entry's own size (`vaddr >> page_shift`).
    vpn: u64,
    /// Fill time (FIFO) or last use (LRU).
    stamp: u64,
}

impl Entry {
    fn maps(&self, vaddr: u64, asid: u16) -> bool {
        self.valid && vaddr >> self.page_shift == self.vpn && (self.global || self.asid == asid)
    }

    fn range(&self) -> PageRange {
        PageRange {
            vbase: self.vpn << self.page_shift,
            page_shift: self.page_shift.into(),
        }
    }
}

/// One set-associative TLB.
#[derive(Clone, Debug)]
pub(crate) struct TlbArray {
    sets: usize,
    ways: usize,
    policy: Policy,
    /// The page sizes it holds.
    sizes: &'static [u32],
    entries: Vec<Entry>,
    clock: u64,
}

impl TlbArray {
    /// `entries` in sets of `ways` (the caller checked the geometry).
    pub(crate) fn new(entries: u32, ways: u32, policy: Policy, sizes: &'static [u32]) -> TlbArray {
        let ways = ways.max(1) as usize;
        let sets = (entries as usize / ways).max(1);
        TlbArray {
            sets,
            ways,
            policy,
            sizes,
            entries: vec![Entry::default(); sets * ways],
            clock: 0,
        }
    }

    fn set(&self, vaddr: u64, page_shift: u32) -> std::ops::Range<usize> {
        let s = ((vaddr >> page_shift) as usize) & (self.sets - 1);
        s * self.ways..(s + 1) * self.ways
    }

    /// The size of the page that maps `vaddr` in `asid`, if held (an LRU
    /// array records the use).
    pub(crate) fn lookup(&mut self, vaddr: u64, asid: u16) -> Option<u32> {
        if self.sets == 1 {
            return self.lookup_one_set(vaddr, asid);
        }
        for &shift in self.sizes {
            let set = self.set(vaddr, shift);
            if let Some(e) = self.entries[set]
                .iter_mut()
                .find(|e| e.page_shift as u32 == shift && e.maps(vaddr, asid))
            {
                if self.policy == Policy::Lru {
                    self.clock += 1;
                    e.stamp = self.clock;
                }
                return Some(shift);
            }
        }
        None
    }

    /// [`lookup`](Self::lookup) of a fully associative array: every size
    /// shares the one set, so a single pass finds the smallest page that
    /// maps `vaddr` (what probing the sizes in order would find). Most
    /// calls are misses (the software TLB keeps the hits), which scan the
    /// set once instead of once per size.
    fn lookup_one_set(&mut self, vaddr: u64, asid: u16) -> Option<u32> {
        let mut found: Option<usize> = None;
        for (i, e) in self.entries.iter().enumerate() {
            if e.maps(vaddr, asid)
                && found.is_none_or(|f| self.entries[f].page_shift > e.page_shift)
            {
                found = Some(i);
            }
        }
        let e = &mut self.entries[found?];
        if self.policy == Policy::Lru {
            self.clock += 1;
            e.stamp = self.clock;
        }
        Some(e.page_shift.into())
    }

    /// Whether it holds a translation of `vaddr` in `asid` (no state change).
    #[cfg(test)]
    pub(crate) fn holds(&self, vaddr: u64, asid: u16) -> bool {
        self.entries.iter().any(|e| e.maps(vaddr, asid))
    }

    /// Caches the page of `1 << page_shift` bytes holding `vaddr`: returns
    /// the valid entry it displaced. A size the array does not hold is not
    /// cached.
    pub(crate) fn insert(
        &mut self,
        vaddr: u64,
        page_shift: u32,
        asid: u16,
        global: bool,
    ) -> Option<PageRange> {
        if !self.sizes.contains(&page_shift) {
            return None;
        }
        self.clock += 1;
        let new = Entry {
            valid: true,
            global,
            page_shift: page_shift as u8,
            asid,
            vpn: vaddr >> page_shift,
            stamp: self.clock,
        };
        let set = self.set(vaddr, page_shift);
        let ways = &mut self.entries[set];
        // One pass: the entry already holding the page (refreshed in
        // place), else the first invalid way, else the oldest stamp.
        let mut victim = 0;
        let mut victim_key = (true, u64::MAX);
        for (i, e) in ways.iter_mut().enumerate() {
            if e.valid && e.page_shift == new.page_shift && e.vpn == new.vpn && e.asid == asid {
                *e = new;
                return None;
            }
            let key = (e.valid, if e.valid { e.stamp } else { 0 });
            if key < victim_key {
                victim_key = key;
                victim = i;
            }
        }
        let old = ways[victim];
        ways[victim] = new;
        old.valid.then(|| old.range())
    }

    /// Removes what `sfence.vma` orders removed: with an address, the
    /// entries mapping it; with an ASID, only that ASID's non-global ones.
    /// Calls `removed` for each; returns how many went.
    pub(crate) fn flush(&mut self, f: TlbFlush, mut removed: impl FnMut(PageRange)) -> u64 {
        let mut n = 0;
        for e in self.entries.iter_mut().filter(|e| e.valid) {
            let addr_ok = f.vaddr.is_none_or(|va| va >> e.page_shift == e.vpn);
            let asid_ok = f.asid.is_none_or(|a| !e.global && e.asid == a);
            if addr_ok && asid_ok {
                e.valid = false;
                removed(e.range());
                n += 1;
            }
        }
        n
    }
}

/// The walker's cache of non-leaf PTEs, by PTE physical address (LRU).
#[derive(Clone, Debug)]
pub(crate) struct PteCache {
    /// `(PTE address, last use)`; at most `capacity`.
    entries: Vec<(u64, u64)>,
    capacity: usize,
    clock: u64,
}

impl PteCache {
    pub(crate) fn new(capacity: u32) -> PteCache {
        PteCache {
            entries: Vec::with_capacity(capacity as usize),
            capacity: capacity as usize,
            clock: 0,
        }
    }

    /// Whether the PTE at `pte_paddr` is cached (recording the use).
    pub(crate) fn lookup(&mut self, pte_paddr: u64) -> bool {
        self.clock += 1;
        let now = self.clock;
        match self.entries.iter_mut().find(|(a, _)| *a == pte_paddr) {
            Some(e) => {
                e.1 = now;
                true
            }
            None => false,
        }
    }

    /// Caches the non-leaf PTE at `pte_paddr`.
    pub(crate) fn insert(&mut self, pte_paddr: u64) {
        if self.capacity == 0 || self.lookup(pte_paddr) {
            return;
        }
        let e = (pte_paddr, self.clock);
        if self.entries.len() < self.capacity {
            self.entries.push(e);
        } else if let Some(lru) = self.entries.iter_mut().min_by_key(|(_, t)| *t) {
            *lru = e;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}

/// The counters of one core's TLBs. Size-indexed arrays follow
/// [`PAGE_SHIFTS`], with one more slot for walks that found no page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TlbStats {
    /// L1 misses per port (0: ITLB, 1: DTLB) and size of the page found.
    pub misses: [[u64; 5]; 2],
    /// Of those, the ones the L2 TLB served (4 KiB pages).
    pub l2_hits: [u64; 2],
    /// Refills of the hart's software TLB that hit the L1 TLB.
    pub refill_hits: [u64; 2],
    /// Walks per size of the page found.
    pub walks: [u64; 5],
    /// Cycles of those walks.
    pub walk_cycles: [u64; 5],
    /// PTE reads per size and level (index 0: the root, level 2).
    pub pte_reads: [[u64; 3]; 5],
    /// PTE reads the PTE cache served.
    pub pte_cache_hits: u64,
    /// Entries `sfence.vma` (and the user-mode kernel's flushes) removed
    /// from the L1 TLBs.
    pub flushed: u64,
    /// PTE reads that went through the L1D (excluded from the DTLB's
    /// lookups, which are counted as the L1D's accesses).
    pub l1d_pte_reads: u64,
}

/// The walk in progress after an L1 miss.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Walk {
    pub active: bool,
    pub reads: [u64; 3],
    pub len: usize,
    pub cycles: u64,
}

/// One core's TLBs, walker state and counters.
#[derive(Clone, Debug)]
pub(crate) struct CoreTlbs {
    pub itlb: TlbArray,
    pub dtlb: TlbArray,
    pub l2: Option<TlbArray>,
    pub pte_cache: PteCache,
    /// Moves when an entry leaves an L1 TLB.
    pub epoch: u64,
    pub walk: Walk,
    pub stats: TlbStats,
}

impl CoreTlbs {
    pub(crate) fn new(cfg: &rvnvmm_config::Tlbs) -> CoreTlbs {
        CoreTlbs {
            itlb: TlbArray::new(cfg.itlb.entries, cfg.itlb.ways, Policy::Fifo, &PAGE_SHIFTS),
            dtlb: TlbArray::new(cfg.dtlb.entries, cfg.dtlb.ways, Policy::Fifo, &PAGE_SHIFTS),
            l2: (cfg.l2.entries > 0).then(|| {
                TlbArray::new(cfg.l2.entries, cfg.l2.ways, Policy::Lru, &PAGE_SHIFTS[..1])
            }),
            // A software refill handler reads the page table with plain
            // loads: no walker, no PTE cache.
            pte_cache: PteCache::new(match cfg.refill {
                rvnvmm_config::TlbRefill::Walker => cfg.ptw_cache_entries,
                rvnvmm_config::TlbRefill::Software => 0,
            }),
            epoch: 0,
            walk: Walk::default(),
            stats: TlbStats::default(),
        }
    }

    /// Applies `sfence.vma` to every array; the PTE cache (non-leaf
    /// entries) goes only with a fence of all addresses.
    pub(crate) fn flush(&mut self, f: TlbFlush) {
        let mut n = self.itlb.flush(f, |_| {});
        n += self.dtlb.flush(f, |_| {});
        if let Some(l2) = &mut self.l2 {
            l2.flush(f, |_| {});
        }
        if f.vaddr.is_none() {
            self.pte_cache.clear();
        }
        self.stats.flushed += n;
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: TlbFlush = TlbFlush {
        vaddr: None,
        asid: None,
    };

    #[test]
    fn fifo_replaces_the_oldest_fill_whatever_was_hit() {
        let mut t = TlbArray::new(4, 4, Policy::Fifo, &PAGE_SHIFTS);
        for p in 0..4u64 {
            assert_eq!(t.insert(p << 12, 12, 0, false), None);
        }
        assert_eq!(t.lookup(0, 0), Some(12), "page 0 is hit last");
        let out = t.insert(4 << 12, 12, 0, false);
        assert_eq!(
            out,
            Some(PageRange {
                vbase: 0,
                page_shift: 12
            }),
            "FIFO: the hit does not save page 0"
        );
        assert!(!t.holds(0, 0) && t.holds(4 << 12, 0));
    }

    #[test]
    fn lru_keeps_what_was_hit() {
        let mut t = TlbArray::new(4, 4, Policy::Lru, &PAGE_SHIFTS);
        for p in 0..4u64 {
            t.insert(p << 12, 12, 0, false);
        }
        t.lookup(0, 0);
        let out = t.insert(4 << 12, 12, 0, false).unwrap();
        assert_eq!(out.vbase, 1 << 12);
        assert!(t.holds(0, 0));
    }

    #[test]
    fn sets_are_indexed_by_page_number_at_the_entry_size() {
        // 2 sets x 1 way: pages 0 and 2 collide, 0 and 1 do not.
        let mut t = TlbArray::new(2, 1, Policy::Fifo, &PAGE_SHIFTS);
        assert_eq!(t.insert(0, 12, 0, false), None);
        assert_eq!(t.insert(0x1000, 12, 0, false), None);
        assert_eq!(t.insert(0x2000, 12, 0, false).unwrap().vbase, 0);
        // A 2 MiB page covers every 4 KiB address inside it.
        t.insert(0x4020_0000, 21, 0, false);
        assert_eq!(t.lookup(0x4033_4567, 0), Some(21));
        assert_eq!(t.lookup(0x4040_0000, 0), None);
    }

    #[test]
    fn one_set_and_many_sets_find_the_same_smallest_page() {
        // A 2 MiB entry and a 4 KiB one inside it (a page table changed
        // without a fence): both geometries answer with the 4 KiB page,
        // and forget it the same way.
        for (entries, ways) in [(8, 8), (8, 2)] {
            let mut t = TlbArray::new(entries, ways, Policy::Lru, &PAGE_SHIFTS);
            t.insert(0x20_0000, 21, 0, false);
            t.insert(0x20_3000, 12, 0, false);
            assert_eq!(t.lookup(0x20_3abc, 0), Some(12), "{entries}x{ways}");
            assert_eq!(t.lookup(0x20_4000, 0), Some(21));
            assert_eq!(t.lookup(0x40_0000, 0), None);
            t.flush(
                TlbFlush {
                    vaddr: Some(0x20_3000),
                    asid: None,
                },
                |_| {},
            );
            assert_eq!(t.lookup(0x20_3000, 0), None);
        }
    }

    #[test]
    fn an_array_caches_only_its_sizes() {
        let mut l2 = TlbArray::new(8, 2, Policy::Lru, &PAGE_SHIFTS[..1]);
        assert_eq!(l2.insert(0x20_0000, 21, 0, false), None);
        assert_eq!(l2.lookup(0x20_0000, 0), None);
        l2.insert(0x20_0000, 12, 0, false);
        assert_eq!(l2.lookup(0x20_0abc, 0), Some(12));
    }

    #[test]
    fn asids_separate_entries_and_global_ones_match_all() {
        let mut t = TlbArray::new(8, 8, Policy::Fifo, &PAGE_SHIFTS);
        t.insert(0x1000, 12, 1, false);
        t.insert(0x2000, 12, 1, true);
        assert!(t.holds(0x1000, 1) && !t.holds(0x1000, 2));
        assert!(t.holds(0x2000, 2), "global");
    }

    #[test]
    fn sfence_vma_semantics() {
        let fill = |t: &mut TlbArray| {
            t.insert(0x1000, 12, 1, false);
            t.insert(0x1000, 12, 2, false);
            t.insert(0x2000, 12, 1, true);
            t.insert(0x4000_0000, 30, 1, false);
        };
        let mut t = TlbArray::new(8, 8, Policy::Fifo, &PAGE_SHIFTS);
        // rs1 = x0, rs2 = x0: everything.
        fill(&mut t);
        assert_eq!(t.flush(ALL, |_| {}), 4);
        // rs1 = x0, rs2 = 1: ASID 1's non-global entries.
        fill(&mut t);
        let f = TlbFlush {
            vaddr: None,
            asid: Some(1),
        };
        assert_eq!(t.flush(f, |_| {}), 2);
        assert!(t.holds(0x1000, 2) && t.holds(0x2000, 1) && !t.holds(0x1000, 1));
        t.flush(ALL, |_| {});
        // rs1 = va, rs2 = x0: that page in every ASID, global included; a
        // gigapage holding the address goes too.
        fill(&mut t);
        let f = TlbFlush {
            vaddr: Some(0x1234),
            asid: None,
        };
        let mut gone = Vec::new();
        assert_eq!(t.flush(f, |r| gone.push(r)), 2);
        assert!(gone.iter().all(|r| r.vbase == 0x1000));
        let f = TlbFlush {
            vaddr: Some(0x4abc_0000),
            asid: None,
        };
        assert_eq!(t.flush(f, |_| {}), 1);
        // rs1 = va, rs2 = asid: not the global entry.
        let f = TlbFlush {
            vaddr: Some(0x2000),
            asid: Some(1),
        };
        assert_eq!(t.flush(f, |_| {}), 0);
        assert!(t.holds(0x2000, 1));
    }

    #[test]
    fn pte_cache_is_lru_by_address() {
        let mut c = PteCache::new(2);
        c.insert(0x100);
        c.insert(0x200);
        assert!(c.lookup(0x100));
        c.insert(0x300);
        assert!(c.lookup(0x100) && c.lookup(0x300) && !c.lookup(0x200));
        c.clear();
        assert!(!c.lookup(0x100));
        let mut none = PteCache::new(0);
        none.insert(0x100);
        assert!(!none.lookup(0x100));
    }
}
