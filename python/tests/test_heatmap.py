"""Heat maps of page-heat files, the page of one file (`rvnvmm-heat`) and
the gap cutting that keeps sparse address ranges readable."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
from PIL import Image
from test_heat_file import DRAM_PAGE, NVMM_BASE, NVMM_PAGE, REGIONS

from rvnvmm_sweep.cli import heat_main
from rvnvmm_sweep.heat import read_heat, write_heat
from rvnvmm_sweep.heatmap import (AddressAxis, collapse_gaps, grid, heat_panels, hottest_pages,
                                  node_summary)
from rvnvmm_sweep.report import write_heat_report

PNG_RE = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def test_long_untouched_gaps_are_cut_short_ones_kept():
    heap = np.arange(1000, 1600)                  # 600 pages
    hole = np.arange(1700, 1800)                  # after a 100-page hole: too short to cut
    stack = np.array([2_000_000])                 # ~8 GiB above
    keys = np.concatenate([heap, hole, stack])
    segments = collapse_gaps(keys, min_cut=256)
    assert segments == [(1000, 1800), (2_000_000, 2_000_001)]
    # Every gap long enough when the minimum is lowered, but never more than max_cuts.
    assert collapse_gaps(keys, min_cut=50) == [(1000, 1600), (1700, 1800), (2_000_000, 2_000_001)]
    assert len(collapse_gaps(keys, min_cut=50, max_cuts=1)) == 2
    # A gap that would fill under 2% of the drawn height stays.
    wide = np.concatenate([np.arange(0, 100_000), np.arange(100_300, 100_400)])
    assert collapse_gaps(wide, min_cut=256) == [(0, 100_400)]
    # Forced breaks (another process) cut even the shortest gap.
    assert collapse_gaps(np.array([1, 2, 3]), breaks=np.array([False, True])) == [(1, 3), (3, 4)]
    assert collapse_gaps(np.array([], dtype=np.int64)) == []


def test_address_axis_bins_stretches_into_at_most_max_rows():
    segments = [(0, 10_000), (5_000_000, 5_000_003)]
    axis = AddressAxis.of(segments, max_rows=400)
    assert axis.pages_per_row == 26
    assert axis.rows <= 400 + len(segments)
    rows = axis.row_of(np.array([0, 25, 26, 9_999, 5_000_000, 5_000_002]))
    assert rows.tolist() == [0, 0, 1, 384, 386, 386]   # row 385 separates the stretches
    assert axis.cuts() == [(385, 10_000, 5_000_000)]
    assert axis.key_at(386) == 5_000_000
    heights = axis.heights()
    assert heights[386] >= 4 and heights[:385].max() == 1  # a lone page is drawn visibly


def test_grid_keeps_every_count():
    rows, columns = np.array([0, 0, 2, 2]), np.array([1, 1, 0, 3])
    cells = grid(rows, columns, np.array([1, 2, 3, 4]), (3, 4))
    assert cells[0, 1] == 3 and cells[2, 0] == 3 and cells[2, 3] == 4 and cells.sum() == 10


def synthetic(tmp_path, complete: bool = True):
    """A user-mode run: a heap sweeping NVMM, a hot stack page 8 GiB above
    it, code on DRAM; node 2 (cxl) is never touched."""
    physical, virtual = [], []
    for w in range(300):
        for p in range(w % 64, w % 64 + 4):
            physical.append((w, NVMM_PAGE + p, 5, 1, 9))
            virtual.append((w, 42, 0x2000 + p, 1, 5, 1, 9))
        physical.append((w, NVMM_PAGE + (2 << 20) - 1, 100, 100, 200))
        virtual.append((w, 42, 0x3FFFF, 1, 100, 100, 200))
        physical.append((w, DRAM_PAGE + w % 10, 2, 0, 30))
        virtual.append((w, 42, 0x10 + w % 10, 0, 2, 0, 30))
    regions = REGIONS + [("cxl", 2, 0x4_0000_0000, 1 << 30)]
    return write_heat(tmp_path / "heat.bin", window_ps=100_000_000, regions=regions,
                      physical=physical, virtual=virtual, complete=complete)


def images(html: str) -> list[Image.Image]:
    return [Image.open(io.BytesIO(base64.b64decode(m))).convert("RGB") for m in PNG_RE.findall(html)]


def colourful(image: Image.Image) -> int:
    pixels = np.asarray(image, dtype=np.int16)
    return int(((pixels.max(axis=2) - pixels.min(axis=2)) > 60).sum())


def test_heat_page_has_one_image_per_touched_node_and_the_virtual_pages(tmp_path):
    path = synthetic(tmp_path)
    out = write_heat_report(path)
    assert out == tmp_path / "heat.html"
    html = out.read_text()
    pictures = images(html)
    assert len(pictures) == 3  # node 0, node 1, virtual pages; node 2 untouched
    for picture in pictures:
        assert colourful(picture) > 300
    assert "node 0 (dram)" in html and "node 1 (nvmm)" in html
    assert "No page touched on node 2 (cxl)." in html
    # Captions (alt text and figcaption) mention cuts where there are some:
    # 8 GiB below the stack on nvmm, 32 MiB between code and heap virtually.
    assert html.count("dashed lines mark") == 2 * 2
    assert "virtual pages of pid 42" in html
    assert "100 µs" in html  # the window
    assert "<link" not in html and "<script" not in html
    hottest = html[html.index("hottest pages"):]
    assert f"{NVMM_BASE + (((2 << 20) - 1) << 12):#x}" in hottest.split("<tr>")[2]  # the stack first
    assert hottest.count("<tr>") == 1 + 20


def test_summary_and_hottest_pages(tmp_path):
    heat = read_heat(synthetic(tmp_path))
    table = node_summary(heat).set_index("node")
    assert table.loc["node 0 (dram)", "pages touched"] == 10
    assert table.loc["node 1 (nvmm)", "pages touched"] == 67 + 1
    assert table.loc["node 2 (cxl)", "pages touched"] == 0
    assert table.loc["node 1 (nvmm)", "writes"] == 300 * (4 + 100)
    assert abs(table["share of accesses"].sum() - 1) < 1e-9
    top = hottest_pages(heat, metric="misses")
    assert top.iloc[0]["node"] == 1 and top.iloc[0]["misses"] == 300 * 200
    assert abs(top.iloc[0]["share of misses"] - 60000 / heat.physical.misses.sum()) < 1e-12


def test_panels_cut_the_gap_below_the_stack(tmp_path):
    heat = read_heat(synthetic(tmp_path))
    panels = heat_panels(heat, metric="writes", max_rows=100, max_columns=50)
    assert [p.title for p in panels] == ["node 0 (dram)", "node 1 (nvmm)", "virtual pages of pid 42"]


def test_heat_command(tmp_path, capsys):
    path = synthetic(tmp_path, complete=False)
    assert heat_main([str(path), "--summary"]) == 0
    captured = capsys.readouterr()
    assert "node 1 (nvmm)" in captured.out and "pages touched" in captured.out
    assert "no end block" in captured.err
    assert not (tmp_path / "heat.html").exists()  # --summary alone writes no page
    target = tmp_path / "misses.html"
    assert heat_main([str(path), "-o", str(target), "--metric", "misses"]) == 0
    html = target.read_text()
    assert "L1 misses" in html and "cut short" in html
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a heat file at all")
    assert heat_main([str(bad)]) == 2
    assert "not a page-heat file" in capsys.readouterr().err


def test_a_window_split_over_blocks_is_added_up(tmp_path):
    from test_heat_file import blocks, header, uv
    p0, v0, _, _ = blocks()
    again = b"P" + uv(0) + uv(1) + uv(DRAM_PAGE) + uv(10) + uv(0) + uv(0)
    path = tmp_path / "split.bin"
    path.write_bytes(header() + p0 + v0 + again + b"E" + uv(1))
    heat = read_heat(path)
    top = hottest_pages(heat).set_index("page")
    assert top.loc[f"{DRAM_PAGE << 12:#x}", "reads"] == 3 + 10
    assert node_summary(heat).set_index("node").loc["node 0 (dram)", "pages touched"] == 1


def test_sizes_and_durations_read_plainly():
    from rvnvmm_sweep.heatmap import count_text, duration_text, size_text
    assert [size_text(n) for n in (512, 4096, 1023 << 20, (1 << 30) * 3 // 2)] == \
        ["512 B", "4 KiB", "1023 MiB", "1.5 GiB"]
    assert [duration_text(ps) for ps in (10**9, 250 * 10**6, 40_000)] == ["1 ms", "250 µs", "40 ns"]
    assert [count_text(v) for v in (3, 20_000, 1_500_000)] == ["3", "20k", "1.5M"]
