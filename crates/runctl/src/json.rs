//! Run control in the statistics JSON (`docs/stats.md`,
//! `docs/regions-of-interest.md`): the `snapshots` the guest's `dump`
//! markers take, where the statistics were reset (`stats_reset`), the
//! `model_switches`, the `sampling` of a sampled run; and what a full-system
//! checkpoint keeps of them.

use crate::{Model, ModelSwitch, ResetPoint, RunControl, SamplingOutcome, Snapshot, CONFIDENCE};
use serde_json::{json, Value};

/// The `sampling` object of a sampled run.
pub fn sampling_json(s: &SamplingOutcome) -> Value {
    let windows: Vec<Value> = s
        .windows
        .iter()
        .map(|w| {
            json!({
                "start_instructions": w.start_instructions,
                "instructions": w.instructions,
                "cycles": w.cycles,
                "sim_time_ns": w.sim_time_ns,
                "cpi": w.cycles as f64 / w.instructions.max(1) as f64,
                "l1d_misses": w.l1d_misses,
                "bus_transfers": w.bus_transfers,
            })
        })
        .collect();
    let detail: u64 = s.windows.iter().map(|w| w.instructions).sum();
    let total = s.total_instructions.max(1) as f64;
    let estimate = match &s.estimate {
        Some(e) => json!({
            "cpi_mean": e.cpi_mean,
            "cpi_stddev": e.cpi_stddev,
            "sim_time_ns": e.sim_time_ns,
            "confidence": CONFIDENCE,
            "half_width_ns": e.half_width_ns,
            "low_ns": e.half_width_ns.map(|h| e.sim_time_ns - h),
            "high_ns": e.half_width_ns.map(|h| e.sim_time_ns + h),
            "relative_error": e.half_width_ns.map(|h| h / e.sim_time_ns),
        }),
        None => Value::Null,
    };
    json!({
        "period": s.plan.period,
        "detail": s.plan.detail,
        "warmup": s.plan.warmup,
        "total_instructions": s.total_instructions,
        "detail_instructions": detail,
        "warmup_instructions": s.warmup_instructions,
        "detail_fraction": s.detail_fraction(),
        "timed_fraction": (detail + s.warmup_instructions) as f64 / total,
        "estimate": estimate,
        "windows": windows,
    })
}

/// The `stats_reset` object: where the statistics count from.
pub fn reset_json(point: Option<ResetPoint>) -> Value {
    match point {
        Some(p) => json!({ "instructions": p.instructions, "sim_time_ns": p.sim_time_ns }),
        None => Value::Null,
    }
}

/// The `model_switches` array.
pub fn switches_json(switches: &[ModelSwitch]) -> Value {
    switches
        .iter()
        .map(|s| {
            json!({
                "to": s.to.name(),
                "instructions": s.instructions,
                "sim_time_ns": s.sim_time_ns,
            })
        })
        .collect()
}

/// One element of `snapshots`: the statistics tree `stats` (without the
/// run's own keys) at a point of the run.
pub fn snapshot_json(name: &str, instructions: u64, sim_time_ns: u64, mut stats: Value) -> Value {
    if let Value::Object(o) = &mut stats {
        for key in [
            "schema",
            "machine",
            "program",
            "exit",
            "host_seconds",
            "mips",
            "snapshots",
            "model_switches",
        ] {
            o.remove(key);
        }
    }
    json!({
        "name": name,
        "instructions": instructions,
        "sim_time_ns": sim_time_ns,
        "stats": stats,
    })
}

/// The `instructions` and `sim_time_ns` of a point in the JSON `v`.
fn point(v: &Value) -> Result<(u64, u64), String> {
    let num = |key: &str| {
        v.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("'{key}' is not a count"))
    };
    Ok((num("instructions")?, num("sim_time_ns")?))
}

/// The list `key` of the JSON `v`, each element read by `read`.
fn list<T>(
    v: &Value,
    key: &str,
    read: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no '{key}' list"))?
        .iter()
        .map(read)
        .collect()
}

/// The `snapshots` array of snapshots whose statistics are JSON trees.
fn snapshots_json(snapshots: &[Snapshot<Value>]) -> Value {
    snapshots
        .iter()
        .map(|s| snapshot_json(&s.name, s.instructions, s.sim_time_ns, s.stats.clone()))
        .collect()
}

impl RunControl<Value> {
    /// What a checkpoint keeps of the bookkeeping: the snapshots, the last
    /// reset and the switches (whether the run fast-forwards or samples is
    /// the restoring command's to say).
    pub fn to_json(&self) -> Value {
        json!({
            "snapshots": snapshots_json(self.snapshots()),
            "stats_reset": reset_json(self.reset_point()),
            "model_switches": switches_json(self.switches()),
        })
    }

    /// Reads back what [`RunControl::to_json`] wrote.
    pub fn from_json(v: &Value) -> Result<RunControl<Value>, String> {
        let snapshots = list(v, "snapshots", |s| {
            let (instructions, sim_time_ns) = point(s)?;
            let name = s.get("name").and_then(Value::as_str);
            Ok(Snapshot {
                name: name.ok_or("a snapshot without a name")?.to_string(),
                instructions,
                sim_time_ns,
                stats: s.get("stats").cloned().unwrap_or(Value::Null),
            })
        })?;
        let reset = match v.get("stats_reset") {
            Some(Value::Null) => None,
            Some(r) => {
                let (instructions, sim_time_ns) = point(r)?;
                Some(ResetPoint {
                    instructions,
                    sim_time_ns,
                })
            }
            None => return Err("no 'stats_reset'".into()),
        };
        let switches = list(v, "model_switches", |s| {
            let to = match s.get("to").and_then(Value::as_str) {
                Some("timing") => Model::Timing,
                Some("functional") => Model::Functional,
                _ => return Err("a switch to an unknown model".to_string()),
            };
            let (instructions, sim_time_ns) = point(s)?;
            Ok(ModelSwitch {
                to,
                instructions,
                sim_time_ns,
            })
        })?;
        let mut ctl = RunControl::new();
        ctl.set_snapshots(snapshots);
        ctl.restore(reset, switches, None);
        Ok(ctl)
    }

    /// Adds `stats_reset`, `snapshots` and `model_switches` to the
    /// statistics `v`.
    pub fn add_to(&self, v: &mut Value) {
        v["stats_reset"] = reset_json(self.reset_point());
        v["snapshots"] = snapshots_json(self.snapshots());
        v["model_switches"] = switches_json(self.switches());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_keeps_the_statistics_but_not_the_run_keys() {
        let stats = json!({"schema": "x", "exit": {"code": 0}, "instructions": 5, "caches": {}});
        let s = snapshot_json("phase", 10, 20, stats);
        assert_eq!(s["name"], "phase");
        assert_eq!(s["instructions"], 10);
        assert_eq!(s["stats"]["instructions"], 5);
        assert!(s["stats"].get("schema").is_none() && s["stats"].get("exit").is_none());
    }

    #[test]
    fn the_bookkeeping_reads_back_as_written() {
        let v = json!({
            "snapshots": [snapshot_json("a", 1, 2, json!({"instructions": 1, "mips": 3.0}))],
            "stats_reset": {"instructions": 5, "sim_time_ns": 6},
            "model_switches": [{"to": "timing", "instructions": 5, "sim_time_ns": 6}],
        });
        let ctl = RunControl::from_json(&v).unwrap();
        assert_eq!(ctl.to_json(), v);
        let mut stats = json!({});
        ctl.add_to(&mut stats);
        assert_eq!(stats, v);
    }
}
