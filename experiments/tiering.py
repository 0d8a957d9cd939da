#!/usr/bin/env python3
"""The tiering study (issue 37 item 5; docs/experiments.md, "Issue 37: tiering").

    python3 experiments/tiering.py [--rvnvmm BIN] [--policies P,...] [--quick]
                                   [--table-mib N] [--hot-mib N] [--phases N]
                                   [--updates N] [--hot-percent N]
                                   [--numa-scan MIN_MS,MAX_MS] [--boot-arg ARG]...
                                   [--page-heat-dir DIR [--page-heat-window NS]]
                                   [--keep DIR] [--json FILE]

GUPS with a moving hot set (`guest/emu/gups_tier.c`) in the full-system
Debian guest on `configs/dram-cxl.toml` made small and two-tier: 256 MiB of
local DRAM (node 0, the fast tier) and 1 GiB of CXL-attached DRAM (node 1),
soft reserved (`memory.cxl.soft_reserved`), so that Debian's ndctl, daxctl
and kmem hot-plug it into a lower memory tier. One boot per placement
policy:

  all-fast       node 0 of 1 GiB, the CXL memory left offline: everything local
  all-slow       `numactl --membind=1`: everything on the CXL node
  interleave     `numactl --interleave=0,1`: pages alternate between the nodes
  first-touch    the default local policy, demotion off, kernel.numa_balancing=0:
                 node 0 until it is full, then node 1, and no page ever moves
  linux-tiering  demotion on reclaim (demotion_enabled=1) and promotion by NUMA
                 balancing (kernel.numa_balancing=2), TPP's design in Linux 6.12,
                 NUMA balancing's scans every 10 to 100 ms (as the boot test;
                 --numa-scan)
  linux-tiering-64  the same with promotion limited to 64 MB/s
                 (kernel.numa_balancing_promote_rate_limit_MBps)
  damon          DAMON (sysfs): one kdamond on node 1's physical memory with the
                 scheme migrate_hot to node 0, one on node 0's with migrate_cold to
                 node 1; numa_balancing 0, demotion on reclaim on (a safety valve)
  oracle         first-touch, and at each phase's start the program moves the
                 pages the ground truth says are that phase's hottest to node 0
                 (GUPS_PLACEMENT, move_pages; the moves are timed): the
                 ground truth is the page heat, by virtual page, of the same
                 workload in user mode (`rvnvmm run --page-heat`), and the
                 budget `--oracle-mib` (default: the hot set's size)

Each boot runs Linux under the functional model up to the workload, which
fills its table and says `switch timing` (`--fast-forward marker`): the
phases, and the kernel's tiering work during them, run on the timing model
at 2 GHz. The table: per policy, each phase's million updates per second
(MUPS) of simulated time and the share of the hot set's pages on node 0 at
the phase's end (move_pages), the total, and the guest's /proc/vmstat
demotions and promotions over the run (after minus before the workload).

With `--page-heat-dir DIR` every boot writes DIR/POLICY.heat, and the
table gains two columns from it: the share of the phases' memory accesses
(line reads and writes at a controller) that reached node 0, and the share
of the true hot set's accesses that did (per window, the hottest pages the
size of the hot set).

Needs `scripts/setup.sh` (the kernel, the sysroot with numactl, ndctl,
daxctl and their libraries), `make -C guest` and `cargo build --release`.
The standard library only, except for the oracle policy and the page-heat
columns, which read page-heat files with the project's reader (numpy): run
them with the venv's Python, `~/.cache/rvnvmm/venv/bin/python3`.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

POLICIES = ["all-fast", "all-slow", "interleave", "first-touch", "linux-tiering",
            "linux-tiering-64", "damon", "oracle"]
DEFAULT_POLICIES = POLICIES
# Where the oracle's placement lies on the disk.
PLACEMENT = "/mnt/placement"
# The ground truth's window: a phase lasts hundreds of ms of simulated time.
ORACLE_WINDOW_NS = 10_000_000

# The two-tier machine: dram-cxl with node 0 small, so that the table does
# not fit in it, and the CXL node soft reserved (a pmem-region to Linux).
FAST_BYTES = 256 << 20
CXL_BYTES = 1 << 30
# all-fast: node 0 holds everything (the CXL memory is never onlined).
ALL_FAST_BYTES = 1 << 30
MACHINE = [
    "--config", "dram-cxl",
    "--set", "memory.cxl.soft_reserved=true",
    "--set", f"memory.cxl.size={CXL_BYTES:#x}",
]

FULL = dict(table_mib=512, hot_mib=32, phases=4, updates=4_000_000, hot_percent=90)
QUICK = dict(table_mib=192, hot_mib=16, phases=3, updates=400_000, hot_percent=90)
# The server workload (--workload memcached): Debian's memcached, loaded by
# kv_zipf with KEYS items of VALUE_BYTES, then PHASES phases of GETS Zipfian
# gets whose popular keys move each phase. The data is 1.5 times node 0's
# free memory at the shell.
KV_FULL = dict(keys=40_000, value_bytes=4096, phases=4, gets=10_000, memory_mib=320)
KV_QUICK = dict(keys=30_000, value_bytes=4096, phases=3, gets=3_000, memory_mib=256)
# What the server workload's disk adds: the server, the libraries it loads
# that the tools above do not, and the load generator.
SERVER_FILES = ["usr/bin/memcached"] + [
    f"usr/lib/riscv64-linux-gnu/{lib}"
    for lib in ["libevent-2.1.so.7", "libsasl2.so.2", "libm.so.6", "libssl.so.3"]
]

# What the guest runs from the disk, through the disk's own loader.
LOADER = "/mnt/ld-linux-riscv64-lp64d.so.1 --library-path /mnt"
SYSROOT_FILES = [
    "usr/bin/numactl",
    "usr/bin/ndctl",
    "usr/bin/daxctl",
    "lib/ld-linux-riscv64-lp64d.so.1",
] + [
    f"usr/lib/riscv64-linux-gnu/{lib}"
    for lib in [
        "libnuma.so.1", "libc.so.6", "libndctl.so.6", "libdaxctl.so.1", "libuuid.so.1",
        "libjson-c.so.5", "libkeyutils.so.1", "libiniparser.so.4", "libkmod.so.2",
        "libcrypto.so.3", "libz.so.1", "libzstd.so.1", "libudev.so.1", "libcap.so.2",
    ]
]

VMSTAT = r"^(pgdemote|pgpromote|pgmigrate_success|numa_hint_faults |numa_pages_migrated)"

# The guest's shell: the disk mounted, then the CXL node hot-plugged.
MOUNT = (
    "for m in $(cat /lib/modules/root-order); do insmod /lib/modules/$m; done; "
    "mount -t ext4 -o ro /dev/vda /mnt\n"
)
HOTPLUG = (
    "for i in $(seq 100); do [ -e /sys/bus/nd/devices/namespace0.0 ] && break; sleep 0.1; done\n"
    f"{LOADER} /mnt/ndctl create-namespace -f -e namespace0.0 -m devdax >/dev/null && "
    f"insmod /mnt/kmem.ko && {LOADER} /mnt/daxctl reconfigure-device --mode=system-ram dax0.0 "
    ">/dev/null\n"
    "for t in /sys/devices/virtual/memory_tiering/memory_tier*; do "
    'echo "tier ${t##*memory_tier} nodes $(cat $t/nodelist)"; done\n'
)


def fail(msg):
    raise SystemExit(f"tiering.py: {msg}")


def paths_env():
    """`scripts/setup.sh`'s paths (RVNVMM_SYSROOT, RVNVMM_MODULES, ...)."""
    cache = Path(os.environ.get("RVNVMM_CACHE", Path.home() / ".cache" / "rvnvmm"))
    env = {}
    f = cache / "paths.env"
    if not f.exists():
        fail(f"{f} not found: run scripts/setup.sh first")
    for line in f.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            env[k.strip()] = v.strip().strip('"')
    return env


def host_tool(name):
    for d in ["/usr/sbin", "/sbin"]:
        if (Path(d) / name).exists():
            return str(Path(d) / name)
    return name


def build_disk(workdir, placement=None, server=False):
    """A small ext4 image with numactl, ndctl, daxctl, their libraries and
    loader, Debian's kmem.ko and gups_tier, flat at its root; and the
    oracle's `placement`, if given."""
    env = paths_env()
    sysroot, modules = Path(env["RVNVMM_SYSROOT"]), Path(env["RVNVMM_MODULES"])
    gups = ROOT / "guest" / "build" / "emu" / "gups_tier"
    if not gups.exists():
        fail(f"{gups} not found: run make -C guest first")
    files = workdir / "disk"
    files.mkdir()
    for rel in SYSROOT_FILES + (SERVER_FILES if server else []):
        src = sysroot / rel
        if not src.exists():
            fail(f"{src} not found: run scripts/setup.sh first")
        shutil.copy(src, files / src.name)
    shutil.copy(gups, files / "gups_tier")
    if server:
        shutil.copy(ROOT / "guest" / "build" / "emu" / "kv_zipf", files / "kv_zipf")
    if placement is not None:
        (files / Path(PLACEMENT).name).write_text(placement)
    ko = subprocess.run(["xz", "-dc", str(modules / "kernel/drivers/dax/kmem.ko.xz")],
                        check=True, capture_output=True).stdout
    (files / "kmem.ko").write_bytes(ko)
    img = workdir / "tiering.img"
    with open(img, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run([host_tool("mkfs.ext4"), "-q", "-F", "-d", str(files), str(img)],
                   check=True, capture_output=True)
    return img


def gups_command(sizes):
    return (f"/mnt/gups_tier {sizes['table_mib']} {sizes['hot_mib']} {sizes['phases']} "
            f"{sizes['updates']} {sizes['hot_percent']}")


def workload_command(sizes, prefix="", env=""):
    """The workload's commands, `prefix` (numactl) before the process whose
    memory is placed, `env` in its environment."""
    if "keys" not in sizes:
        return f"{env} {prefix} {gups_command(sizes)}".strip()
    # memcached wants a user to run as, and the load talks over loopback.
    return ("echo root:x:0:0::/:/bin/sh >> /etc/passwd; ifconfig lo 127.0.0.1 up\n"
            f"{env} {prefix} {LOADER} /mnt/memcached -u root -m {sizes['memory_mib']} -p 11211 "
            "-U 0 -t 1 -l 127.0.0.1 &\nsleep 1\n"
            f"/mnt/kv_zipf 11211 {sizes['keys']} {sizes['value_bytes']} {sizes['phases']} "
            f"{sizes['gets']}")


def damon_script():
    """Two kdamonds on the `paddr` operations set (Linux 6.12's sysfs has one
    context per kdamond): one watches node 1's physical memory and promotes
    what is hot there (migrate_hot, target_nid 0), the other watches node
    0's and demotes what has been idle (migrate_cold, target_nid 1). Each
    node's range is that of its memory blocks in sysfs. The intervals are
    short for a run of a few simulated seconds: a sample every 1 ms, an
    aggregation every 20 ms; hot is accessed in at least 2 of the 20
    samples, cold is untouched for 5 aggregations (100 ms)."""
    return r"""d=/sys/kernel/mm/damon/admin/kdamonds; max=18446744073709551615
node_range() { b=$((0x$(cat /sys/devices/system/memory/block_size_bytes))); lo=; hi=
  for m in /sys/devices/system/node/node$1/memory*; do i=${m##*memory}
    if [ -z "$lo" ] || [ $i -lt $lo ]; then lo=$i; fi; if [ -z "$hi" ] || [ $i -gt $hi ]; then hi=$i; fi
  done; echo $((lo * b)) $(((hi + 1) * b)); }
damon_setup() { k=$d/$1; r=$(node_range $4)
  echo 1 > $k/contexts/nr_contexts; c=$k/contexts/0; echo paddr > $c/operations
  i=$c/monitoring_attrs/intervals; echo 1000 > $i/sample_us; echo 20000 > $i/aggr_us; echo 100000 > $i/update_us
  echo 10 > $c/monitoring_attrs/nr_regions/min; echo 1000 > $c/monitoring_attrs/nr_regions/max
  echo 1 > $c/targets/nr_targets; echo 1 > $c/targets/0/regions/nr_regions
  echo ${r% *} > $c/targets/0/regions/0/start; echo ${r#* } > $c/targets/0/regions/0/end
  echo 1 > $c/schemes/nr_schemes; s=$c/schemes/0; echo $2 > $s/action; echo $3 > $s/target_nid
  # Every range is given: sysfs starts each min and max at 0.
  a=$s/access_pattern; echo 4096 > $a/sz/min; echo $max > $a/sz/max
  echo $5 > $a/nr_accesses/min; echo $6 > $a/nr_accesses/max; echo $7 > $a/age/min; echo $max > $a/age/max
  echo 268435456 > $s/quotas/bytes; echo 1000 > $s/quotas/reset_interval_ms
  echo on > $k/state; echo "damon $1 $2 node$4 [$r) $(cat $k/state)"; }
echo 2 > $d/nr_kdamonds
damon_setup 0 migrate_hot 0 1 2 20 0
damon_setup 1 migrate_cold 1 0 0 0 5
"""


def damon_stats_script():
    return r"""for k in 0 1; do echo update_schemes_stats > $d/$k/state; s=$d/$k/contexts/0/schemes/0
echo "damon_stats $k $(cat $s/action) nr_tried $(cat $s/stats/nr_tried) nr_applied $(cat $s/stats/nr_applied) sz_applied $(cat $s/stats/sz_applied)"; done
"""


def heat_reader():
    """The project's page-heat reader (python/src, numpy)."""
    sys.path.insert(0, str(ROOT / "python" / "src"))
    try:
        from rvnvmm_sweep.heat import read_heat
    except ImportError as e:
        fail(f"reading page heat needs the project's venv ({e}): run "
             "~/.cache/rvnvmm/venv/bin/python3 experiments/tiering.py")
    return read_heat


def oracle_placement(rvnvmm, sizes, workdir, budget_pages):
    """The oracle's placement from the ground truth: the workload run once
    in user mode on the same machine with `--page-heat` (by virtual page),
    and per phase the `budget_pages` table pages with the most accesses.
    Returns the placement file's text ("PHASE FIRST COUNT" lines)."""
    import numpy as np
    heat_path = workdir / "oracle-profile.heat"
    gups = ROOT / "guest" / "build" / "emu" / "gups_tier"
    cmd = [rvnvmm, "run", "--config", "dram-cxl", "--clean-env", "--page-heat", str(heat_path),
           "--page-heat-window", str(ORACLE_WINDOW_NS), str(gups)] + gups_command(sizes).split()[1:]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"the oracle's profile run failed: {' '.join(cmd)}\n{out.stderr}")
    base = int(re.search(r"^table_base (0x[0-9a-f]+) pages (\d+)", out.stdout, re.M)[1], 16)
    times = {int(m[1]): (int(m[2]), int(m[3])) for m in
             re.finditer(r"^phase_time (\d+) start_ns (\d+) end_ns (\d+)", out.stdout, re.M)}
    heat = heat_reader()(heat_path)
    v = heat.virtual
    table_pages = sizes["table_mib"] << 8
    index = v.page - (base >> heat.page_shift)
    window_ns = heat.window_ps // 1000
    lines = []
    for p in range(sizes["phases"]):
        start, end = times[p]
        # Windows wholly inside the phase.
        keep = ((index >= 0) & (index < table_pages) & (v.window * window_ns >= start)
                & ((v.window + 1) * window_ns <= end))
        acc = np.bincount(index[keep], weights=(v.reads + v.writes)[keep], minlength=table_pages)
        hottest = np.sort(np.argsort(-acc, kind="stable")[:budget_pages])
        # Runs of consecutive pages, one line each.
        breaks = np.flatnonzero(np.diff(hottest) != 1)
        for first, last in zip(np.r_[0, breaks + 1], np.r_[breaks, len(hottest) - 1]):
            lines.append(f"{p} {hottest[first]} {hottest[last] - hottest[first] + 1}")
    return "\n".join(lines) + "\n"


def heat_columns(heat_path, sizes, fast_node=0):
    """From a boot's page heat (physical pages): the share of memory
    accesses that reached `fast_node`, and the share of the true hot set's
    that did (per window, the hot set's size in pages with the most
    accesses)."""
    import numpy as np
    heat = heat_reader()(heat_path)
    p = heat.physical
    acc = p.reads + p.writes
    node = heat.node_of(p.page)
    total = acc.sum()
    # memcached's: a tenth of its data, about where a Zipf(0.99) load's
    # popular keys take most of the gets.
    hot_pages = (sizes["hot_mib"] << 8 if "hot_mib" in sizes
                 else max(1, sizes["keys"] * sizes["value_bytes"] // 4096 // 10))
    order = np.lexsort((-acc, p.window))
    window, acc_s, node_s = p.window[order], acc[order], node[order]
    starts = np.flatnonzero(np.r_[True, window[1:] != window[:-1]])
    rank = np.arange(len(window)) - np.repeat(starts, np.diff(np.r_[starts, len(window)]))
    hot = rank < hot_pages
    hot_total = acc_s[hot].sum()
    return (acc[node == fast_node].sum() / total if total else float("nan"),
            acc_s[hot & (node_s == fast_node)].sum() / hot_total if hot_total else float("nan"))


def policy_script(policy, sizes, scan=(10, 100)):
    """The guest's commands for `policy`: set-up, the vmstat before, the
    workload, the vmstat after. `scan`: NUMA balancing's first scan delay
    and shortest period, and its longest period, in ms (linux-tiering)."""
    numactl = f"{LOADER} /mnt/numactl"
    # /proc/interrupts' TLB-shootdown row, summed over the CPUs: a migrated
    # page is unmapped, and RISC-V flushes other harts' TLBs by IPI.
    shootdowns = ("awk '/TLB shootdowns/ {{n = 0; for (i = 2; i <= NF; i++) "
                  "if ($i ~ /^[0-9]+$/) n += $i; print \"{0} tlb_shootdowns\", n}}' /proc/interrupts\n")
    before = f"grep -E '{VMSTAT}' /proc/vmstat | sed 's/^/before /'\n" + shootdowns.format("before")
    after = f"grep -E '{VMSTAT}' /proc/vmstat | sed 's/^/after /'\n" + shootdowns.format("after")
    setup, run, post = "", workload_command(sizes), ""
    if policy == "all-fast":
        pass
    elif policy == "all-slow":
        setup = HOTPLUG
        run = workload_command(sizes, f"{numactl} --membind=1")
    elif policy == "interleave":
        setup = HOTPLUG
        run = workload_command(sizes, f"{numactl} --interleave=0,1")
    elif policy in ("first-touch", "oracle"):
        setup = HOTPLUG + "echo 0 > /sys/kernel/mm/numa/demotion_enabled\n" \
            "echo 0 > /proc/sys/kernel/numa_balancing\n"
        if policy == "oracle":
            run = workload_command(sizes, env=f"GUPS_PLACEMENT={PLACEMENT}")
    elif policy in ("linux-tiering", "linux-tiering-64"):
        setup = HOTPLUG + (
            "echo 1 > /sys/kernel/mm/numa/demotion_enabled\n"
            "echo 2 > /proc/sys/kernel/numa_balancing\n"
            "mount -t debugfs none /sys/kernel/debug\n"
            "n=/sys/kernel/debug/sched/numa_balancing; "
            f"echo {scan[0]} > $n/scan_delay_ms; echo {scan[0]} > $n/scan_period_min_ms; "
            f"echo {scan[1]} > $n/scan_period_max_ms\n"
        )
        if policy == "linux-tiering-64":
            # A promotion budget: while node 0 lacks free memory, Linux
            # promotes at most this much a second and tunes its hot
            # threshold to it (the default, 65536, is no limit here).
            setup += "echo 64 > /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps\n"
    elif policy == "damon":
        # Demotion on reclaim stays on as a safety valve: migrate_hot fills
        # node 0 up to its watermark, and with nothing to demote under
        # pressure but migrate_cold's slow pace the kernel's own
        # allocations (node 0 only: node 1 is all ZONE_MOVABLE) can fail:
        # an OOM kill, seen in a functional run.
        setup = HOTPLUG + "echo 1 > /sys/kernel/mm/numa/demotion_enabled\n" \
            "echo 0 > /proc/sys/kernel/numa_balancing\n" + damon_script()
        post = damon_stats_script()
    else:
        fail(f"unknown policy '{policy}'; known: {', '.join(POLICIES)}")
    # Reserve for the kernel: node 0 is the only node with memory outside
    # ZONE_MOVABLE, and on a 256 MiB node the default watermarks leave
    # under 1 MiB between the user pages' fallback point and the kernel's
    # minimum, so with nothing to demote the workload's own page tables
    # would find node 0 full (an OOM kill) while node 1 has room.
    setup += "echo 16384 > /proc/sys/vm/min_free_kbytes\n"
    return (f"{MOUNT}{setup}{before}echo workload start\n{run}\necho workload status $?\n"
            f"{after}{post}poweroff\n")


def boot(rvnvmm, policy, sizes, img, workdir, heat=None, heat_window=None, scan=(10, 100),
         extra=()):
    """One boot of `policy`: the console, the statistics and host seconds."""
    stats = workdir / f"{policy}.json"
    fast = ALL_FAST_BYTES if policy == "all-fast" else FAST_BYTES
    cmd = [rvnvmm, "boot", *MACHINE, "--set", f"memory.dram.size={fast:#x}",
           "--disk", str(img), "--fast-forward", "marker", "--stats", str(stats),
           "--max-insns", "200000000000",
           "--append", "console=ttyS0 quiet cryptomgr.notests"]
    cmd += [a.replace("{policy}", policy) for a in extra]
    if heat is not None:
        cmd += ["--page-heat", str(heat)]
        if heat_window is not None:
            cmd += ["--page-heat-window", str(heat_window)]
    script = policy_script(policy, sizes, scan)
    # The console goes to a file as it comes, to follow a long run.
    log = workdir / f"{policy}.console"
    start = time.monotonic()
    with open(log, "w") as out:
        p = subprocess.run(cmd, input=script, stdout=out, stderr=subprocess.PIPE, text=True)
    host = time.monotonic() - start
    console = log.read_text(errors="replace").replace("\r", "")
    if p.returncode != 0:
        fail(f"{policy}: {' '.join(cmd)} exited {p.returncode}:\n{console[-3000:]}\n{p.stderr[-2000:]}")
    return console, json.loads(stats.read_text()), host, cmd


def parse(policy, console, sizes):
    lines = [l.strip() for l in console.splitlines()]
    phases = []
    total = None
    for l in lines:
        m = re.match(r"phase (\d+) hot_slot (\d+) updates (\d+) ns (\d+) mups ([\d.]+) "
                     r"hot_node0 (\d+) hot_pages (\d+) table_node0 (\d+) table_pages (\d+)", l)
        if m:
            v = [int(x) if "." not in x else float(x) for x in m.groups()]
            phases.append(dict(phase=v[0], slot=v[1], updates=v[2], ns=v[3], mups=v[4],
                               hot_node0=v[5], hot_pages=v[6], table_node0=v[7], table_pages=v[8]))
        m = re.match(r"total updates (\d+) ns (\d+) mups ([\d.]+)", l)
        if m:
            total = dict(updates=int(m[1]), ns=int(m[2]), mups=float(m[3]))
        # kv_zipf's: the rate is thousands of gets a second, where the hot
        # set lies is not asked.
        m = re.match(r"phase (\d+) gets (\d+) hits (\d+) seconds ([\d.]+) kgets_per_s ([\d.]+)", l)
        if m:
            phases.append(dict(phase=int(m[1]), updates=int(m[2]), ns=round(float(m[4]) * 1e9),
                               mups=float(m[5]), hot_node0=None, hot_pages=None))
        m = re.match(r"total gets (\d+) misses (\d+) seconds ([\d.]+) kgets_per_s ([\d.]+)", l)
        if m:
            total = dict(updates=int(m[1]), ns=round(float(m[3]) * 1e9), mups=float(m[4]))
    status = next((l.split()[-1] for l in lines if l.startswith("workload status ")), None)
    if status != "0" or total is None or len(phases) != sizes["phases"]:
        fail(f"{policy}: the workload did not run to its end (status {status}):\n"
             + "\n".join(lines[-40:]))

    def counters(prefix):
        out = {}
        for l in lines:
            if l.startswith(prefix):
                parts = l[len(prefix):].split()
                if len(parts) == 2 and parts[1].isdigit():
                    out[parts[0]] = int(parts[1])
        return out

    before, after = counters("before "), counters("after ")
    vmstat = {k: after[k] - before.get(k, 0) for k in after}
    damon = {}
    for l in lines:
        m = re.match(r"damon_stats (\d) (\S+) nr_tried (\d+) nr_applied (\d+) sz_applied (\d+)", l)
        if m:
            damon[m[2]] = dict(nr_tried=int(m[3]), nr_applied=int(m[4]), sz_applied=int(m[5]))
    tiers = [l for l in lines if l.startswith("tier ")]
    placements = [dict(phase=int(m[1]), to_node0=int(m[2]), to_node1=int(m[3]), ns=int(m[4]))
                  for m in (re.match(r"placement (\d+) to_node0 (\d+) to_node1 (\d+) ns (\d+)", l)
                            for l in lines) if m]
    return dict(policy=policy, phases=phases, total=total, vmstat=vmstat, damon=damon, tiers=tiers,
                placements=placements)


def table(results):
    n = len(results[0]["phases"])
    # Only kernels that flush remote TLBs by IPI count shootdowns (with
    # SBI remote fences, RISC-V's usual path, the row is absent).
    shootdowns = any("tlb_shootdowns" in r["vmstat"] for r in results)
    oracle = any(r["placements"] for r in results)
    unit = "MUPS" if results[0]["phases"][0]["hot_pages"] else "k gets/s"
    where = " (hot on node 0)" if unit == "MUPS" else ""
    head = ["policy"] + [f"phase {i}: {unit}{where}" for i in range(n)] + [
        f"total {unit}"] + (["MUPS without the oracle's moves"] if oracle else []) + ["run ms", "pgdemote", "pgpromote_success", "pages migrated"] + (
        ["TLB shootdowns"] if shootdowns else [])
    heat = all("hot_found" in r for r in results)
    head += ["accesses on node 0", "hot set's accesses on node 0"] if heat else []
    head += ["host s"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        v = r["vmstat"]
        demote = sum(x for k, x in v.items() if k.startswith("pgdemote_"))
        cells = [r["policy"]]
        for ph in r["phases"]:
            cells.append(f"{ph['mups']:.2f}" + (f" ({100 * ph['hot_node0'] / ph['hot_pages']:.0f}%)"
                                                 if ph["hot_pages"] else ""))
        cells += [f"{r['total']['mups']:.2f}"]
        if oracle:
            moves = sum(m["ns"] for m in r["placements"])
            cells += [f"{r['total']['updates'] * 1e3 / (r['total']['ns'] - moves):.2f}"
                      if r["placements"] else "-"]
        cells += [f"{r['total']['ns'] / 1e6:.0f}", str(demote),
                  str(v.get("pgpromote_success", 0)), str(v.get("pgmigrate_success", 0))]
        cells += [str(v.get("tlb_shootdowns", "-"))] if shootdowns else []
        if heat:
            cells += [f"{100 * r['fast_share']:.0f}%", f"{100 * r['hot_found']:.0f}%"]
        cells += [f"{r['host_seconds']:.0f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rvnvmm", default=str(ROOT / "target" / "release" / "rvnvmm"))
    ap.add_argument("--policies", default=None,
                    help=f"comma-separated, from: {', '.join(POLICIES)}")
    ap.add_argument("--workload", choices=["gups", "memcached"], default="gups",
                    help="GUPS with a moving hot set, or Debian's memcached under a Zipfian "
                         "load whose popular keys move (no oracle)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    for k in dict(FULL, **KV_FULL):
        ap.add_argument("--" + k.replace("_", "-"), type=int)
    ap.add_argument("--page-heat-dir", help="write each run's page-heat file as DIR/POLICY.heat")
    ap.add_argument("--page-heat-window", type=int, default=ORACLE_WINDOW_NS,
                    help="the page-heat window in ns (default 10 ms: long enough that a hot page "
                         "of GUPS stands out from the cold ones within one window)")
    ap.add_argument("--numa-scan", default="10,100", metavar="MIN_MS,MAX_MS",
                    help="linux-tiering: NUMA balancing's scan delay and shortest period, "
                         "and its longest period (Linux's defaults: 1000,60000)")
    ap.add_argument("--boot-arg", action="append", default=[], metavar="ARG",
                    help="one more argument for rvnvmm boot ({policy} is the policy's name), "
                         "e.g. --boot-arg=--profile --boot-arg=prof-{policy}.txt")
    ap.add_argument("--oracle-mib", type=int,
                    help="oracle: how much of the table it keeps on node 0 (default: the hot set)")
    ap.add_argument("--keep", help="keep the disk image, consoles and statistics in this directory")
    ap.add_argument("--json", help="write the results as JSON to this file")
    args = ap.parse_args(argv)

    server = args.workload == "memcached"
    if server:
        sizes = dict(KV_QUICK if args.quick else KV_FULL)
    else:
        sizes = dict(QUICK if args.quick else FULL)
    for k in dict(FULL, **KV_FULL):
        if getattr(args, k) is not None:
            if k not in sizes:
                fail(f"--{k.replace('_', '-')} is not an option of the {args.workload} workload")
            sizes[k] = getattr(args, k)
    for k, v in sizes.items():
        if v <= 0 and k != "hot_percent":
            fail(f"--{k.replace('_', '-')} must be positive, got {v}")
    if server:
        if "oracle" in (args.policies or "").split(","):
            fail("the oracle policy needs a program that places its pages (--workload gups)")
    elif not 0 <= sizes["hot_percent"] <= 100:
        fail(f"--hot-percent must be from 0 to 100, got {sizes['hot_percent']}")
    if not server and sizes["table_mib"] % sizes["hot_mib"]:
        fail(f"--table-mib ({sizes['table_mib']}) must be a multiple of --hot-mib ({sizes['hot_mib']})")
    if not server and sizes["table_mib"] << 20 >= ALL_FAST_BYTES - (160 << 20):
        fail(f"--table-mib {sizes['table_mib']} does not fit all-fast's node 0 of "
             f"{ALL_FAST_BYTES >> 20} MiB with room for the kernel")
    if args.policies is None:
        args.policies = ",".join(p for p in DEFAULT_POLICIES if not (server and p == "oracle"))
    policies = [p for p in args.policies.split(",") if p]
    for p in policies:
        if p not in POLICIES:
            fail(f"unknown policy '{p}'; known: {', '.join(POLICIES)}")
    try:
        scan = tuple(int(x) for x in args.numa_scan.split(","))
    except ValueError:
        scan = ()
    if len(scan) != 2 or not 0 < scan[0] <= scan[1]:
        fail(f"--numa-scan wants MIN_MS,MAX_MS with 0 < MIN_MS <= MAX_MS, got '{args.numa_scan}'")
    if not Path(args.rvnvmm).exists():
        fail(f"{args.rvnvmm} not found: cargo build --release, or give --rvnvmm")

    heat_dir = Path(args.page_heat_dir) if args.page_heat_dir else None
    if heat_dir:
        heat_dir.mkdir(parents=True, exist_ok=True)
    keep = Path(args.keep) if args.keep else None
    tmp = tempfile.TemporaryDirectory(prefix="rvnvmm-tiering-")
    workdir = keep or Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    placement = None
    if "oracle" in policies:
        budget = (args.oracle_mib or sizes["hot_mib"]) << 8
        placement = oracle_placement(args.rvnvmm, sizes, workdir, budget)
        (workdir / "oracle.placement").write_text(placement)
    img = build_disk(Path(tempfile.mkdtemp(dir=workdir)), placement, server)
    print(f"sizes: {sizes}", file=sys.stderr)
    results = []
    for p in policies:
        heat = heat_dir / f"{p}.heat" if heat_dir else None
        console, stats, host, cmd = boot(args.rvnvmm, p, sizes, img, workdir, heat,
                                         args.page_heat_window, scan, args.boot_arg)
        r = parse(p, console, sizes)
        r["host_seconds"] = host
        r["command"] = cmd
        r["sim_time_ns"] = stats.get("sim_time_ns")
        if heat is not None:
            r["fast_share"], r["hot_found"] = heat_columns(heat, sizes)
        results.append(r)
        print(f"{p}: {r['total']['mups']:.2f} {'k gets/s' if server else 'MUPS'}, host {host:.0f} s", file=sys.stderr)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(sizes=sizes, results=results), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
