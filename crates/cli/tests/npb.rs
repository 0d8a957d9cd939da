//! The NAS-like kernels (`guest/npb`, OpenMP, class S) under `rvnvmm run`:
//! each verifies at 1 and 2 threads on the functional model, and IS, CG and
//! MG print what `qemu-riscv64` prints at the same thread count (times and
//! Mop/s aside). EP is checked by its own verification only (its sums to
//! 1e-8): a qemu run would double its 15 s. On the timing model, 4 threads
//! on the 2-hart mappi share the harts two by two, and a run is
//! deterministic. Needs `make -C guest/npb` and `qemu-riscv64`.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_view.rs"]
mod guest_view;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn kernel(name: &str) -> PathBuf {
    artefacts::guest_program(&artefacts::guest_build().join("npb"), name)
        .unwrap_or_else(|e| panic!("{e} (make -C guest/npb)"))
}

/// A clean environment: the guest (and libgomp) see only this.
fn clean(cmd: &mut Command) -> &mut Command {
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
}

fn rvnvmm(name: &str, threads: u32, opts: &[&str]) -> Output {
    let build = artefacts::guest_build();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    clean(&mut cmd)
        .arg("run")
        .args(opts)
        .args(guest_view::options(
            &build,
            &std::env::temp_dir(),
            &["PATH=/usr/bin:/bin", "LC_ALL=C"],
        ))
        .arg("--env")
        .arg(format!("OMP_NUM_THREADS={threads}"))
        .arg("--")
        .arg(guest_view::guest_path(&build, &kernel(name)))
        .arg("S");
    cmd.output().unwrap()
}

fn qemu(name: &str, threads: u32) -> Output {
    let q = artefacts::qemu().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(q);
    clean(&mut cmd)
        .env("OMP_NUM_THREADS", threads.to_string())
        .arg(kernel(name))
        .arg("S");
    cmd.output().unwrap()
}

/// The stdout of a run that verified.
fn verified(what: &str, o: &Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what}: {:?}\n{stdout}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains(" VERIFICATION SUCCESSFUL\n"),
        "{what}:\n{stdout}"
    );
    assert!(
        stdout.contains(" Verification    =               SUCCESSFUL\n"),
        "{what}:\n{stdout}"
    );
    stdout
}

/// The output less the lines that carry times (host time under qemu).
fn timeless(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| !(l.contains("Time") || l.contains("time") || l.contains("Mop/s")))
        .collect()
}

fn functional_run(name: &str, threads: u32, against_qemu: bool) {
    let what = format!("{name} at {threads} threads");
    let ours = rvnvmm(
        name,
        threads,
        &["--set", "machine.model=functional", "--harts", "2"],
    );
    let ours = verified(&format!("rvnvmm: {what}"), &ours);
    assert!(
        ours.contains(&format!(" Total threads   =             {threads:12}\n")),
        "{what}:\n{ours}"
    );
    if against_qemu {
        let theirs = qemu(name, threads);
        let theirs = verified(&format!("qemu: {what}"), &theirs);
        assert_eq!(
            timeless(&ours),
            timeless(&theirs),
            "{what}: rvnvmm against qemu"
        );
    }
}

macro_rules! functional {
    ($($test:ident => ($name:literal, $threads:literal, $qemu:literal);)*) => {
        $(
            #[test]
            fn $test() {
                functional_run($name, $threads, $qemu);
            }
        )*
    };
}

functional! {
    ep_1_thread_verifies => ("ep", 1, false);
    ep_2_threads_verify => ("ep", 2, false);
    is_1_thread_verifies_as_under_qemu => ("is", 1, true);
    is_2_threads_verify_as_under_qemu => ("is", 2, true);
    cg_1_thread_verifies_as_under_qemu => ("cg", 1, true);
    cg_2_threads_verify_as_under_qemu => ("cg", 2, true);
    mg_1_thread_verifies_as_under_qemu => ("mg", 1, true);
    mg_2_threads_verify_as_under_qemu => ("mg", 2, true);
}

/// IS on mappi's timing model: the statistics (less host time and MIPS).
fn timed_is(threads: u32) -> serde_json::Value {
    let stats = std::env::temp_dir().join(format!(
        "rvnvmm-npb-{}-is-{threads}.json",
        std::process::id()
    ));
    let o = rvnvmm(
        "is",
        threads,
        &[
            "--config",
            "mappi",
            "--set",
            "machine.model=timing",
            "--stats",
            stats.to_str().unwrap(),
        ],
    );
    verified(&format!("is on mappi at {threads} threads"), &o);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_file(&stats);
    let o = v.as_object_mut().unwrap();
    o.remove("host_seconds");
    o.remove("mips");
    v
}

/// Four OpenMP threads on the two harts of mappi: libgomp starts three
/// threads beside the first, the user-mode kernel puts two on each hart
/// (the least loaded), and the run verifies.
#[test]
fn four_threads_share_mappis_two_harts() {
    let v = timed_is(4);
    let harts: Vec<u64> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["hart"].as_u64().unwrap())
        .collect();
    assert_eq!(harts, [0, 1, 0, 1], "{v}");
}

/// Two runs of the same parallel kernel give the same statistics.
#[test]
fn timed_parallel_runs_are_deterministic() {
    assert_eq!(timed_is(2), timed_is(2));
}
