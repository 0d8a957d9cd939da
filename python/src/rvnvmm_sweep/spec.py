"""Sweep specifications: reading, structural checks and grid expansion.

A spec names a machine (`config`), a workload (`command`), fixed settings
(`set`) and a grid (`axes`). Keys of `set` and `axes` are of three kinds:

* config keys (`memory.nvmm.trcd_ns`), passed as `--set KEY=VALUE`;
* options of the rvnvmm subcommand (`--max-insns`, `--size`), whose names
  start with `--`;
* the workload itself: an axis `command` (each value a whole command) or
  `args` (each value a list appended to the command).

Everything that can be checked without the emulator is checked here, and all
problems are reported together, so a typo costs one try and not one per
problem. Checks that need the binary (config keys, option names) live in
`validate.py`.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

#: Top-level keys a spec may have.
SPEC_KEYS = ("name", "description", "config", "command", "repeat", "timeout", "env", "set", "axes",
             "report", "page_heat_window_ns")
#: Keys of the `[report]` table.
REPORT_KEYS = ("baseline",)
#: Axis names that vary the workload rather than the machine.
WORKLOAD_AXES = ("command", "args")
#: Subcommands a sweep can drive.
SUBCOMMANDS = ("run", "bench")
#: The built-in machine used when a spec names none (rvnvmm's own default).
DEFAULT_CONFIG = "freedom-u500"
#: The environment runs get when a spec gives none. Runs never inherit the
#: environment of the machine they execute on: the guest sees its
#: environment (its size moves the stack; variables such as MALLOC_* change
#: glibc's behaviour), and Dask workers set variables of their own.
DEFAULT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
#: Placeholder replaced, in command words and option values, by the spec's directory.
SPEC_DIR_PLACEHOLDER = "{spec_dir}"
#: The longest page-heat window: rvnvmm keeps it in picoseconds, in a u64.
MAX_PAGE_HEAT_WINDOW_NS = (2**64 - 1) // 1000

Scalar = (bool, int, float, str)


class SpecError(ValueError):
    """A spec that cannot run; `problems` lists every reason found."""

    def __init__(self, problems: Sequence[str], source: str | None = None):
        self.problems = list(problems)
        self.source = source
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid sweep spec{where} ({len(self.problems)} problem"
                         f"{'' if len(self.problems) == 1 else 's'}):\n{lines}")


def key_kind(key: str) -> str:
    """Classifies a `set`/`axes` key: `workload`, `option` or `config`."""
    if key in WORKLOAD_AXES:
        return "workload"
    if key.startswith("--"):
        return "option"
    return "config"


def nearest(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'X'?)` for the closest choice, or an empty string."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


def toml_literal(value: Any) -> str:
    """`value` written as a TOML value, as `rvnvmm --set KEY=VALUE` reads it.

    Strings are quoted so that a string that looks like a number stays a
    string; rvnvmm would otherwise read `"1000"` as an integer.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def parse_value(text: str) -> Any:
    """Reads a command-line value as rvnvmm does: TOML if it parses, else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def label(value: Any) -> Any:
    """The value an axis contributes to a results table cell.

    Lists (commands, argument lists, repeated options) become one
    shell-quoted string so that every cell is a scalar.
    """
    if isinstance(value, (list, tuple)):
        return " ".join(shlex.quote(str(v)) for v in value)
    return value


def option_words(name: str, value: Any) -> list[str]:
    """Command-line words for option `name` set to `value`.

    `true` gives the bare flag, `false` nothing, and a list repeats the flag
    once per element (clap accumulates repeated options).
    """
    if value is True:
        return [name]
    if value is False:
        return []
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in option_words(name, v)]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return [name, str(value)]


@dataclass(frozen=True)
class PlannedRun:
    """One invocation of the emulator: a grid point and a repeat index."""

    index: int
    point: Mapping[str, Any]
    repeat: int
    command: tuple[str, ...]
    config_set: tuple[tuple[str, Any], ...]
    options: tuple[tuple[str, Any], ...]

    @property
    def kind(self) -> str:
        """`run` or `bench`."""
        return self.command[0]

    @property
    def program(self) -> str | None:
        """The guest program of a `run` command."""
        return self.command[1] if self.kind == "run" and len(self.command) > 1 else None

    def describe(self) -> str:
        """A short human label: the axis values, and the repeat if any."""
        parts = [f"{k.rsplit('.', 1)[-1] if key_kind(k) == 'config' else k}={label(v)}"
                 for k, v in self.point.items()]
        if self.repeat:
            parts.append(f"#{self.repeat}")
        return " ".join(parts) or "(single run)"


@dataclass(frozen=True)
class Spec:
    """A checked sweep specification.

    Build one with `Spec.from_dict` or `load_spec`; the constructor itself
    does not check anything.
    """

    name: str
    command: tuple[str, ...]
    config: str = DEFAULT_CONFIG
    description: str = ""
    repeat: int = 1
    timeout: float | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_ENV))
    set: Mapping[str, Any] = field(default_factory=dict)
    axes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    baseline: Mapping[str, Any] | None = None
    #: Record page heat in every `run` with this window (docs/page-heat.md).
    page_heat_window_ns: int | None = None
    base_dir: Path = field(default_factory=Path.cwd)
    source: str | None = None

    # ------------------------------------------------------------ reading
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: str | Path | None = None,
                  source: str | None = None) -> Spec:
        """Checks `data` (a parsed TOML spec) and builds a Spec.

        Relative paths (the config file, the guest program) are resolved
        against `base_dir`: the spec file's directory, or the current one.
        """
        base = Path(base_dir).resolve() if base_dir is not None else Path.cwd()
        problems: list[str] = []
        if not isinstance(data, Mapping):
            raise SpecError([f"a spec is a table of keys, not {type(data).__name__}"], source)

        for key in data:
            if key not in SPEC_KEYS:
                problems.append(f"unknown spec key '{key}'{nearest(key, SPEC_KEYS)}; "
                                f"the keys are {', '.join(SPEC_KEYS)}")

        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append("'name' is missing or empty: give the sweep a name")
            name = ""
        elif any(c in name for c in "/\\") or name.startswith("."):
            problems.append(f"'name' {name!r} must not contain '/' or '\\' or start with '.'")

        description = data.get("description", "")
        if not isinstance(description, str):
            problems.append("'description' must be a string")
            description = ""

        config = data.get("config", DEFAULT_CONFIG)
        if not isinstance(config, str) or not config:
            problems.append("'config' must be a machine name (e.g. 'freedom-u500') or a path to a TOML file")
            config = DEFAULT_CONFIG
        elif "/" in config or config.endswith(".toml"):
            path = (base / config).resolve()
            if not path.is_file():
                problems.append(f"config file '{config}' not found (looked for {path})")
            config = str(path)

        repeat = data.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            problems.append(f"'repeat' must be an integer >= 1, got {repeat!r}")
            repeat = 1

        timeout = data.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or timeout <= 0):
            problems.append(f"'timeout' must be a positive number of seconds, got {timeout!r}")
            timeout = None

        env = data.get("env", DEFAULT_ENV)
        if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
            problems.append("'env' must be a table of NAME = \"value\" strings")
            env = DEFAULT_ENV
        elif any("=" in k or not k for k in env):
            problems.append("'env' names must be non-empty and contain no '='")

        fixed = data.get("set", {})
        if not isinstance(fixed, Mapping):
            problems.append("'set' must be a table of KEY = VALUE")
            fixed = {}
        axes_in = data.get("axes", {})
        if not isinstance(axes_in, Mapping):
            problems.append("'axes' must be a table of KEY = [VALUES]")
            axes_in = {}

        for key, value in fixed.items():
            kind = key_kind(key)
            if kind == "workload":
                problems.append(f"'{key}' cannot be fixed in [set]: put it in 'command' "
                                f"or make it an axis")
            elif not _settable(value):
                problems.append(f"[set] '{key}' has a value of unsupported type "
                                f"{type(value).__name__}")

        axes: dict[str, tuple[Any, ...]] = {}
        for key, values in axes_in.items():
            if key in fixed:
                problems.append(f"'{key}' is both fixed in [set] and an axis: keep one")
            if not isinstance(values, (list, tuple)):
                problems.append(f"axis '{key}' must be a list of values, got {values!r}")
                continue
            if not values:
                problems.append(f"axis '{key}' is empty: give it at least one value")
                continue
            problems.extend(_axis_problems(key, values))
            axes[key] = tuple(_substitute(v, base) for v in values)

        command = data.get("command")
        if command is None:
            if "command" not in axes:
                problems.append("'command' is missing: e.g. command = [\"run\", \"path/to/prog\"] "
                                "or [\"bench\", \"locality\"]")
            command = ()
        elif "command" in axes:
            problems.append("'command' is given both at the top level and as an axis: keep one")
            command = ()
        elif not _is_words(command, allow_empty=False):
            problems.append(f"'command' must be a non-empty list of strings, got {command!r}")
            command = ()
        else:
            problems.extend(_command_problems(command, "'command'"))

        baseline = None
        report = data.get("report", {})
        if not isinstance(report, Mapping):
            problems.append("'report' must be a table")
        else:
            for key in report:
                if key not in REPORT_KEYS:
                    problems.append(f"unknown key 'report.{key}'{nearest(key, REPORT_KEYS)}")
            if "baseline" in report:
                baseline = report["baseline"]
                if not isinstance(baseline, Mapping):
                    problems.append("'report.baseline' must be a table of AXIS = VALUE")
                    baseline = None
                else:
                    for key, value in baseline.items():
                        if key not in axes:
                            problems.append(f"report baseline names '{key}', which is not an axis"
                                            f"{nearest(key, axes)}")
                        elif value not in axes[key]:
                            problems.append(f"report baseline {key} = {value!r} is not one of the "
                                            f"axis values {list(axes[key])!r}")

        heat_window = data.get("page_heat_window_ns")
        if heat_window is not None:
            if isinstance(heat_window, bool) or not isinstance(heat_window, int) \
                    or not 0 < heat_window <= MAX_PAGE_HEAT_WINDOW_NS:
                problems.append(f"'page_heat_window_ns' must be a whole number of nanoseconds from 1 "
                                f"to {MAX_PAGE_HEAT_WINDOW_NS}, got {heat_window!r} "
                                "(e.g. 1000000 for 1 ms windows)")
                heat_window = None
            else:
                problems.extend(_page_heat_problems(command, axes, fixed))

        if problems:
            raise SpecError(problems, source)
        return cls(name=name, command=tuple(_substitute(w, base) for w in command), config=config,
                   description=description, repeat=repeat,
                   timeout=float(timeout) if timeout is not None else None,
                   env={k: _substitute(v, base) for k, v in env.items()},
                   set={k: _substitute(v, base) for k, v in fixed.items()}, axes=axes,
                   baseline=dict(baseline) if baseline is not None else None,
                   page_heat_window_ns=heat_window, base_dir=base, source=source)

    # --------------------------------------------------------- expansion
    @property
    def grid_size(self) -> int:
        """Number of grid points (without repeats)."""
        return math.prod(len(v) for v in self.axes.values())

    def points(self) -> list[dict[str, Any]]:
        """Every combination of axis values, the first axis varying slowest."""
        names = list(self.axes)
        return [dict(zip(names, combo)) for combo in itertools.product(*self.axes.values())]

    def runs(self) -> list[PlannedRun]:
        """Every invocation of the sweep, in grid order, repeats adjacent."""
        runs = []
        for point in self.points():
            command = list(point.get("command", self.command))
            command += list(point.get("args", ()))
            command = self._resolve_program(command)
            config_set = [(k, v) for k, v in self.set.items() if key_kind(k) == "config"]
            config_set += [(k, v) for k, v in point.items() if key_kind(k) == "config"]
            options = [(k, v) for k, v in self.set.items() if key_kind(k) == "option"]
            options += [(k, v) for k, v in point.items() if key_kind(k) == "option"]
            for r in range(self.repeat):
                runs.append(PlannedRun(index=len(runs), point=point, repeat=r,
                                       command=tuple(command), config_set=tuple(config_set),
                                       options=tuple(options)))
        return runs

    def commands(self) -> list[tuple[str, ...]]:
        """The distinct resolved commands of the grid (without args axes)."""
        raw = self.axes.get("command", (self.command,))
        return list(dict.fromkeys(tuple(self._resolve_program(list(c))) for c in raw))

    def _resolve_program(self, command: list[str]) -> list[str]:
        """Makes a `run` command's program path absolute (runs execute in a
        scratch directory, so relative paths would not find it)."""
        if len(command) >= 2 and command[0] == "run":
            command = list(command)
            command[1] = str((self.base_dir / command[1]).resolve())
        return command

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain data (paths resolved), for the results store."""
        out: dict[str, Any] = {"name": self.name, "config": self.config, "repeat": self.repeat}
        if self.description:
            out["description"] = self.description
        if self.command:
            out["command"] = list(self.command)
        if self.timeout is not None:
            out["timeout"] = self.timeout
        out["env"] = dict(self.env)
        out["set"] = dict(self.set)
        out["axes"] = {k: list(v) for k, v in self.axes.items()}
        if self.baseline is not None:
            out["report"] = {"baseline": dict(self.baseline)}
        if self.page_heat_window_ns is not None:
            out["page_heat_window_ns"] = self.page_heat_window_ns
        return out


def load_spec(spec: str | Path | Mapping[str, Any] | Spec, base_dir: str | Path | None = None) -> Spec:
    """A Spec from a TOML file path, a dict or a Spec (returned as is)."""
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, Mapping):
        return Spec.from_dict(spec, base_dir=base_dir)
    path = Path(spec)
    if not path.is_file():
        raise SpecError([f"spec file not found: {path}"], str(path))
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise SpecError([f"not valid TOML: {e}"], str(path)) from None
    return Spec.from_dict(data, base_dir=base_dir if base_dir is not None else path.resolve().parent,
                          source=str(path))


# ------------------------------------------------------------------ helpers
def _settable(value: Any) -> bool:
    if isinstance(value, Scalar):
        return True
    if isinstance(value, (list, tuple)):
        return all(_settable(v) for v in value)
    if isinstance(value, Mapping):
        return all(_settable(v) for v in value.values())
    return False


def _is_words(value: Any, allow_empty: bool) -> bool:
    return (isinstance(value, (list, tuple)) and (allow_empty or len(value) > 0)
            and all(isinstance(w, str) for w in value))


def _command_problems(command: Sequence[str], where: str) -> list[str]:
    sub = command[0]
    if sub not in SUBCOMMANDS:
        return [f"{where} starts with '{sub}': it must start with 'run' or 'bench'"
                f"{nearest(sub, SUBCOMMANDS)}"]
    if len(command) < 2:
        what = "the guest program" if sub == "run" else "the benchmark name"
        return [f"{where} {list(command)!r} lacks {what}"]
    return []


def _page_heat_problems(command: Any, axes: Mapping[str, Sequence[Any]],
                        fixed: Mapping[str, Any]) -> list[str]:
    """Page heat needs a `run` command and the timing model's memory system."""
    problems = []
    commands = [command] if command else list(axes.get("command", ()))
    if commands and not any(_is_words(c, allow_empty=False) and c[0] == "run" for c in commands):
        problems.append("'page_heat_window_ns' records `run` commands, and this sweep has only "
                        "`bench` ones: remove it")
    models = [fixed["machine.model"]] if "machine.model" in fixed else list(axes.get("machine.model", ()))
    if "functional" in models:
        problems.append("'page_heat_window_ns' needs the timing model's memory system, and "
                        "machine.model = \"functional\" has none: record heat with \"timing\" only")
    return problems


def _axis_problems(key: str, values: Sequence[Any]) -> list[str]:
    problems = []
    if key == "command":
        for v in values:
            if not _is_words(v, allow_empty=False):
                problems.append(f"axis 'command': each value must be a non-empty list of strings, got {v!r}")
            else:
                problems.extend(_command_problems(v, "axis 'command' value"))
    elif key == "args":
        for v in values:
            if not _is_words(v, allow_empty=True):
                problems.append(f"axis 'args': each value must be a list of strings, got {v!r}")
    else:
        for v in values:
            if not _settable(v):
                problems.append(f"axis '{key}' has a value of unsupported type {type(v).__name__}: {v!r}")
    seen: list[Any] = []
    for v in values:
        if v in seen:
            problems.append(f"axis '{key}' lists {v!r} twice")
        else:
            seen.append(v)
    return problems


def _substitute(value: Any, base: Path) -> Any:
    """Replaces `{spec_dir}` in strings (recursively in lists)."""
    if isinstance(value, str):
        return value.replace(SPEC_DIR_PLACEHOLDER, str(base))
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(v, base) for v in value)
    return value
