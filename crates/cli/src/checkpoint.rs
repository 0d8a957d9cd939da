//! `rvnvmm boot`'s checkpoints (`docs/checkpoints.md`): when to take one,
//! the manifest, writing one, making a restore point of the running
//! machine, and checking a checkpoint against the machine it is restored
//! on. The format is `rvnvmm_checkpoint`'s; the machine's state is written
//! by its parts (`Machine::save`).

use crate::roi::BootControl;
use rvnvmm_board::machine::Machine;
use rvnvmm_checkpoint::{
    Checkpoint, FileIdentity, Manifest, MemoryMap, Point, Region, Sections, FORMAT_VERSION,
};
use rvnvmm_runctl::StopAt;
use std::path::Path;
use std::time::Instant;

/// The checkpoint section of the statistics' region bookkeeping.
pub const ROI_SECTION: &str = "roi";

/// A point of a run or boot: where `--checkpoint-at` takes the checkpoint,
/// or where `boot --fast-forward` switches to the timing model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunPoint {
    /// At the guest's `checkpoint` marker (`nvmm-marker checkpoint`).
    Marker,
    /// After exactly N instructions (all harts), or when the next hart to
    /// run reaches NS of simulated time.
    Point(StopAt),
}

impl RunPoint {
    /// How the manifest names it.
    pub fn trigger(self) -> String {
        match self {
            RunPoint::Marker => "marker".into(),
            RunPoint::Point(StopAt::Insns(n)) => format!("insns={n}"),
            RunPoint::Point(StopAt::TimeNs(ns)) => format!("time={ns}"),
        }
    }
}

/// Parses `--checkpoint-at` (`run`, `boot`) and `boot --fast-forward`: `insns=N`,
/// `time=NS` or `marker`.
pub fn parse_run_point(s: &str) -> Result<RunPoint, String> {
    if s == "marker" {
        return Ok(RunPoint::Marker);
    }
    rvnvmm_runctl::parse_stop_at(s)
        .map(RunPoint::Point)
        .map_err(|_| format!("wants insns=N, time=NS or marker, got '{s}'"))
}

/// The memory map, harts and ISA of the machine `cfg` describes: what a
/// checkpoint must be restored on.
pub fn memory_map(cfg: &rvnvmm_config::Config) -> Result<MemoryMap, rvnvmm_isa::IsaError> {
    let mut regions = Vec::new();
    for (kind, name) in [
        (rvnvmm_config::RegionKind::Dram, "dram"),
        (rvnvmm_config::RegionKind::Nvmm, "nvmm"),
    ] {
        for (n, r) in cfg.memory.regions_of_kind(kind) {
            regions.push(Region {
                name: n.to_string(),
                kind: name.to_string(),
                base: r.base,
                size: r.size,
            });
        }
    }
    regions.sort_by_key(|r| r.base);
    let harts = u64::from(cfg.machine.harts);
    let threads = u64::from(cfg.machine.threads_per_core.max(1));
    Ok(MemoryMap {
        regions,
        harts,
        cores: harts.div_ceil(threads),
        threads_per_core: threads,
        isa: cfg.extensions()?.to_string(),
    })
}

/// The point the machine is at now.
pub fn point_now(m: &Machine, trigger: String) -> Point {
    Point {
        instructions: m.instructions(),
        sim_time_ns: m.cores().iter().map(|c| c.time_ns()).max().unwrap_or(0),
        model: if m.is_timed() { "timing" } else { "functional" }.into(),
        trigger,
    }
}

/// Saves the machine and the region's bookkeeping into sections (RAM too
/// with `memory`).
pub fn save(
    m: &mut Machine,
    roi: &BootControl,
    memory: bool,
) -> Result<Sections, rvnvmm_checkpoint::CheckpointError> {
    let mut sections = Sections::new();
    m.save(&mut sections, memory)?;
    let json = serde_json::to_vec(&roi.to_json()).expect("JSON of plain values");
    sections.insert(ROI_SECTION, json);
    Ok(sections)
}

/// What a checkpoint is of, beyond its machine: the manifest's `kind`,
/// `disk` and `boot`.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// The command: `boot` or `run`.
    pub kind: &'a str,
    /// The disk image under the saved overlay, if any.
    pub disk: Option<&'a Path>,
    /// The files the machine booted from (what a reboot needs), if known.
    pub boot: Option<&'a rvnvmm_checkpoint::BootFiles>,
}

/// Writes `sections` (with RAM) as a checkpoint of `origin` on the machine
/// `cfg` at `point` into `dir`, says so on stderr with its size and the
/// host time it took, and gives the sections back.
pub fn write(
    origin: Origin<'_>,
    cfg: &rvnvmm_config::Config,
    sections: Sections,
    point: &Point,
    dir: &Path,
    started: Instant,
) -> Result<Sections, crate::error::BootError> {
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        rvnvmm_version: env!("CARGO_PKG_VERSION").to_string(),
        kind: origin.kind.into(),
        config: serde_json::to_value(cfg).expect("the configuration as JSON"),
        memory_map: memory_map(cfg)?,
        point: point.clone(),
        sections: Vec::new(),
        boot: origin.boot.cloned(),
        disk: origin
            .disk
            .map(|p| {
                FileIdentity::of(p).map_err(|source| crate::error::BootError::Disk {
                    path: p.to_path_buf(),
                    source,
                })
            })
            .transpose()?,
    };
    let bytes: u64 = sections.infos().iter().map(|s| s.bytes).sum();
    let c = Checkpoint { manifest, sections };
    c.write(dir)?;
    eprintln!(
        "rvnvmm: checkpoint written to {} at {} instructions, {} ns ({} model): {:.1} MiB in {:.2} s",
        dir.display(),
        point.instructions,
        point.sim_time_ns,
        point.model,
        bytes as f64 / (1 << 20) as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(c.sections)
}

/// Reads the checkpoint of `rvnvmm KIND` in `dir` and checks that it can
/// be restored on the machine `cfg` describes: the same memory map, harts
/// and ISA (the timing configuration may differ).
pub fn read_for(
    kind: &str,
    cfg: &rvnvmm_config::Config,
    dir: &Path,
) -> Result<Checkpoint, crate::error::BootError> {
    let c = Checkpoint::read(dir)?;
    if c.manifest.kind != kind {
        return Err(rvnvmm_checkpoint::CheckpointError::Mismatch(vec![format!(
            "it is a checkpoint of `rvnvmm {}`, not of `rvnvmm {kind}`",
            c.manifest.kind
        )])
        .into());
    }
    let differences = c.manifest.memory_map.differences(&memory_map(cfg)?);
    if !differences.is_empty() {
        return Err(rvnvmm_checkpoint::CheckpointError::Mismatch(differences).into());
    }
    Ok(c)
}

/// The region's bookkeeping saved in `sections`.
pub fn roi_of(sections: &Sections) -> Result<BootControl, rvnvmm_checkpoint::CheckpointError> {
    let bytes = sections.get(ROI_SECTION)?;
    let malformed = |why: String| rvnvmm_checkpoint::CheckpointError::Malformed {
        section: ROI_SECTION.into(),
        why,
    };
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
    BootControl::from_json(&v).map_err(malformed)
}
