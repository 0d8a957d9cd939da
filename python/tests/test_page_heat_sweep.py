"""Sweeps that record page heat: the runs' command lines, the store and the
report's section, mostly through a stand-in for rvnvmm that writes a
statistics file and a page-heat file; the last test runs the emulator."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_heat_file import NVMM_PAGE, REGIONS

from rvnvmm_sweep import report, run_sweep
from rvnvmm_sweep.runner import HEAT_PLACEHOLDER, STATS_PLACEHOLDER, build_argv
from rvnvmm_sweep.spec import Spec, SpecError
from rvnvmm_sweep.store import Store
from rvnvmm_sweep.sweep import run_key

SRC = Path(__file__).resolve().parents[1] / "src"

FAKE_RVNVMM = f"""#!{sys.executable}
# Answers the sweep's checks, and `run` writes statistics and page heat.
import json, sys
sys.path.insert(0, {str(SRC)!r})
from rvnvmm_sweep.heat import write_heat

args = sys.argv[1:]
if args[0] == "config":
    sys.exit(0)
if args[0] == "run" and "--help" in args:
    print("Options:\\n  --stats <FILE>\\n  --page-heat <FILE>\\n  --page-heat-window <NS>\\n"
          "  --max-insns <N>")
    sys.exit(0)
if args[0] == "run":
    def value(option):
        return args[args.index(option) + 1]
    insns = int(value("--max-insns"))
    with open(value("--stats"), "w") as f:
        json.dump({{"schema": "rvnvmm-stats/1", "sim_time_ns": 1000 * insns, "instructions": insns}}, f)
    if "--page-heat" in args:
        windows = int(value("--page-heat-window"))
        write_heat(value("--page-heat"), window_ps=windows * 1000, regions={REGIONS!r},
                   physical=[(w, {NVMM_PAGE} + w % 7, insns, 1, 2) for w in range(40)])
    sys.exit(0)
sys.exit(1)
"""


@pytest.fixture
def fake_rvnvmm(tmp_path) -> Path:
    path = tmp_path / "rvnvmm"
    path.write_text(FAKE_RVNVMM)
    path.chmod(0o755)
    return path


def heat_spec(tmp_path, window=1_000_000, **extra) -> dict:
    program = tmp_path / "prog"
    program.write_bytes(b"\x7fELF guest")
    return {"name": "heat", "command": ["run", str(program)], "page_heat_window_ns": window,
            "axes": {"--max-insns": [1, 2, 3]}, **extra}


def test_run_commands_get_the_page_heat_flags(tmp_path):
    spec = Spec.from_dict(heat_spec(tmp_path, window=250_000), base_dir=tmp_path)
    run = spec.runs()[0]
    argv = build_argv("rvnvmm", spec.config, run, page_heat_window_ns=spec.page_heat_window_ns)
    at = argv.index("--page-heat")
    assert argv[at:at + 4] == ["--page-heat", HEAT_PLACEHOLDER, "--page-heat-window", "250000"]
    assert argv.index(STATS_PLACEHOLDER) < at < argv.index("/sweep/bin/prog")  # options before the guest
    assert "--page-heat" not in build_argv("rvnvmm", spec.config, run)
    bench = Spec.from_dict({"name": "b", "command": ["bench", "locality"]}, base_dir=tmp_path).runs()[0]
    assert "--page-heat" not in build_argv("rvnvmm", "freedom-u500", bench, page_heat_window_ns=1000)


def test_page_heat_changes_the_run_key_only_when_set(tmp_path):
    with_heat = Spec.from_dict(heat_spec(tmp_path), base_dir=tmp_path)
    other = Spec.from_dict(heat_spec(tmp_path, window=5000), base_dir=tmp_path)
    plain_data = heat_spec(tmp_path)
    del plain_data["page_heat_window_ns"]
    plain = Spec.from_dict(plain_data, base_dir=tmp_path)
    run = plain.runs()[0]
    keys = {run_key(s, run, "sha") for s in (with_heat, other, plain)}
    assert len(keys) == 3


def test_sweep_stores_heat_files_and_the_report_draws_them(tmp_path, fake_rvnvmm, monkeypatch):
    out = tmp_path / "out"
    summary = run_sweep(heat_spec(tmp_path), out, jobs=2, quiet=True, binary=fake_rvnvmm)
    assert (summary.executed, summary.failed) == (3, 0), Store(out).table()["run.error"].tolist()
    store = Store(out)
    plan = store.read_plan()
    assert plan["spec"]["page_heat_window_ns"] == 1_000_000
    for planned in plan["runs"]:
        record = store.read_record(planned["key"])
        assert record["page_heat"] == f"heat/{planned['key']}.bin"
        assert store.heat_path(planned["key"]).read_bytes().startswith(b"RVNVHEAT")
        at = record["argv"].index("--page-heat")
        assert record["argv"][at + 2:at + 4] == ["--page-heat-window", "1000000"]
        assert "heat" not in record  # the bytes live in heat/, not in the record

    monkeypatch.setattr(report, "MAX_HEAT_RUNS", 2)
    html = report.write_report(out).read_text()
    assert "<h2>Page heat</h2>" in html
    section = html[html.index("<h2>Page heat</h2>"):]
    assert "the first 2 of the 3 runs with page heat" in section
    assert section.count("<h4>") == 2 and "--max-insns = 1" in section
    assert section.count("data:image/png;base64,") == 2  # one node touched, two runs

    # A heat file lost from the store makes its run missing: the next sweep redoes it.
    os.unlink(store.heat_path(plan["runs"][0]["key"]))
    again = run_sweep(heat_spec(tmp_path), out, jobs=1, quiet=True, binary=fake_rvnvmm)
    assert (again.skipped, again.executed) == (2, 1)


def test_a_run_without_its_heat_file_failed(tmp_path, fake_rvnvmm):
    script = fake_rvnvmm.read_text().replace('if "--page-heat" in args:', "if False:")
    fake_rvnvmm.write_text(script)
    summary = run_sweep(heat_spec(tmp_path), tmp_path / "out", jobs=1, quiet=True, binary=fake_rvnvmm)
    assert summary.failed == 3
    record = json.loads(next((tmp_path / "out" / "runs").glob("*.json")).read_text())
    assert "no page-heat file" in record["error"]


def test_check_says_runs_record_page_heat(tmp_path, fake_rvnvmm, capsys):
    from rvnvmm_sweep.cli import sweep_main
    program = tmp_path / "prog"
    program.write_bytes(b"\x7fELF guest")
    spec = tmp_path / "s.toml"
    spec.write_text('name = "h"\ncommand = ["run", "prog"]\npage_heat_window_ns = 250000\n'
                    '[set]\n"--max-insns" = 5\n')
    assert sweep_main([str(spec), "--out", str(tmp_path / "out"), "--check",
                       "--rvnvmm", str(fake_rvnvmm)]) == 0
    assert "record page heat in windows of 250 µs" in capsys.readouterr().out


def test_the_flags_are_the_sweeps_and_need_a_binary_that_has_them(tmp_path, fake_rvnvmm):
    data = heat_spec(tmp_path)
    data["set"] = {"--page-heat-window": 10}
    with pytest.raises(SpecError, match="'--page-heat-window' cannot be given"):
        run_sweep(data, tmp_path / "out", quiet=True, binary=fake_rvnvmm)
    old = tmp_path / "old-rvnvmm"  # another path: rvnvmm's help is cached per binary
    old.write_text(fake_rvnvmm.read_text().replace("--page-heat <FILE>", "--trace <FILE>"))
    old.chmod(0o755)
    with pytest.raises(SpecError, match="this rvnvmm has no 'run --page-heat' option"):
        run_sweep(heat_spec(tmp_path), tmp_path / "out", quiet=True, binary=old)


def test_real_runs_record_heat_that_adds_up_to_their_statistics(tmp_path, rvnvmm_bin, dev_nvmm):
    from rvnvmm_sweep.heat import read_heat
    from rvnvmm_sweep.store import load_table

    spec = {"name": "heat", "command": ["run", str(dev_nvmm)], "page_heat_window_ns": 10_000,
            "set": {"user.heap": "nvmm"}, "axes": {"memory.nvmm.trcd_ns": [13.75, 513.75]}}
    out = tmp_path / "out"
    assert run_sweep(spec, out, jobs=2, quiet=True).failed == 0
    table = load_table(out)
    store = Store(out)
    for _, row in table.iterrows():
        heat = read_heat(store.heat_path(row["run.key"]))
        assert heat.complete and heat.window_ps == 10_000_000
        nodes = heat.node_of(heat.physical.page)
        for region in heat.regions:
            on = nodes == region.node
            assert heat.physical.reads[on].sum() == row[f"regions.{region.name}.bus_reads"]
            assert heat.physical.writes[on].sum() == row[f"regions.{region.name}.bus_writes"]
    assert "<h2>Page heat</h2>" in report.write_report(out).read_text()
