//! Seed 002 §4.2 on `smt-pm` (`guest/emu/smt_tasks`,
//! `experiments/seed002_smt.py`): the orderings the model gives for the
//! divide task beside an IO task on persistent memory, and the per-thread
//! statistics that make them. Needs `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_view.rs"]
mod guest_view;

use std::process::Command;

struct Run {
    cpu_ns: f64,
    io_mbps: f64,
    /// Per thread after main: (issue wait + unit wait, memory stall) cycles.
    threads: Vec<(u64, u64)>,
}

fn run(threads_per_core: u32, placement: &str) -> Run {
    let dir = std::env::temp_dir().join(format!(
        "rvnvmm-smt-study-{}-{threads_per_core}-{}",
        std::process::id(),
        placement.replace([',', ':'], "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args([
            "run",
            "--config",
            "smt-pm",
            "--set",
            "machine.cores=2",
            "--set",
            &format!("machine.threads_per_core={threads_per_core}"),
            "--set",
            "user.time_slice_ns=100000",
        ])
        .args(guest_view::options(
            &artefacts::guest_build(),
            &dir,
            &["PATH=/usr/bin:/bin", "LC_ALL=C"],
        ))
        .arg("--stats")
        .arg(&stats)
        .arg(format!("{}/emu/smt_tasks", guest_view::GUEST_BUILD))
        .args(["idiv", "40000", "pm", placement, "16"])
        .current_dir(&dir)
        .output()
        .expect("run rvnvmm");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{} (run make -C guest)",
        String::from_utf8_lossy(&o.stderr)
    );
    let value = |key: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .trim()
            .parse()
            .unwrap()
    };
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let field = |t: &serde_json::Value, k: &str| t[k].as_u64().unwrap();
    Run {
        cpu_ns: value("cpu_time_ns "),
        io_mbps: value("io_throughput_mbps "),
        threads: v["threads"].as_array().unwrap()[1..]
            .iter()
            .map(|t| {
                (
                    field(t, "issue_wait_cycles") + field(t, "unit_wait_cycles"),
                    field(t, "memory_stall_cycles"),
                )
            })
            .collect(),
    }
}

#[test]
fn the_divide_task_beside_persistent_memory_writes_orders_the_settings() {
    // Threads after main: IO, CPU of the first pair, then of the second.
    let cross = run(2, "0:1,2:3");
    let parallel = run(2, "0:2,1:3");
    let nosmt = run(1, "0:1");
    let shared = run(1, "0:0,1:1");
    // smt-cross: the CPU task has its core's divider to itself, since its
    // sibling waits on persistent memory; smt-parallel: the two CPU tasks
    // share one divider.
    for (wait, _) in [cross.threads[1], cross.threads[3]] {
        assert!(
            wait * 20 < parallel.threads[1].0,
            "cross {wait}, parallel {:?}",
            parallel.threads
        );
    }
    assert!(
        parallel.cpu_ns > 1.5 * cross.cpu_ns,
        "{} {}",
        parallel.cpu_ns,
        cross.cpu_ns
    );
    // The IO threads spend most of their time on persistent memory.
    for (_, stall) in [cross.threads[0], cross.threads[2]] {
        assert!(stall as f64 > 0.5 * cross.cpu_ns * 2.1, "{stall}");
    }
    // nosmt: the CPU task alone on a core is as fast as in smt-cross; one IO
    // task moves about half what smt-cross's two move. Two tasks time-shared
    // on a hart take about twice as long.
    assert!((nosmt.cpu_ns / cross.cpu_ns - 1.0).abs() < 0.05);
    let io = nosmt.io_mbps / cross.io_mbps;
    assert!((0.4..0.65).contains(&io), "nosmt IO {io}");
    assert!(
        shared.cpu_ns > 1.7 * cross.cpu_ns,
        "{} {}",
        shared.cpu_ns,
        cross.cpu_ns
    );
}
