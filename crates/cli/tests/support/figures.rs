//! What the tests that pin the papers' figures share: `rvnvmm bench
//! --json` rows, pins with a tolerance and Spearman's rank correlation. Included with `#[path]`.
// Each including test uses what it needs.
#![allow(dead_code)]

use std::process::Command;

/// The JSON rows of `rvnvmm bench ARGS --json`, one object per line.
pub fn bench_rows(args: &[&str]) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .expect("run rvnvmm bench");
    assert!(
        out.status.success(),
        "bench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// Checks `got` against the pin `want` within the relative tolerance
/// `tol`, noting a miss in `misses`.
pub fn pin(misses: &mut Vec<String>, what: &str, got: f64, want: f64, tol: f64) {
    if (got / want - 1.0).abs() > tol {
        misses.push(format!(
            "{what}: {got:.4}, pinned {want:.4} (±{:.0}%)",
            tol * 100.0
        ));
    }
}

/// Spearman's rank correlation (the figures compared have no ties).
pub fn spearman(xs: &[f64], ys: &[f64]) -> f64 {
    fn ranks(v: &[f64]) -> Vec<f64> {
        let mut order: Vec<usize> = (0..v.len()).collect();
        order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        let mut r = vec![0.0; v.len()];
        for (rank, i) in order.into_iter().enumerate() {
            r[i] = rank as f64;
        }
        r
    }
    let (rx, ry) = (ranks(xs), ranks(ys));
    let n = xs.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum::<f64>().sqrt();
    let vy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum::<f64>().sqrt();
    cov / (vx * vy)
}
