//! The interface between the cores of rvnvmm and a memory-system timing
//! model.
//!
//! A core (`rvnvmm_hart::Core`: clock, cost model, L1 port) presents every
//! access its hart makes to a [`TimingModel`] and adds the stall the model
//! returns to its clock. The model knows nothing of harts, registers or
//! decoded code; the hart knows nothing of caches, buses or controllers.
//! `rvnvmm_memsys::MemorySystem` is the model of the machine; unit tests of
//! the hart use a model that records the calls.
//!
//! What a core presents, and when:
//!
//! * **Data accesses** (loads, stores, AMOs, LR/SC) by physical address and
//!   size, once per data line they touch ([`TimingModel::data_line_shift`]):
//!   first [`TimingModel::data_filter_hit`], a question that must cost a
//!   few host instructions, and only when it says no
//!   [`TimingModel::data_access`].
//! * **Instruction fetches** once per fetch line
//!   ([`TimingModel::fetch_line_shift`]) of each block executed, through
//!   [`TimingModel::fetch_filter_hit`] and [`TimingModel::fetch`] the same way.
//! * **Translations**: a model with TLBs ([`TimingModel::tlb_lookup`] not
//!   [`TlbLookup::Untracked`]) is asked on every refill of the hart's
//!   software TLB; on a miss the hart presents the walk's PTE reads
//!   ([`TimingModel::page_walk_read`]) and then what the walk found
//!   ([`TimingModel::tlb_fill`]). The hart keeps its software TLB a subset
//!   of the model's L1 TLB: it drops the page each lookup or fill reports
//!   evicted, and everything when [`TimingModel::tlb_epoch`] moved while
//!   another hart ran on the core. Without TLBs, only the PTE reads are
//!   presented.
//! * **TLB maintenance**: `sfence.vma` ([`TimingModel::tlb_flush`]) and
//!   writes of `satp` ([`TimingModel::satp_write`]).
//! * **Cache maintenance**: `cbo.*` and `cflush.d.l1`
//!   ([`TimingModel::flush_line`], [`TimingModel::flush_l1d`]).
//!
//! Every time is the core's clock in cycles; every result is a stall in
//! cycles beyond what the core's own cost model charges.
//!
//! Devices do not get the model: the ones that need it (the NVMM control
//! page) get the narrow [`ControlPort`] from [`TimingModel::control_port`].

/// The number of a core: its slot among the model's private caches.
pub type CoreId = usize;

/// What a data access does to its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataKind {
    /// A load.
    Load,
    /// `lr`: a load that starts a reservation.
    LoadReserved,
    /// A store.
    Store,
    /// An atomic read-modify-write or `sc`: the line is needed exclusive.
    Amo,
}

impl DataKind {
    /// Whether the access needs the line with write permission (held
    /// Exclusive or Modified): stores, AMOs and `sc`, and `lr`, which
    /// fetches its line exclusive as Rocket's L1 does, so that the `sc`
    /// after it hits.
    #[inline(always)]
    pub fn needs_exclusive(self) -> bool {
        !matches!(self, DataKind::Load)
    }

    /// Whether the access synchronises harts (`lr`, `sc`, AMOs): it waits
    /// at the sync limit even when the private caches serve it, so
    /// contended atomics from several harts take turns in simulated-time
    /// order instead of one hart running a whole slice of them ahead.
    #[inline(always)]
    pub fn is_atomic(self) -> bool {
        matches!(self, DataKind::LoadReserved | DataKind::Amo)
    }
}

/// One data access as a model sees it: it never crosses a data line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataAccess {
    /// Physical address of the first byte.
    pub paddr: u64,
    /// Bytes accessed within the line (1..=8).
    pub size: u64,
    /// Load, store or AMO.
    pub kind: DataKind,
}

/// Which cache-maintenance operation [`TimingModel::flush_line`] performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlushKind {
    /// SiFive `CFLUSH.D.L1 rs1` (rs1 ≠ x0): write back and invalidate the
    /// line in this core's L1D only. A dirty line goes to the next level
    /// (the L2 if there is one, else memory).
    L1,
    /// Zicbom `cbo.flush`: write back and invalidate the line in every cache
    /// (all L1Ds and the L2); dirty data reaches the memory controller.
    Flush,
    /// Zicbom `cbo.clean`: write dirty data back to the memory controller;
    /// the line stays cached, clean.
    Clean,
    /// Zicbom `cbo.inval`: invalidate the line everywhere. A dirty line is
    /// written back first (the behaviour the spec allows when
    /// `xenvcfg.CBIE` = 01): guest RAM always holds the newest bytes, so
    /// discarding them in the timing model would make the controller's
    /// view and the memory contents disagree.
    Inval,
}

/// What an `sfence.vma` orders: its `rs1` (a virtual address) and `rs2`
/// (an address space), `None` for `x0` (all of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TlbFlush {
    /// The virtual address whose translations are fenced.
    pub vaddr: Option<u64>,
    /// The ASID whose translations are fenced.
    pub asid: Option<u16>,
}

/// Which of a core's L1 TLBs a translation is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlbPort {
    /// The instruction TLB.
    Fetch,
    /// The data TLB (loads, stores, AMOs).
    Data,
}

/// A page a TLB entry maps: its virtual base and log2 of its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRange {
    /// Virtual address of the page's first byte.
    pub vbase: u64,
    /// log2 of the page size (12, 16, 21 or 30).
    pub page_shift: u32,
}

/// The model's answer to [`TimingModel::tlb_lookup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlbLookup {
    /// The model keeps no TLB: walks are presented as PTE reads only.
    Untracked,
    /// The core's TLBs hold the translation: `stall` cycles (an L2 TLB hit;
    /// 0 for the L1), and the L1 entry the refill from the L2 displaced.
    Hit {
        /// Cycles of the lookup beyond an L1 TLB hit.
        stall: u64,
        /// The page that left the L1 TLB, if one did.
        evicted: Option<PageRange>,
    },
    /// Not held: the hart presents the walk's PTE reads, then calls
    /// [`TimingModel::tlb_fill`].
    Miss,
}

/// What a walk after a [`TlbLookup::Miss`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TlbFill {
    /// The address translated.
    pub vaddr: u64,
    /// log2 of the size of the page that maps it.
    pub page_shift: u32,
    /// The leaf PTE's G bit: the entry matches every ASID.
    pub global: bool,
}

/// A memory-system timing model, as a core sees it.
///
/// Entries of each filter table of [`FilterTables`] (direct-mapped).
pub const FILTER_ENTRIES: usize = 1024;

/// The entry of a filter table that holds line number `line`: its low
/// bits folded with the next ones, so lines that share an L1 set but differ
/// above the index bits still spread.
#[inline(always)]
pub fn filter_index(line: u64) -> usize {
    ((line ^ (line >> 10)) as usize) & (FILTER_ENTRIES - 1)
}

/// Where a model keeps one core's filter caches, for code that makes
/// [`TimingModel::data_filter_hit`]'s and
/// [`TimingModel::fetch_filter_hit`]'s tests itself (the translating
/// engine, inline): with `line = paddr >> data_shift`, a load hits if
/// `read[filter_index(line)] == line`, a store if
/// `write[filter_index(line)] == line`, and a hit adds one to `read_hits`
/// or `write_hits`, exactly as `data_filter_hit` answers and counts; a
/// fetch likewise through `fetch`, `fetch_hits` and `fetch_shift`. A miss
/// says nothing (ask the model).
///
/// The pointers stay valid, and the tables keep this layout, as long as the
/// model lives; they are read and counted through while no `&mut` of the
/// model is in use.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FilterTables {
    /// [`FILTER_ENTRIES`] line numbers readable in the L1D.
    pub read: *const u64,
    /// [`FILTER_ENTRIES`] line numbers writable (held modified) in the L1D.
    pub write: *const u64,
    /// The count of load hits served by `read`.
    pub read_hits: *mut u64,
    /// The count of store hits served by `write`.
    pub write_hits: *mut u64,
    /// log2 of the data line size.
    pub data_shift: u64,
    /// [`FILTER_ENTRIES`] line numbers valid in the L1I.
    pub fetch: *const u64,
    /// The count of fetch hits served by `fetch`.
    pub fetch_hits: *mut u64,
    /// log2 of the instruction fetch line size.
    pub fetch_shift: u64,
}

/// The filter questions take `&self` and must be cheap: the core asks one
/// for every access. A `true` promises that the access would hit its L1
/// and change no state (the core charges only its own hit cost); `false`
/// says nothing, and the core then calls the full model.
pub trait TimingModel {
    /// log2 of the data line size: an access that crosses a line is
    /// presented once per line.
    fn data_line_shift(&self) -> u32;

    /// log2 of the instruction fetch line size: a block is fetched once per
    /// line it spans.
    fn fetch_line_shift(&self) -> u32;

    /// Whether a data access of `core` to `paddr` is known to hit its L1
    /// with the permission it needs (a write: the line held modified).
    fn data_filter_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool;

    /// `core`'s filter tables, for a caller that tests them itself (see
    /// [`FilterTables`]); `None` (the default) when the model keeps none,
    /// and then only `data_filter_hit` and `fetch_filter_hit` answer.
    fn filter_tables(&self, _core: CoreId) -> Option<FilterTables> {
        None
    }

    /// Whether a data access of `core` to `paddr` would be served by its
    /// private caches alone, so it needs no synchronisation with the other
    /// cores (`Core::set_sync_limit`). Changes no state.
    fn data_private_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool;

    /// The full model for a data access of `core` at its cycle `now`:
    /// returns the stall in cycles beyond an L1 hit.
    fn data_access(&mut self, core: CoreId, access: DataAccess, now: u64) -> u64;

    /// As [`data_filter_hit`](Self::data_filter_hit) for a fetch of the
    /// line holding `paddr`.
    fn fetch_filter_hit(&self, core: CoreId, paddr: u64) -> bool;

    /// As [`data_private_hit`](Self::data_private_hit) for a fetch.
    fn fetch_private_hit(&self, core: CoreId, paddr: u64) -> bool;

    /// The full model for a fetch of the line holding `paddr`: returns the
    /// stall in cycles beyond an L1 hit.
    fn fetch(&mut self, core: CoreId, paddr: u64, now: u64) -> u64;

    /// The MMU of `core` reads the 8-byte PTE at `pte_paddr` during a
    /// page-table walk: returns the stall in cycles.
    fn page_walk_read(&mut self, core: CoreId, pte_paddr: u64, now: u64) -> u64;

    /// Whether the model keeps TLBs (then [`tlb_lookup`](Self::tlb_lookup)
    /// never answers [`TlbLookup::Untracked`]).
    fn has_tlb(&self) -> bool {
        false
    }

    /// Whether `core`'s TLBs hold the translation of `vaddr` in address
    /// space `asid` for `port`; an L2 TLB hit refills the L1. Called on
    /// every refill of the hart's software TLB while translation is on.
    fn tlb_lookup(
        &mut self,
        _core: CoreId,
        _port: TlbPort,
        _vaddr: u64,
        _asid: u16,
        _now: u64,
    ) -> TlbLookup {
        TlbLookup::Untracked
    }

    /// Ends the walk after a [`TlbLookup::Miss`]: what it found (`None`: a
    /// page fault, nothing is cached). Returns the page that left `core`'s
    /// L1 TLB for `port` to make room.
    fn tlb_fill(
        &mut self,
        _core: CoreId,
        _port: TlbPort,
        _asid: u16,
        _fill: Option<TlbFill>,
    ) -> Option<PageRange> {
        None
    }

    /// A counter that moves whenever an entry leaves `core`'s L1 TLBs: a
    /// hart that saw a value and finds another (another hart ran on the
    /// core, or the core's TLBs were flushed) drops its software TLB.
    fn tlb_epoch(&self, _core: CoreId) -> u64 {
        0
    }

    /// `core` executed `sfence.vma` (or the user-mode kernel changed the
    /// page tables, as Linux follows with one).
    fn tlb_flush(&mut self, core: CoreId, flush: TlbFlush);

    /// `core` wrote `satp` (a new address space, or paging on or off).
    fn satp_write(&mut self, core: CoreId, satp: u64);

    /// A cache-maintenance instruction of `core` on the line holding
    /// `paddr`: returns the stall in cycles.
    fn flush_line(&mut self, core: CoreId, paddr: u64, kind: FlushKind, now: u64) -> u64;

    /// `CFLUSH.D.L1 x0`: write back and invalidate `core`'s whole L1D;
    /// returns the stall in cycles.
    fn flush_l1d(&mut self, core: CoreId, now: u64) -> u64;

    /// The handle the NVMM control page works through, if the model has
    /// one.
    fn control_port(&mut self) -> Option<&mut dyn ControlPort> {
        None
    }

    /// Hands `each` the address of every line the model wrote to memory
    /// since the last call, if it was asked to keep them (a persistence
    /// domain is tracked); otherwise does nothing.
    fn take_write_backs(&mut self, _each: &mut dyn FnMut(u64)) {}
}

/// The memory model as the machine that owns it sees it: the timing
/// interface its harts use, plus the run's bookkeeping (the statistics,
/// their reset, the end of the run, the persistence domain's write-back
/// log). User mode's process and the board hold a `Box<dyn MemoryModel>`
/// and never name the concrete model; `rvnvmm_memsys::MemorySystem` is the
/// one the command line builds.
pub trait MemoryModel: TimingModel + Send {
    /// Tells the model that hart `hart` will present no request before
    /// `now_cycles` (its clock, or for a hart with nothing to run, the
    /// earliest time work could reach it). Lets the model forget history
    /// sooner; never changes a result.
    fn note_hart_time(&mut self, hart: usize, now_cycles: u64);

    /// Keeps the address of every line written to memory from now on, for
    /// [`TimingModel::take_write_backs`].
    fn record_write_backs(&mut self);

    /// The end of the run at hart time `now_cycles` (the latest hart
    /// clock): completes what is in flight, so the statistics are whole.
    fn finish(&mut self, now_cycles: u64);

    /// The model's statistics, as an object the caller merges at the top
    /// level of `--stats` (`docs/stats.md`), for a run of `sim_time_ns`.
    fn stats_json(&self, sim_time_ns: u64) -> serde_json::Value;

    /// Zeroes every counter; the state that decides timing stays.
    fn reset_stats(&mut self);

    /// Misses of the private L1 data caches so far (what a sampling window
    /// counts).
    fn l1d_misses(&self) -> u64;

    /// Transfers on the memory bus so far (what a sampling window counts).
    fn bus_transfers(&self) -> u64;

    /// Counts, from now on, what reaches every 4 KiB page in windows of
    /// `window_ns` of simulated time (`--page-heat`); 0 stops and forgets.
    /// Changes no timing and no statistic. A model without memory says
    /// nothing ([`take_page_heat`](Self::take_page_heat) gives no window).
    fn record_page_heat(&mut self, _window_ns: u64) {}

    /// Hands `each` the windows no request can reach any more (every window
    /// with `all`, at the end of the run), in window order, and forgets
    /// them.
    fn take_page_heat(&mut self, _all: bool, _each: &mut dyn FnMut(HeatWindow<'_>)) {}
}

/// What reached one page in one window of simulated time (`--page-heat`,
/// docs/page-heat.md). Each count saturates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageCounts {
    /// Line reads that reached the page's memory controller.
    pub reads: u32,
    /// Line writes that reached the page's memory controller.
    pub writes: u32,
    /// L1 misses (data and instruction) on the page, wherever served.
    pub misses: u32,
}

impl PageCounts {
    /// Reads and writes that reached the page's memory node.
    pub fn accesses(&self) -> u64 {
        u64::from(self.reads) + u64::from(self.writes)
    }
}

/// One finished window of page heat: its index (it spans `[index, index +
/// 1)` windows of simulated time) and its pages, ascending by page number
/// (physical address >> 12), each with what reached it.
pub type HeatWindow<'a> = (u64, &'a [(u64, PageCounts)]);

/// No timing model: the type of `Env::timing` in a functional run. It has
/// no values, so an `Option<&mut NoModel>` is always `None`.
#[derive(Debug)]
pub enum NoModel {}

impl TimingModel for NoModel {
    fn data_line_shift(&self) -> u32 {
        match *self {}
    }
    fn fetch_line_shift(&self) -> u32 {
        match *self {}
    }
    fn data_filter_hit(&self, _: CoreId, _: u64, _: bool) -> bool {
        match *self {}
    }
    fn data_private_hit(&self, _: CoreId, _: u64, _: bool) -> bool {
        match *self {}
    }
    fn data_access(&mut self, _: CoreId, _: DataAccess, _: u64) -> u64 {
        match *self {}
    }
    fn fetch_filter_hit(&self, _: CoreId, _: u64) -> bool {
        match *self {}
    }
    fn fetch_private_hit(&self, _: CoreId, _: u64) -> bool {
        match *self {}
    }
    fn fetch(&mut self, _: CoreId, _: u64, _: u64) -> u64 {
        match *self {}
    }
    fn page_walk_read(&mut self, _: CoreId, _: u64, _: u64) -> u64 {
        match *self {}
    }
    fn tlb_flush(&mut self, _: CoreId, _: TlbFlush) {
        match *self {}
    }
    fn satp_write(&mut self, _: CoreId, _: u64) {
        match *self {}
    }
    fn flush_line(&mut self, _: CoreId, _: u64, _: FlushKind, _: u64) -> u64 {
        match *self {}
    }
    fn flush_l1d(&mut self, _: CoreId, _: u64) -> u64 {
        match *self {}
    }
}

/// Why the memory system refused a control-page setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlError(pub String);

impl std::fmt::Display for ControlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ControlError {}

/// What a memory node's control page may do to the memory system: change
/// the node's technology settings, move the boundary below it, read and
/// reset the counters. Devices get this, never the model itself; it speaks
/// of nodes by name and settings by key, so that any technology can be
/// controlled through it.
pub trait ControlPort {
    /// Applies `settings` to memory node `node` as one change, or refuses
    /// them all: each a key of the node's technology (for an NVMM node of
    /// the DDR3 controller, a `memory.NAME` key such as `method` or
    /// `trcd_ns`) with its value as `--set` writes it.
    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), ControlError>;

    /// Moves the start of node `node`, and the end of the node just below it
    /// on the same controller, to `boundary`.
    fn set_boundary(&mut self, node: &str, boundary: u64) -> Result<(), ControlError>;

    /// The statistics counters at `pointers` (JSON pointers into the
    /// memory system's `--stats` object, e.g. `/regions/nvmm/reads`,
    /// `/coherence/snoop_hits`), in that order; 0 for one the machine does
    /// not have.
    fn counters(&self, pointers: &[String]) -> Vec<u64>;

    /// Zeroes every counter of the memory system.
    fn reset_stats(&mut self);
}

/// Which core each hart (hardware thread) runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreMap {
    core_of_hart: Vec<CoreId>,
}

impl CoreMap {
    /// `harts` harts, each on a core of its own: hart `h` on core `h`.
    pub fn one_thread_per_core(harts: usize) -> CoreMap {
        CoreMap {
            core_of_hart: (0..harts).collect(),
        }
    }

    /// `threads_per_core` consecutive harts on each core (the last core may
    /// have fewer); `None` if either number is 0.
    pub fn with_threads_per_core(harts: usize, threads_per_core: usize) -> Option<CoreMap> {
        if harts == 0 || threads_per_core == 0 {
            return None;
        }
        Some(CoreMap {
            core_of_hart: (0..harts).map(|h| h / threads_per_core).collect(),
        })
    }

    /// Number of harts.
    pub fn harts(&self) -> usize {
        self.core_of_hart.len()
    }

    /// Number of cores.
    pub fn cores(&self) -> usize {
        self.core_of_hart.iter().max().map_or(0, |&c| c + 1)
    }

    /// The core hart `hart` runs on.
    pub fn core_of(&self, hart: usize) -> CoreId {
        self.core_of_hart[hart]
    }

    /// The harts of core `core`, in order.
    pub fn harts_of(&self, core: CoreId) -> impl Iterator<Item = usize> + '_ {
        self.core_of_hart
            .iter()
            .enumerate()
            .filter(move |&(_, &c)| c == core)
            .map(|(h, _)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_maps() {
        let m = CoreMap::one_thread_per_core(3);
        assert_eq!((m.harts(), m.cores(), m.core_of(2)), (3, 3, 2));
        assert_eq!(m.harts_of(1).collect::<Vec<_>>(), [1]);
        let m = CoreMap::with_threads_per_core(5, 2).unwrap();
        assert_eq!((m.harts(), m.cores()), (5, 3));
        assert_eq!(
            (0..5).map(|h| m.core_of(h)).collect::<Vec<_>>(),
            [0, 0, 1, 1, 2]
        );
        assert_eq!(m.harts_of(2).collect::<Vec<_>>(), [4]);
        assert!(CoreMap::with_threads_per_core(4, 0).is_none());
        assert!(CoreMap::with_threads_per_core(0, 1).is_none());
    }

    #[test]
    fn only_plain_loads_take_a_line_shared_and_only_atomics_synchronise() {
        assert!(!DataKind::Load.needs_exclusive());
        assert!(DataKind::LoadReserved.needs_exclusive());
        assert!(DataKind::Store.needs_exclusive());
        assert!(DataKind::Amo.needs_exclusive());
        assert!(DataKind::LoadReserved.is_atomic() && DataKind::Amo.is_atomic());
        assert!(!DataKind::Load.is_atomic() && !DataKind::Store.is_atomic());
    }
}
