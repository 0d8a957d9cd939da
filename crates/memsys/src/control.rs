//! The memory-mapped control page of the memory system (seed 000 Fig. 6:
//! "NVMM configuration registers"): read and set the NVMM method and
//! latencies at run time, snapshot and reset the bus-monitor counters.
//!
//! The registers are [`REGISTERS`] (64-bit little-endian; narrower accesses
//! read or write the low bytes of the register they fall in), followed by
//! [`COUNTER_NAMES`] per region from [`COUNTERS`]. That table is the one
//! declaration of the layout: `docs/memory-system.md` shows it as generated
//! by [`register_table_markdown`], and libnvmm's `src/internal.h` is tested
//! against it.
//!
//! A latency write takes effect for the next requests; the method and the
//! latencies form one setting, applied as a whole on every write. Stores of
//! values the memory system refuses, and stores to read-only registers, are
//! ignored (read the register back to see what holds).

use rvnvmm_config::{Config, Method, NvmmParams, RegionKind};
use rvnvmm_timing::ControlPort;

/// Bytes of the page.
pub const CONTROL_PAGE_SIZE: u64 = 4096;
/// The `MAGIC` register's value.
pub const MAGIC: u64 = u64::from_le_bytes(*b"NVMMCTL1");

/// Byte offsets of the registers.
pub mod reg {
    /// `MAGIC`.
    pub const MAGIC: u64 = 0x000;
    /// `METHOD`.
    pub const METHOD: u64 = 0x008;
    /// `TRCD_NS`.
    pub const TRCD_NS: u64 = 0x010;
    /// `TRP_NS`.
    pub const TRP_NS: u64 = 0x018;
    /// `TRAS_NS`.
    pub const TRAS_NS: u64 = 0x020;
    /// `COARSE_READ_NS`.
    pub const COARSE_READ_NS: u64 = 0x028;
    /// `COARSE_WRITE_NS`.
    pub const COARSE_WRITE_NS: u64 = 0x030;
    /// `BOUNDARY`.
    pub const BOUNDARY: u64 = 0x038;
    /// `COMMAND`.
    pub const COMMAND: u64 = 0x040;
    /// `LINE_BYTES`.
    pub const LINE_BYTES: u64 = 0x048;
}

/// Start of the counter blocks: region `r`'s block is at
/// `COUNTERS + COUNTER_STRIDE * r` (0 = the NVMM region, then the DRAM
/// regions by name).
pub const COUNTERS: u64 = 0x100;
/// Bytes from one region's counter block to the next.
pub const COUNTER_STRIDE: u64 = 0x40;
/// The counters of a block, in register order: the statistics keys of the
/// region they copy (`docs/stats.md`).
pub const COUNTER_NAMES: [&str; 8] = [
    "reads",
    "writes",
    "acts",
    "row_hits",
    "bank_switches",
    "read_latency_total_ns",
    "write_latency_total_ns",
    "writes_done",
];

/// `METHOD` values.
pub const METHOD_CODES: [(u64, Method); 4] = [
    (0, Method::Coarse),
    (1, Method::Fine),
    (2, Method::Proposed),
    (3, Method::Optane),
];

/// `COMMAND` values: copy the counters into the page.
pub const COMMAND_SNAPSHOT: u64 = 1;
/// `COMMAND` values: reset the memory system's statistics.
pub const COMMAND_RESET: u64 = 2;

/// Who may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Loads only; stores are ignored.
    ReadOnly,
    /// Loads and stores.
    ReadWrite,
    /// Stores only; loads read 0.
    WriteOnly,
}

impl Access {
    /// `RO`, `RW` or `WO`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "RO",
            Access::ReadWrite => "RW",
            Access::WriteOnly => "WO",
        }
    }
}

/// One register of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// Byte offset (one of [`reg`]).
    pub offset: u64,
    /// Name in the docs.
    pub name: &'static str,
    /// Name of its offset in libnvmm's `src/internal.h`.
    pub c_name: &'static str,
    /// Loads, stores or both.
    pub access: Access,
    /// What it holds.
    pub meaning: &'static str,
}

/// Every register, in offset order.
pub const REGISTERS: [Register; 10] = [
    Register {
        offset: reg::MAGIC,
        name: "MAGIC",
        c_name: "CTL_MAGIC",
        access: Access::ReadOnly,
        meaning: "`0x314C_5443_4D4D_564E` (\"NVMMCTL1\")",
    },
    Register {
        offset: reg::METHOD,
        name: "METHOD",
        c_name: "CTL_METHOD",
        access: Access::ReadWrite,
        meaning: "0 coarse, 1 fine, 2 proposed, 3 optane",
    },
    Register {
        offset: reg::TRCD_NS,
        name: "TRCD_NS",
        c_name: "CTL_TRCD",
        access: Access::ReadWrite,
        meaning: "NVMM read latency (fine/proposed)",
    },
    Register {
        offset: reg::TRP_NS,
        name: "TRP_NS",
        c_name: "CTL_TRP",
        access: Access::ReadWrite,
        meaning: "NVMM write latency (fine/proposed)",
    },
    Register {
        offset: reg::TRAS_NS,
        name: "TRAS_NS",
        c_name: "CTL_TRAS",
        access: Access::ReadWrite,
        meaning: "stretched tRAS (proposed)",
    },
    Register {
        offset: reg::COARSE_READ_NS,
        name: "COARSE_READ_NS",
        c_name: "CTL_COARSE_READ",
        access: Access::ReadWrite,
        meaning: "read delay (coarse)",
    },
    Register {
        offset: reg::COARSE_WRITE_NS,
        name: "COARSE_WRITE_NS",
        c_name: "CTL_COARSE_WRITE",
        access: Access::ReadWrite,
        meaning: "write delay (coarse)",
    },
    Register {
        offset: reg::BOUNDARY,
        name: "BOUNDARY",
        c_name: "CTL_BOUNDARY",
        access: Access::ReadWrite,
        meaning: "physical address where NVMM timing begins: moves the split between the NVMM region and the DRAM region below it on the same controller (4 KiB aligned, each keeps a page)",
    },
    Register {
        offset: reg::COMMAND,
        name: "COMMAND",
        c_name: "CTL_COMMAND",
        access: Access::WriteOnly,
        meaning: "1: snapshot the counters; 2: reset them",
    },
    Register {
        offset: reg::LINE_BYTES,
        name: "LINE_BYTES",
        c_name: "CTL_LINE_BYTES",
        access: Access::ReadOnly,
        meaning: "the L1 data cache's line size: the step of a range flush",
    },
];

/// The register table as Markdown, as `docs/memory-system.md` shows it.
pub fn register_table_markdown() -> String {
    let mut out = String::from("| offset | name | access | meaning |\n|---|---|---|---|\n");
    for r in &REGISTERS {
        out.push_str(&format!(
            "| {:#05x} | `{}` | {} | {} |\n",
            r.offset,
            r.name,
            r.access.as_str(),
            r.meaning
        ));
    }
    out.push_str(&format!(
        "| {COUNTERS:#05x} + {COUNTER_STRIDE:#x}·r | counters of region r (0 = the NVMM region, then the DRAM regions) | RO | {} |\n",
        COUNTER_NAMES.join(", ")
    ));
    out
}

/// The control page's own state: the NVMM setting it last applied and the
/// counter snapshot.
#[derive(Clone, Debug)]
pub struct ControlPage {
    region: String,
    params: NvmmParams,
    boundary: u64,
    line_bytes: u64,
    regions: Vec<String>,
    snapshot: Vec<[u64; COUNTER_NAMES.len()]>,
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
            snapshot: vec![[0; COUNTER_NAMES.len()]; regions.len()],
            regions,
        })
    }

    /// The 64-bit register at byte offset `offset` (a multiple of 8).
    fn register(&self, offset: u64) -> u64 {
        let p = &self.params;
        let counters = COUNTERS..COUNTERS + COUNTER_STRIDE * self.regions.len() as u64;
        match offset {
            reg::MAGIC => MAGIC,
            reg::METHOD => METHOD_CODES
                .iter()
                .find(|(_, m)| *m == p.method)
                .map_or(u64::MAX, |(code, _)| *code),
            reg::TRCD_NS => p.trcd_ns.round() as u64,
            reg::TRP_NS => p.trp_ns.round() as u64,
            reg::TRAS_NS => p.tras_ns.round() as u64,
            reg::COARSE_READ_NS => p.coarse_read_ns.round() as u64,
            reg::COARSE_WRITE_NS => p.coarse_write_ns.round() as u64,
            reg::BOUNDARY => self.boundary,
            reg::LINE_BYTES => self.line_bytes,
            o if counters.contains(&o) => {
                let (block, within) = (
                    (o - COUNTERS) / COUNTER_STRIDE,
                    (o - COUNTERS) % COUNTER_STRIDE,
                );
                self.snapshot[block as usize]
                    .get((within / 8) as usize)
                    .copied()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    /// A load of `size` bytes at `offset` into the page.
    pub fn load(
        &mut self,
        _ms: Option<&mut dyn ControlPort>,
        offset: u64,
        size: u64,
    ) -> Option<u64> {
        if offset >= CONTROL_PAGE_SIZE || !offset.is_multiple_of(size) {
            return None;
        }
        let word = self.register(offset & !7);
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
        ms: Option<&mut dyn ControlPort>,
        offset: u64,
        size: u64,
        value: u64,
    ) -> bool {
        if offset >= CONTROL_PAGE_SIZE || !offset.is_multiple_of(size) || !offset.is_multiple_of(8)
        {
            return false;
        }
        let mut p = self.params.clone();
        match offset {
            reg::METHOD => match METHOD_CODES.iter().find(|(code, _)| *code == value) {
                Some((_, m)) => p.method = *m,
                None => return true,
            },
            reg::TRCD_NS => p.trcd_ns = value as f64,
            reg::TRP_NS => p.trp_ns = value as f64,
            reg::TRAS_NS => p.tras_ns = value as f64,
            reg::COARSE_READ_NS => p.coarse_read_ns = value as f64,
            reg::COARSE_WRITE_NS => p.coarse_write_ns = value as f64,
            reg::BOUNDARY => {
                if ms.is_none_or(|ms| ms.set_boundary(&self.region, value).is_ok()) {
                    self.boundary = value;
                }
                return true;
            }
            reg::COMMAND => {
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

    /// Runs a `COMMAND` ([`COMMAND_SNAPSHOT`], [`COMMAND_RESET`]; others
    /// are ignored).
    fn command(&mut self, ms: Option<&mut dyn ControlPort>, value: u64) {
        let Some(ms) = ms else { return };
        match value {
            COMMAND_SNAPSHOT => {
                for (k, name) in self.regions.iter().enumerate() {
                    let values = ms.region_counters(name, &COUNTER_NAMES);
                    for (slot, v) in self.snapshot[k].iter_mut().zip(values) {
                        *slot = v;
                    }
                }
            }
            COMMAND_RESET => ms.reset_stats(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemorySystem;

    fn port(ms: &mut MemorySystem) -> Option<&mut dyn ControlPort> {
        Some(ms)
    }
    use std::collections::BTreeMap;

    /// `#define NAME VALUE` lines of a C header, values as integers
    /// (decimal or hex, with an optional `u`/`ull` suffix).
    fn c_defines(header: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for line in header.lines() {
            let mut words = line.split_whitespace();
            if words.next() != Some("#define") {
                continue;
            }
            let (Some(name), Some(value)) = (words.next(), words.next()) else {
                continue;
            };
            let digits = value.trim_end_matches(['u', 'U', 'l', 'L']);
            let parsed = match digits.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => digits.parse(),
            };
            if let Ok(v) = parsed {
                out.insert(name.to_string(), v);
            }
        }
        out
    }

    #[test]
    fn libnvmm_header_matches_the_register_table() {
        let defines = c_defines(include_str!("../../../sdk/libnvmm/src/internal.h"));
        let mut expected: BTreeMap<String, u64> = REGISTERS
            .iter()
            .map(|r| (r.c_name.to_string(), r.offset))
            .collect();
        for (name, v) in [
            ("CTL_COUNTERS", COUNTERS),
            ("CTL_COUNTER_STRIDE", COUNTER_STRIDE),
            ("CTL_COMMAND_SNAPSHOT", COMMAND_SNAPSHOT),
            ("CTL_COMMAND_RESET", COMMAND_RESET),
            ("CTL_MAGIC_VALUE", MAGIC),
            ("CTL_PAGE", CONTROL_PAGE_SIZE),
        ] {
            expected.insert(name.to_string(), v);
        }
        // The page's physical address is the board's business.
        let header: BTreeMap<String, u64> = defines
            .into_iter()
            .filter(|(k, _)| k.starts_with("CTL_") && k != "CTL_PHYS_DEFAULT")
            .collect();
        assert_eq!(header, expected, "sdk/libnvmm/src/internal.h");
        assert_eq!(COUNTER_STRIDE, 8 * COUNTER_NAMES.len() as u64);
    }

    #[test]
    fn libnvmm_method_numbers_match_the_method_register() {
        let h = include_str!("../../../sdk/libnvmm/include/nvmm.h");
        let decl = h
            .lines()
            .find(|l| l.starts_with("enum nvmm_method"))
            .expect("nvmm.h declares enum nvmm_method");
        let body = decl.split(['{', '}']).nth(1).unwrap_or("");
        let mut header: Vec<(String, u64)> = body
            .split(',')
            .filter_map(|e| {
                let (name, v) = e.split_once('=')?;
                Some((name.trim().to_string(), v.trim().parse().ok()?))
            })
            .collect();
        header.sort();
        let mut ours: Vec<(String, u64)> = METHOD_CODES
            .iter()
            .map(|(code, m)| (format!("NVMM_{}", m.as_str().to_uppercase()), *code))
            .collect();
        ours.sort();
        assert_eq!(header, ours);
    }

    #[test]
    fn the_docs_show_the_register_table() {
        let docs = include_str!("../../../docs/memory-system.md");
        let table = register_table_markdown();
        assert!(
            docs.contains(&table),
            "docs/memory-system.md must contain the register table as generated:\n{table}"
        );
    }

    #[test]
    fn the_method_register_documents_its_codes() {
        let codes: Vec<String> = METHOD_CODES
            .iter()
            .map(|(code, m)| format!("{code} {m}"))
            .collect();
        let method = REGISTERS.iter().find(|r| r.offset == reg::METHOD).unwrap();
        assert_eq!(method.meaning, codes.join(", "));
    }

    #[test]
    fn offsets_are_distinct_aligned_and_below_the_counters() {
        for (i, r) in REGISTERS.iter().enumerate() {
            assert!(r.offset.is_multiple_of(8) && r.offset < COUNTERS, "{r:?}");
            assert!(
                REGISTERS[..i].iter().all(|q| q.offset < r.offset),
                "{r:?} out of order"
            );
        }
    }

    #[test]
    fn registers_read_and_set_the_nvmm_method() {
        let cfg = Config::default();
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        let mut cp = ControlPage::new(&cfg).unwrap();
        assert_eq!(cp.load(port(&mut ms), 0, 8), Some(MAGIC));
        assert_eq!(cp.load(port(&mut ms), 0, 4), Some(MAGIC & 0xffff_ffff));
        assert_eq!(cp.load(port(&mut ms), 0x38, 8), Some(0xC000_0000));
        assert!(cp.store(port(&mut ms), 0x08, 8, 0));
        assert_eq!(cp.load(port(&mut ms), 0x08, 8), Some(0));
        assert!(cp.store(port(&mut ms), 0x28, 8, 2000));
        assert_eq!(cp.load(port(&mut ms), 0x28, 8), Some(2000));
        assert!(cp.store(port(&mut ms), 0x08, 8, 7), "no method 7: ignored");
        assert_eq!(cp.load(port(&mut ms), 0x08, 8), Some(0));
        assert!(cp.store(port(&mut ms), 0x08, 8, 3), "optane");
        assert_eq!(cp.load(port(&mut ms), 0x08, 8), Some(3));
        assert!(cp.store(port(&mut ms), 0x08, 8, 0));
        assert!(cp.store(port(&mut ms), 0x00, 8, 1), "MAGIC is read-only");
        assert_eq!(cp.load(port(&mut ms), 0, 8), Some(MAGIC));
        assert!(cp.store(port(&mut ms), 0x38, 8, 1), "a boundary below DRAM");
        assert_eq!(cp.load(port(&mut ms), 0x38, 8), Some(0xC000_0000));
        assert_eq!(
            cp.load(port(&mut ms), 0x48, 8),
            Some(64),
            "freedom-u500's lines"
        );
        assert!(
            cp.store(port(&mut ms), 0x48, 8, 32),
            "LINE_BYTES is read-only"
        );
        assert_eq!(cp.load(port(&mut ms), 0x48, 8), Some(64));
        let zc706 = Config::load(Some("zc706"), &[]).unwrap();
        let mut zcp = ControlPage::new(&zc706).unwrap();
        assert_eq!(zcp.load(None, 0x48, 8), Some(32));
        assert_eq!(cp.load(port(&mut ms), 0x1000, 8), None);
        assert!(!cp.store(port(&mut ms), 0x1000, 8, 0));
    }

    #[test]
    fn the_boundary_moves_nvmm_timing_and_statistics() {
        let cfg = Config::default(); // DRAM 0x8000_0000.., NVMM 0xC000_0000..
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        let mut cp = ControlPage::new(&cfg).unwrap();
        let pa = 0xB000_0000u64; // DRAM until the boundary moves below it
        let dram_read = ms.data_access(0, pa, false, 0);
        assert!(cp.store(port(&mut ms), 0x38, 8, 0xA000_0000));
        assert_eq!(cp.load(port(&mut ms), 0x38, 8), Some(0xA000_0000));
        let t = 1_000_000;
        let nvmm_read = ms.data_access(0, pa + 0x10_0000, false, t);
        assert!(
            nvmm_read > dram_read + 40,
            "{dram_read} -> {nvmm_read} cycles: NVMM's tRCD (1000 ns = 50 cycles)"
        );
        ms.finish(10 * t);
        assert!(cp.store(port(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(port(&mut ms), 0x100, 8), Some(1), "an NVMM read");
        assert_eq!(cp.load(port(&mut ms), 0x140, 8), Some(1), "a DRAM read");
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
        assert!(cp.store(port(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(port(&mut ms), 0x100, 8), Some(16), "NVMM reads");
        assert!(cp.load(port(&mut ms), 0x110, 8).unwrap() > 0, "ACTs");
        assert!(cp.store(port(&mut ms), 0x40, 8, 2));
        assert!(cp.store(port(&mut ms), 0x40, 8, 1));
        assert_eq!(cp.load(port(&mut ms), 0x100, 8), Some(0), "reset");
    }
}
