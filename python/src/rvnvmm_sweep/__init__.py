"""Parameter sweeps over the rvnvmm emulator.

A sweep is a grid of `rvnvmm run` or `rvnvmm bench` invocations described by
a TOML spec (see docs/workflow.md). This package expands the grid, checks it
before anything runs, executes it locally or on a Dask cluster, keeps every
result in a resumable store, and turns the store into an HTML report.
"""

from .spec import Spec, SpecError, load_spec
from .store import load_table
from .sweep import SweepSummary, run_sweep

__all__ = ["Spec", "SpecError", "SweepSummary", "load_spec", "load_table", "run_sweep"]
