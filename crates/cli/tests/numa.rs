//! NUMA in user mode, whole programs: Debian's riscv64 `numactl` and a
//! program of raw NUMA system calls (guest/emu/numa_pages.c) on a machine
//! of a DRAM node and a slower memory node. Needs `scripts/setup.sh` and
//! `make -C guest` first (`scripts/test.sh` does both). And the nodes'
//! loaded latency (`bench loaded-latency`).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/figures.rs"]
mod figures;
#[path = "support/output.rs"]
mod output;
#[path = "support/stats_run.rs"]
mod stats_run;

use output::success_stdout;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    artefacts::repo_root()
}

/// The machine: DRAM node 0 and CXL-attached DRAM node 1.
fn machine() -> String {
    repo()
        .join("configs/dram-cxl.toml")
        .to_string_lossy()
        .into_owned()
}

fn sysroot() -> PathBuf {
    artefacts::sysroot().unwrap_or_else(|e| panic!("{e}"))
}

fn numactl() -> PathBuf {
    let p = sysroot().join("usr/bin/numactl");
    assert!(p.is_file(), "{} missing: run scripts/setup.sh", p.display());
    p
}

fn numa_pages() -> PathBuf {
    let p = repo().join("guest/build/emu/numa_pages");
    assert!(p.is_file(), "{} missing: run make -C guest", p.display());
    p
}

/// `numactl ARGS numa_pages MIB` on the machine, with its statistics.
fn numactl_run(args: &[&str], mib: &str) -> (String, Value) {
    let sysroot = sysroot();
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.push(numa_pages().to_string_lossy().into_owned());
    all.push(mib.into());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let machine = machine();
    let options = [
        "--config",
        machine.as_str(),
        "--sysroot",
        sysroot.to_str().unwrap(),
    ];
    let (o, stats) = stats_run::run_with_stats(&options, &numactl(), &all);
    (success_stdout(&o), stats)
}

/// The `pages N node0 A node1 B ...` line's counts for nodes 0 and 1.
fn pages_by_node(out: &str) -> (u64, u64, u64) {
    let line = out
        .lines()
        .find(|l| l.starts_with("pages "))
        .unwrap_or_else(|| panic!("no pages line: {out}"));
    let f: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (f[0], f[1], f[2])
}

#[test]
fn numactl_lists_the_nodes_with_their_distances() {
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--config", &machine(), "--sysroot"])
        .arg(sysroot())
        .arg(numactl())
        .arg("-H")
        .output()
        .unwrap();
    let out = success_stdout(&o);
    assert!(out.starts_with("available: 2 nodes (0-1)\n"), "{out}");
    assert!(out.contains("node 0 cpus: 0 1 2 3\n"), "{out}");
    // The slower node has memory and no CPUs.
    assert!(out.contains("node 1 cpus:\n"), "{out}");
    let sizes: Vec<&str> = out.lines().filter(|l| l.contains(" size: ")).collect();
    assert_eq!(sizes.len(), 2, "{out}");
    // Distances: 10 to itself, the same farther one both ways.
    let rows: Vec<Vec<u32>> = out
        .lines()
        .skip_while(|l| !l.starts_with("node distances:"))
        .skip(2)
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(|d| d.parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!((rows[0][0], rows[1][1]), (10, 10), "{out}");
    assert!(rows[0][1] > 10 && rows[0][1] == rows[1][0], "{out}");
}

#[test]
fn membind_puts_every_heap_page_on_the_bound_node() {
    let (out, stats) = numactl_run(&["--membind=1"], "8");
    assert!(out.contains("policy 2\n"), "{out}");
    assert_eq!(pages_by_node(&out), (2048, 0, 2048), "{out}");
    let node1 = &stats["numa"]["nodes"]["1"];
    assert!(node1["numa_hit"].as_u64().unwrap() >= 2048, "{stats}");
    assert_eq!(node1["numa_miss"], 0, "{stats}");
}

#[test]
fn interleave_splits_the_pages_within_one_percent_of_half() {
    let (out, stats) = numactl_run(&["--interleave=0,1"], "8");
    assert!(out.contains("policy 3\n"), "{out}");
    let (total, a, b) = pages_by_node(&out);
    assert_eq!((total, a + b), (2048, 2048), "{out}");
    // From the per-node statistics: every page interleaving placed.
    let hits = |n: &str| {
        stats["numa"]["nodes"][n]["interleave_hit"]
            .as_u64()
            .unwrap()
    };
    let (h0, h1) = (hits("0") as f64, hits("1") as f64);
    let half = (h0 + h1) / 2.0;
    assert!(h0 + h1 >= 2048.0, "{stats}");
    assert!((h0 - half).abs() <= 0.01 * half, "{h0} vs {h1}");
    assert!((a as f64 - 1024.0).abs() <= 10.24, "{out}");
}

#[test]
fn move_pages_and_mbind_move_pages_and_keep_their_data() {
    let machine = machine();
    let (o, stats) = stats_run::run_with_stats(
        &["--config", machine.as_str()],
        &numa_pages(),
        &["4", "move"],
    );
    let out = success_stdout(&o);
    assert!(out.contains("pages 1024 node0 1024 node1 0"), "{out}");
    assert!(out.contains("moved 1024 ok\n"), "{out}");
    assert!(out.contains("mbind ok\n"), "{out}");
    let n = &stats["numa"]["nodes"];
    assert_eq!(n["1"]["pages_migrated_in"], 1024, "{stats}");
    assert_eq!(n["0"]["pages_migrated_in"], 1024, "{stats}");
    assert_eq!(n["0"]["pages_migrated_out"], 1024, "{stats}");
}

#[test]
fn loaded_latency_rises_with_the_load_and_the_cxl_node_is_farther() {
    let rows = figures::bench_rows(&[
        "loaded-latency",
        "--config",
        &machine(),
        "--delays",
        "0,3000",
        "--probes",
        "300",
    ]);
    let point = |node: &str, delay: f64| -> (f64, f64) {
        let r = rows
            .iter()
            .find(|r| r["node"] == node && r["delay_ns"].as_f64() == Some(delay))
            .unwrap_or_else(|| panic!("no {node} at {delay}: {rows:?}"));
        (
            r["bandwidth_gbs"].as_f64().unwrap(),
            r["latency_ns"].as_f64().unwrap(),
        )
    };
    for node in ["dram", "cxl"] {
        let (busy, idle) = (point(node, 0.0), point(node, 3000.0));
        assert!(busy.0 > 5.0 * idle.0, "{node}: {busy:?} vs {idle:?}");
        assert!(busy.1 > 1.5 * idle.1, "{node}: {busy:?} vs {idle:?}");
    }
    // The link's 70-90 ns over local DRAM, as published (docs/fidelity.md).
    let added = point("cxl", 3000.0).1 - point("dram", 3000.0).1;
    assert!((70.0..=100.0).contains(&added), "{added} ns");
}
