//! `optane`: an Optane-like persistent-memory device behind the
//! controller input (issue 15), calibrated to the published
//! characterisations of the first-generation Optane DC PMM (sources and
//! derivations in `docs/config.md`).
//!
//! The region's requests do not use the DDR3 banks ([`NvmmMethod::serve`]).
//! The region is interleaved over `dimms` DIMMs at `interleave_bytes`; each
//! DIMM has a write-pending queue (WPQ, the iMC's, inside the ADR domain),
//! an XPBuffer of XPLines (the media's access unit), an AIT cache and its
//! media:
//!
//! * a **write** is accepted (persistent) when it enters the WPQ, at once
//!   unless the WPQ is full; it leaves the WPQ in order into the XPBuffer,
//!   which combines it with the other writes to its XPLine. A line that
//!   must be made room for leaves the XPBuffer for the media: read first if
//!   only part of it was written (read-modify-write), then written;
//! * a **read** is forwarded from the WPQ, served from the XPBuffer, or read
//!   from the media into the XPBuffer; a read entering the XPLine after the
//!   one its DIMM read last also reads the next XPLine (prefetch);
//! * every media access translates its address through the AIT cache (a
//!   miss adds `ait_miss_ns`), and keeps the DIMM's media busy for
//!   `xpline_bytes / bandwidth`; its latency runs from its start.
//!
//! The device is decided eagerly, in arrival order: each request's whole
//! course (WPQ departure, evictions, media slots) is fixed when it arrives,
//! and the media serves accesses first come, first served in that order.

use std::collections::{BTreeMap, HashMap, VecDeque};

use rvnvmm_config::{NvmmParams, Replacement};

use super::{NvmmMethod, Registration, Spec};
use crate::stats::{empty_histogram, hist_add, Wear, WearCounter, WearUnit};
use crate::{Access, Ps};

/// Registers `optane`.
pub const REGISTRATION: Registration = Registration {
    name: "optane",
    build: |p, spec| Box::new(Optane::new(p, spec)),
};

/// Bytes of one request (a cache line): the unit the WPQ holds and the
/// XPBuffer tracks as valid.
pub const REQUEST_BYTES: u64 = 64;

/// The device's parameters, quantised: latencies in whole controller
/// clocks, occupancies in ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// DIMMs.
    pub dimms: u64,
    /// Interleaving granule, bytes.
    pub interleave: u64,
    /// XPLine, bytes.
    pub line: u64,
    /// XPBuffer lines per DIMM.
    pub buffer_lines: usize,
    /// XPBuffer replacement.
    pub replacement: Replacement,
    /// AIT cache entries per DIMM.
    pub ait_entries: usize,
    /// AIT granule, bytes.
    pub ait_granule: u64,
    /// AIT miss penalty.
    pub ait_miss: Ps,
    /// WPQ entries per DIMM.
    pub wpq_entries: usize,
    /// Read served from the XPBuffer.
    pub buffer_read: Ps,
    /// Media read latency (added to a miss).
    pub media_read: Ps,
    /// Media write latency.
    pub media_write: Ps,
    /// Media busy time of one XPLine read.
    pub read_occupancy: Ps,
    /// Media busy time of one XPLine write.
    pub write_occupancy: Ps,
    /// Next-XPLine prefetch.
    pub prefetch: bool,
}

impl Timing {
    /// The timing of settings `p` (already checked) on a controller with
    /// clock `spec.clk`.
    pub fn new(p: &NvmmParams, spec: &Spec) -> Timing {
        let o = &p.optane;
        // xpline_bytes / (GB/s) is ns; * 1000 is ps.
        let occupancy = |gbps: f64| ((o.xpline_bytes as f64 * 1000.0 / gbps).round() as Ps).max(1);
        Timing {
            dimms: o.dimms.max(1),
            interleave: o.interleave_bytes.max(1),
            line: o.xpline_bytes.max(REQUEST_BYTES),
            buffer_lines: (o.xpbuffer_bytes / o.xpline_bytes.max(1)).max(1) as usize,
            replacement: o.replacement,
            ait_entries: (o.ait_cache_bytes / o.ait_granule_bytes.max(1)).max(1) as usize,
            ait_granule: o.ait_granule_bytes.max(1),
            ait_miss: spec.controller_clocks(o.ait_miss_ns),
            wpq_entries: o.wpq_entries.max(1) as usize,
            buffer_read: spec.controller_clocks(o.buffer_read_ns),
            media_read: spec.controller_clocks(o.media_read_ns),
            media_write: spec.controller_clocks(o.media_write_ns),
            read_occupancy: occupancy(o.media_read_gbps),
            write_occupancy: occupancy(o.media_write_gbps),
            prefetch: o.prefetch,
        }
    }

    /// Valid mask of a whole XPLine.
    fn full(&self) -> u64 {
        let n = self.line / REQUEST_BYTES;
        if n >= 64 {
            u64::MAX
        } else {
            (1u64 << n) - 1
        }
    }

    fn dimm_of(&self, offset: u64) -> usize {
        ((offset / self.interleave) % self.dimms) as usize
    }
}

/// One XPLine in an XPBuffer.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// XPLine number (region offset / XPLine size).
    line: u64,
    /// Which 64-byte parts hold data (bit i: part i).
    valid: u64,
    /// Written since it came in.
    dirty: bool,
    /// When its data is there (a media read or prefetch still under way).
    ready: Ps,
    /// Last use (LRU).
    used: u64,
}

/// One DIMM (and its channel's WPQ).
#[derive(Debug, Clone, Default)]
struct Dimm {
    buffer: Vec<Entry>,
    /// AIT cache: granule → last use, and last use → granule (LRU order).
    ait: HashMap<u64, u64>,
    ait_lru: BTreeMap<u64, u64>,
    /// Writes in the WPQ: (departure into the XPBuffer, 64-byte line),
    /// in order of departure.
    wpq: VecDeque<(Ps, u64)>,
    /// Departure of the last write that entered the WPQ.
    last_departure: Ps,
    /// When the media can start its next access.
    media_free: Ps,
    /// XPLine of the last read.
    last_read: Option<u64>,
}

/// Counters, in the order [`NvmmMethod::counters`] lists them.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    buffer_read_hits: u64,
    buffer_read_misses: u64,
    buffer_write_hits: u64,
    buffer_write_misses: u64,
    wpq_forwards: u64,
    media_reads: u64,
    media_reads_rmw: u64,
    prefetches: u64,
    media_writes: u64,
    cpu_write_bytes: u64,
    cpu_read_bytes: u64,
    ait_hits: u64,
    ait_misses: u64,
    wpq_occupancy_sum: u64,
    wpq_samples: u64,
    wpq_max: u64,
    wpq_full: u64,
    persist_latency_ps_sum: u64,
    media_write_latency_ps_sum: u64,
}

/// The `optane` method of one region.
#[derive(Debug, Clone)]
pub struct Optane {
    t: Timing,
    dimms: Vec<Dimm>,
    c: Counters,
    persist_hist: Vec<(Ps, u64)>,
    media_write_hist: Vec<(Ps, u64)>,
    wear: WearCounter,
    /// Use clock of the XPBuffers and AIT caches (LRU stamps).
    clock: u64,
    /// `random` replacement: xorshift64 state, fixed seed.
    rng: u64,
}

impl Optane {
    /// The device of settings `p`.
    pub fn new(p: &NvmmParams, spec: &Spec) -> Optane {
        let t = Timing::new(p, spec);
        Optane {
            dimms: vec![Dimm::default(); t.dimms as usize],
            t,
            c: Counters::default(),
            persist_hist: empty_histogram(),
            media_write_hist: empty_histogram(),
            wear: WearCounter::default(),
            clock: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// The quantised parameters.
    pub fn timing(&self) -> &Timing {
        &self.t
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Translation of `offset` on DIMM `d`: the penalty (0 on a hit).
    fn translate(&mut self, d: usize, offset: u64) -> Ps {
        let granule = offset / self.t.ait_granule;
        let now = self.tick();
        let dimm = &mut self.dimms[d];
        if let Some(used) = dimm.ait.get_mut(&granule) {
            dimm.ait_lru.remove(used);
            *used = now;
            dimm.ait_lru.insert(now, granule);
            self.c.ait_hits += 1;
            return 0;
        }
        self.c.ait_misses += 1;
        if dimm.ait.len() >= self.t.ait_entries {
            if let Some((_, victim)) = dimm.ait_lru.pop_first() {
                dimm.ait.remove(&victim);
            }
        }
        dimm.ait.insert(granule, now);
        dimm.ait_lru.insert(now, granule);
        self.t.ait_miss
    }

    /// A media read of XPLine `line` on DIMM `d` requested at `at`: when
    /// its data is there.
    fn media_read(&mut self, d: usize, line: u64, at: Ps) -> Ps {
        let at = at.saturating_add(self.translate(d, line * self.t.line));
        let dimm = &mut self.dimms[d];
        let start = at.max(dimm.media_free);
        dimm.media_free = start.saturating_add(self.t.read_occupancy);
        self.c.media_reads += 1;
        start.saturating_add(self.t.media_read)
    }

    /// Writes evicted entry `e` of DIMM `d` back to the media, starting at
    /// `at`: when its data has left the XPBuffer (the media write starts).
    fn write_back(&mut self, d: usize, e: Entry, at: Ps) -> Ps {
        let mut t = at.max(e.ready);
        if e.valid != self.t.full() {
            // Read-modify-write: the parts not written come from the media.
            t = self.media_read(d, e.line, t);
            self.c.media_reads_rmw += 1;
        } else {
            t = t.saturating_add(self.translate(d, e.line * self.t.line));
        }
        let dimm = &mut self.dimms[d];
        let start = t.max(dimm.media_free);
        dimm.media_free = start.saturating_add(self.t.write_occupancy);
        let done = start.saturating_add(self.t.media_write);
        self.c.media_writes += 1;
        let latency = done - at;
        self.c.media_write_latency_ps_sum = self.c.media_write_latency_ps_sum.saturating_add(latency);
        hist_add(&mut self.media_write_hist, latency);
        self.wear.add(e.line * self.t.line);
        start
    }

    /// Makes room for one more XPLine in DIMM `d`'s XPBuffer at `at`: when
    /// the slot is free.
    fn make_room(&mut self, d: usize, at: Ps) -> Ps {
        let buffer = &self.dimms[d].buffer;
        if buffer.len() < self.t.buffer_lines {
            return at;
        }
        let victim = match self.t.replacement {
            Replacement::Lru => buffer
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.used)
                .map_or(0, |(i, _)| i),
            Replacement::Random => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                (self.rng % buffer.len() as u64) as usize
            }
        };
        let e = self.dimms[d].buffer.swap_remove(victim);
        if e.dirty {
            self.write_back(d, e, at)
        } else {
            at
        }
    }

    fn find(&self, d: usize, line: u64) -> Option<usize> {
        self.dimms[d].buffer.iter().position(|e| e.line == line)
    }

    fn read(&mut self, offset: u64, at: Ps) -> Ps {
        let t = self.t;
        let d = t.dimm_of(offset);
        let line = offset / t.line;
        let part = 1u64 << ((offset % t.line) / REQUEST_BYTES);
        let request = offset / REQUEST_BYTES;
        self.c.cpu_read_bytes += REQUEST_BYTES;
        if self.dimms[d]
            .wpq
            .iter()
            .any(|&(leaves, l)| l == request && leaves > at)
        {
            self.c.wpq_forwards += 1;
            return at;
        }
        let sequential = self.dimms[d].last_read.is_some_and(|l| l + 1 == line);
        self.dimms[d].last_read = Some(line);
        let used = self.tick();
        let data = match self.find(d, line) {
            Some(i) if self.dimms[d].buffer[i].valid & part != 0 => {
                self.c.buffer_read_hits += 1;
                let e = &mut self.dimms[d].buffer[i];
                e.used = used;
                at.max(e.ready)
            }
            found => {
                self.c.buffer_read_misses += 1;
                let ready = self.media_read(d, line, at);
                match found {
                    Some(i) => {
                        // Written in part: the media fills in the rest.
                        let e = &mut self.dimms[d].buffer[i];
                        e.valid = t.full();
                        e.ready = e.ready.max(ready);
                        e.used = used;
                    }
                    None => {
                        self.make_room(d, at);
                        self.dimms[d].buffer.push(Entry {
                            line,
                            valid: t.full(),
                            dirty: false,
                            ready,
                            used,
                        });
                    }
                }
                ready
            }
        };
        if t.prefetch && sequential {
            let next = line + 1;
            if t.dimm_of(next * t.line) == d && self.find(d, next).is_none() {
                self.c.prefetches += 1;
                let ready = self.media_read(d, next, at);
                self.make_room(d, at);
                let used = self.tick();
                self.dimms[d].buffer.push(Entry {
                    line: next,
                    valid: t.full(),
                    dirty: false,
                    ready,
                    used,
                });
            }
        }
        data.saturating_add(t.buffer_read)
    }

    fn write(&mut self, offset: u64, at: Ps) -> Ps {
        let t = self.t;
        let d = t.dimm_of(offset);
        let line = offset / t.line;
        let part = 1u64 << ((offset % t.line) / REQUEST_BYTES);
        self.c.cpu_write_bytes += REQUEST_BYTES;
        // WPQ space: once the write `wpq_entries` places back has left.
        let wpq = &mut self.dimms[d].wpq;
        while wpq.front().is_some_and(|&(leaves, _)| leaves <= at) {
            wpq.pop_front();
        }
        let accepted = if wpq.len() >= t.wpq_entries {
            self.c.wpq_full += 1;
            wpq[wpq.len() - t.wpq_entries].0
        } else {
            at
        };
        while wpq.front().is_some_and(|&(leaves, _)| leaves <= accepted) {
            wpq.pop_front();
        }
        // In order into the XPBuffer.
        let enter = accepted.max(self.dimms[d].last_departure);
        let used = self.tick();
        let leaves = match self.find(d, line) {
            Some(i) => {
                self.c.buffer_write_hits += 1;
                let e = &mut self.dimms[d].buffer[i];
                e.valid |= part;
                e.dirty = true;
                e.used = used;
                enter
            }
            None => {
                self.c.buffer_write_misses += 1;
                let free = self.make_room(d, enter);
                let leaves = enter.max(free);
                self.dimms[d].buffer.push(Entry {
                    line,
                    valid: part,
                    dirty: true,
                    ready: leaves,
                    used,
                });
                leaves
            }
        };
        let dimm = &mut self.dimms[d];
        dimm.last_departure = leaves;
        dimm.wpq.push_back((leaves, offset / REQUEST_BYTES));
        let occupancy = dimm.wpq.len() as u64;
        self.c.wpq_occupancy_sum += occupancy;
        self.c.wpq_samples += 1;
        self.c.wpq_max = self.c.wpq_max.max(occupancy);
        let persist = accepted - at;
        self.c.persist_latency_ps_sum = self.c.persist_latency_ps_sum.saturating_add(persist);
        hist_add(&mut self.persist_hist, persist);
        accepted
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl NvmmMethod for Optane {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn serve(&mut self, access: Access, offset: u64, at: Ps) -> Option<Ps> {
        Some(match access {
            Access::Read => self.read(offset, at),
            Access::Write => self.write(offset, at),
        })
    }

    fn idle(&self) -> Ps {
        self.dimms
            .iter()
            .map(|d| d.media_free.max(d.last_departure))
            .max()
            .unwrap_or(0)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.c;
        vec![
            ("media_reads", c.media_reads),
            ("media_reads_rmw", c.media_reads_rmw),
            ("prefetches", c.prefetches),
            ("media_writes", c.media_writes),
            ("media_read_bytes", c.media_reads * self.t.line),
            ("media_write_bytes", c.media_writes * self.t.line),
            ("cpu_read_bytes", c.cpu_read_bytes),
            ("cpu_write_bytes", c.cpu_write_bytes),
            ("xpbuffer_read_hits", c.buffer_read_hits),
            ("xpbuffer_read_misses", c.buffer_read_misses),
            ("xpbuffer_write_hits", c.buffer_write_hits),
            ("xpbuffer_write_misses", c.buffer_write_misses),
            ("wpq_forwards", c.wpq_forwards),
            ("ait_hits", c.ait_hits),
            ("ait_misses", c.ait_misses),
            ("wpq_occupancy_sum", c.wpq_occupancy_sum),
            ("wpq_samples", c.wpq_samples),
            ("wpq_max", c.wpq_max),
            ("wpq_full", c.wpq_full),
            ("persist_latency_total_ns", c.persist_latency_ps_sum / 1000),
            (
                "media_write_latency_total_ns",
                c.media_write_latency_ps_sum / 1000,
            ),
        ]
    }

    fn rates(&self) -> Vec<(&'static str, f64)> {
        let c = &self.c;
        let line = self.t.line;
        vec![
            (
                "write_amplification",
                ratio(c.media_writes * line, c.cpu_write_bytes),
            ),
            (
                "read_amplification",
                ratio(c.media_reads * line, c.cpu_read_bytes),
            ),
            (
                "xpbuffer_hit_rate",
                ratio(
                    c.buffer_read_hits + c.buffer_write_hits,
                    c.buffer_read_hits
                        + c.buffer_read_misses
                        + c.buffer_write_hits
                        + c.buffer_write_misses,
                ),
            ),
            ("ait_hit_rate", ratio(c.ait_hits, c.ait_hits + c.ait_misses)),
            (
                "wpq_mean_occupancy",
                ratio(c.wpq_occupancy_sum, c.wpq_samples),
            ),
            (
                "avg_persist_latency_ns",
                ratio(c.persist_latency_ps_sum, c.wpq_samples) / 1000.0,
            ),
            (
                "avg_media_write_latency_ns",
                ratio(c.media_write_latency_ps_sum, c.media_writes) / 1000.0,
            ),
        ]
    }

    fn histograms(&self) -> Vec<(&'static str, Vec<(Ps, u64)>)> {
        vec![
            ("persist_latency_hist", self.persist_hist.clone()),
            ("media_write_latency_hist", self.media_write_hist.clone()),
        ]
    }

    fn wear(&self) -> Option<Wear> {
        Some(self.wear.report(WearUnit::Line { bytes: self.t.line }))
    }

    fn reset_counters(&mut self) {
        self.c = Counters::default();
        self.persist_hist = empty_histogram();
        self.media_write_hist = empty_histogram();
        self.wear = WearCounter::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Controller, RegionStats};
    use rvnvmm_config::{Method, OptaneParams};

    const BASE: u64 = 0xC000_0000;

    fn controller(optane: OptaneParams) -> Controller {
        controller_with(optane, rvnvmm_config::ControllerConfig::default())
    }

    fn controller_with(optane: OptaneParams, cfg: rvnvmm_config::ControllerConfig) -> Controller {
        let p = NvmmParams {
            method: Method::Optane,
            optane,
            ..NvmmParams::default()
        };
        let regions = vec![
            ("dram".to_string(), 0x8000_0000, 1 << 30, None),
            ("nvmm".to_string(), BASE, 1 << 30, Some(p)),
        ];
        Controller::new("ddr3", &cfg, &regions).unwrap()
    }

    fn nvmm(c: &Controller) -> RegionStats {
        c.stats().into_iter().find(|s| s.name == "nvmm").unwrap()
    }

    fn rate(s: &RegionStats, name: &str) -> f64 {
        s.method_rates.iter().find(|(k, _)| *k == name).unwrap().1
    }

    fn counter(s: &RegionStats, name: &str) -> u64 {
        s.method.iter().find(|(k, _)| *k == name).unwrap().1
    }

    /// xorshift: deterministic pseudo-random offsets.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Idle reads (each issued 1 µs after the one before returned):
    /// average latency at the controller, ns.
    fn idle_reads(c: &mut Controller, offsets: impl Iterator<Item = u64>) -> f64 {
        let (mut now, mut sum, mut n) = (0, 0, 0);
        for o in offsets {
            let out = c.read(BASE + o, now);
            sum += out - now;
            n += 1;
            now = out + 1_000_000;
        }
        sum as f64 / n as f64 / 1000.0
    }

    #[test]
    fn idle_reads_random_media_sequential_buffer() {
        let p = OptaneParams::default();
        let mut c = controller(p.clone());
        let seq = idle_reads(&mut c, (0..4096).map(|i| i * 64));
        let mut x = 7;
        let mut c = controller(p.clone());
        let rand = idle_reads(
            &mut c,
            (0..4096).map(|_| next(&mut x) % (1 << 30) / 64 * 64),
        );
        // A random read: an XPBuffer miss, usually an AIT miss too over
        // 1 GiB: buffer + media (+ AIT) read.
        assert!(
            rand >= p.buffer_read_ns + p.media_read_ns,
            "random {rand} ns"
        );
        // Sequential: nearly every read hits the XPBuffer (the line's
        // other parts, then the prefetched next line).
        assert!(seq < p.buffer_read_ns + 10.0, "sequential {seq} ns");
        let s = nvmm(&c);
        assert_eq!(s.reads, 4096);
        assert!(rate(&s, "xpbuffer_hit_rate") < 0.01);
        // Without prefetch, every fourth sequential read goes to the media.
        let mut c = controller(OptaneParams {
            prefetch: false,
            ..p.clone()
        });
        let no_pf = idle_reads(&mut c, (0..4096).map(|i| i * 64));
        let expect = p.buffer_read_ns + p.media_read_ns / 4.0;
        assert!((no_pf - expect).abs() < 10.0, "{no_pf} vs {expect}");
        assert_eq!(counter(&nvmm(&c), "prefetches"), 0);
    }

    /// `n` writes of `size` bytes each (64-byte requests back to back),
    /// at addresses `at(i)`, each group issued when the one before was
    /// accepted (clean + fence): the region's statistics afterwards.
    fn writes(p: OptaneParams, n: u64, size: u64, at: impl Fn(u64) -> u64) -> RegionStats {
        let mut c = controller(p);
        let mut now = 0;
        for i in 0..n {
            let base = at(i);
            let mut last = now;
            for k in 0..size / 64 {
                last = last.max(c.write(BASE + base + k * 64, now));
            }
            now = last;
        }
        c.finish();
        nvmm(&c)
    }

    #[test]
    fn write_amplification_random_small_and_sequential_full_lines() {
        let mut x = 11;
        let offsets: Vec<u64> = (0..20_000)
            .map(|_| next(&mut x) % (1 << 30) / 64 * 64)
            .collect();
        let random = writes(OptaneParams::default(), 20_000, 64, |i| {
            offsets[i as usize]
        });
        let wa = rate(&random, "write_amplification");
        // Every 64-byte write makes one 256-byte XPLine dirty; all but the
        // lines still in the XPBuffers (6 x 64) are written back.
        assert!((3.8..=4.0).contains(&wa), "random 64 B: {wa}");
        assert!(counter(&random, "media_reads_rmw") > 19_000);
        let seq = writes(OptaneParams::default(), 20_000, 256, |i| i * 256);
        let wa = rate(&seq, "write_amplification");
        assert!((0.95..=1.0).contains(&wa), "sequential 256 B: {wa}");
        assert_eq!(counter(&seq, "media_reads_rmw"), 0);
        // Wear: each sequential line written once.
        let w = seq.wear.clone().unwrap();
        assert_eq!(w.unit, WearUnit::Line { bytes: 256 });
        assert_eq!(w.hist, vec![(1, w.units)]);
        assert_eq!(w.writes, counter(&seq, "media_writes"));
    }

    #[test]
    fn persist_at_the_wpq_media_write_later_and_slower() {
        let p = OptaneParams::default();
        // Idle writes to distinct lines of one DIMM: accepted at once.
        let mut c = controller(p.clone());
        for i in 0..1000u64 {
            c.write(BASE + i * 6 * 4096, i * 1_000_000);
        }
        c.finish();
        let s = nvmm(&c);
        assert_eq!(rate(&s, "avg_persist_latency_ns"), 0.0);
        assert_eq!(s.avg_write_wait_ns(), 0.0);
        let media = rate(&s, "avg_media_write_latency_ns");
        assert!(media >= p.media_write_ns, "media write {media} ns");
        // A burst faster than the media drains: the WPQ fills, and writers
        // wait for room.
        let mut c = controller(p.clone());
        for i in 0..1000u64 {
            c.write(BASE + i * 6 * 4096 % (1 << 30), 0);
        }
        let s = nvmm(&c);
        assert_eq!(counter(&s, "wpq_max"), p.wpq_entries);
        assert!(counter(&s, "wpq_full") > 800, "{}", counter(&s, "wpq_full"));
        assert!(rate(&s, "avg_persist_latency_ns") > 1000.0);
    }

    #[test]
    fn a_read_of_a_queued_write_is_forwarded() {
        let mut c = controller(OptaneParams::default());
        for i in 0..200u64 {
            c.write(BASE + i * 6 * 4096, 0);
        }
        // The last write waits in the WPQ behind the media.
        let t = c.now();
        let out = c.read(BASE + 199 * 6 * 4096, t);
        assert!(out - t <= 5_000, "{}", out - t);
        assert_eq!(counter(&nvmm(&c), "wpq_forwards"), 1);
    }

    #[test]
    fn same_requests_same_statistics_and_reset_zeroes() {
        let run = |replacement| {
            let mut c = controller(OptaneParams {
                replacement,
                xpbuffer_bytes: 4096,
                ..OptaneParams::default()
            });
            let mut x = 3;
            let mut now = 0;
            for i in 0..5000u64 {
                let o = next(&mut x) % (64 << 20) / 64 * 64;
                now = if i % 3 == 0 {
                    c.write(BASE + o, now)
                } else {
                    c.read(BASE + o, now)
                };
            }
            c.finish();
            c
        };
        for r in [Replacement::Lru, Replacement::Random] {
            let (a, b) = (run(r), run(r));
            assert_eq!(a.stats(), b.stats());
            let mut a = a;
            a.reset_stats();
            let s = nvmm(&a);
            assert!(s.method.iter().all(|(_, v)| *v == 0));
            assert_eq!(s.wear.unwrap().writes, 0);
        }
        assert_ne!(
            nvmm(&run(Replacement::Lru)).method,
            nvmm(&run(Replacement::Random)).method
        );
    }

    #[test]
    fn media_bandwidth_reads_about_three_times_writes() {
        // Saturate one DIMM with sequential full-line traffic: reads (one
        // request at a time per line, many lines in flight) vs writes.
        let p = OptaneParams {
            dimms: 1,
            prefetch: false,
            ..OptaneParams::default()
        };
        // An iMC read queue deep enough to keep the media busy.
        let deep = rvnvmm_config::ControllerConfig {
            read_queue: 256,
            ..rvnvmm_config::ControllerConfig::default()
        };
        let mut c = controller_with(p.clone(), deep);
        let lines = 4000u64;
        let mut done = 0;
        for i in 0..lines * 4 {
            done = done.max(c.read(BASE + i * 64, 0));
        }
        let read_gbps = (lines * 256) as f64 / (done as f64 / 1000.0);
        let mut c = controller(p.clone());
        for i in 0..lines * 4 {
            c.write(BASE + i * 64, 0);
        }
        let end = c.finish();
        let write_gbps = (lines * 256) as f64 / (end as f64 / 1000.0);
        assert!((read_gbps - p.media_read_gbps).abs() < 0.2, "{read_gbps}");
        assert!((write_gbps - p.media_write_gbps).abs() < 0.1, "{write_gbps}");
    }

    #[test]
    fn bad_settings_are_errors_not_panics() {
        for (bad, key) in [
            (
                OptaneParams {
                    xpline_bytes: 100,
                    ..OptaneParams::default()
                },
                "memory.nvmm.optane.xpline_bytes",
            ),
            (
                OptaneParams {
                    dimms: 0,
                    ..OptaneParams::default()
                },
                "memory.nvmm.optane.dimms",
            ),
            (
                OptaneParams {
                    media_write_gbps: f64::NAN,
                    ..OptaneParams::default()
                },
                "memory.nvmm.optane.media_write_gbps",
            ),
        ] {
            let p = NvmmParams {
                method: Method::Optane,
                optane: bad,
                ..NvmmParams::default()
            };
            let e = Controller::new(
                "ddr3",
                &rvnvmm_config::ControllerConfig::default(),
                &[("nvmm".to_string(), BASE, 1 << 30, Some(p))],
            )
            .unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
    }
}
