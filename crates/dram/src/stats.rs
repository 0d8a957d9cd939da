//! Bus-monitor statistics of one region (seed 000 Fig. 6, DESIGN.md §1).

use std::collections::HashMap;

use crate::Ps;

/// Upper bounds (ns) of the latency histogram buckets; a last bucket with
/// bound `u64::MAX` ps catches everything above.
const BUCKET_BOUNDS_NS: [u64; 16] = [
    10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000, 1_000_000,
];

/// The empty latency histogram: `(bucket upper bound in ps, count)`, bounds
/// increasing, the last one `u64::MAX`. A latency `l` falls in the first
/// bucket whose bound is `>= l`.
pub fn empty_histogram() -> Vec<(Ps, u64)> {
    BUCKET_BOUNDS_NS
        .iter()
        .map(|ns| (ns * 1000, 0))
        .chain(std::iter::once((u64::MAX, 0)))
        .collect()
}

pub(crate) fn hist_add(h: &mut [(Ps, u64)], latency: Ps) {
    if let Some(b) = h.iter_mut().find(|(bound, _)| latency <= *bound) {
        b.1 += 1;
    }
}

/// Counters of one region, as the FPGA's bus monitor and more.
///
/// Counts are of requests seen at the controller: a read is one cache line
/// read, a write one line written back. Times are simulated picoseconds.
/// ACTs and row hits of a posted write are counted when the controller
/// schedules it, and its latency when its row is written back to the cells
/// (call [`crate::Controller::advance`] or [`crate::Controller::finish`]
/// before reading the statistics at the end of a run).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionStats {
    /// Region name (`dram`, `nvmm`, ...).
    pub name: String,
    /// Read requests.
    pub reads: u64,
    /// Write requests (write-backs).
    pub writes: u64,
    /// ACT commands issued for this region's requests.
    pub acts: u64,
    /// Requests served from an already open row (no ACT).
    pub row_hits: u64,
    /// Reads answered from the posted write queue (no DRAM access at all).
    pub forwarded: u64,
    /// Requests to a different bank than the previous request of this
    /// region (the FPGA monitor's BANK PARA numerator).
    pub bank_switches: u64,
    /// Sum over reads of arrival at the controller input → data leaving the
    /// controller (includes a coarse-grain hold).
    pub read_latency_ps_sum: u64,
    /// Writes whose data reached the cells (the PRE writing their row back
    /// has completed); the denominator of [`RegionStats::avg_write_latency_ns`].
    pub writes_done: u64,
    /// Sum over completed writes of arrival at the controller input → data in
    /// the cells (PRE + tRP of the row holding it).
    pub write_latency_ps_sum: u64,
    /// Sum over writes of what the writer waited: arrival → accepted (a
    /// coarse-grain hold plus waiting for write-queue space).
    pub write_wait_ps_sum: u64,
    /// Arrival of the first request since the last reset (0 if none).
    pub first_ps: Ps,
    /// Latest arrival, read completion or write acceptance since the last
    /// reset.
    pub last_ps: Ps,
    /// Read latency histogram, see [`empty_histogram`].
    pub read_latency_hist: Vec<(Ps, u64)>,
    /// Write latency (to data in cells) histogram, see [`empty_histogram`].
    pub write_latency_hist: Vec<(Ps, u64)>,
    /// Counters of the region's NVMM method, `(name, value)`
    /// ([`crate::NvmmMethod::counters`]); empty for the methods of seed 000
    /// and for DRAM, which have none.
    pub method: Vec<(&'static str, u64)>,
    /// Rates the method derives from its counters, `(name, value)`
    /// ([`crate::NvmmMethod::rates`]).
    pub method_rates: Vec<(&'static str, f64)>,
    /// Latency histograms of the method's own, `(name, histogram)`
    /// ([`crate::NvmmMethod::histograms`]; buckets as [`empty_histogram`]).
    pub method_hists: Vec<(&'static str, Vec<(Ps, u64)>)>,
    /// Writes to the medium per unit (XPLine for `optane`, row for the
    /// DDR3-based methods); `None` for DRAM regions.
    pub wear: Option<Wear>,
}

/// What one unit of wear is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WearUnit {
    /// A DRAM row of one bank: a media write is the write-back of a dirty
    /// row buffer (a PRE after a write). Keys are `bank << 32 | row`, the
    /// bank counted over all ranks.
    Row,
    /// A media line of `bytes` bytes; keys are its byte offset within the
    /// region.
    Line {
        /// Size of the line.
        bytes: u64,
    },
}

/// Wear of a region: how often each unit of the medium was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wear {
    /// What a unit is.
    pub unit: WearUnit,
    /// Media writes in all.
    pub writes: u64,
    /// Units written at least once.
    pub units: u64,
    /// `(upper bound of writes per unit, units)`: bounds 1, 2, 4, 8, ...
    /// (a unit written `n` times falls in the first bucket with bound
    /// `>= n`), up to the bucket of the most written unit.
    pub hist: Vec<(u64, u64)>,
    /// The most written units, `(key, writes)`, most first (ties: lower
    /// key first); at most [`HOTTEST`].
    pub hottest: Vec<(u64, u64)>,
}

/// How many of the most written units [`Wear::hottest`] lists.
pub const HOTTEST: usize = 8;

/// Counts media writes per unit.
#[derive(Debug, Clone, Default)]
pub(crate) struct WearCounter {
    counts: HashMap<u64, u64>,
    writes: u64,
}

impl WearCounter {
    pub(crate) fn add(&mut self, key: u64) {
        *self.counts.entry(key).or_insert(0) += 1;
        self.writes += 1;
    }

    /// The report: the same counts give the same report whatever the order
    /// of the map (sorted, ties broken by key).
    pub(crate) fn report(&self, unit: WearUnit) -> Wear {
        let mut hist: Vec<(u64, u64)> = Vec::new();
        for &n in self.counts.values() {
            let bound = n.next_power_of_two();
            let i = bound.trailing_zeros() as usize;
            if hist.len() <= i {
                let start = hist.len();
                hist.extend((start..=i).map(|b| (1u64 << b, 0)));
            }
            hist[i].1 += 1;
        }
        let mut hottest: Vec<(u64, u64)> = self.counts.iter().map(|(&k, &n)| (k, n)).collect();
        hottest.sort_unstable_by_key(|&(k, n)| (std::cmp::Reverse(n), k));
        hottest.truncate(HOTTEST);
        Wear {
            unit,
            writes: self.writes,
            units: self.counts.len() as u64,
            hist,
            hottest,
        }
    }
}

impl RegionStats {
    /// Zeroed statistics for region `name`.
    pub fn new(name: &str) -> RegionStats {
        RegionStats {
            name: name.to_string(),
            reads: 0,
            writes: 0,
            acts: 0,
            row_hits: 0,
            forwarded: 0,
            bank_switches: 0,
            read_latency_ps_sum: 0,
            writes_done: 0,
            write_latency_ps_sum: 0,
            write_wait_ps_sum: 0,
            first_ps: 0,
            last_ps: 0,
            read_latency_hist: empty_histogram(),
            write_latency_hist: empty_histogram(),
            method: Vec::new(),
            method_rates: Vec::new(),
            method_hists: Vec::new(),
            wear: None,
        }
    }

    /// Read + write requests.
    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }

    /// ACT/REQ: ACTs per request (lower = more row-buffer locality). 0 when
    /// there were no requests.
    pub fn act_per_req(&self) -> f64 {
        ratio(self.acts, self.requests())
    }

    /// BANK PARA: share of requests going to a different bank than the
    /// previous request of the region. 0 when there were no requests.
    pub fn bank_para(&self) -> f64 {
        ratio(self.bank_switches, self.requests())
    }

    /// Reads per write. `f64::INFINITY` when there were reads but no writes,
    /// 0 when there were neither.
    pub fn rw_ratio(&self) -> f64 {
        match (self.reads, self.writes) {
            (0, 0) => 0.0,
            (_, 0) => f64::INFINITY,
            (r, w) => r as f64 / w as f64,
        }
    }

    /// Share of row accesses (requests that reached a bank) served without an
    /// ACT: `row_hits / (row_hits + acts)`. 0 when there were none.
    pub fn row_hit_rate(&self) -> f64 {
        ratio(self.row_hits, self.row_hits + self.acts)
    }

    /// Average read latency at the controller in ns (0 without reads).
    pub fn avg_read_latency_ns(&self) -> f64 {
        ratio(self.read_latency_ps_sum, self.reads) / 1000.0
    }

    /// Average write latency (arrival → data in cells) in ns over the
    /// completed writes (0 without any).
    pub fn avg_write_latency_ns(&self) -> f64 {
        ratio(self.write_latency_ps_sum, self.writes_done) / 1000.0
    }

    /// Average time a writer waited for its write to be accepted, in ns.
    pub fn avg_write_wait_ns(&self) -> f64 {
        ratio(self.write_wait_ps_sum, self.writes) / 1000.0
    }

    /// Requests per simulated second over `[first_ps, last_ps]` (0 if that
    /// span is empty). Use [`RegionStats::req_per_sec_over`] with the run's
    /// simulated time to get the paper's "requests per second of execution".
    pub fn req_per_sec(&self) -> f64 {
        self.req_per_sec_over(self.last_ps.saturating_sub(self.first_ps))
    }

    /// Requests per second over a span of `span_ps` simulated picoseconds (0
    /// if the span is 0).
    pub fn req_per_sec_over(&self, span_ps: Ps) -> f64 {
        if span_ps == 0 {
            0.0
        } else {
            self.requests() as f64 / (span_ps as f64 * 1e-12)
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_helpers() {
        let mut s = RegionStats::new("nvmm");
        assert_eq!(s.act_per_req(), 0.0);
        assert_eq!(s.rw_ratio(), 0.0);
        assert_eq!(s.req_per_sec(), 0.0);
        s.reads = 6;
        s.writes = 2;
        s.acts = 4;
        s.row_hits = 4;
        s.bank_switches = 2;
        s.read_latency_ps_sum = 6 * 1_500_000;
        s.writes_done = 1;
        s.write_latency_ps_sum = 9_000_000;
        s.write_wait_ps_sum = 2_000_000;
        s.first_ps = 1_000_000;
        s.last_ps = 9_000_000;
        assert_eq!(s.act_per_req(), 0.5);
        assert_eq!(s.bank_para(), 0.25);
        assert_eq!(s.rw_ratio(), 3.0);
        assert_eq!(s.row_hit_rate(), 0.5);
        assert_eq!(s.avg_read_latency_ns(), 1500.0);
        assert_eq!(s.avg_write_latency_ns(), 9000.0);
        assert_eq!(s.avg_write_wait_ns(), 1000.0);
        // 8 requests in 8 µs = 1e6 per second.
        assert!((s.req_per_sec() - 1e6).abs() < 1e-3);
        s.writes = 0;
        assert_eq!(s.rw_ratio(), f64::INFINITY);
    }

    #[test]
    fn wear_report_is_sorted_and_bucketed() {
        let mut w = WearCounter::default();
        for (key, times) in [(7u64, 1u64), (3, 5), (9, 5), (1, 2)] {
            for _ in 0..times {
                w.add(key);
            }
        }
        let r = w.report(WearUnit::Line { bytes: 256 });
        assert_eq!((r.writes, r.units), (13, 4));
        // 1 write: bucket 1; 2: bucket 2; 5 and 5: bucket 8.
        assert_eq!(r.hist, vec![(1, 1), (2, 1), (4, 0), (8, 2)]);
        assert_eq!(r.hottest, vec![(3, 5), (9, 5), (1, 2), (7, 1)]);
        let empty = WearCounter::default().report(WearUnit::Row);
        assert!(empty.hist.is_empty() && empty.hottest.is_empty());
    }

    #[test]
    fn histogram_buckets() {
        let mut h = empty_histogram();
        assert_eq!(h.last().unwrap().0, u64::MAX);
        assert!(h.windows(2).all(|w| w[0].0 < w[1].0));
        hist_add(&mut h, 10_000); // exactly 10 ns: first bucket
        hist_add(&mut h, 10_001);
        hist_add(&mut h, u64::MAX);
        assert_eq!(h[0].1, 1);
        assert_eq!(h[1].1, 1);
        assert_eq!(h.last().unwrap().1, 1);
    }
}
