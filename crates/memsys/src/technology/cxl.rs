//! A CXL link in front of a controller (`[memory.controllers.NAME.link]`):
//! the controller, of any technology, is then a CXL Type-3 memory
//! expander's, reached over a PCIe PHY instead of sitting on the bus.
//!
//! What is modelled (`docs/memory-system.md`, "A CXL link"):
//!
//! * **Flits.** CXL.mem messages travel in 16-byte slots of flits: at PCIe
//!   3.0-5.0 a 68-byte flit (a 2-byte protocol ID, four slots, a 2-byte
//!   CRC) under 128b/130b coding; at PCIe 6.0 a 256-byte flit (fifteen
//!   slots, 16 bytes of header, CRC and FEC) under 1b/1b. A request or a
//!   completion takes one slot, a line of data one header slot and
//!   `line_bytes / 16` data slots. A transfer of `n` slots occupies its
//!   direction for `n × 16 × (flit bytes / slot bytes) × code / (GT/s ×
//!   lanes)`.
//! * **Two directions.** Host → device carries read requests and writes
//!   with their data; device → host carries read data and write
//!   completions. Each direction serialises: a transfer starts at the later
//!   of its arrival and the end of the one before it.
//! * **Ports and retimers.** `port_ns + retimers × retimer_ns` each way,
//!   after a transfer leaves its sender.
//!
//! Not modelled: CXL.cache and CXL.io traffic, switches, link-layer credits
//! and retries, packing several headers into one slot (a header takes a
//! whole slot here), and the flit boundary (a transfer takes its slots'
//! time, not a whole number of flits).

use rvnvmm_config::{Link, LinkKind, MAX_LATENCY_NS};
use serde_json::{json, Value};

use crate::backend::{Backend, NodeAddr};
use crate::time::{ns_to_ps, Ps};
use crate::MemsysError;

/// Bytes of a flit slot (CXL.mem's unit of a message or of data).
pub const SLOT_BYTES: u64 = 16;

/// The PHY and flit format of a PCIe generation: `(GT/s per lane, flit
/// bytes on the wire, slots per flit, line-code bits per data bit as
/// numerator / denominator)`, or `None` for a generation CXL does not run
/// on.
fn phy(generation: u32) -> Option<(f64, u64, u64, f64, f64)> {
    Some(match generation {
        // 68-byte flits under 128b/130b (CXL 1.1 and 2.0).
        3 => (8.0, 68, 4, 130.0, 128.0),
        4 => (16.0, 68, 4, 130.0, 128.0),
        5 => (32.0, 68, 4, 130.0, 128.0),
        // 256-byte flits, PAM4, 1b/1b (CXL 3.x on PCIe 6.0).
        6 => (64.0, 256, 15, 1.0, 1.0),
        _ => return None,
    })
}

/// One direction of the link: a transfer at a time, each in the earliest
/// gap at or after it is ready. CXL.mem responses carry tags and may
/// return out of order, so a line the device has ready does not wait
/// behind one booked earlier that is not ready yet; and requests of harts
/// simulated one after another reach the link out of time order, as they
/// reach the bus (`crate::bus`).
#[derive(Clone, Debug, Default)]
struct Direction {
    /// The transfers booked.
    timeline: crate::bus::Timeline,
    /// When the latest transfer booked ends.
    free: Ps,
    /// Time spent carrying transfers.
    busy_ps: Ps,
}

impl Direction {
    /// Books a transfer ready at `at` lasting `dur`: `(start, end)`.
    fn book(&mut self, at: Ps, dur: Ps) -> (Ps, Ps) {
        let start = self.timeline.earliest_fit(at, dur);
        self.timeline.reserve(start, dur);
        let end = start.saturating_add(dur);
        self.free = self.free.max(end);
        self.busy_ps = self.busy_ps.saturating_add(dur);
        (start, end)
    }
}

/// What one node's requests put on one direction of the link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Transfers (requests, lines of data, completions).
    pub transfers: u64,
    /// 16-byte slots they took.
    pub slots: u64,
    /// Bytes of line data among them.
    pub data_bytes: u64,
    /// Time they waited for the direction to be free.
    pub wait_ps: Ps,
}

impl Traffic {
    fn add(&mut self, slots: u64, data_bytes: u64, wait_ps: Ps) {
        self.transfers += 1;
        self.slots += slots;
        self.data_bytes += data_bytes;
        self.wait_ps = self.wait_ps.saturating_add(wait_ps);
    }
}

/// A backend behind a CXL link (see the module documentation).
pub struct CxlLink<B> {
    /// The device's controller, addressed as without the link.
    pub inner: B,
    link: Link,
    /// Ports and retimers, each way.
    each_way: Ps,
    /// Occupancy of a one-slot transfer (a read request, a completion).
    header_ps: Ps,
    /// Occupancy of a line with its header slot.
    line_ps: Ps,
    line_slots: u64,
    line_bytes: u64,
    slots_per_flit: u64,
    flit_bytes: u64,
    h2d: Direction,
    d2h: Direction,
    /// Per node (by [`NodeAddr::node`]): host → device, device → host.
    traffic: Vec<(Traffic, Traffic)>,
}

impl<B: Backend> CxlLink<B> {
    /// `inner` behind `link`, for lines of `line_bytes`; `controller` names
    /// the controller in errors. Refuses settings outside what the config
    /// check allows, so that a machine built without that check cannot
    /// divide by zero.
    pub fn new(
        inner: B,
        link: &Link,
        line_bytes: u64,
        controller: &str,
    ) -> Result<CxlLink<B>, MemsysError> {
        let bad = |key: &str, problem: String| MemsysError::Setting {
            key: format!("memory.controllers.{controller}.link.{key}"),
            problem,
        };
        match link.kind {
            LinkKind::Cxl => {}
        }
        let (gts, flit_bytes, slots_per_flit, code_num, code_den) = phy(link.generation)
            .ok_or_else(|| {
                bad(
                    "generation",
                    format!("must be from 3 to 6, got {}", link.generation),
                )
            })?;
        if !(link.lanes.is_power_of_two() && link.lanes <= 16) {
            return Err(bad(
                "lanes",
                format!("must be a power of two from 1 to 16, got {}", link.lanes),
            ));
        }
        if link.retimers > 2 {
            return Err(bad(
                "retimers",
                format!("must be from 0 to 2, got {}", link.retimers),
            ));
        }
        for (key, ns) in [("port_ns", link.port_ns), ("retimer_ns", link.retimer_ns)] {
            if !(ns.is_finite() && (0.0..=MAX_LATENCY_NS).contains(&ns)) {
                return Err(bad(key, format!("must be from 0 to 1e12 ns, got {ns}")));
            }
        }
        // Wire time of one slot: its share of a flit, line-coded, over
        // GT/s × lanes bits per ns.
        let slot_ns = (SLOT_BYTES * 8) as f64 * flit_bytes as f64
            / (slots_per_flit * SLOT_BYTES) as f64
            * code_num
            / code_den
            / (gts * f64::from(link.lanes));
        let line_slots = 1 + line_bytes.div_ceil(SLOT_BYTES).max(1);
        Ok(CxlLink {
            inner,
            link: link.clone(),
            each_way: ns_to_ps(link.port_ns + f64::from(link.retimers) * link.retimer_ns),
            header_ps: ns_to_ps(slot_ns),
            line_ps: ns_to_ps(slot_ns * line_slots as f64),
            line_slots,
            line_bytes,
            slots_per_flit,
            flit_bytes,
            h2d: Direction::default(),
            d2h: Direction::default(),
            traffic: Vec::new(),
        })
    }

    /// The latency ports and retimers add each way.
    pub fn each_way(&self) -> Ps {
        self.each_way
    }

    /// How long a line with its header occupies a direction.
    pub fn line_ps(&self) -> Ps {
        self.line_ps
    }

    /// How long a one-slot message (a request, a completion) occupies a
    /// direction.
    pub fn header_ps(&self) -> Ps {
        self.header_ps
    }

    /// Node `node`'s traffic: host → device, device → host.
    pub fn traffic(&self, node: usize) -> (Traffic, Traffic) {
        self.traffic.get(node).copied().unwrap_or_default()
    }

    fn node(&mut self, node: usize) -> &mut (Traffic, Traffic) {
        if self.traffic.len() <= node {
            self.traffic.resize(node + 1, Default::default());
        }
        &mut self.traffic[node]
    }

    fn direction_json(&self, t: &Traffic) -> Value {
        let flits = t.slots as f64 / self.slots_per_flit as f64;
        json!({
            "transfers": t.transfers,
            "slots": t.slots,
            "flits": flits,
            "wire_bytes": flits * self.flit_bytes as f64,
            "data_bytes": t.data_bytes,
            "wait_ns": t.wait_ps as f64 / 1000.0,
        })
    }
}

impl<B: Backend> Backend for CxlLink<B> {
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        let (start, sent) = self.h2d.book(now, self.header_ps);
        self.node(at.node).0.add(1, 0, start - now);
        let data = self.inner.read(at, sent.saturating_add(self.each_way));
        let (start, sent) = self.d2h.book(data, self.line_ps);
        let (slots, bytes) = (self.line_slots, self.line_bytes);
        self.node(at.node).1.add(slots, bytes, start - data);
        sent.saturating_add(self.each_way)
    }

    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        let (start, sent) = self.h2d.book(now, self.line_ps);
        let (slots, bytes) = (self.line_slots, self.line_bytes);
        self.node(at.node).0.add(slots, bytes, start - now);
        let accepted = self.inner.write(at, sent.saturating_add(self.each_way));
        // The completion goes back; the writer does not wait for it.
        let (back, _) = self.d2h.book(accepted, self.header_ps);
        self.node(at.node).1.add(1, 0, back - accepted);
        // The root port takes a posted write when the link starts carrying
        // it, or later if the device holds it back.
        let held = accepted.saturating_sub(self.each_way.saturating_add(self.line_ps));
        start.max(held).max(now)
    }

    fn advance(&mut self, now: Ps) {
        // Whatever is sent later reaches the device after now + each_way.
        self.inner.advance(now.saturating_add(self.each_way))
    }

    fn drain(&mut self, now: Ps) {
        let end = now.max(self.h2d.free).saturating_add(self.each_way);
        self.inner.drain(end)
    }

    fn node_stats(&self, nodes: &[&str], sim_time_ns: u64) -> Vec<(String, Value)> {
        let sim_ps = sim_time_ns.saturating_mul(1000);
        let utilization = |busy: Ps| {
            if sim_ps == 0 {
                0.0
            } else {
                busy as f64 / sim_ps as f64
            }
        };
        let mut out = self.inner.node_stats(nodes, sim_time_ns);
        for (name, v) in &mut out {
            let Some(i) = nodes.iter().position(|n| n == name) else {
                continue;
            };
            let (h2d, d2h) = self.traffic(i);
            if let Value::Object(map) = v {
                map.insert(
                    "link".into(),
                    json!({
                        "kind": self.link.kind.as_str(),
                        "generation": self.link.generation,
                        "lanes": self.link.lanes,
                        "h2d": self.direction_json(&h2d),
                        "d2h": self.direction_json(&d2h),
                        "h2d_busy_ns": self.h2d.busy_ps as f64 / 1000.0,
                        "d2h_busy_ns": self.d2h.busy_ps as f64 / 1000.0,
                        "h2d_utilization": utilization(self.h2d.busy_ps),
                        "d2h_utilization": utilization(self.d2h.busy_ps),
                    }),
                );
            }
        }
        out
    }

    fn reset_stats(&mut self) {
        self.inner.reset_stats();
        self.traffic.clear();
        self.h2d.busy_ps = 0;
        self.d2h.busy_ps = 0;
    }

    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        self.inner.configure(node, settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::technology::fixed_latency::FixedLatency;
    use crate::{Intent, MemorySystem};
    use rvnvmm_config::Config;

    fn at(paddr: u64) -> NodeAddr {
        NodeAddr::in_first_node(paddr)
    }

    fn link(sets: impl FnOnce(&mut Link)) -> Link {
        let mut l = Link::default();
        sets(&mut l);
        l
    }

    /// PCIe 5.0 x8 with 68-byte flits, by hand: a slot is 16 of every 64
    /// payload bytes of a 68-byte flit, 128b/130b coded, over 32 GT/s × 8.
    const GEN5_X8_SLOT_NS: f64 = 16.0 * 68.0 / 64.0 * 8.0 * 130.0 / 128.0 / (32.0 * 8.0);

    #[test]
    fn an_idle_read_pays_the_ports_and_retimers_each_way_and_the_flit_times() {
        let l = link(|l| {
            l.retimers = 2;
            l.retimer_ns = 7.0;
        });
        let mut c = CxlLink::new(FixedLatency::new(50_000, 0), &l, 64, "cxl").unwrap();
        let each_way = ns_to_ps(40.0 + 2.0 * 7.0);
        assert_eq!(c.each_way(), each_way);
        assert_eq!(c.header_ps(), ns_to_ps(GEN5_X8_SLOT_NS));
        assert_eq!(c.line_ps(), ns_to_ps(5.0 * GEN5_X8_SLOT_NS));
        let start = 1_000_000;
        let done = c.read(at(0x40), start);
        assert_eq!(
            done - start,
            50_000 + 2 * each_way + c.header_ps() + c.line_ps()
        );
        // The device saw the request after the request slot and one way.
        assert_eq!(
            c.inner.log,
            [(false, 0x40, start + c.header_ps() + each_way)]
        );
        // An idle posted write costs the writer nothing.
        assert_eq!(c.write(at(0x80), 2_000_000), 2_000_000);
    }

    #[test]
    fn the_link_adds_exactly_its_latency_to_an_idle_load_on_the_machine() {
        // The local DRAM node of configs/dram-cxl.toml (a 30 ns path each
        // way to its controller), with a link put in front of it or not.
        let idle = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let cfg = Config::load(Some("dram-cxl"), &sets).unwrap();
            let mut ms = MemorySystem::new(&cfg, 1).unwrap();
            ms.data_access_ps(0, 0x8000_0000, Intent::Read, 1_000_000) - 1_000_000
        };
        let l = CxlLink::new(FixedLatency::default(), &Link::default(), 64, "c").unwrap();
        let added = 2 * l.each_way() + l.header_ps() + l.line_ps();
        // The defaults: 83 ns, within Pond's 70-90 ns (docs/config.md).
        assert!((83_000..84_000).contains(&added), "{added}");
        // Exactly that on a technology without a clock.
        let fixed = "memory.controllers.ddr3.technology=fixed-latency";
        assert_eq!(
            idle(&[fixed, "memory.controllers.ddr3.link.kind=cxl"]) - idle(&[fixed]),
            added
        );
        // The DDR3 controller takes a request at its next clock edge (5 ns
        // at 200 MHz): the request half of the link is rounded up to it.
        let there = l.each_way() + l.header_ps();
        let edge = there.div_ceil(5_000) * 5_000;
        let plain = idle(&[]);
        let linked = idle(&["memory.controllers.ddr3.link.kind=cxl"]);
        assert_eq!(linked - plain, added + edge - there);
        // The same behind an interface crossing (aligned to the clock).
        let crossing = "memory.controllers.ddr3.interface_latency_ns=20";
        assert_eq!(
            idle(&[crossing, "memory.controllers.ddr3.link.lanes=8"]) - idle(&[crossing]),
            added + edge - there
        );
    }

    /// The data rate of `n` lines through `c` when every read is presented
    /// at once (reads) or each write when the one before it was taken
    /// (writes), in GB/s.
    fn stream_gbps(c: &mut CxlLink<FixedLatency>, write: bool, n: u64) -> f64 {
        let (start, mut t, mut last) = (1_000_000, 1_000_000, 0);
        for i in 0..n {
            if write {
                t = c.write(at(i * 64), t);
                last = c.h2d.free;
            } else {
                last = last.max(c.read(at(i * 64), start));
            }
        }
        let lines = (n * 64) as f64;
        lines / ((last - start) as f64 / 1000.0)
    }

    #[test]
    fn reads_are_limited_by_device_to_host_and_writes_by_host_to_device() {
        let want = 64.0 / (5.0 * GEN5_X8_SLOT_NS);
        assert!((23.6..23.8).contains(&want), "{want}");
        for write in [false, true] {
            let mut c = CxlLink::new(FixedLatency::new(0, 0), &Link::default(), 64, "c").unwrap();
            let got = stream_gbps(&mut c, write, 100_000);
            assert!(
                (got / want - 1.0).abs() < 0.001,
                "write {write}: {got} GB/s, want {want}"
            );
            // The other direction carries one slot per line.
            let (h2d, d2h) = c.traffic(0);
            let (busy, idle) = if write { (h2d, d2h) } else { (d2h, h2d) };
            assert_eq!((busy.slots, idle.slots), (500_000, 100_000));
            assert_eq!((busy.data_bytes, idle.data_bytes), (6_400_000, 0));
        }
        // Wider and faster links scale: x16 doubles it, PCIe 6.0's
        // 256-byte flits (15 slots in 256 bytes, 1b/1b) at 64 GT/s give
        // 64 / (5 × 16 × 256/240 × 8 / 512) GB/s.
        let mut c =
            CxlLink::new(FixedLatency::new(0, 0), &link(|l| l.lanes = 16), 64, "c").unwrap();
        let got = stream_gbps(&mut c, false, 100_000);
        assert!((got / (2.0 * want) - 1.0).abs() < 0.001, "{got}");
        let gen6 = 64.0 / (5.0 * 16.0 * 256.0 / 240.0 * 8.0 / 512.0);
        let mut c = CxlLink::new(
            FixedLatency::new(0, 0),
            &link(|l| l.generation = 6),
            64,
            "c",
        )
        .unwrap();
        let got = stream_gbps(&mut c, false, 100_000);
        assert!((got / gen6 - 1.0).abs() < 0.001, "{got} vs {gen6}");
    }

    #[test]
    fn two_reads_per_write_use_both_directions_past_either_alone() {
        // Intel MLC's 2:1 mix, as Micron measured its CZ120 (36 GB/s on
        // PCIe 5.0 x8; docs/fidelity.md): per three lines, device to host
        // carries two lines and a completion (11 slots), host to device two
        // requests and a line (7 slots).
        let mut c = CxlLink::new(FixedLatency::new(0, 0), &Link::default(), 64, "c").unwrap();
        let n = 30_000;
        for i in 0..n {
            c.read(at(i * 192), 0);
            c.read(at(i * 192 + 64), 0);
            c.write(at(i * 192 + 128), 0);
        }
        let gbps = (n * 192) as f64 / (c.d2h.free as f64 / 1000.0);
        let want = 192.0 / (11.0 * GEN5_X8_SLOT_NS);
        assert!((gbps / want - 1.0).abs() < 0.001, "{gbps} vs {want}");
        assert!((32.2..32.4).contains(&gbps), "{gbps}");
        assert!(c.h2d.free < c.d2h.free);
    }

    #[test]
    fn a_busy_direction_makes_transfers_wait_and_counts_it() {
        let mut c = CxlLink::new(FixedLatency::new(0, 0), &Link::default(), 64, "c").unwrap();
        let a = c.read(at(0), 0);
        let b = c.read(at(64), 0);
        assert_eq!(b - a, c.line_ps(), "the second line follows the first");
        let (h2d, d2h) = c.traffic(0);
        assert_eq!(h2d.wait_ps, c.header_ps());
        assert_eq!(d2h.wait_ps, c.line_ps() - c.header_ps());
        // A writer behind a busy host-to-device direction waits for its turn.
        let mut c = CxlLink::new(FixedLatency::new(0, 0), &Link::default(), 64, "c").unwrap();
        assert_eq!(c.write(at(0), 0), 0);
        assert_eq!(c.write(at(64), 0), c.line_ps());
    }

    #[test]
    fn bad_settings_are_refused_not_divided_by() {
        for (l, key) in [
            (link(|l| l.generation = 2), "link.generation"),
            (link(|l| l.lanes = 0), "link.lanes"),
            (link(|l| l.lanes = 12), "link.lanes"),
            (link(|l| l.retimers = 3), "link.retimers"),
            (link(|l| l.port_ns = f64::NAN), "link.port_ns"),
        ] {
            let err = CxlLink::new(FixedLatency::default(), &l, 64, "far")
                .err()
                .unwrap()
                .to_string();
            assert!(
                err.contains(&format!("memory.controllers.far.{key}")),
                "{err}"
            );
        }
    }

    #[test]
    fn the_link_reports_per_node_and_a_machine_without_one_reports_nothing_new() {
        // DRAM on the local controller, and a second DRAM node behind a
        // CXL link.
        let mut cfg = Config::load(Some("dram-cxl"), &[]).unwrap();
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        ms.data_access_ps(0, 0x1_0000_0000, Intent::Read, 1_000_000);
        ms.data_access_ps(0, 0x8000_0000, Intent::Read, 2_000_000);
        let stats = ms.stats_json(1_000);
        let link = &stats["regions"]["cxl"]["link"];
        assert_eq!(link["kind"], "cxl");
        assert_eq!(
            (link["generation"].as_u64(), link["lanes"].as_u64()),
            (Some(5), Some(8))
        );
        assert_eq!(link["h2d"]["slots"], 1);
        assert_eq!(link["d2h"]["slots"], 5);
        assert_eq!(link["d2h"]["data_bytes"], 64);
        assert_eq!(link["d2h"]["flits"], 1.25);
        assert_eq!(link["d2h"]["wire_bytes"], 85.0);
        assert!(link["d2h_busy_ns"].as_f64().unwrap() > 2.6);
        assert_eq!(stats["regions"]["cxl"]["reads"], 1, "the controller's own");
        assert!(stats["regions"]["dram"].get("link").is_none());
        ms.reset_stats();
        assert_eq!(
            ms.stats_json(1_000)["regions"]["cxl"]["link"]["d2h"]["slots"],
            0
        );

        // Without the table, not a trace of it.
        cfg.memory.controllers.get_mut("cxl").unwrap().link = None;
        let mut ms = MemorySystem::new(&cfg, 1).unwrap();
        ms.data_access_ps(0, 0x1_0000_0000, Intent::Read, 1_000_000);
        assert!(!ms.stats_json(1_000).to_string().contains("link"));
    }
}
