#!/usr/bin/env python3
"""Seed 001 §4.1 (zc706): NVMM bandwidth over DRAM bandwidth for added tRCD/tRP.

    python3 experiments/seed001_bandwidth.py [--rvnvmm PATH] [--added 0,200,...,1000]

Runs `rvnvmm bench bandwidth --config zc706 --json` (the loop of seed 001
Fig. 4: STRIDE 4, 32, 8192 over 1 MiB) and prints, per operation and
stride, the grid of ratios over added tRCD (rows) and added tRP (columns),
then the four figures the paper's text gives, with ours beside them and
whether each is within the factor of 1.5 the fidelity target allows.
"""

import argparse
import json
import os
import subprocess
import sys

# Seed 001 §4.1: "NVMM read bandwidth degrades to about 0.5x at +0 ns and to
# about 0.10x at +1000 ns; write bandwidth to about 0.6x at +0/+0 and to
# 0.03x at +1000/+1000." Reads were measured with the added tRP at 0.
PAPER = [
    ("read", 0, 0, 0.5),
    ("read", 1000, 0, 0.10),
    ("write", 0, 0, 0.6),
    ("write", 1000, 1000, 0.03),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rvnvmm", default=os.path.join(here, "..", "target", "release", "rvnvmm"))
    ap.add_argument("--added", default="0,200,400,600,800,1000",
                    help="added tRCD/tRP values in ns (must include 0 and 1000)")
    a = ap.parse_args()
    if not os.path.exists(a.rvnvmm):
        sys.exit(f"{a.rvnvmm} not found: run cargo build --release -p rvnvmm")
    added = sorted({int(v) for v in a.added.split(",")} | {0, 1000})
    out = subprocess.run([a.rvnvmm, "bench", "bandwidth", "--config", "zc706", "--json",
                          "--added", ",".join(map(str, added))],
                         check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    ratio = {(r["op"], r["stride"], r["added_trcd_ns"], r["added_trp_ns"]): r["ratio"] for r in rows}
    for op in ("read", "write"):
        for stride in (4, 32, 8192):
            print(f"\n{op}, STRIDE {stride}: NVMM/DRAM bandwidth, rows +tRCD, columns +tRP [ns]")
            print(f"{'':>8}" + "".join(f"{rp:>8}" for rp in added))
            for rcd in added:
                print(f"{rcd:>8}" + "".join(f"{ratio[(op, stride, rcd, rp)]:>8.3f}" for rp in added))
    print("\nThe paper's figures (stride 32), ours, and whether within a factor of 1.5:")
    for op, rcd, rp, paper in PAPER:
        ours = ratio[(op, 32, rcd, rp)]
        ok = paper / 1.5 < ours < paper * 1.5
        print(f"  {op:<5} +{rcd}/+{rp} ns: paper {paper:.2f}, rvnvmm {ours:.3f}  {'ok' if ok else 'outside'}")


if __name__ == "__main__":
    main()
