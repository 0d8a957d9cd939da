//! What the `rvnvmm bench` subcommands share (`bench.rs`, `bench_boot.rs`,
//! `bench_pm.rs`).

use crate::error::MachineLacks;
use std::path::Path;
use std::process::{Command, Stdio};

/// The machine's first NVMM region, with its name and controller.
pub fn nvmm_region(
    cfg: &rvnvmm_config::Config,
) -> Result<
    (
        &str,
        &rvnvmm_config::Region,
        &rvnvmm_config::ControllerConfig,
    ),
    MachineLacks,
> {
    let (name, region) = cfg
        .memory
        .regions_of_kind(rvnvmm_config::RegionKind::Nvmm)
        .next()
        .ok_or(MachineLacks::Nvmm)?;
    let ctl = cfg
        .memory
        .controllers
        .get(&region.controller)
        .ok_or(MachineLacks::NvmmController)?;
    Ok((name, region, ctl))
}

/// Millions of instructions per second: `insns` in `secs` (0 for no time).
pub fn mips(insns: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        insns as f64 / secs / 1e6
    } else {
        0.0
    }
}

/// The first line of `qemu --version`, or a placeholder.
pub fn qemu_version(qemu: &Path) -> String {
    Command::new(qemu)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_else(|| qemu.display().to_string())
}
