//! Technology `ddr3`: the DDR3 controller model of `rvnvmm-dram`, with the
//! NVMM methods of its `kind = "nvmm"` regions.

use rvnvmm_dram::{Controller, Wear, WearUnit};
use serde_json::{json, Value};

use super::{Registration, Setup};
use crate::backend::{Backend, NodeAddr};
use crate::time::Ps;
use crate::MemsysError;

/// The registration of the `ddr3` technology.
pub const REGISTRATION: Registration = Registration {
    name: rvnvmm_config::DDR3_TECHNOLOGY,
    build,
};

/// A `rvnvmm_dram::Controller` for the nodes of `setup`, matching reads
/// against queued writes at the granularity of the lines that cross the
/// bus.
fn build(setup: &Setup<'_>) -> Result<Box<dyn Backend + Send>, MemsysError> {
    let regions: Vec<_> = setup
        .nodes
        .iter()
        .map(|(n, r)| (n.to_string(), r.base, r.size, r.nvmm.clone()))
        .collect();
    let mut c = Controller::new(
        setup.controller,
        &setup.cfg.memory.controllers[setup.controller],
        &regions,
    )?;
    c.set_line_bytes(setup.line_bytes)?;
    Ok(Box::new(c))
}

impl Backend for Controller {
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        Controller::read_at(self, at.node, at.offset, at.paddr, now)
    }

    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        Controller::write_at(self, at.node, at.offset, at.paddr, now)
    }

    fn advance(&mut self, now: Ps) {
        Controller::advance(self, now)
    }

    fn drain(&mut self, now: Ps) {
        Controller::advance(self, now);
        Controller::finish(self);
    }

    fn node_stats(&self, _nodes: &[&str], sim_time_ns: u64) -> Vec<(String, Value)> {
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

    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        let now = Controller::nvmm_settings(self, node)?;
        let params = now
            .with_settings(settings)
            .map_err(|problem| MemsysError::Setting {
                key: format!("memory.{node}"),
                problem,
            })?;
        Ok(Controller::set_nvmm(self, node, params)?)
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
