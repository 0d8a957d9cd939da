#!/usr/bin/env python3
"""Seed 003 Table 2: NAS-like kernels (OpenMP, user mode) at 1, 2 and 4 threads beside the paper.

    python3 experiments/seed003_smp.py [--machines mappi,freedom-u500] [--threads 1,2,4]
                                       [--kernels is,mg,cg,ep] [--class S] [--set KEY=VALUE]
                                       [--jobs N] [--out DIR] [--json FILE]

Every kernel of guest/npb (`make -C guest/npb`) runs under `rvnvmm run`
with the full timing model, OMP_NUM_THREADS set to each thread count, on
the 2-hart `mappi` (seed 003 Table 1) and on the 4-hart `freedom-u500`.
For each machine it prints the time of the timed part (the guest's own
clock, which is simulated time), Mop/s and the speed-up over one thread
beside the paper's Table 2 (NPB 2.x class S, MPI processes on the
dual-core Mappi, Linux 2.4.19), and then, from `--stats`, what explains
the differences: instructions, L1D misses, the bus's utilisation and the
harts' wait for it, cache-to-cache transfers, invalidations, AMOs, LR/SC
and their failures, and which hart each thread ran on.  The counters
cover the whole run (start-up and the untimed first iteration included).
Every run must verify (the kernel exits 0 and prints SUCCESSFUL).
`--json FILE` also writes every run's figures (time, Mop/s, speed-up, the
paper's, the counters) as one JSON object, which experiments/fidelity.py
reads.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "guest" / "workloads"))
import workloads  # noqa: E402  (the fixed guest view)
NPB = ROOT / "guest" / "build" / "npb"

# Seed 003 Table 2 (NPB class S, 1/2/4 processes, 2 CPUs): time in seconds.
PAPER_TIME = {
    "is": {1: 0.73, 2: 0.42, 4: 0.53},
    "mg": {1: 25.11, 2: 13.00, 4: 13.51},
    "cg": {1: 263.21, 2: 132.16, 4: 146.89},
    "ep": {1: 6558.70, 2: 3305.33, 4: 3302.08},
}
# The paper's speed-up rows (from unrounded times, so kept as printed).
PAPER_SPEEDUP = {
    "is": {1: 1.000, 2: 1.738, 4: 1.377},
    "mg": {1: 1.000, 2: 1.932, 4: 1.859},
    "cg": {1: 1.000, 2: 1.992, 4: 1.792},
    "ep": {1: 1.000, 2: 1.984, 4: 1.986},
}


def rvnvmm_bin():
    return os.environ.get("RVNVMM_BIN") or str(ROOT / "target" / "release" / "rvnvmm")


def run_one(kernel, machine, threads, cls, sets, out):
    stats = out / f"{kernel}.{machine}.{threads}.json"
    cmd = [rvnvmm_bin(), "run", "--config", machine, "--set", "machine.model=timing",
           *[w for kv in sets for w in ("--set", kv)],
           "--no-progress", "--stats", str(stats), *workloads.guest_view(),
           "--env", f"OMP_NUM_THREADS={threads}", "--", workloads.guest_path(NPB / kernel), cls]
    with tempfile.TemporaryDirectory(prefix="rvnvmm-s003-") as cwd:
        # A fixed environment: rvnvmm hands it to the guest, whose stack and
        # libgomp (OMP_* variables) it would otherwise change.
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": cwd, "TMPDIR": cwd}
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True)
    (out / f"{kernel}.{machine}.{threads}.out").write_text(p.stdout)
    if p.returncode != 0 or " Verification    =               SUCCESSFUL" not in p.stdout:
        raise SystemExit(f"{kernel} on {machine} at {threads} threads did not verify "
                         f"(exit {p.returncode}): {p.stderr[-400:]}")
    ns = re.search(r"Time in ns += +(\d+)", p.stdout)
    mops = re.search(r"Mop/s total += +([\d.]+)", p.stdout)
    if not ns or not mops:
        raise SystemExit(f"{kernel} on {machine}: no time or Mop/s in its output")
    return {"ns": int(ns.group(1)), "mops": float(mops.group(1)),
            "stats": json.loads(stats.read_text())}


def counters(s):
    """What the --stats of one run say about SMP costs."""
    l1d = [v for k, v in s["caches"].items() if k.endswith(".l1d")]
    amos = sum(t["atomics"]["amos"] for t in s["threads"])
    lr = sum(t["atomics"]["lr"] for t in s["threads"])
    sc_fail = sum(t["atomics"]["sc_failures"] for t in s["threads"])
    return {
        "insns": s["instructions"],
        "l1d_misses": sum(c["misses"] for c in l1d),
        "bus_util": s["bus"]["utilization"],
        "bus_wait_ms": sum(s["bus"]["hart_wait_ns"]) / 1e6,
        "c2c": s["coherence"]["cache_to_cache"],
        "inval": s["coherence"]["invalidations_sent"],
        "amos": amos,
        "lr": lr,
        "sc_fail": sc_fail,
        "placement": "".join(str(t["hart"]) for t in s["threads"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machines", default="mappi,freedom-u500")
    ap.add_argument("--threads", default="1,2,4")
    ap.add_argument("--kernels", default="is,mg,cg,ep")
    ap.add_argument("--class", dest="cls", default="S", choices=["S", "W"])
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="a config key for every run (repeatable), e.g. core.fpu=60")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", type=Path, help="write the figures of every run to this file")
    a = ap.parse_args()
    machines = a.machines.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    kernels = a.kernels.split(",")
    if 1 not in threads:
        raise SystemExit("--threads must include 1 (the speed-up's base)")
    for k in kernels:
        if not (NPB / k).exists():
            raise SystemExit(f"{NPB / k} is missing: make -C guest/npb")
    out = a.out or Path(tempfile.mkdtemp(prefix="seed003-smp-"))
    out.mkdir(parents=True, exist_ok=True)

    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_one, k, m, t, a.cls, a.sets, out): (k, m, t)
                for m in machines for k in kernels for t in threads}
        for f in concurrent.futures.as_completed(futs):
            res[futs[f]] = f.result()

    paper = a.cls == "S"
    for m in machines:
        extra = "".join(f", {kv}" for kv in a.sets)
        print(f"\nTable 2 on {m} (class {a.cls}, OpenMP threads, timing model{extra})")
        head = "| kernel | threads | time (s) | Mop/s | speed-up |"
        if paper:
            head += " paper time (s) | paper speed-up |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for k in kernels:
            base = res[(k, m, 1)]["ns"]
            for t in threads:
                r = res[(k, m, t)]
                row = f"| {k.upper()} | {t} | {r['ns'] / 1e9:.4f} | {r['mops']:.2f} | {base / r['ns']:.3f} |"
                if paper:
                    pt = PAPER_TIME.get(k, {}).get(t)
                    ps = PAPER_SPEEDUP.get(k, {}).get(t)
                    row += f" {pt if pt is not None else '-'} | {f'{ps:.3f}' if ps is not None else '-'} |"
                print(row)
        print(f"\nCounters on {m} (whole run): instructions, L1D misses, bus utilisation and the"
              " harts' wait for it, cache-to-cache transfers, invalidations, AMOs, LR (SC failures),"
              " each thread's hart")
        head = ("| kernel | threads | instructions | L1D misses | bus util | bus wait (ms) | c2c |"
                " invalidations | AMOs | LR (sc fail) | threads on harts |")
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for k in kernels:
            for t in threads:
                c = counters(res[(k, m, t)]["stats"])
                print(f"| {k.upper()} | {t} | {c['insns'] / 1e6:.1f} M | {c['l1d_misses'] / 1e3:.1f} k |"
                      f" {c['bus_util']:.3f} | {c['bus_wait_ms']:.2f} | {c['c2c']} | {c['inval']} |"
                      f" {c['amos']} | {c['lr']} ({c['sc_fail']}) | {c['placement']} |")
    print(f"\nOutputs and stats: {out}")
    if a.json:
        a.json.write_text(json.dumps(summary(res, a, machines, kernels, threads), indent=1) + "\n")


def summary(res, a, machines, kernels, threads):
    """The figures of every run as one JSON object (experiments/fidelity.py reads it)."""
    runs = []
    for m in machines:
        for k in kernels:
            base = res[(k, m, 1)]["ns"]
            for t in threads:
                r = res[(k, m, t)]
                runs.append({
                    "machine": m, "kernel": k, "threads": t, "ns": r["ns"], "mops": r["mops"],
                    "speedup": base / r["ns"],
                    "paper_speedup": PAPER_SPEEDUP.get(k, {}).get(t) if a.cls == "S" else None,
                    "counters": counters(r["stats"]),
                })
    return {"machines": machines, "kernels": kernels, "threads": threads, "class": a.cls,
            "sets": a.sets, "runs": runs}


if __name__ == "__main__":
    sys.exit(main())
