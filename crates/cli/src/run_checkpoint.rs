//! `rvnvmm run`'s checkpoints (`docs/checkpoints.md`, "User mode"): the
//! restore points of a run (a `checkpoint` marker, `--checkpoint-at`),
//! writing a checkpoint at one, and the process rebuilt from one, here or
//! by `--restore`. The process's state is written by the user-mode kernel
//! (`rvnvmm_user`, `checkpoint.rs`); the format and the manifest are
//! `rvnvmm boot`'s.

use crate::checkpoint::RunPoint;
use crate::error::CliError;
use crate::RunArgs;
use rvnvmm_checkpoint::{Point, Sections};
use rvnvmm_config::Config;
use rvnvmm_runctl::FastForward;
use rvnvmm_user::{Carried, Options, Outcome, Process};
use std::path::{Path, PathBuf};

/// A checkpoint read for `rvnvmm run --restore`.
pub struct Restored {
    /// The program it runs.
    pub program: String,
    sections: Sections,
    point: Point,
}

/// Reads the checkpoint of a user-mode run in `dir`, checked against the
/// machine `cfg` (memory map, harts, ISA).
pub fn read(cfg: &Config, dir: &Path) -> Result<Restored, CliError> {
    let c = crate::checkpoint::read_for("run", cfg, dir)?;
    let (program, _) = rvnvmm_user::checkpoint_program(&c.sections).map_err(boot_error)?;
    Ok(Restored {
        program,
        sections: c.sections,
        point: c.manifest.point,
    })
}

fn boot_error(e: rvnvmm_checkpoint::CheckpointError) -> CliError {
    crate::error::BootError::from(e).into()
}

/// The process a `--restore` builds from `r` on machine `cfg`.
pub fn restored_process(
    cfg: &Config,
    opts: Options,
    r: &Restored,
    carried: Option<Carried>,
    fast_forward: Option<FastForward>,
) -> Result<Process, CliError> {
    let at_marker = r.point.trigger == "marker";
    rebuild(
        cfg,
        opts,
        &r.sections,
        &r.point,
        carried,
        fast_forward,
        at_marker,
    )
}

/// The process saved in `sections` at `point`, with the timing model of
/// `cfg` attached cold. A fast-forward still to come goes on; one the point
/// ended (its instruction count, or a `checkpoint` marker for `marker`),
/// and a point taken in the functional model restored under the timing
/// one, switch to the timing model at once with the statistics reset, as
/// `--fast-forward` does at its end.
fn rebuild(
    cfg: &Config,
    opts: Options,
    sections: &Sections,
    point: &Point,
    carried: Option<Carried>,
    fast_forward: Option<FastForward>,
    at_marker: bool,
) -> Result<Process, CliError> {
    let mut p = Process::restore_checkpoint(opts, sections, carried).map_err(boot_error)?;
    p = p.with_control_pages(rvnvmm_memsys::control::ControlPage::pages(cfg));
    let timed = cfg.machine.model == rvnvmm_config::Model::Timing;
    if timed {
        p = p.with_memory_model(Box::new(rvnvmm_memsys::MemorySystem::for_machine(cfg)?));
    }
    let pending = fast_forward.filter(|f| match f {
        FastForward::Insns(n) => point.instructions < *n,
        FastForward::Marker => !at_marker,
    });
    if let Some(until) = pending {
        p.fast_forward(until).map_err(CliError::Usage)?;
    } else if timed && point.model == "functional" {
        p.fast_forward(FastForward::Insns(point.instructions))
            .map_err(CliError::Usage)?;
    }
    Ok(p)
}

/// What comes after a restore point.
pub enum AfterPoint {
    /// The run goes on with this process.
    Goes(Box<Process>),
    /// The run ends (`--exit-after-checkpoint`) with this outcome.
    Ends(Box<Process>, Box<Outcome>),
}

/// The restore points of a run and the checkpoint it writes.
pub struct Points {
    at: Option<RunPoint>,
    to: Option<PathBuf>,
    exit_after: bool,
    /// Restore points can be made: no debugger, sampling or crash.
    enabled: bool,
    /// `--checkpoint-at insns=N|time=NS` was reached.
    point_taken: bool,
    written: bool,
}

impl Points {
    /// The points `a` asks for.
    pub fn new(a: &RunArgs) -> Points {
        Points {
            at: a.checkpoint_at,
            to: a.checkpoint_to.clone(),
            exit_after: a.exit_after_checkpoint,
            enabled: a.gdb.is_none()
                && a.sample.is_none()
                && a.crash_at.is_none()
                && a.persist_events.is_none(),
            point_taken: false,
            written: false,
        }
    }

    /// Has `p` stop at the points still to come.
    pub fn arm(&self, p: &mut Process) {
        if !self.enabled {
            return;
        }
        p.enable_restore_points();
        if let (Some(RunPoint::Point(at)), false) = (self.at, self.point_taken) {
            p.checkpoint_at(at);
        }
    }

    /// `process` stopped at a restore point (`stopped` is its outcome
    /// there): saves it, writes the checkpoint if this is the one asked
    /// for, and rebuilds it from what was saved.
    pub fn restore_point(
        &mut self,
        cfg: &Config,
        opts: &Options,
        mut process: Process,
        stopped: Outcome,
        fast_forward: Option<FastForward>,
    ) -> Result<AfterPoint, CliError> {
        let started = std::time::Instant::now();
        let at_marker = process.stopped_at_marker();
        if !at_marker {
            self.point_taken = true;
        }
        let (instructions, sim_time_ns) = process.point_now();
        let trigger = match (at_marker, self.at) {
            (false, Some(at)) => at.trigger(),
            _ => "marker".to_string(),
        };
        let point = Point {
            instructions,
            sim_time_ns,
            model: process.model().name().into(),
            trigger,
        };
        let write_to = match self.at {
            Some(RunPoint::Marker) if at_marker => self.to.clone(),
            Some(RunPoint::Point(_)) if !at_marker => self.to.clone(),
            _ => None,
        }
        .filter(|_| !self.written);
        let mut sections = Sections::new();
        process
            .save_checkpoint(&mut sections, write_to.is_none())
            .map_err(boot_error)?;
        if let Some(dir) = &write_to {
            self.written = true;
            sections = crate::checkpoint::write(
                crate::checkpoint::Origin {
                    kind: "run",
                    disk: None,
                    boot: None,
                },
                cfg,
                sections,
                &point,
                dir,
                started,
            )?;
            if self.exit_after {
                return Ok(AfterPoint::Ends(Box::new(process), Box::new(stopped)));
            }
        }
        let carried = process.carry();
        let mut p = rebuild(
            cfg,
            opts.clone(),
            &sections,
            &point,
            Some(carried),
            fast_forward,
            at_marker,
        )?;
        self.arm(&mut p);
        Ok(AfterPoint::Goes(Box::new(p)))
    }
}
