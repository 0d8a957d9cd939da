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
//! bursts (tCCD), and queued work (posted writes, automatic precharges,
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

mod error;
pub mod method;
pub mod microbench;
pub mod pm;
mod stats;
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
pub use method::NvmmMethod;
pub use stats::{empty_histogram, RegionStats, Wear, WearUnit, HOTTEST};

use error::check_ns;
use method::{Ddr3, OpenWindow, Spec};
use rvnvmm_config::{AddressField, Config, NvmmParams, Scheduler};
use stats::{hist_add, WearCounter};

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

/// Timing parameters in picoseconds, quantised.
#[derive(Debug, Clone)]
struct Timing {
    /// The DRAM clock (commands issue through `tck_grid`).
    tck: Ps,
    clk: Ps,
    /// `tck` and `clk` as grids for [`Grid::up`].
    tck_grid: Grid,
    clk_grid: Grid,
    cl: Ps,
    cwl: Ps,
    burst: Ps,
    rcd: Ps,
    rp: Ps,
    ras: Ps,
    rtp: Ps,
    wr: Ps,
    ccd: Ps,
    rrd: Ps,
    faw: Option<Ps>,
    /// (tREFI, tRFC)
    refresh: Option<(Ps, Ps)>,
    /// Refreshes that may be postponed.
    postpone_max: u32,
    /// How far apart two ACTs of a rank can be and still constrain each
    /// other: `max(tRRD, tFAW)`.
    act_reach: Ps,
    /// How far apart (in command time) two column commands can be and
    /// still constrain each other: tCCD, or overlapping data bursts.
    col_reach: Ps,
    /// The controller clock and every DDR3 latency a command time is built
    /// from are whole DRAM clocks, so a time summed from command times,
    /// arrivals and these latencies needs no rounding to the DRAM clock
    /// (see [`Controller::commit_req`]).
    on_tck: bool,
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

/// Which requests a scheduling choice may take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    Any,
    Reads,
    Writes,
}

/// `read-first`'s write-queue watermarks for a queue of `cap` entries:
/// drain from 85% full down to half full (gem5's defaults), at least one
/// write per drain.
fn write_watermarks(cap: usize) -> (usize, usize) {
    let high = (cap * 85).div_ceil(100).max(1);
    (high, (cap / 2).min(high - 1))
}

/// `t` rounded up to a multiple of `g` (the reference for [`Grid::up`]).
#[cfg(test)]
fn align_up(t: Ps, g: Ps) -> Ps {
    if g <= 1 {
        return t;
    }
    match t % g {
        0 => t,
        r => t.saturating_add(g - r),
    }
}

/// A fixed clock grid of `g` ps: rounds up to it like `align_up`, and
/// divides by `g`, without a hardware division (the scheduler rounds to the
/// DRAM and controller clocks many times per request, the memory system
/// converts to hart cycles on every miss). A `g` of 0 acts as 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// At least 1.
    g: Ps,
    /// `floor(2^64 / g)`, or `2^64 - 1` for `g = 1`: the one correction of
    /// [`Grid::div_rem`] still makes it exact (`t * m / 2^64` is then
    /// `t - 1` for `t > 0`), so no case of its own is needed.
    m: u64,
}

impl Grid {
    /// The grid of period `g` ps.
    pub fn new(g: Ps) -> Grid {
        let g = g.max(1);
        let m = u64::try_from((1u128 << 64) / u128::from(g)).unwrap_or(u64::MAX);
        Grid { g, m }
    }

    /// The first multiple of `g` at or after `t` (saturating), exactly as
    /// `align_up`: with `m = floor(2^64 / g)`, `floor(t * m / 2^64)` is
    /// `floor(t / g)` or one less (`t * m / 2^64` is below `t / g` by less
    /// than `t / 2^64 < 1`), so one correction gives the exact remainder.
    #[inline(always)]
    pub fn up(&self, t: Ps) -> Ps {
        match self.div_rem(t).1 {
            0 => t,
            r => t.saturating_add(self.g - r),
        }
    }

    /// `t.div_ceil(g)`: how many periods cover `t`.
    #[inline(always)]
    pub fn div_ceil(&self, t: Ps) -> u64 {
        let (q, r) = self.div_rem(t);
        q + u64::from(r != 0)
    }

    /// `(t / g, t % g)` (see [`Grid::up`] for why one correction
    /// suffices).
    #[inline(always)]
    fn div_rem(&self, t: Ps) -> (u64, u64) {
        let mut q = ((u128::from(t) * u128::from(self.m)) >> 64) as u64;
        let mut r = t - q * self.g;
        if r >= self.g {
            r -= self.g;
            q += 1;
        }
        (q, r)
    }
}

/// `ns` rounded up to whole periods of `unit` ps. Values are checked
/// positive and finite by the caller.
fn quantise(ns: f64, unit: Ps) -> Ps {
    let units = (ns * 1000.0 / unit as f64 - 1e-9).ceil().max(0.0);
    (units as u64).saturating_mul(unit)
}

impl Timing {
    fn new(c: &rvnvmm_config::Controller) -> Result<Timing, DramError> {
        check_ns("clock period (1000 / clock_mhz)", c.period_ns(), false)?;
        for (k, v) in [
            ("tck_ns", c.tck_ns),
            ("tcl_ns", c.tcl_ns),
            ("tcwl_ns", c.tcwl_ns),
            ("tburst_ns", c.tburst_ns),
            ("trcd_ns", c.trcd_ns),
            ("trp_ns", c.trp_ns),
            ("tras_ns", c.tras_ns),
            ("trtp_ns", c.trtp_ns),
            ("twr_ns", c.twr_ns),
            ("tccd_ns", c.tccd_ns),
            ("trrd_ns", c.trrd_ns),
        ] {
            check_ns(k, v, false)?;
        }
        if let Some(f) = c.tfaw_ns {
            check_ns("tfaw_ns", f, false)?;
        }
        let tck = ((c.tck_ns * 1000.0).round() as Ps).max(1);
        let clk = ((c.period_ns() * 1000.0).round() as Ps).max(1);
        let q = |ns: f64| quantise(ns, tck);
        let refresh = match &c.refresh {
            None => None,
            Some(r) => {
                check_ns("refresh.trefi_ns", r.trefi_ns, false)?;
                check_ns("refresh.trfc_ns", r.trfc_ns, false)?;
                let (refi, rfc) = (q(r.trefi_ns), q(r.trfc_ns));
                if rfc >= refi {
                    return Err(DramError::RefreshTooLong {
                        trfc_ns: r.trfc_ns,
                        trefi_ns: r.trefi_ns,
                    });
                }
                Some((refi, rfc))
            }
        };
        let (cl, cwl, burst, ccd) = (q(c.tcl_ns), q(c.tcwl_ns), q(c.tburst_ns), q(c.tccd_ns));
        let (rrd, faw) = (q(c.trrd_ns), c.tfaw_ns.map(q));
        let (rcd, rp, ras, rtp, wr) = (
            q(c.trcd_ns),
            q(c.trp_ns),
            q(c.tras_ns),
            q(c.trtp_ns),
            q(c.twr_ns),
        );
        // `quantise` gives whole clocks unless it saturated; check anyway.
        let on_tck = [clk, cl, cwl, burst, rcd, rp, ras, rtp, wr]
            .into_iter()
            .chain(refresh.map(|(_, rfc)| rfc))
            .all(|x| x % tck == 0);
        Ok(Timing {
            on_tck,
            postpone_max: c.refresh.as_ref().map_or(0, |r| r.postpone_max),
            act_reach: rrd.max(faw.unwrap_or(0)),
            col_reach: ccd.max(cl.max(cwl) + burst),
            tck,
            clk,
            tck_grid: Grid::new(tck),
            clk_grid: Grid::new(clk),
            cl,
            cwl,
            burst,
            rcd,
            rp,
            ras,
            rtp,
            wr,
            ccd,
            rrd,
            faw,
            refresh,
        })
    }

    /// What the methods start from.
    fn spec(&self) -> Spec {
        Spec {
            rcd: self.rcd,
            rp: self.rp,
            ras: self.ras,
            tck: self.tck,
            clk: self.clk,
        }
    }
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
        cfg: &rvnvmm_config::Controller,
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

    /// Turns the command trace on (cleared) or off.
    pub fn set_trace(&mut self, on: bool) {
        self.trace = on.then(Vec::new);
    }

    /// Takes the commands traced so far, sorted by time (commands of
    /// different banks are decided out of time order; automatic precharges
    /// appear once decided, e.g. after [`Controller::advance`]).
    pub fn take_trace(&mut self) -> Vec<Command> {
        let mut v = self.trace.as_mut().map(std::mem::take).unwrap_or_default();
        v.sort_by_key(|c| c.at);
        v
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

    /// Run-time control (the guest's control page): method and latencies of
    /// NVMM region `region`. Applies to commands decided from now on.
    pub fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), DramError> {
        let spec = self.spec;
        let r = self.nvmm_region(region)?;
        let method = method::build(params.method.as_str(), region, &params, &spec)?;
        r.nvmm = Some(params);
        r.method = method;
        Ok(())
    }

    /// Runs registered method `name` (see [`method::REGISTRY`]) in NVMM
    /// region `region`, with the region's current settings: a method
    /// without a `memory.NAME.method` spelling of its own (a model under
    /// study, a test double) runs this way. Applies to commands decided
    /// from now on.
    pub fn set_method(&mut self, region: &str, name: &str) -> Result<(), DramError> {
        let spec = self.spec;
        let r = self.nvmm_region(region)?;
        let params = r.nvmm.clone().unwrap_or_default();
        r.method = method::build(name, region, &params, &spec)?;
        Ok(())
    }

    /// The name of the method region `region` runs (`ddr3` for DRAM), or
    /// `None` for a region this controller does not serve.
    pub fn method(&self, region: &str) -> Option<&'static str> {
        self.regions
            .iter()
            .find(|r| r.name == region)
            .map(|r| r.method.name())
    }

    /// The settings of NVMM region `region`, or why there are none (no
    /// such region of this controller, or a DRAM one).
    pub fn nvmm_settings(&self, region: &str) -> Result<&NvmmParams, DramError> {
        let i = self.nvmm_index(region)?;
        self.regions[i]
            .nvmm
            .as_ref()
            .ok_or_else(|| DramError::NotNvmm(region.to_string()))
    }

    /// NVMM region `region`, or why there is none.
    fn nvmm_region(&mut self, region: &str) -> Result<&mut RegionState, DramError> {
        let i = self.nvmm_index(region)?;
        Ok(&mut self.regions[i])
    }

    /// The index of NVMM region `region`, or why there is none.
    fn nvmm_index(&self, region: &str) -> Result<usize, DramError> {
        let Some(i) = self.regions.iter().position(|r| r.name == region) else {
            return Err(DramError::UnknownRegion {
                controller: self.name.clone(),
                region: region.to_string(),
                known: self.regions.iter().map(|r| r.name.clone()).collect(),
            });
        };
        if self.regions[i].nvmm.is_none() {
            return Err(DramError::NotNvmm(region.to_string()));
        }
        Ok(i)
    }

    /// The region holding `paddr` among the bounds the controller was
    /// built with, and the offset into it; `(regions, 0)` for an address
    /// outside them (counted nowhere, timed as DRAM).
    fn locate(&self, paddr: u64) -> (usize, u64) {
        self.regions
            .iter()
            .position(|r| paddr >= r.base && paddr - r.base < r.size)
            .map_or((self.regions.len(), 0), |i| {
                (i, paddr - self.regions[i].base)
            })
    }

    /// The NVMM settings of `region` (None for DRAM or unknown regions).
    pub fn nvmm(&self, region: &str) -> Option<&NvmmParams> {
        self.regions
            .iter()
            .find(|r| r.name == region)
            .and_then(|r| r.nvmm.as_ref())
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

    /// Drops history no future command can conflict with. Call only after
    /// `process_until(l)` with `l >= t` for the arrival time `t`: then every
    /// command still to be decided (queued requests, and new ones arriving at
    /// or after `t`) issues at or after `t`.
    #[inline(always)]
    fn prune(&mut self, t: Ps) {
        let horizon = t.saturating_sub(self.t.act_reach);
        // Each list is sorted: when its first entry stays, all do (the
        // common case, checked without a search).
        for acts in &mut self.acts {
            if acts.first().is_some_and(|&a| a < horizon) {
                let n = acts.partition_point(|&a| a < horizon);
                acts.drain(..n);
            }
        }
        // A column command at or after `t` cannot collide with one whose
        // command is more than `col_reach` earlier.
        let reach = self.t.col_reach;
        if self
            .bus
            .first()
            .is_some_and(|s| s.cmd.saturating_add(reach) <= t)
        {
            let n = self
                .bus
                .partition_point(|s| s.cmd.saturating_add(reach) <= t);
            self.bus.drain(..n);
        }
        if self.wr_pending.first().is_some_and(|w| w.0 <= t) {
            let n = self.wr_pending.partition_point(|w| w.0 <= t);
            self.wr_pending.drain(..n);
        }
        if self.rd_pending.first().is_some_and(|&d| d <= t) {
            let n = self.rd_pending.partition_point(|&d| d <= t);
            self.rd_pending.drain(..n);
        }
    }

    // ------------------------------------------------------------------
    // Scheduler
    // ------------------------------------------------------------------

    /// Schedules every queued request whose first command can issue before
    /// `limit`, and the refreshes due by then. Afterwards every command
    /// still to be decided issues at or after `limit`.
    fn process_until(&mut self, limit: Ps) {
        loop {
            if self.queue.is_empty() && self.empty_queue_shortcuts {
                // With nothing queued (a read into an idle controller, or
                // the posted write just scheduled) every scheduler picks
                // nothing and `read-first` ends a drain, so `step` would
                // only run the refreshes due by `limit`, one at a time: run
                // them directly.
                self.draining = false;
                while self.next_ref != Ps::MAX && self.next_ref <= limit {
                    self.refresh(Some(limit), true);
                }
                return;
            }
            if self.step(Some(limit)).is_none() {
                return;
            }
        }
    }

    fn is_hit(&self, q: &Req) -> bool {
        matches!(self.banks[q.bank].open, Some(o) if o.row == q.row && q.arrival < o.pre_ready)
    }

    /// The next request to schedule: [`Controller::pick_fcfs`] or
    /// [`Controller::pick_fr_fcfs`]. Returns (first command time, queue
    /// index).
    fn pick(&mut self) -> Option<(Ps, usize)> {
        match self.scheduler {
            Scheduler::Fcfs => self.pick_fcfs(),
            Scheduler::FrFcfs => self.pick_fr_fcfs(Only::Any),
            Scheduler::ReadFirst => self.pick_read_first(),
        }
    }

    /// FCFS choice: the oldest request, whatever its bank or row; its
    /// commands still overlap those of other banks already scheduled.
    fn pick_fcfs(&self) -> Option<(Ps, usize)> {
        let (i, q) = self.queue.iter().enumerate().min_by_key(|(_, q)| q.seq)?;
        Some((self.first_command(q), i))
    }

    /// `read-first` choice: reads by FR-FCFS; posted writes wait in the
    /// write queue until it reaches its high watermark, then drain (FR-FCFS
    /// among writes, reads waiting) down to the low watermark, as gem5's and
    /// Ramulator's write-buffering controllers do. A write the queue holds
    /// below the watermark costs a read nothing; the bank time is paid in
    /// the drain.
    fn pick_read_first(&mut self) -> Option<(Ps, usize)> {
        let writes = self.queue.iter().filter(|q| q.write).count();
        let (high, low) = write_watermarks(self.write_cap);
        if writes >= high {
            self.draining = true;
        } else if writes <= low {
            self.draining = false;
        }
        let reads = self.queue.len() - writes;
        let writes_only = self.draining || (reads == 0 && self.flushing);
        if !writes_only && reads == 0 {
            return None;
        }
        self.pick_fr_fcfs(if writes_only {
            Only::Writes
        } else {
            Only::Reads
        })
    }

    /// FR-FCFS choice: per bank the oldest row hit, else the oldest request;
    /// across banks the one whose first command can issue earliest (ties:
    /// hits, then oldest), among the requests `only` admits.
    fn pick_fr_fcfs(&mut self, only: Only) -> Option<(Ps, usize)> {
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        for (i, q) in self.queue.iter().enumerate() {
            match only {
                Only::Reads if q.write => continue,
                Only::Writes if !q.write => continue,
                _ => {}
            }
            let hit = self.is_hit(q);
            match self.best[q.bank] {
                None => {
                    self.best[q.bank] = Some((i, hit));
                    touched.push(q.bank);
                }
                Some((_, false)) if hit => self.best[q.bank] = Some((i, hit)),
                _ => {}
            }
        }
        let mut choice: Option<(Ps, bool, u64, usize)> = None;
        for &b in &touched {
            let Some((i, hit)) = self.best[b].take() else {
                continue;
            };
            let q = &self.queue[i];
            let bank = &self.banks[b];
            let first = match bank.open {
                Some(o) if hit => q.arrival.max(o.col_ready),
                Some(o) => o.pre_ready,
                None => q.arrival.max(bank.act_ready),
            };
            let key = (first, !hit, q.seq, i);
            if choice.is_none_or(|c| (key.0, key.1, key.2) < (c.0, c.1, c.2)) {
                choice = Some(key);
            }
        }
        self.touched = touched;
        choice.map(|c| (c.0, c.3))
    }

    /// One scheduling step: a due refresh, or one request (all its
    /// commands). `limit`: only what starts before it (refresh: due at or
    /// before it). Returns the scheduled request, `None` if nothing was
    /// scheduled.
    fn step(&mut self, limit: Option<Ps>) -> Option<Done> {
        loop {
            let cand = self.pick();
            if self.next_ref != Ps::MAX {
                let due = self.next_ref;
                let before_cand = cand.is_none_or(|(f, _)| due <= f);
                let in_limit = match limit {
                    Some(l) => due <= l,
                    None => cand.is_some(),
                };
                if before_cand && in_limit {
                    // With nothing the scheduler would pick (`read-first`
                    // holding writes below its watermark: a choice of the
                    // queue's make-up, not of time) nothing issues between
                    // the refreshes due by `limit` either.
                    self.refresh(limit, cand.is_none());
                    continue;
                }
            }
            return match cand {
                Some((first, i)) if limit.is_none_or(|l| first < l) => Some(self.commit(i)),
                _ => None,
            };
        }
    }

    /// Schedules `req` with nothing else queued: what queuing it and calling
    /// `step(None)` does, without the queue. Every scheduler picks a lone
    /// read (`read-first` ends a drain: no writes are left), and the
    /// refreshes due by its first command come first.
    fn schedule_alone(&mut self, req: Req) -> Done {
        debug_assert!(self.queue.is_empty() && !req.write);
        self.draining = false;
        while self.next_ref != Ps::MAX && self.next_ref <= self.first_command(&req) {
            self.refresh(None, true);
        }
        self.commit_req(req)
    }

    /// When the first command of queued request `q` (PRE, ACT or the column
    /// command) can issue.
    fn first_command(&self, q: &Req) -> Ps {
        let bank = &self.banks[q.bank];
        match bank.open {
            Some(o) if self.is_hit(q) => q.arrival.max(o.col_ready),
            Some(o) => o.pre_ready,
            None => q.arrival.max(bank.act_ready),
        }
    }

    /// Performs the refresh due at `self.next_ref`: every open row closes at
    /// the due time or as soon as the DDR3 spec tRAS/tRTP/tWR allow (the
    /// refresh path is unaffected by the NVMM methods, seed 001 §3.1: it does
    /// not wait out a stretched tRAS, but a dirty NVMM row still takes the
    /// NVMM tRP to write back), REF issues when all banks are precharged, and
    /// no bank activates for tRFC. `unpicked`: nothing queued can be
    /// scheduled before `limit` (an empty queue, or only requests the
    /// scheduler holds back whatever the time).
    fn refresh(&mut self, limit: Option<Ps>, unpicked: bool) {
        let Some((refi, rfc)) = self.t.refresh else {
            self.next_ref = Ps::MAX;
            return;
        };
        let mut due = self.next_ref;
        // Whether all banks are closed and ready by `due`, and whether the
        // refresh would cut an open row short (never when all are closed, so
        // skipping ahead below leaves it false): only the open banks are
        // looked at.
        let any_open = self.open_banks.iter().any(|&w| w != 0);
        let closed_and_ready = !any_open && self.act_ready_max <= due;
        let mut cuts_a_row = false;
        if any_open {
            for (w, &bits) in self.open_banks.iter().enumerate() {
                for b in set_bits(bits) {
                    let o = self.banks[w * 64 + b].open;
                    cuts_a_row |= o.is_some_and(|o| o.pre_ready > due);
                }
            }
        }
        // Idle and closed: consecutive refreshes leave the same state, so
        // only the last one due by `limit` matters.
        if let Some(l) = limit {
            let idle = (unpicked || self.queue.is_empty()) && closed_and_ready;
            if idle && l > due {
                due += (l - due) / refi * refi;
            }
        }
        // Postpone while the refresh would cut an open row short.
        if cuts_a_row && self.owed < self.t.postpone_max {
            self.owed += 1;
            self.next_ref = due.saturating_add(refi);
            return;
        }
        let count = u64::from(self.owed) + 1;
        self.owed = 0;
        // Every open row closes, in bank order (each close calls its
        // region's method), then REF waits for the latest bank.
        if any_open {
            for w in 0..self.open_banks.len() {
                for b in set_bits(self.open_banks[w]).map(|b| w * 64 + b) {
                    if let Some(o) = self.banks[b].open {
                        let at = self.refresh_close(o, due);
                        self.close(b, at);
                    }
                }
            }
        }
        let ref_at = self.t.tck_grid.up(due.max(self.act_ready_max));
        let ready = ref_at.saturating_add(rfc * count);
        for b in &mut self.banks {
            b.act_ready = ready;
        }
        self.act_ready_max = ready;
        if self.trace.is_some() {
            for k in 0..count {
                for rank in 0..self.acts.len() {
                    self.log(ref_at + k * rfc, CommandKind::Ref, rank as u32, 0, 0);
                }
            }
        }
        self.next_ref = due.saturating_add(refi);
    }

    /// When a refresh due at `due` closes row `o`: its method decides
    /// ([`NvmmMethod::refresh_close`]; a DRAM region's, always DDR3's, and
    /// that of addresses outside every region are called statically).
    fn refresh_close(&self, o: OpenRow, due: Ps) -> Ps {
        let window = OpenWindow {
            pre_ready: o.pre_ready,
            pre_spec: o.pre_spec,
        };
        match self.regions.get(o.region) {
            Some(r) if r.nvmm.is_some() => r.method.refresh_close(window, due),
            _ => Ddr3.refresh_close(window, due),
        }
    }

    fn log(&mut self, at: Ps, kind: CommandKind, rank: u32, bank: u32, row: u64) {
        if let Some(t) = &mut self.trace {
            t.push(Command {
                at,
                kind,
                rank,
                bank,
                row,
            });
        }
    }

    /// [`Controller::log`] of a command to bank index `b`: the split into
    /// rank and bank (a division) only when the trace is on.
    fn log_bank(&mut self, at: Ps, kind: CommandKind, b: usize, row: u64) {
        if self.trace.is_some() {
            let (rank, bank) = self.split_bank(b);
            self.log(at, kind, rank, bank, row);
        }
    }

    fn split_bank(&self, b: usize) -> (u32, u32) {
        let per = self.banks_per_rank.max(1) as usize;
        ((b / per) as u32, (b % per) as u32)
    }

    /// Precharges bank `b` at `at`: its row goes back to the cells, writes in
    /// it complete at `at + tRP`.
    #[inline(always)]
    fn close(&mut self, b: usize, at: Ps) {
        self.close_on_tck(b, self.t.tck_grid.up(at));
    }

    /// [`Controller::close`] at `at`, already on the DRAM clock.
    #[inline(always)]
    fn close_on_tck(&mut self, b: usize, at: Ps) {
        let Some(o) = self.banks[b].open.take() else {
            return;
        };
        self.open_banks[b / 64] &= !(1 << (b % 64));
        let done = method_of(&mut self.regions, o.region).precharge(at, o.dirty, &self.spec);
        let bank = &mut self.banks[b];
        bank.act_ready = bank.act_ready.max(done);
        self.act_ready_max = self.act_ready_max.max(bank.act_ready);
        // A row write-back wears the NVMM cells; one holding only writes of
        // an earlier statistics period is not counted in this one.
        if o.dirty && bank.pending.iter().any(|p| p.2 == self.epoch) {
            if let Some(r) = self.regions.get_mut(o.region).filter(|r| r.nvmm.is_some()) {
                r.wear.add(((b as u64) << 32) | (o.row & 0xFFFF_FFFF));
            }
        }
        let bank = &mut self.banks[b];
        if bank.pending.is_empty() {
            self.log_bank(at, CommandKind::Pre, b, o.row);
            return;
        }
        let pending = std::mem::take(&mut bank.pending);
        for &(region, issue, epoch) in &pending {
            if epoch != self.epoch {
                continue;
            }
            if let Some(r) = self.regions.get_mut(region) {
                let lat = done.saturating_sub(issue);
                r.stats.writes_done += 1;
                r.stats.write_latency_ps_sum = r.stats.write_latency_ps_sum.saturating_add(lat);
                hist_add(&mut r.stats.write_latency_hist, lat);
            }
        }
        let mut pending = pending;
        pending.clear();
        self.banks[b].pending = pending;
        self.log_bank(at, CommandKind::Pre, b, o.row);
    }

    /// Schedules queued request `i` completely: PRE if another row is open,
    /// ACT if needed, then its column command.
    fn commit(&mut self, i: usize) -> Done {
        let q = self.queue.remove(i);
        self.commit_req(q)
    }

    /// Schedules request `q`, taken off the queue (or never queued),
    /// completely: PRE if another row is open, ACT if needed, then its
    /// column command.
    #[inline(always)]
    fn commit_req(&mut self, q: Req) -> Done {
        // Which times are already on the DRAM clock (or saturated, which
        // rounding keeps), given `Timing::on_tck`: every arrival (a
        // controller clock time), every command time (rounded when
        // decided), and a row's `col_ready` and `pre_ready` when DDR3's
        // hooks timed it (command times plus DDR3 latencies). An NVMM
        // method's times and a bank's `act_ready` after its precharge are
        // rounded as they come.
        let b = q.bank;
        let hit = self.is_hit(&q);
        if !hit {
            if let Some(o) = self.banks[b].open {
                let at = if self.t.on_tck && self.is_ddr3(o.region) {
                    self.known_on_tck(o.pre_ready)
                } else {
                    self.t.tck_grid.up(o.pre_ready)
                };
                self.close_on_tck(b, at);
            }
            let act_ready = self.banks[b].act_ready;
            let act = if self.t.on_tck && act_ready <= q.arrival {
                self.act_slot_on_tck(q.rank as usize, self.known_on_tck(q.arrival))
            } else {
                self.act_slot(q.rank as usize, q.arrival.max(act_ready))
            };
            let acts = &mut self.acts[q.rank as usize];
            insert_sorted(acts, act, |&a| a <= act);
            let opened = method_of(&mut self.regions, q.region).activate(act, &self.spec);
            self.open_banks[b / 64] |= 1 << (b % 64);
            self.banks[b].open = Some(OpenRow {
                row: q.row,
                region: q.region,
                col_ready: opened.col_ready,
                pre_ready: opened.pre_ready,
                pre_spec: act.saturating_add(self.t.ras),
                dirty: false,
            });
            self.log_bank(act, CommandKind::Act, b, q.row);
        }
        let counted = q.epoch == self.epoch;
        if let Some(r) = self.regions.get_mut(q.region).filter(|_| counted) {
            if hit {
                r.stats.row_hits += 1;
            } else {
                r.stats.acts += 1;
            }
        }
        let o = self.banks[b].open.unwrap_or(OpenRow {
            row: q.row,
            region: q.region,
            col_ready: q.arrival,
            pre_ready: q.arrival,
            pre_spec: q.arrival,
            dirty: false,
        });
        let lb = q.arrival.max(o.col_ready);
        let col = if self.t.on_tck && self.is_ddr3(o.region) {
            self.col_slot_on_tck(self.known_on_tck(lb), q.write)
        } else {
            self.col_slot(lb, q.write)
        };
        let t = &self.t;
        let lat = if q.write { t.cwl } else { t.cl };
        let data_end = col.saturating_add(lat).saturating_add(t.burst);
        let slot = BusSlot {
            cmd: col,
            start: col.saturating_add(lat),
            end: data_end,
        };
        insert_sorted(&mut self.bus, slot, |s| s.cmd <= col);
        // Earliest PRE: the row's keep-open time from the ACT (already in
        // pre_ready), tRTP after a read, tWR after the write data; then
        // whatever the method of the region that opened the row adds.
        let recovery = if q.write {
            data_end.saturating_add(t.wr)
        } else {
            col.saturating_add(t.rtp)
        };
        let access = if q.write { Access::Write } else { Access::Read };
        let pre_ready =
            method_of(&mut self.regions, o.region).column(access, col, o.pre_ready.max(recovery));
        let pre_spec = o.pre_spec.max(recovery);
        let epoch = q.epoch;
        let bank = &mut self.banks[b];
        bank.open = Some(OpenRow {
            pre_ready,
            pre_spec,
            dirty: o.dirty || q.write,
            ..o
        });
        if q.write {
            bank.pending.push((q.region, q.issue, epoch));
            insert_sorted(&mut self.wr_pending, (col, q.line), |w| w.0 <= col);
        }
        let kind = if q.write {
            CommandKind::Wr
        } else {
            CommandKind::Rd
        };
        self.log_bank(col, kind, b, q.row);
        Done { seq: q.seq, col }
    }

    /// Whether region index `region` is timed by DDR3's hooks (a DRAM
    /// region, or no region), as [`method_of`] decides.
    #[inline(always)]
    fn is_ddr3(&self, region: usize) -> bool {
        self.regions.get(region).is_none_or(|r| r.nvmm.is_none())
    }

    /// `t`, which the caller knows to be on the DRAM clock (or saturated):
    /// what rounding it would give. The unit tests check each such claim.
    #[inline(always)]
    fn known_on_tck(&self, t: Ps) -> Ps {
        #[cfg(test)]
        assert_eq!(self.t.tck_grid.up(t), t, "{t} ps is off the DRAM clock");
        t
    }

    /// Earliest ACT at or after `lb` in `rank` respecting tRRD and tFAW
    /// against the ACTs already decided (which may lie on both sides).
    #[inline(always)]
    fn act_slot(&self, rank: usize, lb: Ps) -> Ps {
        self.act_slot_on_tck(rank, self.t.tck_grid.up(lb))
    }

    /// [`Controller::act_slot`] from `at`, already on the DRAM clock.
    #[inline(always)]
    fn act_slot_on_tck(&self, rank: usize, at: Ps) -> Ps {
        // No recent ACT (a lightly loaded rank, after `prune`): nothing
        // constrains this one.
        if self.acts[rank].is_empty() {
            return at;
        }
        self.act_slot_among(rank, at)
    }

    /// [`Controller::act_slot`] from `at` (on the DRAM clock) with recent
    /// ACTs in `rank` to keep clear of.
    fn act_slot_among(&self, rank: usize, mut at: Ps) -> Ps {
        let t = &self.t;
        let acts = &self.acts[rank];
        let reach = t.act_reach;
        loop {
            // Only ACTs within `reach` of `at` matter (sorted list).
            let lo = acts.partition_point(|&a| a.saturating_add(reach) <= at);
            let hi = acts.partition_point(|&a| a < at.saturating_add(reach));
            let near = &acts[lo..hi];
            let mut moved = false;
            for &a in near {
                if at < a.saturating_add(t.rrd) && a < at.saturating_add(t.rrd) {
                    at = t.tck_grid.up(a.saturating_add(t.rrd));
                    moved = true;
                }
            }
            if let Some(faw) = t.faw {
                for w in near.windows(4) {
                    let lo = w[0].min(at);
                    let hi = w[3].max(at);
                    if hi - lo < faw {
                        at = t.tck_grid.up(w[0].saturating_add(faw));
                        moved = true;
                    }
                }
            }
            if !moved || at == Ps::MAX {
                return at;
            }
        }
    }

    /// Earliest column command at or after `lb` whose data burst does not
    /// overlap another and which keeps tCCD to the other column commands.
    #[inline(always)]
    fn col_slot(&self, lb: Ps, write: bool) -> Ps {
        self.col_slot_on_tck(self.t.tck_grid.up(lb), write)
    }

    /// [`Controller::col_slot`] from `c`, already on the DRAM clock.
    #[inline(always)]
    fn col_slot_on_tck(&self, c: Ps, write: bool) -> Ps {
        // No recent column command (after `prune`): the channel is free.
        if self.bus.is_empty() {
            return c;
        }
        self.col_slot_among(c, write)
    }

    /// [`Controller::col_slot`] from `c` (on the DRAM clock) with recent
    /// column commands to keep clear of.
    fn col_slot_among(&self, mut c: Ps, write: bool) -> Ps {
        let t = &self.t;
        let lat = if write { t.cwl } else { t.cl };
        let reach = t.col_reach;
        loop {
            // Only commands within `reach` of `c` matter (sorted list).
            let lo = self
                .bus
                .partition_point(|s| s.cmd.saturating_add(reach) <= c);
            let hi = self
                .bus
                .partition_point(|s| s.cmd < c.saturating_add(reach));
            let mut moved = false;
            for s in &self.bus[lo..hi] {
                if c < s.cmd.saturating_add(t.ccd) && s.cmd < c.saturating_add(t.ccd) {
                    c = t.tck_grid.up(s.cmd.saturating_add(t.ccd));
                    moved = true;
                }
                let start = c.saturating_add(lat);
                let end = start.saturating_add(t.burst);
                if start < s.end && s.start < end {
                    c = t.tck_grid.up(c.max(s.end.saturating_sub(lat)));
                    moved = true;
                }
            }
            if !moved || c == Ps::MAX {
                return c;
            }
        }
    }
}

/// Inserts `x` into the sorted `list` after every entry for which `before`
/// holds (a prefix): at the end without a search when the last one does,
/// the common case of requests arriving in time order.
#[inline(always)]
fn insert_sorted<T>(list: &mut Vec<T>, x: T, before: impl Fn(&T) -> bool) {
    if list.last().is_none_or(&before) {
        list.push(x);
    } else {
        let pos = list.partition_point(before);
        list.insert(pos, x);
    }
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

/// The method hooks of region index `region`: those of its method for an
/// NVMM region, DDR3's for a DRAM region and one past the last region (an
/// address outside every region). A DRAM region's method is always
/// [`Ddr3`] (only NVMM regions change method), so its hooks are called
/// statically and inline. A free function so that the caller may use the
/// controller's other fields meanwhile.
#[inline]
fn method_of(regions: &mut [RegionState], region: usize) -> Hooks<'_> {
    match regions.get_mut(region) {
        Some(r) if r.nvmm.is_some() => Hooks::Method(r.method.as_mut()),
        _ => Hooks::Ddr3,
    }
}

/// The hooks [`method_of`] found.
enum Hooks<'a> {
    Ddr3,
    Method(&'a mut dyn NvmmMethod),
}

impl Hooks<'_> {
    #[inline]
    fn arrival(self, access: Access, at: Ps) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.arrival(access, at),
            Hooks::Method(m) => m.arrival(access, at),
        }
    }

    #[inline]
    fn activate(self, at: Ps, spec: &Spec) -> method::Activation {
        match self {
            Hooks::Ddr3 => Ddr3.activate(at, spec),
            Hooks::Method(m) => m.activate(at, spec),
        }
    }

    #[inline]
    fn column(self, access: Access, col: Ps, pre_ready: Ps) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.column(access, col, pre_ready),
            Hooks::Method(m) => m.column(access, col, pre_ready),
        }
    }

    #[inline]
    fn precharge(self, at: Ps, dirty: bool, spec: &Spec) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.precharge(at, dirty, spec),
            Hooks::Method(m) => m.precharge(at, dirty, spec),
        }
    }
}

#[cfg(test)]
mod grid_tests {
    use super::*;

    #[test]
    fn insert_sorted_is_an_insert_at_the_partition_point() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut fast, mut searched) = (Vec::new(), Vec::new());
        for i in 0..5_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly in order, sometimes earlier, with ties.
            let v = if x.is_multiple_of(4) {
                i - x % (i + 1)
            } else {
                i + x % 3
            };
            insert_sorted(&mut fast, v, |&a| a <= v);
            let pos = searched.partition_point(|&a| a <= v);
            searched.insert(pos, v);
            assert_eq!(fast, searched);
        }
    }

    #[test]
    fn grid_up_is_align_up() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for g in [
            0u64,
            1,
            2,
            3,
            1250,
            1500,
            1875,
            5000,
            7519,
            1 << 20,
            u64::MAX,
        ] {
            let grid = Grid::new(g);
            for t in [
                0u64,
                1,
                g.wrapping_sub(1),
                g,
                g.wrapping_add(1),
                HORIZON,
                u64::MAX - 1,
                u64::MAX,
            ] {
                assert_eq!(grid.up(t), align_up(t, g), "g {g} t {t}");
                assert_eq!(grid.div_ceil(t), t.div_ceil(g.max(1)), "g {g} t {t}");
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for t in [x, x >> 20, x >> 40] {
                    assert_eq!(grid.up(t), align_up(t, g), "g {g} t {t}");
                    assert_eq!(grid.div_ceil(t), t.div_ceil(g.max(1)), "g {g} t {t}");
                }
            }
        }
    }
}
