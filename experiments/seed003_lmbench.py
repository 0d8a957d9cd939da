#!/usr/bin/env python3
"""Seed 003 Figs. 6-7 (Mappi): lmbench-like OS latencies under Linux, one hart against SMP.

    python3 experiments/seed003_lmbench.py [--harts 1,2,4] [--scale N] [--jobs N] [--out DIR]
                                           [--json FILE]

Boots Debian's Linux (the initramfs of scripts/build-initramfs.sh) on the
`mappi` machine with the full timing model, once per hart count, and runs
`guest/emu/lat_os` pinned to CPU 0; one hart stands for the paper's UP
kernel (Debian ships only an SMP kernel: this measures what the second hart
costs, not what SMP support in the kernel costs), two for its SMP Mappi,
four beyond it. Each boot is run a second time without lat_os, so that the
statistics of the measurement alone are the difference (boots are
deterministic). The paper gives its figures as bars only; its text says SMP
costs 10-20% over UP on null call, null I/O, TCP and UDP latency.

Mappi's 64 MiB cannot hold Debian's 6.12 kernel and initramfs, so the
boots have 256 MiB (`memory.dram.size`, with the SDRAM's rows to match);
everything else is configs/mappi.toml. `--json FILE` also writes the
figures, every test and the counters as one JSON object, which
experiments/fidelity.py reads.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RVNVMM = Path(os.environ.get("RVNVMM_BIN") or ROOT / "target" / "release" / "rvnvmm")
MACHINE = ["--config", "mappi", "--set", "machine.model=timing",
           "--set", "memory.dram.size=0x10000000", "--set", "memory.controllers.sdram.rows=32768"]
APPEND = "console=ttyS0 quiet cryptomgr.notests"
#: lat_os's tests the paper's figures show, and how it names them.
FIGURES = [("null call", ["null call"]), ("null I/O", ["null read", "null write"]),
           ("TCP latency", ["tcp round trip"]), ("UDP latency", ["udp round trip"])]
LINE = re.compile(r"^([a-z+/() 0-9]+): ([0-9.]+) (us|MB/s)\s*$")


def initramfs():
    p = subprocess.run(["bash", str(ROOT / "scripts" / "build-initramfs.sh")],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"scripts/build-initramfs.sh failed:\n{p.stderr}")
    return p.stdout.strip().splitlines()[-1]


def boot(initrd, harts, script, stats):
    p = subprocess.run([str(RVNVMM), "boot", *MACHINE, "--smp", str(harts), "--initrd", initrd,
                        "--append", APPEND, "--max-insns", "100000000000",
                        "--stats", str(stats)],
                       input=script, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"boot with {harts} harts exited {p.returncode}:\n{p.stderr[-1500:]}\n"
                         f"{p.stdout[-1500:]}")
    return p.stdout.replace("\r", ""), json.loads(stats.read_text())


def counters(stats):
    """The machine-wide counters that explain an SMP cost."""
    harts = stats["harts"]
    total = lambda f: sum(f(h) for h in harts)  # noqa: E731
    coherence = stats["coherence"]
    return {
        "instructions": stats["instructions"],
        "IPIs received": total(lambda h: h["ipis_received"]),
        "SBI IPI calls": total(lambda h: h["sbi_calls"]["ipi"]),
        "SBI RFENCE calls": total(lambda h: h["sbi_calls"]["rfence"]),
        "AMOs": total(lambda h: h["atomics"]["amos"]),
        "LR/SC": total(lambda h: h["atomics"]["sc"]),
        "SC failures": total(lambda h: h["atomics"]["sc_failures"]),
        "atomic stall cycles": total(lambda h: h["atomics"]["stall_cycles"]),
        "BusRdX": coherence["read_exclusives"],
        "snoop hits": coherence["snoop_hits"],
        "cache-to-cache": coherence["cache_to_cache"],
        "invalidations": coherence["invalidations_sent"],
        "bus busy (us)": stats["bus"]["busy_ns"] / 1000,
    }


def measure(initrd, harts, scale, out):
    run_script = f"taskset -c 0 /opt/rvnvmm/lat_os {scale}\necho lat_os exit $?\npoweroff\n"
    console, full = boot(initrd, harts, run_script, out / f"lat_os-{harts}.json")
    if "lat_os exit 0" not in console:
        raise SystemExit(f"lat_os failed with {harts} harts:\n{console[-2000:]}")
    _, base = boot(initrd, harts, "poweroff\n", out / f"boot-{harts}.json")
    (out / f"lat_os-{harts}.txt").write_text(console)
    results = {}
    for line in console.splitlines():
        m = LINE.match(line.strip())
        if m:
            results[m.group(1)] = float(m.group(2))
    a, b = counters(full), counters(base)
    return results, {k: a[k] - b[k] for k in a}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--harts", default="1,2,4", help="hart counts; the first is the UP baseline")
    ap.add_argument("--scale", type=int, default=1, help="lat_os loop-count scale")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", type=Path, help="write the figures, tests and counters to this file")
    a = ap.parse_args()
    harts = [int(h) for h in a.harts.split(",")]
    out = a.out or Path(tempfile.mkdtemp(prefix="seed003-lmbench-"))
    out.mkdir(parents=True, exist_ok=True)
    initrd = initramfs()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {h: ex.submit(measure, initrd, h, a.scale, out) for h in harts}
        res = {h: f.result() for h, f in futs.items()}

    up = harts[0]
    print(f"Seed 003 Figs. 6-7 on mappi (256 MiB), lat_os scale {a.scale}; "
          f"{up} hart = UP, overhead = time / UP time - 1 (paper: SMP 10-20% over UP)\n")
    head = "".join(f" | {h} hart{'s' if h > 1 else ''}" for h in harts)
    print(f"| test{head} |" + "".join(f" {h} vs {up} |" for h in harts[1:]))
    print("|---" * (1 + 2 * len(harts) - 1) + "|")
    for name, keys in FIGURES:
        vals = {h: sum(res[h][0][k] for k in keys) / len(keys) for h in harts}
        cells = "".join(f" | {vals[h]:.3f} us" for h in harts)
        over = "".join(f" {100 * (vals[h] / vals[up] - 1):+.1f}% |" for h in harts[1:])
        print(f"| {name}{cells} |{over}")
    print("\nEvery lat_os test (us per operation; bandwidths MB/s):\n")
    print(f"| test{head} |")
    print("|---" * (1 + len(harts)) + "|")
    for k in res[up][0]:
        print(f"| {k}" + "".join(f" | {res[h][0].get(k, float('nan')):.3f}" for h in harts) + " |")
    print("\nCounters of the lat_os run (its boot's subtracted):\n")
    print(f"| counter{head} |")
    print("|---" * (1 + len(harts)) + "|")
    for k in res[up][1]:
        print(f"| {k}" + "".join(f" | {res[h][1][k]:,.0f}" for h in harts) + " |")
    print(f"\nconsoles and statistics: {out}")
    if a.json:
        figures = {name: {str(h): sum(res[h][0][k] for k in keys) / len(keys) for h in harts}
                   for name, keys in FIGURES}
        a.json.write_text(json.dumps({
            "harts": harts, "scale": a.scale, "figures_us": figures,
            "tests": {str(h): res[h][0] for h in harts},
            "counters": {str(h): res[h][1] for h in harts},
        }, indent=1) + "\n")


if __name__ == "__main__":
    main()
