"""The HTML report of a stored sweep.

`write_report(DIR)` reads a results store and writes DIR/report.html: one
self-contained page (figures embedded as base64 PNG, no external files) that
can be mailed or attached to a review. What it shows depends on the sweep:

* `bench locality` / `bench banks` rows: latency against STRIDE / NBANK per
  method and operation, and the paper-shaped tables (seed 000 Tables 3-6);
* `bench bandwidth` rows: NVMM/DRAM bandwidth ratio heatmaps over added tRCD
  x added tRP, per operation and stride (seed 001 §4.1);
* `run` sweeps: a table normalised to a baseline run; with tRCD and tRP
  axes, heatmaps of the normalised time over the grid (seed 001 Tables
  7-10); bars of normalised time with the NVMM request frequency as a
  line (seed 000 Fig. 11); and, for runs that wrote an NVMM medium, its
  wear: the histogram of media writes per unit (XPLine or row) and the
  most written units;
* runs that recorded page heat (the spec's `page_heat_window_ns`): their
  heat maps, time × address per NUMA node (heatmap.py).

`write_heat_report(FILE)` makes the same kind of page for one page-heat
file (`rvnvmm-heat`).

The baseline of a normalised value is the run with the baseline's values
on the baseline axes and the same values on every other axis. By default,
for `run` sweeps, it is the first value of every axis except the workload
(`command`, `args`); a spec's `[report] baseline` table or `--baseline`
chooses others (for instance `user.heap = "dram"`, the DRAM run). `bench`
results are normalised only when a baseline is given.
"""

from __future__ import annotations

import base64
import html
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import figures, heatmap
from .heat import PageHeat, read_heat
from .spec import key_kind, label, parse_value
from .store import Store, atomic_write

#: Fields of bench rows that identify a row (as opposed to measuring).
BENCH_FIELDS = ("bench", "op", "method", "stride", "nbank", "added_trcd_ns", "added_trp_ns")
#: What each bench measures, the headline first.
BENCH_METRICS = {
    "locality": ("avg_latency_ns", "act_per_req", "row_hit_rate"),
    "banks": ("avg_latency_ns", "act_per_req", "row_hit_rate"),
    "bandwidth": ("ratio", "nvmm_ns_per_access", "dram_ns_per_access"),
}
#: x axis of the latency figures.
BENCH_X = {"locality": ("stride", "STRIDE [bytes]"), "banks": ("nbank", "NBANK")}
#: The metric `run` sweeps are normalised on, and the ones shown beside it.
TIME = "sim_time_ns"
RUN_METRICS = ("sim_time_ns", "instructions")
REGION_METRICS = ("reads", "writes", "req_per_sec", "act_per_req", "bank_para", "row_hit_rate",
                  "avg_read_latency_ns", "avg_write_latency_ns",
                  # a device model's own (optane); absent columns are skipped
                  "method.write_amplification", "method.xpbuffer_hit_rate",
                  "method.avg_persist_latency_ns")
#: Most rows a table shows; the results file has them all.
MAX_ROWS = 400
#: Most bars / panels a figure shows before it is left out as unreadable.
MAX_BARS = 72
MAX_PANELS = 12
#: Most runs whose page heat a sweep report draws (each is several figures).
MAX_HEAT_RUNS = 12
#: Bins of a heat map in a sweep report, smaller than a page of its own.
SWEEP_HEAT_ROWS, SWEEP_HEAT_COLUMNS = 240, 480


class ReportError(ValueError):
    """A report that cannot be made as asked (e.g. a baseline off the grid)."""


@dataclass
class Section:
    title: str
    body: str


# ----------------------------------------------------------------- entry
def write_report(out_dir: str | os.PathLike[str], baseline: Mapping[str, Any] | None = None,
                 output: str | os.PathLike[str] | None = None) -> Path:
    """Writes the report of the sweep in `out_dir`; returns its path.

    `baseline` maps axes to the values of the baseline run (values may be
    given as command-line text, read as TOML); it overrides the spec's.
    """
    store = Store(out_dir)
    plan = store.read_plan()
    spec = plan["spec"]
    table = store.table()
    axes = list(spec.get("axes", {}))
    explicit = baseline if baseline is not None else spec.get("report", {}).get("baseline")
    pins = resolve_baseline(spec, explicit)

    ok = table[table["run.status"] == "ok"]
    bench_only = "bench" in ok.columns and len(ok) > 0 and bool(ok["bench"].notna().all())
    shown_pins = {} if bench_only and explicit is None else pins
    sections = [_summary(spec, plan, table, shown_pins, explicit is not None, store)]
    if ok.empty:
        sections.append(Section("Results", "<p>No run succeeded; nothing to plot.</p>"))
    else:
        is_bench = ok["bench"].notna() if "bench" in ok.columns else pd.Series(False, index=ok.index)
        benches = ok[is_bench].groupby("bench", sort=False) if is_bench.any() else []
        for bench, part in benches:
            sections += _bench_sections(str(bench), _drop_empty(part), axes,
                                        pins if explicit is not None else {})
        if (~is_bench).any():
            sections += _run_sections(_drop_empty(ok[~is_bench]), axes, pins)
    heat = _heat_section(plan, axes, store)
    if heat:
        sections.append(heat)
    failures = _failures(table, axes, store)
    if failures:
        sections.append(failures)

    path = Path(output) if output else store.root / "report.html"
    atomic_write(path, _page(spec.get("name", "sweep"), sections))
    return path


def write_heat_report(path: str | os.PathLike[str], output: str | os.PathLike[str] | None = None,
                      metric: str = "accesses") -> Path:
    """Writes the HTML page of one page-heat file (default: beside it, as
    .html); returns its path. Raises ValueError for a file that is not one."""
    path = Path(path)
    heat = read_heat(path)
    sections = [Section("Run", _heat_facts(heat, path, metric))]
    panels = heatmap.heat_panels(heat, metric)
    sections.append(Section("Heat maps", "".join(_figure(p.png, _panel_caption(p, metric))
                                                  for p in panels) + _untouched_nodes(heat, panels)))
    sections.append(Section("Per node", _table_html(_percent(heatmap.node_summary(heat)))))
    hottest = heatmap.hottest_pages(heat, metric=metric)
    sections.append(Section(f"The {len(hottest)} hottest pages",
                            f"<p>By {_e(metric)} over the whole run.</p>" +
                            _table_html(_percent(hottest), exact=["node"])))
    target = Path(output) if output else path.with_suffix(".html")
    atomic_write(target, _page(path.name, sections, kind="page heat"))
    return target


def _heat_facts(heat: PageHeat, path: Path, metric: str) -> str:
    status = ("complete" if heat.complete else
              "cut short: the run did not finish; the whole windows before the break are shown")
    rows = [("file", path.name),
            ("window", heatmap.duration_text(heat.window_ps)),
            ("windows", f"{heat.windows:,} ({heatmap.duration_text(heat.windows * heat.window_ps)} "
                        "of simulated time)"),
            ("file status", status),
            ("records", f"{len(heat.physical):,} physical" +
                        (f", {len(heat.virtual):,} virtual" if len(heat.virtual) else "")),
            ("colour", heatmap.METRIC_TEXT[metric])]
    rows += [(f"region {r.name}", f"node {r.node}, {r.base:#x} to {r.base + r.size:#x} "
                                  f"({heatmap.size_text(r.size)})") for r in heat.regions]
    return "<table class='kv'>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>"
                                          for k, v in rows) + "</table>"


def _untouched_nodes(heat: PageHeat, panels: Sequence[heatmap.Panel]) -> str:
    drawn = {p.title for p in panels}
    idle = [heatmap.node_label(heat, n) for n in heat.nodes if heatmap.node_label(heat, n) not in drawn]
    return f"<p>No page touched on {_e(', '.join(idle))}.</p>" if idle else ""


def _panel_caption(panel: heatmap.Panel, metric: str) -> str:
    caption = (f"{panel.title}: {heatmap.METRIC_TEXT[metric]} over simulated time and address, "
               "log colour scale, white where there were none")
    if panel.cuts:
        caption += "; dashed lines mark untouched addresses cut out of the axis"
    return caption + "."


def _percent(frame: pd.DataFrame) -> pd.DataFrame:
    """Share columns written as percentages."""
    frame = frame.copy()
    for column in frame.columns:
        if str(column).startswith("share of"):
            frame[column] = [f"{v:.2%}" for v in frame[column]]
    return frame


def _heat_section(plan: Mapping[str, Any], axes: list[str], store: Store) -> Section | None:
    """Heat maps of the runs that recorded page heat, the first repeat of
    each grid point (repeats are deterministic), at most MAX_HEAT_RUNS."""
    runs, seen = [], set()
    for planned in plan["runs"]:
        record = store.read_record(planned["key"]) or {}
        point = repr(sorted(planned["point"].items()))
        if record.get("status") == "ok" and store.heat_path(planned["key"]).is_file() \
                and point not in seen:
            seen.add(point)
            runs.append(planned)
    if not runs:
        return None
    body = (f"<p>Line reads and writes reaching each page's memory node (per NUMA node, and by "
            f"virtual page in user mode) over simulated time; every run's file is "
            f"<code>heat/KEY.bin</code> (<code>rvnvmm-heat FILE</code> draws one in full).</p>")
    if len(runs) > MAX_HEAT_RUNS:
        body += (f"<p>Drawn: the first {MAX_HEAT_RUNS} of the {len(runs)} runs with page heat "
                 "(more would make the page too heavy to open).</p>")
    for planned in runs[:MAX_HEAT_RUNS]:
        title = ", ".join(f"{a} = {figures.fmt(_shorten(label(planned['point'].get(a))))}"
                          for a in axes) or "run"
        body += f"<h4>{_e(title)}</h4>"
        try:
            heat = read_heat(store.heat_path(planned["key"]))
        except (OSError, ValueError) as e:
            body += f"<p class='error'>page heat unreadable: {_e(e)}</p>"
            continue
        if not heat.complete:
            body += "<p>The file is cut short: the whole windows before the break are shown.</p>"
        panels = heatmap.heat_panels(heat, max_rows=SWEEP_HEAT_ROWS, max_columns=SWEEP_HEAT_COLUMNS)
        body += "".join(_figure(p.png, _panel_caption(p, "accesses")) for p in panels) + \
            _untouched_nodes(heat, panels)
        body += _table_html(_percent(heatmap.node_summary(heat)))
    return Section("Page heat", body)


def resolve_baseline(spec: Mapping[str, Any], explicit: Mapping[str, Any] | None) -> dict[str, Any]:
    """The baseline as {axis: table cell value}; checks it lies on the grid."""
    axes: Mapping[str, list[Any]] = spec.get("axes", {})
    if explicit is None:
        return {a: label(v[0]) for a, v in axes.items() if key_kind(a) != "workload"}
    pins = {}
    for axis, value in explicit.items():
        if axis not in axes:
            raise ReportError(f"baseline axis '{axis}' is not an axis of the sweep "
                              f"(axes: {', '.join(axes) or 'none'})")
        if isinstance(value, str) and not any(isinstance(v, str) and v == value for v in axes[axis]):
            value = parse_value(value)
        cells = [label(v) for v in axes[axis]]
        if label(value) not in cells:
            raise ReportError(f"baseline {axis} = {value!r} is not one of the axis values {cells!r}")
        pins[axis] = label(value)
    return pins


def normalise(data: pd.DataFrame, identity: Sequence[str], pins: Mapping[str, Any],
              metrics: Sequence[str]) -> pd.DataFrame:
    """Metrics averaged over repeats, with `METRIC ×` = value / baseline value.

    The baseline of a row is the row with the pinned values on the pinned
    axes and the row's own values on every other identity column.
    """
    identity = list(identity)
    metrics = [m for m in metrics if m in data.columns]
    if identity:
        agg = data.groupby(identity, sort=False, dropna=False)[metrics].mean().reset_index()
    else:
        agg = data[metrics].mean().to_frame().T
    if not pins or not metrics:
        return agg
    base_mask = _pinned(agg, pins)
    match = [c for c in identity if c not in pins]
    base = agg.loc[base_mask, match + metrics].rename(columns={m: f"{m}@base" for m in metrics})
    if match:
        merged = agg.merge(base.drop_duplicates(match), on=match, how="left")
    else:
        merged = agg.copy()
        for m in metrics:
            merged[f"{m}@base"] = base[f"{m}@base"].iloc[0] if len(base) else np.nan
    for m in metrics:
        base_values = merged[f"{m}@base"].where(merged[f"{m}@base"] != 0)  # no ratio to zero
        merged[f"{m} ×"] = merged[m] / base_values
    return merged.drop(columns=[f"{m}@base" for m in metrics])


# ------------------------------------------------------------ run sweeps
def _run_sections(data: pd.DataFrame, axes: list[str], pins: Mapping[str, Any]) -> list[Section]:
    region = _request_region(data)
    metrics = [m for m in RUN_METRICS if m in data.columns]
    if region:
        metrics += [c for c in (f"regions.{region}.{m}" for m in REGION_METRICS) if c in data.columns]
    if TIME not in data.columns:
        return [Section("Results", "<p>These runs recorded no simulated time.</p>")]
    norm = normalise(data, axes, pins, metrics)
    normalised = bool(pins) and f"{TIME} ×" in norm.columns
    time_col = f"{TIME} ×" if normalised else TIME
    time_label = "normalised time" if normalised else "simulated time [ns]"
    sections = []

    trcd = next((a for a in axes if key_kind(a) == "config" and a.endswith("trcd_ns")), None)
    trp = next((a for a in axes if key_kind(a) == "config" and a.endswith("trp_ns")), None)
    if trcd and trp:
        others = [a for a in axes if a not in (trcd, trp)]
        panels, pivots = [], []
        for key, part in _groups(norm, others):
            matrix = part.pivot_table(index=trcd, columns=trp, values=time_col, aggfunc="mean")
            title = _group_title(others, key) or time_label
            panels.append((title, matrix))
            pivots.append((title, matrix))
        if len(panels) <= MAX_PANELS:
            png = figures.heatmaps(panels, xlabel=figures.short(trp) + " [ns]",
                                   ylabel=figures.short(trcd) + " [ns]", value_label=time_label)
            sections.append(Section(f"{time_label.capitalize()} over {figures.short(trcd)} × "
                                    f"{figures.short(trp)}",
                                    _figure(png, f"{time_label} for every ({trcd}, {trp}); rows "
                                                 f"{trcd}, columns {trp}") +
                                    "".join(f"<h4>{_e(t)}</h4>" + _pivot_html(m, trcd, trp)
                                            for t, m in pivots[:MAX_PANELS])))

    covered = bool(sections) and all(a in (trcd, trp) for a in axes)
    bars = None if covered else _bars_figure(norm, axes, pins, region, time_col, time_label)
    if bars:
        sections.append(bars)

    shown = axes + [c for m in metrics for c in ((m, f"{m} ×") if normalised else (m,)) if c in norm]
    caption = (f"Averaged over repeats. <code>×</code> columns are normalised to the baseline "
               f"({_pins_text(pins)}).") if normalised else "Averaged over repeats."
    sections.append(Section("Results table", f"<p>{caption}</p>" + _table_html(norm[shown], exact=axes)))
    sections += _wear_sections(data, axes)
    return sections


WEAR_HIST = re.compile(r"regions\.([^.]+)\.wear\.writes_per_unit_hist\.(\d+)\.le$")
#: Most written units listed per run.
WEAR_HOTTEST = 3
#: Most runs drawn in one wear histogram (one line each, with a legend).
MAX_WEAR_LINES = 12


def _wear_sections(data: pd.DataFrame, axes: list[str]) -> list[Section]:
    """Per NVMM region: media writes per unit (XPLine for optane, row for
    the DRAM-timing methods) as histograms, and a table of each run's totals
    and most written units. Runs that wrote nothing to the medium are left
    out; repeats are deterministic, so the first one stands for them all."""
    regions = list(dict.fromkeys(m.group(1) for c in data.columns if (m := WEAR_HIST.match(c))))
    sections = []
    for region in regions:
        prefix = f"regions.{region}.wear."
        buckets = sorted({int(m.group(2)) for c in data.columns
                          if (m := WEAR_HIST.match(c)) and m.group(1) == region})
        rows = data.sort_values("run.repeat", kind="stable").drop_duplicates(axes) if axes else data.head(1)
        rows = rows[pd.to_numeric(rows.get(prefix + "media_writes"), errors="coerce").fillna(0) > 0]
        if rows.empty:
            continue
        varying = [a for a in axes if rows[a].nunique(dropna=False) > 1]
        panels: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {}
        table = []
        for _, row in rows.iterrows():
            label = _short_label(varying, [str(row[a]) for a in varying], with_names=True) or "run"
            unit = str(row.get(prefix + "unit", "unit"))
            bounds, units = [], []
            for b in buckets:
                le, n = row.get(f"{prefix}writes_per_unit_hist.{b}.le"), \
                    row.get(f"{prefix}writes_per_unit_hist.{b}.units")
                if not _missing(le) and not _missing(n):
                    bounds.append(float(le))
                    units.append(float(n))
            panels.setdefault(unit, []).append((label, np.asarray(bounds), np.asarray(units)))
            written = row.get(prefix + "units_written")
            entry = {**{a: row[a] for a in axes}, "unit": unit,
                     "media writes": row.get(prefix + "media_writes"),
                     "units written": written,
                     "writes per unit written": (row.get(prefix + "media_writes") / written
                                                 if not _missing(written) and written else np.nan)}
            for k in range(WEAR_HOTTEST):
                where = row.get(f"{prefix}hottest.{k}.offset")
                if _missing(where):
                    bank, r = row.get(f"{prefix}hottest.{k}.bank"), row.get(f"{prefix}hottest.{k}.row")
                    where = None if _missing(bank) else f"bank {int(bank)} row {int(r)}"
                else:
                    where = f"{int(where):#x}"
                n = row.get(f"{prefix}hottest.{k}.writes")
                entry[f"hottest {k + 1}"] = "" if where is None else f"{where}: {_cell(n)}"
            table.append(entry)
        if max(len(v) for v in panels.values()) > MAX_WEAR_LINES:
            body = (f"<p>More than {MAX_WEAR_LINES} runs: too many lines to draw; the table has "
                    "them all.</p>")
        else:
            png = figures.wear_histograms(
                [(f"{region}: media writes per {unit}", lines) for unit, lines in panels.items()],
                xlabel="media writes per unit (at most)", ylabel="units")
            body = _figure(png, f"Units of the {region} medium by how often they were written "
                                "(bucket bounds 1, 2, 4, ...; an XPLine for optane, a row for the "
                                "DRAM-timing methods)")
        body += _table_html(pd.DataFrame(table), exact=axes)
        sections.append(Section(f"Wear of the {region} medium", body))
    return sections


def _bars_figure(norm: pd.DataFrame, axes: list[str], pins: Mapping[str, Any], region: str | None,
                 time_col: str, time_label: str) -> Section | None:
    """Seed 000 Fig. 11: bars of normalised time per workload and series,
    request frequency of the last series as a line."""
    if not axes:
        return None
    rows = norm[~_pinned(norm, pins)] if pins and len(norm) > 1 else norm
    if rows.empty:
        return None
    workload = [a for a in axes if key_kind(a) == "workload"]
    free = [a for a in axes if a not in pins and a not in workload]
    x_axes = workload or free[:1] or axes
    series_axes = [a for a in axes if a not in x_axes and rows[a].nunique(dropna=False) > 1]
    x_of = [tuple(map(str, t)) for t in rows[x_axes].itertuples(index=False)]
    s_of = [tuple(map(str, t)) for t in rows[series_axes].itertuples(index=False)] \
        if series_axes else [()] * len(rows)
    x_keys, s_keys = list(dict.fromkeys(x_of)), list(dict.fromkeys(s_of))
    if len(x_keys) * len(s_keys) > MAX_BARS:
        return None
    freq_col = f"regions.{region}.req_per_sec" if region and f"regions.{region}.req_per_sec" in rows else None
    bars = np.full((len(x_keys), len(s_keys)), np.nan)
    line = np.full(len(x_keys), np.nan)
    xi = {k: i for i, k in enumerate(x_keys)}
    si = {k: i for i, k in enumerate(s_keys)}
    times = rows[time_col].to_numpy(dtype=float)
    freqs = rows[freq_col].to_numpy(dtype=float) if freq_col else None
    for pos, (x, s) in enumerate(zip(x_of, s_of)):
        i, j = xi[x], si[s]
        bars[i, j] = times[pos]
        if freqs is not None and j == len(s_keys) - 1:
            line[i] = freqs[pos]
    order = list(range(len(x_keys)))
    if workload:  # the paper sorts programs by the last series' normalised time
        order.sort(key=lambda i: (np.isnan(bars[i, -1]), bars[i, -1]))
    groups = [_short_label(x_axes, x_keys[i], with_names=not workload) for i in order]
    groups = [g[4:] if g.startswith("run ") else g for g in groups]  # the program names suffice
    series = [_short_label(series_axes, k, with_names=True) for k in s_keys]
    line_label = f"{region} requests/s" + (f" ({series[-1]})" if len(series) > 1 else "")
    png = figures.bars_with_line(groups, series, bars[order], line[order] if freq_col else None,
                                 bar_label=time_label, line_label=line_label,
                                 title=f"{time_label.capitalize()} and {region or 'memory'} "
                                       "request frequency")
    caption = f"Bars: {time_label}" + (f" (baseline: {_pins_text(pins)})" if pins else "") + \
              (f"; line: requests per second to the {region} region" if freq_col else "") + "."
    return Section("Normalised time and request frequency" if pins else "Time and request frequency",
                   _figure(png, caption))


# ---------------------------------------------------------- bench sweeps
def _bench_sections(bench: str, data: pd.DataFrame, axes: list[str],
                    pins: Mapping[str, Any]) -> list[Section]:
    fields = [f for f in BENCH_FIELDS if f in data.columns and f != "bench"]
    metrics = [m for m in BENCH_METRICS.get(bench, ()) if m in data.columns] or \
        [c for c in data.columns if c not in fields and not c.startswith("run.") and c not in axes
         and pd.api.types.is_numeric_dtype(data[c])]
    extra = [a for a in axes if data[a].nunique(dropna=False) > 1
             and (not fields or data.groupby(fields, dropna=False)[a].nunique(dropna=False).max() > 1)]
    sections = []
    if bench in BENCH_X and BENCH_X[bench][0] in data.columns and "avg_latency_ns" in data.columns:
        x, xlabel = BENCH_X[bench]
        series = [c for c in ("method",) if c in data.columns] + extra
        png = figures.latency_lines(data, x=x, y="avg_latency_ns", panel="op" if "op" in data else None,
                                    series=series, xlabel=xlabel, ylabel="average latency [ns]",
                                    title=f"bench {bench}")
        body = _figure(png, f"Average latency per access against {xlabel.split()[0]}, per method "
                            f"(seed 000 Tables {'3-4' if bench == 'locality' else '5-6'}).")
        for metric in metrics[:2]:
            index = extra + [c for c in ("op", x) if c in data.columns]
            pivot = data.pivot_table(index=index, columns="method", values=metric, aggfunc="mean") \
                if "method" in data.columns else data.groupby(index)[[metric]].mean()
            body += f"<h4>{_e(metric)}</h4>" + _table_html(pivot.reset_index())
        sections.append(Section(f"bench {bench}", body))
    elif bench == "bandwidth" and {"added_trcd_ns", "added_trp_ns", "ratio"} <= set(data.columns):
        by = extra + [c for c in ("op", "stride") if c in data.columns]
        panels = []
        body = ""
        for key, part in _groups(data, by):
            matrix = part.pivot_table(index="added_trcd_ns", columns="added_trp_ns", values="ratio",
                                      aggfunc="mean")
            title = _group_title(by, key) or "ratio"
            panels.append((title, matrix))
            body += f"<h4>{_e(title)}</h4>" + _pivot_html(matrix, "added tRCD [ns]", "added tRP [ns]")
        figure = ""
        if len(panels) <= MAX_PANELS:
            png = figures.heatmaps(panels, xlabel="added tRP [ns]", ylabel="added tRCD [ns]",
                                   value_label="NVMM / DRAM bandwidth")
            figure = _figure(png, "NVMM bandwidth normalised to DRAM over added tRCD × tRP "
                                  "(seed 001 §4.1).")
        sections.append(Section("bench bandwidth", figure + body))
    else:
        index = extra + fields
        sections.append(Section(f"bench {bench}", _table_html(
            data.groupby(index, sort=False, dropna=False)[metrics].mean().reset_index()
            if index else data[metrics])))

    if pins:
        identity = axes + [f for f in fields if not any(_redundant(data, a, f) for a in pins)]
        norm = normalise(data, identity, pins, metrics)
        shown = identity + [c for m in metrics for c in (m, f"{m} ×") if c in norm]
        sections.append(Section(f"bench {bench}, normalised",
                                f"<p>Normalised to the baseline ({_pins_text(pins)}).</p>" +
                                _table_html(norm[shown], exact=axes)))
    return sections


# --------------------------------------------------------------- sections
def _summary(spec: Mapping[str, Any], plan: Mapping[str, Any], table: pd.DataFrame,
             pins: Mapping[str, Any], explicit: bool, store: Store) -> Section:
    runs = table.drop_duplicates("run.key") if len(table) else table
    n_ok = int((runs["run.status"] == "ok").sum()) if len(runs) else 0
    n_failed = int((runs["run.status"] != "ok").sum()) if len(runs) else 0
    missing = len(plan["runs"]) - len(runs)
    rows = [("sweep", spec.get("name", "")), ("description", spec.get("description", "")),
            ("machine", spec.get("config", "")),
            ("command", " ".join(shlex.quote(w) for w in spec.get("command", [])) or "(axis)"),
            ("repeat", spec.get("repeat", 1))]
    rows += [(f"set {k}", label(v)) for k, v in spec.get("set", {}).items()]
    rows += [(f"axis {k}", ", ".join(str(label(v)) for v in vs)) for k, vs in spec.get("axes", {}).items()]
    rows += [("runs", f"{len(plan['runs'])} planned: {n_ok} succeeded, {n_failed} failed"
              + (f", {missing} not run yet" if missing else "")),
             ("baseline", _pins_text(pins) + ("" if explicit else " (default)") if pins else "none"),
             ("rvnvmm", f"{plan.get('binary', '')} (sha256 {plan.get('binary_sha256', '')[:16]}…)"),
             ("planned", plan.get("planned", ""))]
    files = [p.name for p in (store.root / "results.parquet", store.root / "results.csv") if p.exists()]
    body = "<table class='kv'>" + "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows if v != "") + "</table>"
    if files:
        body += "<p>Every statistic of every run: " + ", ".join(
            f"<a href='{_e(f)}'>{_e(f)}</a>" for f in files) + "; raw statistics in <code>raw/</code>.</p>"
    return Section("Sweep", body)


def _failures(table: pd.DataFrame, axes: list[str], store: Store) -> Section | None:
    failed = table[table["run.status"] != "ok"].drop_duplicates("run.key")
    if failed.empty:
        return None
    body = ""
    for _, row in failed.head(50).iterrows():
        record = store.read_record(row["run.key"]) or {}
        stderr = "\n".join(record.get("stderr", "").splitlines()[-12:])
        point = ", ".join(f"{a} = {row[a]}" for a in axes)
        body += (f"<h4>{_e(point or 'run')} (repeat {row['run.repeat']})</h4>"
                 f"<p class='error'>{_e(row['run.error'])} — {int(row['run.attempts'] or 0)} attempt(s)</p>"
                 + (f"<pre>{_e(stderr)}</pre>" if stderr else ""))
    if len(failed) > 50:
        body += f"<p>… and {len(failed) - 50} more (see <code>runs/</code>).</p>"
    return Section(f"Failed runs ({len(failed)})", body)


# ----------------------------------------------------------------- helpers
def _pinned(frame: pd.DataFrame, pins: Mapping[str, Any]) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for axis, value in pins.items():
        mask &= frame[axis] == value
    return mask


def _groups(frame: pd.DataFrame, by: Sequence[str]):
    if not by:
        return [((), frame)]
    return [(k if isinstance(k, tuple) else (k,), g)
            for k, g in frame.groupby(list(by), sort=False, dropna=False)]


def _group_title(names: Sequence[str], key: Sequence[Any]) -> str:
    """`read, STRIDE 32` / `trcd_ns = 13.75`: a panel title from group values."""
    parts = []
    for name, value in zip(names, key):
        text = figures.fmt(_shorten(value))
        if name == "op":
            parts.append(text)
        elif name == "stride":
            parts.append(f"STRIDE {text}")
        else:
            parts.append(f"{figures.short(name)} = {text}")
    return ", ".join(parts)


def _short_label(axes: Sequence[str], values: Sequence[str], with_names: bool) -> str:
    parts = []
    for a, v in zip(axes, values):
        v = _shorten(v)
        parts.append(f"{figures.short(a)}={v}" if with_names else str(v))
    return ", ".join(parts)


def _shorten(value: Any) -> Any:
    """Workload labels with program paths cut to their base names."""
    if isinstance(value, str) and "/" in value:
        try:
            return " ".join(os.path.basename(w) if "/" in w else w for w in shlex.split(value))
        except ValueError:
            return value
    return value


def _redundant(frame: pd.DataFrame, axis: str, field: str) -> bool:
    """Whether a bench field just repeats an axis (e.g. `method` and `--method`)."""
    return (frame.groupby(axis, dropna=False)[field].nunique(dropna=False).max() <= 1 and
            frame.groupby(field, dropna=False)[axis].nunique(dropna=False).max() <= 1)


def _request_region(frame: pd.DataFrame) -> str | None:
    """The region whose request frequency the figures show: `nvmm`, else the
    first region that is not `dram`."""
    regions = [c.split(".")[1] for c in frame.columns
               if c.startswith("regions.") and c.endswith(".req_per_sec")]
    if "nvmm" in regions:
        return "nvmm"
    return next((r for r in regions if r != "dram"), regions[0] if regions else None)


def _drop_empty(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.dropna(axis=1, how="all")


def _pins_text(pins: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {figures.fmt(v)}" for k, v in pins.items())


def _e(value: Any) -> str:
    return html.escape(str(value))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and np.isnan(value))


def _cell(value: Any, digits: int = 6) -> str:
    if _missing(value):
        return ""
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return f"{v:,.0f}" if abs(v) >= 1e4 else figures.fmt(v, digits)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return str(_shorten(value))


def _table_html(frame: pd.DataFrame, exact: Sequence[str] = ()) -> str:
    """A table; `exact` columns (axis values) are printed as given."""
    frame = frame.reset_index(drop=True)
    rows = frame.head(MAX_ROWS)
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    digits = [4 if str(c).endswith(" ×") else 6 for c in frame.columns]
    plain = [c in exact for c in frame.columns]
    body = "".join(
        "<tr>" + "".join(f"<td class='{'num' if n else ''}'>"
                         f"{_e(figures.fmt(v) if p and not _missing(v) else _cell(v, d))}</td>"
                         for v, n, d, p in zip(row, numeric, digits, plain)) + "</tr>"
        for row in rows.itertuples(index=False))
    more = f"<p>First {MAX_ROWS} of {len(frame)} rows.</p>" if len(frame) > MAX_ROWS else ""
    return (f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"</div>{more}")


def _pivot_html(matrix: pd.DataFrame, rows_name: str, cols_name: str) -> str:
    head = f"<th>{_e(figures.short(rows_name))} \\ {_e(figures.short(cols_name))}</th>" + \
        "".join(f"<th>{_e(figures.fmt(c))}</th>" for c in matrix.columns)
    body = "".join(f"<tr><th>{_e(figures.fmt(i))}</th>" +
                   "".join(f"<td class='num'>{_e(_cell(v, 4))}</td>" for v in row) + "</tr>"
                   for i, row in zip(matrix.index, matrix.to_numpy()))
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _figure(png: bytes, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f"<figure><img alt='{_e(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{_e(caption)}</figcaption></figure>")


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
h4 { margin-bottom: 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; } th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { width: 12em; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption { font-size: 0.85em; color: #555; }
.error { color: #a00; } pre { background: #f7f7f7; padding: 0.5em; font-size: 0.8em; overflow-x: auto; }
"""


def _page(name: str, sections: Sequence[Section], kind: str = "sweep") -> str:
    made = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = "".join(f"<section><h2>{_e(s.title)}</h2>{s.body}</section>" for s in sections)
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>rvnvmm {kind} {_e(name)}</title><style>{STYLE}</style></head>"
            f"<body><h1>rvnvmm {kind} <code>{_e(name)}</code></h1>"
            f"<p>Report made {made}.</p>{body}</body></html>\n")
