//! `rvnvmm bench speed` keeps working: the `--quick` workloads run under
//! both emulators and the output has the promised shape. Nothing here
//! asserts on speed. Needs `scripts/setup.sh` and `make -C guest` first.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    c.arg("bench").arg("speed").args(args);
    c
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The quick rows and the full system's (`--boot`: a whole boot, once).
#[test]
fn quick_json_rows() {
    let o = bench(&["--quick", "--json", "--boot"])
        .output()
        .expect("run rvnvmm");
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "rvnvmm bench speed --quick --json failed ({}):\n{err}",
        o.status
    );
    assert!(!err.contains("panicked"), "{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["program"].as_str().expect("program"))
        .collect();
    assert_eq!(names.len(), 5, "{out}");
    assert!(names[0].starts_with("bench_compute"), "{names:?}");
    assert_eq!(names[1], "float_print");
    assert!(names[2].starts_with("busybox gzip"), "{names:?}");
    assert!(names[3].starts_with("busybox sh"), "{names:?}");
    assert_eq!(names[4], "boot, 4 harts (system)");
    assert!(
        rows[4]["instructions"].as_u64().expect("instructions") > 1_000_000_000,
        "Linux's boot is billions of instructions: {}",
        rows[4]
    );
    for r in &rows {
        assert!(
            r["instructions"].as_u64().expect("instructions") > 100_000,
            "{r}"
        );
        assert_eq!(r["runs"].as_u64(), Some(1), "{r}");
        for k in [
            "rvnvmm_seconds",
            "rvnvmm_mips",
            "qemu_seconds",
            "qemu_mips",
            "ratio",
        ] {
            let v = r[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {r}"));
            assert!(v.is_finite() && v > 0.0, "{k} = {v}: {r}");
        }
    }
}

#[test]
fn quick_table() {
    let o = bench(&["--quick", "--runs", "1"])
        .output()
        .expect("run rvnvmm");
    let (out, err) = text(&o);
    assert!(o.status.success(), "failed ({}):\n{err}", o.status);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "a title, a header and 4 rows:\n{out}");
    assert!(lines[1].starts_with("program"), "{out}");
    assert!(lines[2].starts_with("bench_compute"), "{out}");
}

/// `--keep-inputs DIR` leaves the gzip row's text in DIR, whole (the
/// quick text is 64 KiB of words), for a run outside the benchmark.
#[test]
fn kept_inputs_stay() {
    let dir = std::env::temp_dir().join(format!("rvnvmm-kept-inputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = bench(&["--quick", "--runs", "1", "--keep-inputs"])
        .arg(&dir)
        .output()
        .expect("run rvnvmm");
    let (_, err) = text(&o);
    assert!(o.status.success(), "failed ({}):\n{err}", o.status);
    let input = std::fs::read(dir.join("input.txt")).expect("the kept gzip input");
    assert_eq!(input.len(), 64 * 1024);
    assert!(input
        .iter()
        .all(|&b| b == b' ' || b == b'\n' || (b'a'..=b'j').contains(&b)));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A missing piece is one line on stderr naming it, status 2, no panic.
fn expect_one_line_error(mut c: Command, wanted: &str) {
    let o = c.output().expect("run rvnvmm");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rvnvmm: ") && err.contains(wanted), "{err}");
    assert!(out.is_empty(), "{out}");
}

#[test]
fn missing_pieces_are_clean_errors() {
    let empty = std::env::temp_dir().join(format!("rvnvmm-bench-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();

    expect_one_line_error(bench(&["--quick", "--qemu", "/nonexistent/qemu"]), "--qemu");

    let mut c = bench(&["--quick"]);
    c.env_remove("RVNVMM_QEMU").env("PATH", &empty);
    expect_one_line_error(c, "qemu-user");

    let mut c = bench(&["--quick"]);
    c.arg("--programs").arg(&empty);
    expect_one_line_error(c, "--programs");

    let mut c = bench(&["--quick"]);
    c.env("RVNVMM_BUSYBOX", empty.join("busybox"));
    expect_one_line_error(c, "RVNVMM_BUSYBOX");

    let _ = std::fs::remove_dir_all(&empty);
}

/// `bench boot`: one functional boot of the full system under each emulator
/// gives a row of the promised shape (Linux's instruction count is in the
/// billions and the boot reaches power-off under both, or the command
/// fails).
#[test]
fn boot_row_of_the_full_system() {
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args([
            "bench",
            "boot",
            "--runs",
            "1",
            "--models",
            "functional",
            "--json",
        ])
        .output()
        .expect("run rvnvmm");
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "bench boot failed ({}):\n{err}",
        o.status
    );
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    let r = &rows[0];
    assert_eq!(r["program"], "boot", "{r}");
    assert_eq!(r["model"], "functional", "{r}");
    assert_eq!(r["harts"].as_u64(), Some(4), "{r}");
    assert!(
        r["instructions"].as_u64().expect("instructions") > 1_000_000_000,
        "{r}"
    );
    assert!(
        r["sim_time_ns"].as_u64().expect("sim_time_ns") > 1_000_000_000,
        "{r}"
    );
    for k in ["rvnvmm_seconds", "rvnvmm_mips", "qemu_seconds", "ratio"] {
        let v = r[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {r}"));
        assert!(v.is_finite() && v > 0.0, "{k} = {v}: {r}");
    }
}

/// A missing qemu-system-riscv64 or initramfs stops `bench boot` before
/// any boot, with one line naming it.
#[test]
fn boot_bench_missing_pieces_are_clear_errors() {
    for (args, says) in [
        (
            ["--qemu", "/nonexistent/qemu-system-riscv64"],
            "does not exist",
        ),
        (["--initrd", "/nonexistent/initramfs.cpio.gz"], "--initrd"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
            .args(["bench", "boot"])
            .args(args)
            .output()
            .expect("run rvnvmm");
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
