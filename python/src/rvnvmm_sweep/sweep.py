"""Running a sweep: check, plan, skip what is stored, execute the rest.

The key of a run is a hash of everything its result depends on: the
emulator binary (sha256), the machine (built-in name, or the config file's
sha256), the resolved config keys, the subcommand options, the command with
the guest program's name (the guest sees it at a fixed path, wherever it lies
on the host: runner.build_argv) and sha256, the environment, the page-heat
window of a `run` that records one (its stored heat file depends on it;
recording changes no statistic) and the repeat index. Results are
stored under that key, so re-running a sweep, after an interruption or
after adding axis values, executes only the runs whose key is not stored,
and a rebuilt emulator or guest invalidates exactly what it must.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .binary import find_binary, sha256_file
from .executors import Executor, make_executor
from .progress import Progress
from .runner import Task, build_argv, guest_program
from .spec import PlannedRun, Spec, load_spec, toml_literal
from .store import Store
from .validate import validate

#: Version of the key derivation; bump it to invalidate every stored result.
#: 2: `run` guests see a fixed view (their program by its guest name).
KEY_VERSION = 2


@dataclass(frozen=True)
class SweepSummary:
    """What a sweep did."""

    name: str
    out: Path
    total: int
    skipped: int
    executed: int
    failed: int
    seconds: float
    table: Path | None

    def __str__(self) -> str:
        return (f"sweep '{self.name}': {self.total} runs, {self.skipped} already stored, "
                f"{self.executed} executed, {self.failed} failed, in {self.seconds:.1f} s; "
                f"results in {self.table or self.out}")


def run_key(spec: Spec, run: PlannedRun, binary_sha: str) -> str:
    """The content hash identifying `run`'s result (see the module doc)."""
    merged: dict[str, str] = {}
    for key, value in run.config_set:  # later settings win, as with --set
        merged[key] = toml_literal(value)
    command: list[Any] = list(run.command)
    if run.kind == "run":  # the guest sees its name (argv[0]) as well as its contents
        command[1] = {"path": guest_program(command[1]), "sha256": sha256_file(command[1])}
    machine: Any = spec.config
    if os.path.sep in spec.config or spec.config.endswith(".toml"):
        machine = {"sha256": sha256_file(spec.config)}
    material = {
        "version": KEY_VERSION,
        "binary": binary_sha,
        "machine": machine,
        "set": sorted(merged.items()),
        "options": [[name, toml_literal(value)] for name, value in run.options],
        "command": command,
        "env": sorted(spec.env.items()),
        "repeat": run.repeat,
    }
    if spec.page_heat_window_ns is not None and run.kind == "run":
        # Only when set, so that the keys of sweeps without page heat stay as they were.
        material["page_heat_window_ns"] = spec.page_heat_window_ns
    blob = json.dumps(material, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def plan_sweep(spec: Spec, binary: Path) -> tuple[list[PlannedRun], list[dict[str, Any]], str]:
    """The runs of `spec`, their plan entries (with keys) and the binary's sha256."""
    binary_sha = sha256_file(binary)
    runs = spec.runs()
    entries = []
    for run in runs:
        entry: dict[str, Any] = {
            "key": run_key(spec, run, binary_sha), "index": run.index, "repeat": run.repeat,
            "point": dict(run.point), "kind": run.kind, "command": list(run.command),
        }
        if run.program:
            entry["program_sha256"] = sha256_file(run.program)
        entries.append(entry)
    return runs, entries, binary_sha


def run_sweep(spec: str | Path | Mapping[str, Any] | Spec, out: str | os.PathLike[str], *,
              jobs: int | None = None, executor: str | Executor = "local",
              scheduler: str | None = None, binary: str | os.PathLike[str] | None = None,
              quiet: bool = False, interactive: bool | None = None,
              stream: TextIO | None = None) -> SweepSummary:
    """Runs every run of `spec` not yet stored in `out`; returns a summary.

    `spec` is a TOML file, a dict in the same shape, or a Spec. Raises
    SpecError before anything runs if the spec is invalid, and
    BinaryNotFound without a binary. `executor` is `local`, `dask` or an
    Executor instance (which the caller then closes).
    """
    t0 = time.monotonic()
    spec = load_spec(spec)
    binary_path = find_binary(binary)
    stream = stream if stream is not None else sys.stderr
    for warning in validate(spec, binary_path):
        if not quiet:
            stream.write(f"warning: {warning}\n")

    runs, entries, binary_sha = plan_sweep(spec, binary_path)
    store = Store(out)
    store.write_plan({
        "spec": spec.to_dict(), "binary": str(binary_path), "binary_sha256": binary_sha,
        "planned": datetime.now(timezone.utc).isoformat(timespec="seconds"), "runs": entries,
    })

    done = store.completed_keys()
    todo: dict[str, tuple[PlannedRun, dict[str, Any]]] = {}
    for run, entry in zip(runs, entries):
        if entry["key"] not in done:
            todo.setdefault(entry["key"], (run, entry))
    skipped = len(runs) - len(todo)
    env = tuple(sorted(spec.env.items()))
    tasks = [Task(key=key, kind=run.kind,
                  argv=tuple(build_argv(binary_path, spec.config, run, env,
                                        page_heat_window_ns=spec.page_heat_window_ns)),
                  env=env, timeout=spec.timeout) for key, (run, _) in todo.items()]

    progress = Progress(total=len(runs), skipped=skipped, stream=stream, interactive=interactive,
                        quiet=quiet)
    pool: Executor | None = None
    try:
        if tasks:
            pool = make_executor(executor, jobs, scheduler) if isinstance(executor, str) else executor
            for outcome in pool.run(tasks):
                run, entry = todo[outcome["key"]]
                store.write_outcome(entry, outcome)
                progress.finished(run, outcome)
    finally:
        progress.close()
        if pool is not None and isinstance(executor, str):  # ours to close
            pool.close()
        table_path = store.write_table(store.table())
    return SweepSummary(name=spec.name, out=Path(out), total=len(runs), skipped=skipped,
                        executed=progress.executed, failed=progress.failed,
                        seconds=time.monotonic() - t0, table=table_path)
