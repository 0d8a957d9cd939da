//! The timing model between the cores and the memory controllers of rvnvmm.
//!
//! [`MemorySystem`] implements the cores' [`TimingModel`]. It models, per
//! core (which harts run on which core: a [`CoreMap`]), an L1 instruction
//! cache and an L1 data cache, an optional shared L2, MESI coherence
//! between the L1Ds by snooping
//! on a shared bus (seed 003's M32R design), and the bus itself, with fixed
//! request/response latencies and one transfer at a time, in front of the
//! memory controllers ([`Backend`]). It holds no data: the guest's bytes stay
//! in guest RAM, this crate only decides how long each access takes.
//!
//! # Speed: the filter
//! A core asks [`MemorySystem::l1d_filter_hit`] (a handful of host
//! instructions, `&self`) before every load or store and
//! [`MemorySystem::l1i_filter_hit`] before every fetch of a new line. `true`
//! means the access hits in its L1 and changes no state: the core charges
//! the L1 hit latency it always charges, and nothing else happens. Only on
//! `false` does it call [`MemorySystem::data_access`] /
//! [`MemorySystem::fetch`], which run the full model, return the stall in
//! hart cycles *beyond* the L1 hit latency, and refill the filter. Timing,
//! contents and statistics are exactly those of calling the full model on
//! every access (see `filter.rs` for why).
//!
//! # Time
//! Harts give their local time in cycles of `machine.clock_hz`; inside, all
//! times are picoseconds ([`Ps`]). See [`Clock`] for the exact conversion.
//! A miss costs, for a blocking in-order core: L1 tag check → (L2 hit
//! latency, or) bus grant + `bus.request_latency_ns` → controller → bus
//! response grant + `bus.response_latency_ns` → fill. Dirty victims are
//! posted to the controller's write queue before the refill; the core waits
//! only until the bus carried them and the controller accepted them.
//!
//! # Determinism
//! No hash maps, no host time, random replacement from a fixed seed per
//! cache: the same sequence of calls gives the same results.
//!
//! ```
//! use rvnvmm_config::Config;
//! use rvnvmm_memsys::MemorySystem;
//!
//! let cfg = Config::load(None, &[]).unwrap(); // freedom-u500
//! let mut mem = MemorySystem::new(&cfg, 1).unwrap();
//! let pa = 0x8000_1000;
//! assert!(!mem.l1d_filter_hit(0, pa, false));
//! let stall = mem.data_access(0, pa, false, 0); // a cold miss
//! assert!(stall > 0);
//! assert!(mem.l1d_filter_hit(0, pa, false)); // now a 2-cycle L1 hit
//! assert!(!mem.l1d_filter_hit(0, pa, true)); // Exclusive: a store must go through
//! assert_eq!(mem.data_access(0, pa, true, 1000), 0); // silent E -> M
//! assert!(mem.l1d_filter_hit(0, pa, true));
//! ```

#![warn(missing_docs)]

mod backend;
mod bus;
mod cache;
pub mod control;
mod error;
mod filter;
pub mod technology;
mod time;
mod tlb;

#[cfg(test)]
mod tests;

use rvnvmm_config::Config;
use rvnvmm_timing::{
    ControlError, ControlPort, DataAccess, PageRange, TimingModel, TlbFill, TlbFlush, TlbLookup,
    TlbPort,
};
pub use rvnvmm_timing::{CoreId, CoreMap, FlushKind};
use serde_json::{json, Map, Value};

pub use backend::{Backend, Backends, Crossing, NodeAddr};
pub use bus::BusStats;
pub use cache::{CacheStats, LineState};
pub use error::MemsysError;
pub use filter::FILTER_ENTRIES;
pub use technology::fixed_latency::FixedLatency;

#[cfg(test)]
const _: () = {
    const fn send<T: Send>() {}
    send::<MemorySystem>();
};
pub use time::{ns_to_ps, Clock, Ps};

use backend::{BoundaryError, Route, Routes};
use bus::Bus;
use cache::Cache;
use filter::Filter;
use LineState::{Exclusive, Invalid, Modified, Shared};

/// What a data access needs of its L1D line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Intent {
    /// A load: any valid copy.
    Read,
    /// An `lr`: the only copy, clean or dirty (as Rocket's L1 fetches it),
    /// so the `sc` that follows hits without another bus transaction.
    ReadExclusive,
    /// A store, an AMO or an `sc`: the only copy, made dirty.
    Write,
}

impl From<rvnvmm_timing::DataKind> for Intent {
    fn from(kind: rvnvmm_timing::DataKind) -> Intent {
        use rvnvmm_timing::DataKind;
        match kind {
            DataKind::Load => Intent::Read,
            DataKind::LoadReserved => Intent::ReadExclusive,
            DataKind::Store | DataKind::Amo => Intent::Write,
        }
    }
}

/// Knobs of the model that the config file does not (yet) have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Bytes the bus moves per beat (TileLink system bus of Rocket: 8).
    pub bus_beat_bytes: u32,
    /// Bus clock in Hz (Rocket's system bus runs at the core clock).
    pub bus_clock_hz: u64,
    /// Cycles (hart clock) for the other caches to answer a snoop.
    pub snoop_cycles: u32,
    /// Cycles per L1D way walked by a whole-cache flush (Rocket's flush
    /// counter visits one way per cycle).
    pub flush_walk_cycles: u32,
}

impl Options {
    /// The defaults for a machine: the bus of `[bus]`, a snoop costs one
    /// L1D hit latency, a flush walks one way per cycle.
    pub fn for_config(cfg: &Config) -> Options {
        Options {
            bus_beat_bytes: cfg.bus.beat_bytes,
            bus_clock_hz: cfg.bus.clock_hz(&cfg.machine),
            snoop_cycles: cfg.cache.l1d.hit_latency_cycles,
            flush_walk_cycles: 1,
        }
    }
}

/// Cache-flush counters of one hart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlushStats {
    /// Flush instructions: `flush_line` and `flush_l1d` calls.
    pub instructions: u64,
    /// Of those, whole-L1D flushes (`CFLUSH.D.L1 x0`).
    pub whole_l1d: u64,
    /// Lines those instructions actually wrote back (dirty somewhere).
    pub lines_written_back: u64,
}

/// Coherence traffic of one core's L1D: the requests it put on the bus
/// and what the snoops found. (Upgrades, write-backs and the invalidations
/// a core received are counted with its cache, `caches.<name>`.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoherenceStats {
    /// Misses fetched shared (BusRd: loads).
    pub reads: u64,
    /// Misses fetched exclusive (BusRdX: stores, AMOs, `sc`, `lr`).
    pub read_exclusives: u64,
    /// Of the misses, those that found the line in another L1D.
    pub snoop_hits: u64,
    /// Of those, lines another L1D supplied from its Modified copy.
    pub cache_to_cache: u64,
    /// Copies in other L1Ds this core's misses and upgrades invalidated.
    pub invalidations_sent: u64,
}

/// A memory region as the statistics see it.
#[derive(Clone, Debug)]
struct RegionInfo {
    name: String,
    controller: String,
    /// Line reads that crossed the bus to this region.
    bus_reads: u64,
    /// Line writes that crossed the bus to this region.
    bus_writes: u64,
    /// Sum over reads of the time from the bus request to the fill.
    read_wait_ps: Ps,
    /// Writes a requester waited for (victims, flushes; not the memory
    /// update of a cache-to-cache transfer).
    waited_writes: u64,
    /// Sum over those writes of the time the requester waited.
    write_wait_ps: Ps,
}

/// A controller behind the bus.
struct BackendSlot {
    name: String,
    backend: Box<dyn Backend + Send>,
    /// The names of its nodes, in [`NodeAddr::node`] order.
    nodes: Vec<String>,
}

/// Caches, coherence, bus and controllers of one machine; see the crate
/// docs.
pub struct MemorySystem {
    /// Per-core filters: first, they are what every access touches.
    filters: Vec<Filter>,
    l1d: Vec<Cache>,
    /// How many L1Ds were ever filled ([`Cache::may_hold_lines`]): with
    /// none but the requester's, a miss has no other core to snoop.
    l1d_filled: usize,
    l1i: Vec<Cache>,
    l2: Option<Cache>,
    bus: Bus,
    backends: Vec<BackendSlot>,
    regions: Vec<RegionInfo>,
    routes: Routes,
    clock: Clock,
    d_shift: u32,
    i_shift: u32,
    l1d_hit_cycles: u64,
    l1i_hit_cycles: u64,
    l2_hit_ps: Ps,
    snoop_ps: Ps,
    req_ps: Ps,
    resp_ps: Ps,
    /// Bus time of an address-only phase (one beat).
    addr_occ: Ps,
    /// Bus time of an L1D (or L2) line.
    d_occ: Ps,
    /// Bus time of an L1I line.
    i_occ: Ps,
    flush_walk_ps: Ps,
    flush: Vec<FlushStats>,
    /// Coherence counters per core.
    coherence: Vec<CoherenceStats>,
    /// PTE reads of page-table walks, per core.
    pte_reads: Vec<u64>,
    /// Per core: its TLBs, with `tlb.enabled` (else empty: walks are
    /// counted, not timed).
    tlbs: Vec<tlb::CoreTlbs>,
    /// Cycles of an L2 TLB hit.
    tlb_l2_hit_cycles: u64,
    /// Fixed cycles of a refill besides its PTE reads: the walker's
    /// `tlb.walk_cycles` or the software handler's
    /// `tlb.software_refill_cycles`.
    tlb_walk_cycles: u64,
    /// Latest time each core presented (`None`: never).
    hart_ps: Vec<Option<Ps>>,
    /// Lines written to a controller since the harts last took them, when
    /// a persistence domain is tracked (`record_write_backs`).
    write_backs: Option<Vec<u64>>,
    /// Which core each hart runs on: the L1s, filters, flush counters and
    /// bus requesters are per core.
    cores: CoreMap,
}

impl std::fmt::Debug for MemorySystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySystem")
            .field("cores", &self.l1d.len())
            .field("l2", &self.l2.is_some())
            .field(
                "backends",
                &self.backends.iter().map(|b| &b.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl MemorySystem {
    /// The memory system of `cfg` for `harts` harts, each on a core of its
    /// own, with a controller model per `[memory.controllers.NAME]`.
    pub fn new(cfg: &Config, harts: usize) -> Result<MemorySystem, MemsysError> {
        MemorySystem::with_cores(cfg, CoreMap::one_thread_per_core(harts))
    }

    /// The memory system of `cfg` for its own topology: `machine.harts`
    /// harts, `machine.threads_per_core` on each core (sharing its L1s).
    pub fn for_machine(cfg: &Config) -> Result<MemorySystem, MemsysError> {
        let map = CoreMap::with_threads_per_core(
            cfg.machine.harts as usize,
            cfg.machine.threads_per_core as usize,
        )
        .ok_or(MemsysError::NoHarts)?;
        MemorySystem::with_cores(cfg, map)
    }

    /// The memory system of `cfg` for the harts and cores of `cores`.
    pub fn with_cores(cfg: &Config, cores: CoreMap) -> Result<MemorySystem, MemsysError> {
        let backends = default_backends(cfg)?;
        MemorySystem::with_backends(cfg, cores, Options::for_config(cfg), backends)
    }

    /// As [`MemorySystem::with_cores`], with explicit [`Options`] and
    /// controllers: one `(controller name, backend)` per controller that a
    /// region names.
    pub fn with_backends(
        cfg: &Config,
        core_map: CoreMap,
        options: Options,
        backends: Backends,
    ) -> Result<MemorySystem, MemsysError> {
        let harts = core_map.cores();
        if harts == 0 {
            return Err(MemsysError::NoHarts);
        }
        for (key, value) in [
            ("bus.request_latency_ns", cfg.bus.request_latency_ns),
            ("bus.response_latency_ns", cfg.bus.response_latency_ns),
        ] {
            // Beyond it, `ns_to_ps` saturates and a time plus the latency
            // would wrap.
            if !(value.is_finite() && (0.0..=rvnvmm_config::MAX_LATENCY_NS).contains(&value)) {
                return Err(MemsysError::Latency { key, value });
            }
        }
        let c = &cfg.cache;
        let clock = Clock::new(cfg.machine.clock_hz);
        let mut l1d = Vec::with_capacity(harts);
        let mut l1i = Vec::with_capacity(harts);
        for h in 0..harts {
            let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(2 * h as u64 + 1);
            let name = core_name(&core_map, h);
            l1i.push(Cache::new(&format!("{name}.l1i"), &c.l1i, seed)?);
            l1d.push(Cache::new(&format!("{name}.l1d"), &c.l1d, seed ^ 0xD)?);
        }
        let l2 = if c.l2.enabled {
            let l2 = Cache::new("l2", &c.l2, 0x5EED_0002)?;
            for (name, level) in [("l1i", &c.l1i), ("l1d", &c.l1d)] {
                if level.enabled && level.line_bytes != c.l2.line_bytes {
                    return Err(MemsysError::L2LineBytes {
                        level: name,
                        line_bytes: level.line_bytes,
                        l2_line_bytes: c.l2.line_bytes,
                    });
                }
            }
            Some(l2)
        } else {
            None
        };
        // A disabled L1 moves lines of the L2's size, or of its own.
        let shift_of = |c: &Cache| match &l2 {
            Some(l2) if !c.enabled() => l2.line_shift(),
            _ => c.line_shift(),
        };
        let d_shift = shift_of(&l1d[0]);
        let i_shift = shift_of(&l1i[0]);

        // Controllers and routes.
        let mut slots: Vec<BackendSlot> = Vec::new();
        for (name, backend) in backends {
            if slots.iter().any(|s| s.name == name) {
                return Err(MemsysError::ControllerTwice(name));
            }
            slots.push(BackendSlot {
                name,
                backend,
                nodes: Vec::new(),
            });
        }
        let mut regions = Vec::new();
        let mut routes = Vec::new();
        for (name, r) in &cfg.memory.regions {
            let backend = slots
                .iter()
                .position(|s| s.name == r.controller)
                .ok_or_else(|| MemsysError::NoModel {
                    region: name.clone(),
                    controller: r.controller.clone(),
                })?;
            // Nodes are numbered per backend in name order, as
            // `technology::Setup::nodes` lists them.
            let node = slots[backend].nodes.len();
            slots[backend].nodes.push(name.clone());
            routes.push(Route {
                base: r.base,
                end: r.end(),
                backend,
                node,
                region: regions.len(),
            });
            regions.push(RegionInfo {
                name: name.clone(),
                controller: r.controller.clone(),
                bus_reads: 0,
                bus_writes: 0,
                read_wait_ps: 0,
                waited_writes: 0,
                write_wait_ps: 0,
            });
        }

        let bus_clock = Clock::new(options.bus_clock_hz);
        let beat_ps = bus_clock.duration_ps(1);
        let beats = |line_shift: u32| -> Ps {
            let bytes = 1u64 << line_shift;
            bytes.div_ceil(u64::from(options.bus_beat_bytes.max(1)))
        };
        Ok(MemorySystem {
            filters: (0..harts).map(|_| Filter::new(d_shift, i_shift)).collect(),
            l1d,
            l1d_filled: 0,
            l1i,
            l2,
            bus: Bus::new(harts),
            backends: slots,
            regions,
            routes: Routes::new(routes),
            clock,
            d_shift,
            i_shift,
            l1d_hit_cycles: u64::from(c.l1d.hit_latency_cycles),
            l1i_hit_cycles: u64::from(c.l1i.hit_latency_cycles),
            l2_hit_ps: clock.duration_ps(u64::from(c.l2.hit_latency_cycles)),
            snoop_ps: clock.duration_ps(u64::from(options.snoop_cycles)),
            req_ps: ns_to_ps(cfg.bus.request_latency_ns),
            resp_ps: ns_to_ps(cfg.bus.response_latency_ns),
            addr_occ: beat_ps,
            d_occ: beats(d_shift) * beat_ps,
            i_occ: beats(i_shift) * beat_ps,
            flush_walk_ps: clock.duration_ps(u64::from(options.flush_walk_cycles)),
            flush: vec![FlushStats::default(); harts],
            coherence: vec![CoherenceStats::default(); harts],
            pte_reads: vec![0; harts],
            tlbs: if cfg.tlb.enabled {
                (0..harts).map(|_| tlb::CoreTlbs::new(&cfg.tlb)).collect()
            } else {
                Vec::new()
            },
            tlb_l2_hit_cycles: u64::from(cfg.tlb.l2_hit_latency_cycles),
            tlb_walk_cycles: u64::from(match cfg.tlb.refill {
                rvnvmm_config::TlbRefill::Walker => cfg.tlb.walk_cycles,
                rvnvmm_config::TlbRefill::Software => cfg.tlb.software_refill_cycles,
            }),
            hart_ps: vec![None; core_map.harts()],
            write_backs: None,
            cores: core_map,
        })
    }

    /// Keeps the address of every line written to a controller from now
    /// on, for the persistence domain (`TimingModel::take_write_backs`).
    pub fn record_write_backs(&mut self) {
        self.write_backs.get_or_insert_with(Vec::new);
    }

    /// Number of harts.
    pub fn harts(&self) -> usize {
        self.cores.harts()
    }

    /// Number of cores: of L1 pairs.
    pub fn cores(&self) -> usize {
        self.l1d.len()
    }

    /// Which core each hart runs on.
    pub fn core_map(&self) -> &CoreMap {
        &self.cores
    }

    /// The hart clock used for conversions.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    // ------------------------------------------------------------------
    // The fast path.
    // ------------------------------------------------------------------

    /// Filter cache (ZSim-style): true if the line of `paddr` is known to be
    /// in `core`'s L1D with the needed permission (a store needs Modified),
    /// so the access costs only the L1 hit time the core model already
    /// charges and changes no state. `false` says nothing: call
    /// [`MemorySystem::data_access`].
    #[inline]
    pub fn l1d_filter_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool {
        let f = &self.filters[core];
        let line = paddr >> f.d_shift;
        let i = filter::index(line);
        if write {
            if f.write[i] == line {
                f.write_hits.set(f.write_hits.get() + 1);
                return true;
            }
        } else if f.read[i] == line {
            f.read_hits.set(f.read_hits.get() + 1);
            return true;
        }
        false
    }

    /// As [`MemorySystem::l1d_filter_hit`] for an instruction fetch from
    /// `core`'s L1I.
    #[inline]
    pub fn l1i_filter_hit(&self, core: CoreId, paddr: u64) -> bool {
        let f = &self.filters[core];
        let line = paddr >> f.i_shift;
        if f.fetch[filter::index(line)] == line {
            f.fetch_hits.set(f.fetch_hits.get() + 1);
            return true;
        }
        false
    }

    /// True if a data access of `core` to `paddr` would be served by its
    /// own L1D alone (the line present, and for a store held Exclusive or
    /// Modified) and touches nothing other cores write: it needs no
    /// synchronisation with them. A contended line (one that moved between
    /// cores for writing) is never private: its hits keep to simulated-time
    /// order, so a spinning load sees a remote write at its time and a
    /// store meets the other harts' accesses in order. Changes no state.
    /// False when the L1D is disabled.
    pub fn l1d_private_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool {
        let c = &self.l1d[core];
        if !c.enabled() {
            return false;
        }
        match c.find(paddr >> self.d_shift) {
            Some(slot) => {
                !c.is_contended(slot) && (!write || matches!(c.state(slot), Modified | Exclusive))
            }
            None => false,
        }
    }

    /// As [`MemorySystem::l1d_private_hit`] for an instruction fetch.
    pub fn l1i_private_hit(&self, core: CoreId, paddr: u64) -> bool {
        let c = &self.l1i[core];
        c.enabled() && c.find(paddr >> self.i_shift).is_some()
    }

    /// log2 of the L1D line size: accesses that cross a line boundary must
    /// be presented once per line.
    pub fn l1d_line_shift(&self) -> u32 {
        self.d_shift
    }

    /// log2 of the L1I line size.
    pub fn l1i_line_shift(&self) -> u32 {
        self.i_shift
    }

    // ------------------------------------------------------------------
    // The full model.
    // ------------------------------------------------------------------

    /// Full model for a data access (load, store, AMO, LR/SC: the last three
    /// with `write = true`) of `core` at its local time `now_cycles`: returns
    /// the stall in hart cycles beyond an L1D hit, and refills the filter.
    pub fn data_access(&mut self, core: CoreId, paddr: u64, write: bool, now_cycles: u64) -> u64 {
        let intent = if write { Intent::Write } else { Intent::Read };
        self.data_access_for(core, paddr, intent, now_cycles)
    }

    /// As [`MemorySystem::data_access`], for any [`Intent`].
    fn data_access_for(
        &mut self,
        core: CoreId,
        paddr: u64,
        intent: Intent,
        now_cycles: u64,
    ) -> u64 {
        let hit_end = now_cycles.saturating_add(self.l1d_hit_cycles);
        let t = self.clock.cycles_to_ps(hit_end);
        self.note_time(core, t);
        let done = self.data_access_ps(core, paddr, intent, t);
        self.clock.ps_to_cycles_ceil(done).saturating_sub(hit_end)
    }

    /// Full model for an instruction fetch of the line holding `paddr`:
    /// returns the stall in hart cycles beyond an L1I hit, and refills the
    /// filter.
    pub fn fetch(&mut self, core: CoreId, paddr: u64, now_cycles: u64) -> u64 {
        let hit_end = now_cycles.saturating_add(self.l1i_hit_cycles);
        let t = self.clock.cycles_to_ps(hit_end);
        self.note_time(core, t);
        let done = self.fetch_ps(core, paddr, t);
        self.clock.ps_to_cycles_ceil(done).saturating_sub(hit_end)
    }

    /// A cache-maintenance instruction on the line holding `paddr` (see
    /// [`FlushKind`]). Returns the stall in hart cycles (the instruction's
    /// own issue cycle is the core's); counts the instruction and, if the
    /// line was dirty anywhere it looked, one line written back.
    pub fn flush_line(
        &mut self,
        core: CoreId,
        paddr: u64,
        kind: FlushKind,
        now_cycles: u64,
    ) -> u64 {
        let t0 = self.clock.cycles_to_ps(now_cycles);
        self.note_time(core, t0);
        let done = self.flush_line_ps(core, paddr, kind, t0);
        self.clock
            .ps_to_cycles_ceil(done)
            .saturating_sub(now_cycles)
    }

    /// `CFLUSH.D.L1 x0`: write back every dirty line of `core`'s L1D (to the
    /// L2 if there is one, else memory) and invalidate the whole L1D.
    /// Returns the stall in hart cycles: the walk over all ways, or the
    /// write-backs if they take longer.
    pub fn flush_l1d(&mut self, core: CoreId, now_cycles: u64) -> u64 {
        let t0 = self.clock.cycles_to_ps(now_cycles);
        self.note_time(core, t0);
        let st = &mut self.flush[core];
        st.instructions += 1;
        st.whole_l1d += 1;
        let dirty: Vec<(usize, u64, LineState)> = self.l1d[core].valid_lines().collect();
        let mut t = t0;
        let mut written = 0;
        for (slot, line, state) in dirty {
            let walk = t0 + slot as Ps * self.flush_walk_ps;
            t = t.max(walk);
            self.l1d[core].set_state(slot, Invalid);
            if state == Modified {
                self.l1d[core].stats.writebacks += 1;
                written += 1;
                t = self.writeback_below(core, line << self.d_shift, t);
            }
        }
        self.filters[core].clear_data();
        self.flush[core].lines_written_back += written;
        let walk_end = t0 + self.l1d[core].capacity_lines() as Ps * self.flush_walk_ps;
        let done = t.max(walk_end);
        self.clock
            .ps_to_cycles_ceil(done)
            .saturating_sub(now_cycles)
    }

    /// `fence.i`: invalidate `core`'s L1I (clean: nothing to write back).
    pub fn flush_l1i(&mut self, core: CoreId) {
        let lines: Vec<usize> = self.l1i[core].valid_lines().map(|(s, _, _)| s).collect();
        for s in lines {
            self.l1i[core].set_state(s, Invalid);
        }
        self.filters[core].clear_fetch();
    }

    /// Lets the controllers run up to the hart time `now_cycles` (queued
    /// writes, automatic precharge). Call it now and then; `finish` calls it.
    pub fn advance(&mut self, now_cycles: u64) {
        let t = self.clock.cycles_to_ps(now_cycles);
        for b in &mut self.backends {
            b.backend.advance(t);
        }
    }

    /// End of the run at hart time `now_cycles` (the latest hart clock):
    /// drains the controllers so their statistics are complete.
    pub fn finish(&mut self, now_cycles: u64) {
        let t = self.clock.cycles_to_ps(now_cycles);
        for b in &mut self.backends {
            b.backend.drain(t);
        }
    }

    /// The index of region `region` and the controller model serving it.
    fn region_backend(
        &mut self,
        region: &str,
    ) -> Result<(usize, &mut Box<dyn Backend + Send>), MemsysError> {
        let r = self
            .regions
            .iter()
            .position(|r| r.name == region)
            .ok_or_else(|| MemsysError::UnknownRegion(region.to_string()))?;
        let ctrl = &self.regions[r].controller;
        let b = self
            .backends
            .iter_mut()
            .find(|b| &b.name == ctrl)
            .ok_or_else(|| MemsysError::NoModel {
                region: region.to_string(),
                controller: ctrl.clone(),
            })?;
        Ok((r, &mut b.backend))
    }

    /// Applies `settings` to memory node `node` at run time, as one change
    /// (the control page): keys of its technology, values as `--set` writes
    /// them (for an NVMM region of the DDR3 controller: `method`, `trcd_ns`,
    /// ... of `memory.NAME`).
    pub fn configure(
        &mut self,
        node: &str,
        settings: &[(&str, String)],
    ) -> Result<(), MemsysError> {
        self.region_backend(node)?.1.configure(node, settings)
    }

    /// Moves the start of memory node `node`, and the end of the node below
    /// it on the same controller, to `boundary` (the control page's
    /// `BOUNDARY`): timing and statistics follow at once.
    pub fn set_boundary(&mut self, node: &str, boundary: u64) -> Result<(), MemsysError> {
        let (r, _) = self.region_backend(node)?;
        self.routes.move_boundary(r, boundary).map_err(|e| match e {
            BoundaryError::NoNode => MemsysError::UnknownRegion(node.to_string()),
            BoundaryError::NoneBelow => MemsysError::NoBoundary {
                node: node.to_string(),
                controller: self.regions[r].controller.clone(),
            },
            BoundaryError::Outside { low, end } => MemsysError::Boundary { boundary, low, end },
        })
    }

    /// Which of several harts presenting a request at the same instant the
    /// bus arbiter serves first: rank 0 is next in round-robin order. A
    /// scheduler that runs the hart with the smallest local time should
    /// break ties by this rank.
    pub fn bus_rank(&self, core: CoreId) -> usize {
        self.bus.rank(core)
    }

    /// MESI state of the line holding `paddr` in `core`'s L1D.
    pub fn l1d_state(&self, core: CoreId, paddr: u64) -> LineState {
        self.l1d[core].state_of(paddr >> self.d_shift)
    }

    /// Whether the line holding `paddr` is in `core`'s L1I.
    pub fn l1i_contains(&self, core: CoreId, paddr: u64) -> bool {
        self.l1i[core].state_of(paddr >> self.i_shift) != Invalid
    }

    /// State of the line holding `paddr` in the L2 (`Invalid` without one).
    pub fn l2_state(&self, paddr: u64) -> LineState {
        self.l2
            .as_ref()
            .map_or(Invalid, |l2| l2.state_of(paddr >> l2.line_shift()))
    }

    // ------------------------------------------------------------------
    // Statistics.
    // ------------------------------------------------------------------

    /// Counters of every enabled cache, by name (`hart0.l1i`, `hart0.l1d`,
    /// ..., `l2`), filter hits included.
    pub fn cache_stats(&self) -> Vec<(String, CacheStats)> {
        let mut out = Vec::new();
        for h in 0..self.cores() {
            let f = &self.filters[h];
            if self.l1i[h].enabled() {
                let mut s = self.l1i[h].stats.clone();
                s.read_hits += f.fetch_hits.get();
                out.push((self.l1i[h].name.clone(), s));
            }
            if self.l1d[h].enabled() {
                let mut s = self.l1d[h].stats.clone();
                s.read_hits += f.read_hits.get();
                s.write_hits += f.write_hits.get();
                out.push((self.l1d[h].name.clone(), s));
            }
        }
        if let Some(l2) = &self.l2 {
            out.push((l2.name.clone(), l2.stats.clone()));
        }
        out
    }

    /// Misses of all caches named `*.l1d` (what a sampling window counts).
    pub fn l1d_misses(&self) -> u64 {
        self.cache_stats()
            .iter()
            .filter(|(name, _)| name.ends_with(".l1d"))
            .map(|(_, s)| s.read_misses + s.write_misses)
            .sum()
    }

    /// Flush counters per core.
    pub fn flush_stats(&self) -> &[FlushStats] {
        &self.flush
    }

    /// Bus counters.
    pub fn bus_stats(&self) -> &BusStats {
        &self.bus.stats
    }

    /// Everything for the stats JSON, as an object to merge at the top
    /// level: `caches.<name>.{hits, misses, hit_rate, read_hits,
    /// read_misses, write_hits, write_misses, writebacks, upgrades,
    /// invalidations}`, `flushes.{instructions, whole_l1d,
    /// lines_written_back, per_hart}`, `bus.{transfers, busy_ns,
    /// utilization, wait_ns, hart_wait_ns}` and `regions.<name>.{controller,
    /// bus_reads, bus_writes, avg_cpu_read_ns, avg_cpu_write_wait_ns}` plus
    /// whatever the region's controller reports (`reads`, `writes`, `acts`,
    /// `act_per_req`, `bank_para`, `rw_ratio`, `req_per_sec`,
    /// `row_hit_rate`, `avg_read_latency_ns`, `avg_write_latency_ns`, ...).
    pub fn stats_json(&self, sim_time_ns: u64) -> Value {
        let mut caches = Map::new();
        for (name, s) in self.cache_stats() {
            let accesses = s.hits() + s.misses();
            caches.insert(
                name,
                json!({
                    "hits": s.hits(),
                    "misses": s.misses(),
                    "hit_rate": ratio(s.hits(), accesses),
                    "read_hits": s.read_hits,
                    "read_misses": s.read_misses,
                    "write_hits": s.write_hits,
                    "write_misses": s.write_misses,
                    "writebacks": s.writebacks,
                    "upgrades": s.upgrades,
                    "invalidations": s.invalidations,
                }),
            );
        }
        let total = self
            .flush
            .iter()
            .fold(FlushStats::default(), |a, f| FlushStats {
                instructions: a.instructions + f.instructions,
                whole_l1d: a.whole_l1d + f.whole_l1d,
                lines_written_back: a.lines_written_back + f.lines_written_back,
            });
        let per_hart: Vec<Value> = self
            .flush
            .iter()
            .map(|f| {
                json!({
                    "instructions": f.instructions,
                    "whole_l1d": f.whole_l1d,
                    "lines_written_back": f.lines_written_back,
                })
            })
            .collect();
        let b = &self.bus.stats;
        let sim_ps = sim_time_ns.saturating_mul(1000);
        let bus = json!({
            "transfers": b.transfers,
            "busy_ns": b.busy_ps as f64 / 1000.0,
            "utilization": if sim_ps == 0 { 0.0 } else { b.busy_ps as f64 / sim_ps as f64 },
            "wait_ns": b.wait_ps as f64 / 1000.0,
            "hart_wait_ns": b.hart_wait_ps.iter().map(|&w| w as f64 / 1000.0).collect::<Vec<_>>(),
        });
        let mut regions = Map::new();
        for r in &self.regions {
            regions.insert(
                r.name.clone(),
                json!({
                    "controller": r.controller,
                    "bus_reads": r.bus_reads,
                    "bus_writes": r.bus_writes,
                    "avg_cpu_read_ns": avg_ns(r.read_wait_ps, r.bus_reads),
                    "avg_cpu_write_wait_ns": avg_ns(r.write_wait_ps, r.waited_writes),
                }),
            );
        }
        for b in &self.backends {
            let nodes: Vec<&str> = b.nodes.iter().map(String::as_str).collect();
            for (name, v) in b.backend.node_stats(&nodes, sim_time_ns) {
                let entry = regions
                    .entry(name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let (Value::Object(dst), Value::Object(src)) = (entry, v) {
                    dst.extend(src);
                }
            }
        }
        let pte_reads: u64 = self.pte_reads.iter().sum();
        let coherence_total = self
            .coherence
            .iter()
            .fold(CoherenceStats::default(), |a, c| CoherenceStats {
                reads: a.reads + c.reads,
                read_exclusives: a.read_exclusives + c.read_exclusives,
                snoop_hits: a.snoop_hits + c.snoop_hits,
                cache_to_cache: a.cache_to_cache + c.cache_to_cache,
                invalidations_sent: a.invalidations_sent + c.invalidations_sent,
            });
        let coherence_json = |c: &CoherenceStats| {
            json!({
                "reads": c.reads,
                "read_exclusives": c.read_exclusives,
                "snoop_hits": c.snoop_hits,
                "cache_to_cache": c.cache_to_cache,
                "invalidations_sent": c.invalidations_sent,
            })
        };
        let mut coherence = coherence_json(&coherence_total);
        coherence["per_hart"] = self.coherence.iter().map(coherence_json).collect();
        let mut out = json!({
            "caches": caches,
            "page_walks": {
                "pte_reads": pte_reads,
                "per_hart": self.pte_reads,
            },
            "flushes": {
                "instructions": total.instructions,
                "whole_l1d": total.whole_l1d,
                "lines_written_back": total.lines_written_back,
                "per_hart": per_hart,
            },
            "bus": bus,
            "coherence": coherence,
            "regions": regions,
        });
        if !self.tlbs.is_empty() {
            out["tlb"] = self.tlb_stats_json();
        }
        out
    }

    /// The `tlb` object of the statistics (`docs/stats.md`): lookups, hits
    /// and misses of the L1 TLBs summed over the cores, and per page size
    /// the misses, L2 TLB hits, walks, walk cycles and PTE reads by level.
    fn tlb_stats_json(&self) -> Value {
        let mut sum = tlb::TlbStats::default();
        let (mut itlb_lookups, mut dtlb_lookups) = (0u64, 0u64);
        let mut per_core = Vec::new();
        for (c, t) in self.tlbs.iter().enumerate() {
            let s = &t.stats;
            // One lookup per cache access an instruction makes.
            let f = &self.filters[c];
            let (i, d) = (&self.l1i[c].stats, &self.l1d[c].stats);
            let i_acc = i.hits() + i.misses() + f.fetch_hits.get();
            let d_acc = (d.hits() + d.misses() + f.read_hits.get() + f.write_hits.get())
                .saturating_sub(s.l1d_pte_reads);
            itlb_lookups += i_acc;
            dtlb_lookups += d_acc;
            per_core.push(json!({
                "itlb_misses": s.misses[0].iter().sum::<u64>(),
                "dtlb_misses": s.misses[1].iter().sum::<u64>(),
                "walk_cycles": s.walk_cycles.iter().sum::<u64>(),
            }));
            for p in 0..2 {
                for z in 0..5 {
                    sum.misses[p][z] += s.misses[p][z];
                }
                sum.l2_hits[p] += s.l2_hits[p];
                sum.refill_hits[p] += s.refill_hits[p];
            }
            for z in 0..5 {
                sum.walks[z] += s.walks[z];
                sum.walk_cycles[z] += s.walk_cycles[z];
                for l in 0..3 {
                    sum.pte_reads[z][l] += s.pte_reads[z][l];
                }
            }
            sum.pte_cache_hits += s.pte_cache_hits;
            sum.flushed += s.flushed;
        }
        let port = |p: usize, lookups: u64| {
            let misses: u64 = sum.misses[p].iter().sum();
            json!({
                "lookups": lookups,
                "hits": lookups.saturating_sub(misses),
                "misses": misses,
                "miss_rate": ratio(misses, lookups),
                "l2_hits": sum.l2_hits[p],
                "refill_hits": sum.refill_hits[p],
            })
        };
        let mut sizes = Map::new();
        let names = tlb::PAGE_NAMES.iter().chain(std::iter::once(&"fault"));
        for (z, name) in names.enumerate() {
            sizes.insert(
                name.to_string(),
                json!({
                    "itlb_misses": sum.misses[0][z],
                    "dtlb_misses": sum.misses[1][z],
                    "l2_hits": if z == 0 { sum.l2_hits[0] + sum.l2_hits[1] } else { 0 },
                    "walks": sum.walks[z],
                    "walk_cycles": sum.walk_cycles[z],
                    "pte_reads": sum.pte_reads[z],
                }),
            );
        }
        json!({
            "itlb": port(0, itlb_lookups),
            "dtlb": port(1, dtlb_lookups),
            "walks": sum.walks.iter().sum::<u64>(),
            "walk_cycles": sum.walk_cycles.iter().sum::<u64>(),
            "pte_cache_hits": sum.pte_cache_hits,
            "flushed": sum.flushed,
            "page_sizes": sizes,
            "per_hart": per_core,
        })
    }

    /// Zeroes every counter (caches, filter hits, flushes, bus, regions,
    /// controllers); cache contents and timing state stay.
    pub fn reset_stats(&mut self) {
        for c in self.l1d.iter_mut().chain(self.l1i.iter_mut()) {
            c.reset_stats();
        }
        if let Some(l2) = &mut self.l2 {
            l2.reset_stats();
        }
        for f in &self.filters {
            f.read_hits.set(0);
            f.write_hits.set(0);
            f.fetch_hits.set(0);
        }
        self.flush.fill(FlushStats::default());
        self.coherence.fill(CoherenceStats::default());
        self.pte_reads.fill(0);
        for t in &mut self.tlbs {
            t.stats = tlb::TlbStats::default();
        }
        self.bus.reset_stats();
        for r in &mut self.regions {
            r.bus_reads = 0;
            r.bus_writes = 0;
            r.read_wait_ps = 0;
            r.waited_writes = 0;
            r.write_wait_ps = 0;
        }
        for b in &mut self.backends {
            b.backend.reset_stats();
        }
    }

    // ------------------------------------------------------------------
    // Internals. Every `*_ps` function takes and returns absolute ps.
    // ------------------------------------------------------------------

    fn note_time(&mut self, core: CoreId, t: Ps) {
        // A request of a core of several threads bounds only the thread
        // that made it, which the model does not know: those cores' bounds
        // come from `note_hart_time` alone.
        if self.hart_ps.len() == self.l1d.len() {
            self.note_hart_ps(core, t);
        }
    }

    fn note_hart_ps(&mut self, hart: usize, t: Ps) {
        let slot = &mut self.hart_ps[hart];
        *slot = Some(slot.map_or(t, |p| p.max(t)));
    }

    /// No request can come before this: in-flight records ending earlier
    /// can be forgotten. A hart that has presented nothing yet may still
    /// present a request at time 0, unless the scheduler said otherwise
    /// ([`MemorySystem::note_hart_time`]).
    fn low_water(&self) -> Ps {
        self.hart_ps
            .iter()
            .map(|p| p.unwrap_or(0))
            .min()
            .unwrap_or(0)
    }

    /// Tells the model that hart `hart` will present no request before
    /// `now_cycles` (its clock, or for a hart with nothing to run, the
    /// earliest time work could reach it). Lets the model forget history
    /// sooner; never changes a result.
    pub fn note_hart_time(&mut self, hart: usize, now_cycles: u64) {
        let t = self.clock.cycles_to_ps(now_cycles);
        self.note_hart_ps(hart, t);
    }

    fn data_access_ps(&mut self, h: usize, paddr: u64, intent: Intent, t: Ps) -> Ps {
        let write = intent == Intent::Write;
        if !self.l1d[h].enabled() {
            return self.uncached_ps(h, paddr, write, t);
        }
        let line = paddr >> self.d_shift;
        if let Some(slot) = self.l1d[h].find(line) {
            let state = self.l1d[h].state(slot);
            let done = match (intent, state) {
                (Intent::Read, _) => {
                    self.l1d[h].stats.read_hits += 1;
                    t
                }
                (Intent::Write, Modified) | (Intent::ReadExclusive, Modified | Exclusive) => {
                    self.l1d[h].stats.write_hits += 1;
                    t
                }
                (Intent::Write, Exclusive) => {
                    self.l1d[h].stats.write_hits += 1;
                    self.l1d[h].set_state(slot, Modified);
                    t
                }
                (_, _) => {
                    // Shared: invalidate the other copies first.
                    let st = &mut self.l1d[h].stats;
                    st.write_misses += 1;
                    st.upgrades += 1;
                    if self.invalidate_others(h, line) {
                        self.l1d[h].set_contended(slot);
                    }
                    let done = self.coherence_broadcast(h, t);
                    self.l1d[h].set_state(slot, if write { Modified } else { Exclusive });
                    self.l1d[h].set_arrival(slot, done);
                    done
                }
            };
            if let Some(old) = self.l1d[h].touch(slot) {
                self.filters[h].drop_data(old);
            }
            self.fill_data_filter(h, slot, line);
            return done;
        }

        // Miss. An `lr` counts with the stores: it needs the line exclusive.
        if intent != Intent::Read {
            self.l1d[h].stats.write_misses += 1;
        } else {
            self.l1d[h].stats.read_misses += 1;
        }
        let start = self.l1d[h].mshr.earliest_start(t);
        let mut t1 = start;
        let slot = self.l1d[h].victim(line);
        let vstate = self.l1d[h].state(slot);
        if vstate != Invalid {
            let vline = self.l1d[h].line(slot);
            self.filters[h].drop_data(vline);
            self.l1d[h].set_state(slot, Invalid);
            if vstate == Modified {
                self.l1d[h].stats.writebacks += 1;
                t1 = self.writeback_below(h, vline << self.d_shift, t1);
            }
        }
        let (done, state, contended) = self.l1d_refill(h, line, intent, t1);
        if !self.l1d[h].may_hold_lines() {
            self.l1d_filled += 1;
        }
        if let Some(old) = self.l1d[h].fill(slot, line, state) {
            self.filters[h].drop_data(old);
        }
        if contended {
            self.l1d[h].set_contended(slot);
        }
        self.l1d[h].set_arrival(slot, done);
        self.fill_data_filter(h, slot, line);
        self.l1d[h].mshr.insert(start, done, start);
        done
    }

    /// After an access of `h` to `line` in way `slot` of its L1D: the
    /// filter learns the line (for stores too if Modified), unless it is
    /// contended, whose every access must reach the sync check.
    #[inline(always)]
    fn fill_data_filter(&mut self, h: usize, slot: usize, line: u64) {
        let c = &self.l1d[h];
        if c.is_contended(slot) {
            return;
        }
        if c.state(slot) == Modified {
            self.filters[h].fill_write(line);
        } else {
            self.filters[h].fill_read(line);
        }
    }

    /// Snoops the other L1Ds for a miss of `h` on `line` (BusRd for a read,
    /// BusRdX for a store or an `lr`, which wants the line exclusive) and
    /// brings the line in: returns when it arrives, its new state, and
    /// whether it is contended (a BusRdX took it from another core, or a
    /// BusRd found it Modified in one).
    fn l1d_refill(&mut self, h: usize, line: u64, intent: Intent, t: Ps) -> (Ps, LineState, bool) {
        let write = intent != Intent::Read;
        if write {
            self.coherence[h].read_exclusives += 1;
        } else {
            self.coherence[h].reads += 1;
        }
        let mut owner = false;
        let mut shared = false;
        let mut took = false;
        // A Modified copy supplies the data, once it has it itself: a line
        // still on its way to one core goes on to the next after it lands.
        let mut from = t;
        // No other L1D ever held a line (a single-threaded program): none
        // to visit.
        let own = usize::from(self.l1d[h].may_hold_lines());
        let others = if self.l1d_filled > own {
            self.cores()
        } else {
            0
        };
        for o in 0..others {
            if o == h || !self.l1d[o].may_hold_lines() {
                continue;
            }
            let Some(s) = self.l1d[o].find(line) else {
                continue;
            };
            let st = self.l1d[o].state(s);
            if st == Modified {
                from = from.max(self.l1d[o].arrival(s));
            }
            if write {
                // BusRdX: every other copy goes; a Modified one hands its
                // data over (ownership moves, memory is not updated).
                owner |= st == Modified;
                took = true;
                self.coherence[h].invalidations_sent += 1;
                self.l1d[o].set_state(s, Invalid);
                self.l1d[o].stats.invalidations += 1;
                self.filters[o].drop_data(line);
            } else {
                // BusRd: every copy becomes Shared; a Modified one is
                // written back and forwards its data.
                shared = true;
                if st == Modified {
                    owner = true;
                    self.l1d[o].stats.writebacks += 1;
                }
                if st != Shared {
                    self.l1d[o].set_state(s, Shared);
                    self.filters[o].drop_write(line);
                }
            }
        }
        let c = &mut self.coherence[h];
        c.snoop_hits += (shared || took) as u64;
        c.cache_to_cache += owner as u64;
        let addr = line << self.d_shift;
        let done = if owner {
            self.cache_to_cache(h, addr, !write, from)
        } else {
            self.read_below(h, addr, t, self.d_occ)
        };
        let state = match intent {
            Intent::Write => Modified,
            // Dirty data handed over stays dirty; otherwise clean and alone.
            Intent::ReadExclusive if owner => Modified,
            Intent::ReadExclusive => Exclusive,
            Intent::Read if shared => Shared,
            Intent::Read => Exclusive,
        };
        (done, state, owner || took)
    }

    /// Invalidates every other hart's copy of `line` (they are Shared);
    /// true if there was one.
    fn invalidate_others(&mut self, h: usize, line: u64) -> bool {
        let mut any = false;
        for o in 0..self.cores() {
            if o == h || !self.l1d[o].may_hold_lines() {
                continue;
            }
            if let Some(s) = self.l1d[o].find(line) {
                debug_assert_ne!(self.l1d[o].state(s), Modified);
                self.l1d[o].set_state(s, Invalid);
                self.l1d[o].stats.invalidations += 1;
                self.filters[o].drop_data(line);
                self.coherence[h].invalidations_sent += 1;
                any = true;
            }
        }
        any
    }

    /// A coherence transaction without data from memory (an upgrade, or the
    /// broadcast of a `cbo.*`): through the L2 if there is one, else an
    /// address phase on the bus; then the snoop.
    fn coherence_broadcast(&mut self, h: usize, t: Ps) -> Ps {
        if self.l2.is_some() {
            t + self.l2_hit_ps + self.snoop_ps
        } else {
            let g = self.bus.acquire(Some(h), t, self.addr_occ);
            g + self.addr_occ + self.snoop_ps
        }
    }

    /// A dirty line supplied by another L1D. `update_memory` (a read):
    /// the owner also writes it back (into the L2, or posted to memory).
    fn cache_to_cache(&mut self, h: usize, addr: u64, update_memory: bool, t: Ps) -> Ps {
        if self.l2.is_some() {
            let t = if update_memory {
                self.l2_writeback(h, addr, t)
            } else {
                t
            };
            t + self.l2_hit_ps + self.snoop_ps
        } else {
            let g = self.bus.acquire(Some(h), t, self.addr_occ);
            let ready = g + self.addr_occ + self.snoop_ps;
            let r = self.bus.acquire(None, ready, self.d_occ);
            if update_memory {
                // Memory takes the data off the bus as the requester does.
                self.controller_write(addr, r + self.req_ps);
            }
            r + self.d_occ
        }
    }

    /// A line read below the L1s: the L2, or memory.
    fn read_below(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        if self.l2.is_some() {
            self.l2_access(h, addr, false, t)
        } else {
            self.mem_read(h, addr, t, occ)
        }
    }

    /// A dirty L1 line leaving: returns when the requester may go on.
    fn writeback_below(&mut self, h: usize, addr: u64, t: Ps) -> Ps {
        if self.l2.is_some() {
            self.l2_writeback(h, addr, t)
        } else {
            self.mem_write(h, addr, t, self.d_occ)
        }
    }

    /// A read (or, without an L1D, a write-allocate) of the L2 line holding
    /// `addr`.
    fn l2_access(&mut self, h: usize, addr: u64, write: bool, t: Ps) -> Ps {
        let low_water = self.low_water();
        let l2 = self.l2.as_mut().expect("l2_access needs an L2");
        let line = addr >> l2.line_shift();
        if let Some(s) = l2.find(line) {
            if write {
                l2.stats.write_hits += 1;
                l2.set_state(s, Modified);
            } else {
                l2.stats.read_hits += 1;
            }
            l2.touch(s);
            return t + self.l2_hit_ps;
        }
        if write {
            l2.stats.write_misses += 1;
        } else {
            l2.stats.read_misses += 1;
        }
        let start = l2.mshr.earliest_start(t + self.l2_hit_ps);
        let slot = l2.victim(line);
        let vstate = l2.state(slot);
        let vline = l2.line(slot);
        l2.set_state(slot, Invalid);
        let shift = l2.line_shift();
        let mut t1 = start;
        if vstate == Modified {
            l2.stats.writebacks += 1;
            t1 = self.mem_write(h, vline << shift, t1, self.d_occ);
        }
        let done = self.mem_read(h, line << shift, t1, self.d_occ);
        let l2 = self.l2.as_mut().expect("checked above");
        l2.fill(slot, line, if write { Modified } else { Exclusive });
        l2.mshr.insert(start, done, low_water);
        done
    }

    /// A dirty L1 line written into the L2 (allocated if absent; the L2
    /// is non-inclusive). Returns when the L1 may go on: at once, unless
    /// the L2 had to write back a dirty victim first.
    fn l2_writeback(&mut self, h: usize, addr: u64, t: Ps) -> Ps {
        let l2 = self.l2.as_mut().expect("l2_writeback needs an L2");
        let shift = l2.line_shift();
        let line = addr >> shift;
        if let Some(s) = l2.find(line) {
            l2.stats.write_hits += 1;
            l2.set_state(s, Modified);
            l2.touch(s);
            return t;
        }
        l2.stats.write_misses += 1;
        let slot = l2.victim(line);
        let vstate = l2.state(slot);
        let vline = l2.line(slot);
        l2.set_state(slot, Invalid);
        l2.fill(slot, line, Modified);
        if vstate == Modified {
            l2.stats.writebacks += 1;
            return self.mem_write(h, vline << shift, t, self.d_occ);
        }
        t
    }

    /// An access with the L1D disabled.
    fn uncached_ps(&mut self, h: usize, paddr: u64, write: bool, t: Ps) -> Ps {
        let addr = paddr >> self.d_shift << self.d_shift;
        if self.l2.is_some() {
            self.l2_access(h, addr, write, t)
        } else if write {
            self.mem_write(h, addr, t, self.d_occ)
        } else {
            self.mem_read(h, addr, t, self.d_occ)
        }
    }

    fn fetch_ps(&mut self, h: usize, paddr: u64, t: Ps) -> Ps {
        let addr = paddr >> self.i_shift << self.i_shift;
        if !self.l1i[h].enabled() {
            return self.read_below(h, addr, t, self.i_occ);
        }
        let line = paddr >> self.i_shift;
        if let Some(slot) = self.l1i[h].find(line) {
            self.l1i[h].stats.read_hits += 1;
            if let Some(old) = self.l1i[h].touch(slot) {
                self.filters[h].drop_fetch(old);
            }
            self.filters[h].fill_fetch(line);
            return t;
        }
        self.l1i[h].stats.read_misses += 1;
        let start = self.l1i[h].mshr.earliest_start(t);
        let slot = self.l1i[h].victim(line);
        if self.l1i[h].state(slot) != Invalid {
            let vline = self.l1i[h].line(slot);
            self.filters[h].drop_fetch(vline);
            self.l1i[h].set_state(slot, Invalid);
        }
        let done = self.read_below(h, addr, start, self.i_occ);
        if let Some(old) = self.l1i[h].fill(slot, line, Shared) {
            self.filters[h].drop_fetch(old);
        }
        self.filters[h].fill_fetch(line);
        self.l1i[h].mshr.insert(start, done, start);
        done
    }

    fn flush_line_ps(&mut self, h: usize, paddr: u64, kind: FlushKind, t0: Ps) -> Ps {
        self.flush[h].instructions += 1;
        let line = paddr >> self.d_shift;
        let addr = line << self.d_shift;
        let mut t = t0;
        let (_, mut dirty) = self.flush_l1_copy(h, line, kind);
        if kind != FlushKind::L1 {
            if self.cores() > 1 || self.l2.is_some() {
                t = self.coherence_broadcast(h, t);
            }
            for o in 0..self.cores() {
                if o == h {
                    continue;
                }
                let (present, was_dirty) = self.flush_l1_copy(o, line, kind);
                if present && kind != FlushKind::Clean {
                    self.l1d[o].stats.invalidations += 1;
                }
                dirty |= was_dirty;
            }
        }
        let mut written = dirty;
        match kind {
            FlushKind::L1 => {
                if dirty {
                    t = self.writeback_below(h, addr, t);
                }
            }
            FlushKind::Flush | FlushKind::Clean | FlushKind::Inval => {
                let mut to_memory = dirty;
                if let Some(l2) = &mut self.l2 {
                    let l2line = addr >> l2.line_shift();
                    if let Some(s) = l2.find(l2line) {
                        if l2.state(s) == Modified {
                            if !dirty {
                                l2.stats.writebacks += 1;
                            }
                            to_memory = true;
                            written = true;
                        }
                        let keep = if kind == FlushKind::Clean {
                            Exclusive
                        } else {
                            Invalid
                        };
                        l2.set_state(s, keep);
                    }
                }
                if to_memory {
                    t = self.mem_write(h, addr, t, self.d_occ);
                }
            }
        }
        if written {
            self.flush[h].lines_written_back += 1;
        }
        t
    }

    /// Applies a flush to `o`'s L1D copy of `line`: `(present, dirty)`
    /// (a dirty line's write-back is counted on that cache).
    fn flush_l1_copy(&mut self, o: usize, line: u64, kind: FlushKind) -> (bool, bool) {
        let Some(s) = self.l1d[o].find(line) else {
            return (false, false);
        };
        let state = self.l1d[o].state(s);
        let dirty = state == Modified;
        if dirty {
            self.l1d[o].stats.writebacks += 1;
        }
        if kind == FlushKind::Clean {
            if dirty {
                // The only copy (MESI): clean and still exclusive.
                self.l1d[o].set_state(s, Exclusive);
                self.filters[o].drop_write(line);
            }
        } else {
            self.l1d[o].set_state(s, Invalid);
            self.filters[o].drop_data(line);
        }
        (true, dirty)
    }

    /// A line read over the bus from its controller. Returns when the data
    /// is at the cache.
    #[inline(always)]
    fn mem_read(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        let g = self.bus.acquire(Some(h), t, self.addr_occ);
        let arrive = g + self.req_ps;
        let route = self.routes.find(addr).copied();
        let data_out = match &route {
            Some(r) => self.backends[r.backend].backend.read(r.at(addr), arrive),
            None => arrive,
        };
        let rg = self.bus.acquire(None, data_out, occ);
        let done = rg + self.resp_ps;
        if let Some(r) = route {
            let info = &mut self.regions[r.region];
            info.bus_reads += 1;
            info.read_wait_ps += done - t;
        }
        done
    }

    /// A posted line write over the bus: address and data beats, then the
    /// controller's acceptance. Returns when the requester may go on: after
    /// the bus carried the line, later if the controller held its input.
    fn mem_write(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        let g = self.bus.acquire(Some(h), t, occ);
        let arrive = g + self.req_ps;
        let accepted = self.controller_write(addr, arrive);
        let proceed = g + occ + accepted.saturating_sub(arrive);
        if let Some(r) = self.routes.find(addr) {
            let info = &mut self.regions[r.region];
            info.waited_writes += 1;
            info.write_wait_ps += proceed - t;
        }
        proceed
    }

    /// Hands a write to the controller of `addr` at `arrive`; returns its
    /// acceptance time.
    fn controller_write(&mut self, addr: u64, arrive: Ps) -> Ps {
        if let Some(w) = self.write_backs.as_mut() {
            w.push(addr);
        }
        match self.routes.find(addr).copied() {
            Some(r) => {
                self.regions[r.region].bus_writes += 1;
                self.backends[r.backend].backend.write(r.at(addr), arrive)
            }
            None => arrive,
        }
    }
}

/// The stats and cache names of core `core`: `hartH` while it runs the one
/// hart `H` (the keys of a machine with one thread per core), else `coreC`.
fn core_name(map: &CoreMap, core: CoreId) -> String {
    let mut harts = map.harts_of(core);
    match (harts.next(), harts.next()) {
        (Some(h), None) => format!("hart{h}"),
        _ => format!("core{core}"),
    }
}

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

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn avg_ns(sum_ps: Ps, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_ps as f64 / n as f64 / 1000.0
    }
}

/// The controllers of a config, each built by its technology and told
/// the size of the lines that cross the bus.
fn default_backends(cfg: &Config) -> Result<Backends, MemsysError> {
    let c = &cfg.cache;
    let line = if c.l2.enabled {
        c.l2.line_bytes
    } else {
        c.l1d.line_bytes
    };
    technology::controllers(cfg, u64::from(line))
}
