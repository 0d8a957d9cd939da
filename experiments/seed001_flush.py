#!/usr/bin/env python3
"""Seed 001 Tables 7-12 (zc706): cache-flush overhead against NVMM tRCD/tRP and lines flushed.

    python3 experiments/seed001_flush.py [--added 0,200,400,600,800,1000] [--ops N] [--jobs N]

The persistent red-black tree of the workload suite (`rbtree N OPS
persist`: every undo-log record flushed and fenced before its store, every
line a transaction wrote written back at commit, with Zicbom cbo.clean, as
seed 001 §3.3's range flush does with ARM's DCCMVAC) runs on `zc706`, its
heap on NVMM:

* over the grid of added tRCD x tRP (Tables 7-10), the flush overhead:
  time with persistence / time of the same program without it;
* at +1000/+1000 ns, for growing transaction counts (Tables 11-12), the
  lines flushed, the flush frequency (flush instructions per simulated
  second) and the overhead.

The paper's reading: the overhead grows with the number of lines flushed
and does not grow with the added tRCD/tRP (the flushes' write-backs are
NVMM writes like the program's own).
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROGRAM = REPO / "guest" / "build" / "workloads" / "bin" / "rbtree"
SPEC_NS = 13.75  # zc706's PL DDR3-1600 tRCD and tRP


def rvnvmm():
    return os.environ.get("RVNVMM_BIN") or str(REPO / "target" / "release" / "rvnvmm")


def run(n, ops, persist, rcd, rp):
    """Statistics of one run of rbtree N OPS [persist:K] (K = `persist`, 0 for
    none) at the added latencies."""
    with tempfile.TemporaryDirectory(prefix="rvnvmm-flush-") as d:
        stats = Path(d) / "s.json"
        cmd = [rvnvmm(), "run", "--config", "zc706", "--no-progress", "--stats", str(stats),
               "--set", "machine.model=timing", "--set", "user.heap=nvmm",
               "--set", f"memory.nvmm.trcd_ns={SPEC_NS + rcd}",
               "--set", f"memory.nvmm.trp_ns={SPEC_NS + rp}",
               "--", str(PROGRAM), str(n), str(ops)] + ([f"persist:{persist}"] if persist else [])
        p = subprocess.run(cmd, cwd=d, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                           stdin=subprocess.DEVNULL, capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-400:]}")
        return json.loads(stats.read_text()), p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--added", default="0,200,400,600,800,1000")
    ap.add_argument("--ops", type=int, default=4000, help="N and OPS of the grid's runs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    if not PROGRAM.exists():
        sys.exit(f"{PROGRAM} missing: run make -C guest")
    added = [int(v) for v in a.added.split(",")]
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for rcd in added:
            for rp in added:
                for persist in (0, 1):
                    jobs[(rcd, rp, persist)] = ex.submit(run, a.ops, a.ops, persist, rcd, rp)
        # Group commit: every K-th transaction durable, fewer lines written
        # back for the same work.
        periods = [16, 8, 4, 2, 1]
        for k in periods:
            jobs[("k", k)] = ex.submit(run, a.ops, a.ops, k, 1000, 1000)
        res = {k: f.result() for k, f in jobs.items()}

    plain = res[(1000, 1000, 0)][1] if 1000 in added else None
    for k, (_, out) in res.items():
        if out != res[(added[0], added[0], 0)][1]:
            raise SystemExit(f"{k}: the output differs from the run without persistence")

    print(f"Flush overhead of rbtree {a.ops} {a.ops} on zc706 (time with persistence / without),")
    print("rows: added tRCD [ns], columns: added tRP [ns] (seed 001 Tables 7-10)")
    print(f"{'':>8}" + "".join(f"{rp:>9}" for rp in added))
    overheads = []
    for rcd in added:
        row = []
        for rp in added:
            t0 = res[(rcd, rp, False)][0]["sim_time_ns"]
            t1 = res[(rcd, rp, True)][0]["sim_time_ns"]
            row.append(t1 / t0)
        overheads += row
        print(f"{rcd:>8}" + "".join(f"{x:>9.3f}" for x in row))
    print(f"overhead over the grid: {min(overheads):.3f} .. {max(overheads):.3f}")

    print("\nAt +1000/+1000 ns, every K-th transaction durable: lines written back, flush")
    print("frequency and overhead (seed 001 Tables 11-12)")
    base = run(a.ops, a.ops, 0, 1000, 1000)[0]["sim_time_ns"] if plain is None else res[(1000, 1000, 0)][0]["sim_time_ns"]
    print(f"{'K':>4} {'flush insns':>12} {'lines written back':>19} {'flushes/s':>12} {'overhead':>9}")
    for k in periods:
        s1 = res[("k", k)][0]
        fl = s1["flushes"]
        freq = fl["instructions"] / (s1["sim_time_ns"] / 1e9)
        print(f"{k:>4} {fl['instructions']:>12} {fl['lines_written_back']:>19} {freq:>12.0f} "
              f"{s1['sim_time_ns'] / base:>9.3f}")


if __name__ == "__main__":
    main()
