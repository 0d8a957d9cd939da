//! The memory system as the cores see it: the [`TimingModel`] they call
//! and the [`ControlPort`] the guest's control page drives.

use crate::{tlb, MemorySystem};
use rvnvmm_timing::{
    ControlError, ControlPort, CoreId, DataAccess, FlushKind, MemoryModel, PageRange, TimingModel,
    TlbFill, TlbFlush, TlbLookup, TlbPort,
};
use serde_json::Value;

impl TimingModel for MemorySystem {
    fn take_write_backs(&mut self, each: &mut dyn FnMut(u64)) {
        if let Some(w) = self.write_backs.as_mut() {
            for a in w.drain(..) {
                each(a);
            }
        }
    }

    #[inline(always)]
    fn data_line_shift(&self) -> u32 {
        self.d_shift
    }

    #[inline(always)]
    fn fetch_line_shift(&self) -> u32 {
        self.i_shift
    }

    #[inline(always)]
    fn data_filter_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool {
        self.l1d_filter_hit(core, paddr, write)
    }

    fn data_private_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool {
        self.l1d_private_hit(core, paddr, write)
    }

    fn data_access(&mut self, core: CoreId, access: DataAccess, now: u64) -> u64 {
        self.data_access_for(core, access.paddr, access.kind.into(), now)
    }

    fn filter_tables(&self, core: CoreId) -> Option<rvnvmm_timing::FilterTables> {
        Some(self.filters[core].tables())
    }

    #[inline(always)]
    fn fetch_filter_hit(&self, core: CoreId, paddr: u64) -> bool {
        self.l1i_filter_hit(core, paddr)
    }

    fn fetch_private_hit(&self, core: CoreId, paddr: u64) -> bool {
        self.l1i_private_hit(core, paddr)
    }

    fn fetch(&mut self, core: CoreId, paddr: u64, now: u64) -> u64 {
        MemorySystem::fetch(self, core, paddr, now)
    }

    /// Counted (`page_walks.pte_reads`). With TLBs, a read of the walk
    /// after a miss is timed: a non-leaf PTE in the PTE cache costs a
    /// cycle, anything else is a load through the L1D; the walk's first
    /// read also pays the refill's fixed cost (`tlb.walk_cycles`, or
    /// `tlb.software_refill_cycles` for a software refill, whose handler
    /// has no PTE cache). Without, it costs nothing.
    fn page_walk_read(&mut self, core: CoreId, pte_paddr: u64, now: u64) -> u64 {
        self.pte_reads[core] += 1;
        let Some(t) = self.tlbs.get_mut(core) else {
            return 0;
        };
        if !t.walk.active || t.walk.len >= t.walk.reads.len() {
            return 0;
        }
        let mut cycles = if t.walk.len == 0 {
            self.tlb_walk_cycles
        } else {
            0
        };
        if t.pte_cache.lookup(pte_paddr) {
            t.stats.pte_cache_hits += 1;
            cycles += 1;
        } else {
            t.stats.l1d_pte_reads += 1;
            cycles += self.l1d_hit_cycles;
            if !self.l1d_filter_hit(core, pte_paddr, false) {
                cycles += MemorySystem::data_access(self, core, pte_paddr, false, now + cycles);
            }
        }
        let t = &mut self.tlbs[core];
        t.walk.reads[t.walk.len] = pte_paddr;
        t.walk.len += 1;
        t.walk.cycles += cycles;
        cycles
    }

    fn has_tlb(&self) -> bool {
        !self.tlbs.is_empty()
    }

    fn tlb_lookup(
        &mut self,
        core: CoreId,
        port: TlbPort,
        vaddr: u64,
        asid: u16,
        _now: u64,
    ) -> TlbLookup {
        let l2_cycles = self.tlb_l2_hit_cycles;
        let Some(t) = self.tlbs.get_mut(core) else {
            return TlbLookup::Untracked;
        };
        let p = port as usize;
        let l1 = match port {
            TlbPort::Fetch => &mut t.itlb,
            TlbPort::Data => &mut t.dtlb,
        };
        if l1.lookup(vaddr, asid).is_some() {
            t.stats.refill_hits[p] += 1;
            return TlbLookup::Hit {
                stall: 0,
                evicted: None,
            };
        }
        if let Some(shift) = t.l2.as_mut().and_then(|l2| l2.lookup(vaddr, asid)) {
            // The L2 holds no global bit of its own: a refilled entry is
            // tagged with the current ASID.
            let evicted = l1.insert(vaddr, shift, asid, false);
            t.stats.misses[p][tlb::size_index(shift)] += 1;
            t.stats.l2_hits[p] += 1;
            if evicted.is_some() {
                t.epoch += 1;
            }
            return TlbLookup::Hit {
                stall: l2_cycles,
                evicted,
            };
        }
        t.walk = tlb::Walk {
            active: true,
            ..tlb::Walk::default()
        };
        TlbLookup::Miss
    }

    fn tlb_fill(
        &mut self,
        core: CoreId,
        port: TlbPort,
        asid: u16,
        fill: Option<TlbFill>,
    ) -> Option<PageRange> {
        let t = self.tlbs.get_mut(core)?;
        let walk = std::mem::take(&mut t.walk);
        if !walk.active {
            return None;
        }
        // Every read but a successful walk's last was a valid non-leaf PTE.
        let non_leaf = walk.len.saturating_sub(1);
        for &pa in &walk.reads[..non_leaf] {
            t.pte_cache.insert(pa);
        }
        let z = fill.map_or(tlb::PAGE_SHIFTS.len(), |f| tlb::size_index(f.page_shift));
        let p = port as usize;
        t.stats.misses[p][z] += 1;
        t.stats.walks[z] += 1;
        t.stats.walk_cycles[z] += walk.cycles;
        for (level, _) in walk.reads[..walk.len].iter().enumerate() {
            t.stats.pte_reads[z][level] += 1;
        }
        let f = fill?;
        if let Some(l2) = &mut t.l2 {
            l2.insert(f.vaddr, f.page_shift, asid, f.global);
        }
        let l1 = match port {
            TlbPort::Fetch => &mut t.itlb,
            TlbPort::Data => &mut t.dtlb,
        };
        let evicted = l1.insert(f.vaddr, f.page_shift, asid, f.global);
        if evicted.is_some() {
            t.epoch += 1;
        }
        evicted
    }

    fn tlb_epoch(&self, core: CoreId) -> u64 {
        self.tlbs.get(core).map_or(0, |t| t.epoch)
    }

    fn tlb_flush(&mut self, core: CoreId, flush: TlbFlush) {
        if let Some(t) = self.tlbs.get_mut(core) {
            t.flush(flush);
        }
    }

    /// Nothing to do: entries are tagged with their ASID, and a change of
    /// page tables without one needs an `sfence.vma`, as the spec says.
    fn satp_write(&mut self, _core: CoreId, _satp: u64) {}

    fn flush_line(&mut self, core: CoreId, paddr: u64, kind: FlushKind, now: u64) -> u64 {
        MemorySystem::flush_line(self, core, paddr, kind, now)
    }

    fn flush_l1d(&mut self, core: CoreId, now: u64) -> u64 {
        MemorySystem::flush_l1d(self, core, now)
    }

    fn control_port(&mut self) -> Option<&mut dyn ControlPort> {
        Some(self)
    }
}

impl MemoryModel for MemorySystem {
    fn note_hart_time(&mut self, hart: usize, now_cycles: u64) {
        MemorySystem::note_hart_time(self, hart, now_cycles);
    }

    fn record_write_backs(&mut self) {
        MemorySystem::record_write_backs(self);
    }

    fn finish(&mut self, now_cycles: u64) {
        MemorySystem::finish(self, now_cycles);
    }

    fn stats_json(&self, sim_time_ns: u64) -> Value {
        MemorySystem::stats_json(self, sim_time_ns)
    }

    fn reset_stats(&mut self) {
        MemorySystem::reset_stats(self);
    }

    fn l1d_misses(&self) -> u64 {
        MemorySystem::l1d_misses(self)
    }

    fn bus_transfers(&self) -> u64 {
        self.bus_stats().transfers
    }

    fn record_page_heat(&mut self, window_ns: u64) {
        MemorySystem::record_page_heat(self, window_ns);
    }

    fn take_page_heat(&mut self, all: bool, each: &mut dyn FnMut(rvnvmm_timing::HeatWindow<'_>)) {
        MemorySystem::take_page_heat(self, all, each);
    }
}

impl ControlPort for MemorySystem {
    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), ControlError> {
        MemorySystem::configure(self, node, settings).map_err(|e| ControlError(e.to_string()))
    }

    fn set_boundary(&mut self, region: &str, boundary: u64) -> Result<(), ControlError> {
        MemorySystem::set_boundary(self, region, boundary).map_err(|e| ControlError(e.to_string()))
    }

    fn counters(&self, pointers: &[String]) -> Vec<u64> {
        let stats = self.stats_json(0);
        pointers
            .iter()
            .map(|p| stats.pointer(p).and_then(Value::as_u64).unwrap_or(0))
            .collect()
    }

    fn reset_stats(&mut self) {
        MemorySystem::reset_stats(self)
    }
}
