//! Timing model of one DDR3 memory controller with banks and row buffers,
//! and the three NVMM emulation methods of seed 000 §3 (coarse, fine,
//! proposed), each a plug-in of the shared DDR3 path behind the
//! [`NvmmMethod`] trait ([`method`]). See `docs/memory-controller.md` for
//! the model with timelines.
//!
//! The model is a pure function of the request stream: no host time, no
//! hash-map iteration, no randomness. It is event driven, not per cycle:
//! each bank keeps its open row and the earliest times of its next commands,
//! the rank keeps its recent ACTs (tRRD, tFAW), the channel its data-bus
//! bursts (tCCD), each bank group of DDR4 and DDR5 its own ACTs (tRRD_L)
//! and column commands (tCCD_L), and queued work (posted writes, automatic precharges,
//! refresh) is processed lazily when a request arrives or
//! [`Controller::advance`] is called.
//!
//! ```
//! use rvnvmm_config::Config;
//! use rvnvmm_dram::Controller;
//!
//! let cfg = Config::default(); // freedom-u500: DRAM 1 GiB + NVMM 3 GiB on "ddr3"
//! let mut ctrl = Controller::from_config(&cfg, "ddr3").unwrap();
//! // A read of an NVMM line (proposed method, tRCD = 1000 ns) on a closed bank.
//! let out = ctrl.read(0xC000_0000, 1_000_000);
//! assert_eq!(out - 1_000_000, 1_020_000); // ACT, 1000 ns, RD, CL + burst, 5 ns clock
//! ctrl.finish();
//! let nvmm = ctrl.stats().into_iter().find(|s| s.name == "nvmm").unwrap();
//! assert_eq!((nvmm.reads, nvmm.acts), (1, 1));
//! ```
//!
//! # Time and quantisation
//! Time is [`Ps`] (u64 picoseconds). DDR timings of the controller config are
//! rounded up to whole DRAM clocks (`tck_ns`), NVMM latencies and the
//! coarse-grain delays to whole controller clocks (`1000 / clock_mhz` ns:
//! 5 ns at 200 MHz, the FPGAs' precision). Commands issue on the DRAM clock
//! grid; requests are accepted, and read data handed back, on controller
//! clock edges.
//!
//! # Arrival order
//! Requests must be presented in (roughly) non-decreasing time. A request
//! whose `now` is earlier than the latest arrival the controller has seen is
//! treated as arriving at that latest time, so loosely synchronised CPUs
//! never move the controller backwards and every run is deterministic.
//! Times beyond [`HORIZON`] (2^62 ps, about 53 days) are treated as it.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod bank;
mod error;
mod grid;
pub mod method;
pub mod microbench;
pub mod pm;
mod refresh;
mod regions;
mod schedule;
mod stats;
mod timing;
mod trace;
/// The indices of the bits set in `bits`, lowest first.
fn set_bits(mut bits: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let b = (bits != 0).then(|| bits.trailing_zeros() as usize)?;
        bits &= bits - 1;
        Some(b)
    })
}

#[cfg(test)]
mod tests;

pub use error::{DramError, MAX_LATENCY_NS};
pub use grid::Grid;
pub use method::NvmmMethod;
pub use stats::{empty_histogram, RegionStats, Wear, WearUnit, HOTTEST};

use method::{Ddr3, Spec};
use regions::method_of;
use rvnvmm_config::{AddressField, Config, NvmmParams, Scheduler};
use schedule::insert_sorted;
use stats::{hist_add, WearCounter};
use timing::Timing;

/// Simulated time in picoseconds: the one time type of the controller and
/// of the memory system above it (`u64`: about 213 days).
pub type Ps = u64;

/// The latest time the model represents, 2^62 ps (about 53 days of
/// simulated time). Later `now` values are treated as this time, so that no
/// time computation ever saturates (every latency is far shorter).
pub const HORIZON: Ps = 1 << 62;

/// Kind of a memory request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A cache-line read (fill).
    Read,
    /// A cache-line write (write-back), posted.
    Write,
}

/// When the `proposed` method lets an NVMM row close: a region setting
/// (`keep_open` of [`NvmmParams`]), re-exported here for the tests and
/// tools that drive the controller directly.
pub use rvnvmm_config::KeepOpen;

/// A DRAM command, for the optional command trace ([`Controller::set_trace`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// Activate: read a row from the cells into the row buffer.
    Act,
    /// Column read from the row buffer.
    Rd,
    /// Column write into the row buffer.
    Wr,
    /// Precharge: write the row buffer back to the cells and close it.
    Pre,
    /// Refresh of the whole rank (`bank` is 0, `row` is 0).
    Ref,
}

/// One command of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Command {
    /// Issue time.
    pub at: Ps,
    /// Which command.
    pub kind: CommandKind,
    /// Rank.
    pub rank: u32,
    /// Bank within the rank.
    pub bank: u32,
    /// Row (for ACT/RD/WR/PRE).
    pub row: u64,
}

/// Where a physical address lands in the DIMM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Rank.
    pub rank: u32,
    /// Bank within the rank.
    pub bank: u32,
    /// Row within the bank.
    pub row: u64,
    /// Column (bus word) within the row.
    pub column: u64,
}

#[derive(Debug)]
struct RegionState {
    name: String,
    /// Where the region was when the controller was built: only
    /// [`Controller::read`] and [`Controller::write`] look (a memory
    /// system routes by its own node map, which may move a boundary, and
    /// calls [`Controller::read_at`]).
    base: u64,
    size: u64,
    nvmm: Option<NvmmParams>,
    /// The method the region runs ([`Ddr3`] for DRAM).
    method: Box<dyn NvmmMethod>,
    stats: RegionStats,
    /// Dirty row write-backs per row (NVMM regions on the DDR3 path).
    wear: WearCounter,
    last_bank: Option<u32>,
    seen: bool,
}

#[derive(Debug, Clone, Copy)]
struct OpenRow {
    row: u64,
    /// Region (index into `methods`) whose request opened the row.
    region: usize,
    col_ready: Ps,
    /// Earliest PRE under the row's (possibly stretched) timing.
    pre_ready: Ps,
    /// Earliest PRE under the DDR3 spec timing (tRAS, tRTP, tWR of the
    /// controller config): what a refresh waits for.
    pre_spec: Ps,
    dirty: bool,
}

#[derive(Debug, Clone, Default)]
struct Bank {
    open: Option<OpenRow>,
    /// Earliest ACT when closed.
    act_ready: Ps,
    /// Writes in the open row waiting for its PRE: (region, issue time, epoch).
    pending: Vec<(usize, Ps, u32)>,
}

#[derive(Debug, Clone, Copy)]
struct Req {
    seq: u64,
    write: bool,
    rank: u32,
    bank: usize,
    row: u64,
    line: u64,
    region: usize,
    /// When the request entered the scheduler (after any coarse hold or
    /// queue-space wait).
    arrival: Ps,
    /// Arrival at the controller input (for latency statistics).
    issue: Ps,
    /// Statistics period the request arrived in (see `reset_stats`).
    epoch: u32,
}

/// A committed column command on the channel: (command, data start, data end).
#[derive(Debug, Clone, Copy)]
struct BusSlot {
    cmd: Ps,
    start: Ps,
    end: Ps,
}

/// The result of scheduling one request.
#[derive(Debug, Clone, Copy)]
struct Done {
    seq: u64,
    col: Ps,
}

/// One DDR3 memory controller: its DIMM's banks and row buffers, a read
/// queue and a posted write queue under FR-FCFS, and the NVMM emulation
/// method of each region it serves.
#[derive(Debug)]
pub struct Controller {
    name: String,
    t: Timing,
    /// The DDR3 timing the methods start from.
    spec: Spec,
    /// How the next request is chosen.
    scheduler: Scheduler,
    window_base: u64,
    addr_mask: u64,
    /// Address layout LSB-position form: (field, shift, mask, width in
    /// bits), MSB first.
    fields: Vec<(AddressField, u32, u64, u32)>,
    /// Rank, bank and row as `(shift, mask)` each, when each is one run of
    /// bits of the layout (every preset): [`Controller::arrive`] decodes
    /// with three shifts instead of walking `fields`.
    runs: Option<[(u32, u64); 3]>,
    banks_per_rank: u32,
    line_shift: u32,
    regions: Vec<RegionState>,
    banks: Vec<Bank>,
    /// One bit per bank, set while its row is open (bank `b` is bit `b % 64`
    /// of word `b / 64`): a refresh visits the open banks in index order
    /// without looking at the closed ones.
    open_banks: Vec<u64>,
    /// The latest `act_ready` of any bank. `act_ready` only grows, except
    /// that a refresh sets every bank's to one time no earlier than all of
    /// them, so a refresh reads the latest without a scan.
    act_ready_max: Ps,
    /// Per rank: ACT times that may still constrain a new ACT, sorted.
    acts: Vec<Vec<Ps>>,
    /// Column commands that may still constrain a new one, sorted by command time.
    bus: Vec<BusSlot>,
    /// With bank groups (`Timing::groups > 1`), per group of each rank
    /// (index [`Controller::group_of`]): its ACTs (tRRD_L) and column
    /// command times (tCCD_L) that may still constrain a new one, sorted;
    /// each a subset of `acts` / `bus`, pruned with them. Empty without
    /// groups.
    group_acts: Vec<Vec<Ps>>,
    group_cols: Vec<Vec<Ps>>,
    queue: Vec<Req>,
    /// Scheduled writes whose WR has not issued yet: (WR time, line), sorted.
    wr_pending: Vec<(Ps, u64)>,
    write_cap: usize,
    /// Data-out times of reads still in flight (the read queue), sorted.
    rd_pending: Vec<Ps>,
    read_cap: usize,
    t_in: Ps,
    read_gate: Ps,
    write_gate: Ps,
    next_ref: Ps,
    /// Refreshes postponed so far.
    owed: u32,
    seq: u64,
    epoch: u32,
    trace: Option<Vec<Command>>,
    /// Scratch for `pick`: per bank its FR-FCFS choice, and the banks set.
    best: Vec<Option<(usize, bool)>>,
    touched: Vec<usize>,
    /// `read-first`: the write queue is being drained (it reached the high
    /// watermark and has not yet fallen to the low one).
    draining: bool,
    /// `read-first`: every queued write may be scheduled (`finish`).
    flushing: bool,
    /// The shortcuts for an empty queue: a read scheduled by
    /// `schedule_alone`, and `process_until` running due refreshes without
    /// `step` (always on, except in the tests that compare them with the
    /// general scheduler).
    empty_queue_shortcuts: bool,
}

impl Controller {
    /// Builds the controller named `name` of `cfg`: `cfg.memory.controllers[name]`
    /// serving every region of `cfg.memory.regions` whose `controller` is
    /// `name` (in name order).
    pub fn from_config(cfg: &Config, name: &str) -> Result<Controller, DramError> {
        let c = cfg
            .memory
            .controllers
            .get(name)
            .ok_or_else(|| DramError::UnknownController {
                name: name.to_string(),
                known: cfg.memory.controllers.keys().cloned().collect(),
            })?;
        let regions: Vec<(String, u64, u64, Option<NvmmParams>)> = cfg
            .memory
            .regions
            .iter()
            .filter(|(_, r)| r.controller == name)
            .map(|(n, r)| (n.clone(), r.base, r.size, r.nvmm.clone()))
            .collect();
        Controller::new(name, c, &regions)
    }

    /// `cfg`: the controller's config; `regions`: the regions it serves, as
    /// `(name, base, size, Option<NvmmParams>)` with physical bases.
    /// Addresses passed to [`Controller::read`] and [`Controller::write`]
    /// are physical; the controller maps `pa - window base` (the lowest
    /// region base) through `cfg.address_layout()` into
    /// rank/bank/row/column, wrapping at the DIMM's capacity.
    pub fn new(
        name: &str,
        cfg: &rvnvmm_config::ControllerConfig,
        regions: &[(String, u64, u64, Option<NvmmParams>)],
    ) -> Result<Controller, DramError> {
        let ctx = |e: DramError| DramError::setup(name, e);
        let t = Timing::new(cfg).map_err(ctx)?;
        if regions.is_empty() {
            return Err(ctx(DramError::NoRegion));
        }
        let layout = cfg
            .address_layout()
            .map_err(|e| ctx(DramError::Mapping(e)))?;
        let total_bits: u32 = layout.iter().map(|b| b.bits).sum();
        if total_bits > 64 {
            return Err(ctx(DramError::AddressBits(total_bits)));
        }
        let mut fields = Vec::with_capacity(layout.len());
        let mut pos = total_bits;
        for b in &layout {
            pos -= b.bits;
            let mask = if b.bits >= 64 {
                u64::MAX
            } else {
                (1u64 << b.bits) - 1
            };
            fields.push((b.field, pos, mask, b.bits));
        }
        let runs = single_runs(&fields);
        let addr_mask = if total_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << total_bits) - 1
        };
        let nbanks = (cfg.ranks as usize)
            .checked_mul(cfg.banks as usize)
            .filter(|&n| n > 0 && n <= 1 << 16)
            .ok_or_else(|| {
                ctx(DramError::Banks {
                    ranks: cfg.ranks,
                    banks: cfg.banks,
                })
            })?;
        // Group lists only where there are groups (see `group_acts`).
        let ngroups = if t.groups > 1 {
            cfg.ranks as usize * t.groups
        } else {
            0
        };
        let spec = t.spec();
        let mut rs = Vec::with_capacity(regions.len());
        for (n, base, size, nvmm) in regions {
            let method: Box<dyn NvmmMethod> = match nvmm {
                Some(p) => method::build(p.method.as_str(), n, p, &spec).map_err(ctx)?,
                None => Box::new(Ddr3),
            };
            rs.push(RegionState {
                name: n.clone(),
                base: *base,
                size: *size,
                nvmm: nvmm.clone(),
                method,
                stats: RegionStats::new(n),
                wear: WearCounter::default(),
                last_bank: None,
                seen: false,
            });
        }
        let window_base = rs.iter().map(|r| r.base).min().unwrap_or(0);
        // BL8: one burst moves 8 bus words; that is the line the controller
        // forwards from its write queue unless told otherwise.
        let burst_bytes = cfg.bus_bytes().max(1).saturating_mul(8);
        let line_shift = burst_bytes.next_power_of_two().trailing_zeros();
        let next_ref = t.refresh.map_or(Ps::MAX, |(refi, _)| refi);
        Ok(Controller {
            name: name.to_string(),
            scheduler: cfg.scheduler,
            window_base,
            addr_mask,
            fields,
            runs,
            banks_per_rank: cfg.banks,
            line_shift,
            regions: rs,
            spec,
            banks: vec![Bank::default(); nbanks],
            open_banks: vec![0; nbanks.div_ceil(64)],
            act_ready_max: 0,
            acts: vec![Vec::new(); cfg.ranks as usize],
            bus: Vec::new(),
            group_acts: vec![Vec::new(); ngroups],
            group_cols: vec![Vec::new(); ngroups],
            queue: Vec::new(),
            wr_pending: Vec::new(),
            write_cap: cfg.write_queue.max(1) as usize,
            rd_pending: Vec::new(),
            read_cap: cfg.read_queue.max(1) as usize,
            t_in: 0,
            read_gate: 0,
            write_gate: 0,
            next_ref,
            owed: 0,
            seq: 0,
            epoch: 0,
            trace: None,
            best: vec![None; nbanks],
            touched: Vec::new(),
            draining: false,
            flushing: false,
            empty_queue_shortcuts: true,
            t,
        })
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the keep-open rule of the `proposed` method for every NVMM
    /// region (the `keep_open` of their settings). Applies to rows opened or
    /// accessed from now on.
    pub fn set_keep_open(&mut self, k: KeepOpen) {
        let names: Vec<String> = self
            .regions
            .iter()
            .filter(|r| r.nvmm.is_some())
            .map(|r| r.name.clone())
            .collect();
        for name in names {
            if let Some(p) = self.nvmm(&name) {
                let p = NvmmParams {
                    keep_open: k,
                    ..p.clone()
                };
                // The region's setting was accepted before; only keep_open
                // changed, which every value of is valid.
                let _ = self.set_nvmm(&name, p);
            }
        }
    }

    /// Sets the line size (bytes, a power of two) used to match a read
    /// against queued writes for forwarding; default one BL8 burst
    /// (`8 × row_buffer_bytes / columns`, 64 bytes on a x64 DIMM).
    pub fn set_line_bytes(&mut self, bytes: u64) -> Result<(), DramError> {
        if !bytes.is_power_of_two() {
            return Err(DramError::LineBytes(bytes));
        }
        self.line_shift = bytes.trailing_zeros();
        Ok(())
    }

    /// Sends every read through the queue and every refresh through the
    /// general scheduler, as the reference for the empty-queue shortcuts.
    #[cfg(test)]
    fn without_empty_queue_shortcuts(&mut self) {
        self.empty_queue_shortcuts = false;
    }

    /// Whether `open_banks` and `act_ready_max` say what a scan of the
    /// banks says (the refresh trusts them instead of scanning).
    #[cfg(test)]
    fn bank_summary_is_exact(&self) -> bool {
        let words = self.open_banks.len() == self.banks.len().div_ceil(64);
        let open =
            self.banks.iter().enumerate().all(|(b, bank)| {
                (self.open_banks[b / 64] >> (b % 64) & 1 == 1) == bank.open.is_some()
            });
        let latest = self.banks.iter().map(|b| b.act_ready).max();
        words && open && latest == Some(self.act_ready_max)
    }

    /// Where physical address `paddr` lands in the DIMM.
    pub fn decode(&self, paddr: u64) -> Location {
        let la = paddr.wrapping_sub(self.window_base) & self.addr_mask;
        let mut loc = Location {
            rank: 0,
            bank: 0,
            row: 0,
            column: 0,
        };
        for &(field, shift, mask, bits) in &self.fields {
            let v = (la >> shift) & mask;
            let acc = |a: u64| if bits >= 64 { v } else { (a << bits) | v };
            match field {
                AddressField::Rank => loc.rank = acc(u64::from(loc.rank)) as u32,
                AddressField::Bank => loc.bank = acc(u64::from(loc.bank)) as u32,
                AddressField::Row => loc.row = acc(loc.row),
                AddressField::Column => loc.column = acc(loc.column),
                AddressField::Offset => {}
            }
        }
        loc
    }

    /// Statistics, one per region, in the order the regions were given,
    /// with the counters of each region's method.
    pub fn stats(&self) -> Vec<RegionStats> {
        self.regions
            .iter()
            .map(|r| RegionStats {
                method: r.method.counters(),
                method_rates: r.method.rates(),
                method_hists: r.method.histograms(),
                wear: r.nvmm.as_ref().map(|_| {
                    r.method
                        .wear()
                        .unwrap_or_else(|| r.wear.report(WearUnit::Row))
                }),
                ..r.stats.clone()
            })
            .collect()
    }

    /// Zeroes every region's statistics. Writes already in flight are not
    /// counted in the new period.
    pub fn reset_stats(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        for r in &mut self.regions {
            r.stats = RegionStats::new(&r.name);
            r.wear = WearCounter::default();
            r.method.reset_counters();
            r.last_bank = None;
            r.seen = false;
        }
    }

    /// The latest arrival time the controller has seen (its current time).
    pub fn now(&self) -> Ps {
        self.t_in
    }

    /// Posted writes not yet written into a row buffer.
    pub fn queued_writes(&self) -> usize {
        self.queue.iter().filter(|q| q.write).count()
            + (self.wr_pending.len() - self.wr_pending.partition_point(|w| w.0 <= self.t_in))
    }

    // ------------------------------------------------------------------
    // Requests
    // ------------------------------------------------------------------

    /// [`Controller::read`] or [`Controller::write`] by `kind`: the time the
    /// data leaves (read) or the write is accepted (write).
    pub fn access(&mut self, kind: Access, paddr: u64, now: Ps) -> Ps {
        match kind {
            Access::Read => self.read(paddr, now),
            Access::Write => self.write(paddr, now),
        }
    }

    /// A read of one cache line arriving at the controller input at `now`;
    /// returns the time its data leaves the controller (the CPU side adds
    /// bus latency).
    pub fn read(&mut self, paddr: u64, now: Ps) -> Ps {
        let (region, offset) = self.locate(paddr);
        self.read_at(region, offset, paddr, now)
    }

    /// [`Controller::read`] of a line whose region the caller found: the
    /// `region`-th of those the controller was built with, `offset` bytes
    /// from that region's base (the memory system's node map, which owns
    /// the boundaries, says where a request goes).
    pub fn read_at(&mut self, region: usize, offset: u64, paddr: u64, now: Ps) -> Ps {
        let (t, mut req) = self.arrive(region, paddr, now, false);
        // Read-queue space: at most `read_queue` reads in flight (several
        // CPUs, or a cache with MSHRs); otherwise wait at the input until
        // enough of them have left. `rd_pending` is sorted.
        let mut t_in = t;
        let first_busy = self.rd_pending.partition_point(|&d| d <= t_in);
        let busy = self.rd_pending.len() - first_busy;
        if busy >= self.read_cap {
            t_in = self
                .t
                .clk_grid
                .up(self.rd_pending[self.rd_pending.len() - self.read_cap]);
        }
        let t_eff = self.method_arrival(Access::Read, req.region, self.read_gate.max(t_in));
        self.read_gate = t_eff;
        self.process_until(t_eff);
        self.prune(t);
        if let Some(out) = self.serve(Access::Read, offset, &req, t_eff) {
            return self.read_done(&req, t, self.t.clk_grid.up(out));
        }
        let forwarded = self.queue.iter().any(|q| q.write && q.line == req.line)
            || self
                .wr_pending
                .iter()
                .any(|&(w, l)| l == req.line && w > t_eff);
        let done = if forwarded {
            if let Some(r) = self.regions.get_mut(req.region) {
                r.stats.forwarded += 1;
            }
            t_eff.saturating_add(self.t.clk)
        } else {
            req.arrival = t_eff;
            let col = if self.queue.is_empty() && self.empty_queue_shortcuts {
                self.schedule_alone(req).col
            } else {
                let seq = req.seq;
                self.queue.push(req);
                loop {
                    match self.step(None) {
                        Some(d) if d.seq == seq => break d.col,
                        Some(_) => {}
                        // Unreachable: the read is queued, so a step always
                        // schedules something. Stay total anyway.
                        None => break t_eff,
                    }
                }
            };
            self.t
                .clk_grid
                .up(col.saturating_add(self.t.cl).saturating_add(self.t.burst))
        };
        self.read_done(&req, t, done)
    }

    /// When a request through `gate` (its queue's gate, on the controller
    /// clock) is let in: the region's method may hold it (an NVMM
    /// coarse-grain hold), and only a time the method moved needs rounding
    /// to the controller clock.
    #[inline(always)]
    fn method_arrival(&mut self, access: Access, region: usize, gate: Ps) -> Ps {
        let at = method_of(&mut self.regions, region).arrival(access, gate);
        debug_assert_eq!(gate, self.t.clk_grid.up(gate));
        if at == gate {
            at
        } else {
            self.t.clk_grid.up(at)
        }
    }

    /// A read that arrived at `t` leaves at `done`: the read queue and the
    /// statistics.
    fn read_done(&mut self, req: &Req, t: Ps, done: Ps) -> Ps {
        insert_sorted(&mut self.rd_pending, done, |&d| d <= done);
        if let Some(r) = self.regions.get_mut(req.region) {
            let lat = done - t;
            r.stats.read_latency_ps_sum = r.stats.read_latency_ps_sum.saturating_add(lat);
            hist_add(&mut r.stats.read_latency_hist, lat);
            r.stats.last_ps = r.stats.last_ps.max(done);
        }
        done
    }

    /// A request the region's method serves itself ([`NvmmMethod::serve`]),
    /// entering at `at`: its completion, or `None` for the DDR3 path.
    fn serve(&mut self, access: Access, offset: u64, req: &Req, at: Ps) -> Option<Ps> {
        let r = self
            .regions
            .get_mut(req.region)
            .filter(|r| r.nvmm.is_some())?;
        r.method.serve(access, offset, at).map(|out| out.max(at))
    }

    /// A write (write-back of one line) arriving at `now`; posted: returns
    /// when the controller accepted it (a coarse-grain hold, then space in
    /// the write queue), which is what a writer waits for. Its completion
    /// (data in the cells: the PRE that writes its row back, plus tRP) is
    /// tracked for statistics.
    pub fn write(&mut self, paddr: u64, now: Ps) -> Ps {
        let (region, offset) = self.locate(paddr);
        self.write_at(region, offset, paddr, now)
    }

    /// [`Controller::write`] of a line whose region the caller found (see
    /// [`Controller::read_at`]).
    pub fn write_at(&mut self, region: usize, offset: u64, paddr: u64, now: Ps) -> Ps {
        let (t, mut req) = self.arrive(region, paddr, now, true);
        let t_eff = self.method_arrival(Access::Write, req.region, self.write_gate.max(t));
        self.write_gate = t_eff;
        self.process_until(t_eff);
        self.prune(t);
        if let Some(out) = self.serve(Access::Write, offset, &req, t_eff) {
            let acc = self.t.clk_grid.up(out);
            if let Some(r) = self.regions.get_mut(req.region) {
                r.stats.write_wait_ps_sum = r.stats.write_wait_ps_sum.saturating_add(acc - t);
                r.stats.last_ps = r.stats.last_ps.max(acc);
            }
            return acc;
        }
        // Write-queue space: queued writes plus scheduled ones whose WR has
        // not issued yet must number below `write_queue`.
        let mut acc = t_eff;
        loop {
            let queued = self.queue.len();
            if queued >= self.write_cap {
                // Even once every scheduled WR has issued there is no room:
                // schedule the next queued request.
                if self.step(None).is_none() {
                    break;
                }
                continue;
            }
            // At most `room` scheduled writes may still wait for their WR.
            let room = self.write_cap - 1 - queued;
            let n = self.wr_pending.len();
            let waiting = n - self.wr_pending.partition_point(|w| w.0 <= acc);
            if waiting <= room {
                break;
            }
            // `wr_pending` is sorted: once the WR at index n-1-room has
            // issued, at most `room` are left.
            acc = acc.max(self.t.clk_grid.up(self.wr_pending[n - 1 - room].0));
        }
        if acc > t_eff {
            self.process_until(acc);
        }
        req.arrival = acc;
        self.queue.push(req);
        if let Some(r) = self.regions.get_mut(req.region) {
            r.stats.write_wait_ps_sum = r.stats.write_wait_ps_sum.saturating_add(acc - t);
            r.stats.last_ps = r.stats.last_ps.max(acc);
        }
        acc
    }

    /// Lets queued work (posted writes, automatic precharges, refresh)
    /// happen up to `now`, e.g. when time passes without requests or at the
    /// end of a run. Does not move the controller's arrival clock.
    pub fn advance(&mut self, now: Ps) {
        let now = now.min(HORIZON);
        self.process_until(now);
        // Automatic precharges that have happened by `now` in banks nobody
        // waits for: record them (write completions, trace).
        for b in 0..self.banks.len() {
            let idle = !self.queue.iter().any(|q| q.bank == b);
            if let Some(o) = self.banks[b].open {
                if idle && o.pre_ready <= now {
                    self.close(b, o.pre_ready);
                }
            }
        }
    }

    /// Runs all queued work to completion (every write scheduled, every row
    /// closed by its automatic precharge) and returns the time the
    /// controller becomes idle. Refreshes after the last command are not run.
    pub fn finish(&mut self) -> Ps {
        self.flushing = true;
        while self.step(None).is_some() {}
        self.flushing = false;
        let mut idle = self.t_in;
        for b in 0..self.banks.len() {
            if let Some(o) = self.banks[b].open {
                // Closed by its automatic precharge, or by the next refresh
                // if that comes first.
                let at = if self.next_ref < o.pre_ready && self.owed >= self.t.postpone_max {
                    self.refresh_close(o, self.next_ref)
                } else {
                    o.pre_ready
                };
                self.close(b, at);
            }
            idle = idle.max(self.banks[b].act_ready);
        }
        for r in &self.regions {
            idle = idle.max(r.method.idle());
        }
        idle
    }

    /// Common arrival handling: clamp the time, decode, count.
    // Inlined: returned through memory, the request's fields are read back
    // before the stores settle (a store-forwarding stall on every request).
    #[inline(always)]
    fn arrive(&mut self, region: usize, paddr: u64, now: Ps, write: bool) -> (Ps, Req) {
        let t = self.t.clk_grid.up(now.min(HORIZON)).max(self.t_in);
        self.t_in = t;
        let (rank, bank, row) = match self.runs {
            Some([rank, bank, row]) => {
                let la = paddr.wrapping_sub(self.window_base) & self.addr_mask;
                let field = |(shift, mask): (u32, u64)| (la >> shift) & mask;
                (field(rank) as u32, field(bank) as u32, field(row))
            }
            None => {
                let loc = self.decode(paddr);
                (loc.rank, loc.bank, loc.row)
            }
        };
        let bank = rank as usize * self.banks_per_rank as usize + bank as usize;
        let bank = bank.min(self.banks.len() - 1);
        if let Some(r) = self.regions.get_mut(region) {
            let s = &mut r.stats;
            if write {
                s.writes += 1;
            } else {
                s.reads += 1;
            }
            if !r.seen {
                r.seen = true;
                s.first_ps = t;
            }
            s.last_ps = s.last_ps.max(t);
            if r.last_bank.is_some_and(|b| b as usize != bank) {
                s.bank_switches += 1;
            }
            r.last_bank = Some(bank as u32);
        }
        self.seq += 1;
        let req = Req {
            seq: self.seq,
            write,
            rank,
            bank,
            row,
            line: (paddr.wrapping_sub(self.window_base) & self.addr_mask) >> self.line_shift,
            region,
            arrival: t,
            issue: t,
            epoch: self.epoch,
        };
        (t, req)
    }

    // ------------------------------------------------------------------
    // Scheduler
    // ------------------------------------------------------------------
}

/// `(shift, mask)` of rank, bank and row in `fields` (the controller's
/// layout), or `None` if one of them is split over several runs of bits. A
/// field the layout leaves out is 0 (mask 0).
fn single_runs(fields: &[(AddressField, u32, u64, u32)]) -> Option<[(u32, u64); 3]> {
    let mut runs = [(0, 0); 3];
    for (i, want) in [AddressField::Rank, AddressField::Bank, AddressField::Row]
        .into_iter()
        .enumerate()
    {
        let mut it = fields.iter().filter(|f| f.0 == want && f.3 > 0);
        if let Some(&(_, shift, mask, _)) = it.next() {
            if it.next().is_some() {
                return None;
            }
            runs[i] = (shift, mask);
        }
    }
    Some(runs)
}
