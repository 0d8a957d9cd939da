"""Heat maps and tables of a page-heat file (`heat.read_heat`).

A heat map is time × address: one panel per NUMA node over the physical
pages the run touched on it, and in user mode one panel of virtual pages.
Long untouched stretches of addresses are cut out of the address axis (and
marked), so that a few megabytes used at both ends of a large region do not
shrink to two lines; what is left is binned to at most about MAX_ROWS rows
and MAX_COLUMNS columns and coloured on a log scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter

from .figures import COLOURS, to_png
from .heat import PageHeat, PhysicalPages, VirtualPages

#: What a panel can be coloured by; `accesses` is reads + writes, the line
#: transfers that reached the page's memory node.
METRICS = ("accesses", "reads", "writes", "misses")
METRIC_TEXT = {"accesses": "accesses (line reads + writes at the node)",
               "reads": "line reads at the node", "writes": "line writes at the node",
               "misses": "L1 misses"}
#: Most rows (address bins) and columns (time bins) of a panel.
MAX_ROWS = 400
MAX_COLUMNS = 600
#: An untouched stretch is cut out of the address axis when it is at least
#: this long and would, drawn, fill at least CUT_SHARE of the panel's height.
MIN_CUT_BYTES = 1 << 20
CUT_SHARE = 0.02
#: Most cuts per panel (the longest stretches are cut first).
MAX_CUTS = 15
#: Drawn height, in rows, of a stretch of fewer rows, so that a lone hot
#: page (a stack, a lock) between two cuts is not a hairline.
MIN_STRETCH_ROWS = 4
#: Virtual panels lay processes out one after another; a pid's rank goes
#: above the page number in the sort key (virtual page numbers are below 2**45).
PID_SHIFT = 46
HOTTEST = 20


def metric_values(records: PhysicalPages | VirtualPages, metric: str) -> np.ndarray:
    """The per-record counts a metric colours by."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric '{metric}'; the metrics are {', '.join(METRICS)}")
    if metric == "accesses":
        return records.reads + records.writes
    return getattr(records, metric)


# ------------------------------------------------------------ the address axis
def collapse_gaps(keys: np.ndarray, min_cut: int = MIN_CUT_BYTES >> 12, max_cuts: int = MAX_CUTS,
                  breaks: np.ndarray | None = None) -> list[tuple[int, int]]:
    """The stretches of the address axis to draw, as [start, end) page numbers.

    `keys` are the touched page numbers, sorted and unique. The untouched
    gaps between them are cut out, longest first, while a gap is at least
    `min_cut` pages and would fill at least CUT_SHARE of the height of what
    is left drawn; at most `max_cuts`. `breaks[i]` true forces a cut between
    keys i and i + 1 (another process).
    """
    keys = np.asarray(keys, dtype=np.int64)
    if not len(keys):
        return []
    gaps = keys[1:] - keys[:-1] - 1
    forced = np.zeros(len(gaps), dtype=bool) if breaks is None else np.asarray(breaks, dtype=bool)
    cut = forced.copy()
    drawn = int((keys[-1] - keys[0] + 1) - gaps[forced].sum())
    candidates = np.flatnonzero(~forced)
    candidates = candidates[np.argsort(gaps[candidates], kind="stable")[::-1]][:max_cuts]
    for i in candidates:
        gap = int(gaps[i])
        if gap < min_cut or gap < CUT_SHARE * drawn:
            break
        cut[i] = True
        drawn -= gap
    at = np.flatnonzero(cut)
    starts = np.concatenate([keys[:1], keys[at + 1]])
    ends = np.concatenate([keys[at] + 1, keys[-1:] + 1])
    return list(zip(starts.tolist(), ends.tolist()))


@dataclass
class AddressAxis:
    """Stretches of pages laid end to end, binned `pages_per_row` pages a
    row, each starting on a row of its own after an empty separator row (where
    the cut is marked, so the mark hides no data)."""

    starts: np.ndarray
    ends: np.ndarray
    pages_per_row: int
    first_row: np.ndarray
    rows: int

    @classmethod
    def of(cls, segments: Sequence[tuple[int, int]], max_rows: int = MAX_ROWS) -> AddressAxis:
        starts = np.array([s for s, _ in segments], dtype=np.int64)
        ends = np.array([e for _, e in segments], dtype=np.int64)
        total = int((ends - starts).sum())
        per_row = max(1, math.ceil(total / max_rows))
        taken = -(-(ends - starts) // per_row) + 1  # + the separator above
        first_row = np.cumsum(taken) - taken
        return cls(starts, ends, per_row, first_row, int(taken.sum()) - 1 if len(taken) else 0)

    def row_of(self, keys: np.ndarray) -> np.ndarray:
        """The row of each page number (which must lie in a stretch)."""
        seg = np.searchsorted(self.starts, keys, side="right") - 1
        return self.first_row[seg] + (keys - self.starts[seg]) // self.pages_per_row

    def key_at(self, row: int) -> int:
        """The first page number of a row."""
        seg = max(0, int(np.searchsorted(self.first_row, row, side="right") - 1))
        return int(self.starts[seg] + (row - self.first_row[seg]) * self.pages_per_row)

    def cuts(self) -> list[tuple[int, int, int]]:
        """(separator row, end of the stretch below, start of the one above)
        at every boundary between stretches."""
        return [(int(self.first_row[i]) - 1, int(self.ends[i - 1]), int(self.starts[i]))
                for i in range(1, len(self.starts))]

    def heights(self) -> np.ndarray:
        """Drawn height of every row: 1, or more in a stretch drawn
        MIN_STRETCH_ROWS high."""
        heights = np.ones(self.rows, dtype=np.int64)
        rows_each = np.append(self.first_row[1:] - 1, self.rows) - self.first_row
        for first, n in zip(self.first_row.tolist(), rows_each.tolist()):
            if n < MIN_STRETCH_ROWS:
                heights[first:first + n] = -(-MIN_STRETCH_ROWS // n)
        return heights

    def ticks(self, most: int = 10) -> list[int]:
        """Rows to label: every stretch's first row, then evenly spaced ones,
        none closer than 1/`most` of the height to another."""
        spacing = max(1, self.rows // most)
        separators = set((self.first_row[1:] - 1).tolist())
        chosen: list[int] = []
        for row in [*self.first_row.tolist(), *range(0, self.rows, spacing)]:
            if row not in separators and all(abs(row - c) >= spacing * 0.6 for c in chosen):
                chosen.append(row)
        return sorted(chosen)


def grid(rows: np.ndarray, columns: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Sums of `values` per (row, column) cell."""
    flat = np.bincount(rows * shape[1] + columns, weights=values.astype(np.float64),
                       minlength=shape[0] * shape[1])
    return flat.reshape(shape)


def windows_per_column(windows: int, max_columns: int = MAX_COLUMNS) -> int:
    return max(1, math.ceil(windows / max_columns))


# --------------------------------------------------------------------- text
def size_text(nbytes: float) -> str:
    """`4 KiB`, `3.9 GiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            if unit == "B" or nbytes >= 100:
                return f"{nbytes:.0f} {unit}"  # not 1.02e+03
            return f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    return ""  # pragma: no cover


def duration_text(ps: float) -> str:
    """A time in picoseconds as `1 ms`, `250 µs`, `40 ns`."""
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("µs", 1e6), ("ns", 1e3)):
        if ps >= scale:
            return f"{ps / scale:.4g} {unit}"
    return f"{ps:.4g} ps"


def node_label(heat: PageHeat, node: int) -> str:
    """`node 1 (nvmm)`: a node with the names of its regions."""
    if node < 0:
        return "outside the regions"
    names = [r.name for r in heat.regions if r.node == node]
    return f"node {node} ({', '.join(names)})" if names else f"node {node}"


# ------------------------------------------------------------------- tables
def node_summary(heat: PageHeat) -> pd.DataFrame:
    """Per node: pages touched, reads, writes, misses and its share of the accesses."""
    phys = heat.physical
    nodes = heat.node_of(phys.page)
    listed = heat.nodes + ([-1] if (nodes < 0).any() else [])
    total = int((phys.reads + phys.writes).sum())
    rows = []
    for node in listed:
        on = nodes == node
        reads, writes = int(phys.reads[on].sum()), int(phys.writes[on].sum())
        rows.append({"node": node_label(heat, node), "pages touched": len(np.unique(phys.page[on])),
                     "reads": reads, "writes": writes, "misses": int(phys.misses[on].sum()),
                     "accesses": reads + writes,
                     "share of accesses": (reads + writes) / total if total else 0.0})
    return pd.DataFrame(rows, columns=["node", "pages touched", "reads", "writes", "misses",
                                       "accesses", "share of accesses"])


def hottest_pages(heat: PageHeat, count: int = HOTTEST, metric: str = "accesses") -> pd.DataFrame:
    """The `count` pages with the most `metric` over the whole run, with their
    node and region and their share of all of it."""
    phys = heat.physical
    pages, inverse = np.unique(phys.page, return_inverse=True)
    sums = {f: np.bincount(inverse, weights=getattr(phys, f), minlength=len(pages)).astype(np.int64)
            for f in ("reads", "writes", "misses")}
    sums["accesses"] = sums["reads"] + sums["writes"]
    ranked = sums[metric]
    top = np.argsort(-ranked, kind="stable")[:count]
    top = top[ranked[top] > 0]
    nodes = heat.node_of(pages[top])
    total = ranked.sum()

    def region(page: int) -> str:
        address = page << heat.page_shift
        return next((r.name for r in heat.regions if r.base <= address < r.base + r.size), "")

    return pd.DataFrame({
        "page": [f"{int(p) << heat.page_shift:#x}" for p in pages[top]],
        "node": nodes, "region": [region(int(p)) for p in pages[top]],
        "reads": sums["reads"][top], "writes": sums["writes"][top], "misses": sums["misses"][top],
        "accesses": sums["accesses"][top],
        f"share of {metric}": ranked[top] / total if total else np.zeros(len(top)),
    })


# ------------------------------------------------------------------ figures
def count_text(value: float) -> str:
    """`3`, `20k`, `1.5M`: a count as a colour-bar label."""
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


class _CountFormatter(LogFormatter):
    """Log-scale labels as plain counts (`20k`, not `2×10^4`)."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return count_text(x)


@dataclass
class Panel:
    """One drawn panel: what it shows, the PNG, and how many untouched
    stretches were cut out of its address axis."""

    title: str
    png: bytes
    cuts: int = 0


def heat_panels(heat: PageHeat, metric: str = "accesses", max_rows: int = MAX_ROWS,
                max_columns: int = MAX_COLUMNS) -> list[Panel]:
    """One panel per node with a touched page (nodes in increasing order),
    then, in user mode, the virtual pages."""
    values = metric_values(heat.physical, metric)
    nodes = heat.node_of(heat.physical.page)
    panels = []
    for node in heat.nodes + ([-1] if (nodes < 0).any() else []):
        on = nodes == node
        if not on.any():
            continue
        pages = heat.physical.page[on]
        touched = np.unique(pages)
        axis = AddressAxis.of(collapse_gaps(touched, min_cut=_min_cut(heat)), max_rows)
        title = node_label(heat, node)
        png = _draw(heat, axis, axis.row_of(pages), heat.physical.window[on], values[on], metric,
                    title, f"{len(touched):,} pages touched", "physical address", max_columns,
                    label=lambda key: f"{key << heat.page_shift:#x}",
                    cut_label=lambda below, above: _untouched(heat, above - below))
        panels.append(Panel(title, png, len(axis.cuts())))
    if len(heat.virtual):
        panels.append(_virtual_panel(heat, metric, max_rows, max_columns))
    return panels


def _untouched(heat: PageHeat, pages: int) -> str:
    return f"{size_text(pages << heat.page_shift)} untouched"


def _min_cut(heat: PageHeat) -> int:
    return max(1, MIN_CUT_BYTES >> heat.page_shift)


def _virtual_panel(heat: PageHeat, metric: str, max_rows: int, max_columns: int) -> Panel:
    virt = heat.virtual
    pids = np.unique(virt.pid)
    keys = (np.searchsorted(pids, virt.pid).astype(np.int64) << PID_SHIFT) | virt.page
    touched = np.unique(keys)
    breaks = (touched[1:] >> PID_SHIFT) != (touched[:-1] >> PID_SHIFT)
    axis = AddressAxis.of(collapse_gaps(touched, min_cut=_min_cut(heat), breaks=breaks), max_rows)
    rows = axis.row_of(keys)
    values = metric_values(virt, metric)

    def address(key: int) -> str:
        page = key & ((1 << PID_SHIFT) - 1)
        text = f"{page << heat.page_shift:#x}"
        return f"pid {pids[key >> PID_SHIFT]}: {text}" if len(pids) > 1 else text

    def cut_label(below: int, above: int) -> str:
        if below >> PID_SHIFT != above >> PID_SHIFT:
            return f"pid {pids[above >> PID_SHIFT]} above"
        return _untouched(heat, above - below)

    # The node holding each row's pages: the one with most of the row's counts.
    node_ids = np.unique(virt.node)
    per_node = grid(rows, np.searchsorted(node_ids, virt.node), values + 1,
                    (axis.rows, len(node_ids)))
    strip = np.where(per_node.max(axis=1) > 0, node_ids[per_node.argmax(axis=1)], -1)
    title = "virtual pages" + (f" of pid {pids[0]}" if len(pids) == 1 else f" of {len(pids)} processes")
    png = _draw(heat, axis, rows, virt.window, values, metric, title,
                f"{len(touched):,} pages touched", "virtual address", max_columns, label=address,
                cut_label=cut_label, node_strip=(strip, node_ids))
    return Panel(title, png, len(axis.cuts()))


def _draw(heat: PageHeat, axis: AddressAxis, rows: np.ndarray, windows: np.ndarray,
          values: np.ndarray, metric: str, title: str, subtitle: str, ylabel: str,
          max_columns: int, label: Callable[[int], str], cut_label: Callable[[int, int], str],
          node_strip: tuple[np.ndarray, np.ndarray] | None = None) -> bytes:
    """Draws one panel; `label` names a page key on the y axis, `cut_label`
    a boundary between stretches, `node_strip` = (node per row, the nodes)
    adds a strip of the node holding each row."""
    span = max(heat.windows, int(windows.max()) + 1 if len(windows) else 1, 1)
    per_column = windows_per_column(span, max_columns)
    columns = math.ceil(span / per_column)
    cells = grid(rows, windows // per_column, values, (axis.rows, columns))
    heights = axis.heights()
    bottom = np.cumsum(heights) - heights  # where each row is drawn
    drawn_rows = int(heights.sum())
    cells = np.repeat(cells, heights, axis=0)
    window_ms = heat.window_ps / 1e9
    height = max(3.2, drawn_rows / 100 + 1.6)
    fig = Figure(figsize=(10.5, height), layout="constrained")
    if node_strip is not None:
        ax, strip_ax = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [40, 1]})
    else:
        ax, strip_ax = fig.subplots(), None
    extent = (0, columns * per_column * window_ms, 0, drawn_rows)
    cmap = colormaps["inferno"].with_extremes(bad="white")
    shown = np.ma.masked_less_equal(cells, 0)
    if shown.count():
        norm = LogNorm(vmin=max(1.0, float(shown.min())), vmax=max(1.0, float(shown.max())) * 1.0001)
        image = ax.imshow(shown, origin="lower", aspect="auto", extent=extent, cmap=cmap,
                          norm=norm, interpolation="nearest")
        bar = fig.colorbar(image, ax=[ax] if strip_ax is None else [ax, strip_ax],
                           label=f"{metric} per cell", shrink=0.9, pad=0.01,
                           format=_CountFormatter())
        # Between the decades too when the range is short.
        bar.ax.yaxis.set_minor_formatter(_CountFormatter(labelOnlyBase=False,
                                                         minor_thresholds=(1.2, 0.5)))
    else:
        ax.text(0.5, 0.5, f"no {metric}", transform=ax.transAxes, ha="center", va="center")
        ax.set_ylim(0, drawn_rows)
    ax.set_xlim(0, span * window_ms)
    ax.set_xlabel("simulated time [ms]")
    ax.set_ylabel(ylabel)
    ticks = axis.ticks()
    ax.set_yticks(bottom[ticks], [label(axis.key_at(t)) for t in ticks], fontsize=7)
    starts = bottom[axis.first_row].tolist() + [drawn_rows + 1]
    for i, (row, below, above) in enumerate(axis.cuts()):
        ax.axhline(bottom[row] + 0.5, color="#00a5d6", linewidth=1.0, linestyle=(0, (5, 3)))
        # The label goes over the taller of the two stretches, to hide less.
        up = starts[i + 2] - starts[i + 1] > starts[i + 1] - starts[i]
        ax.text(0.995, bottom[row] + (1 if up else 0), cut_label(below, above),
                transform=ax.get_yaxis_transform(), ha="right", va="bottom" if up else "top",
                fontsize=7, color="#005f7a",
                bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1})
    cell = (f"a cell: {axis.pages_per_row:,} page{'s' if axis.pages_per_row > 1 else ''} × "
            f"{per_column:,} window{'s' if per_column > 1 else ''} of "
            f"{duration_text(heat.window_ps)}")
    notes = [subtitle, cell] + (["dashed lines: untouched addresses cut out"] if axis.cuts() else [])
    ax.set_title(f"{title}: {METRIC_TEXT[metric]}\n" + "; ".join(notes), fontsize=9)
    if strip_ax is not None:
        strip, node_ids = node_strip
        colours = ListedColormap([COLOURS[i % len(COLOURS)] for i in range(len(node_ids))])
        index = np.searchsorted(node_ids, strip).astype(float)
        index[strip < 0] = np.nan  # rows without counts
        strip_ax.imshow(np.ma.masked_invalid(np.repeat(index, heights)).reshape(-1, 1),
                        origin="lower", aspect="auto", cmap=colours, vmin=-0.5,
                        vmax=len(node_ids) - 0.5, extent=(0, 1, 0, drawn_rows),
                        interpolation="nearest")
        strip_ax.set_xticks([])
        strip_ax.set_title("node", fontsize=8)
        strip_ax.tick_params(left=False)
        for i, node in enumerate(node_ids):
            strip_ax.plot([], [], "s", color=COLOURS[i % len(COLOURS)], label=f"node {node}")
        strip_ax.legend(loc="upper left", bbox_to_anchor=(1.0, -0.02), fontsize=7, frameon=False,
                        handletextpad=0.2)
    return to_png(fig)
