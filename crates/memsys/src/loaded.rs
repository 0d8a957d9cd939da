//! Loaded latency, as Intel's Memory Latency Checker measures it
//! (`mlc --loaded_latency`): one requester chases pointers through a
//! memory node, one line at a time at random, while others stream through
//! the same node with a delay between their requests; each delay gives a
//! point (bandwidth of everything, latency of the chaser). The requests
//! go the whole way below the caches: the bus, the node's link if it has
//! one, its controller, so every model of the machine shapes the curve.

use crate::time::Ps;
use crate::{MemorySystem, MemsysError};
use rvnvmm_config::Config;

/// What to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedLatency {
    /// The memory node (region name) under test.
    pub node: String,
    /// Streaming requesters beside the chaser.
    pub generators: usize,
    /// Requests each generator may have in flight (its miss buffers).
    pub outstanding: usize,
    /// Of every `write_every` requests a generator makes, one is a write
    /// (a dirty line leaving); 0: reads only (MLC's default `-W1`).
    pub write_every: u64,
    /// The chaser's loads per point (after as many to warm up).
    pub probes: u64,
    /// Bytes of the node the requests spread over (from its base).
    pub span: u64,
}

/// One point of the curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadPoint {
    /// The generators' delay between requests, in ns.
    pub delay_ns: f64,
    /// Bytes moved per second by every requester, in GB/s (10^9).
    pub bandwidth_gbs: f64,
    /// The chaser's average load latency, in ns (request out to data in).
    pub latency_ns: f64,
}

/// A splitmix64 step: the chaser's random lines, the same every run.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl LoadedLatency {
    /// The curve on machine `cfg`: a point per delay of `delays_ns`, each
    /// measured on a fresh memory system.
    pub fn measure(&self, cfg: &Config, delays_ns: &[f64]) -> Result<Vec<LoadPoint>, MemsysError> {
        let region = cfg
            .memory
            .regions
            .get(&self.node)
            .ok_or_else(|| MemsysError::UnknownRegion(self.node.clone()))?;
        if self.generators == 0 || self.outstanding == 0 || self.probes == 0 {
            return Err(MemsysError::Setting {
                key: "loaded-latency".into(),
                problem: "generators, outstanding and probes must be at least 1".into(),
            });
        }
        let span = self.span.min(region.size).max(1 << 20);
        delays_ns
            .iter()
            .map(|&d| self.point(cfg, region.base, span, d))
            .collect()
    }

    fn point(
        &self,
        cfg: &Config,
        base: u64,
        span: u64,
        delay_ns: f64,
    ) -> Result<LoadPoint, MemsysError> {
        let mut ms = MemorySystem::new(cfg, 1 + self.generators)?;
        let line_shift = ms.l2.as_ref().map_or(ms.d_shift, |l2| l2.line_shift());
        let line = 1u64 << line_shift;
        let lines = span >> line_shift;
        let occ = ms.d_occ;
        let delay: Ps = (delay_ns.max(0.0) * 1000.0).round() as Ps;
        // Past power-up.
        let start: Ps = 1_000_000;
        // Each generator streams from a line of its own picked at random,
        // as MLC's threads through buffers at unrelated physical addresses
        // (streams a power of two apart would all start in one bank).
        let mut rng = 0x5EED_1A7E_u64;
        let mut next_line: Vec<u64> = (0..self.generators)
            .map(|_| next_random(&mut rng) % lines)
            .collect();
        let mut issued: Vec<u64> = vec![0; self.generators];
        let mut next_issue: Vec<Ps> = vec![start; self.generators];
        // Completion times of each generator's requests in flight.
        let mut in_flight: Vec<Vec<Ps>> =
            vec![Vec::with_capacity(self.outstanding); self.generators];
        let mut chaser_at = start;
        let (mut probes, mut probe_ps) = (0u64, 0u64);
        let (mut bytes, mut measuring_since) = (0u64, None::<Ps>);
        let warm = self.probes;
        while probes < warm + self.probes {
            // The requester whose next request comes first.
            let (g, t) = next_issue
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(_, t)| t)
                .expect("at least one generator");
            if chaser_at <= t {
                let l = next_random(&mut rng) % lines;
                let done = ms.mem_read(0, base + l * line, chaser_at, occ);
                probes += 1;
                if probes == warm {
                    measuring_since = Some(done);
                } else if probes > warm {
                    probe_ps += done - chaser_at;
                    bytes += line;
                }
                chaser_at = done;
                continue;
            }
            let flights = &mut in_flight[g];
            flights.retain(|&d| d > t);
            if flights.len() >= self.outstanding {
                // Wait for the first of them to come back.
                next_issue[g] = flights.iter().copied().min().unwrap_or(t).max(t + 1);
                continue;
            }
            let addr = base + (next_line[g] % lines) * line;
            next_line[g] += 1;
            issued[g] += 1;
            let write = self.write_every > 0 && issued[g].is_multiple_of(self.write_every);
            let done = if write {
                ms.mem_write(1 + g, addr, t, occ)
            } else {
                ms.mem_read(1 + g, addr, t, occ)
            };
            flights.push(done);
            if measuring_since.is_some() {
                bytes += line;
            }
            next_issue[g] = t + delay.max(1);
        }
        let since = measuring_since.unwrap_or(start);
        let elapsed = chaser_at.saturating_sub(since).max(1);
        Ok(LoadPoint {
            delay_ns,
            bandwidth_gbs: bytes as f64 / (elapsed as f64 / 1000.0),
            latency_ns: probe_ps as f64 / self.probes as f64 / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(node: &str) -> LoadedLatency {
        LoadedLatency {
            node: node.into(),
            generators: 4,
            outstanding: 8,
            write_every: 0,
            probes: 300,
            span: 64 << 20,
        }
    }

    #[test]
    fn latency_rises_as_the_generators_load_the_node() {
        let cfg = Config::from_toml_str("", &[]).unwrap();
        let points = spec("dram").measure(&cfg, &[0.0, 10_000.0]).unwrap();
        let (busy, idle) = (points[0], points[1]);
        assert!(busy.bandwidth_gbs > 2.0 * idle.bandwidth_gbs, "{points:?}");
        assert!(busy.latency_ns > idle.latency_ns, "{points:?}");
        // Unloaded, the chaser sees the node's idle latency.
        let nodes = crate::NumaNodes::measure(&cfg).unwrap();
        let (_, _, idle_ps) = nodes.nodes.iter().find(|n| n.1 == "dram").unwrap();
        let idle_ns = *idle_ps as f64 / 1000.0;
        assert!(
            (idle.latency_ns - idle_ns).abs() < 0.35 * idle_ns,
            "{} vs {idle_ns}",
            idle.latency_ns
        );
        // The same every time.
        assert_eq!(spec("dram").measure(&cfg, &[0.0]).unwrap()[0], busy);
    }

    #[test]
    fn an_unknown_node_or_no_generator_is_refused() {
        let cfg = Config::from_toml_str("", &[]).unwrap();
        assert!(spec("hbm").measure(&cfg, &[0.0]).is_err());
        let none = LoadedLatency {
            generators: 0,
            ..spec("dram")
        };
        assert!(none.measure(&cfg, &[0.0]).is_err());
    }
}
