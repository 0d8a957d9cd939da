#!/usr/bin/env python3
"""Fast-forward against timing throughout, on the workload suite (docs/regions-of-interest.md).

    python3 experiments/roi_fastforward.py [--size test|ref] [--at 0.5] [--only NAME,...]
                                           [--json FILE] [RVNVMM OPTIONS...]

For each workload (guest/workloads, `make -C guest`): a timed run gives
its instruction count T; then, with N = AT x T,
  * timed:   `--reset-stats-at insns=N`, the timing model throughout;
  * fast:    `--fast-forward insns=N`, the functional model up to N, then
             the timing model with cold caches, TLBs and row buffers.
Both count statistics from instruction N to the end (the region), so they
differ by the cold start only. The table gives the region's simulated time,
L1D misses (all harts) and memory requests (all regions) of each, their
relative difference, and the host seconds of each run. The default options
are those of the suite's table: `--set user.heap=nvmm --set machine.model=timing`.
Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "guest" / "workloads"))
import workloads  # noqa: E402

DEFAULT_OPTS = ["--set", "user.heap=nvmm", "--set", "machine.model=timing"]


def run(w, size, opts):
    """The statistics of one run of workload `w` with rvnvmm options `opts`."""
    with tempfile.TemporaryDirectory(prefix="rvnvmm-roi-") as cwd:
        stats = Path(cwd) / "stats.json"
        cmd = workloads.command(w, size, ["--stats", str(stats), "--no-progress"] + list(opts))
        p = subprocess.run(
            cmd,
            cwd=cwd,
            env=workloads.guest_env(cwd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if p.returncode != 0:
            raise SystemExit(f"{w['name']}: {' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
        return json.loads(stats.read_text())


def figures(s):
    """The region's figures compared: time, L1D misses, memory requests."""
    caches = s.get("caches", {})
    l1d = sum(c["misses"] for name, c in caches.items() if name.endswith(".l1d"))
    requests = sum(r["reads"] + r["writes"] for r in s.get("regions", {}).values())
    return {
        "instructions": s["instructions"],
        "sim_time_ns": s["sim_time_ns"],
        "l1d_misses": l1d,
        "mem_requests": requests,
        "host_seconds": s["host_seconds"],
    }


def rel(a, b):
    return (a - b) / b if b else 0.0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="test", choices=["test", "ref"])
    ap.add_argument("--at", type=float, default=0.5, help="the switch point, a fraction of the run")
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--json", help="write the figures as JSON to this file")
    args, opts = ap.parse_known_args(argv)
    opts = opts or DEFAULT_OPTS
    names = args.only.split(",") if args.only else [w["name"] for w in workloads.load_manifest()["workload"]]
    rows = {}
    print("| workload | N | region insns | time timed / fast (ms) | Δ time | L1D misses Δ | mem requests Δ | host s: timed throughout / fast-forward |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        w = workloads.workload(name)
        whole = run(w, args.size, opts)
        n = int(whole["instructions"] * args.at)
        timed = figures(run(w, args.size, opts + [f"--reset-stats-at=insns={n}"]))
        fast = figures(run(w, args.size, opts + [f"--fast-forward=insns={n}"]))
        if timed["instructions"] != fast["instructions"]:
            print(f"{name}: the regions differ in instructions: {timed} {fast}", file=sys.stderr)
        rows[name] = {"n": n, "timed": timed, "fast": fast}
        print(
            f"| {name} | {n} | {timed['instructions']} "
            f"| {timed['sim_time_ns'] / 1e6:.3f} / {fast['sim_time_ns'] / 1e6:.3f} "
            f"| {100 * rel(fast['sim_time_ns'], timed['sim_time_ns']):+.3f} % "
            f"| {100 * rel(fast['l1d_misses'], timed['l1d_misses']):+.3f} % "
            f"| {100 * rel(fast['mem_requests'], timed['mem_requests']):+.3f} % "
            f"| {timed['host_seconds']:.2f} / {fast['host_seconds']:.2f} |",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
