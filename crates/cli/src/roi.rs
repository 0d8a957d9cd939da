//! Regions of interest in the statistics JSON (`docs/regions-of-interest.md`):
//! the `snapshots` the guest's `dump` markers take, where the statistics
//! were reset, the model switches; `rvnvmm boot`'s handling of markers;
//! `--fast-forward`'s argument.

use rvnvmm_board::machine::{End, Machine, MachineError};
use rvnvmm_isa::MarkerOp;
use rvnvmm_user::{
    FastForward, Model, ModelSwitch, ResetPoint, SampleCounters, Sampled, Sampler, Sampling,
    SamplingOutcome,
};
use serde_json::{json, Value};

/// Longest snapshot name read from the guest.
const MAX_NAME_BYTES: usize = 256;

/// Parses `--fast-forward insns=N|marker`.
pub fn parse_fast_forward(s: &str) -> Result<FastForward, String> {
    if s == "marker" {
        return Ok(FastForward::Marker);
    }
    parse_insns(s)
        .map(FastForward::Insns)
        .map_err(|_| format!("wants insns=N or marker, got '{s}'"))
}

/// Parses `--sample period=N,detail=M[,warmup=W]` (instruction counts,
/// in any order; warmup 0 by default).
pub fn parse_sample(s: &str) -> Result<Sampling, String> {
    let (mut period, mut detail, mut warmup) = (None, None, None);
    for part in s.split(',') {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("wants period=N,detail=M[,warmup=W], got '{part}'"))?;
        let slot = match key {
            "period" => &mut period,
            "detail" => &mut detail,
            "warmup" => &mut warmup,
            _ => {
                return Err(format!(
                    "unknown key '{key}': wants period=N,detail=M[,warmup=W]"
                ))
            }
        };
        if slot.is_some() {
            return Err(format!("'{key}' given twice"));
        }
        *slot = Some(
            value
                .parse::<u64>()
                .map_err(|_| format!("{key} wants an instruction count, got '{value}'"))?,
        );
    }
    match (period, detail) {
        (Some(p), Some(d)) => Sampling::new(p, d, warmup.unwrap_or(0)),
        _ => Err(format!(
            "wants period=N,detail=M[,warmup=W] (period and detail are needed), got '{s}'"
        )),
    }
}

/// The `sampling` object of a sampled run (`docs/stats.md`).
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
            "confidence": rvnvmm_user::CONFIDENCE,
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

/// Parses `insns=N`.
pub fn parse_insns(s: &str) -> Result<u64, String> {
    match s.strip_prefix("insns=").map(str::parse::<u64>) {
        Some(Ok(n)) => Ok(n),
        _ => Err(format!("wants insns=N, got '{s}'")),
    }
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

/// `rvnvmm boot`'s markers: resets, snapshots, model switches;
/// checkpoints are not supported yet (said once).
#[derive(Default)]
pub struct BootRoi {
    snapshots: Vec<Value>,
    reset: Option<ResetPoint>,
    switches: Vec<ModelSwitch>,
    /// `--fast-forward marker`: the first `switch timing` marker resets the
    /// statistics too.
    fast_forward: bool,
    /// `--sample`: the windows, the model at each point.
    sampler: Option<Sampler>,
    noted: Vec<&'static str>,
}

/// The board machine as the sampler sees it: all harts' instructions
/// against the latest hart clock, the memory system in use or set aside.
struct SampledMachine<'a> {
    m: &'a mut Machine,
    clock_hz: u64,
}

impl Sampled for SampledMachine<'_> {
    fn instructions(&self) -> u64 {
        self.m.instructions()
    }

    fn sample_counters(&mut self) -> SampleCounters {
        SampleCounters {
            instructions: self.m.instructions(),
            cycles: self.m.cores().iter().map(|c| c.cycles).max().unwrap_or(0),
            ..SampleCounters::default()
        }
        .with_memsys(self.m.any_memsys_mut().map(|m| &*m))
    }

    fn cycles_to_ns(&self, cycles: u64) -> u64 {
        (u128::from(cycles) * 1_000_000_000 / u128::from(self.clock_hz.max(1))) as u64
    }

    fn switch_model_quietly(&mut self, to: Model) {
        // `BootRoi::sample` checked that the machine has a timing model.
        let _ = self.m.set_timing(to == Model::Timing);
    }
}

impl BootRoi {
    /// Starts `m` in the functional model until the guest's first `switch
    /// timing` marker (`boot --fast-forward marker`).
    pub fn fast_forward(m: &mut Machine) -> Result<BootRoi, MachineError> {
        m.set_timing(false)?;
        if m.any_memsys_mut().is_none() {
            return Err(MachineError::NoTimingModel);
        }
        Ok(BootRoi {
            fast_forward: true,
            ..BootRoi::default()
        })
    }

    /// Samples the boot by `plan` (`boot --sample`): it starts in the
    /// functional model, and the machine pauses at each of the sampler's
    /// points ([`BootRoi::sample_point`]).
    pub fn sample(m: &mut Machine, plan: Sampling, clock_hz: u64) -> Result<BootRoi, MachineError> {
        m.set_timing(false)?;
        if m.any_memsys_mut().is_none() {
            return Err(MachineError::NoTimingModel);
        }
        let mut roi = BootRoi {
            sampler: Some(Sampler::new(plan)),
            ..BootRoi::default()
        };
        roi.sample_point(m, clock_hz);
        Ok(roi)
    }

    /// At a pause of a sampled boot: acts on the sampler's points reached
    /// (model switches, windows) and pauses the machine at the next.
    pub fn sample_point(&mut self, m: &mut Machine, clock_hz: u64) {
        if let Some(s) = self.sampler.as_mut() {
            s.check_points(&mut SampledMachine { m, clock_hz });
            m.set_pause_at(Some(s.next_point()));
        }
    }

    /// Whether the boot is sampled.
    pub fn is_sampled(&self) -> bool {
        self.sampler.is_some()
    }

    /// What a sampled boot reports at its end, after `total` instructions.
    pub fn sampling_outcome(&self, total: u64, clock_hz: u64) -> Option<SamplingOutcome> {
        Some(self.sampler.as_ref()?.outcome(total, clock_hz))
    }

    /// This bookkeeping (of a restored checkpoint, or new) for a run that
    /// goes on in the functional model until a point (`boot --fast-forward
    /// insns=N|time=NS`), where the machine is rebuilt timed
    /// ([`BootRoi::timing_from_restore_point`]); markers do not end it.
    pub fn with_fast_forward_to_point(self, m: &mut Machine) -> Result<BootRoi, MachineError> {
        BootRoi::fast_forward(m)?;
        Ok(self)
    }

    /// This bookkeeping (of a restored checkpoint) for a run that goes on
    /// in the functional model until the guest's `switch timing` marker.
    pub fn with_fast_forward(self, m: &mut Machine) -> Result<BootRoi, MachineError> {
        Ok(BootRoi {
            fast_forward: true,
            ..BootRoi::fast_forward(m).map(|_| self)?
        })
    }

    /// Resets `m`'s statistics and records where.
    fn reset(&mut self, m: &mut Machine) {
        m.reset_stats();
        let base = m.stats_base().cloned().unwrap_or_default();
        self.reset = Some(ResetPoint {
            instructions: base.instructions,
            sim_time_ns: base.sim_time_ns,
        });
    }

    /// Acts on marker `op` (argument `arg`) that hart `hart` ran; the end
    /// of the run if it asks for one (an `exit` marker: a power-off with
    /// its status).
    pub fn marker(
        &mut self,
        cfg: &rvnvmm_config::Config,
        m: &mut Machine,
        hart: usize,
        op: MarkerOp,
        arg: u64,
    ) -> Option<End> {
        match op {
            MarkerOp::ResetStats => self.reset(m),
            MarkerOp::DumpStats => {
                let numbered = format!("snapshot{}", self.snapshots.len() + 1);
                let name = match arg {
                    0 => numbered,
                    addr => match m.read_guest_string(hart, addr, MAX_NAME_BYTES) {
                        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                        None => {
                            self.note_once("dump-name", "a `dump` marker's name pointer was unreadable: the snapshot is numbered");
                            numbered
                        }
                    },
                };
                let stats = crate::boot_command::stats_value(cfg, m, false);
                let sim_time_ns = m.cores()[hart].time_ns();
                self.snapshots.push(snapshot_json(
                    &name,
                    m.instructions(),
                    sim_time_ns,
                    stats,
                ));
            }
            MarkerOp::Exit => return Some(End::PowerOff((arg & 0xff) as u16)),
            MarkerOp::SwitchModel if self.is_sampled() => self.note_once(
                "switch-sampled",
                "a `switch` marker was ignored: --sample decides the model",
            ),
            MarkerOp::SwitchModel if arg > 1 => self.note_once(
                "switch-arg",
                "a `switch` marker with an argument other than 0 (functional) or 1 (timing) was ignored",
            ),
            MarkerOp::SwitchModel => match m.set_timing(arg == 1) {
                Ok(true) => {
                    self.switches.push(ModelSwitch {
                        to: if arg == 1 { Model::Timing } else { Model::Functional },
                        instructions: m.instructions(),
                        sim_time_ns: m.cores()[hart].time_ns(),
                    });
                    if arg == 1 && std::mem::take(&mut self.fast_forward) {
                        self.reset(m);
                    }
                }
                Ok(false) => {}
                Err(e) => self.note_once("switch", &format!("a `switch` marker was ignored: {e}")),
            },
            // `rvnvmm boot` acts on it before it comes here.
            MarkerOp::Checkpoint => {}
            MarkerOp::Unknown(_) => self.note_once(
                "unknown",
                "a marker with an unassigned code (slti x0 with 0x7a0, 0x7a6..0x7af) was ignored",
            ),
        }
        None
    }

    /// Whether the run is still in its fast-forward (before the switch).
    pub fn fast_forwarding(&self) -> bool {
        self.fast_forward
    }

    /// The timing model starts at a restore point (`docs/checkpoints.md`):
    /// a fast-forward's `checkpoint` marker, or a restore under the timing
    /// model of a checkpoint taken in the functional one. As at a
    /// fast-forward's switch, the statistics count from here; the switch
    /// is listed at the point's instructions and time (the latest hart
    /// clock), which both ways of getting there agree on.
    pub fn timing_from_restore_point(
        &mut self,
        m: &mut Machine,
        instructions: u64,
        sim_time_ns: u64,
    ) {
        self.fast_forward = false;
        self.switches.push(ModelSwitch {
            to: Model::Timing,
            instructions,
            sim_time_ns,
        });
        self.reset(m);
    }

    /// What a checkpoint keeps of the region's bookkeeping: the snapshots,
    /// the last reset and the switches (whether the run fast-forwards is
    /// the restoring command's to say).
    pub fn to_json(&self) -> Value {
        json!({
            "snapshots": self.snapshots,
            "stats_reset": reset_json(self.reset),
            "model_switches": switches_json(&self.switches),
        })
    }

    /// Reads back what [`BootRoi::to_json`] wrote.
    pub fn from_json(v: &Value) -> Result<BootRoi, String> {
        let num = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("'{key}' is not a count"))
        };
        let snapshots = v
            .get("snapshots")
            .and_then(Value::as_array)
            .ok_or("no 'snapshots' list")?
            .clone();
        let reset = match v.get("stats_reset") {
            Some(Value::Null) => None,
            Some(r) => Some(ResetPoint {
                instructions: num(r, "instructions")?,
                sim_time_ns: num(r, "sim_time_ns")?,
            }),
            None => return Err("no 'stats_reset'".into()),
        };
        let switches = v
            .get("model_switches")
            .and_then(Value::as_array)
            .ok_or("no 'model_switches' list")?
            .iter()
            .map(|s| {
                Ok(ModelSwitch {
                    to: match s.get("to").and_then(Value::as_str) {
                        Some("timing") => Model::Timing,
                        Some("functional") => Model::Functional,
                        _ => return Err("a switch to an unknown model".to_string()),
                    },
                    instructions: num(s, "instructions")?,
                    sim_time_ns: num(s, "sim_time_ns")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(BootRoi {
            snapshots,
            reset,
            switches,
            ..BootRoi::default()
        })
    }

    /// Says `text` on stderr, the first time only for `what`.
    fn note_once(&mut self, what: &'static str, text: &str) {
        if !self.noted.contains(&what) {
            self.noted.push(what);
            eprintln!("rvnvmm: {text}");
        }
    }

    /// Adds `stats_reset`, `snapshots` and `model_switches` to the
    /// statistics `v`.
    pub fn add_to(self, v: &mut Value) {
        v["stats_reset"] = reset_json(self.reset);
        v["snapshots"] = Value::Array(self.snapshots);
        v["model_switches"] = switches_json(&self.switches);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_forward_arguments() {
        assert_eq!(parse_fast_forward("marker"), Ok(FastForward::Marker));
        assert_eq!(
            parse_fast_forward("insns=1000"),
            Ok(FastForward::Insns(1000))
        );
        for bad in ["insns=", "insns=-1", "time=5", "", "markers"] {
            assert!(parse_fast_forward(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sample_arguments() {
        assert_eq!(
            parse_sample("period=1000,detail=100,warmup=50"),
            Sampling::new(1000, 100, 50)
        );
        assert_eq!(
            parse_sample("detail=10,period=20"),
            Sampling::new(20, 10, 0)
        );
        for bad in [
            "",
            "period=100",
            "detail=10",
            "period=100,detail=0",
            "period=100,detail=60,warmup=50",
            "period=100,detail=10,detail=10",
            "period=100,detail=x",
            "period=100,detail=10,other=1",
            "period=-1,detail=1",
            "period 100",
        ] {
            assert!(parse_sample(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_snapshot_keeps_the_statistics_but_not_the_run_keys() {
        let stats = json!({"schema": "x", "exit": {"code": 0}, "instructions": 5, "caches": {}});
        let s = snapshot_json("phase", 10, 20, stats);
        assert_eq!(s["name"], "phase");
        assert_eq!(s["instructions"], 10);
        assert_eq!(s["stats"]["instructions"], 5);
        assert!(s["stats"].get("schema").is_none() && s["stats"].get("exit").is_none());
    }
}
