#!/bin/sh
# Runs one workload of the suite (docs/workloads.md) under rvnvmm, or under
# qemu-riscv64 with --qemu; the guest's stdout is this script's stdout.
#
#   guest/workloads/run.sh NAME [test|ref] [--qemu] [rvnvmm run options...]
#   guest/workloads/run.sh xz ref --set user.heap=nvmm --stats xz.json > /dev/null
#
# Needs `scripts/setup.sh` and `make -C guest` (and `cargo build --release`
# or RVNVMM_BIN).  See workloads.py for the other commands (list, cmd,
# table, gen).
exec python3 "$(dirname "$0")/workloads.py" run "$@"
