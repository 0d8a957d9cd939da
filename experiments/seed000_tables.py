#!/usr/bin/env python3
"""Seed 000 Tables 3-6 (stride locality and bank parallelism, read and write,
coarse / fine / proposed) on the freedom-u500 machine, the paper's value
beside rvnvmm's for every cell.

    python3 experiments/seed000_tables.py [--rvnvmm PATH] [--size BYTES] [--set KEY=VALUE ...]

Runs `rvnvmm bench locality --json` and `rvnvmm bench banks --json` (paper
settings are the machine's defaults: coarse 1000/1000 ns, fine tRCD = tRP =
1000 ns, proposed tRAS = 7000 ns) and prints each table with the deviation
from the paper in percent.
"""
import argparse
import json
import os
import subprocess
import sys

# Average latency in ns, seed 000 Tables 3-6: {(method, op, parameter): ns}.
PAPER = {}
for op, table in (
    ("read", {4096: (2702, 2708, 4081), 8192: (2881, 2872, 6064)}),
    ("write", {4096: (4399, 4879, 14457), 8192: (4479, 5334, 15913)}),
):
    for stride, row in table.items():
        for method, ns in zip(("coarse", "fine", "proposed"), row):
            PAPER[("locality", method, op, stride)] = ns
for op, rows in (
    ("read", [(2598, 2608, 6060), (2626, 2634, 4353), (2637, 2647, 3062),
              (2753, 2736, 2751), (2887, 2875, 2839), (2962, 2966, 2944)]),
    ("write", [(4204, 4892, 15843), (4207, 3925, 11104), (4223, 3655, 8712),
               (4307, 3652, 7070), (4465, 3658, 5818), (4507, 3656, 5153)]),
):
    for nbank, row in enumerate(rows, start=1):
        for method, ns in zip(("coarse", "fine", "proposed"), row):
            PAPER[("banks", method, op, nbank)] = ns


def run(rvnvmm, bench, size, sets):
    extra = [arg for kv in sets for arg in ("--set", kv)]
    out = subprocess.run([rvnvmm, "bench", bench, "--json", "--size", str(size), *extra],
                         check=True, capture_output=True, text=True).stdout
    key = "nbank" if bench == "banks" else "stride"
    return {(bench, r["method"], r["op"], r[key]): r["avg_latency_ns"]
            for r in map(json.loads, out.splitlines())}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rvnvmm", default=os.path.join(here, "..", "target", "release", "rvnvmm"))
    ap.add_argument("--size", type=int, default=64 << 20, help="bytes per loop (per bank for Tables 5-6)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config key, e.g. memory.nvmm.keep_open=restart-at-access")
    a = ap.parse_args()
    if not os.path.exists(a.rvnvmm):
        sys.exit(f"{a.rvnvmm} not found: run cargo build --release -p rvnvmm")
    ours = {**run(a.rvnvmm, "locality", a.size, a.set),
            **run(a.rvnvmm, "banks", a.size, a.set)}
    titles = {("locality", "read"): "Table 3: read latency vs STRIDE",
              ("locality", "write"): "Table 4: write latency vs STRIDE",
              ("banks", "read"): "Table 5: read latency vs NBANK",
              ("banks", "write"): "Table 6: write latency vs NBANK"}
    for (bench, op), title in titles.items():
        print(f"\n{title} [ns]: paper / rvnvmm (deviation)")
        params = sorted({k[3] for k in PAPER if k[0] == bench and k[2] == op})
        print(f"{'STRIDE' if bench == 'locality' else 'NBANK':>8} " +
              " ".join(f"{m:>26}" for m in ("coarse", "fine", "proposed")))
        for p in params:
            cells = []
            for m in ("coarse", "fine", "proposed"):
                paper, mine = PAPER[(bench, m, op, p)], ours[(bench, m, op, p)]
                cells.append(f"{paper:>7} / {mine:>7.0f} ({(mine - paper) / paper:+5.0%})")
            print(f"{p:>8} " + " ".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    main()
