"""Running one emulator invocation, anywhere.

`execute_task` is what every executor calls, in this process, in a thread
or on a Dask worker on another machine. It takes and returns plain data
(picklable; JSON-able but for a page-heat file's bytes), and never raises
for a failed run: a failure is an outcome, recorded with its error and
stderr, so one broken configuration cannot take a sweep down.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .spec import PlannedRun, option_words, toml_literal

#: Stands for the per-attempt statistics file in a `run` task's argv.
STATS_PLACEHOLDER = "{stats}"
#: Stands for the per-attempt page-heat file, when the spec records page heat.
HEAT_PLACEHOLDER = "{heat}"
#: How much of a run's stderr / stdout is kept in its record.
STDERR_TAIL = 16 * 1024
STDOUT_TAIL = 4 * 1024
#: Attempts per run: a failure is retried once, in case it was the host's.
ATTEMPTS = 2
#: Where a `run` task's guest finds its program and works, wherever the
#: program and the scratch directory lie on the host (`rvnvmm run --map`):
#: the guest's stack holds these paths, so the statistics would move with
#: the checkout's directory otherwise.
GUEST_PROGRAM_DIR = "/sweep/bin"
GUEST_CWD = "/work"


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to perform one run."""

    key: str
    kind: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    attempts: int = ATTEMPTS


def guest_program(target: str) -> str:
    """The guest's name of a `run` command's program (a host path)."""
    return f"{GUEST_PROGRAM_DIR}/{Path(target).name}"


def build_argv(binary: str | os.PathLike[str], config: str, run: PlannedRun,
               env: tuple[tuple[str, str], ...] = (),
               page_heat_window_ns: int | None = None) -> list[str]:
    """The command line for `run`; a `run` command carries STATS_PLACEHOLDER,
    and with `page_heat_window_ns` HEAT_PLACEHOLDER too (`bench` has no heat).
    A `run` guest sees a fixed world: its program at GUEST_PROGRAM_DIR/NAME,
    its scratch directory as GUEST_CWD, and `env` as its whole environment."""
    machine = ["--config", config]
    for key, value in run.config_set:
        machine += ["--set", f"{key}={toml_literal(value)}"]
    options = [w for name, value in run.options for w in option_words(name, value)]
    sub, target, *rest = run.command
    if sub == "run":
        guest = guest_program(target)
        view = ["--map", f"{guest}={target}", "--map", f"{GUEST_CWD}=.", "--cwd", GUEST_CWD,
                "--clean-env"]
        for key, value in env:
            view += ["--env", f"{key}={value}"]
        heat = [] if page_heat_window_ns is None else \
            ["--page-heat", HEAT_PLACEHOLDER, "--page-heat-window", str(page_heat_window_ns)]
        return [str(binary), "run", *machine, *options, *view, "--stats", STATS_PLACEHOLDER, *heat,
                guest, *rest]
    return [str(binary), "bench", target, *machine, *options, *rest, "--json"]


def execute_task(task: Task) -> dict[str, Any]:
    """Performs `task`, retrying a failure once; returns the outcome record."""
    errors: list[str] = []
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        outcome = _attempt(task)
        if outcome["status"] == "ok":
            break
        errors.append(outcome["error"])
        if attempts >= task.attempts:
            break
    outcome.update(key=task.key, attempts=attempts, errors=errors, started=started,
                   seconds=time.monotonic() - t0, host=socket.gethostname(),
                   argv=list(task.argv))
    return outcome


def _attempt(task: Task) -> dict[str, Any]:
    # Each attempt runs in a scratch directory: guests may create files in
    # their working directory, and concurrent runs must not see each other's.
    # A `run` guest knows it as GUEST_CWD (build_argv). The environment is
    # the spec's alone.
    with tempfile.TemporaryDirectory(prefix="rvnvmm-sweep-") as scratch:
        stats_path = Path(scratch) / "stats.json"
        heat_path = Path(scratch) / "heat.bin"
        wants_heat = HEAT_PLACEHOLDER in task.argv
        files = {STATS_PLACEHOLDER: str(stats_path), HEAT_PLACEHOLDER: str(heat_path)}
        argv = [files.get(a, a) for a in task.argv]
        out_path, err_path = Path(scratch) / "stdout", Path(scratch) / "stderr"
        try:
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.run(argv, cwd=scratch, env=dict(task.env), stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=err, timeout=task.timeout)
            returncode: int | None = proc.returncode
            error = None
        except subprocess.TimeoutExpired:
            returncode, error = None, f"timed out after {task.timeout:g} s"
        except OSError as e:
            returncode, error = None, f"cannot start {argv[0]}: {e}"
        stderr = _tail(err_path, STDERR_TAIL)
        stdout = _tail(out_path, STDOUT_TAIL if task.kind == "run" else None)
        result: dict[str, Any] = {"status": "failed", "returncode": returncode, "stderr": stderr}
        if task.kind == "run":
            result["stdout"] = stdout
        if error is None:
            if task.kind == "run":
                error = _read_stats(stats_path, returncode, stderr, result)
                if error is None and wants_heat:
                    error = _read_heat(heat_path, stderr, result)
            else:
                error = _read_rows(stdout, returncode, stderr, result)
        result["error"] = error
        if error is None:
            result["status"] = "ok"
        return result


def _read_stats(path: Path, returncode: int | None, stderr: str, result: dict[str, Any]) -> str | None:
    """Fills `result` from a run's statistics file; returns the error, if any.

    A run succeeded when it wrote statistics: the exit status is the guest's,
    and a non-zero status (or a guest killed by a signal) is a valid outcome.
    """
    if not path.is_file():
        return f"rvnvmm exited with status {returncode} and wrote no statistics" + _last_line(stderr)
    raw = path.read_text()
    try:
        result["stats"] = json.loads(raw)
    except json.JSONDecodeError as e:
        return f"statistics file is not valid JSON ({e})" + _last_line(stderr)
    result["raw"] = raw
    return None


def _read_heat(path: Path, stderr: str, result: dict[str, Any]) -> str | None:
    """Adds the page-heat file's bytes to `result` (they travel back from a
    Dask worker with it); a run asked for heat that wrote none failed."""
    if not path.is_file():
        return "rvnvmm wrote statistics but no page-heat file" + _last_line(stderr)
    result["heat"] = path.read_bytes()
    return None


def _read_rows(stdout: str, returncode: int | None, stderr: str, result: dict[str, Any]) -> str | None:
    """Fills `result` from `rvnvmm bench --json` output, one JSON object a line."""
    if returncode != 0:
        return f"rvnvmm bench exited with status {returncode}" + _last_line(stderr)
    rows = []
    for n, line in enumerate(stdout.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            return f"line {n} of the bench output is not JSON: {line[:120]!r}"
    if not rows:
        return "rvnvmm bench printed no rows" + _last_line(stderr)
    result["rows"] = rows
    result["raw"] = stdout
    return None


def _tail(path: Path, limit: int | None) -> str:
    """The file's text, or its last `limit` bytes."""
    try:
        with open(path, "rb") as f:
            if limit is not None:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _last_line(stderr: str) -> str:
    """`: LAST LINE` of stderr, where rvnvmm's reason for failing is."""
    lines = [ln.strip().lstrip("- ") for ln in stderr.splitlines() if ln.strip()]
    return f": {lines[-1]}" if lines else ""
