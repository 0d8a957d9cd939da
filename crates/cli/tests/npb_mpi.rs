//! The MPI build of the NAS-like kernels (`guest/npb/NAME_mpi.c`, class S).
//!
//! On the build machine (`make -C guest/npb native native-mpi`, the host's
//! Open MPI): every kernel verifies under `mpirun` at 1, 2, 3 and 4
//! processes and prints the OpenMP build's checksums at as many threads
//! (the decompositions are the same and the sums over ranks are added in
//! rank order); a bad class is refused, once, with exit status 2. The riscv64 binaries (`make -C guest/npb`, against the
//! sysroot's Debian libmpi) run as one process without mpirun (Open MPI's
//! singleton) under `rvnvmm run --sysroot` and print what `qemu-riscv64 -L`
//! prints. Needs `scripts/setup.sh` (the host's openmpi-bin, the sysroot's
//! libopenmpi-dev), `make -C guest` and `qemu-riscv64`.

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const KERNELS: [&str; 4] = ["ep", "is", "cg", "mg"];

fn program(dir: &str, name: &str) -> PathBuf {
    artefacts::guest_program(&artefacts::guest_build().join(dir), name)
        .unwrap_or_else(|e| panic!("{e} (make -C guest/npb native native-mpi)"))
}

/// A clean environment (no OMPI_ or OMP_ settings from the caller).
fn clean(cmd: &mut Command) -> &mut Command {
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
}

fn mpirun(name: &str, processes: u32, class: &str) -> Output {
    let mpirun = artefacts::find_in_path("mpirun")
        .expect("mpirun not on PATH (scripts/setup.sh installs openmpi-bin)");
    let mut cmd = Command::new(mpirun);
    clean(&mut cmd)
        .args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(processes.to_string())
        .arg(program("npb-mpi/host", name))
        .arg(class);
    cmd.output().unwrap()
}

fn openmp(name: &str, threads: u32) -> Output {
    let mut cmd = Command::new(program("npb/host", name));
    clean(&mut cmd)
        .env("OMP_NUM_THREADS", threads.to_string())
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
        stdout.contains(" VERIFICATION SUCCESSFUL\n")
            && stdout.contains(" Verification    =               SUCCESSFUL\n"),
        "{what}:\n{stdout}"
    );
    stdout
}

/// The lines that depend on the arithmetic only: no times, rates, banner
/// or worker counts (which say threads in one build, processes in the other).
fn checksums(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| {
            !["Time", "time", "Mop/s", "NAS Parallel", "thread", "process"]
                .iter()
                .any(|w| l.contains(w))
        })
        .collect()
}

#[test]
fn host_mpi_kernels_verify_at_1_to_4_processes_with_the_openmp_checksums() {
    for name in KERNELS {
        for n in 1..=4 {
            let what = format!("{name} at {n} processes");
            let ours = verified(&what, &mpirun(name, n, "S"));
            assert!(
                ours.contains(&format!(" Total processes =             {n:12}\n")),
                "{what}:\n{ours}"
            );
            let theirs = verified(&format!("{name} at {n} threads"), &openmp(name, n));
            assert_eq!(
                checksums(&ours),
                checksums(&theirs),
                "{what} against the OpenMP build at {n} threads"
            );
        }
    }
}

#[test]
fn host_mpi_kernel_refuses_a_bad_class_once() {
    let o = mpirun("mg", 2, "X");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("usage: mg [CLASS]").count(), 1, "{stderr}");
    assert!(o.stdout.is_empty(), "{o:?}");
}

fn sysroot_with_libmpi() -> PathBuf {
    let sysroot = artefacts::sysroot().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        sysroot
            .join("usr/lib/riscv64-linux-gnu/libmpi.so.40")
            .exists(),
        "{} has no libmpi.so.40: run scripts/setup.sh",
        sysroot.display()
    );
    sysroot
}

/// Open MPI's start-up wants a home directory (for its parameter files).
fn singleton(cmd: &mut Command) -> &mut Command {
    clean(cmd).env("HOME", std::env::temp_dir())
}

fn singleton_rvnvmm(kernel: &Path, sysroot: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    singleton(&mut cmd)
        .args(["run", "--set", "machine.model=functional", "--sysroot"])
        .arg(sysroot)
        .arg("--")
        .arg(kernel)
        .arg("S");
    cmd.output().unwrap()
}

fn singleton_qemu(kernel: &Path, sysroot: &Path) -> Output {
    let q = artefacts::qemu().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(q);
    singleton(&mut cmd)
        .arg("-L")
        .arg(sysroot)
        .arg(kernel)
        .arg("S");
    cmd.output().unwrap()
}

/// EP is left out: its 2^25 numbers take a minute under qemu; the host test
/// covers its arithmetic.
#[test]
fn riscv64_mpi_singletons_run_under_rvnvmm_as_under_qemu() {
    let sysroot = sysroot_with_libmpi();
    for name in ["is", "cg", "mg"] {
        let kernel = program("npb-mpi", name);
        let what = format!("{name}, one process");
        let ours = verified(
            &format!("rvnvmm: {what}"),
            &singleton_rvnvmm(&kernel, &sysroot),
        );
        assert!(
            ours.contains(" Total processes =                        1\n"),
            "{what}:\n{ours}"
        );
        let theirs = verified(&format!("qemu: {what}"), &singleton_qemu(&kernel, &sysroot));
        let timeless = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| !(l.contains("Time") || l.contains("time") || l.contains("Mop/s")))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            timeless(&ours),
            timeless(&theirs),
            "{what}: rvnvmm against qemu"
        );
    }
}
