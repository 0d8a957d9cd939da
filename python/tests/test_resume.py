"""A sweep killed half-way completes only its missing runs when re-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import guest_program

from rvnvmm_sweep import load_table, run_sweep

RUNS = 8


def test_killed_sweep_resumes_with_only_the_missing_runs(tmp_path, rvnvmm_bin):
    # bench_compute 1 runs ~28 M instructions: long enough (~0.3 s a run) to
    # kill the sweep between runs.
    program = guest_program("static/bench_compute")
    spec = tmp_path / "resume.toml"
    values = ", ".join(str(100 * (i + 1)) for i in range(RUNS))
    spec.write_text(f'name = "resume"\ncommand = ["run", "{program}", "1"]\n'
                    f'[set]\n"user.heap" = "nvmm"\n[axes]\n"memory.nvmm.trcd_ns" = [{values}]\n')
    out = tmp_path / "out"
    runs_dir = out / "runs"

    proc = subprocess.Popen([sys.executable, "-m", "rvnvmm_sweep.cli", str(spec), "--out", str(out),
                             "--jobs", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if runs_dir.is_dir() and len(list(runs_dir.glob("*.json"))) >= 2:
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"sweep ended before it could be killed: {proc.stderr.read()!r}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    stored = {p.name: p.stat().st_mtime_ns for p in runs_dir.glob("*.json")}
    assert 2 <= len(stored) < RUNS, stored

    summary = run_sweep(spec, out, jobs=2, quiet=True)
    assert summary.skipped == len(stored)
    assert summary.executed == RUNS - len(stored)
    assert summary.failed == 0
    # The runs stored before the kill were not redone.
    assert all(p.stat().st_mtime_ns == stored[p.name] for p in runs_dir.glob("*.json") if p.name in stored)
    table = load_table(out)
    assert len(table) == RUNS and (table["run.status"] == "ok").all()
    times = table.sort_values("memory.nvmm.trcd_ns")["sim_time_ns"]
    assert times.iloc[-1] > times.iloc[0]  # slower NVMM reads, a longer run
