//! What the statistics and the debugger see: per-cache and per-hart
//! counters, line states, and the `memory` object of the statistics JSON.
use crate::bus::BusStats;
use crate::cache::CacheStats;
use crate::time::Ps;
use crate::LineState::{self, Invalid};
use crate::{tlb, CoreId, CoreMap, MemorySystem};
use serde_json::{json, Map, Value};
impl MemorySystem {
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
    pub(crate) fn tlb_stats_json(&self) -> Value {
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

/// The stats and cache names of core `core`: `hartH` while it runs the one
/// hart `H` (the keys of a machine with one thread per core), else `coreC`.
pub(crate) fn core_name(map: &CoreMap, core: CoreId) -> String {
    let mut harts = map.harts_of(core);
    match (harts.next(), harts.next()) {
        (Some(h), None) => format!("hart{h}"),
        _ => format!("core{core}"),
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
