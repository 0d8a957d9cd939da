#!/usr/bin/env bash
# Emulation speed: runs a fixed set of riscv64 programs under rvnvmm and under
# Debian's qemu-riscv64 in the same run and prints guest MIPS for both
# (instructions counted by rvnvmm; qemu's MIPS = the same count / its time).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/paths.sh
cargo build --release -q -p rvnvmm
make -C guest -j2 -s >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Deterministic 4 MiB input for gzip.
python3 -c "
import random; r = random.Random(1)
words = [''.join(r.choice('abcdefghij') for _ in range(r.randint(2, 9))) for _ in range(500)]
open('$work/input.txt', 'w').write(' '.join(r.choice(words) for _ in range(700000)))"
rv=target/release/rvnvmm
measure() { # name, then the guest command line
    local name=$1; shift
    local t0 t1 t2
    t0=$(date +%s.%N)
    "$rv" run --stats "$work/s.json" "$@" >/dev/null
    t1=$(date +%s.%N)
    qemu-riscv64 "$@" >/dev/null
    t2=$(date +%s.%N)
    python3 - "$name" "$work/s.json" "$t0" "$t1" "$t2" <<'PY'
import json, sys
name, path, t0, t1, t2 = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
s = json.load(open(path))
n = s["instructions"]
print(f"{name:16s} {n/1e6:10.1f} Minsns  rvnvmm {n/(t1-t0)/1e6:8.1f} MIPS  qemu-riscv64 {n/(t2-t1)/1e6:8.1f} MIPS")
PY
}
for p in bench_compute float_print; do
    [ -x guest/build/static/$p ] && measure "$p" guest/build/static/$p
done
measure "busybox gzip" "$RVNVMM_BUSYBOX" gzip -c -6 "$work/input.txt"
