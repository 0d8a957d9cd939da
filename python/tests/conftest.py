"""Shared fixtures: the repository's rvnvmm build and guest programs.

The tests drive the real emulator. They use the repository's own build
(target/release/rvnvmm) unless RVNVMM_BIN names another, so that an older
`rvnvmm` on PATH cannot stand in for the one under test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUEST = ROOT / "guest" / "build"
# Fixed before any test imports the package's binary lookup.
os.environ.setdefault("RVNVMM_BIN", str(ROOT / "target" / "release" / "rvnvmm"))

#: The NVMM tRCD x tRP grid of the tests (seed 001's added 0..1000 ns on DDR3's 13.75 ns).
GRID_NS = [13.75, 213.75, 413.75, 613.75, 813.75, 1013.75]


def guest_program(relative: str) -> Path:
    """A guest program from `make -C guest`, or a skip saying how to build it."""
    path = GUEST / relative
    if not path.is_file():
        pytest.skip(f"guest program {path} not built (run `make -C guest`)")
    return path


@pytest.fixture(scope="session")
def rvnvmm_bin() -> Path:
    """The emulator under test."""
    path = Path(os.environ["RVNVMM_BIN"])
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"rvnvmm binary {path} missing: build it with `cargo build --release -p rvnvmm`")
    return path


@pytest.fixture(scope="session")
def dev_nvmm() -> Path:
    """A tiny guest (~27k instructions) whose accesses go to NVMM: it maps /dev/nvmm."""
    return guest_program("emu/dev_nvmm")


def grid_spec(program: Path, name: str = "trcd-trp") -> dict:
    """The 6 x 6 tRCD x tRP sweep of one program with its heap on NVMM."""
    return {
        "name": name,
        "config": "freedom-u500",
        "command": ["run", str(program)],
        "set": {"machine.model": "timing", "user.heap": "nvmm"},
        "axes": {"memory.nvmm.trcd_ns": GRID_NS, "memory.nvmm.trp_ns": GRID_NS},
    }


@pytest.fixture(scope="session")
def grid_local(tmp_path_factory, rvnvmm_bin, dev_nvmm):
    """The 36-run grid swept once with the local executor: (summary, out dir)."""
    from rvnvmm_sweep import run_sweep

    out = tmp_path_factory.mktemp("grid-local")
    summary = run_sweep(grid_spec(dev_nvmm), out, jobs=2, quiet=True)
    return summary, out
