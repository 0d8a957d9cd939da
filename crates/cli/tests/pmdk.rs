//! PMDK in user mode (docs/persistence.md, "PMDK"): a libpmemobj pool in
//! the NVMM-backed directory (`user.pmem_dir`) lives in the NVMM image, and
//! `rvnvmm crashtest` of a transactional red-black tree
//! (`guest/emu/pmdk_rbtree.c`) shows what Debian's riscv64 PMDK persists:
//! under eADR every crash recovers; under ADR committed transactions are
//! lost (its flush is a no-op); with libpmem's flushes made `cbo.clean`
//! (`guest/pmdk/libpmem_cbo.c`) every crash recovers under ADR too. Needs
//! `scripts/setup.sh` (the sysroot with PMDK) and `make -C guest`.

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn program(name: &str) -> PathBuf {
    let p = artefacts::repo_root().join("guest/build/emu").join(name);
    assert!(
        p.is_file(),
        "{} is not built: run `make -C guest` (after scripts/setup.sh)",
        p.display()
    );
    p
}

fn sysroot() -> PathBuf {
    artefacts::sysroot().unwrap_or_else(|e| panic!("{e}"))
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rvnvmm-pmdk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rvnvmm(img: &Path, sub: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    c.env_clear()
        .env("LC_ALL", "C")
        .arg(sub)
        .arg("--set")
        .arg("user.pmem_dir=/mnt/pmem")
        .arg("--set")
        .arg(format!("memory.nvmm.image={}", img.display()))
        .arg("--sysroot")
        .arg(sysroot());
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `rvnvmm run PROG /mnt/pmem/pool ARGS` on image `img`.
fn run(img: &Path, prog: &Path, args: &[&str]) -> Output {
    rvnvmm(img, "run")
        .arg(prog)
        .arg("/mnt/pmem/pool")
        .args(args)
        .output()
        .unwrap()
}

/// A new image holding a pool made by `prog create`.
fn pool_image(dir: &Path, prog: &Path) -> PathBuf {
    let img = dir.join("nvmm.img");
    let o = run(&img, prog, &["create"]);
    assert!(o.status.success(), "{}", text(&o));
    img
}

/// `rvnvmm crashtest` of `prog run 300` with `points` points.
fn crashtest(img: &Path, prog: &Path, persistence: &str, points: u32) -> Output {
    let recover = format!("{} /mnt/pmem/pool check", prog.display());
    rvnvmm(img, "crashtest")
        .args(["--points", &points.to_string(), "--jobs", "2"])
        .args(["--persistence", persistence, "--recover", &recover, "--"])
        .arg(prog)
        .args(["/mnt/pmem/pool", "run", "300"])
        .output()
        .unwrap()
}

#[test]
fn the_pool_lives_in_the_image_and_a_second_run_continues_it() {
    let d = tempdir("second");
    let prog = program("pmdk_rbtree");
    let img = pool_image(&d, &prog);
    for (n, total) in [("40", "ops 40 "), ("25", "ops 65 ")] {
        let o = run(&img, &prog, &["run", n]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(total),
            "{}",
            text(&o)
        );
    }
    let o = run(&img, &prog, &["check"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("consistent: 65 operations"),
        "{}",
        text(&o)
    );
    // A fresh image has no pool.
    let o = run(&d.join("empty.img"), &prog, &["check"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn debian_pmdk_loses_committed_transactions_under_adr_and_recovers_under_eadr() {
    let d = tempdir("stock");
    let prog = program("pmdk_rbtree");
    let img = pool_image(&d, &prog);
    let o = crashtest(&img, &prog, "adr", 20);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 flush and fence events"), "{}", text(&o));
    // What the crash loses depends on where the points fall (the program's
    // path and environment move its stack): committed operations, or a
    // tree caught mid-rotation. Either way the check finds it.
    assert!(
        out.contains("pmdk_rbtree: inconsistent after"),
        "{}",
        text(&o)
    );
    let o = crashtest(&img, &prog, "eadr", 10);
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn pmdk_with_cbo_clean_flushes_recovers_under_adr() {
    let d = tempdir("cbo");
    let prog = program("pmdk_rbtree_cbo");
    let img = pool_image(&d, &prog);
    let o = crashtest(&img, &prog, "adr", 20);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains(" 0 flush and fence events"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}
