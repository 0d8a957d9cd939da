#!/usr/bin/env bash
# Emulation speed: builds rvnvmm (release) and the guest programs, then runs
# `rvnvmm bench speed`, which runs a fixed set of riscv64 programs under
# rvnvmm and under Debian's qemu-riscv64 and prints guest MIPS for both
# (see docs/performance.md). Arguments go to it, e.g.
#   scripts/bench-speed.sh --json
#   scripts/bench-speed.sh --set machine.model=timing
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
cargo build --release -q -p rvnvmm
make -C guest -j2 -s >/dev/null
exec "${CARGO_TARGET_DIR:-target}/release/rvnvmm" bench speed "$@"
