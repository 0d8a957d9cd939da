//! `rvnvmm boot`: the full system's command. Reads the firmware, kernel,
//! initramfs and disk named on the command line, builds the board machine
//! (`rvnvmm_board::machine`), puts the terminal in raw mode, runs the
//! machine until the guest powers off and writes the statistics.
//!
//! The steps, each in the file of its concept: the options and the machine
//! description (`args.rs`), the `Rig` that builds machines (`rig.rs`), the
//! boot files and images and the machine booted from them (`images.rs`),
//! checkpoints restored and restore points (`restore.rs`), the raw terminal
//! (`terminal.rs`), running and ending the run (`run.rs`), and the profile
//! and statistics written after it (`report.rs`).

mod args;
mod images;
mod report;
mod restore;
mod rig;
mod run;
mod terminal;

pub(crate) use args::BootArgs;

use crate::error::BootError;
use args::boot_config;
use images::{boot_files, boot_machine};
use report::{stats_json, write_profile};
use restore::restore_machine;
use rig::Rig;
use run::{arm, exit_status, power_down, run, run_control, take_host_input, Points};
use std::path::PathBuf;
use std::time::Instant;
use terminal::RawTerminal;

/// `rvnvmm boot`: builds the machine (booted, or restored from a
/// checkpoint), runs it under its run control until the guest powers off
/// or the run stops at a point, and writes what the options ask for. The
/// exit status: the guest's, or the crash's or the instruction limit's.
pub fn main(a: BootArgs) -> Result<i32, BootError> {
    let cfg = boot_config(&a)?;
    // Output paths are checked before the run, not after it.
    let check = |what, p: &Option<PathBuf>| {
        p.as_deref()
            .map(|p| crate::output::OutputFile::check(what, p))
            .transpose()
    };
    let dtb_out = check("device tree", &a.dump_dtb)?;
    let stats_out = check("stats", &a.stats)?;
    let profile_out = check("profile", &a.profile)?;
    let mut rig = Rig::new(&a, &cfg)?;
    let nvmm_region = crate::persistence::NvmmRegion::of(&cfg)?;
    let (m, mut boot, restored) = match &a.restore {
        Some(dir) => restore_machine(&a, &mut rig, dir)?,
        None => {
            let files = boot_files(&a)?;
            let (m, boot) = boot_machine(&a, &rig, &files, nvmm_region.as_ref(), dtb_out.as_ref())?;
            rig.boot_files = Some(files);
            (m, Some(boot), None)
        }
    };
    let points = Points::of(&a, &rig)?;
    let mut m = arm(&a, &cfg, m, &points)?;
    let trace_out = check("persistence trace", &a.persist_trace)?;
    if trace_out.is_some() || !a.image_overlays.is_empty() {
        let n = nvmm_region
            .as_ref()
            .ok_or(BootError::NeedsNvmm(if trace_out.is_some() {
                "--persist-trace"
            } else {
                "--image-overlay"
            }))?;
        let mem = m.mem_mut();
        n.apply_overlays(&a.image_overlays, |at, bytes| {
            mem.write(at, bytes);
        })
        .map_err(BootError::Overlay)?;
        if trace_out.is_some() {
            let mut domain = n.domain();
            domain.record_trace();
            mem.set_domain(domain);
        }
    }

    let _raw = RawTerminal::new();
    take_host_input(&a, &mut m);
    let started = Instant::now();
    let mut roi = run_control(&a, &mut m, restored)?;
    let result = run(&a, &rig, &mut m, &mut roi, &mut boot, points)?;
    let host_seconds = started.elapsed().as_secs_f64();
    m.flush();
    if let Err(e) = m.finish_page_heat() {
        eprintln!("rvnvmm: {e}");
    }
    // An overlaid image is a crash state under test: never saved.
    let keeps_image = nvmm_region.as_ref().filter(|_| a.image_overlays.is_empty());
    let crash = power_down(&a, &mut m, &result, keeps_image)?;
    if let Some(out) = &trace_out {
        crate::persistence::write_domain_trace(out, m.mem().domain(), &[], m.instructions())?;
    }
    if let Some(out) = &stats_out {
        let json = stats_json(&cfg, &mut m, &result, host_seconds, crash.as_ref(), roi);
        out.write(json.as_bytes())?;
    }
    if let (Some(out), Some(profile)) = (&profile_out, m.profile()) {
        write_profile(&a, &rig, out, profile)?;
    }
    exit_status(result)
}
