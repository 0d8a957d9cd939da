//! Run control of a simulated machine (`docs/regions-of-interest.md`): what
//! the guest's marker instructions (`rvnvmm_isa::marker`) do — reset the
//! statistics, append a named snapshot of them, switch between the
//! functional and the timing model, end the run, ask for a checkpoint —,
//! the fast-forward of `--fast-forward`, a statistics reset at an
//! instruction count and the periodic sampling of `--sample` ([`sampling`]).
//!
//! One [`RunControl`] does this for user mode's process and for the full
//! system's board machine alike: it drives the machine through the
//! [`Controlled`] trait, which each of them implements, and keeps the
//! bookkeeping the statistics report (the snapshots, the last reset, the
//! model switches, the sampling windows; their JSON is [`json`]'s).
//!
//! ```
//! use rvnvmm_isa::MarkerOp;
//! use rvnvmm_runctl::{Controlled, Model, ResetPoint, RunControl, SampleCounters};
//!
//! /// A machine of one hart that retires an instruction a cycle at 1 GHz.
//! #[derive(Default)]
//! struct Toy { insns: u64, timed: bool }
//!
//! impl Controlled for Toy {
//!     type Stats = u64;
//!     fn instructions(&self) -> u64 { self.insns }
//!     fn hart_time_ns(&self) -> u64 { self.insns }
//!     fn switch_model(&mut self, to: Model) -> Result<bool, String> {
//!         let changed = self.timed != (to == Model::Timing);
//!         self.timed = to == Model::Timing;
//!         Ok(changed)
//!     }
//!     fn reset_stats(&mut self) -> ResetPoint {
//!         ResetPoint { instructions: self.insns, sim_time_ns: self.insns }
//!     }
//!     fn stats(&mut self) -> u64 { self.insns }
//!     fn read_guest_string(&mut self, _addr: u64, _max: usize) -> Option<Vec<u8>> { None }
//!     fn sample_counters(&mut self) -> SampleCounters {
//!         SampleCounters { instructions: self.insns, cycles: self.insns, ..Default::default() }
//!     }
//!     fn cycles_to_ns(&self, cycles: u64) -> u64 { cycles }
//! }
//!
//! let (mut toy, mut ctl) = (Toy::default(), RunControl::new());
//! toy.insns = 10;
//! ctl.marker(&mut toy, MarkerOp::SwitchModel, 1);
//! toy.insns = 25;
//! ctl.marker(&mut toy, MarkerOp::DumpStats, 0);
//! assert_eq!(ctl.switches()[0].instructions, 10);
//! assert_eq!(ctl.snapshots()[0].name, "snapshot1");
//! assert_eq!(ctl.snapshots()[0].stats, 25);
//! ```
#![forbid(unsafe_code)]

pub mod args;
pub mod json;
pub mod sampling;
mod stop_at;

pub use args::{parse_fast_forward, parse_insns, parse_sample, parse_stop_at};
pub use json::{reset_json, sampling_json, snapshot_json, switches_json};
pub use sampling::{
    estimate, t_quantile_95, Estimate, SampleCounters, SampleWindow, Sampler, Sampling,
    SamplingOutcome, CONFIDENCE,
};
pub use stop_at::StopAt;

use rvnvmm_isa::marker::{MarkerOp, SWITCH_TO_FUNCTIONAL, SWITCH_TO_TIMING};

/// Longest snapshot name read from the guest; longer ones are cut.
pub const MAX_NAME_BYTES: usize = 256;

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
pub struct Snapshot<S> {
    /// The name the guest gave (`snapshotN` if none).
    pub name: String,
    /// Instructions retired before it (all threads, since the start).
    pub instructions: u64,
    /// Simulated time of the hart that took it, in ns since the start.
    pub sim_time_ns: u64,
    /// The statistics at that point, counting from the last reset.
    pub stats: S,
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

/// A simulated machine as its run control sees it: user mode's process,
/// the full system's board machine. The run control calls it between
/// turns (at a marker, at a point it asked the machine to stop at).
pub trait Controlled {
    /// What a snapshot keeps of the statistics.
    type Stats;
    /// Instructions of all harts (threads) since the start (cheap: asked
    /// at every check).
    fn instructions(&self) -> u64;
    /// Simulated time of the hart that ran last (the one that ran a
    /// marker), in ns since the start.
    fn hart_time_ns(&self) -> u64;
    /// Switches to model `to` (nothing if it runs already), without the
    /// run control's record of it. Whether the model changed; `Err` with
    /// the note to say once when the machine has no timing model.
    fn switch_model(&mut self, to: Model) -> Result<bool, String>;
    /// Zeroes the statistics (they count from here on) and says where.
    fn reset_stats(&mut self) -> ResetPoint;
    /// The statistics now, counting from the last reset, for a snapshot
    /// (the run goes on: nothing is drained).
    fn stats(&mut self) -> Self::Stats;
    /// The NUL-terminated string at guest virtual address `addr` as the
    /// hart that ran last sees it (at most `max` bytes, longer ones cut),
    /// or `None` if unreadable.
    fn read_guest_string(&mut self, addr: u64, max: usize) -> Option<Vec<u8>>;
    /// The counters a sampling window measures, now.
    fn sample_counters(&mut self) -> SampleCounters;
    /// `cycles` of its clock in ns.
    fn cycles_to_ns(&self, cycles: u64) -> u64;
}

/// What a marker leaves to the machine's owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerAction {
    /// End the run with this exit status (an `exit` marker).
    Exit(u8),
    /// A `checkpoint` marker: a restore point, if the run can take one.
    Checkpoint,
}

/// The run control of one run: pending points, the bookkeeping of its
/// regions of interest, the sampler. `S` is what a snapshot keeps of the
/// statistics ([`Controlled::Stats`]).
#[derive(Clone, Debug)]
pub struct RunControl<S> {
    snapshots: Vec<Snapshot<S>>,
    reset: Option<ResetPoint>,
    switches: Vec<ModelSwitch>,
    /// A pending fast-forward.
    fast_forward: Option<FastForward>,
    /// A pending statistics reset at this instruction count.
    reset_at: Option<u64>,
    /// The periodic sampling of `--sample`.
    sampler: Option<Sampler>,
    /// Notes already said (once each).
    noted: Vec<&'static str>,
}

impl<S> Default for RunControl<S> {
    fn default() -> RunControl<S> {
        RunControl {
            snapshots: Vec::new(),
            reset: None,
            switches: Vec::new(),
            fast_forward: None,
            reset_at: None,
            sampler: None,
            noted: Vec::new(),
        }
    }
}

impl<S> RunControl<S> {
    /// A run timed as its machine is configured, nothing pending.
    pub fn new() -> RunControl<S> {
        RunControl::default()
    }

    /// Starts the run in the functional model: the timing model takes over
    /// at `until`, and the statistics count from that switch. The caller
    /// checked that `m` has a timing model to switch to.
    pub fn fast_forward(&mut self, m: &mut impl Controlled, until: FastForward) {
        let _ = m.switch_model(Model::Functional);
        self.fast_forward = Some(until);
    }

    /// Whether the run is in a fast-forward that the guest's `switch
    /// timing` marker ends.
    pub fn fast_forwarding_to_marker(&self) -> bool {
        self.fast_forward == Some(FastForward::Marker)
    }

    /// Resets the statistics after exactly `insns` instructions (all
    /// threads): what a fast-forward by instruction count does without the
    /// switch, so a run timed throughout can be compared with one.
    pub fn reset_stats_at(&mut self, insns: u64) {
        self.reset_at = Some(insns);
    }

    /// The pending statistics reset of [`RunControl::reset_stats_at`].
    pub fn pending_reset(&self) -> Option<u64> {
        self.reset_at
    }

    /// Samples the run by `plan`: it starts in the functional model. The
    /// caller checked that `m` has a timing model to sample with.
    pub fn sample(&mut self, m: &mut impl Controlled, plan: Sampling) {
        let _ = m.switch_model(Model::Functional);
        self.sampler = Some(Sampler::new(plan));
    }

    /// Whether the run is sampled.
    pub fn is_sampled(&self) -> bool {
        self.sampler.is_some()
    }

    /// What a sampled run reports at its end, after `total` instructions,
    /// at `clock_hz`.
    pub fn sampling_outcome(&self, total: u64, clock_hz: u64) -> Option<SamplingOutcome> {
        Some(self.sampler.as_ref()?.outcome(total, clock_hz))
    }

    /// The next point at an instruction count that must come at exactly
    /// that count (a fast-forward's end or a statistics reset): the turn
    /// before it stops mid-block.
    pub fn next_exact_point(&self) -> Option<u64> {
        let switch = match self.fast_forward {
            Some(FastForward::Insns(n)) => Some(n),
            _ => None,
        };
        [switch, self.reset_at].into_iter().flatten().min()
    }

    /// The instruction count of the sampler's next change of phase, which
    /// comes at the end of the block that reaches it.
    pub fn next_sample_point(&self) -> Option<u64> {
        self.sampler.as_ref().map(Sampler::next_point)
    }

    /// Acts on the points at an instruction count that `m` has reached.
    pub fn check_points(&mut self, m: &mut impl Controlled<Stats = S>) {
        let at = m.instructions();
        if self.reset_at.is_some_and(|n| at >= n) {
            self.reset_at = None;
            self.reset(m);
        }
        if matches!(self.fast_forward, Some(FastForward::Insns(n)) if at >= n) {
            self.end_fast_forward(m);
        }
        if let Some(s) = self.sampler.as_mut() {
            s.check_points(m);
        }
    }

    /// The switch at the end of a fast-forward: to the timing model, with
    /// the statistics reset.
    fn end_fast_forward(&mut self, m: &mut impl Controlled<Stats = S>) {
        self.fast_forward = None;
        self.switch_model(m, Model::Timing);
        self.reset(m);
    }

    /// Resets `m`'s statistics and records where.
    pub fn reset(&mut self, m: &mut impl Controlled<Stats = S>) {
        self.reset = Some(m.reset_stats());
    }

    /// Switches `m` to `to` and lists the switch if the model changed;
    /// `Err`: the machine has no timing model, with the note to say.
    fn switch_model(&mut self, m: &mut impl Controlled<Stats = S>, to: Model) {
        match m.switch_model(to) {
            Ok(true) => self.switches.push(ModelSwitch {
                to,
                instructions: m.instructions(),
                sim_time_ns: m.hart_time_ns(),
            }),
            Ok(false) => {}
            Err(note) => self.note_once("switch", &note),
        }
    }

    /// The timing model starts at a restore point (`docs/checkpoints.md`):
    /// a fast-forward's `checkpoint` marker, or a restore under the timing
    /// model of a checkpoint taken in the functional one. As at a
    /// fast-forward's switch, the statistics count from here; the switch
    /// is listed at the point's instructions and time (the latest hart
    /// clock), which both ways of getting there agree on.
    pub fn timing_from_restore_point(
        &mut self,
        m: &mut impl Controlled<Stats = S>,
        instructions: u64,
        sim_time_ns: u64,
    ) {
        self.fast_forward = None;
        self.switches.push(ModelSwitch {
            to: Model::Timing,
            instructions,
            sim_time_ns,
        });
        self.reset(m);
    }

    /// Acts on marker `op` with argument `arg` that `m`'s hart that ran
    /// last ran; what is left to the caller: the end of the run, a
    /// checkpoint.
    pub fn marker(
        &mut self,
        m: &mut impl Controlled<Stats = S>,
        op: MarkerOp,
        arg: u64,
    ) -> Option<MarkerAction> {
        match op {
            MarkerOp::ResetStats => self.reset(m),
            MarkerOp::DumpStats => {
                let name = self.marker_name(m, arg);
                let stats = m.stats();
                self.snapshots.push(Snapshot {
                    name,
                    instructions: m.instructions(),
                    sim_time_ns: m.hart_time_ns(),
                    stats,
                });
            }
            MarkerOp::SwitchModel if self.is_sampled() => self.note_once(
                "switch-sampled",
                "a `switch` marker was ignored: --sample decides the model",
            ),
            MarkerOp::SwitchModel => match arg {
                SWITCH_TO_TIMING if self.fast_forwarding_to_marker() => self.end_fast_forward(m),
                SWITCH_TO_TIMING => self.switch_model(m, Model::Timing),
                SWITCH_TO_FUNCTIONAL => self.switch_model(m, Model::Functional),
                _ => self.note_once(
                    "switch-arg",
                    "a `switch` marker with an argument other than 0 (functional) or 1 (timing) was ignored",
                ),
            },
            MarkerOp::Exit => return Some(MarkerAction::Exit((arg & 0xff) as u8)),
            MarkerOp::Checkpoint => return Some(MarkerAction::Checkpoint),
            MarkerOp::Unknown(_) => self.note_once(
                "unknown",
                "a marker with an unassigned code (slti x0 with 0x7a0, 0x7a6..0x7af) was ignored",
            ),
        }
        None
    }

    /// The snapshot name at guest address `addr` (0: numbered).
    fn marker_name(&mut self, m: &mut impl Controlled<Stats = S>, addr: u64) -> String {
        let numbered = format!("snapshot{}", self.snapshots.len() + 1);
        if addr == 0 {
            return numbered;
        }
        match m.read_guest_string(addr, MAX_NAME_BYTES) {
            Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            None => {
                self.note_once(
                    "dump-name",
                    "a `dump` marker's name pointer was unreadable: the snapshot is numbered",
                );
                numbered
            }
        }
    }

    /// Says `text` on stderr, the first time only for `what`.
    pub fn note_once(&mut self, what: &'static str, text: &str) {
        if !self.noted.contains(&what) {
            self.noted.push(what);
            eprintln!("rvnvmm: {text}");
        }
    }

    /// The snapshots taken, in order.
    pub fn snapshots(&self) -> &[Snapshot<S>] {
        &self.snapshots
    }

    /// Takes the snapshots out (the run's end, a restore point's carry).
    pub fn take_snapshots(&mut self) -> Vec<Snapshot<S>> {
        std::mem::take(&mut self.snapshots)
    }

    /// Puts back snapshots taken out by [`RunControl::take_snapshots`].
    pub fn set_snapshots(&mut self, snapshots: Vec<Snapshot<S>>) {
        self.snapshots = snapshots;
    }

    /// Where the statistics were last reset through this run control.
    pub fn reset_point(&self) -> Option<ResetPoint> {
        self.reset
    }

    /// The model switches, in order.
    pub fn switches(&self) -> &[ModelSwitch] {
        &self.switches
    }

    /// The bookkeeping a checkpoint restores: the last reset, the switches
    /// and a pending statistics reset (not a pending fast-forward or
    /// sampling, which are the restoring command's to say).
    pub fn restore(
        &mut self,
        reset: Option<ResetPoint>,
        switches: Vec<ModelSwitch>,
        reset_at: Option<u64>,
    ) {
        self.reset = reset;
        self.switches = switches;
        self.reset_at = reset_at;
    }
}

#[cfg(test)]
mod tests;
