"""Specs rejected before any run starts, with the problem named."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import grid_spec

from rvnvmm_sweep import SpecError, run_sweep


def rejected(spec: dict, tmp_path) -> str:
    out = tmp_path / "out"
    with pytest.raises(SpecError) as err:
        run_sweep(spec, out, jobs=1, quiet=True)
    assert not (out / "runs").exists(), "nothing may run for a rejected spec"
    return str(err.value)


def test_unknown_config_key_names_the_nearest(tmp_path, rvnvmm_bin, dev_nvmm):
    spec = grid_spec(dev_nvmm)
    spec["axes"] = {"memory.nvmm.trcd": [100, 200], "memory.nvmm.trp_ns": [100]}
    msg = rejected(spec, tmp_path)
    assert "axis 'memory.nvmm.trcd'" in msg
    assert "unknown config key 'memory.nvmm.trcd' (did you mean 'memory.nvmm.trcd_ns'?)" in msg
    assert msg.count("unknown config key") == 1, "one report per bad key, not per value"


def test_unknown_fixed_key_and_bad_value_both_named(tmp_path, rvnvmm_bin, dev_nvmm):
    spec = grid_spec(dev_nvmm)
    spec["set"]["machine.hartz"] = 2
    spec["axes"] = {"memory.nvmm.trcd_ns": [0, 100]}
    msg = rejected(spec, tmp_path)
    assert "[set]: unknown config key 'machine.hartz' (did you mean 'machine.harts'?)" in msg
    assert "axis 'memory.nvmm.trcd_ns' = 0" in msg and "must be a positive number" in msg


def test_missing_workload_program(tmp_path, rvnvmm_bin):
    msg = rejected({"name": "m", "command": ["run", str(tmp_path / "no-such-prog")]}, tmp_path)
    assert f"workload program '{tmp_path / 'no-such-prog'}' not found" in msg


def test_unknown_machine_and_benchmark(tmp_path, rvnvmm_bin):
    msg = rejected({"name": "m", "config": "freedom-u5000", "command": ["bench", "localty"]}, tmp_path)
    assert "unknown machine 'freedom-u5000'" in msg
    assert "'rvnvmm bench localty' is not a command rvnvmm knows" in msg


def test_unknown_and_managed_options(tmp_path, rvnvmm_bin):
    msg = rejected({"name": "m", "command": ["bench", "locality"],
                    "set": {"--stats": "x.json"}, "axes": {"--metod": ["fine"]}}, tmp_path)
    assert "unknown option '--metod' for 'rvnvmm bench locality' (did you mean '--method'?)" in msg
    assert "option '--stats' cannot be given" in msg


def test_unknown_spec_key_from_the_command_line(tmp_path, rvnvmm_bin):
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "bad"\ncommand = ["bench", "locality"]\n[axis]\n"--op" = ["read"]\n')
    proc = subprocess.run([sys.executable, "-m", "rvnvmm_sweep.cli", str(spec), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown spec key 'axis' (did you mean 'axes'?)" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_check_shows_the_plan(tmp_path, rvnvmm_bin, dev_nvmm):
    spec = tmp_path / "ok.toml"
    spec.write_text(f'name = "ok"\ncommand = ["run", "{dev_nvmm}"]\n'
                    '[axes]\n"memory.nvmm.trcd_ns" = [100, 200]\n')
    proc = subprocess.run([sys.executable, "-m", "rvnvmm_sweep.cli", str(spec), "--out",
                           str(tmp_path / "out"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "is valid: 2 runs" in proc.stdout and "2 to run" in proc.stdout
    assert not (tmp_path / "out").exists()
