#!/usr/bin/env python3
"""Seed 001 Tables 7-12 (zc706): cache-flush overhead against NVMM tRCD/tRP, lines flushed and flush frequency per workload.

    python3 experiments/seed001_flush.py [--added 0,200,400,600,800,1000] [--ops N]
                                         [--workloads rbtree,lbm,nbody,mcts] [--jobs N] [--json FILE]

The workload suite's durable modes (trailing `persist[:K]` argument; every
write-back is Zicbom cbo.clean, as seed 001 §3.3's range flush does with
ARM's DCCMVAC) run on `zc706`, their heap on NVMM:

* rbtree N OPS persist[:K]: every undo-log record written back and fenced
  before its store, every line a transaction wrote written back at commit
  (every K-th transaction durable);
* lbm NX NY NZ STEPS persist: the whole destination grid written back after
  every time step (seed 001's 519.lbm_r: dstGrid before the grids swap);
* nbody N STEPS persist: positions and velocities written back after every
  step (508.namd_r: the moved atoms);
* mcts ITERATIONS GAMES persist: every node an iteration wrote (its backed-up
  path, with the new node) written back (541.leela_r: the new nodes).

The script prints:

* for each workload, over the grid of added tRCD x tRP (Tables 7-10), the
  flush overhead: time with persistence / time of the same program without;
* for rbtree at +1000/+1000 ns, every K-th transaction durable: lines
  flushed, flush frequency and overhead;
* per workload (Tables 11-12): flush instructions (lines flushed), lines
  actually written back, flush frequency (flush instructions per simulated
  second), the NVMM writes the flushes add to the run without them (lines
  cleaned, dirtied again and cleaned again), the overhead at +1000/+1000 ns
  and its minimum and maximum over the grid, and whether the overhead ranks
  with the lines flushed or with the frequency.

The paper's reading: the overhead does not grow with the added tRCD/tRP
(the flushes' write-backs are NVMM writes like the program's own) and
grows with the number of lines flushed rather than with their frequency.
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
sys.path.insert(0, str(HERE))
from seed000_fig11 import spearman, workloads  # noqa: E402

BIN = REPO / "guest" / "build" / "workloads" / "bin"
SPEC_NS = 13.75  # zc706's PL DDR3-1600 tRCD and tRP

# Arguments of each durable workload (rbtree: N = OPS = --ops). Small, so
# every grid stays quick. lbm's grid (2 x 2.5 MiB) is larger than zc706's
# 512 KiB L2, as 519.lbm_r's 204 MB dstGrid is larger than its LLC: most
# lines it writes back were already evicted.
WORKLOADS = {
    "rbtree": None,
    "lbm": ["32", "32", "16", "2"],
    "nbody": ["128", "40"],
    "mcts": ["1000", "1"],
}


def rvnvmm():
    return os.environ.get("RVNVMM_BIN") or str(REPO / "target" / "release" / "rvnvmm")


def run(program, args, persist, rcd, rp):
    """Statistics and stdout of one run of PROGRAM ARGS [persist:K] (K =
    `persist`, 0 for none) at the added latencies."""
    with tempfile.TemporaryDirectory(prefix="rvnvmm-flush-") as d:
        stats = Path(d) / "s.json"
        cmd = [rvnvmm(), "run", "--config", "zc706", "--no-progress", "--stats", str(stats),
               "--set", "machine.model=timing", "--set", "user.heap=nvmm",
               "--set", f"memory.nvmm.trcd_ns={SPEC_NS + rcd}",
               "--set", f"memory.nvmm.trp_ns={SPEC_NS + rp}",
               *workloads.guest_view({"PATH": "/usr/bin:/bin", "LC_ALL": "C"}),
               "--", workloads.guest_path(BIN / program)] + args + ([f"persist:{persist}"] if persist else [])
        p = subprocess.run(cmd, cwd=d, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                           stdin=subprocess.DEVNULL, capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode()[-400:]}")
        return json.loads(stats.read_text()), p.stdout


def print_grid(title, added, overhead):
    print(title)
    print("rows: added tRCD [ns], columns: added tRP [ns]")
    print(f"{'':>8}" + "".join(f"{rp:>9}" for rp in added))
    for rcd in added:
        print(f"{rcd:>8}" + "".join(f"{overhead(rcd, rp):>9.3f}" for rp in added))
    cells = [overhead(rcd, rp) for rcd in added for rp in added]
    print(f"overhead over the grid: {min(cells):.3f} .. {max(cells):.3f}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--added", default="0,200,400,600,800,1000")
    ap.add_argument("--ops", type=int, default=4000, help="N and OPS of rbtree's runs")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="durable workloads of the per-workload tables")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="also write the per-workload table here")
    a = ap.parse_args()
    added = [int(v) for v in a.added.split(",")]
    names = a.workloads.split(",")
    for n in names:
        if n not in WORKLOADS:
            sys.exit(f"unknown workload {n}: one of {', '.join(WORKLOADS)}")
        if not (BIN / n).exists():
            sys.exit(f"{BIN / n} missing: run make -C guest")
    args = {n: WORKLOADS[n] or [str(a.ops), str(a.ops)] for n in names}
    periods = [16, 8, 4, 2, 1]

    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        def submit(key):
            if key not in jobs:
                w, rcd, rp, persist = key
                jobs[key] = ex.submit(run, w, args[w], persist, rcd, rp)
        for w in names:
            for rcd in sorted(set(added) | {1000}):
                for rp in sorted(set(added) | {1000}):
                    if (rcd in added and rp in added) or rcd == rp == 1000:
                        for persist in (0, 1):
                            submit((w, rcd, rp, persist))
        # Group commit: every K-th transaction durable, fewer lines written
        # back for the same work.
        if "rbtree" in names:
            for k in periods:
                submit(("rbtree", 1000, 1000, k))
        res = {k: f.result() for k, f in jobs.items()}

    for (w, rcd, rp, persist), (_, out) in res.items():
        if out != res[(w, 1000, 1000, 0)][1]:
            raise SystemExit(f"{w} at +{rcd}/+{rp} ns, persist {persist}: the output "
                             "differs from the run without persistence")

    def t(w, rcd, rp, persist):
        return res[(w, rcd, rp, persist)][0]["sim_time_ns"]

    def overhead(w):
        return lambda rcd, rp: t(w, rcd, rp, 1) / t(w, rcd, rp, 0)

    for w in names:
        print_grid(f"Flush overhead of {w} {' '.join(args[w])} on zc706 (time with persistence / "
                   "without; seed 001 Tables 7-10)", added, overhead(w))
        if w == "rbtree":
            print("At +1000/+1000 ns, every K-th transaction durable: lines written back, flush")
            print("frequency and overhead (seed 001 Tables 11-12)")
            print(f"{'K':>4} {'flush insns':>12} {'lines written back':>19} {'flushes/s':>12} "
                  f"{'overhead':>9}")
            for k in periods:
                s1 = res[("rbtree", 1000, 1000, k)][0]
                fl = s1["flushes"]
                freq = fl["instructions"] / (s1["sim_time_ns"] / 1e9)
                print(f"{k:>4} {fl['instructions']:>12} {fl['lines_written_back']:>19} "
                      f"{freq:>12.0f} {s1['sim_time_ns'] / t('rbtree', 1000, 1000, 0):>9.3f}")
            print()

    print("Per workload at +1000/+1000 ns (seed 001 Tables 11-12): lines flushed (flush")
    print("instructions) and flush frequency (per simulated second); lines the flushes")
    print("wrote back, and NVMM writes beyond the run without persistence (lines cleaned,")
    print("dirtied again and cleaned again) in all and per second; the overhead there and")
    print("its minimum and maximum over the grid")
    print(f"{'workload':<22} {'lines flushed':>13} {'flushes/s':>10} {'written back':>12} "
          f"{'extra writes':>12} {'extra/s':>9} {'overhead':>8} {'min':>6} {'max':>6}")
    rows = []
    for w in names:
        s0, s1 = res[(w, 1000, 1000, 0)][0], res[(w, 1000, 1000, 1)][0]
        fl = s1["flushes"]
        sec = s1["sim_time_ns"] / 1e9
        extra = s1["regions"]["nvmm"]["writes"] - s0["regions"]["nvmm"]["writes"]
        grid = [overhead(w)(rcd, rp) for rcd in added for rp in added]
        row = {"w": w, "lines": fl["instructions"], "freq": fl["instructions"] / sec,
               "written": fl["lines_written_back"], "extra": extra, "extra_freq": extra / sec,
               "ovh": overhead(w)(1000, 1000), "min": min(grid), "max": max(grid)}
        rows.append(row)
        print(f"{w + ' ' + ' '.join(args[w]):<22} {row['lines']:>13} {row['freq']:>10.0f} "
              f"{row['written']:>12} {extra:>12} {row['extra_freq']:>9.0f} {row['ovh']:>8.3f} "
              f"{row['min']:>6.3f} {row['max']:>6.3f}")
    if a.json:
        command = f"--added {','.join(map(str, added))} --ops {a.ops} --workloads {','.join(names)}"
        a.json.write_text(json.dumps({"command": command, "rows": rows}, indent=1))
    if len(rows) < 3:
        return

    def order(key):
        return " > ".join(r["w"] for r in sorted(rows, key=lambda r: -r[key]))
    print(f"\nby overhead at +1000/+1000: {order('ovh')}")
    print(f"by max overhead:            {order('max')}")
    print(f"by lines flushed:           {order('lines')}")
    print(f"by flush frequency:         {order('freq')}")
    print(f"by extra writes per second: {order('extra_freq')}")
    for key, what in (("ovh", "overhead at +1000/+1000"), ("max", "max overhead")):
        ov = [r[key] for r in rows]
        rl = spearman([r["lines"] for r in rows], ov)
        rf = spearman([r["freq"] for r in rows], ov)
        rx = spearman([r["extra_freq"] for r in rows], ov)
        verdict = ("lines flushed, as in the paper" if rl > rf
                   else "flush frequency rather than the lines flushed (the paper: the lines)")
        print(f"Spearman rho of the {what} with lines flushed {rl:+.2f}, flush frequency "
              f"{rf:+.2f}, extra writes per second {rx:+.2f}:\n  it ranks with the {verdict}")


if __name__ == "__main__":
    main()
