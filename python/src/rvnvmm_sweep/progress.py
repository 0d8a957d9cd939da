"""Progress of a sweep on a terminal.

On a terminal, every finished run gets a line (status, position, axis
values, time) and a status line at the bottom keeps the totals, failures
and an estimate of the time left. When the output is not a terminal (a
log file, a pipe, CI) only failed runs are reported, one line each, so logs
stay readable.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from .spec import PlannedRun


def format_duration(seconds: float) -> str:
    """`1:02:03`, `2:03` or `4.5 s`."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    s = int(round(seconds))
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Counts finished runs and reports them."""

    def __init__(self, total: int, skipped: int = 0, stream: TextIO | None = None,
                 interactive: bool | None = None, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = (not quiet) and (self.stream.isatty() if interactive is None else interactive)
        self.quiet = quiet
        self.total = total
        self.skipped = skipped
        self.executed = 0
        self.failed = 0
        self.started = time.monotonic()
        self._status_shown = False
        if self.interactive:
            if skipped:
                self._print(f"{skipped} of {total} runs already stored, skipped")
            self._status()

    @property
    def done(self) -> int:
        return self.skipped + self.executed

    def eta(self) -> float | None:
        """Seconds left at the rate runs have finished so far."""
        if not self.executed:
            return None
        rate = (time.monotonic() - self.started) / self.executed
        return rate * (self.total - self.done)

    def finished(self, run: PlannedRun, outcome: Mapping[str, Any]) -> None:
        """Reports one finished run."""
        self.executed += 1
        ok = outcome.get("status") == "ok"
        if not ok:
            self.failed += 1
        if self.quiet or (ok and not self.interactive):
            return
        secs = outcome.get("seconds") or 0.0
        line = f"{'ok' if ok else 'FAIL':>4} {self.done:>{len(str(self.total))}}/{self.total} " \
               f"{run.describe()}  ({format_duration(secs)})"
        if not ok:
            line += f"\n     {outcome.get('error')}"
            if outcome.get("attempts", 1) > 1:
                line += f" [after {outcome['attempts']} attempts]"
        self._print(line)
        self._status()

    def close(self) -> None:
        """Clears the status line."""
        if self.interactive and self._status_shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._status_shown = False

    # ------------------------------------------------------------ output
    def _print(self, line: str) -> None:
        if self._status_shown:
            self.stream.write("\r\x1b[K")
            self._status_shown = False
        self.stream.write(line + "\n")
        self.stream.flush()

    def _status(self) -> None:
        if not self.interactive:
            return
        width = shutil.get_terminal_size((80, 20)).columns
        bar_width = max(10, min(30, width - 60))
        filled = int(bar_width * self.done / self.total) if self.total else bar_width
        eta = self.eta()
        text = (f"[{'#' * filled}{'.' * (bar_width - filled)}] {self.done}/{self.total} done, "
                f"{self.failed} failed, elapsed {format_duration(time.monotonic() - self.started)}"
                + (f", ETA {format_duration(eta)}" if eta is not None else ""))
        self.stream.write("\r\x1b[K" + text[:width - 1])
        self.stream.flush()
        self._status_shown = True
