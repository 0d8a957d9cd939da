//! NVMM that outlives a run (docs/persistence.md): the image a run leaves
//! is what the next one reads, a run killed at any moment leaves a valid
//! image, `--crash-at` keeps only what reached the persistence domain, and
//! `rvnvmm crashtest` passes a correct undo log and catches the same log
//! with a flush or a fence left out. Needs `make -C guest` first
//! (`guest/build/emu/undo_log`, linked with libnvmm).

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::path::{Path, PathBuf};
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

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rvnvmm-crashtest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rvnvmm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    c.env_clear().env("LC_ALL", "C");
    c
}

fn image_set(img: &Path) -> String {
    format!("memory.nvmm.image={}", img.display())
}

/// `rvnvmm run` of undo_log with `args` on image `img`.
fn run(img: &Path, opts: &[&str], args: &[&str]) -> Output {
    rvnvmm()
        .arg("run")
        .arg("--set")
        .arg(image_set(img))
        .args(opts)
        .arg(undo_log())
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_second_run_reads_what_the_first_wrote() {
    let d = tempdir("second");
    let img = d.join("nvmm.img");
    let o = run(&img, &[], &["run", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("seq 3"),
        "{}",
        text(&o)
    );
    // Sparse: a 3 GiB region, a few pages of data.
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(&img).unwrap();
    assert_eq!(m.len(), 3 << 30);
    assert!(m.blocks() * 512 <= 1 << 20, "{} blocks", m.blocks());
    let o = run(&img, &[], &["run", "2"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("seq 5"),
        "{}",
        text(&o)
    );
    let o = run(&img, &[], &["check"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("consistent at seq 5"));
    // An image of another size is refused with a clear message.
    std::fs::write(d.join("small.img"), [0u8; 4096]).unwrap();
    let o = run(&d.join("small.img"), &[], &["check"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds 4096 bytes"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// SIGKILL at a spread of moments (before, during and after the save at
/// the end) leaves an image holding either the state before the run or
/// after it, never anything else.
#[test]
fn a_killed_run_leaves_a_valid_image() {
    let d = tempdir("kill");
    let img = d.join("nvmm.img");
    let o = run(&img, &[], &["run", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let n = 2000;
    // How long a run takes here.
    let t = std::time::Instant::now();
    let o = run(&img, &[], &["run", &n.to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let full = t.elapsed();
    let mut seq = 1 + n;
    let mut outcomes = std::collections::BTreeSet::new();
    // Kills at 0, 1/6, 2/6, ... of the measured time; on a loaded host a
    // run may take longer than measured, so go on past it (up to 4 times)
    // until a kill came too late, i.e. the run had finished.
    for i in 0..24u32 {
        let mut child = rvnvmm()
            .arg("run")
            .arg("--set")
            .arg(image_set(&img))
            .arg(undo_log())
            .args(["run", &n.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full * i / 6);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let o = run(&img, &[], &["check"]);
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let after = if out.contains(&format!("consistent at seq {seq}\n")) {
            false
        } else if out.contains(&format!("consistent at seq {}\n", seq + n)) {
            true
        } else {
            panic!("kill {i} ({status}): neither {seq} nor {}: {out}", seq + n)
        };
        outcomes.insert(after);
        if after {
            seq += n;
        }
        if i >= 7 && outcomes.len() == 2 {
            break;
        }
    }
    // Both ends were seen: killed before the save and finished.
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    // No temporary copy outlives the next run.
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn crash_at_keeps_only_the_persistence_domain() {
    let d = tempdir("crash");
    // The no-flush variant never flushes slot 7: crashed after its third
    // commit, ADR has lost it; eADR has not. On the functional model (no
    // caches: nothing reaches the domain but by a flush), so that no
    // eviction, which the program's layout decides, writes the slot back.
    for (persistence, consistent) in [("adr", false), ("eadr", true)] {
        let img = d.join(format!("{persistence}.img"));
        let stats = d.join(format!("{persistence}.json"));
        let len: u64 = {
            let o = run(
                &img,
                &[
                    "--set",
                    "machine.model=functional",
                    "--stats",
                    stats.to_str().unwrap(),
                ],
                &["run", "3", "no-flush"],
            );
            assert!(o.status.success());
            std::fs::remove_file(&img).unwrap();
            let j: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
            j["instructions"].as_u64().unwrap()
        };
        let set = format!("memory.nvmm.persistence={persistence}");
        let at = format!("insns={}", len - 100);
        let o = run(
            &img,
            &[
                "--set",
                "machine.model=functional",
                "--set",
                &set,
                "--crash-at",
                &at,
                "--stats",
                stats.to_str().unwrap(),
            ],
            &["run", "3", "no-flush"],
        );
        assert_eq!(o.status.code(), Some(125), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "power failure injected after {} instructions",
                len - 100
            )),
            "{err}"
        );
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(j["exit"]["crash"], true);
        assert_eq!(j["crash"]["instructions"], len - 100);
        let lost = j["crash"]["lost_lines"].as_array().unwrap().len();
        assert_eq!(lost == 0, consistent, "{persistence}: {}", j["crash"]);
        let o = run(&img, &[], &["check"]);
        assert_eq!(
            o.status.success(),
            consistent,
            "{persistence}: {}",
            text(&o)
        );
    }
    // A crash in simulated time.
    let img = d.join("time.img");
    let o = run(&img, &["--crash-at", "time=100000"], &["run", "3"]);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("power failure injected"));
    let _ = std::fs::remove_dir_all(&d);
}

/// The report names the programs by their guest paths and the guests see
/// the same world, so it is the same wherever the programs lie on the host
/// (the crash points are instruction counts: a guest that saw the host's
/// paths on its stack would crash elsewhere).
#[test]
fn crashtest_reports_the_same_wherever_the_program_lies() {
    let base = std::env::temp_dir().join(format!("rvnvmm-crashtest-dirs-{}", std::process::id()));
    let mut reports = Vec::new();
    for deep in ["a", "a-longer-name/and/more/levels/below/it"] {
        let dir = base.join(deep);
        std::fs::create_dir_all(&dir).unwrap();
        let prog = dir.join("undo_log");
        std::fs::copy(undo_log(), &prog).unwrap();
        let o = rvnvmm()
            .args(["crashtest", "--points", "20", "--seed", "3", "--jobs", "2"])
            .args(["--persistence", "adr", "--recover"])
            .arg(format!("{} check", prog.display()))
            .arg("--")
            .arg(&prog)
            .args(["run", "10", "no-fence"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            out.starts_with("crashtest: /crashtest/bin/undo_log run 10 no-fence: "),
            "{out}"
        );
        reports.push(out);
    }
    assert_eq!(reports[0], reports[1]);
    let _ = std::fs::remove_dir_all(&base);
}

fn crashtest(persistence: &str, variant: &str) -> Output {
    let prog = undo_log();
    rvnvmm()
        .args(["crashtest", "--points", "50", "--seed", "1", "--jobs", "2"])
        .args(["--persistence", persistence])
        .arg("--recover")
        .arg(format!("{} check", prog.display()))
        .arg("--")
        .arg(&prog)
        .args(["run", "10", variant])
        .output()
        .unwrap()
}

fn summary(o: &Output) -> (usize, usize) {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().next().unwrap_or("");
    let num = |word: &str| -> usize {
        let i = line
            .find(&format!(" {word}"))
            .unwrap_or_else(|| panic!("{line}"));
        line[..i].rsplit(' ').next().unwrap().parse().unwrap()
    };
    (num("passed"), num("failed"))
}

#[test]
fn crashtest_passes_the_correct_log_and_catches_the_broken_ones() {
    let o = crashtest("adr", "correct");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(summary(&o), (50, 0), "{}", text(&o));

    let o = crashtest("adr", "no-flush");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (_, failed) = summary(&o);
    assert!(failed > 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("FAIL at") && out.contains("lost lines 0x"),
        "{out}"
    );
    // Reproducible from the seed.
    assert_eq!(crashtest("adr", "no-flush").stdout, o.stdout);

    let o = crashtest("eadr", "no-flush");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let o = crashtest("adr", "no-fence");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("corrupt log"),
        "{}",
        text(&o)
    );
}
