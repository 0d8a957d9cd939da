//! Checkpoints and restores: the machine of a checkpoint (`--restore`),
//! and restore points, where a run saves its machine (into a checkpoint if
//! asked) and carries on in one rebuilt from what was saved.

use super::args::BootArgs;
use super::rig::Rig;
use crate::error::BootError;
use crate::roi::BootControl;
use rvnvmm_board::machine::{BootImages, Machine};
use rvnvmm_checkpoint::FileIdentity;
use std::path::Path;
use std::time::Instant;

/// Makes a restore point of `m` (`docs/checkpoints.md`): saves it, writes
/// the checkpoint to `dir` if given, and carries on in a machine rebuilt
/// from what was saved, as `--restore` would build it (decoded code,
/// software TLBs and the timing model start cold). A fast-forward by
/// marker ends here, and one by a point if `ends_fast_forward`: the
/// rebuilt machine is timed.
pub(super) fn restore_point(
    rig: &Rig,
    m: &mut Machine,
    roi: &mut BootControl,
    trigger: String,
    dir: Option<&Path>,
    ends_fast_forward: bool,
) -> Result<(), BootError> {
    let started = Instant::now();
    let point = crate::checkpoint::point_now(m, trigger);
    let mut sections = crate::checkpoint::save(m, roi, dir.is_some())?;
    if let Some(dir) = dir {
        let origin = crate::checkpoint::Origin {
            kind: "boot",
            disk: rig.disk.as_deref().filter(|_| rig.disk_overlay),
            boot: rig.boot_files.as_ref(),
        };
        sections = crate::checkpoint::write(origin, &rig.cfg, sections, &point, dir, started)?;
    }
    let ff_ends = ends_fast_forward || roi.fast_forwarding_to_marker();
    let timed = m.is_timed() || ff_ends;
    let mut fresh = rig.blank(Some(m.take_mem()))?;
    if !timed {
        fresh.set_timing(false)?;
    }
    fresh.restore(&sections, false, false)?;
    fresh.set_host_input(m.host_input().clone());
    if let Some(heat) = m.take_page_heat() {
        fresh = fresh.with_page_heat(heat);
    }
    *m = fresh;
    if ff_ends {
        roi.timing_from_restore_point(m, point.instructions, point.sim_time_ns);
    }
    Ok(())
}

/// A machine, the images that reboot it (`None`: load them from the boot
/// files first), and a restored checkpoint's point and run-control
/// bookkeeping.
pub(super) type Built = (
    Machine,
    Option<BootImages>,
    Option<(rvnvmm_checkpoint::Point, BootControl)>,
);

/// The machine of the checkpoint in `dir` (`--restore`), with its disk.
pub(super) fn restore_machine(a: &BootArgs, rig: &mut Rig, dir: &Path) -> Result<Built, BootError> {
    let c = crate::checkpoint::read_for("boot", &rig.cfg, dir)?;
    // The disk: the checkpoint's image (or --disk's), unchanged, with the
    // checkpoint's overlay over it.
    match (&c.manifest.disk, &a.disk) {
        (Some(image), given) => {
            let path = given.clone().unwrap_or_else(|| image.path.clone());
            let now = FileIdentity::of(&path).map_err(|source| BootError::Disk {
                path: path.clone(),
                source,
            })?;
            let differences = image.differences(&now);
            if !differences.is_empty() {
                return Err(BootError::DiskChanged { path, differences });
            }
            rig.disk = Some(path);
            rig.disk_overlay = true;
        }
        (None, Some(_)) => return Err(BootError::DiskNotInCheckpoint),
        (None, None) => {}
    }
    let mut m = rig.blank(None)?;
    m.restore(&c.sections, true, true)?;
    let roi = crate::checkpoint::roi_of(&c.sections)?;
    rig.boot_files = c.manifest.boot;
    Ok((m, None, Some((c.manifest.point, roi))))
}
