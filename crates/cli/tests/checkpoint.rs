//! `rvnvmm boot` checkpoints (`docs/checkpoints.md`): a four-hart Linux
//! boot checkpointed at the shell prompt by the guest's marker and
//! restored gives the statistics of the run through, in the functional
//! model and under the timing model against `--fast-forward`; a checkpoint
//! by instruction count does too; a restore on another memory map and a
//! damaged checkpoint are refused with a clear message. Needs
//! `scripts/setup.sh` and `make -C guest` first (`scripts/test.sh` does
//! both).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/boot_input.rs"]
mod boot_input;
#[path = "support/initramfs.rs"]
#[allow(dead_code)] // RC_LINES: these runs type their own commands.
mod initramfs;

use boot_input::boot_with_input;
use initramfs::initramfs;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a run printed and how it ended.
struct Run {
    status: Option<i32>,
    console: String,
    stderr: String,
}

/// `rvnvmm boot ARGS` with `input` on stdin.
fn boot(args: &[&str], input: &str) -> Run {
    let out = boot_with_input(args, input);
    Run {
        status: out.status.code(),
        console: String::from_utf8_lossy(&out.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh path in the temporary directory.
fn temp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rvnvmm-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

/// The statistics JSON at `path` without the host's figures (removed).
fn stats(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("statistics written");
    std::fs::remove_file(path).ok();
    let mut v: Value = serde_json::from_str(&text).expect("statistics JSON");
    let o = v.as_object_mut().unwrap();
    o.remove("host_seconds");
    o.remove("mips");
    v
}

/// The boot options of every booting run: the initramfs, a quiet kernel.
fn boot_args(initrd: &str) -> Vec<&str> {
    vec![
        "--initrd",
        initrd,
        "--append",
        "console=ttyS0 quiet",
        "--max-insns",
        "30000000000",
    ]
}

const FUNCTIONAL: [&str; 2] = ["--set", "machine.model=functional"];

/// The shell's input: a checkpoint at the prompt, then a command and the
/// end of the simulation. What follows the checkpoint marker is console
/// input not yet consumed there, which the checkpoint keeps: a restore
/// with no input runs it as the run through does.
const SCRIPT: &str = "/opt/rvnvmm/nvmm-marker checkpoint\n\
                      echo after $((6*7))\n\
                      /opt/rvnvmm/nvmm-marker exit 0\n";

#[test]
fn a_linux_checkpoint_at_the_prompt_restores_to_the_statistics_of_the_run_through() {
    let initrd = initramfs();
    let dir = temp("prompt");
    let dir_arg = dir.to_str().unwrap().to_string();
    let files: Vec<PathBuf> = ["through", "saved", "fast", "restored", "timed"]
        .iter()
        .map(|n| temp(&format!("{n}.json")))
        .collect();
    let arg = |i: usize| files[i].to_str().unwrap().to_string();
    // Three boots side by side: functional through the checkpoint marker
    // (no checkpoint written), functional writing one, and fast-forwarded
    // (the marker starts the timing model).
    let runs: Vec<Run> = std::thread::scope(|s| {
        let jobs: Vec<Vec<String>> = vec![
            [&FUNCTIONAL[..], &["--stats", &arg(0)]]
                .concat()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            [
                &FUNCTIONAL[..],
                &[
                    "--checkpoint-at",
                    "marker",
                    "--checkpoint-to",
                    &dir_arg,
                    "--stats",
                    &arg(1),
                ],
            ]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect(),
            ["--fast-forward", "marker", "--stats", &arg(2)]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        ];
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|extra| {
                let initrd = &initrd;
                s.spawn(move || {
                    let mut args = boot_args(initrd);
                    args.extend(extra.iter().map(String::as_str));
                    boot(&args, SCRIPT)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &runs {
        assert_eq!(r.status, Some(0), "{}\n{}", r.console, r.stderr);
        assert!(r.console.contains("after 42"), "{}", r.console);
    }
    assert!(
        runs[1].stderr.contains("checkpoint written to"),
        "{}",
        runs[1].stderr
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format_version"], 3);
    assert_eq!(manifest["memory_map"]["harts"], 4);
    assert_eq!(manifest["point"]["model"], "functional");
    assert_eq!(manifest["config"]["machine"]["model"], "functional");

    // (a) Restored in the functional model, with no input: the same run.
    let restored = boot(
        &[
            &FUNCTIONAL[..],
            &["--restore", &dir_arg, "--stats", &arg(3)],
        ]
        .concat(),
        "",
    );
    assert_eq!(
        restored.status,
        Some(0),
        "{}\n{}",
        restored.console,
        restored.stderr
    );
    assert!(
        restored.console.contains("after 42"),
        "{}",
        restored.console
    );
    assert!(
        !restored.console.contains("OpenSBI"),
        "{}",
        restored.console
    );
    // (b) Restored under the timing model (the machine's default): the
    // fast-forward's run.
    let timed = boot(&["--restore", &dir_arg, "--stats", &arg(4)], "");
    assert_eq!(timed.status, Some(0), "{}\n{}", timed.console, timed.stderr);

    let through = stats(&files[0]);
    assert_eq!(
        stats(&files[1]),
        through,
        "writing a checkpoint changes nothing"
    );
    assert_eq!(stats(&files[3]), through, "restore and run = run through");
    let fast = stats(&files[2]);
    let timed = stats(&files[4]);
    assert_eq!(timed, fast, "restored under timing = fast-forwarded");
    assert_eq!(timed["model_switches"][0]["to"], "timing");
    assert!(timed["caches"]["hart0.l1d"]["misses"].as_u64().unwrap() > 0);

    // Another memory map or hart count is refused, naming what differs.
    let refused = boot(&["--restore", &dir_arg, "--set", "machine.harts=2"], "");
    assert_eq!(refused.status, Some(2), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("harts: 4 in the checkpoint, 2 here"),
        "{}",
        refused.stderr
    );
    let refused = boot(
        &[
            "--restore",
            &dir_arg,
            "--set",
            "memory.dram.size=0x20000000",
        ],
        "",
    );
    assert!(
        refused.stderr.contains("memory regions") && refused.status == Some(2),
        "{}",
        refused.stderr
    );

    // A damaged or truncated checkpoint: a clear error, no panic.
    let state = dir.join("state.bin");
    let good = std::fs::read(&state).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    for (bytes, says) in [
        (&good[..good.len() / 3], "truncated"),
        (&flipped[..], "damaged"),
        (&b"junk"[..], "not an rvnvmm checkpoint"),
    ] {
        std::fs::write(&state, bytes).unwrap();
        let r = boot(&["--restore", &dir_arg], "");
        assert_eq!(r.status, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains(says), "{says}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    std::fs::write(&state, &good).unwrap();
    std::fs::write(dir.join("manifest.json"), "{").unwrap();
    let r = boot(&["--restore", &dir_arg], "");
    assert!(
        r.status == Some(2) && r.stderr.contains("manifest is not readable"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint at an instruction count (mid-boot, in the firmware or the
/// kernel) restores to the run that makes the same restore point without
/// writing one.
#[test]
fn a_checkpoint_by_instruction_count_restores_to_the_run_through() {
    let initrd = initramfs();
    let dir = temp("insns");
    let dir_arg = dir.to_str().unwrap();
    let (a, b) = (temp("insns-through.json"), temp("insns-restored.json"));
    let at = ["--checkpoint-at", "insns=200000000"];
    let limit = ["--max-insns", "300000000"];
    let mut args = boot_args(&initrd);
    args.truncate(4);
    let through = boot(
        &[
            &args[..],
            &FUNCTIONAL,
            &at,
            &limit,
            &["--stats", a.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    let saved = boot(
        &[
            &args[..],
            &FUNCTIONAL,
            &at,
            &["--checkpoint-to", dir_arg, "--exit-after-checkpoint"],
        ]
        .concat(),
        "",
    );
    assert_eq!(saved.status, Some(0), "{}", saved.stderr);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["point"]["instructions"], 200_000_000);
    assert_eq!(manifest["point"]["trigger"], "insns=200000000");
    let restored = boot(
        &[
            &FUNCTIONAL[..],
            &["--restore", dir_arg],
            &limit,
            &["--stats", b.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    // Both stop at the instruction limit, at the same place.
    assert_eq!(through.status, restored.status, "{}", restored.stderr);
    assert_eq!(stats(&b), stats(&a));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--fast-forward insns=N` is the checkpoint at instruction N taken in
/// the functional model and restored under the timing model, in one run:
/// the same statistics, the caches cold from the switch. `time=NS`
/// switches when the next hart to run has reached that time.
#[test]
fn a_fast_forward_by_instruction_count_is_a_functional_checkpoint_restored_timed() {
    let initrd = initramfs();
    let dir = temp("ff");
    let dir_arg = dir.to_str().unwrap();
    let (r, f, t) = (
        temp("ff-restored.json"),
        temp("ff-fast.json"),
        temp("ff-time.json"),
    );
    let limit = ["--max-insns", "250000000"];
    let mut args = boot_args(&initrd);
    args.truncate(4);
    let saved = boot(
        &[
            &args[..],
            &FUNCTIONAL,
            &["--checkpoint-at", "insns=200000000"],
            &["--checkpoint-to", dir_arg, "--exit-after-checkpoint"],
        ]
        .concat(),
        "",
    );
    assert_eq!(saved.status, Some(0), "{}", saved.stderr);
    let restored = boot(
        &[
            &["--restore", dir_arg][..],
            &limit,
            &["--stats", r.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    let fast = boot(
        &[
            &args[..],
            &["--fast-forward", "insns=200000000"],
            &limit,
            &["--stats", f.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    // Both stop at the instruction limit (status 124), at the same place.
    assert_eq!(restored.status, Some(124), "{}", restored.stderr);
    assert_eq!(fast.status, restored.status, "{}", fast.stderr);
    let fast = stats(&f);
    assert_eq!(
        fast,
        stats(&r),
        "fast-forward = functional checkpoint restored timed"
    );
    assert_eq!(fast["model_switches"][0]["to"], "timing");
    assert_eq!(fast["model_switches"][0]["instructions"], 200_000_000);
    assert_eq!(fast["stats_reset"]["instructions"], 200_000_000);
    // `--max-insns` stops at the end of the turn that reaches it.
    let region = fast["instructions"].as_u64().unwrap();
    assert!((50_000_000..50_100_000).contains(&region), "{region}");
    assert!(fast["caches"]["hart0.l1d"]["misses"].as_u64().unwrap() > 0);

    // By simulated time: the switch comes once a hart has reached it.
    let timed = boot(
        &[
            &args[..],
            &["--fast-forward", "time=2000000000"],
            &limit,
            &["--stats", t.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    assert_eq!(timed.status, Some(124), "{}", timed.stderr);
    let timed = stats(&t);
    let switch = &timed["model_switches"][0];
    assert_eq!(switch["to"], "timing");
    let at = switch["sim_time_ns"].as_u64().unwrap();
    assert!((2_000_000_000..2_001_000_000).contains(&at), "{switch}");

    // One point at a time.
    let refused = boot(
        &[
            &args[..],
            &["--fast-forward", "insns=10", "--checkpoint-at", "insns=20"],
        ]
        .concat(),
        "",
    );
    assert_eq!(refused.status, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("cannot be combined"),
        "{}",
        refused.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A machine with a disk (`--disk`) is checkpointed with the blocks written
/// since the boot, over its image, which is never written: a restore reads
/// them back (after the guest dropped its page cache), from the image the
/// manifest names, and gives the statistics of the run through; a changed
/// image is refused.
#[test]
fn a_checkpoint_keeps_the_disk_written_since_the_boot_over_an_unchanged_image() {
    let initrd = initramfs();
    let dir = temp("disk");
    let dir_arg = dir.to_str().unwrap();
    let image = temp("disk.img");
    let pattern = vec![b'A'; 1 << 20];
    std::fs::write(&image, &pattern).unwrap();
    let image_arg = image.to_str().unwrap();
    let (a, b) = (temp("disk-saved.json"), temp("disk-restored.json"));
    // Sector 1 written before the checkpoint; after it, with the page
    // cache dropped, sectors 1 and 2 read from the disk (upper-cased and
    // A -> B, so the shell's echo of the command does not match).
    let script = "printf written-before | dd of=/dev/vda bs=512 seek=1 conv=notrunc 2>/dev/null; sync\n\
                  /opt/rvnvmm/nvmm-marker checkpoint\n\
                  echo 3 > /proc/sys/vm/drop_caches; \
                  dd if=/dev/vda bs=512 skip=1 count=1 2>/dev/null | head -c 14 | tr a-z A-Z; echo; \
                  dd if=/dev/vda bs=512 skip=2 count=1 2>/dev/null | head -c 4 | tr A B; echo\n\
                  /opt/rvnvmm/nvmm-marker exit 0\n";
    let saved = boot(
        &[
            &boot_args(&initrd)[..],
            &FUNCTIONAL,
            &["--disk", image_arg],
            &["--checkpoint-at", "marker", "--checkpoint-to", dir_arg],
            &["--stats", a.to_str().unwrap()],
        ]
        .concat(),
        script,
    );
    assert_eq!(saved.status, Some(0), "{}\n{}", saved.console, saved.stderr);
    assert!(
        saved.console.contains("WRITTEN-BEFORE\nBBBB"),
        "{}",
        saved.console
    );
    assert!(
        saved.stderr.contains("is not written in this run"),
        "{}",
        saved.stderr
    );
    assert_eq!(
        std::fs::read(&image).unwrap(),
        pattern,
        "the image is never written"
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["disk"]["bytes"], 1 << 20);

    // Restored from the image the manifest names, with no input: the
    // commands after the marker run again and read the written sector.
    let restored = boot(
        &[
            &FUNCTIONAL[..],
            &["--restore", dir_arg, "--stats", b.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    assert_eq!(
        restored.status,
        Some(0),
        "{}\n{}",
        restored.console,
        restored.stderr
    );
    assert!(
        restored.console.contains("WRITTEN-BEFORE\nBBBB"),
        "{}",
        restored.console
    );
    assert_eq!(stats(&b), stats(&a), "restore and run = run through");
    assert_eq!(std::fs::read(&image).unwrap(), pattern);

    // The image changed since (here only its modification time): refused,
    // and so is --disk for a checkpoint without one.
    let f = std::fs::File::options().write(true).open(&image).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    drop(f);
    let r = boot(&["--restore", dir_arg], "");
    assert_eq!(r.status, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("is not the one the checkpoint was taken with"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_file(&image);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A guest reboot after a restore loads the boot files the manifest names
/// again (the run that wrote the checkpoint reboots the same way: the same
/// statistics); if one of them changed since, the reboot is a clear error.
#[test]
fn a_restored_machine_reboots_from_the_boot_files_its_checkpoint_names() {
    let initrd = temp("reboot-initrd.cpio.gz");
    std::fs::copy(initramfs(), &initrd).unwrap();
    let initrd_arg = initrd.to_str().unwrap();
    let dir = temp("reboot");
    let dir_arg = dir.to_str().unwrap();
    let (a, b) = (temp("reboot-saved.json"), temp("reboot-restored.json"));
    // The second boot's firmware and early kernel, then the limit.
    let limit = ["--max-insns", "3200000000"];
    let mut args = boot_args(initrd_arg);
    args.truncate(4);
    let saved = boot(
        &[
            &args[..],
            &FUNCTIONAL,
            &limit,
            &["--checkpoint-at", "marker", "--checkpoint-to", dir_arg],
            &["--stats", a.to_str().unwrap()],
        ]
        .concat(),
        "/opt/rvnvmm/nvmm-marker checkpoint\nreboot -f\n",
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let point = manifest["point"]["instructions"].as_u64().unwrap();
    assert!(
        point < 3_100_000_000,
        "the prompt came at {point}: raise the limit"
    );
    assert_eq!(saved.status, Some(124), "{}", saved.stderr);
    assert_eq!(saved.console.matches("OpenSBI v").count(), 2, "rebooted");
    assert_eq!(manifest["boot"]["append"], "console=ttyS0 quiet");

    let restored = boot(
        &[
            &FUNCTIONAL[..],
            &limit,
            &["--restore", dir_arg, "--stats", b.to_str().unwrap()],
        ]
        .concat(),
        "",
    );
    assert_eq!(restored.status, Some(124), "{}", restored.stderr);
    assert_eq!(restored.console.matches("OpenSBI v").count(), 1, "rebooted");
    assert_eq!(stats(&b), stats(&a), "restore and run = run through");

    // The initramfs changed since: the reboot says so.
    let f = std::fs::File::options().write(true).open(&initrd).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    drop(f);
    let r = boot(
        &[&FUNCTIONAL[..], &limit, &["--restore", dir_arg]].concat(),
        "",
    );
    assert_eq!(r.status, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("but the initramfs")
            && r.stderr
                .contains("is not the one the machine was booted from"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_file(&initrd);
    let _ = std::fs::remove_dir_all(&dir);
}
