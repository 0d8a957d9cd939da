#!/usr/bin/env bash
# Runs every test: sets up the machine (cross compiler, qemu-user, Debian
# riscv64 packages), builds the guest corpus, then the whole Rust test suite
# (unit tests, and the differential tests against qemu-riscv64).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
make -C guest -j2
cargo test --workspace --release -j2
# The experiment workflow (python/), against the release rvnvmm cargo just built.
"${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}/venv/bin/pytest" python/tests -q
