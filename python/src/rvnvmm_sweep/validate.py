"""Checks of a spec against the emulator, before any run starts.

The emulator is the authority on what it accepts, so instead of keeping a
copy of its key list here we ask it: `rvnvmm config --set ...` rejects an
unknown key naming the nearest valid one, and `--help` lists the options of
each subcommand. A sweep of a thousand runs that fails on its first run
because of a typo would waste nothing, but one whose 500th configuration is
invalid would; every axis value is therefore checked.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

from .spec import Spec, SpecError, key_kind, nearest, toml_literal

#: Options the sweep sets itself; a spec cannot set them.
MANAGED_OPTIONS = {
    "--config": "use the spec's 'config' key",
    "--set": "put config keys in [set] or [axes] by name",
    "--stats": "the sweep stores statistics itself",
    "--json": "the sweep always reads bench results as JSON",
    "--page-heat": "set the spec's 'page_heat_window_ns'; the sweep stores the file",
    "--page-heat-window": "set the spec's 'page_heat_window_ns'",
    "--help": "not an option for a run",
}
#: Seconds a check may take before the binary is deemed broken.
CHECK_TIMEOUT = 60


def validate(spec: Spec, binary: Path) -> list[str]:
    """Raises SpecError naming every problem; returns rvnvmm's warnings."""
    problems: list[str] = []
    warnings: list[str] = []

    helps: dict[tuple[str, ...], str] = {}
    for command in spec.commands():
        sub = command[:1] if command[0] == "run" else command[:2]
        if command[0] == "run":
            program = Path(command[1])
            if not program.is_file():
                problems.append(f"workload program '{program}' not found")
            elif not os.access(program, os.R_OK):
                problems.append(f"workload program '{program}' is not readable")
        if sub not in helps:
            ok, text = _help(str(binary), sub)
            if ok:
                helps[sub] = text
            else:
                problems.append(f"'rvnvmm {' '.join(sub)}' is not a command rvnvmm knows: {text}")

    if spec.page_heat_window_ns is not None:
        for sub, text in helps.items():
            if sub == ("run",) and "--page-heat" not in _options(text):
                problems.append("'page_heat_window_ns' is set, but this rvnvmm has no "
                                "'run --page-heat' option: build a newer one")

    option_keys = [k for k in [*spec.set, *spec.axes] if key_kind(k) == "option"]
    for key in option_keys:
        if key in MANAGED_OPTIONS:
            problems.append(f"option '{key}' cannot be given: {MANAGED_OPTIONS[key]}")
            continue
        for sub, text in helps.items():
            known = _options(text)
            if key not in known:
                problems.append(f"unknown option '{key}' for 'rvnvmm {' '.join(sub)}'"
                                f"{nearest(key, known)}")

    fixed = [(k, v) for k, v in spec.set.items() if key_kind(k) == "config"]
    base_error = _check_config(binary, spec.config, fixed, warnings)
    machine_error = base_error
    if base_error and fixed:
        machine_error = _check_config(binary, spec.config, [], warnings)
    if machine_error:
        problems.append(f"config '{spec.config}': {machine_error}")
    else:
        if base_error:
            problems.append(f"[set]: {base_error}")
        # With a broken fixed set, check the axes against the plain machine
        # so that their own problems still show.
        base = [] if base_error else fixed
        for axis, values in spec.axes.items():
            if key_kind(axis) != "config":
                continue
            for value in values:
                error = _check_config(binary, spec.config, [*base, (axis, value)], warnings)
                if error:
                    problems.append(f"axis '{axis}' = {value!r}: {error}")
                    if "unknown config key" in error:
                        break  # every value fails alike
    if problems:
        raise SpecError(problems, spec.source)
    return list(dict.fromkeys(warnings))


def _check_config(binary: Path, config: str, sets: list[tuple[str, object]],
                  warnings: list[str]) -> str | None:
    """rvnvmm's error for this machine and these keys, or None if it loads."""
    argv = [str(binary), "config", "--config", config]
    for key, value in sets:
        argv += ["--set", f"{key}={toml_literal(value)}"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=CHECK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run {binary} config: {e}"
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    warnings.extend(_strip(ln) for ln in lines if "warning:" in ln)
    if proc.returncode == 0:
        return None
    errors = [_strip(ln) for ln in lines if "warning:" not in ln]
    return " ".join(errors) or f"rvnvmm config exited with status {proc.returncode}"


@cache
def _help(binary: str, sub: tuple[str, ...]) -> tuple[bool, str]:
    """(ok, help text or error) of `rvnvmm SUB --help`."""
    try:
        proc = subprocess.run([binary, *sub, "--help"], capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if ln.strip()), "")
        return False, _strip(first)
    return True, proc.stdout


def _options(help_text: str) -> list[str]:
    """The long options a clap `--help` text lists."""
    return sorted(set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)", help_text)))


def _strip(line: str) -> str:
    for prefix in ("rvnvmm: ", "error: "):
        if line.startswith(prefix):
            line = line[len(prefix):]
    return line
