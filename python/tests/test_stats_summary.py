"""scripts/stats_summary.py: the short table demo.sh prints instead of the whole JSON."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "stats_summary.py"
_spec = importlib.util.spec_from_file_location("stats_summary", SCRIPT)
stats_summary = sys.modules.setdefault("stats_summary", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(stats_summary)


def _cache(hits: int, misses: int) -> dict:
    return {"hits": hits, "misses": misses}


def _region(reads: int, writes: int) -> dict:
    return {"reads": reads, "writes": writes, "row_hit_rate": 0.25, "act_per_req": 0.75,
            "avg_read_latency_ns": 41.25, "avg_cpu_read_ns": 120.5}


STATS = {
    "schema": "rvnvmm-stats/1", "machine": "freedom-u500", "program": "prog", "exit": {"code": 3},
    "instructions": 3_000_000, "sim_time_ns": 120_000_000, "clock_hz": 50_000_000,
    "harts": [{"id": 0, "cycles": 6_000_000, "instructions": 2_000_000},
              {"id": 1, "cycles": 5_000_000, "instructions": 1_000_000}],
    "caches": {"hart0.l1d": _cache(900, 100), "hart1.l1d": _cache(50, 50),
               "hart0.l1i": _cache(10, 0), "hart1.l1i": _cache(0, 0), "l2": _cache(0, 0)},
    "bus": {"utilization": 0.125, "transfers": 1234},
    "regions": {"dram": _region(1000, 24), "nvmm": _region(0, 0)},
    "host_seconds": 2.0, "mips": 1.5,
}


def test_summary_sums_the_harts_and_derives_ipc_from_the_elapsed_cycles():
    rows = dict(stats_summary.summary_rows(STATS))
    assert rows["exit"] == "status 3"
    assert rows["instructions"] == "3,000,000"
    assert rows["simulated time"] == "120.000 ms (6,000,000 cycles at 50 MHz)"
    assert rows["IPC / CPI"] == "0.500 / 2.000"
    assert rows["L1D hit rate"] == "86.36 % of 1,100"
    assert rows["L1I hit rate"] == "100.00 % of 10"
    assert rows["L2 hit rate"] == "no accesses"
    assert rows["bus utilization"] == "12.50 % (1,234 transfers)"
    assert rows["DRAM reads / writes"] == "1,000 / 24"
    assert rows["DRAM row hits, ACT/REQ"] == "25.00 %, 0.750"
    assert rows["NVMM controller"] == "no requests"


def test_functional_run_has_no_memory_system_rows():
    functional = {k: v for k, v in STATS.items() if k not in ("caches", "bus", "regions")}
    rows = dict(stats_summary.summary_rows(functional))
    assert not any("hit rate" in k or "DRAM" in k or "bus" in k for k in rows)


def test_command_prints_a_table_and_refuses_other_files(tmp_path):
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(STATS))
    done = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True)
    assert done.returncode == 0
    assert "  IPC / CPI " in done.stdout and len(done.stdout.splitlines()) < 25
    path.write_text('{"schema": "something else"}')
    done = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True)
    assert done.returncode == 1 and "not an rvnvmm statistics file" in done.stderr
