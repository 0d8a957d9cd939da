//! Seed 001 Tables 7-12 in small: the persistent red-black tree of the
//! workload suite (`rbtree N OPS persist:K`) on `zc706`, its heap on NVMM.
//! The cache-flush overhead grows with the lines written back, and stays
//! nearly flat over the added tRCD/tRP. `experiments/seed001_flush.py` is
//! the full grid. Needs `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::process::{Command, Stdio};

/// (simulated ns, lines written back by flushes, stdout) of one run.
fn run(persist: u32, added_rcd: f64, added_rp: f64) -> (f64, u64, Vec<u8>) {
    let repo = artefacts::repo_root();
    let prog = repo.join("guest/build/workloads/bin/rbtree");
    let dir = tempfile_dir();
    let stats = dir.join("s.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    cmd.args(["run", "--config", "zc706", "--no-progress", "--stats"])
        .arg(&stats)
        .args(["--set", "machine.model=timing", "--set", "user.heap=nvmm"])
        .args([
            "--set",
            &format!("memory.nvmm.trcd_ns={}", 13.75 + added_rcd),
        ])
        .args(["--set", &format!("memory.nvmm.trp_ns={}", 13.75 + added_rp)])
        .arg("--")
        .arg(&prog)
        .args(["2000", "2000"]);
    if persist > 0 {
        cmd.arg(format!("persist:{persist}"));
    }
    let out = cmd
        .current_dir(&dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .expect("run rvnvmm");
    assert!(
        out.status.success(),
        "{} (run make -C guest): {}",
        prog.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        s["sim_time_ns"].as_f64().unwrap(),
        s["flushes"]["lines_written_back"].as_u64().unwrap(),
        out.stdout,
    )
}

fn tempfile_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "rvnvmm-flush-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn flush_overhead_follows_lines_written_back_not_nvmm_latency() {
    let (plain, none, out) = run(0, 1000.0, 1000.0);
    assert_eq!(none, 0);
    let mut last = (1.0, 0);
    for k in [8, 2, 1] {
        let (t, lines, o) = run(k, 1000.0, 1000.0);
        assert_eq!(o, out, "persistence must not change the output");
        let overhead = t / plain;
        assert!(
            lines > last.1 && overhead > last.0,
            "K={k}: {lines} lines, overhead {overhead:.3} after {last:?}"
        );
        last = (overhead, lines);
    }
    let mut grid = Vec::new();
    for (rcd, rp) in [(0.0, 0.0), (0.0, 1000.0), (1000.0, 0.0), (1000.0, 1000.0)] {
        grid.push(run(1, rcd, rp).0 / run(0, rcd, rp).0);
    }
    let (lo, hi) = grid
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(
        hi / lo < 1.15,
        "flush overhead over added tRCD/tRP {grid:?} should stay nearly flat"
    );
}
