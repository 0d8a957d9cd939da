"""Spec reading, structural checks and grid expansion (no emulator needed)."""

from __future__ import annotations

import pytest

from rvnvmm_sweep.spec import Spec, SpecError, load_spec, option_words, parse_value, toml_literal
from rvnvmm_sweep.store import flatten


def problems(data: dict, tmp_path) -> str:
    with pytest.raises(SpecError) as err:
        Spec.from_dict(data, base_dir=tmp_path)
    return str(err.value)


BASE = {"name": "t", "command": ["bench", "locality"]}


def test_unknown_top_level_key_is_named_with_a_suggestion(tmp_path):
    msg = problems({**BASE, "axis": {"x": [1]}}, tmp_path)
    assert "unknown spec key 'axis'" in msg
    assert "did you mean 'axes'" in msg


def test_empty_axis_is_named(tmp_path):
    msg = problems({**BASE, "axes": {"memory.nvmm.trcd_ns": []}}, tmp_path)
    assert "axis 'memory.nvmm.trcd_ns' is empty" in msg


def test_every_problem_is_reported_at_once(tmp_path):
    msg = problems({"command": ["runn", "x"], "repeat": 0, "axes": {"a": [], "b": 3}}, tmp_path)
    for part in ("'name' is missing", "must start with 'run' or 'bench'", "did you mean 'run'",
                 "'repeat' must be an integer", "axis 'a' is empty", "axis 'b' must be a list"):
        assert part in msg
    assert "5 problems" in msg


def test_missing_command_and_program(tmp_path):
    assert "'command' is missing" in problems({"name": "t"}, tmp_path)
    assert "lacks the guest program" in problems({"name": "t", "command": ["run"]}, tmp_path)
    assert "lacks the benchmark name" in problems({"name": "t", "command": ["bench"]}, tmp_path)


def test_conflicts_and_duplicates(tmp_path):
    msg = problems({**BASE, "set": {"machine.harts": 1}, "axes": {"machine.harts": [1, 2, 2]}}, tmp_path)
    assert "'machine.harts' is both fixed in [set] and an axis" in msg
    assert "axis 'machine.harts' lists 2 twice" in msg
    assert "cannot be fixed in [set]" in problems({**BASE, "set": {"args": ["x"]}}, tmp_path)


def test_baseline_must_lie_on_the_grid(tmp_path):
    axes = {"memory.nvmm.trcd_ns": [100, 200]}
    msg = problems({**BASE, "axes": axes, "report": {"baseline": {"memory.nvmm.trcd": 100}}}, tmp_path)
    assert "not an axis" in msg and "did you mean 'memory.nvmm.trcd_ns'" in msg
    msg = problems({**BASE, "axes": axes, "report": {"baseline": {"memory.nvmm.trcd_ns": 300}}}, tmp_path)
    assert "is not one of the axis values" in msg


def test_missing_config_file(tmp_path):
    assert "config file 'nope.toml' not found" in problems({**BASE, "config": "nope.toml"}, tmp_path)


def test_toml_file_spec_resolves_paths_against_its_directory(tmp_path):
    (tmp_path / "prog").write_bytes(b"\x7fELF")
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('name = "s"\ncommand = ["run", "prog", "{spec_dir}/in.txt"]\n'
                         '[axes]\n"memory.nvmm.trcd_ns" = [100, 200]\n"--max-insns" = [10, 20]\n')
    spec = load_spec(spec_file)
    runs = spec.runs()
    assert len(runs) == 4
    assert runs[0].command == ("run", str(tmp_path / "prog"), f"{tmp_path}/in.txt")
    assert [dict(r.point) for r in runs[:2]] == [{"memory.nvmm.trcd_ns": 100, "--max-insns": 10},
                                                 {"memory.nvmm.trcd_ns": 100, "--max-insns": 20}]
    assert runs[1].config_set == (("memory.nvmm.trcd_ns", 100),)
    assert runs[1].options == (("--max-insns", 20),)


def test_not_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(bad)


def test_workload_axes_and_repeats(tmp_path):
    spec = Spec.from_dict({"name": "w", "repeat": 2,
                           "axes": {"command": [["bench", "locality"], ["bench", "banks"]],
                                    "args": [[], ["--op", "read"]]}}, base_dir=tmp_path)
    runs = spec.runs()
    assert spec.grid_size == 4 and len(runs) == 8
    assert [r.repeat for r in runs[:2]] == [0, 1]
    assert runs[2].command == ("bench", "locality", "--op", "read")
    assert runs[-1].command == ("bench", "banks", "--op", "read")


def test_value_helpers():
    assert toml_literal("fine") == '"fine"'
    assert toml_literal("1000") == '"1000"'
    assert toml_literal(13.75) == "13.75" and toml_literal(True) == "true"
    assert toml_literal([1, "a"]) == '[1, "a"]'
    assert parse_value("13.75") == 13.75 and parse_value("fine") == "fine"
    assert option_words("--added", [0, 1000]) == ["--added", "0", "--added", "1000"]
    assert option_words("--stats-children", True) == ["--stats-children"]
    assert option_words("--size", 4096.0) == ["--size", "4096"]


def test_flatten_names_statistics_by_path():
    stats = {"caches": {"hart0.l1d": {"hits": 3}},
             "harts": [{"id": 0, "cycles": 5}, {"id": 1, "cycles": 0}],
             "bus": {"hart_wait_ns": [0.0, 1.5]},
             "regions": {"nvmm": {"read_latency_hist": [{"le_ns": 50.0, "count": 2},
                                                        {"le_ns": None, "count": 1}]}}}
    flat = flatten(stats)
    assert flat["caches.hart0.l1d.hits"] == 3
    assert flat["harts.1.cycles"] == 0
    assert flat["bus.hart_wait_ns.1"] == 1.5
    assert flat["regions.nvmm.read_latency_hist.le_50"] == 2
    assert flat["regions.nvmm.read_latency_hist.le_inf"] == 1


def test_page_heat_window_is_checked(tmp_path):
    run = {"name": "t", "command": ["run", "prog"]}
    for bad in (0, -5, 1.5, "1ms", True, 2**64):
        msg = problems({**run, "page_heat_window_ns": bad}, tmp_path)
        assert "'page_heat_window_ns' must be a whole number of nanoseconds" in msg, bad
    assert "only `bench` ones" in problems({**BASE, "page_heat_window_ns": 1000}, tmp_path)
    msg = problems({**run, "page_heat_window_ns": 1000,
                    "axes": {"machine.model": ["timing", "functional"]}}, tmp_path)
    assert "needs the timing model" in msg
    assert "did you mean 'page_heat_window_ns'" in problems({**run, "page_heat_window": 10}, tmp_path)
    spec = Spec.from_dict({**run, "page_heat_window_ns": 250_000}, base_dir=tmp_path)
    assert spec.page_heat_window_ns == 250_000
    assert spec.to_dict()["page_heat_window_ns"] == 250_000
    assert "page_heat_window_ns" not in Spec.from_dict(run, base_dir=tmp_path).to_dict()
