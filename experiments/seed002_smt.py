#!/usr/bin/env python3
"""Seed 002 §4.2 (Figs. 2-3) and §4.3 (Figs. 5-6): an IO task and a CPU task co-scheduled on SMT cores, beside the paper.

    python3 experiments/seed002_smt.py [--io writes|pmdk|pmdk-stock]
                                       [--tasks idiv,matmul,matadd] [--sizes idiv=100000,200000 ...]
                                       [--memories pm,dram] [--config smt-pm] [--set KEY=VALUE]
                                       [--jobs N] [--out DIR]

guest/emu/smt_tasks (`make -C guest`) runs pairs of an IO-intensive task
(random 256-byte writes: memmove to DRAM, or memmove + clean of each line
+ fence to persistent memory through libnvmm) and a CPU-intensive task
((a) idiv: divides in assembly, no memory access; (b) matmul; (c) matadd),
every thread pinned with sched_setaffinity, on `smt-pm` (seed 002 Table 1
scaled, 2 cores) in the four settings of seed 002 Fig. 1:

    smt-cross      2 x 2 threads; core 0: IO on CPU 0, CPU task on CPU 1;
                   core 1 the same (CPUs 2, 3)
    smt-parallel   2 x 2 threads; both IO tasks on core 0 (CPUs 0, 1), both
                   CPU tasks on core 1 (CPUs 2, 3)
    nosmt          2 x 1 thread; one IO task on core 0, one CPU task on core 1
    nosmt-2        2 x 1 thread; an IO and a CPU task time-shared on each core
                   in slices of user.time_slice_ns, scaled with the tasks:
                   100 us (--slice-ns), as Linux's 3 ms is to the paper's
                   tasks of seconds

It prints Fig. 2 (the CPU tasks' average time relative to smt-cross) and
Fig. 3 (the IO tasks' summed throughput relative to smt-cross), persistent
memory and DRAM side by side with the ratios seed 002's text gives, and
then the per-thread statistics (--stats) that explain them: for the CPU
and the IO threads, the share of their cycles lost to memory stalls, to
issue slots a sibling took and to a shared unit a sibling held. Times are
the guest's clock (simulated time). Results go to DIR/results.json.

--io pmdk is §4.3: the IO task is instead a red-black tree in a libpmemobj
pool (guest/pmdk/rbtree.h; smt_tasks_pmdk_cbo, Debian's riscv64 PMDK 1.13)
in the NVMM-backed directory (user.pmem_dir=/mnt/pmem): 1000 keys inserted
first, then a random key removed and a new one inserted, one transaction
each, until the CPU task ends; its throughput is transactions per second,
and the trees are checked afterwards. libpmem's flushes go through the cbo
shim (guest/pmdk/libpmem_cbo.c: a cbo.clean of every line, then a fence,
what libpmem does with clwb + sfence on the paper's x86); --io pmdk-stock
runs Debian's libpmem as it is (no write-back, `fence w,w`). It needs the
sysroot of scripts/setup.sh (RVNVMM_SYSROOT, or scripts/paths.sh's file).
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
EMU = ROOT / "guest" / "build" / "emu"
# --io -> (program, the IO memory argument it runs with)
IO_KINDS = {
    "writes": ("smt_tasks", None),
    "pmdk": ("smt_tasks_pmdk_cbo", "pmdk"),
    "pmdk-stock": ("smt_tasks_pmdk", "pmdk"),
}

# setting -> (threads per core, IO:CPU pairs of logical CPUs)
SETTINGS = {
    "smt-cross": (2, "0:1,2:3"),
    "smt-parallel": (2, "0:2,1:3"),
    "nosmt": (1, "0:1"),
    "nosmt-2": (1, "0:0,1:1"),
}
SIZES = {"idiv": [50000, 100000, 200000], "matmul": [32, 48, 64], "matadd": [64, 128, 192]}
# §4.3's CPU tasks run long enough for about a thousand transactions.
PMDK_SIZES = {"idiv": [400000], "matmul": [64], "matadd": [192]}

# Seed 002 §4.2.3 as its text states it (the figures are plots): time of a
# setting over smt-cross's ("smt-cross is N% faster" read as 1 + N/100; the
# text's nosmt figure covers its three nosmt settings).
PAPER_FIG2 = {
    ("idiv", "pm"): {"smt-parallel": 1.15, "nosmt": 1.70, "nosmt-2": 1.70},
    ("idiv", "dram"): {"smt-parallel": 0.98, "nosmt": 1.44, "nosmt-2": 1.44},
    ("matmul", "pm"): {"smt-parallel": 1.15, "nosmt": 1.15, "nosmt-2": 1.15},
    ("matmul", "dram"): {"smt-parallel": 1.07, "nosmt": 1.07, "nosmt-2": 1.07},
    ("matadd", "pm"): {"smt-parallel": 1.00, "nosmt": 1.27, "nosmt-2": 1.27},
    ("matadd", "dram"): {"smt-parallel": 0.92, "nosmt": 1.14, "nosmt-2": 1.14},
}
# Fig. 3, IO throughput of a setting over smt-cross's, for every CPU task:
# on PM smt-cross is 7-8% above smt-parallel and about 2x nosmt; on DRAM
# about 25% above smt-parallel and 50% above nosmt.
PAPER_FIG3 = {
    "pm": {"smt-parallel": 1 / 1.075, "nosmt": 0.5, "nosmt-2": 0.5},
    "dram": {"smt-parallel": 1 / 1.25, "nosmt": 1 / 1.5, "nosmt-2": 1 / 1.5},
}


# Seed 002 §4.3.3 states orderings only (Figs. 5-6 are plots): for every
# benchmark the PMDK task's throughput is highest in smt-cross and higher in
# smt-parallel than in nosmt; the CPU task is, for most benchmarks, fastest
# in smt-cross, then smt-parallel, then nosmt ("nosmt-2t"). Its two
# time-shared nosmt settings are left out of the figures (Linux's scheduler
# gave one task most of the core).
PAPER_43 = "smt-cross > smt-parallel > nosmt"


def rvnvmm_bin():
    return os.environ.get("RVNVMM_BIN") or str(ROOT / "target" / "release" / "rvnvmm")


def sysroot():
    """RVNVMM_SYSROOT, else the one scripts/setup.sh recorded (scripts/paths.sh)."""
    if os.environ.get("RVNVMM_SYSROOT"):
        return os.environ["RVNVMM_SYSROOT"]
    cache = Path(os.environ.get("RVNVMM_CACHE") or Path.home() / ".cache" / "rvnvmm")
    env = cache / "paths.env"
    if env.is_file():
        for line in env.read_text().splitlines():
            k, _, v = line.partition("=")
            if k.strip() == "RVNVMM_SYSROOT":
                return v.strip().strip('"')
    raise SystemExit("no sysroot for --io pmdk: run scripts/setup.sh (or set RVNVMM_SYSROOT)")


def run_one(config, sets, prog, extra, task, size, memory, setting, out):
    """One run of `prog` (smt_tasks or smt_tasks_pmdk*); `sets` are --set
    KEY=VALUE strings, `extra` more rvnvmm run options."""
    tpc, pairs = SETTINGS[setting]
    name = f"{task}.{size}.{memory}.{setting}"
    stats = out / f"{name}.json"
    cmd = [rvnvmm_bin(), "run", "--config", config,
           "--set", "machine.cores=2", "--set", f"machine.threads_per_core={tpc}",
           *[w for kv in sets for w in ("--set", kv)], *extra, *workloads.guest_view(),
           "--no-progress", "--stats", str(stats), "--", workloads.guest_path(prog), task, str(size),
           memory, pairs]
    with tempfile.TemporaryDirectory(prefix="rvnvmm-s002-") as cwd:
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": cwd, "TMPDIR": cwd}
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True)
    (out / f"{name}.out").write_text(p.stdout)
    cpu = re.search(r"^cpu_time_ns (\d+)", p.stdout, re.M)
    io = re.search(r"^io_throughput_(?:mbps|tps) ([\d.]+)", p.stdout, re.M)
    if p.returncode != 0 or not cpu or not io:
        raise SystemExit(f"{name}: exit {p.returncode}: {p.stdout[-300:]}{p.stderr[-300:]}")
    s = json.loads(stats.read_text())
    # Threads in creation order: main, then per pair its IO thread (if any)
    # and its CPU thread.
    threads = s["threads"][1:]
    io_threads, cpu_threads = [], []
    k = 0
    for pair in pairs.split(","):
        if not pair.startswith("-"):
            io_threads.append(threads[k])
            k += 1
        cpu_threads.append(threads[k])
        k += 1
    io_key = "io_tps" if memory == "pmdk" else "io_mbps"
    return {"cpu_ns": int(cpu.group(1)), io_key: float(io.group(1)),
            "cpu_threads": cpu_threads, "io_threads": io_threads,
            "clock_hz": s.get("clock_hz")}


def shares(ts, ns, hz):
    """Average per thread: memory stall, issue wait and unit wait as shares of
    the thread's cycles over `ns`; with `ns` None, of its own busy cycles
    (instructions + those three), for threads that ran before the CPU task
    started (the PMDK task's warm-up)."""
    if not ts:
        return (0.0, 0.0, 0.0)
    keys = ("memory_stall_cycles", "issue_wait_cycles", "unit_wait_cycles")
    if ns is None:
        busy = lambda t: t["instructions"] + sum(t[k] for k in keys)
        return tuple(sum(t[k] / busy(t) for t in ts) / len(ts) for k in keys)
    cycles = ns * hz / 1e9
    if cycles <= 0:
        return (0.0, 0.0, 0.0)
    f = lambda k: sum(t[k] for t in ts) / len(ts) / cycles
    return tuple(f(k) for k in keys)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--io", default="writes", choices=list(IO_KINDS),
                    help="the IO task: §4.2's 256-byte writes (default), or §4.3's PMDK "
                         "red-black tree with the cbo shim (pmdk) or Debian's libpmem (pmdk-stock)")
    ap.add_argument("--tasks", default="idiv,matmul,matadd")
    ap.add_argument("--sizes", action="append", default=[],
                    help="TASK=N,N,... (default idiv=%s, matmul=%s, matadd=%s; with --io pmdk "
                         "idiv=%s, matmul=%s, matadd=%s)" % tuple(
                        ",".join(map(str, d[t])) for d in (SIZES, PMDK_SIZES)
                        for t in ("idiv", "matmul", "matadd")))
    ap.add_argument("--memories", default="pm,dram", help="with --io writes only")
    ap.add_argument("--config", default="smt-pm")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--slice-ns", type=int, default=100_000,
                    help="user.time_slice_ns of the runs (default 100 us)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    prog_name, io_memory = IO_KINDS[a.io]
    prog = EMU / prog_name
    if not prog.exists():
        raise SystemExit(f"{prog} is missing: run make -C guest"
                         + (" (after scripts/setup.sh: it needs the sysroot's PMDK)"
                            if io_memory else ""))
    sizes = dict(PMDK_SIZES if io_memory else SIZES)
    for spec in a.sizes:
        t, _, v = spec.partition("=")
        if t not in SIZES or not v:
            raise SystemExit(f"--sizes {spec}: expected TASK=N,N with TASK one of {list(SIZES)}")
        sizes[t] = [int(x) for x in v.split(",")]
    tasks = a.tasks.split(",")
    memories = [io_memory] if io_memory else a.memories.split(",")
    for t in tasks:
        if t not in SIZES:
            raise SystemExit(f"unknown task {t}: one of {list(SIZES)}")
    for m in memories:
        if m not in ("pm", "dram", "pmdk"):
            raise SystemExit(f"unknown memory {m}: pm or dram")
    out = Path(a.out or tempfile.mkdtemp(prefix="seed002-smt-"))
    out.mkdir(parents=True, exist_ok=True)

    sets = [f"user.time_slice_ns={a.slice_ns}", *a.set]
    extra = []
    if io_memory:
        sets.append("user.pmem_dir=/mnt/pmem")
        extra = ["--sysroot", sysroot()]
    keys = [(t, n, m, s) for t in tasks for n in sizes[t] for m in memories for s in SETTINGS]
    res = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run_one, a.config, sets, prog, extra, *k, out): k for k in keys}
        for f in concurrent.futures.as_completed(futs):
            res[futs[f]] = f.result()
    hz = next(iter(res.values()))["clock_hz"] or 2_100_000_000

    others = [s for s in SETTINGS if s != "smt-cross"]
    if io_memory:
        io_key, io_unit = "io_tps", "tx/s"
        for fig, title, key in (
            (5, "PMDK rbtree throughput (transactions/s) relative to smt-cross (higher is more)",
             "io_tps"),
            (6, "CPU-task time relative to smt-cross (lower is faster)", "cpu_ns"),
        ):
            print(f"\nFig. {fig}: {title}; model (paper: {PAPER_43} for "
                  f"{'throughput' if fig == 5 else 'speed'}; nosmt-2 left out of its figures)")
            print("| task | size | " + " | ".join(others) + " | model's order |")
            print("|---|---|" + "---|" * (len(others) + 1))
            for t in tasks:
                for n in sizes[t]:
                    base = res[(t, n, io_memory, "smt-cross")][key]
                    ratios = {s: res[(t, n, io_memory, s)][key] / base for s in SETTINGS}
                    better = (lambda s: -ratios[s]) if fig == 5 else (lambda s: ratios[s])
                    order = " > ".join(sorted((s for s in SETTINGS if s != "nosmt-2"), key=better))
                    print(f"| {t} | {n} | " + " | ".join(f"{ratios[s]:.2f}" for s in others)
                          + f" | {order} |")
    else:
        io_key, io_unit = "io_mbps", "MB/s"
        for fig, title, key, paper in (
            (2, "CPU-task time relative to smt-cross (lower is faster)", "cpu_ns",
             lambda t, m, s: PAPER_FIG2[(t, m)][s]),
            (3, "IO throughput relative to smt-cross (higher is more)", "io_mbps",
             lambda t, m, s: PAPER_FIG3[m][s]),
        ):
            print(f"\nFig. {fig}: {title}; model (paper)")
            head = " | ".join(f"{m} {s}" for m in memories for s in others)
            print(f"| task | size | {head} |")
            print("|---|---|" + "---|" * (len(memories) * len(others)))
            for t in tasks:
                for n in sizes[t]:
                    cells = []
                    for m in memories:
                        base = res[(t, n, m, "smt-cross")][key]
                        for s in others:
                            v = res[(t, n, m, s)][key] / base if base else float("nan")
                            cells.append(f"{v:.2f} ({paper(t, m, s):.2f})")
                    print(f"| {t} | {n} | " + " | ".join(cells) + " |")

    print("\nPer-thread statistics, largest size: average share of a thread's cycles "
          "(memory stall / issue wait / unit wait), CPU threads then IO threads"
          + (" (the PMDK threads: of their busy cycles, instructions + stalls + waits, "
             "warm-up included)" if io_memory else ""))
    print(f"| task | memory | setting | CPU task ms | IO {io_unit} | CPU threads | IO threads |")
    print("|---|---|---|---|---|---|---|")
    for t in tasks:
        n = sizes[t][-1]
        for m in memories:
            for s in SETTINGS:
                r = res[(t, n, m, s)]
                c = shares(r["cpu_threads"], r["cpu_ns"], hz)
                i = shares(r["io_threads"], None if io_memory else r["cpu_ns"], hz)
                fmt = lambda x: " / ".join(f"{v:.2f}" for v in x)
                print(f"| {t} | {m} | {s} | {r['cpu_ns'] / 1e6:.3f} | {r[io_key]:.1f} | "
                      f"{fmt(c)} | {fmt(i)} |")

    (out / "results.json").write_text(json.dumps(
        [{"task": k[0], "size": k[1], "memory": k[2], "setting": k[3], **v}
         for k, v in sorted(res.items())], indent=1))
    print(f"\nruns and results.json in {out}")


if __name__ == "__main__":
    main()
