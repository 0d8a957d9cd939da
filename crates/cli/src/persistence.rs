//! The NVMM image and injected power failures of `rvnvmm run`
//! (`docs/persistence.md`): opening and loading `memory.NAME.image`, the
//! persistence domain of `memory.NAME.persistence`, `--crash-at`, and the
//! `crash` object of `--stats`.

use crate::error::CliError;
use rvnvmm_config::{Config, Persistence, RegionKind};
use rvnvmm_mem::persist::{CrashReport, Domain, DomainKind, ImageError, NvmmImage};
use rvnvmm_mem::PhysMem;
use rvnvmm_user::{Outcome, Process};
use serde_json::json;
use std::path::Path;

/// The exit status of a run ended by `--crash-at` (beside `--max-insns`'
/// 124, `timeout`'s status for a run whose time ran out).
pub const CRASH_STATUS: i32 = 125;

/// Lost lines listed in the stderr line of a crash (all are in `--stats`).
const LOST_SHOWN: usize = 4;

/// The machine's NVMM region as far as persistence goes.
pub struct NvmmRegion {
    /// `memory.NAME`'s NAME.
    pub name: String,
    base: u64,
    size: u64,
    kind: DomainKind,
    line_bytes: u64,
    /// Whether `cflush.d.l1` reaches memory (no shared L2, or no caches).
    l1_flush_reaches_memory: bool,
    /// The image, if `memory.NAME.image` is set.
    pub image: Option<NvmmImage>,
}

impl NvmmRegion {
    /// The first NVMM region of `cfg` by address (the one `/dev/nvmm` and
    /// the NVMM-backed directory use), with its image opened (created if
    /// missing); `None` if the machine has none.
    pub fn of(cfg: &Config) -> Result<Option<NvmmRegion>, ImageError> {
        let nodes = cfg.memory.nodes();
        let Some((name, r)) = nodes
            .iter()
            .find(|n| n.region.kind() == RegionKind::Nvmm)
            .map(|n| (n.name, n.region))
        else {
            return Ok(None);
        };
        let params = r.nvmm.as_ref().expect("an NVMM region has NVMM params");
        let image = if params.image.is_empty() {
            None
        } else {
            Some(NvmmImage::open(Path::new(&params.image), r.base, r.size)?)
        };
        let timed = cfg.machine.model == rvnvmm_config::Model::Timing;
        Ok(Some(NvmmRegion {
            name: name.to_string(),
            base: r.base,
            size: r.size,
            kind: match params.persistence {
                Persistence::None => DomainKind::Volatile,
                Persistence::Adr => DomainKind::Adr,
                Persistence::Eadr => DomainKind::Eadr,
            },
            line_bytes: u64::from(cfg.cache.l1d.line_bytes).clamp(8, 4096),
            l1_flush_reaches_memory: !timed || !cfg.cache.l2.enabled,
            image,
        }))
    }

    /// A fresh persistence domain of the region.
    pub fn domain(&self) -> Domain {
        let mut d = Domain::new(self.kind, self.base, self.size, self.line_bytes);
        d.l1_flush_reaches_memory = self.l1_flush_reaches_memory;
        d
    }

    /// Loads the image into `process`, if there is one.
    pub fn load(&self, process: &mut Process) -> Result<(), CliError> {
        if let Some(img) = &self.image {
            process.load_nvmm_image(img)?;
        }
        Ok(())
    }

    /// Loads the image into the full system's memory, if there is one.
    pub fn load_mem(&self, mem: &mut PhysMem) -> Result<(), ImageError> {
        if let Some(img) = &self.image {
            img.load(mem)?;
        }
        Ok(())
    }

    /// Saves the full system's NVMM to the image, if there is one.
    pub fn save_mem(&self, mem: &PhysMem) -> Result<(), ImageError> {
        if let Some(img) = &self.image {
            img.save(mem)?;
        }
        Ok(())
    }

    /// Writes the changes of each overlay file (`--image-overlay`) over the
    /// region, in order, through `write(address, bytes)`.
    pub fn apply_overlays(
        &self,
        overlays: &[std::path::PathBuf],
        mut write: impl FnMut(u64, &[u8]),
    ) -> Result<(), String> {
        for path in overlays {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let changes = rvnvmm_explore::overlay::parse(&bytes, self.size)
                .map_err(|why| format!("{} is not an image overlay: {why}", path.display()))?;
            for (offset, data) in changes {
                write(self.base + offset, &data);
            }
        }
        Ok(())
    }

    /// Saves the region's contents to the image after a clean end.
    pub fn save(&self, process: &Process) -> Result<(), CliError> {
        if let Some(img) = &self.image {
            process.save_nvmm_image(img)?;
        }
        Ok(())
    }
}

/// Where and when the power failed: the run's instruction count, simulated
/// time and the hart (and its pc) that ran last.
pub struct CrashPoint {
    pub instructions: u64,
    pub sim_time_ns: u64,
    pub last_pc: (usize, u64),
}

impl From<&Outcome> for CrashPoint {
    fn from(o: &Outcome) -> CrashPoint {
        CrashPoint {
            instructions: o.instructions,
            sim_time_ns: o.sim_time_ns,
            last_pc: o.last_pc,
        }
    }
}

/// The `crash` object of `--stats`, for `rvnvmm run` and `rvnvmm boot`.
pub fn crash_json(
    at: &CrashPoint,
    report: &CrashReport,
    domain: Option<&Domain>,
    seed: u64,
) -> serde_json::Value {
    let counters = domain.map(|d| d.counters).unwrap_or_default();
    json!({
        "instructions": at.instructions,
        "sim_time_ns": at.sim_time_ns,
        "hart": at.last_pc.0,
        "pc": format!("{:#x}", at.last_pc.1),
        "seed": seed,
        "line_bytes": report.line_bytes,
        "lost_lines": report.lost_lines.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>(),
        "in_flight_kept": report.in_flight_kept,
        "in_flight_lost": report.in_flight_lost,
        "flushes": counters.flushes,
        "flushes_completed": counters.flushes_completed,
        "write_backs": counters.write_backs,
    })
}

/// The stderr line of a crash.
pub fn crash_line(o: &CrashPoint, report: &CrashReport) -> String {
    let mut lost: Vec<String> = report
        .lost_lines
        .iter()
        .take(LOST_SHOWN)
        .map(|a| format!("{a:#x}"))
        .collect();
    if report.lost_lines.len() > LOST_SHOWN {
        lost.push("...".into());
    }
    let lost = if lost.is_empty() {
        String::new()
    } else {
        format!(" ({})", lost.join(" "))
    };
    format!(
        "power failure injected after {} instructions ({} ns simulated; hart {} at pc {:#x}): {} NVMM lines of {} bytes lost{lost}, {} flushes in flight kept, {} lost (exit status {CRASH_STATUS})",
        o.instructions,
        o.sim_time_ns,
        o.last_pc.0,
        o.last_pc.1,
        report.lost_lines.len(),
        report.line_bytes,
        report.in_flight_kept,
        report.in_flight_lost,
    )
}

/// Writes the persistence trace of `process` (`--persist-trace`) with the
/// code it has mapped, for a run of `instructions`.
pub fn write_trace(
    out: &crate::output::OutputFile,
    process: &Process,
    instructions: u64,
) -> Result<(), CliError> {
    use rvnvmm_explore::file::MappedFile;
    let code: Vec<MappedFile> = process
        .mapped_code()
        .into_iter()
        .map(|m| MappedFile {
            guest_path: m.guest_path,
            host_path: m.host_path.map(|p| p.to_string_lossy().into_owned()),
            start: m.start,
            end: m.end,
            offset: m.offset,
        })
        .collect();
    Ok(write_domain_trace(
        out,
        process.persistence_domain(),
        &code,
        instructions,
    )?)
}

/// Writes the trace `domain` recorded, if it recorded one, with the code
/// `code` lists (none in the full system, whose processes rvnvmm does not
/// know), for a run of `instructions`.
pub fn write_domain_trace(
    out: &crate::output::OutputFile,
    domain: Option<&Domain>,
    code: &[rvnvmm_explore::file::MappedFile],
    instructions: u64,
) -> Result<(), crate::output::OutputError> {
    let Some(d) = domain else {
        return Ok(());
    };
    let Some(trace) = d.trace() else {
        return Ok(());
    };
    let (base, size) = d.region();
    let header = rvnvmm_explore::file::TraceHeader {
        base,
        size,
        line_bytes: d.line_bytes(),
        domain: d.kind(),
        instructions,
    };
    let mut bytes = Vec::new();
    rvnvmm_explore::file::write(&mut bytes, &header, trace, code).expect("writing to memory");
    out.write(&bytes)?;
    if trace.truncated() {
        eprintln!(
            "rvnvmm: the persistence trace outgrew {} bytes and is incomplete",
            rvnvmm_mem::persist_trace::MAX_TRACE_BYTES
        );
    }
    Ok(())
}
