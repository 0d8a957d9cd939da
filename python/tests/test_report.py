"""HTML reports: content, baselines, and rendering in headless Chromium."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from rvnvmm_sweep import run_sweep
from rvnvmm_sweep.report import write_report

from conftest import guest_program

PNG_RE = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def embedded_pngs(html: str) -> list[Image.Image]:
    return [Image.open(io.BytesIO(base64.b64decode(m))).convert("RGB") for m in PNG_RE.findall(html)]


def colourful_pixels(image: Image.Image) -> int:
    """Pixels with a clearly saturated colour: figures have them, text and
    table borders (black, grey, white) do not."""
    pixels = np.asarray(image, dtype=np.int16)
    return int(((pixels.max(axis=2) - pixels.min(axis=2)) > 60).sum())


def assert_non_trivial(image: Image.Image, min_colourful: int) -> None:
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50, "image is (almost) a single colour"
    assert colourful_pixels(image) >= min_colourful, "no figure colours in the image"


@pytest.fixture(scope="module")
def bench_out(tmp_path_factory, rvnvmm_bin):
    """Seed 000 Tables 3-6 in miniature: locality and banks over the methods."""
    out = tmp_path_factory.mktemp("bench")
    spec = {"name": "tables-3-6", "set": {"--size": 1 << 20},
            "axes": {"command": [["bench", "locality"], ["bench", "banks"]],
                     "--method": ["coarse", "fine", "proposed"]}}
    summary = run_sweep(spec, out, jobs=2, quiet=True)
    assert summary.failed == 0
    return out


def test_grid_report_has_heatmap_and_normalised_table(grid_local):
    _, out = grid_local
    path = write_report(out)
    html = path.read_text()
    assert path == out / "report.html"
    assert "Normalised time over trcd_ns × trp_ns" in html
    assert "memory.nvmm.trcd_ns = 13.75, memory.nvmm.trp_ns = 13.75" in html  # default baseline
    assert "sim_time_ns ×" in html
    images = embedded_pngs(html)
    assert len(images) == 1
    assert_non_trivial(images[0], 5000)
    assert "<link" not in html and "<script src" not in html, "the page must be self-contained"


def test_bench_report_plots_latency_against_stride_and_nbank(bench_out):
    html = write_report(bench_out).read_text()
    assert "bench locality" in html and "bench banks" in html
    assert "STRIDE" in html and "NBANK" in html
    images = embedded_pngs(html)
    assert len(images) == 2
    for image in images:
        assert_non_trivial(image, 500)
    assert "proposed" in html


def test_wear_of_the_medium_per_unit(tmp_path, rvnvmm_bin):
    """Runs that wrote NVMM get its wear: XPLines under optane, rows under
    proposed, one histogram panel each and the most written units."""
    rbtree = guest_program("workloads/bin/rbtree")
    spec = {"name": "wear", "config": "freedom-u500",
            "command": ["run", str(rbtree), "2000", "2000", "persist"],
            "set": {"machine.model": "timing", "user.heap": "nvmm"},
            "axes": {"memory.nvmm.method": ["proposed", "optane"]}}
    assert run_sweep(spec, tmp_path, jobs=2, quiet=True).failed == 0
    html = write_report(tmp_path).read_text()
    assert "Wear of the nvmm medium" in html
    section = html[html.index("Wear of the nvmm medium"):]
    assert "<td class=''>xpline</td>" in section and "<td class=''>row</td>" in section
    assert re.search(r"0x[0-9a-f]+: \d", section), "an XPLine among the most written"
    assert re.search(r"bank \d+ row \d+: \d", section), "a row among the most written"
    images = embedded_pngs(section)
    assert len(images) == 1
    assert_non_trivial(images[0], 300)


def test_baseline_from_the_command_line(grid_local, tmp_path):
    _, out = grid_local
    target = tmp_path / "r.html"
    cli = [sys.executable, "-c", "import sys; from rvnvmm_sweep.cli import report_main; "
                                 "sys.exit(report_main())"]
    proc = subprocess.run(cli + [str(out), "--baseline", "memory.nvmm.trcd_ns=1013.75",
                                 "--baseline", "memory.nvmm.trp_ns=1013.75", "-o", str(target)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "memory.nvmm.trcd_ns = 1013.75, memory.nvmm.trp_ns = 1013.75" in target.read_text()
    proc = subprocess.run(cli + [str(out), "--baseline", "memory.nvmm.trcd_ns=5"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "is not one of the axis values" in proc.stderr


def test_report_renders_in_headless_chromium(grid_local, bench_out, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium)")
    for out, min_colourful in ((grid_local[1], 20000), (bench_out, 5000)):
        report = write_report(out)
        shot = tmp_path / f"{out.name}.png"
        proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                               "--hide-scrollbars", "--no-first-run",
                               f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                               "--window-size=1280,1600", report.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert shot.is_file(), f"no screenshot: {proc.stderr[-2000:]}"
        image = Image.open(shot).convert("RGB")
        assert image.size == (1280, 1600)
        assert_non_trivial(image, min_colourful)


def test_written_files_follow_the_umask_not_mkstemps_private_mode(tmp_path):
    from rvnvmm_sweep.store import FILE_MODE, atomic_write
    import os
    import stat
    target = tmp_path / "report.html"
    atomic_write(target, "<html></html>")
    assert stat.S_IMODE(os.stat(target).st_mode) == FILE_MODE
