#!/usr/bin/env python3
"""Check that a change to the timing model's host code left its results alone.

    scripts/stats_identity.py record OUT.json [--rvnvmm BIN] [--size test|ref] [--quick]
    scripts/stats_identity.py check BASE.json [--rvnvmm BIN] [--size test|ref] [--quick]

`record` runs, with the given rvnvmm binary (default $RVNVMM_BIN, else
target/release/rvnvmm):

* every workload of the suite (guest/workloads, docs/workloads.md) at SIZE
  (default `test`) in the timing model with its heap in NVMM, on
  `freedom-u500` and on `zc706`, keeping each run's `--stats` JSON without
  the host's figures (`host_seconds`, `mips`);
* `experiments/seed000_tables.py --size 16777216` and
  `experiments/seed001_bandwidth.py` (their whole output);

and writes all of it to OUT.json. `check` does the same and compares it with
BASE.json (recorded by an older build), naming every run whose statistics
moved and the first differing fields; it exits with status 1 if any did.
`--quick` leaves out the seed tables (the slowest part).

Every run gets a fixed working directory and environment, so that the
guest's start-up (its stack holds the environment and paths) is the same in
both builds.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "guest" / "workloads"))
import workloads  # noqa: E402

MACHINES = ("freedom-u500", "zc706")
HOST_FIELDS = ("host_seconds", "mips")


def strip_host(stats):
    """The statistics without the fields that measure the host."""
    return {k: v for k, v in stats.items() if k not in HOST_FIELDS}


def run_workloads(rvnvmm, size, workdir):
    """{"MACHINE/WORKLOAD": stats} for the whole suite on each machine."""
    os.environ["RVNVMM_BIN"] = rvnvmm
    out = {}
    cwd = workdir / "cwd"
    cwd.mkdir(exist_ok=True)
    for machine in MACHINES:
        for w in workloads.load_manifest()["workload"]:
            key = f"{machine}/{w['name']}"
            stats_file = workdir / "stats.json"
            opts = ["--config", machine, "--set", "user.heap=nvmm", "--set", "machine.model=timing",
                    "--stats", str(stats_file), "--no-progress"]
            cmd = workloads.command(w, size, opts)
            p = subprocess.run(cmd, cwd=cwd, env=workloads.guest_env(str(cwd)),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            if p.returncode != w["status"]:
                raise SystemExit(f"{key}: exit status {p.returncode}, expected {w['status']}")
            out[key] = strip_host(json.loads(stats_file.read_text()))
            print(f"  {key}: {out[key]['instructions']} instructions", file=sys.stderr)
    return out


def run_seed_tables(rvnvmm):
    """{"SCRIPT": stdout} of the two seed experiments that pin the DRAM model."""
    out = {}
    for script, args in (("seed000_tables.py", ["--size", "16777216"]), ("seed001_bandwidth.py", [])):
        p = subprocess.run([sys.executable, str(REPO / "experiments" / script), "--rvnvmm", rvnvmm, *args],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{script} failed:\n{p.stderr}")
        out[script] = p.stdout
        print(f"  {script}: {len(p.stdout.splitlines())} lines", file=sys.stderr)
    return out


def record(rvnvmm, size, quick):
    with tempfile.TemporaryDirectory(prefix="rvnvmm-identity-") as d:
        result = {"size": size, "runs": run_workloads(rvnvmm, size, Path(d))}
    if not quick:
        result["seed"] = run_seed_tables(rvnvmm)
    return result


def differences(base, new, path=""):
    """Paths (a.b.c) where two JSON values differ, with both values."""
    if isinstance(base, dict) and isinstance(new, dict):
        diffs = []
        for k in sorted(set(base) | set(new)):
            diffs += differences(base.get(k), new.get(k), f"{path}.{k}" if path else k)
        return diffs
    return [] if base == new else [(path, base, new)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("record", "check"))
    ap.add_argument("file")
    ap.add_argument("--rvnvmm", default=os.environ.get("RVNVMM_BIN")
                    or str(REPO / "target" / "release" / "rvnvmm"))
    ap.add_argument("--size", default="test", choices=("test", "ref"))
    ap.add_argument("--quick", action="store_true", help="leave out the seed tables")
    a = ap.parse_args()
    rvnvmm = str(Path(a.rvnvmm).resolve())
    if not Path(rvnvmm).is_file():
        sys.exit(f"{rvnvmm} not found: run cargo build --release -p rvnvmm")
    if a.action == "record":
        Path(a.file).write_text(json.dumps(record(rvnvmm, a.size, a.quick), indent=1, sort_keys=True) + "\n")
        return
    base = json.loads(Path(a.file).read_text())
    if base["size"] != a.size:
        sys.exit(f"{a.file} was recorded at size {base['size']}, not {a.size}")
    new = record(rvnvmm, a.size, a.quick or "seed" not in base)
    if a.quick:
        base.pop("seed", None)
    diffs = differences(base, new)
    for path, old, now in diffs[:40]:
        print(f"{path}: {json.dumps(old)[:200]} -> {json.dumps(now)[:200]}")
    if diffs:
        sys.exit(f"{len(diffs)} results differ")
    print(f"identical: {len(new['runs'])} runs" + (", both seed tables" if "seed" in new else ""))


if __name__ == "__main__":
    main()
