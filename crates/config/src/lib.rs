//! Typed, validated machine configuration for the rvnvmm emulator.
//!
//! A machine is described by a TOML file (see `docs/config.md` for every key).
//! The ready-made machines in the workspace's `configs/` directory are
//! compiled into the binary, so `Config::load(Some("zc706"), &[])` works from
//! any directory; anything containing a `/` or ending in `.toml` is read from
//! disk instead.
//!
//! ```
//! use rvnvmm_config::{Config, Method};
//!
//! // The default machine (freedom-u500) with two `--set` overrides.
//! let cfg = Config::load(
//!     None,
//!     &["memory.nvmm.method=fine".into(), "memory.nvmm.trcd_ns=500".into()],
//! )
//! .unwrap();
//! let warnings = cfg.validate().unwrap();
//! assert!(warnings.is_empty());
//! let nvmm = cfg.memory.regions["nvmm"].nvmm.as_ref().unwrap();
//! assert_eq!(nvmm.method, Method::Fine);
//! assert_eq!(nvmm.trcd_ns, 500.0);
//! ```
//!
//! Loading never accepts a key it does not know: an unknown key, in a file or
//! in `--set`, is an error naming the nearest valid key. Semantic checks
//! (overlapping regions, zero latencies, ...) live in [`Config::validate`],
//! which callers run after loading.
//!
//! Units: times are `f64` nanoseconds (`*_ns`), core costs are guest core
//! cycles (`*_cycles` or the `[core]` class costs), sizes and addresses are
//! bytes.

#![warn(missing_docs)]

mod error;
pub mod files;
mod load;
mod mapping;
mod range;
mod schema;
pub mod speed_bin;
mod validate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use error::{ConfigError, Origin, Problem, Warning};
pub use mapping::{AddressField, AddressMapping, BitField};
pub use range::{MAX_CLOCK_HZ, MAX_COST_CYCLES, MAX_LATENCY_NS, MIN_CLOCK_HZ, PHYS_ADDR_LIMIT};
pub use validate::{
    DDR3_TRAS_MAX_NS, MAX_CACHE_BYTES, MAX_CACHE_LINES, MAX_HARTS, MAX_TLB_ENTRIES,
};

/// Defines a closed set of string values with one source of truth for the
/// spelling used in TOML, in error messages and in the docs.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The spelling used in TOML.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text, )+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $( $text => Ok($name::$variant), )+
                    _ => Err(format!("'{s}' is not one of {}", Self::NAMES.join(", "))),
                }
            }
        }
    };
}

string_enum! {
    /// What a memory region is made of.
    pub enum RegionKind {
        /// Ordinary DRAM, always run at the controller's DRAM timing.
        Dram = "dram",
        /// Emulated non-volatile main memory; latency set by [`NvmmParams`].
        Nvmm = "nvmm",
    }
}

string_enum! {
    /// The page sizes the user-mode kernel maps anonymous memory with
    /// (`user.pages`).
    pub enum PagePolicy {
        /// 4 KiB pages only, as Linux without huge pages.
        Base = "base",
        /// As Linux's transparent huge pages (`enabled=always`): a 2 MiB
        /// megapage at the first touch of a 2 MiB-aligned range wholly
        /// inside an anonymous area; `MADV_NOHUGEPAGE` opts an area out.
        Thp = "thp",
        /// Seed 004's granularity hints: a block size chosen when the area
        /// is created (2 MiB or 64 KiB by its size), blocks virtually and
        /// physically aligned, demoted when a change touches part of one.
        Hint = "hint",
    }
}

string_enum! {
    /// Who refills a TLB after a miss (`tlb.refill`).
    pub enum TlbRefill {
        /// A hardware page-table walker (Rocket's): `tlb.walk_cycles` plus
        /// its PTE reads, non-leaf ones served by its PTE cache.
        Walker = "walker",
        /// A trap to a software handler (the Alpha's PALcode, seed 004 §5):
        /// a fixed `tlb.software_refill_cycles` per miss plus the handler's
        /// PTE loads through the L1D; no PTE cache.
        Software = "software",
    }
}

string_enum! {
    /// The NVMM latency-emulation method of a region (DESIGN §1, seed 000 §3).
    pub enum Method {
        /// TUNA v1: DRAM timing, but every NVMM request is held at the
        /// controller input for `coarse_read_ns` / `coarse_write_ns`.
        Coarse = "coarse",
        /// TUNA v2: tRCD becomes the NVMM read latency, tRP (of a dirty row)
        /// the NVMM write latency.
        Fine = "fine",
        /// Seed 000's method: as `fine`, plus tRAS stretched to `tras_ns`
        /// (tRTP/tWR := max(spec, tRAS remaining)), so locality and bank
        /// parallelism show even behind a slow blocking CPU.
        Proposed = "proposed",
        /// An Optane-like persistent-memory device behind the controller's
        /// read and write-pending queues (issue 15): 256-byte media lines,
        /// an XPBuffer, an AIT cache, media latency and bandwidth; set by
        /// [`OptaneParams`]. It bypasses the DDR3 banks.
        Optane = "optane",
    }
}

string_enum! {
    /// Which part of the machine keeps an NVMM region's contents through a
    /// power failure (`memory.NAME.persistence`, `docs/persistence.md`).
    pub enum Persistence {
        /// None: the region is volatile. A crash leaves its image as it was
        /// when the run started.
        None = "none",
        /// Asynchronous DRAM refresh: the memory controller's write queue is
        /// in the domain, the caches are not. A store persists once its line
        /// is written back (an eviction, or a flush ordered by a fence).
        Adr = "adr",
        /// Extended ADR: the caches are in the domain too, so every store
        /// persists once it is globally visible.
        Eadr = "eadr",
    }
}

string_enum! {
    /// Which precharges of an NVMM row pay the NVMM write latency `trp_ns`
    /// (methods `fine` and `proposed`).
    pub enum TrpOn {
        /// Only the precharge of a row buffer that was written: seed 000's
        /// fine-grain and proposed methods (a clean row writes nothing back
        /// to the cells, so it closes at the DRAM tRP).
        Dirty = "dirty",
        /// Every precharge: seed 001 §3.1's modified MIG, where tRP is one
        /// timing parameter of every PRE whatever the row held.
        Always = "always",
    }
}

string_enum! {
    /// When the `proposed` method's keep-open window of an NVMM row ends.
    pub enum KeepOpen {
        /// Seed 000 §3.3 as written: no PRE before ACT + `tras_ns` (tRTP :=
        /// max(tRTP_spec, tRAS remaining), tWR likewise).
        FromAct = "from-act",
        /// Also no PRE before a column command + (`tras_ns` - `trcd_ns`):
        /// every access restarts the window, the shape of seed 000 Fig. 8.
        RestartAtAccess = "restart-at-access",
    }
}

string_enum! {
    /// How much of the machine is timed.
    pub enum Model {
        /// The in-order core costs of `[core]`, the caches, bus and memory
        /// controllers: guest time follows the modelled hardware.
        Timing = "timing",
        /// One cycle per instruction and no memory-system model: fastest,
        /// for running software whose timing does not matter.
        Functional = "functional",
    }
}

string_enum! {
    /// Cache replacement policy.
    pub enum Replacement {
        /// Least recently used.
        Lru = "lru",
        /// Pseudo-random (what Rocket's L1 caches use).
        Random = "random",
    }
}

string_enum! {
    /// How the harts' scalar misaligned loads and stores perform, as
    /// `riscv_hwprobe` (`MISALIGNED_SCALAR_PERF`, `CPUPERF_0`) tells software.
    pub enum Misaligned {
        /// Done in hardware, one access per line touched, faster than the
        /// byte accesses that would replace them (the model's behaviour).
        Fast = "fast",
        /// Trapped and emulated by firmware, as on Rocket: software (glibc's
        /// `memcpy`) avoids them.
        Emulated = "emulated",
    }
}

string_enum! {
    /// Memory-controller request scheduler.
    pub enum Scheduler {
        /// First-ready, first-come first-served: row-buffer hits first, then
        /// oldest first.
        FrFcfs = "fr-fcfs",
        /// Strictly oldest first.
        Fcfs = "fcfs",
        /// FR-FCFS among reads; a posted write is scheduled only when no
        /// read is waiting (in the gaps between reads, or when the write
        /// queue is full and must make room), as controllers with a write
        /// buffer drained around reads do.
        ReadFirst = "read-first",
    }
}

/// A whole machine: everything `rvnvmm run` / `boot` needs to build it.
///
/// Every section and every field has a default (the `freedom-u500` machine),
/// so a partial TOML file is valid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[machine]`: harts, clock, name.
    pub machine: MachineConfig,
    /// `[core]`: per-instruction-class cycle costs for the in-order timing model.
    pub core: CoreCosts,
    /// `[cache]`: L1I, L1D and the optional shared L2.
    pub cache: Caches,
    /// `[tlb]`: the timing model's TLBs and page-table walker.
    pub tlb: Tlbs,
    /// `[bus]`: the fixed latencies between the caches and the controllers.
    pub bus: BusConfig,
    /// `[memory]`: regions (`[memory.NAME]`) and controllers (`[memory.controllers.NAME]`).
    pub memory: Memory,
    /// `[user]`: user-mode (syscall emulation) process layout.
    pub user: User,
    /// `[cflush]`: user-space cache-flush instructions.
    pub cflush: Cflush,
}

/// `[machine]`: the machine as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MachineConfig {
    /// Name shown in reports and stats.
    pub name: String,
    /// Number of harts (hardware threads, Linux's logical CPUs): always
    /// `cores * threads_per_core`. A file or `--set` may give either this
    /// or `cores` (see `docs/config.md`); the loader keeps the three equal.
    pub harts: u32,
    /// Number of cores. Hart `h` runs on core `h / threads_per_core`.
    pub cores: u32,
    /// Hardware threads (harts) per core: 1 without SMT. The threads of a
    /// core share its issue slots, functional units and L1 caches.
    pub threads_per_core: u32,
    /// Guest core clock in Hz; `cycle` counts at this rate.
    pub clock_hz: u64,
    /// The extensions the harts implement, as an ISA string
    /// (`rv64gc`, `rv64imafdc_zicsr_zifencei_zba_zbb`; see
    /// [`rvnvmm_isa::ExtSet`]). An instruction outside it is illegal. The
    /// default is every extension the emulator implements.
    pub isa: String,
    /// What `riscv_hwprobe` reports for scalar misaligned accesses. The
    /// model does them in hardware either way; `emulated` describes a core
    /// (Rocket) whose firmware emulates them, so software picks the same
    /// aligned routines it picks on that board.
    pub misaligned: Misaligned,
    /// `timing` (the full model) or `functional` (one cycle per
    /// instruction, no memory-system model).
    pub model: Model,
}

impl MachineConfig {
    /// The extension set `isa` names ([`Config::validate`] reports a bad
    /// string; this gives the parser's reason).
    pub fn extensions(&self) -> Result<rvnvmm_isa::ExtSet, rvnvmm_isa::IsaError> {
        self.isa.parse()
    }
}

/// `[core]`: cycles charged per instruction class by the in-order timing
/// model (`rvnvmm_hart::CoreCosts` is this type). A cost of 1 means fully
/// pipelined (one per cycle).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreCosts {
    /// Integer ALU, shifts, compares, LUI/AUIPC, CSR reads.
    pub alu: u32,
    /// Integer multiply (`mul*`).
    pub mul: u32,
    /// Carry-less multiply (`clmul`, `clmulh`, `clmulr`).
    pub clmul: u32,
    /// Integer divide and remainder (`div*`, `rem*`).
    pub div: u32,
    /// FP add/sub/mul/fma/convert/compare (result latency).
    pub fpu: u32,
    /// FP divide and square root.
    pub fdiv: u32,
    /// Extra stall cycles when an instruction uses the result of the load
    /// just before it.
    pub load_use: u32,
    /// Extra cycles for a taken branch or jump.
    pub branch_taken: u32,
    /// Instructions a core may issue per cycle, from all its hardware
    /// threads together (one thread issues at most one per cycle).
    pub issue_width: u32,
    /// Which hardware thread gets a contended issue slot.
    pub smt_policy: SmtPolicy,
}

string_enum! {
    /// How a core with several hardware threads shares a cycle's issue
    /// slots between threads ready in that cycle.
    pub enum SmtPolicy {
        /// In turn: the thread that issued least recently first.
        RoundRobin = "round-robin",
        /// The thread with the fewest instructions in the pipeline first
        /// (Tullsen et al.'s ICOUNT), round-robin on a tie.
        Icount = "icount",
    }
}

/// `[cache]`: the cache hierarchy. L1s are per hart; L2 is shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Caches {
    /// `[cache.l1i]`: per-hart instruction cache.
    pub l1i: CacheLevel,
    /// `[cache.l1d]`: per-hart data cache.
    pub l1d: CacheLevel,
    /// `[cache.l2]`: shared last-level cache (disabled by default).
    pub l2: CacheLevel,
}

/// One cache level. Caches are write-back, write-allocate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheLevel {
    /// Whether this level exists. A disabled level passes requests through.
    pub enabled: bool,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes (power of two).
    pub line_bytes: u32,
    /// Cycles (of the guest core clock) for a hit.
    pub hit_latency_cycles: u32,
    /// Miss-status holding registers: outstanding misses. 0 = blocking
    /// (the requester stalls on every miss).
    pub mshrs: u32,
    /// Replacement policy.
    pub replacement: Replacement,
}

impl CacheLevel {
    /// Number of sets (`size_bytes / (ways * line_bytes)`), 0 if degenerate.
    pub fn sets(&self) -> u64 {
        let way_bytes = u64::from(self.ways) * u64::from(self.line_bytes);
        self.size_bytes.checked_div(way_bytes).unwrap_or(0)
    }
}

/// `[tlb]`: address translation in the timing model (`machine.model =
/// "timing"`): an L1 ITLB and DTLB per core, an optional shared L2 TLB and
/// a page-table walker whose PTE reads go through the L1D, with a cache of
/// non-leaf entries. The L1 TLBs hold every page size (4 KiB, 64 KiB
/// Svnapot, 2 MiB, 1 GiB), the L2 TLB 4 KiB pages only, as Rocket's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tlbs {
    /// false: no TLB is modelled and walks cost nothing (the walks' PTE
    /// reads are only counted).
    pub enabled: bool,
    /// `[tlb.itlb]`: per-core instruction TLB.
    pub itlb: TlbLevel,
    /// `[tlb.dtlb]`: per-core data TLB.
    pub dtlb: TlbLevel,
    /// `[tlb.l2]`: per-core second-level TLB (`entries = 0`: none).
    pub l2: TlbLevel,
    /// Cycles of an L2 TLB hit (an L1 miss that the L2 TLB serves).
    pub l2_hit_latency_cycles: u32,
    /// Entries of the walker's cache of non-leaf PTEs (0: none).
    pub ptw_cache_entries: u32,
    /// Cycles a walk costs besides its PTE reads (the miss's replay and
    /// the walker's start); with `refill = "walker"`.
    pub walk_cycles: u32,
    /// Who refills the TLBs: the hardware walker or a software handler.
    pub refill: TlbRefill,
    /// With `refill = "software"`: the fixed cycles of a miss (the trap,
    /// the handler's instructions, the return), besides its PTE loads.
    pub software_refill_cycles: u32,
}

/// One TLB: `entries` in sets of `ways` (fully associative when equal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlbLevel {
    /// Number of entries (0: the level does not exist; only for `l2`).
    pub entries: u32,
    /// Associativity.
    pub ways: u32,
}

impl TlbLevel {
    /// Number of sets (`entries / ways`), 0 if degenerate.
    pub fn sets(&self) -> u32 {
        self.entries.checked_div(self.ways).unwrap_or(0)
    }
}

impl Default for Tlbs {
    /// Rocket's sizes (freedom-u500): 32-entry fully associative L1 TLBs,
    /// no L2 TLB, an 8-entry PTE cache; on, as the hardware has them.
    fn default() -> Self {
        Tlbs {
            enabled: true,
            itlb: TlbLevel {
                entries: 32,
                ways: 32,
            },
            dtlb: TlbLevel {
                entries: 32,
                ways: 32,
            },
            l2: TlbLevel {
                entries: 0,
                ways: 1,
            },
            l2_hit_latency_cycles: 2,
            ptw_cache_entries: 8,
            walk_cycles: 4,
            refill: TlbRefill::Walker,
            software_refill_cycles: 0,
        }
    }
}

impl Default for TlbLevel {
    fn default() -> Self {
        TlbLevel {
            entries: 32,
            ways: 32,
        }
    }
}

/// `[bus]`: the shared bus between the caches and the memory controllers.
///
/// The fixed latencies stand for the SoC's clock crossing and protocol
/// conversion (TileLink→AXI on the FPGA); they are added to every memory
/// request on top of the controller's own timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BusConfig {
    /// From the last-level cache to the controller input, in ns.
    pub request_latency_ns: f64,
    /// From the controller's data out to the last-level cache, in ns.
    pub response_latency_ns: f64,
    /// Bytes the shared bus between the caches moves per beat: its data
    /// width (Rocket's TileLink system bus: 8). A line transfer occupies
    /// the bus for `line_bytes / beat_bytes` beats.
    pub beat_bytes: u32,
    /// The shared bus's clock in Hz; 0 runs it at the core clock
    /// (`machine.clock_hz`), as Rocket's system bus does.
    pub clock_hz: u64,
}

impl BusConfig {
    /// The bus clock in Hz on machine `machine`.
    pub fn clock_hz(&self, machine: &MachineConfig) -> u64 {
        if self.clock_hz == 0 {
            machine.clock_hz
        } else {
            self.clock_hz
        }
    }
}

/// `[memory]`: physical memory regions and the controllers behind them.
///
/// In TOML, every sub-table of `[memory]` except `controllers` is a region:
/// `[memory.dram]`, `[memory.nvmm]`, ... Controllers are
/// `[memory.controllers.NAME]`. If a file defines no region, the default
/// machine's regions are used; likewise for controllers. A file that defines
/// any region defines all of them (and likewise for controllers).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Memory {
    /// Regions by name (the `NAME` of `[memory.NAME]`).
    pub regions: BTreeMap<String, Region>,
    /// Controllers by name (the `NAME` of `[memory.controllers.NAME]`).
    pub controllers: BTreeMap<String, ControllerConfig>,
}

impl Memory {
    /// The region containing physical address `addr`, with its name.
    pub fn region_at(&self, addr: u64) -> Option<(&str, &Region)> {
        self.regions
            .iter()
            .find(|(_, r)| r.contains(addr))
            .map(|(n, r)| (n.as_str(), r))
    }

    /// The memory nodes: every region with its NUMA node id, in order of
    /// base address. A region without `node` is numbered after the
    /// largest id given so far (from 0), so a machine that gives none has
    /// its regions as nodes 0, 1, ... from the lowest address up.
    pub fn nodes(&self) -> Vec<MemoryNode<'_>> {
        let mut sorted: Vec<(&str, &Region)> =
            self.regions.iter().map(|(n, r)| (n.as_str(), r)).collect();
        sorted.sort_by_key(|(_, r)| r.base);
        let mut next = 0u32;
        sorted
            .into_iter()
            .map(|(name, region)| {
                let id = region.node.unwrap_or(next);
                next = next.max(id.saturating_add(1));
                MemoryNode { name, region, id }
            })
            .collect()
    }

    /// Regions of the given kind, by name.
    pub fn regions_of_kind(&self, kind: RegionKind) -> impl Iterator<Item = (&str, &Region)> {
        self.regions
            .iter()
            .filter(move |(_, r)| r.kind() == kind)
            .map(|(n, r)| (n.as_str(), r))
    }

    /// The physical window `(base, span)` a controller serves: from the
    /// lowest base to the highest end of the regions naming it. The
    /// controller-local address of a physical address `pa` in that window is
    /// `pa - base`; it is split into rank/bank/row/column by the controller's
    /// [`AddressMapping`]. `None` if no region uses the controller.
    pub fn controller_window(&self, controller: &str) -> Option<(u64, u64)> {
        let mut regions = self.regions.values().filter(|r| r.controller == controller);
        let first = regions.next()?;
        let (lo, hi) = regions.fold((first.base, first.end()), |(lo, hi), r| {
            (lo.min(r.base), hi.max(r.end()))
        });
        Some((lo, hi - lo))
    }
}

/// A memory region as a node of the machine: its name, where it is and
/// what it is made of, and its NUMA node id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryNode<'a> {
    /// The region's name (`memory.NAME`).
    pub name: &'a str,
    /// The region.
    pub region: &'a Region,
    /// Its NUMA node id.
    pub id: u32,
}

/// `[memory.NAME]`: one region of physical memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "schema::RawRegion", into = "schema::RawRegion")]
pub struct Region {
    /// Physical base address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Name of the controller (a key of [`Memory::controllers`]) serving it.
    pub controller: String,
    /// NVMM emulation settings: `Some` exactly for `kind = "nvmm"` regions.
    pub nvmm: Option<NvmmParams>,
    /// The NUMA node the region is (`memory.NAME.node`); `None`: numbered
    /// by [`Memory::nodes`].
    pub node: Option<u32>,
    /// `memory.NAME.soft_reserved`: in the full system, memory the kernel
    /// does not take at boot but a driver hot-plugs (a `pmem-region`, as
    /// firmware marks CXL memory EFI_MEMORY_SP), whatever its kind.
    pub soft_reserved: bool,
}

impl Region {
    /// `dram` or `nvmm` (derived from [`Region::nvmm`]).
    pub fn kind(&self) -> RegionKind {
        if self.nvmm.is_some() {
            RegionKind::Nvmm
        } else {
            RegionKind::Dram
        }
    }

    /// One past the last byte (saturating).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }

    /// Whether `addr` lies in the region.
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr - self.base < self.size
    }
}

/// NVMM emulation settings of a `kind = "nvmm"` region (seed 000 §3).
///
/// All latencies are totals, not additions: `trcd_ns` replaces the DRAM tRCD
/// for rows of this region. DRAM regions always use the controller's timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NvmmParams {
    /// Which emulation method runs.
    pub method: Method,
    /// `fine`/`proposed`: ACT→RD/WR, i.e. the NVMM cell read latency, in ns.
    pub trcd_ns: f64,
    /// `fine`/`proposed`: PRE→ACT when the row buffer is dirty, i.e. the
    /// NVMM cell write latency, in ns (a clean row closes at DRAM tRP).
    pub trp_ns: f64,
    /// `proposed`: minimum ACT→PRE, in ns. DDR3 allows at most 70200.
    pub tras_ns: f64,
    /// `coarse`: delay added at the controller input to each read, in ns.
    pub coarse_read_ns: f64,
    /// `coarse`: delay added at the controller input to each write, in ns.
    pub coarse_write_ns: f64,
    /// `fine`/`proposed`: which precharges pay `trp_ns`.
    pub trp_on: TrpOn,
    /// `proposed`: when the keep-open window ends.
    pub keep_open: KeepOpen,
    /// `optane`: the device (`memory.NAME.optane.*`).
    pub optane: OptaneParams,
    /// A host file backing the region, which outlives the run (sparse;
    /// created if missing). Empty: no file, the region starts zeroed.
    pub image: String,
    /// What survives a power failure (`rvnvmm run --crash-at`).
    pub persistence: Persistence,
}

/// `[memory.NAME.optane]`: the Optane-like device of method `optane`.
/// Defaults follow the published characterisations of the first-generation
/// Optane DC persistent memory module; `docs/config.md` gives the source of
/// each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptaneParams {
    /// DIMMs the region is interleaved over, each with its own media,
    /// XPBuffer, AIT cache and write-pending queue (its channel's).
    pub dimms: u64,
    /// Interleaving granule across the DIMMs, bytes (a power of two, at
    /// least one XPLine).
    pub interleave_bytes: u64,
    /// Media access unit (XPLine), bytes: a power of two from 64 to 4096.
    pub xpline_bytes: u64,
    /// XPBuffer (read-modify-write / write-combining buffer) per DIMM, bytes
    /// (a multiple of `xpline_bytes`).
    pub xpbuffer_bytes: u64,
    /// Which XPBuffer line a miss replaces.
    pub replacement: Replacement,
    /// Address space the AIT cache of a DIMM covers, bytes (a multiple of
    /// `ait_granule_bytes`).
    pub ait_cache_bytes: u64,
    /// Translation granule of the AIT, bytes (a power of two, at least one
    /// XPLine).
    pub ait_granule_bytes: u64,
    /// Added to a media access whose translation misses the AIT cache, ns.
    pub ait_miss_ns: f64,
    /// Write-pending-queue entries per DIMM (64-byte writes).
    pub wpq_entries: u64,
    /// A read served from the XPBuffer: controller input to data out, ns.
    pub buffer_read_ns: f64,
    /// Added to a read that misses the XPBuffer: one XPLine read from the
    /// media, ns.
    pub media_read_ns: f64,
    /// One XPLine written to the media, ns.
    pub media_write_ns: f64,
    /// Media read bandwidth per DIMM, GB/s (1e9 bytes): an XPLine read
    /// keeps the media busy `xpline_bytes / media_read_gbps`.
    pub media_read_gbps: f64,
    /// Media write bandwidth per DIMM, GB/s.
    pub media_write_gbps: f64,
    /// Read the next XPLine into the XPBuffer when a read miss follows a
    /// read of the XPLine before it.
    pub prefetch: bool,
}

/// `[memory.controllers.NAME]`: a memory controller: its technology, and
/// for the `ddr3` technology the controller and its DIMM.
///
/// Timings are in ns. The memory system counts DDR timings in DRAM clocks
/// (`tck_ns`) and the NVMM latencies of its regions in controller clocks
/// (`1000 / clock_mhz` ns: 5 ns precision at 200 MHz, as on the FPGAs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControllerConfig {
    /// The memory technology behind the bus, by the name it is registered
    /// under in the memory system (`rvnvmm_memsys::technology`): `ddr3`
    /// (the DDR3 controller below, running the NVMM methods of its `nvmm`
    /// regions) or `fixed-latency` (every read and write takes
    /// `params.read_ns` / `params.write_ns`, nothing else modelled).
    pub technology: String,
    /// `[memory.controllers.NAME.params]`: the settings of a technology
    /// other than `ddr3`, by name; the technology checks them when the
    /// machine is built.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, f64>,
    /// Controller (user-interface) clock in MHz.
    pub clock_mhz: f64,
    /// A JEDEC speed bin (`crate::speed_bin::SPEED_BIN_NAMES`) whose
    /// timings and organisation the loader writes into this table where
    /// the `speed_bin` key is given; keys given beside it in the same file,
    /// or by a later `--set`, override the bin's. Absent = none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_bin: Option<String>,
    /// DRAM clock period.
    pub tck_ns: f64,
    /// CAS (read) latency: RD→first data.
    pub tcl_ns: f64,
    /// CAS write latency: WR→first data.
    pub tcwl_ns: f64,
    /// Data burst duration (BL8 = 4 tCK).
    pub tburst_ns: f64,
    /// ACT→RD/WR.
    pub trcd_ns: f64,
    /// PRE→ACT.
    pub trp_ns: f64,
    /// ACT→PRE minimum.
    pub tras_ns: f64,
    /// RD→PRE.
    pub trtp_ns: f64,
    /// Write recovery: end of write data→PRE.
    pub twr_ns: f64,
    /// Column command to column command (tCCD_S: to another bank group).
    pub tccd_ns: f64,
    /// Column command to column command in the same bank group (tCCD_L);
    /// absent = `tccd_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tccd_l_ns: Option<f64>,
    /// ACT→ACT to a different bank (tRRD_S: in another bank group).
    pub trrd_ns: f64,
    /// ACT→ACT to a different bank of the same bank group (tRRD_L); absent
    /// = `trrd_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trrd_l_ns: Option<f64>,
    /// Four-activate window; absent = not modelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tfaw_ns: Option<f64>,
    /// Ranks per channel (power of two).
    pub ranks: u32,
    /// Banks per rank (power of two).
    pub banks: u32,
    /// Bank groups per rank (power of two, at most `banks`): bank `b` of a
    /// rank is in group `b % bank_groups`. 1 = no groups (DDR3).
    pub bank_groups: u32,
    /// Row-buffer (page) size of a rank in bytes (power of two).
    pub row_buffer_bytes: u64,
    /// Rows per bank (power of two).
    pub rows: u64,
    /// Columns per row (power of two); `row_buffer_bytes / columns` is the
    /// data-bus width in bytes.
    pub columns: u64,
    /// How a controller-local address splits into rank/bank/row/column.
    pub mapping: AddressMapping,
    /// Read-queue depth (requests).
    pub read_queue: u32,
    /// Posted write-queue depth (requests); reads hitting a queued write are
    /// forwarded from it.
    pub write_queue: u32,
    /// Request scheduler.
    pub scheduler: Scheduler,
    /// Fixed latency each way between the bus and the controller's queues
    /// (a clock-domain or interconnect crossing in front of the controller,
    /// e.g. the PS-to-PL AXI path of seed 001's FPGA controller): a request
    /// reaches the queues this long after the bus delivers it, and read data
    /// reaches the bus this long after it leaves the DRAM.
    pub interface_latency_ns: f64,
    /// `[memory.controllers.NAME.refresh]`; absent = refresh not modelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh: Option<Refresh>,
    /// `[memory.controllers.NAME.link]`: a serial link (a CXL Type-3
    /// expander's) between the bus and the controller, of whatever
    /// technology; absent = the controller sits on the bus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
}

impl ControllerConfig {
    /// Bytes the controller can address: ranks × banks × rows × row buffer.
    pub fn capacity_bytes(&self) -> u128 {
        u128::from(self.ranks)
            * u128::from(self.banks)
            * u128::from(self.rows)
            * u128::from(self.row_buffer_bytes)
    }

    /// Data-bus width in bytes (`row_buffer_bytes / columns`), 0 if degenerate.
    pub fn bus_bytes(&self) -> u64 {
        self.row_buffer_bytes.checked_div(self.columns).unwrap_or(0)
    }

    /// tCCD_L: `tccd_l_ns`, or `tccd_ns` when absent.
    pub fn tccd_l(&self) -> f64 {
        self.tccd_l_ns.unwrap_or(self.tccd_ns)
    }

    /// tRRD_L: `trrd_l_ns`, or `trrd_ns` when absent.
    pub fn trrd_l(&self) -> f64 {
        self.trrd_l_ns.unwrap_or(self.trrd_ns)
    }

    /// Controller clock period in ns.
    pub fn period_ns(&self) -> f64 {
        1000.0 / self.clock_mhz
    }

    /// The address layout, most significant field first, with the byte
    /// offset within a bus word as the last field. Fails if the mapping does
    /// not fit the geometry; [`Config::validate`] reports the same problem.
    pub fn address_layout(&self) -> Result<Vec<BitField>, String> {
        self.mapping.layout(self)
    }
}

/// The largest NUMA node id a region may give (`memory.NAME.node`).
pub const MAX_NODE_ID: u32 = 1023;

/// The technology of a controller that gives none: the DDR3 controller.
pub const DDR3_TECHNOLOGY: &str = "ddr3";

string_enum! {
    /// What kind of link a controller sits behind (`link.kind`).
    pub enum LinkKind {
        /// CXL.mem over a PCIe PHY: a Type-3 memory expander.
        Cxl = "cxl",
    }
}

/// `[memory.controllers.NAME.link]`: the link between the host and a
/// memory device, e.g. a CXL Type-3 expander: requests travel to the device
/// and responses back in flits, each direction one at a time, through the
/// ports and retimers on the way (`docs/memory-system.md`). The defaults
/// are a directly attached CXL 2.0 device on a PCIe 5.0 x8 link; the source
/// of each is in `docs/config.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Link {
    /// The link's protocol.
    pub kind: LinkKind,
    /// PCIe generation of the PHY: 3, 4, 5 (8, 16, 32 GT/s per lane, CXL's
    /// 68-byte flits) or 6 (64 GT/s, 256-byte flits).
    pub generation: u32,
    /// Lanes (x1, x2, x4, x8, x16).
    pub lanes: u32,
    /// Latency of the ports each way: the host's root port and the device's
    /// port (its CXL controller) together.
    pub port_ns: f64,
    /// Retimers on the path (PCIe allows at most two).
    pub retimers: u32,
    /// Latency of one retimer each way.
    pub retimer_ns: f64,
}

impl Default for Link {
    /// A directly attached CXL 2.0 Type-3 device on PCIe 5.0 x8 (sources in
    /// `docs/config.md`).
    fn default() -> Self {
        Link {
            kind: LinkKind::Cxl,
            generation: 5,
            lanes: 8,
            port_ns: 40.0,
            retimers: 0,
            retimer_ns: 10.0,
        }
    }
}

/// `[memory.controllers.NAME.refresh]`: periodic refresh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Refresh {
    /// Average interval between REF commands.
    pub trefi_ns: f64,
    /// Duration of one refresh (all banks unavailable).
    pub trfc_ns: f64,
    /// Refreshes the controller may postpone while a row is open whose
    /// precharge is not yet due (DDR3 allows up to 8); it issues them back to
    /// back with the next refresh that finds no row to cut short, or when
    /// this many are owed. 0: every refresh at its due time.
    pub postpone_max: u32,
}

/// `[user]`: the process built by user mode (`rvnvmm run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct User {
    /// Where the process heap (brk and anonymous mmap) gets its physical
    /// frames: from `dram` or from `nvmm` regions.
    pub heap: RegionKind,
    /// Main-thread stack size in bytes: the soft `RLIMIT_STACK` the program
    /// starts with, which sizes its stack area and places the mmap area below
    /// it.
    pub stack_size: u64,
    /// The page sizes anonymous memory is mapped with.
    pub pages: PagePolicy,
    /// Simulated nanoseconds a thread runs before another runnable thread
    /// on the same logical CPU gets its turn.
    pub time_slice_ns: u64,
    /// The guest path of an NVMM-backed directory, as a DAX file system
    /// (e.g. `/mnt/pmem`): its files are frames of the NVMM region's second
    /// quarter, listed in a table there, and map with `MAP_SYNC`. Empty:
    /// none.
    pub pmem_dir: String,
}

/// The largest stack user mode gives a program (`user.stack_size`, or an
/// `RLIMIT_STACK` raised before an exec): a quarter of the Sv39 user half, so
/// the stack and the mmap area below it stay clear of position-independent
/// programs, which load at two thirds of it.
pub const MAX_STACK_SIZE: u64 = 64 << 30;

/// `[cflush]`: the cache-flush instructions (`CFLUSH.D.L1`, Zicbom `cbo.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cflush {
    /// true: U- and S-mode may execute them (seed 000 §4.3's modification);
    /// false: they trap as illegal outside M-mode (stock Rocket).
    pub allow_user: bool,
}

// ---------------------------------------------------------------------------
// Defaults: the freedom-u500 machine. `configs/freedom-u500.toml` holds the
// same values with their sources; a unit test keeps the two identical.
// ---------------------------------------------------------------------------

impl Default for Config {
    fn default() -> Self {
        Config {
            machine: MachineConfig::default(),
            core: CoreCosts::default(),
            cache: Caches::default(),
            tlb: Tlbs::default(),
            bus: BusConfig::default(),
            memory: Memory::default_machine(),
            user: User::default(),
            cflush: Cflush::default(),
        }
    }
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            name: "freedom-u500".into(),
            harts: 4,
            cores: 4,
            threads_per_core: 1,
            clock_hz: 50_000_000,
            isa: rvnvmm_isa::ExtSet::DEFAULT.to_string(),
            misaligned: Misaligned::Emulated,
            model: Model::Timing,
        }
    }
}

impl CoreCosts {
    /// One cycle per instruction, nothing else: the costs of
    /// `machine.model = "functional"`.
    pub const FUNCTIONAL: CoreCosts = CoreCosts {
        alu: 1,
        mul: 1,
        clmul: 1,
        div: 1,
        fpu: 1,
        fdiv: 1,
        load_use: 0,
        branch_taken: 0,
        issue_width: 1,
        smt_policy: SmtPolicy::RoundRobin,
    };
}

impl Config {
    /// The costs the cores run with: `[core]` under `machine.model =
    /// "timing"`, [`CoreCosts::FUNCTIONAL`] under `"functional"`.
    pub fn core_costs(&self) -> CoreCosts {
        match self.machine.model {
            Model::Functional => CoreCosts::FUNCTIONAL,
            Model::Timing => self.core.clone(),
        }
    }

    /// The extensions the harts implement and advertise: `machine.isa`,
    /// less Zic64b where the machine's cache blocks are not all 64 bytes.
    /// `cbo.zero`'s block is always 64 bytes; the block of `cbo.clean`,
    /// `cbo.flush`, `cbo.inval` and the prefetches is the L1D line
    /// (`cache.l1d.line_bytes`), so Zic64b holds with Zicbom or Zicbop only
    /// on 64-byte lines (as Linux checks every block size it is told).
    /// Naming zic64b in `machine.isa` on other lines is a validation error;
    /// the default ("everything") leaves it out.
    pub fn extensions(&self) -> Result<rvnvmm_isa::ExtSet, rvnvmm_isa::IsaError> {
        let isa = self.machine.extensions()?;
        Ok(if self.cbo_blocks_fit_zic64b(isa) {
            isa
        } else {
            isa.without(rvnvmm_isa::Ext::Zic64b)
        })
    }

    /// Whether every cache-block size `isa` has is 64 bytes.
    pub(crate) fn cbo_blocks_fit_zic64b(&self, isa: rvnvmm_isa::ExtSet) -> bool {
        use rvnvmm_isa::Ext;
        const ZIC64B_BLOCK: u32 = 64;
        (!isa.has(Ext::Zicboz) || rvnvmm_isa::CBOZ_BLOCK_BYTES == ZIC64B_BLOCK)
            && (!(isa.has(Ext::Zicbom) || isa.has(Ext::Zicbop))
                || self.cache.l1d.line_bytes == ZIC64B_BLOCK)
    }
}

impl Default for CoreCosts {
    fn default() -> Self {
        CoreCosts {
            alu: 1,
            mul: 10,
            clmul: 10,
            div: 66,
            fpu: 4,
            fdiv: 30,
            load_use: 1,
            branch_taken: 1,
            issue_width: 1,
            smt_policy: SmtPolicy::RoundRobin,
        }
    }
}

impl Default for Caches {
    fn default() -> Self {
        let l1 = CacheLevel {
            enabled: true,
            size_bytes: 16 * 1024,
            ways: 4,
            line_bytes: 64,
            hit_latency_cycles: 1,
            mshrs: 0,
            replacement: Replacement::Random,
        };
        Caches {
            l1i: l1.clone(),
            l1d: CacheLevel {
                hit_latency_cycles: 2,
                ..l1
            },
            l2: CacheLevel::default(),
        }
    }
}

impl Default for CacheLevel {
    /// A disabled 512 KiB 8-way shared L2 placeholder.
    fn default() -> Self {
        CacheLevel {
            enabled: false,
            size_bytes: 512 * 1024,
            ways: 8,
            line_bytes: 64,
            hit_latency_cycles: 20,
            mshrs: 4,
            replacement: Replacement::Lru,
        }
    }
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            request_latency_ns: 600.0,
            response_latency_ns: 600.0,
            beat_bytes: 8,
            clock_hz: 0,
        }
    }
}

impl Memory {
    /// The freedom-u500 memory: one 4 GiB DDR3-1600 behind controller
    /// `ddr3`, split into 1 GiB of DRAM and 3 GiB of NVMM.
    fn default_machine() -> Memory {
        let mut regions = BTreeMap::new();
        regions.insert(
            "dram".to_string(),
            Region {
                base: 0x8000_0000,
                size: 0x4000_0000,
                controller: "ddr3".into(),
                nvmm: None,
                node: None,
                soft_reserved: false,
            },
        );
        regions.insert(
            "nvmm".to_string(),
            Region {
                base: 0xC000_0000,
                size: 0xC000_0000,
                controller: "ddr3".into(),
                nvmm: Some(NvmmParams::default()),
                node: None,
                soft_reserved: false,
            },
        );
        let mut controllers = BTreeMap::new();
        controllers.insert(
            "ddr3".to_string(),
            ControllerConfig {
                tfaw_ns: Some(30.0),
                // Arrival order and postponed refreshes: see
                // configs/freedom-u500.toml.
                scheduler: Scheduler::Fcfs,
                refresh: Some(Refresh {
                    postpone_max: 2,
                    ..Refresh::default()
                }),
                ..ControllerConfig::default()
            },
        );
        Memory {
            regions,
            controllers,
        }
    }
}

impl NvmmParams {
    /// These settings with `settings` applied as one change: each a key of
    /// a `kind = "nvmm"` region relative to `memory.NAME` (`method`,
    /// `trcd_ns`, `optane.dimms`, ...) and its value as `--set` writes it.
    /// Refuses an unknown key or a value of the wrong type; ranges are the
    /// model's to check.
    pub fn with_settings(&self, settings: &[(&str, String)]) -> Result<NvmmParams, String> {
        let mut tree = match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t,
            _ => return Err("the NVMM settings do not form a table".into()),
        };
        for (key, raw) in settings {
            let mut parts: Vec<&str> = key.split('.').collect();
            let last = parts.pop().unwrap_or(key);
            let mut t = &mut tree;
            for p in parts {
                t = t
                    .get_mut(p)
                    .and_then(toml::Value::as_table_mut)
                    .ok_or_else(|| format!("no NVMM setting '{key}'"))?;
            }
            let old = t
                .get(last)
                .ok_or_else(|| format!("no NVMM setting '{key}'"))?;
            let new = match (old, load::parse_value(raw)) {
                (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
                (toml::Value::String(_), v) if !v.is_str() => toml::Value::String(raw.clone()),
                (_, v) => v,
            };
            t.insert(last.to_string(), new);
        }
        tree.try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())
    }
}

impl Default for NvmmParams {
    /// Seed 000 §5's setting of the proposed method.
    fn default() -> Self {
        NvmmParams {
            method: Method::Proposed,
            trcd_ns: 1000.0,
            trp_ns: 1000.0,
            tras_ns: 7000.0,
            coarse_read_ns: 1000.0,
            coarse_write_ns: 1000.0,
            trp_on: TrpOn::Dirty,
            keep_open: KeepOpen::FromAct,
            optane: OptaneParams::default(),
            image: String::new(),
            persistence: Persistence::Adr,
        }
    }
}

impl OptaneParams {
    /// Largest XPLine, and so largest count of 64-byte sub-lines (64) one
    /// line's valid mask holds.
    pub const MAX_XPLINE_BYTES: u64 = 4096;
    /// Most DIMMs, XPBuffer lines per DIMM, AIT cache entries per DIMM and
    /// WPQ entries per DIMM: far above any device, and a bound on the
    /// model's host memory.
    pub const MAX_COUNT: u64 = 1 << 20;

    /// What is wrong with these settings, as `(key relative to
    /// memory.NAME.optane, message)`; empty when they are usable. Both the
    /// config check and the memory controller use it.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut count = |key: &'static str, v: u64| {
            if v == 0 || v > Self::MAX_COUNT {
                out.push((
                    key,
                    format!("must be from 1 to {}, got {v}", Self::MAX_COUNT),
                ));
            }
        };
        count("dimms", self.dimms);
        count("wpq_entries", self.wpq_entries);
        let line = self.xpline_bytes;
        let mut out2 = Vec::new();
        if !(line.is_power_of_two() && (64..=Self::MAX_XPLINE_BYTES).contains(&line)) {
            out2.push((
                "xpline_bytes",
                format!(
                    "must be a power of two from 64 to {}, got {line}",
                    Self::MAX_XPLINE_BYTES
                ),
            ));
        }
        let line = line.max(1);
        for (key, v) in [
            ("interleave_bytes", self.interleave_bytes),
            ("ait_granule_bytes", self.ait_granule_bytes),
        ] {
            if !v.is_power_of_two() || v < line {
                out2.push((
                    key,
                    format!("must be a power of two of at least xpline_bytes ({line}), got {v}"),
                ));
            }
        }
        for (key, v, unit) in [
            ("xpbuffer_bytes", self.xpbuffer_bytes, line),
            (
                "ait_cache_bytes",
                self.ait_cache_bytes,
                self.ait_granule_bytes.max(1),
            ),
        ] {
            let n = v / unit;
            if v == 0 || v % unit != 0 || n > Self::MAX_COUNT {
                out2.push((
                    key,
                    format!(
                        "must be a positive multiple of {unit} bytes, at most {} of them, got {v}",
                        Self::MAX_COUNT
                    ),
                ));
            }
        }
        for (key, v, zero) in [
            ("ait_miss_ns", self.ait_miss_ns, true),
            ("buffer_read_ns", self.buffer_read_ns, false),
            ("media_read_ns", self.media_read_ns, true),
            ("media_write_ns", self.media_write_ns, false),
        ] {
            if !(v.is_finite() && (v > 0.0 || zero && v == 0.0) && v <= MAX_LATENCY_NS) {
                out2.push((
                    key,
                    format!(
                        "must be a {} number of ns, at most {MAX_LATENCY_NS:e}, got {v}",
                        if zero { "non-negative" } else { "positive" }
                    ),
                ));
            }
        }
        for (key, v) in [
            ("media_read_gbps", self.media_read_gbps),
            ("media_write_gbps", self.media_write_gbps),
        ] {
            // At least 1 byte per 1000 s, so one XPLine's occupancy stays
            // far below the controller's time horizon.
            if !(v.is_finite() && v >= 1e-12) {
                out2.push((
                    key,
                    format!("must be a positive number of GB/s (at least 1e-12), got {v}"),
                ));
            }
        }
        out.extend(out2);
        out
    }
}

impl Default for OptaneParams {
    /// The first-generation Optane DC PMM as published (sources in
    /// `docs/config.md`).
    fn default() -> Self {
        OptaneParams {
            dimms: 6,
            interleave_bytes: 4096,
            xpline_bytes: 256,
            xpbuffer_bytes: 16 * 1024,
            replacement: Replacement::Lru,
            ait_cache_bytes: 16 << 20,
            ait_granule_bytes: 4096,
            ait_miss_ns: 70.0,
            wpq_entries: 64,
            buffer_read_ns: 110.0,
            media_read_ns: 70.0,
            media_write_ns: 110.0,
            media_read_gbps: 6.6,
            media_write_gbps: 2.3,
            prefetch: true,
        }
    }
}

impl Default for ControllerConfig {
    /// DDR3-1600 (11-11-11), 4 GiB single-rank x64 of 4 Gb x8 chips, behind
    /// a 200 MHz controller; no tFAW, no refresh.
    fn default() -> Self {
        ControllerConfig {
            technology: DDR3_TECHNOLOGY.to_string(),
            params: BTreeMap::new(),
            clock_mhz: 200.0,
            speed_bin: None,
            tck_ns: 1.25,
            tcl_ns: 13.75,
            tcwl_ns: 10.0,
            tburst_ns: 5.0,
            trcd_ns: 13.75,
            trp_ns: 13.75,
            tras_ns: 35.0,
            trtp_ns: 7.5,
            twr_ns: 15.0,
            tccd_ns: 5.0,
            tccd_l_ns: None,
            trrd_ns: 6.0,
            trrd_l_ns: None,
            tfaw_ns: None,
            ranks: 1,
            banks: 8,
            bank_groups: 1,
            row_buffer_bytes: 8192,
            rows: 65536,
            columns: 1024,
            mapping: AddressMapping::BankRowColumn,
            read_queue: 8,
            write_queue: 8,
            scheduler: Scheduler::FrFcfs,
            interface_latency_ns: 0.0,
            refresh: None,
            link: None,
        }
    }
}

impl Default for Refresh {
    /// DDR3 at normal temperature, 4 Gb chips.
    fn default() -> Self {
        Refresh {
            trefi_ns: 7800.0,
            trfc_ns: 260.0,
            postpone_max: 0,
        }
    }
}

impl Default for User {
    fn default() -> Self {
        User {
            heap: RegionKind::Dram,
            stack_size: 8 * 1024 * 1024,
            pages: PagePolicy::Base,
            time_slice_ns: 3_000_000,
            pmem_dir: String::new(),
        }
    }
}

impl Default for Cflush {
    fn default() -> Self {
        Cflush { allow_user: true }
    }
}

#[cfg(test)]
mod tests;
