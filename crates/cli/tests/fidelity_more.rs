//! Pins of the fidelity ledger's figures beyond seeds 000 and 001
//! (`docs/fidelity.md`, "Seeds 002-004 and the Optane-like memory", made by
//! `experiments/fidelity.py` with `experiments/fidelity_extra.py`): the
//! Optane-like memory's `rvnvmm bench pm` figures, seed 003 Table 2's IS
//! speed-ups on mappi and seed 004 Table 1's strided / contiguous ratios
//! under each page policy. Each is computed as the ledger computes it; a
//! change that moves one past its pin must update the pin here and
//! regenerate the ledger. The TLB and NAS tests need `make -C guest` and
//! `make -C guest/npb`.

#[path = "support/figures.rs"]
mod figures;
use figures::pin;

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};

fn assert_pins(misses: Vec<String>) {
    assert!(
        misses.is_empty(),
        "figures moved past their pins (update the pin and docs/fidelity.md if intended):\n  {}",
        misses.join("\n  ")
    );
}

fn succeeded(what: &str, o: &Output) -> String {
    assert!(
        o.status.success(),
        "{what}: {:?}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `rvnvmm bench pm --json` on the machine of docs/experiments.md's "Issue
/// 15" (`PM_SETS` of experiments/fidelity_extra.py), keyed as the ledger
/// reads it.
struct Pm {
    idle: BTreeMap<String, serde_json::Value>,
    bw: BTreeMap<(String, String, u64, u64), serde_json::Value>,
}

impl Pm {
    fn run() -> Pm {
        let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
            .args(["bench", "pm", "--json"])
            .args(["--set", "bus.request_latency_ns=30"])
            .args(["--set", "bus.response_latency_ns=30"])
            .args(["--set", "memory.controllers.ddr3.read_queue=384"])
            .output()
            .expect("run rvnvmm bench pm");
        let text = succeeded("bench pm", &o);
        let mut pm = Pm {
            idle: BTreeMap::new(),
            bw: BTreeMap::new(),
        };
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("one JSON object a line");
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            if v["test"] == "idle-read-latency" {
                pm.idle.insert(s("pattern"), v);
            } else {
                let key = (
                    s("kind"),
                    s("pattern"),
                    v["size"].as_u64().unwrap(),
                    v["threads"].as_u64().unwrap(),
                );
                pm.bw.insert(key, v);
            }
        }
        pm
    }

    fn bw(&self, kind: &str, pattern: &str, size: u64, threads: u64, field: &str) -> f64 {
        self.bw[&(kind.to_string(), pattern.to_string(), size, threads)][field]
            .as_f64()
            .unwrap()
    }

    fn top_threads(&self) -> u64 {
        self.bw.keys().map(|k| k.3).max().unwrap()
    }

    /// The largest NVMM bandwidth of `kind`, sequential, at the most threads.
    fn seq_max(&self, kind: &str) -> f64 {
        let top = self.top_threads();
        self.bw
            .iter()
            .filter(|(k, _)| k.0 == kind && k.1 == "seq" && k.3 == top)
            .map(|(_, v)| v["nvmm_gbps"].as_f64().unwrap())
            .fold(0.0, f64::max)
    }
}

/// The Optane rows of the ledger: the predicted ones (write amplification,
/// random loads below 256 B, the threads that saturate write bandwidth)
/// and the calibrated ones (idle latencies, bandwidth maxima).
#[test]
fn optane_figures_stay_at_their_pins() {
    let pm = Pm::run();
    let top = pm.top_threads();
    assert_eq!(top, 16, "bench pm's default thread counts changed");
    let mut misses = Vec::new();
    let idle = |p: &str, f: &str| pm.idle[p][f].as_f64().unwrap();
    // Calibrated (pm-path, optane-random, optane-seq).
    pin(
        &mut misses,
        "idle DRAM ns",
        idle("rand", "dram_ns"),
        97.975,
        0.02,
    );
    pin(
        &mut misses,
        "idle NVMM random ns",
        idle("rand", "nvmm_ns"),
        308.6,
        0.02,
    );
    pin(
        &mut misses,
        "idle NVMM sequential ns",
        idle("seq", "nvmm_ns"),
        173.3,
        0.02,
    );
    // Calibrated by construction (optane-bw): six DIMMs' media bandwidths.
    pin(
        &mut misses,
        "seq load max GB/s",
        pm.seq_max("load"),
        39.27,
        0.02,
    );
    pin(
        &mut misses,
        "nt-store max GB/s",
        pm.seq_max("nt-store"),
        13.89,
        0.02,
    );
    // Predicted.
    let wa_rand = pm.bw("store-clean", "rand", 64, top, "nvmm_write_amplification");
    let wa_seq = pm.bw("store-clean", "seq", 256, top, "nvmm_write_amplification");
    pin(
        &mut misses,
        "write amplification rand 64 B",
        wa_rand,
        3.994,
        0.02,
    );
    pin(
        &mut misses,
        "write amplification seq 256 B",
        wa_seq,
        0.994,
        0.02,
    );
    let rand_load = |size| pm.bw("load", "rand", size, top, "nvmm_gbps");
    pin(
        &mut misses,
        "rand load 64 B GB/s",
        rand_load(64),
        3.23,
        0.03,
    );
    pin(
        &mut misses,
        "rand load 256 B GB/s",
        rand_load(256),
        12.9,
        0.03,
    );
    pin(
        &mut misses,
        "rand load 1024 B GB/s",
        rand_load(1024),
        24.8,
        0.03,
    );
    let nt: Vec<(u64, f64)> = [1, 2, 4, 8, 16]
        .iter()
        .map(|&t| (t, pm.bw("nt-store", "seq", 256, t, "nvmm_gbps")))
        .collect();
    let best = nt.iter().map(|p| p.1).fold(0.0, f64::max);
    let saturate = nt.iter().find(|p| p.1 >= 0.95 * best).unwrap().0;
    if saturate != 4 {
        misses.push(format!(
            "threads to saturate write bandwidth: {saturate}, pinned 4 ({nt:?})"
        ));
    }
    assert_pins(misses);
    // The claims themselves, not only today's values.
    assert!((3.5..=4.5).contains(&wa_rand), "{wa_rand}");
    assert!(rand_load(64) < 0.3 * rand_load(256));
}

/// Simulated ns of `tlb_stride 2000 -t 128`'s two loops under `pages`.
fn tlb_stride(pages: &str) -> (f64, f64) {
    let prog = artefacts::guest_program(&artefacts::guest_build().join("static"), "tlb_stride")
        .unwrap_or_else(|e| panic!("{e} (make -C guest)"));
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--no-progress", "--set", "machine.model=timing"])
        .args(["--set", "tlb.enabled=true", "--set"])
        .arg(format!("user.pages={pages}"))
        .arg("--")
        .arg(prog)
        .args(["2000", "-t", "128"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = succeeded(&format!("tlb_stride under {pages}"), &o);
    let field = |name: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no `{name} NS` in {out}"))
    };
    (field("continuous"), field("stride"))
}

/// Seed 004 Table 1 at N = 128 (the strided data cache-resident): the gap
/// with 4 KiB pages and how much of it THP and hints close.
#[test]
fn seed004_table1_ratios_stay_at_their_pins() {
    let ratio = |pages| {
        let (c, s) = tlb_stride(pages);
        s / c
    };
    let (base, thp, hint) = (ratio("base"), ratio("thp"), ratio("hint"));
    let mut misses = Vec::new();
    pin(&mut misses, "strided / contiguous, base", base, 2.221, 0.03);
    pin(&mut misses, "strided / contiguous, thp", thp, 1.483, 0.03);
    pin(&mut misses, "strided / contiguous, hint", hint, 1.006, 0.03);
    assert_pins(misses);
    // The claims: a gap with 4 KiB pages, closed by large pages.
    assert!(
        base > 1.5 && hint < thp && thp < base,
        "{base} {thp} {hint}"
    );
    assert!((base - hint) / (base - 1.0) > 0.9, "{base} {hint}");
}

/// The timed part of IS class S on mappi at `threads` OpenMP threads (its
/// own `Time in ns`, simulated time).
fn is_on_mappi_ns(threads: u32) -> f64 {
    let prog = artefacts::guest_program(&artefacts::guest_build().join("npb"), "is")
        .unwrap_or_else(|e| panic!("{e} (make -C guest/npb)"));
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .args(["run", "--config", "mappi", "--set", "machine.model=timing"])
        .arg("--no-progress")
        .arg("--env")
        .arg(format!("OMP_NUM_THREADS={threads}"))
        .arg("--")
        .arg(prog)
        .arg("S")
        .output()
        .unwrap();
    let out = succeeded(&format!("is at {threads} threads"), &o);
    assert!(out.contains("SUCCESSFUL"), "{out}");
    out.lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("Time in ns")?;
            rest.trim_start_matches([' ', '=']).trim().parse().ok()
        })
        .unwrap_or_else(|| panic!("no `Time in ns` in {out}"))
}

/// Seed 003 Table 2: IS's speed-ups on mappi (paper 1.738 and 1.377).
#[test]
fn seed003_is_speedups_stay_at_their_pins() {
    let one = is_on_mappi_ns(1);
    let two = one / is_on_mappi_ns(2);
    let four = one / is_on_mappi_ns(4);
    let mut misses = Vec::new();
    pin(&mut misses, "IS speed-up, 2 threads", two, 1.804, 0.02);
    pin(&mut misses, "IS speed-up, 4 threads", four, 1.731, 0.02);
    assert_pins(misses);
}
