"""Progress output: detailed on a terminal, failures only otherwise."""

from __future__ import annotations

import io

from rvnvmm_sweep.progress import Progress, format_duration
from rvnvmm_sweep.spec import PlannedRun


def planned(i: int) -> PlannedRun:
    return PlannedRun(index=i, point={"memory.nvmm.trcd_ns": 100 * i}, repeat=0,
                      command=("bench", "locality"), config_set=(), options=())


def test_terminal_shows_each_run_totals_and_eta():
    out = io.StringIO()
    progress = Progress(total=3, skipped=1, stream=out, interactive=True)
    progress.finished(planned(1), {"status": "ok", "seconds": 0.5})
    progress.finished(planned(2), {"status": "failed", "error": "boom", "attempts": 2, "seconds": 1})
    progress.close()
    text = out.getvalue()
    assert "1 of 3 runs already stored" in text
    assert "ok 2/3 trcd_ns=100" in text
    assert "FAIL 3/3 trcd_ns=200" in text and "boom [after 2 attempts]" in text
    assert "3/3 done, 1 failed" in text and "ETA" in text
    assert (progress.executed, progress.failed, progress.done) == (2, 1, 3)


def test_pipe_reports_failures_only():
    out = io.StringIO()
    progress = Progress(total=2, stream=out, interactive=False)
    progress.finished(planned(1), {"status": "ok", "seconds": 0.5})
    progress.finished(planned(2), {"status": "failed", "error": "boom", "seconds": 1})
    progress.close()
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text and "trcd_ns=100" not in text
    assert "FAIL" in text and "boom" in text


def test_durations():
    assert format_duration(4.52) == "4.5 s"
    assert format_duration(123) == "2:03"
    assert format_duration(3723) == "1:02:03"
