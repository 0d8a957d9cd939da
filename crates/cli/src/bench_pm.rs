//! `rvnvmm bench pm`: the persistent-memory measurements of Izraelevitz et
//! al. (2019) and Yang et al. (FAST 2020) as built-in loops
//! ([`rvnvmm_dram::pm`]), run in-process on the memory controllers of the
//! machine, NVMM region beside DRAM region. Each measurement starts from
//! fresh controllers, so it is a pure function of the config and options.

use crate::error::{CliError, MachineLacks};
use crate::MachineArgs;
use clap::Args;
use rvnvmm_config::{Config, RegionKind};
use rvnvmm_dram::pm::{self, Area, CpuPath, Kind, Pattern};
use rvnvmm_dram::Controller;
use serde_json::json;

/// Options of `bench pm`.
#[derive(Args)]
pub struct PmArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Print one JSON object per measurement instead of the tables.
    #[arg(long)]
    json: bool,
    /// The NVMM region's method (a `--set memory.NAME.method=`).
    #[arg(long, default_value = "optane")]
    method: String,
    /// Access sizes in bytes, comma-separated (multiples of 64).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,128,256,512,1024,2048,4096"
    )]
    sizes: Vec<u64>,
    /// Thread counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    threads: Vec<u64>,
    /// Only these kinds (load, store-clean, nt-store), comma-separated.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Bytes each thread moves per bandwidth measurement.
    #[arg(long, default_value_t = 1 << 20)]
    bytes_per_thread: u64,
    /// Bytes of each region the loops spread over (from its base).
    #[arg(long, default_value_t = 1 << 30)]
    span: u64,
    /// Loads per idle-latency measurement.
    #[arg(long, default_value_t = 10_000)]
    loads: u64,
}

/// One region under test: a fresh controller for each measurement.
struct Target {
    cfg: Config,
    controller: String,
    area: Area,
    path: CpuPath,
}

impl Target {
    fn new(cfg: &Config, kind: RegionKind, span: u64) -> Result<Target, CliError> {
        let lacks = match kind {
            RegionKind::Dram => MachineLacks::Dram,
            RegionKind::Nvmm => MachineLacks::Nvmm,
        };
        let (_, r) = cfg.memory.regions_of_kind(kind).next().ok_or(lacks)?;
        let ctl = &cfg.memory.controllers[&r.controller];
        let ps = |ns: f64| (ns * 1000.0).round() as u64;
        Ok(Target {
            cfg: cfg.clone(),
            controller: r.controller.clone(),
            area: Area {
                base: r.base,
                span: span.min(r.size),
            },
            path: CpuPath {
                request_ps: ps(cfg.bus.request_latency_ns + ctl.interface_latency_ns),
                response_ps: ps(cfg.bus.response_latency_ns + ctl.interface_latency_ns),
            },
        })
    }

    fn controller(&self) -> Result<Controller, CliError> {
        Ok(Controller::from_config(&self.cfg, &self.controller)?)
    }
}

fn parse_kinds(names: &[String]) -> Result<Vec<Kind>, CliError> {
    if names.is_empty() {
        return Ok(Kind::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            Kind::ALL
                .into_iter()
                .find(|k| k.as_str() == n)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "--kinds wants load, store-clean or nt-store, got '{n}'"
                    ))
                })
        })
        .collect()
}

/// Runs the measurements and prints them.
pub fn pm(a: PmArgs) -> Result<i32, CliError> {
    let kinds = parse_kinds(&a.kinds)?;
    if let Some(s) = a.sizes.iter().find(|&&s| s == 0 || s % pm::LINE != 0) {
        return Err(CliError::Usage(format!(
            "--sizes wants multiples of {}, got {s}",
            pm::LINE
        )));
    }
    if a.threads.contains(&0) {
        return Err(CliError::Usage(
            "--threads wants counts of at least 1".into(),
        ));
    }
    let base = crate::load_config(&a.machine)?;
    let (nvmm_name, _, _) = crate::bench_common::nvmm_region(&base)?;
    let mut sets = a.machine.sets.clone();
    sets.push(format!("memory.{nvmm_name}.method={}", a.method));
    let cfg = crate::load_config(&MachineArgs {
        config: a.machine.config.clone(),
        sets,
    })?;
    let nvmm = Target::new(&cfg, RegionKind::Nvmm, a.span)?;
    let dram = Target::new(&cfg, RegionKind::Dram, a.span)?;
    let machine = &cfg.machine.name;

    if !a.json {
        println!("idle read latency, ns: load to use (at the controller)");
        println!(
            "{:<8} {:>18} {:>18} {:>10}",
            "pattern", "DRAM", "NVMM", "NVMM/DRAM"
        );
    }
    for pattern in [Pattern::Sequential, Pattern::Random] {
        let lat = |t: &Target| -> Result<(f64, f64), CliError> {
            Ok(pm::idle_read_latency(
                &mut t.controller()?,
                t.path,
                t.area,
                pattern,
                a.loads,
            ))
        };
        let (d, n) = (lat(&dram)?, lat(&nvmm)?);
        if a.json {
            println!(
                "{}",
                json!({
                    "bench": "pm", "test": "idle-read-latency", "machine": machine, "method": a.method,
                    "pattern": pattern.as_str(), "loads": a.loads,
                    "dram_ns": d.0, "nvmm_ns": n.0, "dram_controller_ns": d.1, "nvmm_controller_ns": n.1,
                    "ratio": n.0 / d.0,
                })
            );
        } else {
            println!(
                "{:<8} {:>9.1} ({:>6.1}) {:>9.1} ({:>6.1}) {:>10.2}",
                pattern.as_str(),
                d.0,
                d.1,
                n.0,
                n.1,
                n.0 / d.0
            );
        }
    }

    if !a.json {
        println!();
        println!("bandwidth, GB/s (NVMM write amplification)");
        println!(
            "{:<12} {:<5} {:>5} {:>7} {:>8} {:>8} {:>10} {:>6}",
            "kind", "pat", "size", "threads", "DRAM", "NVMM", "NVMM/DRAM", "WA"
        );
    }
    for &kind in &kinds {
        for pattern in [Pattern::Sequential, Pattern::Random] {
            for &threads in &a.threads {
                for &size in &a.sizes {
                    let accesses = (a.bytes_per_thread / size).max(1);
                    let run = |t: &Target| -> Result<(f64, Controller), CliError> {
                        let mut c = t.controller()?;
                        let l = pm::Loop {
                            pattern,
                            kind,
                            size,
                            threads,
                            accesses,
                        };
                        let bw = pm::bandwidth(&mut c, t.path, t.area, l);
                        c.finish();
                        Ok((bw, c))
                    };
                    let (d, _) = run(&dram)?;
                    let (n, c) = run(&nvmm)?;
                    let wa = c
                        .stats()
                        .into_iter()
                        .find(|s| s.name == nvmm_name)
                        .and_then(|s| {
                            s.method_rates
                                .iter()
                                .find(|(k, _)| *k == "write_amplification")
                                .map(|&(_, v)| v)
                        });
                    if a.json {
                        println!(
                            "{}",
                            json!({
                                "bench": "pm", "test": "bandwidth", "machine": machine, "method": a.method,
                                "kind": kind.as_str(), "pattern": pattern.as_str(), "size": size,
                                "threads": threads, "accesses_per_thread": accesses,
                                "dram_gbps": d, "nvmm_gbps": n, "ratio": n / d,
                                "nvmm_write_amplification": wa,
                            })
                        );
                    } else {
                        let wa = wa.map_or("-".to_string(), |w| format!("{w:.2}"));
                        println!(
                            "{:<12} {:<5} {size:>5} {threads:>7} {d:>8.2} {n:>8.2} {:>10.3} {wa:>6}",
                            kind.as_str(),
                            pattern.as_str(),
                            n / d
                        );
                    }
                }
            }
        }
    }
    Ok(0)
}
