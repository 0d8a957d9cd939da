//! What a run writes besides the exit status: the profile (`--profile`)
//! and the statistics JSON (`--stats`).

use super::args::BootArgs;
use super::images::read_file;
use super::rig::Rig;
use crate::error::BootError;
use crate::roi::BootControl;
use rvnvmm_board::machine::{End, Machine, MachineError};
use rvnvmm_board::profile::Symbols;

/// Writes `profile` to `out`, kernel functions named from `--symbols` or
/// the System.map beside the kernel.
pub(super) fn write_profile(
    a: &BootArgs,
    rig: &Rig,
    out: &crate::output::OutputFile,
    profile: &rvnvmm_board::profile::Profile,
) -> Result<(), BootError> {
    let map = a
        .symbols
        .clone()
        .or_else(|| Symbols::beside(&rig.boot_files.as_ref()?.kernel.path));
    let symbols = match &map {
        Some(p) => Some(Symbols::parse(&String::from_utf8_lossy(&read_file(
            "symbol map",
            p,
        )?))),
        None => None,
    };
    out.write(profile.report(symbols.as_ref(), 60).as_bytes())?;
    Ok(())
}

pub(super) fn stats_json(
    cfg: &rvnvmm_config::Config,
    m: &mut Machine,
    result: &Result<End, MachineError>,
    host_seconds: f64,
    crash: Option<&serde_json::Value>,
    roi: BootControl,
) -> String {
    use serde_json::json;
    let exit = match result {
        Ok(End::PowerOff(c)) => json!({ "code": c }),
        Ok(End::Reboot) => json!({ "reboot": true }),
        Ok(End::Crash) => json!({ "crash": true }),
        Ok(End::Checkpoint) => json!({ "checkpoint": true }),
        Ok(End::Marker { .. } | End::Pause) => {
            unreachable!("the machine goes on after a marker or a pause")
        }
        Err(e) => json!({ "error": e.to_string() }),
    };
    let mut v = rvnvmm_board::stats::stats_json(m, true);
    // The whole run's speed, not the region's.
    let instructions = m.instructions();
    let extra = json!({
        "schema": "rvnvmm-stats/1",
        "machine": cfg.machine.name,
        "program": "boot",
        "exit": exit,
        "host_seconds": host_seconds,
        "mips": if host_seconds > 0.0 { instructions as f64 / host_seconds / 1e6 } else { 0.0 },
    });
    if let (serde_json::Value::Object(top), serde_json::Value::Object(extra)) = (&mut v, extra) {
        for (k, val) in extra {
            top.insert(k, val);
        }
    }
    if let Some(c) = crash {
        v["crash"] = c.clone();
    }
    if let Some(s) = roi.sampling_outcome(instructions, cfg.machine.clock_hz) {
        v["sampling"] = rvnvmm_runctl::sampling_json(&s);
    }
    roi.add_to(&mut v);
    serde_json::to_string_pretty(&v).expect("JSON of plain values") + "\n"
}
