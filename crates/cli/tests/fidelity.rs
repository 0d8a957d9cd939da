//! Pins of the fidelity ledger (`docs/fidelity.md`, made by
//! `experiments/fidelity.py`): today's figures of seed 000 Tables 3-6 and
//! seed 001 §4.1 to a few percent, and the quantitative readings of seed 000
//! Fig. 11 and seed 001 Tables 5-6 (slowdown models, rank correlations,
//! exceptions) at the workloads' test size. A change that moves one of these
//! must update the pin here and regenerate the ledger.
//!
//! The workload tests run `experiments/seed000_fig11.py` and
//! `experiments/seed001_tables5_6.py` (`python3`, standard library) with this
//! build's rvnvmm; they need `make -C guest` and `scripts/setup.sh` (the
//! sysroot), as `workloads.rs` does.

#[path = "support/figures.rs"]
mod figures;
use figures::{bench_rows as bench, pin, spearman};

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::collections::BTreeMap;
use std::process::Command;

/// Checks a normalised time against its pin within `tol` of the slowdown
/// it pins (its distance from 1) plus 0.002.
fn pin_slowdown(misses: &mut Vec<String>, what: &str, got: f64, want: f64, tol: f64) {
    if (got - want).abs() > tol * (want - 1.0).abs() + 0.002 {
        misses.push(format!(
            "{what}: {got:.4}, pinned {want:.4} (±{:.0}% of the slowdown)",
            tol * 100.0
        ));
    }
}

fn assert_pins(misses: Vec<String>) {
    assert!(
        misses.is_empty(),
        "figures moved past their pins (update the pin and docs/fidelity.md if intended):\n  {}",
        misses.join("\n  ")
    );
}

/// Seed 000 Tables 3-6 at `--size 4194304` (within 1.6% of the ledger's
/// 16 MiB figures): (bench, method, op, STRIDE or NBANK, ns).
const TABLES_3_6: &[(&str, &str, &str, u64, f64)] = &[
    ("locality", "coarse", "read", 4096, 2772.2),
    ("locality", "coarse", "read", 8192, 2934.3),
    ("locality", "coarse", "write", 4096, 3924.0),
    ("locality", "coarse", "write", 8192, 4078.4),
    ("locality", "fine", "read", 4096, 2751.6),
    ("locality", "fine", "read", 8192, 2934.1),
    ("locality", "fine", "write", 4096, 4598.1),
    ("locality", "fine", "write", 8192, 5000.4),
    ("locality", "proposed", "read", 4096, 3899.6),
    ("locality", "proposed", "read", 8192, 6057.2),
    ("locality", "proposed", "write", 4096, 11507.1),
    ("locality", "proposed", "write", 8192, 12702.7),
    ("banks", "coarse", "read", 1, 2934.3),
    ("banks", "coarse", "read", 2, 2928.4),
    ("banks", "coarse", "read", 3, 2918.8),
    ("banks", "coarse", "read", 4, 2998.7),
    ("banks", "coarse", "read", 5, 3259.5),
    ("banks", "coarse", "read", 6, 3518.2),
    ("banks", "coarse", "write", 1, 4078.4),
    ("banks", "coarse", "write", 2, 4027.2),
    ("banks", "coarse", "write", 3, 4066.7),
    ("banks", "coarse", "write", 4, 4153.7),
    ("banks", "coarse", "write", 5, 4416.7),
    ("banks", "coarse", "write", 6, 4663.4),
    ("banks", "fine", "read", 1, 2934.1),
    ("banks", "fine", "read", 2, 2930.7),
    ("banks", "fine", "read", 3, 2899.1),
    ("banks", "fine", "read", 4, 2988.4),
    ("banks", "fine", "read", 5, 3245.4),
    ("banks", "fine", "read", 6, 3494.1),
    ("banks", "fine", "write", 1, 5000.4),
    ("banks", "fine", "write", 2, 3813.2),
    ("banks", "fine", "write", 3, 3547.0),
    ("banks", "fine", "write", 4, 3431.1),
    ("banks", "fine", "write", 5, 3609.3),
    ("banks", "fine", "write", 6, 3803.4),
    ("banks", "proposed", "read", 1, 6057.2),
    ("banks", "proposed", "read", 2, 3463.3),
    ("banks", "proposed", "read", 3, 2901.9),
    ("banks", "proposed", "read", 4, 2988.2),
    ("banks", "proposed", "read", 5, 3259.4),
    ("banks", "proposed", "read", 6, 3533.3),
    ("banks", "proposed", "write", 1, 12702.7),
    ("banks", "proposed", "write", 2, 8174.1),
    ("banks", "proposed", "write", 3, 6491.3),
    ("banks", "proposed", "write", 4, 5383.9),
    ("banks", "proposed", "write", 5, 4907.5),
    ("banks", "proposed", "write", 6, 4689.5),
];

#[test]
fn tables_3_to_6_stay_at_their_pins() {
    let mut got = BTreeMap::new();
    for (bench_name, key) in [("locality", "stride"), ("banks", "nbank")] {
        for r in bench(&[bench_name, "--size", "4194304"]) {
            let k = (
                bench_name,
                r["method"].as_str().unwrap().to_string(),
                r["op"].as_str().unwrap().to_string(),
                r[key].as_u64().unwrap(),
            );
            got.insert(k, r["avg_latency_ns"].as_f64().unwrap());
        }
    }
    let mut misses = Vec::new();
    for &(b, m, op, p, want) in TABLES_3_6 {
        let v = got[&(b, m.to_string(), op.to_string(), p)];
        pin(&mut misses, &format!("{b} {m} {op} {p}"), v, want, 0.02);
    }
    let g =
        |b: &'static str, m: &str, op: &str, p: u64| got[&(b, m.to_string(), op.to_string(), p)];
    // The derived figures the ledger names: Table 3's ratio (paper 0.67) and
    // the write/read ratio at one bank (paper 2.61).
    let ratio = g("locality", "proposed", "read", 4096) / g("locality", "proposed", "read", 8192);
    pin(&mut misses, "Table 3 proposed ratio", ratio, 0.644, 0.02);
    let wr = g("banks", "proposed", "write", 1) / g("banks", "proposed", "read", 1);
    pin(
        &mut misses,
        "proposed write/read at NBANK 1",
        wr,
        2.097,
        0.02,
    );
    assert_pins(misses);
}

/// Seed 001 §4.1 on zc706, NVMM/DRAM: (passes, op, stride, added tRCD,
/// added tRP, ratio). One pass is the paper's cold loop; two the variant
/// the zc706 calibration was made with.
const BANDWIDTH: &[(u32, &str, u64, u64, u64, f64)] = &[
    (1, "read", 32, 0, 0, 0.5480),
    (1, "read", 32, 1000, 0, 0.1000),
    (1, "write", 32, 0, 0, 0.5075),
    (1, "write", 32, 1000, 1000, 0.0412),
    (1, "read", 8192, 0, 0, 0.6645),
    (1, "read", 8192, 1000, 0, 0.1490),
    (1, "write", 8192, 0, 0, 0.6242),
    (1, "write", 8192, 1000, 1000, 0.0787),
    (2, "read", 32, 0, 0, 0.5479),
    (2, "read", 32, 1000, 0, 0.1000),
    (2, "write", 32, 0, 0, 0.4762),
    (2, "write", 32, 1000, 1000, 0.0323),
    (2, "read", 8192, 0, 0, 0.5796),
    (2, "read", 8192, 1000, 0, 0.1110),
    (2, "write", 8192, 0, 0, 0.5320),
    (2, "write", 8192, 1000, 1000, 0.0432),
];

#[test]
fn bandwidth_ratios_stay_at_their_pins_in_both_passes() {
    let mut misses = Vec::new();
    for passes in [1u32, 2] {
        let p = passes.to_string();
        let rows = bench(&[
            "bandwidth",
            "--config",
            "zc706",
            "--added",
            "0,1000",
            "--passes",
            &p,
        ]);
        for &(pp, op, stride, rcd, rp, want) in BANDWIDTH.iter().filter(|b| b.0 == passes) {
            let r = rows
                .iter()
                .find(|r| {
                    r["op"] == op
                        && r["stride"] == stride
                        && r["added_trcd_ns"] == rcd
                        && r["added_trp_ns"] == rp
                })
                .expect("the row");
            assert_eq!(r["passes"], pp);
            let what = format!("{op} stride {stride} +{rcd}/+{rp}, {pp} pass(es)");
            pin(&mut misses, &what, r["ratio"].as_f64().unwrap(), want, 0.03);
        }
    }
    assert_pins(misses);
}

/// Runs `python3 experiments/SCRIPT --size test --jobs 2 --out DIR` with this
/// build's rvnvmm and returns DIR/`json`.
fn experiment(script: &str, json: &str) -> serde_json::Value {
    let repo = artefacts::repo_root();
    let out = std::env::temp_dir().join(format!(
        "rvnvmm-fidelity-{}-{}",
        json.trim_end_matches(".json"),
        std::process::id()
    ));
    let run = Command::new("python3")
        .arg(repo.join("experiments").join(script))
        .args(["--size", "test", "--jobs", "2", "--out"])
        .arg(&out)
        .env("RVNVMM_BIN", env!("CARGO_BIN_EXE_rvnvmm"))
        .output()
        .expect("run python3 (the experiment scripts need it)");
    assert!(
        run.status.success(),
        "{script} (run make -C guest and scripts/setup.sh): {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(out.join(json)).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    v
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// Proposed normalised time per workload at the test size (freedom-u500).
const FIG11_PROPOSED: &[(&str, f64)] = &[
    ("stream", 3.9910),
    ("gups", 3.8196),
    ("lbm", 2.1571),
    ("mcf", 3.9100),
    ("nbody", 1.0040),
    ("mcts", 1.2113),
    ("rbtree", 2.6807),
    ("xz", 2.1959),
    ("xz-d", 1.1544),
    ("bzip2", 3.2865),
    ("gzip", 1.0001),
    ("gzip-d", 1.0702),
    ("sqlite", 1.2877),
    ("lua", 1.5398),
    ("awk", 1.6567),
];

#[test]
fn fig11_slowdown_models_and_exceptions_at_test_size() {
    let v = experiment("seed000_fig11.py", "fig11.json");
    let rows = v["rows"].as_array().unwrap();
    let freq: Vec<f64> = rows.iter().map(|r| f(&r["freq"])).collect();
    let norm = |m: &str| -> Vec<f64> { rows.iter().map(|r| f(&r[m]["norm"])).collect() };
    let mut misses = Vec::new();
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let want = FIG11_PROPOSED
            .iter()
            .find(|p| p.0 == name)
            .expect("pinned")
            .1;
        let got = f(&r["proposed"]["norm"]);
        pin_slowdown(&mut misses, &format!("{name} proposed"), got, want, 0.04);
    }
    assert_pins(misses);

    // Coarse: every request pays the added 1000 ns on a blocking CPU, so
    // the slowdown is 1 us per request and ranks exactly with frequency.
    let coarse = &v["models"]["coarse"]["fonly"];
    assert!(
        (f(&coarse["k_us"]) - 1.0).abs() < 0.01 && f(&coarse["r2"]) > 0.999,
        "coarse: {coarse}"
    );
    assert!(spearman(&freq, &norm("coarse")) > 0.999);
    // Proposed: a trend with exceptions; the full model (ACT/REQ, write
    // share, request rate) fits clearly better, also left one out.
    let rho = spearman(&freq, &norm("proposed"));
    assert!((0.95..0.995).contains(&rho), "proposed rho {rho}");
    let m = &v["models"]["proposed"];
    let (fo, fu) = (&m["fonly"], &m["full"]);
    assert!(
        f(&fu["r2"]) > 0.995 && f(&fo["r2"]) < 0.99,
        "R2 frequency only {}, full {}",
        fo["r2"],
        fu["r2"]
    );
    // At the test size the full model's leave-one-out error is 0.61 of the
    // frequency-only model's (0.31 at the ledger's ref size).
    assert!(
        f(&fu["loo_rmse"]) < 0.65 * f(&fo["loo_rmse"]),
        "leave-one-out error frequency only {}, full {}",
        fo["loo_rmse"],
        fu["loo_rmse"]
    );
    // Each extra cost has the sign the mechanism gives it: row misses,
    // writes and closely spaced requests cost more.
    for k in ["b_us", "d_us", "e_us2"] {
        assert!(f(&fu[k]) > 0.0, "{k} = {}", fu[k]);
    }
    let ws = m["workloads"].as_array().unwrap();
    let named = |key: &str| -> Vec<&str> {
        ws.iter()
            .filter(|w| w[key] == true)
            .map(|w| w["name"].as_str().unwrap())
            .collect()
    };
    assert_eq!(named("exception"), ["xz-d", "gzip-d", "sqlite"]);
    assert_eq!(named("explained"), ["xz-d", "sqlite"]);
    for w in ws.iter().filter(|w| w["explained"] == true) {
        assert_eq!(w["reason"], "request rate", "{w}");
    }
}

/// zc706 normalised time at +1000 ns per workload at the test size.
const T56_NORM: &[(&str, f64)] = &[
    ("stream", 18.1705),
    ("gups", 5.4165),
    ("lbm", 2.3870),
    ("mcf", 2.1568),
    ("nbody", 1.0218),
    ("mcts", 1.0266),
    ("rbtree", 2.2397),
    ("xz", 1.7948),
    ("xz-d", 1.2441),
    ("bzip2", 2.3245),
    ("gzip", 1.0065),
    ("gzip-d", 1.1991),
    ("sqlite", 1.2502),
    ("lua", 1.2928),
    ("awk", 1.4053),
];

#[test]
fn tables_5_6_frequency_not_hit_rate_at_test_size() {
    let v = experiment("seed001_tables5_6.py", "tables5_6.json");
    let rows = v["rows"].as_array().unwrap();
    let mut misses = Vec::new();
    for r in rows {
        let name = r["name"].as_str().unwrap();
        let want = T56_NORM.iter().find(|p| p.0 == name).expect("pinned").1;
        pin_slowdown(&mut misses, name, f(&r["norm"]), want, 0.04);
    }
    assert_pins(misses);
    let col = |k: &str| -> Vec<f64> { rows.iter().map(|r| f(&r[k])).collect() };
    let (hit, freq, norm) = (col("llc_hit_rate"), col("req_per_sec"), col("norm"));
    let (rho_hit, rho_freq) = (spearman(&hit, &norm), spearman(&freq, &norm));
    assert!(
        rho_hit.abs() < 0.5 && rho_freq > 0.9,
        "rank correlation with LLC hit rate {rho_hit:+.2}, with frequency {rho_freq:+.2}"
    );
    let fits = &v["models"]["fits"];
    let hit_fit = &fits["LLC hit rate: norm = a + b h"];
    let freq_fit = &fits["frequency: norm - 1 = k f"];
    assert!(
        f(&hit_fit["r2"]) < 0.3 && f(&freq_fit["r2"]) > 0.99,
        "R2 hit rate {}, frequency {}",
        hit_fit["r2"],
        freq_fit["r2"]
    );
    // zc706 at +1000 ns: about 1.8 us per NVMM request.
    let k = f(&freq_fit["beta"][0]);
    assert!((1.7..1.9).contains(&k), "{k} us per request");
    let exceptions: Vec<&str> = v["models"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["exception"] == true)
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(exceptions, ["xz-d"]);
}
