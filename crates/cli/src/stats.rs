//! The statistics JSON (schema in docs/stats.md).

use rvnvmm_config::Config;
use rvnvmm_user::{ExitKind, Outcome};
use serde_json::json;

/// Renders the statistics of a run. Everything but `host_seconds` and
/// `mips` is a function of the program, its inputs and the config alone.
pub fn to_json(
    cfg: &Config,
    program: &str,
    guest: Option<&serde_json::Value>,
    o: &Outcome,
    host_seconds: f64,
    crash: Option<&serde_json::Value>,
) -> String {
    let exit = match o.exit {
        ExitKind::Code(c) => json!({ "code": c }),
        ExitKind::Signal(s) => json!({ "signal": s }),
        ExitKind::InsnLimit => json!({ "insn_limit": true }),
        ExitKind::Crash => json!({ "crash": true }),
        ExitKind::Checkpoint => json!({ "checkpoint": true }),
    };
    let harts: Vec<_> = o
        .hart_cycles
        .iter()
        .zip(&o.hart_instructions)
        .enumerate()
        .map(|(i, (c, n))| json!({ "id": i, "cycles": c, "instructions": n }))
        .collect();
    let threads: Vec<_> = o
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "index": i,
                "hart": t.hart,
                "instructions": t.instructions,
                "flush_insns": t.flush_insns,
                "tlb_refills": t.tlb_refills,
                "atomics": rvnvmm_board::stats::atomics_json(&t.atomics),
                "memory_stall_cycles": t.memory_stall_cycles,
                "issue_wait_cycles": t.issue_wait_cycles,
                "unit_wait_cycles": t.unit_wait_cycles,
            })
        })
        .collect();
    // The whole run's speed, not the region's.
    let run_instructions = o.instructions + o.reset.map_or(0, |r| r.instructions);
    let mips = if host_seconds > 0.0 {
        run_instructions as f64 / host_seconds / 1e6
    } else {
        0.0
    };
    let mut v = json!({
        "schema": "rvnvmm-stats/1",
        "machine": cfg.machine.name,
        "program": program,
        "guest": guest,
        "exit": exit,
        "instructions": o.instructions,
        "sim_time_ns": o.sim_time_ns,
        "clock_hz": cfg.machine.clock_hz,
        "harts": harts,
        "threads": threads,
        "blocks_decoded": o.blocks_decoded,
        "pages": pages_json(&o.pages),
        "numa": numa_json(&o.numa),
        "host_seconds": host_seconds,
        "mips": mips,
    });
    if let (Some(serde_json::Value::Object(mem)), serde_json::Value::Object(top)) =
        (&o.memory, &mut v)
    {
        for (k, val) in mem {
            top.insert(k.clone(), val.clone());
        }
    }
    if let (Some(c), serde_json::Value::Object(top)) = (crash, &mut v) {
        top.insert("crash".into(), c.clone());
    }
    if guest.is_none() {
        if let serde_json::Value::Object(top) = &mut v {
            top.remove("guest");
        }
    }
    if let Some(tree) = &o.processes {
        v["processes"] = processes_json(tree);
    }
    v["stats_reset"] = rvnvmm_runctl::reset_json(o.reset);
    v["model_switches"] = rvnvmm_runctl::switches_json(&o.model_switches);
    if let Some(sampling) = &o.sampling {
        v["sampling"] = rvnvmm_runctl::sampling_json(sampling);
    }
    v["snapshots"] = o
        .snapshots
        .iter()
        .map(|s| {
            let stats: serde_json::Value =
                serde_json::from_str(&to_json(cfg, program, None, &s.stats, 0.0, None))
                    .expect("the JSON just rendered");
            rvnvmm_runctl::snapshot_json(&s.name, s.instructions, s.sim_time_ns, stats)
        })
        .collect();
    serde_json::to_string_pretty(&v).expect("JSON of plain values") + "\n"
}

/// The `guest` object: what the program started with, as the guest saw
/// it (the environment by its size: its strings lie on the stack).
pub fn guest_json(g: &rvnvmm_user::GuestStart) -> serde_json::Value {
    json!({
        "argv": g.argv,
        "env_vars": g.env.len(),
        "env_bytes": g.env.iter().map(|e| e.len() + 1).sum::<usize>(),
        "cwd": g.cwd,
        "maps": g.maps,
    })
}

/// The `processes` object of a run that forked: the tree's totals and
/// each process in creation order (`seq`; the initial process is 0), by
/// its parent's `seq`, never by host pid (which changes run to run).
fn processes_json(tree: &rvnvmm_user::TreeStats) -> serde_json::Value {
    let list: Vec<_> = tree
        .members
        .iter()
        .map(|m| {
            let exit = if m.status & 0x7f == 0 {
                json!({ "code": (m.status >> 8) & 0xff })
            } else {
                json!({ "signal": m.status & 0x7f })
            };
            json!({
                "seq": m.seq,
                "parent": m.parent,
                "program": m.program,
                "exit": exit,
                "instructions": m.instructions,
                "cpu_ns": m.cpu_ns,
                "start_ns": m.start_ns,
                "end_ns": m.end_ns,
            })
        })
        .collect();
    json!({
        "count": tree.count,
        "instructions": tree.instructions,
        "cpu_ns": tree.cpu_ns,
        "end_ns": tree.members.iter().map(|m| m.end_ns).max().unwrap_or(0),
        "list": list,
    })
}

/// The `pages` object: the page policy, the mappings per size at the end
/// of the run, and the blocks mapped and demoted on the way.
/// The `numa` object: each memory node's page counters, by node id.
fn numa_json(nodes: &[(u32, rvnvmm_user::numa::NodeCounters)]) -> serde_json::Value {
    let nodes: serde_json::Map<String, serde_json::Value> = nodes
        .iter()
        .map(|(id, c)| {
            let v = json!({
                "numa_hit": c.numa_hit,
                "numa_miss": c.numa_miss,
                "numa_foreign": c.numa_foreign,
                "interleave_hit": c.interleave_hit,
                "local_node": c.local_node,
                "other_node": c.other_node,
                "pages_migrated_in": c.migrated_in,
                "pages_migrated_out": c.migrated_out,
            });
            (id.to_string(), v)
        })
        .collect();
    json!({ "nodes": nodes })
}

fn pages_json(p: &rvnvmm_user::PagesOutcome) -> serde_json::Value {
    let [m4k, m64k, m2m, m1g] = p.mappings;
    let s = &p.stats;
    json!({
        "policy": p.policy.to_string(),
        "mappings": { "4k": m4k, "64k": m64k, "2m": m2m, "1g": m1g },
        "blocks_mapped": { "64k": s.mapped[0], "2m": s.mapped[1] },
        "demoted": { "64k": s.demoted[0], "2m": s.demoted[1] },
        "fallbacks": s.fallbacks,
    })
}
