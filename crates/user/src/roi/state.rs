//! The region-of-interest state a process keeps: the run control's, and
//! what is user mode's own (the counters at the last reset, the memory
//! system set aside while the functional model runs, the checkpoint
//! points).

use crate::outcome::Outcome;
use rvnvmm_hart::CoreCosts;
use rvnvmm_hart::MemoryModel;
use rvnvmm_runctl::StopAt;
use rvnvmm_runctl::{ResetPoint, RunControl};
use std::collections::HashMap;

/// The counters as they stood at the last reset: the run's statistics are
/// the differences (architectural counters, `instret` and the clocks, are
/// never touched).
#[derive(Clone, Debug, Default)]
pub(crate) struct StatsBase {
    pub(crate) point: Option<ResetPoint>,
    pub(crate) insns: u64,
    /// Per hart: its clock then.
    pub(crate) cycles: Vec<u64>,
    /// The latest hart clock then.
    pub(crate) latest_cycles: u64,
    /// Per thread id: its `instret` then.
    pub(crate) thread_insns: HashMap<i32, u64>,
    pub(crate) blocks_decoded: u64,
}

/// The timing model while the functional model runs.
pub(crate) struct Models {
    /// The timing model's core costs (`[core]`).
    pub(crate) timing_costs: CoreCosts,
    /// The memory system while the functional model runs.
    pub(crate) parked: Option<Box<dyn MemoryModel>>,
}

/// The region-of-interest state of a process.
#[derive(Default)]
pub(crate) struct Roi {
    pub(crate) base: StatsBase,
    pub(crate) models: Option<Models>,
    /// The run control: pending points, snapshots, switches, sampling.
    pub(crate) ctl: RunControl<Box<Outcome>>,
    /// `checkpoint` markers are restore points (`checkpoint.rs`).
    pub(crate) restore_points: bool,
    /// The point `--checkpoint-at insns=N|time=NS` stops the run at.
    pub(crate) checkpoint_at: Option<StopAt>,
    /// The last checkpoint stop was a marker's.
    pub(crate) stopped_at_marker: bool,
}
