#!/usr/bin/env bash
# The main job end to end: set up the machine, build rvnvmm, compile a guest
# program with Debian's riscv64 cross compiler, run it in user mode on the
# freedom-u500 machine and print its statistics; then run Debian's riscv64
# busybox through a shell pipeline.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
. scripts/paths.sh
cargo build --release -p rvnvmm
make -C guest -j2 >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
prog=guest/build/static/bench_compute
[ -x "$prog" ] || prog=guest/build/static/float_print
echo "== rvnvmm run $prog"
target/release/rvnvmm run --stats "$out/stats.json" "$prog" | tail -n 5
echo "== statistics ($out/stats.json)"
cat "$out/stats.json"
echo "== busybox pipeline in the emulator"
target/release/rvnvmm run "$RVNVMM_BUSYBOX" sh -c 'seq 1 1000 | gzip -c | gzip -dc | md5sum; uname -m'
