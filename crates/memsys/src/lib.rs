//! The timing model between the cores and the memory controllers of rvnvmm.
//!
//! [`MemorySystem`] implements the cores'
//! [`TimingModel`](rvnvmm_timing::TimingModel). It models, per
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
mod coherence;
pub mod control;
mod error;
mod filter;
mod flush;
mod heat;
mod hierarchy;
mod loaded;
pub mod numa;
mod report;
pub mod technology;
mod time;
mod timing_model;
mod tlb;

#[cfg(test)]
mod tests;

use rvnvmm_config::Config;
pub use rvnvmm_timing::{CoreId, CoreMap, FlushKind};

pub use backend::{Backend, Backends, Crossing, NodeAddr};
pub use bus::BusStats;
pub use cache::{CacheStats, LineState};
pub use error::MemsysError;
pub use filter::FILTER_ENTRIES;
pub use loaded::{LoadPoint, LoadedLatency};
pub use numa::NumaNodes;
pub use report::{CoherenceStats, FlushStats};
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
use LineState::{Exclusive, Modified};

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
    /// What reached each page in each window, when recorded
    /// (`record_page_heat`).
    heat: Option<heat::PageHeat>,
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
            let name = report::core_name(&core_map, h);
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
            heat: None,
            cores: core_map,
        })
    }

    /// Keeps the address of every line written to a controller from now
    /// on, for the persistence domain (`TimingModel::take_write_backs`).
    pub fn record_write_backs(&mut self) {
        self.write_backs.get_or_insert_with(Vec::new);
    }

    /// Counts, from now on, the line reads and writes reaching each 4 KiB
    /// page's controller and the L1 misses on it, in windows of `window_ns`
    /// (`--page-heat`); 0 stops and forgets. Changes no timing and no
    /// statistic.
    pub fn record_page_heat(&mut self, window_ns: u64) {
        self.heat = (window_ns > 0).then(|| heat::PageHeat::new(window_ns.saturating_mul(1000)));
    }

    /// Hands `each` the windows no request can reach any more (every one
    /// with `all`), in order, and forgets them.
    pub fn take_page_heat(
        &mut self,
        all: bool,
        each: &mut dyn FnMut(rvnvmm_timing::HeatWindow<'_>),
    ) {
        let low_water = self.low_water();
        if let Some(heat) = self.heat.as_mut() {
            heat.take(low_water, all, each);
        }
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

    // ------------------------------------------------------------------
    // Statistics.
    // ------------------------------------------------------------------
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
