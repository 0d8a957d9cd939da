//! Semantic checks: what the schema alone cannot say.

use toml::Value;

use crate::range::{range_of, PHYS_ADDR_LIMIT};
use crate::schema::{flatten, hex, order_key};
use crate::{
    CacheLevel, Config, ConfigError, ControllerConfig, MachineConfig, Problem, RegionKind, Warning,
};

/// DDR3's maximum tRAS (9 × tREFI), seed 000 Table 1.
pub const DDR3_TRAS_MAX_NS: f64 = 70_200.0;

/// The most harts a machine may have: the CLINT's register map (SiFive's,
/// as QEMU's `virt` board and the device tree describe it) has `mtimecmp`
/// registers for harts 0..4094 only.
pub const MAX_HARTS: u32 = 4095;

/// The largest cache level: 1 GiB, above every cache built (the largest
/// last-level caches are around 1 GiB per socket).
pub const MAX_CACHE_BYTES: u64 = 1 << 30;

/// The most cache lines the memory system models in all levels together
/// (`harts x (L1I + L1D) + L2`): each costs about 17 bytes of host memory
/// (tag, state, LRU stamp), so this bound is about 1.1 GB.
pub const MAX_CACHE_LINES: u64 = 1 << 26;

/// The most entries a TLB (or the walker's PTE cache) may have: far above
/// every TLB built (the largest L2 TLBs have a few thousand entries).
pub const MAX_TLB_ENTRIES: u32 = 1 << 16;

/// Regions must be page aligned (the MMU, device tree and user-mode kernel
/// all work in 4 KiB pages).
const PAGE: u64 = 4096;

#[derive(Default)]
struct Checker {
    problems: Vec<Problem>,
    warnings: Vec<Warning>,
}

impl Checker {
    fn error(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            key: key.into(),
            message: message.into(),
        });
    }

    fn warn(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Warning {
            key: key.into(),
            message: message.into(),
        });
    }

    fn power_of_two(&mut self, key: &str, v: u64) {
        if !v.is_power_of_two() {
            self.error(key, format!("must be a power of two, got {v}"));
        }
    }

    fn tras(&mut self, key: &str, v: f64) {
        if v > DDR3_TRAS_MAX_NS {
            self.warn(
                key,
                format!(
                    "{v} ns is above DDR3's tRAS maximum of {DDR3_TRAS_MAX_NS} ns (9 x tREFI): DDR3 hardware such as the FPGA emulators cannot hold a row open that long, so results cannot be checked against one; the emulator runs it anyway"
                ),
            );
        }
    }
}

impl Config {
    /// Checks what the schema cannot: sizes and latencies, overlapping
    /// regions, references to controllers, the heap's placement, address
    /// mappings against geometry.
    ///
    /// Returns the warnings (legal but suspicious settings, e.g. tRAS above
    /// DDR3's 70200 ns maximum) or [`ConfigError::Invalid`] listing every
    /// problem found.
    pub fn validate(&self) -> Result<Vec<Warning>, ConfigError> {
        let mut c = Checker::default();
        self.check_machine(&mut c);
        for (name, level) in [
            ("l1i", &self.cache.l1i),
            ("l1d", &self.cache.l1d),
            ("l2", &self.cache.l2),
        ] {
            check_cache(&mut c, &format!("cache.{name}"), level);
        }
        self.check_cache_total(&mut c);
        self.check_tlb(&mut c);
        let beat = self.bus.beat_bytes;
        if !beat.is_power_of_two() || beat > 256 {
            c.error(
                "bus.beat_bytes",
                format!("is {beat}; it must be a power of two from 1 to 256"),
            );
        }
        self.check_regions(&mut c);
        for (name, ctrl) in &self.memory.controllers {
            self.check_controller(&mut c, name, ctrl);
        }
        self.check_user(&mut c);
        self.check_ranges(&mut c);
        if c.problems.is_empty() {
            Ok(c.warnings)
        } else {
            Err(ConfigError::Invalid {
                problems: c.problems,
            })
        }
    }

    fn check_machine(&self, c: &mut Checker) {
        let m = &self.machine;
        if u64::from(m.cores) * u64::from(m.threads_per_core) != u64::from(m.harts) {
            c.error(
                "machine.harts",
                format!(
                    "{} harts, but machine.cores x machine.threads_per_core is {} x {}",
                    m.harts, m.cores, m.threads_per_core
                ),
            );
        }
        match self.machine.extensions() {
            Err(e) => c.error("machine.isa", e.to_string()),
            Ok(isa)
                if isa.has(rvnvmm_isa::Ext::Zic64b)
                    && !self.cbo_blocks_fit_zic64b(isa)
                    && self.machine.isa != MachineConfig::default().isa =>
            {
                c.error(
                    "machine.isa",
                    format!(
                        "names zic64b (64-byte cache blocks), but the block of zicbom and zicbop is the L1D line, cache.l1d.line_bytes = {}; drop zic64b, or zicbom and zicbop",
                        self.cache.l1d.line_bytes
                    ),
                );
            }
            Ok(_) => {}
        }
    }

    /// TLB geometry: the L1s exist, sets are a power of two.
    fn check_tlb(&self, c: &mut Checker) {
        let t = &self.tlb;
        for (name, level, required) in [
            ("itlb", &t.itlb, true),
            ("dtlb", &t.dtlb, true),
            ("l2", &t.l2, false),
        ] {
            let key = format!("tlb.{name}");
            if level.entries == 0 && !required {
                continue;
            }
            if level.ways > 0
                && level.entries > 0
                && (!level.entries.is_multiple_of(level.ways) || !level.sets().is_power_of_two())
            {
                c.error(
                    format!("{key}.entries"),
                    format!(
                        "{} entries is not a power-of-two number of sets of {} ways",
                        level.entries, level.ways
                    ),
                );
            }
        }
    }

    /// The cache lines of all levels together, within [`MAX_CACHE_LINES`].
    fn check_cache_total(&self, c: &mut Checker) {
        let levels = [&self.cache.l1i, &self.cache.l1d, &self.cache.l2];
        if self.machine.harts > MAX_HARTS || levels.iter().any(|l| l.size_bytes > MAX_CACHE_BYTES) {
            return; // already reported, more precisely
        }
        let lines = |l: &CacheLevel| {
            if l.enabled && l.line_bytes > 0 {
                u128::from(l.size_bytes / u64::from(l.line_bytes))
            } else {
                0
            }
        };
        let total = u128::from(self.machine.harts)
            * (lines(&self.cache.l1i) + lines(&self.cache.l1d))
            + lines(&self.cache.l2);
        if total > u128::from(MAX_CACHE_LINES) {
            c.error(
                "cache",
                format!(
                    "{} harts x (L1I + L1D) + L2 make {total} cache lines, more than the {MAX_CACHE_LINES} the memory system models (about 17 bytes of host memory each); shrink a cache or use fewer harts",
                    self.machine.harts
                ),
            );
        }
    }

    fn check_regions(&self, c: &mut Checker) {
        let mem = &self.memory;
        if mem.regions.is_empty() {
            c.error(
                "memory",
                "defines no region; add e.g. [memory.dram] with base, size, kind and controller",
            );
        }
        for (name, r) in &mem.regions {
            let key = format!("memory.{name}");
            if r.size == 0 {
                c.error(format!("{key}.size"), "must be positive (bytes)");
            }
            if r.base
                .checked_add(r.size)
                .is_none_or(|end| end > PHYS_ADDR_LIMIT)
            {
                c.error(
                    format!("{key}.size"),
                    format!(
                        "base {} + size {} passes {} (2^56), the end of RISC-V's 56-bit physical address space",
                        hex(r.base),
                        hex(r.size),
                        hex(PHYS_ADDR_LIMIT)
                    ),
                );
            }
            if !r.base.is_multiple_of(PAGE) || !r.size.is_multiple_of(PAGE) {
                c.error(
                    &key,
                    format!(
                        "base {} and size {} must be multiples of 4 KiB",
                        hex(r.base),
                        hex(r.size)
                    ),
                );
            }
            if !mem.controllers.contains_key(&r.controller) {
                let known: Vec<&str> = mem.controllers.keys().map(String::as_str).collect();
                c.error(
                    format!("{key}.controller"),
                    format!(
                        "names controller '{}', which is not defined; define [memory.controllers.{}] or use one of: {}",
                        r.controller,
                        r.controller,
                        if known.is_empty() { "(none defined)".to_string() } else { known.join(", ") }
                    ),
                );
            }
            if let Some(n) = &r.nvmm {
                c.tras(&format!("{key}.tras_ns"), n.tras_ns);
                for (k, message) in n.optane.problems() {
                    c.error(format!("{key}.optane.{k}"), message);
                }
                if let Some(ctrl) = mem.controllers.get(&r.controller) {
                    for (k, nv, dv) in [
                        ("trcd_ns", n.trcd_ns, ctrl.trcd_ns),
                        ("trp_ns", n.trp_ns, ctrl.trp_ns),
                        ("tras_ns", n.tras_ns, ctrl.tras_ns),
                    ] {
                        if nv < dv {
                            c.warn(
                                format!("{key}.{k}"),
                                format!(
                                    "{nv} ns is below the DRAM value {dv} of controller '{}': this NVMM would be faster than DRAM",
                                    r.controller
                                ),
                            );
                        }
                    }
                }
            }
        }
        // The full system loads the firmware and kernel into boot-time RAM,
        // so some DRAM must stay outside the hot-pluggable memory.
        let soft: Vec<&String> = mem
            .regions
            .iter()
            .filter(|(_, r)| r.soft_reserved)
            .map(|(n, _)| n)
            .collect();
        let boot_ram = mem
            .regions
            .values()
            .any(|r| r.kind() == RegionKind::Dram && !r.soft_reserved);
        if let (Some(first), false) = (soft.first(), boot_ram) {
            c.error(
                format!("memory.{first}.soft_reserved"),
                "leaves no DRAM region for the kernel to boot in: every DRAM region is soft reserved; keep one (the fast tier) as ordinary RAM",
            );
        }
        let mut sorted: Vec<(&String, &crate::Region)> = mem.regions.iter().collect();
        sorted.sort_by_key(|(_, r)| r.base);
        for (i, (an, a)) in sorted.iter().enumerate() {
            for (bn, b) in &sorted[i + 1..] {
                if b.base < a.end() && a.base < b.end() {
                    c.error(
                        format!("memory.{bn}"),
                        format!(
                            "[{}, {}) overlaps memory.{an} [{}, {}); move one base or shrink a size",
                            hex(b.base),
                            hex(b.end()),
                            hex(a.base),
                            hex(a.end())
                        ),
                    );
                }
            }
        }
    }

    fn check_controller(&self, c: &mut Checker, name: &str, ctrl: &ControllerConfig) {
        let key = format!("memory.controllers.{name}");
        let k = |s: &str| format!("{key}.{s}");
        c.tras(&k("tras_ns"), ctrl.tras_ns);
        if let Some(r) = &ctrl.refresh {
            if r.trfc_ns >= r.trefi_ns {
                c.error(
                    k("refresh.trfc_ns"),
                    format!(
                        "{} ns leaves no time between refreshes (trefi_ns is {}); tRFC must be shorter than tREFI",
                        r.trfc_ns, r.trefi_ns
                    ),
                );
            }
        }
        if let Some(link) = &ctrl.link {
            c.power_of_two(&k("link.lanes"), u64::from(link.lanes));
        }
        if let Some(bin) = &ctrl.speed_bin {
            if crate::speed_bin::speed_bin(bin).is_none() {
                c.error(
                    k("speed_bin"),
                    format!(
                        "\"{bin}\" is not a known speed bin; known: {}",
                        crate::schema::quoted_list(crate::speed_bin::SPEED_BIN_NAMES)
                    ),
                );
            }
        }
        for (l, s, what) in [
            (
                ctrl.tccd_l_ns,
                ctrl.tccd_ns,
                ("tccd_l_ns", "tccd_ns", "tCCD_L", "tCCD_S"),
            ),
            (
                ctrl.trrd_l_ns,
                ctrl.trrd_ns,
                ("trrd_l_ns", "trrd_ns", "tRRD_L", "tRRD_S"),
            ),
        ] {
            if let Some(l) = l.filter(|&l| l < s) {
                c.error(
                    k(what.0),
                    format!(
                        "{l} ns is below {} ({s} ns): {} (same bank group) is never shorter than {} (another group); raise it or lower {}",
                        what.1, what.2, what.3, what.1
                    ),
                );
            }
        }
        if ctrl.bank_groups == 0 || ctrl.bank_groups > ctrl.banks {
            c.error(
                k("bank_groups"),
                format!(
                    "{} bank groups for {} banks: a rank's banks split into 1 … banks groups (DDR4: 4 groups of 4 banks, DDR5: 8 of 4)",
                    ctrl.bank_groups, ctrl.banks
                ),
            );
        }
        for (field, v) in [
            ("ranks", u64::from(ctrl.ranks)),
            ("banks", u64::from(ctrl.banks)),
            ("bank_groups", u64::from(ctrl.bank_groups)),
            ("rows", ctrl.rows),
            ("columns", ctrl.columns),
            ("row_buffer_bytes", ctrl.row_buffer_bytes),
        ] {
            c.power_of_two(&k(field), v);
        }
        if ctrl.columns > 0 && !ctrl.row_buffer_bytes.is_multiple_of(ctrl.columns) {
            c.error(
                k("columns"),
                format!(
                    "row_buffer_bytes ({}) must be a multiple of columns ({}): their ratio is the bus width in bytes",
                    ctrl.row_buffer_bytes, ctrl.columns
                ),
            );
        } else if let Err(e) = ctrl.address_layout() {
            c.error(k("mapping"), e);
        }
        match self.memory.controller_window(name) {
            None => c.warn(&key, "no region uses this controller"),
            Some((base, span)) => {
                if u128::from(span) > ctrl.capacity_bytes() {
                    c.error(
                        &key,
                        format!(
                            "its regions span {} bytes from {}, more than its capacity of {} bytes (ranks × banks × rows × row_buffer_bytes); grow the geometry or shrink the regions",
                            hex(span),
                            hex(base),
                            ctrl.capacity_bytes()
                        ),
                    );
                }
            }
        }
    }

    /// Every numeric key within its range ([`crate::range`]), enabled
    /// cache level or not; a key another check has already refused is not
    /// reported twice.
    fn check_ranges(&self, c: &mut Checker) {
        let Ok(Value::Table(tree)) = Value::try_from(self) else {
            c.error(
                "(top level)",
                "an integer is above 0x7FFF_FFFF_FFFF_FFFF, which no config key takes",
            );
            return;
        };
        let mut leaves = Vec::new();
        flatten("", &tree, &mut leaves);
        // In the order of docs/config.md (`machine.harts` before the
        // `machine.cores` that follows it).
        leaves.sort_by_cached_key(|(k, _)| order_key(k));
        for (key, v) in leaves {
            let Some(range) = range_of(&key) else {
                continue;
            };
            // `machine.cores` follows `machine.harts`: one mistake, one
            // problem.
            let reported = |k: &str| c.problems.iter().any(|p| p.key == k);
            if reported(&key) || key == "machine.cores" && reported("machine.harts") {
                continue;
            }
            if let Some(message) = range.check(&v) {
                c.error(key, message);
            }
        }
    }

    fn check_user(&self, c: &mut Checker) {
        let heap = self.user.heap;
        if self.memory.regions_of_kind(heap).next().is_none() {
            c.error(
                "user.heap",
                format!(
                    "is \"{heap}\", but no region has kind = \"{heap}\"; add one or set user.heap = \"{}\"",
                    match heap {
                        RegionKind::Dram => RegionKind::Nvmm,
                        RegionKind::Nvmm => RegionKind::Dram,
                    }
                ),
            );
        }
        let dir = &self.user.pmem_dir;
        if !dir.is_empty() {
            let parts_ok = dir
                .split('/')
                .skip(1)
                .all(|p| !p.is_empty() && p != "." && p != "..");
            if !dir.starts_with('/') || dir == "/" || !parts_ok {
                c.error(
                    "user.pmem_dir",
                    format!("must be an absolute guest path below / without . or .. or empty parts (e.g. \"/mnt/pmem\"), got \"{dir}\""),
                );
            } else if self
                .memory
                .regions_of_kind(RegionKind::Nvmm)
                .next()
                .is_none()
            {
                c.error(
                    "user.pmem_dir",
                    "needs an NVMM region (a region with kind = \"nvmm\") to keep its files in",
                );
            }
        }
        let stack = self.user.stack_size;
        if stack == 0 || !stack.is_multiple_of(PAGE) || stack > crate::MAX_STACK_SIZE {
            c.error(
                "user.stack_size",
                format!(
                    "must be a positive multiple of 4 KiB up to {} (64 GiB), got {}",
                    hex(crate::MAX_STACK_SIZE),
                    hex(stack)
                ),
            );
        }
    }
}

/// The geometry of a cache level, enabled or not (a level switched on by
/// a later `--set` or by a sweep must not find a bad value left there).
fn check_cache(c: &mut Checker, key: &str, l: &CacheLevel) {
    let k = |s: &str| format!("{key}.{s}");
    c.power_of_two(&k("line_bytes"), l.line_bytes.into());
    let way_bytes = u64::from(l.ways) * u64::from(l.line_bytes);
    if way_bytes > 0
        && l.size_bytes > 0
        && (!l.size_bytes.is_multiple_of(way_bytes) || !l.sets().is_power_of_two())
    {
        c.error(
            k("size_bytes"),
            format!(
                "{} bytes is not a power-of-two number of sets of {} ways x {} bytes",
                l.size_bytes, l.ways, l.line_bytes
            ),
        );
    }
}
