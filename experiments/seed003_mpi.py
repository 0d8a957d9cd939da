#!/usr/bin/env python3
"""Seed 003 Table 2 with MPI processes: the NAS-like kernels under Linux in the Debian root.

    python3 experiments/seed003_mpi.py [--image IMG] [--harts 2] [--procs 1,2,4]
                                       [--kernels is,mg,cg,ep] [--class S] [--set KEY=VALUE]
                                       [--jobs N] [--out DIR] [--json FILE]

The paper's Table 2 is the MPI build of NPB 2.x, class S, run with 1, 2 and
4 processes on the dual-core Mappi under Linux. This runs the project's MPI
build of the kernels (guest/build/npb-mpi, `make -C guest`) the same way:
`mpirun -np P` of Debian trixie's Open MPI, in the Debian root with Open MPI
(`scripts/build-rootfs.sh --mpi`), on the `mappi` machine (256 MiB, as
experiments/seed003_lmbench.py boots it, since Debian's kernel does not fit
in 64 MiB) with `--harts` harts.

Each kernel gets one boot (the kernels' boots run `--jobs` at a time): a
copy of the image receives the binaries and the marker tool with debugfs,
Linux boots in the functional model with a shell as init, switches to the
timing model (`nvmm-marker switch timing`), and runs the kernel at each
process count between `dump` markers, so each run's counters are the
difference of two statistics snapshots. The time and Mop/s are the
kernel's own (its clock is the guest's, simulated time); the speed-up is
over one process. Every run must verify. `--json FILE` writes every run's
figures and counters as one JSON object.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from seed003_lmbench import counters
from seed003_smp import PAPER_SPEEDUP, PAPER_TIME

ROOT = Path(__file__).resolve().parent.parent
RVNVMM = Path(os.environ.get("RVNVMM_BIN") or ROOT / "target" / "release" / "rvnvmm")
NPB_MPI = ROOT / "guest" / "build" / "npb-mpi"
MARKER = ROOT / "sdk" / "libnvmm" / "build" / "nvmm-marker"
CACHE = Path(os.environ.get("RVNVMM_CACHE") or Path.home() / ".cache" / "rvnvmm")
DEFAULT_IMAGE = CACHE / "rootfs" / "trixie-riscv64-mpi.img"
MACHINE = ["--config", "mappi", "--set", "memory.dram.size=0x10000000",
           "--set", "memory.controllers.sdram.rows=32768"]
APPEND = "console=ttyS0 quiet cryptomgr.notests rvnvmm.root=/dev/vda rvnvmm.init=/bin/sh"
GUEST_DIR = "/opt/rvnvmm"
# The shell is PID 1: mount what Open MPI needs (its launcher talks over
# loopback TCP, its shared-memory transport maps files in /dev/shm).
SETUP = [
    "mount -t proc proc /proc", "mount -t sysfs sys /sys", "mount -t tmpfs tmpfs /tmp",
    "mount -t tmpfs tmpfs /run", "mkdir -p /dev/shm", "mount -t tmpfs tmpfs /dev/shm",
    "hostname rvnvmm", "ifup lo",
]
MPIRUN = "mpirun --allow-run-as-root --oversubscribe --bind-to none"


def prepare_image(image, kernels, out):
    """A copy of `image` holding the kernels and the marker tool in GUEST_DIR."""
    copy = out / "disk.img"
    subprocess.run(["cp", "--sparse=always", str(image), str(copy)], check=True)
    # Replay the journal (the image was powered off by SysRq) before debugfs writes.
    fsck = subprocess.run(["e2fsck", "-fy", str(copy)], capture_output=True, text=True)
    if fsck.returncode > 1:
        raise SystemExit(f"e2fsck of {copy} failed:\n{fsck.stdout[-1000:]}")
    cmds = [f"mkdir {GUEST_DIR}", f"cd {GUEST_DIR}", f"write {MARKER} nvmm-marker",
            "sif nvmm-marker mode 0100755"]
    for k in kernels:
        cmds += [f"write {NPB_MPI / k} {k}", f"sif {k} mode 0100755"]
    p = subprocess.run(["debugfs", "-w", "-f", "-", str(copy)], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True)
    errors = [line for line in p.stderr.splitlines() if not line.startswith("debugfs ")]
    if p.returncode != 0 or errors:
        raise SystemExit(f"debugfs could not write into {copy}:\n" + "\n".join(errors))
    return copy


def run_kernel(kernel, disk, harts, procs, cls, sets, out):
    """Boots a copy of `disk`, runs `kernel` at each process count; per run: output, counters."""
    own = out / f"{kernel}.img"
    subprocess.run(["cp", "--sparse=always", str(disk), str(own)], check=True)
    marker = f"{GUEST_DIR}/nvmm-marker"
    script = [*SETUP, f"{marker} switch timing"]
    for p in procs:
        script += [f"echo '=== {kernel} {p}'", f"{marker} dump {kernel}.{p}:begin",
                   f"{MPIRUN} -np {p} {GUEST_DIR}/{kernel} {cls}",
                   f"{marker} dump {kernel}.{p}:end", f"echo '=== {kernel} {p} exit' $?"]
    script += ["echo o > /proc/sysrq-trigger"]
    stats_path = out / f"{kernel}.json"
    p = subprocess.run([str(RVNVMM), "boot", *MACHINE, *[w for kv in sets for w in ("--set", kv)],
                        "--smp", str(harts), "--disk", str(own),
                        "--append", APPEND, "--fast-forward", "marker",
                        "--max-insns", "400000000000", "--stats", str(stats_path)],
                       input="\n".join(script) + "\n", capture_output=True, text=True)
    own.unlink()
    console = p.stdout.replace("\r", "")
    (out / f"{kernel}.console.txt").write_text(console)
    if p.returncode != 0:
        raise SystemExit(f"the boot for {kernel} exited {p.returncode}:\n{p.stderr[-1500:]}\n"
                         f"{console[-3000:]}")
    stats = json.loads(stats_path.read_text())
    snaps = {s["name"]: s for s in stats["snapshots"]}
    runs = {}
    for n in procs:
        part = console.split(f"=== {kernel} {n}\n", 1)[-1].split(f"=== {kernel} {n} exit", 1)[0]
        if " Verification    =               SUCCESSFUL" not in part:
            raise SystemExit(f"{kernel} with {n} processes did not verify:\n{part[-2000:]}")
        ns = re.search(r"Time in ns += +(\d+)", part)
        mops = re.search(r"Mop/s total += +([\d.]+)", part)
        if not ns or not mops:
            raise SystemExit(f"{kernel} with {n} processes: no time or Mop/s in its output")
        begin, end = snaps[f"{kernel}.{n}:begin"], snaps[f"{kernel}.{n}:end"]
        runs[n] = {"seconds": int(ns.group(1)) / 1e9, "mops": float(mops.group(1)),
                   "run_sim_ms": (end["sim_time_ns"] - begin["sim_time_ns"]) / 1e6,
                   "counters": diff(counters(end["stats"]), counters(begin["stats"]))}
    return runs


def diff(a, b):
    return {k: a[k] - b[k] for k in a}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=DEFAULT_IMAGE,
                    help="the Debian root with Open MPI (scripts/build-rootfs.sh --mpi)")
    ap.add_argument("--harts", type=int, default=2)
    ap.add_argument("--procs", default="1,2,4")
    ap.add_argument("--kernels", default="is,mg,cg,ep")
    ap.add_argument("--class", dest="cls", default="S", choices=["S", "W"])
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="a config key for every boot (repeatable), e.g. core.fpu=60")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", type=Path, help="write every run's figures to this file")
    a = ap.parse_args()
    procs = [int(p) for p in a.procs.split(",")]
    kernels = a.kernels.split(",")
    if 1 not in procs:
        raise SystemExit("--procs must include 1 (the speed-up's base)")
    if not a.image.is_file():
        raise SystemExit(f"{a.image} is missing: build it with `sudo scripts/build-rootfs.sh --mpi`")
    for path in [MARKER, *(NPB_MPI / k for k in kernels)]:
        if not path.is_file():
            raise SystemExit(f"{path} is missing: make -C guest")
    out = a.out or Path(tempfile.mkdtemp(prefix="seed003-mpi-"))
    out.mkdir(parents=True, exist_ok=True)
    disk = prepare_image(a.image, kernels, out)

    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_kernel, k, disk, a.harts, procs, a.cls, a.sets, out): k for k in kernels}
        for f in concurrent.futures.as_completed(futs):
            res[futs[f]] = f.result()
    disk.unlink()

    paper = a.cls == "S"
    extra = "".join(f", {kv}" for kv in a.sets)
    print(f"\nTable 2 with MPI processes (class {a.cls}, mappi with {a.harts} harts, Linux in the"
          f" Debian root, timing model{extra})")
    head = "| kernel | processes | time (s) | Mop/s | speed-up |"
    if paper:
        head += " paper time (s) | paper speed-up |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for k in kernels:
        base = res[k][1]["seconds"]
        for n in procs:
            r = res[k][n]
            r["speedup"] = base / r["seconds"] if r["seconds"] else float("nan")
            row = f"| {k.upper()} | {n} | {r['seconds']:.4f} | {r['mops']:.2f} | {r['speedup']:.3f} |"
            if paper:
                pt, ps = PAPER_TIME.get(k, {}).get(n), PAPER_SPEEDUP.get(k, {}).get(n)
                row += f" {pt if pt is not None else '-'} | {f'{ps:.3f}' if ps is not None else '-'} |"
            print(row)
    names = list(next(iter(res.values()))[procs[0]]["counters"])
    print("\nCounters of each run (between its dump markers: mpirun's start-up and exit included)")
    print("| kernel | processes | run (ms) | " + " | ".join(names) + " |")
    print("|" + "---|" * (3 + len(names)))
    for k in kernels:
        for n in procs:
            c = res[k][n]["counters"]
            cells = [f"{c[x]:.2f}" if isinstance(c[x], float) else str(c[x]) for x in names]
            print(f"| {k.upper()} | {n} | {res[k][n]['run_sim_ms']:.1f} | " + " | ".join(cells) + " |")
    print(f"\nConsoles and statistics: {out}")
    if a.json:
        doc = {"class": a.cls, "harts": a.harts, "procs": procs, "sets": a.sets,
               "runs": {k: {str(n): r for n, r in v.items()} for k, v in res.items()},
               "paper_time": PAPER_TIME, "paper_speedup": PAPER_SPEEDUP}
        a.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
