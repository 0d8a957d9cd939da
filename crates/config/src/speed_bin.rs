//! JEDEC speed bins as data: `memory.controllers.NAME.speed_bin` fills a
//! controller's timings and organisation from one row of [`SPEED_BINS`].
//!
//! Each row gives what the standard gives: the clock (`tCK(avg)` min of
//! the bin), the timings JEDEC states in clocks or as `max(n nCK, t ns)`
//! as whole clocks (the key then holds `n × tCK` ns, which the controller
//! quantises back to exactly `n` clocks), and the refresh figures of the
//! assumed device density in ns. Sources, by standard:
//!
//! * DDR3: JESD79-3F, "DDR3-1600 Speed Bins" (1600K: 11-11-11, tRAS 35 ns)
//!   and "Timing Parameters by Speed Bin" (tRRD and tFAW of 1 KB pages,
//!   tRTP max(4 nCK, 7.5 ns), tWR 15 ns, CWL 8), tRFC of 4 Gb (260 ns).
//! * DDR4: JESD79-4C, "DDR4-2400/2933/3200 Speed Bins" (2400R 16-16-16,
//!   2933Y 21-21-21, 3200AA 22-22-22; tRAS 32 ns), "Timing Parameters by
//!   Speed Bin" for x8 devices (1 KB page: tRRD_S max(4 nCK, 3.3/2.7/2.5
//!   ns), tRRD_L max(4 nCK, 4.9 ns), tFAW 21 ns, tCCD_L max(5 nCK, 5 ns),
//!   tRTP max(4 nCK, 7.5 ns), tWR 15 ns, the lower CWL of each rate), and
//!   "Refresh parameters by device density" (8 Gb: tRFC1 350 ns, tREFI
//!   7.8 µs).
//! * DDR5: JESD79-5, "DDR5-4800/5600/6400 Speed Bins" (the B bins: tAA =
//!   tRCD = tRP = 16 ns, rounded by JEDEC's algorithm to 40-39-39, 46-45-45
//!   and 52-52-52; tRAS 32 ns), the timing tables for x8 devices (tCCD_S
//!   and tRRD_S 8 nCK, tCCD_L and tRRD_L max(8 nCK, 5 ns), tFAW 32 nCK,
//!   tRTP max(12 nCK, 7.5 ns), tWR 30 ns, CWL = CL - 2, BL16) and the
//!   refresh table (16 Gb: tRFC1 295 ns, tREFI 3.9 µs).
//!
//! The clock counts were cross-checked against Ramulator 2's DDR4 presets
//! and x8 tables (`src/dram/impl/DDR4.cpp`).
//!
//! Organisation: DDR3 and DDR4 are one x64 rank of x8 chips (4 Gb DDR3: 8
//! banks; 8 Gb DDR4: 16 banks in 4 groups), 8 KiB row buffer, 1 K columns
//! of 8 bytes. DDR5 is one 32-bit sub-channel of a DIMM (four 16 Gb x8
//! chips: 32 banks in 8 groups, 4 KiB row buffer, 1 K columns of 4 bytes):
//! one controller per sub-channel, whose BL16 burst moves 64 bytes.

use toml::Value;

/// One speed bin: a standard's clock and timings, and the organisation of
/// the device the refresh figures belong to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedBin {
    /// The bin's name, as `speed_bin` takes it (`"DDR4-3200AA"`).
    pub name: &'static str,
    /// The standard and the tables the figures come from.
    pub source: &'static str,
    /// tCK(avg) minimum of the bin, ns.
    pub tck_ns: f64,
    /// CAS latency (CL), clocks.
    pub cl: u32,
    /// CAS write latency (CWL), clocks.
    pub cwl: u32,
    /// Data burst, clocks (BL8: 4, BL16: 8).
    pub burst: u32,
    /// tRCD, clocks.
    pub rcd: u32,
    /// tRP, clocks.
    pub rp: u32,
    /// tRAS minimum, clocks.
    pub ras: u32,
    /// tRTP, clocks.
    pub rtp: u32,
    /// tWR, clocks.
    pub wr: u32,
    /// tCCD_S (DDR3: tCCD), clocks.
    pub ccd_s: u32,
    /// tCCD_L, clocks.
    pub ccd_l: u32,
    /// tRRD_S (DDR3: tRRD), clocks.
    pub rrd_s: u32,
    /// tRRD_L, clocks.
    pub rrd_l: u32,
    /// tFAW, clocks.
    pub faw: u32,
    /// tRFC (tRFC1 for DDR4 and DDR5), ns.
    pub trfc_ns: f64,
    /// tREFI, ns.
    pub trefi_ns: f64,
    /// Banks per rank.
    pub banks: u32,
    /// Bank groups per rank.
    pub bank_groups: u32,
    /// Rows per bank.
    pub rows: u64,
    /// Columns per row.
    pub columns: u64,
    /// Row buffer of the rank (or sub-channel), bytes.
    pub row_buffer_bytes: u64,
}

const DDR3: &str = "JESD79-3F: DDR3-1600 speed bins; timing parameters by speed bin (x8, 1 KB page); refresh of 4 Gb";
const DDR4: &str =
    "JESD79-4C: DDR4 speed bins; timing parameters by speed bin (x8, 1 KB page); refresh of 8 Gb";
const DDR5: &str = "JESD79-5: DDR5 speed bins; timing parameters (x8); refresh of 16 Gb";

/// DDR3 of 4 Gb x8 chips: 8 banks, one group.
const DDR3_ORG: SpeedBin = SpeedBin {
    name: "",
    source: DDR3,
    tck_ns: 0.0,
    cl: 0,
    cwl: 0,
    burst: 4,
    rcd: 0,
    rp: 0,
    ras: 0,
    rtp: 0,
    wr: 0,
    ccd_s: 4,
    ccd_l: 4,
    rrd_s: 0,
    rrd_l: 0,
    faw: 0,
    trfc_ns: 260.0,
    trefi_ns: 7800.0,
    banks: 8,
    bank_groups: 1,
    rows: 65536,
    columns: 1024,
    row_buffer_bytes: 8192,
};

/// DDR4 of 8 Gb x8 chips: 16 banks in 4 groups.
const DDR4_ORG: SpeedBin = SpeedBin {
    source: DDR4,
    trfc_ns: 350.0,
    banks: 16,
    bank_groups: 4,
    ..DDR3_ORG
};

/// A DDR5 sub-channel of 16 Gb x8 chips: 32 banks in 8 groups, BL16.
const DDR5_ORG: SpeedBin = SpeedBin {
    source: DDR5,
    burst: 8,
    ccd_s: 8,
    rrd_s: 8,
    faw: 32,
    trfc_ns: 295.0,
    trefi_ns: 3900.0,
    banks: 32,
    bank_groups: 8,
    columns: 1024,
    row_buffer_bytes: 4096,
    ..DDR3_ORG
};

/// The known bins, by standard and rate.
pub const SPEED_BINS: &[SpeedBin] = &[
    // 11-11-11; tRRD max(4 nCK, 6 ns) = 5; tFAW 30 ns = 24; tRTP 6; tWR 12.
    SpeedBin {
        name: "DDR3-1600K",
        tck_ns: 1.25,
        cl: 11,
        cwl: 8,
        rcd: 11,
        rp: 11,
        ras: 28,
        rtp: 6,
        wr: 12,
        rrd_s: 5,
        rrd_l: 5,
        faw: 24,
        ..DDR3_ORG
    },
    // 16-16-16; tCCD_L 6; tRRD_S 4, tRRD_L 6; tFAW 26; tRTP 9; tWR 18.
    SpeedBin {
        name: "DDR4-2400R",
        tck_ns: 0.833,
        cl: 16,
        cwl: 12,
        rcd: 16,
        rp: 16,
        ras: 39,
        rtp: 9,
        wr: 18,
        ccd_l: 6,
        rrd_s: 4,
        rrd_l: 6,
        faw: 26,
        ..DDR4_ORG
    },
    // 21-21-21; tCCD_L 8; tRRD_S 4, tRRD_L 8; tFAW 31; tRTP 11; tWR 22.
    SpeedBin {
        name: "DDR4-2933Y",
        tck_ns: 0.682,
        cl: 21,
        cwl: 16,
        rcd: 21,
        rp: 21,
        ras: 47,
        rtp: 11,
        wr: 22,
        ccd_l: 8,
        rrd_s: 4,
        rrd_l: 8,
        faw: 31,
        ..DDR4_ORG
    },
    // 22-22-22; tCCD_L 8; tRRD_S 4, tRRD_L 8; tFAW 34; tRTP 12; tWR 24.
    SpeedBin {
        name: "DDR4-3200AA",
        tck_ns: 0.625,
        cl: 22,
        cwl: 16,
        rcd: 22,
        rp: 22,
        ras: 52,
        rtp: 12,
        wr: 24,
        ccd_l: 8,
        rrd_s: 4,
        rrd_l: 8,
        faw: 34,
        ..DDR4_ORG
    },
    // 40-39-39; tCCD_L = tRRD_L 12; tRTP 18; tWR 72; tRAS 77.
    SpeedBin {
        name: "DDR5-4800B",
        tck_ns: 0.416,
        cl: 40,
        cwl: 38,
        rcd: 39,
        rp: 39,
        ras: 77,
        rtp: 18,
        wr: 72,
        ccd_l: 12,
        rrd_l: 12,
        ..DDR5_ORG
    },
    // 46-45-45; tCCD_L = tRRD_L 14; tRTP 21; tWR 84; tRAS 90.
    SpeedBin {
        name: "DDR5-5600B",
        tck_ns: 0.357,
        cl: 46,
        cwl: 44,
        rcd: 45,
        rp: 45,
        ras: 90,
        rtp: 21,
        wr: 84,
        ccd_l: 14,
        rrd_l: 14,
        ..DDR5_ORG
    },
    // 52-52-52; tCCD_L = tRRD_L 16; tRTP 24; tWR 96; tRAS 103.
    SpeedBin {
        name: "DDR5-6400B",
        tck_ns: 0.312,
        cl: 52,
        cwl: 50,
        rcd: 52,
        rp: 52,
        ras: 103,
        rtp: 24,
        wr: 96,
        ccd_l: 16,
        rrd_l: 16,
        ..DDR5_ORG
    },
];

/// The names of [`SPEED_BINS`], in order (what `speed_bin` accepts).
pub const SPEED_BIN_NAMES: &[&str] = &[
    "DDR3-1600K",
    "DDR4-2400R",
    "DDR4-2933Y",
    "DDR4-3200AA",
    "DDR5-4800B",
    "DDR5-5600B",
    "DDR5-6400B",
];

/// The bin named `name`.
pub fn speed_bin(name: &str) -> Option<&'static SpeedBin> {
    SPEED_BINS.iter().find(|b| b.name == name)
}

impl SpeedBin {
    /// `n` clocks in ns, to the picosecond (the model's resolution), so
    /// that the controller quantises it back to exactly `n` clocks.
    fn ns(&self, n: u32) -> f64 {
        (f64::from(n) * self.tck_ns * 1000.0).round() / 1000.0
    }

    /// The controller keys the bin sets (relative to
    /// `memory.controllers.NAME`, `refresh.*` inside its `[…refresh]`
    /// table) with their values, as a config file would give them.
    pub fn entries(&self) -> Vec<(&'static str, Value)> {
        let f = |v: f64| Value::Float(v);
        let i = |v: u64| Value::Integer(v as i64);
        vec![
            ("tck_ns", f(self.tck_ns)),
            ("tcl_ns", f(self.ns(self.cl))),
            ("tcwl_ns", f(self.ns(self.cwl))),
            ("tburst_ns", f(self.ns(self.burst))),
            ("trcd_ns", f(self.ns(self.rcd))),
            ("trp_ns", f(self.ns(self.rp))),
            ("tras_ns", f(self.ns(self.ras))),
            ("trtp_ns", f(self.ns(self.rtp))),
            ("twr_ns", f(self.ns(self.wr))),
            ("tccd_ns", f(self.ns(self.ccd_s))),
            ("tccd_l_ns", f(self.ns(self.ccd_l))),
            ("trrd_ns", f(self.ns(self.rrd_s))),
            ("trrd_l_ns", f(self.ns(self.rrd_l))),
            ("tfaw_ns", f(self.ns(self.faw))),
            ("banks", i(u64::from(self.banks))),
            ("bank_groups", i(u64::from(self.bank_groups))),
            ("rows", i(self.rows)),
            ("columns", i(self.columns)),
            ("row_buffer_bytes", i(self.row_buffer_bytes)),
            ("refresh.trefi_ns", f(self.trefi_ns)),
            ("refresh.trfc_ns", f(self.trfc_ns)),
        ]
    }

    /// Sets the bin's keys of `c` (what loading a file with `speed_bin`
    /// and none of those keys gives); a refresh table `c` lacks is added
    /// with `postpone_max = 0`.
    pub fn apply(&self, c: &mut crate::ControllerConfig) {
        c.speed_bin = Some(self.name.to_string());
        c.tck_ns = self.tck_ns;
        c.tcl_ns = self.ns(self.cl);
        c.tcwl_ns = self.ns(self.cwl);
        c.tburst_ns = self.ns(self.burst);
        c.trcd_ns = self.ns(self.rcd);
        c.trp_ns = self.ns(self.rp);
        c.tras_ns = self.ns(self.ras);
        c.trtp_ns = self.ns(self.rtp);
        c.twr_ns = self.ns(self.wr);
        c.tccd_ns = self.ns(self.ccd_s);
        c.tccd_l_ns = Some(self.ns(self.ccd_l));
        c.trrd_ns = self.ns(self.rrd_s);
        c.trrd_l_ns = Some(self.ns(self.rrd_l));
        c.tfaw_ns = Some(self.ns(self.faw));
        c.banks = self.banks;
        c.bank_groups = self.bank_groups;
        c.rows = self.rows;
        c.columns = self.columns;
        c.row_buffer_bytes = self.row_buffer_bytes;
        let postpone_max = c.refresh.as_ref().map_or(0, |r| r.postpone_max);
        c.refresh = Some(crate::Refresh {
            trefi_ns: self.trefi_ns,
            trfc_ns: self.trfc_ns,
            postpone_max,
        });
    }

    /// Peak data rate of one controller, bytes per ns (GB/s): a burst of
    /// `2 × burst` bus words every `burst` clocks.
    pub fn peak_gbps(&self) -> f64 {
        let bus_bytes = self.row_buffer_bytes as f64 / self.columns as f64;
        2.0 * bus_bytes / self.tck_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_table_in_order() {
        let names: Vec<&str> = SPEED_BINS.iter().map(|b| b.name).collect();
        assert_eq!(names, SPEED_BIN_NAMES);
    }

    #[test]
    fn every_bin_is_consistent() {
        for b in SPEED_BINS {
            assert!(!b.name.is_empty() && !b.source.is_empty());
            assert!(b.ccd_l >= b.ccd_s && b.rrd_l >= b.rrd_s, "{}", b.name);
            assert!(b.banks.is_multiple_of(b.bank_groups), "{}", b.name);
            // 64-byte bursts: BL8 on 8 bytes, BL16 on 4.
            let bus = b.row_buffer_bytes / b.columns;
            assert_eq!(bus * 2 * u64::from(b.burst), 64, "{}", b.name);
        }
    }

    #[test]
    fn named_figures_are_jedec_s() {
        let cl_rcd_rp = |n: &str| {
            let b = speed_bin(n).unwrap();
            (b.cl, b.rcd, b.rp)
        };
        assert_eq!(cl_rcd_rp("DDR3-1600K"), (11, 11, 11));
        assert_eq!(cl_rcd_rp("DDR4-2400R"), (16, 16, 16));
        assert_eq!(cl_rcd_rp("DDR4-2933Y"), (21, 21, 21));
        assert_eq!(cl_rcd_rp("DDR4-3200AA"), (22, 22, 22));
        assert_eq!(cl_rcd_rp("DDR5-4800B"), (40, 39, 39));
        assert_eq!(cl_rcd_rp("DDR5-5600B"), (46, 45, 45));
        assert_eq!(cl_rcd_rp("DDR5-6400B"), (52, 52, 52));
        assert!(speed_bin("DDR4-3200").is_none());
    }
}
