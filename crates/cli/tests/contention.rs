//! Harts contending for one line (`guest/src/contended.c`): the increments
//! of a shared counter interleave in simulated-time order, so the line
//! moves between the L1Ds on nearly every contended increment and the
//! contended run costs what those transfers cost. Needs `make -C guest`.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_view.rs"]
mod guest_view;

use std::process::Command;

/// What one run of the counter program reports.
#[derive(Debug, PartialEq)]
struct Run {
    sim_ns: u64,
    invalidations: u64,
    /// The whole statistics, less host time and MIPS.
    stats: serde_json::Value,
}

fn run(config: &str, mode: &str, threads: u32, increments: u32) -> Run {
    let prog = artefacts::guest_program(&artefacts::guest_build().join("static"), "contended")
        .unwrap_or_else(|e| panic!("{e}"));
    let stats = std::env::temp_dir().join(format!(
        "rvnvmm-contention-{}-{config}-{mode}-{threads}-{increments}.json",
        std::process::id()
    ));
    let build = artefacts::guest_build();
    let out = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(["run", "--config", config, "--set", "machine.model=timing"])
        .args(guest_view::options(
            &build,
            &std::env::temp_dir(),
            &["PATH=/usr/bin:/bin", "LC_ALL=C"],
        ))
        .args(["--harts", "2", "--stats"])
        .arg(&stats)
        .arg(guest_view::guest_path(&build, &prog))
        .args([mode, &threads.to_string(), &increments.to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{mode} x{threads}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = threads * increments;
    assert!(
        stdout.contains(&format!("counter {total} (expected {total})")),
        "{stdout}"
    );
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_file(&stats);
    let invalidations = v["caches"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| name.ends_with(".l1d"))
        .map(|(_, c)| c["invalidations"].as_u64().unwrap())
        .sum();
    let sim_ns = v["sim_time_ns"].as_u64().unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("host_seconds");
    o.remove("mips");
    Run {
        sim_ns,
        invalidations,
        stats: v,
    }
}

/// Two harts, 2 x 2000 increments against one hart doing 4000: the line
/// moves on at least every other contended increment (before, a hart ran a
/// whole slice of L1 hits ahead: a few dozen invalidations in all), and on
/// zc706, whose core is fast beside a cache-to-cache transfer, the
/// contended run takes longer than one hart doing every increment alone.
#[test]
fn contended_increments_move_the_line_between_the_harts() {
    for mode in ["amo", "lrsc", "lock"] {
        let alone = run("zc706", mode, 1, 4000);
        let both = run("zc706", mode, 2, 2000);
        assert!(
            both.invalidations >= 2000,
            "{mode}: {} invalidations for 4000 contended increments",
            both.invalidations
        );
        assert!(
            alone.invalidations < 100,
            "{mode}: nothing contends with one thread, yet {} invalidations",
            alone.invalidations
        );
        assert!(
            both.sim_ns > alone.sim_ns,
            "{mode}: two contending harts took {} ns, one alone {} ns",
            both.sim_ns,
            alone.sim_ns
        );
        // The counters say where the time went: the line came from the
        // other L1D's Modified copy, and the atomics waited for it.
        let coherence = &both.stats["coherence"];
        assert!(
            coherence["cache_to_cache"].as_u64().unwrap() >= 2000,
            "{mode}: {coherence}"
        );
        let threads = both.stats["threads"].as_array().unwrap();
        let sum = |key: &str| -> u64 {
            threads
                .iter()
                .map(|t| t["atomics"][key].as_u64().unwrap())
                .sum()
        };
        match mode {
            "amo" => assert!(sum("amos") >= 4000, "{threads:?}"),
            "lrsc" => assert!(sum("sc") - sum("sc_failures") >= 4000, "{threads:?}"),
            _ => {}
        }
        if mode != "lock" {
            assert!(sum("stall_cycles") > 0, "{mode}: {threads:?}");
        }
    }
}

#[test]
fn contended_runs_are_deterministic() {
    let a = run("freedom-u500", "lrsc", 2, 500);
    let b = run("freedom-u500", "lrsc", 2, 500);
    assert_eq!(a, b);
}
