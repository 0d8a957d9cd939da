//! Regions of interest (`docs/regions-of-interest.md`) in user mode: the
//! process as the run control (`rvnvmm_runctl`) drives it — its statistics
//! reset, its models switched, its snapshots taken — and the run control's
//! state a process keeps, with what is user mode's own: the counters at
//! the last reset, the memory system set aside while the functional model
//! runs, the checkpoint points (`checkpoint.rs`).

use crate::process::{ExitKind, Outcome, Process, ThreadState};
use rvnvmm_hart::CoreCosts;
use rvnvmm_hart::MemoryModel;
use rvnvmm_runctl::{Controlled, MarkerAction, RunControl, SampleCounters, Sampling};

pub use rvnvmm_runctl::{FastForward, Model, ModelSwitch, ResetPoint, SamplingOutcome};

pub use crate::outcome::Snapshot;
pub(crate) use state::{Models, StatsBase};

pub(crate) mod state;

impl Process {
    /// Starts the run in the functional model: the timing model (this
    /// process's memory system and the cores' costs) takes over at `until`.
    /// The statistics count from that switch. Fails on a machine without a
    /// timing model.
    pub fn fast_forward(&mut self, until: FastForward) -> Result<(), String> {
        if self.memsys.is_none() {
            return Err("--fast-forward needs a timing model to switch to \
                 (machine.model = \"timing\")"
                .into());
        }
        self.with_ctl(|ctl, p| ctl.fast_forward(p, until));
        Ok(())
    }

    /// Samples the run by `plan`: it starts in the functional model. With
    /// several harts a window measures the machine: all threads'
    /// instructions against the advance of the latest hart clock (the
    /// run's simulated time is that clock). Fails on a machine without a
    /// timing model.
    pub fn sample(&mut self, plan: Sampling) -> Result<(), String> {
        if self.memsys.is_none() {
            return Err("--sample needs a timing model to sample with \
                 (machine.model = \"timing\")"
                .into());
        }
        self.with_ctl(|ctl, p| ctl.sample(p, plan));
        Ok(())
    }

    /// The model timing the run now.
    pub fn model(&self) -> Model {
        if self.memsys.is_some() {
            Model::Timing
        } else {
            Model::Functional
        }
    }

    /// Resets the statistics after exactly `insns` instructions (all
    /// threads): what a fast-forward by instruction count does without the
    /// switch, so a run timed throughout can be compared with one.
    pub fn reset_stats_at(&mut self, insns: u64) {
        self.roi.ctl.reset_stats_at(insns);
    }

    /// Runs `f` on the run control and this process (which it drives).
    fn with_ctl<T>(
        &mut self,
        f: impl FnOnce(&mut RunControl<Box<Outcome>>, &mut Process) -> T,
    ) -> T {
        let mut ctl = std::mem::take(&mut self.roi.ctl);
        let out = f(&mut ctl, self);
        self.roi.ctl = ctl;
        out
    }

    /// Instructions left before the next point at an instruction count (a
    /// fast-forward's end, a statistics reset or a sampling window's edge);
    /// `None`: none pending.
    pub(crate) fn insns_to_next_point(&self) -> Option<u64> {
        let next = [self.next_exact_point(), self.roi.ctl.next_sample_point()]
            .into_iter()
            .flatten()
            .min()?;
        Some(next.saturating_sub(self.threads.total_insns))
    }

    /// Instructions left before the next point that must come at exactly
    /// its instruction count (a fast-forward's end or a statistics reset):
    /// the turn before it stops mid-block. Sampling's edges come at the
    /// end of the block that reaches them instead: a stop mid-block decodes
    /// a block from there, whose fetch refills the hart's instruction TLB,
    /// and blocks are charged their fetch lines only while that TLB has
    /// their page (`docs/regions-of-interest.md`), so stops every window
    /// would time the run differently.
    pub(crate) fn insns_to_next_exact_point(&self) -> Option<u64> {
        Some(
            self.next_exact_point()?
                .saturating_sub(self.threads.total_insns),
        )
    }

    fn next_exact_point(&self) -> Option<u64> {
        [self.roi.ctl.next_exact_point(), self.checkpoint_insns()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Acts on the points at an instruction count that have been reached.
    pub(crate) fn check_points(&mut self) {
        self.with_ctl(|ctl, p| ctl.check_points(p));
    }

    /// Acts on marker `op` with argument `arg` that the current thread ran.
    pub(crate) fn marker(&mut self, op: rvnvmm_isa::MarkerOp, arg: u64) {
        match self.with_ctl(|ctl, p| ctl.marker(p, op, arg)) {
            Some(MarkerAction::Exit(code)) => self.exit = Some(ExitKind::Code(i32::from(code))),
            Some(MarkerAction::Checkpoint) if !self.checkpoint_marker() => self.roi.ctl.note_once(
                "checkpoint",
                "a `checkpoint` marker was ignored: this run cannot be checkpointed \
                     (a forked child, --gdb, --sample, --crash-at)",
            ),
            Some(MarkerAction::Checkpoint) | None => {}
        }
    }

    /// What the sampled run reports at its end.
    pub(crate) fn sampling_outcome(&self) -> Option<SamplingOutcome> {
        self.roi
            .ctl
            .sampling_outcome(self.threads.total_insns, self.opts.hart.clock_hz)
    }

    /// Switches to `to`: whether the model changed. The timing model
    /// comes back with its caches and controllers as it left them (a new
    /// one, cold, the first time); the decoded blocks are re-timed.
    fn switch_to(&mut self, to: Model) -> Result<bool, String> {
        if self.model() == to {
            return Ok(false);
        }
        if to == Model::Timing && self.roi.models.as_ref().is_none_or(|m| m.parked.is_none()) {
            return Err(
                "a `switch timing` marker was ignored: the machine has no timing model \
                 (machine.model = \"functional\")"
                    .into(),
            );
        }
        let models = self.roi.models.get_or_insert_with(|| Models {
            timing_costs: self.threads.cpus[0].core.costs.clone(),
            parked: None,
        });
        let costs = match to {
            Model::Timing => {
                self.memsys = models.parked.take();
                models.timing_costs.clone()
            }
            Model::Functional => {
                models.parked = self.memsys.take();
                CoreCosts::FUNCTIONAL
            }
        };
        self.set_costs(costs);
        Ok(true)
    }

    /// Gives every core `costs` and re-times the decoded blocks (which
    /// carry them and the timing model's fetch lines); translations stay,
    /// each entered only by runs of the kind it was made for
    /// (`CodeCache::retime`).
    fn set_costs(&mut self, costs: CoreCosts) {
        for c in &mut self.threads.cpus {
            c.core.costs = costs.clone();
        }
        self.memory.code.retime_for(&costs, self.memsys.as_deref());
        // A TLB model starts empty: the harts' software TLBs, which must
        // hold no more than it, start so too. Without one they stay, as
        // they would in a run timed throughout (a hart charges the fetch of
        // an already decoded block only while its fetch TLB has the page).
        let tlb_model = self
            .memsys
            .as_deref()
            .is_some_and(rvnvmm_hart::TimingModel::has_tlb);
        for t in &mut self.threads.all {
            if tlb_model && t.state != ThreadState::Exited {
                t.hart.translations_changed();
            }
        }
    }

    /// The memory system, attached or parked.
    pub(crate) fn any_memsys(&mut self) -> Option<&mut (dyn MemoryModel + 'static)> {
        let parked = self
            .roi
            .models
            .as_mut()
            .and_then(|m| m.parked.as_deref_mut());
        self.memsys.as_deref_mut().or(parked)
    }
}

/// The process as its run control drives it: all threads' instructions,
/// the latest hart clock for a window, the clock of the current thread's
/// hart for a marker.
impl Controlled for Process {
    type Stats = Box<Outcome>;

    fn instructions(&self) -> u64 {
        self.threads.total_insns
    }

    fn hart_time_ns(&self) -> u64 {
        let cycles = self
            .threads
            .all
            .get(self.threads.current)
            .map_or(0, |t| self.threads.cpus[t.cpu].core.cycles);
        self.cycles_to_ns(cycles)
    }

    fn switch_model(&mut self, to: Model) -> Result<bool, String> {
        self.switch_to(to)
    }

    /// Zeroes the statistics: from here on they count the region.
    fn reset_stats(&mut self) -> ResetPoint {
        let cycles: Vec<u64> = self.threads.cpus.iter().map(|c| c.core.cycles).collect();
        let latest = cycles.iter().copied().max().unwrap_or(0);
        let point = ResetPoint {
            instructions: self.threads.total_insns,
            sim_time_ns: self.cycles_to_ns(latest),
        };
        self.roi.base = StatsBase {
            point: Some(point),
            insns: self.threads.total_insns,
            cycles,
            latest_cycles: latest,
            thread_insns: self
                .threads
                .all
                .iter()
                .map(|t| (t.tid, t.hart.instret))
                .collect(),
            blocks_decoded: self.memory.code.blocks_decoded,
        };
        for t in &mut self.threads.all {
            t.hart.stats = Default::default();
        }
        for c in &mut self.threads.cpus {
            c.instret = 0;
        }
        // Threads that ended before the region have nothing in it.
        self.threads.exited.clear();
        self.memory.aspace.page_stats = Default::default();
        self.memory.aspace.numa.reset_counters();
        if let Some(m) = self.any_memsys() {
            m.reset_stats();
        }
        point
    }

    fn stats(&mut self) -> Box<Outcome> {
        Box::new(self.outcome_now(false))
    }

    fn read_guest_string(&mut self, addr: u64, max: usize) -> Option<Vec<u8>> {
        let mut bytes = self.read_cstr(addr).ok()?;
        bytes.truncate(max);
        Some(bytes)
    }

    fn sample_counters(&mut self) -> SampleCounters {
        let cycles = self.threads.latest_cycles();
        let instructions = self.threads.total_insns;
        SampleCounters::of(instructions, cycles, self.any_memsys().map(|m| &*m))
    }

    fn cycles_to_ns(&self, cycles: u64) -> u64 {
        Process::cycles_to_ns(self, cycles)
    }
}
