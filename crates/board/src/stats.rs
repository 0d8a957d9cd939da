//! The board machine's statistics JSON (`docs/stats.md`): the
//! instructions, time, harts and memory system, counting from the last
//! statistics reset ([`Machine::reset_stats`]).

use crate::machine::Machine;
use serde_json::{json, Value};

/// The machine's statistics now, counting from the last reset: the
/// instructions, time, harts and memory system. `end`: the run is over and
/// the controllers are drained first (a snapshot leaves them alone).
pub fn stats_json(m: &mut Machine, end: bool) -> Value {
    let base = m.stats_base().cloned().unwrap_or_default();
    let max_cycles = m.cores().iter().map(|c| c.cycles).max().unwrap_or(0);
    let sim_time_ns = m.cores().iter().map(|c| c.time_ns()).max().unwrap_or(0) - base.sim_time_ns;
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let harts: Vec<_> = m
        .harts()
        .iter()
        .zip(m.cores())
        .enumerate()
        .map(|(i, (h, core))| {
            let (ipis_received, ipis_sent) = base.ipis.get(i).copied().unwrap_or((0, 0));
            json!({
                "id": i,
                "cycles": core.cycles - at(&base.cycles, i),
                "instructions": h.instret - at(&base.hart_instructions, i),
                "exceptions": h.stats.exceptions,
                "interrupts": h.stats.interrupts,
                "tlb_refills": h.stats.tlb_refills,
                "flush_insns": h.stats.flush_insns,
                "atomics": atomics_json(&h.stats.atomics),
                "memory_stall_cycles": h.stats.memory_stall_cycles,
                "issue_wait_cycles": h.stats.issue_wait_cycles,
                "unit_wait_cycles": h.stats.unit_wait_cycles,
                "ipis_received": m.board().ipis_received(i) - ipis_received,
                "ipis_sent": m.board().ipis_sent(i) - ipis_sent,
                "sbi_calls": {
                    "ipi": h.stats.sbi_calls.ipi,
                    "rfence": h.stats.sbi_calls.rfence,
                    "timer": h.stats.sbi_calls.timer,
                    "hsm": h.stats.sbi_calls.hsm,
                    "other": h.stats.sbi_calls.other,
                },
            })
        })
        .collect();
    let mut v = json!({
        "instructions": m.instructions() - base.instructions,
        "sim_time_ns": sim_time_ns,
        "clock_hz": m.clock_hz(),
        "harts": harts,
        // A reboot starts a new code cache, and its count.
        "blocks_decoded": m.blocks_decoded().saturating_sub(base.blocks_decoded),
    });
    if let Some(ms) = m.any_memsys_mut() {
        if end {
            ms.finish(max_cycles);
        }
        if let (Value::Object(mem), Value::Object(top)) = (ms.stats_json(sim_time_ns), &mut v) {
            for (k, val) in mem {
                top.insert(k, val);
            }
        }
    }
    v
}

/// A hart's or thread's `atomics` object.
pub fn atomics_json(a: &rvnvmm_hart::AtomicStats) -> Value {
    json!({
        "amos": a.amos,
        "lr": a.lr,
        "sc": a.sc,
        "sc_failures": a.sc_failures,
        "stall_cycles": a.stall_cycles,
    })
}
