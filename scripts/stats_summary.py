#!/usr/bin/env python3
"""A short table of the headline figures of an rvnvmm statistics JSON (docs/stats.md).

    stats_summary.py STATS.json

Instructions, simulated time, IPC/CPI, the L1 (and L2) hit rates summed over
the harts, the bus, and each memory region's controller figures. Keys a run
does not have (a functional-model run has no caches) are left out.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _rate(hits: int, misses: int) -> str:
    total = hits + misses
    return f"{100 * hits / total:.2f} % of {total:,}" if total else "no accesses"


def summary_rows(stats: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [("program", str(stats["program"])), ("machine", str(stats["machine"]))]
    exit_ = stats.get("exit", {})
    if "code" in exit_:
        rows.append(("exit", f"status {exit_['code']}"))
    elif "signal" in exit_:
        rows.append(("exit", f"signal {exit_['signal']}"))
    elif exit_.get("insn_limit"):
        rows.append(("exit", "stopped at --max-insns"))
    insns, ns, hz = stats["instructions"], stats["sim_time_ns"], stats["clock_hz"]
    cycles = max((h["cycles"] for h in stats.get("harts", [])), default=ns * hz // 10**9)
    rows.append(("instructions", f"{insns:,}"))
    rows.append(("simulated time", f"{ns / 1e6:,.3f} ms ({cycles:,} cycles at {hz / 1e6:g} MHz)"))
    if cycles and insns:
        rows.append(("IPC / CPI", f"{insns / cycles:.3f} / {cycles / insns:.3f}"))
    caches = stats.get("caches", {})
    for level in ("l1i", "l1d"):
        parts = [c for name, c in caches.items() if name.endswith("." + level)]
        if parts:
            hits, misses = sum(c["hits"] for c in parts), sum(c["misses"] for c in parts)
            rows.append((f"{level.upper()} hit rate", _rate(hits, misses)))
    if "l2" in caches:
        rows.append(("L2 hit rate", _rate(caches["l2"]["hits"], caches["l2"]["misses"])))
    if "bus" in stats:
        bus = stats["bus"]
        rows.append(("bus utilization", f"{100 * bus['utilization']:.2f} % ({bus['transfers']:,} transfers)"))
    for name, r in stats.get("regions", {}).items():
        if r["reads"] + r["writes"] == 0:
            rows.append((f"{name.upper()} controller", "no requests"))
            continue
        rows.append((f"{name.upper()} reads / writes", f"{r['reads']:,} / {r['writes']:,}"))
        rows.append((f"{name.upper()} row hits, ACT/REQ",
                     f"{100 * r['row_hit_rate']:.2f} %, {r['act_per_req']:.3f}"))
        rows.append((f"{name.upper()} read latency", f"{r['avg_read_latency_ns']:.1f} ns at the controller, "
                                                      f"{r['avg_cpu_read_ns']:.1f} ns seen by the CPU"))
    if "mips" in stats:
        rows.append(("host speed", f"{stats['mips']:.1f} MIPS ({stats['host_seconds']:.2f} s)"))
    return rows


def format_table(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: stats_summary.py STATS.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0]) as f:
            stats = json.load(f)
        print(format_table(summary_rows(stats)))
    except (OSError, ValueError, KeyError, TypeError) as e:
        why = f"{type(e).__name__}: {e}"
        print(f"stats_summary: {argv[0]}: not an rvnvmm statistics file ({why})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
