//! `rvnvmm crashtest --explore` (docs/persistence.md): on the undo log of
//! `guest/emu/undo_log.c`, the correct transaction passes every crash
//! state under ADR and eADR; each seeded bug (a missing flush, a missing
//! fence, a flag flushed with its data in one fence window, a commit flag
//! written before its data) fails, named by the source line of the store
//! behind it; the early flag, which a cache must write back early to show,
//! is missed by the random `crashtest` at 400 points (1000 in
//! docs/persistence.md); and the lint names the store a missing flush
//! leaves without a recovery program. Needs `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;

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
        // The flag stored before the log's contents.
        (
            "flag-early",
            vec![format!(
                "store at {}",
                at(line_of("p->valid.v = seq + 1;", 1))
            )],
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
}
