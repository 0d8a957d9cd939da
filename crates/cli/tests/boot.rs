//! `rvnvmm boot`: OpenSBI 1.6 and Debian's 6.12 kernel boot the initramfs of
//! `scripts/build-initramfs.sh` on four harts of the full-system board, run
//! its test script and power off, with the same script output as under
//! `qemu-system-riscv64` (`tests/system.rs`); and the command's errors.
//! Needs `scripts/setup.sh` and `make -C guest` first (`scripts/test.sh`
//! does both).

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The script's lines under qemu-system-riscv64 (`tests/system.rs`).
const RC_LINES: [&str; 8] = [
    "rc: harts 4",
    "rc: cpuinfo processors 4",
    "rc: uname Linux riscv64",
    "rc: module virtio_mmio loaded",
    "rc: module libnvdimm loaded",
    "rc: module nd_pmem loaded",
    "rc: module of_pmem loaded",
    "rc: done",
];

fn initramfs() -> String {
    let out = Command::new("bash")
        .arg(artefacts::repo_root().join("scripts/build-initramfs.sh"))
        .output()
        .expect("run build-initramfs.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn boot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("boot")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rvnvmm boot")
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rvnvmm-boot-{}-{name}", std::process::id()));
    std::fs::write(&p, contents).unwrap();
    p
}

fn rc_lines(console: &str) -> Vec<&str> {
    console
        .lines()
        .map(str::trim_end)
        .filter(|l| l.starts_with("rc: "))
        .collect()
}

#[test]
fn debian_linux_boots_on_four_harts_runs_the_script_and_powers_off() {
    let initrd = initramfs();
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--smp",
        "4",
        "--initrd",
        &initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{console}\n{stderr}");
    assert!(console.contains("OpenSBI v1.6"), "{console}");
    assert_eq!(rc_lines(&console), RC_LINES, "{console}\n{stderr}");
    assert!(console.contains("reboot: Power down"), "{console}");
}

#[test]
fn the_firmware_banner_appears_and_a_hang_beyond_max_insns_fails() {
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--initrd",
        &initramfs(),
        "--max-insns",
        "20000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(console.contains("OpenSBI v1.6"), "{console}");
    assert!(console.contains("Boot HART ID"), "{console}");
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr.contains("did not power off within 20000000 instructions"),
        "{stderr}"
    );
}

#[test]
fn a_kernel_panic_is_an_error() {
    // No initramfs and no root device: the kernel cannot mount a root.
    let empty = temp_file("empty-initrd", b"");
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--initrd",
        empty.to_str().unwrap(),
        "--append",
        "console=ttyS0 quiet root=/dev/vda",
        "--max-insns",
        "30000000000",
    ]);
    std::fs::remove_file(&empty).ok();
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(console.contains("Kernel panic - not syncing"), "{console}");
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the guest kernel panicked: ") && stderr.contains("Kernel panic"),
        "{stderr}"
    );
}

#[test]
fn a_missing_kernel_is_a_clear_error() {
    let fw = temp_file("fw-missing", b"firmware");
    let out = boot(&[
        "--firmware",
        fw.to_str().unwrap(),
        "--kernel",
        "/nonexistent/Image",
    ]);
    std::fs::remove_file(&fw).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the kernel /nonexistent/Image"),
        "{stderr}"
    );
    let out = boot(&["--firmware", "/nonexistent/fw_dynamic.bin"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the firmware /nonexistent/fw_dynamic.bin"),
        "{stderr}"
    );
}

#[test]
fn a_kernel_that_is_not_an_image_is_a_clear_error() {
    let fw = temp_file("fw-bad", b"firmware");
    let text = temp_file("not-an-image", &[0x13u8; 4096]);
    let elf = temp_file("elf", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0 and the rest");
    for (kernel, want) in [
        (&text, "is not a RISC-V Linux Image"),
        (&elf, "is an ELF file"),
    ] {
        let out = boot(&[
            "--firmware",
            fw.to_str().unwrap(),
            "--kernel",
            kernel.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
        assert!(stderr.contains(kernel.to_str().unwrap()), "{stderr}");
    }
    for f in [fw, text, elf] {
        std::fs::remove_file(f).ok();
    }
}

#[test]
fn piped_console_input_reaches_the_shell() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["boot", "--set", "machine.model=functional", "--initrd"])
        .arg(initramfs())
        .args([
            "--append",
            "console=ttyS0 quiet",
            "--max-insns",
            "30000000000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rvnvmm boot");
    // Written at once, long before Linux opens the console: none of it
    // may be lost.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo guest says $((6*7))\nnproc\npoweroff\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{console}\n{stderr}");
    let lines: Vec<&str> = console.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"guest says 42"), "{console}");
    assert!(lines.contains(&"4"), "{console}");
    assert!(console.contains("reboot: Power down"), "{console}");
}

/// The timed machine (the default `freedom-u500` model: 50 MHz in-order
/// cores, caches, DDR3) boots too; about 40 s on the 2-core host, so only
/// with `--ignored`.
#[test]
#[ignore]
fn debian_linux_boots_on_the_timing_model() {
    let initrd = initramfs();
    let out = boot(&[
        "--initrd",
        &initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{console}\n{stderr}");
    assert_eq!(rc_lines(&console), RC_LINES, "{console}\n{stderr}");
}
