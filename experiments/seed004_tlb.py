#!/usr/bin/env python3
"""Seed 004 Table 1: strided against contiguous sums under each page policy (freedom-u500, user mode).

    python3 experiments/seed004_tlb.py [--n 128,500] [--pages base,thp,hint] [--reps 2000]
                                       [--set KEY=VALUE] [--jobs N] [--json FILE]

Runs `guest/build/static/tlb_stride REPS -t N` (`make -C guest`) under
`rvnvmm run` with the timing model and the TLBs on, once per `user.pages`
policy and N, and prints each loop's simulated time (the guest's own
clock), the strided / contiguous ratio and, from `--stats`, the DTLB
misses, walk cycles, L1D read misses and the leaf mappings by size (whole
runs: filling the array is included). The paper's Table 1 gives the ratio
on an Alpha, an UltraSPARC and a Pentium 4 with their base pages (21x,
4.3x, 5.3x) and says large pages close the gap. `--json FILE` writes the
same figures as one JSON object, which experiments/fidelity.py reads.
Standard library only.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "guest" / "workloads"))
import workloads  # noqa: E402  (the fixed guest view)
PROGRAM = ROOT / "guest" / "build" / "static" / "tlb_stride"

# Seed 004 Table 1: strided / contiguous time with each machine's base pages.
PAPER_RATIO = {"Alpha 21264": 21.0, "UltraSPARC": 4.3, "Pentium 4": 5.3}


def rvnvmm_bin():
    return os.environ.get("RVNVMM_BIN") or str(ROOT / "target" / "release" / "rvnvmm")


def run_one(n, pages, reps, sets):
    with tempfile.TemporaryDirectory(prefix="rvnvmm-s004-") as tmp:
        stats = Path(tmp) / "stats.json"
        cmd = [rvnvmm_bin(), "run", "--set", "machine.model=timing", "--set", "tlb.enabled=true",
               "--set", f"user.pages={pages}", *[w for kv in sets for w in ("--set", kv)],
               "--no-progress", "--stats", str(stats), *workloads.guest_view(),
               "--", workloads.guest_path(PROGRAM), str(reps), "-t", str(n)]
        p = subprocess.run(cmd, cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"tlb_stride {n} under {pages} exited {p.returncode}: {p.stderr[-400:]}")
        s = json.loads(stats.read_text())
    t = dict(re.findall(r"^(continuous|stride) (\d+)$", p.stdout, re.M))
    if len(t) != 2:
        raise SystemExit(f"tlb_stride {n} under {pages}: no loop times in its output")
    l1d = [v for k, v in s["caches"].items() if k.endswith(".l1d")]
    return {
        "n": n, "pages": pages,
        "continuous_ns": int(t["continuous"]), "strided_ns": int(t["stride"]),
        "ratio": int(t["stride"]) / int(t["continuous"]),
        "dtlb_misses": s["tlb"]["dtlb"]["misses"],
        "walk_cycles": s["tlb"]["walk_cycles"],
        "l1d_read_misses": sum(c["read_misses"] for c in l1d),
        "mappings": s["pages"]["mappings"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="128,500", help="elements summed per loop (<= 500)")
    ap.add_argument("--pages", default="base,thp,hint", help="user.pages policies")
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    a = ap.parse_args()
    if not PROGRAM.exists():
        raise SystemExit(f"{PROGRAM} is missing: make -C guest")
    ns = [int(n) for n in a.n.split(",")]
    policies = a.pages.split(",")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {(n, p): ex.submit(run_one, n, p, a.reps, a.sets) for n in ns for p in policies}
        rows = [futs[(n, p)].result() for n in ns for p in policies]

    print(f"Seed 004 Table 1 on freedom-u500 (tlb_stride {a.reps} -t N; paper, base pages: "
          + ", ".join(f"{k} {v}x" for k, v in PAPER_RATIO.items()) + ")\n")
    print("| N | user.pages | continuous ms | strided ms | strided / continuous | DTLB misses |"
          " walk cycles | L1D read misses | mappings (4k / 64k / 2m) |")
    print("|---" * 9 + "|")
    for r in rows:
        m = r["mappings"]
        print(f"| {r['n']} | {r['pages']} | {r['continuous_ns'] / 1e6:.2f} | {r['strided_ns'] / 1e6:.2f} |"
              f" {r['ratio']:.2f} | {r['dtlb_misses']} | {r['walk_cycles'] / 1e6:.2f} M |"
              f" {r['l1d_read_misses']} | {m['4k']} / {m['64k']} / {m['2m']} |")
    if a.json:
        a.json.write_text(json.dumps({"reps": a.reps, "sets": a.sets, "paper_ratio": PAPER_RATIO,
                                      "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
