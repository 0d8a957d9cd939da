//! The NUMA view of the machine's memory nodes: each node's idle read
//! latency, measured on the model itself, and the node distances the guest
//! is told (the device tree's `numa-distance-map-v1`, user mode's
//! `/sys/devices/system/node/nodeN/distance`).
//!
//! Distances follow the ACPI SLIT convention Linux uses: 10 from a node to
//! itself, and between two nodes `10 × slower / faster` of their idle read
//! latencies, rounded, at least 11 (Linux refuses a remote distance of 10 or
//! less) and at most 254. A CXL node twice as slow as local DRAM is at 20,
//! the distance Linux assumes for a remote socket.

use rvnvmm_config::Config;

use crate::time::Ps;
use crate::{Intent, MemorySystem, MemsysError};

/// The distance from a node to itself (ACPI SLIT, Linux's `LOCAL_DISTANCE`).
pub const LOCAL_DISTANCE: u8 = 10;
/// The largest distance a SLIT entry may give (255 means unreachable).
pub const MAX_DISTANCE: u8 = 254;

/// The memory nodes of a machine as NUMA nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct NumaNodes {
    /// `(NUMA node id, region name, idle read latency)`, in the order of
    /// [`rvnvmm_config::Memory::nodes`] (by base address).
    pub nodes: Vec<(u32, String, Ps)>,
}

impl NumaNodes {
    /// Measures each node of `cfg`: the time from a core's load to its data
    /// for a line no cache holds, in a bank that is idle, on a machine that
    /// has done nothing else (what Intel MLC reports as idle latency).
    pub fn measure(cfg: &Config) -> Result<NumaNodes, MemsysError> {
        let mut nodes = Vec::new();
        for node in cfg.memory.nodes() {
            // A fresh machine for each node: nothing cached, every bank idle.
            let mut ms = MemorySystem::new(cfg, 1)?;
            // Past power-up, away from the first refresh window.
            let start: Ps = 1_000_000;
            let done = ms.data_access_ps(0, node.region.base, Intent::Read, start);
            nodes.push((node.id, node.name.to_string(), done - start));
        }
        Ok(NumaNodes { nodes })
    }

    /// The distance between the nodes at positions `a` and `b` of
    /// [`NumaNodes::nodes`].
    pub fn distance(&self, a: usize, b: usize) -> u8 {
        if a == b || self.nodes[a].0 == self.nodes[b].0 {
            return LOCAL_DISTANCE;
        }
        let (x, y) = (self.nodes[a].2.max(1), self.nodes[b].2.max(1));
        let ratio = x.max(y) as f64 / x.min(y) as f64;
        let d = (f64::from(LOCAL_DISTANCE) * ratio).round();
        d.clamp(f64::from(LOCAL_DISTANCE) + 1.0, f64::from(MAX_DISTANCE)) as u8
    }

    /// The distinct NUMA node ids, ascending, each with the position in
    /// [`NumaNodes::nodes`] of its first region (several regions may share
    /// one id).
    pub fn ids(&self) -> Vec<(u32, usize)> {
        let mut ids: Vec<(u32, usize)> = Vec::new();
        for (i, (id, _, _)) in self.nodes.iter().enumerate() {
            if !ids.iter().any(|(seen, _)| seen == id) {
                ids.push((*id, i));
            }
        }
        ids.sort_unstable();
        ids
    }

    /// The full distance matrix by NUMA node id: `(from, to, distance)` for
    /// every ordered pair of distinct ids, ascending.
    pub fn matrix(&self) -> Vec<(u32, u32, u8)> {
        let ids = self.ids();
        let mut out = Vec::with_capacity(ids.len() * ids.len());
        for &(a, ia) in &ids {
            for &(b, ib) in &ids {
                out.push((a, b, self.distance(ia, ib)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DRAM at 0x8000_0000 behind the default DDR3 controller and a second
    /// DRAM node behind a fixed-latency one.
    const MACHINE: &str = r#"
[memory.dram]
base = 0x8000_0000
size = 0x1000_0000
kind = "dram"
controller = "ddr3"

[memory.far]
base = 0x1_0000_0000
size = 0x1000_0000
kind = "dram"
controller = "slow"

[memory.controllers.ddr3]

[memory.controllers.slow]
technology = "fixed-latency"
"#;

    fn nodes(read_ns: u32) -> NumaNodes {
        let cfg = Config::from_toml_str(
            MACHINE,
            &[format!("memory.controllers.slow.params.read_ns={read_ns}")],
        )
        .unwrap();
        NumaNodes::measure(&cfg).unwrap()
    }

    #[test]
    fn a_slower_node_is_farther_in_proportion_to_its_latency() {
        let fast = nodes(0);
        let near = fast.nodes[0].2;
        assert!(near > 0);
        let slow = nodes(1000);
        assert_eq!(slow.nodes[0].2, near, "the DRAM node is measured alone");
        assert!(slow.nodes[1].2 > 1_000_000 && slow.nodes[1].2 > near);
        let d = slow.distance(0, 1);
        let want = (10.0 * slow.nodes[1].2 as f64 / near as f64)
            .round()
            .min(254.0) as u8;
        assert_eq!((d, slow.distance(1, 0)), (want, want));
        assert_eq!((slow.distance(0, 0), slow.distance(1, 1)), (10, 10));
        assert_eq!(
            slow.matrix(),
            vec![(0, 0, 10), (0, 1, d), (1, 0, d), (1, 1, 10)]
        );
    }

    #[test]
    fn a_cxl_node_is_farther_than_local_dram_as_published() {
        // configs/dram-cxl.toml: local DRAM 95 ns idle, CXL DRAM 88 ns more
        // (docs/config.md: 70-90 ns added [Pond]; 170-250 ns against
        // 80-140 ns [Hot Chips 34]).
        let cfg = Config::load(Some("dram-cxl"), &[]).unwrap();
        let n = NumaNodes::measure(&cfg).unwrap();
        let names: Vec<(u32, &str)> = n.nodes.iter().map(|(i, s, _)| (*i, s.as_str())).collect();
        assert_eq!(names, [(0, "dram"), (1, "cxl")]);
        let (dram, cxl) = (n.nodes[0].2, n.nodes[1].2);
        // Pinned (docs/fidelity.md, "CXL-attached memory"), and within the
        // published ranges.
        assert_eq!((dram, cxl), (95_000, 182_698));
        assert!((170_000..250_000).contains(&cxl), "{cxl}");
        assert!((70_000..=90_000).contains(&(cxl - dram)), "{}", cxl - dram);
        let d = n.distance(0, 1);
        assert_eq!(d, 19);
        assert!((15..=40).contains(&d), "{d}");
        // Three tiers: DRAM, CXL DRAM, then Optane-like memory, farthest.
        let cfg = Config::load(Some("dram-nvmm-cxl"), &[]).unwrap();
        let n = NumaNodes::measure(&cfg).unwrap();
        let ids: Vec<u32> = n.nodes.iter().map(|(i, _, _)| *i).collect();
        assert_eq!(ids, [0, 1, 2]);
        assert!(n.distance(0, 2) < n.distance(0, 1), "{:?}", n.matrix());
        assert!((15..=40).contains(&n.distance(0, 2)), "{:?}", n.matrix());
        // Persistent memory behind the link: the link's latency on top of
        // the device's.
        let cfg = Config::load(Some("dram-cxl-nvmm"), &[]).unwrap();
        let n = NumaNodes::measure(&cfg).unwrap();
        assert!(n.nodes[1].2 > n.nodes[0].2 + 200_000, "{:?}", n.nodes);
    }

    #[test]
    fn dram_cxl_with_ddr5_devices_by_speed_bin() {
        // configs/dram-cxl.toml keeps DDR3-1600 on both nodes (the figures
        // above); with DDR5-4800B sub-channels behind both controllers
        // (docs/config.md, "speed_bin") only the DRAM's own part of each
        // idle read changes: tRCD + CL + BL16 = 36.2 ns against DDR3's
        // 32.5, each rounded up to the 5 ns controller clock.
        let sets: Vec<String> = [
            "memory.controllers.ddr3.speed_bin=DDR5-4800B",
            "memory.controllers.cxl.speed_bin=DDR5-4800B",
        ]
        .map(String::from)
        .to_vec();
        let cfg = Config::load(Some("dram-cxl"), &sets).unwrap();
        cfg.validate().unwrap();
        let n = NumaNodes::measure(&cfg).unwrap();
        let (dram, cxl) = (n.nodes[0].2, n.nodes[1].2);
        assert_eq!((dram, cxl), (100_000, 187_698));
        assert!((170_000..250_000).contains(&cxl), "{cxl}");
        assert!((70_000..=90_000).contains(&(cxl - dram)), "{}", cxl - dram);
        // configs/ddr5-cxl.toml: the same devices (its mapping moves the
        // bank-group bits, not an idle read's time).
        let shipped = NumaNodes::measure(&Config::load(Some("ddr5-cxl"), &[]).unwrap()).unwrap();
        assert_eq!(shipped.nodes, n.nodes);
    }

    #[test]
    fn distinct_nodes_are_never_at_the_local_distance() {
        // Both nodes equally fast: Linux would refuse 10 between them.
        let n = NumaNodes {
            nodes: vec![(0, "a".into(), 100_000), (1, "b".into(), 100_000)],
        };
        assert_eq!(n.distance(0, 1), 11);
        // Regions sharing a node id are one node.
        let n = NumaNodes {
            nodes: vec![(0, "a".into(), 100_000), (0, "b".into(), 900_000)],
        };
        assert_eq!(n.distance(0, 1), 10);
        assert_eq!(n.matrix(), vec![(0, 0, 10)]);
    }
}
