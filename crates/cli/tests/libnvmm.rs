//! The NVMM SDK (`sdk/libnvmm`, docs/sdk.md) under `rvnvmm run`: each of
//! its test programs passes on the timing model (with the heap on DRAM and
//! on NVMM), the flush test's instructions show up in the statistics, and
//! `libnvmm-preload.so` moves an unmodified dynamic program's heap onto NVMM
//! without changing what it prints. Needs `scripts/setup.sh` and
//! `make -C guest` (which builds the SDK) first; `scripts/test.sh` does both.

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sdk_build() -> PathBuf {
    artefacts::repo_root().join("sdk/libnvmm/build")
}

fn sdk_file(rel: &str) -> PathBuf {
    let p = sdk_build().join(rel);
    assert!(
        p.is_file(),
        "{} is not built: run `make -C guest` (it builds sdk/libnvmm too)",
        p.display()
    );
    p
}

fn sysroot() -> PathBuf {
    artefacts::sysroot().unwrap_or_else(|e| panic!("{e}\n{}", artefacts::SETUP_HINT))
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "rvnvmm-libnvmm-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `rvnvmm run` with the guest's environment cleared (the guest inherits
/// rvnvmm's, and NVMM_* variables would change what the library does).
fn rvnvmm(args: &[&str], extra: &[&Path]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    c.env_clear().env("LC_ALL", "C").arg("run").args(args);
    for p in extra {
        c.arg(p);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stats(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every check line ends in "ok" and the program exits 0.
fn assert_passed(what: &str, o: &Output) {
    let out = String::from_utf8_lossy(&o.stdout);
    let checks = out.lines().filter(|l| l.ends_with(": ok")).count();
    let failed: Vec<&str> = out.lines().filter(|l| l.ends_with("FAIL")).collect();
    assert!(
        o.status.success() && failed.is_empty() && checks > 0,
        "{what}: {}",
        text(o)
    );
}

fn run_test(name: &str, heap: &str) -> Output {
    let prog = sdk_file(&format!("tests/{name}"));
    let o = rvnvmm(
        &[
            "--set",
            "machine.model=timing",
            "--set",
            &format!("user.heap={heap}"),
        ],
        &[&prog],
    );
    assert_passed(&format!("{name} (heap on {heap})"), &o);
    o
}

#[test]
fn allocator_invariants() {
    for heap in ["dram", "nvmm"] {
        run_test("alloc", heap);
    }
}

#[test]
fn error_detection() {
    for heap in ["dram", "nvmm"] {
        run_test("errors", heap);
    }
}

#[test]
fn thread_safety() {
    for heap in ["dram", "nvmm"] {
        run_test("threads", heap);
    }
}

/// Under every method: the row-buffer checks where rows exist, the device
/// counters (and their report lines) only under optane.
#[test]
fn phases() {
    for method in ["coarse", "fine", "proposed", "optane"] {
        let prog = sdk_file("tests/phases");
        let o = rvnvmm(
            &[
                "--set",
                "machine.model=timing",
                "--set",
                &format!("memory.nvmm.method={method}"),
            ],
            &[&prog],
        );
        assert_passed(&format!("phases under {method}"), &o);
        // User mode keeps the two threads' increments in simulated-time
        // order, so they meet on most of them (the C check only bounds the
        // invalidations by however often they met).
        let out = String::from_utf8_lossy(&o.stdout);
        let met: u64 = out
            .lines()
            .find(|l| l.starts_with("contend (apart 1)"))
            .and_then(|l| l.split(" for ").nth(1)?.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no contend line with both threads apart:\n{out}"));
        assert!(met >= 2000, "{met} hand-offs in 2 x 2000 increments");
    }
}

/// Each phase boundary takes a named snapshot of the statistics
/// (`NAME:begin`, `NAME:end`), and a phase's NVMM traffic in the program's
/// report is the difference of its two snapshots.
#[test]
fn phase_boundaries_are_named_snapshots() {
    let dir = tempdir();
    let json = dir.join("phases.json");
    let prog = sdk_file("tests/phases");
    let o = rvnvmm(
        &["--set", "machine.model=timing", "--stats"],
        &[&json, &prog],
    );
    assert_passed("phases", &o);
    let s = stats(&json);
    let snapshots = s["snapshots"].as_array().unwrap();
    let names: Vec<&str> = snapshots
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names[..10],
        [
            "all:begin",
            "seq:begin",
            "seq:end",
            "seq:begin",
            "seq:end",
            "stride:begin",
            "stride:end",
            "dram:begin",
            "dram:end",
            "all:end"
        ]
    );
    let snapshot = |name: &str| {
        &snapshots
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("no snapshot {name}"))["stats"]
    };
    let nvmm_reads = |name: &str| snapshot(name)["regions"]["nvmm"]["reads"].as_u64().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let reported: u64 = out
        .lines()
        .find(|l| l.starts_with("nvmm-phase name=stride region=nvmm "))
        .and_then(|l| l.split(" reads=").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no stride line: {}", text(&o)));
    assert!(reported > 0);
    assert_eq!(
        nvmm_reads("stride:end") - nvmm_reads("stride:begin"),
        reported
    );
}

#[test]
fn control_page() {
    run_test("control", "dram");
}

/// The flush instructions the program counted are the ones the memory
/// system counted, and the dirty lines reached memory.
#[test]
fn flushes_reach_the_statistics() {
    let dir = tempdir();
    let json = dir.join("flush.json");
    let prog = sdk_file("tests/flush");
    let o = rvnvmm(
        &["--set", "machine.model=timing", "--stats"],
        &[&json, &prog],
    );
    assert_passed("flush", &o);
    let out = String::from_utf8_lossy(&o.stdout);
    let number = |prefix: &str| -> u64 {
        out.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no \"{prefix}\" line: {}", text(&o)))
    };
    let issued = number("flush instructions issued: ");
    let written = number("dirty lines written back by flushes: at least ");
    let s = stats(&json);
    assert_eq!(s["flushes"]["instructions"].as_u64(), Some(issued), "{s}");
    assert!(
        s["flushes"]["lines_written_back"].as_u64().unwrap() >= written,
        "{}",
        s["flushes"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// seed 000 §5.3: the whole heap of an unmodified program on NVMM through
/// LD_PRELOAD. Same output and status; the NVMM region now carries the
/// traffic DRAM carried.
#[test]
fn preload_puts_the_heap_on_nvmm() {
    let sysroot = sysroot();
    let preload = sdk_file("libnvmm-preload.so");
    let prog = artefacts::guest_program(&artefacts::guest_build().join("dynamic"), "malloc_stress")
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempdir();
    let run = |tag: &str, env: Option<&Path>| {
        let json = dir.join(format!("{tag}.json"));
        let mut args = vec![
            "--set".to_string(),
            "machine.model=timing".into(),
            "--sysroot".into(),
            sysroot.display().to_string(),
        ];
        if let Some(p) = env {
            args.push("--env".into());
            args.push(format!("LD_PRELOAD={}", p.display()));
        }
        args.push("--stats".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = rvnvmm(&args, &[&json, &prog]);
        (o, stats(&json))
    };
    let (plain, plain_stats) = run("plain", None);
    let (pre, pre_stats) = run("preload", Some(&preload));
    assert!(plain.status.success(), "{}", text(&plain));
    assert_eq!(plain.status.code(), pre.status.code(), "{}", text(&pre));
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&pre.stdout),
        "output changed under LD_PRELOAD: {}",
        String::from_utf8_lossy(&pre.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&pre.stderr).contains("libnvmm"),
        "{}",
        text(&pre)
    );
    let reads = |s: &serde_json::Value, r: &str| s["regions"][r]["reads"].as_u64().unwrap();
    let writes = |s: &serde_json::Value, r: &str| s["regions"][r]["writes"].as_u64().unwrap();
    let (nv0, nv1) = (reads(&plain_stats, "nvmm"), reads(&pre_stats, "nvmm"));
    assert!(
        nv1 > 1_000_000 && nv1 > 100 * (nv0 + 1),
        "NVMM reads {nv0} without, {nv1} with the preload"
    );
    assert!(writes(&pre_stats, "nvmm") > 100 * (writes(&plain_stats, "nvmm") + 1));
    assert!(
        reads(&pre_stats, "dram") * 10 < reads(&plain_stats, "dram"),
        "DRAM reads {} without, {} with the preload",
        reads(&plain_stats, "dram"),
        reads(&pre_stats, "dram")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Threads, C++ (operator new), fork and exec under the preload print what
/// they print without it (functional model: fast).
#[test]
fn preload_keeps_programs_working() {
    let sysroot = sysroot();
    let preload = sdk_file("libnvmm-preload.so");
    let dynamic = artefacts::guest_build().join("dynamic");
    for (name, args) in [
        ("pthreads", vec![]),
        ("cxx_basic", vec![]),
        ("fork_pipe", vec![]),
        ("execve_self", vec![dynamic.join("execve_self")]),
    ] {
        let prog = artefacts::guest_program(&dynamic, name).unwrap_or_else(|e| panic!("{e}"));
        let sys = sysroot.display().to_string();
        let base = ["--set", "machine.model=functional", "--sysroot", &sys];
        let env = format!("LD_PRELOAD={}", preload.display());
        let mut with: Vec<&str> = base.to_vec();
        with.extend(["--env", &env]);
        let mut extra: Vec<&Path> = vec![&prog];
        extra.extend(args.iter().map(PathBuf::as_path));
        let plain = rvnvmm(&base, &extra);
        let pre = rvnvmm(&with, &extra);
        assert_eq!(
            plain.status.code(),
            pre.status.code(),
            "{name}: {}",
            text(&pre)
        );
        assert_eq!(plain.stdout, pre.stdout, "{name}: {}", text(&pre));
    }
}
