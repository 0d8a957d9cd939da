"""Page-heat files: the reader against docs/page-heat.md, byte by byte, and
the writer the other tests build files with (no emulator needed)."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from rvnvmm_sweep.heat import HeatFileError, Region, encode_varints, read_heat, write_heat

DRAM_BASE, NVMM_BASE = 0x8000_0000, 0x1_0000_0000
REGIONS = [("dram", 0, DRAM_BASE, 1 << 30), ("nvmm", 1, NVMM_BASE, 8 << 30)]
DRAM_PAGE, NVMM_PAGE = DRAM_BASE >> 12, NVMM_BASE >> 12


def uv(value: int) -> bytes:
    """LEB128, written out independently of the module under test."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def header(version: int = 1, window_ps: int = 1_000_000_000) -> bytes:
    out = b"RVNVHEAT" + struct.pack("<IIQ", version, 12, window_ps) + uv(len(REGIONS))
    for name, node, base, size in REGIONS:
        out += uv(node) + struct.pack("<QQ", base, size) + uv(len(name)) + name.encode()
    return out


def blocks() -> list[bytes]:
    """Window 0 by physical and by virtual page, window 5 physical only, end."""
    p0 = b"P" + uv(0) + uv(2) + \
        uv(DRAM_PAGE) + uv(3) + uv(1) + uv(7) + \
        uv(NVMM_PAGE - DRAM_PAGE) + uv(300) + uv(2**40) + uv(0)
    # pid 7 pages 0x10, 0x12 (delta 2), then pid 9 page 0x5 (the page itself).
    v0 = b"V" + uv(0) + uv(3) + \
        uv(7) + uv(0x10) + uv(0) + uv(3) + uv(1) + uv(7) + \
        uv(7) + uv(2) + uv(1) + uv(300) + uv(2**40) + uv(0) + \
        uv(9) + uv(0x5) + uv(1) + uv(0) + uv(0) + uv(1)
    p5 = b"P" + uv(5) + uv(1) + uv(NVMM_PAGE + 9) + uv(1) + uv(0) + uv(2)
    return [p0, v0, p5, b"E" + uv(6)]


def test_reader_follows_the_format_byte_for_byte(tmp_path):
    path = tmp_path / "heat.bin"
    path.write_bytes(header() + b"".join(blocks()))
    heat = read_heat(path)
    assert heat.complete and heat.windows == 6
    assert heat.window_ps == 1_000_000_000 and heat.page_shift == 12
    assert heat.regions == [Region(*r) for r in REGIONS]
    phys = heat.physical
    assert phys.window.tolist() == [0, 0, 5]
    assert phys.page.tolist() == [DRAM_PAGE, NVMM_PAGE, NVMM_PAGE + 9]  # deltas undone per block
    assert phys.reads.tolist() == [3, 300, 1]
    assert phys.writes.tolist() == [1, 2**40, 0]
    assert phys.misses.tolist() == [7, 0, 2]
    virt = heat.virtual
    assert virt.window.tolist() == [0, 0, 0]
    assert virt.pid.tolist() == [7, 7, 9]
    assert virt.page.tolist() == [0x10, 0x12, 0x5]  # a new pid restarts the deltas
    assert virt.node.tolist() == [0, 1, 1]
    assert virt.writes.tolist() == [1, 2**40, 0]
    assert heat.node_of(phys.page).tolist() == [0, 1, 1]


def test_write_heat_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    physical = {(int(w), int(p)): (int(w), int(p), *map(int, rng.integers(0, 2**35, 3)))
                for w, p in zip(rng.integers(0, 50, 2000), rng.integers(DRAM_PAGE, NVMM_PAGE + 10**6, 2000))}
    virtual = {(w, pid, p): (w, pid, p, pid % 2, 1, 2, 3)
               for w, pid, p in zip(rng.integers(0, 50, 500).tolist(), rng.integers(1, 4, 500).tolist(),
                                    rng.integers(0, 2**27, 500).tolist())}
    path = write_heat(tmp_path / "h.bin", window_ps=250_000, regions=REGIONS,
                      physical=list(physical.values()), virtual=list(virtual.values()), windows=60)
    heat = read_heat(path)
    assert heat.complete and heat.windows == 60 and heat.window_ps == 250_000
    expected = np.array(sorted(physical.values()))
    got = np.column_stack([heat.physical.window, heat.physical.page, heat.physical.reads,
                           heat.physical.writes, heat.physical.misses])
    np.testing.assert_array_equal(got, expected)
    expected = np.array(sorted(virtual.values()))
    v = heat.virtual
    got = np.column_stack([v.window, v.pid, v.page, v.node, v.reads, v.writes, v.misses])
    np.testing.assert_array_equal(got, expected)


def test_writer_matches_the_hand_built_file(tmp_path):
    path = write_heat(tmp_path / "h.bin", window_ps=1_000_000_000, regions=REGIONS,
                      physical=[(0, DRAM_PAGE, 3, 1, 7), (0, NVMM_PAGE, 300, 2**40, 0),
                                (5, NVMM_PAGE + 9, 1, 0, 2)],
                      virtual=[(0, 7, 0x10, 0, 3, 1, 7), (0, 7, 0x12, 1, 300, 2**40, 0),
                               (0, 9, 0x5, 1, 0, 0, 1)], windows=6)
    assert path.read_bytes() == header() + b"".join(blocks())


def test_a_cut_file_keeps_the_whole_blocks_before_the_break(tmp_path):
    parts = blocks()
    data = header() + b"".join(parts)
    ends = np.cumsum([len(header())] + [len(p) for p in parts])
    path = tmp_path / "cut.bin"
    for cut in range(len(header()), len(data)):
        path.write_bytes(data[:cut])
        heat = read_heat(path)
        whole = int((ends[1:] <= cut).sum())  # blocks that fit
        assert not heat.complete, cut
        records = [0, 2, 2, 3, 3][whole]
        assert len(heat.physical) == records, cut
        assert len(heat.virtual) == (3 if whole >= 2 else 0), cut
        assert heat.windows == [0, 1, 1, 6, 6][whole], cut


def test_wrong_magic_version_and_broken_files_are_named(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"RVNVSTAT" + header()[8:])
    with pytest.raises(ValueError, match="not a page-heat file"):
        read_heat(path)
    path.write_bytes(header(version=2))
    with pytest.raises(ValueError, match="version 2; this reader knows version 1"):
        read_heat(path)
    path.write_bytes(header()[:20])
    with pytest.raises(HeatFileError, match="ends inside its header"):
        read_heat(path)
    path.write_bytes(header() + b"Q" + uv(0) + uv(0))
    with pytest.raises(HeatFileError, match="tag 0x51"):
        read_heat(path)
    path.write_bytes(header() + b"".join(blocks()) + b"P")
    with pytest.raises(HeatFileError, match="data follows the end block"):
        read_heat(path)
    path.write_bytes(header() + blocks()[2] + blocks()[0])
    with pytest.raises(HeatFileError, match="blocks are in window order"):
        read_heat(path)


def test_a_window_split_over_blocks_keeps_both(tmp_path):
    """At a restore point the model is rebuilt within a window: its pages
    come again in a second block, to be added up."""
    p0, v0, _, _ = blocks()
    again = b"P" + uv(0) + uv(1) + uv(DRAM_PAGE) + uv(10) + uv(0) + uv(0)
    path = tmp_path / "split.bin"
    path.write_bytes(header() + p0 + v0 + again + b"V" + uv(0) + uv(0) + b"E" + uv(1))
    heat = read_heat(path)
    assert heat.complete and heat.windows == 1
    assert heat.physical.page.tolist() == [DRAM_PAGE, NVMM_PAGE, DRAM_PAGE]
    assert heat.physical.reads.tolist() == [3, 300, 10]
    assert len(heat.virtual) == 3


def test_varints_up_to_64_bits():
    values = [0, 1, 127, 128, 300, 2**32, 2**63, 2**64 - 1]
    assert encode_varints(values) == b"".join(uv(v) for v in values)


def test_millions_of_records_read_in_seconds(tmp_path):
    n = 2_000_000
    windows = np.repeat(np.arange(1000), n // 1000)
    pages = np.tile(np.arange(n // 1000) * 3 + DRAM_PAGE, 1000)
    counts = np.arange(n) % 5000
    # Encoded directly: the Python writer is not what is timed.
    stream = []
    for w in range(1000):
        part = slice(w * (n // 1000), (w + 1) * (n // 1000))
        deltas = np.diff(pages[part], prepend=0)
        stream.append(np.array([ord("P"), w, n // 1000], np.uint64))
        stream.append(np.column_stack([deltas, counts[part], counts[part] // 7, counts[part] * 3]).ravel()
                      .astype(np.uint64))
    stream.append(np.array([ord("E"), 1000], np.uint64))
    path = tmp_path / "big.bin"
    path.write_bytes(header() + encode_varints(np.concatenate(stream)))
    t0 = time.monotonic()
    heat = read_heat(path)
    seconds = time.monotonic() - t0
    assert len(heat.physical) == n and heat.complete
    np.testing.assert_array_equal(heat.physical.page, pages)
    np.testing.assert_array_equal(heat.physical.window, windows)
    np.testing.assert_array_equal(heat.physical.misses, counts * 3)
    assert seconds < 10, f"{n} records took {seconds:.1f} s"
