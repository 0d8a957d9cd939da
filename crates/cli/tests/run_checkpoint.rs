//! `rvnvmm run` checkpoints (docs/checkpoints.md, "User mode"): a process
//! with threads blocked on a condition variable, files open for reading and
//! writing, a file mapping, a pipe holding bytes and a pending signal
//! (`guest/emu/checkpoint_state.c`), checkpointed at its marker and
//! restored, has the statistics and output of the run through it, in the
//! functional model and under the timing model against `--fast-forward`; a
//! checkpoint by instruction count does too; a restore on another machine,
//! a damaged checkpoint and a changed open file are refused with a clear
//! message. `scripts/checkpoint_identity.py` checks the whole workload
//! suite. Needs `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory in the temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rvnvmm-runck-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn state_program() -> PathBuf {
    artefacts::guest_program(&artefacts::guest_build().join("emu"), "checkpoint_state")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn stream_program() -> PathBuf {
    artefacts::guest_program(&artefacts::guest_build().join("workloads/bin"), "stream")
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `rvnvmm run ARGS` in `cwd` with a fixed environment, its statistics
/// (less the host's figures) read from `cwd/stats.json`, if written.
fn run(cwd: &Path, args: &[&str]) -> (Output, Option<Value>) {
    let stats = cwd.join("stats.json");
    let _ = std::fs::remove_file(&stats);
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .arg("run")
        .arg("--no-progress")
        .arg("--stats")
        .arg(&stats)
        .args(args)
        .output()
        .unwrap();
    let v = std::fs::read_to_string(&stats).ok().map(|t| {
        let mut v: Value = serde_json::from_str(&t).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("host_seconds");
        o.remove("mips");
        // What the command line started: the run through's, or the
        // checkpoint's (another argument, a directory of its own).
        o.remove("guest");
        v
    });
    (o, v)
}

fn ok(what: &str, o: &Output) {
    assert!(
        o.status.success(),
        "{what}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The checkpoint_state command: two harts, its files in `dir` (each run's
/// directory named alike, so the runs start alike).
fn state_args<'a>(extra: &[&'a str], program: &'a str, dir: &'a str) -> Vec<&'a str> {
    let mut v = vec!["--harts", "2"];
    v.extend_from_slice(extra);
    v.extend([program, dir]);
    v
}

const FUNCTIONAL: [&str; 2] = ["--set", "machine.model=functional"];

#[test]
fn a_process_checkpointed_at_its_marker_restores_to_the_run_through() {
    let program = state_program();
    let program = program.to_str().unwrap();
    let cwd = temp_dir("state");
    for d in ["a", "b", "c", "d"] {
        std::fs::create_dir(cwd.join(d)).unwrap();
    }
    let ck = cwd.join("ck");
    let ck = ck.to_str().unwrap();
    let at = ["--checkpoint-at", "marker"];

    // Functional: the run through, the run writing the checkpoint, the restore.
    let mut opts = FUNCTIONAL.to_vec();
    opts.extend(at);
    let (o, through) = run(&cwd, &state_args(&opts, program, "a"));
    ok("run through", &o);
    let out_through = o.stdout;
    let mut w = opts.clone();
    w.extend(["--checkpoint-to", ck, "--exit-after-checkpoint"]);
    let (o, written) = run(&cwd, &state_args(&w, program, "b"));
    ok("writing", &o);
    assert!(
        stderr(&o).contains("checkpoint written to"),
        "{}",
        stderr(&o)
    );
    assert_eq!(written.unwrap()["exit"]["checkpoint"], true);
    let out_written = o.stdout;
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(cwd.join("ck/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["kind"], "run");
    assert_eq!(manifest["point"]["trigger"], "marker");
    assert_eq!(manifest["point"]["model"], "functional");
    assert_eq!(manifest["memory_map"]["harts"], 2);
    // The files as the writer left them, for the second restore.
    let files: Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> = ["in.dat", "out.dat"]
        .iter()
        .map(|n| {
            let p = cwd.join("b").join(n);
            let m = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p.clone(), std::fs::read(&p).unwrap(), m)
        })
        .collect();
    let mut r = vec!["--harts", "2"];
    r.extend(FUNCTIONAL);
    r.extend(["--restore", ck]);
    let (o, restored) = run(&cwd, &r);
    ok("functional restore", &o);
    assert_eq!(
        restored, through,
        "functional: restore-and-run = run-through"
    );
    assert_eq!(
        [out_written.clone(), o.stdout].concat(),
        out_through,
        "the output after the point is the run through's"
    );
    let text = String::from_utf8_lossy(&out_through);
    for line in ["pipe 1", "same 1", "cloexec 1", "handled 12", "umask 027"] {
        assert!(text.contains(line), "{line} in {text}");
    }

    // A file the process has open has changed (the restore wrote to it):
    // refused, naming it.
    let (o, _) = run(&cwd, &r);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot restore the checkpoint")
            && stderr(&o).contains("out.dat")
            && stderr(&o).contains("changed"),
        "{}",
        stderr(&o)
    );
    for (p, bytes, mtime) in &files {
        std::fs::write(p, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(*mtime)
            .unwrap();
    }

    // Timing: the functional checkpoint restored under the timing model,
    // against `--fast-forward marker` through the same marker.
    let (o, timed_through) = run(
        &cwd,
        &state_args(&["--fast-forward", "marker"], program, "c"),
    );
    ok("fast-forward run", &o);
    let (o, timed_restored) = run(&cwd, &["--harts", "2", "--restore", ck]);
    ok("timing restore", &o);
    let (tt, tr) = (timed_through.unwrap(), timed_restored.unwrap());
    assert_eq!(tr["model_switches"][0]["to"], "timing");
    assert!(tr["caches"].is_object(), "the timing model ran");
    assert_eq!(tr, tt, "timing: restore-and-run = fast-forward through");
    assert_eq!([out_written, o.stdout].concat(), {
        let (o, _) = run(
            &cwd,
            &state_args(&["--fast-forward", "marker"], program, "d"),
        );
        o.stdout
    });
    std::fs::remove_dir_all(&cwd).ok();
}

#[test]
fn a_checkpoint_by_instruction_count_restores_to_the_run_through_and_bad_ones_are_refused() {
    let program = stream_program();
    let program = program.to_str().unwrap();
    let cwd = temp_dir("stream");
    let ck = cwd.join("ck");
    let ck = ck.to_str().unwrap();
    let through_args = ["--checkpoint-at", "insns=1000000", program, "32768", "2"];
    let (o, through) = run(&cwd, &through_args);
    ok("run through", &o);
    let mut w = vec!["--checkpoint-to", ck];
    w.extend(through_args);
    let (o, written) = run(&cwd, &w);
    ok("writing, going on", &o);
    assert_eq!(written, through, "writing a checkpoint changes nothing");
    let (o, restored) = run(&cwd, &["--restore", ck]);
    ok("restore", &o);
    assert_eq!(restored, through, "timing: restore-and-run = run-through");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(cwd.join("ck/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["point"]["instructions"], 1_000_000);
    assert_eq!(manifest["point"]["trigger"], "insns=1000000");

    // Another machine: refused, naming what differs.
    for (set, what) in [
        ("machine.harts=2", "harts"),
        ("memory.dram.size=0x20000000", "dram"),
    ] {
        let (o, _) = run(&cwd, &["--set", set, "--restore", ck]);
        assert_eq!(o.status.code(), Some(2), "{set}");
        assert!(
            stderr(&o).contains("cannot be restored on this machine") && stderr(&o).contains(what),
            "{set}: {}",
            stderr(&o)
        );
    }
    // A boot checkpoint is not a run's, nor the reverse.
    let (o, _) = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["boot", "--restore", ck])
        .output()
        .map(|o| (o, ()))
        .unwrap();
    assert!(
        stderr(&o).contains("not of `rvnvmm boot`"),
        "{}",
        stderr(&o)
    );

    // Damaged and truncated: a clear error, no panic.
    let state = cwd.join("ck/state.bin");
    let good = std::fs::read(&state).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    for (bytes, want) in [
        (&good[..good.len() / 3], "truncated"),
        (&flipped[..], "damaged"),
    ] {
        std::fs::write(&state, bytes).unwrap();
        let (o, _) = run(&cwd, &["--restore", ck]);
        assert!(
            o.status.code() == Some(2) && stderr(&o).contains(want),
            "{want}: {}",
            stderr(&o)
        );
    }
    std::fs::write(&state, &good).unwrap();
    std::fs::write(cwd.join("ck/manifest.json"), "{").unwrap();
    let broken_manifest = ck;
    let (o, _) = run(&cwd, &["--restore", broken_manifest]);
    assert!(
        o.status.code() == Some(2) && stderr(&o).contains("manifest is not readable"),
        "{}",
        stderr(&o)
    );

    // What a checkpoint cannot hold is refused, named: child processes
    // (guest processes are host processes).
    let fork = artefacts::guest_program(&artefacts::guest_build().join("static"), "fork_pipe")
        .unwrap_or_else(|e| panic!("{e}"));
    let (o, _) = run(
        &cwd,
        &[
            "--checkpoint-at",
            "insns=100000",
            "--checkpoint-to",
            ck,
            fork.to_str().unwrap(),
        ],
    );
    assert!(
        o.status.code() == Some(2)
            && stderr(&o).contains("cannot checkpoint a process with child processes"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&cwd).ok();
}
