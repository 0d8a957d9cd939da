"""Sweeps: the grid on both executors, failures, and the results store."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from conftest import GRID_NS, grid_spec

from rvnvmm_sweep import load_table, run_sweep
from rvnvmm_sweep.store import deterministic_columns

AXES = ["memory.nvmm.trcd_ns", "memory.nvmm.trp_ns"]


def sorted_by_point(table: pd.DataFrame) -> pd.DataFrame:
    return table.sort_values(AXES + ["run.repeat"]).reset_index(drop=True)


def test_grid_runs_locally(grid_local):
    summary, out = grid_local
    assert (summary.total, summary.executed, summary.failed) == (36, 36, 0)
    table = load_table(out)
    assert len(table) == 36 and (table["run.status"] == "ok").all()
    for column in ("regions.nvmm.reads", "caches.hart0.l1d.hits", "sim_time_ns",
                   "regions.nvmm.read_latency_hist.le_inf", "harts.0.cycles"):
        assert column in table.columns
    assert sorted(set(table[AXES[0]])) == GRID_NS
    # The grid exercises the NVMM timing: a slower NVMM gives a longer run.
    corner = table.set_index(AXES)["sim_time_ns"]
    assert corner[(GRID_NS[-1], GRID_NS[-1])] > corner[(GRID_NS[0], GRID_NS[0])]
    assert (table["regions.nvmm.reads"] > 0).all()
    # One raw statistics file per run, exactly as rvnvmm wrote it.
    raws = list((out / "raw").glob("*.json"))
    assert len(raws) == 36
    assert json.loads(raws[0].read_text())["schema"] == "rvnvmm-stats/1"
    stored = pd.read_parquet(summary.table)
    assert len(stored) == 36 and set(AXES) <= set(stored.columns)


def test_dask_local_cluster_gives_identical_statistics(grid_local, tmp_path, dev_nvmm):
    pytest.importorskip("dask.distributed")
    _, local_out = grid_local
    summary = run_sweep(grid_spec(dev_nvmm), tmp_path / "dask", executor="dask", jobs=2, quiet=True)
    assert (summary.executed, summary.failed) == (36, 0)
    local = sorted_by_point(load_table(local_out))
    dask = sorted_by_point(load_table(tmp_path / "dask"))
    columns = deterministic_columns(local)
    assert "host_seconds" not in columns and "mips" not in columns
    assert "regions.nvmm.avg_read_latency_ns" in columns
    assert set(columns) == set(deterministic_columns(dask))
    pd.testing.assert_frame_equal(local[columns], dask[columns], check_exact=True)


def test_failed_run_is_recorded_retried_and_does_not_stop_the_sweep(tmp_path, rvnvmm_bin, dev_nvmm):
    # Each value passes validation alone, but a refresh cycle longer than
    # the refresh interval is invalid: that one run fails when it starts.
    spec = {"name": "fail", "command": ["run", str(dev_nvmm)],
            "axes": {"memory.controllers.ddr3.refresh.trefi_ns": [7800, 300],
                     "memory.controllers.ddr3.refresh.trfc_ns": [260, 400]}}
    out = tmp_path / "out"
    summary = run_sweep(spec, out, jobs=2, quiet=True)
    assert (summary.total, summary.executed, summary.failed) == (4, 4, 1)
    table = load_table(out)
    failed = table[table["run.status"] == "failed"]
    assert len(failed) == 1 and (table["run.status"] == "ok").sum() == 3
    row = failed.iloc[0]
    assert row["run.attempts"] == 2
    assert "wrote no statistics" in row["run.error"]
    record = json.loads((out / "runs" / f"{row['run.key']}.json").read_text())
    assert "trfc" in record["stderr"] and len(record["errors"]) == 2
    # A re-run retries the failure and skips the rest.
    again = run_sweep(spec, out, jobs=2, quiet=True)
    assert (again.skipped, again.executed, again.failed) == (3, 1, 1)


def test_identical_binary_elsewhere_reuses_results_but_a_changed_program_does_not(
        tmp_path, rvnvmm_bin, dev_nvmm):
    program = tmp_path / "dev_nvmm"
    shutil.copy(dev_nvmm, program)
    binary = tmp_path / "rvnvmm"
    shutil.copy(rvnvmm_bin, binary)
    spec = {"name": "keys", "command": ["run", str(program)], "axes": {"memory.nvmm.trp_ns": [100, 200]}}
    out = tmp_path / "out"
    assert run_sweep(spec, out, jobs=2, quiet=True).executed == 2
    # The key holds content hashes, not paths: the same binary under another name is the same.
    assert run_sweep(spec, out, jobs=2, quiet=True, binary=binary).skipped == 2
    with open(program, "ab") as f:  # a rebuilt guest: every result is stale
        f.write(b"\0")
    summary = run_sweep(spec, out, jobs=2, quiet=True)
    assert (summary.skipped, summary.executed) == (0, 2)


def test_bench_rows_and_repeats(tmp_path, rvnvmm_bin):
    spec = {"name": "bench", "command": ["bench", "locality"], "repeat": 2,
            "set": {"--size": 1 << 20, "--op": "read"},
            "axes": {"--method": ["fine", "proposed"]}}
    summary = run_sweep(spec, tmp_path / "out", jobs=2, quiet=True)
    assert (summary.total, summary.failed) == (4, 0)
    table = load_table(tmp_path / "out")
    # Each run prints one row per STRIDE (4096, 8192).
    assert len(table) == 8
    assert set(table["stride"]) == {4096, 8192}
    assert (table["method"] == table["--method"]).all()
    assert set(table["run.repeat"]) == {0, 1}
    per_point = table.groupby(["--method", "stride"])["avg_latency_ns"].nunique()
    assert (per_point == 1).all(), "repeats of a deterministic run agree"


def test_runs_see_the_specs_environment_not_the_hosts(tmp_path, monkeypatch, rvnvmm_bin, dev_nvmm):
    spec = {"name": "env", "command": ["run", str(dev_nvmm)]}
    run_sweep(spec, tmp_path / "a", quiet=True)
    # A host variable that would move the guest's stack if it leaked through.
    monkeypatch.setenv("RVNVMM_SWEEP_TEST_PADDING", "x" * 4096)
    run_sweep(spec, tmp_path / "b", quiet=True)
    a, b = load_table(tmp_path / "a"), load_table(tmp_path / "b")
    columns = deterministic_columns(a)
    pd.testing.assert_frame_equal(a[columns], b[columns], check_exact=True)
    # The spec's environment is part of the run: changing it re-runs.
    summary = run_sweep({**spec, "env": {"PATH": "/bin", "LANG": "C"}}, tmp_path / "a", quiet=True)
    assert (summary.skipped, summary.executed) == (0, 1)
