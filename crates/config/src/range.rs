//! The range of every numeric key: what [`crate::Config::validate`]
//! accepts and what `docs/config.md` states, from one table.
//!
//! The bounds keep every accepted value clear of the arithmetic behind it:
//! a latency of [`MAX_LATENCY_NS`] is 10^15 ps, and 10^14 cycles of the
//! fastest clock (100 GHz), far inside a `u64` and far below the memory
//! system's time horizon (2^62 ps, about 53 days); a core cost of
//! [`MAX_COST_CYCLES`], with a load-use stall and a taken branch, summed
//! over a block of 64 instructions, stays below 2^21 in the `u32` prefix
//! sums of a decoded block; and at the slowest clock (1 MHz) the horizon is
//! 4.6 × 10^12 cycles away.

use toml::Value;

/// The longest latency (any `*_ns` key) a machine may have: 1000 s, far
/// beyond any device. The memory controllers refuse longer ones set at run
/// time (through the NVMM control page) too.
pub const MAX_LATENCY_NS: f64 = 1e12;

/// The largest cycle cost (`[core]`, cache hit latencies, TLB costs):
/// far above the slowest iterative unit built (dividers of a few hundred
/// cycles).
pub const MAX_COST_CYCLES: u64 = 10_000;

/// The most hardware threads a core may have (the issue calendar keeps a
/// byte mask of threads per cycle; built SMT cores have 2 to 8).
pub const MAX_THREADS_PER_CORE: u32 = 8;

/// The widest issue a core may have (8 slots per cycle: beyond every
/// in-order core built).
pub const MAX_ISSUE_WIDTH: u32 = 8;

/// The slowest core or bus clock, Hz.
pub const MIN_CLOCK_HZ: u64 = 1_000_000;

/// The fastest core or bus clock, Hz (100 GHz).
pub const MAX_CLOCK_HZ: u64 = 100_000_000_000;

/// RISC-V physical addresses have at most 56 bits: every region lies
/// below 2^56.
pub const PHYS_ADDR_LIMIT: u64 = 1 << 56;

/// What a numeric key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Bound {
    /// An integer from `min` to `max`, both included.
    Int { min: u64, max: u64 },
    /// 0 (a default), or an integer from `min` to `max`.
    ZeroOrInt { min: u64, max: u64 },
    /// A finite number from `min` (excluded when `open`) to `max`.
    Float { min: f64, open: bool, max: f64 },
}

/// One key's range: the bound, the unit values are counted in (for
/// messages), and why the bound is where it is (empty: the module's
/// reasoning).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Range {
    pub bound: Bound,
    pub unit: &'static str,
    pub why: &'static str,
    /// Written in hex (addresses and sizes).
    pub hex: bool,
}

const fn int(min: u64, max: u64, unit: &'static str) -> Range {
    Range {
        bound: Bound::Int { min, max },
        unit,
        why: "",
        hex: false,
    }
}

const fn ns(open: bool) -> Range {
    Range {
        bound: Bound::Float {
            min: 0.0,
            open,
            max: MAX_LATENCY_NS,
        },
        unit: "ns",
        why: "",
        hex: false,
    }
}

const COST: Range = int(1, MAX_COST_CYCLES, "cycles");
const EXTRA: Range = int(0, MAX_COST_CYCLES, "cycles");

impl Range {
    const fn why(self, why: &'static str) -> Range {
        Range { why, ..self }
    }

    const fn in_hex(self) -> Range {
        Range { hex: true, ..self }
    }

    fn int(&self, n: u64) -> String {
        if self.hex {
            crate::schema::hex(n)
        } else {
            num(n)
        }
    }

    /// The range as `docs/config.md` states it.
    #[cfg(test)]
    pub(crate) fn doc(&self) -> String {
        match self.bound {
            Bound::Int { min, max } => format!("{} … {}", self.int(min), self.int(max)),
            Bound::ZeroOrInt { min, max } => {
                format!("0, or {} … {}", self.int(min), self.int(max))
            }
            Bound::Float { min, open, max } if open => {
                format!("> {}, at most {}", float(min), float(max))
            }
            Bound::Float { min, max, .. } => format!("{} … {}", float(min), float(max)),
        }
    }

    /// What a value outside the range is told.
    fn message(&self, got: &str) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let range = match self.bound {
            Bound::Int { min, max } => {
                format!("from {} to {}{unit}", self.int(min), self.int(max))
            }
            Bound::ZeroOrInt { min, max } => {
                format!("0 or from {} to {}{unit}", self.int(min), self.int(max))
            }
            Bound::Float {
                min: 0.0,
                open: true,
                max,
            } => format!("a positive number of{unit}, at most {}", float(max)),
            Bound::Float {
                min,
                open: true,
                max,
            } => format!("above {} and at most {}{unit}", float(min), float(max)),
            Bound::Float { min, max, .. } => {
                format!("from {} to {}{unit}", float(min), float(max))
            }
        };
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.why)
        };
        format!("must be {range}, got {got}{why}")
    }

    /// The problem with `v`, if it is outside the range.
    pub(crate) fn check(&self, v: &Value) -> Option<String> {
        let ok = match (self.bound, v) {
            (Bound::Int { min, max }, Value::Integer(i)) => {
                u64::try_from(*i).is_ok_and(|i| (min..=max).contains(&i))
            }
            (Bound::ZeroOrInt { min, max }, Value::Integer(i)) => {
                u64::try_from(*i).is_ok_and(|i| i == 0 || (min..=max).contains(&i))
            }
            (Bound::Float { min, open, max }, Value::Float(f)) => {
                f.is_finite() && (*f > min || (!open && *f == min)) && *f <= max
            }
            (Bound::Float { .. }, Value::Integer(i)) => {
                return self.check(&Value::Float(*i as f64));
            }
            _ => false,
        };
        (!ok).then(|| {
            let got = match v {
                Value::Integer(i) => match u64::try_from(*i) {
                    Ok(u) if self.hex => crate::schema::hex(u),
                    _ => i.to_string(),
                },
                Value::Float(f) => float(*f),
                other => other.to_string(),
            };
            self.message(&got)
        })
    }
}

/// An integer as the docs write it: `2^30` for powers of two from 2^20
/// up, else `_` between groups of three digits from 10_000 up.
fn num(n: u64) -> String {
    if n >= 1 << 20 && n.is_power_of_two() {
        return format!("2^{}", n.trailing_zeros());
    }
    let digits = n.to_string();
    if n < 10_000 {
        return digits;
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// A float as the docs write it: `1e12` from 10^6 up, `1e-12` below
/// 10^-3.
fn float(f: f64) -> String {
    if f.is_finite() && f != 0.0 && (f.abs() >= 1e6 || f.abs() < 1e-3) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// The range of the numeric key `key` (a concrete dotted key, e.g.
/// `memory.controllers.ddr3.tcl_ns`), or `None` for a key that is not
/// numeric.
pub(crate) fn range_of(key: &str) -> Option<Range> {
    let parts: Vec<&str> = key.split('.').collect();
    let rel = match parts.as_slice() {
        ["memory", "controllers", _, rest @ ..] => return controller(&rest.join(".")),
        ["memory", _, rest @ ..] => return region(&rest.join(".")),
        ["cache", "l1i" | "l1d" | "l2", last] => return cache(last),
        ["tlb", "itlb" | "dtlb", last] => return tlb_level(last, 1),
        ["tlb", "l2", last] => return tlb_level(last, 0),
        _ => key,
    };
    Some(match rel {
        "machine.harts" => int(1, u64::from(crate::MAX_HARTS), "harts")
            .why("the CLINT has timer registers for harts 0 … 4094 only"),
        "machine.cores" => int(1, u64::from(crate::MAX_HARTS), "cores"),
        "machine.threads_per_core" => int(1, u64::from(MAX_THREADS_PER_CORE), "threads"),
        "machine.clock_hz" => int(MIN_CLOCK_HZ, MAX_CLOCK_HZ, "Hz"),
        "core.alu" | "core.mul" | "core.clmul" | "core.div" | "core.fpu" | "core.fdiv" => COST,
        "core.load_use" | "core.branch_taken" => EXTRA,
        "core.issue_width" => int(1, u64::from(MAX_ISSUE_WIDTH), "instructions per cycle"),
        "tlb.l2_hit_latency_cycles" | "tlb.walk_cycles" | "tlb.software_refill_cycles" => EXTRA,
        "tlb.ptw_cache_entries" => int(0, u64::from(crate::MAX_TLB_ENTRIES), "entries"),
        "bus.request_latency_ns" | "bus.response_latency_ns" => ns(false),
        "bus.beat_bytes" => int(1, 256, "bytes"),
        "bus.clock_hz" => Range {
            bound: Bound::ZeroOrInt {
                min: MIN_CLOCK_HZ,
                max: MAX_CLOCK_HZ,
            },
            unit: "Hz",
            why: "0: the core clock",
            hex: false,
        },
        "user.stack_size" => int(4096, crate::MAX_STACK_SIZE, "bytes").in_hex(),
        "user.time_slice_ns" => int(1, MAX_LATENCY_NS as u64, "ns"),
        _ => return None,
    })
}

fn cache(last: &str) -> Option<Range> {
    Some(match last {
        "size_bytes" => int(1, crate::MAX_CACHE_BYTES, "bytes")
            .why("1 GiB is the largest cache level rvnvmm models"),
        "ways" => int(1, 1 << 16, "ways"),
        "line_bytes" => int(4, 4096, "bytes"),
        "hit_latency_cycles" => COST,
        "mshrs" => int(0, 1024, "misses"),
        _ => return None,
    })
}

fn tlb_level(last: &str, min_entries: u64) -> Option<Range> {
    Some(match last {
        "entries" => int(min_entries, u64::from(crate::MAX_TLB_ENTRIES), "entries"),
        "ways" => int(1, u64::from(crate::MAX_TLB_ENTRIES), "ways"),
        _ => return None,
    })
}

fn region(rel: &str) -> Option<Range> {
    Some(match rel {
        "base" => int(0, PHYS_ADDR_LIMIT - 4096, "")
            .why("RISC-V physical addresses have 56 bits")
            .in_hex(),
        "size" => int(4096, PHYS_ADDR_LIMIT, "bytes").in_hex(),
        "node" => int(0, u64::from(crate::MAX_NODE_ID), "")
            .why("Linux's largest NODES_SHIFT (10) numbers nodes below 1024"),
        "trcd_ns" | "trp_ns" | "tras_ns" => ns(true),
        "coarse_read_ns" | "coarse_write_ns" => ns(false),
        "optane.dimms" | "optane.wpq_entries" => int(1, crate::OptaneParams::MAX_COUNT, ""),
        "optane.xpline_bytes" => int(64, crate::OptaneParams::MAX_XPLINE_BYTES, "bytes"),
        "optane.interleave_bytes" | "optane.ait_granule_bytes" => int(64, 1 << 30, "bytes"),
        "optane.xpbuffer_bytes" => int(64, 1 << 32, "bytes"),
        "optane.ait_cache_bytes" => int(64, 1 << 50, "bytes"),
        "optane.ait_miss_ns" | "optane.media_read_ns" => ns(false),
        "optane.buffer_read_ns" | "optane.media_write_ns" => ns(true),
        "optane.media_read_gbps" | "optane.media_write_gbps" => Range {
            bound: Bound::Float {
                min: 1e-12,
                open: false,
                max: 1e6,
            },
            unit: "GB/s",
            why: "",
            hex: false,
        },
        _ => return None,
    })
}

fn controller(rel: &str) -> Option<Range> {
    Some(match rel {
        "clock_mhz" => Range {
            bound: Bound::Float {
                min: 1.0,
                open: false,
                max: 100_000.0,
            },
            unit: "MHz",
            why: "",
            hex: false,
        },
        "tck_ns" => Range {
            bound: Bound::Float {
                min: 0.001,
                open: false,
                max: MAX_LATENCY_NS,
            },
            unit: "ns",
            why: "at least one picosecond, the model's resolution",
            hex: false,
        },
        "tcl_ns" | "tcwl_ns" | "tburst_ns" | "trcd_ns" | "trp_ns" | "tras_ns" | "trtp_ns"
        | "twr_ns" | "tccd_ns" | "tccd_l_ns" | "trrd_ns" | "trrd_l_ns" | "tfaw_ns"
        | "refresh.trefi_ns" | "refresh.trfc_ns" => ns(true),
        "interface_latency_ns" => ns(false),
        "ranks" => int(1, 64, "ranks"),
        "banks" => int(1, 1024, "banks"),
        "bank_groups" => int(1, 64, "bank groups").why("DDR4 has up to 4, DDR5 up to 8"),
        "row_buffer_bytes" => int(1, 1 << 20, "bytes"),
        "rows" => int(1, 1 << 32, "rows"),
        "columns" => int(1, 1 << 20, "columns"),
        "read_queue" | "write_queue" => int(1, 1 << 16, "entries"),
        "refresh.postpone_max" => int(0, 8, "refreshes").why("DDR3 allows at most 8"),
        "link.generation" => int(3, 6, "").why("PCIe 3.0 to 6.0: 8, 16, 32 or 64 GT/s per lane"),
        "link.lanes" => int(1, 16, "lanes").why("CXL links are x1 to x16"),
        "link.port_ns" | "link.retimer_ns" => ns(false),
        "link.retimers" => {
            int(0, 2, "retimers").why("PCIe allows at most two retimers between two ports")
        }
        _ => return None,
    })
}
