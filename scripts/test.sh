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
# This checkout's package first: the venv's editable install names the
# checkout that ran set-up last, which may be another clone.
PYTHONPATH="$top/python/src${PYTHONPATH:+:$PYTHONPATH}" \
    "${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}/venv/bin/pytest" python/tests -q
# User-mode checkpoints on part of the workload suite: a dynamically linked
# program reading its input, one with its heap and a database in memory
# (the whole suite: scripts/checkpoint_identity.py, about 4 minutes).
. scripts/paths.sh
python3 scripts/checkpoint_identity.py --only xz-d,sqlite
