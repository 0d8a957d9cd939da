//! The memory-mapped control page of the memory system (seed 000 Fig. 6:
//! "NVMM configuration registers"): read and set the NVMM method and
//! latencies at run time, snapshot and reset the bus-monitor counters.
//!
//! Layout (64-bit little-endian registers; narrower accesses read or write
//! the low bytes of the register they fall in):
//!
//! | offset | name | access | meaning |
//! |---|---|---|---|
//! | 0x000 | `MAGIC` | RO | `0x314C_5443_4D4D_564E` ("NVMMCTL1") |
//! | 0x008 | `METHOD` | RW | 0 coarse, 1 fine, 2 proposed |
//! | 0x010 | `TRCD_NS` | RW | NVMM read latency (fine/proposed) |
//! | 0x018 | `TRP_NS` | RW | NVMM write latency (fine/proposed) |
//! | 0x020 | `TRAS_NS` | RW | stretched tRAS (proposed) |
//! | 0x028 | `COARSE_READ_NS` | RW | read delay (coarse) |
//! | 0x030 | `COARSE_WRITE_NS` | RW | write delay (coarse) |
//! | 0x038 | `BOUNDARY` | RW | physical address where NVMM timing begins: moves the split between the NVMM region and the DRAM region below it on the same controller (4 KiB aligned, each keeps a page) |
//! | 0x040 | `COMMAND` | WO | 1: snapshot the counters; 2: reset them |
//! | 0x048 | `LINE_BYTES` | RO | the L1 data cache's line size: the step of a range flush |
//! | 0x100 + 0x40·r | counters of region r (0 = the NVMM region, 1 = DRAM) | RO | reads, writes, acts, row_hits, bank switches, read latency sum (ns), write latency sum (ns), writes completed |
//!
//! A latency write takes effect for the next requests; the method and the
//! latencies form one setting, applied as a whole on every write. Stores of
//! values the memory system refuses, and stores to read-only registers, are
//! ignored (read the register back to see what holds).

use crate::MemorySystem;
use rvnvmm_config::{Config, Method, NvmmParams, RegionKind};

/// Bytes of the page.
pub const CONTROL_PAGE_SIZE: u64 = 4096;
/// The `MAGIC` register's value.
pub const MAGIC: u64 = u64::from_le_bytes(*b"NVMMCTL1");

const COUNTERS: usize = 8;

/// The control page's own state: the NVMM setting it last applied and the
/// counter snapshot.
#[derive(Clone, Debug)]
pub struct ControlPage {
    region: String,
    params: NvmmParams,
    boundary: u64,
    line_bytes: u64,
    regions: Vec<String>,
    snapshot: Vec<[u64; COUNTERS]>,
}

impl ControlPage {
    /// The control page of machine `cfg` (its first NVMM region), or `None`
    /// if the machine has no NVMM.
    pub fn new(cfg: &Config) -> Option<ControlPage> {
        let (name, r) = cfg.memory.regions_of_kind(RegionKind::Nvmm).next()?;
        let mut regions = vec![name.to_string()];
        regions.extend(
            cfg.memory
                .regions_of_kind(RegionKind::Dram)
                .map(|(n, _)| n.to_string()),
        );
        Some(ControlPage {
            region: name.to_string(),
            params: r.nvmm.clone()?,
            boundary: r.base,
            line_bytes: u64::from(cfg.cache.l1d.line_bytes),
            snapshot: vec![[0; COUNTERS]; regions.len()],
            regions,
        })
    }

    fn register(&self, index: u64) -> u64 {
        let p = &self.params;
        match index {
            0 => MAGIC,
            1 => match p.method {
                Method::Coarse => 0,
                Method::Fine => 1,
                Method::Proposed => 2,
            },
            2 => p.trcd_ns.round() as u64,
            3 => p.trp_ns.round() as u64,
            4 => p.tras_ns.round() as u64,
            5 => p.coarse_read_ns.round() as u64,
            6 => p.coarse_write_ns.round() as u64,
            7 => self.boundary,
            9 => self.line_bytes,
            i if (0x20..0x20 + 8 * self.regions.len() as u64).contains(&i) => {
                let k = (i - 0x20) as usize;
                self.snapshot[k / COUNTERS][k % COUNTERS]
            }
            _ => 0,
        }
    }

    /// A load of `size` bytes at `offset` into the page.
    pub fn load(&mut self, _ms: Option<&mut MemorySystem>, offset: u64, size: u64) -> Option<u64> {
        if offset >= CONTROL_PAGE_SIZE || !offset.is_multiple_of(size) {
            return None;
        }
        let word = self.register(offset / 8);
        let shift = (offset % 8) * 8;
        let mask = if size == 8 {
            u64::MAX
        } else {
            (1u64 << (size * 8)) - 1
        };
        Some((word >> shift) & mask)
    }

    /// A store of `size` bytes at `offset`; `false` (an access fault) only
    /// outside the page or for a store narrower than a register. Like WARL
    /// CSRs, a read-only register or a value the memory system refuses
    /// (method 7, a boundary outside the regions) leaves the register
    /// unchanged, which software sees by reading it back.
    pub fn store(
        &mut self,
        ms: Option<&mut MemorySystem>,
        offset: u64,
        size: u64,
        value: u64,
    ) -> bool {
        if offset >= CONTROL_PAGE_SIZE || !offset.is_multiple_of(size) || !offset.is_multiple_of(8)
        {
            return false;
        }
        let mut p = self.params.clone();
        match offset / 8 {
            1 => {
                p.method = match value {
                    0 => Method::Coarse,
                    1 => Method::Fine,
                    2 => Method::Proposed,
                    _ => return true,
                }
            }
            2 => p.trcd_ns = value as f64,
            3 => p.trp_ns = value as f64,
            4 => p.tras_ns = value as f64,
            5 => p.coarse_read_ns = value as f64,
            6 => p.coarse_write_ns = value as f64,
            7 => {
                if ms.is_none_or(|ms| ms.set_boundary(&self.region, value).is_ok()) {
                    self.boundary = value;
                }
                return true;
            }
            8 => {
                self.command(ms, value);
                return true;
            }
            _ => return true,
        }
        if ms.is_none_or(|ms| ms.set_nvmm(&self.region, p.clone()).is_ok()) {
            self.params = p;
        }
        true
    }

    /// Runs a `COMMAND` (1 snapshot, 2 reset; others are ignored).
    fn command(&mut self, ms: Option<&mut MemorySystem>, value: u64) {
        let Some(ms) = ms else { return };
        match value {
            1 => {
                let stats = ms.stats_json(0);
                for (k, name) in self.regions.iter().enumerate() {
                    let r = &stats["regions"][name];
                    let n = |key: &str| r[key].as_u64().unwrap_or(0);
                    self.snapshot[k] = [
                        n("reads"),
                        n("writes"),
                        n("acts"),
                        n("row_hits"),
                        n("bank_switches"),
                        n("read_latency_total_ns"),
                        n("write_latency_total_ns"),
                        n("writes_done"),
                    ];
                }
            }
            2 => ms.reset_stats(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_read_and_set_the_nvmm_method() {
        let cfg = Config::default();
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        let mut cp = ControlPage::new(&cfg).unwrap();
        assert_eq!(cp.load(Some(&mut ms), 0, 8), Some(MAGIC));
        assert_eq!(cp.load(Some(&mut ms), 0, 4), Some(MAGIC & 0xffff_ffff));
        assert_eq!(cp.load(Some(&mut ms), 0x38, 8), Some(0xC000_0000));
        assert!(cp.store(Some(&mut ms), 0x08, 8, 0));
        assert_eq!(cp.load(Some(&mut ms), 0x08, 8), Some(0));
        assert!(cp.store(Some(&mut ms), 0x28, 8, 2000));
        assert_eq!(cp.load(Some(&mut ms), 0x28, 8), Some(2000));
        assert!(cp.store(Some(&mut ms), 0x08, 8, 7), "no method 7: ignored");
        assert_eq!(cp.load(Some(&mut ms), 0x08, 8), Some(0));
        assert!(cp.store(Some(&mut ms), 0x00, 8, 1), "MAGIC is read-only");
        assert_eq!(cp.load(Some(&mut ms), 0, 8), Some(MAGIC));
        assert!(cp.store(Some(&mut ms), 0x38, 8, 1), "a boundary below DRAM");
        assert_eq!(cp.load(Some(&mut ms), 0x38, 8), Some(0xC000_0000));
        assert_eq!(
            cp.load(Some(&mut ms), 0x48, 8),
            Some(64),
            "freedom-u500's lines"
        );
        assert!(
            cp.store(Some(&mut ms), 0x48, 8, 32),
            "LINE_BYTES is read-only"
        );
        assert_eq!(cp.load(Some(&mut ms), 0x48, 8), Some(64));
        let zc706 = Config::load(Some("zc706"), &[]).unwrap();
        let mut zcp = ControlPage::new(&zc706).unwrap();
        assert_eq!(zcp.load(None, 0x48, 8), Some(32));
        assert_eq!(cp.load(Some(&mut ms), 0x1000, 8), None);
        assert!(!cp.store(Some(&mut ms), 0x1000, 8, 0));
    }

    #[test]
    fn the_boundary_moves_nvmm_timing_and_statistics() {
        let cfg = Config::default(); // DRAM 0x8000_0000.., NVMM 0xC000_0000..
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        let mut cp = ControlPage::new(&cfg).unwrap();
        let pa = 0xB000_0000u64; // DRAM until the boundary moves below it
        let dram_read = ms.data_access(0, pa, false, 0);
        assert!(cp.store(Some(&mut ms), 0x38, 8, 0xA000_0000));
        assert_eq!(cp.load(Some(&mut ms), 0x38, 8), Some(0xA000_0000));
        let t = 1_000_000;
        let nvmm_read = ms.data_access(0, pa + 0x10_0000, false, t);
        assert!(
            nvmm_read > dram_read + 40,
            "{dram_read} -> {nvmm_read} cycles: NVMM's tRCD (1000 ns = 50 cycles)"
        );
        ms.finish(10 * t);
        assert!(cp.store(Some(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(Some(&mut ms), 0x100, 8), Some(1), "an NVMM read");
        assert_eq!(cp.load(Some(&mut ms), 0x140, 8), Some(1), "a DRAM read");
    }

    #[test]
    fn snapshot_and_reset_the_counters() {
        let cfg = Config::default();
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        let mut cp = ControlPage::new(&cfg).unwrap();
        let nvmm = 0xC000_0000u64;
        let mut now = 0;
        for k in 0..16 {
            now += ms.data_access(0, nvmm + k * 4096, false, now) + 10;
        }
        ms.finish(now);
        assert!(cp.store(Some(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(Some(&mut ms), 0x100, 8), Some(16), "NVMM reads");
        assert!(cp.load(Some(&mut ms), 0x110, 8).unwrap() > 0, "ACTs");
        assert!(cp.store(Some(&mut ms), 0x40, 8, 2));
        assert!(cp.store(Some(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(Some(&mut ms), 0x100, 8), Some(0), "reset");
    }
}
