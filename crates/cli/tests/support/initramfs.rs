//! The project's initramfs (`scripts/build-initramfs.sh`) and the lines its
//! test script (`rvnvmm.rc=1`) prints, the same under `rvnvmm boot` and
//! `qemu-system-riscv64`. Included with `#[path]`; needs the `artefacts`
//! module beside it.

use std::process::Command;

/// The script's lines, timings aside.
pub const RC_LINES: [&str; 8] = [
    "rc: harts 4",
    "rc: cpuinfo processors 4",
    "rc: uname Linux riscv64",
    "rc: module virtio_mmio loaded",
    "rc: module libnvdimm loaded",
    "rc: module nd_pmem loaded",
    "rc: module of_pmem loaded",
    "rc: done",
];

/// Builds (or finds in the cache) the initramfs; its path.
pub fn initramfs() -> String {
    let out = Command::new("bash")
        .arg(crate::artefacts::repo_root().join("scripts/build-initramfs.sh"))
        .output()
        .expect("run build-initramfs.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The script's lines in a console transcript.
pub fn rc_lines(console: &str) -> Vec<&str> {
    console
        .lines()
        .map(str::trim_end)
        .filter(|l| l.starts_with("rc: "))
        .collect()
}
