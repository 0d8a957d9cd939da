//! Technology `fixed-latency`: every line read takes `params.read_ns` and
//! every write is accepted after `params.write_ns`, whatever came before.
//! No banks, rows or queues; an idealised memory, and the smallest example
//! of a technology (see the module above on adding one).

use rvnvmm_config::MAX_LATENCY_NS;

use super::{Registration, Setup};
use crate::backend::{Backend, NodeAddr};
use crate::time::{ns_to_ps, Ps};
use crate::MemsysError;

/// The registration of the `fixed-latency` technology.
pub const REGISTRATION: Registration = Registration {
    name: "fixed-latency",
    build,
};

/// Its settings (`memory.controllers.NAME.params.*`).
const PARAMS: [&str; 2] = ["read_ns", "write_ns"];

fn build(setup: &Setup<'_>) -> Result<Box<dyn Backend + Send>, MemsysError> {
    setup.only_params(REGISTRATION.name, &PARAMS)?;
    if let Some((name, _)) = setup.nodes.iter().find(|(_, r)| r.nvmm.is_some()) {
        return Err(MemsysError::Setting {
            key: format!("memory.{name}.kind"),
            problem: format!(
                "controller '{}' is of technology '{}', which has no NVMM methods; give the region kind = \"dram\" or the controller technology = \"ddr3\"",
                setup.controller, REGISTRATION.name
            ),
        });
    }
    let mut ps = [0; 2];
    for (out, key) in ps.iter_mut().zip(PARAMS) {
        let ns = setup.param(key, 0.0);
        if !(ns.is_finite() && (0.0..=MAX_LATENCY_NS).contains(&ns)) {
            return Err(MemsysError::Setting {
                key: format!("memory.controllers.{}.params.{key}", setup.controller),
                problem: format!("must be from 0 to 1e12 ns, got {ns}"),
            });
        }
        *out = ns_to_ps(ns);
    }
    // A machine's controller counts per node only: a log of every request
    // would grow for as long as the run.
    Ok(Box::new(FixedLatency {
        logging: false,
        ..FixedLatency::new(ps[0], ps[1])
    }))
}

/// A controller with constant latencies: a read's data leaves `read_ps`
/// after it arrives, a write is accepted `write_ps` after it arrives. It
/// counts requests per node, and can keep every request, for tests.
#[derive(Clone, Debug, Default)]
pub struct FixedLatency {
    /// Arrival to data out.
    pub read_ps: Ps,
    /// Arrival to acceptance.
    pub write_ps: Ps,
    /// Every request in arrival order, `(is_write, paddr, arrival)`, while
    /// `logging` (the default for [`FixedLatency::new`]).
    pub log: Vec<(bool, u64, Ps)>,
    /// Whether requests go to `log`.
    pub logging: bool,
    /// Reads and writes per node (by [`NodeAddr::node`]).
    pub counts: Vec<(u64, u64)>,
    /// The latest time given to `advance`.
    pub advanced_to: Ps,
}

impl FixedLatency {
    /// A controller answering reads after `read_ps` and accepting writes
    /// after `write_ps`, logging every request.
    pub fn new(read_ps: Ps, write_ps: Ps) -> FixedLatency {
        FixedLatency {
            read_ps,
            write_ps,
            logging: true,
            ..FixedLatency::default()
        }
    }

    /// Reads received.
    pub fn reads(&self) -> usize {
        self.log.iter().filter(|r| !r.0).count()
    }

    /// Writes received.
    pub fn writes(&self) -> usize {
        self.log.iter().filter(|r| r.0).count()
    }

    fn count(&mut self, at: NodeAddr, write: bool, now: Ps) {
        if self.logging {
            self.log.push((write, at.paddr, now));
        }
        if self.counts.len() <= at.node {
            self.counts.resize(at.node + 1, (0, 0));
        }
        let c = &mut self.counts[at.node];
        if write {
            c.1 += 1;
        } else {
            c.0 += 1;
        }
    }
}

impl Backend for FixedLatency {
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        self.count(at, false, now);
        now.saturating_add(self.read_ps)
    }

    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        self.count(at, true, now);
        now.saturating_add(self.write_ps)
    }

    fn advance(&mut self, now: Ps) {
        self.advanced_to = self.advanced_to.max(now);
    }

    fn node_stats(&self, nodes: &[&str], _sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        nodes
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (reads, writes) = self.counts.get(i).copied().unwrap_or((0, 0));
                (
                    name.to_string(),
                    serde_json::json!({"reads": reads, "writes": writes}),
                )
            })
            .collect()
    }

    fn reset_stats(&mut self) {
        self.log.clear();
        self.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FlushKind, MemorySystem};
    use rvnvmm_config::Config;

    #[test]
    fn fixed_latency() {
        let mut f = FixedLatency::new(100, 5);
        assert_eq!(f.read(NodeAddr::in_first_node(0x40), 1000), 1100);
        assert_eq!(f.write(NodeAddr::in_first_node(0x80), 2000), 2005);
        assert_eq!((f.reads(), f.writes()), (1, 1));
        assert!(f.configure("dram", &[]).is_err());
    }

    /// Two DRAM nodes behind one fixed-latency controller.
    const MACHINE: &str = r#"
[memory.near]
base = 0x8000_0000
size = 0x4000_0000
kind = "dram"
controller = "ideal"

[memory.far]
base = 0xC000_0000
size = 0x4000_0000
kind = "dram"
controller = "ideal"

[memory.controllers.ideal]
technology = "fixed-latency"
"#;

    fn machine(sets: &[&str]) -> Result<MemorySystem, String> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = Config::from_toml_str(MACHINE, &sets).map_err(|e| e.to_string())?;
        MemorySystem::new(&cfg, 1).map_err(|e| e.to_string())
    }

    #[test]
    fn a_machine_of_this_technology_times_every_miss_alike_and_counts_per_node() {
        let mut ms = machine(&["memory.controllers.ideal.params.read_ns=100"]).unwrap();
        // Two misses to what would be different rows of one DDR3 bank: a
        // DDR3 controller would pay a row conflict for the second.
        let a = ms.data_access(0, 0x8000_0000, false, 0);
        let b = ms.data_access(0, 0xC000_0000, false, 1_000_000);
        assert_eq!(a, b);
        let c = machine(&[]).unwrap().data_access(0, 0x8000_0000, false, 0);
        assert!(a > c, "100 ns more than 0 ns: {a} vs {c} cycles");
        ms.data_access(0, 0xC000_0040, true, 2_000_000);
        ms.flush_line(0, 0xC000_0040, FlushKind::Flush, 3_000_000);
        let stats = ms.stats_json(1);
        assert_eq!(stats["regions"]["near"]["reads"], 1);
        assert_eq!(stats["regions"]["far"]["reads"], 2);
        assert_eq!(stats["regions"]["far"]["writes"], 1);
        assert_eq!(stats["regions"]["far"]["controller"], "ideal");
    }

    #[test]
    fn its_settings_are_checked() {
        let err = machine(&["memory.controllers.ideal.params.read=1"])
            .err()
            .unwrap();
        assert!(err.contains("params.read") && err.contains("read_ns, write_ns"), "{err}");
        let err = machine(&["memory.controllers.ideal.params.read_ns=-1"])
            .err()
            .unwrap();
        assert!(err.contains("params.read_ns"), "{err}");
        let err = machine(&["memory.far.kind=nvmm"]).err().unwrap();
        assert!(err.contains("memory.far.kind"), "{err}");
    }
}
