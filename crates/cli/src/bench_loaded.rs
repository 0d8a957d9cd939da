//! `rvnvmm bench loaded-latency`: Intel MLC's loaded-latency measurement
//! on the machine's memory nodes ([`rvnvmm_memsys::LoadedLatency`]): for
//! each node, the latency of a pointer chase against the bandwidth of
//! streams beside it, from idle to saturated; with the published figures
//! of the kind of memory the node models beside the model's.

use crate::error::CliError;
use crate::MachineArgs;
use clap::Args;
use rvnvmm_config::{Config, RegionKind};
use rvnvmm_memsys::{LoadPoint, LoadedLatency};
use serde_json::json;

/// Options of `bench loaded-latency`.
#[derive(Args)]
pub struct LoadedArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// The memory nodes (region names) to measure, comma-separated; all by
    /// default.
    #[arg(long, value_delimiter = ',')]
    nodes: Vec<String>,
    /// Print one JSON object per point instead of the tables.
    #[arg(long)]
    json: bool,
    /// The streams' delays between requests, in ns, comma-separated (MLC's
    /// injection delays).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,5,10,20,40,80,150,300,600,1200,3000,10000"
    )]
    delays: Vec<f64>,
    /// Streaming requesters beside the chaser.
    #[arg(long, default_value_t = 8)]
    generators: usize,
    /// Requests each stream may have in flight.
    #[arg(long, default_value_t = 10)]
    outstanding: usize,
    /// One request in N of the streams is a write (MLC's -W: 3 gives two
    /// reads per write); 0: reads only.
    #[arg(long, default_value_t = 0)]
    write_every: u64,
    /// The chaser's loads per point.
    #[arg(long, default_value_t = 2000)]
    probes: u64,
}

/// A published figure for the kind of memory a node models.
struct Published {
    idle_ns: &'static str,
    bandwidth: &'static str,
    source: &'static str,
}

/// What has been published for the memory node `name` of `cfg` models.
fn published(cfg: &Config, name: &str) -> Published {
    let r = &cfg.memory.regions[name];
    let ctl = &cfg.memory.controllers[&r.controller];
    if ctl.link.is_some() {
        return Published {
            idle_ns: "170-250 (70-90 over local DRAM)",
            bandwidth: "36 GB/s at 2 reads : 1 write, x8",
            source:
                "CXL Type-3 expanders: Hot Chips 34 CXL tutorial; Pond (ASPLOS 2023); Micron CZ120",
        };
    }
    match (r.kind(), r.nvmm.as_ref().map(|n| n.method.to_string())) {
        (RegionKind::Nvmm, Some(m)) if m == "optane" => Published {
            idle_ns: "305 random, 169 sequential",
            bandwidth: "6.6 GB/s read, 2.3 GB/s write per DIMM",
            source: "Optane DC PMM: Izraelevitz et al. 2019; Yang et al. FAST 2020",
        },
        (RegionKind::Nvmm, _) => Published {
            idle_ns: "DRAM's plus the method's added tRCD/tRP",
            bandwidth: "seed 001 Fig. 4 (bench bandwidth)",
            source: "the NVMM emulation methods of seeds 000 and 001",
        },
        (RegionKind::Dram, _) => Published {
            idle_ns: "81-101 (server DDR4)",
            bandwidth: "12.8 GB/s peak per DDR3-1600 channel",
            source: "Izraelevitz et al. 2019, Yang et al. FAST 2020; JEDEC DDR3-1600",
        },
    }
}

/// Runs the measurement and prints it.
pub fn loaded(a: LoadedArgs) -> Result<i32, CliError> {
    let cfg = crate::load_config(&a.machine)?;
    let nodes: Vec<String> = if a.nodes.is_empty() {
        cfg.memory
            .nodes()
            .iter()
            .map(|n| n.name.to_string())
            .collect()
    } else {
        a.nodes.clone()
    };
    for name in &nodes {
        let spec = LoadedLatency {
            node: name.clone(),
            generators: a.generators,
            outstanding: a.outstanding,
            write_every: a.write_every,
            probes: a.probes,
            span: 1 << 30,
        };
        let points = spec.measure(&cfg, &a.delays)?;
        let p = published(&cfg, name);
        if a.json {
            for pt in &points {
                println!(
                    "{}",
                    json!({
                        "node": name,
                        "delay_ns": pt.delay_ns,
                        "bandwidth_gbs": pt.bandwidth_gbs,
                        "latency_ns": pt.latency_ns,
                        "published_idle_ns": p.idle_ns,
                        "published_bandwidth": p.bandwidth,
                        "published_source": p.source,
                    })
                );
            }
            continue;
        }
        print_node(name, &points, &p);
    }
    Ok(0)
}

fn print_node(name: &str, points: &[LoadPoint], p: &Published) {
    println!("node {name}: latency of a pointer chase under the streams' load");
    println!("{:>10} {:>12} {:>12}", "delay_ns", "GB/s", "latency_ns");
    for pt in points {
        println!(
            "{:>10} {:>12.2} {:>12.1}",
            pt.delay_ns, pt.bandwidth_gbs, pt.latency_ns
        );
    }
    let idle = points
        .iter()
        .min_by(|a, b| a.bandwidth_gbs.total_cmp(&b.bandwidth_gbs));
    let peak = points
        .iter()
        .max_by(|a, b| a.bandwidth_gbs.total_cmp(&b.bandwidth_gbs));
    if let (Some(idle), Some(peak)) = (idle, peak) {
        println!(
            "model: {:.1} ns at the lightest load, {:.2} GB/s at most",
            idle.latency_ns, peak.bandwidth_gbs
        );
    }
    println!(
        "published: idle {} ns, {} ({})",
        p.idle_ns, p.bandwidth, p.source
    );
    println!();
}
