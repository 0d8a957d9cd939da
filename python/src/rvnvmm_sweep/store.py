"""The results store of a sweep: one directory, safe to kill and resume.

Layout of `--out DIR`:

    plan.json          the spec and every planned run with its key
    runs/KEY.json      one record per finished run (status, error, stderr, ...)
    raw/KEY.json       the run's statistics exactly as rvnvmm wrote them
    raw/KEY.jsonl      or, for `bench`, its JSON rows
    heat/KEY.bin       the run's page-heat file, when the spec records page
                       heat (`page_heat_window_ns`, docs/page-heat.md)
    results.parquet    the table: one row per run (per bench row), every
                       axis and every statistic (results.csv without pyarrow)

A run's raw file (and heat file) and then its record are each written
atomically (a temporary file renamed into place) the moment it finishes,
and a record is only written once they exist, so a sweep killed at any instant
leaves only complete runs behind. The key of a run hashes everything that
determines its result, so re-running a sweep skips exactly the runs already
stored.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .spec import label

#: Statistics that measure the host, not the simulation.
NONDETERMINISTIC = ("host_seconds", "mips")
#: Columns describing how a run went, as opposed to what it measured.
META_COLUMNS = ("run.index", "run.repeat", "run.key", "run.status", "run.error", "run.attempts",
                "run.seconds", "run.returncode")


def _file_mode() -> int:
    """What `open` would give a new file: 0666 less the umask (read once, at import:
    setting the umask to read it is not safe while threads create files)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


#: The mode of the files written (mkstemp's are private, 0600).
FILE_MODE = _file_mode()


def atomic_write(path: Path, text: str | bytes) -> None:
    """Writes `text` to `path` so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Store:
    """A sweep's output directory."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.runs_dir = self.root / "runs"
        self.raw_dir = self.root / "raw"
        self.heat_dir = self.root / "heat"

    @property
    def plan_path(self) -> Path:
        return self.root / "plan.json"

    def record_path(self, key: str) -> Path:
        return self.runs_dir / f"{key}.json"

    def raw_path(self, key: str, kind: str) -> Path:
        return self.raw_dir / f"{key}.{'json' if kind == 'run' else 'jsonl'}"

    def heat_path(self, key: str) -> Path:
        return self.heat_dir / f"{key}.bin"

    # ------------------------------------------------------------ writing
    def write_plan(self, plan: Mapping[str, Any]) -> None:
        atomic_write(self.plan_path, json.dumps(plan, indent=1, sort_keys=False) + "\n")

    def write_outcome(self, planned: Mapping[str, Any], outcome: Mapping[str, Any]) -> None:
        """Stores one finished run: its raw output first, then its record."""
        key = planned["key"]
        record = {k: v for k, v in outcome.items() if k not in ("raw", "stats", "rows", "heat")}
        record.update(key=key, index=planned["index"], point=planned["point"],
                      repeat=planned["repeat"], kind=planned["kind"])
        if outcome.get("status") == "ok":
            atomic_write(self.raw_path(key, planned["kind"]), outcome["raw"])
            if outcome.get("heat") is not None:
                atomic_write(self.heat_path(key), outcome["heat"])
                record["page_heat"] = self.heat_path(key).relative_to(self.root).as_posix()
        atomic_write(self.record_path(key), json.dumps(record, indent=1) + "\n")

    def write_table(self, table: pd.DataFrame) -> Path:
        """Writes the results table as Parquet, or CSV where pyarrow is absent."""
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            path = self.root / "results.csv"
            atomic_write(path, table.to_csv(index=False))
            return path
        path = self.root / "results.parquet"
        fd, tmp = tempfile.mkstemp(prefix=".results.", suffix=".parquet", dir=self.root)
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
        try:
            _parquet_safe(table).to_parquet(tmp, index=False)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return path

    # ------------------------------------------------------------ reading
    def read_plan(self) -> dict[str, Any]:
        if not self.plan_path.is_file():
            raise FileNotFoundError(f"{self.root} holds no sweep (no plan.json)")
        return json.loads(self.plan_path.read_text())

    def read_record(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.record_path(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def completed_keys(self) -> set[str]:
        """Keys of the runs stored as successful."""
        done = set()
        if self.runs_dir.is_dir():
            for path in self.runs_dir.glob("*.json"):
                record = self.read_record(path.stem)
                if record and record.get("status") == "ok" and \
                        self.raw_path(path.stem, record.get("kind", "run")).is_file() and \
                        (not record.get("page_heat") or self.heat_path(path.stem).is_file()):
                    done.add(path.stem)
        return done

    def read_raw(self, key: str, kind: str) -> list[dict[str, Any]]:
        """A run's statistics: one object for `run`, the rows for `bench`."""
        text = self.raw_path(key, kind).read_text()
        if kind == "run":
            return [json.loads(text)]
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def table(self) -> pd.DataFrame:
        """The results table of the stored plan, built from the records."""
        plan = self.read_plan()
        axes = list(plan["spec"].get("axes", {}))
        rows = []
        for planned in plan["runs"]:
            record = self.read_record(planned["key"])
            if record is None:
                continue
            base: dict[str, Any] = {axis: label(planned["point"].get(axis)) for axis in axes}
            base.update({
                "run.index": planned["index"], "run.repeat": planned["repeat"],
                "run.key": planned["key"], "run.status": record.get("status"),
                "run.error": record.get("error"), "run.attempts": record.get("attempts"),
                "run.seconds": record.get("seconds"), "run.returncode": record.get("returncode"),
            })
            if record.get("status") == "ok":
                try:
                    results = self.read_raw(planned["key"], planned["kind"])
                except (OSError, json.JSONDecodeError) as e:
                    base.update({"run.status": "failed", "run.error": f"raw result unreadable: {e}"})
                    results = [{}]
            else:
                results = [{}]
            for result in results:
                rows.append({**base, **flatten(result)})
        columns = axes + list(META_COLUMNS)
        table = pd.DataFrame(rows)
        for column in columns:
            if column not in table:
                table[column] = pd.Series(dtype=object)
        rest = [c for c in table.columns if c not in columns]
        return table[columns + rest]


def load_table(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The results table of the sweep stored in `out_dir`."""
    return Store(out_dir).table()


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Flattens statistics JSON into dotted column names.

    Objects nest with `.`; histograms (lists of `{le_ns, count}`) become one
    column per bucket (`read_latency_hist.le_50`, `.le_inf`); other lists are
    indexed by an `id`/`index` field when their objects have one, else by
    position (`harts.0.cycles`).
    """
    out: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}{key}."))
    elif isinstance(obj, list):
        for pos, item in enumerate(obj):
            if isinstance(item, Mapping) and "le_ns" in item and "count" in item:
                le = item["le_ns"]
                name = "inf" if le is None else (f"{int(le)}" if float(le).is_integer() else f"{le}")
                out[f"{prefix}le_{name}"] = item["count"]
                continue
            tag = pos
            if isinstance(item, Mapping):
                tag = item.get("id", item.get("index", pos))
            out.update(flatten(item, f"{prefix}{tag}."))
    elif prefix:
        out[prefix[:-1]] = obj
    return out


def deterministic_columns(table: pd.DataFrame) -> list[str]:
    """Columns that two runs of the same configuration must agree on."""
    skip = {"run.key", "run.seconds", "run.attempts"}
    return [c for c in table.columns
            if c not in skip and c.rsplit(".", 1)[-1] not in NONDETERMINISTIC]


def _parquet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """Object columns mixing types (e.g. 0 and "fine") as strings, which Parquet needs."""
    table = table.copy()
    for column in table.columns:
        if table[column].dtype == object:
            kinds = {type(v) for v in table[column] if v is not None and not _isnan(v)}
            if len(kinds) > 1:
                table[column] = table[column].map(lambda v: None if v is None or _isnan(v) else str(v))
    return table


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and value != value
