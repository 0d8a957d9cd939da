#!/usr/bin/env bash
# The main job end to end: set up the machine, build rvnvmm, compile the
# guest programs with Debian's riscv64 cross compiler, run one in user mode
# on the freedom-u500 machine and summarise its statistics (the JSON files
# stay in target/demo/); run Debian's riscv64
# busybox through a shell pipeline; run a STREAM-like kernel with its heap on
# DRAM and then on NVMM; print seed 000's Table 3 microbenchmark; boot
# OpenSBI and Debian's Linux on 4 harts to the initramfs test script.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
. scripts/paths.sh
cargo build --release -p rvnvmm
make -C guest -j2 >/dev/null
# The statistics files stay for a look after the demo.
out="$top/target/demo"
mkdir -p "$out"
prog=guest/build/static/bench_compute
[ -x "$prog" ] || prog=guest/build/static/float_print
echo "== rvnvmm run $prog"
target/release/rvnvmm run --stats "$out/run.json" "$prog" | tail -n 5
echo "== statistics (all of them: $out/run.json; docs/stats.md says what each is)"
python3 scripts/stats_summary.py "$out/run.json"
echo "== busybox pipeline in the emulator"
target/release/rvnvmm run "$RVNVMM_BUSYBOX" sh -c 'seq 1 1000 | gzip -c | gzip -dc | md5sum; uname -m'
echo "== a STREAM-like kernel with its heap on DRAM, then on NVMM (seed 000's proposed method)"
stream=guest/build/workloads/bin/stream
target/release/rvnvmm run --stats "$out/stream-dram.json" "$stream" 262144 2 | tail -n 2
target/release/rvnvmm run --set user.heap=nvmm --stats "$out/stream-nvmm.json" "$stream" 262144 2 > /dev/null
python3 - "$out/stream-dram.json" "$out/stream-nvmm.json" <<'PY'
import json, sys
d, n = (json.load(open(p)) for p in sys.argv[1:3])
r = n["regions"]["nvmm"]
print(f"simulated time on DRAM {d['sim_time_ns'] / 1e6:.1f} ms, on NVMM {n['sim_time_ns'] / 1e6:.1f} ms "
      f"({n['sim_time_ns'] / d['sim_time_ns']:.2f}x); NVMM reads {r['reads']}, writes {r['writes']}, "
      f"ACT/REQ {r['act_per_req']:.2f}")
PY
echo "(statistics: $out/stream-dram.json, $out/stream-nvmm.json)"
echo "== the paper's microbenchmark (seed 000 Table 3)"
target/release/rvnvmm bench locality --op read --size 4194304
echo "== full system: OpenSBI + Debian's Linux on 4 harts, to its test script and power-off"
target/release/rvnvmm boot --set machine.model=functional \
    --append "console=ttyS0 rvnvmm.rc=1 quiet" | grep -E '^(rc: |rvnvmm initramfs)'
