//! `rvnvmm run --sample` (docs/regions-of-interest.md, "Sampling"): a
//! workload of the suite sampled against the same run timed throughout.
//! Needs `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/stats_run.rs"]
mod stats_run;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The suite's red-black tree (`guest/workloads`), its test size.
fn rbtree() -> (PathBuf, [&'static str; 2]) {
    let bin = artefacts::guest_build().join("workloads").join("bin");
    let p = artefacts::guest_program(&bin, "rbtree").unwrap_or_else(|e| panic!("{e}"));
    (p, ["4000", "4000"])
}

/// `rvnvmm run OPTIONS --stats FILE rbtree ARGS`: its output and statistics.
fn run(options: &[&str]) -> (Output, Value) {
    let (prog, args) = rbtree();
    stats_run::run_with_stats(options, &prog, &args)
}

const PLAN: &str = "period=50000,detail=2000,warmup=2000";

#[test]
fn the_estimate_lies_within_its_bound_of_the_run_timed_throughout() {
    let (o, full) = run(&[]);
    assert!(o.status.success());
    let (o, sampled) = run(&["--sample", PLAN]);
    assert!(o.status.success());
    assert_eq!(o.stdout, run(&[]).0.stdout, "the same output");
    let s = &sampled["sampling"];
    let total = full["instructions"].as_u64().unwrap();
    assert_eq!(s["total_instructions"], total);
    assert_eq!(sampled["instructions"], total);

    // One window at the end of every whole period, of `detail`
    // instructions give or take a block (its edges come at the end of the
    // block reaching them); they add up.
    let windows = s["windows"].as_array().unwrap();
    assert_eq!(windows.len() as u64, total / 50_000);
    let block = 64;
    for (k, w) in windows.iter().enumerate() {
        let start = w["start_instructions"].as_u64().unwrap();
        let planned = (k as u64 + 1) * 50_000 - 2000;
        assert!((planned..planned + block).contains(&start), "{w}");
        let n = w["instructions"].as_u64().unwrap();
        assert!((2000 - block..2000 + block).contains(&n), "{w}");
        assert!(w["cycles"].as_u64().unwrap() >= n, "{w}");
    }
    let detail: u64 = windows
        .iter()
        .map(|w| w["instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(s["detail_instructions"], detail);
    let warmup = s["warmup_instructions"].as_u64().unwrap();
    assert!(warmup.abs_diff(detail) < 2 * block * windows.len() as u64);
    let fraction = s["detail_fraction"].as_f64().unwrap();
    assert!((fraction - detail as f64 / total as f64).abs() < 1e-12);

    // The estimate and its 95 % interval against the timed run's time.
    let e = &s["estimate"];
    let full_ns = full["sim_time_ns"].as_f64().unwrap();
    let (low, high) = (
        e["low_ns"].as_f64().unwrap(),
        e["high_ns"].as_f64().unwrap(),
    );
    assert!(low < high, "{e}");
    assert!(
        (low..=high).contains(&full_ns),
        "the run timed throughout took {full_ns} ns, the estimate is {e}"
    );
    // The sampled run's own clock ran mostly at one cycle per instruction.
    assert!(sampled["sim_time_ns"].as_f64().unwrap() < full_ns);
    assert_eq!(sampled["model_switches"], Value::Array(vec![]));
}

#[test]
fn sampling_is_deterministic() {
    let (_, a) = run(&["--sample", "period=200000,detail=5000"]);
    let (_, b) = run(&["--sample", "period=200000,detail=5000"]);
    assert_eq!(a["sampling"], b["sampling"]);
    assert_eq!(a["sampling"]["warmup_instructions"], 0);
}

#[test]
fn a_window_as_long_as_its_period_times_the_whole_run() {
    let (_, full) = run(&[]);
    let (_, sampled) = run(&["--sample", "period=100000,detail=100000"]);
    // Timed from the first instruction to the last: the run timed
    // throughout, to the cycle (the windows' edges split no block).
    for key in [
        "instructions",
        "sim_time_ns",
        "harts",
        "caches",
        "blocks_decoded",
    ] {
        assert_eq!(sampled[key], full[key], "{key}");
    }
    let b = full["sim_time_ns"].as_f64().unwrap();
    let s = &sampled["sampling"];
    let windows = s["windows"].as_array().unwrap();
    let measured: u64 = windows
        .iter()
        .map(|w| w["sim_time_ns"].as_u64().unwrap())
        .sum();
    // The windows follow each other: their times add up to the clock at
    // the last whole period's end.
    assert_eq!(windows[0]["start_instructions"], 0);
    assert!(measured <= full["sim_time_ns"].as_u64().unwrap());
    // Every whole period measured, only the last part period not: the
    // finite-population correction leaves little sampling error.
    let e = &s["estimate"];
    assert!(e["relative_error"].as_f64().unwrap() < 0.02, "{e}");
    let (low, high) = (
        e["low_ns"].as_f64().unwrap(),
        e["high_ns"].as_f64().unwrap(),
    );
    assert!((low..=high).contains(&b), "{b} not in {e}");
    // The part period at the end was timed, not measured.
    assert_eq!(s["timed_fraction"], 1.0);
}

#[test]
fn bad_plans_and_machines_are_refused() {
    let (prog, _) = rbtree();
    for (options, says) in [
        (
            &["--sample", "period=100,detail=200"][..],
            "must fit in the period",
        ),
        (&["--sample", "period=100"][..], "period and detail"),
        (
            &["--set", "machine.model=functional", "--sample", PLAN][..],
            "timing model",
        ),
        (
            &["--sample", PLAN, "--fast-forward", "marker"][..],
            "cannot be used with",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
            .arg("run")
            .args(options)
            .arg(&prog)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{options:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{options:?}: {err}");
    }
}
