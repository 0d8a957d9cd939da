//! What a run reports: how the guest ended and its figures (`--stats`).

use rvnvmm_runctl::{ModelSwitch, ResetPoint, SamplingOutcome};

/// A named snapshot of the statistics (a `dump` marker).
pub type Snapshot = rvnvmm_runctl::Snapshot<Box<Outcome>>;

/// How the guest ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// exit/exit_group with this status.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// `--max-insns` reached.
    InsnLimit,
    /// The power failed at [`Options::crash_at`](crate::Options::crash_at).
    Crash,
    /// Stopped at a checkpoint's point (`Process::checkpoint_at`, or a
    /// `checkpoint` marker with restore points enabled): the process is
    /// whole, to be saved and rebuilt (`docs/checkpoints.md`).
    Checkpoint,
}

/// Per-thread figures.
#[derive(Clone, Debug, Default)]
pub struct ThreadStats {
    /// Guest thread id.
    pub tid: i32,
    /// Hart it ran on last.
    pub hart: usize,
    /// Instructions retired.
    pub instructions: u64,
    /// Cache-flush instructions.
    pub flush_insns: u64,
    /// Software-TLB refills.
    pub tlb_refills: u64,
    /// `lr`, `sc` and AMOs.
    pub atomics: rvnvmm_hart::AtomicStats,
    /// Cycles the memory system stalled it (timed runs).
    pub memory_stall_cycles: u64,
    /// On an SMT core: cycles it waited for issue slots its siblings took.
    pub issue_wait_cycles: u64,
    /// On an SMT core: cycles it waited for a shared unit a sibling held.
    pub unit_wait_cycles: u64,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub exit: ExitKind,
    /// Instructions retired by all threads.
    pub instructions: u64,
    /// Simulated time at the end: the latest hart clock, in nanoseconds.
    pub sim_time_ns: u64,
    /// Simulated cycles of each hart.
    pub hart_cycles: Vec<u64>,
    /// Instructions per hart.
    pub hart_instructions: Vec<u64>,
    /// Figures per thread, including exited ones.
    pub threads: Vec<ThreadStats>,
    /// Blocks decoded.
    pub blocks_decoded: u64,
    /// Whether this is the process started by the command line (false in a
    /// forked child).
    pub is_initial_process: bool,
    /// The guest (= host) process id.
    pub pid: i32,
    /// The memory system's statistics (caches, flushes, regions), when
    /// the machine is timed.
    pub memory: Option<serde_json::Value>,
    /// The page policy's figures.
    pub pages: PagesOutcome,
    /// Each memory node's allocation and migration counters, by node id.
    pub numa: Vec<(u32, crate::numa::NodeCounters)>,
    /// Where the last hart to run stood at the end: its number and the PC
    /// of the next instruction it would have run.
    pub last_pc: (usize, u64),
    /// Where the statistics were last reset (a `reset` marker or the end
    /// of `--fast-forward`); `None`: they count from the start.
    pub reset: Option<ResetPoint>,
    /// The snapshots `dump` markers took, in order.
    pub snapshots: Vec<Snapshot>,
    /// The changes of model during the run, in order.
    pub model_switches: Vec<ModelSwitch>,
    /// The windows and estimate of a sampled run (`--sample`).
    pub sampling: Option<SamplingOutcome>,
    /// The process tree's figures, when the initial process forked (`None`
    /// otherwise, and in a forked child).
    pub processes: Option<crate::family::TreeStats>,
    /// Why the page heat (`--page-heat`) could not be written whole.
    pub page_heat_error: Option<String>,
}

/// What the page policy did (`--stats` `pages`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagesOutcome {
    /// `user.pages`.
    pub policy: crate::vm::PagePolicy,
    /// Mappings in the page table at the end, per size: 4 KiB, 64 KiB,
    /// 2 MiB, 1 GiB (a Svnapot range counts once).
    pub mappings: [u64; 4],
    /// Blocks mapped at faults, blocks demoted and faults that fell back
    /// to a 4 KiB page.
    pub stats: crate::vm::PageStats,
}
