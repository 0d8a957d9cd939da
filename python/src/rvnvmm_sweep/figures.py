"""Matplotlib figures for sweep reports, returned as PNG bytes.

Figures are drawn on `matplotlib.figure.Figure` objects with the Agg canvas
directly, not through pyplot, so that making a report needs no display,
keeps no global figure state and works from any thread.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Line and bar colours (matplotlib's tab10, fixed so methods keep a colour).
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
DPI = 100


def to_png(fig: Figure) -> bytes:
    """The figure rendered as PNG."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    return buf.getvalue()


def short(name: str) -> str:
    """`memory.nvmm.trcd_ns` -> `trcd_ns`: axis names as plot labels."""
    return name.rsplit(".", 1)[-1] if not name.startswith("--") else name


def fmt(value: Any, digits: int = 6) -> str:
    """A compact label: integers without `.0`, other floats to `digits`
    significant digits (enough to tell 213.75 from 213.8)."""
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def latency_lines(data: pd.DataFrame, x: str, y: str, panel: str | None, series: Sequence[str],
                  xlabel: str, ylabel: str, title: str) -> bytes:
    """One panel per value of `panel`, one line per combination of `series`.

    Used for latency against STRIDE and against NBANK (seed 000 Tables 3-6).
    """
    panels = list(dict.fromkeys(data[panel])) if panel else [None]
    fig = Figure(figsize=(5.2 * len(panels), 3.8), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, value in zip(axes, panels):
        part = data if panel is None else data[data[panel] == value]
        groups = part.groupby(list(series), sort=False, dropna=False) if series else [((), part)]
        for i, (key, line) in enumerate(groups):
            key = key if isinstance(key, tuple) else (key,)
            line = line.groupby(x, sort=True)[y].mean()
            name = ", ".join(fmt(k) if j == 0 else f"{short(s)}={fmt(k)}"
                             for j, (s, k) in enumerate(zip(series, key))) or y
            ax.plot(line.index.to_numpy(dtype=float), line.to_numpy(dtype=float), marker="o",
                    color=COLOURS[i % len(COLOURS)], label=name)
        xs = np.asarray(sorted(set(part[x])), dtype=float)
        if len(xs) > 1 and xs.min() > 0 and xs.max() / xs.min() >= 8:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [fmt(v) for v in xs])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{title} ({fmt(value)})" if value is not None else title, fontsize=10)
        ax.legend(fontsize=8)
    return to_png(fig)


def heatmaps(panels: Sequence[tuple[str, pd.DataFrame]], xlabel: str, ylabel: str,
             value_label: str) -> bytes:
    """Annotated heatmaps, one per (title, matrix) with rows = y and columns = x
    (seed 001's tables of added tRCD x added tRP)."""
    n = len(panels)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.6 * cols, 4.0 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax, (title, matrix) in zip(axes, panels):
        values = matrix.to_numpy(dtype=float)
        image = ax.imshow(values, cmap="viridis", origin="upper", aspect="auto")
        ax.set_xticks(range(matrix.shape[1]), [fmt(v) for v in matrix.columns])
        ax.set_yticks(range(matrix.shape[0]), [fmt(v) for v in matrix.index])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        finite = values[np.isfinite(values)]
        middle = (finite.min() + finite.max()) / 2 if finite.size else 0
        if matrix.size <= 100:
            for (i, j), v in np.ndenumerate(values):
                if np.isfinite(v):
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if v < middle else "black")
        fig.colorbar(image, ax=ax, label=value_label, shrink=0.85)
    return to_png(fig)


def bars_with_line(groups: Sequence[str], series: Sequence[str], bars: np.ndarray,
                   line: np.ndarray | None, bar_label: str, line_label: str, title: str) -> bytes:
    """Grouped bars (groups x series) on the left axis and one line on the
    right one (seed 000 Fig. 11: normalised time per benchmark and method,
    memory request frequency as a line)."""
    n_groups, n_series = bars.shape
    width = 0.8 / n_series
    fig = Figure(figsize=(max(6.0, 0.45 * n_groups * max(1, n_series) + 2), 4.2), layout="constrained")
    ax = fig.subplots()
    x = np.arange(n_groups)
    for s in range(n_series):
        ax.bar(x - 0.4 + width * (s + 0.5), bars[:, s], width, color=COLOURS[s % len(COLOURS)],
               label=series[s] if series[s] else bar_label)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xticks(x, groups, rotation=30 if n_groups > 4 else 0, ha="right" if n_groups > 4 else "center",
                  fontsize=8)
    ax.set_ylabel(bar_label)
    ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if line is not None and np.isfinite(line).any():
        twin = ax.twinx()
        (h,) = twin.plot(x, line, color="black", marker="D", markersize=4, linewidth=1.2, label=line_label)
        twin.set_ylabel(line_label)
        twin.set_ylim(bottom=0)
        handles.append(h)
        labels.append(line_label)
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncols=min(len(labels), 4))
    return to_png(fig)


def wear_histograms(panels: Sequence[tuple[str, Sequence[tuple[str, np.ndarray, np.ndarray]]]],
                    xlabel: str, ylabel: str) -> bytes:
    """Wear of a medium: per panel (title, lines), one line per run of
    (label, bucket bounds, units in the bucket): units written at most
    `bound` times (and more than the bound before), log-log."""
    n = len(panels)
    fig = Figure(figsize=(5.6 * n, 3.9), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, (title, lines) in zip(axes, panels):
        for i, (name, bounds, units) in enumerate(lines):
            shown = units > 0  # a log axis has no zero; empty buckets are gaps
            ax.plot(bounds[shown], units[shown], marker="o", markersize=3,
                    color=COLOURS[i % len(COLOURS)], label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.set_title(title, fontsize=10)
        if len(lines) > 1:
            ax.legend(fontsize=7)
    return to_png(fig)
