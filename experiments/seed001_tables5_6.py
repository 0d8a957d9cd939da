#!/usr/bin/env python3
"""Seed 001 Tables 5-6 (zc706): LLC hit rate and memory access frequency vs normalised time.

    python3 experiments/seed001_tables5_6.py [--size test|ref] [--jobs N] [--only a,b] [--out DIR] [--reuse]

Every workload of the suite runs on `zc706` with the full timing model,
its heap on DRAM (the baseline) and on NVMM (`user.heap=nvmm`) with the
paper's "Additional tRCD/tRP" of 1000 ns (the config's default NVMM
setting). For each it prints the last-level cache's hit rate (Table 5), the
memory access frequency (NVMM requests per simulated second, Table 6) and
the time on NVMM normalised to DRAM, sorted by each, with Spearman's rank
correlation of normalised time against each: the paper finds that LLC hit
rate alone does not predict the slowdown (508.namd vs 541.leela) while
access frequency does better. Linear models of the slowdown on each and on
both (experiments/linfit.py) give R^2 and the leave-one-out error, and the
exceptions under the frequency-only model; OUT/tables5_6.json holds it all.
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
sys.path.insert(0, str(HERE.parent / "guest" / "workloads"))
sys.path.insert(0, str(HERE))
import workloads  # noqa: E402
from linfit import hit_rate_models, spearman  # noqa: E402

SETTINGS = {
    "dram": ["--set", "user.heap=dram"],
    "nvmm": ["--set", "user.heap=nvmm"],
}


def run_one(w, size, setting, out, reuse=False):
    stats = out / f"{w['name']}.{setting}.json"
    if reuse and stats.exists():
        return json.loads(stats.read_text())
    opts = ["--config", "zc706", "--set", "machine.model=timing", "--no-progress",
            "--stats", str(stats), *SETTINGS[setting]]
    with tempfile.TemporaryDirectory(prefix="rvnvmm-s001-") as cwd:
        p = subprocess.run(workloads.command(w, size, opts), cwd=cwd, env=workloads.guest_env(cwd),
                           stdin=subprocess.DEVNULL, capture_output=True)
    if p.returncode != w["status"]:
        raise SystemExit(f"{w['name']} ({setting}) exited {p.returncode}: {p.stderr.decode()[-400:]}")
    return json.loads(stats.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=workloads.SIZES, default="ref")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--reuse", action="store_true",
                    help="take the statistics already in --out instead of running again")
    a = ap.parse_args()
    ws = workloads.load_manifest()["workload"]
    if a.only:
        keep = set(a.only.split(","))
        ws = [w for w in ws if w["name"] in keep]
    out = a.out or Path(tempfile.mkdtemp(prefix="seed001-t56-"))
    out.mkdir(parents=True, exist_ok=True)
    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_one, w, a.size, s, out, a.reuse): (w["name"], s) for w in ws for s in SETTINGS}
        for f in concurrent.futures.as_completed(futs):
            res[futs[f]] = f.result()
    rows = []
    for w in ws:
        d, n = res[(w["name"], "dram")], res[(w["name"], "nvmm")]
        l2 = n["caches"]["l2"]
        rows.append({
            "name": w["name"],
            "llc_hit_rate": l2["hit_rate"],
            "req_per_sec": n["regions"]["nvmm"]["req_per_sec"],
            "norm": n["sim_time_ns"] / d["sim_time_ns"],
        })
    for key, title in (("llc_hit_rate", "Table 5: LLC hit rate"),
                       ("req_per_sec", "Table 6: NVMM accesses per second")):
        print(f"\n{title} vs time on NVMM (+1000 ns tRCD/tRP) / DRAM")
        print(f"{'workload':<10} {key:>14} {'norm. time':>10}")
        for r in sorted(rows, key=lambda r: r[key]):
            v = f"{r[key]:.1%}" if key == "llc_hit_rate" else f"{r[key]:.0f}"
            print(f"{r['name']:<10} {v:>14} {r['norm']:>10.3f}")
        rho = spearman([r[key] for r in rows], [r["norm"] for r in rows])
        print(f"Spearman rho (normalised time vs {key}) = {rho:+.2f}")
    models = hit_rate_models(rows)
    print("\nModels of the slowdown (experiments/linfit.py; LOO: leave-one-out rms error of norm)")
    for name, m in models["fits"].items():
        coef = ", ".join(f"{c:+.3f}" for c in m["beta"])
        print(f"  {name:<30} coefficients {coef:<18} R2 {m['r2']:.3f}  LOO {m['loo_rmse']:.3f}")
    exc = [w for w in models["workloads"] if w["exception"]]
    print("  exceptions under the frequency-only model (below 75% of its leave-one-out prediction): " +
          (", ".join(f"{w['name']} {w['norm']:.3f} (predicted {w['fonly_pred']:.3f})" for w in exc) or "none"))
    (out / "tables5_6.json").write_text(json.dumps({"size": a.size, "rows": rows, "models": models},
                                                   indent=1))
    print(f"\nstatistics in {out}")


if __name__ == "__main__":
    main()
