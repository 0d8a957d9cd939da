"""Locating the rvnvmm binary and fingerprinting files.

Results are keyed by the sha256 of the emulator binary and of the guest
program, so that a rebuilt emulator or a recompiled guest never reuses a
stale result while an unchanged one always does.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from functools import lru_cache
from pathlib import Path

#: Environment variable naming the binary explicitly.
BIN_ENV = "RVNVMM_BIN"


class BinaryNotFound(FileNotFoundError):
    """No usable rvnvmm binary; the message lists where we looked."""


def repo_root() -> Path:
    """The repository this package sits in (python/src/rvnvmm_sweep/..)."""
    return Path(__file__).resolve().parents[3]


def find_binary(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The rvnvmm binary: `explicit`, else $RVNVMM_BIN, else `rvnvmm` on
    PATH, else the repository's target/release/rvnvmm."""
    tried = []
    candidates: list[tuple[str, str | None]] = [
        ("--rvnvmm", str(explicit) if explicit else None),
        (f"${BIN_ENV}", os.environ.get(BIN_ENV) or None),
        ("PATH", shutil.which("rvnvmm")),
        ("repository build", str(repo_root() / "target" / "release" / "rvnvmm")),
    ]
    for origin, candidate in candidates:
        if candidate is None:
            continue
        path = Path(candidate).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        tried.append(f"{origin}: {path}")
        if origin in ("--rvnvmm", f"${BIN_ENV}"):
            # An explicit choice that does not work is an error, not a hint to look elsewhere.
            break
    raise BinaryNotFound("rvnvmm binary not found (tried " + "; ".join(tried) +
                         "); build it with `cargo build --release -p rvnvmm` or set "
                         f"{BIN_ENV}")


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's contents, cached per (path, size, mtime)."""
    st = os.stat(path)
    return _sha256_cached(os.path.realpath(path), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=256)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
