//! [`Backend`] for the DDR3/NVMM controller model of `rvnvmm-dram`.

use rvnvmm_config::{Config, NvmmParams};
use rvnvmm_dram::{Controller, Wear, WearUnit};
use serde_json::{json, Value};

use crate::backend::{Backend, Backends, Crossing};
use crate::time::{ns_to_ps, Ps};
use crate::MemsysError;

impl Backend for Controller {
    fn read(&mut self, paddr: u64, now: Ps) -> Ps {
        Controller::read(self, paddr, now)
    }

    fn write(&mut self, paddr: u64, now: Ps) -> Ps {
        Controller::write(self, paddr, now)
    }

    fn advance(&mut self, now: Ps) {
        Controller::advance(self, now)
    }

    fn drain(&mut self, now: Ps) {
        Controller::advance(self, now);
        Controller::finish(self);
    }

    fn region_stats(&self, sim_time_ns: u64) -> Vec<(String, Value)> {
        let hist = |h: &[(Ps, u64)]| -> Vec<Value> {
            h.iter()
                .map(|&(bound, n)| {
                    let le = if bound == Ps::MAX {
                        Value::Null
                    } else {
                        json!(bound as f64 / 1000.0)
                    };
                    json!({"le_ns": le, "count": n})
                })
                .collect()
        };
        self.stats()
            .into_iter()
            .map(|s| {
                let mut v = json!({
                    "reads": s.reads,
                    "writes": s.writes,
                    "acts": s.acts,
                    "row_hits": s.row_hits,
                    "forwarded": s.forwarded,
                    "act_per_req": s.act_per_req(),
                    "bank_para": s.bank_para(),
                    // Reads per write; null when there were reads and no writes.
                    "rw_ratio": s.rw_ratio(),
                    "req_per_sec": s.req_per_sec_over(sim_time_ns.saturating_mul(1000)),
                    "row_hit_rate": s.row_hit_rate(),
                    "avg_read_latency_ns": s.avg_read_latency_ns(),
                    "avg_write_latency_ns": s.avg_write_latency_ns(),
                    "avg_write_wait_ns": s.avg_write_wait_ns(),
                    "writes_done": s.writes_done,
                    "bank_switches": s.bank_switches,
                    "read_latency_total_ns": s.read_latency_ps_sum / 1000,
                    "write_latency_total_ns": s.write_latency_ps_sum / 1000,
                    "read_latency_hist": hist(&s.read_latency_hist),
                    "write_latency_hist": hist(&s.write_latency_hist),
                });
                // Only a method with counters of its own adds the object.
                if !s.method.is_empty() {
                    let own: serde_json::Map<String, Value> = s
                        .method
                        .iter()
                        .map(|&(k, n)| (k.to_string(), json!(n)))
                        .collect();
                    v["method"] = Value::Object(own);
                }
                for &(k, x) in &s.method_rates {
                    v["method"][k] = json!(x);
                }
                for (k, h) in &s.method_hists {
                    v["method"][*k] = json!(hist(h));
                }
                if let Some(w) = &s.wear {
                    v["wear"] = wear(w);
                }
                (s.name, v)
            })
            .collect()
    }

    fn reset_stats(&mut self) {
        Controller::reset_stats(self)
    }

    fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), MemsysError> {
        Ok(Controller::set_nvmm(self, region, params)?)
    }

    fn set_boundary(&mut self, region: &str, boundary: u64) -> Result<(), MemsysError> {
        Ok(Controller::set_boundary(self, region, boundary)?)
    }
}

/// The `wear` object of a region (docs/stats.md).
fn wear(w: &Wear) -> Value {
    let unit = |key: u64| match w.unit {
        WearUnit::Row => json!({"bank": key >> 32, "row": key & 0xFFFF_FFFF}),
        WearUnit::Line { .. } => json!({"offset": key}),
    };
    let (name, bytes) = match w.unit {
        WearUnit::Row => ("row", Value::Null),
        WearUnit::Line { bytes } => ("xpline", json!(bytes)),
    };
    json!({
        "unit": name,
        "unit_bytes": bytes,
        "media_writes": w.writes,
        "units_written": w.units,
        "writes_per_unit_hist": w
            .hist
            .iter()
            .map(|&(le, n)| json!({"le": le, "units": n}))
            .collect::<Vec<_>>(),
        "hottest": w
            .hottest
            .iter()
            .map(|&(key, n)| {
                let mut u = unit(key);
                u["writes"] = json!(n);
                u
            })
            .collect::<Vec<_>>(),
    })
}

/// One `rvnvmm_dram::Controller` per controller that a region of `cfg`
/// names, matching reads against queued writes at the granularity of the
/// lines that cross the bus (`line_bytes`).
pub(crate) fn controllers(cfg: &Config, line_bytes: u64) -> Result<Backends, MemsysError> {
    let mut out: Backends = Vec::new();
    for name in cfg.memory.controllers.keys() {
        if !cfg.memory.regions.values().any(|r| &r.controller == name) {
            continue;
        }
        let mut c = Controller::from_config(cfg, name)?;
        c.set_line_bytes(line_bytes)?;
        let each_way = ns_to_ps(cfg.memory.controllers[name].interface_latency_ns);
        if each_way > 0 {
            out.push((name.clone(), Box::new(Crossing { inner: c, each_way })));
        } else {
            out.push((name.clone(), Box::new(c)));
        }
    }
    Ok(out)
}
