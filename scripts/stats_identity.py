#!/usr/bin/env python3
"""Check that a change to the timing model's host code left its results alone.

    scripts/stats_identity.py record OUT.json [--rvnvmm BIN] [--size test|ref] [--quick] [--boot]
    scripts/stats_identity.py check BASE.json [--rvnvmm BIN] [--size test|ref] [--quick] [--boot]

`record` runs, with the given rvnvmm binary (default $RVNVMM_BIN, else
target/release/rvnvmm):

* every workload of the suite (guest/workloads, docs/workloads.md) at SIZE
  (default `test`) in the timing model with its heap in NVMM, on
  `freedom-u500` and on `zc706`, keeping each run's `--stats` JSON without
  the host's figures (`host_seconds`, `mips`);
* `experiments/seed000_tables.py --size 16777216` and
  `experiments/seed001_bandwidth.py` (their whole output);

* with `--boot`, Debian's kernel booted on the default machine's 4 harts to
  power-off (`rvnvmm.rc=1`) in the timing and in the functional model,
  keeping each boot's `--stats` JSON without the host's figures and its
  console output (the images of `scripts/setup.sh`, as `rvnvmm boot`
  finds them);

and writes all of it to OUT.json. `check` does the same and compares it with
BASE.json (recorded by an older build), naming every run whose statistics
moved and the first differing fields; it exits with status 1 if any did.
Statistics the new build adds (keys BASE.json lacks) are listed, not
compared.
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
    """The statistics without the fields that measure the host, at any
    depth."""
    if isinstance(stats, dict):
        return {k: strip_host(v) for k, v in stats.items() if k not in HOST_FIELDS}
    if isinstance(stats, list):
        return [strip_host(v) for v in stats]
    return stats


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


BOOT_APPEND = "console=ttyS0 rvnvmm.rc=1 quiet"


def run_boots(rvnvmm, workdir):
    """{"MODEL": {"stats": ..., "console": ...}} of the 4-hart boot."""
    out = {}
    for model in ("timing", "functional"):
        stats_file = workdir / f"boot-{model}.json"
        cmd = [rvnvmm, "boot", "--append", BOOT_APPEND, "--max-insns", "20000000000",
               "--set", f"machine.model={model}", "--stats", str(stats_file)]
        p = subprocess.run(cmd, cwd=workdir, stdin=subprocess.DEVNULL, capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"boot ({model}): exit status {p.returncode}:\n{p.stderr.decode(errors='replace')[-2000:]}")
        out[model] = {
            "stats": strip_host(json.loads(stats_file.read_text())),
            "console": p.stdout.decode(errors="replace"),
        }
        print(f"  boot ({model}): {out[model]['stats']['instructions']} instructions", file=sys.stderr)
    return out


def record(rvnvmm, size, quick, boot):
    with tempfile.TemporaryDirectory(prefix="rvnvmm-identity-") as d:
        result = {"size": size, "runs": run_workloads(rvnvmm, size, Path(d))}
        if boot:
            result["boot"] = run_boots(rvnvmm, Path(d))
    if not quick:
        result["seed"] = run_seed_tables(rvnvmm)
    return result


def differences(base, new, path="", added=None):
    """Paths (a.b.c) where two JSON values differ, with both values. A key
    only the new results have is a statistic added, not one that moved: it
    goes to `added` (a list), if given, instead."""
    if isinstance(base, dict) and isinstance(new, dict):
        diffs = []
        for k in sorted(set(base) | set(new)):
            sub = f"{path}.{k}" if path else k
            if k not in base and added is not None:
                added.append(sub)
                continue
            diffs += differences(base.get(k), new.get(k), sub, added)
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
    ap.add_argument("--boot", action="store_true", help="add the 4-hart Linux boot in both models")
    a = ap.parse_args()
    rvnvmm = str(Path(a.rvnvmm).resolve())
    if not Path(rvnvmm).is_file():
        sys.exit(f"{rvnvmm} not found: run cargo build --release -p rvnvmm")
    if a.action == "record":
        Path(a.file).write_text(json.dumps(record(rvnvmm, a.size, a.quick, a.boot), indent=1, sort_keys=True) + "\n")
        return
    base = json.loads(Path(a.file).read_text())
    if base["size"] != a.size:
        sys.exit(f"{a.file} was recorded at size {base['size']}, not {a.size}")
    new = record(rvnvmm, a.size, a.quick or "seed" not in base, a.boot and "boot" in base)
    if a.quick:
        base.pop("seed", None)
    if not a.boot:
        base.pop("boot", None)
    elif "boot" not in base:
        sys.exit(f"{a.file} has no boot: record it with --boot")
    added = []
    diffs = differences(base, new, added=added)
    new_keys = sorted({p.split(".")[-1] for p in added})
    if added:
        print(f"added (not compared): {len(added)} statistics, keys {', '.join(new_keys)}")
    for path, old, now in diffs[:40]:
        print(f"{path}: {json.dumps(old)[:200]} -> {json.dumps(now)[:200]}")
    if diffs:
        sys.exit(f"{len(diffs)} results differ")
    print(f"identical: {len(new['runs'])} runs" + (", both seed tables" if "seed" in new else "")
          + (", the boot in both models" if "boot" in new else ""))


if __name__ == "__main__":
    main()
