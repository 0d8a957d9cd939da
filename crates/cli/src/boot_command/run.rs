//! Running the machine: the points it stops at, what the options add to
//! it (`arm`), the host's input, its run control, the run itself with its
//! reboots, markers and restore points, the power-down after it and the
//! exit status.

use super::args::BootArgs;
use super::images::boot_images;
use super::restore::restore_point;
use super::rig::Rig;
use crate::checkpoint::RunPoint;
use crate::error::BootError;
use crate::roi::BootControl;
use rvnvmm_board::machine::{BootImages, End, Machine, MachineError};
use rvnvmm_runctl::MarkerAction;
use rvnvmm_runctl::StopAt;

/// The points the machine stops at on its own: a fast-forward's end or a
/// checkpoint's point, not both, nor a crash besides.
#[derive(Clone, Copy)]
pub(super) struct Points {
    /// `--fast-forward insns=N|time=NS`.
    fast_forward: Option<StopAt>,
    /// `--checkpoint-at insns=N|time=NS`.
    checkpoint: Option<StopAt>,
}

impl Points {
    /// The points of the options `a`, checked against each other and the
    /// disk of `rig`.
    pub(super) fn of(a: &BootArgs, rig: &Rig) -> Result<Points, BootError> {
        let point = |p: Option<RunPoint>| match p {
            Some(RunPoint::Point(at)) => Some(at),
            _ => None,
        };
        let (ff_point, checkpoint_point) = (point(a.fast_forward), point(a.checkpoint_at));
        if ff_point.is_some() && (checkpoint_point.is_some() || a.crash_at.is_some()) {
            return Err(BootError::Options(
                "--fast-forward insns=N|time=NS cannot be combined with --checkpoint-at \
                 insns=N|time=NS or --crash-at (one point at a time: take the checkpoint in the \
                 functional model and restore it under the timing model instead)",
            ));
        }
        if ff_point.is_some() && rig.disk.is_some() && !rig.disk_overlay {
            return Err(BootError::Options(
                "--fast-forward insns=N|time=NS cannot be combined with --disk (yet): the disk is \
                 written through to its image, which a restore point cannot carry over; take a \
                 checkpoint (--checkpoint-at, the disk an overlay) and restore it under the timing \
                 model instead",
            ));
        }
        if let (Some(disk), true) = (&rig.disk, rig.disk_overlay) {
            eprintln!(
                "rvnvmm: the disk {} is not written in this run: the guest's writes are kept over \
                 it (and in checkpoints)",
                disk.display()
            );
        }
        Ok(Points {
            fast_forward: ff_point,
            checkpoint: checkpoint_point,
        })
    }
}

/// `m` with what the options `a` add to a run: the crash point, the point
/// it stops at, the profile, the page heat, the debugger.
pub(super) fn arm(
    a: &BootArgs,
    cfg: &rvnvmm_config::Config,
    mut m: Machine,
    points: &Points,
) -> Result<Machine, BootError> {
    if let Some(at) = a.crash_at {
        m = m.with_crash_at(at);
    }
    // Not `None`: that would clear `--crash-at`'s point.
    if let Some(at) = points.fast_forward.or(points.checkpoint) {
        m.set_checkpoint_at(Some(at));
    }
    if a.profile.is_some() {
        m = m.with_profile();
    }
    if let Some(path) = &a.page_heat {
        m = m.with_page_heat(
            crate::page_heat::recorder(cfg, path, a.page_heat_window)
                .map_err(BootError::PageHeat)?,
        );
    }
    if let Some(port) = a.gdb {
        m = m.with_gdb(crate::gdb::wait_for_gdb(port)?);
    }
    Ok(m)
}

/// Starts reading the host's stdin into `m`'s input. After a restore the
/// guest takes input at once: input piped in is read to its end first and
/// held until every hart first idles, so it arrives at the same point
/// whatever the host's timing (a boot holds it back until Linux opens the
/// console, which gives the same). Typing at a terminal arrives as it
/// comes.
pub(super) fn take_host_input(a: &BootArgs, m: &mut Machine) {
    let reader = m.host_input().spawn_reader(std::io::stdin());
    if a.restore.is_some() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let saved = m.host_input().queued_bytes().len();
        let _ = reader.join();
        if m.host_input().queued_bytes().len() > saved {
            m.hold_input_until_idle();
        }
    }
}

/// The run control of the boot of `m`: a fast-forward's, a restored
/// checkpoint's bookkeeping, a sampled boot's, or new.
pub(super) fn run_control(
    a: &BootArgs,
    m: &mut Machine,
    restored: Option<(rvnvmm_checkpoint::Point, BootControl)>,
) -> Result<BootControl, BootError> {
    Ok(match (a.fast_forward, restored) {
        (Some(RunPoint::Marker), restored) => {
            let mut roi = restored.map_or_else(BootControl::new, |(_, roi)| roi);
            crate::roi::fast_forward_to_marker(&mut roi, m)?;
            roi
        }
        // Markers do not end it: the machine is rebuilt timed at the point.
        (Some(RunPoint::Point(_)), restored) => {
            crate::roi::functional_until_timing(m)?;
            restored.map_or_else(BootControl::new, |(_, roi)| roi)
        }
        (None, Some((point, mut roi))) => {
            // A functional checkpoint restored under the timing model: the
            // fast-forward's switch, at the restore point.
            if point.model == "functional" && m.is_timed() {
                roi.timing_from_restore_point(m, point.instructions, point.sim_time_ns);
            }
            roi
        }
        (None, None) => match a.sample {
            Some(plan) => crate::roi::sample(m, plan)?,
            None => BootControl::new(),
        },
    })
}

/// Runs `m` until the guest powers off or the run ends otherwise: reboots
/// it, hands markers and pauses to the run control `roi`, takes restore
/// points (a fast-forward's end, checkpoints) at `points` and `checkpoint`
/// markers.
pub(super) fn run(
    a: &BootArgs,
    rig: &Rig,
    m: &mut Machine,
    roi: &mut BootControl,
    boot: &mut Option<BootImages>,
    points: Points,
) -> Result<Result<End, MachineError>, BootError> {
    // The points still ahead: `--fast-forward`'s end, `--checkpoint-at`'s
    // (each reached once).
    let Points {
        fast_forward: mut ff_point,
        checkpoint: checkpoint_point,
    } = points;
    let mut checkpoint_taken = false;
    let mut noted_marker = false;
    Ok(loop {
        let at_marker = match m.run(a.max_insns) {
            Ok(End::Reboot) => {
                // A restored machine loads the boot files its checkpoint
                // names, if they have not changed.
                if boot.is_none() {
                    let files = rig
                        .boot_files
                        .as_ref()
                        .ok_or(BootError::RebootAfterRestore)?;
                    *boot = Some(boot_images(rig, m.board(), files, true, None)?);
                }
                m.reboot(boot.as_ref().expect("the boot images, loaded above"))?;
                continue;
            }
            Ok(End::Marker {
                op: rvnvmm_isa::MarkerOp::Checkpoint,
                ..
            }) => true,
            Ok(End::Checkpoint) => false,
            Ok(End::Pause) => {
                crate::roi::sample_point(roi, m);
                continue;
            }
            Ok(End::Marker { hart, op, arg }) => {
                debug_assert_eq!(
                    hart,
                    m.last_pc().0,
                    "the run control asks the hart that ran last"
                );
                // `checkpoint` markers are taken above.
                if let Some(MarkerAction::Exit(code)) = roi.marker(m, op, arg) {
                    break Ok(End::PowerOff(code.into()));
                }
                continue;
            }
            other => break other,
        };
        if at_marker && roi.is_sampled() {
            if !std::mem::replace(&mut noted_marker, true) {
                eprintln!(
                    "rvnvmm: a `checkpoint` marker was ignored: a sampled run is not checkpointed \
                     (--sample decides the model)"
                );
            }
            continue;
        }
        let disk_written_through = rig.disk.is_some() && !rig.disk_overlay;
        if at_marker && (a.gdb.is_some() || a.profile.is_some() || disk_written_through) {
            if !std::mem::replace(&mut noted_marker, true) {
                eprintln!(
                    "rvnvmm: a `checkpoint` marker was ignored: a machine with a disk written \
                     through to its image (no --checkpoint-at), a debugger or a profile is not \
                     checkpointed (yet)"
                );
            }
            continue;
        }
        // The fast-forward's end: the same restore point as a checkpoint's
        // there, nothing written, the rebuilt machine timed.
        if let (false, Some(at)) = (at_marker, ff_point) {
            ff_point = None;
            restore_point(rig, m, roi, RunPoint::Point(at).trigger(), None, true)?;
            continue;
        }
        let due = !checkpoint_taken
            && match a.checkpoint_at {
                Some(RunPoint::Marker) => at_marker,
                Some(RunPoint::Point(_)) => !at_marker,
                None => false,
            };
        checkpoint_taken |= due;
        let trigger = match (at_marker, a.checkpoint_at) {
            (false, Some(at)) => at.trigger(),
            _ => "marker".to_string(),
        };
        let dir = a.checkpoint_to.as_deref().filter(|_| due);
        restore_point(rig, m, roi, trigger, dir, false)?;
        if due && a.exit_after_checkpoint {
            break Ok(End::Checkpoint);
        }
        // The rebuilt machine stops at the point still ahead if a marker
        // came first.
        if let Some(at) = ff_point.or(checkpoint_point.filter(|_| !checkpoint_taken)) {
            m.set_checkpoint_at(Some(at));
        }
    })
}

/// After the run ended with `result`: the power fails at a crash (the
/// crash's JSON, said on stderr too), or else the NVMM region keeps all
/// the guest stored.
pub(super) fn power_down(
    a: &BootArgs,
    m: &mut Machine,
    result: &Result<End, MachineError>,
    nvmm_region: Option<&crate::persistence::NvmmRegion>,
) -> Result<Option<serde_json::Value>, BootError> {
    if !matches!(result, Ok(End::Crash)) {
        // Powered off, or stopped some other way with the power on: all the
        // guest stored is in NVMM, as after a clean shutdown.
        if let Some(n) = nvmm_region {
            n.save_mem(m.mem())?;
        }
        return Ok(None);
    }
    let image = nvmm_region.and_then(|n| n.image.as_ref());
    let report = m.power_fail(image, a.crash_seed)?;
    let at = crate::persistence::CrashPoint {
        instructions: m.instructions(),
        sim_time_ns: m.cores().iter().map(|c| c.time_ns()).max().unwrap_or(0),
        last_pc: m.last_pc(),
    };
    eprintln!("rvnvmm: {}", crate::persistence::crash_line(&at, &report));
    Ok(Some(crate::persistence::crash_json(
        &at,
        &report,
        m.mem().domain(),
        a.crash_seed,
    )))
}

/// The exit status of a run that ended with `result`.
pub(super) fn exit_status(result: Result<End, MachineError>) -> Result<i32, BootError> {
    // As `rvnvmm run`: the limit is not an error of the run but its own
    // outcome, with its own status.
    if let Err(MachineError::InsnLimit {
        max,
        harts,
        console,
    }) = &result
    {
        eprintln!(
            "rvnvmm: stopped at --max-insns: {max} instructions retired and the guest had not \
             powered off (exit status {})\n  {harts}\n  last console lines:\n    {console}",
            crate::INSN_LIMIT_STATUS
        );
        return Ok(crate::INSN_LIMIT_STATUS);
    }
    match result? {
        End::PowerOff(code) => Ok(i32::from(code)),
        End::Crash => Ok(crate::persistence::CRASH_STATUS),
        End::Checkpoint => Ok(0),
        End::Reboot | End::Marker { .. } | End::Pause => {
            unreachable!("the machine goes on after these")
        }
    }
}
