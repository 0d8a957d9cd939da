//! The fidelity checks of seed 000 §5.1-§5.2 on the `freedom-u500` machine
//! with the paper's settings (coarse 1000/1000 ns; fine tRCD = tRP =
//! 1000 ns; proposed adds tRAS = 7000 ns), run through `rvnvmm bench
//! locality` and `rvnvmm bench banks --json`. The bounds are the ones the
//! project's issue sets from the paper's Tables 3-6.

#[path = "support/figures.rs"]
mod figures;

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::collections::BTreeMap;
use std::process::Command;

/// (method, op, parameter) -> average latency in ns.
fn table(bench: &str) -> BTreeMap<(String, String, u64), f64> {
    let out = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["bench", bench, "--json", "--size", "4194304"])
        .output()
        .expect("run rvnvmm bench");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = if bench == "banks" { "nbank" } else { "stride" };
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object per line");
            let k = (
                v["method"].as_str().unwrap().to_string(),
                v["op"].as_str().unwrap().to_string(),
                v[key].as_u64().unwrap(),
            );
            (k, v["avg_latency_ns"].as_f64().unwrap())
        })
        .collect()
}

fn get(t: &BTreeMap<(String, String, u64), f64>, m: &str, op: &str, p: u64) -> f64 {
    t[&(m.to_string(), op.to_string(), p)]
}

/// Seed 000 Tables 3-6 in ns: (op, parameter, [coarse, fine, proposed]).
const TABLE_3_4: [(&str, u64, [f64; 3]); 4] = [
    ("read", 4096, [2702.0, 2708.0, 4081.0]),
    ("read", 8192, [2881.0, 2872.0, 6064.0]),
    ("write", 4096, [4399.0, 4879.0, 14457.0]),
    ("write", 8192, [4479.0, 5334.0, 15913.0]),
];
const TABLE_5_6: [(&str, u64, [f64; 3]); 12] = [
    ("read", 1, [2598.0, 2608.0, 6060.0]),
    ("read", 2, [2626.0, 2634.0, 4353.0]),
    ("read", 3, [2637.0, 2647.0, 3062.0]),
    ("read", 4, [2753.0, 2736.0, 2751.0]),
    ("read", 5, [2887.0, 2875.0, 2839.0]),
    ("read", 6, [2962.0, 2966.0, 2944.0]),
    ("write", 1, [4204.0, 4892.0, 15843.0]),
    ("write", 2, [4207.0, 3925.0, 11104.0]),
    ("write", 3, [4223.0, 3655.0, 8712.0]),
    ("write", 4, [4307.0, 3652.0, 7070.0]),
    ("write", 5, [4465.0, 3658.0, 5818.0]),
    ("write", 6, [4507.0, 3656.0, 5153.0]),
];

/// Every cell of Tables 3 and 5 within ±25% of the paper, of Tables 4 and
/// 6 within ±35%.
#[test]
fn every_cell_of_tables_3_to_6_is_near_the_paper() {
    for (bench, rows) in [("locality", &TABLE_3_4[..]), ("banks", &TABLE_5_6[..])] {
        let t = table(bench);
        for &(op, p, paper) in rows {
            let band = if op == "read" { 0.25 } else { 0.35 };
            for (m, want) in ["coarse", "fine", "proposed"].into_iter().zip(paper) {
                let got = get(&t, m, op, p);
                assert!(
                    (got / want - 1.0).abs() <= band,
                    "{bench} {m} {op} {p}: {got:.0} ns, paper {want:.0} ns"
                );
            }
        }
    }
}

#[test]
fn locality_shows_only_under_the_proposed_method() {
    let t = table("locality");
    let ratio = |m: &str| get(&t, m, "read", 4096) / get(&t, m, "read", 8192);
    assert!(
        (0.45..=0.80).contains(&ratio("proposed")),
        "proposed read 4096/8192 = {}",
        ratio("proposed")
    );
    for m in ["coarse", "fine"] {
        assert!(
            (0.85..=1.0).contains(&ratio(m)),
            "{m} read 4096/8192 = {}",
            ratio(m)
        );
    }
}

#[test]
fn bank_parallelism_shows_only_under_the_proposed_method() {
    let t = table("banks");
    let fall = |m: &str, op: &str, to: u64| 1.0 - get(&t, m, op, to) / get(&t, m, op, 1);
    assert!(
        fall("proposed", "read", 4) >= 0.45,
        "proposed read falls {:.2} from 1 to 4 banks",
        fall("proposed", "read", 4)
    );
    assert!(
        fall("proposed", "write", 6) >= 0.50,
        "proposed write falls {:.2}",
        fall("proposed", "write", 6)
    );
    // Coarse and fine reads hide nothing; they rise a little with NBANK, as
    // on the FPGA (+14% at six banks), where §5.2 puts it down to address
    // translation: the banks' leaf PTEs share an L1D set and evict one
    // another (docs/fidelity.md).
    for m in ["coarse", "fine"] {
        for n in 2..=6 {
            assert!(
                (-0.25..0.03).contains(&fall(m, "read", n)),
                "{m} read changes {:.2} at {n} banks",
                fall(m, "read", n)
            );
        }
        assert!(
            fall(m, "read", 6) < fall(m, "read", 2) - 0.05,
            "{m} read rises with NBANK: {:.2} at 2, {:.2} at 6",
            fall(m, "read", 2),
            fall(m, "read", 6)
        );
    }
    for n in 2..=6 {
        assert!(
            (-0.25..0.10).contains(&fall("coarse", "write", n)),
            "coarse write changes {:.2} at {n} banks",
            fall("coarse", "write", n)
        );
    }
    // Paper 2.6. A write costs the fill's row cycle and the write-back's; a
    // read one row cycle, cut short now and then by a refresh
    // (docs/experiments.md).
    let wr = get(&t, "proposed", "write", 1) / get(&t, "proposed", "read", 1);
    assert!(
        (2.0..=3.5).contains(&wr),
        "proposed write/read latency at one bank = {wr:.2}"
    );
    assert!(
        get(&t, "fine", "write", 1) > get(&t, "coarse", "write", 1),
        "fine write latency above coarse"
    );
}

/// `rvnvmm bench bandwidth --config zc706 --added 0,1000 --passes PASSES`:
/// (op, stride, added tRCD, added tRP) -> NVMM/DRAM.
fn bandwidth(passes: u32) -> BTreeMap<(String, u64, u64, u64), f64> {
    let passes = passes.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args([
            "bench",
            "bandwidth",
            "--config",
            "zc706",
            "--json",
            "--added",
            "0,1000",
            "--passes",
            &passes,
        ])
        .output()
        .expect("run rvnvmm bench bandwidth");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut table = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["passes"].as_u64().unwrap().to_string(), passes);
        let key = (
            r["op"].as_str().unwrap().to_string(),
            r["stride"].as_u64().unwrap(),
            r["added_trcd_ns"].as_u64().unwrap(),
            r["added_trp_ns"].as_u64().unwrap(),
        );
        table.insert(key, r["ratio"].as_f64().unwrap());
    }
    table
}

/// Seed 001 §4.1 on `zc706`: NVMM bandwidth relative to DRAM is about half
/// at +0 ns (the PL path), falls to about a tenth for reads at +1000 ns, and
/// writes (a fill's ACT and PRE, a write-back's ACT and PRE) suffer from both
/// added latencies. Timed on the second pass, the variant the zc706
/// settings were calibrated with (docs/fidelity.md).
#[test]
fn nvmm_bandwidth_falls_with_added_trcd_and_trp() {
    let table = bandwidth(2);
    let ratio =
        |op: &str, stride: u64, rcd: u64, rp: u64| table[&(op.to_string(), stride, rcd, rp)];
    for stride in [4, 32, 8192] {
        for op in ["read", "write"] {
            assert!(
                ratio(op, stride, 1000, 1000) < 0.5 * ratio(op, stride, 0, 0),
                "{op} stride {stride}"
            );
        }
        let (w0, wp) = (
            ratio("write", stride, 0, 0),
            ratio("write", stride, 0, 1000),
        );
        assert!(
            wp < 0.8 * w0,
            "writes pay tRP: stride {stride}: {w0} -> {wp}"
        );
    }
    // The paper's figures, within the factor of 1.5 the fidelity target
    // allows: reads about 0.5 at +0 and 0.10 at +1000 ns tRCD (tRP stays at
    // +0 for reads, as in the paper), writes about 0.6 at +0 and 0.03 at
    // +1000/+1000 ns.
    let within = |got: f64, paper: f64| got > paper / 1.5 && got < paper * 1.5;
    for stride in [32, 8192] {
        let w1 = ratio("write", stride, 1000, 1000);
        assert!(
            within(w1, 0.03),
            "write stride {stride} at +1000/+1000: {w1}"
        );
        let r0 = ratio("read", stride, 0, 0);
        assert!(within(r0, 0.5), "read stride {stride} at +0: {r0}");
        let r1 = ratio("read", stride, 1000, 0);
        assert!(within(r1, 0.10), "read stride {stride} at +1000: {r1}");
        let w0 = ratio("write", stride, 0, 0);
        assert!(within(w0, 0.6), "write stride {stride} at +0: {w0}");
    }
}

/// The paper's own loop is one cold pass over 1 MiB (`--passes 1`): a write
/// pass then writes back only the victims of its own second half. At stride
/// 32 all four of §4.1's figures still hold within the factor of 1.5; at
/// stride 8192 the write at +1000/+1000 ns comes out at 0.079 (0.053 with
/// the TLBs off), outside it: every access there is a TLB miss whose walk
/// costs DRAM and NVMM alike, which brings the ratio towards 1
/// (docs/fidelity.md reports the single pass as the headline).
#[test]
fn nvmm_bandwidth_in_a_single_cold_pass() {
    let cold = bandwidth(1);
    let warm = bandwidth(2);
    let ratio = |t: &BTreeMap<(String, u64, u64, u64), f64>, op: &str, stride, rcd, rp| {
        t[&(op.to_string(), stride, rcd, rp)]
    };
    let within = |got: f64, paper: f64| got > paper / 1.5 && got < paper * 1.5;
    for (op, rcd, rp, paper) in [
        ("read", 0, 0, 0.5),
        ("read", 1000, 0, 0.10),
        ("write", 0, 0, 0.6),
        ("write", 1000, 1000, 0.03),
    ] {
        let got = ratio(&cold, op, 32, rcd, rp);
        assert!(
            within(got, paper),
            "{op} +{rcd}/+{rp}: {got}, paper {paper}"
        );
    }
    let w8192 = ratio(&cold, "write", 8192, 1000, 1000);
    assert!(
        !within(w8192, 0.03) && w8192 < 0.09,
        "single-pass write at stride 8192, +1000/+1000: {w8192}"
    );
    // Reads leave nothing dirty: at stride 32 the pass before changes
    // nothing for them. At stride 8192 every access walks the page table,
    // whose lines the pass before left in the caches: the walks' share,
    // which DRAM and NVMM pay alike, shrinks, and NVMM looks slower.
    // Writes: the cold pass writes back fewer victims, so NVMM looks
    // relatively faster than in the second.
    for stride in [32, 8192] {
        for (rcd, rp) in [(0, 0), (1000, 0)] {
            let (c, w) = (
                ratio(&cold, "read", stride, rcd, rp),
                ratio(&warm, "read", stride, rcd, rp),
            );
            if stride == 32 {
                assert!(
                    (c / w - 1.0).abs() < 0.02,
                    "read stride {stride}: {c} / {w}"
                );
            } else {
                assert!(c > w, "read stride {stride}: {c} / {w}");
            }
        }
        for (rcd, rp) in [(0, 0), (1000, 1000)] {
            let (c, w) = (
                ratio(&cold, "write", stride, rcd, rp),
                ratio(&warm, "write", stride, rcd, rp),
            );
            assert!(
                c > w,
                "write stride {stride} +{rcd}/+{rp}: cold {c}, second pass {w}"
            );
        }
    }
}

/// The average latency `guest/build/emu/nvmm_microbench ARGS` measures in
/// user mode on `config` with `sets`.
fn c_loop(config: &str, sets: &[&str], args: &[&str]) -> f64 {
    let prog = artefacts::repo_root().join("guest/build/emu/nvmm_microbench");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    cmd.args(["run", "--config", config]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let out = cmd.arg(&prog).args(args).output().expect("run rvnvmm");
    assert!(
        out.status.success(),
        "{} {args:?}: {}{} (run make -C guest)",
        prog.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim()
        .strip_prefix("avg_latency_ns ")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output {text:?}"))
}

/// One JSON row of `rvnvmm bench ARGS --json` matching `filter`.
fn builtin(args: &[&str], filter: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    figures::bench_rows(args)
        .into_iter()
        .find(|v| filter(v))
        .expect("the row")
}

/// The same loops compiled from C (guest/emu/nvmm_microbench.c) and run as
/// a Linux program in user mode, on /dev/nvmm and anonymous DRAM, measure
/// what the built-in bare-hart loops measure, within 10% (the C program also
/// pays its page-table walks).
#[test]
fn c_loops_agree_with_the_built_in_ones() {
    let size = "4194304";
    let close = |c: f64, b: f64, what: &str| {
        assert!(
            (c / b - 1.0).abs() < 0.10,
            "{what}: C {c:.0} ns, built-in {b:.0} ns"
        );
    };
    for method in ["coarse", "proposed"] {
        let set = format!("memory.nvmm.method={method}");
        for op in ["read", "write"] {
            for stride in [4096u64, 8192] {
                let b = builtin(
                    &["locality", "--size", size, "--method", method, "--op", op],
                    |v| v["stride"] == stride,
                );
                let c = c_loop(
                    "freedom-u500",
                    &[&set],
                    &["locality", &stride.to_string(), size, op],
                );
                close(
                    c,
                    b["avg_latency_ns"].as_f64().unwrap(),
                    &format!("{method} {op} stride {stride}"),
                );
            }
        }
        for nbank in [1u64, 3] {
            let b = builtin(
                &["banks", "--size", size, "--method", method, "--op", "read"],
                |v| v["nbank"] == nbank,
            );
            // freedom-u500: bank-row-column, 512 MiB banks, 8 KiB rows.
            let c = c_loop(
                "freedom-u500",
                &[&set],
                &[
                    "banks",
                    &nbank.to_string(),
                    size,
                    "536870912",
                    "8192",
                    "read",
                ],
            );
            close(
                c,
                b["avg_latency_ns"].as_f64().unwrap(),
                &format!("{method} read nbank {nbank}"),
            );
        }
    }
    // Seed 001 Fig. 4 at +0 ns on zc706: DRAM and NVMM time per access.
    let spec = ["memory.nvmm.trcd_ns=13.75", "memory.nvmm.trp_ns=13.75"];
    for op in ["read", "write"] {
        for stride in [4u64, 32] {
            let b = builtin(
                &["bandwidth", "--config", "zc706", "--added", "0", "--op", op],
                |v| v["stride"] == stride,
            );
            for (region, key) in [
                ("dram", "dram_ns_per_access"),
                ("nvmm", "nvmm_ns_per_access"),
            ] {
                let c = c_loop(
                    "zc706",
                    &spec,
                    &["bandwidth", &stride.to_string(), "1048576", op, region],
                );
                close(
                    c,
                    b[key].as_f64().unwrap(),
                    &format!("zc706 {op} stride {stride} {region}"),
                );
            }
        }
    }
}
