//! `rvnvmm run` with `--stats`, for the integration tests that read a run's
//! statistics. Included with `#[path]` by the tests that need it.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// `rvnvmm run OPTIONS --stats FILE PROGRAM ARGS`, the file in a directory
/// of its own: the run's output and its statistics.
pub fn run_with_stats(options: &[&str], program: &Path, args: &[&str]) -> (Output, Value) {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rvnvmm-stats-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("run")
        .args(options)
        .arg("--stats")
        .arg(&stats)
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&stats).unwrap_or_else(|e| {
        panic!(
            "no statistics ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    std::fs::remove_dir_all(&dir).ok();
    (o, serde_json::from_str(&text).unwrap())
}
