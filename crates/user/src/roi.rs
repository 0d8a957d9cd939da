//! Regions of interest (`docs/regions-of-interest.md`): what the guest's
//! marker instructions (`rvnvmm_isa::marker`) do in user mode — reset the
//! statistics, append a named snapshot of them, switch between the
//! functional and the timing model, end the run — and the fast-forward of
//! `rvnvmm run --fast-forward`.

use crate::process::{ExitKind, Outcome, Process, ThreadState};
use rvnvmm_hart::CoreCosts;
use rvnvmm_isa::marker::{MarkerOp, SWITCH_TO_FUNCTIONAL, SWITCH_TO_TIMING};
use rvnvmm_memsys::MemorySystem;
use std::collections::HashMap;

/// Longest snapshot name read from the guest; longer ones are cut.
const MAX_NAME_BYTES: usize = 256;

/// Where a fast-forward in the functional model ends and the timing model
/// takes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastForward {
    /// After this many instructions (all threads).
    Insns(u64),
    /// At the guest's first `switch timing` marker.
    Marker,
}

/// Which model times the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// One cycle per instruction, no memory system: fastest.
    Functional,
    /// The in-order core's costs and the memory system.
    Timing,
}

impl Model {
    /// Its name in the statistics.
    pub fn name(self) -> &'static str {
        match self {
            Model::Functional => "functional",
            Model::Timing => "timing",
        }
    }
}

/// A change of model during the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSwitch {
    /// The model from here on.
    pub to: Model,
    /// Instructions retired before it (all threads, since the start).
    pub instructions: u64,
    /// Simulated time of the hart that switched, in ns since the start.
    pub sim_time_ns: u64,
}

/// A named snapshot of the statistics (a `dump` marker).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The name the guest gave (`snapshotN` if none).
    pub name: String,
    /// Instructions retired before it (all threads, since the start).
    pub instructions: u64,
    /// Simulated time of the hart that took it, in ns since the start.
    pub sim_time_ns: u64,
    /// The statistics at that point, counting from the last reset.
    pub stats: Box<Outcome>,
}

/// Where the statistics were last reset (a `reset` marker, or the switch of
/// a fast-forward).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResetPoint {
    /// Instructions retired before it (all threads, since the start).
    pub instructions: u64,
    /// The latest hart clock then, in ns since the start.
    pub sim_time_ns: u64,
}

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

/// The model state of a run that can switch models.
pub(crate) struct Models {
    /// The timing model's core costs (`[core]`).
    timing_costs: CoreCosts,
    /// The memory system while the functional model runs.
    parked: Option<MemorySystem>,
    /// A pending fast-forward.
    fast_forward: Option<FastForward>,
}

/// The region-of-interest state of a process.
#[derive(Default)]
pub(crate) struct Roi {
    pub(crate) base: StatsBase,
    pub(crate) snapshots: Vec<Snapshot>,
    pub(crate) switches: Vec<ModelSwitch>,
    pub(crate) models: Option<Models>,
    /// A pending statistics reset at this instruction count.
    pub(crate) reset_at: Option<u64>,
    /// `checkpoint` markers are restore points (`checkpoint.rs`).
    pub(crate) restore_points: bool,
    /// The point `--checkpoint-at insns=N|time=NS` stops the run at.
    pub(crate) checkpoint_at: Option<crate::process::CrashAt>,
    /// The last checkpoint stop was a marker's.
    pub(crate) stopped_at_marker: bool,
    /// The periodic sampling of `rvnvmm run --sample`.
    pub(crate) sampling: Option<crate::sampling::Sampler>,
    /// Marker operations already reported as ignored (once each).
    noted: Vec<&'static str>,
}

impl Process {
    /// Starts the run in the functional model: the timing model (this
    /// process's memory system and the cores' costs) takes over at `until`.
    /// The statistics count from that switch. Fails on a machine without a
    /// timing model.
    pub fn fast_forward(&mut self, until: FastForward) -> Result<(), String> {
        let Some(memsys) = self.memsys.take() else {
            return Err("--fast-forward needs a timing model to switch to \
                 (machine.model = \"timing\")"
                .into());
        };
        self.roi.models = Some(Models {
            timing_costs: self.cpus[0].core.costs.clone(),
            parked: Some(memsys),
            fast_forward: Some(until),
        });
        self.set_costs(CoreCosts::FUNCTIONAL);
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
        self.roi.reset_at = Some(insns);
    }

    /// Instructions left before the next point at an instruction count (a
    /// fast-forward's end, a statistics reset or a sampling window's edge);
    /// `None`: none pending.
    pub(crate) fn insns_to_next_point(&self) -> Option<u64> {
        let next = [self.next_exact_point(), self.next_sample_point()]
            .into_iter()
            .flatten()
            .min()?;
        Some(next.saturating_sub(self.total_insns))
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
        Some(self.next_exact_point()?.saturating_sub(self.total_insns))
    }

    fn next_exact_point(&self) -> Option<u64> {
        let switch = match self.roi.models.as_ref().and_then(|m| m.fast_forward) {
            Some(FastForward::Insns(n)) => Some(n),
            _ => None,
        };
        [switch, self.roi.reset_at, self.checkpoint_insns()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Acts on the points at an instruction count that have been reached.
    pub(crate) fn check_points(&mut self) {
        let at = self.total_insns;
        if self.roi.reset_at.is_some_and(|n| at >= n) {
            self.roi.reset_at = None;
            self.reset_stats();
        }
        let switch = self.roi.models.as_ref().and_then(|m| m.fast_forward);
        if matches!(switch, Some(FastForward::Insns(n)) if at >= n) {
            self.end_fast_forward();
        }
        self.check_sample_points();
    }

    /// The switch at the end of a fast-forward: to the timing model, with
    /// the statistics reset.
    fn end_fast_forward(&mut self) {
        if let Some(m) = self.roi.models.as_mut() {
            m.fast_forward = None;
        }
        self.switch_model(Model::Timing);
        self.reset_stats();
    }

    /// Acts on marker `op` with argument `arg` that the current thread ran.
    pub(crate) fn marker(&mut self, op: MarkerOp, arg: u64) {
        match op {
            MarkerOp::ResetStats => self.reset_stats(),
            MarkerOp::DumpStats => {
                let name = self.marker_name(arg);
                self.dump_stats(name);
            }
            MarkerOp::SwitchModel if self.is_sampled() => self.note_once(
                "switch-sampled",
                "a `switch` marker was ignored: --sample decides the model",
            ),
            MarkerOp::SwitchModel => match arg {
                SWITCH_TO_TIMING
                    if self
                        .roi
                        .models
                        .as_ref()
                        .is_some_and(|m| m.fast_forward == Some(FastForward::Marker)) =>
                {
                    self.end_fast_forward()
                }
                SWITCH_TO_TIMING if self.roi.models.is_none() && self.memsys.is_none() => self
                    .note_once(
                        "switch",
                        "a `switch timing` marker was ignored: the machine has no timing model \
                         (machine.model = \"functional\")",
                    ),
                SWITCH_TO_TIMING => self.switch_model(Model::Timing),
                SWITCH_TO_FUNCTIONAL => self.switch_model(Model::Functional),
                _ => self.note_once(
                    "switch-arg",
                    "a `switch` marker with an argument other than 0 (functional) or 1 (timing) was ignored",
                ),
            },
            MarkerOp::Exit => self.exit = Some(ExitKind::Code((arg & 0xff) as i32)),
            MarkerOp::Checkpoint => {
                if !self.checkpoint_marker() {
                    self.note_once(
                        "checkpoint",
                        "a `checkpoint` marker was ignored: this run cannot be checkpointed \
                         (a forked child, --gdb, --sample, --crash-at)",
                    )
                }
            }
            MarkerOp::Unknown(_) => self.note_once(
                "unknown",
                "a marker with an unassigned code (slti x0 with 0x7a0, 0x7a6..0x7af) was ignored",
            ),
        }
    }

    /// Says `text` on stderr, the first time only for `what`.
    fn note_once(&mut self, what: &'static str, text: &str) {
        if !self.roi.noted.contains(&what) {
            self.roi.noted.push(what);
            eprintln!("rvnvmm: {text}");
        }
    }

    /// The snapshot name at guest address `addr` (0: numbered).
    fn marker_name(&mut self, addr: u64) -> String {
        let numbered = format!("snapshot{}", self.roi.snapshots.len() + 1);
        if addr == 0 {
            return numbered;
        }
        match self.read_cstr(addr) {
            Ok(mut bytes) => {
                bytes.truncate(MAX_NAME_BYTES);
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Err(_) => {
                self.note_once(
                    "dump-name",
                    "a `dump` marker's name pointer was unreadable: the snapshot is numbered",
                );
                numbered
            }
        }
    }

    /// Appends a snapshot named `name` of the statistics as they are now.
    pub(crate) fn dump_stats(&mut self, name: String) {
        let stats = Box::new(self.outcome_now(false));
        let (instructions, sim_time_ns) = self.here();
        self.roi.snapshots.push(Snapshot {
            name,
            instructions,
            sim_time_ns,
            stats,
        });
    }

    /// Instructions since the start, and the current hart's time in ns.
    fn here(&self) -> (u64, u64) {
        let cycles = self
            .threads
            .get(self.current)
            .map_or(0, |t| self.cpus[t.cpu].core.cycles);
        (self.total_insns, self.cycles_to_ns(cycles))
    }

    /// Zeroes the statistics: from here on they count the region.
    pub(crate) fn reset_stats(&mut self) {
        let cycles: Vec<u64> = self.cpus.iter().map(|c| c.core.cycles).collect();
        let latest = cycles.iter().copied().max().unwrap_or(0);
        self.roi.base = StatsBase {
            point: Some(ResetPoint {
                instructions: self.total_insns,
                sim_time_ns: self.cycles_to_ns(latest),
            }),
            insns: self.total_insns,
            cycles,
            latest_cycles: latest,
            thread_insns: self
                .threads
                .iter()
                .map(|t| (t.tid, t.hart.instret))
                .collect(),
            blocks_decoded: self.code.blocks_decoded,
        };
        for t in &mut self.threads {
            t.hart.stats = Default::default();
        }
        for c in &mut self.cpus {
            c.instret = 0;
        }
        // Threads that ended before the region have nothing in it.
        self.exited.clear();
        self.aspace.page_stats = Default::default();
        let parked = self.roi.models.as_mut().and_then(|m| m.parked.as_mut());
        if let Some(m) = self.memsys.as_mut().or(parked) {
            m.reset_stats();
        }
    }

    /// Switches to `to` (nothing if it runs already). The timing model
    /// comes back with its caches and controllers as it left them (a new
    /// one, cold, the first time); the decoded blocks are re-timed.
    pub(crate) fn switch_model(&mut self, to: Model) {
        if self.model() == to {
            return;
        }
        self.switch_model_quietly(to);
        let (instructions, sim_time_ns) = self.here();
        self.roi.switches.push(ModelSwitch {
            to,
            instructions,
            sim_time_ns,
        });
    }

    /// Switches to `to` as `switch_model` does, without recording it in
    /// `model_switches` (sampling's switches are its windows).
    pub(crate) fn switch_model_quietly(&mut self, to: Model) {
        if self.model() == to {
            return;
        }
        let models = self.roi.models.get_or_insert_with(|| Models {
            timing_costs: self.cpus[0].core.costs.clone(),
            parked: None,
            fast_forward: None,
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
    }

    /// Gives every core `costs` and re-times the decoded blocks (which
    /// carry them and the timing model's fetch lines); translations stay,
    /// each entered only by runs of the kind it was made for
    /// (`CodeCache::retime`).
    fn set_costs(&mut self, costs: CoreCosts) {
        for c in &mut self.cpus {
            c.core.costs = costs.clone();
        }
        let shift = self
            .memsys
            .as_ref()
            .map(rvnvmm_hart::TimingModel::fetch_line_shift);
        self.code.retime(&costs, shift);
        // A TLB model starts empty: the harts' software TLBs, which must
        // hold no more than it, start so too. Without one they stay, as
        // they would in a run timed throughout (a hart charges the fetch of
        // an already decoded block only while its fetch TLB has the page).
        let tlb_model = self
            .memsys
            .as_ref()
            .is_some_and(rvnvmm_hart::TimingModel::has_tlb);
        for t in &mut self.threads {
            if tlb_model && t.state != ThreadState::Exited {
                t.hart.translations_changed();
            }
        }
    }

    /// The memory system, attached or parked.
    pub(crate) fn any_memsys(&mut self) -> Option<&mut MemorySystem> {
        let parked = self.roi.models.as_mut().and_then(|m| m.parked.as_mut());
        self.memsys.as_mut().or(parked)
    }
}
