"""Reading and writing page-heat files (`rvnvmm run --page-heat`).

The format is docs/page-heat.md's, byte for byte. After the header every
field of every block is an unsigned LEB128 varint, and a block's tag byte
('P', 'V', 'E') is below 0x80, so it reads as a one-byte varint too: the
reader decodes the whole body at once with numpy and only walks the block
headers in Python. A file of a few million records reads in seconds.

A file cut short (a run that did not finish) keeps every whole block before
the break; `PageHeat.complete` tells whether the end block was seen.
Records are kept in file order: a window split over several blocks (the
model rebuilt within it at a restore point) has its pages in each, and
whatever sums them (the heat maps, the tables) adds them up, as the format
says to.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

MAGIC = b"RVNVHEAT"
VERSION = 1
PHYSICAL, VIRTUAL, END = ord("P"), ord("V"), ord("E")
#: Varints per record, after the block's tag, window and record count.
PHYSICAL_FIELDS = 4   # page delta, reads, writes, misses
VIRTUAL_FIELDS = 6    # pid, page delta, node, reads, writes, misses
#: A u64 takes at most ten LEB128 bytes.
MAX_VARINT_BYTES = 10


class HeatFileError(ValueError):
    """A file that is not a page-heat file this reader understands."""


class Region(NamedTuple):
    """A memory region of the machine, as the header lists it."""

    name: str
    node: int
    base: int
    size: int


def _empty() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class PhysicalPages:
    """Physical records: one per (window, page) with an access and block of
    the window, in file order."""

    window: np.ndarray = field(default_factory=_empty)
    page: np.ndarray = field(default_factory=_empty)
    reads: np.ndarray = field(default_factory=_empty)
    writes: np.ndarray = field(default_factory=_empty)
    misses: np.ndarray = field(default_factory=_empty)

    def __len__(self) -> int:
        return len(self.page)


@dataclass
class VirtualPages:
    """Virtual records (user mode): one per (window, pid, page), with the
    node of the frame mapping the page at the end of the window."""

    window: np.ndarray = field(default_factory=_empty)
    pid: np.ndarray = field(default_factory=_empty)
    page: np.ndarray = field(default_factory=_empty)
    node: np.ndarray = field(default_factory=_empty)
    reads: np.ndarray = field(default_factory=_empty)
    writes: np.ndarray = field(default_factory=_empty)
    misses: np.ndarray = field(default_factory=_empty)

    def __len__(self) -> int:
        return len(self.page)


@dataclass
class PageHeat:
    """The contents of a page-heat file."""

    window_ps: int
    page_shift: int
    regions: list[Region]
    physical: PhysicalPages
    virtual: VirtualPages
    #: The end block was read: the run finished.
    complete: bool
    #: Windows the run spanned: the end block's count, or, in a file cut
    #: short, one past the last window read.
    windows: int

    @property
    def page_size(self) -> int:
        return 1 << self.page_shift

    @property
    def nodes(self) -> list[int]:
        """The nodes of the regions, in increasing order."""
        return sorted({r.node for r in self.regions})

    def node_of(self, pages: np.ndarray) -> np.ndarray:
        """The node of each physical page number, -1 outside every region."""
        pages = np.asarray(pages, dtype=np.int64)
        out = np.full(pages.shape, -1, dtype=np.int64)
        if not self.regions:
            return out
        regions = sorted(self.regions, key=lambda r: r.base)
        first = np.array([r.base >> self.page_shift for r in regions], dtype=np.int64)
        end = np.array([(r.base + r.size + self.page_size - 1) >> self.page_shift for r in regions],
                       dtype=np.int64)
        nodes = np.array([r.node for r in regions], dtype=np.int64)
        at = np.searchsorted(first, pages, side="right") - 1
        inside = (at >= 0) & (pages < end[np.maximum(at, 0)])
        out[inside] = nodes[at[inside]]
        return out


# ------------------------------------------------------------------ reading
def read_heat(path: str | os.PathLike[str]) -> PageHeat:
    """Reads a page-heat file; raises HeatFileError (a ValueError) for a file
    that is not one, of another version, or broken other than by a cut."""
    data = Path(path).read_bytes()
    return parse_heat(data, source=str(path))


def parse_heat(data: bytes, source: str = "page-heat data") -> PageHeat:
    """`read_heat` of bytes already in memory."""
    header = _Header(data, source)
    # A partial varint at the end belongs to the block cut short: dropped with it.
    values, lengths = _decode_varints(np.frombuffer(data, dtype=np.uint8, offset=header.end))
    blocks, complete, windows = _walk_blocks(values, lengths, source)
    physical, virtual = _records(values, blocks)
    if not complete:
        seen = [w for _, w, _, _ in blocks]
        windows = max(seen) + 1 if seen else 0
    return PageHeat(window_ps=header.window_ps, page_shift=header.page_shift,
                    regions=header.regions, physical=physical, virtual=virtual,
                    complete=complete, windows=int(windows))


class _Header:
    """The fixed part of the file, read field by field."""

    def __init__(self, data: bytes, source: str):
        self.data, self.source, self.pos = data, source, 0
        magic = self._take(len(MAGIC))
        if magic != MAGIC:
            raise HeatFileError(f"{source} is not a page-heat file: it starts with {magic!r}, "
                                f"not {MAGIC!r}")
        (version,) = struct.unpack("<I", self._take(4))
        if version != VERSION:
            raise HeatFileError(f"{source} is page-heat version {version}; this reader knows "
                                f"version {VERSION} only")
        self.page_shift, self.window_ps = struct.unpack("<IQ", self._take(12))
        if not 0 < self.page_shift < 64 or self.window_ps == 0:
            raise HeatFileError(f"{source}: page shift {self.page_shift} or window "
                                f"{self.window_ps} ps is out of range")
        self.regions = []
        for _ in range(self._varint()):
            node = self._varint()
            base, size = struct.unpack("<QQ", self._take(16))
            name_bytes = self._take(self._varint())
            try:
                name = name_bytes.decode("utf-8")
            except UnicodeDecodeError:
                raise HeatFileError(f"{source}: a region name is not UTF-8: {name_bytes!r}") from None
            self.regions.append(Region(name, node, base, size))
        self.end = self.pos

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise HeatFileError(f"{self.source} ends inside its header ({len(self.data)} bytes): "
                                "the run stopped before writing it")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def _varint(self) -> int:
        value, shift = 0, 0
        while True:
            (byte,) = self._take(1)
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value
            if shift >= 7 * MAX_VARINT_BYTES:
                raise HeatFileError(f"{self.source}: a varint in the header is longer than "
                                    f"{MAX_VARINT_BYTES} bytes")


def _decode_varints(body: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every whole varint of `body`: values (uint64) and lengths in bytes."""
    ends = np.flatnonzero(body < 0x80)
    if not len(ends):
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    longest = int(lengths.max())
    if longest > MAX_VARINT_BYTES:
        at = int(starts[np.argmax(lengths)])
        raise HeatFileError(f"a varint at body byte {at} is {longest} bytes long; "
                            f"a u64 takes at most {MAX_VARINT_BYTES}")
    # Byte k of each varint long enough to have one: most are one byte, so
    # the passes for k >= 1 touch few values.
    values = (body[starts] & 0x7F).astype(np.uint64)
    longer = np.flatnonzero(lengths > 1)
    for k in range(1, longest):
        longer = longer[lengths[longer] > k]
        values[longer] |= (body[starts[longer] + k] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
    return values, lengths


def _walk_blocks(values: np.ndarray, lengths: np.ndarray,
                 source: str) -> tuple[list[tuple[int, int, int, int]], bool, int]:
    """The whole blocks as (tag, window, first value, records), whether the
    end block was seen, and its window count."""
    blocks: list[tuple[int, int, int, int]] = []
    last = -1
    n = len(values)
    at = 0

    def get(i: int) -> int:
        return int(values[i])

    while at < n:
        tag = get(at)
        if lengths[at] != 1 or tag not in (PHYSICAL, VIRTUAL, END):
            raise HeatFileError(f"{source}: block {len(blocks)} has tag {tag:#x}, not 'P', 'V' "
                                "or 'E'")
        if tag == END:
            if at + 1 >= n:
                return blocks, False, 0
            if at + 2 != n:
                raise HeatFileError(f"{source}: data follows the end block")
            return blocks, True, get(at + 1)
        if at + 2 >= n:
            break
        window, records = get(at + 1), get(at + 2)
        width = PHYSICAL_FIELDS if tag == PHYSICAL else VIRTUAL_FIELDS
        first = at + 3
        if first + width * records > n:
            break  # cut inside this block: it is dropped
        # A window may come in more than one block (a restore point), never
        # after a later one.
        if window < last:
            raise HeatFileError(f"{source}: window {window} ('{chr(tag)}') comes after window "
                                f"{last}; blocks are in window order")
        last = window
        blocks.append((tag, window, first, records))
        at = first + width * records
    return blocks, False, 0


def _field_index(starts: np.ndarray, counts: np.ndarray,
                 width: int) -> tuple[np.ndarray, np.ndarray]:
    """Index in the value stream of field 0 of every record of the blocks,
    and the block of every record."""
    total = int(counts.sum())
    block_of = np.repeat(np.arange(len(counts)), counts)
    first_record = np.cumsum(counts) - counts
    position = np.arange(total, dtype=np.int64) - first_record[block_of]
    return starts[block_of] + width * position, block_of


def _undelta(deltas: np.ndarray, restart: np.ndarray) -> np.ndarray:
    """Running sums of `deltas` that start again wherever `restart` is true
    (uint64 arithmetic wraps, so the subtraction is exact)."""
    sums = np.cumsum(deltas, dtype=np.uint64)
    segment_start = np.maximum.accumulate(np.where(restart, np.arange(len(deltas)), 0))
    return sums - (sums - deltas)[segment_start]


def _records(values: np.ndarray, blocks: list[tuple[int, int, int, int]]
             ) -> tuple[PhysicalPages, VirtualPages]:
    def of(tag: int):
        chosen = [b for b in blocks if b[0] == tag]
        windows = np.array([b[1] for b in chosen], dtype=np.int64)
        starts = np.array([b[2] for b in chosen], dtype=np.int64)
        counts = np.array([b[3] for b in chosen], dtype=np.int64)
        return windows, starts, counts

    windows, starts, counts = of(PHYSICAL)
    idx, block_of = _field_index(starts, counts, PHYSICAL_FIELDS)
    restart = np.zeros(len(idx), dtype=bool)
    restart[(np.cumsum(counts) - counts)[counts > 0]] = True
    physical = PhysicalPages(
        window=windows[block_of],
        page=_undelta(values[idx], restart).astype(np.int64),
        reads=values[idx + 1].astype(np.int64),
        writes=values[idx + 2].astype(np.int64),
        misses=values[idx + 3].astype(np.int64))

    windows, starts, counts = of(VIRTUAL)
    idx, block_of = _field_index(starts, counts, VIRTUAL_FIELDS)
    pid = values[idx]
    restart = np.ones(len(idx), dtype=bool)
    restart[1:] = pid[1:] != pid[:-1]
    restart[(np.cumsum(counts) - counts)[counts > 0]] = True
    virtual = VirtualPages(
        window=windows[block_of],
        pid=pid.astype(np.int64),
        page=_undelta(values[idx + 1], restart).astype(np.int64),
        node=values[idx + 2].astype(np.int64),
        reads=values[idx + 3].astype(np.int64),
        writes=values[idx + 4].astype(np.int64),
        misses=values[idx + 5].astype(np.int64))
    return physical, virtual


# ------------------------------------------------------------------ writing
def encode_varints(values: np.ndarray | Sequence[int]) -> bytes:
    """`values` (each below 2**64) as consecutive LEB128 varints."""
    values = np.asarray(values, dtype=np.uint64)
    lengths = np.ones(len(values), dtype=np.int64)
    for k in range(1, MAX_VARINT_BYTES):
        lengths += (values >> np.uint64(7 * k)) != 0
    at = np.cumsum(lengths) - lengths
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    for k in range(int(lengths.max()) if len(values) else 0):
        has = lengths > k
        byte = (values[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (lengths[has] > k + 1).astype(np.uint64) << np.uint64(7)
        out[at[has] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def write_heat(path: str | os.PathLike[str], *, window_ps: int, regions: Iterable[Sequence],
               physical: Iterable[Sequence[int]] = (), virtual: Iterable[Sequence[int]] = (),
               windows: int | None = None, complete: bool = True, page_shift: int = 12,
               version: int = VERSION) -> Path:
    """Writes a page-heat file, as rvnvmm does (for tests and tools).

    `regions` are (name, node, base, size); `physical` records are
    (window, page, reads, writes, misses) and `virtual` ones (window, pid,
    page, node, reads, writes, misses), in any order. The end block counts
    `windows` (default: one past the last record's window); `complete=False`
    leaves it out.
    """
    out = bytearray(MAGIC)
    out += struct.pack("<IIQ", version, page_shift, window_ps)
    regions = list(regions)
    out += encode_varints([len(regions)])
    for name, node, base, size in regions:
        raw = name.encode("utf-8")
        out += encode_varints([node]) + struct.pack("<QQ", base, size) + encode_varints([len(raw)]) + raw
    phys = _sorted_rows(physical, 5, keys=(0, 1))
    virt = _sorted_rows(virtual, 7, keys=(0, 1, 2))
    stream: list[np.ndarray] = []
    for window in np.union1d(phys[:, 0], virt[:, 0]):
        rows = phys[np.searchsorted(phys[:, 0], window):np.searchsorted(phys[:, 0], window, "right")]
        if len(rows):
            deltas = rows[:, 1].copy()
            deltas[1:] -= rows[:-1, 1]
            body = np.column_stack([deltas, rows[:, 2:]]).ravel()
            stream.append(np.concatenate([np.array([PHYSICAL, window, len(rows)], np.uint64), body]))
        rows = virt[np.searchsorted(virt[:, 0], window):np.searchsorted(virt[:, 0], window, "right")]
        if len(rows):
            pids, pages = rows[:, 1], rows[:, 2]
            deltas = pages.copy()
            same = np.zeros(len(rows), dtype=bool)
            same[1:] = pids[1:] == pids[:-1]
            deltas[1:][same[1:]] -= pages[:-1][same[1:]]
            body = np.column_stack([pids, deltas, rows[:, 3:]]).ravel()
            stream.append(np.concatenate([np.array([VIRTUAL, window, len(rows)], np.uint64), body]))
    if complete:
        if windows is None:
            seen = [int(a[1]) for a in stream]
            windows = max(seen) + 1 if seen else 0
        stream.append(np.array([END, windows], dtype=np.uint64))
    if stream:
        out += encode_varints(np.concatenate(stream))
    path = Path(path)
    path.write_bytes(bytes(out))
    return path


def _sorted_rows(records: Iterable[Sequence[int]] | np.ndarray, width: int,
                 keys: tuple[int, ...]) -> np.ndarray:
    """Records as a uint64 array of `width` columns, sorted by the `keys` columns."""
    rows = np.asarray(records if isinstance(records, np.ndarray) else list(records),
                      dtype=np.uint64).reshape(-1, width)
    return rows[np.lexsort(tuple(rows[:, k] for k in reversed(keys)))]
