//! Regions of interest (docs/regions-of-interest.md) under `rvnvmm run`:
//! the markers of `nvmm.h` in `guest/src/roi_markers.c` and the SDK's
//! `nvmm-marker` tool (reset, dump, switch, exit), and `--fast-forward`.
//! The same program's output under qemu-riscv64, where the markers are
//! no-ops, is checked by the differential tests (`roi_markers`). Needs
//! `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/stats_run.rs"]
mod stats_run;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn program() -> PathBuf {
    artefacts::guest_program(&artefacts::guest_build().join("static"), "roi_markers")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn marker_tool() -> PathBuf {
    let p = artefacts::repo_root().join("sdk/libnvmm/build/nvmm-marker");
    assert!(
        p.is_file(),
        "{} is not built: run `make -C guest`",
        p.display()
    );
    p
}

/// `rvnvmm run OPTIONS --stats FILE PROGRAM ARGS`: its output and statistics.
/// Runs with the TLBs off: the tests count the loads' own L1D misses, and a
/// region that starts after a fast-forward starts with cold TLBs (the
/// functional model keeps none), whose walks would add misses of their own.
fn run(options: &[&str], program: &Path, args: &[&str]) -> (Output, Value) {
    let options: Vec<&str> = ["--set", "tlb.enabled=false"]
        .into_iter()
        .chain(options.iter().copied())
        .collect();
    stats_run::run_with_stats(&options, program, args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn snapshot<'a>(stats: &'a Value, name: &str) -> &'a Value {
    stats["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no snapshot {name}: {}", stats["snapshots"]))
}

fn l1d_misses(stats: &Value) -> u64 {
    stats["caches"]["hart0.l1d"]["misses"].as_u64().unwrap()
}

#[test]
fn reset_and_dump_give_the_region_its_own_statistics() {
    let (o, s) = run(&[], &program(), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o).lines().count(), 3);
    // Snapshots in order, the unnamed one numbered.
    let names: Vec<&str> = s["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["region", "snapshot2"]);
    let region = snapshot(&s, "region");
    let reset = &s["stats_reset"];
    // The snapshot counts from the reset: its instructions are the
    // region's, the point's are since the start.
    let at = region["instructions"].as_u64().unwrap();
    let from = reset["instructions"].as_u64().unwrap();
    assert_eq!(region["stats"]["instructions"].as_u64().unwrap(), at - from);
    assert!(region["stats"].get("schema").is_none());
    // 4 passes over 256 KiB, a line apart, through a smaller L1D: one miss
    // per load.
    assert_eq!(l1d_misses(&region["stats"]), 4 * 256 * 1024 / 64);
    // The run's own counters count from the reset too.
    let total = s["instructions"].as_u64().unwrap();
    assert!(total < at && total > at - from, "{total}");
    assert!(l1d_misses(&s) >= l1d_misses(&region["stats"]));
}

#[test]
fn without_markers_the_statistics_count_from_the_start() {
    let tool = marker_tool();
    let (o, s) = run(&[], &tool, &["checkpoint"]);
    assert!(o.status.success());
    assert!(s["stats_reset"].is_null());
    assert_eq!(s["snapshots"], Value::Array(vec![]));
    // A `checkpoint` marker is a restore point (docs/checkpoints.md): the
    // process is rebuilt there and goes on, counting from the start.
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("ignored"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_exit_marker_ends_the_run_with_its_status() {
    let (o, s) = run(&[], &program(), &["exit", "7"]);
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(s["exit"]["code"], 7);
    assert_eq!(stdout(&o).lines().count(), 3, "flushed before the marker");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no-op"));
}

#[test]
fn the_marker_tool_works_from_shell_scripts() {
    let tool = marker_tool();
    let (o, s) = run(&[], &tool, &["dump", "phase-1"]);
    assert!(o.status.success());
    assert_eq!(s["snapshots"][0]["name"], "phase-1");
    let (o, _) = run(&[], &tool, &["exit", "5"]);
    assert_eq!(o.status.code(), Some(5));
    let (o, s) = run(&[], &tool, &["switch", "functional"]);
    assert!(o.status.success());
    assert_eq!(s["model_switches"][0]["to"], "functional");
    let (o, _) = run(&[], &tool, &["switch", "sideways"]);
    assert_eq!(o.status.code(), Some(2), "usage");
}

#[test]
fn fast_forward_to_the_marker_times_the_region_as_a_timed_run_does() {
    let prog = program();
    let (o, fast) = run(&["--fast-forward", "marker"], &prog, &["switch"]);
    assert!(o.status.success());
    let (o, timed) = run(&[], &prog, &["switch"]);
    assert!(o.status.success());
    // Switched at the marker, back at the next; the region's statistics
    // count from the reset after the switch in both runs.
    let switches: Vec<&str> = fast["model_switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["to"].as_str().unwrap())
        .collect();
    assert_eq!(switches, ["timing", "functional"]);
    assert_eq!(
        fast["stats_reset"]["instructions"],
        timed["stats_reset"]["instructions"]
    );
    let (f, t) = (
        &snapshot(&fast, "region")["stats"],
        &snapshot(&timed, "region")["stats"],
    );
    assert_eq!(f["instructions"], t["instructions"]);
    // The region's lines are not in a 32 KiB L1D whether it starts warm or
    // cold; its time differs by the cold start only.
    assert_eq!(l1d_misses(f), l1d_misses(t));
    let (fns, tns) = (
        f["sim_time_ns"].as_f64().unwrap(),
        t["sim_time_ns"].as_f64().unwrap(),
    );
    assert!((fns - tns).abs() / tns < 0.001, "{fns} vs {tns}");
    // The fast-forward ran at one cycle per instruction: less simulated
    // time before the switch.
    assert!(
        fast["model_switches"][0]["sim_time_ns"].as_u64()
            < timed["stats_reset"]["sim_time_ns"].as_u64()
    );
}

#[test]
fn fast_forward_by_instructions_switches_exactly_there() {
    let (o, s) = run(&["--fast-forward", "insns=100000"], &program(), &[]);
    assert!(o.status.success());
    assert_eq!(s["model_switches"][0]["to"], "timing");
    assert_eq!(s["model_switches"][0]["instructions"], 100_000);
    // The switch resets the statistics; the program's own reset comes later.
    assert!(s["stats_reset"]["instructions"].as_u64().unwrap() > 100_000);
    let region = &snapshot(&s, "region")["stats"];
    // A run timed throughout, reset at the same count: the same region.
    let (o, timed) = run(&["--reset-stats-at", "insns=100000"], &program(), &[]);
    assert!(o.status.success());
    assert_eq!(timed["model_switches"], Value::Array(vec![]));
    let timed_region = &snapshot(&timed, "region")["stats"];
    assert_eq!(region["instructions"], timed_region["instructions"]);
    assert_eq!(l1d_misses(region), l1d_misses(timed_region));
}

#[test]
fn fast_forward_needs_a_timing_model() {
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args([
            "run",
            "--set",
            "machine.model=functional",
            "--fast-forward",
            "marker",
        ])
        .arg(program())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("timing model"));
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--fast-forward", "time=5"])
        .arg(program())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
