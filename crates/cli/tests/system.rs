//! The full system's reference side: the initramfs `scripts/build-initramfs.sh`
//! builds from Debian's busybox, kernel modules and the guest SDK boots
//! Debian's riscv64 kernel on OpenSBI 1.6 under `qemu-system-riscv64
//! -machine virt` with four harts, runs its test script and powers off.
//! `rvnvmm boot` must give the same script output. Needs `scripts/setup.sh`
//! and `make -C guest` first (`scripts/test.sh` does both).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/initramfs.rs"]
mod initramfs;

use std::process::{Command, Stdio};

/// `KEY=VALUE` lines of the cache's paths.env.
fn paths_env(key: &str) -> String {
    let cache = std::env::var("RVNVMM_CACHE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/rvnvmm")
        });
    let text = std::fs::read_to_string(cache.join("paths.env"))
        .expect("paths.env missing: run scripts/setup.sh");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} missing from paths.env: run scripts/setup.sh"))
        .to_string()
}

#[test]
fn the_initramfs_boots_debian_linux_on_four_harts_under_qemu() {
    let initramfs = initramfs::initramfs();
    let out = Command::new("qemu-system-riscv64")
        .args([
            "-machine",
            "virt",
            "-smp",
            "4",
            "-m",
            "2G",
            "-nographic",
            "-no-reboot",
        ])
        .args(["-bios", &paths_env("RVNVMM_OPENSBI")])
        .args(["-kernel", &paths_env("RVNVMM_KERNEL")])
        .args(["-initrd", &initramfs])
        .args(["-append", "console=ttyS0 rvnvmm.rc=1 quiet"])
        .stdin(Stdio::null())
        .output()
        .expect("run qemu-system-riscv64 (scripts/setup.sh installs it)");
    let console = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{console}");
    assert_eq!(
        initramfs::rc_lines(&console),
        initramfs::RC_LINES,
        "{console}"
    );
    assert!(console.contains("reboot: Power down"), "{console}");
}
