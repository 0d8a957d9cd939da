//! `rvnvmm crashtest --explore` (docs/persistence.md): on the undo log of
//! `guest/emu/undo_log.c`, the correct transaction passes every crash
//! state under ADR and eADR; each seeded bug (a missing flush, a missing
//! fence, a flag flushed with its data in one fence window, a commit flag
//! written before its data) fails, named by the source line of the store
//! behind it; the early flag, which a cache must write back early to show,
//! is missed by the random `crashtest` at 400 points (1000 in
//! docs/persistence.md); and the lint names the store a missing flush
//! leaves without a recovery program. A multi-threaded program's trace
//! keeps each thread's stores, flushes and calls, and replays completely.
//! In the full system, the same
//! program on a disk of a Linux booted and checkpointed at its shell: the
//! correct log passes, the missing flush is found by its line. Needs
//! `scripts/setup.sh` and `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/boot_input.rs"]
mod boot_input;
#[path = "support/host_tool.rs"]
mod host_tool;
#[path = "support/initramfs.rs"]
#[allow(dead_code)] // RC_LINES: this boot types its own commands.
mod initramfs;

use host_tool::host_tool;
use std::path::PathBuf;
use std::process::{Command, Output};

fn undo_log() -> PathBuf {
    let p = artefacts::repo_root().join("guest/build/emu/undo_log");
    assert!(
        p.is_file(),
        "{} is not built: run `make -C guest`",
        p.display()
    );
    p
}

/// The line of undo_log.c holding `text` (the `nth` such line, from 1).
fn line_of(text: &str, nth: usize) -> usize {
    let src = std::fs::read_to_string(artefacts::repo_root().join("guest/emu/undo_log.c")).unwrap();
    src.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .nth(nth - 1)
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no {nth}th line with {text:?} in undo_log.c"))
}

fn explore(persistence: &str, variant: &str, extra: &[&str]) -> Output {
    let u = undo_log();
    let mut c = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    c.env_clear().env("LC_ALL", "C");
    c.args([
        "crashtest",
        "--explore",
        "--jobs",
        "2",
        "--persistence",
        persistence,
    ])
    .args(extra)
    .arg("--recover")
    .arg(format!("{} check", u.display()))
    .arg("--")
    .arg(&u)
    .args(["run", "10", variant]);
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

/// (passed, failed) from the summary line.
fn summary(o: &Output) -> (usize, usize) {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.contains("distinct images checked"))
        .unwrap_or_else(|| panic!("no summary:\n{}", text(o)));
    let num = |w: &str| -> usize {
        let before = line.split(w).next().unwrap();
        before.split_whitespace().last().unwrap().parse().unwrap()
    };
    (num(" passed"), num(" failed"))
}

#[test]
fn the_correct_log_passes_every_crash_state() {
    for persistence in ["adr", "eadr"] {
        let o = explore(persistence, "correct", &[]);
        let (passed, failed) = summary(&o);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(failed, 0, "{}", text(&o));
        assert!(passed > 100, "{}", text(&o));
    }
    // With every value since the last persist, and torn lines.
    let o = explore("adr", "correct", &["--reorder", "--torn", "8"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn each_seeded_bug_is_found_at_the_store_behind_it() {
    let at = |line: usize| format!("undo_log.c:{line} (transaction)");
    let cases = [
        // The last slot's store, never flushed.
        (
            "no-flush",
            vec![format!(
                "store at {} (NVMM offset 0x200) not yet flushed",
                at(line_of("p->slot[i].v = value(seq + 1)", 1))
            )],
        ),
        // The flag and the log's contents in one fence window.
        (
            "no-fence",
            vec![format!(
                "store at {}",
                at(line_of("p->valid.v = seq + 1;", 2))
            )],
        ),
        // The commit may persist before seq, flushed in the same window.
        (
            "missing-fence",
            vec![
                format!(
                    "store at {} (NVMM offset 0x2c0) may persist before store at {}",
                    at(line_of("p->valid.v = 0;", 1)),
                    at(line_of("p->root_seq.v = seq + 1;", 1))
                ),
                "in the same fence window".into(),
            ],
        ),
        // The flag stored before the log's contents; the fence, inside
        // libnvmm, named by the program's call of it.
        (
            "flag-early",
            vec![
                format!("store at {}", at(line_of("p->valid.v = seq + 1;", 1))),
                format!(
                    "(nvmm_flush.part.0) called from {}",
                    at(line_of("nvmm_persist(&p->log, sizeof p->log);", 1))
                ),
            ],
        ),
    ];
    for (variant, wants) in cases {
        let o = explore("adr", variant, &[]);
        let (_, failed) = summary(&o);
        assert_eq!(o.status.code(), Some(1), "{variant}: {}", text(&o));
        assert!(failed > 0, "{variant}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        for want in wants {
            assert!(
                out.contains(&want),
                "{variant}: no {want:?} in\n{}",
                text(&o)
            );
        }
    }
    // Under eADR only the early flag is a bug (stores persist in order).
    for (variant, fails) in [
        ("no-flush", false),
        ("no-fence", false),
        ("flag-early", true),
    ] {
        let o = explore("eadr", variant, &[]);
        assert_eq!(
            summary(&o).1 > 0,
            fails,
            "{variant} under eADR: {}",
            text(&o)
        );
    }
}

#[test]
fn the_random_crashtest_misses_the_early_flag() {
    let u = undo_log();
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .env_clear()
        .env("LC_ALL", "C")
        .args(["crashtest", "--points", "400", "--jobs", "2", "--recover"])
        .arg(format!("{} check", u.display()))
        .arg("--")
        .arg(&u)
        .args(["run", "10", "flag-early"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("400 passed, 0 failed"),
        "{}",
        text(&o)
    );
    let o = explore("adr", "flag-early", &[]);
    assert!(summary(&o).1 > 0, "{}", text(&o));
}

#[test]
fn without_a_recovery_program_the_lint_names_the_unflushed_store() {
    let u = undo_log();
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .env_clear()
        .env("LC_ALL", "C")
        .args(["crashtest", "--explore", "--"])
        .arg(&u)
        .args(["run", "3", "no-flush"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let want = format!(
        "lint: store at undo_log.c:{} (transaction) never made durable before the program's end",
        line_of("p->slot[i].v = value(seq + 1)", 1)
    );
    assert!(out.contains(&want), "{}", text(&o));
    assert!(out.contains("no --recover: not checked"), "{}", text(&o));
}

#[test]
fn the_report_is_the_same_from_run_to_run() {
    let a = explore("adr", "no-fence", &[]);
    let b = explore("adr", "no-fence", &[]);
    assert_eq!(a.stdout, b.stdout, "{}\n{}", text(&a), text(&b));
}

#[test]
fn bad_options_are_refused_clearly() {
    let o = explore("adr", "correct", &["--torn", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("power of two"),
        "{}",
        text(&o)
    );
    // A full-system exploration needs a checkpoint; names need it too.
    let o = explore("adr", "correct", &["--restore", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a checkpoint"),
        "{}",
        text(&o)
    );
    let o = explore("adr", "correct", &["--symbols", "/bin/true"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn in_the_full_system_the_log_is_explored_from_a_checkpoint_at_the_shell() {
    let dir = std::env::temp_dir().join(format!("rvnvmm-explore-fs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::copy(undo_log(), files.join("undo_log")).unwrap();
    // The program reaches the guest on a disk the host makes.
    let disk = dir.join("disk.img");
    let out = Command::new(host_tool("mkfs.ext4"))
        .args(["-q", "-F", "-d"])
        .arg(&files)
        .arg(&disk)
        .arg("16M")
        .output()
        .expect("run mkfs.ext4 (e2fsprogs: scripts/setup.sh installs it)");
    assert!(out.status.success(), "{out:?}");
    let checkpoint = dir.join("checkpoint");
    let initrd = initramfs::initramfs();
    let boot = boot_input::boot_with_input(
        &[
            "--set",
            "machine.model=functional",
            "--initrd",
            &initrd,
            "--append",
            "console=ttyS0 quiet",
            "--disk",
            disk.to_str().unwrap(),
            "--checkpoint-at",
            "marker",
            "--checkpoint-to",
            checkpoint.to_str().unwrap(),
            "--exit-after-checkpoint",
            "--max-insns",
            "20000000000",
        ],
        "for m in $(cat /lib/modules/root-order); do insmod /lib/modules/$m; done\n\
         mkdir -p /d && mount -t ext4 -o ro /dev/vda /d\n\
         /opt/rvnvmm/nvmm-marker checkpoint\n",
    );
    assert!(boot.status.success(), "{}", text(&boot));
    let explore = |variant: &str| {
        Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
            .env_clear()
            .env("LC_ALL", "C")
            .args(["crashtest", "--explore", "--jobs", "2", "--restore"])
            .arg(&checkpoint)
            .args(["--set", "machine.model=functional", "--symbols"])
            .arg(undo_log())
            .args(["--recover", "/d/undo_log check", "--"])
            .args(["/d/undo_log", "run", "1", variant])
            .output()
            .unwrap()
    };
    let o = explore("correct");
    assert!(o.status.success(), "{}", text(&o));
    let (passed, failed) = summary(&o);
    assert!(passed > 5 && failed == 0, "{}", text(&o));

    let o = explore("no-flush");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let culprit = format!(
        "store at undo_log.c:{} (transaction)",
        line_of("p->slot[i].v = value(seq + 1);", 1)
    );
    assert!(
        out.lines()
            .any(|l| l.contains(&culprit) && l.contains("not yet flushed")),
        "{}",
        text(&o)
    );
    assert!(
        out.contains(&format!("lint: {culprit} never made durable")),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_multi_threaded_program_is_traced_per_hart_and_replays_completely() {
    let smt = artefacts::repo_root().join("guest/build/emu/smt_tasks");
    let dir = std::env::temp_dir().join(format!("rvnvmm-explore-mt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.bin");
    // Two IO threads persisting into their own NVMM buffers, on four harts.
    let args = ["idiv", "256", "pm", "0:1,2:3", "1"];
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--set", "machine.harts=4", "--persist-trace"])
        .arg(&trace)
        .arg("--")
        .arg(&smt)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let t = rvnvmm_explore::file::read(&trace).unwrap();
    use rvnvmm_mem::persist_trace::TraceKind;
    let harts = |kind: TraceKind| {
        let mut h: Vec<u32> = t
            .records
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.hart)
            .collect();
        h.sort();
        h.dedup();
        h
    };
    // The IO tasks run on harts 0 and 2: each stores and flushes (every
    // thread fences, to synchronise as well).
    for kind in [TraceKind::Store, TraceKind::Flush] {
        assert_eq!(harts(kind), [0, 2], "{kind:?}");
    }
    assert!(harts(TraceKind::Fence).starts_with(&[0, 1, 2]));
    // Each record names its thread's calls: the flushes come from libnvmm
    // called by the program.
    assert!(t
        .records
        .iter()
        .filter(|r| r.kind == TraceKind::Flush)
        .all(|r| !t.calls_of(r).is_empty()));
    // The replay of the interleaved records gives the image the run left,
    // and every flush is of a written line.
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["crashtest", "--explore", "--set", "machine.harts=4", "--"])
        .arg(&smt)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("lint: nothing to report"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
