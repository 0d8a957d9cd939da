//! Seed 002 §4.3 on `smt-pm` (`smt_tasks_pmdk_cbo`, `experiments/seed002_smt.py
//! --io pmdk`): Debian's libpmemobj red-black tree, persisted through the
//! `cbo.clean` shim, beside the divide task in smt-cross and smt-parallel.
//! The trees verify after the run, and the model keeps its relations: the
//! divide tasks share one divider in smt-parallel, and the PMDK threads
//! spend most of their time waiting on persistent memory. Needs
//! `scripts/setup.sh` (the sysroot with PMDK) and `make -C guest`.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_view.rs"]
mod guest_view;

use std::process::Command;

struct Run {
    cpu_ns: f64,
    tps: f64,
    /// Per thread after main: (instructions, memory stall cycles, unit
    /// wait cycles, flush instructions).
    threads: Vec<(u64, u64, u64, u64)>,
}

fn run(placement: &str) -> Run {
    let prog = artefacts::repo_root().join("guest/build/emu/smt_tasks_pmdk_cbo");
    assert!(
        prog.is_file(),
        "{} is not built: run `make -C guest` (after scripts/setup.sh)",
        prog.display()
    );
    let sysroot = artefacts::sysroot().unwrap_or_else(|e| panic!("{e}"));
    let dir = std::env::temp_dir().join(format!(
        "rvnvmm-smt-pmdk-{}-{}",
        std::process::id(),
        placement.replace([',', ':'], "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .env_clear()
        .env("LC_ALL", "C")
        .args([
            "run",
            "--config",
            "smt-pm",
            "--set",
            "machine.threads_per_core=2",
            "--set",
            "user.pmem_dir=/mnt/pmem",
            "--sysroot",
        ])
        .arg(sysroot)
        .args(guest_view::options(
            &artefacts::guest_build(),
            &dir,
            &["LC_ALL=C"],
        ))
        .arg("--stats")
        .arg(&stats)
        .arg(guest_view::guest_path(&artefacts::guest_build(), &prog))
        // 40 000 divides beside a tree of 200 keys.
        .args(["idiv", "40000", "pmdk", placement, "200"])
        .current_dir(&dir)
        .output()
        .expect("run rvnvmm");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        out.matches("tree consistent").count(),
        2,
        "both trees verify: {out}"
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
        tps: value("io_throughput_tps "),
        threads: v["threads"].as_array().unwrap()[1..]
            .iter()
            .map(|t| {
                (
                    field(t, "instructions"),
                    field(t, "memory_stall_cycles"),
                    field(t, "unit_wait_cycles"),
                    field(t, "flush_insns"),
                )
            })
            .collect(),
    }
}

#[test]
fn the_pmdk_tree_beside_the_divide_task_verifies_and_orders_the_settings() {
    // Threads after main: IO, CPU of the first pair, then of the second.
    let cross = run("0:1,2:3");
    let parallel = run("0:2,1:3");
    for r in [&cross, &parallel] {
        assert!(r.tps > 10_000.0, "transactions/s {}", r.tps);
        // The PMDK threads write their lines back (the shim's cbo.clean)
        // and wait on persistent memory for most of their cycles; the
        // warm-up is part of the thread, so the share is of all its time.
        for (insns, stall, _, flushes) in [r.threads[0], r.threads[2]] {
            assert!(flushes > 1000, "flushes {flushes}");
            assert!(stall > insns, "stall {stall}, instructions {insns}");
        }
    }
    // smt-cross: each divide task has its core's divider to itself;
    // smt-parallel: the two share one, and take about twice as long.
    assert!(
        parallel.cpu_ns > 1.5 * cross.cpu_ns,
        "{} {}",
        parallel.cpu_ns,
        cross.cpu_ns
    );
    for t in [cross.threads[1], cross.threads[3]] {
        assert!(
            t.2 * 10 < parallel.threads[1].2,
            "unit wait cross {t:?}, parallel {:?}",
            parallel.threads
        );
    }
}
