//! Method `optane` end to end: seed 000's microbenchmarks and a workload
//! run under `--set memory.nvmm.method=optane` unchanged, the statistics
//! report its media traffic and wear, and `rvnvmm bench pm` shows the
//! published shape of the device (docs/experiments.md).

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::process::Command;

fn rvnvmm(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(args)
        .output()
        .expect("run rvnvmm");
    assert!(
        out.status.success(),
        "rvnvmm {args:?}: {}{} (run make -C guest)",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn seed000_microbenchmarks_run_under_optane() {
    for bench in ["locality", "banks"] {
        let rows = json_lines(&rvnvmm(&[
            "bench", bench, "--json", "--size", "1048576", "--method", "optane",
        ]));
        assert!(!rows.is_empty());
        for r in &rows {
            assert_eq!(r["method"], "optane");
            let ns = r["avg_latency_ns"].as_f64().unwrap();
            assert!(ns.is_finite() && ns > 0.0, "{r}");
        }
    }
}

/// The NVMM region's statistics of one run of `prog args` with `sets`.
fn nvmm_stats(sets: &[&str], prog: &str, args: &[&str]) -> (String, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("rvnvmm-optane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join(format!("{}.json", sets.join("_").replace(['=', '.'], "-")));
    let prog = artefacts::guest_build().join(prog);
    let mut a: Vec<String> = vec!["run".into()];
    for s in sets {
        a.extend(["--set".into(), s.to_string()]);
    }
    a.extend(["--stats".into(), stats.display().to_string()]);
    a.push(prog.display().to_string());
    a.extend(args.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = rvnvmm(&a);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (out, v["regions"]["nvmm"].clone())
}

#[test]
fn a_durable_workload_runs_unchanged_and_reports_media_writes_and_wear() {
    let args = ["4000", "4000", "persist"];
    let base = ["machine.model=timing", "user.heap=nvmm"];
    let with = |m: &str| {
        let set = format!("memory.nvmm.method={m}");
        let mut sets = base.to_vec();
        sets.push(&set);
        nvmm_stats(&sets, "workloads/bin/rbtree", &args)
    };
    let (out_optane, s) = with("optane");
    let (out_proposed, p) = with("proposed");
    assert_eq!(out_optane, out_proposed, "same output under either method");
    let m = &s["method"];
    let media_writes = m["media_writes"].as_u64().unwrap();
    assert!(media_writes > 0, "{m}");
    assert_eq!(m["media_write_bytes"], media_writes * 256);
    let wa = m["write_amplification"].as_f64().unwrap();
    let expect = (media_writes * 256) as f64 / m["cpu_write_bytes"].as_u64().unwrap() as f64;
    assert!((wa - expect).abs() < 1e-9);
    assert!(m["persist_latency_hist"].is_array());
    let w = &s["wear"];
    assert_eq!(w["unit"], "xpline");
    assert_eq!(w["media_writes"], media_writes);
    let hist_units: u64 = w["writes_per_unit_hist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["units"].as_u64().unwrap())
        .sum();
    assert_eq!(hist_units, w["units_written"].as_u64().unwrap());
    let hottest = w["hottest"].as_array().unwrap();
    assert_eq!(hottest.len(), 8);
    assert!(hottest[0]["offset"].as_u64().unwrap() % 256 == 0);
    // The DDR3-based method: wear per row, no counters of its own.
    assert_eq!(p["wear"]["unit"], "row");
    assert!(p["wear"]["media_writes"].as_u64().unwrap() > 0);
    assert!(p.get("method").is_none());
}

#[test]
fn bench_pm_shows_the_published_shape() {
    let rows = json_lines(&rvnvmm(&[
        "bench",
        "pm",
        "--json",
        "--set",
        "bus.request_latency_ns=30",
        "--set",
        "bus.response_latency_ns=30",
        "--loads",
        "2000",
        "--threads",
        "1",
        "--sizes",
        "64,256",
        "--kinds",
        "nt-store",
        "--bytes-per-thread",
        "1048576",
    ]));
    let find = |f: &dyn Fn(&serde_json::Value) -> bool| rows.iter().find(|v| f(v)).unwrap();
    let seq = find(&|v| v["test"] == "idle-read-latency" && v["pattern"] == "seq");
    let rand = find(&|v| v["test"] == "idle-read-latency" && v["pattern"] == "rand");
    let ratio = rand["ratio"].as_f64().unwrap();
    assert!((3.0..=5.0).contains(&ratio), "{rand}");
    assert!(seq["nvmm_ns"].as_f64().unwrap() < 0.7 * rand["nvmm_ns"].as_f64().unwrap());
    let wa = |pattern: &str, size: u64| {
        find(&|v| v["test"] == "bandwidth" && v["pattern"] == pattern && v["size"] == size)
            ["nvmm_write_amplification"]
            .as_f64()
            .unwrap()
    };
    assert!(wa("rand", 64) > 3.5, "{}", wa("rand", 64));
    assert!(wa("seq", 256) < 1.05, "{}", wa("seq", 256));
}
