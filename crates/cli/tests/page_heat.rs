//! `--page-heat` in user mode, whole programs: what reached every page, by
//! physical and by virtual page, adds up to the run's statistics, follows
//! pages that move between nodes, and is the same file run after run.
//! Needs `make -C guest` first (`scripts/test.sh` does it).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/output.rs"]
mod output;

use output::success_stdout;
use rvnvmm_heat::HeatFile;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    artefacts::repo_root()
}

fn numa_pages() -> PathBuf {
    let p = repo().join("guest/build/emu/numa_pages");
    assert!(p.is_file(), "{} missing: run make -C guest", p.display());
    p
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rvnvmm-heat-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `numa_pages 4 move` on the DRAM + CXL machine (its heap on node 0, then
/// moved to node 1 and back), timed; with `heat`, the page heat in 100 µs
/// windows. The statistics, and the heat file's bytes.
fn moving_pages(dir: &Path, heat: bool) -> (Value, Option<Vec<u8>>) {
    let (stats, file) = (dir.join("stats.json"), dir.join("heat.bin"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    cmd.args(["run", "--config"])
        .arg(repo().join("configs/dram-cxl.toml"))
        .args(["--set", "machine.model=timing", "--clean-env", "--stats"])
        .arg(&stats);
    if heat {
        cmd.arg("--page-heat")
            .arg(&file)
            .args(["--page-heat-window", "100000"]);
    }
    let out = success_stdout(&cmd.arg(numa_pages()).args(["4", "move"]).output().unwrap());
    assert!(out.contains("moved 1024 ok"), "{out}");
    let json = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    (json, heat.then(|| std::fs::read(&file).unwrap()))
}

#[test]
fn page_heat_adds_up_to_the_statistics_and_follows_moved_pages() {
    let dir = scratch("moving");
    let (plain, _) = moving_pages(&dir, false);
    let (stats, bytes) = moving_pages(&dir, true);
    let bytes = bytes.unwrap();
    // Recording changes nothing the model reports.
    for key in [
        "instructions",
        "sim_time_ns",
        "regions",
        "caches",
        "bus",
        "numa",
    ] {
        assert_eq!(plain[key], stats[key], "{key}");
    }
    // The same run writes the same file.
    let (_, again) = moving_pages(&dir, true);
    assert!(
        again.unwrap() == bytes,
        "two runs wrote different page heat"
    );
    std::fs::remove_dir_all(&dir).ok();

    let heat = HeatFile::read(&bytes).unwrap();
    assert_eq!(heat.window_ps, 100_000_000);
    let regions: Vec<(&str, u32)> = heat
        .regions
        .iter()
        .map(|r| (r.name.as_str(), r.node))
        .collect();
    assert_eq!(regions, [("dram", 0), ("cxl", 1)]);
    let windows = heat.windows.expect("the end block");
    let ns = stats["sim_time_ns"].as_u64().unwrap();
    assert_eq!(windows, ns.div_ceil(100_000), "windows spanned");

    // Every count is one the statistics count, on a page of a region.
    let mut total = [0u64; 3];
    let mut by_node = [0u64; 2];
    for (w, page, c) in &heat.physical {
        assert!(*w < windows);
        let addr = page << 12;
        let r = heat
            .regions
            .iter()
            .find(|r| addr >= r.base && addr < r.base + r.size)
            .unwrap_or_else(|| panic!("page {addr:#x} in no region"));
        total[0] += u64::from(c.reads);
        total[1] += u64::from(c.writes);
        total[2] += u64::from(c.misses);
        by_node[r.node as usize] += c.accesses();
    }
    let regions = &stats["regions"];
    let sum = |k: &str| regions["dram"][k].as_u64().unwrap() + regions["cxl"][k].as_u64().unwrap();
    let l1_misses: u64 = stats["caches"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| name.ends_with(".l1d") || name.ends_with(".l1i"))
        .map(|(_, c)| c["misses"].as_u64().unwrap())
        .sum();
    assert_eq!(total, [sum("bus_reads"), sum("bus_writes"), l1_misses]);
    let node1 = regions["cxl"]["bus_reads"].as_u64().unwrap()
        + regions["cxl"]["bus_writes"].as_u64().unwrap();
    assert_eq!(by_node[1], node1);

    // By virtual page: the heap's 4 MiB, first on node 0, then (moved) on
    // node 1, and the windows ascend.
    let heap_pages = |node: u32| -> usize {
        let mut pages: Vec<u64> = heat
            .virtual_pages
            .iter()
            .filter(|(_, p)| p.node == node && p.counts.writes + p.counts.misses > 0)
            .map(|(_, p)| p.page)
            .collect();
        pages.sort_unstable();
        pages.dedup();
        pages.len()
    };
    assert!(heap_pages(0) >= 1024, "{}", heap_pages(0));
    assert!(heap_pages(1) >= 1000, "{}", heap_pages(1));
    assert!(heat.virtual_pages.windows(2).all(|p| p[0].0 <= p[1].0));
    let first_on_1 = heat
        .virtual_pages
        .iter()
        .find(|(_, p)| p.node == 1)
        .unwrap();
    let first = heat.virtual_pages[0].0;
    assert!(first_on_1.0 > first, "pages reach node 1 only once moved");
}

#[test]
fn page_heat_needs_the_timing_model() {
    let dir = scratch("functional");
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--set", "machine.model=functional", "--page-heat"])
        .arg(dir.join("h.bin"))
        .arg(numa_pages())
        .arg("1")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--page-heat needs the timing model"), "{err}");
}
